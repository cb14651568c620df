/* k_reduce.c - reductions and normalizations: batchedadd, batchedreduce*,
 * softmax, logsoftmax, the normalizations, crossentropyloss, argmax/argmin,
 * topk, cumsum.
 *
 * Sums, means and variances accumulate in double (integers: in int64,
 * wrapping). Softmax subtracts the row maximum before exponentiating;
 * logsoftmax is x - max - log(sum exp(x - max)). Variances are two-pass
 * (mean first, then the mean squared deviation). argmax/argmin and topk
 * take the first index among equal values; NaN loses every comparison.
 * topk orders by value, descending.
 *
 * Threads (kpar_ranges, ipool.c): each kernel is split by its outputs
 * only (elements, lanes along the axis, rows, (image, channel) pairs; a
 * reduction along one of its kept dimensions), every output computed by
 * one part exactly as the whole kernel computes it, so the results are
 * the same bytes for every thread count.
 */
#include "backends/interpreter/kern.h"

#include <stdlib.h>

/* batchedadd(Dest, Batch B x S..., Slice S...): elements [lo, hi) */
static void batchedadd_range(const void *ctx, size_t lo, size_t hi)
{
	const struct kargs *k = ctx;
	const struct interp_arg *d = &k->op[0], *b = &k->op[1], *s = &k->op[2];
	size_t sl = numel(s->t);
	bool ints = is_int_kind(b->t);
	for (size_t i = lo; i < hi; i++) {
		size_t j = sl ? i % sl : 0;
		if (ints)
			st_i(d->t, d->p, i, (int64_t)((uint64_t)ld_i(b->t, b->p, i) + (uint64_t)ld_i(s->t, s->p, j)));
		else
			st_f(d->t, d->p, i, ld_f(b->t, b->p, i) + ld_f(s->t, s->p, j));
	}
}

/* batchedadd, split by elements */
int kern_batchedadd(const struct kargs *k)
{
	size_t n = numel(k->op[1].t);
	kpar_ranges(batchedadd_range, k, n, (double)n);
	return 0;
}

/* What a reduction over an empty set gives (ONNX's rule since opset 18):
 * the sum 0, the product 1, the maximum the lowest value of the element
 * kind (-inf for floats), the minimum the highest (+inf). */
enum red_empty { RE_ZERO, RE_ONE, RE_LOWEST, RE_HIGHEST };

/* A batched reduction: how a value joins the accumulator (the first value
 * of each output starts it), what an output without values gets, and
 * whether the sum is divided by the count. Integers wrap; float max and
 * min propagate NaN. */
struct red_op {
	int64_t (*join_i)(int64_t acc, int64_t v);
	double (*join_f)(double acc, double v);
	enum red_empty empty;
	bool mean;
};

/* The empty reduction's value in an integer destination of type t (bool,
 * 32 or 64 bits: the integer kinds a reduction takes). */
static int64_t red_empty_i(enum red_empty e, const struct type *t)
{
	bool wide = elem_size((enum elem_kind)t->elem) == 8, is_bool = eclass(t) == EC_B;
	switch (e) {
	case RE_ONE: return 1;
	case RE_LOWEST: return is_bool ? 0 : wide ? INT64_MIN : INT32_MIN;
	case RE_HIGHEST: return is_bool ? 1 : wide ? INT64_MAX : INT32_MAX;
	default: return 0;
	}
}

/* The empty reduction's value in a float destination. */
static double red_empty_f(enum red_empty e)
{
	return e == RE_ONE ? 1.0 : e == RE_LOWEST ? -INFINITY : e == RE_HIGHEST ? INFINITY : 0.0;
}

/* the joins of the five reductions */
static int64_t red_add_i(int64_t a, int64_t v) { return (int64_t)((uint64_t)a + (uint64_t)v); }
static double red_add_f(double a, double v) { return a + v; }
static int64_t red_mul_i(int64_t a, int64_t v) { return (int64_t)((uint64_t)a * (uint64_t)v); }
static double red_mul_f(double a, double v) { return a * v; }
static int64_t red_max_i(int64_t a, int64_t v) { return v > a ? v : a; }
static double red_max_f(double a, double v) { return v != v || a != a ? NAN : v > a ? v : a; }
static int64_t red_min_i(int64_t a, int64_t v) { return v < a ? v : a; }
static double red_min_f(double a, double v) { return v != v || a != a ? NAN : v < a ? v : a; }

static const struct red_op red_add = {red_add_i, red_add_f, RE_ZERO, false};
static const struct red_op red_mean = {red_add_i, red_add_f, RE_ZERO, true};
static const struct red_op red_prod = {red_mul_i, red_mul_f, RE_ONE, false};
static const struct red_op red_max = {red_max_i, red_max_f, RE_LOWEST, false};
static const struct red_op red_min = {red_min_i, red_min_f, RE_HIGHEST, false};

/* A batched reduction in parts: the accumulators of every output, and
 * the split dimension (a kept one; -1 when every dimension is reduced). */
struct red_job {
	const struct kargs *k;
	const struct red_op *op;
	size_t ostr[GLOW_MAX_RANK], xstr[GLOW_MAX_RANK];
	int split;
	bool ints;
	double *af;
	int64_t *ai;
	bool *seen;
};

/* Joins the values of the outputs whose split coordinate is in [lo, hi),
 * walking their part of Batch in its own order. */
static void reduce_range(const void *ctx, size_t lo, size_t hi)
{
	const struct red_job *j = ctx;
	const struct type *t = j->k->op[1].t;
	const void *p = j->k->op[1].p;
	uint64_t d[GLOW_MAX_RANK];
	size_t idx[GLOW_MAX_RANK] = {0}, xi = 0, oi = 0, n = 1;
	for (unsigned i = 0; i < t->rank; i++)
		d[i] = t->dims[i];
	if (j->split >= 0) {
		d[j->split] = hi - lo;
		xi = lo * j->xstr[j->split];
		oi = lo * j->ostr[j->split];
	}
	for (unsigned i = 0; i < t->rank; i++)
		n *= (size_t)d[i];
	for (size_t e = 0; e < n; e++) {
		if (j->ints) {
			int64_t v = ld_i(t, p, xi);
			j->ai[oi] = j->seen[oi] ? j->op->join_i(j->ai[oi], v) : v;
		} else {
			double v = ld_f(t, p, xi);
			j->af[oi] = j->seen[oi] ? j->op->join_f(j->af[oi], v) : v;
		}
		j->seen[oi] = true;
		for (unsigned q = t->rank; q-- > 0;) {
			oi += j->ostr[q];
			xi += j->xstr[q];
			if (++idx[q] < d[q])
				break;
			oi -= j->ostr[q] * (size_t)d[q];
			xi -= j->xstr[q] * (size_t)d[q];
			idx[q] = 0;
		}
	}
}

/* Stores outputs [lo, hi) from their accumulators. */
static void reduce_store(const void *ctx, size_t lo, size_t hi)
{
	const struct red_job *j = ctx;
	const struct interp_arg *d = &j->k->op[0];
	const struct red_op *op = j->op;
	size_t cnt = numel(d->t) ? numel(j->k->op[1].t) / numel(d->t) : 0;
	for (size_t o = lo; o < hi; o++) {
		if (j->ints) {
			int64_t v = j->seen[o] ? j->ai[o] : red_empty_i(op->empty, d->t);
			if (op->mean)
				v = cnt ? v / (int64_t)cnt : 0;
			st_i(d->t, d->p, o, v);
		} else {
			double v = j->seen[o] ? j->af[o] : red_empty_f(op->empty);
			if (op->mean)
				v = cnt ? v / (double)cnt : NAN;
			st_f(d->t, d->p, o, v);
		}
	}
}

/* batchedreduce*(Dest, Batch) {axes}: Batch reduced over axes by op, split
 * along the outermost kept dimension with a part for each thread (else
 * the largest kept one): each output's values are joined in Batch's order
 * by one thread. */
static int reduce(const struct kargs *k, const struct red_op *op)
{
	const struct interp_arg *d = &k->op[0], *b = &k->op[1];
	const struct type *t = b->t;
	const int64_t *axes = KINTS(k, AN_axes);
	unsigned na = KNINTS(k, AN_axes);
	bool drop[GLOW_MAX_RANK] = {false};
	for (unsigned i = 0; i < na; i++)
		drop[axes[i]] = true;
	struct red_job j = {.k = k, .op = op, .split = -1, .ints = is_int_kind(t)};
	/* output stride of each input dimension (0 for reduced ones) */
	size_t s = 1;
	for (unsigned i = t->rank; i-- > 0;) {
		j.ostr[i] = drop[i] ? 0 : s;
		if (!drop[i])
			s *= (size_t)t->dims[i];
	}
	strides_of(t, j.xstr);
	size_t on = numel(d->t), n = numel(t), best = 0;
	const size_t threads = (size_t)kpar_threads();
	for (unsigned i = 0; i < t->rank; i++)
		if (!drop[i] && t->dims[i] > best && (j.split < 0 || best < threads)) {
			j.split = (int)i;
			best = (size_t)t->dims[i];
		}
	j.af = j.ints ? NULL : xmalloc(on * sizeof(double) + 1);
	j.ai = j.ints ? xmalloc(on * sizeof(int64_t) + 1) : NULL;
	j.seen = xcalloc(on + 1, 1);
	if (j.split < 0)
		reduce_range(&j, 0, 1);
	else
		kpar_ranges(reduce_range, &j, best, (double)n);
	kpar_ranges(reduce_store, &j, on, (double)on);
	free(j.af);
	free(j.ai);
	free(j.seen);
	return 0;
}

/* batchedreduce{add,mean,prod,max,min}(Dest, Batch) {axes} */
int kern_batchedreduceadd(const struct kargs *k) { return reduce(k, &red_add); }
int kern_batchedreducemean(const struct kargs *k) { return reduce(k, &red_mean); }
int kern_batchedreduceprod(const struct kargs *k) { return reduce(k, &red_prod); }
int kern_batchedreducemax(const struct kargs *k) { return reduce(k, &red_max); }
int kern_batchedreducemin(const struct kargs *k) { return reduce(k, &red_min); }

/* A tensor split at one axis into outer x len x inner: the outer * inner
 * lanes along the axis, lane l holding the len elements
 * lane_base(l) + j * inner. */
struct lanes {
	size_t outer, len, inner;
};

static struct lanes lanes_along(const struct type *t, unsigned axis)
{
	struct lanes a;
	ksplit_axis(t, axis, &a.outer, &a.len, &a.inner);
	return a;
}

/* The first element of lane l of a (lanes in outer-major order). */
static size_t lane_base(const struct lanes *a, size_t l) { return l / a->inner * a->len * a->inner + l % a->inner; }

/* A kernel over the lanes along its axis attribute: the lanes, the
 * kernel and its switches. */
struct lane_job {
	const struct kargs *k;
	struct lanes a;
	bool flag;
};

/* softmax (flag false) or logsoftmax of lanes [lo, hi) */
static void softmax_lanes(const void *ctx, size_t lo, size_t hi)
{
	const struct lane_job *lj = ctx;
	const struct interp_arg *d = &lj->k->op[0], *s = &lj->k->op[1];
	size_t len = lj->a.len, inner = lj->a.inner;
	for (size_t l = lo; l < hi; l++) {
		size_t base = lane_base(&lj->a, l);
		double mx = -INFINITY;
		for (size_t j = 0; j < len; j++) {
			double v = ld_f(s->t, s->p, base + j * inner);
			if (v > mx || v != v)
				mx = v;
		}
		double sum = 0;
		for (size_t j = 0; j < len; j++)
			sum += exp(ld_f(s->t, s->p, base + j * inner) - mx);
		double ls = log(sum);
		for (size_t j = 0; j < len; j++) {
			double x = ld_f(s->t, s->p, base + j * inner) - mx;
			st_f(d->t, d->p, base + j * inner, lj->flag ? x - ls : exp(x) / sum);
		}
	}
}

/* Runs fn over the lanes of operand 1 along the axis attribute, split by
 * lanes; `per` weighs an element (an exponential: several). */
static void by_lanes(const struct kargs *k, void (*fn)(const void *, size_t, size_t), bool flag, double per)
{
	struct lane_job lj = {k, lanes_along(k->op[1].t, (unsigned)KI(k, AN_axis)), flag};
	kpar_ranges(fn, &lj, lj.a.outer * lj.a.inner, (double)numel(k->op[1].t) * per);
}

/* softmax or (log_) logsoftmax along attribute axis */
static int softmax(const struct kargs *k, bool log_)
{
	by_lanes(k, softmax_lanes, log_, 4.0);
	return 0;
}

/* softmax(Dest, Src) {axis} */
int kern_softmax(const struct kargs *k) { return softmax(k, false); }

/* logsoftmax(Dest, Src) {axis} */
int kern_logsoftmax(const struct kargs *k) { return softmax(k, true); }

/* A normalization's parts: rows of `inner` values of a tensor outer x c x
 * inner (batch normalization: rows (o, ch) with the channel's mul and add;
 * layer normalization: c = 1). */
struct norm_job {
	const struct kargs *k;
	size_t c, inner;
	double *mul, *add, eps;
	const size_t *pos; /* instance normalization: the spatial offsets */
	size_t str0, strc, plane;
};

/* batch normalization of rows [lo, hi) */
static void batchnorm_rows(const void *ctx, size_t lo, size_t hi)
{
	const struct norm_job *j = ctx;
	const struct interp_arg *d = &j->k->op[0], *s = &j->k->op[1];
	for (size_t r = lo; r < hi; r++) {
		double mul = j->mul[r % j->c], add = j->add[r % j->c];
		for (size_t in = 0; in < j->inner; in++) {
			size_t i = r * j->inner + in;
			st_f(d->t, d->p, i, ld_f(s->t, s->p, i) * mul + add);
		}
	}
}

/* batchnormalization(Dest, Src, Scale, Bias, Mean, Var) {channel_idx, epsilon}:
 * each channel's multiplier and addend first, then the rows in parts */
int kern_batchnormalization(const struct kargs *k)
{
	const struct interp_arg *s = &k->op[1], *sc = &k->op[2], *bi = &k->op[3], *me = &k->op[4], *va = &k->op[5];
	struct lanes a = lanes_along(s->t, (unsigned)KI(k, AN_channel_idx));
	struct norm_job j = {.k = k, .c = a.len, .inner = a.inner};
	double eps = KF(k, AN_epsilon);
	j.mul = xmalloc(2 * a.len * sizeof(double) + 1);
	j.add = j.mul + a.len;
	for (size_t ch = 0; ch < a.len; ch++) {
		j.mul[ch] = ld_f(sc->t, sc->p, ch) / sqrt(ld_f(va->t, va->p, ch) + eps);
		j.add[ch] = ld_f(bi->t, bi->p, ch) - ld_f(me->t, me->p, ch) * j.mul[ch];
	}
	kpar_ranges(batchnorm_rows, &j, a.outer * a.len, (double)numel(s->t));
	free(j.mul);
	return 0;
}

/* mean and variance of the n values at base + j * step */
static void moments(const struct interp_arg *s, size_t base, size_t n, size_t step, double *mean, double *var)
{
	double sum = 0, sq = 0;
	for (size_t j = 0; j < n; j++)
		sum += ld_f(s->t, s->p, base + j * step);
	double m = n ? sum / (double)n : 0;
	for (size_t j = 0; j < n; j++) {
		double x = ld_f(s->t, s->p, base + j * step) - m;
		sq += x * x;
	}
	*mean = m;
	*var = n ? sq / (double)n : 0;
}

/* layer normalization of rows [lo, hi) */
static void layernorm_rows(const void *ctx, size_t lo, size_t hi)
{
	const struct norm_job *jb = ctx;
	const struct interp_arg *d = &jb->k->op[0], *s = &jb->k->op[1], *sc = &jb->k->op[2], *bi = &jb->k->op[3];
	const size_t inner = jb->inner;
	for (size_t o = lo; o < hi; o++) {
		double m, v;
		moments(s, o * inner, inner, 1, &m, &v);
		double r = 1 / sqrt(v + jb->eps);
		for (size_t j = 0; j < inner; j++) {
			size_t i = o * inner + j;
			st_f(d->t, d->p, i, (ld_f(s->t, s->p, i) - m) * r * ld_f(sc->t, sc->p, j) + ld_f(bi->t, bi->p, j));
		}
	}
}

/* layernormalization(Dest, Src, Scale, Bias) {axis, epsilon}: by rows */
int kern_layernormalization(const struct kargs *k)
{
	const struct interp_arg *s = &k->op[1];
	unsigned axis = (unsigned)KI(k, AN_axis);
	size_t outer = 1, inner = 1;
	for (unsigned i = 0; i < axis; i++)
		outer *= (size_t)s->t->dims[i];
	for (unsigned i = axis; i < s->t->rank; i++)
		inner *= (size_t)s->t->dims[i];
	struct norm_job j = {.k = k, .c = 1, .inner = inner, .eps = KF(k, AN_epsilon)};
	kpar_ranges(layernorm_rows, &j, outer, (double)numel(s->t) * 3);
	return 0;
}

/* instancenormalization(Dest, Src, Scale, Bias) {channel_idx, epsilon}:
 * dimension 0 is the batch; every dimension but the batch and the channel
 * is spatial. Split by the pairs (image, channel). */
static void instancenorm_pairs(const void *ctx, size_t lo, size_t hi)
{
	const struct norm_job *j = ctx;
	const struct interp_arg *d = &j->k->op[0], *s = &j->k->op[1], *sc = &j->k->op[2], *bi = &j->k->op[3];
	const struct type *t = s->t;
	const size_t plane = j->plane, *pos = j->pos;
	for (size_t q = lo; q < hi; q++) {
		size_t c = q % j->c, base = q / j->c * j->str0 + c * j->strc;
		double sum = 0, sq = 0;
		for (size_t p = 0; p < plane; p++)
			sum += ld_f(t, s->p, base + pos[p]);
		double m = plane ? sum / (double)plane : 0;
		for (size_t p = 0; p < plane; p++) {
			double x = ld_f(t, s->p, base + pos[p]) - m;
			sq += x * x;
		}
		double r = 1 / sqrt((plane ? sq / (double)plane : 0) + j->eps);
		double g = ld_f(sc->t, sc->p, c), b = ld_f(bi->t, bi->p, c);
		for (size_t p = 0; p < plane; p++)
			st_f(d->t, d->p, base + pos[p], (ld_f(t, s->p, base + pos[p]) - m) * r * g + b);
	}
}

/* instancenormalization: the spatial offsets once, then the pairs in
 * parts */
int kern_instancenormalization(const struct kargs *k)
{
	const struct interp_arg *s = &k->op[1];
	const struct type *t = s->t;
	unsigned ci = (unsigned)KI(k, AN_channel_idx);
	double eps = KF(k, AN_epsilon);
	size_t str[GLOW_MAX_RANK];
	strides_of(t, str);
	size_t N = (size_t)t->dims[0], C = (size_t)t->dims[ci], nc = N * C, plane = nc ? numel(t) / nc : 0;
	size_t *pos = xmalloc(plane * sizeof(size_t) + 1);
	/* offsets of the spatial positions relative to (n, c) */
	size_t idx[GLOW_MAX_RANK] = {0};
	for (size_t p = 0; p < plane; p++) {
		size_t off = 0;
		for (unsigned i = 1; i < t->rank; i++)
			if (i != ci)
				off += idx[i] * str[i];
		pos[p] = off;
		for (unsigned i = t->rank; i-- > 1;) {
			if (i == ci)
				continue;
			if (++idx[i] < t->dims[i])
				break;
			idx[i] = 0;
		}
	}
	struct norm_job j = {.k = k, .c = C, .eps = eps, .pos = pos, .str0 = str[0], .strc = str[ci], .plane = plane};
	kpar_ranges(instancenorm_pairs, &j, nc, (double)numel(t) * 3);
	free(pos);
	return 0;
}

/* local response normalization of elements [lo, hi) */
static void lrn_range(const void *ctx, size_t lo, size_t hi)
{
	const struct kargs *k = ctx;
	const struct interp_arg *d = &k->op[0], *s = &k->op[1];
	size_t C = (size_t)s->t->dims[3];
	int64_t hw = KI(k, AN_half_window_size);
	double alpha = KF(k, AN_alpha), beta = KF(k, AN_beta), kk = KF(k, AN_k);
	double size = (double)(2 * hw + 1);
	for (size_t i = lo; i < hi; i++) {
		size_t c = i % C, base = i - c;
		double sq = 0;
		for (int64_t j = (int64_t)c - hw; j <= (int64_t)c + hw; j++)
			if (j >= 0 && j < (int64_t)C) {
				double x = ld_f(s->t, s->p, base + (size_t)j);
				sq += x * x;
			}
		st_f(d->t, d->p, i, ld_f(s->t, s->p, i) / pow(kk + alpha / size * sq, beta));
	}
}

/* localresponsenormalization(Dest, Src N x H x W x C): by elements */
int kern_localresponsenormalization(const struct kargs *k)
{
	size_t n = numel(k->op[1].t);
	kpar_ranges(lrn_range, k, n, (double)n * (double)(2 * KI(k, AN_half_window_size) + 5));
	return 0;
}

/* crossentropyloss(CE <1>, P N x C, Labels N) */
int kern_crossentropyloss(const struct kargs *k)
{
	const struct interp_arg *ce = &k->op[0], *p = &k->op[1], *l = &k->op[2];
	size_t N = (size_t)p->t->dims[0], C = (size_t)p->t->dims[1];
	double sum = 0;
	for (size_t i = 0; i < N; i++) {
		int64_t c = ld_i(l->t, l->p, i);
		if (c < 0 || c >= (int64_t)C)
			return kerror(k, "label %lld of row %zu is out of range [0, %zu)", (long long)c, i, C);
		sum -= log(ld_f(p->t, p->p, i * C + (size_t)c));
	}
	st_f(ce->t, ce->p, 0, sum);
	return 0;
}

/* a beats b in argmax (max) or argmin (!max) order; NaN never beats */
static bool beats(const struct type *t, const void *p, size_t a, size_t b, bool max)
{
	if (is_int_kind(t) || elem_is_quantized(ekind(t))) {
		int64_t x = ld_i(t, p, a), y = ld_i(t, p, b);
		return max ? x > y : x < y;
	}
	double x = ld_f(t, p, a), y = ld_f(t, p, b);
	if (y != y)
		return x == x;
	return max ? x > y : x < y;
}

/* argmax (flag) or argmin of lanes [lo, hi) */
static void arg_lanes(const void *ctx, size_t lo, size_t hi)
{
	const struct lane_job *lj = ctx;
	const struct interp_arg *d = &lj->k->op[0], *s = &lj->k->op[1];
	const struct lanes *a = &lj->a;
	for (size_t l = lo; l < hi; l++) {
		size_t base = lane_base(a, l), best = 0;
		for (size_t j = 1; j < a->len; j++)
			if (beats(s->t, s->p, base + j * a->inner, base + best * a->inner, lj->flag))
				best = j;
		st_i(d->t, d->p, l, (int64_t)best);
	}
}

/* argmax (max) or argmin along attribute axis */
static int arg_reduce(const struct kargs *k, bool max)
{
	by_lanes(k, arg_lanes, max, 1.0);
	return 0;
}

/* argmax(Dest, Src) {axis, keep_dims} */
int kern_argmax(const struct kargs *k) { return arg_reduce(k, true); }

/* argmin(Dest, Src) {axis, keep_dims} */
int kern_argmin(const struct kargs *k) { return arg_reduce(k, false); }

/* topk of rows [lo, hi) (each part with its own order) */
static void topk_rows(const void *ctx, size_t lo, size_t hi)
{
	const struct kargs *k = ctx;
	const struct interp_arg *v = &k->op[0], *ix = &k->op[1], *s = &k->op[2];
	size_t len = (size_t)s->t->dims[s->t->rank - 1], kk = (size_t)KI(k, AN_k), es = esize(s->t);
	size_t *order = xmalloc(len * sizeof(size_t) + 1);
	for (size_t r = lo; r < hi; r++) {
		size_t base = r * len;
		/* selection of the k best, stable: ties keep the lower index */
		for (size_t j = 0; j < len; j++)
			order[j] = base + j;
		for (size_t j = 0; j < kk; j++) {
			size_t b = j;
			for (size_t m = j + 1; m < len; m++)
				if (beats(s->t, s->p, order[m], order[b], true) ||
				    (!beats(s->t, s->p, order[b], order[m], true) && order[m] < order[b]))
					b = m;
			size_t tmp = order[j];
			order[j] = order[b];
			order[b] = tmp;
			cp_elem(v->p, r * kk + j, s->p, order[j], es);
			st_i(ix->t, ix->p, r * kk + j, (int64_t)(order[j] - base));
		}
	}
	free(order);
}

/* topk(Values, Indices, Src, Scratch) {k}: along the last dimension, by
 * rows */
int kern_topk(const struct kargs *k)
{
	const struct type *t = k->op[2].t;
	size_t len = (size_t)t->dims[t->rank - 1];
	kpar_ranges(topk_rows, k, len ? numel(t) / len : 0, (double)numel(t) * (double)KI(k, AN_k));
	return 0;
}

/* cumsum and cumprod (Dest, Src) {axis, exclusive, reverse} of lanes
 * [lo, hi): running sums (flag false) or products (flag true) from 0 or 1,
 * in double (floats) or wrapping int64 (integers) */
static void cum_lanes(const void *ctx, size_t lo, size_t hi)
{
	const struct lane_job *lj = ctx;
	const struct interp_arg *d = &lj->k->op[0], *s = &lj->k->op[1];
	const struct lanes *a = &lj->a;
	bool prod = lj->flag;
	bool excl = KI(lj->k, AN_exclusive), rev = KI(lj->k, AN_reverse), ints = is_int_kind(s->t);
	for (size_t l = lo; l < hi; l++) {
		size_t base = lane_base(a, l);
		double af = prod;
		uint64_t ai = prod;
		for (size_t jj = 0; jj < a->len; jj++) {
			size_t j = rev ? a->len - 1 - jj : jj, i = base + j * a->inner;
			double xf = ints ? 0 : ld_f(s->t, s->p, i), pf = prod ? af * xf : af + xf;
			uint64_t xi = ints ? (uint64_t)ld_i(s->t, s->p, i) : 0, pi = prod ? ai * xi : ai + xi;
			if (ints)
				st_i(d->t, d->p, i, (int64_t)(excl ? ai : pi));
			else
				st_f(d->t, d->p, i, excl ? af : pf);
			af = pf;
			ai = pi;
		}
	}
}

/* cumsum and cumprod: by lanes */
int kern_cumsum(const struct kargs *k)
{
	by_lanes(k, cum_lanes, false, 1.0);
	return 0;
}

int kern_cumprod(const struct kargs *k)
{
	by_lanes(k, cum_lanes, true, 1.0);
	return 0;
}
