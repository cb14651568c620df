/* lower-all.c - lowers every node a lowering rule covers, whatever the
 * backend would say (as Glow does when it profiles a graph for
 * quantization: the profile must see the arithmetic the lowered graph will
 * run). Also the way to look at the lowered form of a graph.
 *
 * Requires: a verified function. Preserves: validity and the function's
 * results (within the rounding the rules document).
 */
#include "passes/lowering.h"

static bool every_node(const struct pass_ctx *ctx, const struct node *n)
{
	(void)ctx;
	(void)n;
	return true;
}

bool lower_all_run(struct func *f, struct pass_ctx *ctx)
{
	return lower_function(f, ctx, every_node);
}
