/* lower-grad2.c - lowering rules of the gradient kinds of the elementwise,
 * activation and shape kinds (Lowering.def, the "issue 13 part B" block)
 * into exactly the forward kinds the differentiate pass wrote for them
 * before it had these kinds, so a lowered training step is what it was:
 *
 *   AddGrad(G) = (G, G); SubGrad(G) = (G, Neg G);
 *   MulGrad(A, B, G) = (G B, G A); DivGrad(B, Y, G) = (G / B, -(G Y / B));
 *   MaxGrad(A, B, G) = (Select(A < B, 0, G), Select(A < B, G, 0)), MinGrad
 *     the same with B < A: the chosen operand gets G, a tie the LHS;
 *   LeakyReluGrad(X, G) = Select(0 < X, G, G alpha);
 *   ClipGrad(X, G) = Select(X <= max, Select(min <= X, G, 0), 0);
 *   GeluGrad(X, G) = G (Phi(x) + x phi(x)) with Phi(x) = (1 + erf(x /
 *     sqrt 2)) / 2 and phi(x) = exp(-x^2 / 2) / sqrt(2 pi); the tanh form
 *     y = x (1 + tanh u) / 2, u = k (x + a x^3), k = sqrt(2 / pi), a =
 *     0.044715: G ((1 + t) / 2 + x (1 - t^2) k (1 + 3 a x^2) / 2), t = tanh u;
 *   ExpGrad(Y, G) = G Y; LogGrad(X, G) = G / X; SqrtGrad(Y, G) = G / (Y + Y);
 *   DropoutGrad(M, G) = G M;
 *   ReshapeGrad(G) = Reshape(G); TransposeGrad(G) {s} = Transpose(G) by the
 *     inverse of s; SliceGrad(G) {start} = InsertTensor(zeros, G) {start};
 *   ConcatGrad(G) {dim, offset} = Slice(G) at offset along dim;
 *   PadGrad(G) {mode, pads}: constant mode without negative pads, Slice(G)
 *     at the front pads; otherwise every element of G came from one element
 *     of X or (constant padding) none: a constant table of those flat
 *     indices (the padding counting as index numel(X)) and a
 *     ScatterElements {add} of the flattened G into numel(X) + 1 zeros,
 *     whose first numel(X) are the adjoint;
 *   GatherGrad(I, G) {axis} = ScatterElements {add} of G into zeros along
 *     axis at I reshaped and broadcast to G's shape (I of another rank than
 *     1 flattened first, G's index dimensions with it);
 *   BatchedReduceAddGrad(G) {axes} = Broadcast(Reshape(G)) with the axes
 *     back as 1s; BatchedReduceMeanGrad also times 1 / count;
 *   BatchedAddGrad(G) = (G, BatchedReduceAdd(G) over axis 0).
 *
 * Only results with users are built: differentiate leaves the adjoint of
 * an operand that wants none unused.
 */
#include "graph/pad_index.h"
#include "graph/reduce_axes.h"
#include "passes/lowering.h"
#include "passes/passutil.h"

#include <stdlib.h>
#include <string.h>

/* Whether result r of n has a user. */
static bool res_used(const struct node *n, unsigned r)
{
	for (const struct use *u = n->uses; u; u = u->next)
		if (u->res == r)
			return true;
	return false;
}

/* Replaces each used result r of n by v[r], then erases n. */
static void replace_used(struct func *f, struct node *n, const struct value *v)
{
	for (unsigned r = 0; r < n->nres; r++)
		if (res_used(n, r))
			value_replace_all_uses(node_val(n, r), v[r]);
	node_erase(f, n);
}

static const struct type *tdims(struct func *f, const struct type *t, const uint64_t *d, unsigned r)
{
	return type_with_dims(f->mod->types, t, d, r);
}

/* k(ops) of type t before n, attribute an set to the ints v[0..len). */
static struct value node_ints_at(struct func *f, unsigned k, const struct value *ops, unsigned nops,
				 const struct type *t, enum attr_name an, const int64_t *v, unsigned len, struct node *n)
{
	struct node *r = lw_node(f, k, ops, nops, t, n, "grad");
	node_set_ints(f->mod, r, an, v, len);
	return node_val(r, 0);
}

/* A Select(c, x, y) before n. */
static struct value select3(struct func *f, struct value c, struct value x, struct value y, struct node *n)
{
	struct value ops[3] = {c, x, y};
	return node_val(lw_node(f, NK_Select, ops, 3, val_type(x), n, "grad"), 0);
}

/* AddGrad, SubGrad (Lowering.def). */
bool lower_add_sub_grad(struct func *f, struct node *n)
{
	struct value g = op_val(n, 0), v[2] = {g, g};
	if (n->kind == NK_SubGrad && res_used(n, 1))
		v[1] = lw_un(f, NK_Neg, g, n, "grad");
	replace_used(f, n, v);
	return true;
}

/* MulGrad, DivGrad (Lowering.def): MulGrad(A, B, G) = (G B, G A),
 * DivGrad(B, Y, G) = (G / B, -(G Y / B)). */
bool lower_mul_div_grad(struct func *f, struct node *n)
{
	struct value x = op_val(n, 0), y = op_val(n, 1), g = op_val(n, 2), v[2] = {g, g};
	bool div = n->kind == NK_DivGrad;
	if (res_used(n, 0))
		v[0] = lw_bin(f, div ? NK_Div : NK_Mul, g, div ? x : y, n, "grad");
	if (res_used(n, 1) && div)
		v[1] = lw_un(f, NK_Neg, lw_bin(f, NK_Div, lw_bin(f, NK_Mul, g, y, n, "grad"), x, n, "grad"), n, "grad");
	else if (res_used(n, 1))
		v[1] = lw_bin(f, NK_Mul, g, x, n, "grad");
	replace_used(f, n, v);
	return true;
}

/* MaxGrad, MinGrad (Lowering.def). */
bool lower_max_min_grad(struct func *f, struct node *n)
{
	struct value a = op_val(n, 0), b = op_val(n, 1), g = op_val(n, 2);
	struct value zero = lw_splat(f, val_type(g), 0, n, "grad");
	struct value lost = n->kind == NK_MaxGrad ? lw_bin(f, NK_CmpLT, a, b, n, "grad")
						  : lw_bin(f, NK_CmpLT, b, a, n, "grad");
	struct value v[2] = {g, g};
	if (res_used(n, 0))
		v[0] = select3(f, lost, zero, g, n);
	if (res_used(n, 1))
		v[1] = select3(f, lost, g, zero, n);
	replace_used(f, n, v);
	return true;
}

/* LeakyReluGrad (Lowering.def). */
bool lower_leaky_relu_grad(struct func *f, struct node *n)
{
	struct value x = op_val(n, 0), g = op_val(n, 1);
	struct value zero = lw_splat(f, val_type(x), 0, n, "grad");
	struct value alpha = lw_splat(f, val_type(x), node_float(n, AN_alpha), n, "alpha");
	struct value slope = lw_bin(f, NK_Mul, g, alpha, n, "grad");
	lw_replace(f, n, select3(f, lw_bin(f, NK_CmpLT, zero, x, n, "grad"), g, slope, n));
	return true;
}

/* ClipGrad (Lowering.def). */
bool lower_clip_grad(struct func *f, struct node *n)
{
	struct value x = op_val(n, 0), g = op_val(n, 1);
	const struct type *t = val_type(x);
	struct value zero = lw_splat(f, t, 0, n, "grad");
	struct value lo = lw_bin(f, NK_CmpLTE, lw_splat(f, t, node_float(n, AN_min), n, "min"), x, n, "grad");
	struct value hi = lw_bin(f, NK_CmpLTE, x, lw_splat(f, t, node_float(n, AN_max), n, "max"), n, "grad");
	lw_replace(f, n, select3(f, hi, select3(f, lo, g, zero, n), zero, n));
	return true;
}

/* x k for a constant k (a Mul by a Splat) before n. */
static struct value mulk(struct func *f, struct value x, double k, struct node *n)
{
	return lw_bin(f, NK_Mul, x, lw_splat(f, val_type(x), k, n, "k"), n, "grad");
}

/* k + x for a constant k before n. */
static struct value addk(struct func *f, double k, struct value x, struct node *n)
{
	return lw_bin(f, NK_Add, lw_splat(f, val_type(x), k, n, "k"), x, n, "grad");
}

/* d gelu(x) / dx, tanh form. */
static struct value gelu_tanh_slope(struct func *f, struct value x, struct node *n)
{
	const double k = 0.79788456080286536, a = 0.044715;
	struct value x2 = lw_bin(f, NK_Mul, x, x, n, "grad");
	struct value u = mulk(f, lw_bin(f, NK_Mul, x, addk(f, 1, mulk(f, x2, a, n), n), n, "grad"), k, n);
	struct value th = lw_un(f, NK_Tanh, u, n, "grad");
	struct value d1 = mulk(f, lw_bin(f, NK_Add, th, lw_splat(f, val_type(x), 1, n, "k"), n, "grad"), 0.5, n);
	struct value sech2 = lw_bin(f, NK_Sub, lw_splat(f, val_type(x), 1, n, "k"), lw_bin(f, NK_Mul, th, th, n, "grad"),
				    n, "grad");
	struct value du = mulk(f, addk(f, 1, mulk(f, x2, 3 * a, n), n), 0.5 * k, n);
	struct value d2 = lw_bin(f, NK_Mul, lw_bin(f, NK_Mul, x, sech2, n, "grad"), du, n, "grad");
	return lw_bin(f, NK_Add, d1, d2, n, "grad");
}

/* d gelu(x) / dx, erf form. */
static struct value gelu_erf_slope(struct func *f, struct value x, struct node *n)
{
	struct value e = lw_un(f, NK_Erf, mulk(f, x, 0.70710678118654752, n), n, "grad");
	struct value cdf = mulk(f, lw_bin(f, NK_Add, e, lw_splat(f, val_type(x), 1, n, "k"), n, "grad"), 0.5, n);
	struct value x2 = mulk(f, lw_bin(f, NK_Mul, x, x, n, "grad"), -0.5, n);
	struct value pdf = mulk(f, lw_un(f, NK_Exp, x2, n, "grad"), 0.39894228040143268, n);
	return lw_bin(f, NK_Add, cdf, lw_bin(f, NK_Mul, x, pdf, n, "grad"), n, "grad");
}

/* GeluGrad (Lowering.def). */
bool lower_gelu_grad(struct func *f, struct node *n)
{
	struct value x = op_val(n, 0), g = op_val(n, 1);
	struct value d = node_int(n, AN_approximate) ? gelu_tanh_slope(f, x, n) : gelu_erf_slope(f, x, n);
	lw_replace(f, n, lw_bin(f, NK_Mul, g, d, n, "grad"));
	return true;
}

/* ExpGrad, LogGrad, SqrtGrad, DropoutGrad (Lowering.def): one product or
 * quotient of G and the first operand. */
bool lower_unary_grad(struct func *f, struct node *n)
{
	struct value a = op_val(n, 0), g = op_val(n, 1);
	if (n->kind == NK_SqrtGrad)
		a = lw_bin(f, NK_Add, a, a, n, "grad");
	unsigned k = n->kind == NK_ExpGrad || n->kind == NK_DropoutGrad ? NK_Mul : NK_Div;
	lw_replace(f, n, lw_bin(f, k, g, a, n, "grad"));
	return true;
}

/* ReshapeGrad (Lowering.def). */
bool lower_reshape_grad(struct func *f, struct node *n)
{
	struct value g = op_val(n, 0);
	lw_replace(f, n, node_val(lw_node(f, NK_Reshape, &g, 1, node_type(n), n, "grad"), 0));
	return true;
}

/* TransposeGrad (Lowering.def). */
bool lower_transpose_grad(struct func *f, struct node *n)
{
	unsigned len;
	const int64_t *s = node_ints(n, AN_shuffle, &len);
	int64_t inv[GLOW_MAX_RANK];
	pu_perm_inverse(s, len, inv);
	struct value g = op_val(n, 0);
	lw_replace(f, n, node_ints_at(f, NK_Transpose, &g, 1, node_type(n), AN_shuffle, inv, len, n));
	return true;
}

/* SliceGrad (Lowering.def). */
bool lower_slice_grad(struct func *f, struct node *n)
{
	unsigned len;
	const int64_t *start = node_ints(n, AN_start, &len);
	struct value ops[2] = {lw_splat(f, node_type(n), 0, n, "grad"), op_val(n, 0)};
	lw_replace(f, n, node_ints_at(f, NK_InsertTensor, ops, 2, node_type(n), AN_start, start, len, n));
	return true;
}

/* ConcatGrad (Lowering.def). */
bool lower_concat_grad(struct func *f, struct node *n)
{
	int64_t start[GLOW_MAX_RANK] = {0};
	start[node_int(n, AN_dim)] = node_int(n, AN_offset);
	struct value g = op_val(n, 0);
	lw_replace(f, n, node_ints_at(f, NK_Slice, &g, 1, node_type(n), AN_start, start, node_type(n)->rank, n));
	return true;
}

/* PadGrad in general: the scatter of G through the table of sources. */
static struct value pad_scatter(struct func *f, struct node *n, const int64_t *pads, int64_t mode)
{
	const struct type *xt = node_type(n), *yt = op_type(n, 0);
	unsigned r = xt->rank;
	uint64_t nin = type_numel(xt), nout = type_numel(yt), idx[GLOW_MAX_RANK] = {0}, str[GLOW_MAX_RANK];
	for (unsigned i = r; i-- > 0;)
		str[i] = i + 1 < r ? str[i + 1] * xt->dims[i + 1] : 1;
	int64_t *tab = malloc((nout ? nout : 1) * sizeof *tab);
	if (!tab)
		abort();
	for (uint64_t o = 0; o < nout; o++) {
		int64_t src = 0;
		for (unsigned i = 0; i < r && src >= 0; i++) {
			int64_t s = pad_source_index((int64_t)idx[i], pads[i], (int64_t)xt->dims[i], mode);
			src = s < 0 ? -1 : src + s * (int64_t)str[i];
		}
		tab[o] = src < 0 ? (int64_t)nin : src;
		for (unsigned i = r; i-- > 0;) {
			if (++idx[i] < yt->dims[i])
				break;
			idx[i] = 0;
		}
	}
	char name[64];
	const struct type *it = type_get(f->mod->types, EK_INDEX64, &nout, 1);
	struct constant *k = pu_new_constant(f->mod, it, tab, lw_name(name, n, "sources"));
	free(tab);
	uint64_t n1 = nin + 1;
	struct value g = op_val(n, 0);
	struct value flat = node_val(lw_node(f, NK_Reshape, &g, 1, tdims(f, yt, &nout, 1), n, "grad"), 0);
	struct value ops[3] = {lw_splat(f, tdims(f, xt, &n1, 1), 0, n, "grad"), node_val(&k->n, 0), flat};
	struct node *s = lw_node(f, NK_ScatterElements, ops, 3, val_type(ops[0]), n, "grad");
	node_set_int(f->mod, s, AN_reduction, 1); /* add */
	static const int64_t zero[1] = {0};
	struct value sv = node_val(s, 0);
	sv = node_ints_at(f, NK_Slice, &sv, 1, tdims(f, xt, &nin, 1), AN_start, zero, 1, n);
	return node_val(lw_node(f, NK_Reshape, &sv, 1, xt, n, "grad"), 0);
}

/* PadGrad (Lowering.def). */
bool lower_pad_grad(struct func *f, struct node *n)
{
	unsigned len;
	const int64_t *pads = node_ints(n, AN_pads, &len);
	int64_t mode = node_int(n, AN_mode);
	bool slice = mode == 0;
	for (unsigned i = 0; i < len; i++)
		slice &= pads[i] >= 0;
	struct value g = op_val(n, 0);
	lw_replace(f, n, slice ? node_ints_at(f, NK_Slice, &g, 1, node_type(n), AN_start, pads, len / 2, n)
			       : pad_scatter(f, n, pads, mode));
	return true;
}

/* GatherGrad (Lowering.def). */
bool lower_gather_grad(struct func *f, struct node *n)
{
	const struct type *it = op_type(n, 0), *gt = op_type(n, 1), *at = node_type(n);
	unsigned axis = (unsigned)node_int(n, AN_axis);
	struct value ix = op_val(n, 0), g = op_val(n, 1);
	uint64_t d[GLOW_MAX_RANK];
	if (it->rank != 1) {
		uint64_t cnt = type_numel(it);
		for (unsigned i = 0; i < at->rank; i++)
			d[i] = i == axis ? cnt : at->dims[i];
		g = node_val(lw_node(f, NK_Reshape, &g, 1, tdims(f, gt, d, at->rank), n, "grad"), 0);
		it = tdims(f, it, &cnt, 1);
		ix = node_val(lw_node(f, NK_Reshape, &ix, 1, it, n, "grad"), 0);
		gt = val_type(g);
	}
	for (unsigned i = 0; i < gt->rank; i++)
		d[i] = i == axis ? gt->dims[i] : 1;
	ix = node_val(lw_node(f, NK_Reshape, &ix, 1, tdims(f, it, d, gt->rank), n, "grad"), 0);
	ix = node_val(lw_node(f, NK_Broadcast, &ix, 1, tdims(f, it, gt->dims, gt->rank), n, "grad"), 0);
	struct value ops[3] = {lw_splat(f, at, 0, n, "grad"), ix, g};
	struct node *s = lw_node(f, NK_ScatterElements, ops, 3, at, n, "grad");
	node_set_int(f->mod, s, AN_axis, axis);
	node_set_int(f->mod, s, AN_reduction, 1); /* add */
	lw_replace(f, n, node_val(s, 0));
	return true;
}

/* BatchedReduceAddGrad, BatchedReduceMeanGrad (Lowering.def). */
bool lower_reduce_grad(struct func *f, struct node *n)
{
	const struct type *t = node_type(n);
	unsigned len;
	const int64_t *axes = node_ints(n, AN_axes, &len);
	bool drop[GLOW_MAX_RANK] = {false};
	uint64_t cnt = reduce_axes_mark(t, axes, len, drop);
	struct value g = lw_expand(f, op_val(n, 0), t, drop, n, "grad");
	if (n->kind == NK_BatchedReduceMeanGrad)
		g = mulk(f, g, 1.0 / (double)cnt, n);
	lw_replace(f, n, g);
	return true;
}

/* BatchedAddGrad (Lowering.def). */
bool lower_batched_add_grad(struct func *f, struct node *n)
{
	struct value g = op_val(n, 0), v[2] = {g, g};
	if (res_used(n, 1)) {
		bool drop[GLOW_MAX_RANK] = {true};
		v[1] = lw_reduce(f, NK_BatchedReduceAdd, g, drop, n, "grad");
	}
	replace_used(f, n, v);
	return true;
}
