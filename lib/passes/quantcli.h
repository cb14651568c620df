/* quantcli.h - glow-opt's options of the precision stage's profile and
 * quantize steps (-precision=, -profile=, -quant-*): their table rows,
 * their check and the pipeline they add (docs/Quantization.md).
 */
#ifndef GLOW_PASSES_QUANTCLI_H
#define GLOW_PASSES_QUANTCLI_H

#include "passes/quantize.h"
#include "support/cl.h"
#include "support/diag.h"
#include "support/passmgr.h"

struct quant_cli {
	int precision;   /* 0 none, 1 profile, 2 quantize */
	const char *profile;
	int qprec;       /* -1 not given, 0 int8, 1 int16 */
	int schema;      /* -1 not given, else enum quant_schema */
	int calibration; /* -1 not given, else enum quant_calib */
	bool per_channel;
	struct quant_options opts; /* filled by quant_cli_check */
};

/* Sets the defaults (nothing given). */
void quant_cli_init(struct quant_cli *q);

/* The rows of glow-opt's option table; -profile and -quant-* are the
 * defaults of the quantize pass's options (quantize-opts.c). */
#define QUANT_CLI_OPTS(q)                                                                                  \
	{"precision", CL_ENUM, &(q)->precision, NULL,                                                      \
	 "Precision step after the pipeline: profile (instrument for glow-run -profile) or quantize (from " \
	 "-profile)", 0, "none|profile|quantize"},                                                         \
	{"profile", CL_STRING, &(q)->profile, "FILE",                                                      \
	 "The quantize pass's profile (glow-run -profile wrote it); default of quantize{profile=}", 0,      \
	 NULL},                                                                                            \
	{"quant-precision", CL_ENUM, &(q)->qprec, NULL,                                                    \
	 "Quantize: integer width (default int8); default of quantize{precision=}", 0,                     \
	 QUANT_PRECISION_NAMES},                                                                           \
	{"quant-schema", CL_ENUM, &(q)->schema, NULL,                                                      \
	 "Quantize: how scale and offset follow a range (default asymmetric); default of quantize{schema=}", \
	 0, QUANT_SCHEMA_NAMES},                                                                           \
	{"quant-calibration", CL_ENUM, &(q)->calibration, NULL,                                            \
	 "Quantize: range choice, none (min/max) or kl (KL divergence over the histogram); default of "     \
	 "quantize{calibration=}", 0, QUANT_CALIBRATION_NAMES},                                            \
	{"quant-per-channel", CL_FLAG, &(q)->per_channel, NULL,                                            \
	 "Quantize: a scale per output channel for Convolution/FullyConnected weights; default of "         \
	 "quantize{per-channel=}", 0, NULL}

/* Checks the combination and fills q->opts (the defaults of the quantize
 * pass's options, quantize-opts.c); returns 1 after reporting. */
int quant_cli_check(struct quant_cli *q, struct diag *d);
/* Reports a -profile or -quant-* flag given to a pipeline without a
 * quantize pass (it would do nothing); returns 1 after reporting. */
int quant_cli_check_pipeline(const struct quant_cli *q, const struct pm *pm, struct diag *d);
/* The pipeline the precision step adds (NULL: none). */
const char *quant_cli_pipeline(const struct quant_cli *q);

#endif
