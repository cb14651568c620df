/* typerules_ew.c - the type rules of the elementwise kinds: arithmetic,
 * comparison, logic, unary functions, Clip, Select, and the conversions
 * (ConvertTo, Quantize, Dequantize, RescaleQuantized, QuantizationProfile).
 * Conventions (reporting, element types, saturation) as in typerules.c.
 */
#include "graph/typerules.h"
#include "graph/typerules_check.h"

#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* ------------------------------------------------------------------ */
/* Elementwise                                                         */

/* Add, Sub, Mul, Div, Max, Min, Pow, Fmod, Mod, PRelu: operands and result of one
 * shape and one numeric element kind (quantized parameters may differ). */
void tr_arith(struct verifier *v, const struct node *n)
{
	trc_ew_shapes(v, n);
	if (!trc_op_class(v, n, 0, C_NUM))
		return;
	trc_want_kind(v, n, OPW(n, 1), op_type(n, 1), OPW(n, 0), op_type(n, 0));
	trc_want_kind(v, n, LITW("result"), node_type(n), OPW(n, 0), op_type(n, 0));
}

/* CmpEQ, CmpNEQ (any kind), CmpLT, CmpLTE (numeric): LHS and RHS of one shape
 * and kind -> bool of that shape. */
void tr_compare(struct verifier *v, const struct node *n)
{
	trc_ew_shapes(v, n);
	bool ordered = n->kind == NK_CmpLT || n->kind == NK_CmpLTE;
	if (!ordered || trc_op_class(v, n, 0, C_NUM))
		trc_want_kind(v, n, LITW("RHS"), op_type(n, 1), LITW("LHS"), op_type(n, 0));
	trc_res_class(v, n, 0, CB);
}

/* And, Or, Xor, Not: bool operands -> bool, one shape. */
void tr_logical(struct verifier *v, const struct node *n)
{
	trc_ew_shapes(v, n);
	for (unsigned i = 0; i < n->nops; i++)
		trc_op_class(v, n, i, CB);
	trc_res_class(v, n, 0, CB);
}

/* BitShift(LHS, RHS) {direction}: operands and result of one shape and one
 * integer or index kind; each LHS element shifted left or right (logically,
 * as unsigned bits of its width) by the RHS element. */
void tr_bitshift(struct verifier *v, const struct node *n)
{
	trc_ew_shapes(v, n);
	if (!trc_op_class(v, n, 0, C_IDX))
		return;
	trc_want_kind(v, n, OPW(n, 1), op_type(n, 1), OPW(n, 0), op_type(n, 0));
	trc_want_kind(v, n, LITW("result"), node_type(n), OPW(n, 0), op_type(n, 0));
}

/* Neg, Abs, Sign, Relu, LeakyRelu: numeric Input -> Input's shape and kind. */
void tr_unary(struct verifier *v, const struct node *n)
{
	trc_ew_shapes(v, n);
	if (trc_op_class(v, n, 0, C_NUM))
		trc_want_kind(v, n, LITW("result"), node_type(n), LITW("input"), op_type(n, 0));
}

/* Exp, Log, Sqrt, ..., Sigmoid, Tanh, Gelu, Elu: floating-point Input ->
 * Input's type. */
void tr_unary_float(struct verifier *v, const struct node *n)
{
	trc_ew_shapes(v, n);
	if (trc_op_class(v, n, 0, CF))
		trc_want_kind(v, n, LITW("result"), node_type(n), LITW("input"), op_type(n, 0));
}

/* Sigmoid, Tanh: floating-point or quantized Input -> Input's kind (a
 * quantized result with its own parameters: the interpreter's table,
 * docs/Quantization.md). */
void tr_unary_float_q(struct verifier *v, const struct node *n)
{
	trc_ew_shapes(v, n);
	if (trc_op_class(v, n, 0, C_FQ))
		trc_want_kind(v, n, LITW("result"), node_type(n), LITW("input"), op_type(n, 0));
}

/* IsNaN, IsInf: floating-point Input -> bool of its shape. */
void tr_isnan(struct verifier *v, const struct node *n)
{
	trc_ew_shapes(v, n);
	trc_op_class(v, n, 0, CF);
	trc_res_class(v, n, 0, CB);
}

/* Clip(Input) {min, max}: numeric Input -> Input's shape and kind, min <= max. */
void tr_clip(struct verifier *v, const struct node *n)
{
	tr_unary(v, n);
	double lo = node_float(n, "min"), hi = node_float(n, "max");
	if (!(lo <= hi))
		verr(v, n, "min %g must not exceed max %g", lo, hi);
}

/* Select(Cond bool, LHS T, RHS T) -> T, one shape: Cond ? LHS : RHS. */
void tr_select(struct verifier *v, const struct node *n)
{
	trc_ew_shapes(v, n);
	trc_op_class(v, n, 0, CB);
	trc_want_elem(v, n, LITW("RHS"), op_type(n, 2), LITW("LHS"), op_type(n, 1));
	trc_want_elem(v, n, LITW("result"), node_type(n), LITW("LHS"), op_type(n, 1));
}

/* ------------------------------------------------------------------ */
/* Conversion and quantization (elementwise: one shape)                */

/* ConvertTo(Input) -> Input's shape, any element kinds. */
void tr_convert(struct verifier *v, const struct node *n) { trc_ew_shapes(v, n); }

/* Quantize(Input floating-point) -> quantized of Input's shape. */
void tr_quantize(struct verifier *v, const struct node *n)
{
	trc_ew_shapes(v, n);
	trc_op_class(v, n, 0, CF);
	trc_res_class(v, n, 0, CQ);
}

/* Dequantize(Input quantized) -> floating-point of Input's shape. */
void tr_dequantize(struct verifier *v, const struct node *n)
{
	trc_ew_shapes(v, n);
	trc_op_class(v, n, 0, CQ);
	trc_res_class(v, n, 0, CF);
}

/* RescaleQuantized(Input quantized) -> quantized of Input's shape (new
 * parameters and/or kind). */
void tr_rescale(struct verifier *v, const struct node *n)
{
	trc_ew_shapes(v, n);
	trc_op_class(v, n, 0, CQ);
	trc_res_class(v, n, 0, CQ);
}

/* Operand i is a placeholder of type float<len> (len 0: any positive). */
static void profile_buffer(struct verifier *v, const struct node *n, unsigned i, uint64_t len)
{
	const struct type *t = op_type(n, i);
	if (!as_placeholder(n->ops[i].def)) {
		verr(v, n, "%s %s must be a placeholder, not a %s", OPN(n, i), DEFN(n, i),
		     node_kind_name(n->ops[i].def->kind));
		return;
	}
	if (t->elem != EK_FLOAT || t->rank != 1 || t->dims[0] == 0 || (len && t->dims[0] != len)) {
		if (len)
			verr(v, n, "%s must be float<%" PRIu64 ">, got %s", OPN(n, i), len, TYS(t));
		else
			verr(v, n, "%s must be a non-empty float vector, got %s", OPN(n, i), TYS(t));
	}
}

/* QuantizationProfile(Input floating-point, Histogram float<bins>,
 * ComputationInfo float<2> (min, max)): both buffers placeholders; the
 * profiled node name is not empty and profiled_output >= 0. */
void tr_quantization_profile(struct verifier *v, const struct node *n)
{
	trc_op_class(v, n, 0, CF);
	profile_buffer(v, n, 1, 0);
	profile_buffer(v, n, 2, 2);
	const char *s = node_str(n, "profiled_node_name");
	if (!s || !*s)
		verr(v, n, "profiled_node_name must not be empty");
	trc_int_attr_min(v, n, "profiled_output", 0);
}
