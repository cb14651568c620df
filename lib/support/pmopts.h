/* pmopts.h - the pass manager's internal interface to its option code
 * (pmopts.c); clients use passmgr.h. */
#ifndef GLOW_SUPPORT_PMOPTS_H
#define GLOW_SUPPORT_PMOPTS_H

#include "passmgr.h"

#include <stdio.h>

/* The pipeline text being compiled: positions in it become locations when
 * it was registered as a source (file != 0). */
struct pm_text {
	const char *base;
	uint32_t file;
};

/* The registry's defaults, parsed at pm_init (a bad default is a table
 * bug), and their release at pm_free. */
void pm_opts_init_defaults(struct pm *pm);
void pm_opts_free_defaults(struct pm *pm);
/* Fills the option slots of pass entry e: the defaults, then the
 * space-separated name=value pairs of text (len bytes, the inside of the
 * braces; NULL: none). Returns 0, or -1 after reporting at the column. */
int pm_opts_parse(struct pm *pm, const struct pm_text *t, struct pm_entry *e, const char *text, size_t len);
void pm_opts_entry_free(struct pm_entry *e);
/* The options and conditions of p, indented, for -list-passes. */
void pm_opts_print_list(const struct pm_registry *reg, const struct pm_pass *p, FILE *out);
const char *pm_opt_type_name(enum pm_opt_type t);

#endif
