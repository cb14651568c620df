/* dropout.c - eliminate-dropout: Dropout is the identity outside a training
 * step, so for inference each one is replaced by its input.
 *
 * The pass is infer-only (PASS_INFER_ONLY): with -mode=train the Dropouts
 * stay, for differentiate to give its @F_grad copies their masks (it may
 * run later in the pipeline). Where a Dropout reaches the lower stage it is
 * lowered to its input all the same (lower-train.c), so @F computes the same
 * either way; this pass only removes it early, before the optimizations
 * that look through it. Exact.
 */
#include "passes/pass.h"
#include "passes/passutil.h"

bool eliminate_dropout_run(struct func *f, struct pass_ctx *ctx)
{
	uint64_t removed = 0;
	func_for_each_safe(f, n, next) {
		if (n->kind != NK_Dropout || node_has_pred(n))
			continue;
		pu_replace(f, n, op_val(n, 0));
		removed++;
	}
	pass_stat(ctx, "Number of Dropout removed", removed);
	return removed > 0;
}
