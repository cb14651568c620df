/* fold.c - the evaluator for values known at import.
 *
 * Shape subgraphs (Shape -> Gather -> Concat -> Reshape, Range, Equal/Where
 * on shape vectors, ...) have known inputs; evaluating them here lets the
 * translators see static shapes. Data movement (imp_k_*) works on raw bytes, so
 * it serves every element type; splats stay splats whatever their size.
 * Elementwise operators (fold_node) compute in int64 for integer and bool
 * types and in double for floating types, then store in the result type.
 * Nothing with more than ONNX_FOLD_MAX elements is evaluated: such values
 * stay graph constants and their users graph nodes.
 */
#include "import/onnx/internal.h"

#include <math.h>
#include <string.h>

bool imp_all_known(struct importer *im)
{
	const onnx_node *n = im->node;
	for (size_t i = 0; i < n->n_input; i++) {
		if (!n->input[i] || !*n->input[i])
			continue;
		struct tensor *t = imp_t_lookup(im, n->input[i]);
		if (!t || !t->known)
			return false;
	}
	return true;
}

struct tensor *imp_k_splat(struct importer *im, const char *name, int dtype, unsigned rank, const uint64_t *dims,
		       double f, int64_t i)
{
	if (imp_dt_size(dtype) == 0)
		return NULL;
	struct tensor *t = imp_t_new(im, name, dtype, rank, dims);
	t->known = true;
	t->splat = true;
	if (imp_dt_is_float(dtype)) {
		t->splat_f = f;
	} else {
		t->splat_i = dtype == DT_BOOL ? i != 0 : i;
		t->splat_f = (double)t->splat_i;
	}
	return t;
}

struct tensor *imp_t_view(struct importer *im, struct tensor *t, const char *name, unsigned rank, const uint64_t *dims)
{
	struct tensor *r = imp_t_new(im, name, t->dtype, rank, dims);
	r->known = t->known;
	r->splat = t->splat;
	r->splat_f = t->splat_f;
	r->splat_i = t->splat_i;
	r->raw = t->raw;
	r->generated = t->generated;
	r->ivals = t->ivals;
	r->fvals = t->fvals;
	return r;
}

/* A result of dims with t's element type: a splat if t is one, else fresh
 * bytes (NULL if too large or t unknown). */
static struct tensor *k_result(struct importer *im, struct tensor *t, const char *name, unsigned rank,
			       const uint64_t *dims, uint8_t **out)
{
	*out = NULL;
	if (!t->known || imp_dt_size(t->dtype) == 0)
		return NULL;
	if (t->splat)
		return imp_k_splat(im, name, t->dtype, rank, dims, t->splat_f, t->splat_i);
	struct tensor *r = imp_t_new(im, name, t->dtype, rank, dims);
	uint64_t n = imp_t_numel(r);
	if (n > ONNX_FOLD_MAX || imp_t_numel(t) > ONNX_FOLD_MAX)
		return NULL;
	r->known = true;
	r->generated = true;
	*out = arena_alloc(&im->scratch, n * imp_dt_size(t->dtype) + 1);
	r->raw = *out;
	return r;
}

static void strides_of(const uint64_t *dims, unsigned rank, uint64_t *st)
{
	uint64_t s = 1;
	for (unsigned k = rank; k-- > 0;) {
		st[k] = s;
		s *= dims[k];
	}
}

/* Converts a flat index of dims into coordinates. */
static void coords_of(uint64_t flat, const uint64_t *dims, unsigned rank, uint64_t *c)
{
	for (unsigned k = rank; k-- > 0;) {
		c[k] = dims[k] ? flat % dims[k] : 0;
		flat = dims[k] ? flat / dims[k] : 0;
	}
}

struct tensor *imp_k_permute(struct importer *im, struct tensor *t, const unsigned *perm, const char *name)
{
	uint64_t dims[GLOW_MAX_RANK], st[GLOW_MAX_RANK], c[GLOW_MAX_RANK];
	for (unsigned k = 0; k < t->rank; k++)
		dims[k] = t->dims[perm[k]];
	uint8_t *out;
	struct tensor *r = k_result(im, t, name, t->rank, dims, &out);
	if (!out)
		return r;
	size_t es = imp_dt_size(t->dtype);
	strides_of(t->dims, t->rank, st);
	for (uint64_t i = 0, n = imp_t_numel(r); i < n; i++) {
		coords_of(i, dims, t->rank, c);
		uint64_t src = 0;
		for (unsigned k = 0; k < t->rank; k++)
			src += c[k] * st[perm[k]];
		memcpy(out + i * es, t->raw + src * es, es);
	}
	return r;
}

struct tensor *imp_k_concat(struct importer *im, struct tensor **ts, unsigned n, unsigned axis, const char *name)
{
	uint64_t dims[GLOW_MAX_RANK];
	memcpy(dims, ts[0]->dims, sizeof dims);
	dims[axis] = 0;
	for (unsigned i = 0; i < n; i++)
		dims[axis] += ts[i]->dims[axis];
	struct tensor *r = imp_t_new(im, name, ts[0]->dtype, ts[0]->rank, dims);
	size_t es = imp_dt_size(ts[0]->dtype);
	if (es == 0 || imp_t_numel(r) > ONNX_FOLD_MAX)
		return NULL;
	uint8_t *out = arena_alloc(&im->scratch, imp_t_numel(r) * es + 1);
	uint64_t outer = 1, inner = es;
	for (unsigned k = 0; k < axis; k++)
		outer *= dims[k];
	for (unsigned k = axis + 1; k < r->rank; k++)
		inner *= dims[k];
	uint64_t row = dims[axis] * inner, off = 0;
	for (unsigned i = 0; i < n; i++) {
		uint64_t part = ts[i]->dims[axis] * inner;
		struct tensor *t = ts[i];
		if (t->splat) { /* expand it: it has no more elements than the result */
			if (imp_dt_is_float(t->dtype)) {
				const double *fv = imp_t_floats(im, t);
				t = fv ? imp_t_from_floats(im, t->name, t->dtype, t->rank, t->dims, fv) : NULL;
			} else {
				const int64_t *iv = imp_t_ints(im, t);
				t = iv ? imp_t_from_ints(im, t->name, t->dtype, t->rank, t->dims, iv) : NULL;
			}
			if (!t)
				return NULL;
		}
		for (uint64_t o = 0; o < outer; o++)
			memcpy(out + o * row + off, t->raw + o * part, part);
		off += part;
	}
	r->known = true;
	r->raw = out;
	return r;
}

struct tensor *imp_k_slice(struct importer *im, struct tensor *t, const int64_t *start, const int64_t *step,
		       const uint64_t *odims, const char *name)
{
	uint8_t *out;
	struct tensor *r = k_result(im, t, name, t->rank, odims, &out);
	if (!out)
		return r;
	size_t es = imp_dt_size(t->dtype);
	uint64_t st[GLOW_MAX_RANK], c[GLOW_MAX_RANK];
	strides_of(t->dims, t->rank, st);
	for (uint64_t i = 0, n = imp_t_numel(r); i < n; i++) {
		coords_of(i, odims, t->rank, c);
		uint64_t src = 0;
		for (unsigned k = 0; k < t->rank; k++)
			src += (uint64_t)(start[k] + (int64_t)c[k] * step[k]) * st[k];
		memcpy(out + i * es, t->raw + src * es, es);
	}
	return r;
}

struct tensor *imp_k_gather(struct importer *im, struct tensor *data, struct tensor *idx, unsigned axis,
			const char *name)
{
	uint64_t dims[GLOW_MAX_RANK];
	unsigned r = imp_gather_dims(data, idx, axis, dims);
	uint8_t *out;
	struct tensor *res = k_result(im, data, name, r, dims, &out);
	const int64_t *iv = imp_t_ints(im, idx);
	if (!out || !iv)
		return iv ? res : NULL;
	size_t es = imp_dt_size(data->dtype);
	uint64_t outer = 1, inner = es, ni = imp_t_numel(idx);
	for (unsigned k = 0; k < axis; k++)
		outer *= data->dims[k];
	for (unsigned k = axis + 1; k < data->rank; k++)
		inner *= data->dims[k];
	for (uint64_t o = 0; o < outer; o++)
		for (uint64_t j = 0; j < ni; j++)
			memcpy(out + (o * ni + j) * inner, data->raw + (o * data->dims[axis] + (uint64_t)iv[j]) * inner,
			       inner);
	return res;
}

/* Flat index into t of the output coordinates c (numpy broadcasting). */
static uint64_t bcast_index(const struct tensor *t, const uint64_t *c, unsigned rank)
{
	uint64_t idx = 0;
	unsigned off = rank - t->rank;
	for (unsigned k = 0; k < t->rank; k++)
		idx = idx * t->dims[k] + (t->dims[k] == 1 ? 0 : c[off + k]);
	return idx;
}

struct tensor *imp_k_broadcast(struct importer *im, struct tensor *t, const uint64_t *dims, unsigned rank,
			   const char *name)
{
	uint8_t *out;
	struct tensor *r = k_result(im, t, name, rank, dims, &out);
	if (!out)
		return r;
	size_t es = imp_dt_size(t->dtype);
	uint64_t c[GLOW_MAX_RANK];
	for (uint64_t i = 0, n = imp_t_numel(r); i < n; i++) {
		coords_of(i, dims, rank, c);
		memcpy(out + i * es, t->raw + bcast_index(t, c, rank) * es, es);
	}
	return r;
}

struct tensor *imp_k_cast(struct importer *im, struct tensor *t, int dtype, const char *name)
{
	/* float8 and 4-bit casts are translated (saturate, rounding: ops_f8.c) */
	if (imp_dt_size(dtype) == 0 || !t->known || imp_dt_is_f8(dtype) || imp_dt_is_4bit(dtype) ||
	    imp_dt_is_f8(t->dtype) || imp_dt_is_4bit(t->dtype))
		return NULL;
	if (t->splat) {
		double f = t->splat_f;
		int64_t i = imp_dt_is_float(t->dtype) ? (isfinite(f) && fabs(f) < 9.2e18 ? (int64_t)f : 0) : t->splat_i;
		if (dtype == DT_BOOL)
			i = imp_dt_is_float(t->dtype) ? f != 0 : i != 0;
		return imp_k_splat(im, name, dtype, t->rank, t->dims, imp_dt_is_float(t->dtype) ? f : (double)i, i);
	}
	if (imp_dt_is_float(t->dtype)) {
		const double *f = imp_t_floats(im, t);
		return f ? imp_t_from_floats(im, name, dtype, t->rank, t->dims, f) : NULL;
	}
	const int64_t *v = imp_t_ints(im, t);
	return v ? imp_t_from_ints(im, name, dtype, t->rank, t->dims, v) : NULL;
}

/* ---- elementwise evaluation ---- */

enum fop {
	F_ADD, F_SUB, F_MUL, F_DIV, F_MOD, F_MAX, F_MIN, F_NEG, F_ABS, F_EQ, F_LT, F_GT, F_LE, F_GE,
	F_NOT, F_AND, F_OR, F_XOR, F_WHERE, F_CAST, F_FLOOR, F_CEIL, F_SQRT, F_RELU
};

static const struct {
	const char *op;
	enum fop f;
	unsigned arity;
} fold_ops[] = {
	{"Add", F_ADD, 2}, {"Sub", F_SUB, 2}, {"Mul", F_MUL, 2}, {"Div", F_DIV, 2}, {"Mod", F_MOD, 2},
	{"Max", F_MAX, 2}, {"Min", F_MIN, 2}, {"Neg", F_NEG, 1}, {"Abs", F_ABS, 1}, {"Equal", F_EQ, 2},
	{"Less", F_LT, 2}, {"Greater", F_GT, 2}, {"LessOrEqual", F_LE, 2}, {"GreaterOrEqual", F_GE, 2},
	{"Not", F_NOT, 1}, {"And", F_AND, 2}, {"Or", F_OR, 2}, {"Xor", F_XOR, 2}, {"Where", F_WHERE, 3},
	{"Cast", F_CAST, 1}, {"CastLike", F_CAST, 2}, {"Floor", F_FLOOR, 1}, {"Ceil", F_CEIL, 1},
	{"Sqrt", F_SQRT, 1}, {"Relu", F_RELU, 1},
};

static int64_t eval_i(struct importer *im, enum fop f, int64_t a, int64_t b, bool *bad)
{
	switch (f) {
	case F_ADD: return (int64_t)((uint64_t)a + (uint64_t)b);
	case F_SUB: return (int64_t)((uint64_t)a - (uint64_t)b);
	case F_MUL: return (int64_t)((uint64_t)a * (uint64_t)b);
	case F_DIV:
	case F_MOD:
		if (b == 0 || (a == INT64_MIN && b == -1)) {
			*bad = true;
			return 0;
		}
		if (f == F_DIV)
			return a / b;
		if (imp_attr_i(im->node, "fmod", 0))
			return a % b;
		return ((a % b) + b) % b; /* the sign of the divisor */
	case F_MAX: return a > b ? a : b;
	case F_MIN: return a < b ? a : b;
	case F_NEG: return (int64_t)(0 - (uint64_t)a);
	case F_ABS: return a < 0 ? (int64_t)(0 - (uint64_t)a) : a;
	case F_EQ: return a == b;
	case F_LT: return a < b;
	case F_GT: return a > b;
	case F_LE: return a <= b;
	case F_GE: return a >= b;
	case F_NOT: return !a;
	case F_AND: return a && b;
	case F_OR: return a || b;
	case F_XOR: return !a != !b;
	case F_RELU: return a < 0 ? 0 : a;
	default: *bad = true; return 0;
	}
}

static double eval_f(struct importer *im, enum fop f, double a, double b, bool *bad)
{
	switch (f) {
	case F_ADD: return a + b;
	case F_SUB: return a - b;
	case F_MUL: return a * b;
	case F_DIV: return a / b;
	case F_MOD: {
		double r = fmod(a, b);
		if (!imp_attr_i(im->node, "fmod", 0) && r != 0 && (r < 0) != (b < 0))
			r += b;
		return r;
	}
	case F_MAX: return a > b || isnan(a) ? a : b;
	case F_MIN: return a < b || isnan(a) ? a : b;
	case F_NEG: return -a;
	case F_ABS: return fabs(a);
	case F_EQ: return a == b;
	case F_LT: return a < b;
	case F_GT: return a > b;
	case F_LE: return a <= b;
	case F_GE: return a >= b;
	case F_FLOOR: return floor(a);
	case F_CEIL: return ceil(a);
	case F_SQRT: return sqrt(a);
	case F_RELU: return a < 0 ? 0 : a;
	default: *bad = true; return 0;
	}
}

int imp_fold_node(struct importer *im, const onnx_node *n)
{
	int k = -1;
	for (size_t i = 0; i < GLOW_ARRAY_SIZE(fold_ops); i++)
		if (strcmp(fold_ops[i].op, n->op_type) == 0)
			k = (int)i;
	if (k < 0 || imp_n_in(n) != fold_ops[k].arity || n->n_output != 1 || !imp_all_known(im))
		return 0;
	enum fop f = fold_ops[k].f;
	struct tensor *in[3] = {NULL, NULL, NULL};
	for (unsigned i = 0; i < fold_ops[k].arity; i++)
		in[i] = imp_in_req(im, i);
	const char *name = imp_out_name(im, 0);
	if (f == F_CAST) {
		int to = fold_ops[k].arity == 2 ? in[1]->dtype : (int)imp_attr_i(n, "to", DT_UNDEF);
		struct tensor *r = imp_k_cast(im, in[0], to, name);
		return r ? (imp_set_out_t(im, 0, r) ? -1 : 1) : 0;
	}
	/* the result shape (numpy broadcasting over every input) */
	uint64_t dims[GLOW_MAX_RANK];
	unsigned rank = 0;
	for (unsigned i = 0; i < fold_ops[k].arity; i++)
		if (in[i]->rank > rank)
			rank = in[i]->rank;
	for (unsigned d = 0; d < rank; d++) {
		dims[d] = 1;
		for (unsigned i = 0; i < fold_ops[k].arity; i++) {
			int j = (int)d - (int)(rank - in[i]->rank);
			uint64_t v = j >= 0 ? in[i]->dims[j] : 1;
			if (v != 1 && dims[d] != 1 && v != dims[d])
				return 0; /* the translator reports it */
			if (v != 1)
				dims[d] = v;
		}
	}
	int data0 = f == F_WHERE ? 1 : 0;
	int dtype = in[data0]->dtype;
	for (unsigned i = (unsigned)data0; i < fold_ops[k].arity; i++)
		if (in[i]->dtype != dtype || imp_dt_size(dtype) == 0 || imp_dt_is_f8(dtype) || imp_dt_is_4bit(dtype))
			return 0;
	bool cmp = f == F_EQ || f == F_LT || f == F_GT || f == F_LE || f == F_GE;
	int rtype = cmp ? DT_BOOL : dtype;
	struct tensor *probe = imp_t_new(im, name, rtype, rank, dims);
	uint64_t numel = imp_t_numel(probe);
	if (numel > ONNX_FOLD_MAX)
		return 0;
	bool isf = imp_dt_is_float(dtype);
	const int64_t *iv[3] = {NULL, NULL, NULL};
	const double *fv[3] = {NULL, NULL, NULL};
	for (unsigned i = 0; i < fold_ops[k].arity; i++) {
		iv[i] = imp_t_ints(im, in[i]);
		fv[i] = imp_t_floats(im, in[i]);
		if (!iv[i] || !fv[i])
			return 0;
	}
	int64_t *ri = arena_alloc(&im->scratch, (numel + 1) * sizeof *ri);
	double *rf = arena_alloc(&im->scratch, (numel + 1) * sizeof *rf);
	uint64_t c[GLOW_MAX_RANK];
	bool bad = false;
	for (uint64_t e = 0; e < numel; e++) {
		coords_of(e, dims, rank, c);
		uint64_t x[3] = {0, 0, 0};
		for (unsigned i = 0; i < fold_ops[k].arity; i++)
			x[i] = bcast_index(in[i], c, rank);
		if (f == F_WHERE) {
			bool cnd = iv[0][x[0]] != 0;
			ri[e] = cnd ? iv[1][x[1]] : iv[2][x[2]];
			rf[e] = cnd ? fv[1][x[1]] : fv[2][x[2]];
		} else if (isf) {
			double a = fv[0][x[0]], b = fold_ops[k].arity > 1 ? fv[1][x[1]] : 0;
			rf[e] = eval_f(im, f, a, b, &bad);
		} else {
			int64_t a = iv[0][x[0]], b = fold_ops[k].arity > 1 ? iv[1][x[1]] : 0;
			ri[e] = eval_i(im, f, a, b, &bad);
		}
		if (bad)
			return 0; /* e.g. integer division by zero: leave it to run time */
	}
	struct tensor *r = (isf && !cmp) ? imp_t_from_floats(im, name, rtype, rank, dims, rf)
			 : (isf && cmp) ? NULL : imp_t_from_ints(im, name, rtype, rank, dims, ri);
	if (isf && cmp) {
		for (uint64_t e = 0; e < numel; e++)
			ri[e] = rf[e] != 0;
		r = imp_t_from_ints(im, name, rtype, rank, dims, ri);
	}
	return imp_set_out_t(im, 0, r) ? -1 : 1;
}
