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

/* Packs the filter src (groups x oc rows, row o of group gi at src + (gi *
 * oc + o) * so, column kk at kk * sk) into wp and the bias (NULL: zeros;
 * else groups * oc floats) into bp, as described above. With fkh > 0 the
 * K index is read as (ky, kx, ci) of a fkh x fkw x fc window and taken from
 * the rotated tap (fkh - 1 - ky, fkw - 1 - kx, ci): the filter of a
 * stride-1 transposed convolution computed as a convolution. wp holds
 * groups * ceil(oc / CB_NR) * kdim * CB_NR floats, bp groups *
 * ceil(oc / CB_NR) * CB_NR. */
CB_KERNEL void cb_pack_f32(const float *src, const float *bias, float *CB_RESTRICT wp, float *CB_RESTRICT bp,
			   size_t groups, size_t oc, size_t kdim, size_t so, size_t sk, size_t fkh, size_t fkw,
			   size_t fc)
{
	const size_t np = (oc + CB_NR - 1) / CB_NR;
	if (fkh == 0) {
		fkh = fkw = 1;
		fc = kdim;
	}
	for (size_t gi = 0; gi < groups; gi++) {
		for (size_t pi = 0; pi < np; pi++) {
			const size_t o0 = pi * CB_NR, live = oc - o0 < CB_NR ? oc - o0 : CB_NR;
			float *d = wp + (gi * np + pi) * kdim * CB_NR;
			const float *rows = src + (gi * oc + o0) * so;
			/* kk walks (ky, kx, ci) in order; q is the rotated source
			 * column (the same as kk without a rotation) */
			for (size_t ky = 0; ky < fkh; ky++)
				for (size_t kx = 0; kx < fkw; kx++) {
					const size_t q0 = ((fkh - 1 - ky) * fkw + (fkw - 1 - kx)) * fc;
					for (size_t ci = 0; ci < fc; ci++, d += CB_NR) {
						const float *sp = rows + (q0 + ci) * sk;
						size_t j = 0;
						for (; j < live; j++)
							d[j] = sp[j * so];
						for (; j < CB_NR; j++)
							d[j] = 0.0f;
					}
				}
		}
		for (size_t o = 0; o < np * CB_NR; o++)
			bp[gi * np * CB_NR + o] = bias && o < oc ? bias[gi * oc + o] : 0.0f;
	}
}
