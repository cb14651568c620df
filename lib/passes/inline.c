/* inline.c - a Call becomes a copy of the body of the function it calls,
 * right before the Call: the parameters are the Call's arguments, the
 * Call's results the body's yields. The callee is a function literal (Fn,
 * operand 0), which goes once no Call uses it, or a module function with a
 * signature (the callee attribute), which stays: strip-dead-functions
 * removes it once nothing calls it (docs/Passes.md).
 *
 * The calls of f's regions are inlined first (innermost first), then f's,
 * in rounds: a copied body may hold Calls of its own (of an enclosing Fn,
 * of a Fn it defines, copied with it, or of another module function).
 * Neither kind of function can call itself (a Fn's value is not in scope in
 * its own body; the verifier refuses recursion among module functions), so
 * the rounds end. IRGen needs every Call inlined, so the control-flow stage
 * of every pipeline runs inline first.
 *
 * Requires: a verified module. Preserves: every value.
 */
#include "graph/region.h"
#include "passes/pass.h"
#include "passes/regions.h"

/* Replaces Call n of f by a copy of its callee's body. */
static bool inline_one(struct func *f, struct node *n, void *arg)
{
	(void)arg;
	unsigned a0;
	struct func *body = call_target(f->mod, n, &a0);
	if (!body)
		return false;
	struct node *y = region_yield(body);
	struct clone_map cm;
	clone_map_init(&cm, f->mod);
	for (unsigned i = 0; i + a0 < n->nops; i++)
		clone_map_set(&cm, region_param(body, i), op_val(n, a0 + i));
	func_for_each(body, b) {
		if (b->kind != NK_RegionArg && b != y)
			node_clone_deep(f, b, n, &cm);
	}
	for (unsigned k = 0; k < n->nres; k++)
		value_replace_all_uses(node_val(n, k), clone_map_value(&cm, op_val(y, k)));
	clone_map_free(&cm);
	node_erase(f, n);
	return true;
}

/* Inlines the Calls of f and of its regions; erases the Fns of f no Call
 * uses any more. Returns how many Calls went. */
static uint64_t inline_scope(struct func *f, struct pass_ctx *ctx)
{
	uint64_t done = 0;
	func_for_each(f, n) {
		for (unsigned i = 0, nr = node_num_regions(n); i < nr; i++)
			done += inline_scope(node_region(n, i), ctx);
	}
	done += pass_rewrite_kind(f, NK_Call, false, ctx, inline_one, NULL);
	func_for_each_safe(f, n, next) {
		if (n->kind == NK_Fn && !node_has_uses(n))
			node_erase(f, n);
	}
	return done;
}

bool inline_run(struct func *f, struct pass_ctx *ctx)
{
	uint64_t done = inline_scope(f, ctx);
	pass_stat(ctx, "Number of Calls inlined", done);
	return done != 0;
}
