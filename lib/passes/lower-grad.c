/* lower-grad.c - lowering rules of the gradient kinds (Nodes.def's last
 * section) into forward kinds, so every backend runs them with the kernels
 * it already has.
 *
 *   FullyConnectedGrad(X, W, G): dX = MatMul(G, W^T), dW = MatMul(X^T, G),
 *     dB = BatchedReduceAdd(G) over the batch.
 *   ConvolutionGrad(X, F, G): dB = BatchedReduceAdd(G) over N, OH, OW;
 *     dX = ConvTranspose(G, F') with F' the filter's per-group transpose
 *     (F'[g*ICg+c, kh, kw, o] = F[g*OCg+o, kh, kw, c]) and the forward
 *     window; rows and columns the forward window never reached (the
 *     remainder of the stride) get zeros by a smaller bottom/right pad or a
 *     Pad. dF is a Convolution of X and G with the roles of channels and
 *     batch swapped: Transpose(X) [C, H, W, N] convolved with Transpose(G)
 *     [OC, OH, OW, N] as the filter, the forward strides as its dilation
 *     and the forward dilation as its strides, gives R[c, kh, kw, oc]; a
 *     Slice keeps KH x KW and, per group, the block that group's filters
 *     read (grouped convolutions compute the whole C x OC product, the
 *     price of using one forward Convolution).
 *   MaxPoolGrad(A, G): a ScatterElements with add of G into zeros at the
 *     flattened positions A (an argmax of -1, a window entirely in the
 *     padding, is not supported: pads smaller than the kernel never make one).
 *   AvgPoolGrad(G): G divided by each window's count (KH*KW, or the real
 *     pixels of each window without count_include_pads: a constant), then a
 *     depthwise ConvTranspose with a filter of ones, sized as for dX above.
 *   ReluGrad(X, G) = Select(0 < X, G, 0); SigmoidGrad(Y, G) = G*Y*(1-Y);
 *   TanhGrad(Y, G) = G*(1-Y*Y); RegressionGrad(X, E) = X - E;
 *   SoftMaxGrad(Y, L) = Y - one_hot(L); CrossEntropyLossGrad(P, L, g) =
 *     -g * one_hot(L) / (P + 1 - one_hot(L)): the denominator is P where the
 *     one-hot is 1 and at least 1 elsewhere, so nothing divides by zero.
 *   one_hot(L) is a Gather of the rows L of a C x C identity constant.
 */
#include "passes/lowering.h"
#include "passes/passutil.h"

#include <stdlib.h>
#include <string.h>

static const struct type *tdims(struct func *f, const struct type *t, const uint64_t *d, unsigned r)
{
	return type_with_dims(f->mod->types, t, d, r);
}

static struct value transpose(struct func *f, struct value v, const int64_t *s, struct node *n, const char *sfx)
{
	char buf[64];
	return node_val(pu_new_transpose(f, v, s, n, lw_name(buf, n, sfx)), 0);
}

static struct value reshape(struct func *f, struct value v, const struct type *t, struct node *n, const char *sfx)
{
	return node_val(lw_node(f, NK_Reshape, &v, 1, t, n, sfx), 0);
}

/* Replaces result i of n by v[i] for each i < n->nres, then erases n. */
static void replace_all(struct func *f, struct node *n, const struct value *v)
{
	for (unsigned i = 0; i < n->nres; i++)
		value_replace_all_uses(node_val(n, i), v[i]);
	node_erase(f, n);
}

/* one_hot(labels) as an N x C float tensor of p's type. */
static struct value one_hot(struct func *f, struct value labels, const struct type *p, struct node *n)
{
	uint64_t c = p->dims[1], d[2] = {c, c};
	const struct type *et = tdims(f, p, d, 2);
	float *eye = calloc(c * c, sizeof *eye);
	if (!eye)
		abort();
	for (uint64_t i = 0; i < c; i++)
		eye[i * c + i] = 1;
	char buf[64];
	struct constant *k = pu_new_constant(f->mod, et, eye, lw_name(buf, n, "eye"));
	free(eye);
	struct value ops[2] = {node_val(&k->n, 0), labels};
	return node_val(lw_node(f, NK_Gather, ops, 2, p, n, "onehot"), 0);
}

/* BatchedReduceAdd of v over the axes in drop. */
static struct value reduce_add(struct func *f, struct value v, const bool *drop, struct node *n, const char *sfx)
{
	return lw_reduce(f, NK_BatchedReduceAdd, v, drop, n, sfx);
}

/* ConvTranspose(g, filter) back to the N x H x W x C shape of t with the
 * forward window of n (dilation d, group grp): the ConvTranspose's own
 * bottom/right pads shrink by the stride remainder r the forward window
 * never reached, and a Pad adds what is left of r as zeros. */
static struct value conv_back(struct func *f, struct node *n, struct value g, struct value filter,
			      const struct type *t, const int64_t *k, const int64_t *s, const int64_t *p,
			      const int64_t *d, int64_t grp)
{
	int64_t pads[4] = {p[0], p[1], p[2], p[3]}, extra[2] = {0, 0};
	uint64_t dims[4] = {t->dims[0], 0, 0, t->dims[3]};
	for (unsigned i = 0; i < 2; i++) {
		int64_t span = d[i] * (k[i] - 1) + 1;
		int64_t r = ((int64_t)t->dims[1 + i] + p[i] + p[i + 2] - span) % s[i];
		pads[i + 2] = p[i + 2] - r;
		if (pads[i + 2] < 0) {
			extra[i] = -pads[i + 2];
			pads[i + 2] = 0;
		}
		dims[1 + i] = t->dims[1 + i] - (uint64_t)extra[i];
	}
	uint64_t oc = t->dims[3];
	struct value bias = lw_splat(f, tdims(f, t, &oc, 1), 0, n, "zbias");
	struct value ops[3] = {g, filter, bias};
	struct node *ct = lw_node(f, NK_ConvTranspose, ops, 3, tdims(f, t, dims, 4), n, "back");
	node_set_ints(f->mod, ct, AN_kernels, k, 2);
	node_set_ints(f->mod, ct, AN_strides, s, 2);
	node_set_ints(f->mod, ct, AN_pads, pads, 4);
	node_set_ints(f->mod, ct, AN_dilation, d, 2);
	node_set_int(f->mod, ct, AN_group, grp);
	struct value v = node_val(ct, 0);
	if (extra[0] || extra[1]) {
		int64_t pp[8] = {0, 0, 0, 0, 0, extra[0], extra[1], 0};
		struct node *pad = lw_node(f, NK_Pad, &v, 1, t, n, "backpad");
		node_set_ints(f->mod, pad, AN_pads, pp, 8);
		v = node_val(pad, 0);
	}
	return v;
}

/* FullyConnectedGrad (Lowering.def). */
bool lower_fc_grad(struct func *f, struct node *n)
{
	static const int64_t swap[2] = {1, 0};
	struct value x = op_val(n, 0), w = op_val(n, 1), g = op_val(n, 2);
	struct value wt = transpose(f, w, swap, n, "wt"), xt = transpose(f, x, swap, n, "xt");
	struct value a[2] = {g, wt}, b[2] = {xt, g};
	struct value r[3];
	r[0] = node_val(lw_node(f, NK_MatMul, a, 2, n->types[0], n, "dx"), 0);
	r[1] = node_val(lw_node(f, NK_MatMul, b, 2, n->types[1], n, "dw"), 0);
	bool drop[2] = {true, false};
	r[2] = reduce_add(f, g, drop, n, "db");
	replace_all(f, n, r);
	return true;
}

/* ConvolutionGrad (Lowering.def). */
bool lower_conv_grad(struct func *f, struct node *n)
{
	static const int64_t to_cn[4] = {3, 1, 2, 0};
	struct value x = op_val(n, 0), w = op_val(n, 1), g = op_val(n, 2);
	const struct type *xt = val_type(x), *wt = val_type(w), *gt = val_type(g);
	unsigned len;
	const int64_t *k = node_ints(n, AN_kernels, &len), *s = node_ints(n, AN_strides, &len);
	const int64_t *p = node_ints(n, AN_pads, &len), *d = node_ints(n, AN_dilation, &len);
	int64_t grp = node_int(n, AN_group);
	uint64_t oc = wt->dims[0], ocg = oc / (uint64_t)grp, c = xt->dims[3], icg = wt->dims[3];
	struct value r[3];

	/* dX: the per-group transpose of the filter, [g, OCg, KH, KW, ICg] ->
	 * [g, ICg, KH, KW, OCg] */
	uint64_t d5[5] = {(uint64_t)grp, ocg, wt->dims[1], wt->dims[2], icg};
	struct value w5 = reshape(f, w, tdims(f, wt, d5, 5), n, "w5");
	static const int64_t s5[5] = {0, 4, 2, 3, 1};
	struct value w5t = transpose(f, w5, s5, n, "w5t");
	uint64_t dft[4] = {c, wt->dims[1], wt->dims[2], ocg};
	struct value ft = reshape(f, w5t, tdims(f, wt, dft, 4), n, "wback");
	r[0] = conv_back(f, n, g, ft, xt, k, s, p, d, grp);

	/* dF: R[c, kh', kw', oc] = Conv(X^[C,H,W,N], G^[OC,OH,OW,N]) */
	struct value xc = transpose(f, x, to_cn, n, "xc"), gc = transpose(f, g, to_cn, n, "gc");
	uint64_t rd[4] = {c, 0, 0, oc};
	for (unsigned i = 0; i < 2; i++) {
		/* the forward output spans s*(O-1)+1 rows of the padded input */
		int64_t span = s[i] * ((int64_t)gt->dims[1 + i] - 1) + 1;
		rd[1 + i] = (uint64_t)(((int64_t)xt->dims[1 + i] + p[i] + p[i + 2] - span) / d[i] + 1);
	}
	struct value zb = lw_splat(f, tdims(f, wt, &oc, 1), 0, n, "zb");
	struct value cops[3] = {xc, gc, zb};
	struct node *cv = lw_node(f, NK_Convolution, cops, 3, tdims(f, wt, rd, 4), n, "dwconv");
	int64_t kk[2] = {(int64_t)gt->dims[1], (int64_t)gt->dims[2]};
	node_set_ints(f->mod, cv, AN_kernels, kk, 2);
	node_set_ints(f->mod, cv, AN_strides, d, 2);
	node_set_ints(f->mod, cv, AN_dilation, s, 2);
	node_set_ints(f->mod, cv, AN_pads, p, 4);
	struct value *blocks = calloc((size_t)grp, sizeof *blocks);
	if (!blocks)
		abort();
	uint64_t bd[4] = {icg, wt->dims[1], wt->dims[2], ocg};
	for (int64_t gi = 0; gi < grp; gi++) {
		struct value rv = node_val(cv, 0);
		struct node *sl = lw_node(f, NK_Slice, &rv, 1, tdims(f, wt, bd, 4), n, "dwslice");
		int64_t start[4] = {gi * (int64_t)icg, 0, 0, gi * (int64_t)ocg};
		node_set_ints(f->mod, sl, AN_start, start, 4);
		blocks[gi] = transpose(f, node_val(sl, 0), to_cn, n, "dwblock");
	}
	if (grp == 1)
		r[1] = blocks[0];
	else {
		struct node *cat = lw_node(f, NK_Concat, blocks, (unsigned)grp, wt, n, "dw");
		node_set_int(f->mod, cat, AN_dim, 0);
		r[1] = node_val(cat, 0);
	}
	free(blocks);

	bool drop[4] = {true, true, true, false};
	r[2] = reduce_add(f, g, drop, n, "db");
	replace_all(f, n, r);
	return true;
}

/* MaxPoolGrad (Lowering.def). */
bool lower_maxpool_grad(struct func *f, struct node *n)
{
	struct value a = op_val(n, 0), g = op_val(n, 1);
	const struct type *t = node_type(n);
	uint64_t nin = type_numel(t), nout = type_numel(val_type(g));
	struct value zeros = lw_splat(f, tdims(f, t, &nin, 1), 0, n, "zeros");
	struct value ops[3] = {zeros, reshape(f, a, tdims(f, val_type(a), &nout, 1), n, "flatidx"),
			       reshape(f, g, tdims(f, val_type(g), &nout, 1), n, "flatgrad")};
	struct node *sc = lw_node(f, NK_ScatterElements, ops, 3, val_type(zeros), n, "scatter");
	node_set_int(f->mod, sc, AN_reduction, 1); /* add */
	lw_replace(f, n, reshape(f, node_val(sc, 0), t, n, "dx"));
	return true;
}

/* AvgPoolGrad (Lowering.def). */
bool lower_avgpool_grad(struct func *f, struct node *n)
{
	struct value g = op_val(n, 0);
	const struct type *t = node_type(n), *gt = val_type(g);
	unsigned len;
	const int64_t *k = node_ints(n, AN_kernels, &len), *s = node_ints(n, AN_strides, &len);
	const int64_t *p = node_ints(n, AN_pads, &len);
	static const int64_t one[2] = {1, 1};
	struct value scaled;
	if (node_int(n, AN_count_include_pads))
		scaled = lw_bin_splat(f, NK_Mul, g, 1.0 / (double)(k[0] * k[1]), n, "mean");
	else {
		/* 1 / (the real pixels of each window), [1, OH, OW, 1] */
		uint64_t oh = gt->dims[1], ow = gt->dims[2], d[4] = {1, oh, ow, 1};
		float *inv = malloc(oh * ow * sizeof *inv);
		if (!inv)
			abort();
		for (uint64_t y = 0; y < oh; y++)
			for (uint64_t x = 0; x < ow; x++) {
				int64_t y0 = (int64_t)y * s[0] - p[0], x0 = (int64_t)x * s[1] - p[1];
				int64_t y1 = y0 + k[0], x1 = x0 + k[1];
				y0 = y0 < 0 ? 0 : y0, x0 = x0 < 0 ? 0 : x0;
				y1 = y1 > (int64_t)t->dims[1] ? (int64_t)t->dims[1] : y1;
				x1 = x1 > (int64_t)t->dims[2] ? (int64_t)t->dims[2] : x1;
				int64_t cnt = (y1 - y0) * (x1 - x0);
				inv[y * ow + x] = cnt > 0 ? 1.0f / (float)cnt : 0.0f;
			}
		char buf[64];
		struct constant *kc = pu_new_constant(f->mod, tdims(f, gt, d, 4), inv, lw_name(buf, n, "invcount"));
		free(inv);
		struct value b = lw_broadcast(f, node_val(&kc->n, 0), gt, 0, n, "invcounts");
		scaled = lw_bin(f, NK_Mul, g, b, n, "mean");
	}
	uint64_t c = t->dims[3], fd[4] = {c, (uint64_t)k[0], (uint64_t)k[1], 1};
	struct value ones = lw_splat(f, tdims(f, t, fd, 4), 1, n, "ones");
	lw_replace(f, n, conv_back(f, n, scaled, ones, t, k, s, p, one, (int64_t)c));
	return true;
}

/* ReluGrad (Lowering.def). */
bool lower_relu_grad(struct func *f, struct node *n)
{
	struct value a = op_val(n, 0), b = op_val(n, 1);
	struct value zero = lw_splat(f, val_type(a), 0, n, "zero");
	struct value pos = lw_bin(f, NK_CmpLT, zero, a, n, "pos");
	struct value ops[3] = {pos, b, zero};
	lw_replace(f, n, node_val(lw_node(f, NK_Select, ops, 3, val_type(a), n, "dx"), 0));
	return true;
}

/* G * dy/dx for SigmoidGrad and TanhGrad (Y, G): dy the derivative at Y
 * (before n, named "<n>.dydx"). */
static bool replace_by_chain(struct func *f, struct node *n, struct value dy)
{
	lw_replace(f, n, lw_bin(f, NK_Mul, op_val(n, 1), dy, n, "dx"));
	return true;
}

/* SigmoidGrad (Lowering.def). */
bool lower_sigmoid_grad(struct func *f, struct node *n)
{
	struct value a = op_val(n, 0);
	struct value one = lw_splat(f, val_type(a), 1, n, "one");
	return replace_by_chain(f, n, lw_bin(f, NK_Mul, a, lw_bin(f, NK_Sub, one, a, n, "omy"), n, "dydx"));
}

/* TanhGrad (Lowering.def). */
bool lower_tanh_grad(struct func *f, struct node *n)
{
	struct value a = op_val(n, 0);
	struct value one = lw_splat(f, val_type(a), 1, n, "one");
	return replace_by_chain(f, n, lw_bin(f, NK_Sub, one, lw_bin(f, NK_Mul, a, a, n, "ysq"), n, "dydx"));
}

/* RegressionGrad (Lowering.def). */
bool lower_regression_grad(struct func *f, struct node *n)
{
	lw_replace(f, n, lw_bin(f, NK_Sub, op_val(n, 0), op_val(n, 1), n, "dx"));
	return true;
}

/* SoftMaxGrad (Lowering.def). */
bool lower_softmax_grad(struct func *f, struct node *n)
{
	struct value a = op_val(n, 0);
	lw_replace(f, n, lw_bin(f, NK_Sub, a, one_hot(f, op_val(n, 1), val_type(a), n), n, "dx"));
	return true;
}

/* CrossEntropyLossGrad (Lowering.def). */
bool lower_xent_grad(struct func *f, struct node *n)
{
	struct value a = op_val(n, 0);
	const struct type *pt = val_type(a);
	struct value oh = one_hot(f, op_val(n, 1), pt, n);
	struct value off = lw_bin(f, NK_Sub, lw_splat(f, pt, 1, n, "one"), oh, n, "off");
	struct value den = lw_bin(f, NK_Add, a, off, n, "den");
	uint64_t d11[2] = {1, 1};
	struct value cg = reshape(f, op_val(n, 2), tdims(f, pt, d11, 2), n, "cg");
	struct value q = lw_bin(f, NK_Div, oh, den, n, "inv");
	q = lw_bin(f, NK_Mul, q, lw_broadcast(f, cg, pt, 0, n, "cgs"), n, "scaled");
	lw_replace(f, n, lw_un(f, NK_Neg, q, n, "dx"));
	return true;
}

/* MatMulGrad and BatchMatMulGrad (Lowering.def): the products
 * differentiate wrote before these kinds existed, dA = G B^T and
 * dB = A^T G, the last two axes transposed. */
bool lower_matmul_grad(struct func *f, struct node *n)
{
	static const int64_t swap2[2] = {1, 0}, swap3[3] = {0, 2, 1};
	bool batched = n->kind == NK_BatchMatMulGrad;
	const int64_t *swap = batched ? swap3 : swap2;
	unsigned k = batched ? NK_BatchMatMul : NK_MatMul;
	struct value a = op_val(n, 0), b = op_val(n, 1), g = op_val(n, 2);
	struct value da[2] = {g, transpose(f, b, swap, n, "rhst")}, db[2] = {transpose(f, a, swap, n, "lhst"), g};
	struct value r[2];
	r[0] = node_val(lw_node(f, k, da, 2, n->types[0], n, "dlhs"), 0);
	r[1] = node_val(lw_node(f, k, db, 2, n->types[1], n, "drhs"), 0);
	replace_all(f, n, r);
	return true;
}

/* AdaptiveAvgPoolGrad (Lowering.def): G spread by the constant matrix A
 * [OH*OW, H*W] of window weights (1/count where output o's window covers
 * pixel p): [N, OH, OW, C] -> [N, C, OH*OW] (Transpose, Reshape to 2-D)
 * -> MatMul A -> [N, C, H, W] -> NHWC. */
bool lower_adaptive_avgpool_grad(struct func *f, struct node *n)
{
	struct value gy = op_val(n, 0);
	const struct type *xt = node_type(n), *gt = val_type(gy);
	uint64_t nb = xt->dims[0], h = xt->dims[1], w = xt->dims[2], ch = xt->dims[3];
	uint64_t oh = gt->dims[1], ow = gt->dims[2];
	float *mat = calloc(oh * ow * h * w + 1, sizeof *mat);
	if (!mat)
		abort();
	for (uint64_t oy = 0; oy < oh; oy++)
		for (uint64_t ox = 0; ox < ow; ox++) {
			uint64_t y0 = oy * h / oh, y1 = ((oy + 1) * h + oh - 1) / oh;
			uint64_t x0 = ox * w / ow, x1 = ((ox + 1) * w + ow - 1) / ow;
			float inv = 1.0f / (float)((y1 - y0) * (x1 - x0));
			for (uint64_t y = y0; y < y1; y++)
				for (uint64_t x = x0; x < x1; x++)
					mat[(oy * ow + ox) * h * w + y * w + x] = inv;
		}
	uint64_t md[2] = {oh * ow, h * w};
	char buf[64];
	const struct type *mt = type_with_elem(f->mod->types, tdims(f, xt, md, 2), EK_FLOAT);
	struct value spread = node_val(&pu_new_constant(f->mod, mt, mat, lw_name(buf, n, "spread"))->n, 0);
	free(mat);
	if (xt->elem != EK_FLOAT)
		spread = node_val(lw_node(f, NK_ConvertTo, &spread, 1, tdims(f, xt, md, 2), n, "spreadk"), 0);
	static const int64_t to_nc[4] = {0, 3, 1, 2}, to_nhwc[4] = {0, 2, 3, 1};
	uint64_t g2[2] = {nb * ch, oh * ow}, x2[2] = {nb * ch, h * w}, x4[4] = {nb, ch, h, w};
	struct value g = reshape(f, transpose(f, gy, to_nc, n, "gnc"), tdims(f, gt, g2, 2), n, "g2");
	struct value ops[2] = {g, spread};
	g = node_val(lw_node(f, NK_MatMul, ops, 2, tdims(f, xt, x2, 2), n, "spreadg"), 0);
	g = reshape(f, g, tdims(f, xt, x4, 4), n, "dxnc");
	lw_replace(f, n, transpose(f, g, to_nhwc, n, "dx"));
	return true;
}

/* LogSoftMaxGrad (Lowering.def): G - exp(Y) * (G summed over the axis,
 * broadcast back). */
bool lower_logsoftmax_grad(struct func *f, struct node *n)
{
	struct value y = op_val(n, 0), g = op_val(n, 1);
	const struct type *t = val_type(y);
	bool drop[GLOW_MAX_RANK] = {false};
	drop[node_int(n, AN_axis)] = true;
	struct value s = lw_expand(f, lw_reduce(f, NK_BatchedReduceAdd, g, drop, n, "gsum"), t, drop, n, "gsumb");
	struct value p = lw_un(f, NK_Exp, y, n, "p");
	lw_replace(f, n, lw_bin(f, NK_Sub, g, lw_bin(f, NK_Mul, p, s, n, "ps"), n, "dx"));
	return true;
}
