/* typerules.c - the type rules of storage, linear algebra, normalization,
 * softmax and losses, and training nodes; the other families live beside it
 * (typerules_conv.c, typerules_ew.c, typerules_shape.c, typerules_grad.c)
 * and the shared checks in typerules_check.c. Every rule is named in
 * Nodes.def.
 *
 * A rule reads a typed operation (typerules_op.h): a graph node, or an
 * instruction seen as the node kind it comes from. It runs after the
 * verifier of that level has checked the structure (operand and result
 * counts, live operands, the predicate), so every operand and result has a
 * type. It checks element kinds, shapes and attribute values and reports
 * each problem through top_err(), naming the operand as the table names it
 * ("filter", "LHS", "inputs[1]") and giving the types involved; it keeps
 * going as long as the remaining checks still make sense.
 *
 * Element types. Data movement (Reshape, Transpose, Concat, Slice, Gather,
 * Tile, Pad, MaxPool, ...) copies stored values, so its result has exactly the
 * element type of its input, quantization parameters included (changing them
 * is RescaleQuantized's job). Computing ops keep the element kind, but a
 * quantized result may carry its own scale and offset. Linear layers take
 * float operands of one kind, or quantized input and weights with a quantized
 * or float bias.
 *
 * Arithmetic. Dimensions and attribute values may come from the builder
 * unchecked, so arithmetic on them saturates at the int64 range: no rule
 * overflows, and a saturated value never equals a real dimension.
 */
#include "graph/typerules.h"
#include "graph/typerules_check.h"

#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* ------------------------------------------------------------------ */
/* Storage and I/O                                                     */

/* Placeholder, Constant: no operands, one typed result; verify.c checks the
 * type and the initializer, and that storage stays out of functions. */
void tr_storage(struct typed_op *op)
{
	(void)op;
}

/* Save(Input T, Output T): Output is a placeholder of Input's exact type. */
void tr_save(struct typed_op *op)
{
	const struct type *in = top_optype(op, 0), *out = top_optype(op, 1);
	if (!top_op_is_placeholder(op, 1)) {
		top_err(op, "output %s must be a placeholder, not a %s", DEFN(op, 1),
			node_kind_name(op->ops[1].def_kind));
		return;
	}
	if (!type_same_shape(in, out) || !type_same_elem(in, out))
		top_err(op, "input %s does not have the type of output %s", TYS(in), TYS(out));
}

/* ------------------------------------------------------------------ */
/* Linear algebra                                                      */

/* FullyConnected(Input N x K, Weights K x M, Bias M) -> N x M */
void tr_fully_connected(struct typed_op *op)
{
	const struct type *in = top_optype(op, 0), *w = top_optype(op, 1), *b = top_optype(op, 2);
	trc_linear_elems(op, 2);
	bool ok = trc_op_rank(op, 0, 2, "N x K");
	ok &= trc_op_rank(op, 1, 2, "K x M");
	ok &= trc_op_rank(op, 2, 1, "M");
	if (!ok)
		return;
	if (in->dims[1] != w->dims[0]) {
		top_err(op, "input %s has K = %" PRIu64 " but weights %s have K = %" PRIu64, TYS(in), in->dims[1],
			TYS(w), w->dims[0]);
		ok = false;
	}
	if (b->dims[0] != w->dims[1]) {
		top_err(op, "bias %s does not have the M = %" PRIu64 " columns of weights %s", TYS(b), w->dims[1],
			TYS(w));
		ok = false;
	}
	struct shape s = {2, {trc_dimv(in, 0), trc_dimv(w, 1)}};
	if (ok)
		trc_res_shape(op, 0, &s);
}

/* MatMul(LHS N x K, RHS K x M) -> N x M; batched, BatchMatMul(LHS
 * B x N x K, RHS B x K x M) -> B x N x M. */
static void matmul_rule(struct typed_op *op, bool batched)
{
	const struct type *a = top_optype(op, 0), *b = top_optype(op, 1);
	unsigned bt = batched ? 1u : 0u; /* the batch dimensions before N and K */
	trc_linear_elems(op, -1);
	bool ok = trc_op_rank(op, 0, 2 + bt, batched ? "B x N x K" : "N x K");
	ok &= trc_op_rank(op, 1, 2 + bt, batched ? "B x K x M" : "K x M");
	if (!ok)
		return;
	if (batched && a->dims[0] != b->dims[0]) {
		top_err(op, "LHS %s and RHS %s have different batch sizes", TYS(a), TYS(b));
		ok = false;
	}
	if (a->dims[1 + bt] != b->dims[bt]) {
		top_err(op, "LHS %s has K = %" PRIu64 " but RHS %s has K = %" PRIu64, TYS(a), a->dims[1 + bt], TYS(b),
			b->dims[bt]);
		ok = false;
	}
	struct shape s = {0, {0}};
	for (unsigned i = 0; i <= bt; i++)
		s.d[s.rank++] = trc_dimv(a, i);
	s.d[s.rank++] = trc_dimv(b, 1 + bt);
	if (ok)
		trc_res_shape(op, 0, &s);
}

void tr_matmul(struct typed_op *op) { matmul_rule(op, false); }

void tr_batch_matmul(struct typed_op *op) { matmul_rule(op, true); }

/* BatchedAdd(Batch B x d1 x .. x dn, Slice d1 x .. x dn) -> Batch's shape:
 * the slice is added to each of the B batch elements. Float/integer: one
 * element kind; quantized: slice and result quantized (any parameters). */
void tr_batched_add(struct typed_op *op)
{
	const struct type *b = top_optype(op, 0), *sl = top_optype(op, 1);
	if (trc_op_class(op, 0, C_NUM)) {
		if (elem_is_quantized((enum elem_kind)b->elem)) {
			trc_op_class(op, 1, CQ);
			trc_res_class(op, 0, CQ);
		} else {
			trc_want_kind(op, LITW("slice"), sl, LITW("batch"), b);
			trc_want_kind(op, LITW("result"), top_type(op), LITW("batch"), b);
		}
	}
	if (b->rank == 0) {
		top_err(op, "batch %s must have a batch dimension", TYS(b));
		return;
	}
	struct shape s = trc_shape_of(b);
	struct shape want = {b->rank - 1u, {0}};
	memcpy(want.d, s.d + 1, (b->rank - 1u) * sizeof(int64_t));
	if (trc_want_shape(op, LITW("slice"), sl, &want))
		trc_res_shape(op, 0, &s);
}

/* BatchedReduce{Add,Mean,Max,Min,Prod}(Batch) {axes} -> Batch's shape
 * without the axes; axes non-empty, unique, in [0, rank). Mean takes float or
 * quantized, the others any numeric kind; the result keeps the kind. */
void tr_reduce(struct typed_op *op)
{
	const struct type *in = top_optype(op, 0);
	if (trc_op_class(op, 0, op->kind == NK_BatchedReduceMean ? C_FQ : C_NUM))
		trc_want_kind(op, LITW("result"), top_type(op), LITW("batch"), in);
	bool drop[GLOW_MAX_RANK] = {false};
	if (!trc_axes_attr(op, LITW("batch"), in, drop))
		return;
	struct shape s = {0, {0}};
	for (unsigned i = 0; i < in->rank; i++)
		if (!drop[i])
			s.d[s.rank++] = trc_dimv(in, i);
	trc_res_shape(op, 0, &s);
}

/* Gemm(A M x K (K x M if trans_a), B K x N (N x K if trans_b), C) -> M x N,
 * result = alpha * A' B' + beta * C with C broadcast to M x N: C is a scalar,
 * a vector of N or 1, or a matrix (M or 1) x (N or 1). */
void tr_gemm(struct typed_op *op)
{
	const struct type *a = top_optype(op, 0), *b = top_optype(op, 1), *c = top_optype(op, 2);
	trc_linear_elems(op, 2);
	bool ranks = trc_op_rank(op, 0, 2, "M x K");
	ranks &= trc_op_rank(op, 1, 2, "K x N");
	if (!ranks)
		return;
	bool ta = top_int(op, AN_trans_a), tb = top_int(op, AN_trans_b);
	int64_t m = trc_dimv(a, ta), ka = trc_dimv(a, !ta), kb = trc_dimv(b, tb), nn = trc_dimv(b, !tb);
	bool ok = true;
	if (ka != kb) {
		top_err(op, "A %s has K = %" PRId64 " (trans_a %s) but B %s has K = %" PRId64 " (trans_b %s)", TYS(a),
			ka, ta ? "true" : "false", TYS(b), kb, tb ? "true" : "false");
		ok = false;
	}
	bool cok = c->rank == 0 || (c->rank == 1 && (trc_dimv(c, 0) == nn || trc_dimv(c, 0) == 1)) ||
		   (c->rank == 2 && (trc_dimv(c, 0) == m || trc_dimv(c, 0) == 1) && (trc_dimv(c, 1) == nn || trc_dimv(c, 1) == 1));
	if (!cok) {
		top_err(op, "C %s does not broadcast to M x N = <%" PRId64 " x %" PRId64 ">", TYS(c), m, nn);
		ok = false;
	}
	struct shape s = {2, {m, nn}};
	if (ok)
		trc_res_shape(op, 0, &s);
}

/* ------------------------------------------------------------------ */
/* Normalization                                                       */

/* Operand i is a 1-D vector of c elements of the input's float kind. */
static void channel_vector(struct typed_op *op, unsigned i, int64_t c, const char *cname)
{
	const struct type *t = top_optype(op, i), *in = top_optype(op, 0);
	if (elem_is_float((enum elem_kind)in->elem))
		trc_want_kind(op, OPW(op, i), t, LITW("input"), in);
	else
		trc_op_class(op, i, CF);
	if (t->rank != 1 || trc_dimv(t, 0) != c)
		top_err(op, "%s is %s but must be a vector of the %" PRId64 " %s of input %s", OPN(op, i), TYS(t), c,
			cname, TYS(in));
}

/* BatchNormalization(Input, Scale C, Bias C, Mean C, Var C) -> Input's shape
 * and kind, C = Input dim channel_idx; Input float or quantized, the
 * statistics floating-point (Input's kind when it is float); epsilon >= 0,
 * momentum in [0, 1]. */
void tr_batchnorm(struct typed_op *op)
{
	const struct type *in = top_optype(op, 0);
	if (trc_op_class(op, 0, C_FQ))
		trc_res_same_shape_kind(op, 0, 0);
	trc_float_attr_nonneg(op, "epsilon", top_float(op, AN_epsilon));
	double mom = top_float(op, AN_momentum);
	if (!(mom >= 0 && mom <= 1))
		top_err(op, "momentum must be in [0, 1], got %g", mom);
	if (!trc_axis_attr(op, "channel_idx", top_int(op, AN_channel_idx), 0))
		return;
	int64_t c = trc_dimv(in, (unsigned)top_int(op, AN_channel_idx));
	for (unsigned i = 1; i < 5; i++)
		channel_vector(op, i, c, "channels");
}

/* LayerNormalization(Input, Scale, Bias) {axis}: Input floating-point,
 * normalized over dims [axis, rank); Scale and Bias have shape Input dims
 * [axis:] and Input's kind; the result has Input's type; epsilon >= 0. */
void tr_layernorm(struct typed_op *op)
{
	const struct type *in = top_optype(op, 0);
	if (trc_op_class(op, 0, CF)) {
		trc_res_same_type(op, 0, 0);
		trc_want_kind(op, LITW("scale"), top_optype(op, 1), LITW("input"), in);
		trc_want_kind(op, LITW("bias"), top_optype(op, 2), LITW("input"), in);
	}
	trc_float_attr_nonneg(op, "epsilon", top_float(op, AN_epsilon));
	if (!trc_axis_attr(op, "axis", top_int(op, AN_axis), 0))
		return;
	unsigned axis = (unsigned)top_int(op, AN_axis);
	struct shape s = {in->rank - axis, {0}};
	for (unsigned i = axis; i < in->rank; i++)
		s.d[i - axis] = trc_dimv(in, i);
	trc_want_shape(op, LITW("scale"), top_optype(op, 1), &s);
	trc_want_shape(op, LITW("bias"), top_optype(op, 2), &s);
}

/* InstanceNormalization(Input, Scale C, Bias C): Input floating-point of rank
 * >= 3 (a batch, channels, spatial dims), C = Input dim channel_idx with
 * channel_idx in [1, rank); each (n, c) plane is normalized; the result has
 * Input's type; epsilon >= 0. */
void tr_instancenorm(struct typed_op *op)
{
	const struct type *in = top_optype(op, 0);
	if (trc_op_class(op, 0, CF))
		trc_res_same_type(op, 0, 0);
	trc_float_attr_nonneg(op, "epsilon", top_float(op, AN_epsilon));
	if (in->rank < 3) {
		top_err(op, "input %s must have a batch, a channel and at least one spatial dimension", TYS(in));
		return;
	}
	int64_t ci = top_int(op, AN_channel_idx);
	if (ci < 1 || ci >= (int64_t)in->rank) {
		top_err(op, "channel_idx %" PRId64 " is out of range [1, %u) for input %s", ci, in->rank, TYS(in));
		return;
	}
	int64_t c = trc_dimv(in, (unsigned)ci);
	channel_vector(op, 1, c, "channels");
	channel_vector(op, 2, c, "channels");
}

/* LocalResponseNormalization(Input N x H x W x C, floating-point) -> Input's
 * type; each value is scaled by (k + alpha/size * sum of squares over the
 * size = 2*half_window_size + 1 neighbouring channels)^beta;
 * half_window_size >= 0, k > 0. */
void tr_lrn(struct typed_op *op)
{
	if (trc_op_class(op, 0, CF))
		trc_res_same_type(op, 0, 0);
	trc_op_rank(op, 0, 4, "N x H x W x C");
	trc_int_attr_min(op, "half_window_size", top_int(op, AN_half_window_size), 0);
	double k = top_float(op, AN_k);
	if (!(k > 0))
		top_err(op, "k must be positive, got %g", k);
}

/* ------------------------------------------------------------------ */
/* Softmax and losses                                                  */

/* SoftMax, LogSoftMax(Input) {axis}: float or quantized Input, normalized
 * along axis in [0, rank) -> Input's shape and kind. */
void tr_softmax(struct typed_op *op)
{
	if (trc_op_class(op, 0, C_FQ))
		trc_res_same_shape_kind(op, 0, 0);
	trc_axis_attr(op, "axis", top_int(op, AN_axis), 0);
}

/* CrossEntropyLoss(P N x C floating-point, Labels N of an index type)
 *   -> CE <1> of P's kind: -sum_n log P[n, Labels[n]]. */
void tr_cross_entropy(struct typed_op *op)
{
	const struct type *p = top_optype(op, 0), *l = top_optype(op, 1);
	if (trc_op_class(op, 0, CF))
		trc_want_kind(op, LITW("CE"), top_type(op), LITW("P"), p);
	trc_op_class(op, 1, C_IDX);
	struct shape one = {1, {1}};
	trc_res_shape(op, 0, &one);
	bool ranks = trc_op_rank(op, 0, 2, "N x C");
	ranks &= trc_op_rank(op, 1, 1, "N");
	if (!ranks)
		return;
	if (l->dims[0] != p->dims[0])
		top_err(op, "labels %s do not have one entry per row of P %s", TYS(l), TYS(p));
}

/* Regression(Input T, Expected T) -> T, T floating-point: the gradient
 * Input - Expected in training. */
void tr_regression(struct typed_op *op)
{
	const struct type *in = top_optype(op, 0), *e = top_optype(op, 1);
	if (!trc_op_class(op, 0, CF))
		return;
	if (!type_same_shape(in, e) || !type_same_elem(in, e))
		top_err(op, "expected %s does not have the type of input %s", TYS(e), TYS(in));
	trc_res_same_type(op, 0, 0);
}

/* ------------------------------------------------------------------ */
/* Training                                                            */

/* SGD(Gradient T, Weight T) -> UpdatedWeight T, T floating-point;
 * batch_size >= 1, l1_decay and l2_decay >= 0. */
void tr_sgd(struct typed_op *op)
{
	const struct type *g = top_optype(op, 0), *w = top_optype(op, 1);
	if (trc_op_class(op, 1, CF)) {
		if (!type_same_shape(g, w) || !type_same_elem(g, w))
			top_err(op, "gradient %s does not have the type of weight %s", TYS(g), TYS(w));
		trc_res_same_type(op, 0, 1);
	}
	trc_int_attr_min(op, "batch_size", top_int(op, AN_batch_size), 1);
	trc_float_attr_nonneg(op, "l1_decay", top_float(op, AN_l1_decay));
	trc_float_attr_nonneg(op, "l2_decay", top_float(op, AN_l2_decay));
}
