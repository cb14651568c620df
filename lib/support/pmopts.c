/* pmopts.c - pass options of the pass manager (passmgr.h, "pass options").
 *
 * An entry's options are parsed once, when its pipeline text is compiled:
 * every option of the registry's table gets a slot in the entry (only the
 * pass's own are used), filled with the default (the table's, or the one a
 * tool set from its own option), then with the values written in braces.
 * Strings and list items are copied into one block the entry owns, so the
 * text may go away. A bad option or value is reported at its column in the
 * pipeline text when the text is a registered source.
 */
#define _POSIX_C_SOURCE 200809L
#include "passmgr.h"
#include "pmopts.h"
#include "suggest.h"
#include "util.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int pm_find_option(const struct pm_registry *reg, const char *pass, const char *name)
{
	for (size_t i = 0; i < reg->noptions; i++)
		if (strcmp(reg->options[i].pass, pass) == 0 && strcmp(reg->options[i].name, name) == 0)
			return (int)i;
	return -1;
}

static const char *type_desc(enum pm_opt_type t)
{
	switch (t) {
	case PM_OPT_INT: return "an integer";
	case PM_OPT_FLOAT: return "a number";
	case PM_OPT_BOOL: return "true or false";
	case PM_OPT_STRING: return "a string";
	case PM_OPT_LIST: return "a comma-separated list";
	}
	return "?";
}

const char *pm_opt_type_name(enum pm_opt_type t)
{
	switch (t) {
	case PM_OPT_INT: return "int";
	case PM_OPT_FLOAT: return "float";
	case PM_OPT_BOOL: return "bool";
	case PM_OPT_STRING: return "string";
	case PM_OPT_LIST: return "list";
	}
	return "?";
}

/* Whether x lies in range ("[lo,hi)", "(lo,inf]", ...; NULL: any). A range
 * the table spells wrong is a table bug. */
static bool in_range(const char *range, double x)
{
	if (!range)
		return true;
	char *e;
	bool lo_in = range[0] == '[';
	double lo = strtod(range + 1, &e);
	if (*e != ',')
		unreachable("bad option range in table");
	double hi = strtod(e + 1, &e);
	bool hi_in = *e == ']';
	if (*e != ']' && *e != ')')
		unreachable("bad option range in table");
	return (lo_in ? x >= lo : x > lo) && (hi_in ? x <= hi : x < hi);
}

/* Parses value (len bytes) as option o into *v, copying text into mem
 * (an arena-like block of at least 2 * len + 16 bytes the caller owns,
 * advanced by *used). Returns NULL, or what is wrong with it. */
static const char *parse_value(const struct pm_option *o, const char *value, size_t len, union pm_optval *v,
			       char *mem, size_t *used)
{
	char buf[64];
	switch (o->type) {
	case PM_OPT_INT:
	case PM_OPT_FLOAT: {
		if (len == 0 || len >= sizeof buf)
			return type_desc(o->type);
		memcpy(buf, value, len);
		buf[len] = 0;
		char *e;
		errno = 0;
		if (o->type == PM_OPT_INT) {
			long long x = strtoll(buf, &e, 10);
			if (*e || errno)
				return type_desc(o->type);
			if (!in_range(o->range, (double)x))
				return o->range;
			v->i = x;
		} else {
			double x = strtod(buf, &e);
			if (*e || !isfinite(x))
				return type_desc(o->type);
			if (!in_range(o->range, x))
				return o->range;
			v->f = x;
		}
		return NULL;
	}
	case PM_OPT_BOOL:
		if (len == 4 && memcmp(value, "true", 4) == 0)
			v->b = true;
		else if (len == 5 && memcmp(value, "false", 5) == 0)
			v->b = false;
		else
			return type_desc(o->type);
		return NULL;
	case PM_OPT_STRING:
		memcpy(mem + *used, value, len);
		mem[*used + len] = 0;
		v->s = mem + *used;
		*used += len + 1;
		return NULL;
	case PM_OPT_LIST: {
		/* the items, then the pointer array (aligned) */
		size_t n = 0, start = *used;
		char *items = mem + start;
		memcpy(items, value, len);
		items[len] = 0;
		*used += len + 1;
		if (len) {
			n = 1;
			for (size_t i = 0; i < len; i++)
				if (items[i] == ',') {
					items[i] = 0;
					n++;
				}
		}
		*used = (*used + 7) & ~(size_t)7;
		const char **arr = (const char **)(void *)(mem + *used);
		*used += (n ? n : 1) * sizeof(char *);
		const char *c = items;
		for (size_t i = 0; i < n; i++) {
			if (!*c)
				return "a comma-separated list of non-empty items";
			arr[i] = c;
			c += strlen(c) + 1;
		}
		v->l.v = arr;
		v->l.n = n;
		return NULL;
	}
	}
	return "?";
}

/* Room parse_value may take for a value of len bytes. */
static size_t value_room(size_t len) { return 2 * len + 16 + (len + 1) * sizeof(char *); }

void pm_opts_init_defaults(struct pm *pm)
{
	const struct pm_registry *reg = pm->reg;
	if (!reg->noptions)
		return;
	pm->opt_defaults = xcalloc(reg->noptions, sizeof(union pm_optval));
	pm->opt_default_mem = xcalloc(reg->noptions, sizeof(char *));
	for (size_t i = 0; i < reg->noptions; i++) {
		const struct pm_option *o = &reg->options[i];
		size_t len = strlen(o->def), used = 0;
		pm->opt_default_mem[i] = xmalloc(value_room(len));
		if (parse_value(o, o->def, len, &pm->opt_defaults[i], pm->opt_default_mem[i], &used))
			unreachable("bad option default in registry");
	}
}

void pm_opts_free_defaults(struct pm *pm)
{
	for (size_t i = 0; pm->opt_default_mem && i < pm->reg->noptions; i++)
		free(pm->opt_default_mem[i]);
	free(pm->opt_default_mem);
	free(pm->opt_defaults);
}

void pm_opts_entry_free(struct pm_entry *e)
{
	free(e->opts);
	free(e->given);
	free(e->optmem);
	e->opts = NULL;
	e->given = NULL;
	e->optmem = NULL;
}

/* The location of p inside the pipeline text being compiled. */
static struct loc at(const struct pm_text *t, const char *p)
{
	if (!t->file || p < t->base)
		return LOC_NONE;
	return loc_make(t->file, (uint32_t)(p - t->base));
}

static void unknown_option(struct pm *pm, const struct pm_text *t, const struct pm_pass *p, const char *name,
			   size_t len)
{
	const struct pm_registry *reg = pm->reg;
	struct suggest s;
	suggest_init(&s, name, len);
	size_t n = 0;
	for (size_t i = 0; i < reg->noptions; i++)
		if (strcmp(reg->options[i].pass, p->name) == 0) {
			suggest_offer(&s, reg->options[i].name, strlen(reg->options[i].name));
			n++;
		}
	if (!n)
		diag_error(pm->diag, at(t, name), "pass '%s' has no options", p->name);
	else if (s.best)
		diag_error(pm->diag, at(t, name), "unknown option '%.*s' of pass '%s'; did you mean '%.*s'?", (int)len,
			   name, p->name, (int)s.best_len, s.best);
	else
		diag_error(pm->diag, at(t, name), "unknown option '%.*s' of pass '%s' (see -list-passes)", (int)len,
			   name, p->name);
}

int pm_opts_parse(struct pm *pm, const struct pm_text *t, struct pm_entry *e, const char *text, size_t len)
{
	const struct pm_registry *reg = pm->reg;
	const struct pm_pass *p = e->pass;
	if (reg->noptions) {
		e->opts = xmalloc(reg->noptions * sizeof(*e->opts));
		memcpy(e->opts, pm->opt_defaults, reg->noptions * sizeof(*e->opts));
		e->given = xcalloc(reg->noptions, sizeof(bool));
	}
	if (!text)
		return 0;
	e->optmem = xmalloc(value_room(len));
	size_t used = 0;
	const char *c = text, *end = text + len;
	int bad = 0;
	for (;;) {
		while (c < end && (*c == ' ' || *c == '\t'))
			c++;
		if (c == end)
			break;
		const char *name = c;
		while (c < end && *c != '=' && *c != ' ' && *c != '\t')
			c++;
		size_t nlen = (size_t)(c - name);
		int idx = -1;
		for (size_t i = 0; i < reg->noptions && idx < 0; i++)
			if (strcmp(reg->options[i].pass, p->name) == 0 && strlen(reg->options[i].name) == nlen &&
			    memcmp(reg->options[i].name, name, nlen) == 0)
				idx = (int)i;
		if (idx < 0) {
			unknown_option(pm, t, p, name, nlen);
			return -1;
		}
		const struct pm_option *o = &reg->options[idx];
		if (c == end || *c != '=') {
			diag_error(pm->diag, at(t, c), "option '%s' of pass '%s' needs a value: %s=<%s>", o->name, p->name,
				   o->name, pm_opt_type_name(o->type));
			return -1;
		}
		const char *val = ++c;
		size_t vlen;
		if (c < end && *c == '"') {
			const char *q = memchr(c + 1, '"', (size_t)(end - c - 1));
			if (!q) {
				diag_error(pm->diag, at(t, c), "unterminated string in the options of pass '%s'", p->name);
				return -1;
			}
			val = c + 1;
			vlen = (size_t)(q - val);
			c = q + 1;
		} else {
			while (c < end && *c != ' ' && *c != '\t')
				c++;
			vlen = (size_t)(c - val);
		}
		if (e->given[idx]) {
			diag_error(pm->diag, at(t, name), "option '%s' of pass '%s' given twice", o->name, p->name);
			return -1;
		}
		const char *why = parse_value(o, val, vlen, &e->opts[idx], e->optmem, &used);
		if (why) {
			diag_error(pm->diag, at(t, val), "bad value '%.*s' for option '%s' of pass '%s': expected %s%s",
				   (int)vlen, val, o->name, p->name, o->range && why == o->range ? "a value in " : "",
				   why);
			bad = -1;
			break;
		}
		e->given[idx] = true;
	}
	return bad;
}

/* The value slot of option idx for the running pass, type-checked. */
static const union pm_optval *slot(const struct pm_ctx *ctx, int idx, enum pm_opt_type t)
{
	const struct pm_registry *reg = ctx->pm->reg;
	if (idx < 0 || (size_t)idx >= reg->noptions || reg->options[idx].type != t ||
	    strcmp(reg->options[idx].pass, ctx->pass->name) != 0)
		unreachable("pass option read with the wrong index, type or pass");
	if (ctx->entry && ctx->entry->opts)
		return &ctx->entry->opts[idx];
	return &ctx->pm->opt_defaults[idx];
}

int64_t pm_opt_int(const struct pm_ctx *ctx, int idx) { return slot(ctx, idx, PM_OPT_INT)->i; }
double pm_opt_float(const struct pm_ctx *ctx, int idx) { return slot(ctx, idx, PM_OPT_FLOAT)->f; }
bool pm_opt_bool(const struct pm_ctx *ctx, int idx) { return slot(ctx, idx, PM_OPT_BOOL)->b; }
const char *pm_opt_string(const struct pm_ctx *ctx, int idx) { return slot(ctx, idx, PM_OPT_STRING)->s; }
struct pm_optlist pm_opt_list(const struct pm_ctx *ctx, int idx) { return slot(ctx, idx, PM_OPT_LIST)->l; }

bool pm_opt_given(const struct pm_ctx *ctx, int idx)
{
	(void)slot(ctx, idx, ctx->pm->reg->options[idx].type);
	return ctx->entry && ctx->entry->given && ctx->entry->given[idx];
}

void pm_opts_print_list(const struct pm_registry *reg, const struct pm_pass *p, FILE *out)
{
	for (size_t i = 0; i < reg->noptions; i++) {
		const struct pm_option *o = &reg->options[i];
		if (strcmp(o->pass, p->name) != 0)
			continue;
		fprintf(out, "      %s=<%s>", o->name, pm_opt_type_name(o->type));
		if (o->range)
			fprintf(out, " in %s", o->range);
		fprintf(out, " (default: %s) - %s\n", *o->def ? o->def : "none", o->desc);
	}
	for (size_t c = 0; c < reg->nconds; c++)
		if (p->flags & reg->conds[c].flag)
			fprintf(out, "      %s: %s\n", reg->conds[c].post ? "ensures" : "requires", reg->conds[c].name);
}
