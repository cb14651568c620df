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

/* cb_copy_nd split among the threads by its outer index (the dimensions
 * but the two innermost): every element is moved once, by one part. */
struct cb_copy_job {
	void *dst;
	const void *src;
	const int64_t *ds, *ss, *dims;
	int rank, es, nparts;
	int64_t outer;
};

static void cb_copy_part(const void *ctx, int i, float *scratch)
{
	const struct cb_copy_job *j = ctx;
	(void)scratch;
	cb_copy_nd_range(j->dst, j->ds, j->src, j->ss, j->dims, j->rank, j->es,
			 (int64_t)cb_par_first(i, j->nparts, (size_t)j->outer),
			 (int64_t)cb_par_first(i + 1, j->nparts, (size_t)j->outer));
}

CB_KERNEL void cb_copy_nd(void *dst, const int64_t *ds, const void *src, const int64_t *ss, const int64_t *dims,
			  int rank, int es)
{
	int64_t outer = 1, all = 1;
	for (int i = 0; i < rank; i++) {
		all *= dims[i];
		if (i < rank - 2)
			outer *= dims[i];
	}
	if (rank == 0 || all == 0) {
		cb_copy_nd_range(dst, ds, src, ss, dims, rank, es, 0, 1);
		return;
	}
	struct cb_copy_job j = {dst, src, ds, ss, dims, rank, es, 0, outer};
	j.nparts = cb_par_parts((double)all, (size_t)outer);
	cb_par(cb_copy_part, &j, j.nparts, NULL);
}

/* Fills n elements of es bytes with the element at v. */
CB_KERNEL void cb_fill(void *dst, const void *v, size_t n, int es)
{
	unsigned char *d = (unsigned char *)dst;
	for (size_t i = 0; i < n; i++)
		memcpy(d + i * (size_t)es, v, (size_t)es);
}

/* Softmax (or log-softmax) of x viewed as outer x d x inner along d. */
CB_KERNEL void cb_softmax_f32(const float *x, float *y, size_t outer, size_t d, size_t inner, int logsm)
{
	for (size_t o = 0; o < outer; o++)
		for (size_t i = 0; i < inner; i++) {
			const float *xp = x + o * d * inner + i;
			float *yp = y + o * d * inner + i;
			float mx = -INFINITY;
			for (size_t k = 0; k < d; k++)
				mx = xp[k * inner] > mx ? xp[k * inner] : mx;
			float sum = 0.0f;
			for (size_t k = 0; k < d; k++) {
				float e = expf(xp[k * inner] - mx);
				if (!logsm)
					yp[k * inner] = e;
				sum += e;
			}
			if (logsm) {
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

/* Per-channel affine map y = x * mul[c] + add[c] over outer x c x inner
 * (an inference batch normalization with its statistics folded). */
CB_KERNEL void cb_chan_affine_f32(const float *x, float *y, const float *mul, const float *add, size_t outer, size_t c,
			       size_t inner)
{
	for (size_t o = 0; o < outer; o++)
		for (size_t k = 0; k < c; k++) {
			const float *CB_RESTRICT xp = x + (o * c + k) * inner;
			float *yp = y + (o * c + k) * inner;
			float m = mul[k], a = add[k];
			for (size_t i = 0; i < inner; i++)
				yp[i] = xp[i] * m + a;
		}
}

/* Inference batch normalization with live statistics:
 * y = (x - mean) / sqrt(var + eps) * scale + bias, per channel. */
CB_KERNEL void cb_batchnorm_f32(const float *x, float *y, const float *scale, const float *bias, const float *mean,
			     const float *var, float eps, size_t outer, size_t c, size_t inner)
{
	for (size_t o = 0; o < outer; o++)
		for (size_t k = 0; k < c; k++) {
			float m = scale[k] / sqrtf(var[k] + eps), a = bias[k] - mean[k] * m;
			const float *xp = x + (o * c + k) * inner;
			float *yp = y + (o * c + k) * inner;
			for (size_t i = 0; i < inner; i++)
				yp[i] = xp[i] * m + a;
		}
}

/* Local response normalization across channels of NHWC pixels:
 * y = x / (k + alpha / (2h+1) * sum of x^2 over channels c-h .. c+h)^beta */
CB_KERNEL void cb_lrn_f32(const float *x, float *y, size_t pixels, int c, int half, float alpha, float beta, float k)
{
	const float a = alpha / (float)(2 * half + 1);
	for (size_t p = 0; p < pixels; p++) {
		const float *xp = x + p * (size_t)c;
		float *yp = y + p * (size_t)c;
		for (int ch = 0; ch < c; ch++) {
			int lo = ch - half < 0 ? 0 : ch - half, hi = ch + half >= c ? c - 1 : ch + half;
			float s = 0.0f;
			for (int j = lo; j <= hi; j++)
				s += xp[j] * xp[j];
			float base = k + a * s;
			float inv = beta == 0.75f ? 1.0f / sqrtf(base * sqrtf(base)) : powf(base, -beta);
			yp[ch] = xp[ch] * inv;
		}
	}
}

/* c[n x m] = a[n x k] * b[k x m] (+ bias[m] when bias is not NULL), row by
 * row with the m loop innermost (vectorized); batch consecutive products. */
CB_KERNEL void cb_matmul_f32(const float *a, const float *b, const float *bias, float *c, size_t batch, size_t n,
			  size_t k, size_t m)
{
	for (size_t q = 0; q < batch; q++) {
		const float *aq = a + q * n * k, *bq = b + q * k * m;
		float *cq = c + q * n * m;
		for (size_t i = 0; i < n; i++) {
			float *CB_RESTRICT ci = cq + i * m;
			for (size_t j = 0; j < m; j++)
				ci[j] = bias ? bias[j] : 0.0f;
			for (size_t p = 0; p < k; p++) {
				float av = aq[i * k + p];
				const float *CB_RESTRICT bp = bq + p * m;
				for (size_t j = 0; j < m; j++)
					ci[j] += av * bp[j];
			}
		}
	}
}

/* Gemm: y[mm x nn] = alpha * A' B' + beta * C, C read through strides
 * (cs0, cs1) so a vector or scalar broadcasts; A', B' optionally
 * transposed. */
CB_KERNEL void cb_gemm_f32(const float *a, const float *b, const float *cm, float *y, size_t mm, size_t nn, size_t kk,
			int ta, int tb, float alpha, float beta, size_t cs0, size_t cs1)
{
	for (size_t i = 0; i < mm; i++)
		for (size_t j = 0; j < nn; j++) {
			float s = 0.0f;
			for (size_t p = 0; p < kk; p++) {
				float av = ta ? a[p * mm + i] : a[i * kk + p];
				float bv = tb ? b[j * kk + p] : b[p * nn + j];
				s += av * bv;
			}
			y[i * nn + j] = alpha * s + beta * cm[i * cs0 + j * cs1];
		}
}

/* Reductions over the index space dims[0..rank) of x with element strides
 * xs; the output index is sum i_k * ys_k (ys_k = 0 on reduced axes). op: 0
 * add, 1 mean, 2 max, 3 min, 4 prod; cnt is the number of reduced elements
 * per output (for the mean). y holds ny elements. */
CB_KERNEL void cb_reduce_f32(const float *x, float *y, size_t ny, const int64_t *dims, const int64_t *ys, int rank,
			  int op, float cnt)
{
	float init = op == 2 ? -INFINITY : op == 3 ? INFINITY : op == 4 ? 1.0f : 0.0f;
	for (size_t i = 0; i < ny; i++)
		y[i] = init;
	int64_t idx[CB_MAXRANK] = {0};
	size_t total = 1;
	for (int i = 0; i < rank; i++)
		total *= (size_t)dims[i];
	for (size_t e = 0; e < total; e++) {
		int64_t o = 0;
		for (int i = 0; i < rank; i++)
			o += idx[i] * ys[i];
		float v = x[e];
		float *t = y + o;
		switch (op) {
		case 2: *t = v != v || *t != *t ? NAN : v > *t ? v : *t; break;
		case 3: *t = v != v || *t != *t ? NAN : v < *t ? v : *t; break;
		case 4: *t *= v; break;
		default: *t += v; break;
		}
		for (int i = rank - 1; i >= 0 && ++idx[i] == dims[i]; i--)
			idx[i] = 0;
	}
	if (op == 1)
		for (size_t i = 0; i < ny; i++)
			y[i] /= cnt;
}

/* Arg max (amin = 0) or arg min along the middle of outer x d x inner,
 * first index on ties, a NaN never wins (and loses to any number);
 * idx64 selects int64 (else int32) results. */
CB_KERNEL void cb_argmax_f32(const float *x, void *y, size_t outer, size_t d, size_t inner, int amin, int idx64)
{
	for (size_t o = 0; o < outer; o++)
		for (size_t i = 0; i < inner; i++) {
			const float *xp = x + o * d * inner + i;
			size_t best = 0;
			for (size_t k = 1; k < d; k++) {
				float v = xp[k * inner], b = xp[best * inner];
				if (b != b ? v == v : amin ? v < b : v > b)
					best = k;
			}
			if (idx64)
				((int64_t *)y)[o * inner + i] = (int64_t)best;
			else
				((int32_t *)y)[o * inner + i] = (int32_t)best;
		}
}

/* Layer normalization over the trailing `inner` elements of each of `outer`
 * rows; scale and bias have `inner` values. */
CB_KERNEL void cb_layernorm_f32(const float *x, float *y, const float *scale, const float *bias, size_t outer,
			     size_t inner, float eps)
{
	for (size_t o = 0; o < outer; o++) {
		const float *xp = x + o * inner;
		float *yp = y + o * inner;
		double mean = 0.0, var = 0.0;
		for (size_t i = 0; i < inner; i++)
			mean += xp[i];
		mean /= (double)inner;
		for (size_t i = 0; i < inner; i++)
			var += ((double)xp[i] - mean) * ((double)xp[i] - mean);
		var /= (double)inner;
		float inv = (float)(1.0 / sqrt(var + eps));
		for (size_t i = 0; i < inner; i++)
			yp[i] = ((xp[i] - (float)mean) * inv) * scale[i] + bias[i];
	}
}

/* Gather along the middle of outer x d x inner (elements of es bytes):
 * result is outer x ni x inner; indices int64 (idx64) or int32. Out-of-range
 * indices return -1 (nothing sensible to read). */
CB_KERNEL int cb_gather(const void *data, const void *ind, void *y, size_t outer, size_t d, size_t inner, size_t ni,
		     int idx64, int es)
{
	const unsigned char *src = (const unsigned char *)data;
	unsigned char *dst = (unsigned char *)y;
	for (size_t o = 0; o < outer; o++)
		for (size_t j = 0; j < ni; j++) {
			int64_t k = cb_axis_index(ind, j, idx64, d);
			if (k < 0)
				return -1;
			memcpy(dst + (o * ni + j) * inner * (size_t)es, src + (o * d + (size_t)k) * inner * (size_t)es,
			       inner * (size_t)es);
		}
	return 0;
}
