/* parse.c - the semantic actions of the instruction IR parser (gir.y) and
 * ir_module_parse.
 *
 * Every construct goes through the builder (ir.h): text input gets the
 * checks API input gets, plus what only text can get wrong (unknown kinds,
 * names and attributes, bad literals, operand counts). Errors are reported at
 * the offending token and parsing goes on; a name whose definition failed is
 * "poisoned" so its uses do not report again. What both readers do alike
 * (tokens, recovery, messages, poison sets, weight initializers) is the
 * reader shell's (support/textread.h). The legacy kinds and positional
 * lists of the seed design (`pool max [3 3 0]`) are rows of Legacy.def
 * (parse_legacy.c); its other legacy spellings (`broadcast, v`, weights
 * without mutable/constant) are grammar alternatives.
 *
 * Names: the reader checks them against its own scope (parse_scope.c),
 * hashing each name once, and leaves the function's name table deferred
 * (ir_func_defer_names): a parse, verify, print round trip of a million
 * instructions never builds it. The scope is sized from the line count when
 * the program starts.
 */
#define _POSIX_C_SOURCE 200809L
#include "gir.tab.h"
#include "ir/ir.h"
#include "ir/parse.h"
#include "support/io.h"
#include "support/suggest.h"
#include "support/textparse.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The reader shell's poison steps (support/textread.h) on the function's
 * poison set. */
static void poison(struct gir_parser *p, const struct tp_span *name)
{
	tp_poison(&p->r, &p->poison, &p->m->arena, name);
}

static bool poisoned(struct gir_parser *p, const struct tp_span *name) { return tp_poisoned(&p->r, &p->poison, name); }

/* The value defined under a name, through the cache of recent names. */
static struct ir_value *recent_find(struct gir_parser *p, const char *k, size_t len, uint64_t h)
{
	struct ir_value *v = tp_recent_get(p->recent, GIR_RECENT, k, len, h);
	if (v)
		return v;
	v = gir_scope_find(&p->scope, k, len, h);
	if (v)
		tp_recent_put(p->recent, GIR_RECENT, h, &v->name, v);
	return v;
}

/* A new definition under the statement's name (checked by name_free). */
static void define(struct gir_parser *p, struct ir_value *v)
{
	gir_scope_add(&p->scope, v, p->name_hash);
	tp_recent_put(p->recent, GIR_RECENT, p->name_hash, &v->name, v);
}

static void recent_clear(struct gir_parser *p) { memset(p->recent, 0, sizeof p->recent); }

/* ---- syntax errors ---- */

/* What each token is in a syntax error (the others: TP_TC_OTHER). */
static const struct tp_tok_class_row gir_tok_classes[] = {
	{GIR_END, TP_TC_END},     {GIR_IDENT, TP_TC_IDENT}, {GIR_LOCAL, TP_TC_NAME},   {GIR_GLOBAL, TP_TC_NAME},
	{GIR_INT, TP_TC_NUMBER},  {GIR_FLOAT, TP_TC_NUMBER}, {GIR_TYPE, TP_TC_TYPE},   {GIR_STRING, TP_TC_STRING},
};

static const char *describe_lookahead(const struct gir_parser *p, char *buf, size_t size)
{
	return tp_describe_lookahead(&p->r, gir_tok_classes, GLOW_ARRAY_SIZE(gir_tok_classes), p->r.last_end, buf, size);
}

void gir_p_syntax_error(struct gir_parser *p, struct loc loc, const char *const *expected, int nexp)
{
	char la[128];
	tp_syntax_error(&p->r, loc, expected, nexp, describe_lookahead(p, la, sizeof la), NULL);
}

void gir_p_recovered(struct gir_parser *p)
{
	if (p->has_name && p->m)
		poison(p, &p->name);
	p->has_name = false;
	vec_clear(&p->ops);
	vec_clear(&p->attrs);
	vec_clear(&p->nums);
	vec_clear(&p->pos);
}

/* ---- functions ---- */

void gir_p_func_begin(struct gir_parser *p, const struct tp_span *name, struct loc loc)
{
	strmap_free(&p->poison);
	strmap_init(&p->poison);
	gir_scope_free(&p->scope);
	recent_clear(p);
	const char *s = name ? tp_span_cstr(&p->r, name) : "main";
	if (ir_module_find_func(p->m, s)) {
		char b[80];
		if (name)
			gir_p_error(p, loc, "redefinition of function '%s'", tp_span_name(name, '@', b, sizeof b));
		else
			gir_p_error(p, loc, "redefinition of function '@main' (a function without a header)");
		p->f = NULL;
		return;
	}
	p->f = ir_func_create(p->m, s, loc);
	ir_func_defer_names(p->f);
}

/* memory {constant = N, mutable = N, activations = N, alignment = N} */
void gir_p_memory(struct gir_parser *p, struct loc loc)
{
	static const char *const names[] = {"constant", "mutable", "activations", "alignment"};
	uint64_t v[4] = {0};
	bool seen[4] = {false}, ok = true;
	for (size_t i = 0; i < p->attrs.len; i++) {
		const struct gir_attr *a = &p->attrs.data[i];
		int j = -1;
		for (int k = 0; k < 4; k++)
			if (strlen(names[k]) == a->name.len && memcmp(names[k], a->name.s, a->name.len) == 0)
				j = k;
		if (j < 0) {
			gir_p_error(p, a->loc, "unknown memory plan entry '%.*s' (constant, mutable, activations, alignment)",
				    (int)a->name.len, a->name.s);
			ok = false;
		} else if (seen[j]) {
			gir_p_error(p, a->loc, "memory plan entry '%s' given twice", names[j]);
			ok = false;
		} else if (a->vk != GA_NUM || !a->num.is_int || a->num.i < 0) {
			gir_p_error(p, a->vloc, "memory plan entry '%s' must be a non-negative integer", names[j]);
			ok = false;
		} else {
			seen[j] = true;
			v[j] = (uint64_t)a->num.i;
		}
	}
	for (int k = 0; k < 4 && ok; k++)
		if (!seen[k]) {
			gir_p_error(p, loc, "memory plan needs '%s'", names[k]);
			ok = false;
		}
	vec_clear(&p->attrs);
	vec_clear(&p->nums);
	if (!ok || !p->f)
		return;
	p->f->plan.present = true;
	p->f->plan.constant_size = v[0];
	p->f->plan.mutable_size = v[1];
	p->f->plan.activations_size = v[2];
	p->f->plan.alignment = v[3];
	p->f->plan.loc = loc;
}

/* program '{': sizes the scope for the lines up to the next "function"
 * (about one name each), which saves the rehashes of a table of a million
 * names. Every function header holds that word, so the spans counted for
 * successive functions do not overlap: one pass over the input in all,
 * whatever the input. A "function" inside a name or a string only makes
 * the estimate short (the scope then grows). */
void gir_p_program_begin(struct gir_parser *p)
{
	if (!p->f)
		return;
	const char *c = p->r.cur, *end = p->r.lim;
	for (const char *f = c; (f = memchr(f, 'f', (size_t)(p->r.lim - f))) != NULL; f++)
		if (p->r.lim - f >= 8 && memcmp(f, "function", 8) == 0) {
			end = f;
			break;
		}
	size_t lines = 0;
	while (c < end && (c = memchr(c, '\n', (size_t)(end - c))) != NULL) {
		lines++;
		c++;
	}
	gir_scope_reserve(&p->scope, p->scope.len + lines);
}


void gir_p_stmt_begin(struct gir_parser *p, const struct tp_span *name, struct loc loc)
{
	tp_reader_drop(&p->r);
	p->has_name = name != NULL;
	p->name_hashed = false;
	if (name) {
		p->name = *name;
		/* the name is claimed at the end of the statement: a miss in a
		 * table of a million names; start loading its slot now */
		if (!name->esc && p->f) {
			p->name_hash = hash_bytes(name->s, name->len);
			p->name_hashed = true;
#if defined(__GNUC__)
			if (p->scope.cap)
				__builtin_prefetch(&p->scope.tab[(size_t)p->name_hash & (p->scope.cap - 1)]);
#endif
		}
	}
	p->name_loc = loc;
	p->mut = 0;
	p->init.kind = IR_INIT_NONE;
	p->init.is_bool = false;
	p->has_mod = p->has_pos = false;
	vec_clear(&p->ops);
	vec_clear(&p->attrs);
	vec_clear(&p->nums);
	vec_clear(&p->pos);
}

/* The name of the statement is free in the function (one hash, one probe;
 * p->name_hash is set); reports otherwise. */
static bool name_free(struct gir_parser *p)
{
	size_t len;
	const char *k = tp_span_key(&p->r, &p->name, &len);
	uint64_t h = p->name_hashed ? p->name_hash : hash_bytes(k, len);
	p->name_hash = h;
	p->name_hashed = true;
	struct ir_value *prev = gir_scope_find(&p->scope, k, len, h);
	if (!prev && !strmap_getn_h(&p->poison, k, len, h))
		return true;
	char b[80];
	gir_p_error(p, p->name_loc, "redefinition of '%s'", tp_span_name(&p->name, '%', b, sizeof b));
	if (prev)
		diag_note(p->r.d, prev->loc, "previous definition is here");
	return false;
}

/* ---- weights ---- */

/* The plan attribute of a weight or alloc: {offset = N}; -2 after an error,
 * -1 when absent. */
static int64_t plan_offset(struct gir_parser *p, const char *what)
{
	int64_t off = -1;
	for (size_t i = 0; i < p->attrs.len; i++) {
		const struct gir_attr *a = &p->attrs.data[i];
		if (a->name.len != 6 || memcmp(a->name.s, "offset", 6) != 0) {
			gir_p_error(p, a->loc, "%s takes no attribute '%.*s' (only 'offset')", what, (int)a->name.len,
				    a->name.s);
			return -2;
		}
		if (off >= 0) {
			gir_p_error(p, a->loc, "attribute 'offset' given twice");
			return -2;
		}
		if (a->vk != GA_NUM || !a->num.is_int || a->num.i < 0) {
			gir_p_error(p, a->vloc, "offset must be a non-negative integer");
			return -2;
		}
		off = a->num.i;
	}
	return off;
}

void gir_p_weight(struct gir_parser *p, const struct tp_span *tspan, struct loc tloc)
{
	(void)tloc;
	if (!p->f)
		return;
	bool ok = name_free(p);
	const struct type *t = gir_p_type(p, tspan);
	ok &= t != NULL;
	uint8_t *data = NULL;
	char *path = NULL;
	if (ok)
		ok = tp_init_check(&p->r, &p->init, t, p->m->base_dir, &p->m->arena, &data, &path);
	if (ok && p->mut == 2 && p->init.kind == IR_INIT_NONE) {
		gir_p_error(p, p->name_loc, "a constant weight needs an initializer");
		ok = false;
	}
	int64_t off = ok ? plan_offset(p, "a weight") : -2;
	if (!ok || off == -2) {
		free(path);
		poison(p, &p->name);
		return;
	}
	bool is_const = p->mut == 2 || (p->mut == 0 && p->init.kind != IR_INIT_NONE);
	size_t len;
	const char *k = tp_span_key(&p->r, &p->name, &len);
	struct ir_weight *w = ir_weight_create_named(p->f, k, len, t, is_const, p->name_loc);
	define(p, &w->v);
	w->offset = off;
	switch (p->init.kind) {
	case INIT_DENSE:
		w->init = INIT_DENSE;
		w->data = data;
		break;
	case INIT_SPLAT:
		if (elem_is_float((enum elem_kind)t->elem))
			ir_weight_set_splat(w, p->init.num.f, 0);
		else
			ir_weight_set_splat(w, 0, p->init.num.i);
		break;
	case INIT_ZERO: ir_weight_set_zero(w); break;
	case INIT_XAVIER: ir_weight_set_xavier(w, p->init.num.f, (uint64_t)p->init.seed); break;
	case INIT_FILE: ir_weight_set_file(p->m, w, path, (uint64_t)p->init.offset); break;
	default: break;
	}
	free(path);
}

/* ---- instructions ---- */

void gir_p_operand(struct gir_parser *p, int qual, const struct tp_span *name, struct loc qloc, struct loc loc)
{
	struct gir_op op = {NULL, (unsigned)qual, qloc};
	if (p->f) {
		size_t len;
		const char *k = tp_span_key(&p->r, name, &len);
		struct ir_value *v = recent_find(p, k, len, hash_bytes(k, len));
		char b[80];
		if (!v) {
			if (!poisoned(p, name))
				gir_p_error(p, loc, "use of undefined name '%s'", tp_span_name(name, '%', b, sizeof b));
		} else if (!ir_value_is_buffer(v)) {
			gir_p_error(p, loc, "'%s' is not a buffer (it names a %s instruction)",
				    tp_span_name(name, '%', b, sizeof b), instr_kind_name(((struct ir_instr *)(void *)v)->kind));
		} else {
			op.val = v;
		}
	}
	vec_push(&p->ops, op);
}

void gir_p_attr(struct gir_parser *p, const struct tp_span *name, struct loc loc)
{
	struct gir_attr a;
	memset(&a, 0, sizeof a);
	a.name = *name;
	a.loc = loc;
	vec_push(&p->attrs, a);
}

void gir_p_attr_list(struct gir_parser *p, uint32_t start, struct loc loc)
{
	struct gir_attr *a = &vec_last(&p->attrs);
	a->vk = GA_LIST;
	a->start = start;
	a->n = (uint32_t)p->nums.len - start;
	a->vloc = loc;
}

/* Sets attribute idx of in from what was written; false after reporting. */
static bool apply_attr(struct gir_parser *p, struct ir_instr *in, unsigned idx, const struct gir_attr *a)
{
	const struct attr_desc *ad = &instr_desc(in->kind)->attrs[idx];
	union attr_val *av = &in->attrs[idx];
	bool ok = false;
	switch (ad->kind) {
	case AK_INT:
		if ((ok = a->vk == GA_NUM && a->num.is_int))
			av->i = a->num.i;
		break;
	case AK_FLOAT:
		if ((ok = a->vk == GA_NUM))
			av->f = a->num.f;
		break;
	case AK_BOOL:
		if ((ok = a->vk == GA_BOOL))
			av->i = a->num.i;
		break;
	case AK_INTS:
	case AK_FLOATS:
		if (a->vk != GA_LIST)
			break;
		ok = true;
		vec_clear(&p->ti);
		vec_clear(&p->tf);
		for (uint32_t i = 0; i < a->n; i++) {
			const struct tp_num *nm = &p->nums.data[a->start + i];
			if (ad->kind == AK_INTS && !nm->is_int) {
				gir_p_error(p, nm->loc, "attribute '%s' takes a list of integers", ad->name);
				return false;
			}
			vec_push(&p->ti, nm->i);
			vec_push(&p->tf, nm->f);
		}
		if (ad->kind == AK_INTS)
			gir_p_set_ints(p, in, idx, p->ti.data, a->n);
		else
			ir_set_floats(p->m, in, ad->an, p->tf.data, a->n);
		break;
	case AK_ENUM:
		if (a->vk == GA_IDENT) {
			int e = tp_enum_index(ad->enum_values, a->str.s, a->str.len);
			if (e < 0) {
				gir_p_error(p, a->vloc, "attribute '%s' must be one of %s, not '%.*s'", ad->name,
					    ad->enum_values, (int)a->str.len, a->str.s);
				return false;
			}
			av->i = e;
			ok = true;
		}
		break;
	case AK_STRING:
		if ((ok = a->vk == GA_STR))
			av->s = arena_strdup(&p->m->arena, tp_span_cstr(&p->r, &a->str));
		break;
	}
	if (!ok)
		gir_p_error(p, a->vloc, "attribute '%s' of %s takes %s%s", ad->name, instr_kind_name(in->kind),
			    ad->kind == AK_ENUM ? "one of " : attr_kind_desc(ad->kind),
			    ad->kind == AK_ENUM ? ad->enum_values : "");
	return ok;
}

/* The kind named by `kind` (and the legacy modifier): a legacy spelling
 * (Legacy.def) or a row of Instrs.def; -1 after reporting. */
static int resolve_kind(struct gir_parser *p, const struct tp_span *kind, struct loc kloc)
{
	/* a legacy spelling has a modifier, or is no kind of the table */
	int k = p->has_mod ? -2 : instr_kind_lookup(kind->s, kind->len);
	if (k < 0)
		k = gir_legacy_kind(p, kind, kloc);
	if (k == -2) {
		struct suggest sg;
		suggest_init(&sg, kind->s, kind->len);
		for (unsigned i = 0; i < IK_COUNT; i++)
			suggest_offer(&sg, instr_kind_name(i), strlen(instr_kind_name(i)));
		gir_p_error(p, kloc, "unknown instruction kind '%.*s'%s%s%s", (int)kind->len, kind->s,
			    sg.best ? "; did you mean '" : "", sg.best ? sg.best : "", sg.best ? "'?" : "");
		return -1;
	}
	return k;
}

/* Builds the statement's instruction of kind k (its name, type, operands
 * and attributes as read); NULL after reporting. */
static struct ir_instr *build_instr(struct gir_parser *p, int k, struct loc kloc, const struct tp_span *tspan,
				   struct loc tloc)
{
	bool ok = true;
	if (p->has_name)
		ok = name_free(p);
	const struct instr_desc *d = instr_desc((unsigned)k);
	const struct type *t = NULL;
	if (tspan) {
		if (!(d->flags & IF_TYPED)) {
			gir_p_error(p, tloc, "%s takes no type", d->name);
			ok = false;
		} else {
			t = gir_p_type(p, tspan);
			ok &= t != NULL;
		}
	} else if (d->flags & IF_TYPED) {
		gir_p_error(p, kloc, "%s needs a type", d->name);
		ok = false;
	}
	if ((d->flags & IF_TYPED) && !p->has_name) {
		gir_p_error(p, kloc, "%s defines a buffer and needs a name (%%name = %s ...)", d->name, d->name);
		ok = false;
	}
	if (p->ops.len != d->nops) {
		gir_p_error(p, kloc, "%s takes %u operand%s, got %zu", d->name, d->nops, d->nops == 1 ? "" : "s",
			    p->ops.len);
		ok = false;
	}
	struct ir_value *ops[IR_MAX_OPS];
	for (size_t i = 0; i < p->ops.len && i < IR_MAX_OPS; i++) {
		ops[i] = p->ops.data[i].val;
		ok &= ops[i] != NULL;
	}
	if (!ok) {
		if (p->has_name)
			poison(p, &p->name);
		return NULL;
	}
	struct ir_instr *in;
	if (p->has_name) {
		size_t len;
		const char *key = tp_span_key(&p->r, &p->name, &len);
		in = ir_instr_create_named(p->f, (unsigned)k, key, len, t, ops, d->nops, p->name_loc);
		define(p, &in->v);
	} else {
		in = ir_instr_create(p->f, (unsigned)k, NULL, t, ops, d->nops, NULL, kloc);
	}
	for (unsigned i = 0; i < d->nops; i++)
		in->ops[i].qual = (uint8_t)p->ops.data[i].qual;
	bool set[32] = {false};
	if (p->has_pos)
		ok &= gir_legacy_positional(p, in, set);
	for (size_t i = 0; i < p->attrs.len && ok; i++) {
		const struct gir_attr *a = &p->attrs.data[i];
		if (k == IK_alloc && a->name.len == 6 && memcmp(a->name.s, "offset", 6) == 0) {
			if (in->offset >= 0) {
				gir_p_error(p, a->loc, "attribute 'offset' given twice");
				ok = false;
			} else if (a->vk != GA_NUM || !a->num.is_int || a->num.i < 0) {
				gir_p_error(p, a->vloc, "offset must be a non-negative integer");
				ok = false;
			} else {
				in->offset = a->num.i;
			}
			continue;
		}
		int idx = instr_attr_index((unsigned)k, a->name.s, a->name.len);
		if (idx < 0) {
			struct suggest sg;
			suggest_init(&sg, a->name.s, a->name.len);
			for (unsigned j = 0; j < d->nattrs; j++)
				suggest_offer(&sg, d->attrs[j].name, strlen(d->attrs[j].name));
			gir_p_error(p, a->loc, "%s has no attribute '%.*s'%s%s%s", d->name, (int)a->name.len, a->name.s,
				    sg.best ? "; did you mean '" : "", sg.best ? sg.best : "", sg.best ? "'?" : "");
			ok = false;
		} else if (set[idx]) {
			gir_p_error(p, a->loc, "attribute '%.*s' given twice", (int)a->name.len, a->name.s);
			ok = false;
		} else {
			set[idx] = true;
			ok &= apply_attr(p, in, (unsigned)idx, a);
		}
	}
	for (unsigned i = 0; i < d->nattrs && ok; i++)
		if (d->attrs[i].required && !set[i]) {
			gir_p_error(p, kloc, "%s needs attribute '%s'", d->name, d->attrs[i].name);
			ok = false;
		}
	if (!ok) {
		ir_instr_erase(p->f, in);
		recent_clear(p);
		if (p->has_name)
			poison(p, &p->name);
		return NULL;
	}
	return in;
}

void gir_p_instr(struct gir_parser *p, const struct tp_span *kind, struct loc kloc, const struct tp_span *tspan,
		 struct loc tloc)
{
	if (!p->f)
		return;
	int k = resolve_kind(p, kind, kloc);
	if (k >= 0 && instr_is_block((unsigned)k)) {
		gir_p_error(p, kloc, "'%s' is not written by name: a block is '{ ... }' after if or loop, and ends with '}'",
			    instr_kind_name((unsigned)k));
		k = -1;
	}
	if (k < 0) {
		if (p->has_name)
			poison(p, &p->name);
		return;
	}
	build_instr(p, k, kloc, tspan, tloc);
}

/* ---- blocks ---- */

/* if/loop operands '{': the opening instruction, built now so that the
 * block's instructions follow it. */
void gir_p_block_open(struct gir_parser *p, unsigned kind, struct loc kloc)
{
	bool ok = p->f && build_instr(p, (int)kind, kloc, NULL, kloc) != NULL;
	vec_push(&p->blocks, ok);
}

/* An else or end where the block's opening instruction was built: the
 * instruction (no name, no operands). */
static void block_mark(struct gir_parser *p, unsigned kind, struct loc loc)
{
	if (p->f && p->blocks.len && vec_last(&p->blocks))
		ir_instr_create(p->f, kind, NULL, NULL, NULL, 0, NULL, loc);
}

/* '} else {' of an if */
void gir_p_block_else(struct gir_parser *p, struct loc loc) { block_mark(p, IK_else, loc); }

/* the '}' that closes the innermost block */
void gir_p_block_end(struct gir_parser *p, struct loc loc)
{
	block_mark(p, IK_end, loc);
	if (p->blocks.len)
		p->blocks.len--;
}

/* ---- entry point ---- */

/* The module read from buf (NULL when the reader could not start), with
 * the number of errors reported in *errors (TP_READER_ENTRY_POINTS). */
static struct ir_module *parse(struct type_ctx *types, const char *buf, size_t len, const struct input *in,
				const char *filename, struct diag *d, int *errors)
{
	gir_legacy_check();
	_Static_assert((int)IR_INIT_NONE == (int)TP_INIT_NONE, "a weight without initializer");
	struct gir_parser p;
	memset(&p, 0, sizeof p);
	if (!tp_reader_begin(&p.r, buf, len, in, filename, d, TP_LEVEL_INSTR))
		return NULL;
	p.types = types;
	p.m = ir_module_create(types);
	ir_module_set_base_dir(p.m, filename);
	strmap_init(&p.poison);
	*errors = tp_reader_end(&p.r, gir_yyparse(&p));
	gir_scope_free(&p.scope);
	strmap_free(&p.poison);
	vec_free(&p.pos);
	vec_free(&p.ops);
	vec_free(&p.attrs);
	vec_free(&p.nums);
	vec_free(&p.ti);
	vec_free(&p.tf);
	vec_free(&p.blocks);
	return p.m;
}

TP_READER_ENTRY_POINTS(struct ir_module, ir_module_parse, ir_module_parse_input, parse, ir_module_verify,
		       ir_module_destroy)
