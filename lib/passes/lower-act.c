/* lower-act.c - lowering rules for activations and LogSoftMax (lowering.h).
 * Float kinds only; "k" below is a Splat of the input's type.
 *
 *   Clip(x) {lo, hi}  -> Min(Max(x, k lo), k hi)      lo and hi must be
 *                        values of the kind (else the rule does not apply)
 *   LeakyRelu(x) {a}  -> Max(x, Mul(x, k a))          0 <= a <= 1
 *                        Select(CmpLT(x, k 0), Mul(x, k a), x)   otherwise
 *   Sigmoid(x)        -> Reciprocal(Add(Exp(Neg(x)), k 1))
 *   Swish(x)          -> Mul(x, Sigmoid(x))
 *   HardSwish(x)      -> Div(Mul(x, Clip(Add(x, k 3)) {0, 6}), k 6)
 *   Gelu(x) none      -> Mul(Mul(x, k 0.5), Add(Erf(Mul(x, k 1/sqrt 2)), k 1))
 *   Gelu(x) tanh      -> Mul(Mul(x, k 0.5), Add(Tanh(Mul(Add(x, Mul(x*x*x,
 *                        k 0.044715)), k sqrt(2/pi))), k 1))
 *   SoftPlus(x)       -> Add(Relu(x), Log(Add(Exp(Neg(Abs(x))), k 1)))
 *   Elu(x) {a}        -> Select(CmpLT(k 0, x), x, Mul(Sub(Exp(x), k 1), k a))
 *   LogSoftMax(x) {a} -> d = Sub(x, B(ReduceMax(x))); Sub(d, B(Log(ReduceAdd(Exp(d)))))
 *                        (B: back to x's shape along axis a)
 *
 * Numerics: the kernels evaluate each function in double and round once;
 * the lowered forms round after every node, so they agree within a few ulp
 * (Clip and LeakyRelu with 0 <= a <= 1 exactly, up to the rounding of a to
 * the kind). SoftPlus keeps the overflow-free form but computes log(1 + e)
 * where the kernel uses log1p: for x far below 0 the result (about e^x) is
 * off by that much in absolute terms. Sigmoid is 0 below about -88 where
 * the kernel gives a denormal.
 */
#include "passes/lowering.h"
#include "passes/passutil.h"

#include <math.h>

/* Clip (Lowering.def): not when a bound is no value of the kind. */
bool lower_clip(struct func *f, struct node *n)
{
	struct value x = op_val(n, 0);
	enum elem_kind k = (enum elem_kind)node_type(n)->elem;
	double lo = node_float(n, AN_min), hi = node_float(n, AN_max);
	if (!pu_representable(k, lo) || !pu_representable(k, hi))
		return false;
	struct value v = lw_bin_splat(f, NK_Max, x, lo, n, "lo");
	lw_replace(f, n, lw_bin_splat(f, NK_Min, v, hi, n, "hi"));
	return true;
}

/* LeakyRelu (Lowering.def): always applies. */
bool lower_leaky(struct func *f, struct node *n)
{
	struct value x = op_val(n, 0);
	double a = node_float(n, AN_alpha);
	struct value ax = lw_bin_splat(f, NK_Mul, x, a, n, "scaled");
	if (a >= 0 && a <= 1) {
		lw_replace(f, n, lw_bin(f, NK_Max, x, ax, n, "max"));
		return true;
	}
	struct value neg = lw_bin(f, NK_CmpLT, x, lw_splat(f, val_type(x), 0, n, "zero"), n, "neg");
	struct value ops[3] = {neg, ax, x};
	lw_replace(f, n, node_val(lw_node(f, NK_Select, ops, 3, node_type(n), n, "select"), 0));
	return true;
}

/* Sigmoid (Lowering.def): always applies. */
bool lower_sigmoid(struct func *f, struct node *n)
{
	struct value e = lw_un(f, NK_Exp, lw_un(f, NK_Neg, op_val(n, 0), n, "neg"), n, "exp");
	lw_replace(f, n, lw_un(f, NK_Reciprocal, lw_bin_splat(f, NK_Add, e, 1, n, "den"), n, "sigmoid"));
	return true;
}

/* Swish (Lowering.def): always applies; the Sigmoid is lowered in turn. */
bool lower_swish(struct func *f, struct node *n)
{
	struct value x = op_val(n, 0);
	lw_replace(f, n, lw_bin(f, NK_Mul, x, lw_un(f, NK_Sigmoid, x, n, "sigmoid"), n, "swish"));
	return true;
}

/* Gelu (Lowering.def): always applies. */
bool lower_gelu(struct func *f, struct node *n)
{
	struct value x = op_val(n, 0);
	struct value half = lw_bin_splat(f, NK_Mul, x, 0.5, n, "half");
	struct value inner;
	if (node_int(n, AN_approximate) == 0) {
		struct value s = lw_bin_splat(f, NK_Mul, x, 0.70710678118654752440, n, "scaled");
		inner = lw_un(f, NK_Erf, s, n, "erf");
	} else {
		struct value cube = lw_bin(f, NK_Mul, lw_bin(f, NK_Mul, x, x, n, "sq"), x, n, "cube");
		struct value poly = lw_bin(f, NK_Add, x, lw_bin_splat(f, NK_Mul, cube, 0.044715, n, "c3"), n, "poly");
		struct value s = lw_bin_splat(f, NK_Mul, poly, 0.79788456080286535588, n, "scaled");
		inner = lw_un(f, NK_Tanh, s, n, "tanh");
	}
	lw_replace(f, n, lw_bin(f, NK_Mul, half, lw_bin_splat(f, NK_Add, inner, 1, n, "one"), n, "gelu"));
	return true;
}

/* HardSwish (Lowering.def): always applies. */
bool lower_hardswish(struct func *f, struct node *n)
{
	struct value x = op_val(n, 0);
	struct node *clip = lw_node(f, NK_Clip, (struct value[]){lw_bin_splat(f, NK_Add, x, 3, n, "shift")}, 1,
				    val_type(x), n, "clip");
	node_set_float(f->mod, clip, AN_min, 0);
	node_set_float(f->mod, clip, AN_max, 6);
	struct value p = lw_bin(f, NK_Mul, x, node_val(clip, 0), n, "prod");
	lw_replace(f, n, lw_bin_splat(f, NK_Div, p, 6, n, "hardswish"));
	return true;
}

/* SoftPlus (Lowering.def): always applies. */
bool lower_softplus(struct func *f, struct node *n)
{
	struct value x = op_val(n, 0);
	struct value e = lw_un(f, NK_Exp, lw_un(f, NK_Neg, lw_un(f, NK_Abs, x, n, "abs"), n, "neg"), n, "exp");
	struct value l = lw_un(f, NK_Log, lw_bin_splat(f, NK_Add, e, 1, n, "onep"), n, "log");
	lw_replace(f, n, lw_bin(f, NK_Add, lw_un(f, NK_Relu, x, n, "pos"), l, n, "softplus"));
	return true;
}

/* Elu (Lowering.def): always applies. */
bool lower_elu(struct func *f, struct node *n)
{
	struct value x = op_val(n, 0);
	struct value pos = lw_bin(f, NK_CmpLT, lw_splat(f, val_type(x), 0, n, "zero"), x, n, "pos");
	struct value em1 = lw_bin_splat(f, NK_Sub, lw_un(f, NK_Exp, x, n, "exp"), 1, n, "expm1");
	struct value ops[3] = {pos, x, lw_bin_splat(f, NK_Mul, em1, node_float(n, AN_alpha), n, "neg")};
	lw_replace(f, n, node_val(lw_node(f, NK_Select, ops, 3, node_type(n), n, "elu"), 0));
	return true;
}

/* LogSoftMax (Lowering.def): always applies. */
bool lower_log_softmax(struct func *f, struct node *n)
{
	struct value x = op_val(n, 0);
	const struct type *t = val_type(x);
	bool drop[GLOW_MAX_RANK] = {false};
	drop[node_int(n, AN_axis)] = true;
	struct value mx = lw_reduce(f, NK_BatchedReduceMax, x, drop, n, "max");
	struct value d = lw_bin(f, NK_Sub, x, lw_expand(f, mx, t, drop, n, "maxb"), n, "shifted");
	struct value s = lw_reduce(f, NK_BatchedReduceAdd, lw_un(f, NK_Exp, d, n, "exp"), drop, n, "sum");
	struct value l = lw_un(f, NK_Log, s, n, "log");
	lw_replace(f, n, lw_bin(f, NK_Sub, d, lw_expand(f, l, t, drop, n, "logb"), n, "logsoftmax"));
	return true;
}
