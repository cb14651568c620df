/* quantcli.c - glow-opt's precision-step options (quantcli.h). */
#include "passes/quantcli.h"

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
	bool quant = q->precision == 2;
	const char *stray = !quant && q->profile ? "-profile" : !quant && q->qprec >= 0 ? "-quant-precision"
			    : !quant && q->schema >= 0 ? "-quant-schema" : !quant && q->calibration >= 0 ? "-quant-calibration"
			    : !quant && q->per_channel ? "-quant-per-channel" : NULL;
	if (stray) {
		diag_error(d, LOC_NONE, "%s applies to -precision=quantize only", stray);
		return 1;
	}
	if (quant && !q->profile) {
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

const char *quant_cli_pipeline(const struct quant_cli *q)
{
	return q->precision == 1 ? "precision-profile" : q->precision == 2 ? "precision-quantize" : NULL;
}
