/* check-supported.c - the last stage of the pipeline: asks the target
 * backend whether it executes every node (is_node_supported, target.h) and
 * reports all the nodes it does not at once, each at its location (nodes
 * made by passes carry the location of the node they came from), then
 * fails the pipeline. Without -backend= the interpreter's answer (every
 * kind) applies: it executes the If and Loop nodes the control-flow passes
 * leave (a Loop whose trip count is known only at run time), which
 * target_supports answers no for there only so that those passes unroll
 * and select what they can.
 *
 * Requires: a verified module. Changes nothing.
 */
#include "passes/pass.h"
#include "passes/target.h"

/* Whether the target executes n (see the head comment). */
static bool executed(const struct pass_ctx *ctx, const struct node *n)
{
	const struct pass_target *t = ctx->target;
	if ((!t || !t->backend) && node_desc(n->kind)->nregions && n->kind != NK_Fn)
		return !(t && t->unsupported && t->unsupported[n->kind]);
	return target_supports(ctx, n);
}

bool check_supported_run(struct module *m, struct pass_ctx *ctx)
{
	uint64_t checked = 0, bad = 0;
	for (size_t i = 0; i < m->nfuncs; i++) {
		struct func *f = m->funcs[i];
		func_for_each(f, n) {
			checked++;
			if (executed(ctx, n))
				continue;
			bad++;
			if (n->name)
				diag_error(ctx->diag, n->loc, "%s %%%s in @%s is not supported by the %s backend",
					   node_kind_name(n->kind), n->name, f->name, target_name(ctx));
			else
				diag_error(ctx->diag, n->loc, "%s in @%s is not supported by the %s backend",
					   node_kind_name(n->kind), f->name, target_name(ctx));
		}
	}
	pass_stat(ctx, "Number of nodes checked", checked);
	pass_stat(ctx, "Number of unsupported nodes", bad);
	return false;
}
