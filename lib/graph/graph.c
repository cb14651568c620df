/* graph.c - modules, functions and the node builder. */
#define _POSIX_C_SOURCE 200809L
#include "graph/graph.h"
#include "support/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- attributes ---- */

static const struct attr_desc *attr_lookup(unsigned kind, const char *attr, unsigned *idx)
{
	int i = node_attr_index(kind, attr);
	if (i < 0) {
		char msg[160];
		snprintf(msg, sizeof msg, "node kind %s has no attribute '%s'", node_kind_name(kind), attr);
		unreachable(msg);
	}
	*idx = (unsigned)i;
	return &node_desc(kind)->attrs[i];
}

int64_t node_int(const struct node *n, const char *attr)
{
	unsigned i;
	attr_lookup(n->kind, attr, &i);
	return n->attrs[i].i;
}

double node_float(const struct node *n, const char *attr)
{
	unsigned i;
	attr_lookup(n->kind, attr, &i);
	return n->attrs[i].f;
}

const int64_t *node_ints(const struct node *n, const char *attr, unsigned *len)
{
	unsigned i;
	attr_lookup(n->kind, attr, &i);
	*len = n->attrs[i].ints.n;
	return n->attrs[i].ints.v;
}

const double *node_floats(const struct node *n, const char *attr, unsigned *len)
{
	unsigned i;
	attr_lookup(n->kind, attr, &i);
	*len = n->attrs[i].floats.n;
	return n->attrs[i].floats.v;
}

const char *node_str(const struct node *n, const char *attr)
{
	unsigned i;
	attr_lookup(n->kind, attr, &i);
	return n->attrs[i].s;
}

const char *node_enum(const struct node *n, const char *attr)
{
	unsigned i;
	const struct attr_desc *a = attr_lookup(n->kind, attr, &i);
	static char buf[64];
	const char *s = a->enum_values;
	for (int64_t k = 0; k < n->attrs[i].i && s; k++) {
		s = strchr(s, '|');
		if (s)
			s++;
	}
	if (!s)
		return "?";
	size_t len = strcspn(s, "|");
	snprintf(buf, sizeof buf, "%.*s", (int)len, s);
	return buf;
}

void node_set_int(struct module *m, struct node *n, const char *attr, int64_t v)
{
	(void)m;
	unsigned i;
	attr_lookup(n->kind, attr, &i);
	n->attrs[i].i = v;
}

void node_set_float(struct module *m, struct node *n, const char *attr, double v)
{
	(void)m;
	unsigned i;
	attr_lookup(n->kind, attr, &i);
	n->attrs[i].f = v;
}

void node_set_ints(struct module *m, struct node *n, const char *attr, const int64_t *v, unsigned len)
{
	unsigned i;
	attr_lookup(n->kind, attr, &i);
	n->attrs[i].ints.v = arena_memdup(&m->arena, v, len * sizeof(*v));
	n->attrs[i].ints.n = len;
}

void node_set_floats(struct module *m, struct node *n, const char *attr, const double *v, unsigned len)
{
	unsigned i;
	attr_lookup(n->kind, attr, &i);
	n->attrs[i].floats.v = arena_memdup(&m->arena, v, len * sizeof(*v));
	n->attrs[i].floats.n = len;
}

void node_set_str(struct module *m, struct node *n, const char *attr, const char *s)
{
	unsigned i;
	attr_lookup(n->kind, attr, &i);
	n->attrs[i].s = arena_strdup(&m->arena, s);
}

void node_copy_attrs(struct module *m, struct node *dst, const struct node *src)
{
	(void)m;
	glow_assert(dst->kind == src->kind);
	/* attribute arrays are immutable once set, so sharing them is safe */
	memcpy(dst->attrs, src->attrs, node_desc(src->kind)->nattrs * sizeof(union attr_val));
}

static void attrs_set_defaults(struct module *m, unsigned kind, union attr_val *av)
{
	const struct node_desc *d = node_desc(kind);
	for (unsigned i = 0; i < d->nattrs; i++) {
		const struct attr_desc *a = &d->attrs[i];
		memset(&av[i], 0, sizeof av[i]);
		if (a->required)
			continue;
		switch (a->kind) {
		case AK_INT:
		case AK_BOOL:
		case AK_ENUM: av[i].i = a->def_i; break;
		case AK_FLOAT: av[i].f = a->def_f; break;
		case AK_INTS:
			av[i].ints.v = arena_memdup(&m->arena, a->def_ints, a->def_n * sizeof(int64_t));
			av[i].ints.n = a->def_n;
			break;
		case AK_FLOATS:
		case AK_STRING: break;
		}
	}
}

/* ---- uses ---- */

unsigned node_num_uses(const struct node *n, int res)
{
	unsigned c = 0;
	for (const struct use *u = n->uses; u; u = u->next)
		if (res < 0 || u->res == (unsigned)res)
			c++;
	return c;
}

static void use_link(struct use *u, struct value v)
{
	u->def = v.node;
	u->res = v.res;
	u->next = v.node->uses;
	v.node->uses = u;
}

static void use_unlink(struct use *u)
{
	struct use **pp = &u->def->uses;
	while (*pp != u) {
		glow_assert(*pp != NULL);
		pp = &(*pp)->next;
	}
	*pp = u->next;
	u->next = NULL;
	u->def = NULL;
}

void node_set_operand(struct node *n, unsigned i, struct value v)
{
	glow_assert(i < n->nops + (node_has_pred(n) ? 1u : 0u));
	struct use *u = &n->ops[i];
	if (u->def == v.node && u->res == v.res)
		return;
	if (u->def)
		use_unlink(u);
	use_link(u, v);
}

void value_replace_all_uses(struct value from, struct value to)
{
	if (from.node == to.node && from.res == to.res)
		return;
	struct use **pp = &from.node->uses;
	while (*pp) {
		struct use *u = *pp;
		if (u->res == from.res) {
			*pp = u->next;
			use_link(u, to);
		} else
			pp = &u->next;
	}
}

void node_replace_all_uses(struct node *from, struct node *to)
{
	glow_assert(from->nres <= to->nres);
	for (unsigned r = 0; r < from->nres; r++)
		value_replace_all_uses(node_val(from, r), node_val(to, r));
}

/* ---- names ---- */

static const char *fresh_name(struct arena *a, struct strmap *names, unsigned *uniq, const char *base)
{
	if (!base || !*base)
		base = "t";
	size_t blen = strlen(base);
	if (!strmap_getn(names, base, blen))
		return arena_strndup(a, base, blen);
	/* strip a previous ".N" so names do not grow a suffix per pass */
	size_t stem = blen;
	while (stem > 0 && base[stem - 1] >= '0' && base[stem - 1] <= '9')
		stem--;
	if (stem > 0 && stem < blen && base[stem - 1] == '.')
		blen = stem - 1;
	char buf[256];
	if (blen > 200)
		blen = 200;
	for (;;) {
		int n = snprintf(buf, sizeof buf, "%.*s.%u", (int)blen, base, ++*uniq);
		if (!strmap_getn(names, buf, (size_t)n))
			return arena_strndup(a, buf, (size_t)n);
	}
}

const char *func_fresh_name(struct func *f, const char *base)
{
	return fresh_name(&f->mod->arena, &f->names, &f->uniq, base);
}

const char *module_fresh_name(struct module *m, const char *base)
{
	return fresh_name(&m->arena, &m->gnames, &m->guniq, base);
}

/* ---- modules and functions ---- */

struct module *module_create(struct type_ctx *types, const char *name)
{
	node_desc_init();
	struct module *m = xcalloc(1, sizeof(*m));
	arena_init(&m->arena);
	m->types = types;
	m->name = name ? arena_strdup(&m->arena, name) : NULL;
	strmap_init(&m->gnames);
	return m;
}

void module_destroy(struct module *m)
{
	if (!m)
		return;
	for (size_t i = 0; i < m->nfuncs; i++)
		strmap_free(&m->funcs[i]->names);
	free(m->funcs);
	for (struct node *n = m->gfirst; n; n = n->next) {
		struct constant *c = as_constant(n);
		if (c && c->data && c->init != INIT_DENSE)
			free(c->data);
	}
	strmap_free(&m->gnames);
	free(m->base_dir);
	arena_free(&m->arena);
	free(m);
}

void module_set_base_dir(struct module *m, const char *path)
{
	free(m->base_dir);
	m->base_dir = NULL;
	if (!path || strcmp(path, "-") == 0)
		return;
	const char *slash = strrchr(path, '/');
	if (slash)
		m->base_dir = xstrndup(path, (size_t)(slash - path + 1));
}

struct func *module_find_func(struct module *m, const char *name)
{
	for (size_t i = 0; i < m->nfuncs; i++)
		if (strcmp(m->funcs[i]->name, name) == 0)
			return m->funcs[i];
	return NULL;
}

struct node *module_find_global(struct module *m, const char *name) { return strmap_get(&m->gnames, name); }

struct func *func_create(struct module *m, const char *name, struct loc loc)
{
	if (module_find_func(m, name))
		return NULL;
	struct func *f = arena_new(&m->arena, struct func);
	f->mod = m;
	f->name = arena_strdup(&m->arena, name);
	f->loc = loc;
	strmap_init(&f->names);
	m->funcs = xgrow(m->funcs, &m->capfuncs, m->nfuncs + 1, sizeof(*m->funcs));
	m->funcs[m->nfuncs++] = f;
	return f;
}

struct node *func_find(struct func *f, const char *name) { return strmap_get(&f->names, name); }

static void global_append(struct module *m, struct node *n)
{
	n->prev = m->glast;
	n->next = NULL;
	if (m->glast)
		m->glast->next = n;
	else
		m->gfirst = n;
	m->glast = n;
	m->nglobals++;
	strmap_put(&m->gnames, n->name, strlen(n->name), n);
}

static struct node *storage_init(struct module *m, struct node *n, unsigned kind, const char *name,
				 const struct type *t, struct loc loc)
{
	n->kind = (uint16_t)kind;
	n->name = name ? arena_strdup(&m->arena, name) : module_fresh_name(m, NULL);
	n->nres = 1;
	n->types = arena_alloc(&m->arena, sizeof(*n->types));
	n->types[0] = t;
	n->loc = loc;
	global_append(m, n);
	return n;
}

struct placeholder *module_add_placeholder(struct module *m, const char *name, const struct type *t,
					   struct loc loc)
{
	if (name && strmap_get(&m->gnames, name))
		return NULL;
	struct placeholder *p = arena_new(&m->arena, struct placeholder);
	storage_init(m, &p->n, NK_Placeholder, name, t, loc);
	return p;
}

struct constant *module_add_constant(struct module *m, const char *name, const struct type *t, struct loc loc)
{
	if (name && strmap_get(&m->gnames, name))
		return NULL;
	struct constant *c = arena_new(&m->arena, struct constant);
	storage_init(m, &c->n, NK_Constant, name, t, loc);
	c->init = INIT_ZERO;
	return c;
}

void module_erase_global(struct module *m, struct node *n)
{
	glow_assert(!n->uses && node_is_storage(n));
	if (n->prev)
		n->prev->next = n->next;
	else
		m->gfirst = n->next;
	if (n->next)
		n->next->prev = n->prev;
	else
		m->glast = n->prev;
	n->prev = n->next = NULL;
	m->nglobals--;
	strmap_del(&m->gnames, n->name, strlen(n->name));
	struct constant *c = as_constant(n);
	if (c && c->data && c->init != INIT_DENSE)
		free(c->data);
	if (c)
		c->data = NULL;
	n->bits |= NODE_ERASED;
}

/* ---- nodes ---- */

static void list_insert(struct func *f, struct node *n, struct node *before)
{
	if (!before) {
		n->prev = f->last;
		n->next = NULL;
		if (f->last)
			f->last->next = n;
		else
			f->first = n;
		f->last = n;
	} else {
		n->next = before;
		n->prev = before->prev;
		if (before->prev)
			before->prev->next = n;
		else
			f->first = n;
		before->prev = n;
	}
}

static void list_remove(struct func *f, struct node *n)
{
	if (n->prev)
		n->prev->next = n->next;
	else
		f->first = n->next;
	if (n->next)
		n->next->prev = n->prev;
	else
		f->last = n->prev;
	n->prev = n->next = NULL;
}

struct node *node_create_pred(struct func *f, unsigned kind, const char *name, const struct value *ops,
			      unsigned nops, struct value pred, const struct type *const *types, struct node *before,
			      struct loc loc)
{
	struct module *m = f->mod;
	const struct node_desc *d = node_desc(kind);
	glow_assert(!(d->flags & NF_STORAGE));
	glow_assert(d->variadic ? nops >= d->nops : nops == d->nops);
	unsigned slots = nops + (pred.node ? 1u : 0u);
	struct node *n = arena_alloc(&m->arena, sizeof(struct node) + slots * sizeof(struct use));
	memset(n, 0, sizeof(*n));
	n->ops = (struct use *)(void *)(n + 1);
	n->kind = (uint16_t)kind;
	n->nres = (uint8_t)d->nres;
	n->nops = nops;
	n->loc = loc;
	n->attrs = d->nattrs ? arena_alloc(&m->arena, d->nattrs * sizeof(union attr_val)) : NULL;
	attrs_set_defaults(m, kind, n->attrs);
	n->types = d->nres ? arena_alloc(&m->arena, d->nres * sizeof(*n->types)) : NULL;
	for (unsigned r = 0; r < d->nres; r++)
		n->types[r] = types[r];
	for (unsigned i = 0; i < slots; i++) {
		n->ops[i].idx = i;
		use_link(&n->ops[i], i < nops ? ops[i] : pred);
	}
	if (pred.node)
		n->bits |= NODE_HAS_PRED;
	if (d->nres == 0)
		name = NULL; /* result-less nodes (Save) have no name */
	else if (!name || strmap_get(&f->names, name))
		name = func_fresh_name(f, name);
	else
		name = arena_strdup(&m->arena, name);
	n->name = name;
	if (name)
		strmap_put(&f->names, name, strlen(name), n);
	list_insert(f, n, before);
	f->nnodes++;
	return n;
}

struct node *node_create(struct func *f, unsigned kind, const char *name, const struct value *ops, unsigned nops,
			 const struct type *const *types, struct node *before, struct loc loc)
{
	struct value none = {NULL, 0};
	return node_create_pred(f, kind, name, ops, nops, none, types, before, loc);
}

struct node *node_create1(struct func *f, unsigned kind, const char *name, const struct value *ops, unsigned nops,
			  const struct type *type, struct node *before, struct loc loc)
{
	return node_create(f, kind, name, ops, nops, &type, before, loc);
}

void node_erase(struct func *f, struct node *n)
{
	glow_assert(!n->uses);
	unsigned slots = n->nops + (node_has_pred(n) ? 1u : 0u);
	for (unsigned i = 0; i < slots; i++)
		if (n->ops[i].def)
			use_unlink(&n->ops[i]);
	list_remove(f, n);
	if (n->name)
		strmap_del(&f->names, n->name, strlen(n->name));
	f->nnodes--;
	n->bits |= NODE_ERASED;
}

void node_move_before(struct func *f, struct node *n, struct node *before)
{
	if (n == before)
		return;
	list_remove(f, n);
	list_insert(f, n, before);
}

/* ---- constant payloads ---- */

void constant_set_data(struct module *m, struct constant *c, const void *data)
{
	uint64_t bytes = type_bytes(node_type(&c->n));
	if (c->data && c->init != INIT_DENSE)
		free(c->data);
	c->data = arena_memdup(&m->arena, data, (size_t)bytes);
	c->init = INIT_DENSE;
}
