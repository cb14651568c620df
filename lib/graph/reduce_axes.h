/* reduce_axes.h - the axes of a reduction seen from its input, shared by
 * the reduction gradients' lowering (lib/passes/lower-grad2.c), interpreter
 * kernel and C emitter: which axes are reduced, how many elements each
 * result element sums, and where each input position's result element is. */
#ifndef GLOW_GRAPH_REDUCE_AXES_H
#define GLOW_GRAPH_REDUCE_AXES_H

#include "graph/graph.h"

#include <stdbool.h>
#include <stdint.h>

/* Marks axes[0..n) in drop (t's rank, false on entry) and returns the
 * product of their dimensions in t: the count a mean divides by. */
static inline uint64_t reduce_axes_mark(const struct type *t, const int64_t *axes, unsigned n, bool *drop)
{
	uint64_t cnt = 1;
	for (unsigned i = 0; i < n; i++) {
		drop[axes[i]] = true;
		cnt *= t->dims[axes[i]];
	}
	return cnt;
}

/* The element stride in the reduced tensor (t without the dropped axes,
 * row-major) of each axis of t, 0 for a dropped one. */
static inline void reduce_axes_strides(const struct type *t, const bool *drop, int64_t *st)
{
	int64_t s = 1;
	for (unsigned i = t->rank; i-- > 0;) {
		st[i] = drop[i] ? 0 : s;
		if (!drop[i])
			s *= (int64_t)t->dims[i];
	}
}

#endif
