/* schema.c - scale and offset of a quantized value per schema, KL
 * calibration of a profiled range, and the integer requantization
 * multiplier (docs/Quantization.md states each formula).
 */
#include "quant/quant.h"

#include <math.h>
#include <stdlib.h>

/* The smallest range a value is given: a value that was constant 0 still
 * gets a valid (positive) scale. */
#define QS_MIN_RANGE 1e-6

static void qs_limits(enum elem_kind k, double *qmin, double *qmax)
{
	switch (k) {
	case EK_QUI8: *qmin = 0, *qmax = 255; break;
	case EK_QI16: *qmin = -32768, *qmax = 32767; break;
	default: *qmin = -128, *qmax = 127; break;
	}
}

struct qparams quant_choose(float min, float max, enum quant_schema s, enum elem_kind prec)
{
	/* the range always holds 0, so real 0 (padding, Relu) is exact */
	double lo = min < 0 ? min : 0, hi = max > 0 ? max : 0;
	struct qparams p = {prec == EK_QI16 ? EK_QI16 : EK_QI8, 1.0f, 0};
	if ((s == QS_SYMMETRIC_UINT8 && prec == EK_QI8 && lo >= 0) || s == QS_ASYMMETRIC_UINT8) {
		p.kind = EK_QUI8;
		if (s == QS_ASYMMETRIC_UINT8)
			s = QS_ASYMMETRIC;
	}
	double qmin, qmax;
	qs_limits(p.kind, &qmin, &qmax);
	if (s == QS_ASYMMETRIC) {
		if (hi - lo < QS_MIN_RANGE)
			hi = lo + QS_MIN_RANGE;
		double scale = (hi - lo) / (qmax - qmin);
		p.scale = (float)scale;
		double off = nearbyint(qmin - lo / (double)p.scale);
		p.offset = (int32_t)(off < qmin ? qmin : off > qmax ? qmax : off);
		return p;
	}
	double m = fmax(-lo, hi);
	if (m < QS_MIN_RANGE)
		m = QS_MIN_RANGE;
	double scale = m / qmax;
	if (s == QS_SYMMETRIC_POW2)
		scale = exp2(ceil(log2(scale)));
	p.scale = (float)scale;
	p.offset = 0;
	return p;
}

struct qparams quant_choose_kind(float min, float max, enum quant_schema s, enum elem_kind prec,
				 enum elem_kind kind)
{
	struct qparams p = quant_choose(min, max, s, prec);
	if (kind == EK_FLOAT || p.kind == kind)
		return p;
	if (kind != EK_QUI8) /* qi8 or qi16 where symmetric-uint8 chose qui8 */
		return quant_choose(min, max, QS_SYMMETRIC, kind);
	/* qui8 where the range goes below 0 */
	return quant_choose(min, max, QS_ASYMMETRIC_UINT8, EK_QUI8);
}

/* KL(p || q) of two histograms of n bins (normalized here); q is 0 only
 * where p is. */
static double kl_div(const double *p, const double *q, size_t n)
{
	double sp = 0, sq = 0, kl = 0;
	for (size_t i = 0; i < n; i++)
		sp += p[i], sq += q[i];
	if (sp <= 0 || sq <= 0)
		return INFINITY;
	for (size_t i = 0; i < n; i++)
		if (p[i] > 0)
			kl += p[i] / sp * log((p[i] / sp) / (q[i] > 0 ? q[i] / sq : 1e-12));
	return kl;
}

/* The window [a, b) of bins: p takes the counts inside, the ones outside
 * added to the edge bins (clipping moves them there); q merges the window
 * into `levels` groups of bins and spreads each group's count evenly over
 * its bins where p is nonzero. The bin z holding real 0 is a group of its
 * own (0 is exactly representable: ReLU's spike of zeros is not smeared
 * over its neighbours). Returns KL(p || q). */
static double kl_window(const float *h, size_t n, size_t a, size_t b, size_t z, unsigned levels, double *p,
			double *q)
{
	size_t w = b - a, zi = z >= a && z < b ? z - a : (size_t)-1;
	for (size_t i = 0; i < w; i++)
		p[i] = h[a + i];
	for (size_t i = 0; i < a; i++)
		p[0] += h[i];
	for (size_t i = b; i < n; i++)
		p[w - 1] += h[i];
	for (unsigned g = 0; g < levels; g++) {
		size_t s = w * g / levels, e = w * (g + 1) / levels;
		double sum = 0;
		size_t nz = 0;
		for (size_t i = s; i < e; i++) {
			if (i == zi)
				continue;
			/* q counts the histogram's own values, not the clipped
			 * mass: what quantization of the window keeps */
			double v = i == 0 ? h[a] : i == w - 1 ? h[b - 1] : p[i];
			sum += v;
			nz += p[i] > 0;
		}
		for (size_t i = s; i < e; i++)
			q[i] = p[i] > 0 && nz ? sum / (double)nz : 0;
	}
	if (zi != (size_t)-1)
		q[zi] = h[z];
	return kl_div(p, q, w);
}

void quant_kl_range(const struct qp_entry *e, unsigned levels, float *lo, float *hi)
{
	*lo = e->min;
	*hi = e->max;
	size_t n = e->nbins;
	if (n < 2 * (size_t)levels || !(e->max > e->min))
		return;
	double total = 0;
	for (size_t i = 0; i < n; i++)
		total += e->hist[i];
	if (total <= 0)
		return;
	double width = ((double)e->max - e->min) / (double)n;
	/* the bin of real 0: windows shrink toward it so 0 stays inside */
	double zf = -(double)e->min / width;
	size_t z = zf <= 0 ? 0 : zf >= (double)n ? n : (size_t)zf;
	double *p = malloc(n * sizeof *p), *q = malloc(n * sizeof *q);
	if (!p || !q) {
		free(p);
		free(q);
		return;
	}
	double best = INFINITY;
	size_t ba = 0, bb = n;
	/* candidate windows: the bins within j of the zero bin on either side
	 * (a threshold t = j bins on |x|, as for a symmetric histogram),
	 * clipped to the histogram, at least `levels` bins wide */
	size_t steps = z > n - z ? z : n - z;
	for (size_t j = 1; j <= steps; j++) {
		size_t a = z > j ? z - j : 0, b = z + j < n ? z + j : n;
		if (b - a < levels)
			continue;
		double kl = kl_window(e->hist, n, a, b, z < n ? z : n - 1, levels, p, q);
		if (kl < best) {
			best = kl;
			ba = a;
			bb = b;
		}
	}
	free(p);
	free(q);
	*lo = (float)(e->min + (double)ba * width);
	*hi = (float)(e->min + (double)bb * width);
	if (*lo > 0)
		*lo = 0;
	if (*hi < 0)
		*hi = 0;
}
