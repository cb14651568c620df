/* fold-softmax.c - raises the arithmetic form of SoftMax.
 *
 *   e = Exp(x)  or  e = Exp(Sub(x, E(BatchedReduceMax(x) {axes = [a]})))
 *   Div(e, E(BatchedReduceAdd(e) {axes = [a]}))
 *   -> SoftMax(x) {axis = a}
 * where E(r) puts the reduced value back to x's shape: Broadcast(r), or
 * Broadcast(Reshape(r)) where the Reshape only inserts the 1 at axis a.
 * Only on float kinds, when e has exactly the two uses of the pattern and
 * every node between it and the Div has one use, and nothing carries a
 * predicate. The unused nodes are left to dce.
 *
 * Numerics: the SoftMax kernel subtracts the maximum and computes in
 * double: equal within rounding to either form, and it cannot overflow
 * where the plain form gives inf/inf = NaN.
 * Requires: a verified function. Preserves: validity and result types.
 */
#include "passes/pass.h"
#include "passes/passutil.h"

/* If v is E(r) for a reduction r over axis a of a value of type t, returns
 * r's node, else NULL. */
static struct node *expanded(struct value v, const struct type *t, unsigned a, bool single_use)
{
	struct node *b = v.node;
	if (b->kind != NK_Broadcast || node_has_pred(b) || val_type(v) != t)
		return NULL;
	if (single_use && node_num_uses(b, -1) != 1)
		return NULL;
	struct value in = op_val(b, 0);
	const struct type *it = val_type(in);
	unsigned axis = (unsigned)node_int(b, AN_axis);
	/* the broadcast input's dims aligned to t: t's dims with a 1 at a */
	if (it->rank + axis > t->rank)
		return NULL;
	for (unsigned i = 0; i < t->rank; i++) {
		uint64_t d = i >= axis && i < axis + it->rank ? it->dims[i - axis] : 1;
		if (d != (i == a ? 1 : t->dims[i]))
			return NULL;
	}
	struct node *r = in.node;
	if (r->kind == NK_Reshape && !node_has_pred(r) && (!single_use || node_num_uses(r, -1) == 1))
		r = r->ops[0].def;
	/* the reduction's result is t without axis a */
	if (node_type(r)->rank + 1 != t->rank)
		return NULL;
	return r;
}

/* Whether r reduces exactly axis a of v. */
static bool reduces(const struct node *r, unsigned kind, struct value v, unsigned a)
{
	unsigned na;
	if (r->kind != kind || node_has_pred(r) || r->ops[0].def != v.node || r->ops[0].res != v.res)
		return false;
	const int64_t *axes = node_ints(r, AN_axes, &na);
	return na == 1 && axes[0] == (int64_t)a;
}

static bool fold(struct func *f, struct node *n)
{
	const struct type *t = node_type(n);
	if (node_has_pred(n) || !elem_is_float((enum elem_kind)t->elem) || t->rank == 0)
		return false;
	struct node *e = n->ops[0].def;
	if (e->kind != NK_Exp || node_has_pred(e) || node_type(e) != t || node_num_uses(e, -1) != 2)
		return false;
	for (unsigned a = 0; a < t->rank; a++) {
		struct node *sum = expanded(op_val(n, 1), t, a, true);
		if (!sum || !reduces(sum, NK_BatchedReduceAdd, node_val(e, 0), a) || node_num_uses(sum, -1) != 1)
			continue;
		struct value x = op_val(e, 0);
		struct node *sub = x.node;
		if (sub->kind == NK_Sub && !node_has_pred(sub) && node_num_uses(sub, -1) == 1) {
			struct node *mx = expanded(op_val(sub, 1), t, a, false);
			if (mx && reduces(mx, NK_BatchedReduceMax, op_val(sub, 0), a))
				x = op_val(sub, 0);
		}
		if (val_type(x) != t)
			return false;
		node_set_int(f->mod, pu_replace_new(f, n, NK_SoftMax, &x, 1), AN_axis, a);
		return true;
	}
	return false;
}

bool fold_softmax_run(struct func *f, struct pass_ctx *ctx)
{
	return pu_fold_each(f, ctx, NK_Div, NK_Div, fold, "Number of Exp/ReduceAdd/Div patterns folded into SoftMax");
}
