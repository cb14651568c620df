/* cl.c - the command-line parser (see cl.h).
 *
 * One left-to-right scan of argv. An argument starting with '-' (other than
 * "-" itself) is split at the first '=' into a name and an inline value; the
 * name, with one or two leading dashes stripped, is looked up in the table.
 * Value options without an inline value take the next argument whatever it
 * looks like, so "-o -" writes to standard output as in LLVM's tools.
 */
#include "cl.h"
#include "suggest.h"
#include "util.h"

#include <ctype.h>
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

int cl_enum_index(const char *values, const char *s)
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
		int i = cl_enum_index(o->values, value);
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

/* The table's options whose names are spelt like name[0..len) but for a
 * few edits, as a did-you-mean for an unknown option; NULL if none. The
 * built-in --help and --version are candidates too, the hidden --help-man
 * and --help-completion are not; neither are names shorter than min_len. */
static const char *near_option(const struct cl_tool *t, const char *name, size_t len, size_t min_len)
{
	struct suggest s;
	suggest_init(&s, name, len);
	for (size_t i = 0; i < t->nopts; i++)
		if (strlen(t->opts[i].name) >= min_len)
			suggest_offer(&s, t->opts[i].name, strlen(t->opts[i].name));
	suggest_offer(&s, "help", 4);
	suggest_offer(&s, "version", 7);
	return s.best;
}

/* The one-letter option that takes a value and whose letter starts name, for
 * Graphviz's attached spelling (-Tsvg for -T svg); NULL if none. */
static const struct cl_opt *attached_opt(const struct cl_tool *t, const char *name)
{
	for (size_t i = 0; i < t->nopts; i++)
		if (t->opts[i].name[0] == name[0] && !t->opts[i].name[1] && takes_value(&t->opts[i]))
			return &t->opts[i];
	return NULL;
}

/* The CL_SET options applied so far, one per destination, to warn when a
 * later one overrides an earlier one with another value (-O2 -O3). */
struct set_seen {
	const struct cl_opt **v;
	size_t n, cap;
};

static void set_note(struct set_seen *seen, const struct cl_opt *o, struct diag *d)
{
	for (size_t i = 0; i < seen->n; i++)
		if (seen->v[i]->dest == o->dest) {
			if (seen->v[i]->ival != o->ival)
				diag_warning(d, LOC_NONE, "-%s overrides -%s", o->name, seen->v[i]->name);
			seen->v[i] = o;
			return;
		}
	seen->v = xgrow(seen->v, &seen->cap, seen->n + 1, sizeof(*seen->v));
	seen->v[seen->n++] = o;
}

/* The built-in options (--help, -h, --version) and the hidden ones
 * (--help-man, --help-completion): prints and returns CL_EXIT, or returns
 * CL_OK when name is none of them. */
static enum cl_result builtin(const struct cl_tool *t, const char *name)
{
	if (strcmp(name, "help") == 0 || strcmp(name, "h") == 0)
		cl_print_help(t, stdout);
	else if (strcmp(name, "version") == 0)
		cl_print_version(t, stdout);
	else if (strcmp(name, "help-man") == 0)
		cl_print_man(t, stdout);
	else if (strcmp(name, "help-completion") == 0)
		cl_print_completion(t, stdout);
	else
		return CL_OK;
	return CL_EXIT;
}

/* Reports an argument that names no option, with a did-you-mean spelt with
 * the dashes the user typed. */
static enum cl_result unknown(const struct cl_tool *t, const char *arg, const char *name, size_t len, struct diag *d)
{
	int dashes = (int)(name - arg);
	const char *near = near_option(t, name, len, 1);
	if (near)
		diag_error(d, LOC_NONE, "unknown option '%.*s'; did you mean '%.*s%s'?", dashes + (int)len, arg, dashes,
			   arg, near);
	else
		diag_error(d, LOC_NONE, "unknown option '%.*s'", dashes + (int)len, arg);
	return CL_ERROR;
}

enum cl_result cl_parse(const struct cl_tool *t, int argc, char **argv, struct diag *d)
{
	bool only_positional = false;
	struct set_seen seen = {NULL, 0, 0};
	enum cl_result r = CL_OK;
	for (int i = 1; i < argc && r == CL_OK; i++) {
		const char *arg = argv[i];
		if (only_positional || arg[0] != '-' || arg[1] == '\0') {
			r = positional(t, arg, d);
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
		if (!o && !eq && (r = builtin(t, name)) != CL_OK)
			continue;
		if (!o && name == arg + 1 && !eq && name[1]) {
			/* -Tsvg: a one-letter value option with its value attached.
			 * Exact names were tried first, so a CL_SET option named O2
			 * is never read as -O with the value 2; a near miss of a
			 * longer option (-ouput-dir) is reported as a typo rather
			 * than taken as -o with the value "uput-dir". The one-letter
			 * options themselves are no near misses (-ox writes to x), but
			 * the comparison ignores case, so glow-opt's -o1 is taken for
			 * a misspelt -O1 rather than a file named 1. */
			const struct cl_opt *a = attached_opt(t, name);
			if (a && !near_option(t, name, len, 2)) {
				o = a;
				value = name + 1;
			}
		}
		if (!o) {
			r = unknown(t, arg, name, len, d);
			continue;
		}
		if (takes_value(o) && !value) {
			if (i + 1 >= argc) {
				diag_error(d, LOC_NONE, "option '-%s' requires a value", o->name);
				r = CL_ERROR;
				continue;
			}
			value = argv[++i];
		}
		r = apply(o, value, d);
		if (r == CL_OK && o->kind == CL_SET)
			set_note(&seen, o, d);
	}
	free(seen.v);
	return r;
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

/* Writes s as roff text: backslashes and hyphens escaped (so man prints a
 * plain ASCII hyphen that can be copied into a shell), and a leading '.' or
 * '\'' (a request to troff) guarded by the zero-width \&. */
static void man_text(FILE *out, const char *s)
{
	if (*s == '.' || *s == '\'')
		fputs("\\&", out);
	for (; *s; s++) {
		if (*s == '\\')
			fputs("\\e", out);
		else if (*s == '-')
			fputs("\\-", out);
		else
			fputc(*s, out);
	}
}

/* The option's tag line in the man page: bold name, italic value. */
static void man_opt(FILE *out, const char *dashes, const struct cl_opt *o)
{
	fputs(".TP\n\\fB", out);
	man_text(out, dashes);
	man_text(out, o->name);
	fputs("\\fR", out);
	if (takes_value(o)) {
		fputs(o->name[1] ? "=\\fI" : " \\fI", out);
		man_text(out, o->kind == CL_ENUM && !o->value_name ? o->values : o->value_name ? o->value_name : "value");
		fputs("\\fR", out);
	}
	fputc('\n', out);
	man_text(out, o->help);
	fputc('\n', out);
}

void cl_print_man(const struct cl_tool *t, FILE *out)
{
	static const struct cl_opt builtin[] = {
		{"help", CL_FLAG, NULL, NULL, "Display the available options, then exit", 0, NULL},
		{"version", CL_FLAG, NULL, NULL, "Display the version of this program, then exit", 0, NULL},
	};
	/* the page carries no date, so that rebuilding it changes nothing */
	fputs(".TH ", out);
	for (const char *p = t->name; *p; p++) {
		if (*p == '-')
			fputs("\\-", out);
		else
			fputc(toupper((unsigned char)*p), out);
	}
	fprintf(out, " 1 \"\" \"glow-toolchain %s\" \"glow toolchain\"\n", GLOW_VERSION);
	/* no hyphenation: option names in the prose stay whole (-backend=c) */
	fputs(".nh\n", out);
	fputs(".SH NAME\n", out);
	man_text(out, t->name);
	fputs(" \\- ", out);
	man_text(out, t->overview);
	fputs("\n.SH SYNOPSIS\n.B ", out);
	man_text(out, t->name);
	fputc('\n', out);
	man_text(out, t->usage);
	/* the overview, as a sentence */
	fputs("\n.SH DESCRIPTION\n", out);
	if (*t->overview)
		fputc(toupper((unsigned char)*t->overview), out);
	man_text(out, *t->overview ? t->overview + 1 : "");
	fputs(".\n.SH OPTIONS\n", out);
	for (size_t i = 0; i < t->nopts; i++)
		man_opt(out, "-", &t->opts[i]);
	for (size_t i = 0; i < GLOW_ARRAY_SIZE(builtin); i++)
		man_opt(out, "--", &builtin[i]);
	fputs(".SH EXIT STATUS\n"
	      "0 on success, 1 after an error was reported. Errors are printed to standard error as\n"
	      ".I file:line:col: error: message\n"
	      "with the source line and a caret, or as\n"
	      ".I tool: error: message\n"
	      "where there is no location; no partial output file is left behind.\n", out);
}

/* The completion class of a value option (see cl.h). */
static const char *completion_class(const struct cl_opt *o, const char **values)
{
	*values = "";
	if (o->kind == CL_ENUM) {
		*values = o->values;
		return "enum";
	}
	const char *vn = o->value_name ? o->value_name : "";
	if (strchr(vn, '|') && !strchr(vn, '<') && !strchr(vn, '=')) {
		*values = vn; /* -T dot|svg|png|pdf: the values are spelt out */
		return "enum";
	}
	if (strcmp(vn, CL_VALUE_PASSES) == 0)
		return "passes";
	if (strcmp(vn, CL_VALUE_KINDS) == 0)
		return "kinds";
	if (strcmp(vn, "filename") == 0 || strcmp(vn, "file") == 0 || strcmp(vn, "FILE") == 0)
		return "file";
	if (strcmp(vn, "dir") == 0 || strcmp(vn, "DIR") == 0)
		return "dir";
	return "value";
}

void cl_print_completion(const struct cl_tool *t, FILE *out)
{
	for (size_t i = 0; i < t->nopts; i++) {
		const struct cl_opt *o = &t->opts[i];
		const char *values = "";
		const char *cls = takes_value(o) ? completion_class(o, &values) : "flag";
		fprintf(out, "-%s\t%s\t%s\n", o->name, cls, values);
	}
	fputs("--help\tflag\t\n--version\tflag\t\n", out);
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

int cl_main(const struct cl_tool *t, int argc, char **argv, int (*run)(void *opts, struct diag *d), void *opts)
{
	struct diag d;
	diag_init(&d, t->name);
	int status;
	enum cl_result r = cl_parse(t, argc, argv, &d);
	if (r != CL_OK)
		status = r == CL_EXIT ? 0 : 1;
	else
		status = run(opts, &d);
	cl_free(t);
	diag_free(&d);
	return status;
}
