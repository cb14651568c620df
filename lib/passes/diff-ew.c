/* diff-ew.c - gradient rules of the differentiate pass (Gradients.def)
 * for the elementwise kinds and activations: the chain rule with the
 * derivative written as forward kinds, except Relu, Sigmoid and Tanh, which
 * make their gradient kinds (ReluGrad, ..., lowered by lower-grad.c). The
 * tanh form of Gelu is in diff-rules.c.
 */
#include "passes/differentiate.h"

#include <string.h>

/* Add (Gradients.def): dA = dB = G. */
bool dr_add(struct dctx *c, struct node *n, struct value gy)
{
	struct value a = op_val(n, 0), b = op_val(n, 1);
	dg_add_adj(c, a, gy);
	dg_add_adj(c, b, gy);
	return true;
}

/* Sub (Gradients.def): dA = G, dB = -G. */
bool dr_sub(struct dctx *c, struct node *n, struct value gy)
{
	struct value a = op_val(n, 0), b = op_val(n, 1);
	dg_add_adj(c, a, gy);
	if (dg_wants_grad(c, b))
		dg_add_adj(c, b, dg_mk1(c, NK_Neg, &gy, 1, val_type(gy), n));
	return true;
}

/* Mul (Gradients.def): dA = G B, dB = G A. */
bool dr_mul(struct dctx *c, struct node *n, struct value gy)
{
	struct value a = op_val(n, 0), b = op_val(n, 1);
	if (dg_wants_grad(c, a))
		dg_add_adj(c, a, dg_mk_bin(c, NK_Mul, gy, b, n));
	if (dg_wants_grad(c, b))
		dg_add_adj(c, b, dg_mk_bin(c, NK_Mul, gy, a, n));
	return true;
}

/* Div (Gradients.def): dA = G / B, dB = -(G A / B) / B. */
bool dr_div(struct dctx *c, struct node *n, struct value gy)
{
	struct value a = op_val(n, 0), b = op_val(n, 1);
	/* d(a/b)/da = 1/b, d(a/b)/db = -(a/b)/b */
	if (dg_wants_grad(c, a))
		dg_add_adj(c, a, dg_mk_bin(c, NK_Div, gy, b, n));
	if (dg_wants_grad(c, b)) {
		struct value q = dg_mk_bin(c, NK_Div, dg_mk_bin(c, NK_Mul, gy, node_val(n, 0), n), b, n);
		dg_add_adj(c, b, dg_mk1(c, NK_Neg, &q, 1, val_type(q), n));
	}
	return true;
}

/* Neg (Gradients.def): dX = -G. */
bool dr_neg(struct dctx *c, struct node *n, struct value gy)
{
	return dg_to_input(c, n, dg_mk1(c, NK_Neg, &gy, 1, val_type(gy), n));
}

/* Exp (Gradients.def): dX = G exp(X), the result. */
bool dr_exp(struct dctx *c, struct node *n, struct value gy)
{
	return dg_to_input(c, n, dg_mk_bin(c, NK_Mul, gy, node_val(n, 0), n));
}

/* Log (Gradients.def): dX = G / X. */
bool dr_log(struct dctx *c, struct node *n, struct value gy)
{
	return dg_to_input(c, n, dg_mk_bin(c, NK_Div, gy, op_val(n, 0), n));
}

/* Sqrt (Gradients.def): dX = G / (2 sqrt(X)), from the result. */
bool dr_sqrt(struct dctx *c, struct node *n, struct value gy)
{
	/* 1 / (2 sqrt(x)) */
	struct value twice = dg_mk_bin(c, NK_Add, node_val(n, 0), node_val(n, 0), n);
	return dg_to_input(c, n, dg_mk_bin(c, NK_Div, gy, twice, n));
}

/* Max and Min (Gradients.def): G to the operand that was chosen. */
bool dr_max_min(struct dctx *c, struct node *n, struct value gy)
{
	struct value a = op_val(n, 0), b = op_val(n, 1);
	/* the operand that was chosen; a tie goes to the LHS */
	struct value zero = dg_mk_splat(c, val_type(gy), 0, n);
	struct value lhs_lost =
		n->kind == NK_Max ? dg_mk_cmp(c, NK_CmpLT, a, b, n) : dg_mk_cmp(c, NK_CmpLT, b, a, n);
	dg_add_adj(c, a, dg_mk_select(c, lhs_lost, zero, gy, n));
	dg_add_adj(c, b, dg_mk_select(c, lhs_lost, gy, zero, n));
	return true;
}

/* Relu (Gradients.def): ReluGrad(X, G). */
bool dr_relu(struct dctx *c, struct node *n, struct value gy)
{
	struct value a = op_val(n, 0);
	struct value ops[2] = {a, gy};
	return dg_to_input(c, n, dg_mk1(c, NK_ReluGrad, ops, 2, val_type(a), n));
}

/* LeakyRelu (Gradients.def): G where 0 < X, else G alpha. */
bool dr_leaky_relu(struct dctx *c, struct node *n, struct value gy)
{
	struct value a = op_val(n, 0);
	struct value zero = dg_mk_splat(c, val_type(a), 0, n);
	struct value alpha = dg_mk_splat(c, val_type(a), node_float(n, AN_alpha), n);
	struct value slope = dg_mk_bin(c, NK_Mul, gy, alpha, n);
	return dg_to_input(c, n, dg_mk_select(c, dg_mk_cmp(c, NK_CmpLT, zero, a, n), gy, slope, n));
}

/* Clip (Gradients.def): G where min <= X <= max, else 0. */
bool dr_clip(struct dctx *c, struct node *n, struct value gy)
{
	struct value a = op_val(n, 0);
	/* passes where min <= x <= max */
	struct value zero = dg_mk_splat(c, val_type(a), 0, n);
	struct value lo = dg_mk_cmp(c, NK_CmpLTE, dg_mk_splat(c, val_type(a), node_float(n, AN_min), n), a, n);
	struct value hi = dg_mk_cmp(c, NK_CmpLTE, a, dg_mk_splat(c, val_type(a), node_float(n, AN_max), n), n);
	struct value in = dg_mk_select(c, lo, gy, zero, n);
	return dg_to_input(c, n, dg_mk_select(c, hi, in, zero, n));
}

/* Sigmoid and Tanh (Gradients.def): SigmoidGrad or TanhGrad of the
 * result and G. */
bool dr_sigmoid_tanh(struct dctx *c, struct node *n, struct value gy)
{
	struct value a = op_val(n, 0);
	struct value ops[2] = {node_val(n, 0), gy};
	unsigned k = n->kind == NK_Sigmoid ? NK_SigmoidGrad : NK_TanhGrad;
	return dg_to_input(c, n, dg_mk1(c, k, ops, 2, val_type(a), n));
}

/* Gelu (Gradients.def): the erf form here, the tanh form by dr_gelu_tanh. */
bool dr_gelu(struct dctx *c, struct node *n, struct value gy)
{
	struct value a = op_val(n, 0);
	/* x Phi(x): Phi(x) + x phi(x), Phi(x) = (1 + erf(x / sqrt 2)) / 2,
	 * phi(x) = exp(-x^2 / 2) / sqrt(2 pi); the tanh form in
	 * diff-rules.c */
	if (strcmp(node_enum(n, AN_approximate), "none") != 0)
		return dr_gelu_tanh(c, n, gy);
	const struct type *t = val_type(a);
	struct value xs = dg_mk_bin(c, NK_Mul, a, dg_mk_splat(c, t, 0.70710678118654752, n), n);
	struct value e = dg_mk1(c, NK_Erf, &xs, 1, t, n);
	struct value cdf = dg_mk_bin(c, NK_Add, e, dg_mk_splat(c, t, 1, n), n);
	cdf = dg_mk_bin(c, NK_Mul, cdf, dg_mk_splat(c, t, 0.5, n), n);
	struct value x2 = dg_mk_bin(c, NK_Mul, dg_mk_bin(c, NK_Mul, a, a, n), dg_mk_splat(c, t, -0.5, n), n);
	struct value pdf = dg_mk1(c, NK_Exp, &x2, 1, t, n);
	pdf = dg_mk_bin(c, NK_Mul, pdf, dg_mk_splat(c, t, 0.39894228040143268, n), n);
	struct value d = dg_mk_bin(c, NK_Add, cdf, dg_mk_bin(c, NK_Mul, a, pdf, n), n);
	return dg_to_input(c, n, dg_mk_bin(c, NK_Mul, gy, d, n));
}

/* Dropout (Gradients.def): the identity (a ratio-0 Dropout; training
 * steps multiply by a DropoutMask instead). */
bool dr_dropout(struct dctx *c, struct node *n, struct value gy)
{
	/* ratio 0: the identity */
	return dg_to_input(c, n, gy);
}
