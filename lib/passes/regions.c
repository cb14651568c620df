/* regions.c - what graph passes share about control-flow regions: running a
 * function pass inside regions, moving a region's nodes out of it. */
#include "passes/regions.h"
#include "graph/region.h"
#include "passes/target.h"
#include "support/util.h"

#include <stdlib.h>

/* run on f's regions, recursively, outer first; f itself is done. */
static bool run_inner(struct func *f, bool (*run)(struct func *, struct pass_ctx *), struct pass_ctx *ctx)
{
	bool changed = false;
	func_for_each(f, n)
		for (unsigned i = 0, nr = node_num_regions(n); i < nr; i++) {
			struct func *r = node_region(n, i);
			changed |= run(r, ctx);
			changed |= run_inner(r, run, ctx);
		}
	return changed;
}

bool pass_run_scopes(struct func *f, bool (*run)(struct func *, struct pass_ctx *), struct pass_ctx *ctx)
{
	bool changed = run(f, ctx);
	changed |= run_inner(f, run, ctx);
	if (changed)
		func_fix_order(f);
	return changed;
}

uint64_t pass_rewrite_kind(struct func *f, unsigned kind, bool only_unsupported, struct pass_ctx *ctx,
			   bool (*fn)(struct func *f, struct node *n, void *arg), void *arg)
{
	uint64_t done = 0;
	for (bool again = true; again;) {
		again = false;
		func_for_each_safe(f, n, next) {
			if (n->kind != kind || (only_unsupported && target_supports(ctx, n)) || !fn(f, n, arg))
				continue;
			done++;
			again = true;
		}
	}
	return done;
}

bool module_has_regions(const struct module *m)
{
	if (!m->nowners)
		return false;
	for (size_t i = 0; i < m->nfuncs; i++)
		func_for_each(m->funcs[i], n) if (node_num_regions(n)) return true;
	return false;
}

struct node *region_inline(struct func *r, struct func *to, struct node *before)
{
	struct node *y = region_yield(r);
	for (struct node *n = r->first, *next; n; n = next) {
		next = n->next;
		if (n->kind != NK_RegionArg && n != y)
			node_move_scope(r, to, n, before);
	}
	return y;
}

void clone_map_init(struct clone_map *cm, struct module *m)
{
	u64map_init(&cm->map);
	cm->m = m;
}

void clone_map_free(struct clone_map *cm) { u64map_free(&cm->map); }

void clone_map_set(struct clone_map *cm, const struct node *from, struct value to)
{
	struct value *v = arena_new(&cm->m->arena, struct value);
	*v = to;
	ptrmap_put(&cm->map, from, v);
}

struct value clone_map_value(const struct clone_map *cm, struct value v)
{
	const struct value *to = ptrmap_get(&cm->map, v.node);
	if (!to)
		return v;
	struct value r = {to->node, to->res + v.res};
	return r;
}

struct node *node_clone_deep(struct func *to, const struct node *n, struct node *before, struct clone_map *cm)
{
	struct value small[8];
	struct value *ops = n->nops <= 8 ? small : xmalloc(n->nops * sizeof(*ops));
	for (unsigned i = 0; i < n->nops; i++)
		ops[i] = clone_map_value(cm, op_val(n, i));
	struct node *c;
	if (node_has_pred(n))
		c = node_create_pred(to, n->kind, n->name, ops, n->nops, clone_map_value(cm, op_val(n, n->nops)),
				     n->types, before, n->loc);
	else
		c = node_create_n(to, n->kind, n->name, ops, n->nops, n->types, n->nres, before, n->loc);
	if (ops != small)
		free(ops);
	node_copy_attrs(to->mod, c, n);
	clone_map_set(cm, n, node_val(c, 0));
	for (unsigned i = 0, nr = node_num_regions(n); i < nr; i++) {
		struct func *from = node_region(n, i), *r = node_region(c, i);
		func_for_each(from, m) {
			if (m->kind == NK_RegionArg)
				clone_map_set(cm, m, node_val(region_add_param(r, m->name, node_type(m), m->loc), 0));
			else
				node_clone_deep(r, m, NULL, cm);
		}
	}
	return c;
}
