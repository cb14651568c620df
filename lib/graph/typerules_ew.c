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

/* Binary elementwise: LHS, RHS and the result of one shape and one element
 * kind of the classes in `set` (quantized parameters may differ). */
static void binary_one_kind(struct typed_op *op, unsigned set)
{
	trc_ew_shapes(op);
	if (!trc_op_class(op, 0, set))
		return;
	trc_want_kind(op, OPW(op, 1), top_optype(op, 1), OPW(op, 0), top_optype(op, 0));
	trc_want_kind(op, LITW("result"), top_type(op), OPW(op, 0), top_optype(op, 0));
}

/* Add, Sub, Mul, Div, Max, Min, Pow, Fmod, Mod, PRelu: operands and result of one
 * shape and one numeric element kind (quantized parameters may differ). */
void tr_arith(struct typed_op *op) { binary_one_kind(op, C_NUM); }

/* CmpEQ, CmpNEQ (any kind), CmpLT, CmpLTE (numeric): LHS and RHS of one shape
 * and kind -> bool of that shape. */
void tr_compare(struct typed_op *op)
{
	trc_ew_shapes(op);
	bool ordered = op->kind == NK_CmpLT || op->kind == NK_CmpLTE;
	if (!ordered || trc_op_class(op, 0, C_NUM))
		trc_want_kind(op, LITW("RHS"), top_optype(op, 1), LITW("LHS"), top_optype(op, 0));
	trc_res_class(op, 0, CB);
}

/* And, Or, Xor, Not: bool operands -> bool, one shape. */
void tr_logical(struct typed_op *op)
{
	trc_ew_shapes(op);
	for (unsigned i = 0; i < op->nops; i++)
		trc_op_class(op, i, CB);
	trc_res_class(op, 0, CB);
}

/* BitShift(LHS, RHS) {direction}: operands and result of one shape and one
 * integer or index kind; each LHS element shifted left or right (logically,
 * as unsigned bits of its width) by the RHS element. */
void tr_bitshift(struct typed_op *op) { binary_one_kind(op, C_IDX); }

/* Unary elementwise: Input of an element kind of the classes in `set` ->
 * Input's shape and kind. */
static void unary_one_kind(struct typed_op *op, unsigned set)
{
	trc_ew_shapes(op);
	if (trc_op_class(op, 0, set))
		trc_want_kind(op, LITW("result"), top_type(op), LITW("input"), top_optype(op, 0));
}

/* Neg, Abs, Sign, Relu, LeakyRelu: numeric Input -> Input's shape and kind. */
void tr_unary(struct typed_op *op) { unary_one_kind(op, C_NUM); }

/* Exp, Log, Sqrt, ..., Sigmoid, Tanh, Gelu, Elu: floating-point Input ->
 * Input's type. */
void tr_unary_float(struct typed_op *op) { unary_one_kind(op, CF); }

/* Sigmoid, Tanh: floating-point or quantized Input -> Input's kind (a
 * quantized result with its own parameters: the interpreter's table,
 * docs/Quantization.md). */
void tr_unary_float_q(struct typed_op *op) { unary_one_kind(op, C_FQ); }

/* Unary elementwise with a result of another class: Input of the classes
 * in `in`, the result of the classes in `res`, one shape. */
static void unary_classes(struct typed_op *op, unsigned in, unsigned res)
{
	trc_ew_shapes(op);
	trc_op_class(op, 0, in);
	trc_res_class(op, 0, res);
}

/* IsNaN, IsInf: floating-point Input -> bool of its shape. */
void tr_isnan(struct typed_op *op) { unary_classes(op, CF, CB); }

/* Clip(Input) {min, max}: numeric Input -> Input's shape and kind, min <= max. */
void tr_clip(struct typed_op *op)
{
	tr_unary(op);
	double lo = top_float(op, AN_min), hi = top_float(op, AN_max);
	if (!(lo <= hi))
		top_err(op, "min %g must not exceed max %g", lo, hi);
}

/* Select(Cond bool, LHS T, RHS T) -> T, one shape: Cond ? LHS : RHS. */
void tr_select(struct typed_op *op)
{
	trc_ew_shapes(op);
	trc_op_class(op, 0, CB);
	trc_want_elem(op, LITW("RHS"), top_optype(op, 2), LITW("LHS"), top_optype(op, 1));
	trc_want_elem(op, LITW("result"), top_type(op), LITW("LHS"), top_optype(op, 1));
}

/* ------------------------------------------------------------------ */
/* Conversion and quantization (elementwise: one shape)                */

/* ConvertTo(Input) -> Input's shape, any element kinds. */
void tr_convert(struct typed_op *op) { trc_ew_shapes(op); }

/* The width in bits of an element as BitCast reads it: 4 for the nibble
 * kinds (held one per byte), else the stored size. */
static unsigned bitcast_bits(enum elem_kind k)
{
	return k == EK_I4 || k == EK_U4 || k == EK_F4E2M1 ? 4u : (unsigned)elem_size(k) * 8u;
}

/* BitCast(Input) -> Input's shape, any element kind of the same width. */
void tr_bitcast(struct typed_op *op)
{
	if (!trc_ew_shapes(op))
		return;
	const struct type *t = top_type(op), *x = top_optype(op, 0);
	if (bitcast_bits((enum elem_kind)t->elem) != bitcast_bits((enum elem_kind)x->elem)) {
		char a[160], b[160];
		top_err(op, "result %s has %u-bit elements but input %s has %u-bit ones (the widths must be equal)",
			type_str(t, b, sizeof b), bitcast_bits((enum elem_kind)t->elem), type_str(x, a, sizeof a),
			bitcast_bits((enum elem_kind)x->elem));
	}
}

/* Quantize(Input floating-point) -> quantized of Input's shape. */
void tr_quantize(struct typed_op *op) { unary_classes(op, CF, CQ); }

/* Dequantize(Input quantized) -> floating-point of Input's shape. */
void tr_dequantize(struct typed_op *op) { unary_classes(op, CQ, CF); }

/* RescaleQuantized(Input quantized) -> quantized of Input's shape (new
 * parameters and/or kind). */
void tr_rescale(struct typed_op *op) { unary_classes(op, CQ, CQ); }

/* Operand i is a placeholder of type float<len> (len 0: any positive). */
static void profile_buffer(struct typed_op *op, unsigned i, uint64_t len)
{
	const struct type *t = top_optype(op, i);
	if (!top_op_is_placeholder(op, i)) {
		top_err(op, "%s %s must be a placeholder, not a %s", OPN(op, i), DEFN(op, i),
			node_kind_name(op->ops[i].def_kind));
		return;
	}
	if (t->elem != EK_FLOAT || t->rank != 1 || t->dims[0] == 0 || (len && t->dims[0] != len)) {
		if (len)
			top_err(op, "%s must be float<%" PRIu64 ">, got %s", OPN(op, i), len, TYS(t));
		else
			top_err(op, "%s must be a non-empty float vector, got %s", OPN(op, i), TYS(t));
	}
}

/* QuantizationProfile(Input floating-point, Histogram float<bins>,
 * ComputationInfo float<2> (min, max)): both buffers placeholders; the
 * profiled node name is not empty and profiled_output >= 0. */
void tr_quantization_profile(struct typed_op *op)
{
	trc_op_class(op, 0, CF);
	profile_buffer(op, 1, 0);
	profile_buffer(op, 2, 2);
	const char *s = top_str(op, AN_profiled_node_name);
	if (!s || !*s)
		top_err(op, "profiled_node_name must not be empty");
	trc_int_attr_min(op, "profiled_output", top_int(op, AN_profiled_output), 0);
}
