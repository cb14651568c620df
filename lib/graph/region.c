/* region.c - control-flow regions: which kinds own regions, their
 * parameters and yields, walks over nested regions (graph/region.h).
 * Which kinds own regions and their names are kind facts: nodes.c. */
#include "graph/region.h"
#include "support/util.h"
#include "support/vec.h"

#include <string.h>

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

void func_set_sig(struct func *f, const struct type *const *res, unsigned nres)
{
	glow_assert(!f->owner);
	f->sig_res = arena_memdup(&f->mod->arena, res, nres * sizeof(*res));
	f->nsig_res = nres;
	f->has_sig = true;
}

struct func *call_target(struct module *m, const struct node *call, unsigned *arg0)
{
	const char *callee = node_str(call, AN_callee);
	*arg0 = callee ? 0u : 1u;
	if (callee) {
		struct func *f = module_find_func(m, callee);
		return f && f->has_sig ? f : NULL;
	}
	if (!call->nops || call->ops[0].def->kind != NK_Fn)
		return NULL;
	return node_region(call->ops[0].def, 0);
}

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

bool node_const_scalar(const struct node *def, int64_t *v)
{
	if (!def || type_numel(node_type(def)) != 1 || elem_is_float((enum elem_kind)node_type(def)->elem))
		return false;
	if (def->kind == NK_Splat) {
		*v = (int64_t)node_float(def, AN_value);
		return true;
	}
	struct constant *c = as_constant((struct node *)(uintptr_t)def);
	if (!c)
		return false;
	switch (c->init) {
	case INIT_SPLAT: *v = c->splat_i; return true;
	case INIT_ZERO: *v = 0; return true;
	case INIT_DENSE:
		if (!c->data)
			return false;
		if (node_type(def)->elem == EK_BOOL)
			*v = c->data[0] != 0;
		else if (node_type(def)->elem == EK_I64)
			memcpy(v, c->data, sizeof *v);
		else
			return false;
		return true;
	default: return false;
	}
}

int64_t loop_const_trip(const struct node *loop)
{
	int64_t v;
	if (node_type(loop->ops[0].def)->elem != EK_I64 || !node_const_scalar(loop->ops[0].def, &v))
		return -1;
	return v < 0 ? 0 : v;
}

int64_t loop_scan_length(const struct node *loop)
{
	int64_t len = node_int(loop, AN_scan_length), trip;
	if (len >= 0)
		return len;
	trip = loop_const_trip(loop);
	return trip == INT64_MAX ? -1 : trip;
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

size_t func_count_nodes(const struct func *f)
{
	size_t c = 0;
	func_for_each(f, n) {
		c++;
		for (unsigned i = 0, nr = node_num_regions(n); i < nr; i++)
			c += func_count_nodes(node_region(n, i));
	}
	return c;
}

/* ---- evaluation order across scopes ---- */

typedef VEC(struct node *) node_vec;

/* Marks (on) or unmarks the nodes of n's regions, nested ones too, with
 * NODE_VGREY. */
static void mark_region_nodes(const struct node *n, bool on)
{
	for (unsigned i = 0, nr = node_num_regions(n); i < nr; i++)
		for (struct node *m = node_region(n, i)->first; m; m = m->next) {
			if (on)
				m->bits |= NODE_VGREY;
			else
				m->bits &= (uint8_t)~NODE_VGREY;
			mark_region_nodes(m, on);
		}
}

/* Appends to out the values of the scope around owner that its regions use
 * (not storage, not defined in the regions), each once. */
static void outer_uses(const struct node *owner, const struct node *n, node_vec *out)
{
	for (unsigned i = 0, nr = node_num_regions(n); i < nr; i++)
		for (struct node *m = node_region(n, i)->first; m; m = m->next) {
			unsigned slots = m->nops + (node_has_pred(m) ? 1u : 0u);
			for (unsigned k = 0; k < slots; k++) {
				struct node *def = m->ops[k].def;
				if (!def || node_is_storage(def) || (def->bits & NODE_VGREY) || def == owner)
					continue;
				bool seen = false;
				for (size_t j = 0; j < out->len && !seen; j++)
					seen = out->data[j] == def;
				if (!seen)
					vec_push(out, def);
			}
			outer_uses(owner, m, out);
		}
}

/* The operands of n the order must respect: its own, then (a node with
 * regions) the outer values its regions use. */
static void order_deps(struct node *n, node_vec *deps)
{
	deps->len = 0;
	unsigned slots = n->nops + (node_has_pred(n) ? 1u : 0u);
	for (unsigned k = 0; k < slots; k++)
		if (n->ops[k].def)
			vec_push(deps, n->ops[k].def);
	if (node_num_regions(n)) {
		mark_region_nodes(n, true);
		outer_uses(n, n, deps);
		mark_region_nodes(n, false);
	}
}

/* Relinks f's list in a stable topological order (list order wherever it
 * is valid; iterative depth-first search). NODE_VOWN marks f's nodes,
 * NODE_VDONE the ones placed or on the stack; both clear on return. */
static void sort_scope(struct func *f)
{
	struct frame {
		struct node *n;
		size_t dep0, ndeps, i; /* its dependencies in deps[dep0, dep0 + ndeps) */
	};
	VEC(struct frame) stack = {0};
	node_vec order = {0}, deps = {0}, all = {0}, one = {0};
	func_for_each(f, n) n->bits |= NODE_VOWN;
	func_for_each(f, root) {
		if (root->bits & NODE_VDONE)
			continue;
		root->bits |= NODE_VDONE;
		deps.len = 0;
		order_deps(root, &one);
		for (size_t k = 0; k < one.len; k++)
			vec_push(&deps, one.data[k]);
		struct frame fr0 = {root, 0, deps.len, 0};
		vec_push(&stack, fr0);
		while (stack.len) {
			struct frame *fr = &vec_last(&stack);
			if (fr->i == fr->ndeps) {
				vec_push(&order, fr->n);
				deps.len = fr->dep0;
				stack.len--;
				continue;
			}
			struct node *def = deps.data[fr->dep0 + fr->i++];
			if (!(def->bits & NODE_VOWN) || (def->bits & NODE_VDONE))
				continue;
			def->bits |= NODE_VDONE;
			size_t dep0 = deps.len;
			order_deps(def, &one);
			for (size_t k = 0; k < one.len; k++)
				vec_push(&deps, one.data[k]);
			struct frame fr1 = {def, dep0, one.len, 0};
			vec_push(&stack, fr1);
		}
	}
	for (size_t i = 0; i < order.len; i++) {
		order.data[i]->bits &= (uint8_t)~(NODE_VOWN | NODE_VDONE);
		node_move_before(f, order.data[i], NULL);
	}
	if (func_is_block(f)) {
		/* parameters first (in their order), the Yield last */
		struct node *first_other = NULL;
		for (size_t i = 0; i < order.len; i++)
			if (order.data[i]->kind == NK_RegionArg)
				vec_push(&all, order.data[i]);
		for (struct node *n = f->first; n && !first_other; n = n->next)
			if (n->kind != NK_RegionArg)
				first_other = n;
		for (size_t i = 0; i < all.len; i++)
			node_move_before(f, all.data[i], first_other);
		struct node *y = NULL;
		func_for_each(f, n) if (n->kind == NK_Yield) y = n;
		if (y)
			node_move_before(f, y, NULL);
	}
	vec_free(&stack);
	vec_free(&order);
	vec_free(&deps);
	vec_free(&all);
	vec_free(&one);
}

void func_fix_order(struct func *f)
{
	bool owners = false;
	func_for_each(f, n) {
		for (unsigned i = 0, nr = node_num_regions(n); i < nr; i++) {
			func_fix_order(node_region(n, i));
			owners = true;
		}
	}
	if (owners || func_is_block(f))
		sort_scope(f);
}
