/* target.c - the graph passes' view of the target backend (target.h).
 *
 * Calls go through the struct backend's function pointers only; nothing
 * here needs a backend library at link time.
 */
#include "passes/target.h"
#include "backends/backend.h"
#include "passes/pass.h"

const char *target_name(const struct pass_ctx *ctx)
{
	const struct pass_target *t = ctx->target;
	return t && t->name ? t->name : "interpreter";
}

bool target_supports(const struct pass_ctx *ctx, const struct node *n)
{
	const struct pass_target *t = ctx->target;
	/* control flow (If, Loop: issue 18): the interpreter, the answer without
	 * a backend, does not execute regions yet (backends/backend.c answers
	 * for the backends) */
	if ((!t || !t->backend) && (node_desc(n->kind)->nregions || n->kind == NK_Call))
		return false;
	if (!t)
		return true;
	if (t->unsupported && t->unsupported[n->kind])
		return false;
	return !t->backend || t->backend->is_node_supported(t->backend, n);
}

bool target_supports_elems(const struct pass_ctx *ctx, unsigned kind, const enum elem_kind *elems, unsigned n)
{
	const struct pass_target *t = ctx->target;
	if (!t)
		return true;
	if (t->unsupported && t->unsupported[kind])
		return false;
	return !t->backend || t->backend->is_op_supported(t->backend, kind, elems, n);
}

bool target_wants_lowered(const struct pass_ctx *ctx, const struct node *n)
{
	const struct pass_target *t = ctx->target;
	if (!target_supports(ctx, n))
		return true;
	return t && t->backend && t->backend->should_lower(t->backend, n);
}

int target_post_lowering(const struct pass_ctx *ctx, struct func *f)
{
	const struct pass_target *t = ctx->target;
	if (!t || !t->backend || !t->backend->transform_post_lowering || t->no_backend_nodes)
		return 0;
	int r = t->backend->transform_post_lowering(t->backend, f, ctx->diag);
	return r < 0 ? -1 : r > 0;
}
