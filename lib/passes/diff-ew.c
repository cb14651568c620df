/* diff-ew.c - gradient rules of the differentiate pass (Gradients.def)
 * for the elementwise kinds and activations: each makes its gradient kind
 * (AddGrad, ..., GeluGrad, DropoutGrad; ReluGrad, SigmoidGrad, TanhGrad),
 * which a backend runs whole or lower-grad2.c (lower-grad.c) lowers into
 * the forward kinds of the chain rule. Neg's adjoint is a Neg.
 */
#include "passes/differentiate.h"


/* kind(ops) -> (LHSGrad, RHSGrad), added to the adjoints of n's LHS and
 * RHS; a result whose operand wants no adjoint is left unused (the
 * lowering builds only used results). */
static bool to_both(struct dctx *c, struct node *n, unsigned kind, const struct value *ops, unsigned nops)
{
	struct value a = op_val(n, 0), b = op_val(n, 1);
	const struct type *t[2] = {val_type(a), val_type(b)};
	struct node *g = dg_mk(c, kind, ops, nops, t, n);
	dg_add_adj(c, a, node_val(g, 0));
	dg_add_adj(c, b, node_val(g, 1));
	return true;
}

/* kind(first, G) -> InputGrad of n's input type, added to its adjoint:
 * the single-input activations (attributes set by the caller on the
 * returned node). */
static struct node *to_input_grad(struct dctx *c, struct node *n, unsigned kind, struct value first,
				  struct value gy)
{
	struct value ops[2] = {first, gy};
	struct value g = dg_mk1(c, kind, ops, 2, op_type(n, 0), n);
	dg_to_input(c, n, g);
	return g.node;
}

/* Add (Gradients.def): AddGrad(G): dA = dB = G. */
bool dr_add(struct dctx *c, struct node *n, struct value gy) { return to_both(c, n, NK_AddGrad, &gy, 1); }

/* Sub (Gradients.def): SubGrad(G): dA = G, dB = -G. */
bool dr_sub(struct dctx *c, struct node *n, struct value gy) { return to_both(c, n, NK_SubGrad, &gy, 1); }

/* Mul (Gradients.def): MulGrad(A, B, G): dA = G B, dB = G A; the Mul by a
 * DropoutMask that stands for a Dropout in a training step
 * (differentiate.c) gets DropoutGrad(Mask, G). */
bool dr_mul(struct dctx *c, struct node *n, struct value gy)
{
	struct value a = op_val(n, 0), b = op_val(n, 1);
	if (b.node->kind == NK_DropoutMask && !dg_wants_grad(c, b)) {
		to_input_grad(c, n, NK_DropoutGrad, b, gy);
		return true;
	}
	struct value ops[3] = {a, b, gy};
	return to_both(c, n, NK_MulGrad, ops, 3);
}

/* Div (Gradients.def): DivGrad(B, Y, G): dA = G / B, dB = -(G Y) / B. */
bool dr_div(struct dctx *c, struct node *n, struct value gy)
{
	struct value ops[3] = {op_val(n, 1), node_val(n, 0), gy};
	return to_both(c, n, NK_DivGrad, ops, 3);
}

/* Neg (Gradients.def): dX = -G. */
bool dr_neg(struct dctx *c, struct node *n, struct value gy)
{
	return dg_to_input(c, n, dg_mk1(c, NK_Neg, &gy, 1, val_type(gy), n));
}

/* Exp (Gradients.def): ExpGrad(Y, G) = G Y. */
bool dr_exp(struct dctx *c, struct node *n, struct value gy)
{
	to_input_grad(c, n, NK_ExpGrad, node_val(n, 0), gy);
	return true;
}

/* Log (Gradients.def): LogGrad(X, G) = G / X. */
bool dr_log(struct dctx *c, struct node *n, struct value gy)
{
	to_input_grad(c, n, NK_LogGrad, op_val(n, 0), gy);
	return true;
}

/* Sqrt (Gradients.def): SqrtGrad(Y, G) = G / (2 Y). */
bool dr_sqrt(struct dctx *c, struct node *n, struct value gy)
{
	to_input_grad(c, n, NK_SqrtGrad, node_val(n, 0), gy);
	return true;
}

/* Max and Min (Gradients.def): MaxGrad or MinGrad(A, B, G): G to the
 * operand that was chosen, a tie to the LHS. */
bool dr_max_min(struct dctx *c, struct node *n, struct value gy)
{
	struct value ops[3] = {op_val(n, 0), op_val(n, 1), gy};
	return to_both(c, n, n->kind == NK_Max ? NK_MaxGrad : NK_MinGrad, ops, 3);
}

/* Relu (Gradients.def): ReluGrad(X, G). */
bool dr_relu(struct dctx *c, struct node *n, struct value gy)
{
	to_input_grad(c, n, NK_ReluGrad, op_val(n, 0), gy);
	return true;
}

/* LeakyRelu (Gradients.def): LeakyReluGrad(X, G) {alpha}: G where 0 < X,
 * else G alpha. */
bool dr_leaky_relu(struct dctx *c, struct node *n, struct value gy)
{
	struct node *g = to_input_grad(c, n, NK_LeakyReluGrad, op_val(n, 0), gy);
	node_set_float(c->m, g, AN_alpha, node_float(n, AN_alpha));
	return true;
}

/* Clip (Gradients.def): ClipGrad(X, G) {min, max}: G where min <= X <=
 * max, else 0. */
bool dr_clip(struct dctx *c, struct node *n, struct value gy)
{
	struct node *g = to_input_grad(c, n, NK_ClipGrad, op_val(n, 0), gy);
	node_set_float(c->m, g, AN_min, node_float(n, AN_min));
	node_set_float(c->m, g, AN_max, node_float(n, AN_max));
	return true;
}

/* Sigmoid and Tanh (Gradients.def): SigmoidGrad or TanhGrad of the
 * result and G. */
bool dr_sigmoid_tanh(struct dctx *c, struct node *n, struct value gy)
{
	to_input_grad(c, n, n->kind == NK_Sigmoid ? NK_SigmoidGrad : NK_TanhGrad, node_val(n, 0), gy);
	return true;
}

/* Gelu (Gradients.def): GeluGrad(X, G) {approximate}, either form. */
bool dr_gelu(struct dctx *c, struct node *n, struct value gy)
{
	struct node *g = to_input_grad(c, n, NK_GeluGrad, op_val(n, 0), gy);
	node_set_int(c->m, g, AN_approximate, node_int(n, AN_approximate));
	return true;
}

/* Dropout (Gradients.def): the identity (a ratio-0 Dropout; training
 * steps multiply by a DropoutMask instead). */
bool dr_dropout(struct dctx *c, struct node *n, struct value gy)
{
	/* ratio 0: the identity */
	return dg_to_input(c, n, gy);
}
