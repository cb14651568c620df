/* kindfacts.c - the tables of kindfacts.h, filled from KindFacts.def (two
 * rows for one kind do not compile: -Woverride-init). */
#include "passes/kindfacts.h"

#include <math.h>

const unsigned pk_facts[NK_COUNT] = {
#define FACTS(K, facts) [NK_##K] = (facts),
#include "passes/KindFacts.def"
};

/* One function per SPLAT_FOLD row. */
#define SPLAT_FOLD(K, expr)                                                     \
	static double pk_fold_##K(double a, double b)                           \
	{                                                                       \
		(void)b;                                                        \
		return expr;                                                    \
	}
#include "passes/KindFacts.def"

const pk_fold_fn pk_splat_fold[NK_COUNT] = {
#define SPLAT_FOLD(K, expr) [NK_##K] = pk_fold_##K,
#include "passes/KindFacts.def"
};
