/* parse.c - the graph IR reader: module_parse and the semantic actions of
 * grammar/glow.y.
 *
 * Design: the grammar only recognizes the generic shape of the text; every
 * name is resolved here against the tables (node_kind_lookup,
 * node_attr_index, elem_lookup) and the IR is built through the public
 * builder (module_add_placeholder, module_add_constant, func_create,
 * node_create_pred, node_set_*), so text input gets exactly the checks API
 * input gets, plus the ones only text can get wrong (names, counts, attribute
 * spelling), each reported at the offending token.
 *
 * Performance: tokens are spans into the source; a name is decoded into one
 * reusable scratch buffer only to be copied once into the module arena by
 * the builder, and looked up without copying when it has no escapes. Lists
 * accumulate in vectors of the parser state, reused for every statement.
 * Dense hex decodes straight into the constant's arena payload.
 *
 * Recovery: a statement with a semantic error is not built; its name goes to
 * a poison set so later uses do not report again. Syntax errors resume at
 * the next statement line (see glow.re, glow.y).
 *
 * What the .glow and .gir readers do alike (tokens and recovery, messages,
 * poison sets, weight initializers) is the reader shell's
 * (support/textread.h); this file holds what only the graph IR has.
 */
#define _POSIX_C_SOURCE 200809L
#include "glow.tab.h"

#include "graph/graph.h"
#include "graph/lowered.h"
#include "support/io.h"
#include "support/suggest.h"
#include "support/textparse.h"
#include "support/util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- helpers ---- */

/* The reader shell's poison steps (support/textread.h) on this parser's
 * sets (gpoison for globals, lpoison for the function's values). */
static void poison(struct glow_parser *p, struct strmap *set, const struct tp_span *name)
{
	tp_poison(&p->r, set, &p->m->arena, name);
}

static bool poisoned(struct glow_parser *p, const struct strmap *set, const struct tp_span *name)
{
	return tp_poisoned(&p->r, set, name);
}

static void note_previous(struct glow_parser *p, struct loc loc)
{
	diag_note(p->r.d, loc, "previous definition is here");
}

/* ---- syntax errors ---- */

/* What each token is in a syntax error (the others: TP_TC_OTHER). */
static const struct tp_tok_class_row glow_tok_classes[] = {
	{GT_END, TP_TC_END},      {GT_IDENT, TP_TC_IDENT}, {GT_TYPE, TP_TC_IDENT}, {GT_LOCAL, TP_TC_NAME},
	{GT_GLOBAL, TP_TC_NAME},  {GT_INT, TP_TC_NUMBER},  {GT_DIMX, TP_TC_NUMBER}, {GT_FLOAT, TP_TC_NUMBER},
	{GT_STRING, TP_TC_STRING},
};

static const char *describe_lookahead(const struct glow_parser *p, char *buf, size_t size)
{
	const char *e = p->r.last_end;
	/* one token for "float<16 x 16>": named as its first, an identifier */
	if (p->r.last_tok == GT_TYPE)
		for (e = p->r.last_start; e < p->r.last_end && *e != '<';)
			e++;
	return tp_describe_lookahead(&p->r, glow_tok_classes, GLOW_ARRAY_SIZE(glow_tok_classes), e, buf, size);
}

static const char *describe_previous(const struct glow_parser *p, char *buf, size_t size)
{
	if (p->r.prev_tok == GT_GLOBAL && !p->in_func) {
		switch (p->decl_tok) {
		case GT_KW_PLACEHOLDER: return "placeholder name";
		case GT_KW_CONSTANT: return "constant name";
		case GT_KW_FUNC: return "function name";
		case GT_KW_MODULE: return "module name";
		default: break;
		}
	}
	if (p->r.prev_tok == '>' || p->r.prev_tok == GT_TYPE)
		return "type";
	if (p->r.prev_tok == GT_STRING)
		return "string";
	return tp_tok_text(p->r.prev_start, p->r.prev_end, buf, size);
}

/* A missing token right after a complete one is "expected X after Y". */
void glow_p_syntax_error(struct glow_parser *p, struct loc loc, const char *const *expected, int nexp)
{
	char la[128], prev[96];
	bool after = p->r.last_tok != GT_END && p->r.prev_start;
	tp_syntax_error(&p->r, loc, expected, nexp, describe_lookahead(p, la, sizeof la),
			after ? describe_previous(p, prev, sizeof prev) : NULL);
}

/* After `error SYNC`: forget the half-parsed statement or declaration. */
void glow_p_recovered(struct glow_parser *p)
{
	if (p->stmt_open && p->has_name)
		poison(p, &p->lpoison, &p->name);
	p->stmt_open = false;
	p->ndims = 0;
	p->dims_bad = false;
	vec_clear(&p->nums);
}

/* ---- types ---- */

void glow_p_dim(struct glow_parser *p, int64_t d, struct loc loc)
{
	if (p->ndims >= GLOW_MAX_RANK) {
		if (p->ndims == GLOW_MAX_RANK)
			glow_p_error(p, loc, "tensor rank exceeds the maximum of %d", GLOW_MAX_RANK);
		p->ndims++;
		p->dims_bad = true;
		return;
	}
	if (d < 0) {
		glow_p_error(p, loc, "bad dimension %lld: dimensions are non-negative", (long long)d);
		p->dims_bad = true;
	}
	p->dims[p->ndims++] = (uint64_t)d;
}

const struct type *glow_p_type(struct glow_parser *p, const struct tp_span *elem, struct loc loc, struct loc lt)
{
	unsigned rank = p->ndims;
	bool bad = p->dims_bad;
	p->ndims = 0;
	p->dims_bad = false;
	int ek = elem_lookup(elem->s, elem->len);
	if (ek < 0) {
		char t[64];
		glow_p_error(p, loc, "unknown element kind %s", tp_tok_text(elem->s, elem->s + elem->len, t, sizeof t));
		return NULL;
	}
	bool quant = elem_is_quantized((enum elem_kind)ek);
	if (p->q_has && !quant) {
		glow_p_error(p, p->q_loc, "quantization parameters on non-quantized element kind '%s'",
			     elem_name((enum elem_kind)ek));
		bad = true;
	} else if (!p->q_has && quant) {
		glow_p_error(p, lt, "quantized element kind '%s' needs a scale and an offset: %s[scale:offset]<...>",
			     elem_name((enum elem_kind)ek), elem_name((enum elem_kind)ek));
		bad = true;
	}
	float scale = 0;
	int32_t offset = 0;
	if (p->q_has && quant) {
		scale = (float)p->q_scale.f;
		if (!(scale > 0) || isinf(scale)) {
			glow_p_error(p, p->q_scale.loc, "quantization scale must be a positive finite number");
			bad = true;
		}
		if (!p->q_off.is_int || p->q_off.i < INT32_MIN || p->q_off.i > INT32_MAX) {
			glow_p_error(p, p->q_off.loc, "quantization offset must be a 32-bit integer");
			bad = true;
		}
		offset = (int32_t)p->q_off.i;
	}
	if (bad)
		return NULL;
	if (!type_shape_ok((enum elem_kind)ek, p->dims, rank)) {
		glow_p_error(p, lt, "tensor type too large (more than 2^48 bytes)");
		return NULL;
	}
	/* most statements repeat a recent type: a small cache spares hashing
	 * the whole struct type for the type table */
	uint64_t h = (uint64_t)ek * 31 + rank;
	for (unsigned i = 0; i < rank; i++)
		h = h * 1000003 + p->dims[i];
	const struct type **slot = &p->tcache[h % GLOW_TCACHE];
	const struct type *t = *slot;
	if (t && t->elem == ek && t->rank == rank && t->scale == scale && t->offset == offset &&
	    memcmp(t->dims, p->dims, rank * sizeof(uint64_t)) == 0)
		return t;
	if (quant)
		t = type_get_q(p->types, (enum elem_kind)ek, p->dims, rank, scale, offset);
	else
		t = type_get(p->types, (enum elem_kind)ek, p->dims, rank);
	*slot = t;
	return t;
}

/* ---- module level ---- */

void glow_p_module(struct glow_parser *p, const struct tp_span *name, struct loc loc)
{
	(void)loc;
	p->m->name = arena_strdup(&p->m->arena, tp_span_cstr(&p->r, name));
}

/* The global name is free; reports a redefinition otherwise. */
static bool global_free(struct glow_parser *p, const struct tp_span *name, struct loc loc)
{
	size_t len;
	const char *k = tp_span_key(&p->r, name, &len);
	struct node *prev = strmap_getn(&p->m->gnames, k, len);
	if (!prev)
		return true;
	char b[80];
	glow_p_error(p, loc, "redefinition of '%s'", tp_span_name(name, '@', b, sizeof b));
	note_previous(p, prev->loc);
	return false;
}

void glow_p_placeholder(struct glow_parser *p, const struct tp_span *name, struct loc loc, const struct type *t)
{
	if (!global_free(p, name, loc))
		return;
	if (!t) {
		poison(p, &p->gpoison, name);
		return;
	}
	struct placeholder *ph = module_add_placeholder(p->m, tp_span_cstr(&p->r, name), t, loc);
	ph->trainable = (p->ph_flags & 1) != 0;
	ph->is_static = (p->ph_flags & 2) != 0;
}

void glow_p_constant(struct glow_parser *p, const struct tp_span *name, struct loc loc, const struct type *t,
		     struct loc tloc)
{
	(void)tloc;
	if (!global_free(p, name, loc))
		return;
	uint8_t *data = NULL;
	char *path = NULL;
	if (!t || !tp_init_check(&p->r, &p->init, t, p->m->base_dir, &p->m->arena, &data, &path)) {
		poison(p, &p->gpoison, name);
		return;
	}
	tp_reader_drop(&p->r);
	struct constant *c = module_add_constant(p->m, tp_span_cstr(&p->r, name), t, loc);
	c->init = (enum init_kind)p->init.kind;
	switch (p->init.kind) {
	case INIT_DENSE: c->data = data; break;
	case INIT_SPLAT:
		if (elem_is_float((enum elem_kind)t->elem))
			c->splat_f = p->init.num.f;
		else
			c->splat_i = p->init.num.i;
		break;
	case INIT_XAVIER:
		c->fan_in = p->init.num.f;
		c->seed = (uint64_t)p->init.seed;
		break;
	case INIT_FILE:
		c->file = arena_strdup(&p->m->arena, path);
		free(path);
		c->file_offset = (uint64_t)p->init.offset;
		if (!constant_data(p->m, c, p->r.d))
			p->r.errors++;
		break;
	default: break;
	}
}

/* ---- functions ---- */

/* The number of lines up to the function's closing brace (the first '}'
 * that starts a line), an upper bound of its node count in canonical text:
 * the name table is sized once instead of growing through a dozen rehashes
 * that each revisit every name. */
static size_t body_lines(const struct glow_parser *p)
{
	const char *c = p->r.cur, *e = p->r.lim;
	size_t lines = 0;
	while (c < e) {
		const char *nl = memchr(c, '\n', (size_t)(e - c));
		if (!nl)
			break;
		lines++;
		c = nl + 1;
		if (c < e && *c == '}')
			break;
	}
	return lines;
}

void glow_p_func_begin(struct glow_parser *p, const struct tp_span *name, struct loc loc)
{
	p->in_func = true;
	strmap_free(&p->lpoison);
	strmap_init(&p->lpoison);
	const char *s = tp_span_cstr(&p->r, name);
	struct func *prev = module_find_func(p->m, s);
	if (prev) {
		char b[80];
		glow_p_error(p, loc, "redefinition of function '%s'", tp_span_name(name, '@', b, sizeof b));
		note_previous(p, prev->loc);
		p->f = NULL;
		return;
	}
	p->f = func_create(p->m, s, loc);
	memset(p->recent, 0, sizeof p->recent);
	vec_clear(&p->tys); /* a signature's result types come next (parse_call.c) */
	vec_clear(&p->tylocs);
	func_reserve_names(p->f, body_lines(p));
}

void glow_p_func_end(struct glow_parser *p)
{
	p->in_func = false;
	p->f = NULL;
	glow_p_regions_free(p);
}

void glow_p_stmt_begin(struct glow_parser *p, const struct tp_span *name, struct loc loc)
{
	p->stmt_open = true;
	p->kind = -1;
	p->bad = p->f == NULL;
	p->has_name = name != NULL;
	p->has_pred = p->has_types = false;
	p->cur_attr = -1;
	vec_clear(&p->ops);
	vec_clear(&p->oplocs);
	vec_clear(&p->tys);
	vec_clear(&p->tylocs);
	vec_clear(&p->attrs);
	vec_clear(&p->ints);
	vec_clear(&p->floats);
	vec_clear(&p->nums);
	if (!name || !p->f)
		return;
	p->name = *name;
	p->name_loc = loc;
	size_t len;
	const char *k = tp_span_key(&p->r, name, &len);
	p->name_hash = hash_bytes(k, len);
	/* The builder will look the new name up in the function's table at the
	 * end of the statement (with this hash): a miss on a table of a million
	 * names. Start loading its slot now. */
	func_prefetch_name(p->f, p->name_hash);
}

const char *node_kind_suggest(const char *s, size_t len)
{
	struct suggest sg;
	suggest_init(&sg, s, len);
	for (unsigned k = 0; k < NK_COUNT; k++)
		if (k != NK_Placeholder && k != NK_Constant)
			suggest_offer(&sg, node_kind_name(k), strlen(node_kind_name(k)));
	return sg.best;
}

void glow_p_kind(struct glow_parser *p, const struct tp_span *name, struct loc loc)
{
	p->kind_loc = loc;
	int k = node_kind_lookup(name->s, name->len);
	char t[64];
	if (k < 0) {
		const char *near = node_kind_suggest(name->s, name->len);
		glow_p_error(p, loc, "unknown node kind %s%s%s%s", tp_tok_text(name->s, name->s + name->len, t, sizeof t),
			     near ? "; did you mean '" : "", near ? near : "", near ? "'?" : "");
		p->bad = true;
		return;
	}
	const struct node_desc *d = node_desc((unsigned)k);
	if (d->flags & NF_STORAGE) {
		glow_p_error(p, loc, "%s cannot appear in a function: declare it at module level", d->name);
		p->bad = true;
		return;
	}
	p->kind = k;
	if (p->has_name && d->nres == 0) {
		glow_p_error(p, p->name_loc, "%s has no results and takes no name", d->name);
		p->bad = true;
	}
}

/* Operands mostly name nodes defined a few lines up: a small direct-mapped
 * cache of recent names in front of the function's symbol table saves a
 * cache miss into a table of a million names. */
static struct node *recent_find(struct glow_parser *p, const char *k, size_t len)
{
	uint64_t h = hash_bytes(k, len);
	struct node *n = tp_recent_get(p->recent, GLOW_RECENT, k, len, h);
	if (n)
		return n;
	n = func_find_hashed(p->f, k, len, h);
	if (n)
		tp_recent_put(p->recent, GLOW_RECENT, h, (const char *const *)&n->name, n);
	return n;
}

struct glow_val glow_p_local(struct glow_parser *p, const struct tp_span *name, struct loc loc, bool has_res,
			     int64_t res, struct loc resloc)
{
	struct glow_val v = {NULL, 0, loc};
	if (!p->f)
		return v;
	size_t len;
	const char *k = tp_span_key(&p->r, name, &len);
	struct node *n = recent_find(p, k, len);
	char b[80];
	if (!n) {
		if (!poisoned(p, &p->lpoison, name))
			glow_p_error(p, loc, "use of undefined value '%s'", tp_span_name(name, '%', b, sizeof b));
		return v;
	}
	if (!glow_p_scope_check(p, n, name, loc))
		return v;
	if (has_res && (res < 0 || res >= n->nres)) {
		glow_p_error(p, resloc, "result index %lld out of range: '%s' has %u result%s", (long long)res,
			     tp_span_name(name, '%', b, sizeof b), n->nres, n->nres == 1 ? "" : "s");
		return v;
	}
	v.node = n;
	v.res = has_res ? (uint32_t)res : 0;
	return v;
}

struct glow_val glow_p_global(struct glow_parser *p, const struct tp_span *name, struct loc loc)
{
	struct glow_val v = {NULL, 0, loc};
	size_t len;
	const char *k = tp_span_key(&p->r, name, &len);
	v.node = strmap_getn(&p->m->gnames, k, len);
	if (!v.node && !poisoned(p, &p->gpoison, name)) {
		char b[80];
		glow_p_error(p, loc, "use of undefined global '%s'", tp_span_name(name, '@', b, sizeof b));
	}
	return v;
}

void glow_p_operand(struct glow_parser *p, const struct glow_val *v)
{
	if (!v->node && v->res == GLOW_CALLEE)
		return; /* an attribute, not an operand (glow_p_callee) */
	struct value val = {v->node, v->res};
	vec_push(&p->ops, val);
	vec_push(&p->oplocs, v->loc);
	if (!v->node)
		p->bad = true;
}

void glow_p_lowered(struct glow_parser *p, const struct tp_span *name, struct loc loc, int64_t res, struct loc resloc)
{
	p->has_lowered = false;
	if (name->len == 0) {
		glow_p_error(p, loc, "lowered_from needs the name of a node");
		p->bad = true;
	} else if (res < 0 || res > 255) {
		glow_p_error(p, resloc, "lowered_from: result index %lld is out of range [0, 255]", (long long)res);
		p->bad = true;
	} else {
		p->has_lowered = true;
		p->lowered_name = *name;
		p->lowered_res = res;
		p->lowered_loc = loc;
	}
}

void glow_p_pred(struct glow_parser *p, const struct glow_val *v, struct loc loc)
{
	p->has_pred = true;
	p->pred = *v;
	p->pred_loc = loc;
	if (!v->node)
		p->bad = true;
}

void glow_p_restype(struct glow_parser *p, const struct type *t, struct loc loc)
{
	vec_push(&p->tys, t);
	vec_push(&p->tylocs, loc);
	if (!t)
		p->bad = true;
}

/* ---- attributes ---- */

/* The attribute the value being parsed belongs to, NULL if unknown. */
static const struct attr_desc *cur_attr(struct glow_parser *p)
{
	if (p->kind < 0 || p->cur_attr < 0)
		return NULL;
	return &node_desc((unsigned)p->kind)->attrs[p->cur_attr];
}

static void attr_mismatch(struct glow_parser *p, const struct attr_desc *a, struct loc loc, const char *got)
{
	glow_p_error(p, loc, "attribute '%s' of %s expects %s, got %s", a->name, node_kind_name((unsigned)p->kind),
		     attr_kind_desc(a->kind), got);
	p->bad = true;
}

static void attr_push(struct glow_parser *p, struct glow_pattr a)
{
	a.idx = p->cur_attr;
	a.loc = p->cur_attr_loc;
	vec_push(&p->attrs, a);
}

void glow_p_attr_name(struct glow_parser *p, const struct tp_span *name, struct loc loc)
{
	p->cur_attr = -1;
	p->cur_attr_loc = loc;
	if (p->kind < 0)
		return;
	const struct node_desc *d = node_desc((unsigned)p->kind);
	const char *s = tp_span_cstr(&p->r, name);
	int idx = node_attr_index((unsigned)p->kind, s);
	if (idx < 0) {
		struct suggest sg;
		suggest_init(&sg, s, strlen(s));
		for (unsigned i = 0; i < d->nattrs; i++)
			suggest_offer(&sg, d->attrs[i].name, strlen(d->attrs[i].name));
		if (sg.best) {
			glow_p_error(p, loc, "unknown attribute '%s' for %s; did you mean '%s'?", s, d->name, sg.best);
			p->bad = true;
			return;
		}
		char list[256];
		size_t len = 0;
		list[0] = 0;
		for (unsigned i = 0; i < d->nattrs && len < sizeof list; i++)
			len += (size_t)snprintf(list + len, sizeof list - len, "%s%s", i ? ", " : "", d->attrs[i].name);
		if (d->nattrs)
			glow_p_error(p, loc, "unknown attribute '%s' for %s (it has: %s)", s, d->name, list);
		else
			glow_p_error(p, loc, "unknown attribute '%s' for %s (it has none)", s, d->name);
		p->bad = true;
		return;
	}
	if (p->kind == NK_Call && d->attrs[idx].an == AN_callee) {
		glow_p_error(p, loc, "a Call names the module function it calls as its first operand: Call(@f, args...)");
		p->bad = true;
		return;
	}
	for (size_t i = 0; i < p->attrs.len; i++)
		if (p->attrs.data[i].idx == idx) {
			glow_p_error(p, loc, "duplicate attribute '%s'", s);
			diag_note(p->r.d, p->attrs.data[i].loc, "first given here");
			p->bad = true;
			return;
		}
	p->cur_attr = idx;
}

void glow_p_attr_num(struct glow_parser *p, const struct tp_num *v)
{
	const struct attr_desc *a = cur_attr(p);
	if (!a)
		return;
	struct glow_pattr pa;
	if (a->kind == AK_INT && v->is_int)
		pa.u.i = v->i;
	else if (a->kind == AK_FLOAT)
		pa.u.f = v->f;
	else {
		attr_mismatch(p, a, v->loc, v->is_int ? "an integer" : "a floating-point number");
		return;
	}
	attr_push(p, pa);
}

void glow_p_attr_bool(struct glow_parser *p, int b, struct loc loc)
{
	const struct attr_desc *a = cur_attr(p);
	if (!a)
		return;
	if (a->kind != AK_BOOL) {
		attr_mismatch(p, a, loc, b ? "'true'" : "'false'");
		return;
	}
	struct glow_pattr pa;
	pa.u.i = b;
	attr_push(p, pa);
}

void glow_p_attr_str(struct glow_parser *p, const struct tp_span *s, struct loc loc)
{
	const struct attr_desc *a = cur_attr(p);
	if (!a)
		return;
	if (a->kind != AK_STRING) {
		attr_mismatch(p, a, loc, "a string");
		return;
	}
	struct glow_pattr pa;
	pa.u.s = *s;
	attr_push(p, pa);
}

void glow_p_attr_enum(struct glow_parser *p, const struct tp_span *s, struct loc loc)
{
	const struct attr_desc *a = cur_attr(p);
	if (!a)
		return;
	char t[64];
	if (a->kind != AK_ENUM) {
		char got[96];
		snprintf(got, sizeof got, "identifier %s", tp_tok_text(s->s, s->s + s->len, t, sizeof t));
		attr_mismatch(p, a, loc, got);
		return;
	}
	int idx = tp_enum_index(a->enum_values, s->s, s->len);
	if (idx >= 0) {
		struct glow_pattr pa;
		pa.u.i = idx;
		attr_push(p, pa);
		return;
	}
	char list[256];
	size_t len = 0;
	for (const char *v = a->enum_values; *v && len < sizeof list; v++)
		len += (size_t)snprintf(list + len, sizeof list - len, "%s", *v == '|' ? ", " : (char[2]){*v, 0});
	glow_p_error(p, loc, "unknown value %s for attribute '%s' of %s; expected one of: %s",
		     tp_tok_text(s->s, s->s + s->len, t, sizeof t), a->name, node_kind_name((unsigned)p->kind), list);
	p->bad = true;
}

void glow_p_attr_list(struct glow_parser *p, struct loc loc)
{
	const struct attr_desc *a = cur_attr(p);
	if (!a) {
		vec_clear(&p->nums);
		return;
	}
	struct glow_pattr pa;
	if (a->kind == AK_INTS) {
		pa.u.list.start = (uint32_t)p->ints.len;
		for (size_t i = 0; i < p->nums.len; i++) {
			if (!p->nums.data[i].is_int) {
				glow_p_error(p, p->nums.data[i].loc, "attribute '%s' of %s expects integers",
					     a->name, node_kind_name((unsigned)p->kind));
				p->bad = true;
				vec_clear(&p->nums);
				return;
			}
			vec_push(&p->ints, p->nums.data[i].i);
		}
	} else if (a->kind == AK_FLOATS) {
		pa.u.list.start = (uint32_t)p->floats.len;
		for (size_t i = 0; i < p->nums.len; i++)
			vec_push(&p->floats, p->nums.data[i].f);
	} else {
		attr_mismatch(p, a, loc, "a list");
		vec_clear(&p->nums);
		return;
	}
	pa.u.list.n = (uint32_t)p->nums.len;
	vec_clear(&p->nums);
	attr_push(p, pa);
}

/* ---- nodes ---- */

/* Checks the statement against its kind; 0 if the node may be built. */
static int stmt_check(struct glow_parser *p, const struct node_desc *d, struct loc rparen)
{
	int bad = 0;
	unsigned nops = (unsigned)p->ops.len, ntys = (unsigned)p->tys.len;
	if (!node_desc_ops_ok(d, nops)) {
		unsigned want = node_desc_min_ops(d);
		struct loc at = nops > want ? p->oplocs.data[want] : rparen;
		glow_p_error(p, at, "%s takes %s%u operand%s, got %u", d->name, d->variadic ? "at least " : "", want,
			     want == 1 ? "" : "s", nops);
		bad = 1;
	}
	if (d->nres == 0 && p->has_types) {
		glow_p_error(p, p->tylocs.data[0], "%s has no results and takes no type", d->name);
		bad = 1;
	} else if (d->nres > 0 && !p->has_types) {
		glow_p_error(p, p->kind_loc, "%s needs %u result type%s (': type')", d->name, d->nres,
			     d->nres == 1 ? "" : "s");
		bad = 1;
	} else if (!node_desc_res_ok(d, ntys)) {
		struct loc at = ntys > d->nres ? p->tylocs.data[d->nres] : p->tylocs.data[ntys - 1];
		glow_p_error(p, at, "%s has %s%u result%s, got %u type%s", d->name, d->res_variadic ? "at least " : "",
			     d->nres, d->nres == 1 ? "" : "s", ntys, ntys == 1 ? "" : "s");
		bad = 1;
	}
	if (d->nres > 0 && !p->has_name) {
		glow_p_error(p, p->kind_loc, "%s has results and needs a name ('%%name = %s(...)')", d->name,
			     d->name);
		bad = 1;
	}
	for (unsigned i = 0; i < d->nattrs; i++) {
		if (!d->attrs[i].required)
			continue;
		bool given = false;
		for (size_t j = 0; j < p->attrs.len && !given; j++)
			given = p->attrs.data[j].idx == (int)i;
		if (!given) {
			glow_p_error(p, p->kind_loc, "%s requires attribute '%s'", d->name, d->attrs[i].name);
			bad = 1;
		}
	}
	return bad;
}

/* Builds the statement's node; a kind with regions opens a frame for them
 * (parse_region.c), also when the statement failed (its regions are still
 * read, into nothing). */
static struct node *build_node(struct glow_parser *p, struct loc rparen);

void glow_p_node(struct glow_parser *p, struct loc rparen)
{
	struct node *n = build_node(p, rparen);
	p->stmt_node = n;
	p->frame_pushed = p->kind >= 0 && node_desc((unsigned)p->kind)->nregions;
	if (p->frame_pushed) {
		struct glow_region_frame fr = {n, p->kind, p->f, 0, p->kind_loc};
		vec_push(&p->frames, fr);
	}
}

static struct node *build_node(struct glow_parser *p, struct loc rparen)
{
	p->stmt_open = false;
	if (p->kind < 0 || p->bad || stmt_check(p, node_desc((unsigned)p->kind), rparen)) {
		if (p->has_name && p->f)
			poison(p, &p->lpoison, &p->name);
		return NULL;
	}
	const struct node_desc *d = node_desc((unsigned)p->kind);
	struct value pred = {NULL, 0};
	if (p->has_pred) {
		pred.node = p->pred.node;
		pred.res = p->pred.res;
	}
	size_t len = 0;
	const char *name = p->has_name ? tp_span_key(&p->r, &p->name, &len) : NULL;
	tp_reader_drop(&p->r);
	struct node *n = node_create_named(p->f, (unsigned)p->kind, name, len, p->name_hash, p->ops.data,
					   (unsigned)p->ops.len, pred, p->tys.data, (unsigned)p->tys.len,
					   p->has_name ? p->name_loc : p->kind_loc);
	if (!n) /* a nested value's made-up name may move aside (parse_forms.c) */
		n = p->fx_retry ? p->fx_retry(p, name, len, pred) : NULL;
	if (!n) {
		/* the name is taken: a redefinition (found by the builder's own
		 * insertion probe, so a fresh name costs no extra look-up) */
		char b[80];
		struct node *prev = func_find_hashed(p->f, name, len, p->name_hash);
		glow_p_error(p, p->name_loc, "redefinition of '%s'", tp_span_name(&p->name, '%', b, sizeof b));
		note_previous(p, prev->loc);
		return NULL;
	}
	if (name)
		tp_recent_put(p->recent, GLOW_RECENT, p->name_hash, (const char *const *)&n->name, n);
	if (p->has_lowered) {
		if (n->nres)
			lowered_set(p->m, n, tp_span_cstr(&p->r, &p->lowered_name), (unsigned)p->lowered_res);
		else
			glow_p_error(p, p->lowered_loc, "lowered_from: %s has no result", d->name);
	}
	/* attribute values by index (the statement was checked against the
	 * kind's table), with the copying node_set_* does */
	for (size_t i = 0; i < p->attrs.len; i++) {
		const struct glow_pattr *pa = &p->attrs.data[i];
		const struct attr_desc *a = &d->attrs[pa->idx];
		union attr_val *av = &n->attrs[pa->idx];
		switch (a->kind) {
		case AK_INT:
		case AK_BOOL:
		case AK_ENUM: av->i = pa->u.i; break;
		case AK_FLOAT: av->f = pa->u.f; break;
		case AK_INTS:
			av->ints.v = arena_alloc8(&p->m->arena, pa->u.list.n * sizeof(int64_t));
			if (pa->u.list.n)
				memcpy(av->ints.v, p->ints.data + pa->u.list.start, pa->u.list.n * sizeof(int64_t));
			av->ints.n = pa->u.list.n;
			break;
		case AK_FLOATS:
			av->floats.v = arena_memdup(&p->m->arena,
						    pa->u.list.n ? p->floats.data + pa->u.list.start : NULL,
						    pa->u.list.n * sizeof(double));
			av->floats.n = pa->u.list.n;
			break;
		case AK_STRING: av->s = arena_strdup(&p->m->arena, tp_span_cstr(&p->r, &pa->u.s)); break;
		}
	}
	return n;
}

/* ---- entry point ---- */

/* The module read from buf (NULL when the reader could not start), with
 * the number of errors reported in *errors (TP_READER_ENTRY_POINTS). */
static struct module *parse(struct type_ctx *types, const char *buf, size_t len, const struct input *in,
			    const char *filename, struct diag *d, int *errors)
{
	node_desc_init();
	struct glow_parser p;
	memset(&p, 0, sizeof p);
	if (!tp_reader_begin(&p.r, buf, len, in, filename, d, TP_LEVEL_GRAPH))
		return NULL;
	p.types = types;
	p.m = module_create(types, NULL);
	module_set_base_dir(p.m, filename);
	p.kind = -1;
	p.cur_attr = -1;
	strmap_init(&p.gpoison);
	strmap_init(&p.lpoison);
	int rc = glow_yyparse(&p);
	if (p.calls_end) /* callees may be defined after their calls (parse_call.c) */
		p.calls_end(&p, rc == 0);
	*errors = tp_reader_end(&p.r, rc);
	if (p.fx_free)
		p.fx_free(&p);
	glow_p_regions_free(&p);
	strmap_free(&p.gpoison);
	strmap_free(&p.lpoison);
	vec_free(&p.ops);
	vec_free(&p.oplocs);
	vec_free(&p.tys);
	vec_free(&p.tylocs);
	vec_free(&p.attrs);
	vec_free(&p.ints);
	vec_free(&p.floats);
	vec_free(&p.nums);
	return p.m;
}

TP_READER_ENTRY_POINTS(struct module, module_parse, module_parse_input, parse, module_verify, module_destroy)
