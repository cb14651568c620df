/* cl.c - the command-line parser (see cl.h).
 *
 * One left-to-right scan of argv. An argument starting with '-' (other than
 * "-" itself) is split at the first '=' into a name and an inline value; the
 * name, with one or two leading dashes stripped, is looked up in the table.
 * Value options without an inline value take the next argument whatever it
 * looks like, so "-o -" writes to standard output as in LLVM's tools.
 */
#include "cl.h"
#include "util.h"

#include <stdlib.h>
#include <string.h>

static const struct cl_opt *find_opt(const struct cl_tool *t, const char *name, size_t len)
{
	for (size_t i = 0; i < t->nopts; i++)
		if (strlen(t->opts[i].name) == len && memcmp(t->opts[i].name, name, len) == 0)
			return &t->opts[i];
	return NULL;
}

static bool takes_value(const struct cl_opt *o)
{
	return o->kind == CL_STRING || o->kind == CL_LIST || o->kind == CL_ENUM || o->kind == CL_UINT;
}

static void list_push(struct cl_list *l, const char *s)
{
	l->v = xgrow(l->v, &l->cap, l->n + 1, sizeof(*l->v));
	l->v[l->n++] = s;
}

/* Index of s in "a|b|c", -1 if absent. */
static int enum_index(const char *values, const char *s)
{
	size_t len = strlen(s);
	int i = 0;
	for (const char *p = values;; i++) {
		size_t n = strcspn(p, "|");
		if (n == len && memcmp(p, s, n) == 0)
			return i;
		if (!p[n])
			return -1;
		p += n + 1;
	}
}

/* Stores value (NULL for flags given without one) into the option. */
static enum cl_result apply(const struct cl_opt *o, const char *value, struct diag *d)
{
	switch (o->kind) {
	case CL_FLAG:
		if (!value || strcmp(value, "true") == 0 || strcmp(value, "1") == 0)
			*(bool *)o->dest = true;
		else if (strcmp(value, "false") == 0 || strcmp(value, "0") == 0)
			*(bool *)o->dest = false;
		else {
			diag_error(d, LOC_NONE, "option '-%s' takes true or false, not '%s'", o->name, value);
			return CL_ERROR;
		}
		return CL_OK;
	case CL_SET:
		if (value) {
			diag_error(d, LOC_NONE, "option '-%s' does not take a value", o->name);
			return CL_ERROR;
		}
		*(int *)o->dest = o->ival;
		return CL_OK;
	case CL_STRING: *(const char **)o->dest = value; return CL_OK;
	case CL_LIST: list_push(o->dest, value); return CL_OK;
	case CL_ENUM: {
		int i = enum_index(o->values, value);
		if (i < 0) {
			diag_error(d, LOC_NONE, "option '-%s' takes one of %s, not '%s'", o->name, o->values, value);
			return CL_ERROR;
		}
		*(int *)o->dest = i;
		return CL_OK;
	}
	case CL_UINT: {
		char *end;
		unsigned long v = strtoul(value, &end, 10);
		if (!*value || *end || *value == '-' || v > 0xffffffffUL) {
			diag_error(d, LOC_NONE, "option '-%s' takes a number, not '%s'", o->name, value);
			return CL_ERROR;
		}
		*(unsigned *)o->dest = (unsigned)v;
		return CL_OK;
	}
	}
	unreachable("bad option kind");
}

static enum cl_result positional(const struct cl_tool *t, const char *arg, struct diag *d)
{
	if (!t->positional || (t->max_positional && t->positional->n >= t->max_positional)) {
		diag_error(d, LOC_NONE, "unexpected argument '%s'", arg);
		return CL_ERROR;
	}
	list_push(t->positional, arg);
	return CL_OK;
}

enum cl_result cl_parse(const struct cl_tool *t, int argc, char **argv, struct diag *d)
{
	bool only_positional = false;
	for (int i = 1; i < argc; i++) {
		const char *arg = argv[i];
		if (only_positional || arg[0] != '-' || arg[1] == '\0') {
			if (positional(t, arg, d) != CL_OK)
				return CL_ERROR;
			continue;
		}
		if (strcmp(arg, "--") == 0) {
			only_positional = true;
			continue;
		}
		const char *name = arg + (arg[1] == '-' ? 2 : 1);
		const char *eq = strchr(name, '=');
		size_t len = eq ? (size_t)(eq - name) : strlen(name);
		const char *value = eq ? eq + 1 : NULL;
		const struct cl_opt *o = find_opt(t, name, len);
		if (!o) {
			if (!eq && (strcmp(name, "help") == 0 || strcmp(name, "h") == 0)) {
				cl_print_help(t, stdout);
				return CL_EXIT;
			}
			if (!eq && strcmp(name, "version") == 0) {
				cl_print_version(t, stdout);
				return CL_EXIT;
			}
			diag_error(d, LOC_NONE, "unknown option '%.*s'", (int)(name - arg + (ptrdiff_t)len), arg);
			return CL_ERROR;
		}
		if (takes_value(o) && !value) {
			if (i + 1 >= argc) {
				diag_error(d, LOC_NONE, "option '-%s' requires a value", o->name);
				return CL_ERROR;
			}
			value = argv[++i];
		}
		if (apply(o, value, d) != CL_OK)
			return CL_ERROR;
	}
	return CL_OK;
}

void cl_print_version(const struct cl_tool *t, FILE *out)
{
	fprintf(out, "%s (glow toolchain) version %s\n", t->name, GLOW_VERSION);
}

/* "-name=<value>" (or "-name") as shown in help; returns its length. */
static int opt_spelling(const struct cl_opt *o, char *buf, size_t size)
{
	if (!takes_value(o))
		return snprintf(buf, size, "-%s", o->name);
	const char *sep = o->name[1] ? "=" : " "; /* -o <file>, -name=<value> */
	if (o->kind == CL_ENUM && !o->value_name)
		return snprintf(buf, size, "-%s%s<%s>", o->name, sep, o->values);
	return snprintf(buf, size, "-%s%s<%s>", o->name, sep, o->value_name ? o->value_name : "value");
}

void cl_print_help(const struct cl_tool *t, FILE *out)
{
	static const struct cl_opt builtin[] = {
		{"help", CL_FLAG, NULL, NULL, "Display available options", 0, NULL},
		{"version", CL_FLAG, NULL, NULL, "Display the version of this program", 0, NULL},
	};
	char buf[128];
	int w = 0;
	for (size_t i = 0; i < t->nopts; i++) {
		int n = opt_spelling(&t->opts[i], buf, sizeof buf);
		if (n > w)
			w = n;
	}
	if (w < 9)
		w = 9;
	fprintf(out, "OVERVIEW: %s\n\nUSAGE: %s %s\n\nOPTIONS:\n", t->overview, t->name, t->usage);
	for (size_t i = 0; i < t->nopts; i++) {
		opt_spelling(&t->opts[i], buf, sizeof buf);
		fprintf(out, "  %-*s - %s\n", w, buf, t->opts[i].help);
	}
	for (size_t i = 0; i < GLOW_ARRAY_SIZE(builtin); i++) {
		snprintf(buf, sizeof buf, "--%s", builtin[i].name);
		fprintf(out, "  %-*s - %s\n", w, buf, builtin[i].help);
	}
}

void cl_free(const struct cl_tool *t)
{
	for (size_t i = 0; i < t->nopts; i++)
		if (t->opts[i].kind == CL_LIST) {
			struct cl_list *l = t->opts[i].dest;
			free(l->v);
			l->v = NULL;
			l->n = l->cap = 0;
		}
	if (t->positional) {
		free(t->positional->v);
		t->positional->v = NULL;
		t->positional->n = t->positional->cap = 0;
	}
}
