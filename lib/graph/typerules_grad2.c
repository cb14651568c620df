/* typerules_grad2.c - the type rules of the gradient kinds of the
 * elementwise, activation and shape kinds (Nodes.def's block after
 * LocalResponseNormalizationGrad; the single-operand activations share
 * tr_activation_grad of typerules_grad.c).
 *
 * A gradient kind's results are the adjoints of the forward node's
 * operands, so each has exactly that operand's type; what ties them to the
 * OutputGrad is the forward kind's shape rule read backwards. Each rule
 * below therefore computes, from the result (the forward input) and the
 * attributes, the shape the forward result had, and requires OutputGrad
 * to have it: TransposeGrad {shuffle} wants InputGrad's dims shuffled,
 * PadGrad InputGrad's dims plus the pads, and so on. Gradients are floating
 * point and every result has OutputGrad's element type.
 */
#include "graph/typerules_check.h"

#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

/* The index of the OutputGrad operand: the last. */
static unsigned gop(const struct typed_op *op) { return op->nops - 1; }

/* OutputGrad is floating point and result r has its element type; false
 * after reporting. */
static bool grad_elems(struct typed_op *op, unsigned r)
{
	unsigned g = gop(op);
	if (!trc_op_class(op, g, CF))
		return false;
	return trc_want_elem(op, RESW(op, r), op->res[r], OPW(op, g), top_optype(op, g));
}

/* OutputGrad has the shape s the forward result had. */
static void want_grad_shape(struct typed_op *op, const struct shape *s)
{
	trc_want_shape(op, OPW(op, gop(op)), top_optype(op, gop(op)), s);
}

/* AddGrad, SubGrad, MulGrad, DivGrad, MaxGrad, MinGrad: every operand the
 * type of OutputGrad (the forward operands and result of an elementwise
 * kind share one), and so both results. */
void tr_binary_grad(struct typed_op *op)
{
	unsigned g = gop(op);
	if (!trc_op_class(op, g, CF))
		return;
	const struct type *gt = top_optype(op, g);
	for (unsigned i = 0; i < g; i++)
		if (trc_want_same_shape(op, OPW(op, i), top_optype(op, i), OPW(op, g), gt))
			trc_want_elem(op, OPW(op, i), top_optype(op, i), OPW(op, g), gt);
	for (unsigned r = 0; r < op->nres; r++)
		if (op->res[r] != gt)
			top_err(op, "%s %s must have the type %s of OutputGrad", node_desc(op->kind)->res_names[r],
				TYS(op->res[r]), TYS(gt));
}

/* ReshapeGrad(OutputGrad) -> InputGrad: as many elements. */
void tr_reshape_grad(struct typed_op *op)
{
	if (!grad_elems(op, 0))
		return;
	const struct type *gt = top_optype(op, 0);
	if (trc_numel(gt) != trc_numel(op->res[0]))
		top_err(op, "input grad %s must have as many elements as output grad %s", TYS(op->res[0]),
			TYS(gt));
}

/* TransposeGrad(OutputGrad) {shuffle} -> InputGrad: shuffle a permutation
 * of InputGrad's axes, OutputGrad InputGrad's dims shuffled. */
void tr_transpose_grad(struct typed_op *op)
{
	if (!grad_elems(op, 0))
		return;
	const struct type *in = op->res[0];
	const int64_t *s = trc_ints_attr(op, "shuffle", top_attr(op, AN_shuffle), in->rank, 0);
	if (!s)
		return;
	bool seen[GLOW_MAX_RANK] = {false};
	struct shape want = {in->rank, {0}};
	for (unsigned i = 0; i < in->rank; i++) {
		if (s[i] >= (int64_t)in->rank || seen[s[i]]) {
			top_err(op, "shuffle is not a permutation of the %u axes of input grad %s", in->rank,
				TYS(in));
			return;
		}
		seen[s[i]] = true;
		want.d[i] = trc_dimv(in, (unsigned)s[i]);
	}
	want_grad_shape(op, &want);
}

/* ConcatGrad(OutputGrad) {dim, offset} -> InputGrad: InputGrad is the slab
 * [offset, offset + its size) of OutputGrad along dim. */
void tr_concat_grad(struct typed_op *op)
{
	if (!grad_elems(op, 0))
		return;
	const struct type *in = op->res[0], *gt = top_optype(op, 0);
	int64_t dim = top_int(op, AN_dim), off = top_int(op, AN_offset);
	if (!trc_axis_ok(op, "dim", dim, RESW(op, 0), in) || !trc_int_attr_min(op, "offset", off, 0))
		return;
	struct shape want = trc_shape_of(in);
	if (gt->rank == in->rank)
		want.d[dim] = trc_dimv(gt, (unsigned)dim);
	if (!trc_want_shape(op, OPW(op, 0), gt, &want))
		return;
	if (trc_sat_add(off, trc_dimv(in, (unsigned)dim)) > trc_dimv(gt, (unsigned)dim))
		top_err(op, "offset %" PRId64 " and input grad %s run past dimension %" PRId64
			    " of output grad %s",
			off, TYS(in), dim, TYS(gt));
}

/* SliceGrad(OutputGrad) {start} -> InputGrad: OutputGrad fits into
 * InputGrad at start. */
void tr_slice_grad(struct typed_op *op)
{
	if (!grad_elems(op, 0))
		return;
	const struct type *in = op->res[0], *gt = top_optype(op, 0);
	const int64_t *st = trc_ints_attr(op, "start", top_attr(op, AN_start), in->rank, 0);
	if (!st || !trc_want_rank(op, OPW(op, 0), gt, in->rank, "the rank of the input grad"))
		return;
	for (unsigned i = 0; i < in->rank; i++)
		if (trc_sat_add(st[i], trc_dimv(gt, i)) > trc_dimv(in, i)) {
			top_err(op, "output grad %s at start does not fit into input grad %s", TYS(gt), TYS(in));
			return;
		}
}

/* GatherGrad(Indices, OutputGrad) {axis} -> DataGrad: OutputGrad has
 * DataGrad's dims with the axis replaced by Indices' dims. */
void tr_gather_grad(struct typed_op *op)
{
	bool ok = trc_op_class(op, 0, CI | CX);
	if (!grad_elems(op, 0) || !ok)
		return;
	const struct type *in = op->res[0], *ix = top_optype(op, 0);
	int64_t axis = top_int(op, AN_axis);
	if (!trc_axis_ok(op, "axis", axis, RESW(op, 0), in))
		return;
	struct shape want = {0, {0}};
	if (in->rank - 1u + ix->rank > GLOW_MAX_RANK) {
		top_err(op, "data grad %s and indices %s make a rank above %d", TYS(in), TYS(ix), GLOW_MAX_RANK);
		return;
	}
	for (unsigned i = 0; i < in->rank; i++) {
		if (i != (unsigned)axis) {
			want.d[want.rank++] = trc_dimv(in, i);
			continue;
		}
		for (unsigned j = 0; j < ix->rank; j++)
			want.d[want.rank++] = trc_dimv(ix, j);
	}
	want_grad_shape(op, &want);
}

/* PadGrad(OutputGrad) {mode, pads} -> InputGrad: OutputGrad has
 * InputGrad's dims plus the pads before and after (negative pads crop). */
void tr_pad_grad(struct typed_op *op)
{
	if (!grad_elems(op, 0))
		return;
	const struct type *in = op->res[0];
	unsigned r = in->rank;
	const int64_t *p = trc_ints_attr(op, "pads", top_attr(op, AN_pads), 2 * r, INT64_MIN);
	if (!p)
		return;
	struct shape want = {r, {0}};
	for (unsigned i = 0; i < r; i++) {
		want.d[i] = trc_sat_add(trc_dimv(in, i), trc_sat_add(p[i], p[i + r]));
		if (want.d[i] < 0) {
			top_err(op, "pads crop more than dimension %u of input grad %s", i, TYS(in));
			return;
		}
	}
	want_grad_shape(op, &want);
}

/* BatchedAddGrad(OutputGrad) -> BatchGrad, SliceGrad: BatchGrad of
 * OutputGrad's type, SliceGrad its dims without the first. */
void tr_batched_add_grad(struct typed_op *op)
{
	if (!grad_elems(op, 0) || !grad_elems(op, 1))
		return;
	const struct type *gt = top_optype(op, 0);
	if (!trc_want_rank(op, OPW(op, 0), gt, gt->rank ? gt->rank : 1, "a batch dimension first"))
		return;
	trc_res_same_type(op, 0, 0);
	struct shape s = trc_shape_of(gt), want = {gt->rank - 1u, {0}};
	memcpy(want.d, s.d + 1, (gt->rank - 1u) * sizeof(int64_t));
	trc_res_shape(op, 1, &want);
}

/* BatchedReduceAddGrad, BatchedReduceMeanGrad(OutputGrad) {axes} ->
 * BatchGrad: axes unique axes of BatchGrad, OutputGrad BatchGrad's dims
 * without them. */
void tr_reduce_grad(struct typed_op *op)
{
	if (!grad_elems(op, 0))
		return;
	const struct type *in = op->res[0];
	bool drop[GLOW_MAX_RANK] = {false};
	if (!trc_axes_attr(op, RESW(op, 0), in, drop))
		return;
	struct shape want = {0, {0}};
	for (unsigned i = 0; i < in->rank; i++)
		if (!drop[i])
			want.d[want.rank++] = trc_dimv(in, i);
	want_grad_shape(op, &want);
}
