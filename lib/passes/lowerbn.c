/* lowerbn.c - lower inference BatchNormalization into Mul and Add.
 *
 * A BatchNormalization that fold-batchnorm could not fold (its input is not a
 * Convolution with constant weights, e.g. DenseNet's pre-activation
 * normalizations after a Concat) is, with constant statistics, the
 * per-channel affine map y = x * mul[c] + add[c]. It becomes
 *   Add(Mul(x, Broadcast(@mul) {axis = channel_idx}),
 *       Broadcast(@add) {axis = channel_idx})
 * with @mul and @add new constants of C elements computed at compile time
 * (mul = scale / sqrt(var + epsilon), add = bias - mean * mul, in double,
 * rounded to the input's float kind). Elementwise Mul and Add sink
 * Transposes and fuse with their neighbours more easily than a
 * BatchNormalization.
 *
 * Numerics: the BatchNormalization computes x * mul + add in double and
 * rounds once; the lowered form rounds mul and add to float and rounds after
 * the Mul and after the Add: equal within float rounding (a few ulp).
 *
 * Inference only (PASS_INFER_ONLY). Runs after fold-batchnorm in the
 * pipeline so foldable ones fold instead. Float inputs only.
 * Requires: a verified function. Preserves: validity and result types.
 */
#include "passes/pass.h"
#include "passes/passutil.h"

#include <stdio.h>
#include <stdlib.h>

/* A constant of the C coefficients in v[0..C) of kind `like`'s, broadcast to
 * type t along axis. */
static struct node *channel_broadcast(struct func *f, const struct type *like, const double *v, uint64_t ch,
				      const struct type *t, int64_t axis, struct node *before, const char *base)
{
	struct module *m = f->mod;
	const struct type *ct = type_get(m->types, (enum elem_kind)like->elem, &ch, 1);
	uint8_t *data = xmalloc(type_bytes(ct) ? type_bytes(ct) : 1);
	for (uint64_t c = 0; c < ch; c++)
		pu_store(ct, data, c, v[c]);
	struct constant *k = pu_new_constant(m, ct, data, base);
	free(data);
	struct value kv = node_val(&k->n, 0);
	struct node *b = node_create1(f, NK_Broadcast, base, &kv, 1, t, before, before->loc);
	node_set_int(m, b, AN_axis, axis);
	return b;
}

/* The BatchNormalizations lower-batchnorm lowers: a float result of its
 * input's element kind (Mul and Add need one kind). */
static bool float_in_out(const struct node *n)
{
	const struct type *t = node_type(n);
	return elem_is_float((enum elem_kind)t->elem) && type_same_elem(t, op_type(n, 0));
}

/* pu_each_batchnorm's step: n becomes Add(Mul(x, mul), add), the
 * per-channel coefficients broadcast along the channel axis; counts it in
 * *(uint64_t *)arg. */
static bool lower_one(struct func *f, struct node *n, const double *co, uint64_t ch, void *arg)
{
	const struct type *t = node_type(n);
	int64_t axis = node_int(n, AN_channel_idx);
	char base[64];
	snprintf(base, sizeof base, "%.40s.mul", n->name);
	struct node *bm = channel_broadcast(f, t, co, ch, t, axis, n, base);
	snprintf(base, sizeof base, "%.40s.add", n->name);
	struct node *ba = channel_broadcast(f, t, co + ch, ch, t, axis, n, base);
	snprintf(base, sizeof base, "%.40s.scaled", n->name);
	struct value mops[2] = {op_val(n, 0), node_val(bm, 0)};
	struct node *mul = node_create1(f, NK_Mul, base, mops, 2, t, n, n->loc);
	struct value aops[2] = {node_val(mul, 0), node_val(ba, 0)};
	struct node *add = node_create1(f, NK_Add, n->name, aops, 2, t, n, n->loc);
	pu_replace(f, n, node_val(add, 0));
	(*(uint64_t *)arg)++;
	return true;
}

bool lower_batchnorm_run(struct func *f, struct pass_ctx *ctx)
{
	uint64_t lowered = 0;
	pu_each_batchnorm(f, float_in_out, lower_one, &lowered, ctx->diag);
	pass_stat(ctx, "Number of BatchNormalizations lowered to Mul and Add", lowered);
	return lowered != 0;
}
