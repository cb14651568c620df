/* k_ew.c - elementwise kernels: arithmetic, comparisons, logic, unary math,
 * activations, select, conversions and quantization, regression, sgd.
 *
 * Every operand has the shape of the first, so element i of each operand
 * goes with element i of the result. Float and quantized kinds compute on
 * real values in double and store once (st_f requantizes with the result's
 * own scale and offset); integer and index kinds compute in int64 with the
 * result wrapped to its width, and division or remainder by zero gives 0.
 * Max and Min propagate NaN. Round is half to even. Mod takes the sign of
 * the divisor (fmod, plus the divisor when the signs differ); bitshift
 * shifts the bits of the element's width logically. Gelu (none) is
 * x/2 (1 + erf(x/sqrt 2)); (tanh) the usual tanh approximation.
 * Sigmoid and softplus are evaluated in their overflow-free forms.
 */
#include "backends/interpreter/kern.h"

static const double SQRT1_2 = 0.70710678118654752440;
static const double SQRT_2_PI = 0.79788456080286535588; /* sqrt(2/pi) */

static double sigmoid(double x)
{
	if (x >= 0)
		return 1 / (1 + exp(-x));
	double e = exp(x);
	return e / (1 + e);
}

/* the real-valued function of a float unary kind */
static double unary_f(unsigned kind, double x, const struct kargs *k)
{
	switch (kind) {
	case IK_neg: return -x;
	case IK_abs: return fabs(x);
	case IK_exp: return exp(x);
	case IK_log: return log(x);
	case IK_sqrt: return sqrt(x);
	case IK_rsqrt: return 1 / sqrt(x);
	case IK_reciprocal: return 1 / x;
	case IK_floor: return floor(x);
	case IK_ceil: return ceil(x);
	case IK_round: return nearbyint(x);
	case IK_sign: return x > 0 ? 1 : x < 0 ? -1 : x; /* keeps 0, -0 and NaN */
	case IK_sin: return sin(x);
	case IK_cos: return cos(x);
	case IK_erf: return erf(x);
	case IK_tan: return tan(x);
	case IK_asin: return asin(x);
	case IK_acos: return acos(x);
	case IK_atan: return atan(x);
	case IK_sinh: return sinh(x);
	case IK_cosh: return cosh(x);
	case IK_asinh: return asinh(x);
	case IK_acosh: return acosh(x);
	case IK_atanh: return atanh(x);
	case IK_relu: return x > 0 ? x : 0;
	case IK_leakyrelu: return x >= 0 ? x : KF(k, "alpha") * x;
	case IK_sigmoid: return sigmoid(x);
	case IK_tanh: return tanh(x);
	case IK_clip: {
		double lo = KF(k, "min"), hi = KF(k, "max");
		return x < lo ? lo : x > hi ? hi : x;
	}
	case IK_gelu:
		if (KI(k, "approximate") == 0)
			return 0.5 * x * (1 + erf(x * SQRT1_2));
		return 0.5 * x * (1 + tanh(SQRT_2_PI * (x + 0.044715 * x * x * x)));
	case IK_hardswish: {
		double r = x + 3;
		r = r < 0 ? 0 : r > 6 ? 6 : r;
		return x * r / 6;
	}
	case IK_swish: return x * sigmoid(x);
	case IK_softplus: return x > 0 ? x + log1p(exp(-x)) : log1p(exp(x));
	case IK_elu: return x > 0 ? x : KF(k, "alpha") * (exp(x) - 1);
	default: unreachable("not a float unary kind");
	}
}

/* the integer function of an integer unary kind (neg, abs, sign, relu,
 * leakyrelu, clip) */
static int64_t unary_i(unsigned kind, int64_t x, const struct kargs *k)
{
	switch (kind) {
	case IK_neg: return (int64_t)(0 - (uint64_t)x);
	case IK_abs: return x < 0 ? (int64_t)(0 - (uint64_t)x) : x;
	case IK_sign: return x > 0 ? 1 : x < 0 ? -1 : 0;
	case IK_relu: return x > 0 ? x : 0;
	case IK_leakyrelu: return x >= 0 ? x : sat_to_i64(KF(k, "alpha") * (double)x, -9223372036854775808.0,
						      9223372036854774784.0);
	case IK_clip: {
		double lo = ceil(KF(k, "min")), hi = floor(KF(k, "max"));
		if ((double)x < lo)
			return sat_to_i64(lo, -9223372036854775808.0, 9223372036854774784.0);
		if ((double)x > hi)
			return sat_to_i64(hi, -9223372036854775808.0, 9223372036854774784.0);
		return x;
	}
	default: unreachable("not an integer unary kind");
	}
}

static int unary(const struct kargs *k)
{
	const struct interp_arg *d = &k->op[0], *s = &k->op[1];
	size_t n = numel(s->t);
	if (k->kind == IK_not) {
		for (size_t i = 0; i < n; i++)
			st_i(d->t, d->p, i, !ld_i(s->t, s->p, i));
		return 0;
	}
	if (k->kind == IK_isnan) {
		for (size_t i = 0; i < n; i++)
			st_i(d->t, d->p, i, isnan(ld_f(s->t, s->p, i)));
		return 0;
	}
	if (k->kind == IK_isinf) {
		bool pos = KI(k, "detect_positive"), neg = KI(k, "detect_negative");
		for (size_t i = 0; i < n; i++) {
			double x = ld_f(s->t, s->p, i);
			st_i(d->t, d->p, i, isinf(x) && (x > 0 ? pos : neg));
		}
		return 0;
	}
	if (is_int_kind(s->t)) {
		for (size_t i = 0; i < n; i++)
			st_i(d->t, d->p, i, unary_i(k->kind, ld_i(s->t, s->p, i), k));
		return 0;
	}
	if (k->kind == IK_relu && ekind(s->t) == EK_FLOAT && ekind(d->t) == EK_FLOAT) {
		const float *x = s->p;
		float *y = d->p;
		for (size_t i = 0; i < n; i++)
			y[i] = x[i] > 0 ? x[i] : 0;
		return 0;
	}
	for (size_t i = 0; i < n; i++)
		st_f(d->t, d->p, i, unary_f(k->kind, ld_f(s->t, s->p, i), k));
	return 0;
}

static double binary_f(unsigned kind, double a, double b)
{
	switch (kind) {
	case IK_add: return a + b;
	case IK_sub: return a - b;
	case IK_mul: return a * b;
	case IK_div: return a / b;
	case IK_max: return a != a || b != b ? NAN : a > b ? a : b;
	case IK_min: return a != a || b != b ? NAN : a < b ? a : b;
	case IK_pow: return pow(a, b);
	case IK_fmod: return fmod(a, b);
	case IK_mod: {
		double r = fmod(a, b);
		return r != 0 && (r < 0) != (b < 0) ? r + b : r;
	}
	case IK_prelu: return a >= 0 ? a : a * b;
	case IK_regression: return a - b;
	default: unreachable("not a float binary kind");
	}
}

static int64_t ipow(int64_t a, int64_t b)
{
	if (b < 0)
		return a == 1 ? 1 : a == -1 ? (b % 2 ? -1 : 1) : 0;
	uint64_t r = 1, x = (uint64_t)a;
	for (uint64_t e = (uint64_t)b; e; e >>= 1, x *= x)
		if (e & 1)
			r *= x;
	return (int64_t)r;
}

static int64_t binary_i(unsigned kind, int64_t a, int64_t b)
{
	uint64_t ua = (uint64_t)a, ub = (uint64_t)b;
	switch (kind) {
	case IK_add: return (int64_t)(ua + ub);
	case IK_sub: return (int64_t)(ua - ub);
	case IK_mul: return (int64_t)(ua * ub);
	case IK_div: return b == 0 ? 0 : (b == -1 ? (int64_t)(0 - ua) : a / b);
	case IK_fmod: return b == 0 || b == -1 ? 0 : a % b;
	case IK_mod: {
		int64_t r = b == 0 || b == -1 ? 0 : a % b;
		return r != 0 && (r < 0) != (b < 0) ? (int64_t)((uint64_t)r + ub) : r;
	}
	case IK_max: return a > b ? a : b;
	case IK_min: return a < b ? a : b;
	case IK_pow: return ipow(a, b);
	case IK_prelu: return a >= 0 ? a : (int64_t)(ua * ub);
	default: unreachable("not an integer binary kind");
	}
}

/* bitshift(Dest, LHS, RHS) {direction}: the LHS bits of its width shifted
 * logically; a shift by the width or more (or a negative one) gives 0 */
static int bitshift(const struct kargs *k)
{
	const struct interp_arg *d = &k->op[0], *a = &k->op[1], *b = &k->op[2];
	size_t n = numel(a->t);
	unsigned width = (unsigned)esize(a->t) * 8;
	uint64_t mask = width == 64 ? UINT64_MAX : ((uint64_t)1 << width) - 1;
	bool left = KI(k, "direction") == 0;
	for (size_t i = 0; i < n; i++) {
		uint64_t x = (uint64_t)ld_i(a->t, a->p, i) & mask;
		int64_t sh = ld_i(b->t, b->p, i);
		uint64_t r = sh < 0 || sh >= (int64_t)width ? 0 : left ? (x << sh) & mask : x >> sh;
		st_i(d->t, d->p, i, (int64_t)r);
	}
	return 0;
}

static int binary(const struct kargs *k)
{
	const struct interp_arg *d = &k->op[0], *a = &k->op[1], *b = &k->op[2];
	size_t n = numel(a->t);
	if (is_int_kind(a->t)) {
		for (size_t i = 0; i < n; i++)
			st_i(d->t, d->p, i, binary_i(k->kind, ld_i(a->t, a->p, i), ld_i(b->t, b->p, i)));
		return 0;
	}
	if (k->kind == IK_add && ekind(a->t) == EK_FLOAT && ekind(b->t) == EK_FLOAT && ekind(d->t) == EK_FLOAT) {
		const float *x = a->p, *y = b->p;
		float *z = d->p;
		for (size_t i = 0; i < n; i++)
			z[i] = x[i] + y[i];
		return 0;
	}
	for (size_t i = 0; i < n; i++)
		st_f(d->t, d->p, i, binary_f(k->kind, ld_f(a->t, a->p, i), ld_f(b->t, b->p, i)));
	return 0;
}

static int compare(const struct kargs *k)
{
	const struct interp_arg *d = &k->op[0], *a = &k->op[1], *b = &k->op[2];
	size_t n = numel(a->t);
	bool ints = is_int_kind(a->t);
	for (size_t i = 0; i < n; i++) {
		bool r;
		if (ints) {
			int64_t x = ld_i(a->t, a->p, i), y = ld_i(b->t, b->p, i);
			r = k->kind == IK_cmpeq ? x == y : k->kind == IK_cmpneq ? x != y : k->kind == IK_cmplt ? x < y : x <= y;
		} else {
			double x = ld_f(a->t, a->p, i), y = ld_f(b->t, b->p, i);
			r = k->kind == IK_cmpeq ? x == y : k->kind == IK_cmpneq ? x != y : k->kind == IK_cmplt ? x < y : x <= y;
		}
		st_i(d->t, d->p, i, r);
	}
	return 0;
}

static int logical(const struct kargs *k)
{
	const struct interp_arg *d = &k->op[0], *a = &k->op[1], *b = &k->op[2];
	size_t n = numel(a->t);
	for (size_t i = 0; i < n; i++) {
		bool x = ld_i(a->t, a->p, i), y = ld_i(b->t, b->p, i);
		st_i(d->t, d->p, i, k->kind == IK_and ? x && y : k->kind == IK_or ? x || y : x != y);
	}
	return 0;
}

/* select(Dest, Cond, LHS, RHS): LHS, RHS and Dest share one element type */
static int select_(const struct kargs *k)
{
	const struct interp_arg *d = &k->op[0], *c = &k->op[1], *a = &k->op[2], *b = &k->op[3];
	size_t n = numel(d->t), es = esize(d->t);
	for (size_t i = 0; i < n; i++) {
		if (ld_i(c->t, c->p, i))
			cp_elem(d->p, i, a->p, i, es);
		else
			cp_elem(d->p, i, b->p, i, es);
	}
	return 0;
}

/* convertto, quantize, dequantize, rescalequantized: by real value, except
 * between integer-exact kinds (exact, wrapped to the destination's width) */
static int convert(const struct kargs *k)
{
	const struct interp_arg *d = &k->op[0], *s = &k->op[1];
	size_t n = numel(s->t);
	if (is_int_kind(s->t) && (is_int_kind(d->t) || ekind(d->t) == EK_BOOL)) {
		for (size_t i = 0; i < n; i++)
			st_i(d->t, d->p, i, ld_i(s->t, s->p, i));
		return 0;
	}
	if (is_int_kind(s->t)) { /* i64 to float rounds once */
		for (size_t i = 0; i < n; i++)
			st_f(d->t, d->p, i, (double)ld_i(s->t, s->p, i));
		return 0;
	}
	for (size_t i = 0; i < n; i++)
		st_f(d->t, d->p, i, ld_f(s->t, s->p, i));
	return 0;
}

/* sgd(Dest, Gradient, Weight): Dest = W - lr * (G / batch_size + l1 sign(W)
 * + l2 W). The instruction carries no momentum buffer; one step from a
 * zero momentum sum is the same update, which is what this computes. */
static int sgd(const struct kargs *k)
{
	const struct interp_arg *d = &k->op[0], *g = &k->op[1], *w = &k->op[2];
	double l1 = KF(k, "l1_decay"), l2 = KF(k, "l2_decay"), lr = KF(k, "learning_rate");
	double bs = (double)KI(k, "batch_size");
	size_t n = numel(w->t);
	for (size_t i = 0; i < n; i++) {
		double wv = ld_f(w->t, w->p, i), gv = ld_f(g->t, g->p, i);
		double sg = wv > 0 ? 1 : wv < 0 ? -1 : 0;
		st_f(d->t, d->p, i, wv - lr * (gv / bs + l1 * sg + l2 * wv));
	}
	return 0;
}

int kern_ew(const struct kargs *k)
{
	switch (k->kind) {
	case IK_add: case IK_sub: case IK_mul: case IK_div: case IK_max: case IK_min: case IK_pow: case IK_fmod:
	case IK_mod: case IK_prelu: case IK_regression:
		return binary(k);
	case IK_bitshift: return bitshift(k);
	case IK_cmpeq: case IK_cmpneq: case IK_cmplt: case IK_cmplte: return compare(k);
	case IK_and: case IK_or: case IK_xor: return logical(k);
	case IK_not: case IK_neg: case IK_abs: case IK_exp: case IK_log: case IK_sqrt: case IK_rsqrt:
	case IK_reciprocal: case IK_floor: case IK_ceil: case IK_round: case IK_sign: case IK_sin: case IK_cos:
	case IK_erf: case IK_isnan: case IK_relu: case IK_leakyrelu: case IK_sigmoid: case IK_tanh: case IK_clip:
	case IK_gelu: case IK_hardswish: case IK_swish: case IK_softplus: case IK_elu: case IK_isinf: case IK_tan:
	case IK_asin: case IK_acos: case IK_atan: case IK_sinh: case IK_cosh: case IK_asinh: case IK_acosh:
	case IK_atanh:
		return unary(k);
	case IK_select: return select_(k);
	case IK_convertto: case IK_quantize: case IK_dequantize: case IK_rescalequantized: return convert(k);
	case IK_sgd: return sgd(k);
	default: return 1;
	}
}
