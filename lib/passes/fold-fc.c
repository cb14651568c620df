/* fold-fc.c - raises MatMul + bias into FullyConnected.
 *
 *   BatchedAdd(MatMul(x, W), b)                  b a vector of M
 *   Add(MatMul(x, W), Broadcast(b) {axis = 1})   b a vector of M
 *   Add(MatMul(x, W), Broadcast(b) {axis = 0})   b of shape 1 x M (reshaped)
 *   (Add with its operands either way round)
 *   -> FullyConnected(x, W, b)
 * Only when the MatMul has no other use (it would be computed twice), all
 * values share one float kind and nothing carries a predicate.
 *
 * Numerics: the FullyConnected kernel accumulates onto the bias; the sum
 * and the bias are otherwise the same: equal within float rounding.
 * The unused MatMul is left to dce.
 * Requires: a verified function. Preserves: validity and result types.
 */
#include "passes/pass.h"
#include "passes/passutil.h"

#include <stdio.h>

/* The bias vector behind v (b, or b reshaped from 1 x M), NULL-node if v
 * is not a bias of M elements for an N x M sum. */
static struct value bias_of(struct func *f, struct node *n, struct value v, const struct type *t, bool batched)
{
	struct value none = {NULL, 0};
	const struct type *bt = val_type(v);
	if (batched)
		return bt->rank == 1 ? v : none;
	struct node *b = v.node;
	if (b->kind != NK_Broadcast || node_has_pred(b))
		return none;
	struct value in = op_val(b, 0);
	const struct type *it = val_type(in);
	int64_t axis = node_int(b, AN_axis);
	if (it->rank == 1 && axis == 1 && it->dims[0] == t->dims[1])
		return in;
	if (it->rank == 2 && axis == 0 && it->dims[0] == 1 && it->dims[1] == t->dims[1]) {
		uint64_t m = t->dims[1];
		char buf[64];
		snprintf(buf, sizeof buf, "%.40s.bias", n->name);
		return node_val(pu_new_reshape(f, in, type_with_dims(f->mod->types, it, &m, 1), n, buf), 0);
	}
	return none;
}

static bool fold(struct func *f, struct node *n)
{
	const struct type *t = node_type(n);
	if (node_has_pred(n) || !elem_is_float((enum elem_kind)t->elem))
		return false;
	bool batched = n->kind == NK_BatchedAdd;
	for (unsigned side = 0; side < (batched ? 1u : 2u); side++) {
		struct node *mm = n->ops[side].def;
		if (mm->kind != NK_MatMul || node_has_pred(mm) || node_num_uses(mm, -1) != 1)
			continue;
		if (node_type(mm) != t || op_type(mm, 0)->elem != t->elem || op_type(mm, 1)->elem != t->elem)
			continue;
		struct value other = op_val(n, 1 - side);
		if (!type_same_elem(val_type(other), t))
			continue;
		struct value b = bias_of(f, n, other, t, batched);
		if (!b.node)
			continue;
		struct value ops[3] = {op_val(mm, 0), op_val(mm, 1), b};
		pu_replace_new(f, n, NK_FullyConnected, ops, 3); /* the MatMul is left to dce */
		return true;
	}
	return false;
}

bool fold_fc_run(struct func *f, struct pass_ctx *ctx)
{
	return pu_fold_each(f, ctx, NK_Add, NK_BatchedAdd, fold, "Number of MatMul + bias folded into FullyConnected");
}
