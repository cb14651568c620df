/* fold-quant.c - quantization-aware folding (fold-quantization, function
 * pass, repeated until nothing changes). Each rewrite keeps the quantized
 * result bit for bit (docs/Quantization.md):
 *   - Quantize(Dequantize(x)) : T  ->  x when x has type T, else
 *     RescaleQuantized(x) : T (a Quantize/Dequantize pair at the border of
 *     two quantized nodes);
 *   - RescaleQuantized(y) : T where y is the only use of a quantized node
 *     that requantizes its result anyway (the arithmetic, linear, pooling
 *     and lookup-table kinds)  ->  y with result type T;
 *   - Relu(y) and Clip(y){min, max} of quantized y where y is such a node
 *     used only here and the Relu's / Clip's result type represents no real
 *     value outside [0, inf) / [min, max]  ->  y with that result type: the
 *     saturation of the requantization does the clipping;
 *   - RescaleQuantized(x) : T with x of type T  ->  x;
 *   - RescaleQuantized(Quantize(x)) : T, the Quantize used only there  ->
 *     Quantize(x) : T (one rounding from the real value where the pair
 *     rounded twice: the result is the closer one, and can differ from the
 *     pair's by one step);
 *   - M(Dequantize(q)) where M only moves elements (Reshape, Transpose,
 *     Slice: one operand, the same parameters in and out) and the
 *     Dequantize is used only there  ->  Dequantize(M(q)), M on the stored
 *     integers (a quarter of the bytes at 8 bits), when the backend runs M
 *     quantized and the tool's -keep-float does not keep M's kind in float;
 *     exact: dequantizing commutes with moving. A Quantize reading the
 *     moved value then meets the Dequantize and folds as above, so a float
 *     data-movement island between quantized nodes (a QDQ model's) goes.
 *
 * Requires: a verified function. Preserves: validity and every quantized
 * value's bits, except the RescaleQuantized folds into a producer (above
 * and the Relu/Clip rule: one rounding instead of two).
 */
#include "passes/kindfacts.h"
#include "passes/pass.h"
#include "passes/passcli.h"
#include "passes/passutil.h"
#include "passes/quantize.h"
#include "passes/target.h"

#include <math.h>
#include <stdio.h>

static bool fq_quantized(const struct type *t) { return elem_is_quantized((enum elem_kind)t->elem); }

/* The real values the stored range of quantized t covers. */
static void fq_range(const struct type *t, double *lo, double *hi)
{
	double qmin, qmax;
	pu_quant_limits((enum elem_kind)t->elem, &qmin, &qmax);
	*lo = (double)t->scale * (qmin - t->offset);
	*hi = (double)t->scale * (qmax - t->offset);
}

/* x is a single-use quantized result 0 of a requantizing node of f. */
static bool fq_foldable_producer(struct value x)
{
	struct node *p = x.node;
	return x.res == 0 && !node_is_storage(p) && pk_has(p->kind, PK_REQUANTIZES) && !node_has_pred(p) &&
	       fq_quantized(p->types[0]) && node_num_uses(p, -1) == 1;
}

/* M(Dequantize(q)) -> Dequantize(M(q)) for a kind M that only moves
 * elements (see the file comment); false when n is not one or it does not
 * apply. */
static bool fq_sink_dequantize(struct func *f, struct pass_ctx *ctx, struct node *n, const bool *keep)
{
	if (!pk_has(n->kind, PK_QUANT_SAME_PARAMS) || !pk_has(n->kind, PK_UNIFORM_MOVES) || n->nops != 1 ||
	    n->nres != 1 || keep[n->kind] || node_type(n)->elem != EK_FLOAT)
		return false;
	struct node *dq = op_val(n, 0).node;
	if (dq->kind != NK_Dequantize || node_has_pred(dq) || node_num_uses(dq, -1) != 1)
		return false;
	struct value q = op_val(dq, 0);
	const struct type *qt = val_type(q), *t = node_type(n);
	enum elem_kind elems[2] = {(enum elem_kind)qt->elem, (enum elem_kind)qt->elem};
	if (!target_supports_elems(ctx, n->kind, elems, 2))
		return false;
	/* n itself moves the stored integers (its attributes say how); the
	 * Dequantize follows it and takes over its uses */
	node_set_operand(n, 0, q);
	n->types[0] = type_with_dims(f->mod->types, qt, t->dims, t->rank);
	char name[256];
	snprintf(name, sizeof name, "%s.dequant", n->name ? n->name : "q");
	struct node *back = node_create1(f, NK_Dequantize, name, (struct value[]){node_val(n, 0)}, 1, t, n->next, n->loc);
	value_replace_all_uses(node_val(n, 0), node_val(back, 0));
	node_set_operand(back, 0, node_val(n, 0));
	node_erase(f, dq);
	return true;
}

bool fold_quantization_run(struct func *f, struct pass_ctx *ctx)
{
	uint64_t pairs = 0, rescales = 0, clips = 0, sunk = 0;
	bool keep[NK_COUNT] = {false};
	if (ctx->keep_float && pass_kind_list("-keep-float", ctx->keep_float, keep, ctx->diag))
		return false;
	func_for_each_safe(f, n, next) {
		(void)next;
		if (node_has_pred(n))
			continue;
		const struct type *t = n->nres ? n->types[0] : NULL;
		if (n->kind == NK_Quantize && op_val(n, 0).node->kind == NK_Dequantize) {
			struct value x = op_val(op_val(n, 0).node, 0);
			if (val_type(x) == t)
				pu_replace(f, n, x);
			else {
				struct node *r = node_create1(f, NK_RescaleQuantized, NULL, &x, 1, t, n, n->loc);
				pu_replace(f, n, node_val(r, 0));
			}
			pairs++;
			continue;
		}
		if (n->kind == NK_RescaleQuantized) {
			struct value x = op_val(n, 0);
			if (val_type(x) == t) {
				pu_replace(f, n, x);
				rescales++;
			} else if ((fq_foldable_producer(x) ||
				    (x.node->kind == NK_Quantize && !node_has_pred(x.node) && node_num_uses(x.node, -1) == 1)) &&
				   x.node->types[0]->elem == t->elem) {
				x.node->types[0] = t;
				pu_replace(f, n, x);
				rescales++;
			}
			continue;
		}
		if (fq_sink_dequantize(f, ctx, n, keep)) {
			sunk++;
			continue;
		}
		if ((n->kind == NK_Relu || n->kind == NK_Clip) && fq_quantized(t) && fq_foldable_producer(op_val(n, 0)) &&
		    op_type(n, 0)->elem == t->elem) {
			double lo, hi, want_lo = 0, want_hi = INFINITY;
			if (n->kind == NK_Clip) {
				want_lo = node_float(n, AN_min);
				want_hi = node_float(n, AN_max);
			}
			fq_range(t, &lo, &hi);
			if (lo >= want_lo && hi <= want_hi) {
				struct value x = op_val(n, 0);
				x.node->types[0] = t;
				pu_replace(f, n, x);
				clips++;
			}
		}
	}
	pass_stat(ctx, "Number of Quantize/Dequantize pairs folded", pairs);
	pass_stat(ctx, "Number of RescaleQuantized folded", rescales);
	pass_stat(ctx, "Number of quantized Relu/Clip folded into the producer's range", clips);
	pass_stat(ctx, "Number of Dequantize sunk below data movement", sunk);
	return pairs || rescales || clips || sunk;
}
