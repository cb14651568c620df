/* strip-dead-functions.c - removes the module functions with a signature
 * that no Call calls (graph/region.h: func_has_sig). Such a function is no
 * entry point (IRGen refuses it): it exists to be called, and after the
 * inline pass nothing calls it any more. Functions without a signature
 * (the entry points) always stay (docs/Passes.md).
 *
 * Requires: a verified module. Preserves: every function that is called or
 * has no signature.
 */
#include "graph/region.h"
#include "passes/pass.h"
#include "support/hashmap.h"

#include <string.h>

/* Marks in the set the module functions the Calls of a scope name. */
static void mark_callee(struct func *scope, struct node *n, void *arg)
{
	(void)scope;
	const char *callee = n->kind == NK_Call ? node_str(n, AN_callee) : NULL;
	if (callee)
		strmap_put(arg, callee, strlen(callee), (void *)1);
}

bool strip_dead_functions_run(struct module *m, struct pass_ctx *ctx)
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
	pass_stat(ctx, "Number of functions removed", gone);
	return gone != 0;
}
