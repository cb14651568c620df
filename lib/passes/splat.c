/* splat.c - fold computations on splats into Splat nodes.
 *
 * A splat (passutil.h: a value all of whose elements are one number) stays
 * a splat through data movement and through elementwise arithmetic, and a
 * Splat node is the cheapest way to make one:
 *   Reshape, Transpose, Broadcast, Tile of a splat          -> Splat of the result type
 *   Add, Sub, Mul, Div, Max, Min of splats (float kinds)    -> Splat of the result
 *   Neg, Abs, Relu of a splat (float kinds)                 -> Splat of the result
 * (KindFacts.def: PK_SPLAT_MOVES and the SPLAT_FOLD rows.)
 * Data movement of a Splat node or of a splat constant of any non-quantized
 * kind folds (the value must be representable in the kind, which it is
 * when it came from one). Arithmetic is computed in double and rounded once
 * to the result kind, as the interpreter does, so the folded value is
 * exactly the value every element would have had; Max and Min give NaN when
 * an operand is NaN, as the interpreter does. Constant operands with a
 * non-splat payload are left to other passes.
 *
 * Requires: a verified function. Preserves: validity and result types.
 */
#include "passes/kindfacts.h"
#include "passes/pass.h"
#include "passes/passutil.h"

#include <math.h>

/* The folded value of n over splat operands (KindFacts.def's SPLAT_FOLD
 * row of its kind), or false. */
static bool fold_value(struct module *m, const struct node *n, double *out)
{
	double a, b = 0;
	if (!pu_splat_of(m, op_val(n, 0), &a))
		return false;
	if (n->nops == 2 && !pu_splat_of(m, op_val(n, 1), &b))
		return false;
	*out = pk_splat_fold[n->kind](a, b);
	return true;
}

/* Rounds v to float kind k (through a one-element store). */
static double round_to(const struct type *t, double v)
{
	uint8_t buf[8];
	pu_store(t, buf, 0, v);
	return pu_load(t, buf, 0);
}

bool optimize_splat_run(struct func *f, struct pass_ctx *ctx)
{
	struct module *m = f->mod;
	uint64_t moved = 0, folded = 0;
	func_for_each_safe(f, n, next) {
		if (node_has_pred(n) || n->nres != 1 || n->nops == 0)
			continue;
		const struct type *t = node_type(n);
		enum elem_kind k = (enum elem_kind)t->elem;
		if (elem_is_quantized(k))
			continue;
		double v;
		if (pk_has(n->kind, PK_SPLAT_MOVES)) {
			if (!pu_splat_of(m, op_val(n, 0), &v) || !pu_representable(k, v))
				continue;
			pu_replace(f, n, node_val(pu_new_splat(f, t, v, n, n->name), 0));
			moved++;
		} else if (pk_splat_fold[n->kind]) {
			if (!elem_is_float(k) || !fold_value(m, n, &v))
				continue;
			pu_replace(f, n, node_val(pu_new_splat(f, t, round_to(t, v), n, n->name), 0));
			folded++;
		}
	}
	pass_stat(ctx, "Number of data movements of splats made Splats", moved);
	pass_stat(ctx, "Number of operations on splats folded", folded);
	return moved || folded;
}
