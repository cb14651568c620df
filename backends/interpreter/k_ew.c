/* k_ew.c - elementwise kernels: every row of lib/ir/EW.def compiled as C,
 * and the kinds EW.def leaves to each backend (select, conversions, copy).
 * exec.c dispatches to them by EW.def's rows.
 *
 * Every operand has the shape of the first, so element i of each operand
 * goes with element i of the result. A row's Real expression runs on the
 * real values in double (ld_f: quantized kinds dequantize) and stores once
 * (st_f requantizes with the result's own scale and offset); its Int
 * expression runs on int64 (ld_i) and the result is wrapped to its width
 * (st_i). An integer, index or bool first operand takes the Int column.
 */
#include "backends/interpreter/kern.h"
#include "ir/ew.h"
#include "support/scalar.h" /* the sc_ functions EW.def names, shared with the C bundles */

/* ---- the functions EW.def's expressions call (EW_FN) that neither libm
 * nor support/scalar.h has ---- */

static double sigmoid(double x)
{
	if (x >= 0)
		return 1 / (1 + exp(-x));
	double e = exp(x);
	return e / (1 + e);
}

static double fmod_floor(double a, double b)
{
	double r = fmod(a, b);
	return r != 0 && (r < 0) != (b < 0) ? r + b : r;
}

/* ---- the split among the threads ---- */

/* Elements [lo, hi) of an elementwise kernel; 0, or -1 after kerror. */
typedef int kew_range_fn(const struct kargs *k, size_t lo, size_t hi);

struct kew_job {
	const struct kargs *k;
	kew_range_fn *fn;
};

/* One range of kew_split. */
static void kew_part(const void *ctx, size_t lo, size_t hi)
{
	const struct kew_job *j = ctx;
	(void)j->fn(j->k, lo, hi); /* the kinds were checked: no error left */
}

/* Runs fn over every element (those of operand 1), split among the
 * threads by contiguous ranges: each element is computed once, as one
 * thread computes it. The kinds are checked first, on an empty range. */
static int kew_split(const struct kargs *k, kew_range_fn *fn)
{
	if (fn(k, 0, 0))
		return -1;
	const struct kew_job j = {k, fn};
	const size_t n = numel(k->op[1].t);
	kpar_ranges(kew_part, &j, n, (double)n);
	return 0;
}

/* ---- one kernel per row ---- */

/* the names EW.def's expressions use besides A, B and the parameters */
#define T int64_t
#define K(x) x
#define IF_ATTR(p, e1, e0) ((p) ? (e1) : (e0))

/* A column is REAL(expr), INT(expr) or NONE: "has, expr" */
#define EW_COL_REAL(...) 1, __VA_ARGS__
#define EW_COL_INT(...) 1, __VA_ARGS__
#define EW_COL_NONE 0, 0
#define EW_IF_1(...) __VA_ARGS__
#define EW_IF_0(...)

/* the parameters, bound from the attributes by position (ew_check_table
 * has checked that the names are the attributes') */
#define EW_PT_F(n) double, n, f
#define EW_PT_I(n) int64_t, n, i
#define EW_BIND(i, p) EW_BIND_(i, EW_PT_##p)
#define EW_BIND_(i, ...) EW_BIND__(i, __VA_ARGS__)
#define EW_BIND__(i, ty, n, fld) const ty n = ew_k->a[i].fld; (void)n;
#define NOPARAM
#define PARAM1(p) EW_BIND(0, p)
#define PARAM2(p, q) PARAM1(p) EW_BIND(1, q)
#define PARAM3(p, q, r) PARAM2(p, q) EW_BIND(2, r)
#define PARAM4(p, q, r, s) PARAM3(p, q, r) EW_BIND(3, s)
#define PARAM5(p, q, r, s, u) PARAM4(p, q, r, s) EW_BIND(4, u)

#define EW_LD_F1 const double A = ld_f(ew_a->t, ew_a->p, ew_i);
#define EW_LD_F2 EW_LD_F1 const double B = ld_f(ew_b->t, ew_b->p, ew_i);
#define EW_LD_FLOAT1 const double A = ew_x[ew_i];
#define EW_LD_FLOAT2 const double A = ew_x[ew_i], B = ew_z[ew_i];
#define EW_LD_I1 const int64_t A = ld_i(ew_a->t, ew_a->p, ew_i);
#define EW_LD_I2 EW_LD_I1 const int64_t B = ld_i(ew_b->t, ew_b->p, ew_i);

/* Real, result of the operands' kind: all float tensors skip the element
 * access by kind (the same double computation, stored as st_f would) */
#define EW_REAL_SAME(N, e)                                                                                   \
	if (ekind(ew_d->t) == EK_FLOAT && ekind(ew_a->t) == EK_FLOAT && ekind(ew_b->t) == EK_FLOAT) {         \
		float *ew_y = ew_d->p;                                                                       \
		const float *ew_x = ew_a->p, *ew_z = ew_b->p;                                                \
		(void)ew_z;                                                                                  \
		for (size_t ew_i = ew_lo; ew_i < ew_n; ew_i++) {                                             \
			EW_LD_FLOAT##N ew_y[ew_i] = (float)(e);                                              \
		}                                                                                            \
		return 0;                                                                                    \
	}                                                                                                    \
	for (size_t ew_i = ew_lo; ew_i < ew_n; ew_i++) {                                                     \
		EW_LD_F##N st_f(ew_d->t, ew_d->p, ew_i, (e));                                                \
	}                                                                                                    \
	return 0;
#define EW_REAL_BOOL(N, e)                                                                                   \
	for (size_t ew_i = ew_lo; ew_i < ew_n; ew_i++) {                                                     \
		EW_LD_F##N st_i(ew_d->t, ew_d->p, ew_i, (e));                                                \
	}                                                                                                    \
	return 0;
#define EW_INT(N, e)                                                                                         \
	const unsigned BITS = (unsigned)esize(ew_a->t) * 8;                                                  \
	(void)BITS;                                                                                          \
	for (size_t ew_i = ew_lo; ew_i < ew_n; ew_i++) {                                                     \
		EW_LD_I##N st_i(ew_d->t, ew_d->p, ew_i, (int64_t)(e));                                       \
	}                                                                                                    \
	return 0;

/* kern_ew_<kind>: Dest (op 0) from A (op 1) and B (op N); ew_range_<kind>
 * computes elements [ew_lo, ew_n) (an empty range only checks the kinds) */
#define EW_KERNEL(...) EW_KERNEL_(__VA_ARGS__)
#define EW_KERNEL_(KIND, N, R, P, HAS_R, RE, HAS_I, IE)                                                      \
	static int ew_range_##KIND(const struct kargs *ew_k, size_t ew_lo, size_t ew_n)                      \
	{                                                                                                    \
		P const struct interp_arg *ew_d = &ew_k->op[0], *ew_a = &ew_k->op[1], *ew_b = &ew_k->op[N]; \
		(void)ew_b;                                                                                  \
		if (is_int_kind(ew_a->t)) {                                                                  \
			EW_IF_##HAS_I(EW_INT(N, IE))                                                         \
			return kerror(ew_k, "%s has no integer semantics", #KIND);                           \
		}                                                                                            \
		EW_IF_##HAS_R(EW_REAL_##R(N, RE))                                                            \
		return kerror(ew_k, "%s has no real-valued semantics", #KIND);                               \
	}                                                                                                    \
	int kern_ew_##KIND(const struct kargs *ew_k) { return kew_split(ew_k, ew_range_##KIND); }
#define EW1(KIND, R, P, RE, IE) EW_KERNEL(KIND, 1, R, P, EW_COL_##RE, EW_COL_##IE)
#define EW2(KIND, R, P, RE, IE) EW_KERNEL(KIND, 2, R, P, EW_COL_##RE, EW_COL_##IE)
#include "ir/EW.def"

#undef T
#undef K
#undef IF_ATTR

/* ---- the kinds by hand (EW_SPECIAL) ---- */

/* select(Dest, Cond, LHS, RHS): LHS, RHS and Dest share one element type */
static int select_range(const struct kargs *k, size_t lo, size_t n)
{
	const struct interp_arg *d = &k->op[0], *c = &k->op[1], *a = &k->op[2], *b = &k->op[3];
	size_t es = esize(d->t);
	for (size_t i = lo; i < n; i++) {
		if (ld_i(c->t, c->p, i))
			cp_elem(d->p, i, a->p, i, es);
		else
			cp_elem(d->p, i, b->p, i, es);
	}
	return 0;
}

/* select, split by elements */
int kern_ew_select(const struct kargs *k) { return kew_split(k, select_range); }

/* convertto, quantize, dequantize, rescalequantized: by real value, except
 * between integer-exact kinds (exact, wrapped to the destination's width);
 * a convertto to float8 with saturate 0 overflows to infinity or NaN, one
 * to float8e8m0 takes its saturate and round_mode */
static int convert_range(const struct kargs *k, size_t lo, size_t n)
{
	const struct interp_arg *d = &k->op[0], *s = &k->op[1];
	if (k->kind == IK_convertto && elem_is_f8(ekind(d->t)) && !KI(k, AN_saturate)) {
		for (size_t i = lo; i < n; i++)
			((uint8_t *)d->p)[i] = sc_f2f8((float)ld_f(s->t, s->p, i), elem_f8_format(ekind(d->t)), 0);
		return 0;
	}
	if (k->kind == IK_convertto && ekind(d->t) == EK_F8E8M0) {
		int sat = (int)KI(k, AN_saturate), mode = (int)KI(k, AN_round_mode);
		for (size_t i = lo; i < n; i++)
			((uint8_t *)d->p)[i] = sc_f2e8m0((float)ld_f(s->t, s->p, i), sat, mode);
		return 0;
	}
	if (is_int_kind(s->t) && (is_int_kind(d->t) || ekind(d->t) == EK_BOOL)) {
		for (size_t i = lo; i < n; i++)
			st_i(d->t, d->p, i, ld_i(s->t, s->p, i));
		return 0;
	}
	if (is_int_kind(s->t)) { /* i64 to float rounds once */
		for (size_t i = lo; i < n; i++)
			st_f(d->t, d->p, i, (double)ld_i(s->t, s->p, i));
		return 0;
	}
	for (size_t i = lo; i < n; i++)
		st_f(d->t, d->p, i, ld_f(s->t, s->p, i));
	return 0;
}

/* the conversions, split by elements */
int kern_ew_convert(const struct kargs *k) { return kew_split(k, convert_range); }

/* copy and the device copies (Kernels.def): the bytes, moved as the
 * reference copy always moved them (memmove) */
int kern_ew_copy(const struct kargs *k)
{
	memmove(k->op[0].p, k->op[1].p, (size_t)type_bytes(k->op[0].t));
	return 0;
}
