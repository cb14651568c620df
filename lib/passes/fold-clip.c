/* fold-clip.c - raises Min/Max against constant bounds into Clip.
 *
 *   Min(Max(x, lo), hi), Max(Min(x, hi), lo)    lo, hi splats, lo <= hi
 *   (each with its operands either way round)
 *   -> Clip(x) {min = lo, max = hi}
 * Only when the inner node has no other use, x has the result's type (float
 * or integer kinds, not quantized or bool) and no node carries a predicate.
 * "Splat" as in passutil.h (Splat nodes, splat and uniform constants).
 *
 * Numerics: equal on every number and on NaN; only the sign of a zero
 * result at a zero bound can differ (Max(-0.0, 0.0) is 0.0, Clip keeps
 * -0.0). The unused inner node is left to dce.
 * Requires: a verified function. Preserves: validity and result types.
 */
#include "passes/pass.h"
#include "passes/passutil.h"

/* If n (of kind k) is k(x, splat c) or k(splat c, x), sets *x and *c. */
static bool splat_operand(struct module *m, const struct node *n, struct value *x, double *c)
{
	for (unsigned side = 0; side < 2; side++)
		if (pu_splat_of(m, op_val(n, side), c)) {
			*x = op_val(n, 1 - side);
			return true;
		}
	return false;
}

static bool fold(struct func *f, struct node *n)
{
	struct module *m = f->mod;
	const struct type *t = node_type(n);
	enum elem_kind k = (enum elem_kind)t->elem;
	if (node_has_pred(n) || elem_is_quantized(k) || k == EK_BOOL)
		return false;
	struct value inner;
	double outer_c, inner_c;
	if (!splat_operand(m, n, &inner, &outer_c))
		return false;
	unsigned want = n->kind == NK_Min ? NK_Max : NK_Min;
	struct node *in = inner.node;
	if (in->kind != want || node_has_pred(in) || node_num_uses(in, -1) != 1)
		return false;
	struct value x;
	if (!splat_operand(m, in, &x, &inner_c) || val_type(x) != t)
		return false;
	double lo = n->kind == NK_Min ? inner_c : outer_c, hi = n->kind == NK_Min ? outer_c : inner_c;
	if (!(lo <= hi))
		return false;
	struct node *clip = pu_replace_new(f, n, NK_Clip, &x, 1);
	node_set_float(m, clip, AN_min, lo);
	node_set_float(m, clip, AN_max, hi);
	return true;
}

bool fold_clip_run(struct func *f, struct pass_ctx *ctx)
{
	return pu_fold_each(f, ctx, NK_Min, NK_Max, fold, "Number of Min/Max pairs folded into Clip");
}
