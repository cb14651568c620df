/* passcli.c - option values of the pass-running tools that only the passes
 * can check: node-kind lists, the reals of the training configuration and
 * the pipeline the options name (passcli.h). */
#include "passes/passcli.h"
#include "graph/graph.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Marks the node kinds named in the comma-separated list s (flags may be
 * NULL: only checked); returns 1 after reporting an unknown kind, with the
 * closest kind when one is close. */
int pass_cli_kind_list(const char *opt, const char *s, bool *flags, struct diag *d)
{
	char what[128];
	snprintf(what, sizeof what, "-%s", opt);
	return pass_kind_list(what, s, flags, d);
}

/* pass_cli_kind_list whose messages start with `what` as it is
 * ("quantize{keep-float=...}"). */
int pass_kind_list(const char *what, const char *s, bool *flags, struct diag *d)
{
	int bad = 0;
	while (*s) {
		size_t len = strcspn(s, ",");
		int k = node_kind_lookup(s, len);
		if (k < 0 || k == NK_Placeholder || k == NK_Constant) {
			const char *near = node_kind_suggest(s, len);
			diag_error(d, LOC_NONE, "%s: unknown node kind '%.*s'%s%s%s", what, (int)len, s,
				   near ? "; did you mean '" : "", near ? near : "", near ? "'?" : "");
			bad = 1;
		} else if (flags)
			flags[k] = true;
		s += len + (s[len] == ',');
	}
	return bad;
}

/* pass_cli_kind_list of every value of a list option. */
int pass_cli_kinds(const char *opt, const struct cl_list *l, bool *flags, struct diag *d)
{
	int bad = 0;
	for (size_t i = 0; i < l->n; i++)
		bad |= pass_cli_kind_list(opt, l->v[i], flags, d);
	return bad;
}

/* Parses the value s of option -name (NULL: not given, *out unchanged) as a
 * real in [lo, hi), or (lo, hi) when lo_excl, into *out; returns 1 after
 * reporting a bad value. */
int pass_cli_real(const char *name, const char *s, double lo, double hi, bool lo_excl, double *out,
		  struct diag *d)
{
	if (!s)
		return 0;
	char *end;
	double x = strtod(s, &end);
	if (end == s || *end || !(x >= lo) || (lo_excl && x == lo) || !(x < hi)) {
		diag_error(d, LOC_NONE, "-%s: '%s' is not a number in %s%g, %g)", name, s, lo_excl ? "(" : "[", lo,
			   hi);
		return 1;
	}
	*out = x;
	return 0;
}

int pass_cli_check_pipeline(const char *passes, int olevel, bool fp16, bool bf16, struct diag *d)
{
	if (passes && olevel >= 0) {
		diag_error(d, LOC_NONE, "-O%d and -passes= cannot be combined (write -passes=O%d,...)", olevel, olevel);
		return 1;
	}
	if (fp16 && bf16) {
		diag_error(d, LOC_NONE, "-convert-to-fp16 and -convert-to-bf16 cannot be combined");
		return 1;
	}
	return 0;
}

int pass_cli_pipeline(struct pm *pm, const char *passes, int olevel, bool fp16, bool bf16)
{
	return pass_cli_pipeline_precision(pm, passes, olevel, fp16, bf16, NULL);
}

int pass_cli_pipeline_precision(struct pm *pm, const char *passes, int olevel, bool fp16, bool bf16,
				const char *precision)
{
	int bad = 0;
	if (passes)
		bad |= pm_add_text_named(pm, passes, "-passes");
	else if (olevel >= 0) {
		char name[16];
		snprintf(name, sizeof name, "O%d", olevel);
		bad |= pm_add_text(pm, name);
	}
	/* the conversion pipeline's text is the registry's own: it cannot be
	 * bad, so adding it after a bad list reports nothing more */
	if (!bad && precision) /* quantize before fp16: mixed precision */
		bad |= pm_add_text(pm, precision);
	if (!bad && (fp16 || bf16))
		bad |= pm_add_text(pm, fp16 ? "fp16" : "bf16");
	return bad;
}
