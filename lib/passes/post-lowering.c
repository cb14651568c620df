/* post-lowering.c - the backend's hook after lowering: runs the target
 * backend's transform_post_lowering on every function (Glow's
 * Backend::transformPostLowering), e.g. to fuse nodes into backend-specific
 * forms. Without -backend= there is no hook and nothing changes.
 *
 * Requires: a verified function. The backend must leave it valid
 * (-verify-each checks) and report its failures, which stop the pipeline.
 */
#include "passes/pass.h"
#include "passes/target.h"

bool post_lowering_run(struct func *f, struct pass_ctx *ctx)
{
	int errors = ctx->diag->nerrors;
	int r = target_post_lowering(ctx, f);
	if (r < 0 && ctx->diag->nerrors == errors)
		diag_error(ctx->diag, f->loc, "the %s backend failed to transform @%s after lowering",
			   target_name(ctx), f->name);
	pass_stat(ctx, "Number of functions the backend changed", r > 0);
	return r > 0;
}
