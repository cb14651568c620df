/* cb_grad2.c - kernels of the gradient kinds of the shape kinds that sum
 * (issue 13 part B): the adjoint of a value Gather, Pad, BatchedAdd or a
 * reduction read several times, added up. Float only; the semantics are
 * the interpreter's (backends/interpreter/k_grad2.c), summed in float. The
 * elementwise gradients are loops the generator writes (cgen_grad2.c), the
 * pure data movement back goes through cb_copy_nd. Pad's source index is
 * lib/graph/pad_index.h, embedded in the bundle before this file. */
#include "cb_base.h"
#include "../../../lib/graph/pad_index.h"

/* padgrad: y (dims yd) = zeros, then every element of g (dims gd) added to
 * the element of y Pad copied it from; p the pads, [front..., back...]. */
CB_KERNEL void cb_padgrad_f32(const float *g, const int64_t *gd, float *y, const int64_t *yd, const int64_t *p,
			      int rank, int mode)
{
	int64_t ys[8], s = 1, n = 1, ny = 1, idx[8] = {0};
	for (int i = rank - 1; i >= 0; i--) {
		ys[i] = s;
		s *= yd[i];
		n *= gd[i];
		ny *= yd[i];
	}
	memset(y, 0, (size_t)ny * sizeof *y);
	for (int64_t o = 0; o < n; o++) {
		int64_t src = 0;
		for (int i = 0; i < rank && src >= 0; i++) {
			int64_t x = pad_source_index(idx[i], p[i], yd[i], mode);
			src = x < 0 ? -1 : src + x * ys[i];
		}
		if (src >= 0)
			y[src] += g[o];
		for (int i = rank - 1; i >= 0; i--) {
			if (++idx[i] < gd[i])
				break;
			idx[i] = 0;
		}
	}
}

/* gathergrad along the middle of outer x d x inner: y = zeros, then slice
 * j of g (outer x ni x inner) added at index ind[j] (int64 with idx64,
 * else int32; negative counts from the end). Out-of-range indices return
 * -1, as cb_gather does. */
CB_KERNEL int cb_gathergrad_f32(const void *ind, int idx64, const float *g, float *y, size_t outer, size_t d,
				size_t inner, size_t ni)
{
	memset(y, 0, outer * d * inner * sizeof *y);
	for (size_t j = 0; j < ni; j++) {
		int64_t k = cb_axis_index(ind, j, idx64, d);
		if (k < 0)
			return -1;
		for (size_t o = 0; o < outer; o++) {
			const float *gp = g + (o * ni + j) * inner;
			float *yp = y + (o * d + (size_t)k) * inner;
			for (size_t i = 0; i < inner; i++)
				yp[i] += gp[i];
		}
	}
	return 0;
}

/* batchedaddgrad: db = g (n elements), ds[j] = the sum of g over the
 * batch, g viewed as n / m rows of m. */
CB_KERNEL void cb_batchedaddgrad_f32(const float *g, float *db, float *ds, size_t n, size_t m)
{
	memcpy(db, g, n * sizeof *g);
	memset(ds, 0, m * sizeof *ds);
	for (size_t r = 0; r < n; r += m)
		for (size_t j = 0; j < m; j++)
			ds[j] += g[r + j];
}

/* batchedreduce{add,mean}grad: y (n elements, dims) = g broadcast back, gs
 * the stride in g of each axis of y (0 where reduced), times scale. */
CB_KERNEL void cb_reducegrad_f32(const float *g, float *y, size_t n, const int64_t *dims, const int64_t *gs, int rank,
				 float scale)
{
	int64_t idx[8] = {0};
	for (size_t o = 0; o < n; o++) {
		int64_t gi = 0;
		for (int i = 0; i < rank; i++)
			gi += idx[i] * gs[i];
		y[o] = g[gi] * scale;
		for (int i = rank - 1; i >= 0; i--) {
			if (++idx[i] < dims[i])
				break;
			idx[i] = 0;
		}
	}
}
