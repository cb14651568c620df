/* inline.c - a Call of a function literal (Fn) becomes a copy of the
 * function's body right before the Call: the parameters are the Call's
 * arguments, the Call's results the body's yields; the Fn goes once no
 * Call uses it.
 *
 * The calls of f's regions are inlined first (innermost first), then f's,
 * in rounds: a copied body may hold Calls of its own (of an enclosing Fn,
 * or of a Fn it defines, copied with it). A Fn cannot call itself (its
 * value is not in scope in its own body), so the rounds end. IRGen needs
 * every Call inlined, so the control-flow stage of every pipeline runs
 * inline first.
 *
 * Requires: a verified function. Preserves: every value.
 */
#include "graph/region.h"
#include "passes/pass.h"
#include "passes/regions.h"

/* Replaces Call n of f by a copy of its callee's body. */
static bool inline_one(struct func *f, struct node *n, void *arg)
{
	(void)arg;
	struct node *fn = n->ops[0].def;
	if (fn->kind != NK_Fn)
		return false;
	struct func *body = node_region(fn, 0);
	struct node *y = region_yield(body);
	struct clone_map cm;
	clone_map_init(&cm, f->mod);
	for (unsigned i = 0; i + 1 < n->nops; i++)
		clone_map_set(&cm, region_param(body, i), op_val(n, 1 + i));
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
