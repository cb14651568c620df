/* k_index.c - kernels that address elements through an index tensor:
 * gatherelements, scatterelements, scatternd.
 *
 * gatherelements and scatterelements pair every element of Indices with the
 * element of Data at the same coordinates, except along axis, where the
 * index value is used instead. scatternd reads each row of Indices (its last
 * dimension, k values) as the coordinates of a slice Data[i0, .., ik-1, ...]
 * that the matching slice of Updates replaces (or is added to or multiplied
 * into). Index values may be negative (counted from the end, as in ONNX);
 * one still out of range is a run-time error.
 *
 * Data moves bit for bit when the reduction is none; add and mul compute as
 * the elementwise kernels do (int64 for integer kinds, double and one store
 * for float and quantized kinds). Scatters first copy Data into Dest (the
 * two may be one buffer: Dest=Data is an in-place pair) and apply updates
 * in the order of Indices, so with duplicate indices the last write wins.
 */
#include "backends/interpreter/kern.h"

/* the element offset in a tensor of strides st of the coordinates of flat
 * position i of a tensor of shape it, with coordinate axis replaced by
 * `at` */
static size_t along_axis(const struct type *it, size_t i, const size_t *st, unsigned axis, size_t at)
{
	size_t off = 0;
	for (unsigned k = it->rank; k-- > 0;) {
		size_t c = i % (size_t)it->dims[k];
		i /= (size_t)it->dims[k];
		off += (k == axis ? at : c) * st[k];
	}
	return off;
}

/* gatherelements(Dest, Data, Indices) {axis} */
int kern_gatherelements(const struct kargs *k)
{
	const struct interp_arg *d = &k->op[0], *data = &k->op[1], *ix = &k->op[2];
	unsigned axis = (unsigned)KI(k, AN_axis);
	size_t st[GLOW_MAX_RANK], n = numel(ix->t), es = esize(data->t);
	uint64_t len = data->t->dims[axis];
	strides_of(data->t, st);
	for (size_t i = 0; i < n; i++) {
		int64_t raw = ld_i(ix->t, ix->p, i), v = kfix_index(raw, len);
		if (v < 0)
			return kerror(k, "gatherelements index %lld is out of range [-%llu, %llu)", (long long)raw,
				      (unsigned long long)len, (unsigned long long)len);
		cp_elem(d->p, i, data->p, along_axis(ix->t, i, st, axis, (size_t)v), es);
	}
	return 0;
}

/* Element di of Dest combined with element ui of Updates by reduction
 * (0 none, 1 add, 2 mul). */
static void combine(const struct interp_arg *d, size_t di, const struct interp_arg *u, size_t ui, int64_t red)
{
	if (red == 0) {
		cp_elem(d->p, di, u->p, ui, esize(d->t));
	} else if (is_int_kind(d->t)) {
		uint64_t a = (uint64_t)ld_i(d->t, d->p, di), b = (uint64_t)ld_i(u->t, u->p, ui);
		st_i(d->t, d->p, di, (int64_t)(red == 1 ? a + b : a * b));
	} else {
		double a = ld_f(d->t, d->p, di), b = ld_f(u->t, u->p, ui);
		st_f(d->t, d->p, di, red == 1 ? a + b : a * b);
	}
}

/* Dest = Data (they may be the same buffer) */
static void copy_data(const struct kargs *k)
{
	if (k->op[0].p != k->op[1].p)
		memcpy(k->op[0].p, k->op[1].p, (size_t)type_bytes(k->op[1].t));
}

/* scatterelements(Dest, Data, Indices, Updates) {axis, reduction} */
int kern_scatterelements(const struct kargs *k)
{
	const struct interp_arg *d = &k->op[0], *ix = &k->op[2], *u = &k->op[3];
	unsigned axis = (unsigned)KI(k, AN_axis);
	int64_t red = KI(k, AN_reduction);
	size_t st[GLOW_MAX_RANK], n = numel(ix->t);
	uint64_t len = d->t->dims[axis];
	strides_of(d->t, st);
	for (size_t i = 0; i < n; i++) {
		int64_t raw = ld_i(ix->t, ix->p, i);
		if (kfix_index(raw, len) < 0)
			return kerror(k, "scatterelements index %lld is out of range [-%llu, %llu)", (long long)raw,
				      (unsigned long long)len, (unsigned long long)len);
	}
	copy_data(k);
	for (size_t i = 0; i < n; i++) {
		int64_t v = kfix_index(ld_i(ix->t, ix->p, i), len);
		combine(d, along_axis(ix->t, i, st, axis, (size_t)v), u, i, red);
	}
	return 0;
}

/* scatternd(Dest, Data, Indices, Updates) {reduction} */
int kern_scatternd(const struct kargs *k)
{
	const struct interp_arg *d = &k->op[0], *ix = &k->op[2], *u = &k->op[3];
	const struct type *dt = d->t, *it = ix->t;
	int64_t red = KI(k, AN_reduction);
	size_t m = (size_t)it->dims[it->rank - 1], st[GLOW_MAX_RANK], chunk = 1;
	strides_of(dt, st);
	for (size_t i = m; i < dt->rank; i++)
		chunk *= (size_t)dt->dims[i];
	size_t rows = m ? numel(it) / m : 0;
	for (size_t r = 0; r < rows; r++)
		for (size_t j = 0; j < m; j++) {
			int64_t raw = ld_i(it, ix->p, r * m + j);
			if (kfix_index(raw, dt->dims[j]) < 0)
				return kerror(k, "scatternd index %lld is out of range for dimension %zu of size %llu",
					      (long long)raw, j, (unsigned long long)dt->dims[j]);
		}
	copy_data(k);
	for (size_t r = 0; r < rows; r++) {
		size_t off = 0;
		for (size_t j = 0; j < m; j++)
			off += (size_t)kfix_index(ld_i(it, ix->p, r * m + j), dt->dims[j]) * st[j];
		for (size_t c = 0; c < chunk; c++)
			combine(d, off + c, u, r * chunk + c, red);
	}
	return 0;
}
