/* inline.c - a Call becomes a copy of the body of the function it calls,
 * right before the Call: the parameters are the Call's arguments, the
 * Call's results the body's yields. The callee is a function literal (Fn,
 * operand 0), which goes once no Call uses it, or a module function with a
 * signature (the callee attribute: graph/region.h, func_has_sig).
 *
 * The calls of a function's regions are inlined first (innermost first),
 * then its own, in rounds: a copied body may hold Calls of its own (of an
 * enclosing Fn, of a Fn it defines, copied with it, or of another module
 * function). Neither kind of function can call itself (a Fn's value is not
 * in scope in its own body; the verifier refuses recursion among module
 * functions), so the rounds end.
 *
 * Then the module functions with a signature that no Call calls any more
 * are removed, unless inline{keep-functions=true}: such a function is no
 * entry point (IRGen refuses it), it exists to be called. Functions
 * without a signature (the entry points) always stay. IRGen needs every
 * Call inlined, so the control-flow stage of every pipeline runs inline
 * first (docs/Passes.md).
 *
 * Requires: a verified module. Preserves: every value, every entry point.
 */
#include "graph/region.h"
#include "passes/pass.h"
#include "passes/regions.h"
#include "support/hashmap.h"

#include <string.h>

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

/* Marks in the set the module functions the Calls of a scope name. */
static void mark_callee(struct func *scope, struct node *n, void *arg)
{
	(void)scope;
	const char *callee = n->kind == NK_Call ? node_str(n, AN_callee) : NULL;
	if (callee)
		strmap_put(arg, callee, strlen(callee), (void *)1);
}

/* Removes the functions with a signature no Call calls; their count. */
static uint64_t strip_uncalled(struct module *m)
{
	uint64_t gone = 0;
	for (bool again = true; again;) {
		/* a function removed may have been the last caller of another */
		again = false;
		struct strmap called;
		strmap_init(&called);
		for (size_t i = 0; i < m->nfuncs; i++)
			func_walk_pre(m->funcs[i], mark_callee, &called);
		for (size_t i = m->nfuncs; i-- > 0;) {
			struct func *f = m->funcs[i];
			if (func_has_sig(f) && !strmap_get(&called, f->name)) {
				module_erase_func(m, f);
				gone++;
				again = true;
			}
		}
		strmap_free(&called);
	}
	return gone;
}

bool inline_run(struct module *m, struct pass_ctx *ctx)
{
	uint64_t done = 0, gone = 0;
	for (size_t i = 0; i < m->nfuncs; i++)
		done += inline_scope(m->funcs[i], ctx);
	if (!pass_opt_bool(ctx, POPT_INLINE_KEEP))
		gone = strip_uncalled(m);
	pass_stat(ctx, "Number of Calls inlined", done);
	pass_stat(ctx, "Number of functions removed", gone);
	return done != 0 || gone != 0;
}
