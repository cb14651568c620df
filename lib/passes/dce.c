/* dce.c - dead code elimination.
 *
 * Removes every pure node (NF_PURE in Nodes.def) none of whose results is
 * used, transitively: erasing a node drops its operands' uses, so each
 * operand that becomes unused is pushed on a worklist and considered in turn.
 * The function is scanned once to seed the worklist; after that the work is
 * proportional to the number of operands of the erased nodes. Nodes with
 * side effects (Save and any other non-pure kind) are roots and never go.
 *
 * Control-flow regions (graph/region.h) are cleaned first, innermost
 * first, each on its own (a value used only in a region is used, so it
 * stays); then their function. An If or Loop is pure: one whose results are
 * unused goes with its regions. A region's parameters and Yield stay.
 *
 * Then constants with no use left in any function are erased from the module.
 * Placeholders stay: they are the module's interface, bound by callers.
 *
 * Requires: nothing (an unverified module is fine; nodes on a cycle are never
 * unused, so they stay). Preserves: the order of the surviving nodes.
 */
#include "graph/region.h"
#include "passes/pass.h"
#include "support/vec.h"

typedef VEC(struct node *) node_vec;

static bool is_dead(const struct node *n)
{
	return !(n->bits & NODE_ERASED) && !node_is_storage(n) && (node_desc(n->kind)->flags & NF_PURE) &&
	       !node_has_uses(n);
}

/* Erases the dead nodes of f and of its regions (theirs first); returns
 * how many went. Only f's own nodes go on f's worklist (NODE_MARK: on f's
 * list), an outer value a region no longer uses being its own scope's. */
static uint64_t dce_func(struct func *f, node_vec *work)
{
	uint64_t erased = 0;
	bool regions = f->mod->nowners != 0;
	if (regions) {
		func_for_each(f, n) {
			for (unsigned i = 0, nr = node_num_regions(n); i < nr; i++)
				erased += dce_func(node_region(n, i), work);
		}
	}
	vec_clear(work);
	func_for_each(f, n) {
		if (regions)
			n->bits |= NODE_MARK;
		if (is_dead(n))
			vec_push(work, n);
	}
	while (work->len) {
		struct node *n = vec_pop(work);
		/* a node shows up once per use it lost; only the first visit erases it */
		if (!is_dead(n))
			continue;
		unsigned slots = n->nops + (node_has_pred(n) ? 1u : 0u);
		for (unsigned i = 0; i < slots; i++) {
			struct node *def = n->ops[i].def;
			if (def && def != n && !node_is_storage(def) && (!regions || (def->bits & NODE_MARK)))
				vec_push(work, def);
		}
		n->bits &= (uint8_t)~NODE_MARK;
		node_erase(f, n);
		erased++;
	}
	if (regions)
		func_for_each(f, n) n->bits &= (uint8_t)~NODE_MARK;
	return erased;
}

bool dce_run(struct module *m, struct pass_ctx *ctx)
{
	node_vec work = {0};
	uint64_t nodes = 0, constants = 0;
	for (size_t i = 0; i < m->nfuncs; i++)
		nodes += dce_func(m->funcs[i], &work);
	vec_free(&work);
	for (struct node *g = m->gfirst, *next; g; g = next) {
		next = g->next;
		if (g->kind == NK_Constant && !node_has_uses(g)) {
			module_erase_global(m, g);
			constants++;
		}
	}
	pass_stat(ctx, "Number of nodes removed", nodes);
	pass_stat(ctx, "Number of constants removed", constants);
	return nodes || constants;
}
