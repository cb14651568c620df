/* typerules_grad.c - the type rules of the gradient kinds (the last section
 * of Nodes.def), kept apart from typerules.c so that file does not grow.
 *
 * The shape of every gradient is fixed by the forward node it belongs to:
 * the adjoint of an operand has exactly that operand's type, the adjoint of
 * a result that result's type. So the rules mostly check "result i has the
 * type of operand j" and, for the windowed kinds, that OutputGrad has the
 * shape the forward node's result would have. Gradients are floating point.
 * Like typerules.c, a rule reports every problem through top_err() and keeps
 * going while the remaining checks make sense.
 */
#include "graph/typerules.h"

#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#define TYBUF 128
#define TYS(t) type_str((t), (char[TYBUF]){0}, TYBUF)

/* The table's name of operand i or result r ("OutputGrad"). */
static const char *opn(const struct typed_op *op, unsigned i) { return node_desc(op->kind)->op_names[i]; }
static const char *resn(const struct typed_op *op, unsigned r) { return node_desc(op->kind)->res_names[r]; }

/* Operand i has a floating-point element kind; false after reporting. */
static bool want_float_op(struct typed_op *op, unsigned i)
{
	if (elem_is_float((enum elem_kind)top_optype(op, i)->elem))
		return true;
	top_err(op, "%s %s must be floating point", opn(op, i), TYS(top_optype(op, i)));
	return false;
}

/* Operand i has an index or integer element kind (labels, argmax). */
static bool want_index_op(struct typed_op *op, unsigned i)
{
	if (elem_is_integer((enum elem_kind)top_optype(op, i)->elem))
		return true;
	top_err(op, "%s %s must be of an integer or index kind", opn(op, i), TYS(top_optype(op, i)));
	return false;
}

/* Result r has exactly the type t of `what`. */
static bool want_res_type(struct typed_op *op, unsigned r, const struct type *t,
			  const char *what)
{
	if (op->res[r] == t)
		return true;
	top_err(op, "%s %s must have the type %s of %s", resn(op, r), TYS(op->res[r]), TYS(t), what);
	return false;
}

/* Operand i has exactly the type of operand j. */
static bool want_op_like(struct typed_op *op, unsigned i, unsigned j)
{
	const struct type *a = top_optype(op, i), *b = top_optype(op, j);
	if (type_same_shape(a, b) && type_same_elem(a, b))
		return true;
	top_err(op, "%s %s must have the type %s of %s", opn(op, i), TYS(a), TYS(b), opn(op, j));
	return false;
}

/* Operand i has rank r; false after reporting. */
static bool want_rank(struct typed_op *op, unsigned i, unsigned r, const char *layout)
{
	if (top_optype(op, i)->rank == r)
		return true;
	top_err(op, "%s %s must have rank %u (%s)", opn(op, i), TYS(top_optype(op, i)), r, layout);
	return false;
}

/* The INTS attribute called attr, of value val, has exactly cnt positive
 * (or, pos false, non-negative) values; NULL after reporting. */
static const int64_t *want_ints(struct typed_op *op, const char *attr, const union attr_val *val, unsigned cnt,
				bool pos)
{
	unsigned len = val->ints.n;
	const int64_t *p = val->ints.v;
	if (len != cnt) {
		top_err(op, "%s must have %u values, got %u", attr, cnt, len);
		return NULL;
	}
	for (unsigned i = 0; i < len; i++)
		if (p[i] < (pos ? 1 : 0) || p[i] > INT32_MAX) {
			top_err(op, "%s[%u] = %" PRId64 " is out of range", attr, i, p[i]);
			return NULL;
		}
	return p;
}

/* The forward window's output size along spatial axis i (0: height, 1:
 * width) of an input of size in: (in + pads - dilation*(k-1) - 1)/stride + 1,
 * or -1 when the window does not fit. Attribute values are bounded by
 * want_ints, so nothing overflows. */
static int64_t window_out(const int64_t *k, const int64_t *s, const int64_t *p, const int64_t *d, unsigned i,
			  int64_t in)
{
	int64_t span = (d ? d[i] : 1) * (k[i] - 1) + 1;
	int64_t padded = in + p[i] + p[i + 2];
	if (padded < span)
		return -1;
	return (padded - span) / s[i] + 1;
}

/* Checks the window attributes and that og (N x OH x OW x C') is what the
 * forward node makes of an input of type in with C' = oc channels; false
 * after reporting. */
static bool want_window(struct typed_op *op, const struct type *in, const struct type *og,
			uint64_t oc, bool dilation)
{
	const int64_t *k = want_ints(op, "kernels", top_attr(op, AN_kernels), 2, true);
	const int64_t *s = want_ints(op, "strides", top_attr(op, AN_strides), 2, true);
	const int64_t *p = want_ints(op, "pads", top_attr(op, AN_pads), 4, false);
	const int64_t *d = dilation ? want_ints(op, "dilation", top_attr(op, AN_dilation), 2, true) : NULL;
	if (!k || !s || !p || (dilation && !d))
		return false;
	uint64_t want[4] = {in->dims[0], 0, 0, oc};
	for (unsigned i = 0; i < 2; i++) {
		int64_t o = window_out(k, s, p, d, i, in->dims[1 + i] > INT32_MAX ? -1 : (int64_t)in->dims[1 + i]);
		if (o < 1) {
			top_err(op, "the window does not fit input %s", TYS(in));
			return false;
		}
		want[1 + i] = (uint64_t)o;
	}
	for (unsigned i = 0; i < 4; i++)
		if (og->dims[i] != want[i]) {
			top_err(op,
				"output grad %s must have the shape %" PRIu64 " x %" PRIu64 " x %" PRIu64 " x %" PRIu64
				" of the forward result for input %s",
				TYS(og), want[0], want[1], want[2], want[3], TYS(in));
			return false;
		}
	return true;
}

/* The operands of a layer's gradient (Input, Weights or Filter,
 * OutputGrad) are floating point and of rank `rank`, laid out as
 * layouts[i]; every check runs, so each problem is reported. */
static bool want_layer_operands(struct typed_op *op, unsigned rank, const char *const layouts[3])
{
	bool ok = true;
	for (unsigned i = 0; i < 3; i++)
		ok &= want_float_op(op, i);
	for (unsigned i = 0; i < 3; i++)
		ok &= want_rank(op, i, rank, layouts[i]);
	return ok;
}

/* BiasGrad (result 2) is a vector of m values of OutputGrad's kind. */
static void want_bias_grad(struct typed_op *op, const struct type *og, uint64_t m)
{
	const struct type *b = op->res[2];
	if (b->rank != 1 || b->dims[0] != m || b->elem != og->elem)
		top_err(op, "bias grad %s must be %s<%" PRIu64 ">", TYS(b), elem_name((enum elem_kind)og->elem), m);
}

/* FullyConnectedGrad(Input N x K, Weights K x M, OutputGrad N x M)
 *   -> InputGrad (Input's type), WeightsGrad (Weights' type), BiasGrad M. */
void tr_fully_connected_grad(struct typed_op *op)
{
	const struct type *in = top_optype(op, 0), *w = top_optype(op, 1), *og = top_optype(op, 2);
	static const char *const layouts[3] = {"N x K", "K x M", "N x M"};
	if (!want_layer_operands(op, 2, layouts))
		return;
	if (in->dims[1] != w->dims[0] || og->dims[0] != in->dims[0] || og->dims[1] != w->dims[1]) {
		top_err(op, "input %s, weights %s and output grad %s are not N x K, K x M and N x M", TYS(in), TYS(w),
			TYS(og));
		return;
	}
	want_res_type(op, 0, in, "the input");
	want_res_type(op, 1, w, "the weights");
	want_bias_grad(op, og, w->dims[1]);
}

/* ConvolutionGrad(Input N x H x W x C, Filter OC x KH x KW x C/group,
 * OutputGrad N x OH x OW x OC) {the forward Convolution's attributes}
 *   -> InputGrad (Input's type), FilterGrad (Filter's type), BiasGrad OC. */
void tr_convolution_grad(struct typed_op *op)
{
	const struct type *in = top_optype(op, 0), *f = top_optype(op, 1), *og = top_optype(op, 2);
	static const char *const layouts[3] = {"N x H x W x C", "OC x KH x KW x C/group", "N x OH x OW x OC"};
	if (!want_layer_operands(op, 4, layouts))
		return;
	int64_t g = top_int(op, AN_group);
	if (g < 1 || (uint64_t)g > in->dims[3] || in->dims[3] % (uint64_t)g || f->dims[0] % (uint64_t)g ||
	    f->dims[3] * (uint64_t)g != in->dims[3]) {
		top_err(op, "group %" PRId64 " does not divide input %s and filter %s into groups", g, TYS(in), TYS(f));
		return;
	}
	const int64_t *k = want_ints(op, "kernels", top_attr(op, AN_kernels), 2, true);
	if (k && ((uint64_t)k[0] != f->dims[1] || (uint64_t)k[1] != f->dims[2])) {
		top_err(op, "kernels do not match filter %s", TYS(f));
		return;
	}
	if (!want_window(op, in, og, f->dims[0], true))
		return;
	want_res_type(op, 0, in, "the input");
	want_res_type(op, 1, f, "the filter");
	want_bias_grad(op, og, f->dims[0]);
}

/* MaxPoolGrad(Argmax N x OH x OW x C of an index kind, OutputGrad of its
 * shape) and AvgPoolGrad(OutputGrad N x OH x OW x C) {the forward pool's
 * attributes} -> InputGrad N x H x W x C of OutputGrad's element kind: the
 * result type gives the forward input's shape, which must pool to OH x OW. */
void tr_pool_grad(struct typed_op *op)
{
	unsigned gi = op->nops - 1;
	const struct type *og = top_optype(op, gi), *r = top_type(op);
	if (!want_float_op(op, gi) || !want_rank(op, gi, 4, "N x OH x OW x C"))
		return;
	if (op->kind == NK_MaxPoolGrad && want_index_op(op, 0) && !type_same_shape(top_optype(op, 0), og)) {
		top_err(op, "argmax %s must have the shape of output grad %s", TYS(top_optype(op, 0)), TYS(og));
		return;
	}
	if (r->rank != 4 || r->elem != og->elem) {
		top_err(op, "input grad %s must be an N x H x W x C tensor of the kind of output grad %s", TYS(r),
			TYS(og));
		return;
	}
	want_window(op, r, og, r->dims[3], false);
}

/* ReluGrad(Input, OutputGrad), SigmoidGrad(Result, OutputGrad) and
 * TanhGrad(Result, OutputGrad), all of one floating-point type -> InputGrad
 * of that type. Sigmoid and Tanh take the forward result, whose derivative
 * is cheaper to express in it (y(1-y), 1-y^2); Relu the forward input. */
void tr_activation_grad(struct typed_op *op)
{
	if (!want_float_op(op, 0) || !want_op_like(op, 1, 0))
		return;
	want_res_type(op, 0, top_optype(op, 0), opn(op, 0));
}

/* Labels N of an integer or index kind for a P N x C floating-point; false
 * after reporting. */
static bool want_labels(struct typed_op *op, unsigned pi, unsigned li)
{
	const struct type *p = top_optype(op, pi), *l = top_optype(op, li);
	bool ok = want_float_op(op, pi);
	ok &= want_index_op(op, li);
	ok &= want_rank(op, pi, 2, "N x C");
	ok &= want_rank(op, li, 1, "N");
	if (ok && l->dims[0] != p->dims[0]) {
		top_err(op, "labels %s do not have one entry per row of %s %s", TYS(l), opn(op, pi), TYS(p));
		ok = false;
	}
	return ok;
}

/* SoftMaxGrad(Result N x C, Labels N): the gradient of the loss
 * -sum_n log Result[n, Labels[n]] with respect to the SoftMax's input
 * (Result - one_hot(Labels)), of Result's type. The SoftMax is over axis 1. */
void tr_softmax_grad(struct typed_op *op)
{
	if (want_labels(op, 0, 1))
		want_res_type(op, 0, top_optype(op, 0), "the result");
}

/* CrossEntropyLossGrad(P N x C, Labels N, CEGrad <1> of P's kind) -> PGrad
 * of P's type: -CEGrad / P[n, c] where c = Labels[n], 0 elsewhere. */
void tr_cross_entropy_grad(struct typed_op *op)
{
	if (!want_labels(op, 0, 1))
		return;
	const struct type *p = top_optype(op, 0), *cg = top_optype(op, 2);
	if (cg->rank != 1 || cg->dims[0] != 1 || cg->elem != p->elem)
		top_err(op, "CE grad %s must be %s<1>", TYS(cg), elem_name((enum elem_kind)p->elem));
	want_res_type(op, 0, p, "P");
}

/* RegressionGrad(Input, Expected) of one floating-point type -> InputGrad
 * Input - Expected: the gradient of the loss sum (Input - Expected)^2 / 2. */
void tr_regression_grad(struct typed_op *op)
{
	if (!want_float_op(op, 0) || !want_op_like(op, 1, 0))
		return;
	want_res_type(op, 0, top_optype(op, 0), "the input");
}

/* The ratio of Dropout and DropoutMask, in [0, 1). */
static void want_ratio(struct typed_op *op)
{
	double r = top_float(op, AN_ratio);
	if (!(r >= 0 && r < 1))
		top_err(op, "ratio %g must be in [0, 1)", r);
}

/* Dropout(Input) -> Result of Input's type, a floating-point kind. */
void tr_dropout(struct typed_op *op)
{
	want_ratio(op);
	if (want_float_op(op, 0))
		want_res_type(op, 0, top_optype(op, 0), "the input");
}

/* DropoutMask(Step i64<1> or index64<1>) -> Mask of any shape (the
 * Dropout's input's) of a floating-point kind. The hash computes in 64-bit
 * integers on values below 2^31 - 1, one per element. */
void tr_dropout_mask(struct typed_op *op)
{
	want_ratio(op);
	const struct type *s = top_optype(op, 0), *r = top_type(op);
	if ((s->elem != EK_I64 && s->elem != EK_INDEX64) || s->rank != 1 || s->dims[0] != 1)
		top_err(op, "step %s must be i64<1> or index64<1>", TYS(s));
	if (!elem_is_float((enum elem_kind)r->elem))
		top_err(op, "mask %s must be floating point", TYS(r));
	else if (type_numel(r) >= 2147483647u)
		top_err(op, "mask %s has 2^31 - 1 or more elements", TYS(r));
}

/* BatchNormalizationGrad(Input floating-point of rank >= 2, Scale, Mean,
 * Var C values of Input's kind, OutputGrad of Input's type) {channel_idx
 * < rank, epsilon >= 0} -> InputGrad (Input's type), ScaleGrad and
 * BiasGrad (Scale's type). */
void tr_batchnorm_grad(struct typed_op *op)
{
	const struct type *in = top_optype(op, 0);
	double eps = top_float(op, AN_epsilon);
	if (!(eps >= 0))
		top_err(op, "epsilon must be non-negative, got %g", eps);
	if (!want_float_op(op, 0) || !want_op_like(op, 4, 0))
		return;
	int64_t ch = top_int(op, AN_channel_idx);
	if (in->rank < 2 || ch < 0 || ch >= (int64_t)in->rank) {
		top_err(op, "channel_idx %" PRId64 " is not an axis of input %s of rank 2 or more", ch, TYS(in));
		return;
	}
	uint64_t c = in->dims[ch];
	for (unsigned i = 1; i < 4; i++) {
		const struct type *t = top_optype(op, i);
		if (t->rank != 1 || t->dims[0] != c || t->elem != in->elem) {
			top_err(op, "%s %s must be %s<%" PRIu64 "> (the channels of input %s)", opn(op, i), TYS(t),
				elem_name((enum elem_kind)in->elem), c, TYS(in));
			return;
		}
	}
	want_res_type(op, 0, in, "the input");
	want_res_type(op, 1, top_optype(op, 1), "the scale");
	want_res_type(op, 2, top_optype(op, 1), "the scale");
}

/* LocalResponseNormalizationGrad(Input N x H x W x C floating-point,
 * OutputGrad of Input's type) {LocalResponseNormalization's attributes}
 * -> InputGrad of Input's type. */
void tr_lrn_grad(struct typed_op *op)
{
	if (top_int(op, AN_half_window_size) < 0)
		top_err(op, "half_window_size must be non-negative, got %" PRId64, top_int(op, AN_half_window_size));
	if (!(top_float(op, AN_k) > 0))
		top_err(op, "k must be positive, got %g", top_float(op, AN_k));
	if (!want_float_op(op, 0) || !want_rank(op, 0, 4, "N x H x W x C") || !want_op_like(op, 1, 0))
		return;
	want_res_type(op, 0, top_optype(op, 0), "the input");
}

/* MatMulGrad(LHS N x K, RHS K x M, OutputGrad N x M) -> LHSGrad (LHS's
 * type), RHSGrad (RHS's type); BatchMatMulGrad the same with a leading
 * batch dimension B on all three. */
void tr_matmul_grad(struct typed_op *op)
{
	bool batched = op->kind == NK_BatchMatMulGrad;
	unsigned r = batched ? 3 : 2, b = batched ? 1 : 0;
	static const char *const plain[3] = {"N x K", "K x M", "N x M"};
	static const char *const batch[3] = {"B x N x K", "B x K x M", "B x N x M"};
	if (!want_layer_operands(op, r, batched ? batch : plain))
		return;
	const struct type *a = top_optype(op, 0), *w = top_optype(op, 1), *og = top_optype(op, 2);
	if ((batched && (a->dims[0] != w->dims[0] || og->dims[0] != a->dims[0])) || a->dims[b + 1] != w->dims[b] ||
	    og->dims[b] != a->dims[b] || og->dims[b + 1] != w->dims[b + 1]) {
		top_err(op, "LHS %s, RHS %s and output grad %s are not %s, %s and %s", TYS(a), TYS(w), TYS(og),
			(batched ? batch : plain)[0], (batched ? batch : plain)[1], (batched ? batch : plain)[2]);
		return;
	}
	want_res_type(op, 0, a, "LHS");
	want_res_type(op, 1, w, "RHS");
}

/* AdaptiveAvgPoolGrad(OutputGrad N x OH x OW x C floating point) ->
 * InputGrad N x H x W x C of OutputGrad's kind, the forward input's type,
 * with H >= OH and W >= OW (the forward pool's windows cover the input). */
void tr_adaptive_avgpool_grad(struct typed_op *op)
{
	const struct type *og = top_optype(op, 0), *r = op->res[0];
	if (!want_float_op(op, 0) || !want_rank(op, 0, 4, "N x OH x OW x C"))
		return;
	if (r->rank != 4 || r->elem != og->elem || r->dims[0] != og->dims[0] || r->dims[3] != og->dims[3] ||
	    r->dims[1] < og->dims[1] || r->dims[2] < og->dims[2] || og->dims[1] == 0 || og->dims[2] == 0)
		top_err(op, "input grad %s must be N x H x W x C of output grad %s's N, C and kind, H >= OH, W >= OW",
			TYS(r), TYS(og));
}

/* LogSoftMaxGrad(Result, OutputGrad of Result's floating-point type)
 * {axis < rank} -> InputGrad (Result's type): OutputGrad - exp(Result) *
 * (the sum of OutputGrad over axis). */
void tr_logsoftmax_grad(struct typed_op *op)
{
	if (!want_float_op(op, 0) || !want_op_like(op, 1, 0))
		return;
	int64_t axis = top_int(op, AN_axis);
	if (axis < 0 || axis >= (int64_t)top_optype(op, 0)->rank)
		top_err(op, "axis %" PRId64 " is not a dimension of result %s", axis, TYS(top_optype(op, 0)));
	want_res_type(op, 0, top_optype(op, 0), "the result");
}
