/* typerules_shape.c - the type rules of shape and data movement (Reshape,
 * Transpose, Concat, Slice, Gather, Scatter, Tile, Resize, ...) and of
 * selection (ArgMax, ArgMin, TopK, CumSum). Data movement copies stored
 * values, so results keep the input's exact element type. Conventions as in
 * typerules.c.
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
/* Shape and data movement                                             */

/* Reshape(Input) -> Result with Input's element type and element count. */
void tr_reshape(struct typed_op *op)
{
	const struct type *in = top_optype(op, 0), *r = top_type(op);
	trc_want_elem(op, LITW("result"), r, LITW("input"), in);
	if (trc_numel(in) != trc_numel(r))
		top_err(op, "result %s has %" PRId64 " elements but input %s has %" PRId64, TYS(r), trc_numel(r), TYS(in),
			trc_numel(in));
}

/* The list attribute called name, of cnt values, has one value per
 * dimension of input in; false after reporting. */
static bool one_per_dim(struct typed_op *op, const char *name, unsigned cnt, const struct type *in)
{
	if (cnt == in->rank)
		return true;
	top_err(op, "%s has %u values but input %s has rank %u", name, cnt, TYS(in), in->rank);
	return false;
}

/* Transpose(Input) {shuffle}: shuffle is a permutation of [0, rank);
 * result dim i = Input dim shuffle[i]; Input's element type. */
void tr_transpose(struct typed_op *op)
{
	const struct type *in = top_optype(op, 0);
	trc_want_elem(op, LITW("result"), top_type(op), LITW("input"), in);
	unsigned cnt;
	const int64_t *sh = top_ints(op, AN_shuffle, &cnt);
	if (!one_per_dim(op, "shuffle", cnt, in))
		return;
	bool seen[GLOW_MAX_RANK] = {false};
	struct shape s = {in->rank, {0}};
	for (unsigned i = 0; i < cnt; i++) {
		if (sh[i] < 0 || sh[i] >= (int64_t)in->rank || seen[sh[i]]) {
			top_err(op, "shuffle is not a permutation of [0, %u): entry %u is %" PRId64, in->rank, i, sh[i]);
			return;
		}
		seen[sh[i]] = true;
		s.d[i] = trc_dimv(in, (unsigned)sh[i]);
	}
	trc_res_shape(op, 0, &s);
}

/* Concat(Inputs...) {dim}: inputs of one element type and rank, equal in every
 * dimension but dim -> that shape with dim = the sum over the inputs. */
void tr_concat(struct typed_op *op)
{
	const struct type *first = top_optype(op, 0);
	bool ok = true;
	for (unsigned i = 1; i < op->nops; i++)
		ok &= trc_want_elem(op, OPW(op, i), top_optype(op, i), OPW(op, 0), first);
	trc_want_elem(op, LITW("result"), top_type(op), OPW(op, 0), first);
	if (!trc_axis_attr(op, "dim", top_int(op, AN_dim), 0))
		return;
	unsigned dim = (unsigned)top_int(op, AN_dim);
	struct shape s = trc_shape_of(first);
	for (unsigned i = 1; i < op->nops; i++) {
		const struct type *t = top_optype(op, i);
		bool same = t->rank == first->rank;
		for (unsigned j = 0; same && j < t->rank; j++)
			same = j == dim || t->dims[j] == first->dims[j];
		if (!same) {
			top_err(op, "%s %s does not match %s %s in every dimension but %u", OPN(op, i), TYS(t), OPN(op, 0),
				TYS(first), dim);
			ok = false;
		}
		s.d[dim] = trc_sat_add(s.d[dim], trc_dimv(t, dim));
	}
	if (ok)
		trc_res_shape(op, 0, &s);
}

/* Slice(Input) {start}: start has one non-negative value per dimension and
 * start[i] + result dim i <= Input dim i; Result has Input's rank and element
 * type. */
void tr_slice(struct typed_op *op)
{
	const struct type *in = top_optype(op, 0), *r = top_type(op);
	trc_want_elem(op, LITW("result"), r, LITW("input"), in);
	if (r->rank != in->rank) {
		top_err(op, "result %s does not have the rank of input %s", TYS(r), TYS(in));
		return;
	}
	const int64_t *st = trc_ints_attr(op, "start", top_attr(op, AN_start), in->rank, 0);
	if (!st)
		return;
	for (unsigned i = 0; i < in->rank; i++)
		if (trc_sat_add(st[i], trc_dimv(r, i)) > trc_dimv(in, i)) {
			top_err(op, "start %" PRId64 " + result %s dimension %u exceeds input %s", st[i], TYS(r), i,
				TYS(in));
			return;
		}
}

/* InsertTensor(Big, Small) {start, count, axis} -> Big's type: Small, repeated
 * count >= 1 times along axis, is written at offset start (one non-negative
 * value per dimension) of Big; Small has Big's rank and element type and
 * start[i] + Small dim i (times count along axis) <= Big dim i. */
void tr_insert_tensor(struct typed_op *op)
{
	const struct type *big = top_optype(op, 0), *sm = top_optype(op, 1);
	trc_want_elem(op, LITW("small"), sm, LITW("big"), big);
	trc_res_same_type(op, 0, 0);
	bool ok = trc_int_attr_min(op, "count", top_int(op, AN_count), 1);
	if (sm->rank != big->rank) {
		top_err(op, "small %s does not have the rank of big %s", TYS(sm), TYS(big));
		return;
	}
	const int64_t *st = trc_ints_attr(op, "start", top_attr(op, AN_start), big->rank, 0);
	if (!trc_axis_attr(op, "axis", top_int(op, AN_axis), 0) || !st || !ok)
		return;
	unsigned axis = (unsigned)top_int(op, AN_axis);
	int64_t count = top_int(op, AN_count);
	for (unsigned i = 0; i < big->rank; i++) {
		int64_t ext = i == axis ? trc_sat_mul(trc_dimv(sm, i), count) : trc_dimv(sm, i);
		if (trc_sat_add(st[i], ext) > trc_dimv(big, i)) {
			top_err(op, "start %" PRId64 " + %" PRId64 " inserted in dimension %u exceeds big %s", st[i], ext,
				i, TYS(big));
			return;
		}
	}
}

/* Gather(Data, Indices of an index type) {axis in [0, rank(Data))}
 *   -> Data dims[:axis] ++ Indices dims ++ Data dims[axis+1:], Data's element type. */
void tr_gather(struct typed_op *op)
{
	const struct type *d = top_optype(op, 0), *ix = top_optype(op, 1);
	trc_want_elem(op, LITW("result"), top_type(op), LITW("data"), d);
	trc_op_class(op, 1, C_IDX);
	if (!trc_axis_attr(op, "axis", top_int(op, AN_axis), 0))
		return;
	unsigned axis = (unsigned)top_int(op, AN_axis);
	unsigned rank = d->rank - 1u + ix->rank;
	if (rank > GLOW_MAX_RANK) {
		top_err(op, "result would have rank %u (more than %d)", rank, GLOW_MAX_RANK);
		return;
	}
	struct shape s = {0, {0}};
	for (unsigned i = 0; i < axis; i++)
		s.d[s.rank++] = trc_dimv(d, i);
	for (unsigned i = 0; i < ix->rank; i++)
		s.d[s.rank++] = trc_dimv(ix, i);
	for (unsigned i = axis + 1; i < d->rank; i++)
		s.d[s.rank++] = trc_dimv(d, i);
	trc_res_shape(op, 0, &s);
}

/* GatherND(Data rank r, Indices rank q of an index type) {batch_dims b}:
 *   0 <= b < min(q, r), the first b dims of Data and Indices agree, the index
 *   depth m = Indices dim q-1 is in [1, r - b];
 *   result = Indices dims[:q-1] ++ Data dims[b+m:], Data's element type. */
void tr_gather_nd(struct typed_op *op)
{
	const struct type *d = top_optype(op, 0), *ix = top_optype(op, 1);
	trc_want_elem(op, LITW("result"), top_type(op), LITW("data"), d);
	trc_op_class(op, 1, C_IDX);
	int64_t b = top_int(op, AN_batch_dims);
	int64_t lim = d->rank < ix->rank ? d->rank : ix->rank;
	if (b < 0 || b >= lim) {
		top_err(op, "batch_dims %" PRId64 " must be in [0, %" PRId64 ") for data %s and indices %s", b, lim,
			TYS(d), TYS(ix));
		return;
	}
	for (unsigned i = 0; i < (unsigned)b; i++)
		if (d->dims[i] != ix->dims[i]) {
			top_err(op, "batch dimension %u of data %s and indices %s differs", i, TYS(d), TYS(ix));
			return;
		}
	int64_t m = trc_dimv(ix, ix->rank - 1u);
	if (m < 1 || m > (int64_t)d->rank - b) {
		top_err(op, "index depth %" PRId64 " (last dimension of indices %s) must be in [1, %" PRId64 "]", m,
			TYS(ix), (int64_t)d->rank - b);
		return;
	}
	struct shape s = {0, {0}};
	for (unsigned i = 0; i + 1 < ix->rank; i++)
		s.d[s.rank++] = trc_dimv(ix, i);
	for (unsigned i = (unsigned)(b + m); i < d->rank; i++)
		s.d[s.rank++] = trc_dimv(d, i);
	trc_res_shape(op, 0, &s);
}

/* Indices (operand i) has Data's rank and, in every dimension but axis, at
 * most Data's extent (each index tuple names an element of Data). */
static bool along_axis_indices(struct typed_op *op, unsigned i, unsigned axis)
{
	const struct type *d = top_optype(op, 0), *ix = top_optype(op, i);
	if (ix->rank != d->rank) {
		top_err(op, "%s %s does not have the rank of data %s", OPN(op, i), TYS(ix), TYS(d));
		return false;
	}
	for (unsigned k = 0; k < d->rank; k++)
		if (k != axis && ix->dims[k] > d->dims[k]) {
			top_err(op, "%s %s exceeds data %s in dimension %u", OPN(op, i), TYS(ix), TYS(d), k);
			return false;
		}
	return true;
}

/* GatherElements(Data, Indices of an index type) {axis in [0, rank(Data))}:
 *   Indices has Data's rank and at most Data's extent in every dimension
 *   but axis -> Indices' shape, Data's element type; result[i] =
 *   Data[i with dimension axis replaced by Indices[i]]. */
void tr_gather_elements(struct typed_op *op)
{
	trc_want_elem(op, LITW("result"), top_type(op), LITW("data"), top_optype(op, 0));
	trc_op_class(op, 1, C_IDX);
	if (!trc_axis_attr(op, "axis", top_int(op, AN_axis), 0) || !along_axis_indices(op, 1, (unsigned)top_int(op, AN_axis)))
		return;
	struct shape s = trc_shape_of(top_optype(op, 1));
	trc_res_shape(op, 0, &s);
}

/* ScatterElements(Data, Indices of an index type, Updates) {axis, reduction}
 *   -> Data's type: Indices as for GatherElements, Updates of Indices' shape
 *   and Data's element type; Data with Updates[i] written (or added, or
 *   multiplied) at Indices' positions. */
void tr_scatter_elements(struct typed_op *op)
{
	trc_res_same_type(op, 0, 0);
	trc_want_elem(op, LITW("updates"), top_optype(op, 2), LITW("data"), top_optype(op, 0));
	trc_op_class(op, 1, C_IDX);
	if (top_int(op, AN_reduction) != 0)
		trc_op_class(op, 0, C_NUM);
	if (!trc_axis_attr(op, "axis", top_int(op, AN_axis), 0) || !along_axis_indices(op, 1, (unsigned)top_int(op, AN_axis)))
		return;
	trc_want_same_shape(op, LITW("updates"), top_optype(op, 2), LITW("indices"), top_optype(op, 1));
}

/* ScatterND(Data rank r, Indices rank q >= 1 of an index type, Updates)
 *   {reduction} -> Data's type: the index depth k = Indices dim q-1 is in
 *   [1, r]; Updates has shape Indices dims[:q-1] ++ Data dims[k:] and
 *   Data's element type. */
void tr_scatter_nd(struct typed_op *op)
{
	const struct type *d = top_optype(op, 0), *ix = top_optype(op, 1);
	trc_res_same_type(op, 0, 0);
	trc_want_elem(op, LITW("updates"), top_optype(op, 2), LITW("data"), d);
	trc_op_class(op, 1, C_IDX);
	if (top_int(op, AN_reduction) != 0)
		trc_op_class(op, 0, C_NUM);
	if (ix->rank == 0) {
		top_err(op, "indices %s must have at least one dimension", TYS(ix));
		return;
	}
	int64_t k = trc_dimv(ix, ix->rank - 1u);
	if (k < 1 || k > (int64_t)d->rank) {
		top_err(op, "index depth %" PRId64 " (last dimension of indices %s) must be in [1, %u]", k, TYS(ix),
			d->rank);
		return;
	}
	unsigned rank = ix->rank - 1u + d->rank - (unsigned)k;
	if (rank > GLOW_MAX_RANK) {
		top_err(op, "updates would have rank %u (more than %d)", rank, GLOW_MAX_RANK);
		return;
	}
	struct shape s = {0, {0}};
	for (unsigned i = 0; i + 1 < ix->rank; i++)
		s.d[s.rank++] = trc_dimv(ix, i);
	for (unsigned i = (unsigned)k; i < d->rank; i++)
		s.d[s.rank++] = trc_dimv(d, i);
	trc_want_shape(op, LITW("updates"), top_optype(op, 2), &s);
}

/* Tile(Input) {count >= 1, axis}: Input repeated count times along axis
 * (result dim axis = count * Input dim axis), Input's element type. */
void tr_tile(struct typed_op *op)
{
	const struct type *in = top_optype(op, 0);
	trc_want_elem(op, LITW("result"), top_type(op), LITW("input"), in);
	bool ok = trc_int_attr_min(op, "count", top_int(op, AN_count), 1);
	if (!trc_axis_attr(op, "axis", top_int(op, AN_axis), 0) || !ok)
		return;
	unsigned axis = (unsigned)top_int(op, AN_axis);
	struct shape s = trc_shape_of(in);
	s.d[axis] = trc_sat_mul(s.d[axis], top_int(op, AN_count));
	trc_res_shape(op, 0, &s);
}

/* Broadcast(Input) {axis}: Input dims align with result dims [axis, axis +
 * rank(Input)) (numpy alignment is axis = rank(Result) - rank(Input)); each
 * aligned Input dim is 1 or equal to the result's; Input's element type. */
void tr_broadcast(struct typed_op *op)
{
	const struct type *in = top_optype(op, 0), *r = top_type(op);
	trc_want_elem(op, LITW("result"), r, LITW("input"), in);
	int64_t axis = top_int(op, AN_axis);
	if (axis < 0 || axis + in->rank > r->rank) {
		top_err(op, "axis %" PRId64 " does not place input %s inside result %s (need 0 <= axis <= %d)", axis,
			TYS(in), TYS(r), (int)r->rank - (int)in->rank);
		return;
	}
	for (unsigned i = 0; i < in->rank; i++)
		if (in->dims[i] != 1 && in->dims[i] != r->dims[axis + i]) {
			top_err(op, "input %s dimension %u does not broadcast to result %s dimension %u", TYS(in), i,
				TYS(r), (unsigned)axis + i);
			return;
		}
}

/* SpaceToDepth, DepthToSpace: the result has Input's element type, Input is
 * N x H x W x C and block_size positive. Returns block_size, or 0 after a
 * problem that leaves nothing more to check. */
static int64_t block_rule(struct typed_op *op)
{
	trc_want_elem(op, LITW("result"), top_type(op), LITW("input"), top_optype(op, 0));
	int64_t b = trc_int_attr_min(op, "block_size", top_int(op, AN_block_size), 1) ? top_int(op, AN_block_size) : 0;
	return trc_op_rank(op, 0, 4, "N x H x W x C") ? b : 0;
}

/* SpaceToDepth(Input N x H x W x C) {block_size b}: b divides H and W
 *   -> N x H/b x W/b x C*b*b, Input's element type. */
void tr_space_to_depth(struct typed_op *op)
{
	const struct type *in = top_optype(op, 0);
	int64_t b = block_rule(op);
	if (!b)
		return;
	if (trc_dimv(in, 1) % b || trc_dimv(in, 2) % b) {
		top_err(op, "block_size %" PRId64 " does not divide the height and width of input %s", b, TYS(in));
		return;
	}
	struct shape s = {4, {trc_dimv(in, 0), trc_dimv(in, 1) / b, trc_dimv(in, 2) / b, trc_sat_mul(trc_dimv(in, 3), trc_sat_mul(b, b))}};
	trc_res_shape(op, 0, &s);
}

/* DepthToSpace(Input N x H x W x C) {block_size b, mode}: b*b divides C
 *   -> N x H*b x W*b x C/(b*b), Input's element type. */
void tr_depth_to_space(struct typed_op *op)
{
	const struct type *in = top_optype(op, 0);
	int64_t b = block_rule(op);
	if (!b)
		return;
	int64_t bb = trc_sat_mul(b, b);
	if (trc_dimv(in, 3) % bb) {
		top_err(op, "block_size %" PRId64 " squared does not divide the %" PRId64 " channels of input %s", b,
			trc_dimv(in, 3), TYS(in));
		return;
	}
	struct shape s = {4, {trc_dimv(in, 0), trc_sat_mul(trc_dimv(in, 1), b), trc_sat_mul(trc_dimv(in, 2), b), trc_dimv(in, 3) / bb}};
	trc_res_shape(op, 0, &s);
}

/* ResizeNearest, ResizeBilinear(Input) {scale}: one positive finite scale per
 * dimension; result dim i = floor(Input dim i * scale[i]). Nearest copies
 * values (Input's element type), Bilinear interpolates (float or quantized,
 * Input's kind). */
void tr_resize(struct typed_op *op)
{
	const struct type *in = top_optype(op, 0);
	if (op->kind == NK_ResizeNearest)
		trc_want_elem(op, LITW("result"), top_type(op), LITW("input"), in);
	else if (trc_op_class(op, 0, C_FQ))
		trc_want_kind(op, LITW("result"), top_type(op), LITW("input"), in);
	unsigned cnt;
	const double *sc = top_floats(op, AN_scale, &cnt);
	if (!one_per_dim(op, "scale", cnt, in))
		return;
	struct shape s = {in->rank, {0}};
	for (unsigned i = 0; i < cnt; i++) {
		if (!(sc[i] > 0) || isinf(sc[i])) {
			top_err(op, "scale[%u] must be positive and finite, got %g", i, sc[i]);
			return;
		}
		double d = floor((double)in->dims[i] * sc[i]);
		s.d[i] = d < 9.0e18 ? (int64_t)d : INT64_MAX;
	}
	trc_res_shape(op, 0, &s);
}

/* Splat() {value} -> any type, every element = value; for integer and index
 * kinds value is an integer in the kind's range, for bool 0 or 1 (quantized
 * kinds take the real value, quantized with the result's parameters). */
void tr_splat(struct typed_op *op)
{
	const struct type *t = top_type(op);
	double x = top_float(op, AN_value);
	enum elem_kind k = (enum elem_kind)t->elem;
	if (k == EK_BOOL) {
		if (x != 0 && x != 1)
			top_err(op, "value %g is not a bool (0 or 1) for result %s", x, TYS(t));
		return;
	}
	if (!elem_is_integer(k))
		return;
	bool wide = elem_size(k) == 8;
	double lo = wide ? -9223372036854775808.0 : -2147483648.0;
	double hi = wide ? 9223372036854775808.0 : 2147483648.0; /* exclusive */
	if (x != floor(x) || !(x >= lo && x < hi))
		top_err(op, "value %g is not an integer representable in result %s", x, TYS(t));
}

/* Flip(Input) {axis in [0, rank)} -> Input's type, reversed along axis. */
void tr_flip(struct typed_op *op)
{
	trc_res_same_type(op, 0, 0);
	trc_axis_attr(op, "axis", top_int(op, AN_axis), 0);
}

/* ------------------------------------------------------------------ */
/* Selection                                                           */

/* ArgMax, ArgMin(Input numeric) {axis in [0, rank), keep_dims} -> an index
 * type of Input's shape with dim axis removed, or set to 1 when keep_dims. */
void tr_arg_reduce(struct typed_op *op)
{
	const struct type *in = top_optype(op, 0);
	trc_op_class(op, 0, C_NUM);
	trc_res_class(op, 0, C_IDX);
	if (!trc_axis_attr(op, "axis", top_int(op, AN_axis), 0))
		return;
	unsigned axis = (unsigned)top_int(op, AN_axis);
	struct shape s = trc_shape_of(in);
	if (top_int(op, AN_keep_dims)) {
		s.d[axis] = 1;
	} else {
		memmove(s.d + axis, s.d + axis + 1, (in->rank - axis - 1u) * sizeof(int64_t));
		s.d[--s.rank] = 0;
	}
	trc_res_shape(op, 0, &s);
}

/* TopK(Input ... x D, numeric) {k in [1, D]} -> Values ... x k (Input's element
 * type), Indices ... x k (an index type): the k largest along the last dim. */
void tr_topk(struct typed_op *op)
{
	const struct type *in = top_optype(op, 0);
	if (trc_op_class(op, 0, C_NUM))
		trc_want_elem(op, LITW("values"), op->res[0], LITW("input"), in);
	trc_res_class(op, 1, C_IDX);
	if (!trc_int_attr_min(op, "k", top_int(op, AN_k), 1))
		return;
	if (in->rank == 0) {
		top_err(op, "input %s must have at least one dimension", TYS(in));
		return;
	}
	int64_t k = top_int(op, AN_k);
	struct shape s = trc_shape_of(in);
	if (k > s.d[in->rank - 1u]) {
		top_err(op, "k %" PRId64 " exceeds the last dimension of input %s", k, TYS(in));
		return;
	}
	s.d[in->rank - 1u] = k;
	trc_res_shape(op, 0, &s);
	trc_res_shape(op, 1, &s);
}

/* CumSum(Input numeric) {axis in [0, rank), exclusive, reverse} -> Input's
 * shape and kind. */
void tr_cumsum(struct typed_op *op)
{
	if (trc_op_class(op, 0, C_NUM))
		trc_res_same_shape_kind(op, 0, 0);
	trc_axis_attr(op, "axis", top_int(op, AN_axis), 0);
}
