/* graph.c - modules, functions and the node builder.
 *
 * Memory: a node is one 8-byte aligned block of the module arena holding the
 * node, its operand uses, result type pointers, attribute values and name,
 * in that order (node_new), so building a node is one bump allocation and
 * its parts share cache lines. A function's names are a table of node
 * pointers (struct nametab); the reader hashes each name once and hands the
 * hash to the builder (node_create_named, func_find_hashed). */
#define _POSIX_C_SOURCE 200809L
#include "graph/graph.h"
#include "graph/attr_access.h"
#include "graph/region.h"
#include "support/dlist.h"
#include "support/io.h"
#include "support/util.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- attributes ---- */

static const char *const attr_spellings[AN_COUNT] = {
#define ATTR_NAME(nm) #nm,
#include "graph/AttrNames.def"
#undef ATTR_NAME
};

const char *attr_name_str(enum attr_name an) { return (unsigned)an < AN_COUNT ? attr_spellings[an] : "?"; }

int node_attr_slot(unsigned kind, enum attr_name an) { return attr_desc_slot(node_desc(kind)->attrs, an); }

void attr_missing(const char *owner, const char *kind_name, enum attr_name an)
{
	char msg[160];
	snprintf(msg, sizeof msg, "%s kind %s has no attribute '%s'", owner, kind_name, attr_name_str(an));
	unreachable(msg);
}

/* The slot of attribute an of a node kind (attr_slot_checked). */
static unsigned attr_lookup(unsigned kind, enum attr_name an)
{
	return attr_slot_checked(node_desc(kind)->attrs, an, "node", node_kind_name, kind);
}

ATTR_ACCESSORS(node, struct node, struct module, attr_lookup)

const char *node_enum(const struct node *n, enum attr_name an)
{
	unsigned i = attr_lookup(n->kind, an);
	const char *s = node_desc(n->kind)->attrs[i].enum_values;
	static char buf[64];
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

void node_copy_attrs(struct module *m, struct node *dst, const struct node *src)
{
	(void)m;
	glow_assert(dst->kind == src->kind);
	/* attribute arrays are immutable once set, so sharing them is safe */
	unsigned n = node_desc(src->kind)->nattrs;
	if (n)
		memcpy(dst->attrs, src->attrs, n * sizeof(union attr_val));
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

/* The function name table (struct nametab in graph.h). */

enum { NT_TAG = 7 };

static inline struct node *nt_node(uintptr_t s) { return (struct node *)(s & ~(uintptr_t)NT_TAG); }
static inline uintptr_t nt_tag(uint64_t h) { return (uintptr_t)(h >> 61); }

static bool nt_match(const struct node *n, const char *k, size_t len)
{
	return strncmp(n->name, k, len) == 0 && n->name[len] == 0;
}

/* The slot holding (k, len), or the empty slot where it would go. */
static uintptr_t *nt_find(const struct nametab *t, const char *k, size_t len, uint64_t h)
{
	size_t mask = t->cap - 1, i = (size_t)h & mask;
	uintptr_t tag = nt_tag(h);
	for (;;) {
		uintptr_t s = t->slots[i];
		if (!s || ((s & NT_TAG) == tag && nt_match(nt_node(s), k, len)))
			return &t->slots[i];
		i = (i + 1) & mask;
	}
}

static uint64_t nt_hash_of(const struct node *n) { return hash_bytes(n->name, strlen(n->name)); }

static void nt_rehash(struct nametab *t, size_t ncap)
{
	uintptr_t *old = t->slots;
	size_t ocap = t->cap;
	t->slots = xcalloc(ncap, sizeof(*t->slots));
	t->cap = ncap;
	for (size_t i = 0; i < ocap; i++) {
		if (!old[i])
			continue;
		size_t j = (size_t)nt_hash_of(nt_node(old[i])) & (ncap - 1);
		while (t->slots[j])
			j = (j + 1) & (ncap - 1);
		t->slots[j] = old[i];
	}
	free(old);
}

/* Room for n more entries at no more than 3/4 load. */
static void nt_reserve(struct nametab *t, size_t n)
{
	size_t need = t->len + n, cap = t->cap ? t->cap : 16;
	while (need > cap / 4 * 3) {
		if (cap > SIZE_MAX / 2 / sizeof(*t->slots))
			unreachable("name table too large");
		cap *= 2;
	}
	if (cap != t->cap)
		nt_rehash(t, cap);
}

static void nt_free(struct nametab *t)
{
	free(t->slots);
	memset(t, 0, sizeof(*t));
}

static struct node *nt_get(const struct nametab *t, const char *k, size_t len, uint64_t h)
{
	if (!t->len)
		return NULL;
	uintptr_t s = *nt_find(t, k, len, h);
	return s ? nt_node(s) : NULL;
}

/* Stores n (8-byte aligned, named) in the empty slot returned by nt_find. */
static void nt_fill(struct nametab *t, uintptr_t *slot, struct node *n, uint64_t h)
{
	glow_assert(((uintptr_t)n & NT_TAG) == 0);
	*slot = (uintptr_t)n | nt_tag(h);
	t->len++;
}

static void nt_del(struct nametab *t, const struct node *n)
{
	if (!t->len)
		return;
	uintptr_t *e = nt_find(t, n->name, strlen(n->name), nt_hash_of(n));
	if (!*e || nt_node(*e) != n)
		return;
	/* backward-shift deletion keeps probe chains intact */
	size_t mask = t->cap - 1, i = (size_t)(e - t->slots), j = i;
	for (;;) {
		j = (j + 1) & mask;
		if (!t->slots[j])
			break;
		size_t k = (size_t)nt_hash_of(nt_node(t->slots[j])) & mask;
		if ((j > i && (k <= i || k > j)) || (j < i && (k <= i && k > j))) {
			t->slots[i] = t->slots[j];
			i = j;
		}
	}
	t->slots[i] = 0;
	t->len--;
}

/* A name is taken in f (f non-NULL) or among m's storage. */
struct taken_in {
	const struct func *f;
	const struct module *m;
};

static bool name_taken(const void *ctx, const char *s, size_t len)
{
	const struct taken_in *t = ctx;
	if (t->f)
		return nt_get(&func_root(t->f)->names, s, len, hash_bytes(s, len)) != NULL;
	return strmap_getn(&t->m->gnames, s, len) != NULL;
}

const char *name_fresh(struct arena *a, const char *base, unsigned *uniq,
		       bool (*taken)(const void *ctx, const char *s, size_t len), const void *ctx)
{
	if (!base || !*base)
		base = "t";
	size_t blen = strlen(base);
	if (!taken(ctx, base, blen))
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
		if (!taken(ctx, buf, (size_t)n))
			return arena_strndup(a, buf, (size_t)n);
	}
}

const char *func_fresh_name(struct func *f, const char *base)
{
	struct func *root = func_root(f);
	struct taken_in t = {root, f->mod};
	return name_fresh(&f->mod->arena, base, &root->uniq, name_taken, &t);
}

const char *module_fresh_name(struct module *m, const char *base)
{
	struct taken_in t = {NULL, m};
	return name_fresh(&m->arena, base, &m->guniq, name_taken, &t);
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
		nt_free(&m->funcs[i]->names);
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
	m->base_dir = path_dir(path);
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
	m->funcs = xgrow(m->funcs, &m->capfuncs, m->nfuncs + 1, sizeof(*m->funcs));
	m->funcs[m->nfuncs++] = f;
	return f;
}

struct node *func_find(struct func *f, const char *name)
{
	size_t len = strlen(name);
	return nt_get(&func_root(f)->names, name, len, hash_bytes(name, len));
}

struct node *func_find_hashed(const struct func *f, const char *name, size_t len, uint64_t hash)
{
	return nt_get(&func_root(f)->names, name, len, hash);
}

void func_reserve_names(struct func *f, size_t n) { nt_reserve(&func_root(f)->names, n); }

static void global_append(struct module *m, struct node *n)
{
	DLIST_APPEND(m->gfirst, m->glast, n);
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
	DLIST_REMOVE(m->gfirst, m->glast, n);
	m->nglobals--;
	strmap_del(&m->gnames, n->name, strlen(n->name));
	struct constant *c = as_constant(n);
	if (c && c->data && c->init != INIT_DENSE)
		free(c->data);
	if (c)
		c->data = NULL;
	n->bits |= NODE_ERASED;
}

bool module_rename_global(struct module *m, struct node *n, const char *name)
{
	glow_assert(node_is_storage(n) && !(n->bits & NODE_ERASED));
	if (strcmp(n->name, name) == 0)
		return true;
	if (strmap_get(&m->gnames, name))
		return false;
	strmap_del(&m->gnames, n->name, strlen(n->name));
	n->name = arena_strdup(&m->arena, name);
	strmap_put(&m->gnames, n->name, strlen(n->name), n);
	return true;
}

/* ---- nodes ---- */

static void list_insert(struct func *f, struct node *n, struct node *before)
{
	DLIST_INSERT(f->first, f->last, n, before);
}

static void list_remove(struct func *f, struct node *n)
{
	DLIST_REMOVE(f->first, f->last, n);
}

/* Allocates and links a node with nres results; its name (nlen bytes,
 * NULL: none) is copied into the same block. One block per node: the node,
 * its operand uses, its region pointers (kinds with regions), result types,
 * attribute values and name, in that order (each part 8-byte aligned). */
static struct node *node_new(struct func *f, unsigned kind, const char *name, size_t nlen, const struct value *ops,
			     unsigned nops, struct value pred, const struct type *const *types, unsigned nres)
{
	struct module *m = f->mod;
	const struct node_desc *d = node_desc(kind);
	glow_assert(!(d->flags & NF_STORAGE));
	glow_assert(node_desc_ops_ok(d, nops) && node_desc_res_ok(d, nres) && nres <= UINT8_MAX);
	_Static_assert(sizeof(struct use) % 8 == 0 && sizeof(union attr_val) % 8 == 0, "node block parts stay aligned");
	unsigned slots = nops + (pred.node ? 1u : 0u);
	size_t size = sizeof(struct node) + slots * sizeof(struct use) + d->nregions * sizeof(struct func *) +
		      nres * sizeof(struct type *) + d->nattrs * sizeof(union attr_val) + (name ? nlen + 1 : 0);
	char *blk = arena_alloc8(&m->arena, size);
	struct node *n = (struct node *)(void *)blk;
	memset(n, 0, sizeof(*n));
	blk += sizeof(struct node);
	n->ops = (struct use *)(void *)blk;
	blk += slots * sizeof(struct use);
	struct func **regions = (struct func **)(void *)blk;
	blk += d->nregions * sizeof(struct func *);
	n->types = nres ? (const struct type **)(void *)blk : NULL;
	blk += nres * sizeof(struct type *);
	n->attrs = d->nattrs ? (union attr_val *)(void *)blk : NULL;
	blk += d->nattrs * sizeof(union attr_val);
	if (name) {
		memcpy(blk, name, nlen);
		blk[nlen] = 0;
		n->name = blk;
	}
	n->kind = (uint16_t)kind;
	n->nres = (uint8_t)nres;
	n->nops = nops;
	attr_rows_defaults(node_desc(kind)->attrs, node_desc(kind)->nattrs, n->attrs, &m->arena);
	for (unsigned r = 0; r < nres; r++)
		n->types[r] = types[r];
	m->nowners += d->nregions ? 1u : 0u;
	for (unsigned i = 0; i < d->nregions; i++) {
		struct func *r = arena_new(&m->arena, struct func);
		r->mod = m;
		r->name = region_name(kind, i);
		r->owner = n;
		r->parent = f;
		regions[i] = r;
	}
	for (unsigned i = 0; i < slots; i++) {
		n->ops[i].idx = i;
		use_link(&n->ops[i], i < nops ? ops[i] : pred);
	}
	if (pred.node)
		n->bits |= NODE_HAS_PRED;
	return n;
}

/* node_create_pred with nres result types. */
static struct node *create_pred_n(struct func *f, unsigned kind, const char *name, const struct value *ops,
				  unsigned nops, struct value pred, const struct type *const *types, unsigned nres,
				  struct node *before, struct loc loc)
{
	struct nametab *names = &func_root(f)->names;
	uintptr_t *slot = NULL;
	uint64_t h = 0;
	size_t len = 0;
	bool made = false;
	if (node_desc(kind)->nres == 0) {
		name = NULL; /* result-less nodes (Save) have no name */
	} else {
		nt_reserve(names, 1);
		if (name) {
			len = strlen(name);
			h = hash_bytes(name, len);
			slot = nt_find(names, name, len, h);
		}
		if (!slot || *slot) {
			made = true;
			name = func_fresh_name(f, name);
			len = strlen(name);
			h = hash_bytes(name, len);
			slot = nt_find(names, name, len, h);
		}
	}
	struct node *n = node_new(f, kind, name, len, ops, nops, pred, types, nres);
	n->loc = loc;
	if (name)
		nt_fill(names, slot, n, h);
	if (made)
		n->bits |= NODE_NAME_MADE;
	list_insert(f, n, before);
	f->nnodes++;
	return n;
}

struct node *node_create_pred(struct func *f, unsigned kind, const char *name, const struct value *ops,
			      unsigned nops, struct value pred, const struct type *const *types, struct node *before,
			      struct loc loc)
{
	return create_pred_n(f, kind, name, ops, nops, pred, types, node_desc(kind)->nres, before, loc);
}

struct node *node_create_n(struct func *f, unsigned kind, const char *name, const struct value *ops, unsigned nops,
			   const struct type *const *types, unsigned nres, struct node *before, struct loc loc)
{
	struct value none = {NULL, 0};
	return create_pred_n(f, kind, name, ops, nops, none, types, nres, before, loc);
}

struct node *node_create_named(struct func *f, unsigned kind, const char *name, size_t len, uint64_t hash,
			       const struct value *ops, unsigned nops, struct value pred,
			       const struct type *const *types, unsigned nres, struct loc loc)
{
	struct nametab *names = &func_root(f)->names;
	uintptr_t *slot = NULL;
	if (node_desc(kind)->nres == 0) {
		name = NULL;
	} else {
		nt_reserve(names, 1);
		slot = nt_find(names, name, len, hash);
		if (*slot)
			return NULL;
	}
	struct node *n = node_new(f, kind, name, len, ops, nops, pred, types, nres);
	n->loc = loc;
	if (name)
		nt_fill(names, slot, n, hash);
	list_insert(f, n, NULL);
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

/* Drops n's operands and those of every node of its regions (their uses
 * of outer values go away with them). */
static void drop_operands(struct node *n)
{
	unsigned slots = n->nops + (node_has_pred(n) ? 1u : 0u);
	for (unsigned i = 0; i < slots; i++)
		if (n->ops[i].def)
			use_unlink(&n->ops[i]);
	for (unsigned i = 0, nr = node_num_regions(n); i < nr; i++)
		for (struct node *m = node_region(n, i)->first; m; m = m->next)
			drop_operands(m);
}

/* Forgets the names of the nodes of n's regions and marks them erased
 * (their operands are dropped already); the lists stay as they were. */
static void forget_regions(struct nametab *names, struct node *n)
{
	for (unsigned i = 0, nr = node_num_regions(n); i < nr; i++)
		for (struct node *m = node_region(n, i)->first; m; m = m->next) {
			forget_regions(names, m);
			if (m->name)
				nt_del(names, m);
			m->bits |= NODE_ERASED;
		}
}

void node_erase(struct func *f, struct node *n)
{
	glow_assert(!n->uses);
	drop_operands(n);
	list_remove(f, n);
	struct nametab *names = &func_root(f)->names;
	forget_regions(names, n);
	if (n->name)
		nt_del(names, n);
	f->nnodes--;
	n->bits |= NODE_ERASED;
}

void module_erase_func(struct module *m, struct func *f)
{
	func_for_each(f, n) drop_operands(n);
	func_for_each(f, n) {
		forget_regions(&f->names, n);
		n->bits |= NODE_ERASED;
	}
	nt_free(&f->names);
	size_t i = 0;
	while (i < m->nfuncs && m->funcs[i] != f)
		i++;
	glow_assert(i < m->nfuncs);
	memmove(m->funcs + i, m->funcs + i + 1, (m->nfuncs - i - 1) * sizeof(*m->funcs));
	m->nfuncs--;
}

/* Gives the named node n of f the name `name` (an arena string free in f). */
static void set_name(struct func *f, struct node *n, const char *name)
{
	struct nametab *names = &func_root(f)->names;
	nt_del(names, n);
	n->name = name;
	size_t len = strlen(name);
	uint64_t h = hash_bytes(name, len);
	nt_reserve(names, 1);
	uintptr_t *slot = nt_find(names, name, len, h);
	glow_assert(!*slot);
	nt_fill(names, slot, n, h);
}

bool node_rename(struct func *f, struct node *n, const char *name)
{
	if (!n->name)
		return false;
	if (strcmp(n->name, name) == 0) {
		n->bits &= (uint8_t)~NODE_NAME_MADE;
		return true;
	}
	if (func_find(f, name))
		return false;
	set_name(f, n, arena_strdup(&f->mod->arena, name));
	n->bits &= (uint8_t)~NODE_NAME_MADE;
	return true;
}

/* to's name is from's followed by '.' and a suffix. */
static bool name_derived(const char *to, const char *from)
{
	size_t len = strlen(from);
	return strncmp(to, from, len) == 0 && to[len] == '.' && to[len + 1] != 0;
}

void node_replace(struct func *f, struct node *from, struct node *to)
{
	glow_assert(from != to && !node_is_storage(to));
	node_replace_all_uses(from, to);
	const char *name = from->name;
	bool take = name && to->name && ((to->bits & NODE_NAME_MADE) || name_derived(to->name, name));
	uint8_t made = from->bits & NODE_NAME_MADE;
	/* erased nodes are not freed: from's name stays valid for to */
	node_erase(f, from);
	if (take) {
		set_name(f, to, name);
		to->bits = (uint8_t)((to->bits & ~NODE_NAME_MADE) | made);
	}
}

void node_move_scope(struct func *from, struct func *to, struct node *n, struct node *before)
{
	glow_assert(func_root(from) == func_root(to));
	list_remove(from, n);
	from->nnodes--;
	list_insert(to, n, before);
	to->nnodes++;
	for (unsigned i = 0, nr = node_num_regions(n); i < nr; i++)
		node_region(n, i)->parent = to;
}

void node_move_before(struct func *f, struct node *n, struct node *before)
{
	if (n == before)
		return;
	list_remove(f, n);
	list_insert(f, n, before);
}

/* ---- constant payloads ---- */

void *constant_alloc_data(struct module *m, struct constant *c)
{
	uint64_t bytes = type_bytes(node_type(&c->n));
	if (c->data && c->init != INIT_DENSE)
		free(c->data);
	c->data = arena_alloc(&m->arena, (size_t)bytes);
	c->init = INIT_DENSE;
	return c->data;
}

void constant_set_data(struct module *m, struct constant *c, const void *data)
{
	uint64_t bytes = type_bytes(node_type(&c->n));
	memcpy(constant_alloc_data(m, c), data, (size_t)bytes);
}

/* ---- regions (graph/region.h): where a node keeps them ---- */

unsigned node_num_regions(const struct node *n) { return node_desc(n->kind)->nregions; }

/* The region pointers follow the operand slots (node_new). */
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
