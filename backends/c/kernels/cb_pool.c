/* cb_pool.c - pooling over NHWC images. Channels are innermost, so every
 * window position adds or compares a whole row of channels (a loop the
 * compiler vectorizes); the window and pads are literal in the bundle. */
#include "cb_base.h"

struct cb_pool_args {
	int n, h, w, c, oh, ow;
	int kh, kw, sh, sw, pt, pl;
	int include_pads; /* average: divide by kh*kw rather than the taps inside */
};

/* Max over each window; taps in the padding are skipped (a window entirely
 * in the padding gives 0); a NaN wins, as in the interpreter. */
CB_KERNEL void cb_maxpool_f32(const struct cb_pool_args *s, const float *in, float *out)
{
	const int ch = s->c;
	for (int n = 0; n < s->n; n++)
		for (int oh = 0; oh < s->oh; oh++)
			for (int ow = 0; ow < s->ow; ow++) {
				float *CB_RESTRICT o = out + (((size_t)n * s->oh + oh) * s->ow + ow) * ch;
				int c0 = 0;
#if CB_HAVE_VEC
				/* four vectors of channels in registers across the window */
				for (; c0 + 4 * CB_VL <= ch; c0 += 4 * CB_VL) {
					cb_vf m[4];
					int any = 0;
					for (int v = 0; v < 4; v++)
						m[v] = CB_SPLAT(-INFINITY);
					for (int kh = 0; kh < s->kh; kh++) {
						int ih = oh * s->sh - s->pt + kh;
						if (ih < 0 || ih >= s->h)
							continue;
						for (int kw = 0; kw < s->kw; kw++) {
							int iw = ow * s->sw - s->pl + kw;
							if (iw < 0 || iw >= s->w)
								continue;
							const float *x = in + (((size_t)n * s->h + ih) * s->w + iw) * ch + c0;
							for (int v = 0; v < 4; v++) {
								cb_vf xv = *(const cb_vf *)(x + v * CB_VL);
								cb_vi take = (xv > m[v]) | ((xv != xv) & (m[v] == m[v]));
								m[v] = (cb_vf)(((cb_vi)xv & take) | ((cb_vi)m[v] & ~take));
							}
							any = 1;
						}
					}
					for (int v = 0; v < 4; v++)
						*(cb_vf *)(o + c0 + v * CB_VL) = any ? m[v] : CB_SPLAT(0.0f);
				}
#endif
				if (c0 == ch)
					continue;
				for (int c = c0; c < ch; c++)
					o[c] = -INFINITY;
				int cnt = 0;
				for (int kh = 0; kh < s->kh; kh++) {
					int ih = oh * s->sh - s->pt + kh;
					if (ih < 0 || ih >= s->h)
						continue;
					for (int kw = 0; kw < s->kw; kw++) {
						int iw = ow * s->sw - s->pl + kw;
						if (iw < 0 || iw >= s->w)
							continue;
						const float *CB_RESTRICT x = in + (((size_t)n * s->h + ih) * s->w + iw) * ch;
						for (int c = c0; c < ch; c++)
							o[c] = x[c] > o[c] || (x[c] != x[c] && o[c] == o[c]) ? x[c] : o[c];
						cnt++;
					}
				}
				if (!cnt)
					for (int c = c0; c < ch; c++)
						o[c] = 0.0f;
			}
}

/* Average over each window. */
CB_KERNEL void cb_avgpool_f32(const struct cb_pool_args *s, const float *in, float *out)
{
	const int ch = s->c;
	for (int n = 0; n < s->n; n++)
		for (int oh = 0; oh < s->oh; oh++)
			for (int ow = 0; ow < s->ow; ow++) {
				float *CB_RESTRICT o = out + (((size_t)n * s->oh + oh) * s->ow + ow) * ch;
				for (int c = 0; c < ch; c++)
					o[c] = 0.0f;
				int cnt = 0;
				for (int kh = 0; kh < s->kh; kh++) {
					int ih = oh * s->sh - s->pt + kh;
					if (ih < 0 || ih >= s->h)
						continue;
					for (int kw = 0; kw < s->kw; kw++) {
						int iw = ow * s->sw - s->pl + kw;
						if (iw < 0 || iw >= s->w)
							continue;
						const float *CB_RESTRICT x = in + (((size_t)n * s->h + ih) * s->w + iw) * ch;
						for (int c = 0; c < ch; c++)
							o[c] += x[c];
						cnt++;
					}
				}
				float div = s->include_pads ? (float)(s->kh * s->kw) : (float)cnt;
				float inv = div > 0.0f ? 1.0f / div : 0.0f;
				for (int c = 0; c < ch; c++)
					o[c] *= inv;
			}
}

/* Adaptive average: output cell (i, j) averages input rows
 * [floor(i*H/OH), ceil((i+1)*H/OH)) and the same for columns. */
CB_KERNEL void cb_adaptiveavgpool_f32(const struct cb_pool_args *s, const float *in, float *out)
{
	const int ch = s->c;
	for (int n = 0; n < s->n; n++)
		for (int oh = 0; oh < s->oh; oh++) {
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
}
