/* versions.c - the versions of the default domain's operators after opset
 * 17, as far as the importer knows them (ONNX_KNOWN_OPSET), and whether each
 * changed what the operator computes or only the element types it accepts.
 *
 * imp_check_ops (import.c) reads a model's operator at the newest version that
 * its opset selects. A row of the op table (ops.def) translates versions
 * up to `until`; a newer version that changed the semantics is refused with
 * what changed, one that only adds element types is translated with a
 * warning (the types themselves are checked by the translators), and an
 * operator with no version after `until` is the same operator: no warning.
 * Beyond ONNX_KNOWN_OPSET nothing is known and every row warns.
 *
 * Sources of the facts: the ONNX operator changelog (versions 18 to 24 of
 * the default operator set).
 */
#include "import/onnx/internal.h"

#include <string.h>

struct op_change {
	const char *op;
	int version;
	const char *change; /* NULL: element types only */
};

/* Sorted by version, then operator; only operators the op table has. */
static const struct op_change changes[] = {
	/* 18 */
	{"LpPool", 18, "ceil_mode and dilations"},
	{"Pad", 18, "the axes input selects the padded axes"},
	{"ReduceL1", 18, "axes is an input"},
	{"ReduceL2", 18, "axes is an input"},
	{"ReduceLogSum", 18, "axes is an input"},
	{"ReduceLogSumExp", 18, "axes is an input"},
	{"ReduceMax", 18, "axes is an input"},
	{"ReduceMean", 18, "axes is an input"},
	{"ReduceMin", 18, "axes is an input"},
	{"ReduceProd", 18, "axes is an input"},
	{"ReduceSumSquare", 18, "axes is an input"},
	{"Resize", 18, "antialias, axes and keep_aspect_ratio_policy"},
	{"ScatterElements", 18, "reductions max and min"},
	{"ScatterND", 18, "reductions max and min"},
	{"Split", 18, "num_outputs splits into chunks of ceil(size / num_outputs)"},
	/* 19 */
	{"AveragePool", 19, "dilations"},
	{"Cast", 19, NULL},
	{"CastLike", 19, NULL},
	{"Constant", 19, NULL},
	{"DequantizeLinear", 19, NULL},
	{"Equal", 19, NULL},
	{"Identity", 19, NULL},
	{"If", 19, NULL},
	{"Loop", 19, NULL},
	{"Pad", 19, "the wrap mode (refused by the translator)"},
	{"QuantizeLinear", 19, NULL},
	{"Reshape", 19, NULL},
	{"Resize", 19, "the half_pixel_symmetric coordinate transformation"},
	{"Scan", 19, NULL},
	{"Shape", 19, NULL},
	{"Size", 19, NULL},
	/* 20 */
	{"ConstantOfShape", 20, NULL},
	{"DFT", 20, "axis and dft_length are inputs, the axis defaults to -2"},
	{"GridSample", 20, "N-dimensional, modes renamed linear and cubic"},
	{"IsInf", 20, NULL},
	{"IsNaN", 20, NULL},
	{"ReduceMax", 20, NULL},
	{"ReduceMin", 20, NULL},
	/* 21 */
	{"GroupNormalization", 21, "scale and bias per channel, not per group"},
	{"DequantizeLinear", 21, "blocked quantization (block_size)"},
	{"QuantizeLinear", 21, "blocked quantization (block_size) and output_dtype"},
	/* 22: bfloat16 for the float operators */
	{"Acos", 22, NULL},
	{"Acosh", 22, NULL},
	{"Asin", 22, NULL},
	{"Asinh", 22, NULL},
	{"Atan", 22, NULL},
	{"Atanh", 22, NULL},
	{"AveragePool", 22, NULL},
	{"Conv", 22, NULL},
	{"ConvTranspose", 22, NULL},
	{"Cos", 22, NULL},
	{"Cosh", 22, NULL},
	{"DeformConv", 22, NULL},
	{"Det", 22, NULL},
	{"Dropout", 22, NULL},
	{"Elu", 22, NULL},
	{"EyeLike", 22, NULL},
	{"GRU", 22, NULL},
	{"GlobalAveragePool", 22, NULL},
	{"GlobalLpPool", 22, NULL},
	{"GlobalMaxPool", 22, NULL},
	{"GridSample", 22, NULL},
	{"HardSigmoid", 22, NULL},
	{"HardSwish", 22, NULL},
	{"InstanceNormalization", 22, NULL},
	{"LpNormalization", 22, NULL},
	{"LpPool", 22, NULL},
	{"LSTM", 22, NULL},
	{"MaxPool", 22, NULL},
	{"MaxUnpool", 22, NULL},
	{"Mish", 22, NULL},
	{"NegativeLogLikelihoodLoss", 22, NULL},
	{"RNN", 22, NULL},
	{"RoiAlign", 22, NULL},
	{"Round", 22, NULL},
	{"Selu", 22, NULL},
	{"Sin", 22, NULL},
	{"Sinh", 22, NULL},
	{"Softplus", 22, NULL},
	{"Softsign", 22, NULL},
	{"Tan", 22, NULL},
	{"ThresholdedRelu", 22, NULL},
	/* 24: float8e8m0 */
	{"TopK", 24, NULL},
};

/* The operators that each new element type of opsets 21, 23 (float4e2m1)
 * and 24 (float8e8m0) reaches: each has a version at each of these opsets,
 * one that only adds element types (besides the changes above of
 * DequantizeLinear and QuantizeLinear 21). */
static const char *const new_type_ops[] = {
	"Cast", "CastLike", "Constant", "ConstantOfShape", "DequantizeLinear", "Flatten",
	"Identity", "If", "Loop", "Pad", "QuantizeLinear", "Reshape",
	"Scan", "Shape", "Size", "Squeeze", "Transpose", "Unsqueeze",
};
static const int new_type_opsets[] = {21, 23, 24};

int imp_op_newer(const char *op, int until, int64_t opset, const char **change, int *change_version)
{
	int newest = 0;
	*change = NULL;
	*change_version = 0;
	for (size_t i = 0; i < GLOW_ARRAY_SIZE(changes); i++) {
		const struct op_change *c = &changes[i];
		if (c->version <= until || c->version > opset || strcmp(c->op, op) != 0)
			continue;
		newest = c->version;
		if (c->change && !*change) {
			*change = c->change;
			*change_version = c->version;
		}
	}
	for (size_t i = 0; i < GLOW_ARRAY_SIZE(new_type_ops); i++) {
		if (strcmp(new_type_ops[i], op) != 0)
			continue;
		for (size_t j = 0; j < GLOW_ARRAY_SIZE(new_type_opsets); j++) {
			int v = new_type_opsets[j];
			if (v > until && v <= opset && v > newest)
				newest = v;
		}
	}
	return newest;
}
