/* cb_ref.c - straightforward kernels for the rarer instruction kinds:
 * transposed convolution, max pooling with its argmax, instance
 * normalization, gathernd, resizes, top-k, cumulative sums, cross-entropy,
 * reflect/edge padding, integer reductions and the quantization profile.
 * Their semantics are the interpreter's (backends/interpreter); none is on
 * a model's hot path. */
/* (cb_misc.c comes first in a bundle: cb_ld_i, cb_st_i, the splits) */
#include "cb_misc.c"

/* Element i of the index tensor ind (ies bytes: 4 or 8) as a position along
 * a dimension of len elements, a negative one counted from the end; -1
 * when it is out of range. */
CB_INLINE int64_t cb_index_at(const void *ind, size_t i, int ies, int64_t len)
{
	int64_t v = cb_ld_i(ind, i, ies);
	if (v < 0)
		v += len;
	return v < 0 || v >= len ? -1 : v;
}

/* the row-major strides st of a tensor of dims (rank r) */
static void cb_strides(const int64_t *dims, int r, int64_t *st)
{
	int64_t s = 1;
	for (int i = r - 1; i >= 0; i--) {
		st[i] = s;
		s *= dims[i];
	}
}

struct cb_ref_job {
	const int *a;
	const float *in, *f, *bias;
	float *out;
	int64_t *am;
};

/* Images [b0, b1) of a transposed convolution: each image scatters into
 * its own output only. */
static void cb_convtranspose_images(const void *ctx, size_t b0, size_t b1)
{
	const struct cb_ref_job *j = ctx;
	const int *a = j->a;
	const float *in = j->in, *f = j->f;
	float *out = j->out;
	/* a: n h w c oh ow oc kh kw sh sw pt pl dh dw group */
	const int h = a[1], w = a[2], c = a[3], oh = a[4], ow = a[5], oc = a[6], kh = a[7], kw = a[8];
	const int sh = a[9], sw = a[10], pt = a[11], pl = a[12], dh = a[13], dw = a[14], group = a[15];
	const int icg = c / group, ocg = oc / group;
	for (size_t i = b0 * (size_t)oh * ow; i < b1 * (size_t)oh * ow; i++)
		memcpy(out + i * (size_t)oc, j->bias, (size_t)oc * sizeof(float));
	for (int b = (int)b0; b < (int)b1; b++)
		for (int iy = 0; iy < h; iy++)
			for (int ix = 0; ix < w; ix++) {
				const float *px = in + (((size_t)b * h + iy) * w + ix) * c;
				for (int ky = 0; ky < kh; ky++) {
					int oy = iy * sh + ky * dh - pt;
					if (oy < 0 || oy >= oh)
						continue;
					for (int kx = 0; kx < kw; kx++) {
						int ox = ix * sw + kx * dw - pl;
						if (ox < 0 || ox >= ow)
							continue;
						float *o = out + (((size_t)b * oh + oy) * ow + ox) * oc;
						for (int g = 0; g < group; g++)
							for (int q = 0; q < ocg; q++) {
								const float *fr =
									f + ((((size_t)g * ocg + q) * kh + ky) * kw + kx) * icg;
								const float *pg = px + (size_t)g * icg;
								float acc = 0.0f;
								for (int k = 0; k < icg; k++)
									acc += pg[k] * fr[k];
								o[g * ocg + q] += acc;
							}
					}
				}
			}
}

/* Transposed convolution (NHWC, filter OC x KH x KW x C/group): every input
 * pixel scatters into the output window it reaches; split by images. */
CB_KERNEL void cb_convtranspose_f32(const int *a, const float *in, const float *f, const float *bias, float *out)
{
	const struct cb_ref_job j = {a, in, f, bias, out, NULL};
	cb_par_ranges(cb_convtranspose_images, &j, (size_t)a[0],
		      (double)a[0] * a[1] * a[2] * a[3] * a[6] / a[15] * a[7] * a[8]);
}

#if CB_HAVE_VEC
/* Channels [0, c - c % CB_VL) of output pixel (b, y, x) of
 * cb_maxpool_argmax_f32 where its window lies inside
 * the image, CB_VL channels at a time: the same choice as the scalar loop
 * (the first maximum in window order, a NaN replacing a number), the
 * winning tap kept per lane and turned into the input index after. */
static void cb_maxpool_argmax_vec(const int *a, const float *in, float *out, int64_t *am, int b, int y, int x)
{
	const int h = a[1], w = a[2], c = a[3], kw = a[7], taps = a[6] * a[7];
	const int64_t i0 = (((int64_t)b * h + y * a[8] - a[10]) * w + x * a[9] - a[11]) * c;
	const size_t oi = (((size_t)b * a[4] + (size_t)y) * (size_t)a[5] + (size_t)x) * (size_t)c;
	int32_t tap[CB_VL];
	for (int ch = 0; ch + CB_VL <= c; ch += CB_VL) {
		cb_vf bv = *(const cb_vf *)(in + i0 + ch);
		cb_vi bt = {0};
		for (int t = 1; t < taps; t++) {
			const cb_vf v = *(const cb_vf *)(in + i0 + ((int64_t)(t / kw) * w + t % kw) * c + ch);
			const cb_vi take = (v > bv) | ((v != v) & (bv == bv));
			bv = (cb_vf)((take & (cb_vi)v) | (~take & (cb_vi)bv));
			bt = (take & t) | (~take & bt);
		}
		*(cb_vf *)(out + oi + (size_t)ch) = bv;
		memcpy(tap, &bt, sizeof tap);
		for (int l = 0; l < CB_VL; l++)
			am[oi + (size_t)(ch + l)] = i0 + ((int64_t)(tap[l] / kw) * w + tap[l] % kw) * c + ch + l;
	}
}
#endif

/* Output rows [r0, r1) (image, row) of cb_maxpool_argmax_f32; a window
 * inside the image runs its whole vectors of channels on
 * cb_maxpool_argmax_vec (the scalar loop's data-dependent branches cost
 * about 25 ns per output: 10 ms per step of the Fashion-MNIST CNN's first
 * pooling). */
static void cb_maxpool_argmax_rows(const void *ctx, size_t r0, size_t r1)
{
	const struct cb_ref_job *j = ctx;
	const int *a = j->a;
	const float *in = j->in;
	float *out = j->out;
	int64_t *am = j->am;
	/* a: n h w c oh ow kh kw sh sw pt pl */
	const int h = a[1], w = a[2], c = a[3], oh = a[4], ow = a[5];
	for (size_t r = r0; r < r1; r++) {
		const int b = (int)(r / (size_t)oh), y = (int)(r % (size_t)oh);
		for (int x = 0; x < ow; x++) {
			int ch = 0;
#if CB_HAVE_VEC
			const int y0 = y * a[8] - a[10], x0 = x * a[9] - a[11];
			if (y0 >= 0 && y0 + a[6] <= h && x0 >= 0 && x0 + a[7] <= w) {
				cb_maxpool_argmax_vec(a, in, out, am, b, y, x);
				ch = c - c % CB_VL;
			}
#endif
			for (; ch < c; ch++) {
				int64_t best = -1;
				float bv = 0.0f;
				for (int ky = 0; ky < a[6]; ky++) {
					int iy = y * a[8] - a[10] + ky;
					if (iy < 0 || iy >= h)
						continue;
					for (int kx = 0; kx < a[7]; kx++) {
						int ix = x * a[9] - a[11] + kx;
						if (ix < 0 || ix >= w)
							continue;
						int64_t ii = (((int64_t)b * h + iy) * w + ix) * c + ch;
						float v = in[ii];
						if (best < 0 || v > bv || (v != v && bv == bv)) {
							best = ii;
							bv = v;
						}
					}
				}
				size_t oi = (((size_t)b * oh + y) * ow + x) * c + ch;
				out[oi] = best < 0 ? 0.0f : bv;
				am[oi] = best;
			}
		}
	}
}

/* Max pooling that also writes the flattened NHWC input index of the first
 * maximum of each window (a NaN wins; a window in the padding only gives 0
 * and index -1) as int64. Split by output rows. */
CB_KERNEL void cb_maxpool_argmax_f32(const int *a, const float *in, float *out, int64_t *am)
{
	const struct cb_ref_job j = {a, in, NULL, NULL, out, am};
	cb_par_ranges(cb_maxpool_argmax_rows, &j, (size_t)a[0] * a[4], (double)a[0] * a[4] * a[5] * a[3] * a[6] * a[7]);
}

/* Instance normalization's operands; the pairs (image, channel) are split
 * among the threads. */
struct cb_inorm_job {
	const float *x, *scale, *bias;
	float *y;
	const int64_t *dims;
	int rank, ci;
	float eps;
	int64_t str[8], nc, plane;
};

/* Pairs [q0, q1) (image, channel): mean, variance, then the outputs. */
static void cb_instancenorm_pairs(const void *ctx, size_t q0, size_t q1)
{
	const struct cb_inorm_job *j = ctx;
	const int64_t *dims = j->dims, *str = j->str, plane = j->plane;
	const int rank = j->rank, ci = j->ci;
	for (size_t q = q0; q < q1; q++) {
		const int64_t b = (int64_t)q / j->nc, c = (int64_t)q % j->nc;
		double pass[2] = {0.0, 0.0}, mean = 0.0;
		for (int step = 0; step < 3; step++) {
			int64_t idx[8] = {0};
			for (int64_t p = 0; p < plane; p++) {
				int64_t off = b * str[0] + c * str[ci];
				for (int i = 1; i < rank; i++)
					if (i != ci)
						off += idx[i] * str[i];
				double v = j->x[off];
				if (step == 0)
					pass[0] += v;
				else if (step == 1)
					pass[1] += (v - mean) * (v - mean);
				else
					j->y[off] = (float)((v - mean) / sqrt(pass[1] / (double)plane + j->eps) * j->scale[c] +
							    j->bias[c]);
				for (int i = rank - 1; i >= 1; i--) {
					if (i == ci)
						continue;
					if (++idx[i] < dims[i])
						break;
					idx[i] = 0;
				}
			}
			if (step == 0)
				mean = plane ? pass[0] / (double)plane : 0.0;
		}
	}
}

/* Instance normalization: per (batch, channel), over every other
 * dimension; t dims[0..rank) with the channel at ci. */
CB_KERNEL void cb_instancenorm_f32(const float *x, float *y, const float *scale, const float *bias, const int64_t *dims,
				   int rank, int ci, float eps)
{
	struct cb_inorm_job j = {x, scale, bias, y, dims, rank, ci, eps, {0}, 0, 0};
	int64_t total = 1;
	for (int i = rank - 1; i >= 0; i--) {
		j.str[i] = total;
		total *= dims[i];
	}
	j.nc = dims[ci];
	const int64_t pairs = dims[0] * dims[ci];
	j.plane = pairs != 0 ? total / pairs : 0;
	cb_par_ranges(cb_instancenorm_pairs, &j, (size_t)pairs, (double)total * 4.0);
}

/* gathernd's operands: tuples of m index values, each copying a chunk. */
struct cb_gnd_job {
	const unsigned char *data;
	const int64_t *dims;
	const void *ind;
	unsigned char *out;
	int64_t str[8];
	size_t chunk, per;
	int ies, m, b, es;
};

/* The element offset in the data of tuple t (-1: an index out of range). */
static int64_t cb_gathernd_at(const struct cb_gnd_job *g, size_t t)
{
	int64_t off = g->b ? (int64_t)(g->per ? t / g->per : 0) * g->str[g->b - 1] : 0;
	for (int j = 0; j < g->m; j++) {
		int64_t v = cb_index_at(g->ind, t * (size_t)g->m + (size_t)j, g->ies, g->dims[g->b + j]);
		if (v < 0)
			return -1;
		off += v * g->str[g->b + j];
	}
	return off;
}

/* Tuples [t0, t1) of a gathernd (indices already checked). */
static void cb_gathernd_tuples(const void *ctx, size_t t0, size_t t1)
{
	const struct cb_gnd_job *g = ctx;
	const size_t bytes = g->chunk * (size_t)g->es;
	for (size_t t = t0; t < t1; t++)
		memcpy(g->out + t * bytes, g->data + (size_t)cb_gathernd_at(g, t) * (size_t)g->es, bytes);
}

/* gathernd with batch_dims b: data dims[0..rank), index tuples of m values
 * (int32 or int64, negative counted from the end); es bytes per element.
 * Returns -1 on an index out of range (checked before any copy); the
 * copies are split by tuples. */
CB_KERNEL int cb_gathernd(const void *data, const int64_t *dims, int rank, const void *ind, int ies, size_t tuples,
			  int m, int b, void *out, int es)
{
	struct cb_gnd_job g = {(const unsigned char *)data, dims, ind, (unsigned char *)out, {0}, 1, 0, ies, m, b, es};
	cb_strides(dims, rank, g.str);
	size_t batch = 1;
	for (int i = 0; i < b; i++)
		batch *= (size_t)dims[i];
	for (int i = b + m; i < rank; i++)
		g.chunk *= (size_t)dims[i];
	g.per = batch ? tuples / batch : 0;
	for (size_t t = 0; t < tuples; t++)
		if (cb_gathernd_at(&g, t) < 0)
			return -1;
	cb_par_ranges(cb_gathernd_tuples, &g, tuples, (double)(tuples * (g.chunk + (size_t)m)));
	return 0;
}

/* An operator that maps each output element (index idx over dims dd) to
 * source elements (dims sd): resize and the padding modes. The output is
 * split among the threads by rows of its innermost dimension. */
struct cb_map_job {
	const void *src;
	const int64_t *sd;
	void *dst;
	const int64_t *dd;
	const double *scale; /* resize */
	const int64_t *p;    /* padding: the leading pads */
	int rank, mode, es;
	int64_t sstr[8], n;
	int interp[8], ni; /* resize: the dimensions interpolated */
};

/* Fills the source strides and the output count of a map job. */
static void cb_map_init(struct cb_map_job *j)
{
	int64_t s = 1;
	j->n = 1;
	for (int i = j->rank - 1; i >= 0; i--) {
		j->sstr[i] = s;
		s *= j->sd[i];
		j->n *= j->dd[i];
	}
}

/* The output index idx of flat position o (all 0 in an output with no
 * element, whose ranges are empty). */
static void cb_map_index(const struct cb_map_job *j, int64_t o, int64_t *idx)
{
	for (int i = j->rank - 1; i >= 0; i--) {
		idx[i] = j->dd[i] ? o % j->dd[i] : 0;
		o = j->dd[i] ? o / j->dd[i] : 0;
	}
}

/* Advances idx to the next output position (row-major). */
CB_INLINE void cb_map_next(const struct cb_map_job *j, int64_t *idx)
{
	for (int i = j->rank - 1; i >= 0; i--) {
		if (++idx[i] < j->dd[i])
			break;
		idx[i] = 0;
	}
}

/* Runs fn over the output's rows (output elements [r0, r1) * the innermost
 * size), `per` the work of one element. */
static void cb_map_split(cb_range_fn fn, const struct cb_map_job *j, double per)
{
	const int64_t last = j->rank ? j->dd[j->rank - 1] : 1, rows = last ? j->n / last : 0;
	cb_par_ranges(fn, j, (size_t)rows, (double)j->n * per);
}

/* Output rows [r0, r1) of a resize. */
static void cb_resize_rows(const void *ctx, size_t r0, size_t r1)
{
	const struct cb_map_job *j = ctx;
	const int rank = j->rank, ni = j->ni, es = j->es;
	const int64_t *sd = j->sd, *sstr = j->sstr, last = rank ? j->dd[rank - 1] : 1;
	int64_t idx[8] = {0};
	cb_map_index(j, (int64_t)r0 * last, idx);
	for (int64_t o = (int64_t)r0 * last; o < (int64_t)r1 * last; o++) {
		int64_t lo[8], hi[8];
		double fr[8];
		for (int i = 0; i < rank; i++) {
			double x = (double)idx[i] / j->scale[i];
			int64_t f = (int64_t)floor(x);
			if (f >= sd[i])
				f = sd[i] - 1;
			lo[i] = f;
			hi[i] = f + 1 < sd[i] ? f + 1 : f;
			fr[i] = x - (double)f < 0 ? 0 : x - (double)f;
		}
		if (!j->mode || ni == 0) {
			int64_t si = 0;
			for (int i = 0; i < rank; i++)
				si += lo[i] * sstr[i];
			memcpy((unsigned char *)j->dst + o * es, (const unsigned char *)j->src + si * es, (size_t)es);
		} else {
			double acc = 0.0;
			for (unsigned corner = 0; corner < 1u << ni; corner++) {
				double wgt = 1.0;
				int64_t si = 0;
				for (int i = 0, c = 0; i < rank; i++) {
					int64_t x = lo[i];
					if (c < ni && j->interp[c] == i) {
						int up = corner >> c & 1;
						x = up ? hi[i] : lo[i];
						wgt *= up ? fr[i] : 1 - fr[i];
						c++;
					}
					si += x * sstr[i];
				}
				if (wgt != 0)
					acc += wgt * ((const float *)j->src)[si];
			}
			((float *)j->dst)[o] = (float)acc;
		}
		cb_map_next(j, idx);
	}
}

/* Resize (asymmetric: output o reads input o / scale): nearest copies the
 * element at the floors (any kind, es bytes); bilinear (float) interpolates
 * between floor and floor + 1 (clamped) in every dimension whose size
 * changes. Split by output rows. */
CB_KERNEL void cb_resize(const void *src, const int64_t *sd, void *dst, const int64_t *dd, const double *scale,
			 int rank, int bilinear, int es)
{
	struct cb_map_job j = {src, sd, dst, dd, scale, NULL, rank, bilinear, es, {0}, 0, {0}, 0};
	cb_map_init(&j);
	for (int i = 0; i < rank; i++)
		if (bilinear && dd[i] != sd[i])
			j.interp[j.ni++] = i;
	cb_map_split(cb_resize_rows, &j, 4.0 * rank * (1 << j.ni));
}

/* x beats y in a descending order: NaN never beats, anything beats NaN */
CB_INLINE int cb_beats(float x, float y) { return y != y ? x == x : x > y; }

/* Top k along the last dimension (len) of rows rows, stable (ties keep the
 * lower index); indices int32 or int64; order is scratch for len size_t. */
CB_KERNEL void cb_topk_f32(const float *x, float *vals, void *ind, int ies, size_t rows, size_t len, size_t k,
			   size_t *order)
{
	for (size_t r = 0; r < rows; r++) {
		const float *xr = x + r * len;
		for (size_t j = 0; j < len; j++)
			order[j] = j;
		for (size_t j = 0; j < k; j++) {
			size_t b = j;
			for (size_t m = j + 1; m < len; m++)
				if (cb_beats(xr[order[m]], xr[order[b]]) ||
				    (!cb_beats(xr[order[b]], xr[order[m]]) && order[m] < order[b]))
					b = m;
			size_t t = order[j];
			order[j] = order[b];
			order[b] = t;
			vals[r * k + j] = xr[order[j]];
			cb_st_i(ind, r * k + j, ies, (int64_t)order[j]);
		}
	}
}

/* Cumulative sums (prod 0) or products (prod 1) of lanes [b, e), from 0
 * or 1, in double (flag: exclusive, flag2: reversed, es: 0 float, else
 * integers of that size, wrapping). */
static void cb_cumsum_lanes(const void *ctx, size_t b, size_t e)
{
	const struct cb_lanes_job *j = ctx;
	const size_t len = j->d, inner = j->inner;
	const int excl = j->flag, rev = j->flag2, ies = j->es, prod = j->prod;
	for (size_t l = b; l < e; l++) {
		const size_t o = l / inner, in = l % inner;
		double af = prod;
		uint64_t ai = (uint64_t)prod;
		for (size_t jj = 0; jj < len; jj++) {
			size_t q = rev ? len - 1 - jj : jj, i = (o * len + q) * inner + in;
			double xf = ies ? 0.0 : ((const float *)j->x)[i], pf = prod ? af * xf : af + xf;
			uint64_t xi = ies ? (uint64_t)cb_ld_i(j->x, i, ies) : 0, pi = prod ? ai * xi : ai + xi;
			if (ies)
				cb_st_i(j->y, i, ies, (int64_t)(excl ? ai : pi));
			else
				((float *)j->y)[i] = (float)(excl ? af : pf);
			af = pf;
			ai = pi;
		}
	}
}

/* Cumulative sum (prod 0) or product (prod 1, CumProd) along the middle
 * of outer x len x inner; ies 0: float, else integers of that size
 * (wrapping). Split by lanes. */
CB_KERNEL void cb_cumsum(const void *x, void *y, size_t outer, size_t len, size_t inner, int excl, int rev, int ies,
			 int prod)
{
	const struct cb_lanes_job j = {x, y, len, inner, excl, rev, ies, prod};
	cb_par_ranges(cb_cumsum_lanes, &j, outer * inner, (double)(outer * len * inner) * 2.0);
}

/* Cross-entropy: -sum log p[i][label i]; returns -1 for a label out of
 * range. */
CB_KERNEL int cb_crossentropy_f32(const float *p, const void *labels, int les, size_t n, size_t c, float *ce)
{
	double sum = 0.0;
	for (size_t i = 0; i < n; i++) {
		int64_t l = cb_ld_i(labels, i, les);
		if (l < 0 || (uint64_t)l >= c)
			return -1;
		sum -= log((double)p[i * c + (size_t)l]);
	}
	*ce = (float)sum;
	return 0;
}

/* Output rows [r0, r1) of a reflect or edge padding. */
static void cb_pad_mode_rows(const void *ctx, size_t r0, size_t r1)
{
	const struct cb_map_job *j = ctx;
	const int rank = j->rank, es = j->es;
	const int64_t last = rank ? j->dd[rank - 1] : 1;
	int64_t idx[8] = {0};
	cb_map_index(j, (int64_t)r0 * last, idx);
	for (int64_t o = (int64_t)r0 * last; o < (int64_t)r1 * last; o++) {
		int64_t si = 0;
		for (int i = 0; i < rank; i++) {
			int64_t x = idx[i] - j->p[i], len = j->sd[i];
			if (x < 0 || x >= len) {
				if (j->mode == 1) {
					if (len == 1) {
						x = 0;
					} else {
						int64_t period = 2 * (len - 1);
						x = ((x % period) + period) % period;
						if (x >= len)
							x = period - x;
					}
				} else {
					x = x < 0 ? 0 : len - 1;
				}
			}
			si += x * j->sstr[i];
		}
		memcpy((unsigned char *)j->dst + o * es, (const unsigned char *)j->src + si * es, (size_t)es);
		cb_map_next(j, idx);
	}
}

/* Reflect (mode 1) or edge (mode 2) padding of any element kind: dst dims
 * dd, source dims sd, leading pads p. Split by output rows. */
CB_KERNEL void cb_pad_mode(const void *src, const int64_t *sd, void *dst, const int64_t *dd, const int64_t *p, int rank,
			   int mode, int es)
{
	struct cb_map_job j = {src, sd, dst, dd, NULL, p, rank, mode, es, {0}, 0, {0}, 0};
	cb_map_init(&j);
	cb_map_split(cb_pad_mode_rows, &j, 2.0 * rank);
}

/* The quantization profile: info holds the running (min, max) of every
 * value seen (its contents count as seen), hist counts values in bins equal
 * bins over that range; when the range grows, old counts move to the new
 * bin holding their old bin's centre. old is scratch of bins floats. */
CB_KERNEL void cb_qprofile_f32(const float *x, size_t n, float *hist, size_t bins, float *info, float *old)
{
	double lo = info[0], hi = info[1];
	for (size_t i = 0; i < n; i++) {
		double v = x[i];
		if (v != v)
			continue;
		lo = v < lo ? v : lo;
		hi = v > hi ? v : hi;
	}
	double olo = info[0], ohi = info[1];
	if ((lo != olo || hi != ohi) && ohi > olo) {
		memcpy(old, hist, bins * sizeof(float));
		memset(hist, 0, bins * sizeof(float));
		double ow = (ohi - olo) / (double)bins;
		for (size_t b = 0; b < bins; b++) {
			double c = olo + ((double)b + 0.5) * ow;
			size_t nb = hi > lo ? (size_t)((c - lo) / (hi - lo) * (double)bins) : 0;
			hist[nb < bins ? nb : bins - 1] += old[b];
		}
	}
	for (size_t i = 0; i < n; i++) {
		double v = x[i];
		if (v != v)
			continue;
		size_t b = hi > lo ? (size_t)((v - lo) / (hi - lo) * (double)bins) : 0;
		hist[b < bins ? b : bins - 1] += 1.0f;
	}
	info[0] = (float)lo;
	info[1] = (float)hi;
}

/* the element offset, in a tensor of strides st, of the coordinates of flat
 * position i of a tensor of dims id (rank r), coordinate axis replaced by
 * at */
static size_t cb_along_axis(const int64_t *id, int r, size_t i, const int64_t *st, int axis, int64_t at)
{
	size_t off = 0;
	for (int k = r - 1; k >= 0; k--) {
		size_t c = i % (size_t)id[k];
		i /= (size_t)id[k];
		off += (k == axis ? (size_t)at : c) * (size_t)st[k];
	}
	return off;
}

/* gatherelements' and scatterelements' walk over the indices (dims id):
 * their number, and the strides st of the data (dims dd; rank r) */
CB_INLINE int64_t cb_elements_walk(const int64_t *dd, const int64_t *id, int r, int64_t *st)
{
	int64_t n = 1;
	cb_strides(dd, r, st);
	for (int i = 0; i < r; i++)
		n *= id[i];
	return n;
}

/* gatherelements: Dest[i] = Data at Indices' coordinates with the axis
 * coordinate from the index; -1 on an index out of range */
CB_KERNEL int cb_gather_elements(const void *data, const int64_t *dd, const void *ind, int ies, const int64_t *id,
				 int rank, int axis, void *out, int es)
{
	int64_t st[8], n = cb_elements_walk(dd, id, rank, st);
	for (int64_t i = 0; i < n; i++) {
		int64_t v = cb_index_at(ind, (size_t)i, ies, dd[axis]);
		if (v < 0)
			return -1;
		memcpy((unsigned char *)out + (size_t)i * (size_t)es,
		       (const unsigned char *)data + cb_along_axis(id, rank, (size_t)i, st, axis, v) * (size_t)es,
		       (size_t)es);
	}
	return 0;
}

/* dest[di] combined with upd[ui]: red 0 replaces (es bytes), 1 adds, 2
 * multiplies; cls 0: float, else integers of cls bytes (wrapping) */
static void cb_combine(void *dest, size_t di, const void *upd, size_t ui, int red, int cls, int es)
{
	if (red == 0) {
		memcpy((unsigned char *)dest + di * (size_t)es, (const unsigned char *)upd + ui * (size_t)es, (size_t)es);
	} else if (cls) {
		uint64_t a = (uint64_t)cb_ld_i(dest, di, cls), b = (uint64_t)cb_ld_i(upd, ui, cls);
		cb_st_i(dest, di, cls, (int64_t)(red == 1 ? a + b : a * b));
	} else {
		float *d = (float *)dest;
		double a = d[di], b = ((const float *)upd)[ui];
		d[di] = (float)(red == 1 ? a + b : a * b);
	}
}

/* scatterelements into dest (already holding Data); -1 on an index out of
 * range (nothing written) */
CB_KERNEL int cb_scatter_elements(void *dest, const int64_t *dd, const void *ind, int ies, const int64_t *id, int rank,
				  int axis, const void *upd, int red, int cls, int es)
{
	int64_t st[8], n = cb_elements_walk(dd, id, rank, st);
	for (int64_t i = 0; i < n; i++)
		if (cb_index_at(ind, (size_t)i, ies, dd[axis]) < 0)
			return -1;
	for (int64_t i = 0; i < n; i++) {
		int64_t v = cb_index_at(ind, (size_t)i, ies, dd[axis]);
		cb_combine(dest, cb_along_axis(id, rank, (size_t)i, st, axis, v), upd, (size_t)i, red, cls, es);
	}
	return 0;
}

/* scatternd into dest (already holding Data): rows index tuples of m
 * values each select a slice that the matching slice of upd updates */
CB_KERNEL int cb_scatter_nd(void *dest, const int64_t *dd, int rank, const void *ind, int ies, size_t rows, int m,
			    const void *upd, int red, int cls, int es)
{
	int64_t st[8];
	size_t chunk = 1;
	cb_strides(dd, rank, st);
	for (int i = m; i < rank; i++)
		chunk *= (size_t)dd[i];
	for (size_t r = 0; r < rows; r++)
		for (int j = 0; j < m; j++)
			if (cb_index_at(ind, r * (size_t)m + (size_t)j, ies, dd[j]) < 0)
				return -1;
	for (size_t r = 0; r < rows; r++) {
		size_t off = 0;
		for (int j = 0; j < m; j++)
			off += (size_t)cb_index_at(ind, r * (size_t)m + (size_t)j, ies, dd[j]) * (size_t)st[j];
		for (size_t c = 0; c < chunk; c++)
			cb_combine(dest, off + c, upd, r * chunk + c, red, cls, es);
	}
	return 0;
}
