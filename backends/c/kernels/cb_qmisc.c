/* cb_qmisc.c - the quantized kernels of a C bundle other than the packed
 * 8-bit products (cb_qconv.c): the reference product for what that path
 * does not take (16-bit operands, a K past 32768, depthwise layers,
 * operands that are not constants), pooling, and the elementwise kinds
 * with their own integer arithmetic (add, sub, max, min, mul, relu, clip,
 * sigmoid and tanh). Bit for bit the interpreter's
 * (backends/interpreter/k_quant.c), as docs/Quantization.md states.
 *
 * Element kinds are codes (literal in each call, so the compiler folds
 * the switch): CB_QI8, CB_QU8, CB_QI16, CB_QI32.
 */
#include "cb_base.h"
#include "cb_qconv.c"

enum { CB_QI8 = 0, CB_QU8 = 1, CB_QI16 = 2, CB_QI32 = 3 };

/* stored element i of kind k */
CB_INLINE int64_t cb_qld(int k, const void *p, size_t i)
{
	switch (k) {
	case CB_QI8: return ((const int8_t *)p)[i];
	case CB_QU8: return ((const uint8_t *)p)[i];
	case CB_QI16: return ((const int16_t *)p)[i];
	default: return ((const int32_t *)p)[i];
	}
}

/* stores v (already in kind k's range) as element i */
CB_INLINE void cb_qst(int k, void *p, size_t i, int64_t v)
{
	switch (k) {
	case CB_QI8: ((int8_t *)p)[i] = (int8_t)v; break;
	case CB_QU8: ((uint8_t *)p)[i] = (uint8_t)v; break;
	case CB_QI16: ((int16_t *)p)[i] = (int16_t)v; break;
	default: ((int32_t *)p)[i] = (int32_t)v; break;
	}
}

/* offset + v saturated to [lo, hi] */
CB_INLINE int64_t cb_qsat(int64_t v, int64_t off, int64_t lo, int64_t hi)
{
	v += off;
	return v < lo ? lo : v > hi ? hi : v;
}

/* The shape and element kinds of a reference product: a convolution
 * (grouped, dilated) over n x h x w x (groups * c) or, with h = w = kh =
 * kw = 1, a fully-connected layer or matmul; rpb rows per batch, each
 * batch reading its own weights wsb elements further (batchmatmul). */
struct cb_qref_args {
	int n, h, w, c, oh, ow, oc, kh, kw, sh, sw, pt, pl, dh, dw, groups;
	int xk, wk, dk;        /* element kinds of input, weights, output */
	int64_t xoff;          /* the input's zero point */
	int64_t wso, wsk, wsb; /* weight strides: output channel, k, batch */
	int64_t rpb;           /* output rows per batch (0: one batch) */
	int64_t doff, lo, hi;  /* output zero point and range */
};

/* The reference product: per output channel o (groups * oc of them) the
 * weights' zero point woff[o], the accumulator's bias bias[o] and the
 * requantization mult[o], shift[o]; 64-bit sums. */
CB_KERNEL void cb_qref(const struct cb_qref_args *s, const void *x, const void *wt, const int64_t *woff,
		       const int64_t *bias, const int64_t *mult, const int64_t *shift, void *d)
{
	size_t rows = (size_t)s->n * (size_t)s->oh * (size_t)s->ow, ocs = (size_t)s->groups * (size_t)s->oc;
	size_t cs = (size_t)s->groups * (size_t)s->c;
	for (size_t m = 0; m < rows; m++) {
		size_t ox = m % (size_t)s->ow, oy = m / (size_t)s->ow % (size_t)s->oh,
		       n = m / ((size_t)s->ow * (size_t)s->oh);
		size_t wb = s->rpb ? m / (size_t)s->rpb * (size_t)s->wsb : 0;
		for (size_t o = 0; o < ocs; o++) {
			size_t g = o / (size_t)s->oc;
			int64_t acc = 0;
			size_t k = 0;
			for (int ky = 0; ky < s->kh; ky++) {
				int iy = (int)oy * s->sh + ky * s->dh - s->pt;
				for (int kx = 0; kx < s->kw; kx++, k += (size_t)s->c) {
					int ix = (int)ox * s->sw + kx * s->dw - s->pl;
					if (iy < 0 || iy >= s->h || ix < 0 || ix >= s->w)
						continue;
					size_t xi = ((n * (size_t)s->h + (size_t)iy) * (size_t)s->w + (size_t)ix) * cs +
						    g * (size_t)s->c;
					for (size_t c = 0; c < (size_t)s->c; c++) {
						size_t wi = wb + o * (size_t)s->wso + (k + c) * (size_t)s->wsk;
						acc += (cb_qld(s->xk, x, xi + c) - s->xoff) * (cb_qld(s->wk, wt, wi) - woff[o]);
					}
				}
			}
			int64_t v = cb_q_requant(acc + bias[o], mult[o], (int)shift[o]);
			cb_qst(s->dk, d, m * ocs + o, cb_qsat(v, s->doff, s->lo, s->hi));
		}
	}
}

#if defined(CB_Q_VNNI512)
/* 8 floats of cb_qquant8 in double lanes: x times the reciprocal inv of
 * scale s, or x / s where that lies near a half-integer (near: the
 * distance to the nearest integer from which a vector is divided) */
CB_INLINE void cb_qquant8_x8(const float *x, uint8_t *d, __m512d s, __m512d inv, __m512d near, __m512d off,
			     __m512d lo, __m512d hi)
{
	__m512d f = _mm512_cvtps_pd(_mm256_loadu_ps(x)), y = _mm512_mul_pd(f, inv);
	__m512d v = _mm512_roundscale_pd(y, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
	/* |y - v| is the distance to the nearest integer: at most 1/2 */
	if (_mm512_cmp_pd_mask(_mm512_abs_pd(_mm512_sub_pd(y, v)), near, _CMP_GE_OQ))
		v = _mm512_roundscale_pd(_mm512_div_pd(f, s), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
	v = _mm512_maskz_mov_pd(_mm512_cmp_pd_mask(v, v, _CMP_ORD_Q), v);
	v = _mm512_min_pd(_mm512_max_pd(_mm512_add_pd(v, off), lo), hi);
	_mm256_mask_cvtepi32_storeu_epi8((void *)d, 0xff, _mm512_cvtpd_epi32(v));
}
#endif

/* Quantize of n floats x to 8-bit stored values d: round(x / scale) half
 * to even in double (NaN to 0), plus off, saturated to [lo, hi], as the
 * interpreter stores a real value; AVX-512: 8 a step in double lanes.
 * There the quotient is x times the reciprocal of scale (vdivpd costs 16
 * cycles a vector): it and the exact quotient are within 2^-50 relative
 * of x / scale, so both round to the same integer unless x / scale lies
 * near a half-integer; a vector with such a lane (rare: within 2^-20 of
 * one) is divided as the interpreter does. Before them, 16 at a time in
 * float lanes, which hand a vector near a half-integer to the double
 * ones. */
CB_KERNEL void cb_qquant8(size_t n, const float *x, double scale, double off, double lo, double hi, uint8_t *d)
{
	size_t i = 0;
#if defined(CB_Q_VNNI512)
	const __m512d vs = _mm512_set1_pd(scale), vo = _mm512_set1_pd(off), vl = _mm512_set1_pd(lo),
		      vh = _mm512_set1_pd(hi), inv = _mm512_set1_pd(1.0 / scale);
	const __m512d near = _mm512_set1_pd(0.5 - 0x1p-20);
	/* first 16 at a time in float lanes: y = x times the float reciprocal
	 * is within 2^-23 |x / scale| of it; a vector with a y within 2^-10
	 * of a half-integer (|y| < 2^11: larger ones saturate whichever way
	 * they round) goes through the double lanes */
	const __m512 finv = _mm512_set1_ps((float)(1.0 / scale)), fnear = _mm512_set1_ps(0.5f - 0x1p-10f);
	const __m512 fo = _mm512_set1_ps((float)off), fl = _mm512_set1_ps((float)lo), fh = _mm512_set1_ps((float)hi);
	/* (with a reciprocal that is a normal float) */
	for (; scale > 0x1p-125 && scale < 0x1p125 && i + 16 <= n; i += 16) {
		__m512 y = _mm512_mul_ps(_mm512_loadu_ps(x + i), finv);
		__m512 v = _mm512_roundscale_ps(y, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
		if (_mm512_cmp_ps_mask(_mm512_abs_ps(_mm512_sub_ps(y, v)), fnear, _CMP_GE_OQ)) {
			cb_qquant8_x8(x + i, d + i, vs, inv, near, vo, vl, vh);
			cb_qquant8_x8(x + i + 8, d + i + 8, vs, inv, near, vo, vl, vh);
			continue;
		}
		v = _mm512_maskz_mov_ps(_mm512_cmp_ps_mask(v, v, _CMP_ORD_Q), v);
		v = _mm512_min_ps(_mm512_max_ps(_mm512_add_ps(v, fo), fl), fh);
		_mm_storeu_si128((__m128i *)(void *)(d + i), _mm512_cvtepi32_epi8(_mm512_cvtps_epi32(v)));
	}
	for (; i + 8 <= n; i += 8)
		cb_qquant8_x8(x + i, d + i, vs, inv, near, vo, vl, vh);
#endif
	for (; i < n; i++) {
		double r = nearbyint((double)x[i] / scale);
		r = (r != r ? 0 : r) + off;
		r = r <= lo ? lo : r >= hi ? hi : r;
		d[i] = (uint8_t)(int8_t)(int64_t)r;
	}
}

/* The shape of a quantized pooling: NHWC in and out, window, strides,
 * pads (the adaptive kind's windows follow from the shapes). */
struct cb_qpool_args {
	int n, h, w, c, oh, ow, kh, kw, sh, sw, pt, pl;
	int incl;     /* average: divide by the whole window, pads included */
	int xk, dk;   /* element kinds */
	int64_t xoff; /* the input's zero point (average) */
	int64_t doff, lo, hi, zero; /* output zero point, range; max of a window in the padding only */
};

/* The window of output pixel (oy, ox): rows [y0, y1), columns [x0, x1),
 * clipped to the image. */
CB_INLINE void cb_qpool_win(const struct cb_qpool_args *s, int adaptive, int oy, int ox, int *y0, int *y1, int *x0,
			    int *x1)
{
	if (adaptive) {
		*y0 = oy * s->h / s->oh, *y1 = ((oy + 1) * s->h + s->oh - 1) / s->oh;
		*x0 = ox * s->w / s->ow, *x1 = ((ox + 1) * s->w + s->ow - 1) / s->ow;
		return;
	}
	*y0 = oy * s->sh - s->pt, *y1 = *y0 + s->kh;
	*x0 = ox * s->sw - s->pl, *x1 = *x0 + s->kw;
	*y0 = *y0 < 0 ? 0 : *y0, *x0 = *x0 < 0 ? 0 : *x0;
	*y1 = *y1 > s->h ? s->h : *y1, *x1 = *x1 > s->w ? s->w : *x1;
}

/* Max pooling on stored integers (the same parameters in and out); am,
 * when not NULL, receives the flat input index of each maximum (the
 * first in window order; -1 for a window in the padding only). */
CB_KERNEL void cb_qmaxpool(const struct cb_qpool_args *s, const void *x, void *d, int64_t *am)
{
	size_t oi = 0;
	for (int n = 0; n < s->n; n++)
		for (int oy = 0; oy < s->oh; oy++)
			for (int ox = 0; ox < s->ow; ox++) {
				int y0, y1, x0, x1;
				cb_qpool_win(s, 0, oy, ox, &y0, &y1, &x0, &x1);
				for (int c = 0; c < s->c; c++, oi++) {
					int64_t best = INT64_MIN, bi = -1;
					for (int iy = y0; iy < y1; iy++)
						for (int ix = x0; ix < x1; ix++) {
							size_t xi = (((size_t)n * (size_t)s->h + (size_t)iy) * (size_t)s->w +
								     (size_t)ix) * (size_t)s->c +
								    (size_t)c;
							int64_t v = cb_qld(s->xk, x, xi);
							if (v > best)
								best = v, bi = (int64_t)xi;
						}
					cb_qst(s->dk, d, oi, bi >= 0 ? best : s->zero);
					if (am)
						am[oi] = bi;
				}
			}
}

/* The maximum, channel by channel, of c bytes at x into m (signed bytes
 * when sgn). */
CB_INLINE void cb_qmax_bytes(uint8_t *CB_RESTRICT m, const uint8_t *CB_RESTRICT x, int c, int sgn)
{
	if (sgn)
		for (int i = 0; i < c; i++)
			m[i] = (int8_t)x[i] > (int8_t)m[i] ? x[i] : m[i];
	else
		for (int i = 0; i < c; i++)
			m[i] = x[i] > m[i] ? x[i] : m[i];
}

/* Max pooling of 8-bit elements (the kind's code xk, CB_QI8 or CB_QU8):
 * channels innermost, each output pixel started from its window's first
 * pixel; a window in the padding only gives s->zero. */
CB_KERNEL void cb_qmaxpool8(const struct cb_qpool_args *s, const uint8_t *x, uint8_t *d)
{
	const int c = s->c, sgn = s->xk == CB_QI8;
	for (int n = 0; n < s->n; n++)
		for (int oy = 0; oy < s->oh; oy++)
			for (int ox = 0; ox < s->ow; ox++, d += c) {
				int y0, y1, x0, x1;
				cb_qpool_win(s, 0, oy, ox, &y0, &y1, &x0, &x1);
				if (y0 >= y1 || x0 >= x1) {
					memset(d, (int)(uint8_t)s->zero, (size_t)c);
					continue;
				}
				const uint8_t *b = x + ((size_t)n * (size_t)s->h * (size_t)s->w) * (size_t)c;
				memcpy(d, b + ((size_t)y0 * (size_t)s->w + (size_t)x0) * (size_t)c, (size_t)c);
				for (int iy = y0; iy < y1; iy++)
					for (int ix = x0; ix < x1; ix++)
						cb_qmax_bytes(d, b + ((size_t)iy * (size_t)s->w + (size_t)ix) * (size_t)c, c, sgn);
			}
}

/* Average and adaptive average pooling: the window's sum of centred
 * inputs requantized by (s_x / s_d) / count, the multiplier and shift of
 * count i at mult[i], shift[i] (i up to the largest window). */
CB_KERNEL void cb_qavgpool(const struct cb_qpool_args *s, int adaptive, const void *x, const int64_t *mult,
			   const int64_t *shift, void *d)
{
	size_t oi = 0;
	for (int n = 0; n < s->n; n++)
		for (int oy = 0; oy < s->oh; oy++)
			for (int ox = 0; ox < s->ow; ox++) {
				int y0, y1, x0, x1;
				cb_qpool_win(s, adaptive, oy, ox, &y0, &y1, &x0, &x1);
				int cnt = y1 > y0 && x1 > x0 ? (y1 - y0) * (x1 - x0) : 0;
				int div = s->incl && !adaptive ? s->kh * s->kw : cnt;
				for (int c = 0; c < s->c; c++, oi++) {
					int64_t sum = 0;
					for (int iy = y0; iy < y1; iy++)
						for (int ix = x0; ix < x1; ix++)
							sum += cb_qld(s->xk, x,
								      (((size_t)n * (size_t)s->h + (size_t)iy) * (size_t)s->w +
								       (size_t)ix) * (size_t)s->c +
									      (size_t)c) -
							       s->xoff;
					int64_t v = div ? cb_q_requant(sum, mult[div], (int)shift[div]) : 0;
					cb_qst(s->dk, d, oi, cb_qsat(v, s->doff, s->lo, s->hi));
				}
			}
}

/* One operand of an elementwise kind: its kind, zero point, and the
 * requantization into the result's units (mult, shift). */
struct cb_qopnd {
	int k;
	int64_t off, mult, shift;
};

/* The result of an elementwise kind: kind, zero point, range. */
struct cb_qres {
	int k;
	int64_t off, lo, hi;
};


/* d = a op b over n elements. */
CB_KERNEL void cb_qbinary(int op, size_t n, const void *a, struct cb_qopnd qa, const void *b, struct cb_qopnd qb,
			  void *d, struct cb_qres r)
{
	for (size_t i = 0; i < n; i++) {
		int64_t x = cb_qld(qa.k, a, i) - qa.off, y = cb_qld(qb.k, b, i) - qb.off, v;
		if (op == CB_QMUL)
			v = cb_q_requant(x * y, qa.mult, (int)qa.shift);
		else {
			x = cb_q_requant(x, qa.mult, (int)qa.shift);
			y = cb_q_requant(y, qb.mult, (int)qb.shift);
			v = op == CB_QADD ? x + y : op == CB_QSUB ? x - y : op == CB_QMAX ? (x > y ? x : y) : (x < y ? x : y);
			v = cb_q_rshift(v, 16);
		}
		cb_qst(r.k, d, i, cb_qsat(v, r.off, r.lo, r.hi));
	}
}

/* The quantized relu and clip: a in units of 2^-16 of the result's scale clamped to
 * [cl, ch] there. */
CB_KERNEL void cb_qclamp(size_t n, const void *a, struct cb_qopnd qa, int64_t cl, int64_t ch, void *d, struct cb_qres r)
{
	for (size_t i = 0; i < n; i++) {
		int64_t v = cb_q_requant(cb_qld(qa.k, a, i) - qa.off, qa.mult, (int)qa.shift);
		v = v < cl ? cl : v > ch ? ch : v;
		cb_qst(r.k, d, i, cb_qsat(cb_q_rshift(v, 16), r.off, r.lo, r.hi));
	}
}

/* The quantized sigmoid and tanh of 8-bit inputs: the generator's table of the 256
 * stored results, indexed by the stored input minus base (-128 or 0) */
CB_KERNEL void cb_qlut8(size_t n, const void *a, int ak, int base, const int32_t *tab, void *d, int dk)
{
	for (size_t i = 0; i < n; i++)
		cb_qst(dk, d, i, tab[cb_qld(ak, a, i) - base]);
}

/* The quantized sigmoid (fn 0) or tanh (fn 1) of 16- or 32-bit inputs, per element in
 * double: round(f(sx (q - ox)) / sd) half to even, plus the offset,
 * saturated */
CB_KERNEL void cb_qlut_wide(size_t n, const void *a, struct cb_qopnd qa, double sx, int fn, double sd, void *d,
			    struct cb_qres r)
{
	for (size_t i = 0; i < n; i++) {
		double x = sx * (double)(cb_qld(qa.k, a, i) - qa.off);
		double f = fn ? tanh(x) : 1.0 / (1.0 + exp(-x));
		double v = nearbyint(f / sd) + (double)r.off;
		cb_qst(r.k, d, i, v < (double)r.lo ? r.lo : v > (double)r.hi ? r.hi : (int64_t)v);
	}
}

/* The dequantization of an 8-bit operand: the table of the 256 real values */
CB_KERNEL void cb_qdeq8(size_t n, const uint8_t *CB_RESTRICT a, const float *CB_RESTRICT tab, float *CB_RESTRICT d)
{
	for (size_t i = 0; i < n; i++)
		d[i] = tab[a[i]];
}

/* cb_qbin8_run, then the byte table tab (NULL: none; a fused unary kind)
 * over the result, in chunks that stay in L1 */
CB_KERNEL void cb_qbin8(int op, size_t n, const uint8_t *a, const int64_t *ta, const uint8_t *b, const int64_t *tb,
			uint8_t *d, int64_t off, int64_t lo, int64_t hi, const uint8_t *tab)
{
	for (size_t i = 0; i < n; i += 8192) {
		size_t c = cb_min_sz(8192, n - i);
		cb_qbin8_run(op, c, a + i, ta, b + i, tb, d + i, off, lo, hi);
		if (tab)
			cb_qlut_b(c, d + i, tab, d + i);
	}
}
