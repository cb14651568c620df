/* fold-qdq.h - QDQ folding (lib/passes/fold-qdq.c) as a function the ONNX
 * importer calls on every model it imports, besides the fold-qdq pass.
 */
#ifndef GLOW_PASSES_FOLD_QDQ_H
#define GLOW_PASSES_FOLD_QDQ_H

#include "graph/graph.h"

#include <stdbool.h>
#include <stdint.h>

struct pass_ctx;

struct fold_qdq_stats {
	uint64_t fused; /* float nodes made quantized */
	uint64_t moved; /* Dequantizes sunk and Quantizes hoisted across data movement */
	uint64_t pairs; /* Quantize(Dequantize(x)) folded */
};

/* Folds f's QDQ patterns until none is left (fold-qdq.c), adding to *st;
 * ctx NULL: every quantized form is supported (the interpreter's answers).
 * Returns whether f changed. */
bool fold_qdq_func(struct func *f, const struct pass_ctx *ctx, struct fold_qdq_stats *st);

#endif
