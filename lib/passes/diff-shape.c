/* diff-shape.c - gradient rules of the differentiate pass (Gradients.def)
 * for data movement and the sum reductions: each makes its gradient kind
 * (ReshapeGrad, TransposeGrad, SliceGrad, PadGrad, one ConcatGrad per
 * input, GatherGrad, BatchedReduceAddGrad, BatchedReduceMeanGrad), which a
 * backend runs whole or lower-grad2.c lowers into the forward kinds that
 * move the adjoint back the way the data came.
 */
#include "passes/differentiate.h"

/* kind(ops) -> InputGrad of n's input type, added to its adjoint; the
 * node, for its attributes. */
static struct node *to_input(struct dctx *c, struct node *n, unsigned kind, const struct value *ops,
			     unsigned nops)
{
	struct value g = dg_mk1(c, kind, ops, nops, op_type(n, 0), n);
	dg_to_input(c, n, g);
	return g.node;
}

/* Reshape (Gradients.def): ReshapeGrad(G). */
bool dr_reshape(struct dctx *c, struct node *n, struct value gy)
{
	to_input(c, n, NK_ReshapeGrad, &gy, 1);
	return true;
}

/* Transpose (Gradients.def): TransposeGrad(G) {the forward shuffle}. */
bool dr_transpose(struct dctx *c, struct node *n, struct value gy)
{
	unsigned len;
	const int64_t *s = node_ints(n, AN_shuffle, &len);
	node_set_ints(c->m, to_input(c, n, NK_TransposeGrad, &gy, 1), AN_shuffle, s, len);
	return true;
}

/* Slice (Gradients.def): SliceGrad(G) {start}. */
bool dr_slice(struct dctx *c, struct node *n, struct value gy)
{
	unsigned len;
	const int64_t *start = node_ints(n, AN_start, &len);
	node_set_ints(c->m, to_input(c, n, NK_SliceGrad, &gy, 1), AN_start, start, len);
	return true;
}

/* Pad (Gradients.def): PadGrad(G) {mode, pads}, every mode. */
bool dr_pad(struct dctx *c, struct node *n, struct value gy)
{
	unsigned len;
	const int64_t *pads = node_ints(n, AN_pads, &len);
	struct node *g = to_input(c, n, NK_PadGrad, &gy, 1);
	node_set_ints(c->m, g, AN_pads, pads, len);
	node_set_int(c->m, g, AN_mode, node_int(n, AN_mode));
	return true;
}

/* Concat (Gradients.def): ConcatGrad(G) {dim, offset} per input that
 * wants an adjoint, offset where the input starts along dim. */
bool dr_concat(struct dctx *c, struct node *n, struct value gy)
{
	int64_t dim = node_int(n, AN_dim), off = 0;
	for (unsigned i = 0; i < n->nops; i++) {
		struct value x = op_val(n, i);
		if (dg_wants_grad(c, x)) {
			struct value g = dg_mk1(c, NK_ConcatGrad, &gy, 1, val_type(x), n);
			node_set_int(c->m, g.node, AN_dim, dim);
			node_set_int(c->m, g.node, AN_offset, off);
			dg_add_adj(c, x, g);
		}
		off += (int64_t)val_type(x)->dims[dim];
	}
	return true;
}

/* Gather (Gradients.def): GatherGrad(Indices, G) {axis}. */
bool dr_gather(struct dctx *c, struct node *n, struct value gy)
{
	if (!dg_wants_grad(c, op_val(n, 0)))
		return true;
	struct value ops[2] = {op_val(n, 1), gy};
	node_set_int(c->m, to_input(c, n, NK_GatherGrad, ops, 2), AN_axis, node_int(n, AN_axis));
	return true;
}

/* BatchedReduceAdd and BatchedReduceMean (Gradients.def):
 * BatchedReduceAddGrad or BatchedReduceMeanGrad(G) {axes}. */
bool dr_reduce(struct dctx *c, struct node *n, struct value gy)
{
	unsigned len;
	const int64_t *axes = node_ints(n, AN_axes, &len);
	unsigned k = n->kind == NK_BatchedReduceMean ? NK_BatchedReduceMeanGrad : NK_BatchedReduceAddGrad;
	node_set_ints(c->m, to_input(c, n, k, &gy, 1), AN_axes, axes, len);
	return true;
}
