/* cb_misc.c - the kernels off the fast path: data movement on any element
 * kind (one strided n-dimensional copy serves transpose, slices, inserts,
 * tiles, broadcasts and flips), normalizations, softmax, matrix products
 * of two activations, reductions and selections. Shapes arrive as literal
 * arrays of the bundle. */
#include "cb_base.h"
#include "cb_thread.h"

#define CB_MAXRANK 8

/* Copies the innermost run: n elements of es bytes with element strides
 * dstep and sstep. */
CB_INLINE void cb_copy_run(unsigned char *d, int64_t dstep, const unsigned char *s, int64_t sstep, int64_t n, int es)
{
	if (dstep == 1 && sstep == 1) {
		memcpy(d, s, (size_t)(n * es));
		return;
	}
	switch (es) {
	case 4:
		for (int64_t j = 0; j < n; j++)
			memcpy(d + j * dstep * 4, s + j * sstep * 4, 4);
		break;
	case 8:
		for (int64_t j = 0; j < n; j++)
			memcpy(d + j * dstep * 8, s + j * sstep * 8, 8);
		break;
	case 2:
		for (int64_t j = 0; j < n; j++)
			memcpy(d + j * dstep * 2, s + j * sstep * 2, 2);
		break;
	default:
		for (int64_t j = 0; j < n; j++)
			memcpy(d + j * dstep * es, s + j * sstep * es, (size_t)es);
		break;
	}
}

/* Small transposes of 4-byte elements, the two innermost directions of a
 * copy when one is contiguous in the destination and the other in the
 * source and the short one has g <= 16 elements: a channel shuffle
 * ([.., g, C/g] -> [.., C/g, g]) or an NCHW <-> NHWC move of a few
 * channels. The group loop is unrolled for the usual g, so the compiler
 * turns g contiguous streams into vector loads and interleaving
 * permutations instead of one short strided run per element.
 * CB_SHUFFLE4(DOFF, SOFF) moves element SOFF of s to element DOFF of d for
 * j < n and i < g, both offsets expressions of j, i and G (the constant g
 * of a case, or g itself in the default one). */
#define CB_SHUFFLE4_LOOP(GV, DOFF, SOFF)                                                                     \
	{                                                                                                    \
		const int G = (GV);                                                                          \
		for (int64_t j = 0; j < n; j++)                                                              \
			for (int i = 0; i < G; i++)                                                          \
				memcpy(d + (DOFF) * 4, s + (SOFF) * 4, 4);                                   \
	}                                                                                                    \
	break;
#define CB_SHUFFLE4(DOFF, SOFF)                                                                              \
	switch (g) {                                                                                         \
	case 2:                                                                                              \
		CB_SHUFFLE4_LOOP(2, DOFF, SOFF)                                                              \
	case 3:                                                                                              \
		CB_SHUFFLE4_LOOP(3, DOFF, SOFF)                                                              \
	case 4:                                                                                              \
		CB_SHUFFLE4_LOOP(4, DOFF, SOFF)                                                              \
	case 8:                                                                                              \
		CB_SHUFFLE4_LOOP(8, DOFF, SOFF)                                                              \
	case 16:                                                                                             \
		CB_SHUFFLE4_LOOP(16, DOFF, SOFF)                                                             \
	default:                                                                                             \
		CB_SHUFFLE4_LOOP(g, DOFF, SOFF)                                                              \
	}

/* d[j*g + i] = s[i*si + j] for j < n, i < g (element offsets). */
CB_INLINE void cb_interleave4(unsigned char *CB_RESTRICT d, const unsigned char *CB_RESTRICT s, int64_t si,
			      int64_t n, int g)
{
	CB_SHUFFLE4(j * G + i, i * si + j)
}

/* d[i*di + j] = s[j*g + i] for j < n, i < g (element offsets). */
CB_INLINE void cb_deinterleave4(unsigned char *CB_RESTRICT d, int64_t di, const unsigned char *CB_RESTRICT s,
				int64_t n, int g)
{
	CB_SHUFFLE4(i * di + j, j * G + i)
}

/* dst[sum i_k * ds_k] = src[sum i_k * ss_k] over the index space dims[0..rank)
 * (element strides, a source stride may be 0 or negative), es bytes per
 * element. The generator merges dimensions that are contiguous in both, so
 * the two innermost loops carry most of the work. */
static void cb_copy_nd_range(void *dst, const int64_t *ds, const void *src, const int64_t *ss, const int64_t *dims,
			     int rank, int es, int64_t o0, int64_t o1)
{
	int64_t idx[CB_MAXRANK] = {0};
	unsigned char *d = (unsigned char *)dst;
	const unsigned char *s = (const unsigned char *)src;
	if (rank == 0) {
		memcpy(d, s, (size_t)es);
		return;
	}
	for (int i = 0; i < rank; i++)
		if (dims[i] == 0)
			return;
	const int in = rank - 1, outer = rank >= 2 ? rank - 2 : 0;
	const int64_t n2 = rank >= 2 ? dims[in - 1] : 1, d2 = rank >= 2 ? ds[in - 1] : 0, s2 = rank >= 2 ? ss[in - 1] : 0;
	/* 1: interleave n2 source runs, 2: deinterleave into n2 runs (above) */
	const int small = es != 4 || rank < 2 || n2 > 16 ? 0
			  : ss[in] == 1 && d2 == 1 && ds[in] == n2 ? 1
			  : ds[in] == 1 && s2 == 1 && ss[in] == n2 ? 2 : 0;
	const int64_t n1 = dims[in], d1 = ds[in], s1 = ss[in];
	/* 4-byte elements strided on one side (a transpose, a channel
	 * shuffle): both inner loops here, one element move each */
	const int strided4 = es == 4 && !(d1 == 1 && s1 == 1);
	/* the outer index of o0 (row-major over dims[0 .. outer-1]) */
	int64_t q = o0;
	for (int i = outer - 1; i >= 0; i--) {
		idx[i] = q % dims[i];
		q /= dims[i];
	}
	for (int64_t o = o0; o < o1; o++) {
		int64_t od = 0, os = 0;
		for (int i = 0; i < outer; i++) {
			od += idx[i] * ds[i];
			os += idx[i] * ss[i];
		}
		if (small == 1) {
			cb_interleave4(d + od * 4, s + os * 4, s2, n1, (int)n2);
		} else if (small == 2) {
			cb_deinterleave4(d + od * 4, d2, s + os * 4, n1, (int)n2);
		} else if (strided4) {
			unsigned char *dp = d + od * 4;
			const unsigned char *sp = s + os * 4;
			for (int64_t j = 0; j < n2; j++)
				for (int64_t i = 0; i < n1; i++)
					memcpy(dp + (j * d2 + i * d1) * 4, sp + (j * s2 + i * s1) * 4, 4);
		} else {
			for (int64_t j = 0; j < n2; j++)
				cb_copy_run(d + (od + j * d2) * es, d1, s + (os + j * s2) * es, s1, n1, es);
		}
		int i = outer - 1;
		while (i >= 0 && ++idx[i] == dims[i])
			idx[i--] = 0;
	}
}

/* cb_copy_nd split among the threads by ranges of one dimension: the one
 * with the largest destination stride in magnitude (of those with more
 * than one index), so that each part writes its own stretches of the
 * destination and no cache line is written by two threads. (Split by a dimension of small
 * destination stride, say the channels of an NCHW to NHWC transpose, every
 * line of the output would be written by every thread, and each store
 * would take the line from the other core's cache.) Every element is moved
 * once, by one part. */
struct cb_copy_job {
	void *dst;
	const void *src;
	const int64_t *ds, *ss, *dims;
	int rank, es, nparts;
	int k; /* the split dimension */
};

/* Part i of a copy: its range of dimension k, everything else whole. */
static void cb_copy_part(const void *ctx, int i, float *scratch)
{
	const struct cb_copy_job *j = ctx;
	(void)scratch;
	const int k = j->k;
	int64_t d[CB_MAXRANK], outer = 1;
	memcpy(d, j->dims, (size_t)j->rank * sizeof *d);
	const int64_t a = (int64_t)cb_par_first(i, j->nparts, (size_t)d[k]);
	d[k] = (int64_t)cb_par_first(i + 1, j->nparts, (size_t)d[k]) - a;
	for (int r = 0; r + 2 < j->rank; r++)
		outer *= d[r];
	cb_copy_nd_range((unsigned char *)j->dst + a * j->ds[k] * j->es, j->ds,
			 (const unsigned char *)j->src + a * j->ss[k] * j->es, j->ss, d, j->rank, j->es, 0, outer);
}

/* The strided copy (cb_copy_nd_range over everything), split among the
 * threads. */
CB_KERNEL void cb_copy_nd(void *dst, const int64_t *ds, const void *src, const int64_t *ss, const int64_t *dims,
			  int rank, int es)
{
	int64_t outer = 1, all = 1;
	int k = -1;
	for (int i = 0; i < rank; i++) {
		all *= dims[i];
		if (i < rank - 2)
			outer *= dims[i];
		if (dims[i] > 1 && (k < 0 || (ds[i] < 0 ? -ds[i] : ds[i]) > (ds[k] < 0 ? -ds[k] : ds[k])))
			k = i;
	}
	if (rank == 0 || all == 0 || k < 0) {
		cb_copy_nd_range(dst, ds, src, ss, dims, rank, es, 0, outer);
		return;
	}
	struct cb_copy_job j = {dst, src, ds, ss, dims, rank, es, cb_par_parts((double)all, (size_t)dims[k]), k};
	if (j.nparts <= 1) {
		cb_copy_nd_range(dst, ds, src, ss, dims, rank, es, 0, outer);
		return;
	}
	cb_par(cb_copy_part, &j, j.nparts, NULL);
}

/* The work of one value in the splits below (cb_par_parts counts
 * multiply-adds or values moved): an exponential or a division weighs
 * about CB_WORK_EXP of them. */
#define CB_WORK_EXP 16.0

/* Fills n elements of es bytes with the element at v, split by elements. */
struct cb_fill_job {
	unsigned char *d;
	const void *v;
	int es;
};

/* Elements [b, e) of a fill. */
static void cb_fill_range(const void *ctx, size_t b, size_t e)
{
	const struct cb_fill_job *j = ctx;
	for (size_t i = b; i < e; i++)
		memcpy(j->d + i * (size_t)j->es, j->v, (size_t)j->es);
}

/* The fill, by elements. */
CB_KERNEL void cb_fill(void *dst, const void *v, size_t n, int es)
{
	const struct cb_fill_job j = {(unsigned char *)dst, v, es};
	cb_par_ranges(cb_fill_range, &j, n, (double)n);
}

/* An operator over the lanes of a tensor viewed as outer x d x inner along
 * d (softmax, argmax, cumsum): lane l is (l / inner, l % inner), its d
 * elements inner apart. Split among the threads by whole lanes. */
struct cb_lanes_job {
	const void *x;
	void *y;
	size_t d, inner;
	int flag, flag2; /* the operator's own switches */
	int es;          /* cumsum: integers of es bytes (0: float) */
	int prod;        /* cumsum: products (CumProd) instead of sums */
};

/* Softmax (flag 0) or log-softmax (flag 1) of lanes [b, e). */
static void cb_softmax_lanes(const void *ctx, size_t b, size_t e)
{
	const struct cb_lanes_job *j = ctx;
	const size_t d = j->d, inner = j->inner;
	for (size_t l = b; l < e; l++) {
		const size_t o = l / inner, i = l % inner;
		const float *xp = (const float *)j->x + o * d * inner + i;
		float *yp = (float *)j->y + o * d * inner + i;
		float mx = -INFINITY;
		for (size_t k = 0; k < d; k++)
			mx = xp[k * inner] > mx ? xp[k * inner] : mx;
		float sum = 0.0f;
		for (size_t k = 0; k < d; k++) {
			float ex = expf(xp[k * inner] - mx);
			if (!j->flag)
				yp[k * inner] = ex;
			sum += ex;
		}
		if (j->flag) {
			float ls = logf(sum);
			for (size_t k = 0; k < d; k++)
				yp[k * inner] = xp[k * inner] - mx - ls;
		} else {
			float inv = 1.0f / sum;
			for (size_t k = 0; k < d; k++)
				yp[k * inner] *= inv;
		}
	}
}

/* Softmax (or log-softmax) of x viewed as outer x d x inner along d, split
 * by lanes. */
CB_KERNEL void cb_softmax_f32(const float *x, float *y, size_t outer, size_t d, size_t inner, int logsm)
{
	const struct cb_lanes_job j = {x, y, d, inner, logsm, 0, 0, 0};
	cb_par_ranges(cb_softmax_lanes, &j, outer * inner, (double)(outer * d * inner) * CB_WORK_EXP);
}

/* A per-channel operator over rows of `inner` values (outer x c rows, row
 * r of channel r % c): the folded and the live batch normalization. */
struct cb_chan_job {
	const float *x;
	float *y;
	const float *p0, *p1, *p2, *p3; /* mul, add; or scale, bias, mean, var */
	float eps;
	size_t c, inner;
};

/* y = x * mul[c] + add[c] over rows [b, e). */
static void cb_chan_affine_rows(const void *ctx, size_t b, size_t e)
{
	const struct cb_chan_job *j = ctx;
	for (size_t r = b; r < e; r++) {
		const size_t k = r % j->c;
		const float *CB_RESTRICT xp = j->x + r * j->inner;
		float *yp = j->y + r * j->inner;
		float m = j->p0[k], a = j->p1[k];
		for (size_t i = 0; i < j->inner; i++)
			yp[i] = xp[i] * m + a;
	}
}

/* Per-channel affine map y = x * mul[c] + add[c] over outer x c x inner
 * (an inference batch normalization with its statistics folded), split by
 * rows. */
CB_KERNEL void cb_chan_affine_f32(const float *x, float *y, const float *mul, const float *add, size_t outer, size_t c,
			       size_t inner)
{
	const struct cb_chan_job j = {x, y, mul, add, NULL, NULL, 0.0f, c, inner};
	cb_par_ranges(cb_chan_affine_rows, &j, outer * c, (double)(outer * c * inner));
}

/* The live batch normalization of rows [b, e). */
static void cb_batchnorm_rows(const void *ctx, size_t b, size_t e)
{
	const struct cb_chan_job *j = ctx;
	for (size_t r = b; r < e; r++) {
		const size_t k = r % j->c;
		float m = j->p0[k] / sqrtf(j->p3[k] + j->eps), a = j->p1[k] - j->p2[k] * m;
		const float *xp = j->x + r * j->inner;
		float *yp = j->y + r * j->inner;
		for (size_t i = 0; i < j->inner; i++)
			yp[i] = xp[i] * m + a;
	}
}

/* Inference batch normalization with live statistics:
 * y = (x - mean) / sqrt(var + eps) * scale + bias, per channel; split by
 * rows. */
CB_KERNEL void cb_batchnorm_f32(const float *x, float *y, const float *scale, const float *bias, const float *mean,
			     const float *var, float eps, size_t outer, size_t c, size_t inner)
{
	const struct cb_chan_job j = {x, y, scale, bias, mean, var, eps, c, inner};
	cb_par_ranges(cb_batchnorm_rows, &j, outer * c, (double)(outer * c) * (inner + CB_WORK_EXP));
}

/* Local response normalization of NHWC pixels, split by pixels. */
struct cb_lrn_job {
	const float *x;
	float *y;
	int c, half;
	float a, beta, k;
};

/* Pixels [b, e) of a local response normalization. */
static void cb_lrn_pixels(const void *ctx, size_t b, size_t e)
{
	const struct cb_lrn_job *j = ctx;
	const int c = j->c, half = j->half;
	for (size_t p = b; p < e; p++) {
		const float *xp = j->x + p * (size_t)c;
		float *yp = j->y + p * (size_t)c;
		for (int ch = 0; ch < c; ch++) {
			int lo = ch - half < 0 ? 0 : ch - half, hi = ch + half >= c ? c - 1 : ch + half;
			float s = 0.0f;
			for (int q = lo; q <= hi; q++)
				s += xp[q] * xp[q];
			float base = j->k + j->a * s;
			float inv = j->beta == 0.75f ? 1.0f / sqrtf(base * sqrtf(base)) : powf(base, -j->beta);
			yp[ch] = xp[ch] * inv;
		}
	}
}

/* Local response normalization across channels of NHWC pixels:
 * y = x / (k + alpha / (2h+1) * sum of x^2 over channels c-h .. c+h)^beta */
CB_KERNEL void cb_lrn_f32(const float *x, float *y, size_t pixels, int c, int half, float alpha, float beta, float k)
{
	const struct cb_lrn_job j = {x, y, c, half, alpha / (float)(2 * half + 1), beta, k};
	cb_par_ranges(cb_lrn_pixels, &j, pixels, (double)pixels * c * (2 * half + 1 + CB_WORK_EXP));
}

/* A matrix product of two activations, split by rows of the result. */
struct cb_mm_job {
	const float *a, *b, *bias, *cm;
	float *c;
	size_t n, k, m;
	int ta, tb;
	float alpha, beta;
	size_t cs0, cs1;
};

/* Rows [rb, re) of the batch x n rows of cb_matmul_f32. */
static void cb_matmul_rows(const void *ctx, size_t rb, size_t re)
{
	const struct cb_mm_job *j = ctx;
	const size_t n = j->n, k = j->k, m = j->m;
	for (size_t r = rb; r < re; r++) {
		const size_t q = r / n, i = r % n;
		const float *aq = j->a + q * n * k, *bq = j->b + q * k * m;
		float *CB_RESTRICT ci = j->c + r * m;
		for (size_t c = 0; c < m; c++)
			ci[c] = j->bias ? j->bias[c] : 0.0f;
		for (size_t p = 0; p < k; p++) {
			float av = aq[i * k + p];
			const float *CB_RESTRICT bp = bq + p * m;
			for (size_t c = 0; c < m; c++)
				ci[c] += av * bp[c];
		}
	}
}

/* c[n x m] = a[n x k] * b[k x m] (+ bias[m] when bias is not NULL), row by
 * row with the m loop innermost (vectorized); batch consecutive products.
 * Split by rows (of all the products). */
CB_KERNEL void cb_matmul_f32(const float *a, const float *b, const float *bias, float *c, size_t batch, size_t n,
			  size_t k, size_t m)
{
	const struct cb_mm_job j = {a, b, bias, NULL, c, n, k, m, 0, 0, 0.0f, 0.0f, 0, 0};
	cb_par_ranges(cb_matmul_rows, &j, batch * n, (double)(batch * n) * (double)(k * m + m));
}

/* Rows [rb, re) of cb_gemm_f32 (n x m, k terms). */
static void cb_gemm_rows(const void *ctx, size_t rb, size_t re)
{
	const struct cb_mm_job *j = ctx;
	const size_t mm = j->n, nn = j->m, kk = j->k;
	for (size_t i = rb; i < re; i++)
		for (size_t c = 0; c < nn; c++) {
			float s = 0.0f;
			for (size_t p = 0; p < kk; p++) {
				float av = j->ta ? j->a[p * mm + i] : j->a[i * kk + p];
				float bv = j->tb ? j->b[c * kk + p] : j->b[p * nn + c];
				s += av * bv;
			}
			j->c[i * nn + c] = j->alpha * s + j->beta * j->cm[i * j->cs0 + c * j->cs1];
		}
}

/* Gemm: y[mm x nn] = alpha * A' B' + beta * C, C read through strides
 * (cs0, cs1) so a vector or scalar broadcasts; A', B' optionally
 * transposed. Split by rows. */
CB_KERNEL void cb_gemm_f32(const float *a, const float *b, const float *cm, float *y, size_t mm, size_t nn, size_t kk,
			int ta, int tb, float alpha, float beta, size_t cs0, size_t cs1)
{
	const struct cb_mm_job j = {a, b, NULL, cm, y, mm, kk, nn, ta, tb, alpha, beta, cs0, cs1};
	cb_par_ranges(cb_gemm_rows, &j, mm, (double)mm * (double)(nn * kk + nn));
}

/* Reads element i of an integer tensor of es bytes (4 or 8) as int64. */
CB_INLINE int64_t cb_ld_i(const void *p, size_t i, int es)
{
	if (es == 8)
		return ((const int64_t *)p)[i];
	return ((const int32_t *)p)[i];
}

/* Stores v into element i of an integer tensor of es bytes (4 or 8). */
CB_INLINE void cb_st_i(void *p, size_t i, int es, int64_t v)
{
	if (es == 8)
		((int64_t *)p)[i] = v;
	else
		((int32_t *)p)[i] = (int32_t)v;
}

/* ---- reductions: y[sum i_k * ys_k] joins x over the index space dims
 * (ys_k = 0 on reduced axes). Split among the threads along one kept
 * dimension, so each output's whole reduction runs on one thread and joins
 * its values in the order of x, as one thread does. op: 0 add, 1 mean, 2
 * max, 3 min, 4 prod; es: 0 float, else integers of 4 or 8 bytes
 * (wrapping; the mean truncates toward zero). ---- */
struct cb_red_job {
	const void *x;
	void *y;
	const int64_t *dims, *ys;
	int rank, op, es;
	int k; /* the split dimension (kept), -1: no split */
	int nparts;
	float cnt;
	int64_t icnt;
};

/* One innermost run of a part: n values of x from xo (stride xs) joined
 * into y from yo (stride ys); pass 0 sets the outputs to the op's
 * identity, 1 joins, 2 divides by the count (the mean). */
static void cb_red_run(const struct cb_red_job *j, int pass, int64_t xo, int64_t yo, int64_t n, int64_t xs, int64_t ys)
{
	const int op = j->op, es = j->es;
	if (!es) {
		const float *CB_RESTRICT x = (const float *)j->x + xo;
		float *y = (float *)j->y + yo;
		if (pass == 0) {
			const float init = op == 2 ? -INFINITY : op == 3 ? INFINITY : op == 4 ? 1.0f : 0.0f;
			for (int64_t t = 0; t < n; t++)
				y[t * ys] = init;
		} else if (pass == 2) {
			for (int64_t t = 0; t < n; t++)
				y[t * ys] /= j->cnt;
		} else if (ys == 0 && (op == 0 || op == 1)) {
			float acc = *y;
			for (int64_t t = 0; t < n; t++)
				acc += x[t * xs];
			*y = acc;
		} else {
			for (int64_t t = 0; t < n; t++) {
				float v = x[t * xs], *p = y + t * ys;
				switch (op) {
				case 2: *p = v != v || *p != *p ? NAN : v > *p ? v : *p; break;
				case 3: *p = v != v || *p != *p ? NAN : v < *p ? v : *p; break;
				case 4: *p *= v; break;
				default: *p += v; break;
				}
			}
		}
		return;
	}
	const int64_t lo = es == 8 ? INT64_MIN : INT32_MIN, hi = es == 8 ? INT64_MAX : INT32_MAX;
	for (int64_t t = 0; t < n; t++) {
		const size_t yi = (size_t)(yo + t * ys);
		if (pass == 0) {
			cb_st_i(j->y, yi, es, op == 4 ? 1 : op == 2 ? lo : op == 3 ? hi : 0);
			continue;
		}
		int64_t a = cb_ld_i(j->y, yi, es);
		if (pass == 2) {
			cb_st_i(j->y, yi, es, j->icnt ? a / j->icnt : 0);
			continue;
		}
		int64_t v = cb_ld_i(j->x, (size_t)(xo + t * xs), es);
		switch (op) {
		case 2: a = v > a ? v : a; break;
		case 3: a = v < a ? v : a; break;
		case 4: a = (int64_t)((uint64_t)a * (uint64_t)v); break;
		default: a = (int64_t)((uint64_t)a + (uint64_t)v); break;
		}
		cb_st_i(j->y, yi, es, a);
	}
}

/* Walks the index space d (x strides xs, the job's y strides) in row-major
 * order from offsets x0, y0, a run of the innermost dimension at a time. */
static void cb_red_walk(const struct cb_red_job *j, int pass, const int64_t *d, const int64_t *xs, int64_t x0,
			int64_t y0)
{
	const int r = j->rank, in = r - 1;
	int64_t idx[CB_MAXRANK] = {0}, xo = x0, yo = y0;
	for (int i = 0; i < r; i++)
		if (d[i] == 0)
			return;
	for (;;) {
		cb_red_run(j, pass, xo, yo, d[in], xs[in], j->ys[in]);
		int i = in - 1;
		for (; i >= 0; i--) {
			xo += xs[i];
			yo += j->ys[i];
			if (++idx[i] < d[i])
				break;
			xo -= xs[i] * d[i];
			yo -= j->ys[i] * d[i];
			idx[i] = 0;
		}
		if (i < 0)
			return;
	}
}

/* Part i: the outputs whose split coordinate is in its range: set, joined
 * over their whole reductions, divided (the mean). */
static void cb_red_part(const void *ctx, int part, float *scratch)
{
	const struct cb_red_job *j = ctx;
	(void)scratch;
	int64_t d[CB_MAXRANK], o[CB_MAXRANK], xs[CB_MAXRANK], s = 1, x0 = 0, y0 = 0;
	for (int i = j->rank - 1; i >= 0; i--) {
		xs[i] = s;
		s *= j->dims[i];
		d[i] = j->dims[i];
	}
	if (j->k >= 0) {
		const size_t units = (size_t)j->dims[j->k];
		const int64_t a = (int64_t)cb_par_first(part, j->nparts, units);
		d[j->k] = (int64_t)cb_par_first(part + 1, j->nparts, units) - a;
		x0 = a * xs[j->k];
		y0 = a * j->ys[j->k];
	}
	for (int i = 0; i < j->rank; i++)
		o[i] = j->ys[i] ? d[i] : 1; /* the outputs of the part */
	cb_red_walk(j, 0, o, xs, 0, y0);
	cb_red_walk(j, 1, d, xs, x0, y0);
	if (j->op == 1)
		cb_red_walk(j, 2, o, xs, 0, y0);
}

/* Runs a reduction; the split dimension is the outermost kept one with a
 * unit for each thread, else the largest kept one. */
static void cb_reduce_go(struct cb_red_job *j)
{
	static const int64_t one[1] = {1};
	int64_t total = 1, best = 0;
	if (j->rank == 0) { /* a scalar: one output of one value */
		j->rank = 1;
		j->dims = j->ys = one;
	}
	j->k = -1;
	const int t = cb_pool_threads();
	for (int i = 0; i < j->rank; i++) {
		total *= j->dims[i];
		if (j->ys[i] && j->dims[i] > best && (j->k < 0 || best < t)) {
			j->k = i;
			best = j->dims[i];
		}
	}
	j->nparts = j->k < 0 ? 1 : cb_par_parts((double)total, (size_t)best);
	cb_par(cb_red_part, j, j->nparts, NULL);
}

/* Reductions over the index space dims[0..rank) of x with element strides
 * xs; the output index is sum i_k * ys_k (ys_k = 0 on reduced axes). op: 0
 * add, 1 mean, 2 max, 3 min, 4 prod; cnt is the number of reduced elements
 * per output (for the mean). y holds ny elements. */
CB_KERNEL void cb_reduce_f32(const float *x, float *y, size_t ny, const int64_t *dims, const int64_t *ys, int rank,
			  int op, float cnt)
{
	(void)ny;
	struct cb_red_job j = {x, y, dims, ys, rank, op, 0, -1, 1, cnt, 0};
	cb_reduce_go(&j);
}

/* Integer reductions (es 4 or 8 bytes, wrapping; op as cb_reduce_f32, the
 * mean truncates toward zero). */
CB_KERNEL void cb_reduce_i(const void *x, void *y, size_t ny, const int64_t *dims, const int64_t *ys, int rank, int op,
			   int es, int64_t cnt)
{
	(void)ny;
	struct cb_red_job j = {x, y, dims, ys, rank, op, es, -1, 1, 0.0f, cnt};
	cb_reduce_go(&j);
}

/* Arg max (flag 0) or arg min (flag 1) of lanes [b, e); flag2: int64
 * results. */
static void cb_argmax_lanes(const void *ctx, size_t b, size_t e)
{
	const struct cb_lanes_job *j = ctx;
	const size_t d = j->d, inner = j->inner;
	for (size_t l = b; l < e; l++) {
		const float *xp = (const float *)j->x + l / inner * d * inner + l % inner;
		size_t best = 0;
		for (size_t k = 1; k < d; k++) {
			float v = xp[k * inner], bv = xp[best * inner];
			if (bv != bv ? v == v : j->flag ? v < bv : v > bv)
				best = k;
		}
		if (j->flag2)
			((int64_t *)j->y)[l] = (int64_t)best;
		else
			((int32_t *)j->y)[l] = (int32_t)best;
	}
}

/* Arg max (amin = 0) or arg min along the middle of outer x d x inner,
 * first index on ties, a NaN never wins (and loses to any number);
 * idx64 selects int64 (else int32) results. Split by lanes. */
CB_KERNEL void cb_argmax_f32(const float *x, void *y, size_t outer, size_t d, size_t inner, int amin, int idx64)
{
	const struct cb_lanes_job j = {x, y, d, inner, amin, idx64, 0, 0};
	cb_par_ranges(cb_argmax_lanes, &j, outer * inner, (double)(outer * d * inner));
}

/* Layer normalization of rows [b, e) (p0 scale, p1 bias, inner values). */
static void cb_layernorm_rows(const void *ctx, size_t b, size_t e)
{
	const struct cb_chan_job *j = ctx;
	const size_t inner = j->inner;
	for (size_t o = b; o < e; o++) {
		const float *xp = j->x + o * inner;
		float *yp = j->y + o * inner;
		double mean = 0.0, var = 0.0;
		for (size_t i = 0; i < inner; i++)
			mean += xp[i];
		mean /= (double)inner;
		for (size_t i = 0; i < inner; i++)
			var += ((double)xp[i] - mean) * ((double)xp[i] - mean);
		var /= (double)inner;
		float inv = (float)(1.0 / sqrt(var + j->eps));
		for (size_t i = 0; i < inner; i++)
			yp[i] = ((xp[i] - (float)mean) * inv) * j->p0[i] + j->p1[i];
	}
}

/* Layer normalization over the trailing `inner` elements of each of `outer`
 * rows; scale and bias have `inner` values. Split by rows. */
CB_KERNEL void cb_layernorm_f32(const float *x, float *y, const float *scale, const float *bias, size_t outer,
			     size_t inner, float eps)
{
	const struct cb_chan_job j = {x, y, scale, bias, NULL, NULL, eps, 1, inner};
	cb_par_ranges(cb_layernorm_rows, &j, outer, (double)(outer * inner) * 4.0);
}

/* Gather's copies: rows (o, j) of outer x ni, each inner elements of es
 * bytes from row (o, index j) of the data. */
struct cb_gather_job {
	const unsigned char *src;
	const void *ind;
	unsigned char *dst;
	size_t d, inner, ni;
	int idx64, es;
};

/* Output rows [b, e) of a gather (indices already checked). */
static void cb_gather_rows(const void *ctx, size_t b, size_t e)
{
	const struct cb_gather_job *g = ctx;
	const size_t row = g->inner * (size_t)g->es;
	for (size_t r = b; r < e; r++) {
		const size_t o = r / g->ni;
		const int64_t k = cb_axis_index(g->ind, r % g->ni, g->idx64, g->d);
		memcpy(g->dst + r * row, g->src + (o * g->d + (size_t)k) * row, row);
	}
}

/* Gather along the middle of outer x d x inner (elements of es bytes):
 * result is outer x ni x inner; indices int64 (idx64) or int32. Out-of-range
 * indices return -1 (nothing sensible to read; checked before any copy).
 * The copies are split by output rows. */
CB_KERNEL int cb_gather(const void *data, const void *ind, void *y, size_t outer, size_t d, size_t inner, size_t ni,
		     int idx64, int es)
{
	for (size_t j = 0; j < ni; j++)
		if (cb_axis_index(ind, j, idx64, d) < 0)
			return -1;
	const struct cb_gather_job g = {(const unsigned char *)data, ind, (unsigned char *)y, d, inner, ni, idx64, es};
	cb_par_ranges(cb_gather_rows, &g, outer * ni, (double)(outer * ni * inner));
	return 0;
}
