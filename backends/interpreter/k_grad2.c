/* k_grad2.c - interpreter kernels of the gradient kinds of the binary
 * elementwise and the shape kinds (Kernels.def, the "issue 13 part B"
 * block; the single-result activation gradients are EW.def rows). Each
 * computes in double and stores once, as the other kernels do; the sums
 * (GatherGrad, PadGrad, BatchedAddGrad) accumulate in double per result
 * element.
 */
#include "backends/interpreter/kern.h"
#include "graph/pad_index.h"
#include "graph/reduce_axes.h"

#include <inttypes.h>
#include <stdlib.h>

/* ---- two-result elementwise gradients (lib/ir/EWGrad.def) ---- */

/* The adjoints (dA, dB) of one element from A, B, Y and G. */
typedef void ew_grad2_fn(double A, double B, double Y, double G, double *dA, double *dB);

#define EW_GRAD2(kind, ia, ib, iy, da, db)                                                                    \
	static void ewg2_##kind(double A, double B, double Y, double G, double *dA, double *dB)               \
	{                                                                                                      \
		(void)A, (void)B, (void)Y;                                                                     \
		*dA = da;                                                                                      \
		*dB = db;                                                                                      \
	}
#include "ir/EWGrad.def"

/* A row of EWGrad.def: its scalar function and operand indices. */
struct ew_grad2_row {
	ew_grad2_fn *fn;
	int ia, ib, iy;
};

static const struct ew_grad2_row ew_grad2_rows[IK_COUNT] = {
#define EW_GRAD2(kind, ia_, ib_, iy_, da, db) [IK_##kind] = {ewg2_##kind, ia_, ib_, iy_},
#include "ir/EWGrad.def"
};

/* Element i of operand j, 0 when the kind does not take it (j < 0). */
static double ld_opt(const struct kargs *k, int j, size_t i)
{
	return j < 0 ? 0 : ld_f(k->op[j].t, k->op[j].p, i);
}

/* addgrad, subgrad, mulgrad, divgrad, maxgrad, mingrad: both adjoints of
 * every element by the kind's EWGrad.def row. */
int kern_ew_grad2(const struct kargs *k)
{
	const struct ew_grad2_row *r = &ew_grad2_rows[k->kind];
	const struct interp_arg *da = &k->op[0], *db = &k->op[1];
	unsigned ig = instr_desc(k->kind)->nops - 1;
	const struct interp_arg *g = &k->op[ig];
	size_t n = numel(g->t);
	for (size_t i = 0; i < n; i++) {
		double a, b;
		r->fn(ld_opt(k, r->ia, i), ld_opt(k, r->ib, i), ld_opt(k, r->iy, i), ld_f(g->t, g->p, i), &a, &b);
		st_f(da->t, da->p, i, a);
		st_f(db->t, db->p, i, b);
	}
	return 0;
}

/* ---- data movement back ---- */

/* Advances the row-major multi-index idx over dims (rank r). */
static void next_index(size_t *idx, const uint64_t *dims, unsigned r)
{
	for (unsigned i = r; i-- > 0;) {
		if (++idx[i] < dims[i])
			return;
		idx[i] = 0;
	}
}

/* Copies every element of src (multi-index y) to dst at the flat offset
 * base + sum y[i] * dst_step[i]: the strided copy the movement kinds
 * share. */
static void scatter_copy(const struct interp_arg *dst, size_t base, const size_t *dst_step,
			 const struct interp_arg *src)
{
	const struct type *st = src->t;
	size_t n = numel(st), es = esize(st), idx[GLOW_MAX_RANK] = {0};
	for (size_t o = 0; o < n; o++) {
		size_t di = base;
		for (unsigned i = 0; i < st->rank; i++)
			di += idx[i] * dst_step[i];
		cp_elem(dst->p, di, src->p, o, es);
		next_index(idx, st->dims, st->rank);
	}
}

/* reshapegrad(Dest, OutputGrad): the same elements. */
int kern_reshapegrad(const struct kargs *k)
{
	memcpy(k->op[0].p, k->op[1].p, numel(k->op[0].t) * esize(k->op[0].t));
	return 0;
}

/* transposegrad(Dest, OutputGrad) {shuffle}: OutputGrad's axis i is
 * Dest's axis shuffle[i]. */
int kern_transposegrad(const struct kargs *k)
{
	const int64_t *s = KINTS(k, AN_shuffle);
	size_t ds[GLOW_MAX_RANK], step[GLOW_MAX_RANK];
	strides_of(k->op[0].t, ds);
	for (unsigned i = 0; i < k->op[1].t->rank; i++)
		step[i] = ds[s[i]];
	scatter_copy(&k->op[0], 0, step, &k->op[1]);
	return 0;
}

/* concatgrad(Dest, OutputGrad) {dim, offset}: Dest is OutputGrad's slab
 * [offset, offset + Dest's size) along dim. */
int kern_concatgrad(const struct kargs *k)
{
	const struct interp_arg *d = &k->op[0], *g = &k->op[1];
	unsigned dim = (unsigned)KI(k, AN_dim);
	size_t outer, len, inner, es = esize(d->t);
	ksplit_axis(d->t, dim, &outer, &len, &inner);
	size_t drow = len * inner, grow = (size_t)g->t->dims[dim] * inner;
	size_t off = (size_t)KI(k, AN_offset) * inner;
	for (size_t o = 0; o < outer; o++)
		memcpy((char *)d->p + o * drow * es, (const char *)g->p + (o * grow + off) * es, drow * es);
	return 0;
}

/* slicegrad(Dest, OutputGrad) {start}: zeros, OutputGrad at start. */
int kern_slicegrad(const struct kargs *k)
{
	const struct interp_arg *d = &k->op[0];
	const int64_t *start = KINTS(k, AN_start);
	size_t ds[GLOW_MAX_RANK], base = 0, n = numel(d->t);
	strides_of(d->t, ds);
	for (size_t i = 0; i < n; i++)
		st_f(d->t, d->p, i, 0);
	for (unsigned i = 0; i < d->t->rank; i++)
		base += (size_t)start[i] * ds[i];
	scatter_copy(d, base, ds, &k->op[1]);
	return 0;
}

/* Sums src[i] into acc[map[i]] for every i with map[i] >= 0, then stores
 * acc (n elements) into dst: the accumulation of the adjoint of a value
 * read several times. Frees map; returns 0. */
static int sum_into(const struct interp_arg *dst, const struct interp_arg *src, int64_t *map)
{
	size_t n = numel(dst->t), m = numel(src->t);
	double *acc = calloc(n ? n : 1, sizeof *acc);
	if (!acc)
		abort();
	for (size_t i = 0; i < m; i++)
		if (map[i] >= 0)
			acc[map[i]] += ld_f(src->t, src->p, i);
	for (size_t i = 0; i < n; i++)
		st_f(dst->t, dst->p, i, acc[i]);
	free(acc);
	free(map);
	return 0;
}

/* A map of numel(t) entries (malloc'd). */
static int64_t *new_map(const struct type *t)
{
	size_t n = numel(t);
	int64_t *m = malloc((n ? n : 1) * sizeof *m);
	if (!m)
		abort();
	return m;
}

/* gathergrad(Dest, Indices, OutputGrad) {axis}: each slice of OutputGrad
 * added where Gather read it; an index out of range is an error, as in
 * gather. */
int kern_gathergrad(const struct kargs *k)
{
	const struct interp_arg *d = &k->op[0], *ix = &k->op[1], *g = &k->op[2];
	unsigned axis = (unsigned)KI(k, AN_axis);
	size_t outer, len, inner, ni = numel(ix->t);
	ksplit_axis(d->t, axis, &outer, &len, &inner);
	int64_t *map = new_map(g->t);
	for (size_t j = 0; j < ni; j++) {
		int64_t v = ld_i(ix->t, ix->p, j), x = kfix_index(v, len);
		if (x < 0) {
			free(map);
			return kerror(k, "index %" PRId64 " is out of range for axis %u of length %zu", v, axis, len);
		}
		for (size_t o = 0; o < outer; o++)
			for (size_t i = 0; i < inner; i++)
				map[(o * ni + j) * inner + i] = (int64_t)(((o * len) + (size_t)x) * inner + i);
	}
	return sum_into(d, g, map);
}

/* padgrad(Dest, OutputGrad) {mode, pads}: every element of OutputGrad
 * added to the input element Pad copied it from (none for constant
 * padding). */
int kern_padgrad(const struct kargs *k)
{
	const struct interp_arg *d = &k->op[0], *g = &k->op[1];
	const int64_t *p = KINTS(k, AN_pads);
	int64_t mode = KI(k, AN_mode);
	unsigned r = d->t->rank;
	size_t ds[GLOW_MAX_RANK], idx[GLOW_MAX_RANK] = {0}, n = numel(g->t);
	strides_of(d->t, ds);
	int64_t *map = new_map(g->t);
	for (size_t o = 0; o < n; o++) {
		int64_t src = 0;
		for (unsigned i = 0; i < r && src >= 0; i++) {
			int64_t x = pad_source_index((int64_t)idx[i], p[i], (int64_t)d->t->dims[i], mode);
			src = x < 0 ? -1 : src + x * (int64_t)ds[i];
		}
		map[o] = src;
		next_index(idx, g->t->dims, g->t->rank);
	}
	return sum_into(d, g, map);
}

/* batchedaddgrad(BatchGrad, SliceGrad, OutputGrad): BatchGrad is
 * OutputGrad, SliceGrad its sum over the batch. */
int kern_batchedaddgrad(const struct kargs *k)
{
	const struct interp_arg *db = &k->op[0], *ds = &k->op[1], *g = &k->op[2];
	size_t n = numel(g->t), m = numel(ds->t);
	memcpy(db->p, g->p, n * esize(g->t));
	int64_t *map = new_map(g->t);
	for (size_t i = 0; i < n; i++)
		map[i] = (int64_t)(i % (m ? m : 1));
	return sum_into(ds, g, map);
}

/* batchedreduceaddgrad, batchedreducemeangrad(Dest, OutputGrad) {axes}:
 * OutputGrad broadcast back over the reduced axes (divided by their
 * element count for the mean). */
int kern_reducegrad(const struct kargs *k)
{
	const struct interp_arg *d = &k->op[0], *g = &k->op[1];
	const int64_t *axes = KINTS(k, AN_axes);
	unsigned na = KNINTS(k, AN_axes), r = d->t->rank;
	bool drop[GLOW_MAX_RANK] = {false};
	double cnt = (double)reduce_axes_mark(d->t, axes, na, drop);
	double scale = k->kind == IK_batchedreducemeangrad ? 1 / cnt : 1;
	int64_t gs[GLOW_MAX_RANK];
	reduce_axes_strides(d->t, drop, gs);
	size_t idx[GLOW_MAX_RANK] = {0}, n = numel(d->t);
	for (size_t o = 0; o < n; o++) {
		size_t gi = 0;
		for (unsigned i = 0; i < r; i++)
			gi += idx[i] * (size_t)gs[i];
		st_f(d->t, d->p, o, ld_f(g->t, g->p, gi) * scale);
		next_index(idx, d->t->dims, r);
	}
	return 0;
}
