/* cl.h - a small LLVM-style command-line parser shared by every tool.
 *
 * A tool describes its options in a table of struct cl_opt and calls
 * cl_parse. Spellings accepted for an option named "name":
 *   -name  --name              flags (CL_FLAG, CL_SET); also -name=true|false for flags
 *   -name=value  -name value   value options (CL_STRING, CL_LIST, CL_ENUM, CL_UINT)
 * A lone "-" is a positional argument (standard input); "--" ends the options.
 * --help (-help, -h) prints help generated from the table and --version the
 * version; both make cl_parse return CL_EXIT. Errors (unknown option, missing
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

struct cl_tool {
	const char *name;        /* program name for messages and help */
	const char *overview;    /* one line */
	const char *usage;       /* after the name: "[options] [input.glow|-]" */
	const struct cl_opt *opts;
	size_t nopts;
	struct cl_list *positional;
	size_t max_positional;   /* 0: any number */
};

enum cl_result { CL_OK, CL_EXIT, CL_ERROR };

enum cl_result cl_parse(const struct cl_tool *t, int argc, char **argv, struct diag *d);
void cl_print_help(const struct cl_tool *t, FILE *out);
void cl_print_version(const struct cl_tool *t, FILE *out);
/* Frees the arrays of every CL_LIST option and of the positional list. */
void cl_free(const struct cl_tool *t);

#endif
