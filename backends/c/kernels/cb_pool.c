/* cb_pool.c - pooling over NHWC images. Channels are innermost, so every
 * window position adds or compares a whole row of channels (a loop the
 * compiler vectorizes); the window and pads are literal in the bundle. */
#include "cb_base.h"
#include "cb_thread.h"

struct cb_pool_args {
	int n, h, w, c, oh, ow;
	int kh, kw, sh, sw, pt, pl;
	int include_pads; /* average: divide by kh*kw rather than the taps inside */
};

/* One output row (image n, row oh) of a pooling. */
typedef void (*cb_pool_row_fn)(const struct cb_pool_args *s, const float *in, float *out, int n, int oh);

/* One pooling: its row function and operands, the rows split among the
 * threads (cb_par_ranges over n * oh rows). */
struct cb_pool_call {
	cb_pool_row_fn row;
	const struct cb_pool_args *s;
	const float *in;
	float *out;
};

static void cb_pool_rows(const void *ctx, size_t rb, size_t re)
{
	const struct cb_pool_call *p = ctx;
	const size_t oh = (size_t)p->s->oh;
	for (size_t r = rb; r < re; r++)
		p->row(p->s, p->in, p->out, (int)(r / oh), (int)(r % oh));
}

/* Runs row over every output row; `work` sizes the split (cb_par_parts). */
static void cb_pool_go(cb_pool_row_fn row, const struct cb_pool_args *s, const float *in, float *out, double work)
{
	const struct cb_pool_call p = {row, s, in, out};
	cb_par_ranges(cb_pool_rows, &p, (size_t)s->n * s->oh, work);
}

/* The window rows [*k0, *k1) of output row o that lie inside the input:
 * taps k with 0 <= o * stride - pad + k < size. */
CB_INLINE void cb_pool_taps(int o, int stride, int pad, int k, int size, int *k0, int *k1)
{
	int base = o * stride - pad;
	*k0 = base < 0 ? -base : 0;
	*k1 = base + k > size ? size - base : k;
	if (*k1 < *k0)
		*k1 = *k0;
}

/* The pixel kernel of a pooling: output pixel o (its channels) from the
 * window's taps inside the input, nh rows of nw, the first at x0. */
typedef void (*cb_pool_pixel_fn)(const struct cb_pool_args *s, const float *x0, float *CB_RESTRICT o, int nh, int nw);

/* Output row (n, oh): each pixel's window inside the input, given to px
 * (a window entirely in the padding gives 0). Inlined with a constant px,
 * so px is inlined too. */
CB_INLINE void cb_pool_pixels(const struct cb_pool_args *s, const float *in, float *out, int n, int oh,
			      cb_pool_pixel_fn px)
{
	const int ch = s->c;
	int kh0, kh1;
	cb_pool_taps(oh, s->sh, s->pt, s->kh, s->h, &kh0, &kh1);
	for (int ow = 0; ow < s->ow; ow++) {
		int kw0, kw1;
		cb_pool_taps(ow, s->sw, s->pl, s->kw, s->w, &kw0, &kw1);
		float *o = out + (((size_t)n * s->oh + oh) * s->ow + ow) * ch;
		const int nh = kh1 - kh0, nw = kw1 - kw0;
		if (nh * nw == 0) {
			for (int c = 0; c < ch; c++)
				o[c] = 0.0f;
			continue;
		}
		/* the first tap inside the input */
		px(s, in + (((size_t)n * s->h + (size_t)(oh * s->sh - s->pt + kh0)) * s->w + (size_t)(ow * s->sw - s->pl + kw0)) * ch,
		   o, nh, nw);
	}
}

#if CB_HAVE_VEC
/* Max over the window of channels [c0, c0 + the width of VF) (a vector
 * type VF with an int vector type VI of its lanes), into o: the
 * single-vector and half-vector steps of cb_maxpool_pixel, for channel
 * counts that are not a multiple of four vectors (ShuffleNet's 24). */
#define CB_MAXPOOL_ONE(VF, VI)                                                                      \
	do {                                                                                        \
		VF m = *(const VF *)(x0 + c0);                                                      \
		VI nan = m != m;                                                                    \
		for (int kh = 0; kh < nh; kh++)                                                     \
			for (int kw = 0; kw < nw; kw++) {                                           \
				VF xv = *(const VF *)(x0 + ((ptrdiff_t)kh * s->w + kw) * ch + c0); \
				VI take = xv > m;                                                   \
				m = (VF)(((VI)xv & take) | ((VI)m & ~take));                        \
				nan |= xv != xv;                                                    \
			}                                                                           \
		const VI qnan = nan * 0 + 0x7fc00000; /* the default NaN, as CB_SPLAT(NAN) */       \
		*(VF *)(o + c0) = (VF)((qnan & nan) | ((VI)m & ~nan));                              \
	} while (0)
#if CB_VL >= 8
typedef float cb_maxpool_hf __attribute__((vector_size(CB_VL * 2), aligned(4)));
typedef int32_t cb_maxpool_hi __attribute__((vector_size(CB_VL * 2), aligned(4)));
#endif
#endif

/* Max over each window; taps in the padding are skipped (a window entirely
 * in the padding gives 0); a NaN wins, as in the interpreter (the vector
 * path gives the default NaN, the scalar path the first NaN it meets). The
 * taps inside the input are known per output pixel; channels go four
 * vectors at a time in registers, each tap one comparison and blend for
 * the maximum and one comparison for NaN, then one vector and one half
 * vector at a time. */
static void cb_maxpool_pixel(const struct cb_pool_args *s, const float *x0, float *CB_RESTRICT o, int nh, int nw)
{
	const int ch = s->c;
	int c0 = 0;
#if CB_HAVE_VEC
	for (; c0 + 4 * CB_VL <= ch; c0 += 4 * CB_VL) {
		cb_vf m[4];
		cb_vi nan[4];
		for (int v = 0; v < 4; v++) {
			m[v] = *(const cb_vf *)(x0 + c0 + v * CB_VL);
			nan[v] = m[v] != m[v];
		}
		for (int kh = 0; kh < nh; kh++)
			for (int kw = 0; kw < nw; kw++) {
				const float *x = x0 + ((ptrdiff_t)kh * s->w + kw) * ch + c0;
				for (int v = 0; v < 4; v++) {
					cb_vf xv = *(const cb_vf *)(x + v * CB_VL);
					cb_vi take = xv > m[v];
					m[v] = (cb_vf)(((cb_vi)xv & take) | ((cb_vi)m[v] & ~take));
					nan[v] |= xv != xv;
				}
			}
		const cb_vi qnan = (cb_vi)CB_SPLAT(NAN);
		for (int v = 0; v < 4; v++)
			*(cb_vf *)(o + c0 + v * CB_VL) =
				(cb_vf)((qnan & nan[v]) | ((cb_vi)m[v] & ~nan[v]));
	}
	for (; c0 + CB_VL <= ch; c0 += CB_VL)
		CB_MAXPOOL_ONE(cb_vf, cb_vi);
#if CB_VL >= 8
	if (c0 + CB_VL / 2 <= ch) {
		CB_MAXPOOL_ONE(cb_maxpool_hf, cb_maxpool_hi);
		c0 += CB_VL / 2;
	}
#endif
#endif
	if (c0 == ch)
		return;
	for (int c = c0; c < ch; c++)
		o[c] = -INFINITY;
	for (int kh = 0; kh < nh; kh++)
		for (int kw = 0; kw < nw; kw++) {
			const float *CB_RESTRICT x = x0 + ((ptrdiff_t)kh * s->w + kw) * ch;
			for (int c = c0; c < ch; c++)
				o[c] = x[c] > o[c] || (x[c] != x[c] && o[c] == o[c]) ? x[c] : o[c];
		}
}

static void cb_maxpool_row(const struct cb_pool_args *s, const float *in, float *out, int n, int oh)
{
	cb_pool_pixels(s, in, out, n, oh, cb_maxpool_pixel);
}

CB_KERNEL void cb_maxpool_f32(const struct cb_pool_args *s, const float *in, float *out)
{
	cb_pool_go(cb_maxpool_row, s, in, out, (double)s->n * s->oh * s->ow * s->c * s->kh * s->kw);
}

/* Average over each window. The taps inside the input are known per output
 * pixel, so the window loops carry no test; channels go four vectors at a
 * time with the sums in registers, then one vector, then one by one. */
static void cb_avgpool_pixel(const struct cb_pool_args *s, const float *x0, float *CB_RESTRICT o, int nh, int nw)
{
	const int ch = s->c;
	const int cnt = nh * nw;
	float div = s->include_pads ? (float)(s->kh * s->kw) : (float)cnt;
	float inv = 1.0f / div;
	int c0 = 0;
#if CB_HAVE_VEC
	const cb_vf vinv = CB_SPLAT(inv);
	for (; c0 + 4 * CB_VL <= ch; c0 += 4 * CB_VL) {
		cb_vf a0 = CB_SPLAT(0.0f), a1 = a0, a2 = a0, a3 = a0;
		for (int kh = 0; kh < nh; kh++)
			for (int kw = 0; kw < nw; kw++) {
				const float *x = x0 + ((ptrdiff_t)kh * s->w + kw) * ch + c0;
				a0 += *(const cb_vf *)x;
				a1 += *(const cb_vf *)(x + CB_VL);
				a2 += *(const cb_vf *)(x + 2 * CB_VL);
				a3 += *(const cb_vf *)(x + 3 * CB_VL);
			}
		*(cb_vf *)(o + c0) = a0 * vinv;
		*(cb_vf *)(o + c0 + CB_VL) = a1 * vinv;
		*(cb_vf *)(o + c0 + 2 * CB_VL) = a2 * vinv;
		*(cb_vf *)(o + c0 + 3 * CB_VL) = a3 * vinv;
	}
	for (; c0 + CB_VL <= ch; c0 += CB_VL) {
		cb_vf a = CB_SPLAT(0.0f);
		for (int kh = 0; kh < nh; kh++)
			for (int kw = 0; kw < nw; kw++)
				a += *(const cb_vf *)(x0 + ((ptrdiff_t)kh * s->w + kw) * ch + c0);
		*(cb_vf *)(o + c0) = a * vinv;
	}
#endif
	for (int c = c0; c < ch; c++) {
		float a = 0.0f;
		for (int kh = 0; kh < nh; kh++)
			for (int kw = 0; kw < nw; kw++)
				a += x0[((ptrdiff_t)kh * s->w + kw) * ch + c];
		o[c] = a * inv;
	}
}

static void cb_avgpool_row(const struct cb_pool_args *s, const float *in, float *out, int n, int oh)
{
	cb_pool_pixels(s, in, out, n, oh, cb_avgpool_pixel);
}

CB_KERNEL void cb_avgpool_f32(const struct cb_pool_args *s, const float *in, float *out)
{
	cb_pool_go(cb_avgpool_row, s, in, out, (double)s->n * s->oh * s->ow * s->c * s->kh * s->kw);
}

/* Adaptive average: output cell (i, j) averages input rows
 * [floor(i*H/OH), ceil((i+1)*H/OH)) and the same for columns. */
static void cb_adaptiveavgpool_row(const struct cb_pool_args *s, const float *in, float *out, int n, int oh)
{
	const int ch = s->c;
	int h0 = oh * s->h / s->oh, h1 = ((oh + 1) * s->h + s->oh - 1) / s->oh;
	for (int ow = 0; ow < s->ow; ow++) {
		int w0 = ow * s->w / s->ow, w1 = ((ow + 1) * s->w + s->ow - 1) / s->ow;
		float *CB_RESTRICT o = out + (((size_t)n * s->oh + oh) * s->ow + ow) * ch;
		for (int c = 0; c < ch; c++)
			o[c] = 0.0f;
		for (int ih = h0; ih < h1; ih++)
			for (int iw = w0; iw < w1; iw++) {
				const float *CB_RESTRICT x = in + (((size_t)n * s->h + ih) * s->w + iw) * ch;
				for (int c = 0; c < ch; c++)
					o[c] += x[c];
			}
		float inv = 1.0f / (float)((h1 - h0) * (w1 - w0));
		for (int c = 0; c < ch; c++)
			o[c] *= inv;
	}
}

CB_KERNEL void cb_adaptiveavgpool_f32(const struct cb_pool_args *s, const float *in, float *out)
{
	cb_pool_go(cb_adaptiveavgpool_row, s, in, out, (double)s->n * s->h * s->w * s->c);
}
