/* arith.c - algebraic simplification of elementwise arithmetic.
 *
 * "one" and "zero" below are splats (passutil.h: Splat nodes, splat/zero or
 * uniform dense constants, and Broadcast/Reshape/Transpose/Tile of those).
 * Rewrites, on float and integer kinds (quantized values are left alone):
 *   Mul(x, one), Mul(one, x), Div(x, one)  -> x        exact
 *   Sub(x, zero)                            -> x        exact for zero = +0.0 (x - 0 keeps -0.0)
 *   Add(x, zero), Add(zero, x)              -> x        exact for zero = -0.0; for +0.0 only the
 *                                                       sign of a zero result differs
 *                                                       (-0.0 + 0.0 is +0.0), which compares equal
 *   Neg(Neg(x))                             -> x        exact
 *   Sub(x, x)                               -> Splat 0  integer kinds only: on floats x - x is
 *                                                       NaN when x is NaN or infinite
 *   Div(x, c), c a splat power of two       -> Mul(x, Splat 1/c)
 *                                                       float kinds, only when 1/c is a normal
 *                                                       number of the kind: x / 2^k and
 *                                                       x * 2^-k are the same real number,
 *                                                       rounded once, so exactly equal
 *   Max(x, zero), Max(zero, x)              -> Relu(x)  equal on every number; on NaN Max gives
 *                                                       NaN where Relu gives 0
 * A rewrite to x requires x to have the result's exact type.
 *
 * Requires: a verified function. Preserves: validity and result types.
 */
#include "passes/pass.h"
#include "passes/passutil.h"

#include <math.h>

struct arith {
	struct func *f;
	struct module *m;
	uint64_t identities, negs, subs, divs, relus;
};

static bool splat_is(struct module *m, struct value v, double x)
{
	double y;
	return pu_splat_of(m, v, &y) && y == x;
}

static bool neg_zero(struct module *m, struct value v)
{
	double y;
	return pu_splat_of(m, v, &y) && y == 0 && signbit(y);
}

static bool pos_zero(struct module *m, struct value v)
{
	double y;
	return pu_splat_of(m, v, &y) && y == 0 && !signbit(y);
}

/* Replaces n by v when the types agree. */
static bool to_value(struct arith *a, struct node *n, struct value v)
{
	if (val_type(v) != node_type(n))
		return false;
	pu_replace(a->f, n, v);
	a->identities++;
	return true;
}

/* 1/c when c is a power of two whose reciprocal is a normal number of kind k. */
static bool exact_reciprocal(enum elem_kind k, double c, double *r)
{
	if (c == 0 || !isfinite(c))
		return false;
	int e;
	double frac = frexp(fabs(c), &e);
	if (frac != 0.5)
		return false;
	*r = 1.0 / c;
	double min_normal = k == EK_FLOAT16 ? 6.103515625e-05 : 1.1754943508222875e-38;
	return fabs(*r) >= min_normal && pu_representable(k, *r);
}

/* Mul(x, one), Mul(one, x) -> x. */
static bool simplify_mul(struct arith *a, struct node *n, const struct type *t, enum elem_kind k)
{
	struct module *m = a->m;
	(void)t;
	(void)k;
	if (splat_is(m, op_val(n, 1), 1) && to_value(a, n, op_val(n, 0)))
		return true;
	return splat_is(m, op_val(n, 0), 1) && to_value(a, n, op_val(n, 1));
}

/* Div(x, one) -> x; Div(x, c) -> Mul(x, Splat 1/c) for a float power of two c. */
static bool simplify_div(struct arith *a, struct node *n, const struct type *t, enum elem_kind k)
{
	struct module *m = a->m;
	if (splat_is(m, op_val(n, 1), 1))
		return to_value(a, n, op_val(n, 0));
	double c, r;
	if (!elem_is_float(k) || !pu_splat_of(m, op_val(n, 1), &c) || !exact_reciprocal(k, c, &r))
		return false;
	struct node *s = pu_new_splat(a->f, t, r, n, n->name);
	struct value ops[2] = {op_val(n, 0), node_val(s, 0)};
	struct node *mul = node_create1(a->f, NK_Mul, n->name, ops, 2, t, n, n->loc);
	pu_replace(a->f, n, node_val(mul, 0));
	a->divs++;
	return true;
}

/* Sub(x, zero) -> x; Sub(x, x) -> Splat 0 on integer kinds. */
static bool simplify_sub(struct arith *a, struct node *n, const struct type *t, enum elem_kind k)
{
	struct module *m = a->m;
	if ((elem_is_float(k) ? pos_zero(m, op_val(n, 1)) : splat_is(m, op_val(n, 1), 0)) &&
	    to_value(a, n, op_val(n, 0)))
		return true;
	if (!elem_is_float(k) && n->ops[0].def == n->ops[1].def && n->ops[0].res == n->ops[1].res) {
		pu_replace(a->f, n, node_val(pu_new_splat(a->f, t, 0, n, n->name), 0));
		a->subs++;
		return true;
	}
	return false;
}

/* Add(x, zero), Add(zero, x) -> x. */
static bool simplify_add(struct arith *a, struct node *n, const struct type *t, enum elem_kind k)
{
	struct module *m = a->m;
	(void)t;
	(void)k;
	if ((splat_is(m, op_val(n, 1), 0) || neg_zero(m, op_val(n, 1))) && to_value(a, n, op_val(n, 0)))
		return true;
	return (splat_is(m, op_val(n, 0), 0) || neg_zero(m, op_val(n, 0))) && to_value(a, n, op_val(n, 1));
}

/* Neg(Neg(x)) -> x. */
static bool simplify_neg(struct arith *a, struct node *n, const struct type *t, enum elem_kind k)
{
	(void)k;
	struct node *in = n->ops[0].def;
	if (in->kind != NK_Neg || node_has_pred(in) || val_type(op_val(in, 0)) != t)
		return false;
	pu_replace(a->f, n, op_val(in, 0));
	a->negs++;
	return true;
}

/* Max(x, zero), Max(zero, x) -> Relu(x). */
static bool simplify_max(struct arith *a, struct node *n, const struct type *t, enum elem_kind k)
{
	struct module *m = a->m;
	(void)k;
	int other = splat_is(m, op_val(n, 1), 0) ? 0 : splat_is(m, op_val(n, 0), 0) ? 1 : -1;
	if (other < 0 || val_type(op_val(n, (unsigned)other)) != t)
		return false;
	struct value x = op_val(n, (unsigned)other);
	struct node *relu = node_create1(a->f, NK_Relu, n->name, &x, 1, t, n, n->loc);
	pu_replace(a->f, n, node_val(relu, 0));
	a->relus++;
	return true;
}

/* The kinds with rewrites (the list at the top), each with its rule, for
 * nodes of a non-quantized, non-bool kind k and result type t. */
static bool (*const simplifiers[NK_COUNT])(struct arith *a, struct node *n, const struct type *t,
					  enum elem_kind k) = {
	[NK_Mul] = simplify_mul,
	[NK_Div] = simplify_div,
	[NK_Sub] = simplify_sub,
	[NK_Add] = simplify_add,
	[NK_Neg] = simplify_neg,
	[NK_Max] = simplify_max,
};

/* Applies n's rewrite if one matches; true if it changed the function. */
static bool simplify(struct arith *a, struct node *n)
{
	if (n->nres != 1)
		return false;
	const struct type *t = node_type(n);
	enum elem_kind k = (enum elem_kind)t->elem;
	if (elem_is_quantized(k) || k == EK_BOOL || node_has_pred(n))
		return false;
	return simplifiers[n->kind] && simplifiers[n->kind](a, n, t, k);
}

bool optimize_arithmetic_run(struct func *f, struct pass_ctx *ctx)
{
	struct arith a = {f, f->mod, 0, 0, 0, 0, 0};
	func_for_each_safe(f, n, next) {
		simplify(&a, n);
	}
	pass_stat(ctx, "Number of identity operations removed (x*1, x/1, x+0, x-0)", a.identities);
	pass_stat(ctx, "Number of double negations removed", a.negs);
	pass_stat(ctx, "Number of x-x replaced by zero", a.subs);
	pass_stat(ctx, "Number of divisions by a power of two made multiplications", a.divs);
	pass_stat(ctx, "Number of Max(x, 0) made Relu", a.relus);
	return a.identities || a.negs || a.subs || a.divs || a.relus;
}
