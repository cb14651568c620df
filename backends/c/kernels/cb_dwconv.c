/* cb_dwconv.c - the convolutions that are not matrix products: depthwise
 * (one filter per channel, channels innermost so every tap is a vector
 * multiply-add; split among the threads by output rows) and the
 * reference convolution for filters that are not constants. */
#include "cb_base.h"
#include "cb_thread.h"

/* The taps *k0 .. *k1-1 of a window of k taps, dilation d, whose first tap
 * is at input position i0, that fall inside the image's 0 .. size-1 (the
 * others read padding). */
CB_INLINE void cb_tap_range(int i0, int k, int d, int size, int *k0, int *k1)
{
	int a = 0, b = k;
	while (a < b && i0 + a * d < 0)
		a++;
	while (b > a && i0 + (b - 1) * d >= size)
		b--;
	*k0 = a;
	*k1 = b;
}

/* the pixels of one cb_dw3_run block */
#define CB_DW_PB 4

#if CB_HAVE_VEC
/* A depthwise sum y finished into *o: plus the residual at r (NULL:
 * none), then the activation. */
static CB_ALWAYS_INLINE void cb_dw_store(const struct cb_conv_args *s, cb_vf y, const float *r, float *o)
{
	if (r)
		y += *(const cb_vf *)r;
	if (s->act == CB_ACT_RELU)
		y = cb_vrelu(y);
	if (s->act == CB_ACT_CLIP) {
		float t[CB_VL];
		*(cb_vf *)t = y;
		for (int j = 0; j < CB_VL; j++)
			t[j] = cb_act(t[j], s->act, s->lo, s->hi);
		y = *(const cb_vf *)t;
	}
	*(cb_vf *)o = y;
}

/* Channels c0 .. c0 + nv * CB_VL - 1 of the output pixel o (its offset
 * off in res) whose window starts at (ih0, iw0) of image n, taps kh0 ..
 * kh1-1 by kw0 .. kw1-1 inside the image: nv independent FMA chains over
 * the taps, in registers, then residual, activation and store. */
static CB_ALWAYS_INLINE void cb_dw_block(const struct cb_conv_args *s, const float *in, const float *wp,
					 const float *bias, float *CB_RESTRICT o, const float *res, size_t off, int n,
					 int ih0, int iw0, int kh0, int kh1, int kw0, int kw1, int c0, const int nv)
{
	const int ch = s->groups;
	cb_vf a[4];
	for (int v = 0; v < nv; v++)
		a[v] = *(const cb_vf *)(bias + c0 + v * CB_VL);
	for (int kh = kh0; kh < kh1; kh++) {
		const int ih = ih0 + kh * s->dh;
		for (int kw = kw0; kw < kw1; kw++) {
			const int iw = iw0 + kw * s->dw;
			const float *x = in + (((size_t)n * s->h + ih) * s->w + iw) * ch + c0;
			const float *f = wp + ((size_t)kh * s->kw + kw) * ch + c0;
			for (int v = 0; v < nv; v++)
				a[v] = CB_FMA(a[v], *(const cb_vf *)(x + v * CB_VL), *(const cb_vf *)(f + v * CB_VL));
		}
	}
	for (int v = 0; v < nv; v++)
		cb_dw_store(s, a[v], res ? res + off + c0 + v * CB_VL : NULL, o + c0 + v * CB_VL);
}

/* A 3x3 window of unit dilation and width stride SW (1 or 2, a constant
 * once inlined): the output pixels oa .. oe-1 (whole blocks of CB_DW_PB)
 * of output row oh of image n (every tap inside the image in width; taps
 * kh0 .. kh1-1 in height) at channels c0 .. c0 + CB_VL - 1. The nine
 * filter vectors stay in registers (when kh0 and kh1 are constants:
 * cb_dw3_row) and CB_DW_PB pixels go at once, each input vector loaded
 * once for the taps of all of them that read it (a stride-1 row of four
 * pixels: six loads per filter row instead of twelve, and none of the
 * filter): the per-pixel block loads two vectors per multiply-add. Each
 * pixel's sum takes its taps in the same order (kh, then kw), so the
 * result is the per-pixel block's. */
static CB_ALWAYS_INLINE void cb_dw3_run(const struct cb_conv_args *s, const float *in, const float *wp,
					const float *bias, float *out, const float *res, int n, int oh, int kh0,
					int kh1, int oa, int oe, int c0, const int sw)
{
	const int ch = s->groups;
	const size_t ost = s->ostride ? (size_t)s->ostride : (size_t)ch;
	cb_vf f[3][3];
	for (int kh = 0; kh < 3; kh++)
		for (int kw = 0; kw < 3; kw++)
			f[kh][kw] = *(const cb_vf *)(wp + ((size_t)kh * 3 + kw) * ch + c0);
	const cb_vf b = *(const cb_vf *)(bias + c0);
	const int ih0 = oh * s->sh - s->pt;
	for (int ow = oa; ow < oe; ow += CB_DW_PB) {
		cb_vf a[CB_DW_PB];
		for (int p = 0; p < CB_DW_PB; p++)
			a[p] = b;
		for (int kh = kh0; kh < kh1; kh++) {
			const size_t ih = (size_t)(ih0 + kh), iw = (size_t)(ow * sw - s->pl);
			const float *x = in + (((size_t)n * s->h + ih) * s->w + iw) * ch + c0;
			/* input column j serves pixel p's tap j - p * sw */
			for (int j = 0; j < (CB_DW_PB - 1) * sw + 3; j++) {
				const cb_vf xv = *(const cb_vf *)(x + (size_t)j * ch);
				for (int p = 0; p < CB_DW_PB; p++)
					if (j - p * sw >= 0 && j - p * sw < 3)
						a[p] = CB_FMA(a[p], xv, f[kh][j - p * sw]);
			}
		}
		for (int p = 0; p < CB_DW_PB; p++) {
			const size_t pix = ((size_t)n * s->oh + (size_t)oh) * s->ow + (size_t)(ow + p);
			cb_dw_store(s, a[p], res ? res + pix * ch + c0 : NULL, out + pix * ost + c0);
		}
	}
}

/* cb_dw3_run on output row oh for channels c0 .. c0 + CB_VL - 1. A row
 * whose three taps in height are all inside the image runs with constant
 * tap bounds: the loop over them unrolls, so the nine filter vectors stay
 * in registers, where a run-time bound leaves them in memory and every
 * FMA loads one (20% of ShuffleNet's depthwise time). */
static CB_ALWAYS_INLINE void cb_dw3_row(const struct cb_conv_args *s, const float *in, const float *wp,
					const float *bias, float *out, const float *res, int n, int oh, int kh0,
					int kh1, int oa, int orun, int c0)
{
	if (kh0 == 0 && kh1 == 3) {
		if (s->sw == 1)
			cb_dw3_run(s, in, wp, bias, out, res, n, oh, 0, 3, oa, orun, c0, 1);
		else
			cb_dw3_run(s, in, wp, bias, out, res, n, oh, 0, 3, oa, orun, c0, 2);
	} else if (s->sw == 1) {
		cb_dw3_run(s, in, wp, bias, out, res, n, oh, kh0, kh1, oa, orun, c0, 1);
	} else {
		cb_dw3_run(s, in, wp, bias, out, res, n, oh, kh0, kh1, oa, orun, c0, 2);
	}
}
#endif

/* Depthwise convolution (groups == channels, one filter per channel): each
 * output pixel is a sum over taps of channel vectors. wp is the filter
 * transposed to KH x KW x C; bias has C values. Channels innermost, so the
 * loops vectorize: blocks of four vectors, then single vectors, then (with
 * vectors of 8 or 16) a half vector, then channel by channel; a channel's
 * sum is the same whichever block computes it. */
static void cb_dwconv_rows(const struct cb_conv_args *s, const float *in, const float *wp, const float *bias,
			   float *out, const float *res, size_t rb, size_t re)
{
	const int ch = s->groups;
	/* 3x3 windows of unit dilation, width stride 1 or 2: the whole
	 * vectors of channels of the pixels whose windows lie inside the
	 * image in width, oa .. ob-1, by cb_dw3_run in blocks, the rest pixel
	 * by pixel */
	int oa = 0, orun = 0, cfast = 0;
#if CB_HAVE_VEC
	if (s->kh == 3 && s->kw == 3 && s->dh == 1 && s->dw == 1 && (s->sw == 1 || s->sw == 2)) {
		oa = (s->pl + s->sw - 1) / s->sw;
		int ob = s->w - 3 + s->pl < 0 ? 0 : (s->w - 3 + s->pl) / s->sw + 1;
		ob = ob > s->ow ? s->ow : ob;
		if (ob - oa >= CB_DW_PB)
			cfast = ch / CB_VL * CB_VL;
		/* cb_dw3_run's pixels: whole blocks from oa (it leaves
		 * (ob - oa) % CB_DW_PB at the end) */
		orun = oa + (ob - oa) / CB_DW_PB * CB_DW_PB;
	}
#endif
	for (size_t row = rb; row < re; row++) {
		const int n = (int)(row / (size_t)s->oh), oh = (int)(row % (size_t)s->oh);
		{
			/* the taps inside the image: kh0 .. kh1-1, kw0 .. kw1-1 (tap
			 * ranges rather than a test per tap; gcc 12 at -O3 with AVX-512
			 * miscompiled the channel loop below a skipped tap) */
			const int ih0 = oh * s->sh - s->pt;
			int kh0, kh1;
			cb_tap_range(ih0, s->kh, s->dh, s->h, &kh0, &kh1);
#if CB_HAVE_VEC
			for (int c0 = 0; c0 < cfast; c0 += CB_VL)
				cb_dw3_row(s, in, wp, bias, out, res, n, oh, kh0, kh1, oa, orun, c0);
#endif
			for (int ow = 0; ow < s->ow; ow++) {
				const int iw0 = ow * s->sw - s->pl;
				int kw0, kw1;
				cb_tap_range(iw0, s->kw, s->dw, s->w, &kw0, &kw1);
				size_t pix = ((size_t)n * s->oh + oh) * s->ow + ow, off = pix * ch;
				float *CB_RESTRICT o = out + pix * (s->ostride ? (size_t)s->ostride : (size_t)ch);
				int cdone = cfast && ow >= oa && ow < orun ? cfast : 0;
#if CB_HAVE_VEC
				for (; cdone + 4 * CB_VL <= ch; cdone += 4 * CB_VL)
					cb_dw_block(s, in, wp, bias, o, res, off, n, ih0, iw0, kh0, kh1, kw0, kw1, cdone, 4);
				for (; cdone + CB_VL <= ch; cdone += CB_VL)
					cb_dw_block(s, in, wp, bias, o, res, off, n, ih0, iw0, kh0, kh1, kw0, kw1, cdone, 1);
#ifdef CB_VH
				if (cdone + CB_VH <= ch) {
					cb_vh a = *(const cb_vh *)(bias + cdone);
					for (int kh = kh0; kh < kh1; kh++) {
						const int ih = ih0 + kh * s->dh;
						for (int kw = kw0; kw < kw1; kw++) {
							const int iw = iw0 + kw * s->dw;
							a = CB_FMAH(a, *(const cb_vh *)(in + (((size_t)n * s->h + ih) * s->w + iw) * ch + cdone),
								       *(const cb_vh *)(wp + ((size_t)kh * s->kw + kw) * ch + cdone));
						}
					}
					if (res)
						a += *(const cb_vh *)(res + off + cdone);
					for (int j = 0; j < CB_VH; j++)
						o[cdone + j] = cb_act(a[j], s->act, s->lo, s->hi);
					cdone += CB_VH;
				}
#endif
#endif
				float acc[256];
				for (int c0 = cdone; c0 < ch; c0 += 256) {
					int cn = ch - c0 < 256 ? ch - c0 : 256;
					for (int c = 0; c < cn; c++)
						acc[c] = bias[c0 + c];
					for (int kh = kh0; kh < kh1; kh++) {
						int ih = ih0 + kh * s->dh;
						for (int kw = kw0; kw < kw1; kw++) {
							int iw = iw0 + kw * s->dw;
							const float *CB_RESTRICT x =
								in + (((size_t)n * s->h + ih) * s->w + iw) * ch + c0;
							const float *CB_RESTRICT f =
								wp + ((size_t)kh * s->kw + kw) * ch + c0;
							for (int c = 0; c < cn; c++)
								acc[c] += x[c] * f[c];
						}
					}
					if (res)
						for (int c = 0; c < cn; c++)
							acc[c] += res[off + c0 + c];
					for (int c = 0; c < cn; c++)
						o[c0 + c] = cb_act(acc[c], s->act, s->lo, s->hi);
				}
			}
		}
	}
}

/* The depthwise convolution split by output rows among the threads. */
struct cb_dw_job {
	const struct cb_conv_args *s;
	const float *in, *wp, *bias, *res;
	float *out;
	int nparts;
};

static void cb_dw_part(const void *ctx, int i, float *scratch)
{
	const struct cb_dw_job *j = ctx;
	const size_t rows = (size_t)j->s->n * j->s->oh;
	(void)scratch;
	cb_dwconv_rows(j->s, j->in, j->wp, j->bias, j->out, j->res, cb_par_first(i, j->nparts, rows),
		       cb_par_first(i + 1, j->nparts, rows));
}

CB_KERNEL void cb_dwconv_f32(const struct cb_conv_args *s, const float *in, const float *wp, const float *bias,
			     float *out, const float *res)
{
	const size_t rows = (size_t)s->n * s->oh;
	struct cb_dw_job j = {s, in, wp, bias, res, out, 0};
	j.nparts = cb_par_parts((double)rows * s->ow * s->groups * s->kh * s->kw, rows);
	cb_par(cb_dw_part, &j, j.nparts, NULL);
}

/* Reference convolution for filters that are not constants (nothing to
 * pack): filter OC*groups x KH x KW x C in its graph layout, bias OC*groups. */
CB_KERNEL void cb_conv_ref_f32(const struct cb_conv_args *s, const float *in, const float *f, const float *bias,
			    float *out)
{
	const int gc = s->groups * s->c, goc = s->groups * s->oc;
	for (int n = 0; n < s->n; n++)
		for (int oh = 0; oh < s->oh; oh++)
			for (int ow = 0; ow < s->ow; ow++)
				for (int o = 0; o < goc; o++) {
					int g = o / s->oc;
					float acc = bias[o];
					for (int kh = 0; kh < s->kh; kh++) {
						int ih = oh * s->sh - s->pt + kh * s->dh;
						if (ih < 0 || ih >= s->h)
							continue;
						for (int kw = 0; kw < s->kw; kw++) {
							int iw = ow * s->sw - s->pl + kw * s->dw;
							if (iw < 0 || iw >= s->w)
								continue;
							const float *x = in + (((size_t)n * s->h + ih) * s->w + iw) * gc +
									 (size_t)g * s->c;
							const float *fw = f + (((size_t)o * s->kh + kh) * s->kw + kw) * s->c;
							for (int c = 0; c < s->c; c++)
								acc += x[c] * fw[c];
						}
					}
					out[(((size_t)n * s->oh + oh) * s->ow + ow) * goc + o] =
						cb_act(acc, s->act, s->lo, s->hi);
				}
}
