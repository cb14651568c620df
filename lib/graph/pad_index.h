/* pad_index.h - which input element an element of Pad's result copies,
 * shared by the kinds that walk Pad backwards: PadGrad's lowering
 * (lib/passes/lower-grad2.c), its interpreter kernel and its C-bundle
 * kernel (the C backend embeds this header in every bundle, so it stays
 * self-contained C). */
#ifndef GLOW_GRAPH_PAD_INDEX_H
#define GLOW_GRAPH_PAD_INDEX_H

#include <stdint.h>

/* The input index Pad reads along one axis for result index o (padding b
 * in front, input length len, mode 0 constant, 1 reflect, 2 edge): -1 for
 * a constant padding element. Reflect mirrors without repeating the edge
 * (-1 reads 1), periodically for pads longer than the input. */
static inline int64_t pad_source_index(int64_t o, int64_t b, int64_t len, int64_t mode)
{
	int64_t x = o - b;
	if (x >= 0 && x < len)
		return x;
	if (mode == 0)
		return -1;
	if (mode == 2)
		return x < 0 ? 0 : len - 1;
	if (len == 1)
		return 0;
	int64_t period = 2 * (len - 1);
	x = ((x % period) + period) % period;
	return x >= len ? period - x : x;
}

#endif
