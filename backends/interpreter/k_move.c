/* k_move.c - data movement: splat, inserttensor, extracttensor,
 * transpose, gather, gathernd, tile, broadcast, spacetodepth,
 * depthtospace, resizenearest, resizebilinear, flip (copy is k_ew.c's;
 * touch leaves its buffer as it is).
 *
 * Movement copies stored elements bit for bit (any kind; quantized values
 * keep their integers, which the type rules make legal). Only splat and
 * resizebilinear compute: splat stores its value with st_f (quantized kinds
 * quantize it), bilinear interpolates real values.
 *
 * Index operands may be negative (counted from the end, as in ONNX); an
 * index still out of range is a run-time error. Resize maps output
 * coordinate o to input coordinate o / scale (asymmetric): nearest takes
 * floor, bilinear interpolates between floor and floor + 1 (clamped) in
 * every dimension whose size changes.
 *
 * Threads (kpar_ranges, ipool.c): the windows of inserttensor and
 * extracttensor, transpose, gather, tile, broadcast, resize and flip are
 * split by ranges of the elements (or rows) they write; each element is
 * written once, so the bytes do not depend on the thread count.
 */
#include "backends/interpreter/kern.h"

#include <stdlib.h>
#include <string.h>

/* Advances a row-major index over dims; returns false after the last. */
static bool next_index(size_t *idx, const uint64_t *dims, unsigned rank)
{
	for (unsigned i = rank; i-- > 0;) {
		if (++idx[i] < dims[i])
			return true;
		idx[i] = 0;
	}
	return false;
}

/* The row-major index idx over dims (rank r) of flat position o (all 0
 * in a tensor with no element, whose ranges are empty). */
static void unflat(size_t o, const uint64_t *dims, unsigned r, size_t *idx)
{
	for (unsigned i = r; i-- > 0;) {
		idx[i] = dims[i] ? o % (size_t)dims[i] : 0;
		o = dims[i] ? o / (size_t)dims[i] : 0;
	}
}

/* A movement in parts: the kernel's arguments and what it precomputed. */
struct move_job {
	const struct kargs *k;
	void *big, *small;
	const uint64_t *dims;
	size_t str[GLOW_MAX_RANK], at[GLOW_MAX_RANK], es, len, inner, ni;
	unsigned r;
	bool into_big;
};

/* splat(Dest) {value}: value stored once, then copied bit for bit */
int kern_splat(const struct kargs *k)
{
	const struct interp_arg *d = &k->op[0];
	size_t n = numel(d->t), es = esize(d->t);
	if (n == 0)
		return 0;
	st_f(d->t, d->p, 0, KF(k, AN_value));
	for (size_t i = 1; i < n; i++)
		cp_elem(d->p, i, d->p, 0, es);
	return 0;
}

/* Elements [lo, hi) of a window copy (copy_window). */
static void window_range(const void *ctx, size_t lo, size_t hi)
{
	const struct move_job *j = ctx;
	size_t idx[GLOW_MAX_RANK] = {0};
	unflat(lo, j->dims, j->r, idx);
	for (size_t i = lo; i < hi; i++) {
		size_t o = 0;
		for (unsigned q = 0; q < j->r; q++)
			o += (j->at[q] + idx[q]) * j->str[q];
		if (j->into_big)
			cp_elem(j->big, o, j->small, i, j->es);
		else
			cp_elem(j->small, i, j->big, o, j->es);
		next_index(idx, j->dims, j->r);
	}
}

/* Copies between the small tensor (dims, rank r, contiguous) and the
 * window of the same dims at position at of the big one (element strides
 * bstr): into the window when into_big, out of it otherwise; es bytes an
 * element. Split by elements of the window. */
static void copy_window(void *big, const size_t *bstr, const size_t *at, void *small, const uint64_t *dims,
			unsigned r, size_t es, bool into_big)
{
	struct move_job j = {.big = big, .small = small, .dims = dims, .es = es, .r = r, .into_big = into_big};
	size_t n = 1;
	for (unsigned q = 0; q < r; q++) {
		n *= (size_t)dims[q];
		j.str[q] = bstr[q];
		j.at[q] = at[q];
	}
	kpar_ranges(window_range, &j, n, (double)n);
}

/* inserttensor(Dest @inout, Src) {start, count, axis}: Src is written count
 * times along axis, starting at start */
int kern_inserttensor(const struct kargs *k)
{
	const struct interp_arg *d = &k->op[0], *s = &k->op[1];
	const int64_t *start = KINTS(k, AN_start);
	int64_t count = KI(k, AN_count);
	unsigned axis = (unsigned)KI(k, AN_axis), r = s->t->rank;
	size_t dstr[GLOW_MAX_RANK], at[GLOW_MAX_RANK];
	strides_of(d->t, dstr);
	for (int64_t c = 0; c < count; c++) {
		for (unsigned j = 0; j < r; j++)
			at[j] = (size_t)start[j] + (j == axis ? (size_t)c * (size_t)s->t->dims[j] : 0);
		copy_window(d->p, dstr, at, s->p, s->t->dims, r, esize(s->t), true);
	}
	return 0;
}

/* extracttensor(Dest, Src) {start} */
int kern_extracttensor(const struct kargs *k)
{
	const struct interp_arg *d = &k->op[0], *s = &k->op[1];
	const int64_t *start = KINTS(k, AN_start);
	size_t sstr[GLOW_MAX_RANK], at[GLOW_MAX_RANK];
	strides_of(s->t, sstr);
	for (unsigned j = 0; j < s->t->rank; j++)
		at[j] = (size_t)start[j];
	copy_window(s->p, sstr, at, d->p, d->t->dims, s->t->rank, esize(s->t), false);
	return 0;
}

/* Elements [lo, hi) of a transpose (str: the source stride of each
 * destination dimension). */
static void transpose_range(const void *ctx, size_t lo, size_t hi)
{
	const struct move_job *j = ctx;
	const struct interp_arg *d = &j->k->op[0], *s = &j->k->op[1];
	size_t idx[GLOW_MAX_RANK] = {0}, si = 0;
	unflat(lo, d->t->dims, j->r, idx);
	for (unsigned q = 0; q < j->r; q++)
		si += idx[q] * j->str[q];
	for (size_t i = lo; i < hi; i++) {
		cp_elem(d->p, i, s->p, si, j->es);
		for (unsigned q = j->r; q-- > 0;) {
			si += j->str[q];
			if (++idx[q] < d->t->dims[q])
				break;
			si -= j->str[q] * (size_t)d->t->dims[q];
			idx[q] = 0;
		}
	}
}

/* transpose(Dest, Src) {shuffle}: Dest dim i = Src dim shuffle[i] */
int kern_transpose(const struct kargs *k)
{
	const struct interp_arg *d = &k->op[0], *s = &k->op[1];
	const int64_t *sh = KINTS(k, AN_shuffle);
	struct move_job j = {.k = k, .r = s->t->rank, .es = esize(s->t)};
	size_t sstr[GLOW_MAX_RANK];
	strides_of(s->t, sstr);
	for (unsigned i = 0; i < j.r; i++)
		j.str[i] = sstr[sh[i]];
	kpar_ranges(transpose_range, &j, numel(d->t), (double)numel(d->t));
	return 0;
}

/* Rows [lo, hi) (outer x ni) of a gather, its indices checked. */
static void gather_rows(const void *ctx, size_t lo, size_t hi)
{
	const struct move_job *j = ctx;
	const struct interp_arg *d = &j->k->op[0], *data = &j->k->op[1], *ix = &j->k->op[2];
	for (size_t r = lo; r < hi; r++) {
		size_t o = r / j->ni, v = (size_t)kfix_index(ld_i(ix->t, ix->p, r % j->ni), j->len);
		for (size_t in = 0; in < j->inner; in++)
			cp_elem(d->p, r * j->inner + in, data->p, (o * j->len + v) * j->inner + in, j->es);
	}
}

/* gather(Dest, Data, Indices) {axis}: the indices checked, then the rows
 * in parts */
int kern_gather(const struct kargs *k)
{
	const struct interp_arg *data = &k->op[1], *ix = &k->op[2];
	unsigned axis = (unsigned)KI(k, AN_axis);
	struct move_job j = {.k = k, .len = (size_t)data->t->dims[axis], .ni = numel(ix->t), .es = esize(data->t)};
	size_t outer = 1;
	j.inner = 1;
	for (unsigned i = 0; i < axis; i++)
		outer *= (size_t)data->t->dims[i];
	for (unsigned i = axis + 1; i < data->t->rank; i++)
		j.inner *= (size_t)data->t->dims[i];
	for (size_t q = 0; q < j.ni; q++) {
		int64_t raw = ld_i(ix->t, ix->p, q);
		if (kfix_index(raw, j.len) < 0)
			return kerror(k, "gather index %lld is out of range [-%zu, %zu)", (long long)raw, j.len, j.len);
	}
	kpar_ranges(gather_rows, &j, outer * j.ni, (double)(outer * j.ni * j.inner));
	return 0;
}

/* gathernd(Dest, Data, Indices) {batch_dims} */
int kern_gathernd(const struct kargs *k)
{
	const struct interp_arg *d = &k->op[0], *data = &k->op[1], *ix = &k->op[2];
	const struct type *dt = data->t, *it = ix->t;
	size_t b = (size_t)KI(k, AN_batch_dims), m = (size_t)it->dims[it->rank - 1];
	size_t dstr[GLOW_MAX_RANK], es = esize(dt);
	strides_of(dt, dstr);
	size_t batch = 1, chunk = 1;
	for (size_t i = 0; i < b; i++)
		batch *= (size_t)dt->dims[i];
	for (size_t i = b + m; i < dt->rank; i++)
		chunk *= (size_t)dt->dims[i];
	size_t tuples = numel(it) / (m ? m : 1), per_batch = batch ? tuples / batch : 0;
	size_t bstride = b ? dstr[b - 1] : 0, out = 0;
	for (size_t t = 0; t < tuples; t++) {
		size_t bi = per_batch ? t / per_batch : 0, off = bi * bstride;
		for (size_t j = 0; j < m; j++) {
			int64_t raw = ld_i(it, ix->p, t * m + j), v = kfix_index(raw, dt->dims[b + j]);
			if (v < 0)
				return kerror(k, "gathernd index %lld is out of range for dimension %zu of size %llu",
					      (long long)raw, b + j, (unsigned long long)dt->dims[b + j]);
			off += (size_t)v * dstr[b + j];
		}
		for (size_t c = 0; c < chunk; c++)
			cp_elem(d->p, out++, data->p, off + c, es);
	}
	return 0;
}

/* Blocks [lo, hi) of a tile (outer x count blocks of len x inner). */
static void tile_blocks(const void *ctx, size_t lo, size_t hi)
{
	const struct move_job *j = ctx;
	const struct interp_arg *d = &j->k->op[0], *s = &j->k->op[1];
	const size_t block = j->len * j->inner;
	for (size_t q = lo; q < hi; q++)
		for (size_t e = 0; e < block; e++)
			cp_elem(d->p, q * block + e, s->p, q / j->ni * block + e, j->es);
}

/* tile(Dest, Src) {count, axis}: by blocks */
int kern_tile(const struct kargs *k)
{
	const struct interp_arg *s = &k->op[1];
	unsigned axis = (unsigned)KI(k, AN_axis);
	size_t outer;
	struct move_job j = {.k = k, .ni = (size_t)KI(k, AN_count), .es = esize(s->t)};
	ksplit_axis(s->t, axis, &outer, &j.len, &j.inner);
	kpar_ranges(tile_blocks, &j, outer * j.ni, (double)(outer * j.ni * j.len * j.inner));
	return 0;
}

/* Elements [lo, hi) of a broadcast (str: the source stride of each
 * destination dimension, 0 where it repeats). */
static void broadcast_range(const void *ctx, size_t lo, size_t hi)
{
	const struct move_job *j = ctx;
	const struct interp_arg *d = &j->k->op[0], *s = &j->k->op[1];
	size_t idx[GLOW_MAX_RANK] = {0};
	unflat(lo, d->t->dims, j->r, idx);
	for (size_t i = lo; i < hi; i++) {
		size_t si = 0;
		for (unsigned q = 0; q < j->r; q++)
			si += idx[q] * j->str[q];
		cp_elem(d->p, i, s->p, si, j->es);
		next_index(idx, d->t->dims, j->r);
	}
}

/* broadcast(Dest, Src) {axis}: Src dims align with Dest dims from axis */
int kern_broadcast(const struct kargs *k)
{
	const struct interp_arg *d = &k->op[0], *s = &k->op[1];
	unsigned axis = (unsigned)KI(k, AN_axis);
	struct move_job j = {.k = k, .r = d->t->rank, .es = esize(s->t)};
	size_t sstr[GLOW_MAX_RANK];
	strides_of(s->t, sstr);
	for (unsigned i = 0; i < s->t->rank; i++)
		j.str[axis + i] = s->t->dims[i] == 1 ? 0 : sstr[i];
	kpar_ranges(broadcast_range, &j, numel(d->t), (double)numel(d->t) * 2);
	return 0;
}

/* spacetodepth: Dest[n][h][w][(bh*b + bw)*C + c] = Src[n][h*b+bh][w*b+bw][c];
 * depthtospace the inverse, with channel (bh*b + bw)*C' + c (dcr) or
 * c*b*b + bh*b + bw (crd). */
static int space_depth(const struct kargs *k, bool to_depth, bool crd)
{
	const struct interp_arg *d = &k->op[0], *s = &k->op[1];
	const struct type *big = to_depth ? s->t : d->t; /* the spatial side */
	size_t b = (size_t)KI(k, AN_block_size), es = esize(s->t);
	size_t N = (size_t)big->dims[0], H = (size_t)big->dims[1], W = (size_t)big->dims[2], C = (size_t)big->dims[3];
	size_t oh = H / b, ow = W / b, oc = C * b * b;
	for (size_t n = 0; n < N; n++)
		for (size_t y = 0; y < H; y++)
			for (size_t x = 0; x < W; x++)
				for (size_t c = 0; c < C; c++) {
					size_t bh = y % b, bw = x % b;
					size_t ch = crd ? c * b * b + bh * b + bw : (bh * b + bw) * C + c;
					size_t si = ((n * H + y) * W + x) * C + c;
					size_t di = ((n * oh + y / b) * ow + x / b) * oc + ch;
					if (to_depth)
						cp_elem(d->p, di, s->p, si, es);
					else
						cp_elem(d->p, si, s->p, di, es);
				}
	return 0;
}

/* spacetodepth(Dest, Src) {block_size} */
int kern_spacetodepth(const struct kargs *k) { return space_depth(k, true, false); }

/* depthtospace(Dest, Src) {block_size, mode = dcr|crd} */
int kern_depthtospace(const struct kargs *k) { return space_depth(k, false, KI(k, AN_mode) == 1); }

/* resize(Dest, Src) {scale}: nearest, or bilinear in the dimensions whose
 * size changes; elements [o0, o1) */
static void resize_range(const void *ctx, size_t o0, size_t o1)
{
	const struct move_job *j = ctx;
	const struct interp_arg *d = &j->k->op[0], *s = &j->k->op[1];
	const double *sc = KFLOATS(j->k, AN_scale);
	const bool bilinear = j->into_big;
	unsigned r = j->r;
	size_t sstr[GLOW_MAX_RANK], es = j->es, idx[GLOW_MAX_RANK] = {0};
	strides_of(s->t, sstr);
	unflat(o0, d->t->dims, r, idx);
	unsigned interp[GLOW_MAX_RANK], ni = 0;
	for (unsigned i = 0; i < r; i++)
		if (bilinear && d->t->dims[i] != s->t->dims[i])
			interp[ni++] = i;
	for (size_t o = o0; o < o1; o++) {
		size_t lo[GLOW_MAX_RANK], hi[GLOW_MAX_RANK];
		double fr[GLOW_MAX_RANK];
		for (unsigned i = 0; i < r; i++) {
			double x = (double)idx[i] / sc[i];
			size_t f = (size_t)floor(x), len = (size_t)s->t->dims[i];
			if (f >= len)
				f = len - 1;
			lo[i] = f;
			hi[i] = f + 1 < len ? f + 1 : f;
			fr[i] = x - (double)f;
			if (fr[i] < 0)
				fr[i] = 0;
		}
		if (!bilinear || ni == 0) {
			size_t si = 0;
			for (unsigned i = 0; i < r; i++)
				si += lo[i] * sstr[i];
			cp_elem(d->p, o, s->p, si, es);
		} else {
			double acc = 0;
			for (unsigned corner = 0; corner < 1u << ni; corner++) {
				double w = 1;
				size_t si = 0;
				for (unsigned i = 0, c = 0; i < r; i++) {
					size_t x = lo[i];
					if (c < ni && interp[c] == i) {
						bool up = corner >> c & 1;
						x = up ? hi[i] : lo[i];
						w *= up ? fr[i] : 1 - fr[i];
						c++;
					}
					si += x * sstr[i];
				}
				if (w != 0)
					acc += w * ld_f(s->t, s->p, si);
			}
			st_f(d->t, d->p, o, acc);
		}
		next_index(idx, d->t->dims, r);
	}
}

/* a resize (into_big: bilinear), split by elements */
static int resize(const struct kargs *k, bool bilinear)
{
	const struct type *t = k->op[0].t;
	struct move_job j = {.k = k, .r = t->rank, .es = esize(t), .into_big = bilinear};
	kpar_ranges(resize_range, &j, numel(t), (double)numel(t) * (bilinear ? 4.0 * t->rank : 1.0));
	return 0;
}

/* resizenearest(Dest, Src) {scale} */
int kern_resizenearest(const struct kargs *k) { return resize(k, false); }

/* resizebilinear(Dest, Src) {scale} */
int kern_resizebilinear(const struct kargs *k) { return resize(k, true); }

/* Rows [lo, hi) (outer x len, inner values each) of a flip. */
static void flip_rows(const void *ctx, size_t lo, size_t hi)
{
	const struct move_job *j = ctx;
	const struct interp_arg *d = &j->k->op[0], *s = &j->k->op[1];
	for (size_t r = lo; r < hi; r++) {
		size_t o = r / j->len, q = r % j->len;
		for (size_t in = 0; in < j->inner; in++)
			cp_elem(d->p, r * j->inner + in, s->p, (o * j->len + j->len - 1 - q) * j->inner + in, j->es);
	}
}

/* flip(Dest, Src) {axis}: by rows */
int kern_flip(const struct kargs *k)
{
	const struct interp_arg *s = &k->op[1];
	size_t outer;
	struct move_job j = {.k = k, .es = esize(s->t)};
	ksplit_axis(s->t, (unsigned)KI(k, AN_axis), &outer, &j.len, &j.inner);
	kpar_ranges(flip_rows, &j, outer * j.len, (double)numel(s->t));
	return 0;
}

/* The byte a bitcast stores for source byte b when Dest's kind is k, for
 * the one-byte kinds whose stored byte is not any byte: a nibble kind keeps
 * the low four bits (i4 sign-extended), bool is whether the byte is
 * nonzero. Every other kind stores b. */
static uint8_t bitcast_byte(enum elem_kind k, uint8_t b)
{
	switch (k) {
	case EK_I4: return (uint8_t)((b & 8u) ? (b | 0xf0u) : (b & 0x0fu));
	case EK_U4: case EK_F4E2M1: return (uint8_t)(b & 0x0fu);
	case EK_BOOL: return b != 0;
	default: return b;
	}
}

/* bitcast(Dest, Src): the stored bits, element for element (the type rule
 * makes the widths equal) */
int kern_bitcast(const struct kargs *k)
{
	const struct interp_arg *d = &k->op[0], *s = &k->op[1];
	const enum elem_kind dk = (enum elem_kind)d->t->elem;
	size_t n = type_bytes(d->t);
	if (dk == EK_I4 || dk == EK_U4 || dk == EK_F4E2M1 || dk == EK_BOOL) {
		const uint8_t *src = s->p;
		uint8_t *dst = d->p;
		for (size_t i = 0; i < n; i++)
			dst[i] = bitcast_byte(dk, src[i]);
	} else if (d->p != s->p) {
		memmove(d->p, s->p, n);
	}
	return 0;
}
