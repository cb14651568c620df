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
void tr_reshape(struct verifier *v, const struct node *n)
{
	const struct type *in = op_type(n, 0), *r = node_type(n);
	trc_want_elem(v, n, LITW("result"), r, LITW("input"), in);
	if (trc_numel(in) != trc_numel(r))
		verr(v, n, "result %s has %" PRId64 " elements but input %s has %" PRId64, TYS(r), trc_numel(r), TYS(in),
		     trc_numel(in));
}

/* Transpose(Input) {shuffle}: shuffle is a permutation of [0, rank);
 * result dim i = Input dim shuffle[i]; Input's element type. */
void tr_transpose(struct verifier *v, const struct node *n)
{
	const struct type *in = op_type(n, 0);
	trc_want_elem(v, n, LITW("result"), node_type(n), LITW("input"), in);
	unsigned cnt;
	const int64_t *sh = node_ints(n, "shuffle", &cnt);
	if (cnt != in->rank) {
		verr(v, n, "shuffle has %u values but input %s has rank %u", cnt, TYS(in), in->rank);
		return;
	}
	bool seen[GLOW_MAX_RANK] = {false};
	struct shape s = {in->rank, {0}};
	for (unsigned i = 0; i < cnt; i++) {
		if (sh[i] < 0 || sh[i] >= (int64_t)in->rank || seen[sh[i]]) {
			verr(v, n, "shuffle is not a permutation of [0, %u): entry %u is %" PRId64, in->rank, i, sh[i]);
			return;
		}
		seen[sh[i]] = true;
		s.d[i] = trc_dimv(in, (unsigned)sh[i]);
	}
	trc_res_shape(v, n, 0, &s);
}

/* Concat(Inputs...) {dim}: inputs of one element type and rank, equal in every
 * dimension but dim -> that shape with dim = the sum over the inputs. */
void tr_concat(struct verifier *v, const struct node *n)
{
	const struct type *first = op_type(n, 0);
	bool ok = true;
	for (unsigned i = 1; i < n->nops; i++)
		ok &= trc_want_elem(v, n, OPW(n, i), op_type(n, i), OPW(n, 0), first);
	trc_want_elem(v, n, LITW("result"), node_type(n), OPW(n, 0), first);
	if (!trc_axis_attr(v, n, "dim", 0))
		return;
	unsigned dim = (unsigned)node_int(n, "dim");
	struct shape s = trc_shape_of(first);
	for (unsigned i = 1; i < n->nops; i++) {
		const struct type *t = op_type(n, i);
		bool same = t->rank == first->rank;
		for (unsigned j = 0; same && j < t->rank; j++)
			same = j == dim || t->dims[j] == first->dims[j];
		if (!same) {
			verr(v, n, "%s %s does not match %s %s in every dimension but %u", OPN(n, i), TYS(t), OPN(n, 0),
			     TYS(first), dim);
			ok = false;
		}
		s.d[dim] = trc_sat_add(s.d[dim], trc_dimv(t, dim));
	}
	if (ok)
		trc_res_shape(v, n, 0, &s);
}

/* Slice(Input) {start}: start has one non-negative value per dimension and
 * start[i] + result dim i <= Input dim i; Result has Input's rank and element
 * type. */
void tr_slice(struct verifier *v, const struct node *n)
{
	const struct type *in = op_type(n, 0), *r = node_type(n);
	trc_want_elem(v, n, LITW("result"), r, LITW("input"), in);
	if (r->rank != in->rank) {
		verr(v, n, "result %s does not have the rank of input %s", TYS(r), TYS(in));
		return;
	}
	const int64_t *st = trc_ints_attr(v, n, "start", in->rank, 0);
	if (!st)
		return;
	for (unsigned i = 0; i < in->rank; i++)
		if (trc_sat_add(st[i], trc_dimv(r, i)) > trc_dimv(in, i)) {
			verr(v, n, "start %" PRId64 " + result %s dimension %u exceeds input %s", st[i], TYS(r), i,
			     TYS(in));
			return;
		}
}

/* InsertTensor(Big, Small) {start, count, axis} -> Big's type: Small, repeated
 * count >= 1 times along axis, is written at offset start (one non-negative
 * value per dimension) of Big; Small has Big's rank and element type and
 * start[i] + Small dim i (times count along axis) <= Big dim i. */
void tr_insert_tensor(struct verifier *v, const struct node *n)
{
	const struct type *big = op_type(n, 0), *sm = op_type(n, 1);
	trc_want_elem(v, n, LITW("small"), sm, LITW("big"), big);
	trc_res_same_type(v, n, 0, 0);
	bool ok = trc_int_attr_min(v, n, "count", 1);
	if (sm->rank != big->rank) {
		verr(v, n, "small %s does not have the rank of big %s", TYS(sm), TYS(big));
		return;
	}
	const int64_t *st = trc_ints_attr(v, n, "start", big->rank, 0);
	if (!trc_axis_attr(v, n, "axis", 0) || !st || !ok)
		return;
	unsigned axis = (unsigned)node_int(n, "axis");
	int64_t count = node_int(n, "count");
	for (unsigned i = 0; i < big->rank; i++) {
		int64_t ext = i == axis ? trc_sat_mul(trc_dimv(sm, i), count) : trc_dimv(sm, i);
		if (trc_sat_add(st[i], ext) > trc_dimv(big, i)) {
			verr(v, n, "start %" PRId64 " + %" PRId64 " inserted in dimension %u exceeds big %s", st[i], ext,
			     i, TYS(big));
			return;
		}
	}
}

/* Gather(Data, Indices of an index type) {axis in [0, rank(Data))}
 *   -> Data dims[:axis] ++ Indices dims ++ Data dims[axis+1:], Data's element type. */
void tr_gather(struct verifier *v, const struct node *n)
{
	const struct type *d = op_type(n, 0), *ix = op_type(n, 1);
	trc_want_elem(v, n, LITW("result"), node_type(n), LITW("data"), d);
	trc_op_class(v, n, 1, C_IDX);
	if (!trc_axis_attr(v, n, "axis", 0))
		return;
	unsigned axis = (unsigned)node_int(n, "axis");
	unsigned rank = d->rank - 1u + ix->rank;
	if (rank > GLOW_MAX_RANK) {
		verr(v, n, "result would have rank %u (more than %d)", rank, GLOW_MAX_RANK);
		return;
	}
	struct shape s = {0, {0}};
	for (unsigned i = 0; i < axis; i++)
		s.d[s.rank++] = trc_dimv(d, i);
	for (unsigned i = 0; i < ix->rank; i++)
		s.d[s.rank++] = trc_dimv(ix, i);
	for (unsigned i = axis + 1; i < d->rank; i++)
		s.d[s.rank++] = trc_dimv(d, i);
	trc_res_shape(v, n, 0, &s);
}

/* GatherND(Data rank r, Indices rank q of an index type) {batch_dims b}:
 *   0 <= b < min(q, r), the first b dims of Data and Indices agree, the index
 *   depth m = Indices dim q-1 is in [1, r - b];
 *   result = Indices dims[:q-1] ++ Data dims[b+m:], Data's element type. */
void tr_gather_nd(struct verifier *v, const struct node *n)
{
	const struct type *d = op_type(n, 0), *ix = op_type(n, 1);
	trc_want_elem(v, n, LITW("result"), node_type(n), LITW("data"), d);
	trc_op_class(v, n, 1, C_IDX);
	int64_t b = node_int(n, "batch_dims");
	int64_t lim = d->rank < ix->rank ? d->rank : ix->rank;
	if (b < 0 || b >= lim) {
		verr(v, n, "batch_dims %" PRId64 " must be in [0, %" PRId64 ") for data %s and indices %s", b, lim,
		     TYS(d), TYS(ix));
		return;
	}
	for (unsigned i = 0; i < (unsigned)b; i++)
		if (d->dims[i] != ix->dims[i]) {
			verr(v, n, "batch dimension %u of data %s and indices %s differs", i, TYS(d), TYS(ix));
			return;
		}
	int64_t m = trc_dimv(ix, ix->rank - 1u);
	if (m < 1 || m > (int64_t)d->rank - b) {
		verr(v, n, "index depth %" PRId64 " (last dimension of indices %s) must be in [1, %" PRId64 "]", m,
		     TYS(ix), (int64_t)d->rank - b);
		return;
	}
	struct shape s = {0, {0}};
	for (unsigned i = 0; i + 1 < ix->rank; i++)
		s.d[s.rank++] = trc_dimv(ix, i);
	for (unsigned i = (unsigned)(b + m); i < d->rank; i++)
		s.d[s.rank++] = trc_dimv(d, i);
	trc_res_shape(v, n, 0, &s);
}

/* Indices (operand i) has Data's rank and, in every dimension but axis, at
 * most Data's extent (each index tuple names an element of Data). */
static bool along_axis_indices(struct verifier *v, const struct node *n, unsigned i, unsigned axis)
{
	const struct type *d = op_type(n, 0), *ix = op_type(n, i);
	if (ix->rank != d->rank) {
		verr(v, n, "%s %s does not have the rank of data %s", OPN(n, i), TYS(ix), TYS(d));
		return false;
	}
	for (unsigned k = 0; k < d->rank; k++)
		if (k != axis && ix->dims[k] > d->dims[k]) {
			verr(v, n, "%s %s exceeds data %s in dimension %u", OPN(n, i), TYS(ix), TYS(d), k);
			return false;
		}
	return true;
}

/* GatherElements(Data, Indices of an index type) {axis in [0, rank(Data))}:
 *   Indices has Data's rank and at most Data's extent in every dimension
 *   but axis -> Indices' shape, Data's element type; result[i] =
 *   Data[i with dimension axis replaced by Indices[i]]. */
void tr_gather_elements(struct verifier *v, const struct node *n)
{
	trc_want_elem(v, n, LITW("result"), node_type(n), LITW("data"), op_type(n, 0));
	trc_op_class(v, n, 1, C_IDX);
	if (!trc_axis_attr(v, n, "axis", 0) || !along_axis_indices(v, n, 1, (unsigned)node_int(n, "axis")))
		return;
	struct shape s = trc_shape_of(op_type(n, 1));
	trc_res_shape(v, n, 0, &s);
}

/* ScatterElements(Data, Indices of an index type, Updates) {axis, reduction}
 *   -> Data's type: Indices as for GatherElements, Updates of Indices' shape
 *   and Data's element type; Data with Updates[i] written (or added, or
 *   multiplied) at Indices' positions. */
void tr_scatter_elements(struct verifier *v, const struct node *n)
{
	trc_res_same_type(v, n, 0, 0);
	trc_want_elem(v, n, LITW("updates"), op_type(n, 2), LITW("data"), op_type(n, 0));
	trc_op_class(v, n, 1, C_IDX);
	if (node_int(n, "reduction") != 0)
		trc_op_class(v, n, 0, C_NUM);
	if (!trc_axis_attr(v, n, "axis", 0) || !along_axis_indices(v, n, 1, (unsigned)node_int(n, "axis")))
		return;
	trc_want_same_shape(v, n, LITW("updates"), op_type(n, 2), LITW("indices"), op_type(n, 1));
}

/* ScatterND(Data rank r, Indices rank q >= 1 of an index type, Updates)
 *   {reduction} -> Data's type: the index depth k = Indices dim q-1 is in
 *   [1, r]; Updates has shape Indices dims[:q-1] ++ Data dims[k:] and
 *   Data's element type. */
void tr_scatter_nd(struct verifier *v, const struct node *n)
{
	const struct type *d = op_type(n, 0), *ix = op_type(n, 1);
	trc_res_same_type(v, n, 0, 0);
	trc_want_elem(v, n, LITW("updates"), op_type(n, 2), LITW("data"), d);
	trc_op_class(v, n, 1, C_IDX);
	if (node_int(n, "reduction") != 0)
		trc_op_class(v, n, 0, C_NUM);
	if (ix->rank == 0) {
		verr(v, n, "indices %s must have at least one dimension", TYS(ix));
		return;
	}
	int64_t k = trc_dimv(ix, ix->rank - 1u);
	if (k < 1 || k > (int64_t)d->rank) {
		verr(v, n, "index depth %" PRId64 " (last dimension of indices %s) must be in [1, %u]", k, TYS(ix),
		     d->rank);
		return;
	}
	unsigned rank = ix->rank - 1u + d->rank - (unsigned)k;
	if (rank > GLOW_MAX_RANK) {
		verr(v, n, "updates would have rank %u (more than %d)", rank, GLOW_MAX_RANK);
		return;
	}
	struct shape s = {0, {0}};
	for (unsigned i = 0; i + 1 < ix->rank; i++)
		s.d[s.rank++] = trc_dimv(ix, i);
	for (unsigned i = (unsigned)k; i < d->rank; i++)
		s.d[s.rank++] = trc_dimv(d, i);
	trc_want_shape(v, n, LITW("updates"), op_type(n, 2), &s);
}

/* Tile(Input) {count >= 1, axis}: Input repeated count times along axis
 * (result dim axis = count * Input dim axis), Input's element type. */
void tr_tile(struct verifier *v, const struct node *n)
{
	const struct type *in = op_type(n, 0);
	trc_want_elem(v, n, LITW("result"), node_type(n), LITW("input"), in);
	bool ok = trc_int_attr_min(v, n, "count", 1);
	if (!trc_axis_attr(v, n, "axis", 0) || !ok)
		return;
	unsigned axis = (unsigned)node_int(n, "axis");
	struct shape s = trc_shape_of(in);
	s.d[axis] = trc_sat_mul(s.d[axis], node_int(n, "count"));
	trc_res_shape(v, n, 0, &s);
}

/* Broadcast(Input) {axis}: Input dims align with result dims [axis, axis +
 * rank(Input)) (numpy alignment is axis = rank(Result) - rank(Input)); each
 * aligned Input dim is 1 or equal to the result's; Input's element type. */
void tr_broadcast(struct verifier *v, const struct node *n)
{
	const struct type *in = op_type(n, 0), *r = node_type(n);
	trc_want_elem(v, n, LITW("result"), r, LITW("input"), in);
	int64_t axis = node_int(n, "axis");
	if (axis < 0 || axis + in->rank > r->rank) {
		verr(v, n, "axis %" PRId64 " does not place input %s inside result %s (need 0 <= axis <= %d)", axis,
		     TYS(in), TYS(r), (int)r->rank - (int)in->rank);
		return;
	}
	for (unsigned i = 0; i < in->rank; i++)
		if (in->dims[i] != 1 && in->dims[i] != r->dims[axis + i]) {
			verr(v, n, "input %s dimension %u does not broadcast to result %s dimension %u", TYS(in), i,
			     TYS(r), (unsigned)axis + i);
			return;
		}
}

/* Block size b: positive. */
static int64_t block_size(struct verifier *v, const struct node *n)
{
	return trc_int_attr_min(v, n, "block_size", 1) ? node_int(n, "block_size") : 0;
}

/* SpaceToDepth(Input N x H x W x C) {block_size b}: b divides H and W
 *   -> N x H/b x W/b x C*b*b, Input's element type. */
void tr_space_to_depth(struct verifier *v, const struct node *n)
{
	const struct type *in = op_type(n, 0);
	trc_want_elem(v, n, LITW("result"), node_type(n), LITW("input"), in);
	int64_t b = block_size(v, n);
	if (!trc_op_rank(v, n, 0, 4, "N x H x W x C") || !b)
		return;
	if (trc_dimv(in, 1) % b || trc_dimv(in, 2) % b) {
		verr(v, n, "block_size %" PRId64 " does not divide the height and width of input %s", b, TYS(in));
		return;
	}
	struct shape s = {4, {trc_dimv(in, 0), trc_dimv(in, 1) / b, trc_dimv(in, 2) / b, trc_sat_mul(trc_dimv(in, 3), trc_sat_mul(b, b))}};
	trc_res_shape(v, n, 0, &s);
}

/* DepthToSpace(Input N x H x W x C) {block_size b, mode}: b*b divides C
 *   -> N x H*b x W*b x C/(b*b), Input's element type. */
void tr_depth_to_space(struct verifier *v, const struct node *n)
{
	const struct type *in = op_type(n, 0);
	trc_want_elem(v, n, LITW("result"), node_type(n), LITW("input"), in);
	int64_t b = block_size(v, n);
	if (!trc_op_rank(v, n, 0, 4, "N x H x W x C") || !b)
		return;
	int64_t bb = trc_sat_mul(b, b);
	if (trc_dimv(in, 3) % bb) {
		verr(v, n, "block_size %" PRId64 " squared does not divide the %" PRId64 " channels of input %s", b,
		     trc_dimv(in, 3), TYS(in));
		return;
	}
	struct shape s = {4, {trc_dimv(in, 0), trc_sat_mul(trc_dimv(in, 1), b), trc_sat_mul(trc_dimv(in, 2), b), trc_dimv(in, 3) / bb}};
	trc_res_shape(v, n, 0, &s);
}

/* ResizeNearest, ResizeBilinear(Input) {scale}: one positive finite scale per
 * dimension; result dim i = floor(Input dim i * scale[i]). Nearest copies
 * values (Input's element type), Bilinear interpolates (float or quantized,
 * Input's kind). */
void tr_resize(struct verifier *v, const struct node *n)
{
	const struct type *in = op_type(n, 0);
	if (n->kind == NK_ResizeNearest)
		trc_want_elem(v, n, LITW("result"), node_type(n), LITW("input"), in);
	else if (trc_op_class(v, n, 0, C_FQ))
		trc_want_kind(v, n, LITW("result"), node_type(n), LITW("input"), in);
	unsigned cnt;
	const double *sc = node_floats(n, "scale", &cnt);
	if (cnt != in->rank) {
		verr(v, n, "scale has %u values but input %s has rank %u", cnt, TYS(in), in->rank);
		return;
	}
	struct shape s = {in->rank, {0}};
	for (unsigned i = 0; i < cnt; i++) {
		if (!(sc[i] > 0) || isinf(sc[i])) {
			verr(v, n, "scale[%u] must be positive and finite, got %g", i, sc[i]);
			return;
		}
		double d = floor((double)in->dims[i] * sc[i]);
		s.d[i] = d < 9.0e18 ? (int64_t)d : INT64_MAX;
	}
	trc_res_shape(v, n, 0, &s);
}

/* Splat() {value} -> any type, every element = value; for integer and index
 * kinds value is an integer in the kind's range, for bool 0 or 1 (quantized
 * kinds take the real value, quantized with the result's parameters). */
void tr_splat(struct verifier *v, const struct node *n)
{
	const struct type *t = node_type(n);
	double x = node_float(n, "value");
	enum elem_kind k = (enum elem_kind)t->elem;
	if (k == EK_BOOL) {
		if (x != 0 && x != 1)
			verr(v, n, "value %g is not a bool (0 or 1) for result %s", x, TYS(t));
		return;
	}
	if (!elem_is_integer(k))
		return;
	bool wide = elem_size(k) == 8;
	double lo = wide ? -9223372036854775808.0 : -2147483648.0;
	double hi = wide ? 9223372036854775808.0 : 2147483648.0; /* exclusive */
	if (x != floor(x) || !(x >= lo && x < hi))
		verr(v, n, "value %g is not an integer representable in result %s", x, TYS(t));
}

/* Flip(Input) {axis in [0, rank)} -> Input's type, reversed along axis. */
void tr_flip(struct verifier *v, const struct node *n)
{
	trc_res_same_type(v, n, 0, 0);
	trc_axis_attr(v, n, "axis", 0);
}

/* ------------------------------------------------------------------ */
/* Selection                                                           */

/* ArgMax, ArgMin(Input numeric) {axis in [0, rank), keep_dims} -> an index
 * type of Input's shape with dim axis removed, or set to 1 when keep_dims. */
void tr_arg_reduce(struct verifier *v, const struct node *n)
{
	const struct type *in = op_type(n, 0);
	trc_op_class(v, n, 0, C_NUM);
	trc_res_class(v, n, 0, C_IDX);
	if (!trc_axis_attr(v, n, "axis", 0))
		return;
	unsigned axis = (unsigned)node_int(n, "axis");
	struct shape s = trc_shape_of(in);
	if (node_int(n, "keep_dims")) {
		s.d[axis] = 1;
	} else {
		memmove(s.d + axis, s.d + axis + 1, (in->rank - axis - 1u) * sizeof(int64_t));
		s.d[--s.rank] = 0;
	}
	trc_res_shape(v, n, 0, &s);
}

/* TopK(Input ... x D, numeric) {k in [1, D]} -> Values ... x k (Input's element
 * type), Indices ... x k (an index type): the k largest along the last dim. */
void tr_topk(struct verifier *v, const struct node *n)
{
	const struct type *in = op_type(n, 0);
	if (trc_op_class(v, n, 0, C_NUM))
		trc_want_elem(v, n, LITW("values"), n->types[0], LITW("input"), in);
	trc_res_class(v, n, 1, C_IDX);
	if (!trc_int_attr_min(v, n, "k", 1))
		return;
	if (in->rank == 0) {
		verr(v, n, "input %s must have at least one dimension", TYS(in));
		return;
	}
	int64_t k = node_int(n, "k");
	struct shape s = trc_shape_of(in);
	if (k > s.d[in->rank - 1u]) {
		verr(v, n, "k %" PRId64 " exceeds the last dimension of input %s", k, TYS(in));
		return;
	}
	s.d[in->rank - 1u] = k;
	trc_res_shape(v, n, 0, &s);
	trc_res_shape(v, n, 1, &s);
}

/* CumSum(Input numeric) {axis in [0, rank), exclusive, reverse} -> Input's
 * shape and kind. */
void tr_cumsum(struct verifier *v, const struct node *n)
{
	if (trc_op_class(v, n, 0, C_NUM))
		trc_res_same_shape_kind(v, n, 0, 0);
	trc_axis_attr(v, n, "axis", 0);
}
