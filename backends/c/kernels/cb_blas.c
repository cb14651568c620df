/* cb_blas.c - the matrix products of a bundle generated with
 * -gemm=openblas: convolutions, fully-connected layers, matmul and gemm
 * call cblas_sgemm of a BLAS library instead of the bundle's own blocked
 * product (cb_conv.c). The generator appends this file to a bundle only
 * with that option; such a bundle includes <cblas.h> and must be linked
 * with -lopenblas (any CBLAS works; OpenBLAS is the one documented).
 *
 * Weights (packed by the generator for this path): per group, the filter
 * as a row-major K x OC matrix (K = KH*KW*C, tap-major, channel-minor: the
 * column order of A below); the bias as groups * OC floats.
 *
 * A convolution in NHWC is the product of the virtual M x K matrix A (one
 * row per output pixel) with the filter. A is written to scratch one block
 * of s->mc rows at a time (im2col: a row is the window's taps, zeros in the
 * padding), then one sgemm per block and group writes the block's output
 * rows (ldc = the output's pixel stride, so a concatenation is written in
 * place). A 1x1 convolution with unit strides and no padding, and every
 * fully-connected layer, reads A in place (lda = the channels of all
 * groups). The bias, a residual and an activation are one pass over the
 * block's output after the products (before them, when the residual is
 * the output itself: sgemm then accumulates with beta = 1).
 */
#include "cb_base.h"

#include <cblas.h>

/* a leading dimension BLAS accepts: at least 1 even for an empty matrix */
CB_INLINE int cb_ld(size_t x) { return x ? (int)x : 1; }

/* Rows m0 .. m1-1 of A for group g, row-major with K floats per row. */
static void cb_blas_im2col(const struct cb_conv_args *s, const float *in, float *CB_RESTRICT a, size_t m0,
			   size_t m1, int g)
{
	const int gc = s->groups * s->c, c = s->c;
	const size_t ohw = (size_t)s->oh * s->ow, kdim = (size_t)s->kh * s->kw * c;
	for (size_t mm = m0; mm < m1; mm++) {
		size_t n = mm / ohw, rem = mm % ohw;
		int ih0 = (int)(rem / (size_t)s->ow) * s->sh - s->pt, iw0 = (int)(rem % (size_t)s->ow) * s->sw - s->pl;
		const float *base = in + n * (size_t)s->h * s->w * gc + (size_t)g * c;
		float *d = a + (mm - m0) * kdim;
		/* a window row inside the image of an ungrouped, undilated
		 * convolution is one contiguous run of the input */
		const int rowrun = s->dw == 1 && gc == c && iw0 >= 0 && iw0 + s->kw <= s->w;
		for (int kh = 0; kh < s->kh; kh++) {
			int ih = ih0 + kh * s->dh;
			if (ih < 0 || ih >= s->h) {
				memset(d, 0, (size_t)s->kw * c * sizeof(float));
				d += (size_t)s->kw * c;
				continue;
			}
			if (rowrun) {
				memcpy(d, base + ((size_t)ih * s->w + (size_t)iw0) * gc, (size_t)s->kw * c * sizeof(float));
				d += (size_t)s->kw * c;
				continue;
			}
			for (int kw = 0; kw < s->kw; kw++, d += c) {
				int iw = iw0 + kw * s->dw;
				if (iw < 0 || iw >= s->w)
					memset(d, 0, (size_t)c * sizeof(float));
				else
					memcpy(d, base + ((size_t)ih * s->w + (size_t)iw) * gc, (size_t)c * sizeof(float));
			}
		}
	}
}

/* out = act(conv(in, filter) + bias [+ res]) through cblas_sgemm. wp and
 * bias are laid out as above; res is NULL or has out's layout (out may be
 * res). scratch holds min(mc, M) * K floats (unused by 1x1 convolutions
 * read in place). */
CB_KERNEL void cb_conv_blas_f32(const struct cb_conv_args *s, const float *in, const float *wp, const float *bias,
				float *out, const float *res, float *scratch)
{
	const size_t mtot = (size_t)s->n * s->oh * s->ow;
	const size_t kdim = (size_t)s->kh * s->kw * s->c;
	const int gc = s->groups * s->c, goc = s->groups * s->oc;
	const size_t ost = s->ostride ? (size_t)s->ostride : (size_t)goc;
	const int direct = s->kh == 1 && s->kw == 1 && s->sh == 1 && s->sw == 1 && s->pt == 0 && s->pl == 0 &&
			   s->oh == s->h && s->ow == s->w;
	/* the residual is the output itself: bias first, then accumulate */
	const int inplace = res && res == out;
	const size_t mc = s->mc > 0 && (size_t)s->mc < mtot ? (size_t)s->mc : mtot;
	for (size_t m0 = 0; m0 < mtot; m0 += mc) {
		size_t m1 = cb_min_sz(mtot, m0 + mc);
		if (inplace)
			for (size_t m = m0; m < m1; m++)
				for (int j = 0; j < goc; j++)
					out[m * ost + (size_t)j] += bias[j];
		for (int g = 0; g < s->groups; g++) {
			const float *a = in + m0 * (size_t)gc + (size_t)g * s->c;
			int lda = gc;
			if (!direct) {
				cb_blas_im2col(s, in, scratch, m0, m1, g);
				a = scratch;
				lda = (int)kdim;
			}
			cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)(m1 - m0), s->oc, (int)kdim, 1.0f, a,
				    cb_ld((size_t)lda), wp + (size_t)g * kdim * s->oc, cb_ld((size_t)s->oc),
				    inplace ? 1.0f : 0.0f, out + m0 * ost + (size_t)g * s->oc, cb_ld(ost));
		}
		for (size_t m = m0; m < m1; m++) {
			float *CB_RESTRICT o = out + m * ost;
			if (inplace) {
				if (s->act != CB_ACT_NONE)
					for (int j = 0; j < goc; j++)
						o[j] = cb_act(o[j], s->act, s->lo, s->hi);
			} else if (res) {
				const float *CB_RESTRICT r = res + m * (size_t)goc;
				for (int j = 0; j < goc; j++)
					o[j] = cb_act(o[j] + bias[j] + r[j], s->act, s->lo, s->hi);
			} else if (s->act == CB_ACT_RELU) {
				for (int j = 0; j < goc; j++) {
					float v = o[j] + bias[j];
					o[j] = v > 0.0f ? v : 0.0f;
				}
			} else {
				for (int j = 0; j < goc; j++)
					o[j] = cb_act(o[j] + bias[j], s->act, s->lo, s->hi);
			}
		}
	}
}

/* c[q] = a[q] b[q] (+ bias per column) for each of batch products of an
 * n x k and a k x m matrix, all row-major and contiguous. */
CB_KERNEL void cb_matmul_blas_f32(const float *a, const float *b, const float *bias, float *c, size_t batch, size_t n,
				  size_t k, size_t m)
{
	for (size_t q = 0; q < batch; q++) {
		float *cq = c + q * n * m;
		if (bias)
			for (size_t i = 0; i < n; i++)
				memcpy(cq + i * m, bias, m * sizeof(float));
		if (n && m)
			cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)n, (int)m, (int)k, 1.0f,
				    a + q * n * k, cb_ld(k), b + q * k * m, cb_ld(m), bias ? 1.0f : 0.0f, cq, cb_ld(m));
	}
}

/* Gemm: y[mm x nn] = alpha * A' B' + beta * C, C read through strides
 * (cs0, cs1) so that a vector or a scalar broadcasts (cb_gemm_f32's
 * contract): y starts as beta * C and sgemm accumulates. */
CB_KERNEL void cb_gemm_blas_f32(const float *a, const float *b, const float *cm, float *y, size_t mm, size_t nn,
				size_t kk, int ta, int tb, float alpha, float beta, size_t cs0, size_t cs1)
{
	for (size_t i = 0; i < mm; i++)
		for (size_t j = 0; j < nn; j++)
			y[i * nn + j] = beta * cm[i * cs0 + j * cs1];
	if (mm == 0 || nn == 0)
		return;
	cblas_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, (int)mm, (int)nn,
		    (int)kk, alpha, a, cb_ld(ta ? mm : kk), b, cb_ld(tb ? kk : nn), 1.0f, y, cb_ld(nn));
}
