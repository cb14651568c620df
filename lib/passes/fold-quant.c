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
 *   - RescaleQuantized(x) : T with x of type T  ->  x.
 *
 * Requires: a verified function. Preserves: validity and every quantized
 * value's bits.
 */
#include "passes/kindfacts.h"
#include "passes/pass.h"
#include "passes/passutil.h"

#include <math.h>

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

bool fold_quantization_run(struct func *f, struct pass_ctx *ctx)
{
	uint64_t pairs = 0, rescales = 0, clips = 0;
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
			} else if (fq_foldable_producer(x) && x.node->types[0]->elem == t->elem) {
				x.node->types[0] = t;
				pu_replace(f, n, x);
				rescales++;
			}
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
	return pairs || rescales || clips;
}
