/* k_conv.c - convolution, transposed convolution, pooling and padding
 * (NHWC images, filters OC x KH x KW x IC/group, pads [top, left, bottom,
 * right]).
 *
 * Convolution is im2col + kgemm per image and group: the patch matrix has
 * one row per output pixel and KH*KW*ICg columns in (kh, kw, ic) order,
 * which is the filter's own row order, so C = patches * filter^T lands
 * directly in the NHWC output (row stride OC, column offset g*OCg). A 1x1
 * convolution with stride 1 and no padding uses the image itself as the
 * patch matrix. Transposed convolution scatters each input pixel through the
 * filter. Non-float kinds are widened to float and narrowed once.
 *
 * Max pooling ignores padded positions and copies the winning element
 * exactly (any kind); the argmax is the flattened NHWC index of the first
 * maximum in the input. Average pooling divides by KH*KW when
 * count_include_pads, else by the number of real pixels in the window.
 * Adaptive average pooling uses windows [floor(i*H/OH), ceil((i+1)*H/OH)).
 *
 * Threads (kpar, ipool.c): the patch matrix is filled by output rows, the
 * products split inside kgemm, max and average pooling by output rows;
 * each output is computed as in one thread, so the bytes do not depend on
 * the thread count.
 */
#include "backends/interpreter/kern.h"

#include <stdlib.h>

struct win {
	size_t n, h, w, c;     /* input */
	size_t oh, ow, oc;     /* output */
	size_t kh, kw, sh, sw, dh, dw;
	int64_t pt, pl;
};

/* The window of k, whose kernels, strides and pads attributes apply to
 * in and out; dilated: the kind has a dilation attribute too (1 x 1
 * otherwise). */
static void win_get(const struct kargs *k, const struct type *in, const struct type *out, bool dilated,
		    struct win *w)
{
	w->n = (size_t)in->dims[0];
	w->h = (size_t)in->dims[1];
	w->w = (size_t)in->dims[2];
	w->c = (size_t)in->dims[3];
	w->oh = (size_t)out->dims[1];
	w->ow = (size_t)out->dims[2];
	w->oc = (size_t)out->dims[3];
	const int64_t *ks = KINTS(k, AN_kernels), *st = KINTS(k, AN_strides), *p = KINTS(k, AN_pads);
	w->kh = (size_t)ks[0];
	w->kw = (size_t)ks[1];
	w->sh = (size_t)st[0];
	w->sw = (size_t)st[1];
	w->pt = p[0];
	w->pl = p[1];
	w->dh = w->dw = 1;
	if (dilated) {
		const int64_t *dl = KINTS(k, AN_dilation);
		w->dh = (size_t)dl[0];
		w->dw = (size_t)dl[1];
	}
}

/* The patch rows of output rows oy0 .. oy1-1 of one image and group. */
struct im2col_job {
	const struct win *w;
	const float *img;
	float *cols;
	size_t g, icg, kk;
	int nparts;
};

static void im2col_part(const void *ctx, int part)
{
	const struct im2col_job *j = ctx;
	const struct win *w = j->w;
	size_t oy0 = kpar_first(part, j->nparts, w->oh), oy1 = kpar_first(part + 1, j->nparts, w->oh);
	for (size_t oy = oy0; oy < oy1; oy++)
		for (size_t ox = 0; ox < w->ow; ox++) {
			float *row = j->cols + (oy * w->ow + ox) * j->kk;
			for (size_t ky = 0; ky < w->kh; ky++) {
				int64_t iy = (int64_t)(oy * w->sh + ky * w->dh) - w->pt;
				for (size_t kx = 0; kx < w->kw; kx++, row += j->icg) {
					int64_t ix = (int64_t)(ox * w->sw + kx * w->dw) - w->pl;
					if (iy < 0 || iy >= (int64_t)w->h || ix < 0 || ix >= (int64_t)w->w) {
						memset(row, 0, j->icg * sizeof(float));
						continue;
					}
					memcpy(row, j->img + ((size_t)iy * w->w + (size_t)ix) * w->c + j->g * j->icg,
					       j->icg * sizeof(float));
				}
			}
		}
}

/* convolution(Dest, Src, Filter, Bias) {kernels, strides, pads, group,
 * dilation} */
int kern_convolution(const struct kargs *k)
{
	const struct interp_arg *d = &k->op[0], *s = &k->op[1], *f = &k->op[2], *b = &k->op[3];
	struct win w;
	win_get(k, s->t, d->t, true, &w);
	size_t group = (size_t)KI(k, AN_group);
	size_t icg = w.c / group, ocg = w.oc / group, kk = w.kh * w.kw * icg, pix = w.oh * w.ow;
	float *fs = kwiden(s), *ff = kwiden(f), *fb = kwiden(b), *fd = kresult_buf(d);
	bool direct = w.kh == 1 && w.kw == 1 && w.sh == 1 && w.sw == 1 && w.pt == 0 && w.pl == 0 && group == 1 &&
		      w.oh == w.h && w.ow == w.w;
	float *cols = direct ? NULL : xmalloc(pix * kk * sizeof(float) + 1);
	float *ft = xmalloc(kk * ocg * sizeof(float) + 1);
	for (size_t i = 0; i < w.n * pix; i++)
		memcpy(fd + i * w.oc, fb, w.oc * sizeof(float));
	for (size_t g = 0; g < group; g++) {
		/* filter rows of group g, transposed to K x OCg */
		for (size_t o = 0; o < ocg; o++)
			for (size_t j = 0; j < kk; j++)
				ft[j * ocg + o] = ff[(g * ocg + o) * kk + j];
		for (size_t n = 0; n < w.n; n++) {
			const float *img = fs + n * w.h * w.w * w.c;
			if (!direct) {
				struct im2col_job j = {&w, img, cols, g, icg, kk, 0};
				j.nparts = kpar_parts((double)pix * kk, w.oh);
				kpar(im2col_part, &j, j.nparts);
			}
			kgemm(pix, ocg, kk, direct ? img : cols, direct ? w.c : kk, ft, ocg,
			      fd + n * pix * w.oc + g * ocg, w.oc, true);
		}
	}
	free(ft);
	free(cols);
	kresult_done(d, fd);
	kfree_wide(s, fs);
	kfree_wide(f, ff);
	kfree_wide(b, fb);
	return 0;
}

/* convtranspose(Dest, Src, Filter, Bias) {kernels, strides, pads, group,
 * dilation} */
int kern_convtranspose(const struct kargs *k)
{
	const struct interp_arg *d = &k->op[0], *s = &k->op[1], *f = &k->op[2], *b = &k->op[3];
	struct win w;
	win_get(k, s->t, d->t, true, &w);
	size_t group = (size_t)KI(k, AN_group);
	size_t icg = w.c / group, ocg = w.oc / group;
	float *fs = kwiden(s), *ff = kwiden(f), *fb = kwiden(b), *fd = kresult_buf(d);
	size_t opix = w.oh * w.ow;
	for (size_t i = 0; i < w.n * opix; i++)
		memcpy(fd + i * w.oc, fb, w.oc * sizeof(float));
	for (size_t n = 0; n < w.n; n++)
		for (size_t iy = 0; iy < w.h; iy++)
			for (size_t ix = 0; ix < w.w; ix++) {
				const float *px = fs + ((n * w.h + iy) * w.w + ix) * w.c;
				for (size_t ky = 0; ky < w.kh; ky++) {
					int64_t oy = (int64_t)(iy * w.sh + ky * w.dh) - w.pt;
					if (oy < 0 || oy >= (int64_t)w.oh)
						continue;
					for (size_t kx = 0; kx < w.kw; kx++) {
						int64_t ox = (int64_t)(ix * w.sw + kx * w.dw) - w.pl;
						if (ox < 0 || ox >= (int64_t)w.ow)
							continue;
						float *out = fd + ((n * w.oh + (size_t)oy) * w.ow + (size_t)ox) * w.oc;
						for (size_t g = 0; g < group; g++)
							for (size_t o = 0; o < ocg; o++) {
								const float *fr =
									ff + (((g * ocg + o) * w.kh + ky) * w.kw + kx) * icg;
								const float *pg = px + g * icg;
								double acc = 0;
								for (size_t c = 0; c < icg; c++)
									acc += (double)pg[c] * fr[c];
								out[g * ocg + o] += (float)acc;
							}
					}
				}
			}
	kresult_done(d, fd);
	kfree_wide(s, fs);
	kfree_wide(f, ff);
	kfree_wide(b, fb);
	return 0;
}

/* a > b for two elements of one type (bool and integers exactly; NaN is
 * never greater) */
static bool elem_gt(const struct type *t, const void *pa, size_t a, const void *pb, size_t b)
{
	if (is_int_kind(t) || elem_is_quantized(ekind(t)))
		return ld_i(t, pa, a) > ld_i(t, pb, b);
	return ld_f(t, pa, a) > ld_f(t, pb, b);
}

static bool elem_isnan(const struct type *t, const void *p, size_t i)
{
	return elem_is_float(ekind(t)) && isnan(ld_f(t, p, i));
}

/* The input pixels of one output pixel's pooling window that are not
 * padding: rows [y0, y1) and columns [x0, x1) of image n of an NHWC input
 * of h x w pixels of c channels (empty ranges: the window covers padding
 * only). */
struct pool_win {
	size_t n, h, w, c;
	size_t y0, y1, x0, x1;
};

/* The flattened NHWC index of channel ch of pixel (y, x) of pw's image. */
static size_t pool_at(const struct pool_win *pw, size_t y, size_t x, size_t ch)
{
	return ((pw->n * pw->h + y) * pw->w + x) * pw->c + ch;
}

/* The input positions [*lo, *hi) that output position o's k window taps
 * (o * stride + tap - pad, tap 0 .. k-1) reach inside 0 .. extent-1, in the
 * taps' order; the taps outside are padding. */
static void win_clip(size_t o, size_t stride, int64_t pad, size_t k, size_t extent, size_t *lo, size_t *hi)
{
	int64_t a = (int64_t)(o * stride) - pad, b = a + (int64_t)k;
	a = a < 0 ? 0 : a;
	b = b > (int64_t)extent ? (int64_t)extent : b;
	*lo = (size_t)a;
	*hi = b > a ? (size_t)b : (size_t)a;
}

/* The index of the first maximum of channel ch in pw's window (a NaN beats
 * a number); SIZE_MAX when the window covers padding only. */
static size_t pool_argmax(const struct interp_arg *s, const struct pool_win *pw, size_t ch)
{
	size_t best = SIZE_MAX;
	for (size_t y = pw->y0; y < pw->y1; y++)
		for (size_t x = pw->x0; x < pw->x1; x++) {
			size_t ii = pool_at(pw, y, x, ch);
			if (best == SIZE_MAX || elem_gt(s->t, s->p, ii, s->p, best) ||
			    (elem_isnan(s->t, s->p, ii) && !elem_isnan(s->t, s->p, best)))
				best = ii;
		}
	return best;
}

/* The sum of channel ch over pw's window (in double, row by row) divided by
 * div; 0 when div is 0. */
static double pool_mean(const struct interp_arg *s, const struct pool_win *pw, size_t ch, size_t div)
{
	double sum = 0;
	for (size_t y = pw->y0; y < pw->y1; y++)
		for (size_t x = pw->x0; x < pw->x1; x++)
			sum += ld_f(s->t, s->p, pool_at(pw, y, x, ch));
	return div ? sum / (double)div : 0;
}

/* Max (max: argmax too when it is not NULL) or average pooling, split by
 * output rows (n, oy) among the threads. */
struct pool_job {
	const struct kargs *k;
	const struct interp_arg *argmax;
	bool max;
	struct win w;
	int nparts;
};

static void pool_part(const void *ctx, int part)
{
	const struct pool_job *j = ctx;
	const struct interp_arg *d = &j->k->op[0], *s = &j->k->op[1], *argmax = j->argmax;
	const struct win w = j->w;
	/* only average pooling has the attribute */
	bool incl = !j->max && KI(j->k, AN_count_include_pads);
	size_t es = esize(s->t), r0 = kpar_first(part, j->nparts, w.n * w.oh),
	       r1 = kpar_first(part + 1, j->nparts, w.n * w.oh);
	struct pool_win pw = {.h = w.h, .w = w.w, .c = w.c};
	for (size_t row = r0; row < r1; row++) {
		pw.n = row / w.oh;
		win_clip(row % w.oh, w.sh, w.pt, w.kh, w.h, &pw.y0, &pw.y1);
		size_t oi = row * w.ow * w.oc;
		for (size_t ox = 0; ox < w.ow; ox++) {
			win_clip(ox, w.sw, w.pl, w.kw, w.w, &pw.x0, &pw.x1);
			for (size_t c = 0; c < w.oc; c++, oi++) {
				if (!j->max) {
					size_t div = incl ? w.kh * w.kw : (pw.y1 - pw.y0) * (pw.x1 - pw.x0);
					st_f(d->t, d->p, oi, pool_mean(s, &pw, c, div));
					continue;
				}
				size_t best = pool_argmax(s, &pw, c);
				if (best == SIZE_MAX) { /* the window covers padding only */
					st_f(d->t, d->p, oi, 0);
					if (argmax)
						st_i(argmax->t, argmax->p, oi, -1);
					continue;
				}
				cp_elem(d->p, oi, s->p, best, es);
				if (argmax)
					st_i(argmax->t, argmax->p, oi, (int64_t)best);
			}
		}
	}
}

/* pooling of k (max: max pooling, writing argmax too when it is not NULL) */
static int pool(const struct kargs *k, bool max, const struct interp_arg *argmax)
{
	struct pool_job j = {k, argmax, max, {0}, 0};
	win_get(k, k->op[1].t, k->op[0].t, false, &j.w);
	j.nparts = kpar_parts((double)numel(k->op[0].t) * j.w.kh * j.w.kw, j.w.n * j.w.oh);
	kpar(pool_part, &j, j.nparts);
	return 0;
}

/* maxpool(Dest, Src) {kernels, strides, pads} */
int kern_maxpool(const struct kargs *k) { return pool(k, true, NULL); }

/* maxpoolwithargmax(Dest, Src, Argmax) {kernels, strides, pads} */
int kern_maxpoolwithargmax(const struct kargs *k) { return pool(k, true, &k->op[2]); }

/* avgpool(Dest, Src) {kernels, strides, pads, count_include_pads} */
int kern_avgpool(const struct kargs *k) { return pool(k, false, NULL); }

/* adaptiveavgpool(Dest, Src) */
int kern_adaptiveavgpool(const struct kargs *k)
{
	const struct interp_arg *d = &k->op[0], *s = &k->op[1];
	struct pool_win pw = {.h = (size_t)s->t->dims[1], .w = (size_t)s->t->dims[2], .c = (size_t)s->t->dims[3]};
	size_t N = (size_t)s->t->dims[0], H = pw.h, W = pw.w, C = pw.c;
	size_t OH = (size_t)d->t->dims[1], OW = (size_t)d->t->dims[2], oi = 0;
	for (pw.n = 0; pw.n < N; pw.n++)
		for (size_t oy = 0; oy < OH; oy++) {
			pw.y0 = oy * H / OH;
			pw.y1 = ((oy + 1) * H + OH - 1) / OH;
			for (size_t ox = 0; ox < OW; ox++) {
				pw.x0 = ox * W / OW;
				pw.x1 = ((ox + 1) * W + OW - 1) / OW;
				for (size_t c = 0; c < C; c++, oi++)
					st_f(d->t, d->p, oi, pool_mean(s, &pw, c, (pw.y1 - pw.y0) * (pw.x1 - pw.x0)));
			}
		}
	return 0;
}

/* pad(Dest, Src) {mode, pads = [b_0 .. b_{r-1}, e_0 .. e_{r-1}], value} */
int kern_pad(const struct kargs *k)
{
	const struct interp_arg *d = &k->op[0], *s = &k->op[1];
	const struct type *st = s->t, *dt = d->t;
	unsigned r = st->rank;
	const int64_t *p = KINTS(k, AN_pads);
	int64_t mode = KI(k, AN_mode);
	double value = KF(k, AN_value);
	size_t sstr[GLOW_MAX_RANK], es = esize(st), n = numel(dt);
	strides_of(st, sstr);
	size_t idx[GLOW_MAX_RANK] = {0};
	for (size_t o = 0; o < n; o++) {
		size_t si = 0;
		bool in = true;
		for (unsigned i = 0; i < r; i++) {
			int64_t x = (int64_t)idx[i] - p[i], len = (int64_t)st->dims[i];
			if (x < 0 || x >= len) {
				if (mode == 0) {
					in = false;
					break;
				}
				if (mode == 1) { /* reflect: -1 -> 1, len -> len - 2 */
					if (len == 1)
						x = 0;
					else {
						int64_t period = 2 * (len - 1);
						x = ((x % period) + period) % period;
						if (x >= len)
							x = period - x;
					}
				} else {
					x = x < 0 ? 0 : len - 1;
				}
			}
			si += (size_t)x * sstr[i];
		}
		if (in)
			cp_elem(d->p, o, s->p, si, es);
		else
			st_f(dt, d->p, o, value);
		for (unsigned i = r; i-- > 0;) {
			if (++idx[i] < dt->dims[i])
				break;
			idx[i] = 0;
		}
	}
	return 0;
}
