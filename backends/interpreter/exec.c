/* exec.c - the kernel entry point: dispatch of one instruction kind to its
 * family, the float widening helpers the families share, and the
 * quantization profile.
 */
#include "backends/interpreter/kern.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

float *kwiden(const struct interp_arg *a)
{
	if (ekind(a->t) == EK_FLOAT)
		return a->p;
	size_t n = numel(a->t);
	float *w = xmalloc(n * sizeof(float) + 1);
	for (size_t i = 0; i < n; i++)
		w[i] = (float)ld_f(a->t, a->p, i);
	return w;
}

void kfree_wide(const struct interp_arg *a, float *w)
{
	if (w != a->p)
		free(w);
}

void knarrow(const struct interp_arg *a, const float *v)
{
	if (ekind(a->t) == EK_FLOAT) {
		if (v != a->p)
			memcpy(a->p, v, numel(a->t) * sizeof(float));
		return;
	}
	size_t n = numel(a->t);
	for (size_t i = 0; i < n; i++)
		st_f(a->t, a->p, i, v[i]);
}

float *kresult_buf(const struct interp_arg *a)
{
	if (ekind(a->t) == EK_FLOAT)
		return a->p;
	return xcalloc(numel(a->t) + 1, sizeof(float));
}

void kresult_done(const struct interp_arg *a, float *v)
{
	knarrow(a, v);
	kfree_wide(a, v);
}

int kerror(const struct kargs *k, const char *fmt, ...)
{
	if (k->err && k->errsize) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(k->err, k->errsize, fmt, ap);
		va_end(ap);
	}
	return -1;
}

/* quantizationprofile(Src, Histogram float<B>, ComputationInfo float<2>):
 * ComputationInfo holds the running (min, max) of every value seen (its
 * initial contents count as seen, so a zeroed buffer makes the range
 * include 0); Histogram counts the values in B equal bins over that range.
 * When the range grows, the old counts move to the new bin holding their
 * old bin's centre. */
static int quantization_profile(const struct kargs *k)
{
	const struct interp_arg *s = &k->op[0], *h = &k->op[1], *info = &k->op[2];
	float *hist = h->p, *mm = info->p;
	size_t n = numel(s->t), bins = numel(h->t);
	double lo = mm[0], hi = mm[1];
	for (size_t i = 0; i < n; i++) {
		double x = ld_f(s->t, s->p, i);
		if (x != x)
			continue;
		lo = x < lo ? x : lo;
		hi = x > hi ? x : hi;
	}
	double olo = mm[0], ohi = mm[1];
	if ((lo != olo || hi != ohi) && ohi > olo) {
		float *old = xmalloc(bins * sizeof(float));
		memcpy(old, hist, bins * sizeof(float));
		memset(hist, 0, bins * sizeof(float));
		double ow = (ohi - olo) / (double)bins;
		for (size_t b = 0; b < bins; b++) {
			double c = olo + ((double)b + 0.5) * ow;
			size_t nb = hi > lo ? (size_t)((c - lo) / (hi - lo) * (double)bins) : 0;
			hist[nb < bins ? nb : bins - 1] += old[b];
		}
		free(old);
	}
	for (size_t i = 0; i < n; i++) {
		double x = ld_f(s->t, s->p, i);
		if (x != x)
			continue;
		size_t b = hi > lo ? (size_t)((x - lo) / (hi - lo) * (double)bins) : 0;
		hist[b < bins ? b : bins - 1] += 1;
	}
	mm[0] = (float)lo;
	mm[1] = (float)hi;
	return 0;
}

int kern_misc(const struct kargs *k)
{
	switch (k->kind) {
	case IK_alloc: case IK_dealloc: case IK_tensorview: return 0; /* placement is compile's job */
	case IK_quantizationprofile: return quantization_profile(k);
	/* device memory (Instrs.def): in program order a copy, a wait does nothing */
	case IK_copytodevice:
	case IK_copyfromdevice: memcpy(k->op[0].p, k->op[1].p, (size_t)type_bytes(k->op[0].t)); return 0;
	case IK_devicewait: return 0;
	default: return 1;
	}
}

int interp_exec(unsigned kind, const struct interp_arg *ops, const union attr_val *attrs, char *err,
		size_t errsize)
{
	if (kind >= IK_COUNT)
		return 1;
	struct kargs k = {kind, ops, attrs, err, errsize};
	int (*const fams[])(const struct kargs *) = {kern_quant, kern_move, kern_ew, kern_conv, kern_linalg, kern_reduce,
						     kern_index, kern_misc};
	for (size_t i = 0; i < GLOW_ARRAY_SIZE(fams); i++) {
		int rc = fams[i](&k);
		if (rc != 1)
			return rc;
	}
	return 1;
}

/* Every kind of Instrs.def but the backend-specific ones has a kernel for
 * every combination of element kinds its type rule admits; the type rules
 * have already excluded the rest, so support is by kind. */
bool interp_supports(unsigned kind, const struct type *const *types, unsigned ntypes)
{
	(void)types;
	(void)ntypes;
	/* a backend-specific kind (a BACKEND.Kind node's instruction) runs on
	 * its backend only */
	return kind < IK_COUNT && kind != IK_opencl_convbiasrelu;
}
