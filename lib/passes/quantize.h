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

#endif
