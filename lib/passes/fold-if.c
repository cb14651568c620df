/* fold-if.c - an If whose condition is a constant becomes the branch it
 * takes: the branch's nodes move out of the region to just before the If,
 * the If's results are replaced by the branch's yielded values, and the If
 * goes with its other branch.
 *
 * The condition counts as constant when it is a one-element bool Constant
 * or Splat (node_const_scalar); constant-fold turns computed conditions
 * into those first. Runs in every scope (the pass manager runs function
 * passes inside regions), so an If nested in a Loop's body folds there.
 *
 * Requires: a verified function. Preserves: the values of the If's results
 * and the order of the other nodes.
 */
#include "graph/region.h"
#include "passes/pass.h"
#include "passes/regions.h"

/* Folds If n of f when its condition is a constant; the branch's values
 * stay in scope: they are defined before the If's users, where the If was. */
static bool fold_one(struct func *f, struct node *n, void *arg)
{
	(void)arg;
	int64_t c;
	if (!node_const_scalar(n->ops[0].def, &c))
		return false;
	struct node *y = region_inline(node_region(n, c ? 0 : 1), f, n);
	for (unsigned k = 0; k < n->nres; k++)
		value_replace_all_uses(node_val(n, k), op_val(y, k));
	node_erase(f, n);
	return true;
}

bool fold_if_run(struct func *f, struct pass_ctx *ctx)
{
	uint64_t folded = pass_rewrite_kind(f, NK_If, false, ctx, fold_one, NULL);
	pass_stat(ctx, "Number of If folded", folded);
	return folded != 0;
}
