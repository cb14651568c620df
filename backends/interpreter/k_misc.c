/* k_misc.c - the kernels of no family: the kinds that do nothing when
 * they run, and the quantization profile.
 */
#include "backends/interpreter/kern.h"

#include <stdlib.h>

/* alloc, dealloc, tensorview (placement is compile's job), touch (its
 * contents are undefined), devicewait (in program order a copy is done
 * when it returns) */
int kern_nothing(const struct kargs *k)
{
	(void)k;
	return 0;
}

/* the bin of x among bins equal bins over [lo, hi] (the last one takes hi;
 * an empty range puts everything in the first) */
static size_t prof_bin(double x, double lo, double hi, size_t bins)
{
	size_t b = hi > lo ? (size_t)((x - lo) / (hi - lo) * (double)bins) : 0;
	return b < bins ? b : bins - 1;
}

/* quantizationprofile(Src, Histogram float<B>, ComputationInfo float<2>):
 * ComputationInfo holds the running (min, max) of every value seen (its
 * initial contents count as seen, so a zeroed buffer makes the range
 * include 0); Histogram counts the values in B equal bins over that range.
 * When the range grows, the old counts move to the new bin holding their
 * old bin's centre. */
int kern_quantizationprofile(const struct kargs *k)
{
	const struct interp_arg *s = &k->op[0], *h = &k->op[1], *info = &k->op[2];
	float *hist = h->p, *mm = info->p;
	size_t n = numel(s->t), bins = numel(h->t);
	double lo = mm[0], hi = mm[1];
	for (size_t i = 0; i < n; i++) {
		double x = ld_f(s->t, s->p, i);
		lo = x < lo ? x : lo; /* NaN compares false: it is not seen */
		hi = x > hi ? x : hi;
	}
	double olo = mm[0], ohi = mm[1];
	if ((lo != olo || hi != ohi) && ohi > olo) {
		float *old = xmalloc(bins * sizeof(float));
		memcpy(old, hist, bins * sizeof(float));
		memset(hist, 0, bins * sizeof(float));
		double ow = (ohi - olo) / (double)bins;
		for (size_t b = 0; b < bins; b++)
			hist[prof_bin(olo + ((double)b + 0.5) * ow, lo, hi, bins)] += old[b];
		free(old);
	}
	for (size_t i = 0; i < n; i++) {
		double x = ld_f(s->t, s->p, i);
		if (x != x)
			continue;
		hist[prof_bin(x, lo, hi, bins)] += 1;
	}
	mm[0] = (float)lo;
	mm[1] = (float)hi;
	return 0;
}
