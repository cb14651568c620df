/* quantize.h - the options of the Quantize step of the precision stage
 * (glow-opt -precision=quantize -profile=FILE -quant-...), handed to the
 * quantize pass through struct pass_ctx's `quant`.
 */
#ifndef GLOW_PASSES_QUANTIZE_H
#define GLOW_PASSES_QUANTIZE_H

#include "quant/quant.h"

#include <stdbool.h>

struct quant_options {
	const char *profile;      /* the profile file (required by the pass) */
	enum elem_kind precision; /* EK_QI8 or EK_QI16 */
	enum quant_schema schema;
	enum quant_calib calibration;
	bool per_channel; /* Convolution and FullyConnected weights: a scale per output channel */
};

/* int8, asymmetric, no calibration, per tensor */
extern const struct quant_options quant_options_default;

/* The spellings of the enumerated options, in enum order (int8, int16;
 * enum quant_schema's first four; enum quant_calib): glow-opt's -quant-*
 * flags and the quantize pass's options take the same words. */
#define QUANT_PRECISION_NAMES "int8|int16"
#define QUANT_SCHEMA_NAMES "asymmetric|symmetric|symmetric-uint8|symmetric-pow2"
#define QUANT_CALIBRATION_NAMES "none|kl"

struct pass_ctx;
/* The quantize pass's configuration (quantize-opts.c): ctx->quant (else
 * quant_options_default) with the values the pipeline text gives
 * (quantize{profile=... precision=... schema=... calibration=...
 * per-channel=... keep-float=...}); keep[NK_COUNT] marks the kinds left in
 * float (the text's keep-float, else ctx->keep_float). False after
 * reporting a bad value or a missing profile. */
bool quant_pass_options(const struct pass_ctx *ctx, struct quant_options *o, bool *keep);

#endif
