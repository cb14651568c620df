/* fold-leaky-relu.c - raises the arithmetic forms of LeakyRelu.
 *
 *   Max(x, Mul(x, a)), Max(Mul(x, a), x)   a a splat with 0 <= a <= 1
 *   (the Mul with its operands either way round)
 *   PRelu(x, a)                            a a splat
 *   -> LeakyRelu(x) {alpha = a}
 * Only on float kinds, when x has the result's type, the Mul has no other
 * use and nothing carries a predicate.
 *
 * Numerics: exact. For 0 <= a <= 1, a*x <= x exactly when x >= 0, so Max
 * picks x there and a*x below; LeakyRelu rounds a*x to the kind once, as
 * Mul does. The unused Mul is left to dce.
 * Requires: a verified function. Preserves: validity and result types.
 */
#include "passes/pass.h"
#include "passes/passutil.h"

static bool same_value(struct value a, struct value b) { return a.node == b.node && a.res == b.res; }

/* If m is Mul(x, splat a) or Mul(splat a, x), returns true with *a. */
static bool scaled_by(struct module *mod, const struct node *m, struct value x, double *a)
{
	if (m->kind != NK_Mul || node_has_pred(m) || node_num_uses(m, -1) != 1)
		return false;
	for (unsigned side = 0; side < 2; side++)
		if (same_value(op_val(m, side), x) && pu_splat_of(mod, op_val(m, 1 - side), a))
			return true;
	return false;
}

static bool fold(struct func *f, struct node *n)
{
	const struct type *t = node_type(n);
	if (node_has_pred(n) || !elem_is_float((enum elem_kind)t->elem))
		return false;
	double a;
	struct value x = {NULL, 0};
	if (n->kind == NK_PRelu) {
		if (!pu_splat_of(f->mod, op_val(n, 1), &a))
			return false;
		x = op_val(n, 0);
	} else {
		for (unsigned side = 0; side < 2 && !x.node; side++)
			if (scaled_by(f->mod, n->ops[1 - side].def, op_val(n, side), &a) && a >= 0 && a <= 1)
				x = op_val(n, side);
		if (!x.node)
			return false;
	}
	if (val_type(x) != t)
		return false;
	node_set_float(f->mod, pu_replace_new(f, n, NK_LeakyRelu, &x, 1), AN_alpha, a);
	return true;
}

bool fold_leaky_relu_run(struct func *f, struct pass_ctx *ctx)
{
	return pu_fold_each(f, ctx, NK_Max, NK_PRelu, fold, "Number of LeakyRelu patterns folded");
}
