/* diff-shape.c - gradient rules of the differentiate pass (Gradients.def)
 * for data movement and the sum reductions: the adjoint moved back the way
 * the data came (Reshape back, the inverse Transpose, InsertTensor into
 * zeros for a Slice, a Slice for constant padding, a ScatterElements {add}
 * for Gather, a Broadcast for the reductions). Pad's other modes and
 * negative pads are in diff-rules.c.
 */
#include "passes/differentiate.h"
#include "passes/passutil.h"

#include <string.h>

/* Reshape (Gradients.def): G reshaped back. */
bool dr_reshape(struct dctx *c, struct node *n, struct value gy)
{
	struct value a = op_val(n, 0);
	return dg_to_input(c, n, dg_mk1(c, NK_Reshape, &gy, 1, val_type(a), n));
}

/* Transpose (Gradients.def): G transposed by the inverse shuffle. */
bool dr_transpose(struct dctx *c, struct node *n, struct value gy)
{
	unsigned len;
	const int64_t *s = node_ints(n, AN_shuffle, &len);
	int64_t inv[GLOW_MAX_RANK];
	pu_perm_inverse(s, len, inv);
	return dg_to_input(c, n, dg_mk_transpose(c, gy, inv, n));
}

/* The adjoint placed at an offset: kind(ops) {start} of the input's type
 * (an InsertTensor into zeros for Slice, a Slice for constant Pad), given
 * to n's input. */
static bool to_input_at(struct dctx *c, struct node *n, unsigned kind, const struct value *ops, unsigned nops,
			const int64_t *start, unsigned len)
{
	struct value g = dg_mk1(c, kind, ops, nops, val_type(op_val(n, 0)), n);
	node_set_ints(c->m, g.node, AN_start, start, len);
	return dg_to_input(c, n, g);
}

/* Slice (Gradients.def): G inserted into zeros at the start. */
bool dr_slice(struct dctx *c, struct node *n, struct value gy)
{
	struct value a = op_val(n, 0);
	/* gy written into zeros of the input's shape */
	unsigned len;
	const int64_t *start = node_ints(n, AN_start, &len);
	struct value ops[2] = {dg_mk_splat(c, val_type(a), 0, n), gy};
	return to_input_at(c, n, NK_InsertTensor, ops, 2, start, len);
}

/* Pad (Gradients.def): constant padding here, the rest by dr_pad_any. */
bool dr_pad(struct dctx *c, struct node *n, struct value gy)
{
	/* constant padding: the slice of gy the input was copied to;
	 * other modes and negative pads in diff-rules.c */
	unsigned len;
	const int64_t *pads = node_ints(n, AN_pads, &len);
	int64_t start[GLOW_MAX_RANK];
	for (unsigned i = 0; i < len / 2; i++) {
		if (pads[i] < 0 || pads[i + len / 2] < 0)
			return dr_pad_any(c, n, gy);
		start[i] = pads[i];
	}
	if (strcmp(node_enum(n, AN_mode), "constant") != 0)
		return dr_pad_any(c, n, gy);
	return to_input_at(c, n, NK_Slice, &gy, 1, start, len / 2);
}

/* Concat (Gradients.def): each input's slice of G. */
bool dr_concat(struct dctx *c, struct node *n, struct value gy)
{
	/* each input's slice of gy */
	unsigned dim = (unsigned)node_int(n, AN_dim), rank = val_type(gy)->rank;
	int64_t start[GLOW_MAX_RANK] = {0};
	for (unsigned i = 0; i < n->nops; i++) {
		struct value x = op_val(n, i);
		if (dg_wants_grad(c, x)) {
			struct value g = dg_mk1(c, NK_Slice, &gy, 1, val_type(x), n);
			node_set_ints(c->m, g.node, AN_start, start, rank);
			dg_add_adj(c, x, g);
		}
		start[dim] += (int64_t)val_type(x)->dims[dim];
	}
	return true;
}

/* Gather (Gradients.def): G scattered back with add. */
bool dr_gather(struct dctx *c, struct node *n, struct value gy)
{
	struct value a = op_val(n, 0);
	/* the rows of gy added back where they came from, a
	 * ScatterElements {add} along the axis of the indices broadcast to
	 * gy's shape; indices of another rank than 1 are flattened first
	 * (gy's index dimensions with them) */
	if (!dg_wants_grad(c, a))
		return true;
	const struct type *it = op_type(n, 1), *gt = val_type(gy), *at = val_type(a);
	unsigned axis = (unsigned)node_int(n, AN_axis);
	struct value ix = op_val(n, 1), g = gy;
	uint64_t d[GLOW_MAX_RANK];
	if (it->rank != 1) {
		uint64_t cnt = type_numel(it);
		for (unsigned i = 0; i < at->rank; i++)
			d[i] = i == axis ? cnt : at->dims[i];
		g = dg_mk1(c, NK_Reshape, &gy, 1, type_with_dims(c->m->types, gt, d, at->rank), n);
		it = type_with_dims(c->m->types, it, &cnt, 1);
		ix = dg_mk1(c, NK_Reshape, &ix, 1, it, n);
		gt = val_type(g);
	}
	for (unsigned i = 0; i < gt->rank; i++)
		d[i] = i == axis ? gt->dims[i] : 1;
	ix = dg_mk1(c, NK_Reshape, &ix, 1, type_with_dims(c->m->types, it, d, gt->rank), n);
	ix = dg_mk1(c, NK_Broadcast, &ix, 1, type_with_dims(c->m->types, it, gt->dims, gt->rank), n);
	struct value ops[3] = {dg_mk_splat(c, at, 0, n), ix, g};
	struct value r = dg_mk1(c, NK_ScatterElements, ops, 3, at, n);
	node_set_int(c->m, r.node, AN_axis, axis);
	node_set_int(c->m, r.node, AN_reduction, 1); /* add */
	return dg_to_input(c, n, r);
}

/* BatchedReduceAdd and BatchedReduceMean (Gradients.def): G broadcast
 * back (times 1/count for the mean). */
bool dr_reduce(struct dctx *c, struct node *n, struct value gy)
{
	struct value a = op_val(n, 0);
	/* gy back to the input's shape: the reduced axes as 1s, Broadcast */
	const struct type *at = val_type(a);
	unsigned len;
	const int64_t *axes = node_ints(n, AN_axes, &len);
	uint64_t d[GLOW_MAX_RANK], cnt = 1;
	for (unsigned i = 0; i < at->rank; i++)
		d[i] = at->dims[i];
	for (unsigned i = 0; i < len; i++) {
		cnt *= at->dims[axes[i]];
		d[axes[i]] = 1;
	}
	struct value g = dg_mk1(c, NK_Reshape, &gy, 1, type_with_dims(c->m->types, at, d, at->rank), n);
	g = dg_mk1(c, NK_Broadcast, &g, 1, at, n);
	if (n->kind == NK_BatchedReduceMean)
		g = dg_mk_bin(c, NK_Mul, g, dg_mk_splat(c, at, 1.0 / (double)cnt, n), n);
	return dg_to_input(c, n, g);
}
