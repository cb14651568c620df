/* region.c - control-flow regions: which kinds own regions, their
 * parameters and yields, walks over nested regions (graph/region.h). */
#include "graph/region.h"
#include "support/util.h"

#include <string.h>

/* The kinds that own regions and the text names of their regions, in
 * order: the one table the parser, printer and verifier read. */
static const struct {
	unsigned kind;
	const char *names[2];
} region_rows[] = {
	{NK_If, {"then", "else"}},
	{NK_Loop, {"body", NULL}},
};

unsigned region_count_of_kind(unsigned kind)
{
	for (size_t i = 0; i < GLOW_ARRAY_SIZE(region_rows); i++)
		if (region_rows[i].kind == kind)
			return region_rows[i].names[1] ? 2u : 1u;
	return 0;
}

const char *region_name(unsigned kind, unsigned i)
{
	for (size_t r = 0; r < GLOW_ARRAY_SIZE(region_rows); r++)
		if (region_rows[r].kind == kind)
			return i < 2 ? region_rows[r].names[i] : NULL;
	return NULL;
}

unsigned node_num_regions(const struct node *n) { return node_desc(n->kind)->nregions; }

/* The region pointers follow the operand slots (graph.c: node_new). */
static struct func **regions_of(const struct node *n)
{
	unsigned slots = n->nops + (node_has_pred(n) ? 1u : 0u);
	return (struct func **)(void *)(n->ops + slots);
}

struct func *node_region(const struct node *n, unsigned i)
{
	glow_assert(i < node_num_regions(n));
	return regions_of(n)[i];
}

unsigned region_num_params(const struct func *r)
{
	unsigned c = 0;
	for (const struct node *n = r->first; n && n->kind == NK_RegionArg; n = n->next)
		c++;
	return c;
}

struct node *region_param(const struct func *r, unsigned i)
{
	for (struct node *n = r->first; n && n->kind == NK_RegionArg; n = n->next)
		if (i-- == 0)
			return n;
	return NULL;
}

struct node *region_yield(const struct func *r) { return r->last && r->last->kind == NK_Yield ? r->last : NULL; }

bool func_encloses(const struct func *outer, const struct func *inner)
{
	for (; inner; inner = inner->parent)
		if (inner == outer)
			return true;
	return false;
}

struct node *region_add_param(struct func *r, const char *name, const struct type *t, struct loc loc)
{
	struct node *before = r->first;
	while (before && before->kind == NK_RegionArg)
		before = before->next;
	return node_create1(r, NK_RegionArg, name, NULL, 0, t, before, loc);
}

struct node *region_set_yield(struct func *r, const struct value *vals, unsigned n, struct loc loc)
{
	struct node *old = region_yield(r);
	if (old)
		node_erase(r, old);
	return node_create(r, NK_Yield, NULL, vals, n, NULL, NULL, loc);
}

int64_t loop_const_trip(const struct node *loop)
{
	struct node *def = loop->ops[0].def;
	struct constant *c = def ? as_constant(def) : NULL;
	if (!c || node_type(def)->elem != EK_I64 || type_numel(node_type(def)) != 1)
		return -1;
	int64_t v;
	switch (c->init) {
	case INIT_SPLAT: v = c->splat_i; break;
	case INIT_ZERO: v = 0; break;
	case INIT_DENSE:
		if (!c->data)
			return -1;
		memcpy(&v, c->data, sizeof v);
		break;
	default: return -1;
	}
	return v < 0 ? 0 : v;
}

/* Visits the nodes of f in list order, each region before (post) or after
 * (pre) its owner. Recursion depth is the nesting depth of regions. */
static void walk(struct func *f, bool post, void (*fn)(struct func *, struct node *, void *), void *arg)
{
	for (struct node *n = f->first, *next; n; n = next) {
		next = n->next; /* fn may erase or move n */
		if (!post)
			fn(f, n, arg);
		if (!(n->bits & NODE_ERASED))
			for (unsigned i = 0, nr = node_num_regions(n); i < nr; i++)
				walk(node_region(n, i), post, fn, arg);
		if (post)
			fn(f, n, arg);
	}
}

void func_walk_post(struct func *f, void (*fn)(struct func *scope, struct node *n, void *arg), void *arg)
{
	walk(f, true, fn, arg);
}

void func_walk_pre(struct func *f, void (*fn)(struct func *scope, struct node *n, void *arg), void *arg)
{
	walk(f, false, fn, arg);
}
