/* k_quant.c - the quantized kernels: the reference integer arithmetic of
 * docs/Quantization.md, bit for bit.
 *
 * A quantized operand of type (scale s, offset o) holding q stands for
 * s * (q - o). Every kernel works on the centred integers q - o:
 *   - linear kinds (convolution, grouped and depthwise included,
 *     fullyconnected, matmul, batchmatmul, and the per-channel
 *     channelwisequantizedconvolution / ...fullyconnected, whose filter
 *     scale and offset are per output channel) accumulate the products
 *     exactly,
 *     add the bias (a bias of scale sx*sw rounded to float adds as it is;
 *     other bias scales are requantized into that scale; a float bias is
 *     rounded half to even into it), then requantize the accumulator by
 *     the multiplier of sx*sw/sd (an accumulator past 32 bits, as 16-bit
 *     operands make, is first brought into 32 bits: quant_requant);
 *   - mul requantizes the exact product by sa*sb/sd;
 *   - add, sub, max, min, relu and clip first bring each operand to the
 *     result's scale with QK_FRAC extra fraction bits (requantization by
 *     the multiplier of s/sd * 2^QK_FRAC), combine them there (clip's
 *     bounds rounded half to even into the same units), then drop the
 *     fraction bits rounding half away from zero;
 *   - avgpool and adaptiveavgpool requantize the window's sum by
 *     sx/(sd * count);
 *   - sigmoid and tanh look the result up in a table made per call: the
 *     function of each input's real value in double, quantized with round
 *     half to even (8-bit inputs: 256 entries; 16-bit ones: computed per
 *     element by the same formula).
 * Results are the output's offset plus the rounded value, saturated to the
 * output kind's range. Requantization is quant_requant (lib/quant/quant.h):
 * (x * mult) >> shift rounding half away from zero.
 *
 * They are Kernels.def's QKERNEL rows (and the channelwisequantized*
 * kinds' kernels): exec.c runs one instead of the kind's kernel when the
 * destination and the operands are quantized (a linear kind's bias may be
 * float, the row's float_ok). Data movement (concat, reshape,
 * transpose, slice, pad, gather), maxpool and argmax need no arithmetic:
 * they copy or compare stored integers in k_move.c, k_conv.c and
 * k_reduce.c.
 */
#include "backends/interpreter/kern.h"
#include "quant/quant.h"

#include <stdlib.h>

/* fraction bits of the common scale of add, sub, max, min, relu, clip */
#define QK_FRAC 16

static bool qk_q(const struct type *t) { return elem_is_quantized(ekind(t)); }

static void qk_limits(const struct type *t, int64_t *lo, int64_t *hi)
{
	switch (ekind(t)) {
	case EK_QUI8: *lo = 0, *hi = 255; break;
	case EK_QI16: *lo = -32768, *hi = 32767; break;
	case EK_QI32: *lo = INT32_MIN, *hi = INT32_MAX; break;
	default: *lo = -128, *hi = 127; break;
	}
}

/* Stores offset + v saturated to d's range as element i. */
static inline void qk_store(const struct interp_arg *d, size_t i, int64_t v, int64_t lo, int64_t hi)
{
	v += d->t->offset;
	st_i(d->t, d->p, i, v < lo ? lo : v > hi ? hi : v);
}

/* The centred integers q - o of a (malloc'd). */
static int32_t *qk_centred(const struct interp_arg *a)
{
	size_t n = numel(a->t);
	int32_t *v = xmalloc(n * sizeof *v + 1);
	for (size_t i = 0; i < n; i++)
		v[i] = (int32_t)(ld_i(a->t, a->p, i) - a->t->offset);
	return v;
}

/* x / 2^s rounded half away from zero */
static inline int64_t qk_rshift(int64_t x, int s)
{
	int64_t half = (int64_t)1 << (s - 1);
	return x >= 0 ? (x + half) >> s : -((-x + half) >> s);
}

struct qk_req {
	int32_t mult;
	int shift;
};

static struct qk_req qk_req_of(double ratio)
{
	struct qk_req r;
	quant_multiplier(ratio, &r.mult, &r.shift);
	return r;
}

/* The filter (weights) parameters of a linear kind per output channel:
 * the filter type's own, or per-channel lists (the kinds
 * channelwisequantized*: their scale and offset attributes). */
struct qk_filter {
	const struct type *t;
	const double *scales; /* NULL: t's scale and offset for every channel */
	const int64_t *offsets;
};

/* Fills scale[n] and offset[n] from f. */
static void qk_filter_params(const struct qk_filter *f, size_t n, double *scale, int32_t *offset)
{
	for (size_t i = 0; i < n; i++) {
		/* per-channel scales are float values, as a type's are */
		scale[i] = f->scales ? (double)(float)f->scales[i] : (double)f->t->scale;
		offset[i] = f->scales ? (int32_t)f->offsets[i] : f->t->offset;
	}
}

/* Bias element i in accumulator units of scale acc_scale. */
static int64_t qk_bias1(const struct interp_arg *b, size_t i, double acc_scale)
{
	if (!qk_q(b->t))
		return (int64_t)nearbyint(ld_f(b->t, b->p, i) / acc_scale);
	int64_t c = ld_i(b->t, b->p, i) - b->t->offset;
	/* the quantize pass gives the bias scale sx*sw rounded to float */
	if (b->t->scale == (float)acc_scale)
		return c;
	struct qk_req r = qk_req_of((double)b->t->scale / acc_scale);
	return quant_requant(c, r.mult, r.shift);
}

/* convolution (grouped, dilated) of the centred integers, with the
 * filter's per-channel lists (NULL: the filter type's parameters) */
static int qk_convolution(const struct kargs *k, const double *scales, const int64_t *offsets)
{
	const struct interp_arg *d = &k->op[0], *s = &k->op[1], *f = &k->op[2], *b = &k->op[3];
	const struct type *in = s->t, *out = d->t;
	size_t N = (size_t)in->dims[0], H = (size_t)in->dims[1], W = (size_t)in->dims[2], C = (size_t)in->dims[3];
	size_t OH = (size_t)out->dims[1], OW = (size_t)out->dims[2], OC = (size_t)out->dims[3];
	const int64_t *ks = KINTS(k, AN_kernels), *st = KINTS(k, AN_strides), *p = KINTS(k, AN_pads),
		      *dl = KINTS(k, AN_dilation);
	size_t KH = (size_t)ks[0], KW = (size_t)ks[1], group = (size_t)KI(k, AN_group);
	size_t icg = C / group, ocg = OC / group, kk = KH * KW * icg;
	double *wsc = xmalloc(OC * sizeof *wsc + 1);
	int32_t *woff = xmalloc(OC * sizeof *woff + 1), *x = qk_centred(s), *w = xmalloc(OC * kk * sizeof *w + 1);
	int64_t *bias = xmalloc(OC * sizeof *bias + 1);
	struct qk_req *r = xmalloc(OC * sizeof *r + 1);
	const struct qk_filter fp = {f->t, scales, offsets};
	qk_filter_params(&fp, OC, wsc, woff);
	for (size_t oc = 0; oc < OC; oc++) {
		double acc_scale = (double)in->scale * wsc[oc];
		for (size_t j = 0; j < kk; j++)
			w[oc * kk + j] = (int32_t)(ld_i(f->t, f->p, oc * kk + j) - woff[oc]);
		bias[oc] = qk_bias1(b, oc, acc_scale);
		r[oc] = qk_req_of(acc_scale / out->scale);
	}
	int64_t lo, hi;
	qk_limits(out, &lo, &hi);
	size_t oi = 0;
	for (size_t n = 0; n < N; n++)
		for (size_t oy = 0; oy < OH; oy++)
			for (size_t ox = 0; ox < OW; ox++)
				for (size_t oc = 0; oc < OC; oc++, oi++) {
					size_t g = oc / ocg;
					int64_t acc = 0;
					for (size_t ky = 0; ky < KH; ky++) {
						int64_t iy = (int64_t)(oy * (size_t)st[0] + ky * (size_t)dl[0]) - p[0];
						if (iy < 0 || iy >= (int64_t)H)
							continue;
						for (size_t kx = 0; kx < KW; kx++) {
							int64_t ix = (int64_t)(ox * (size_t)st[1] + kx * (size_t)dl[1]) - p[1];
							if (ix < 0 || ix >= (int64_t)W)
								continue;
							const int32_t *xp =
								x + ((n * H + (size_t)iy) * W + (size_t)ix) * C + g * icg;
							const int32_t *wp = w + ((oc * KH + ky) * KW + kx) * icg;
							for (size_t c = 0; c < icg; c++)
								acc += (int64_t)xp[c] * wp[c];
						}
					}
					qk_store(d, oi, quant_requant(acc + bias[oc], r[oc].mult, r[oc].shift), lo, hi);
				}
	free(x);
	free(w);
	free(wsc);
	free(woff);
	free(bias);
	free(r);
	return 0;
}

/* Dest[b] (M x N) = LHS[b] (M x K) * RHS[b] (K x N) (+ bias[N]) over nb
 * batches; bstride_r 0 shares one RHS. The RHS parameters fp may be per
 * column (channelwisequantizedfullyconnected). */
static int qk_gemm(const struct interp_arg *d, const struct interp_arg *a, const struct interp_arg *bm,
		   const struct qk_filter *fp, const struct interp_arg *bias, size_t nb, size_t M, size_t K, size_t N,
		   size_t bstride_r)
{
	double *wsc = xmalloc(N * sizeof *wsc + 1);
	int32_t *woff = xmalloc(N * sizeof *woff + 1);
	qk_filter_params(fp, N, wsc, woff);
	int32_t *x = qk_centred(a), *w = xmalloc(numel(bm->t) * sizeof *w + 1);
	for (size_t i = 0; i < numel(bm->t); i++)
		w[i] = (int32_t)(ld_i(bm->t, bm->p, i) - woff[i % N]);
	int64_t *bv = xmalloc(N * sizeof *bv + 1);
	struct qk_req *r = xmalloc(N * sizeof *r + 1);
	for (size_t j = 0; j < N; j++) {
		double acc_scale = (double)a->t->scale * wsc[j];
		bv[j] = bias ? qk_bias1(bias, j, acc_scale) : 0;
		r[j] = qk_req_of(acc_scale / d->t->scale);
	}
	int64_t lo, hi;
	qk_limits(d->t, &lo, &hi);
	int64_t *row = xmalloc(N * sizeof *row + 1);
	for (size_t bi = 0; bi < nb; bi++)
		for (size_t i = 0; i < M; i++) {
			memcpy(row, bv, N * sizeof *row);
			const int32_t *xr = x + (bi * M + i) * K, *wb = w + bi * bstride_r;
			for (size_t kk = 0; kk < K; kk++) {
				int64_t xv = xr[kk];
				const int32_t *wr = wb + kk * N;
				for (size_t j = 0; j < N; j++)
					row[j] += xv * wr[j];
			}
			for (size_t j = 0; j < N; j++)
				qk_store(d, (bi * M + i) * N + j, quant_requant(row[j], r[j].mult, r[j].shift), lo, hi);
		}
	free(row);
	free(x);
	free(w);
	free(bv);
	free(r);
	free(wsc);
	free(woff);
	return 0;
}

/* the operand brought to the result's scale with QK_FRAC fraction bits */
static inline int64_t qk_fine(const struct interp_arg *a, size_t i, struct qk_req r)
{
	return quant_requant(ld_i(a->t, a->p, i) - a->t->offset, r.mult, r.shift);
}

static struct qk_req qk_fine_req(const struct type *t, const struct type *out)
{
	return qk_req_of((double)t->scale / out->scale * (double)(1 << QK_FRAC));
}

/* mul(Dest, LHS, RHS): the exact product requantized by sa*sb/sd */
int kern_q_mul(const struct kargs *k)
{
	const struct interp_arg *d = &k->op[0], *a = &k->op[1], *b = &k->op[2];
	size_t n = numel(d->t);
	int64_t lo, hi;
	qk_limits(d->t, &lo, &hi);
	struct qk_req r = qk_req_of((double)a->t->scale * b->t->scale / d->t->scale);
	for (size_t i = 0; i < n; i++) {
		int64_t p = (ld_i(a->t, a->p, i) - a->t->offset) * (ld_i(b->t, b->p, i) - b->t->offset);
		qk_store(d, i, quant_requant(p, r.mult, r.shift), lo, hi);
	}
	return 0;
}

/* (Dest, LHS, RHS): both operands brought to the result's scale with
 * QK_FRAC fraction bits, joined there by join; inlined into each kind */
static inline int qk_fine_binary(const struct kargs *k, int64_t (*join)(int64_t x, int64_t y))
{
	const struct interp_arg *d = &k->op[0], *a = &k->op[1], *b = &k->op[2];
	size_t n = numel(d->t);
	int64_t lo, hi;
	qk_limits(d->t, &lo, &hi);
	struct qk_req ra = qk_fine_req(a->t, d->t), rb = qk_fine_req(b->t, d->t);
	for (size_t i = 0; i < n; i++)
		qk_store(d, i, qk_rshift(join(qk_fine(a, i, ra), qk_fine(b, i, rb)), QK_FRAC), lo, hi);
	return 0;
}

/* the joins of add, sub, max, min in the fine units */
static inline int64_t qk_add_j(int64_t x, int64_t y) { return x + y; }
static inline int64_t qk_sub_j(int64_t x, int64_t y) { return x - y; }
static inline int64_t qk_max_j(int64_t x, int64_t y) { return x > y ? x : y; }
static inline int64_t qk_min_j(int64_t x, int64_t y) { return x < y ? x : y; }

/* add, sub, max, min(Dest, LHS, RHS) */
int kern_q_add(const struct kargs *k) { return qk_fine_binary(k, qk_add_j); }
int kern_q_sub(const struct kargs *k) { return qk_fine_binary(k, qk_sub_j); }
int kern_q_max(const struct kargs *k) { return qk_fine_binary(k, qk_max_j); }
int kern_q_min(const struct kargs *k) { return qk_fine_binary(k, qk_min_j); }

/* (Dest, Src): Src at the result's scale with QK_FRAC fraction bits,
 * clamped to [cl, ch] there */
static int qk_clamp(const struct kargs *k, int64_t cl, int64_t ch)
{
	const struct interp_arg *d = &k->op[0], *s = &k->op[1];
	size_t n = numel(d->t);
	int64_t lo, hi;
	qk_limits(d->t, &lo, &hi);
	struct qk_req r = qk_fine_req(s->t, d->t);
	for (size_t i = 0; i < n; i++) {
		int64_t v = qk_fine(s, i, r);
		v = v < cl ? cl : v > ch ? ch : v;
		qk_store(d, i, qk_rshift(v, QK_FRAC), lo, hi);
	}
	return 0;
}

/* relu(Dest, Src) */
int kern_q_relu(const struct kargs *k) { return qk_clamp(k, 0, INT64_MAX); }

/* clip(Dest, Src) {min, max}: the bounds rounded half to even into the
 * fine units */
int kern_q_clip(const struct kargs *k)
{
	double one = (double)(1 << QK_FRAC) / k->op[0].t->scale;
	double l = nearbyint(KF(k, AN_min) * one), h = nearbyint(KF(k, AN_max) * one);
	return qk_clamp(k, l < -9.0e18 ? INT64_MIN : (int64_t)l, h > 9.0e18 ? INT64_MAX : (int64_t)h);
}

/* the function fn of q's real value, quantized */
static int64_t qk_lut_entry(double (*fn)(double), const struct type *in, const struct type *out, int64_t q,
			    int64_t lo, int64_t hi)
{
	double x = (double)in->scale * (double)(q - in->offset);
	double v = nearbyint(fn(x) / out->scale) + out->offset;
	return v < (double)lo ? lo : v > (double)hi ? hi : (int64_t)v;
}

/* (Dest, Src): fn of every real value, through a table for 8-bit inputs */
static int qk_lut(const struct kargs *k, double (*fn)(double))
{
	const struct interp_arg *d = &k->op[0], *s = &k->op[1];
	size_t n = numel(d->t);
	int64_t lo, hi;
	qk_limits(d->t, &lo, &hi);
	if (esize(s->t) == 1) {
		int64_t tab[256];
		int64_t base = ekind(s->t) == EK_QUI8 ? 0 : -128;
		for (int64_t q = 0; q < 256; q++)
			tab[q] = qk_lut_entry(fn, s->t, d->t, base + q, lo, hi);
		for (size_t i = 0; i < n; i++)
			st_i(d->t, d->p, i, tab[ld_i(s->t, s->p, i) - base]);
	} else
		for (size_t i = 0; i < n; i++)
			st_i(d->t, d->p, i, qk_lut_entry(fn, s->t, d->t, ld_i(s->t, s->p, i), lo, hi));
	return 0;
}

static double qk_sigmoid(double x) { return 1.0 / (1.0 + exp(-x)); }

/* sigmoid(Dest, Src) */
int kern_q_sigmoid(const struct kargs *k) { return qk_lut(k, qk_sigmoid); }

/* tanh(Dest, Src) */
int kern_q_tanh(const struct kargs *k) { return qk_lut(k, tanh); }

/* Requantizes a window sum of cnt centred elements. */
static inline int64_t qk_avg(int64_t sum, size_t cnt, double ratio)
{
	if (!cnt)
		return 0;
	struct qk_req r = qk_req_of(ratio / (double)cnt);
	return quant_requant(sum, r.mult, r.shift);
}

/* avgpool, or (adaptive) adaptiveavgpool */
static int qk_avgpool(const struct kargs *k, bool adaptive)
{
	const struct interp_arg *d = &k->op[0], *s = &k->op[1];
	const struct type *in = s->t, *out = d->t;
	size_t N = (size_t)in->dims[0], H = (size_t)in->dims[1], W = (size_t)in->dims[2], C = (size_t)in->dims[3];
	size_t OH = (size_t)out->dims[1], OW = (size_t)out->dims[2];
	size_t KH = 0, KW = 0, SH = 1, SW = 1;
	int64_t PT = 0, PL = 0;
	bool incl = false;
	if (!adaptive) {
		const int64_t *ks = KINTS(k, AN_kernels), *st = KINTS(k, AN_strides), *p = KINTS(k, AN_pads);
		KH = (size_t)ks[0], KW = (size_t)ks[1], SH = (size_t)st[0], SW = (size_t)st[1];
		PT = p[0], PL = p[1];
		incl = KI(k, AN_count_include_pads);
	}
	double ratio = (double)in->scale / out->scale;
	int64_t lo, hi;
	qk_limits(out, &lo, &hi);
	int32_t *x = qk_centred(s);
	size_t oi = 0;
	for (size_t n = 0; n < N; n++)
		for (size_t oy = 0; oy < OH; oy++)
			for (size_t ox = 0; ox < OW; ox++) {
				int64_t y0, y1, x0, x1;
				if (adaptive) {
					y0 = (int64_t)(oy * H / OH), y1 = (int64_t)(((oy + 1) * H + OH - 1) / OH);
					x0 = (int64_t)(ox * W / OW), x1 = (int64_t)(((ox + 1) * W + OW - 1) / OW);
				} else {
					y0 = (int64_t)(oy * SH) - PT, y1 = y0 + (int64_t)KH;
					x0 = (int64_t)(ox * SW) - PL, x1 = x0 + (int64_t)KW;
				}
				for (size_t c = 0; c < C; c++, oi++) {
					int64_t sum = 0;
					size_t cnt = 0;
					for (int64_t iy = y0; iy < y1; iy++) {
						if (iy < 0 || iy >= (int64_t)H)
							continue;
						for (int64_t ix = x0; ix < x1; ix++) {
							if (ix < 0 || ix >= (int64_t)W)
								continue;
							sum += x[((n * H + (size_t)iy) * W + (size_t)ix) * C + c];
							cnt++;
						}
					}
					size_t div = incl ? KH * KW : cnt;
					qk_store(d, oi, qk_avg(sum, div, ratio), lo, hi);
				}
			}
	free(x);
	return 0;
}

/* avgpool(Dest, Src) {kernels, strides, pads, count_include_pads} */
int kern_q_avgpool(const struct kargs *k) { return qk_avgpool(k, false); }

/* adaptiveavgpool(Dest, Src) */
int kern_q_adaptiveavgpool(const struct kargs *k) { return qk_avgpool(k, true); }

/* fullyconnected(Dest N x M, Src N x K, Weights K x M, Bias M) with the
 * weights' per-column lists (NULL: the weights type's parameters) */
static int qk_fullyconnected(const struct kargs *k, const double *scales, const int64_t *offsets)
{
	const struct type *a = k->op[1].t, *w = k->op[2].t;
	const struct qk_filter fp = {w, scales, offsets};
	return qk_gemm(&k->op[0], &k->op[1], &k->op[2], &fp, &k->op[3], 1, (size_t)a->dims[0], (size_t)a->dims[1],
		       (size_t)w->dims[1], 0);
}

/* convolution(Dest, Src, Filter, Bias) {kernels, strides, pads, group,
 * dilation}; channelwisequantizedconvolution with {..., filter_scales,
 * filter_offsets}; fullyconnected(Dest, Src, Weights, Bias);
 * channelwisequantizedfullyconnected with {weight_scales, weight_offsets} */
int kern_q_convolution(const struct kargs *k) { return qk_convolution(k, NULL, NULL); }
int kern_q_cwconvolution(const struct kargs *k)
{
	return qk_convolution(k, KFLOATS(k, AN_filter_scales), KINTS(k, AN_filter_offsets));
}
int kern_q_fullyconnected(const struct kargs *k) { return qk_fullyconnected(k, NULL, NULL); }
int kern_q_cwfullyconnected(const struct kargs *k)
{
	return qk_fullyconnected(k, KFLOATS(k, AN_weight_scales), KINTS(k, AN_weight_offsets));
}

/* matmul(Dest N x M, LHS N x K, RHS K x M) */
int kern_q_matmul(const struct kargs *k)
{
	const struct type *a = k->op[1].t, *b = k->op[2].t;
	const struct qk_filter fp = {b, NULL, NULL};
	return qk_gemm(&k->op[0], &k->op[1], &k->op[2], &fp, NULL, 1, (size_t)a->dims[0], (size_t)a->dims[1],
		       (size_t)b->dims[1], 0);
}

/* batchmatmul(Dest B x N x M, LHS B x N x K, RHS B x K x M) */
int kern_q_batchmatmul(const struct kargs *k)
{
	const struct type *a = k->op[1].t, *b = k->op[2].t;
	const struct qk_filter fp = {b, NULL, NULL};
	return qk_gemm(&k->op[0], &k->op[1], &k->op[2], &fp, NULL, (size_t)a->dims[0], (size_t)a->dims[1],
		       (size_t)a->dims[2], (size_t)b->dims[2], (size_t)(b->dims[1] * b->dims[2]));
}
