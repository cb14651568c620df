/* check-supported.c - the last stage of the pipeline: asks the target
 * backend whether it executes every node (is_node_supported, target.h) and
 * reports all the nodes it does not at once, each at its location (nodes
 * made by passes carry the location of the node they came from), then
 * fails the pipeline. Without -backend= the interpreter's answer (every
 * kind) applies.
 *
 * Requires: a verified module. Changes nothing.
 */
#include "passes/pass.h"
#include "passes/target.h"

bool check_supported_run(struct module *m, struct pass_ctx *ctx)
{
	uint64_t checked = 0, bad = 0;
	for (size_t i = 0; i < m->nfuncs; i++) {
		struct func *f = m->funcs[i];
		func_for_each(f, n) {
			checked++;
			if (target_supports(ctx, n))
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
