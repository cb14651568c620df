/* cl.h - a small LLVM-style command-line parser shared by every tool.
 *
 * A tool describes its options in a table of struct cl_opt and calls
 * cl_parse. Spellings accepted for an option named "name":
 *   -name  --name              flags (CL_FLAG, CL_SET); also -name=true|false for flags
 *   -name=value  -name value   value options (CL_STRING, CL_LIST, CL_ENUM, CL_UINT)
 * A lone "-" is a positional argument (standard input); "--" ends the options.
 * --help (-help, -h) prints help generated from the table and --version the
 * version; both make cl_parse return CL_EXIT. Two hidden options feed the
 * build's generated documentation (they are not in --help): --help-man prints
 * the tool's man page in roff and --help-completion its options for the bash
 * completion, both from the same table, so neither can drift from the tool.
 * A one-letter value option also takes its value attached, as Graphviz does
 * (-Tsvg, -oout.glow); exact names are matched first, so a CL_SET option
 * named O2 stays -O2. An unknown option gets a did-you-mean, and a CL_SET
 * option that overrides an earlier one with the same destination and
 * another value (-O2 -O3) a warning; the last one wins. Errors (unknown option, missing
 * or bad value, too many positional arguments) are reported through the diag
 * as "tool: error: ..." and make it return CL_ERROR. The tool decides the
 * exit status; nothing here exits.
 */
#ifndef GLOW_SUPPORT_CL_H
#define GLOW_SUPPORT_CL_H

#include "diag.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

enum cl_kind {
	CL_FLAG,   /* bool *: set to true (or as given by =true/=false) */
	CL_SET,    /* int *: set to .ival (e.g. -O2 stores 2) */
	CL_STRING, /* const char **: the value (the last one given wins) */
	CL_LIST,   /* struct cl_list *: every value given, in order */
	CL_ENUM,   /* int *: index of the value in .values ("a|b|c") */
	CL_UINT,   /* unsigned *: a decimal number */
};

/* The values of a CL_LIST option; the strings point into argv. */
struct cl_list {
	const char **v;
	size_t n, cap;
};

struct cl_opt {
	const char *name;       /* without dashes */
	enum cl_kind kind;
	void *dest;
	const char *value_name; /* shown in help as -name=<value_name>; NULL: "value" */
	const char *help;
	int ival;               /* CL_SET */
	const char *values;     /* CL_ENUM: "a|b|c" */
};

/* Value names with a meaning to --help-completion: the value is a list of
 * the tool's pass and pipeline names (-passes=), or of node kinds. Any other
 * value name with '|' in it ("dot|svg|png") lists the values themselves. */
#define CL_VALUE_PASSES "pass,..."
#define CL_VALUE_KINDS "Kind,..."

/* The -o row of the tools that write one file, standard output by default
 * (the tool sets *dest to "-" before parsing). */
#define CL_OUTPUT_OPT(dest) \
	{"o", CL_STRING, (dest), "filename", "Output file ('-' for standard output, the default)", 0, NULL}

struct cl_tool {
	const char *name;        /* program name for messages and help */
	const char *overview;    /* one line */
	const char *usage;       /* after the name: "[options] [input.glow|-]" */
	const struct cl_opt *opts;
	size_t nopts;
	struct cl_list *positional;
	size_t max_positional;   /* 0: any number */
};

/* The cl_tool of a tool whose command line names one input at the most
 * (into the CL_LIST *input): every glow tool. opts is the option array
 * itself, counted here (GLOW_ARRAY_SIZE, support/util.h). */
#define CL_TOOL1(name, overview, usage, opts, input) \
	{(name), (overview), (usage), (opts), GLOW_ARRAY_SIZE(opts), (input), 1}

enum cl_result { CL_OK, CL_EXIT, CL_ERROR };

enum cl_result cl_parse(const struct cl_tool *t, int argc, char **argv, struct diag *d);
void cl_print_help(const struct cl_tool *t, FILE *out);
void cl_print_version(const struct cl_tool *t, FILE *out);
/* The man page (roff, section 1): name, synopsis, description from the
 * overview, every option with its value and help, the exit status. */
void cl_print_man(const struct cl_tool *t, FILE *out);
/* One line per option for the bash completion generator:
 *   -name TAB class TAB values
 * class: flag (no value), enum (values "a|b|c"), passes, kinds, file, dir,
 * or value (anything else; nothing to complete). */
void cl_print_completion(const struct cl_tool *t, FILE *out);
/* Frees the arrays of every CL_LIST option and of the positional list. */
void cl_free(const struct cl_tool *t);
/* The index of s in the '|'-separated list values ("a|b|c": a CL_ENUM
 * option's values), or -1. */
int cl_enum_index(const char *values, const char *s);
/* A tool's main once its option table is built: parses argv against t
 * (diagnostics named after the tool), calls run(opts, d) when that
 * succeeds, frees the lists; returns the exit status (0 after --help or
 * --version, 1 after a bad command line, else run's). */
int cl_main(const struct cl_tool *t, int argc, char **argv, int (*run)(void *opts, struct diag *d), void *opts);

#endif
