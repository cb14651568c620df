/* passcli.h - option values of the pass-running tools that only the passes
 * can check (passcli.c): lists of node kinds, bounded reals, the pipeline
 * of -passes=, -O<n> and -convert-to-fp16/-bf16. Each reports through diag
 * and returns nonzero on a bad value. */
#ifndef GLOW_PASSES_PASSCLI_H
#define GLOW_PASSES_PASSCLI_H

#include "support/cl.h"
#include "support/diag.h"
#include "support/passmgr.h"

#include <stdbool.h>

/* Marks the node kinds named in the comma-separated list s (flags may be
 * NULL: only checked); returns 1 after reporting an unknown kind, with the
 * closest kind when one is close. */
int pass_cli_kind_list(const char *opt, const char *s, bool *flags, struct diag *d);
/* pass_cli_kind_list whose messages start with `what` as it is
 * ("quantize{keep-float=...}"), not "-opt". */
int pass_kind_list(const char *what, const char *s, bool *flags, struct diag *d);

/* pass_cli_kind_list of every value of a list option. */
int pass_cli_kinds(const char *opt, const struct cl_list *l, bool *flags, struct diag *d);

/* Parses the value s of option -name (NULL: not given, *out unchanged) as a
 * real in [lo, hi), or (lo, hi) when lo_excl, into *out; returns 1 after
 * reporting a bad value. */
int pass_cli_real(const char *name, const char *s, double lo, double hi, bool lo_excl, double *out,
		  struct diag *d);

/* Checks that a tool's pipeline options go together: -passes= and -O<n>
 * exclude each other, and so do the fp16 and bf16 conversions; returns
 * nonzero after reporting. */
int pass_cli_check_pipeline(const char *passes, int olevel, bool fp16, bool bf16, struct diag *d);

/* Adds the pipeline a tool's options name to pm: the -passes= text, else
 * the pipeline O<olevel> (olevel >= 0), then the fp16 or bf16 conversion
 * pipeline; returns nonzero after reporting a bad pass list. */
int pass_cli_pipeline(struct pm *pm, const char *passes, int olevel, bool fp16, bool bf16);
/* pass_cli_pipeline with the precision step's pipeline (NULL: none; see
 * quantcli.h) added between the pipeline and the fp16/bf16 conversion. */
int pass_cli_pipeline_precision(struct pm *pm, const char *passes, int olevel, bool fp16, bool bf16,
				const char *precision);

#endif
