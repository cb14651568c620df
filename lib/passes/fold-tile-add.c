/* fold-tile-add.c - raises Add of a tiled slice into BatchedAdd.
 *
 *   Add(x, Tile(s) {axis = 0, count = N})   x of shape N x d..., s of 1 x d...
 *   (either operand order)
 *   -> BatchedAdd(x, Reshape(s) to d...)
 * The same additions in the same order: exact. An unused Tile is left to
 * dce. Not on quantized kinds (BatchedAdd's slice parameters would
 * differ) or nodes with a predicate.
 * Requires: a verified function. Preserves: validity and result types.
 */
#include "passes/pass.h"
#include "passes/passutil.h"

#include <stdio.h>

static bool fold(struct func *f, struct node *n)
{
	const struct type *t = node_type(n);
	if (node_has_pred(n) || elem_is_quantized((enum elem_kind)t->elem) || t->rank == 0)
		return false;
	for (unsigned side = 0; side < 2; side++) {
		struct node *tile = n->ops[side].def;
		if (tile->kind != NK_Tile || node_has_pred(tile) || node_int(tile, AN_axis) != 0)
			continue;
		const struct type *st = op_type(tile, 0);
		struct value x = op_val(n, 1 - side);
		if (val_type(x) != t || st->dims[0] != 1 || (uint64_t)node_int(tile, AN_count) != t->dims[0] ||
		    !type_same_elem(st, t))
			continue;
		char buf[64];
		snprintf(buf, sizeof buf, "%.40s.slice", n->name);
		const struct type *rt = type_with_dims(f->mod->types, st, st->dims + 1, st->rank - 1u);
		struct node *r = pu_new_reshape(f, op_val(tile, 0), rt, n, buf);
		struct value ops[2] = {x, node_val(r, 0)};
		pu_replace_new(f, n, NK_BatchedAdd, ops, 2);
		return true;
	}
	return false;
}

bool fold_tile_add_run(struct func *f, struct pass_ctx *ctx)
{
	return pu_fold_each(f, ctx, NK_Add, NK_Add, fold, "Number of Add of a Tile folded into BatchedAdd");
}
