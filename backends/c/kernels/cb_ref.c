/* cb_ref.c - straightforward kernels for the rarer instruction kinds:
 * transposed convolution, max pooling with its argmax, instance
 * normalization, gathernd, resizes, top-k, cumulative sums, cross-entropy,
 * reflect/edge padding, integer reductions and the quantization profile.
 * Their semantics are the interpreter's (backends/interpreter); none is on
 * a model's hot path. */
#include "cb_base.h"

/* Reads element i of an integer tensor of es bytes (4 or 8) as int64. */
CB_INLINE int64_t cb_ld_i(const void *p, size_t i, int es)
{
	if (es == 8)
		return ((const int64_t *)p)[i];
	return ((const int32_t *)p)[i];
}

CB_INLINE void cb_st_i(void *p, size_t i, int es, int64_t v)
{
	if (es == 8)
		((int64_t *)p)[i] = v;
	else
		((int32_t *)p)[i] = (int32_t)v;
}

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

/* Transposed convolution (NHWC, filter OC x KH x KW x C/group): every input
 * pixel scatters into the output window it reaches. */
CB_KERNEL void cb_convtranspose_f32(const int *a, const float *in, const float *f, const float *bias, float *out)
{
	/* a: n h w c oh ow oc kh kw sh sw pt pl dh dw group */
	const int n = a[0], h = a[1], w = a[2], c = a[3], oh = a[4], ow = a[5], oc = a[6], kh = a[7], kw = a[8];
	const int sh = a[9], sw = a[10], pt = a[11], pl = a[12], dh = a[13], dw = a[14], group = a[15];
	const int icg = c / group, ocg = oc / group;
	for (size_t i = 0; i < (size_t)n * oh * ow; i++)
		memcpy(out + i * (size_t)oc, bias, (size_t)oc * sizeof(float));
	for (int b = 0; b < n; b++)
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

/* Max pooling that also writes the flattened NHWC input index of the first
 * maximum of each window (a NaN wins; a window in the padding only gives 0
 * and index -1) as int64. */
CB_KERNEL void cb_maxpool_argmax_f32(const int *a, const float *in, float *out, int64_t *am)
{
	/* a: n h w c oh ow kh kw sh sw pt pl */
	const int n = a[0], h = a[1], w = a[2], c = a[3], oh = a[4], ow = a[5];
	for (int b = 0; b < n; b++)
		for (int y = 0; y < oh; y++)
			for (int x = 0; x < ow; x++)
				for (int ch = 0; ch < c; ch++) {
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

/* Instance normalization: per (batch, channel), over every other
 * dimension; t dims[0..rank) with the channel at ci. */
CB_KERNEL void cb_instancenorm_f32(const float *x, float *y, const float *scale, const float *bias, const int64_t *dims,
				   int rank, int ci, float eps)
{
	int64_t str[8], total = 1;
	for (int i = rank - 1; i >= 0; i--) {
		str[i] = total;
		total *= dims[i];
	}
	const int64_t nb = dims[0], nc = dims[ci], plane = nb * nc != 0 ? total / (nb * nc) : 0;
	for (int64_t b = 0; b < nb; b++)
		for (int64_t c = 0; c < nc; c++) {
			double pass[2] = {0.0, 0.0}, mean = 0.0;
			for (int step = 0; step < 3; step++) {
				int64_t idx[8] = {0};
				for (int64_t p = 0; p < plane; p++) {
					int64_t off = b * str[0] + c * str[ci];
					for (int i = 1; i < rank; i++)
						if (i != ci)
							off += idx[i] * str[i];
					double v = x[off];
					if (step == 0)
						pass[0] += v;
					else if (step == 1)
						pass[1] += (v - mean) * (v - mean);
					else
						y[off] = (float)((v - mean) / sqrt(pass[1] / (double)plane + eps) * scale[c] + bias[c]);
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

/* gathernd with batch_dims b: data dims[0..rank), index tuples of m values
 * (int32 or int64, negative counted from the end); es bytes per element.
 * Returns -1 on an index out of range. */
CB_KERNEL int cb_gathernd(const void *data, const int64_t *dims, int rank, const void *ind, int ies, size_t tuples,
			  int m, int b, void *out, int es)
{
	int64_t str[8];
	cb_strides(dims, rank, str);
	size_t batch = 1, chunk = 1, o = 0;
	for (int i = 0; i < b; i++)
		batch *= (size_t)dims[i];
	for (int i = b + m; i < rank; i++)
		chunk *= (size_t)dims[i];
	size_t per = batch ? tuples / batch : 0;
	for (size_t t = 0; t < tuples; t++) {
		int64_t off = b ? (int64_t)(per ? t / per : 0) * str[b - 1] : 0;
		for (int j = 0; j < m; j++) {
			int64_t v = cb_index_at(ind, t * (size_t)m + (size_t)j, ies, dims[b + j]);
			if (v < 0)
				return -1;
			off += v * str[b + j];
		}
		memcpy((unsigned char *)out + o * (size_t)es, (const unsigned char *)data + (size_t)off * (size_t)es,
		       chunk * (size_t)es);
		o += chunk;
	}
	return 0;
}

/* Resize (asymmetric: output o reads input o / scale): nearest copies the
 * element at the floors (any kind, es bytes); bilinear (float) interpolates
 * between floor and floor + 1 (clamped) in every dimension whose size
 * changes. */
CB_KERNEL void cb_resize(const void *src, const int64_t *sd, void *dst, const int64_t *dd, const double *scale,
			 int rank, int bilinear, int es)
{
	int64_t sstr[8], s = 1, n = 1, idx[8] = {0};
	for (int i = rank - 1; i >= 0; i--) {
		sstr[i] = s;
		s *= sd[i];
		n *= dd[i];
	}
	int interp[8], ni = 0;
	for (int i = 0; i < rank; i++)
		if (bilinear && dd[i] != sd[i])
			interp[ni++] = i;
	for (int64_t o = 0; o < n; o++) {
		int64_t lo[8], hi[8];
		double fr[8];
		for (int i = 0; i < rank; i++) {
			double x = (double)idx[i] / scale[i];
			int64_t f = (int64_t)floor(x);
			if (f >= sd[i])
				f = sd[i] - 1;
			lo[i] = f;
			hi[i] = f + 1 < sd[i] ? f + 1 : f;
			fr[i] = x - (double)f < 0 ? 0 : x - (double)f;
		}
		if (!bilinear || ni == 0) {
			int64_t si = 0;
			for (int i = 0; i < rank; i++)
				si += lo[i] * sstr[i];
			memcpy((unsigned char *)dst + o * es, (const unsigned char *)src + si * es, (size_t)es);
		} else {
			double acc = 0.0;
			for (unsigned corner = 0; corner < 1u << ni; corner++) {
				double wgt = 1.0;
				int64_t si = 0;
				for (int i = 0, c = 0; i < rank; i++) {
					int64_t x = lo[i];
					if (c < ni && interp[c] == i) {
						int up = corner >> c & 1;
						x = up ? hi[i] : lo[i];
						wgt *= up ? fr[i] : 1 - fr[i];
						c++;
					}
					si += x * sstr[i];
				}
				if (wgt != 0)
					acc += wgt * ((const float *)src)[si];
			}
			((float *)dst)[o] = (float)acc;
		}
		for (int i = rank - 1; i >= 0; i--) {
			if (++idx[i] < dd[i])
				break;
			idx[i] = 0;
		}
	}
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

/* Cumulative sum (prod 0) or product (prod 1, CumProd) along the middle
 * of outer x len x inner, from 0 or 1, in double; ies 0: float, else
 * integers of that size (wrapping). */
CB_KERNEL void cb_cumsum(const void *x, void *y, size_t outer, size_t len, size_t inner, int excl, int rev, int ies,
			 int prod)
{
	for (size_t o = 0; o < outer; o++)
		for (size_t in = 0; in < inner; in++) {
			double af = prod;
			uint64_t ai = (uint64_t)prod;
			for (size_t jj = 0; jj < len; jj++) {
				size_t j = rev ? len - 1 - jj : jj, i = (o * len + j) * inner + in;
				double xf = ies ? 0.0 : ((const float *)x)[i], pf = prod ? af * xf : af + xf;
				uint64_t xi = ies ? (uint64_t)cb_ld_i(x, i, ies) : 0, pi = prod ? ai * xi : ai + xi;
				if (ies)
					cb_st_i(y, i, ies, (int64_t)(excl ? ai : pi));
				else
					((float *)y)[i] = (float)(excl ? af : pf);
				af = pf;
				ai = pi;
			}
		}
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

/* Reflect (mode 1) or edge (mode 2) padding of any element kind: dst dims
 * dd, source dims sd, leading pads p. */
CB_KERNEL void cb_pad_mode(const void *src, const int64_t *sd, void *dst, const int64_t *dd, const int64_t *p, int rank,
			   int mode, int es)
{
	int64_t sstr[8], s = 1, n = 1, idx[8] = {0};
	for (int i = rank - 1; i >= 0; i--) {
		sstr[i] = s;
		s *= sd[i];
		n *= dd[i];
	}
	for (int64_t o = 0; o < n; o++) {
		int64_t si = 0;
		for (int i = 0; i < rank; i++) {
			int64_t x = idx[i] - p[i], len = sd[i];
			if (x < 0 || x >= len) {
				if (mode == 1) {
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
			si += x * sstr[i];
		}
		memcpy((unsigned char *)dst + o * es, (const unsigned char *)src + si * es, (size_t)es);
		for (int i = rank - 1; i >= 0; i--) {
			if (++idx[i] < dd[i])
				break;
			idx[i] = 0;
		}
	}
}

/* Integer reductions (es 4 or 8 bytes, wrapping; op as cb_reduce_f32, the
 * mean truncates toward zero). */
CB_KERNEL void cb_reduce_i(const void *x, void *y, size_t ny, const int64_t *dims, const int64_t *ys, int rank, int op,
			   int es, int64_t cnt)
{
	int64_t idx[8] = {0};
	size_t total = 1;
	for (int i = 0; i < rank; i++)
		total *= (size_t)dims[i];
	const int64_t lo = es == 8 ? INT64_MIN : INT32_MIN, hi = es == 8 ? INT64_MAX : INT32_MAX;
	for (size_t i = 0; i < ny; i++)
		cb_st_i(y, i, es, op == 4 ? 1 : op == 2 ? lo : op == 3 ? hi : 0);
	for (size_t e = 0; e < total; e++) {
		int64_t o = 0;
		for (int i = 0; i < rank; i++)
			o += idx[i] * ys[i];
		int64_t v = cb_ld_i(x, e, es), a = cb_ld_i(y, (size_t)o, es);
		switch (op) {
		case 2: a = v > a ? v : a; break;
		case 3: a = v < a ? v : a; break;
		case 4: a = (int64_t)((uint64_t)a * (uint64_t)v); break;
		default: a = (int64_t)((uint64_t)a + (uint64_t)v); break;
		}
		cb_st_i(y, (size_t)o, es, a);
		for (int i = rank - 1; i >= 0 && ++idx[i] == dims[i]; i--)
			idx[i] = 0;
	}
	if (op == 1)
		for (size_t i = 0; i < ny; i++)
			cb_st_i(y, i, es, cnt ? cb_ld_i(y, i, es) / cnt : 0);
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
