/* ops_ew.c - translators of elementwise operators: arithmetic, comparisons,
 * logic, unary math, activations, Clip, Cast, Where.
 *
 * The graph IR's elementwise kinds take operands of one shape: numpy
 * broadcasting becomes explicit Broadcast nodes ("<out>.bcastN"). ONNX
 * operators without a kind of their own are composed from kinds that exist
 * (Selu = gamma * Elu, ...); helper nodes get names derived from the output.
 */
#include "import/onnx/internal.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* Broadcasts values to their common shape (names "<name>.bcastN"). */
static int bcast_all(struct importer *im, struct value *vs, unsigned n, const char *name)
{
	uint64_t dims[GLOW_MAX_RANK];
	unsigned rank = 0;
	for (unsigned i = 0; i < n; i++)
		if (!vs[i].node)
			return -1;
	const struct type *acc = val_type(vs[0]);
	for (unsigned i = 1; i < n; i++) {
		if (imp_bcast_shape(im, acc, val_type(vs[i]), dims, &rank))
			return -1;
		acc = type_with_dims(im->tc, acc, dims, rank);
	}
	for (unsigned i = 0; i < n; i++) {
		char suf[16];
		snprintf(suf, sizeof suf, "bcast%u", i);
		vs[i] = imp_b_broadcast(im, vs[i], acc->dims, acc->rank, imp_dname(im, name, suf));
		if (!vs[i].node)
			return -1;
	}
	return 0;
}

/* Before opset 7, broadcasting was explicit: broadcast = 1 aligns B's
 * dimensions with A's starting at axis. Returns B reshaped for numpy rules. */
static struct value legacy_bcast(struct importer *im, const onnx_node *n, struct value a, struct value b)
{
	if (im->opset >= 7 || !imp_attr_i(n, "broadcast", 0) || !a.node || !b.node)
		return b;
	const struct type *ta = val_type(a), *tb = val_type(b);
	int64_t axis = imp_attr_i(n, "axis", (int64_t)ta->rank - (int64_t)tb->rank);
	if (axis < 0)
		axis += ta->rank;
	if (axis < 0 || axis + tb->rank > ta->rank) {
		imp_op_err(im, "broadcast axis %lld does not fit", (long long)axis);
		return no_value;
	}
	uint64_t dims[GLOW_MAX_RANK];
	unsigned r = 0;
	for (unsigned k = 0; k < tb->rank; k++)
		dims[r++] = tb->dims[k];
	while (r < ta->rank - (unsigned)axis)
		dims[r++] = 1;
	return imp_b_reshape(im, b, dims, r, imp_dname(im, imp_out_name(im, 0), "rhs"));
}

static struct value binary(struct importer *im, unsigned kind, struct value a, struct value b, const char *name)
{
	if (!a.node || !b.node)
		return no_value;
	if (val_type(a)->elem != val_type(b)->elem) {
		if (kind != NK_Pow) {
			imp_op_err(im, "operands have different element types");
			return no_value;
		}
		b = imp_b_convert(im, b, val_type(a)->elem, imp_dname(im, name, "exp"));
	}
	struct value vs[2] = {a, b};
	if (bcast_all(im, vs, 2, name))
		return no_value;
	return imp_b_binary(im, kind, vs[0], vs[1], name);
}

int imp_op_binary(struct importer *im, const onnx_node *n)
{
	unsigned kind = im->row->kind; /* ops.def */
	struct value a = imp_in_val(im, 0), b = imp_in_val(im, 1);
	b = legacy_bcast(im, n, a, b);
	if (a.node && elem_is_quantized((enum elem_kind)val_type(a)->elem))
		return imp_set_out(im, 0, imp_int8_binary(im, kind, a, b, imp_out_name(im, 0)));
	return imp_set_out(im, 0, binary(im, kind, a, b, imp_out_name(im, 0)));
}

int imp_op_mod(struct importer *im, const onnx_node *n)
{
	struct value a = imp_in_val(im, 0), b = imp_in_val(im, 1);
	const char *name = imp_out_name(im, 0);
	if (!a.node || !b.node)
		return -1;
	bool fl = elem_is_float((enum elem_kind)val_type(a)->elem);
	int64_t fm = imp_attr_i(n, "fmod", 0);
	if (elem_is_quantized((enum elem_kind)val_type(a)->elem) && !fm)
		return imp_set_out(im, 0, imp_int8_binary(im, NK_Mod, a, b, name));
	if (fl && !fm)
		return imp_op_err(im, "fmod = 0 is not valid for floating-point inputs");
	/* fmod = 1: the sign of the dividend (C fmod); fmod = 0: the sign of
	 * the divisor (the Mod kind) */
	return imp_set_out(im, 0, binary(im, fm ? NK_Fmod : NK_Mod, a, b, name));
}

/* Max, Min, Sum, Mean over one or more inputs */
int imp_op_variadic(struct importer *im, const onnx_node *n)
{
	unsigned cnt = imp_n_in(n), kind = NK_Add;
	const char *name = imp_out_name(im, 0);
	if (strcmp(n->op_type, "Max") == 0)
		kind = NK_Max;
	else if (strcmp(n->op_type, "Min") == 0)
		kind = NK_Min;
	if (cnt == 0)
		return imp_op_err(im, "no inputs");
	bool mean = strcmp(n->op_type, "Mean") == 0;
	struct value acc = imp_in_val(im, 0);
	if (cnt == 1 && !mean)
		return imp_set_out_t(im, 0, imp_in_req(im, 0));
	for (unsigned i = 1; i < cnt; i++) {
		bool last = i + 1 == cnt && !mean;
		acc = binary(im, kind, acc, imp_in_val(im, i), last ? name : imp_dname(im, name, "acc"));
	}
	if (mean)
		acc = imp_b_binary(im, NK_Div, acc, imp_b_splat_like(im, acc, cnt, imp_dname(im, name, "count")), name);
	return imp_set_out(im, 0, acc);
}

int imp_op_compare(struct importer *im, const onnx_node *n)
{
	static const struct {
		const char *op;
		unsigned kind;
		bool swap;
	} map[] = {{"Equal", NK_CmpEQ, false}, {"Less", NK_CmpLT, false}, {"LessOrEqual", NK_CmpLTE, false},
		   {"Greater", NK_CmpLT, true}, {"GreaterOrEqual", NK_CmpLTE, true}, {"And", NK_And, false},
		   {"Or", NK_Or, false}, {"Xor", NK_Xor, false}};
	size_t k = 0;
	for (size_t i = 0; i < GLOW_ARRAY_SIZE(map); i++)
		if (strcmp(map[i].op, n->op_type) == 0)
			k = i;
	struct value a = imp_in_val(im, 0), b = imp_in_val(im, 1);
	b = legacy_bcast(im, n, a, b);
	if (map[k].swap) {
		struct value t = a;
		a = b;
		b = t;
	}
	return imp_set_out(im, 0, binary(im, map[k].kind, a, b, imp_out_name(im, 0)));
}

int imp_op_where(struct importer *im, const onnx_node *n)
{
	(void)n;
	struct value vs[3] = {imp_in_val(im, 0), imp_in_val(im, 1), imp_in_val(im, 2)};
	const char *name = imp_out_name(im, 0);
	if (bcast_all(im, vs, 3, name))
		return -1;
	if (val_type(vs[1])->elem != val_type(vs[2])->elem || val_type(vs[0])->elem != EK_BOOL)
		return imp_op_err(im, "condition must be bool and both branches of one element type");
	return imp_set_out(im, 0, imp_b_node(im, NK_Select, name, vs, 3, val_type(vs[1])));
}

int imp_op_unary(struct importer *im, const onnx_node *n)
{
	unsigned kind = im->row->kind; /* ops.def */
	struct value x = imp_in_val(im, 0);
	if (!x.node)
		return -1;
	const struct type *t = val_type(x);
	if (kind == NK_IsNaN)
		t = type_with_elem(im->tc, t, EK_BOOL);
	return imp_set_out(im, 0, imp_b_node(im, kind, imp_out_name(im, 0), &x, 1, t));
}

/* ---- activations: a builder each, named by its ops.def row ---- */

/* An activation's builder: its result on x, named name, from n's
 * attributes; a NULL node after reporting. */
typedef struct value (*act_builder)(struct importer *im, const onnx_node *n, struct value x, const char *name);

/* Input 0 (which must be floating point) through build to output 0. */
static int activation(struct importer *im, const onnx_node *n, act_builder build)
{
	struct value x = imp_in_val(im, 0);
	if (!x.node)
		return -1;
	if (!elem_is_float((enum elem_kind)val_type(x)->elem))
		return imp_op_err(im, "input must be floating point");
	return imp_set_out(im, 0, build(im, n, x, imp_out_name(im, 0)));
}

/* The kind's unary node on x with float attribute an (ONNX's attr, def
 * where absent). */
static struct value unary_f(struct importer *im, const onnx_node *n, unsigned kind, struct value x, const char *name,
			    enum attr_name an, const char *attr, float def)
{
	struct value r = imp_b_unary(im, kind, name, x);
	if (r.node)
		node_set_float(im->m, r.node, an, imp_attr_f(n, attr, def));
	return r;
}

static struct value leaky_relu(struct importer *im, const onnx_node *n, struct value x, const char *name)
{
	return unary_f(im, n, NK_LeakyRelu, x, name, AN_alpha, "alpha", 0.01f);
}

static struct value elu(struct importer *im, const onnx_node *n, struct value x, const char *name)
{
	return unary_f(im, n, NK_Elu, x, name, AN_alpha, "alpha", 1.0f);
}

/* gamma * Elu(x) with Elu's alpha */
static struct value selu(struct importer *im, const onnx_node *n, struct value x, const char *name)
{
	struct value e = unary_f(im, n, NK_Elu, x, imp_dname(im, name, "elu"), AN_alpha, "alpha",
				 1.67326319217681884765625f);
	struct value g = imp_b_splat_like(im, x, imp_attr_f(n, "gamma", 1.05070102214813232421875f),
				    imp_dname(im, name, "gamma"));
	return imp_b_binary(im, NK_Mul, e, g, name);
}

/* opset 20: the erf form, or the tanh approximation */
static struct value gelu(struct importer *im, const onnx_node *n, struct value x, const char *name)
{
	const char *ap = imp_attr_s(im, n, "approximate", "none");
	int a = strcmp(ap, "none") == 0 ? 0 : strcmp(ap, "tanh") == 0 ? 1 : -1;
	if (a < 0) {
		imp_op_err(im, "unknown approximate '%s' (none or tanh)", ap);
		return no_value;
	}
	struct value r = imp_b_unary(im, NK_Gelu, name, x);
	if (r.node && a)
		node_set_int(im->m, r.node, AN_approximate, a);
	return r;
}

/* alpha * Elu(x / alpha) */
static struct value celu(struct importer *im, const onnx_node *n, struct value x, const char *name)
{
	struct value al = imp_b_splat_like(im, x, imp_attr_f(n, "alpha", 1), imp_dname(im, name, "alpha"));
	struct value e = imp_b_unary(im, NK_Elu, imp_dname(im, name, "elu"),
				 imp_b_binary(im, NK_Div, x, al, imp_dname(im, name, "scaled")));
	return imp_b_binary(im, NK_Mul, e, al, name);
}

/* clip(alpha * x + beta, 0, 1) */
static struct value hard_sigmoid(struct importer *im, const onnx_node *n, struct value x, const char *name)
{
	struct value a = imp_b_splat_like(im, x, imp_attr_f(n, "alpha", 0.2f), imp_dname(im, name, "alpha"));
	struct value b = imp_b_splat_like(im, x, imp_attr_f(n, "beta", 0.5f), imp_dname(im, name, "beta"));
	struct value y = imp_b_binary(im, NK_Add, imp_b_binary(im, NK_Mul, x, a, imp_dname(im, name, "mul")), b,
			     imp_dname(im, name, "add"));
	struct value r = imp_b_unary(im, NK_Clip, name, y);
	if (r.node) {
		node_set_float(im->m, r.node, AN_min, 0);
		node_set_float(im->m, r.node, AN_max, 1);
	}
	return r;
}

/* x / (1 + |x|) */
static struct value softsign(struct importer *im, const onnx_node *n, struct value x, const char *name)
{
	(void)n;
	struct value one = imp_b_splat_like(im, x, 1, imp_dname(im, name, "one"));
	struct value d = imp_b_binary(im, NK_Add, one, imp_b_unary(im, NK_Abs, imp_dname(im, name, "abs"), x),
			     imp_dname(im, name, "den"));
	return imp_b_binary(im, NK_Div, x, d, name);
}

/* a kind of its own (Nodes.def) with lambd and bias */
static struct value shrink(struct importer *im, const onnx_node *n, struct value x, const char *name)
{
	struct value r = unary_f(im, n, NK_Shrink, x, name, AN_lambd, "lambd", 0.5f);
	if (r.node)
		node_set_float(im->m, r.node, AN_bias, imp_attr_f(n, "bias", 0));
	return r;
}

/* x > alpha ? x : 0 */
static struct value thresholded_relu(struct importer *im, const onnx_node *n, struct value x, const char *name)
{
	struct value zero = imp_b_splat_like(im, x, 0, imp_dname(im, name, "zero"));
	struct value a = imp_b_splat_like(im, x, imp_attr_f(n, "alpha", 1), imp_dname(im, name, "alpha"));
	struct value ops[3] = {imp_b_binary(im, NK_CmpLT, a, x, imp_dname(im, name, "gt")), x, zero};
	return imp_b_node(im, NK_Select, name, ops, 3, val_type(x));
}

int imp_op_leaky_relu(struct importer *im, const onnx_node *n) { return activation(im, n, leaky_relu); }
int imp_op_elu(struct importer *im, const onnx_node *n) { return activation(im, n, elu); }
int imp_op_selu(struct importer *im, const onnx_node *n) { return activation(im, n, selu); }
int imp_op_gelu(struct importer *im, const onnx_node *n) { return activation(im, n, gelu); }
int imp_op_celu(struct importer *im, const onnx_node *n) { return activation(im, n, celu); }
int imp_op_hard_sigmoid(struct importer *im, const onnx_node *n) { return activation(im, n, hard_sigmoid); }
int imp_op_softsign(struct importer *im, const onnx_node *n) { return activation(im, n, softsign); }
int imp_op_shrink(struct importer *im, const onnx_node *n) { return activation(im, n, shrink); }
int imp_op_thresholded_relu(struct importer *im, const onnx_node *n) { return activation(im, n, thresholded_relu); }

int imp_op_prelu(struct importer *im, const onnx_node *n)
{
	(void)n;
	struct value x = imp_in_val(im, 0), s = imp_in_val(im, 1);
	if (!x.node || !s.node)
		return -1;
	const struct type *t = val_type(x), *st = val_type(s);
	/* before opset 7 a 1-D slope of C values is per channel (dimension 1),
	 * not numpy-broadcast against the last dimension */
	if (im->opset < 7 && st->rank == 1 && t->rank >= 2 && st->dims[0] == t->dims[1] && st->dims[0] != 1) {
		uint64_t cd[GLOW_MAX_RANK];
		for (unsigned k = 0; k + 1 < t->rank; k++)
			cd[k] = k == 0 ? st->dims[0] : 1;
		s = imp_b_reshape(im, s, cd, t->rank - 1, imp_dname(im, imp_out_name(im, 0), "slope.chan"));
	}
	s = imp_b_broadcast(im, s, t->dims, t->rank, imp_dname(im, imp_out_name(im, 0), "slope"));
	struct value ops[2] = {x, s};
	return imp_set_out(im, 0, imp_b_node(im, NK_PRelu, imp_out_name(im, 0), ops, 2, s.node ? t : NULL));
}

static int scalar_arg(struct importer *im, unsigned i, double *out, bool *present)
{
	struct tensor *t = imp_in_opt(im, i);
	*present = t != NULL;
	if (!t)
		return 0;
	const double *v = imp_t_floats(im, t);
	if (!v || imp_t_numel(t) != 1)
		return imp_op_err(im, "input %u must be a scalar known at import", i);
	*out = v[0];
	return 0;
}

/* Whether Clip's bound i is absent or a scalar known at import. */
static bool clip_bound_known(struct importer *im, unsigned i)
{
	struct tensor *t = imp_in_opt(im, i);
	return !t || t->known;
}

/* Clip (opset 11+) whose min or max is a runtime value: Max with the
 * broadcast min, then Min with the broadcast max (NaN handling follows
 * the Max and Min kinds). */
static int clip_runtime(struct importer *im, struct value x, const char *name)
{
	const struct type *t = val_type(x);
	bool has_hi = imp_in_opt(im, 2) != NULL;
	for (unsigned i = 1; i <= 2; i++) {
		struct tensor *b = imp_in_opt(im, i);
		if (!b)
			continue;
		if (imp_t_numel(b) != 1)
			return imp_op_err(im, "input %u must be a scalar", i);
		uint64_t one[GLOW_MAX_RANK];
		for (unsigned k = 0; k < t->rank; k++)
			one[k] = 1;
		const char *bn = imp_dname(im, name, i == 1 ? "min" : "max");
		struct value bv = imp_b_reshape(im, imp_tval(im, b), one, t->rank, imp_dname(im, bn, "r"));
		bv = imp_b_broadcast(im, bv, t->dims, t->rank, bn);
		x = imp_b_binary(im, i == 1 ? NK_Max : NK_Min, x, bv, i == 1 && has_hi ? imp_dname(im, name, "lo") : name);
	}
	return imp_set_out(im, 0, x);
}

int imp_op_clip(struct importer *im, const onnx_node *n)
{
	struct value x = imp_in_val(im, 0);
	const char *name = imp_out_name(im, 0);
	if (!x.node)
		return -1;
	double lo = -INFINITY, hi = INFINITY;
	bool has_lo = false, has_hi = false;
	if (im->opset < 11) {
		has_lo = imp_attr(n, "min") != NULL;
		has_hi = imp_attr(n, "max") != NULL;
		lo = has_lo ? imp_attr_f(n, "min", 0) : lo;
		hi = has_hi ? imp_attr_f(n, "max", 0) : hi;
	} else if (!clip_bound_known(im, 1) || !clip_bound_known(im, 2)) {
		return clip_runtime(im, x, name);
	} else if (scalar_arg(im, 1, &lo, &has_lo) || scalar_arg(im, 2, &hi, &has_hi)) {
		return -1;
	}
	if (elem_is_float((enum elem_kind)val_type(x)->elem)) {
		struct value r = imp_b_unary(im, NK_Clip, name, x);
		if (r.node) {
			node_set_float(im->m, r.node, AN_min, lo);
			node_set_float(im->m, r.node, AN_max, hi);
		}
		return imp_set_out(im, 0, r);
	}
	if (has_lo)
		x = imp_b_binary(im, NK_Max, x, imp_b_splat_like(im, x, lo, imp_dname(im, name, "min")), has_hi ? imp_dname(im, name, "lo") : name);
	if (has_hi)
		x = imp_b_binary(im, NK_Min, x, imp_b_splat_like(im, x, hi, imp_dname(im, name, "max")), name);
	return imp_set_out(im, 0, x);
}

/* Cast, CastLike (known inputs are folded before this runs) */
int imp_op_cast(struct importer *im, const onnx_node *n)
{
	int to;
	if (strcmp(n->op_type, "CastLike") == 0) {
		struct tensor *like = imp_in_req(im, 1);
		if (!like)
			return -1;
		to = like->dtype;
	} else {
		const Onnx__AttributeProto *a = imp_attr(n, "to");
		if (!a)
			return imp_op_err(im, "the 'to' attribute is required");
		to = a->has_i ? (int)a->i : DT_UNDEF;
	}
	struct tensor *in = imp_in_req(im, 0);
	if (in && (imp_dt_is_f8(to) || imp_dt_is_4bit(to) || imp_dt_is_f8(in->dtype) || imp_dt_is_4bit(in->dtype)))
		return imp_cast_narrow(im, to);
	if (in && (to == DT_UINT8 || to == DT_INT8 || in->dtype == DT_UINT8 || in->dtype == DT_INT8))
		return imp_cast_int8(im, to);
	int elem = imp_dt_elem(to);
	if (elem < 0)
		return imp_op_err(im, "cast to %s is not supported by the graph IR", imp_dt_name(to));
	struct value x = imp_in_val(im, 0);
	if (!x.node)
		return -1;
	if (val_type(x)->elem == elem)
		return imp_set_out_t(im, 0, imp_in_req(im, 0));
	return imp_set_out(im, 0, imp_b_convert(im, x, elem, imp_out_name(im, 0)));
}
