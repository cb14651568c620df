/* quant.h - profile-guided quantization's support: the profile file
 * (profile.c), the choice of scale and offset per schema and the KL
 * calibration over a histogram (schema.c). docs/Quantization.md states the
 * file format and the arithmetic.
 *
 * Library code: reports through struct diag, never exits.
 */
#ifndef GLOW_QUANT_QUANT_H
#define GLOW_QUANT_QUANT_H

#include "support/diag.h"
#include "support/types.h"

#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ---- the profile (profile.c) ---- */

/* The bins of the histogram the profile pass gives every value. */
#define QP_DEFAULT_BINS 2048
/* The most bins a profile entry may have (the reader's bound). */
#define QP_MAX_BINS 65536

/* One profiled value: result `output` of the node called `name` (a
 * placeholder: output 0), the range of every element seen and a histogram
 * of nbins equal bins over [min, max]. */
struct qp_entry {
	char *name;
	int64_t output;
	float min, max;
	size_t nbins;
	float *hist;
	struct loc loc; /* where the entry was read (LOC_NONE: made here) */
	bool used;      /* scratch for the consumers' mismatch checks */
};

struct qprofile {
	struct qp_entry *v;
	size_t n, cap;
	char *buf; /* the text read (the diagnostics' source): kept until free */
};

void qprofile_init(struct qprofile *p);
void qprofile_free(struct qprofile *p);
/* Parses profile text buf (len bytes) named `name` for diagnostics into p
 * (initialized here); 0, or -1 after reporting at file:line:col (nothing
 * kept in p). */
int qprofile_parse(struct qprofile *p, const char *buf, size_t len, const char *name, struct diag *d);
/* Reads and parses the file at path; 0 or -1 after reporting. */
int qprofile_read(struct qprofile *p, const char *path, struct diag *d);
struct ostream;
/* Prints p in the file format. */
void qprofile_print(struct ostream *o, const struct qprofile *p);
/* Writes p to path whole or not at all; 0 or -1 after reporting. */
int qprofile_write(const struct qprofile *p, const char *path, struct diag *d);
/* The entry of (name, output), or NULL. */
struct qp_entry *qprofile_find(const struct qprofile *p, const char *name, int64_t output);
/* Appends an entry (name copied, hist copied) and returns it. */
struct qp_entry *qprofile_add(struct qprofile *p, const char *name, int64_t output, float min, float max,
			      const float *hist, size_t nbins);

/* ---- scale and offset (schema.c) ---- */

/* the first four in -quant-schema order; QS_ASYMMETRIC_UINT8 is the
 * asymmetric schema on qui8 (quant_choose_kind's fallback) */
enum quant_schema { QS_ASYMMETRIC, QS_SYMMETRIC, QS_SYMMETRIC_UINT8, QS_SYMMETRIC_POW2, QS_ASYMMETRIC_UINT8 };
enum quant_calib { QC_NONE, QC_KL };

/* Scale and offset of one quantized value: real = scale * (q - offset). */
struct qparams {
	enum elem_kind kind; /* EK_QI8, EK_QUI8, EK_QI16 */
	float scale;
	int32_t offset;
};

/* The parameters of a value whose real range is [min, max] with the
 * precision `prec` (EK_QI8 or EK_QI16) under schema s. */
struct qparams quant_choose(float min, float max, enum quant_schema s, enum elem_kind prec);
/* quant_choose with the element kind forced to `kind` (EK_FLOAT: not
 * forced): a signed kind under symmetric-uint8 is symmetric; qui8 under a
 * symmetric schema has offset 0 when min >= 0, else it is asymmetric. */
struct qparams quant_choose_kind(float min, float max, enum quant_schema s, enum elem_kind prec,
				 enum elem_kind kind);
/* The range KL calibration keeps of entry e for `levels` quantization
 * levels: the window of bins whose quantized distribution is closest (in
 * Kullback-Leibler divergence) to the histogram; [e->min, e->max] when the
 * histogram is empty or too coarse. */
void quant_kl_range(const struct qp_entry *e, unsigned levels, float *lo, float *hi);

/* Requantization multiplier: ratio ~= mult * 2^-shift with mult in
 * [2^30, 2^31) (rounded to nearest) and shift in [0, 62]; a ratio below
 * 2^-32 gives mult 0 (every product rounds to 0). Inline: the
 * interpreter's kernels use it without linking this library. */
static inline void quant_multiplier(double ratio, int32_t *mult, int *shift)
{
	int e;
	double f = frexp(ratio, &e); /* ratio = f * 2^e, f in [0.5, 1) */
	int64_t m = (int64_t)nearbyint(f * 2147483648.0);
	if (m == 2147483648LL) { /* f rounded up to 1 */
		m /= 2;
		e++;
	}
	int sh = 31 - e;
	if (!(ratio > 0) || sh > 62 || m == 0) {
		*mult = 0;
		*shift = 0;
		return;
	}
	if (sh < 0) { /* ratio >= 2^31: saturate (no schema's scales give it) */
		m = 2147483647;
		sh = 0;
	}
	*mult = (int32_t)m;
	*shift = sh;
}
/* x / 2^s rounded half away from zero (s >= 1) */
static inline int64_t quant_rshift(int64_t x, int s)
{
	int64_t half = (int64_t)1 << (s - 1);
	return x >= 0 ? (x + half) >> s : -((-x + half) >> s);
}

/* (x * mult) >> shift, rounding half away from zero (docs/Quantization.md).
 * An x outside int32 (16-bit operands accumulate past 32 bits) is first
 * divided by the least 2^k that brings it inside, rounding half away from
 * zero, and the shift lowered by k (where the shift is smaller than k the
 * product is scaled up instead, saturating to +-2^62), so x * mult always
 * fits in 63 bits. */
static inline int64_t quant_requant(int64_t x, int32_t mult, int shift)
{
	if (mult == 0)
		return 0;
	int k = 0;
	while (k < 40 && (x >> k > INT32_MAX || x >> k < INT32_MIN))
		k++;
	if (k) {
		x = quant_rshift(x, k);
		if (x > INT32_MAX) /* rounding reached 2^31 */
			x = INT32_MAX;
		if (shift < k) {
			double v = (double)x * mult * (double)((int64_t)1 << (k - shift));
			return v >= 4.6e18 ? ((int64_t)1 << 62) : v <= -4.6e18 ? -((int64_t)1 << 62) : (int64_t)v;
		}
		shift -= k;
	}
	int64_t p = x * (int64_t)mult;
	return shift ? quant_rshift(p, shift) : p;
}

#endif
