/* lower.c - the lower stage: lowers the nodes the target backend wants
 * lowered (lowering.h has the rules, docs/Passes.md the list).
 *
 * A node is lowered when a rule covers it and the target asks for it
 * (target.h): the backend's should_lower says so, or the backend does not
 * execute it (is_node_supported, or -backend-unsupported=). Without
 * -backend= the answers are the interpreter's, which executes every kind:
 * nothing is lowered and the pass costs one scan.
 *
 * Requires: a verified function. Preserves: validity and the function's
 * results (within the rounding the rules document).
 */
#include "passes/lowering.h"
#include "passes/target.h"

bool lower_run(struct func *f, struct pass_ctx *ctx)
{
	return lower_function(f, ctx, target_wants_lowered);
}
