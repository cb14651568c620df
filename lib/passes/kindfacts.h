/* kindfacts.h - per-kind facts of the graph passes (KindFacts.def): which
 * kinds quantize, requantize, move splats and uniform values, stay in
 * their precision, are profiled, and the splat arithmetic of the simplest
 * elementwise kinds. A pass asks pk_has(kind, fact) instead of keeping its
 * own list of kinds.
 */
#ifndef GLOW_PASSES_KINDFACTS_H
#define GLOW_PASSES_KINDFACTS_H

#include "graph/graph.h"

#include <stdbool.h>

enum pass_kind_fact {
	PK_QUANT_KERNEL = 1u << 0,
	PK_QUANT_SAME_PARAMS = 1u << 1,
	PK_REQUANTIZES = 1u << 2,
	PK_SPLAT_MOVES = 1u << 3,
	PK_UNIFORM_MOVES = 1u << 4,
	PK_KEEP_PRECISION = 1u << 5,
	PK_NOT_PROFILED = 1u << 6,
};

/* The facts of each kind (an OR of enum pass_kind_fact), 0 without a row. */
extern const unsigned pk_facts[NK_COUNT];

/* Whether kind has fact. */
static inline bool pk_has(unsigned kind, enum pass_kind_fact fact) { return (pk_facts[kind] & (unsigned)fact) != 0; }

/* The SPLAT_FOLD row of each kind: its result over splat operands a and b
 * (b unused by unary kinds), NULL for a kind without a row. */
typedef double (*pk_fold_fn)(double a, double b);
extern const pk_fold_fn pk_splat_fold[NK_COUNT];

#endif
