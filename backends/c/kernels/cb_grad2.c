/* cb_grad2.c - kernels of the gradient kinds of the shape kinds that sum
 * (issue 13 part B): the adjoint of a value Gather, Pad, BatchedAdd or a
 * reduction read several times, added up. Float only; the semantics are
 * the interpreter's (backends/interpreter/k_grad2.c), summed in float. The
 * elementwise gradients are loops the generator writes (cgen_grad2.c), the
 * pure data movement back goes through cb_copy_nd. Pad's source index is
 * lib/graph/pad_index.h, embedded in the bundle before this file. */
#include "cb_base.h"
#include "cb_thread.h"
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

/* The filter and bias gradients of a convolution (convolutiongrad with one
 * group and no dilation along W) without the unrolled patch matrix.
 *
 * dF[oc, kh, kw, c] = sum over pixels p of G[p, oc] * X[p's window at (kh,
 * kw), c]. For one filter row kh the window row (kw, c) is KW * C floats
 * in a row of a zero-padded copy of X (xp), so dF^T[kh] (KW*C rows, OC
 * columns) is a sum of outer products: a window row (broadcast one value
 * at a time) times the pixel's G row (vectors). A tile of CB_DF_MR window
 * values by 2 vectors of output channels holds its sums in registers over
 * all pixels of an image; nothing is packed but the padded image (and G
 * when OC is not a whole number of tiles wide). The sums go into dft
 * (KH x lp rows of ocp floats, lp the window row rounded up to whole
 * tiles), transposed into dF at the end.
 *
 * Parts (threads) take ranges of (kh, column block) units, images in order
 * inside each: every sum runs over the same pixels in the same order for
 * any thread count. */
#if CB_HAVE_VEC
#if CB_VL == 16
#define CB_DF_MR 12
#else
#define CB_DF_MR 4
#endif
#define CB_DF_COLS (2 * CB_VL)
#else
#define CB_DF_MR 4
#define CB_DF_COLS 4
#endif

#if defined(__GNUC__)
#define CB_DF_INLINE __attribute__((always_inline)) inline
#else
#define CB_DF_INLINE inline
#endif

/* the shape of one filter-gradient run (cb_conv_dfilter_f32) */
struct cb_df {
	const float *xp, *gp; /* padded input [N][hp][wp][c], gradient [N][oh][ow][ocp] */
	float *dft;           /* [kh][lp][ocp] */
	size_t n, c, oh, ow, kh, hp, wp, ocp, lp, l, sh, sw, dh, ncb;
};

/* Rows t .. t + mr - 1 of filter row kh, columns o0 .. o0 + CB_DF_COLS - 1,
 * of image n: dft += the image's outer products (mr a constant after
 * inlining, so the sums stay in registers). */
static CB_DF_INLINE void cb_df_tile(const struct cb_df *q, int mr, size_t n, size_t kh, size_t t, size_t o0)
{
	float *d = q->dft + (kh * q->lp + t) * q->ocp + o0;
	const float *x0 = q->xp + ((n * q->hp + kh * q->dh) * q->wp) * q->c + t;
	const float *g0 = q->gp + n * q->oh * q->ow * q->ocp + o0;
	const size_t xrow = q->sh * q->wp * q->c, xpix = q->sw * q->c;
#if CB_HAVE_VEC
	cb_vf a[CB_DF_MR], b[CB_DF_MR];
	for (int r = 0; r < mr; r++) {
		a[r] = *(const cb_vf *)(d + (size_t)r * q->ocp);
		b[r] = *(const cb_vf *)(d + (size_t)r * q->ocp + CB_VL);
	}
	for (size_t y = 0; y < q->oh; y++) {
		const float *x = x0 + y * xrow, *g = g0 + y * q->ow * q->ocp;
		for (size_t i = 0; i < q->ow; i++, x += xpix, g += q->ocp) {
			const cb_vf u = *(const cb_vf *)g, v = *(const cb_vf *)(g + CB_VL);
			for (int r = 0; r < mr; r++) {
				const cb_vf s = CB_SPLAT(x[r]);
				a[r] = CB_FMA(a[r], s, u);
				b[r] = CB_FMA(b[r], s, v);
			}
		}
	}
	for (int r = 0; r < mr; r++) {
		*(cb_vf *)(d + (size_t)r * q->ocp) = a[r];
		*(cb_vf *)(d + (size_t)r * q->ocp + CB_VL) = b[r];
	}
#else
	for (int r = 0; r < mr; r++)
		for (size_t j = 0; j < CB_DF_COLS; j++) {
			float acc = d[(size_t)r * q->ocp + j];
			for (size_t y = 0; y < q->oh; y++)
				for (size_t i = 0; i < q->ow; i++)
					acc += x0[y * xrow + i * xpix + (size_t)r] * g0[(y * q->ow + i) * q->ocp + j];
			d[(size_t)r * q->ocp + j] = acc;
		}
#endif
}

/* The units [first, end) of (filter row, column block), image by image. */
static void cb_df_range(const void *ctx, size_t first, size_t end)
{
	const struct cb_df *q = ctx;
	for (size_t n = 0; n < q->n; n++)
		for (size_t u = first; u < end; u++) {
			const size_t kh = u / q->ncb, o0 = u % q->ncb * CB_DF_COLS;
			size_t t = 0;
			for (; t + CB_DF_MR <= q->l; t += CB_DF_MR)
				cb_df_tile(q, CB_DF_MR, n, kh, t, o0);
			/* the last rows: the smallest tile that covers them (lp
			 * leaves room for its extra rows, which are not read) */
			if (t < q->l && q->l - t <= CB_DF_MR / 3)
				cb_df_tile(q, CB_DF_MR / 3, n, kh, t, o0);
			else if (t < q->l && q->l - t <= 2 * CB_DF_MR / 3)
				cb_df_tile(q, 2 * CB_DF_MR / 3, n, kh, t, o0);
			else if (t < q->l)
				cb_df_tile(q, CB_DF_MR, n, kh, t, o0);
		}
}

/* Copies the images x of window table a (cgen_grad.c's layout: N H W C
 * OH OW, kernels, strides, pads top left, dilation) into xp with zeros
 * around them: hp x wp pixels per image, x at row pt and column pl, as
 * many rows and columns as the windows reach, then CB_DF_MR zero floats
 * (what a last tile's extra rows read past the end). Returns the floats
 * written; *hp and *wp get the padded size. */
static size_t cb_pad_images(const int *a, const float *x, float *xp, size_t *hp, size_t *wp)
{
	const size_t n = (size_t)a[0], h = (size_t)a[1], w = (size_t)a[2], c = (size_t)a[3];
	const size_t pt = (size_t)a[10], pl = (size_t)a[11];
	const size_t reach_h = ((size_t)a[4] - 1) * (size_t)a[8] + ((size_t)a[6] - 1) * (size_t)a[12] + 1;
	const size_t reach_w = ((size_t)a[5] - 1) * (size_t)a[9] + ((size_t)a[7] - 1) * (size_t)a[13] + 1;
	*hp = reach_h > h + pt ? reach_h : h + pt;
	*wp = reach_w > w + pl ? reach_w : w + pl;
	const size_t total = n * *hp * *wp * c + CB_DF_MR;
	memset(xp, 0, total * sizeof(float));
	for (size_t i = 0; i < n; i++)
		for (size_t y = 0; y < h; y++)
			memcpy(xp + ((i * *hp + y + pt) * *wp + pl) * c, x + (i * h + y) * w * c, w * c * sizeof(float));
	return total;
}

/* The rows of dft per filter row for a window row of l values: whole
 * tiles, the last one of the size cb_df_range runs. */
CB_INLINE size_t cb_df_rows(size_t l)
{
	size_t full = l / CB_DF_MR * CB_DF_MR, rest = l - full;
	return full + (rest == 0 ? 0 : rest <= CB_DF_MR / 3 ? CB_DF_MR / 3 : rest <= 2 * CB_DF_MR / 3 ? 2 * CB_DF_MR / 3 : CB_DF_MR);
}

/* convolutiongrad's filter gradient df (oc x KH x KW x C) and bias
 * gradient db (oc; NULL: not wanted) for one group and no dilation along W
 * (a: the window table, cgen_grad.c: N H W C OH OW, kernels, strides, pads
 * top left, dilation, group); x NHWC, g N x OH x OW x oc; scratch holds
 * the padded image and CB_DF_MR floats, G padded to whole column blocks
 * (only where oc is not whole blocks) and the sums (kh x lp x ocp): the
 * generator reserves that for the widest vectors (cgen_grad.c,
 * df_scratch). */
CB_KERNEL void cb_conv_dfilter_f32(const int *a, size_t oc, const float *x, const float *g, float *df, float *db,
				   float *scratch)
{
	const size_t n = (size_t)a[0], c = (size_t)a[3], oh = (size_t)a[4], ow = (size_t)a[5], kh = (size_t)a[6];
	const size_t kw = (size_t)a[7];
	size_t hp, wp;
	float *xp = scratch, *gp = scratch + cb_pad_images(a, x, xp, &hp, &wp);
	const size_t ocp = (oc + CB_DF_COLS - 1) / CB_DF_COLS * CB_DF_COLS, l = kw * c, lp = cb_df_rows(l);
	float *dft = gp + (oc == ocp ? 0 : n * oh * ow * ocp);
	/* G with whole blocks of columns, unless it has them */
	for (size_t p = 0; oc != ocp && p < n * oh * ow; p++) {
		memcpy(gp + p * ocp, g + p * oc, oc * sizeof(float));
		memset(gp + p * ocp + oc, 0, (ocp - oc) * sizeof(float));
	}
	memset(dft, 0, kh * lp * ocp * sizeof(float));
	struct cb_df q = {xp, oc == ocp ? g : gp, dft, n, c, oh, ow, kh, hp, wp, ocp, lp, l, (size_t)a[8], (size_t)a[9],
			  (size_t)a[12], ocp / CB_DF_COLS};
	cb_par_ranges(cb_df_range, &q, kh * q.ncb, (double)n * oh * ow * kh * l * ocp);
	for (size_t o = 0; o < oc; o++)
		for (size_t r = 0; r < kh; r++)
			for (size_t t = 0; t < l; t++)
				df[(o * kh + r) * l + t] = dft[(r * lp + t) * ocp + o];
	if (!db)
		return;
	/* the sum over pixels in order, pixel by pixel, CB_VL channels at a
	 * time (the plain loop became one chain of scalar adds per channel) */
	memset(db, 0, oc * sizeof(float));
#if CB_HAVE_VEC
	const size_t vo = oc - oc % CB_VL;
#else
	const size_t vo = 0;
#endif
	for (size_t p = 0; p < n * oh * ow; p++) {
		const float *gr = g + p * oc;
#if CB_HAVE_VEC
		for (size_t o = 0; o < vo; o += CB_VL)
			*(cb_vf *)(db + o) += *(const cb_vf *)(gr + o);
#endif
		for (size_t o = 0; o < oc - vo; o++)
			db[vo + o] += gr[vo + o];
	}
}

/* A convolution of one input channel at stride 1 along W (a grayscale
 * first layer) with a filter that is not a constant: the packed path
 * spends most of its time packing rows of K = KH * KW values. Here a tile
 * of CB_DF_MR adjacent output pixels by 2 vectors of output channels sums
 * over the taps in registers: per tap the pixels' inputs are adjacent
 * floats of a row of the padded image (broadcast) and the tap's filter
 * values one row of the transposed filter ft (T x ocp, zero-padded). The
 * sums run over the taps in filter order with the bias added after, as
 * the packed kernels do. */
struct cb_c1 {
	const float *xp, *ft, *bias; /* bias: ocp floats, zero-padded */
	float *out;
	size_t oh, ow, oc, ocp, hp, wp, kh, kw, sh, dh, dw;
	int act;
	float lo, hi;
};

/* Pixels x0 .. x0 + live - 1 (of mr computed) of output row y of image n,
 * channels o0 .. o0 + CB_DF_COLS - 1 (those below oc written). */
static CB_DF_INLINE void cb_c1_tile(const struct cb_c1 *q, int mr, int live, size_t n, size_t y, size_t x0, size_t o0)
{
	const float *xb = q->xp + (n * q->hp + y * q->sh) * q->wp + x0, *fr = q->ft + o0;
	float *o = q->out + ((n * q->oh + y) * q->ow + x0) * q->oc + o0;
	const size_t cols = q->oc - o0 < CB_DF_COLS ? q->oc - o0 : CB_DF_COLS;
#if CB_HAVE_VEC
	cb_vf a[CB_DF_MR], b[CB_DF_MR];
	for (int r = 0; r < mr; r++)
		a[r] = b[r] = CB_SPLAT(0.0f);
	for (size_t ky = 0; ky < q->kh; ky++)
		for (size_t kx = 0; kx < q->kw; kx++, fr += q->ocp) {
			const float *xr = xb + ky * q->dh * q->wp + kx * q->dw;
			const cb_vf u = *(const cb_vf *)fr, v = *(const cb_vf *)(fr + CB_VL);
			for (int r = 0; r < mr; r++) {
				const cb_vf s = CB_SPLAT(xr[r]);
				a[r] = CB_FMA(a[r], s, u);
				b[r] = CB_FMA(b[r], s, v);
			}
		}
	const cb_vf bu = *(const cb_vf *)(q->bias + o0), bv = *(const cb_vf *)(q->bias + o0 + CB_VL);
	float t[CB_DF_COLS];
	for (int r = 0; r < live; r++) {
		*(cb_vf *)t = a[r] + bu;
		*(cb_vf *)(t + CB_VL) = b[r] + bv;
		for (size_t j = 0; j < cols; j++)
			o[(size_t)r * q->oc + j] = cb_act(t[j], q->act, q->lo, q->hi);
	}
#else
	(void)mr;
	for (int r = 0; r < live; r++)
		for (size_t j = 0; j < cols; j++) {
			float acc = 0.0f;
			for (size_t ky = 0; ky < q->kh; ky++)
				for (size_t kx = 0; kx < q->kw; kx++)
					acc += xb[ky * q->dh * q->wp + kx * q->dw + (size_t)r] * fr[(ky * q->kw + kx) * q->ocp + j];
			o[(size_t)r * q->oc + j] = cb_act(acc + q->bias[o0 + j], q->act, q->lo, q->hi);
		}
#endif
}

/* Output rows [first, end) (image, row) of cb_conv_c1_f32. */
static void cb_c1_rows(const void *ctx, size_t first, size_t end)
{
	const struct cb_c1 *q = ctx;
	for (size_t u = first; u < end; u++) {
		const size_t n = u / q->oh, y = u % q->oh;
		for (size_t o0 = 0; o0 < q->oc; o0 += CB_DF_COLS) {
			size_t x0 = 0;
			for (; x0 + CB_DF_MR <= q->ow; x0 += CB_DF_MR)
				cb_c1_tile(q, CB_DF_MR, CB_DF_MR, n, y, x0, o0);
			const int left = (int)(q->ow - x0);
			if (left > 0 && left <= CB_DF_MR / 3)
				cb_c1_tile(q, CB_DF_MR / 3, left, n, y, x0, o0);
			else if (left > 0 && left <= 2 * CB_DF_MR / 3)
				cb_c1_tile(q, 2 * CB_DF_MR / 3, left, n, y, x0, o0);
			else if (left > 0)
				cb_c1_tile(q, CB_DF_MR, left, n, y, x0, o0);
		}
	}
}

/* out = act(conv(x, f) + bias) for one input channel, stride 1 along W,
 * one group (a: the window table; f oc x KH x KW x 1; act CB_ACT_*, lo
 * and hi clip's bounds); scratch holds the padded images, CB_DF_MR floats,
 * the transposed filter and the bias (cgen_grad.c reserves it). */
CB_KERNEL void cb_conv_c1_f32(const int *a, size_t oc, const float *x, const float *f, const float *bias, float *out,
			      int act, float lo, float hi, float *scratch)
{
	const size_t taps = (size_t)a[6] * (size_t)a[7], ocp = (oc + CB_DF_COLS - 1) / CB_DF_COLS * CB_DF_COLS;
	size_t hp, wp;
	float *xp = scratch, *ft = scratch + cb_pad_images(a, x, xp, &hp, &wp), *bp = ft + taps * ocp;
	for (size_t t = 0; t < taps; t++)
		for (size_t o = 0; o < ocp; o++)
			ft[t * ocp + o] = o < oc ? f[o * taps + t] : 0.0f;
	for (size_t o = 0; o < ocp; o++)
		bp[o] = o < oc ? bias[o] : 0.0f;
	const struct cb_c1 q = {xp, ft, bp, out, (size_t)a[4], (size_t)a[5], oc, ocp, hp, wp, (size_t)a[6],
				(size_t)a[7], (size_t)a[8], (size_t)a[12], (size_t)a[13], act, lo, hi};
	cb_par_ranges(cb_c1_rows, &q, (size_t)a[0] * q.oh, (double)a[0] * q.oh * q.ow * taps * ocp);
}
