/* diff-build.c - what the differentiate pass's driver (differentiate.c)
 * and its gradient rules (diff-*.c, Gradients.def) build with: which
 * values are sources and want an adjoint, the adjoint map, and the node
 * builders that append @F_grad's nodes named after the node they serve.
 * It calls neither the driver nor a rule.
 */
#include "passes/differentiate.h"

#include <stdio.h>

/* The adjoint map's key of a value: nodes are 8-byte aligned arena
 * objects and no kind has more than 8 results. */
static uint64_t vkey(struct value v) { return (uint64_t)(uintptr_t)v.node | v.res; }

bool dg_is_trainable(const struct node *n)
{
	return n->kind == NK_Placeholder && ((const struct placeholder *)n)->trainable;
}

/* A source: an explicit one of differentiate_values, else a trainable
 * placeholder. */
bool dg_is_source(const struct dctx *c, const struct node *n)
{
	return c->explicit_srcs ? u64map_get(&c->srcs, (uint64_t)(uintptr_t)n) != NULL : dg_is_trainable(n);
}

bool dg_wants_grad(struct dctx *c, struct value v)
{
	if (!elem_is_float((enum elem_kind)val_type(v)->elem))
		return false;
	return dg_is_source(c, v.node) || u64map_get(&c->needs, (uint64_t)(uintptr_t)v.node);
}

struct value *dg_get_adj(struct dctx *c, struct value v) { return u64map_get(&c->adj, vkey(v)); }

/* A node of @F_grad at the end of its list, named "<base>.<sfx>" after the
 * node it belongs to, at that node's location. */
struct node *dg_mk_s(struct dctx *c, unsigned kind, const struct value *ops, unsigned nops,
		     const struct type *const *types, const struct node *base, const char *sfx)
{
	char name[96];
	snprintf(name, sizeof name, "%.60s.%.20s", base->name ? base->name : "t", sfx);
	return node_create(c->g, kind, kind == NK_Save ? NULL : name, ops, nops, types, NULL, base->loc);
}

/* mk_s for the adjoints: "<base>.grad" */
struct node *dg_mk(struct dctx *c, unsigned kind, const struct value *ops, unsigned nops,
		   const struct type *const *types, const struct node *base)
{
	return dg_mk_s(c, kind, ops, nops, types, base, "grad");
}

struct value dg_mk1_s(struct dctx *c, unsigned kind, const struct value *ops, unsigned nops,
		      const struct type *t, const struct node *base, const char *sfx)
{
	return node_val(dg_mk_s(c, kind, ops, nops, &t, base, sfx), 0);
}

struct value dg_mk1(struct dctx *c, unsigned kind, const struct value *ops, unsigned nops, const struct type *t,
		    const struct node *base)
{
	return dg_mk1_s(c, kind, ops, nops, t, base, "grad");
}

struct value dg_mk_bin_s(struct dctx *c, unsigned kind, struct value a, struct value b, const struct node *base,
			 const char *sfx)
{
	struct value ops[2] = {a, b};
	return dg_mk1_s(c, kind, ops, 2, val_type(a), base, sfx);
}

struct value dg_mk_bin(struct dctx *c, unsigned kind, struct value a, struct value b, const struct node *base)
{
	return dg_mk_bin_s(c, kind, a, b, base, "grad");
}

struct value dg_mk_splat_s(struct dctx *c, const struct type *t, double x, const struct node *base,
			   const char *sfx)
{
	struct value v = dg_mk1_s(c, NK_Splat, NULL, 0, t, base, sfx);
	node_set_float(c->m, v.node, AN_value, x);
	return v;
}

struct value dg_mk_splat(struct dctx *c, const struct type *t, double x, const struct node *base)
{
	return dg_mk_splat_s(c, t, x, base, "grad");
}

/* k(a, b) for a comparison k: a bool tensor of a's shape. */
struct value dg_mk_cmp(struct dctx *c, unsigned k, struct value a, struct value b, const struct node *base)
{
	struct value ops[2] = {a, b};
	return dg_mk1(c, k, ops, 2, type_with_elem(c->m->types, val_type(a), EK_BOOL), base);
}

struct value dg_mk_select(struct dctx *c, struct value cond, struct value x, struct value y,
			  const struct node *base)
{
	struct value ops[3] = {cond, x, y};
	return dg_mk1(c, NK_Select, ops, 3, val_type(x), base);
}

struct value dg_mk_transpose(struct dctx *c, struct value v, const int64_t *shuffle, const struct node *base)
{
	const struct type *t = val_type(v);
	uint64_t d[GLOW_MAX_RANK];
	for (unsigned i = 0; i < t->rank; i++)
		d[i] = t->dims[shuffle[i]];
	struct value r = dg_mk1(c, NK_Transpose, &v, 1, type_with_dims(c->m->types, t, d, t->rank), base);
	node_set_ints(c->m, r.node, AN_shuffle, shuffle, t->rank);
	return r;
}

/* The sum of v over axis, kept as a 1 and broadcast back to v's shape. */
struct value dg_sum_axis(struct dctx *c, struct value v, unsigned axis, const struct node *base)
{
	const struct type *t = val_type(v);
	uint64_t d[GLOW_MAX_RANK], k = 0;
	for (unsigned i = 0; i < t->rank; i++)
		if (i != axis)
			d[k++] = t->dims[i];
	int64_t ax = axis;
	struct value r = dg_mk1(c, NK_BatchedReduceAdd, &v, 1, type_with_dims(c->m->types, t, d, (unsigned)k), base);
	node_set_ints(c->m, r.node, AN_axes, &ax, 1);
	for (unsigned i = 0; i < t->rank; i++)
		d[i] = i == axis ? 1 : t->dims[i];
	r = dg_mk1(c, NK_Reshape, &r, 1, type_with_dims(c->m->types, t, d, t->rank), base);
	return dg_mk1(c, NK_Broadcast, &r, 1, t, base);
}

/* Adds g to the adjoint of v (when v wants one): the first contribution is
 * the adjoint, later ones are summed into it. */
void dg_add_adj(struct dctx *c, struct value v, struct value g)
{
	if (!dg_wants_grad(c, v))
		return;
	struct value *a = dg_get_adj(c, v);
	if (a) {
		*a = dg_mk_bin(c, NK_Add, *a, g, v.node);
		return;
	}
	a = arena_alloc(&c->m->arena, sizeof *a);
	*a = g;
	u64map_put(&c->adj, vkey(v), a);
}

bool dg_to_input(struct dctx *c, const struct node *n, struct value g)
{
	dg_add_adj(c, op_val(n, 0), g);
	return true;
}
