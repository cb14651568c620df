/* quantcli.c - glow-opt's precision-step options (quantcli.h). */
#include "passes/quantcli.h"

#include <string.h>

void quant_cli_init(struct quant_cli *q)
{
	q->precision = 0;
	q->profile = NULL;
	q->qprec = q->schema = q->calibration = -1;
	q->per_channel = false;
	q->opts = quant_options_default;
}

int quant_cli_check(struct quant_cli *q, struct diag *d)
{
	if (q->precision == 2 && !q->profile) {
		diag_error(d, LOC_NONE, "-precision=quantize needs a profile: -profile=FILE (written by glow-run -profile)");
		return 1;
	}
	q->opts = quant_options_default;
	q->opts.profile = q->profile;
	if (q->qprec == 1)
		q->opts.precision = EK_QI16;
	if (q->schema >= 0)
		q->opts.schema = (enum quant_schema)q->schema;
	if (q->calibration >= 0)
		q->opts.calibration = (enum quant_calib)q->calibration;
	q->opts.per_channel = q->per_channel;
	return 0;
}

/* Whether entry e (a pass or a list) runs the pass called name. */
static bool qc_runs(const struct pm_entry *e, const char *name)
{
	if (e->pass)
		return strcmp(e->pass->name, name) == 0;
	for (size_t i = 0; i < e->nkids; i++)
		if (qc_runs(&e->kids[i], name))
			return true;
	return false;
}

int quant_cli_check_pipeline(const struct quant_cli *q, const struct pm *pm, struct diag *d)
{
	if (qc_runs(&pm->root, "quantize"))
		return 0;
	const char *stray = q->profile ? "-profile" : q->qprec >= 0 ? "-quant-precision" : q->schema >= 0 ? "-quant-schema"
			    : q->calibration >= 0 ? "-quant-calibration" : q->per_channel ? "-quant-per-channel" : NULL;
	if (!stray)
		return 0;
	diag_error(d, LOC_NONE, "%s applies to the quantize pass only (-precision=quantize, or -passes=...,quantize)",
		   stray);
	return 1;
}

const char *quant_cli_pipeline(const struct quant_cli *q)
{
	return q->precision == 1 ? "precision-profile" : q->precision == 2 ? "precision-quantize" : NULL;
}
