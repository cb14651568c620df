/* print.c - the canonical text of the graph IR (docs/GraphIR.md,
 * "Canonical printing").
 *
 * The output is a function of the in-memory IR only: storage in module
 * order, functions in module order, nodes in a stable topological order,
 * attributes in table order with defaults left out. print(parse(t)) is a
 * fixed point after one round.
 *
 * Node order. A function's list is an evaluation order except where passes
 * appended nodes that earlier nodes now use. The printer walks the list and
 * emits each node once all its operands (and predicate) are emitted; an
 * operand whose producer has not been emitted yet pulls the producer up (and,
 * transitively, the producer's own operands) by an iterative depth-first
 * search, so a million-node chain needs no recursion. Where the list order is
 * valid it is kept exactly. Side-effecting kinds (Save, QuantizationProfile)
 * have no results, so they are never pulled up and keep their list order.
 * A producer is emitted when it is first pushed-and-finished; a node found
 * again while still on the stack (a cycle, which the verifier rejects) is
 * treated as done, so printing always terminates.
 *
 * The walk uses NODE_VDONE (a scratch bit shared with the verifier, clear
 * outside both) as its "emitted or on the stack" bit, so it leaves the
 * passes' NODE_MARK alone; the nodes are recorded in an array as they are
 * visited, and the bits are cleared from it, not by a second walk down the
 * list.
 *
 * Speed: one pass over the nodes, output through the buffered ostream
 * primitives, no allocation per node (one stack for the search per
 * function), and a small cache of type texts keyed by the uniqued type
 * pointer, so printing `float<8 x 28 x 28 x 16>` is one copy.
 */
#include "graph/forms.h"
#include "graph/lowered.h"
#include "graph/graph.h"
#include "graph/initializer.h"
#include "graph/region.h"
#include "support/io.h"
#include "support/util.h"
#include "support/vec.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ */
/* Names and strings                                                    */

/* [A-Za-z0-9_.$-] as a bit set over the 128 ASCII codes. */
#define BIT(c) ((uint64_t)1 << ((c) & 63))
static const uint64_t bare_lo = BIT('$') | BIT('-') | BIT('.') | (((uint64_t)0x3ff) << ('0' & 63));
static const uint64_t bare_hi = (((uint64_t)0x3ffffff) << ('A' & 63)) | BIT('_') | (((uint64_t)0x3ffffff) << ('a' & 63));
#undef BIT

static inline bool char_is_bare(unsigned char c)
{
	if (c < 64)
		return (bare_lo >> c) & 1;
	if (c < 128)
		return (bare_hi >> (c - 64)) & 1;
	return false;
}

bool name_is_bare(const char *s, size_t len)
{
	if (len == 0)
		return false;
	for (size_t i = 0; i < len; i++)
		if (!char_is_bare((unsigned char)s[i]))
			return false;
	return true;
}

/* One pass over the name finds its length and whether it prints bare. */
static void print_name(struct ostream *o, char sigil, const char *name)
{
	os_putc(o, sigil);
	if (!name) {
		os_quoted(o, "", 0);
		return;
	}
	size_t len = 0;
	bool bare = true;
	for (unsigned char c; (c = (unsigned char)name[len]) != 0; len++)
		bare &= char_is_bare(c);
	if (bare && len)
		os_write(o, name, len);
	else
		os_quoted(o, name, len);
}

void print_local_name(struct ostream *o, const char *name) { print_name(o, '%', name); }

void print_global_name(struct ostream *o, const char *name) { print_name(o, '@', name); }

/* ------------------------------------------------------------------ */
/* The printer state                                                    */

enum { TCACHE_SIZE = 64, TCACHE_TEXT = 240 };

struct tcache_ent {
	const struct type *t;
	uint32_t len;
	char text[TCACHE_TEXT];
};

struct printer {
	struct ostream *o;
	struct tcache_ent *cache; /* TCACHE_SIZE entries, or NULL: no caching */
	struct ostream scratch;   /* memory stream that fills the cache */
	bool scratch_open;
	const struct module *m;   /* whose lowered-info map to print; NULL: none */
	bool positional;          /* a text form: nodes print as positions, not by name */
};

static void printer_init(struct printer *p, struct ostream *o, struct tcache_ent *cache)
{
	p->o = o;
	p->cache = cache;
	p->scratch_open = false;
	p->m = NULL;
	p->positional = false;
	if (cache)
		for (unsigned i = 0; i < TCACHE_SIZE; i++)
			cache[i].t = NULL;
}

static void printer_fini(struct printer *p)
{
	if (p->scratch_open)
		ostream_abort(&p->scratch);
	p->scratch_open = false;
}

static void print_type(struct printer *p, const struct type *t)
{
	if (!p->cache) {
		type_print(p->o, t);
		return;
	}
	uint64_t h = hash_u64((uint64_t)(uintptr_t)t);
	struct tcache_ent *e = &p->cache[h & (TCACHE_SIZE - 1)];
	if (e->t != t) {
		if (!p->scratch_open) {
			ostream_mem(&p->scratch);
			p->scratch_open = true;
		}
		p->scratch.len = 0;
		type_print(&p->scratch, t);
		if (p->scratch.len > TCACHE_TEXT) {
			os_write(p->o, p->scratch.buf, p->scratch.len);
			return;
		}
		memcpy(e->text, p->scratch.buf, p->scratch.len);
		e->len = (uint32_t)p->scratch.len;
		e->t = t;
	}
	os_write(p->o, e->text, e->len);
}

/* ------------------------------------------------------------------ */
/* Storage                                                              */

void init_print(struct ostream *o, const struct init_spec *s, const struct type *t)
{
	switch (s->kind) {
	case INIT_DENSE: {
		uint64_t bytes = type_bytes(t);
		os_write(o, "dense \"0x", 9);
		if (s->data) {
			os_hex(o, s->data, (size_t)bytes);
		} else {
			/* the verifier rejects this; print zeros of the right size */
			for (uint64_t i = 0; i < bytes; i++)
				os_write(o, "00", 2);
		}
		os_putc(o, '"');
		break;
	}
	case INIT_SPLAT: {
		enum elem_kind k = (enum elem_kind)t->elem;
		os_write(o, "splat ", 6);
		if (elem_is_float(k))
			os_double(o, s->splat_f);
		else if (k == EK_BOOL)
			os_puts(o, s->splat_i ? "true" : "false");
		else
			os_i64(o, s->splat_i);
		break;
	}
	case INIT_ZERO: os_write(o, "zero", 4); break;
	case INIT_XAVIER:
		os_write(o, "xavier ", 7);
		os_double(o, s->fan_in);
		if (s->seed) {
			os_write(o, " seed ", 6);
			os_u64(o, s->seed);
		}
		break;
	case INIT_FILE: {
		const char *f = s->file ? s->file : "";
		os_write(o, "file ", 5);
		os_quoted(o, f, strlen(f));
		if (s->file_offset) {
			os_write(o, " offset ", 8);
			os_u64(o, s->file_offset);
		}
		break;
	}
	default: break;
	}
}

/* placeholder @name : type [trainable] [static]
 * constant @name : type = init */
static void print_storage(struct printer *p, struct node *n)
{
	struct ostream *o = p->o;
	struct placeholder *ph = as_placeholder(n);
	struct constant *c = as_constant(n);
	if (ph)
		os_write(o, "placeholder ", 12);
	else
		os_write(o, "constant ", 9);
	print_global_name(o, n->name);
	os_write(o, " : ", 3);
	print_type(p, n->types[0]);
	if (ph) {
		if (ph->trainable)
			os_write(o, " trainable", 10);
		if (ph->is_static)
			os_write(o, " static", 7);
	} else if (c) {
		struct init_spec s = constant_init_spec(c);
		os_write(o, " = ", 3);
		init_print(o, &s, c->n.types[0]);
	}
	os_putc(o, '\n');
}

/* ------------------------------------------------------------------ */
/* Nodes                                                                */

/* @global, %local, or %local#N when the producer has several results. */
static void print_use(struct ostream *o, const struct use *u)
{
	const struct node *d = u->def;
	if (!d) {
		print_local_name(o, NULL);
		return;
	}
	if (node_is_storage(d)) {
		print_global_name(o, d->name);
		return;
	}
	print_local_name(o, d->name);
	if (d->nres > 1 && d->kind != NK_Fn) { /* a function literal: its name alone */
		os_putc(o, '#');
		os_u64(o, u->res);
	}
}

static bool float_bits_equal(double a, double b) { return memcmp(&a, &b, sizeof a) == 0; }

static bool attr_is_default(const struct attr_desc *a, const union attr_val *v)
{
	if (a->required)
		return false;
	switch (a->kind) {
	case AK_INT:
	case AK_ENUM: return v->i == a->def_i;
	case AK_BOOL: return (v->i != 0) == (a->def_i != 0);
	case AK_FLOAT: return float_bits_equal(v->f, a->def_f);
	case AK_INTS:
		if (v->ints.n != a->def_n)
			return false;
		for (uint32_t i = 0; i < v->ints.n; i++)
			if (v->ints.v[i] != a->def_ints[i])
				return false;
		return true;
	case AK_FLOATS: return v->floats.n == 0;
	case AK_STRING: return v->s == NULL;
	}
	return false;
}

/* The index-th name of "a|b|c"; false if out of range. */
static bool enum_name(const char *vals, int64_t index, const char **s, size_t *len)
{
	if (!vals || index < 0)
		return false;
	const char *b = vals;
	for (int64_t k = 0; k < index; k++) {
		b = strchr(b, '|');
		if (!b)
			return false;
		b++;
	}
	*s = b;
	*len = strcspn(b, "|");
	return true;
}

static void print_attr_value(struct ostream *o, const struct attr_desc *a, const union attr_val *v)
{
	switch (a->kind) {
	case AK_INT: os_i64(o, v->i); break;
	case AK_FLOAT: os_double(o, v->f); break;
	case AK_BOOL:
		if (v->i)
			os_write(o, "true", 4);
		else
			os_write(o, "false", 5);
		break;
	case AK_INTS: os_i64_list(o, v->ints.v, v->ints.n); break;
	case AK_FLOATS: os_double_list(o, v->floats.v, v->floats.n); break;
	case AK_ENUM: {
		const char *s;
		size_t len;
		if (enum_name(a->enum_values, v->i, &s, &len))
			os_write(o, s, len);
		else
			os_i64(o, v->i); /* out of range: the parser rejects it */
		break;
	}
	case AK_STRING: {
		const char *s = v->s ? v->s : "";
		os_quoted(o, s, strlen(s));
		break;
	}
	}
}

/* [%name = ]Kind(ops)[ {attrs}][ predicate %p][ : t0, t1]; operands by
 * use_fn when it is not NULL (the forms: forms.h), which also drops the
 * name. */
/* n's entry of the lowered-info map, ` lowered_from "name"#res`, unless
 * it says no more than n's own name, printed beside it (docs/GraphIR.md). */
static void print_lowered(struct printer *p, const struct node *n)
{
	const struct lowered_entry *e = p->m && n->nres ? lowered_get(p->m, n) : NULL;
	if (!e || (!p->positional && e->res == 0 && n->name && strcmp(e->name, n->name) == 0))
		return;
	os_write(p->o, " lowered_from ", 14);
	os_quoted(p->o, e->name, strlen(e->name));
	if (e->res) {
		os_putc(p->o, '#');
		os_u64(p->o, e->res);
	}
}

static void print_node_ex(struct printer *p, const struct node *n,
			  void (*use_fn)(void *, struct ostream *, const struct use *), void *arg)
{
	struct ostream *o = p->o;
	const struct node_desc *d = node_desc(n->kind);
	if (n->nres && !use_fn) {
		print_local_name(o, n->name);
		os_write(o, " = ", 3);
	}
	if (n->kind == NK_Fn) {
		/* a function literal: its signature and body follow (print_regions_ex) */
		os_write(o, "fn", 2);
		return;
	}
	/* Call(@f, args...): the callee attribute is written as the first operand */
	const char *callee = n->kind == NK_Call ? node_str(n, AN_callee) : NULL;
	os_write(o, d->name, strlen(d->name));
	os_putc(o, '(');
	if (callee) {
		print_global_name(o, callee);
		if (n->nops)
			os_write(o, ", ", 2);
	}
	for (uint32_t i = 0; i < n->nops; i++) {
		if (i)
			os_write(o, ", ", 2);
		if (use_fn)
			use_fn(arg, o, &n->ops[i]);
		else
			print_use(o, &n->ops[i]);
	}
	os_putc(o, ')');
	bool open = false;
	for (unsigned i = 0; i < d->nattrs; i++) {
		const struct attr_desc *a = &d->attrs[i];
		if (attr_is_default(a, &n->attrs[i]) || (callee && a->an == AN_callee))
			continue;
		os_write(o, open ? ", " : " {", 2);
		open = true;
		os_write(o, a->name, strlen(a->name));
		os_write(o, " = ", 3);
		print_attr_value(o, a, &n->attrs[i]);
	}
	if (open)
		os_putc(o, '}');
	if (node_has_pred(n)) {
		os_write(o, " predicate ", 11);
		if (use_fn)
			use_fn(arg, o, &n->ops[n->nops]);
		else
			print_use(o, &n->ops[n->nops]);
	}
	for (unsigned r = 0; r < n->nres; r++) {
		os_write(o, r ? ", " : " : ", r ? 2 : 3);
		print_type(p, n->types[r]);
	}
	print_lowered(p, n);
}

static void print_node(struct printer *p, const struct node *n) { print_node_ex(p, n, NULL, NULL); }

/* The indentation of a line at region depth `depth` (0: a function's body). */
static void print_indent(struct ostream *o, unsigned depth)
{
	for (unsigned i = 0; i <= depth; i++)
		os_write(o, "  ", 2);
}

static void print_regions_ex(struct printer *p, const struct node *n, unsigned depth,
			     void (*body_fn)(void *arg, struct func *r, unsigned depth),
			     void (*name_fn)(void *arg, struct ostream *o, const struct node *param), void *arg);

/* A printer with its type cache for a whole function body in a form
 * (print_forms.c): most nodes repeat a recent type. */
struct node_printer {
	struct printer p;
	struct tcache_ent cache[TCACHE_SIZE];
};

struct node_printer *node_printer_new(struct ostream *o)
{
	struct node_printer *np = xmalloc(sizeof(*np));
	printer_init(&np->p, o, np->cache);
	return np;
}

void node_printer_set_module(struct node_printer *np, const struct module *m)
{
	np->p.m = m;
	np->p.positional = true;
}

void node_printer_expr(struct node_printer *np, const struct node *n,
		       void (*use_fn)(void *, struct ostream *, const struct use *), void *arg)
{
	print_node_ex(&np->p, n, use_fn, arg);
}

void node_printer_regions(struct node_printer *np, const struct node *n, unsigned depth,
			  void (*body_fn)(void *arg, struct func *r, unsigned depth),
			  void (*name_fn)(void *arg, struct ostream *o, const struct node *param), void *arg)
{
	print_regions_ex(&np->p, n, depth, body_fn, name_fn, arg);
}

void node_printer_indent(struct node_printer *np, unsigned depth) { print_indent(np->p.o, depth); }

void node_printer_free(struct node_printer *np)
{
	printer_fini(&np->p);
	free(np);
}

void node_print(struct ostream *o, const struct node *n)
{
	struct printer p;
	printer_init(&p, o, NULL);
	print_node(&p, n);
	printer_fini(&p);
}

/* ------------------------------------------------------------------ */
/* Functions: the stable topological order                              */

struct frame {
	struct node *n;
	unsigned i; /* next operand slot to look at */
};

/* The first operand slot from i on whose producer still has to be emitted
 * (pulled up), or the slot count. Only nodes of f are pulled: storage is
 * always available, a value of an enclosing scope (f a region) is emitted
 * before the region's owner, and a dangling or foreign producer (which the
 * verifier rejects) is printed by reference only. Membership is the bit
 * NODE_VOWN, set on f's whole list the first time a producer is not
 * emitted yet (*owned), i.e. only where the list order is not valid or f
 * is a region that uses outer values. */
static unsigned next_pending(struct func *f, const struct node *n, unsigned i, bool *owned)
{
	unsigned slots = n->nops + (node_has_pred(n) ? 1u : 0u);
	for (; i < slots; i++) {
		const struct node *def = n->ops[i].def;
		if (!def || (def->bits & (NODE_VDONE | NODE_ERASED)) || node_is_storage(def))
			continue;
		if (!*owned) {
			func_for_each(f, m) m->bits |= NODE_VOWN;
			*owned = true;
		}
		if (!(def->bits & NODE_VOWN))
			continue;
		return i;
	}
	return slots;
}

size_t print_order(struct func *f, struct node ***order)
{
	size_t cap = f->nnodes ? f->nnodes : 1, len = 0, nout = 0;
	struct node **seen = xmalloc(cap * sizeof(*seen)), **out = xmalloc(cap * sizeof(*out));
	VEC(struct frame) stack = {0};
	bool owned = false;
	func_for_each(f, root) {
		if (len == cap) {
			size_t c = cap;
			seen = xgrow(seen, &cap, len + 1, sizeof(*seen));
			out = xgrow(out, &c, len + 1, sizeof(*out));
		}
		seen[len++] = root;
		if (root->bits & NODE_VDONE)
			continue; /* pulled up earlier */
		root->bits |= NODE_VDONE;
		unsigned slots = root->nops + (node_has_pred(root) ? 1u : 0u);
		unsigned i = next_pending(f, root, 0, &owned);
		if (i == slots) { /* the common case: operands already out */
			out[nout++] = root;
			continue;
		}
		stack.len = 0;
		vec_push(&stack, ((struct frame){root, i}));
		while (stack.len) {
			struct frame *fr = &stack.data[stack.len - 1];
			unsigned ns = fr->n->nops + (node_has_pred(fr->n) ? 1u : 0u);
			fr->i = next_pending(f, fr->n, fr->i, &owned);
			if (fr->i == ns) {
				out[nout++] = fr->n;
				stack.len--;
				continue;
			}
			struct node *def = fr->n->ops[fr->i++].def;
			def->bits |= NODE_VDONE;
			vec_push(&stack, ((struct frame){def, 0}));
		}
	}
	vec_free(&stack);
	/* pulled-up nodes are f's (next_pending), so each is also a root */
	for (size_t i = 0; i < len; i++)
		seen[i]->bits &= (uint8_t)~(NODE_VDONE | NODE_VOWN);
	free(seen);
	*order = out;
	return nout;
}

/* "(%a : T, ...)": the parameters of region or function r, named by
 * name_fn. */
static void print_params(struct printer *p, const struct func *r,
			 void (*name_fn)(void *arg, struct ostream *o, const struct node *param), void *arg)
{
	struct ostream *o = p->o;
	os_putc(o, '(');
	for (unsigned k = 0, np = region_num_params(r); k < np; k++) {
		struct node *a = region_param(r, k);
		if (k)
			os_write(o, ", ", 2);
		name_fn(arg, o, a);
		os_write(o, " : ", 3);
		print_type(p, node_type(a));
	}
	os_putc(o, ')');
}

/* A signature, "(%a : T, ...) -> R1, R2": r's parameters, then the result
 * types res[0..nres) (a function literal's or a module function's). */
static void print_sig(struct printer *p, const struct func *r, const struct type *const *res, unsigned nres,
		      void (*name_fn)(void *arg, struct ostream *o, const struct node *param), void *arg)
{
	print_params(p, r, name_fn, arg);
	os_write(p->o, " ->", 3);
	for (unsigned k = 0; k < nres; k++) {
		os_write(p->o, k ? ", " : " ", k ? 2 : 1);
		print_type(p, res[k]);
	}
}

/* After n's line: its regions, "then {" ... "} else {" ... "}", each
 * region's parameters in parentheses after its name (named by name_fn),
 * its nodes one level deeper (printed by body_fn); docs/GraphIR.md,
 * "Control flow". The default form and the text forms differ only in the
 * two callbacks. */
static void print_regions_ex(struct printer *p, const struct node *n, unsigned depth,
			     void (*body_fn)(void *arg, struct func *r, unsigned depth),
			     void (*name_fn)(void *arg, struct ostream *o, const struct node *param), void *arg)
{
	struct ostream *o = p->o;
	if (n->kind == NK_Fn) {
		/* fn(%a : T, ...) -> R { body } */
		print_sig(p, node_region(n, 0), n->types, n->nres, name_fn, arg);
		os_write(o, " {\n", 3);
		body_fn(arg, node_region(n, 0), depth + 1);
		print_indent(o, depth);
		os_putc(o, '}');
		return;
	}
	for (unsigned i = 0, nr = node_num_regions(n); i < nr; i++) {
		struct func *r = node_region(n, i);
		if (i) {
			print_indent(o, depth);
			os_write(o, "} ", 2);
		} else {
			os_putc(o, ' ');
		}
		os_write(o, r->name, strlen(r->name));
		if (region_num_params(r) || n->kind != NK_If)
			print_params(p, r, name_fn, arg);
		os_write(o, " {\n", 3);
		body_fn(arg, r, depth + 1);
	}
	if (node_num_regions(n)) {
		print_indent(o, depth);
		os_putc(o, '}');
	}
}

static void print_body(struct printer *p, struct func *f, unsigned depth);

static void body_default(void *arg, struct func *r, unsigned depth) { print_body(arg, r, depth); }

static void name_default(void *arg, struct ostream *o, const struct node *param)
{
	(void)arg;
	print_local_name(o, param->name);
}

static void print_regions(struct printer *p, const struct node *n, unsigned depth)
{
	print_regions_ex(p, n, depth, body_default, name_default, p);
}

/* f's nodes in print order, each on its own line at the indentation of
 * depth (0: a function's body); a region's parameters are printed by its
 * owner's line, not here. */
static void print_body(struct printer *p, struct func *f, unsigned depth)
{
	struct node **order;
	size_t n = print_order(f, &order);
	for (size_t i = 0; i < n; i++) {
		if (order[i]->kind == NK_RegionArg)
			continue;
		print_indent(p->o, depth);
		print_node(p, order[i]);
		print_regions(p, order[i], depth);
		os_putc(p->o, '\n');
	}
	free(order);
}

/* The default form's text of storage node n and of function f's body
 * (print_module.c prints modules and functions with them). */
void node_printer_storage(struct node_printer *np, struct node *n) { print_storage(&np->p, n); }

void node_printer_body(struct node_printer *np, struct func *f)
{
	np->p.m = f->mod;
	print_body(&np->p, f, 0);
}

void node_printer_sig(struct node_printer *np, struct func *f,
		      void (*name_fn)(void *arg, struct ostream *o, const struct node *param), void *arg)
{
	if (func_has_sig(f))
		print_sig(&np->p, f, f->sig_res, f->nsig_res, name_fn ? name_fn : name_default, arg);
}

/* ------------------------------------------------------------------ */
/* Weight files of a module written elsewhere                           */

const char *init_rebase_file(struct arena *a, const char *file, const char *from_dir, const char *to_dir)
{
	char *p = path_rebase(file, from_dir, to_dir);
	if (!p)
		return NULL;
	const char *r = strcmp(p, file) != 0 ? arena_strdup(a, p) : file;
	free(p);
	return r;
}

int init_rebase_end(char **base_dir, char *to, int rc)
{
	if (rc == 0) {
		free(*base_dir);
		*base_dir = to;
	} else {
		free(to);
	}
	return rc;
}

int module_rebase_files(struct module *m, const char *out_path, struct diag *d)
{
	char *to = path_dir(out_path);
	int rc = 0;
	module_for_each_global(m, n) {
		struct constant *c = as_constant(n);
		if (!c || c->init != INIT_FILE || c->file[0] == '/')
			continue;
		const char *p = init_rebase_file(&m->arena, c->file, m->base_dir, to);
		if (!p) {
			diag_error(d, n->loc, "cannot locate weight file \"%s\" of constant @%s: %s", c->file, n->name,
				   strerror(errno));
			rc = -1;
		} else {
			c->file = p;
		}
	}
	/* the constants not loaded yet load from the new paths */
	return init_rebase_end(&m->base_dir, to, rc);
}
