/* cb_pack.c - packing at run time of the filters and weights that are not
 * constants (trainable placeholders, a weight gradient's activations), so
 * that their convolutions and matrix products run on cb_conv_f32's packed
 * path instead of the reference loops.
 *
 * The layout is the one the code generator writes for a constant filter
 * (cgen_conv.c, pack_panels): per group, ceil(OC / CB_NR) panels of K x
 * CB_NR floats, column j of panel p holding output channel p * CB_NR + j,
 * zero past OC; the bias padded to whole panels the same way. Packing is a
 * copy, so the packed product sums exactly what a constant filter's would.
 * It runs on the calling thread, before the product splits among the pool:
 * every thread then reads the one packed copy.
 */
#include "cb_base.h"

/* The k values of one block of the transposing pack (cb_pack_rows): one
 * cache line of each source row */
#define CB_PACK_KB 16

/* One panel of cb_pack_f32 whose columns are rows of the source, each
 * contiguous in k (s3 == 1, one k level): `live` rows at rows + j * so, n3
 * values each, into d (n3 x CB_NR, zeros past live). Rows far apart (a
 * weight matrix read transposed: so of a whole row of the matrix) map to
 * few cache sets, so reading one value of every row per k (the general
 * loop) misses the L1 cache on nearly every load; here a block of
 * CB_PACK_KB values of each row (one cache line) is copied into t first
 * and then written out k by k, so each source line is read once. */
static void cb_pack_rows(const float *rows, float *CB_RESTRICT d, size_t live, ptrdiff_t so, size_t n3)
{
	for (size_t k0 = 0; k0 < n3; k0 += CB_PACK_KB) {
		const size_t kb = n3 - k0 < CB_PACK_KB ? n3 - k0 : CB_PACK_KB;
		float t[CB_NR][CB_PACK_KB];
		for (size_t j = 0; j < CB_NR; j++) {
			if (j >= live) {
				memset(t[j], 0, sizeof t[j]);
				continue;
			}
			const float *sp = rows + (ptrdiff_t)j * so + (ptrdiff_t)k0;
			if (kb == CB_PACK_KB)
				memcpy(t[j], sp, sizeof t[j]);
			else
				for (size_t kk = 0; kk < kb; kk++)
					t[j][kk] = sp[kk];
		}
		for (size_t kk = 0; kk < kb; kk++)
			for (size_t j = 0; j < CB_NR; j++)
				d[(k0 + kk) * CB_NR + j] = t[j][kk];
	}
}

/* Packs the filter src (groups x oc rows; row r of all groups, r = gi * oc
 * + o, at src + r * so) into wp and the bias (NULL: zeros; else groups *
 * oc floats) into bp, as described above. Column kk of a row walks (k1, k2,
 * k3) over n1 x n2 x n3 = kdim (k3 fastest) and is read at base + k1 * s1 +
 * k2 * s2 + k3 * s3 from the row's start (strides may be negative): the
 * plain filter (1, 1, kdim; stride 1), its rotation for a transposed
 * convolution computed as a convolution (taps backwards), or a transposed
 * tensor read through the source's strides. wp holds groups * ceil(oc /
 * CB_NR) * kdim * CB_NR floats, bp groups * ceil(oc / CB_NR) * CB_NR. */
CB_KERNEL void cb_pack_f32(const float *src, const float *bias, float *CB_RESTRICT wp, float *CB_RESTRICT bp,
			   size_t groups, size_t oc, ptrdiff_t so, ptrdiff_t base, size_t n1, ptrdiff_t s1, size_t n2,
			   ptrdiff_t s2, size_t n3, ptrdiff_t s3)
{
	const size_t np = (oc + CB_NR - 1) / CB_NR;
	/* rows contiguous in k and not adjacent: the transposing pack */
	const int rowwise = n1 == 1 && n2 == 1 && s3 == 1 && so != 1 && so != -1;
	for (size_t gi = 0; gi < groups; gi++) {
		for (size_t pi = 0; pi < np; pi++) {
			const size_t o0 = pi * CB_NR, live = oc - o0 < CB_NR ? oc - o0 : CB_NR;
			float *d = wp + (gi * np + pi) * n1 * n2 * n3 * CB_NR;
			const float *rows = src + (ptrdiff_t)(gi * oc + o0) * so + base;
			if (rowwise) {
				cb_pack_rows(rows, d, live, so, n3);
				continue;
			}
			for (size_t k1 = 0; k1 < n1; k1++)
				for (size_t k2 = 0; k2 < n2; k2++) {
					const float *sp = rows + (ptrdiff_t)k1 * s1 + (ptrdiff_t)k2 * s2;
					for (size_t k3 = 0; k3 < n3; k3++, d += CB_NR, sp += s3) {
						size_t j = 0;
						for (; j < live; j++)
							d[j] = sp[(ptrdiff_t)j * so];
						for (; j < CB_NR; j++)
							d[j] = 0.0f;
					}
				}
		}
		for (size_t o = 0; o < np * CB_NR; o++)
			bp[gi * np * CB_NR + o] = bias && o < oc ? bias[gi * oc + o] : 0.0f;
	}
}
