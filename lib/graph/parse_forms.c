/* parse_forms.c - the reader's actions for module attributes and for the
 * nested expressions of GNF and BBNF (grammar/glow.y; docs/GraphIR.md).
 *
 * Nesting. The statement actions of parse.c keep one statement's state in
 * the parser (kind, operand and attribute vectors, name). A nested
 * expression is a statement inside an operand list: its begin saves that
 * state on a stack and starts a fresh one (with the emptied vectors the last
 * expression at that depth used, so a GNF text does not allocate per
 * expression), its end builds the node through
 * the ordinary statement action (glow_p_node) under a generated name, then
 * restores the outer statement and hands back the new value as its
 * operand. Attribute lists live in the parser's int and float vectors,
 * which are never cleared inside a statement, so the outer statement's
 * list indices stay valid. Nodes are created in post-order, which is the
 * forms' canonical order (print_forms.c).
 *
 * Names. A nested value has no name in the text; it gets the decimal
 * position at which it is created, the name the forms print it under,
 * unless that name is taken (a fresh name then).
 */
#include "glow.tab.h"

#include "graph/forms.h"
#include "support/hashmap.h"
#include "support/textparse.h"
#include "support/util.h"
#include "support/vec.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The statement state parse.c keeps in the parser, saved while a nested
 * expression is read. The vectors are saved byte for byte (VEC types are
 * anonymous, hence memcpy). */
struct nest_frame {
	int kind;
	bool bad, has_name, has_pred, has_types, stmt_open;
	struct tp_span name;
	uint64_t name_hash;
	struct loc name_loc, kind_loc, pred_loc, types_loc, cur_attr_loc;
	struct glow_val pred;
	int cur_attr;
	unsigned char ops[sizeof(((struct glow_parser *)0)->ops)];
	unsigned char oplocs[sizeof(((struct glow_parser *)0)->oplocs)];
	unsigned char tys[sizeof(((struct glow_parser *)0)->tys)];
	unsigned char tylocs[sizeof(((struct glow_parser *)0)->tylocs)];
	unsigned char attrs[sizeof(((struct glow_parser *)0)->attrs)];
	char gen[32]; /* the generated name of the nested value */
};

/* The statement vectors of one nesting depth, kept for the next nested
 * expression at that depth (a GNF text nests in most statements). */
struct nest_vecs {
	unsigned char ops[sizeof(((struct glow_parser *)0)->ops)];
	unsigned char oplocs[sizeof(((struct glow_parser *)0)->oplocs)];
	unsigned char tys[sizeof(((struct glow_parser *)0)->tys)];
	unsigned char tylocs[sizeof(((struct glow_parser *)0)->tylocs)];
	unsigned char attrs[sizeof(((struct glow_parser *)0)->attrs)];
};

struct glow_forms {
	VEC(struct nest_frame) stack;
	VEC(struct nest_vecs) pool; /* by depth: vectors emptied, not freed */
	/* the module attribute being read */
	char *key;
	struct loc key_loc, val_loc;
	bool bad, in_list, has_val;
	struct mattr_val val;
	VEC(struct mattr_val) items;
};

static struct node *forms_retry(struct glow_parser *p, const char *name, size_t len, struct value pred);
static void forms_free(struct glow_parser *p);

/* The forms' state, made on first use with the hooks parse.c calls
 * (glow.y: fx_retry, fx_free). */
static struct glow_forms *fx(struct glow_parser *p)
{
	if (!p->fx) {
		p->fx = xcalloc(1, sizeof(*p->fx));
		p->fx_retry = forms_retry;
		p->fx_free = forms_free;
	}
	return p->fx;
}

/* ---- module attributes ---- */

void glow_p_mattr_name(struct glow_parser *p, const struct tp_span *key, struct loc loc)
{
	struct glow_forms *x = fx(p);
	free(x->key);
	x->key = xstrdup(tp_span_cstr(&p->r, key));
	x->key_loc = loc;
	x->bad = x->in_list = x->has_val = false;
	vec_clear(&x->items);
	if (module_attr(p->m, x->key)) {
		glow_p_error(p, loc, "duplicate module attribute '%s'", x->key);
		x->bad = true;
	}
}

/* A scalar: the value, or the next item of the list being read. */
static void scalar(struct glow_parser *p, struct mattr_val v, struct loc loc)
{
	struct glow_forms *x = fx(p);
	if (x->in_list) {
		vec_push(&x->items, v);
		return;
	}
	x->val = v;
	x->val_loc = loc;
	x->has_val = true;
}

void glow_p_mattr_num(struct glow_parser *p, const struct tp_num *v)
{
	struct mattr_val m = {v->is_int ? MA_INT : MA_FLOAT, v->i, v->f, NULL, NULL, 0};
	scalar(p, m, v->loc);
}

void glow_p_mattr_bool(struct glow_parser *p, int b, struct loc loc)
{
	struct mattr_val m = {MA_BOOL, b != 0, 0, NULL, NULL, 0};
	scalar(p, m, loc);
}

void glow_p_mattr_str(struct glow_parser *p, const struct tp_span *s, struct loc loc)
{
	/* a stable copy now: the scratch buffer is reused by the next string */
	const char *t = tp_span_cstr(&p->r, s);
	struct mattr_val m = {MA_STRING, 0, 0, arena_strdup(&p->m->arena, t), NULL, 0};
	scalar(p, m, loc);
}

void glow_p_mattr_list(struct glow_parser *p, bool begin, struct loc loc)
{
	struct glow_forms *x = fx(p);
	if (begin) {
		x->in_list = true;
		vec_clear(&x->items);
		x->val_loc = loc;
		return;
	}
	x->in_list = false;
	struct mattr_val m = {MA_LIST, 0, 0, NULL, x->items.data, (uint32_t)x->items.len};
	x->val = m;
	x->has_val = true;
}

void glow_p_mattr_end(struct glow_parser *p)
{
	struct glow_forms *x = fx(p);
	if (x->bad || !x->has_val)
		return;
	if (strcmp(x->key, "form") == 0) {
		const struct mattr_val *v = &x->val;
		if (v->kind != MA_STRING || graph_form_lookup(v->s, strlen(v->s)) < 0) {
			glow_p_error(p, x->val_loc, "module attribute 'form' must be \"anf\", \"gnf\" or \"bbnf\"");
			return;
		}
	}
	module_set_attr(p->m, x->key, &x->val);
}

/* ---- nested expressions ---- */

static void save(struct glow_parser *p, struct nest_frame *f)
{
	f->kind = p->kind;
	f->bad = p->bad;
	f->has_name = p->has_name;
	f->has_pred = p->has_pred;
	f->has_types = p->has_types;
	f->stmt_open = p->stmt_open;
	f->name = p->name;
	f->name_hash = p->name_hash;
	f->name_loc = p->name_loc;
	f->kind_loc = p->kind_loc;
	f->pred_loc = p->pred_loc;
	f->types_loc = p->types_loc;
	f->cur_attr_loc = p->cur_attr_loc;
	f->pred = p->pred;
	f->cur_attr = p->cur_attr;
	memcpy(f->ops, &p->ops, sizeof f->ops);
	memcpy(f->oplocs, &p->oplocs, sizeof f->oplocs);
	memcpy(f->tys, &p->tys, sizeof f->tys);
	memcpy(f->tylocs, &p->tylocs, sizeof f->tylocs);
	memcpy(f->attrs, &p->attrs, sizeof f->attrs);
}

/* Gives the nested statement at depth the pooled vectors of that depth
 * (empty), or new ones. */
static void take_vecs(struct glow_parser *p, struct glow_forms *x, size_t depth)
{
	while (x->pool.len <= depth) {
		struct nest_vecs z;
		memset(&z, 0, sizeof z);
		vec_push(&x->pool, z);
	}
	struct nest_vecs *v = &x->pool.data[depth];
	memcpy(&p->ops, v->ops, sizeof v->ops);
	memcpy(&p->oplocs, v->oplocs, sizeof v->oplocs);
	memcpy(&p->tys, v->tys, sizeof v->tys);
	memcpy(&p->tylocs, v->tylocs, sizeof v->tylocs);
	memcpy(&p->attrs, v->attrs, sizeof v->attrs);
	memset(v, 0, sizeof *v);
	vec_clear(&p->ops);
	vec_clear(&p->oplocs);
	vec_clear(&p->tys);
	vec_clear(&p->tylocs);
	vec_clear(&p->attrs);
}

/* Returns the nested statement's vectors to the pool of its depth. */
static void give_vecs(struct glow_parser *p, struct glow_forms *x, size_t depth)
{
	struct nest_vecs *v = &x->pool.data[depth];
	memcpy(v->ops, &p->ops, sizeof v->ops);
	memcpy(v->oplocs, &p->oplocs, sizeof v->oplocs);
	memcpy(v->tys, &p->tys, sizeof v->tys);
	memcpy(v->tylocs, &p->tylocs, sizeof v->tylocs);
	memcpy(v->attrs, &p->attrs, sizeof v->attrs);
}

/* Brings the outer statement back (the nested one's vectors must have been
 * given back or freed). */
static void restore(struct glow_parser *p, const struct nest_frame *f)
{
	p->kind = f->kind;
	p->bad = f->bad;
	p->has_name = f->has_name;
	p->has_pred = f->has_pred;
	p->has_types = f->has_types;
	p->stmt_open = f->stmt_open;
	p->name = f->name;
	p->name_hash = f->name_hash;
	p->name_loc = f->name_loc;
	p->kind_loc = f->kind_loc;
	p->pred_loc = f->pred_loc;
	p->types_loc = f->types_loc;
	p->cur_attr_loc = f->cur_attr_loc;
	p->pred = f->pred;
	p->cur_attr = f->cur_attr;
	memcpy(&p->ops, f->ops, sizeof f->ops);
	memcpy(&p->oplocs, f->oplocs, sizeof f->oplocs);
	memcpy(&p->tys, f->tys, sizeof f->tys);
	memcpy(&p->tylocs, f->tylocs, sizeof f->tylocs);
	memcpy(&p->attrs, f->attrs, sizeof f->attrs);
}

/* Deeper nesting is not something a printer writes (FORMS_MAX_NEST); the
 * bound keeps the parser's stacks small on hostile input. */
enum { NEST_LIMIT = 256 };

int glow_p_nest_begin(struct glow_parser *p, const struct tp_span *kind, struct loc loc)
{
	struct glow_forms *x = fx(p);
	if (x->stack.len >= NEST_LIMIT) {
		glow_p_error(p, loc, "expression nested too deeply (more than %d levels)", NEST_LIMIT);
		return -1;
	}
	struct nest_frame f;
	save(p, &f);
	vec_push(&x->stack, f);
	take_vecs(p, x, x->stack.len - 1);
	p->stmt_open = true;
	p->kind = -1;
	p->bad = p->f == NULL;
	p->has_name = false; /* until the kind is checked: glow_p_kind names result-less kinds */
	p->name.s = "";      /* named at the end (glow_p_nest_end); empty until then */
	p->name.len = 0;
	p->name.esc = 0;
	p->has_pred = p->has_types = p->has_lowered = false;
	p->cur_attr = -1;
	glow_p_kind(p, kind, loc);
	if (p->kind >= 0 && node_desc((unsigned)p->kind)->nregions) {
		glow_p_error(p, loc, "%s cannot be nested: a node with regions is a statement",
			     node_kind_name((unsigned)p->kind));
		p->bad = true;
	} else if (p->kind >= 0 && node_desc((unsigned)p->kind)->nres != 1) {
		glow_p_error(p, loc, "%s cannot be nested: only a value with one result can",
			     node_kind_name((unsigned)p->kind));
		p->bad = true;
	}
	p->has_name = true;
	return 0;
}

struct glow_val glow_p_nest_end(struct glow_parser *p, struct loc rparen, const struct type *t, struct loc tloc)
{
	struct glow_forms *x = fx(p);
	struct nest_frame *f = &x->stack.data[x->stack.len - 1];
	struct glow_val v = {NULL, 0, p->kind_loc};
	glow_p_restype(p, t, tloc);
	p->has_types = true;
	if (p->f && !p->bad) {
		/* the name the forms print it under, if free */
		snprintf(f->gen, sizeof f->gen, "%zu", p->f->nnodes);
		if (func_find(p->f, f->gen)) {
			const char *fresh = func_fresh_name(p->f, f->gen);
			snprintf(f->gen, sizeof f->gen, "%s", fresh);
		}
		p->name.s = f->gen;
		p->name.len = (uint32_t)strlen(f->gen);
		p->name.esc = 0;
		p->name_hash = hash_bytes(f->gen, p->name.len);
		p->name_loc = p->kind_loc;
		glow_p_node(p, rparen);
		v.node = func_find(p->f, f->gen);
		if (v.node)
			v.node->bits |= NODE_NAME_MADE; /* glow_p_forms_yield_name may move it */
	}
	struct nest_frame saved = *f;
	x->stack.len--;
	give_vecs(p, x, x->stack.len);
	restore(p, &saved);
	return v;
}

/* The statement's name is taken: if a nested value holds it under the name
 * the reader made up, that value moves to a fresh name and the statement's
 * node is created; NULL otherwise (a redefinition). */
static struct node *forms_retry(struct glow_parser *p, const char *name, size_t len, struct value pred)
{
	if (!p->f || !name)
		return NULL;
	struct node *prev = func_find_hashed(p->f, name, len, hash_bytes(name, len));
	if (!prev || !(prev->bits & NODE_NAME_MADE) || !p->fx)
		return NULL;
	/* only the reader's own nested names: NODE_NAME_MADE is not in the text */
	char base[32];
	snprintf(base, sizeof base, "%.*s", (int)(len < 20 ? len : 20), name);
	const char *fresh = func_fresh_name(p->f, base);
	if (!node_rename(p->f, prev, fresh))
		return NULL;
	prev->bits |= NODE_NAME_MADE;
	return node_create_named(p->f, (unsigned)p->kind, name, len, p->name_hash, p->ops.data, (unsigned)p->ops.len,
				 pred, p->tys.data, (unsigned)p->tys.len, p->has_name ? p->name_loc : p->kind_loc);
}

void glow_p_forms_reset(struct glow_parser *p)
{
	if (!p->fx || !p->fx->stack.len)
		return;
	/* a syntax error inside nested expressions: back to the statement */
	for (size_t i = p->fx->stack.len; i-- > 0;) {
		give_vecs(p, p->fx, i);
		restore(p, &p->fx->stack.data[i]);
	}
	p->fx->stack.len = 0;
}

static void forms_free(struct glow_parser *p)
{
	if (!p->fx)
		return;
	glow_p_forms_reset(p);
	for (size_t i = 0; i < p->fx->pool.len; i++) {
		struct nest_vecs *v = &p->fx->pool.data[i];
		/* each member is a VEC: its data pointer comes first */
		unsigned char *const members[] = {v->ops, v->oplocs, v->tys, v->tylocs, v->attrs};
		for (size_t k = 0; k < GLOW_ARRAY_SIZE(members); k++) {
			void *data;
			memcpy(&data, members[k], sizeof data);
			free(data);
		}
	}
	vec_free(&p->fx->pool);
	vec_free(&p->fx->stack);
	vec_free(&p->fx->items);
	free(p->fx->key);
	free(p->fx);
	p->fx = NULL;
}
