/* shuffle-depthwise.c - move a channel shuffle from a depthwise
 * convolution's input to its output.
 *
 * A channel shuffle (ShuffleNet's) reaches the graph as
 *   Reshape(x, [P, g, n]) -> Transpose [0, 2, 1] -> Reshape(back to x's type)
 * where x's last dimension (NHWC: the channels) is C = g * n and P the
 * product of the others: output channel c = j * g + i reads input channel
 * p(c) = i * n + j. A depthwise convolution (group = C, one filter of
 * KH x KW x 1 per channel) treats each channel on its own, so it commutes
 * with the permutation once its filters and biases are permuted the same
 * way: Conv(Shuffle(x), W, b) = Shuffle(Conv(x, W', b')) with
 * W'[p(c)] = W[c] and b'[p(c)] = b[c]. The pass rewrites the first form
 * into the second when the shuffle has no other use and W and b are float
 * constants (new constants; splats stay as they are). The shuffle then
 * moves a tensor the size of the convolution's result: four times smaller
 * after a convolution of stride 2. Nothing is computed differently (the
 * same products and sums per channel): exact.
 *
 * Requires: a verified function in NHWC form. Preserves: validity, result
 * types and values.
 */
#include "passes/pass.h"
#include "passes/passutil.h"

#include <stdlib.h>
#include <string.h>

/* If v is the result of a channel shuffle Reshape -> Transpose [0, 2, 1] ->
 * Reshape whose inner nodes have no other use, sets *x to the shuffled
 * value and *g, *n to its split of the channels. */
static bool channel_shuffle(struct value v, struct value *x, uint64_t *g, uint64_t *n)
{
	struct node *r2 = v.node;
	if (r2->kind != NK_Reshape || node_has_pred(r2))
		return false;
	struct node *t = r2->ops[0].def;
	if (t->kind != NK_Transpose || node_has_pred(t) || node_num_uses(t, -1) != 1)
		return false;
	unsigned len;
	const int64_t *s = node_ints(t, AN_shuffle, &len);
	if (len != 3 || s[0] != 0 || s[1] != 2 || s[2] != 1)
		return false;
	struct node *r1 = t->ops[0].def;
	if (r1->kind != NK_Reshape || node_has_pred(r1) || node_num_uses(r1, -1) != 1)
		return false;
	*x = op_val(r1, 0);
	const struct type *xt = val_type(*x), *st = node_type(r1);
	if (node_type(r2) != xt || xt->rank < 1 || st->rank != 3)
		return false;
	uint64_t c = xt->dims[xt->rank - 1];
	if (st->dims[1] * st->dims[2] != c || st->dims[0] * c != type_numel(xt))
		return false;
	*g = st->dims[1];
	*n = st->dims[2];
	return true;
}

/* The constant for w permuted along its first dimension (perm[c] is where
 * row c goes), or w itself when it is a splat; NULL after an unreadable
 * weight was reported. */
static struct constant *permuted(struct module *m, struct constant *w, const uint64_t *perm, uint64_t rows,
				 struct diag *d)
{
	double x;
	if (pu_splat_of(m, node_val(&w->n, 0), &x))
		return w;
	const struct type *t = w->n.types[0];
	const uint8_t *data = pu_constant_data(m, w, d);
	if (!data)
		return NULL;
	size_t row = type_bytes(t) / rows;
	uint8_t *out = xmalloc(type_bytes(t) ? type_bytes(t) : 1);
	for (uint64_t c = 0; c < rows; c++)
		memcpy(out + perm[c] * row, data + c * row, row);
	struct constant *nw = pu_new_constant(m, t, out, w->n.name);
	free(out);
	return nw;
}

/* Rewrites depthwise convolution conv of the shuffle of x; false after an
 * unreadable weight was reported. */
static bool rewrite(struct func *f, struct node *conv, struct value x, uint64_t g, uint64_t n, struct diag *d)
{
	struct module *m = f->mod;
	uint64_t c = g * n;
	uint64_t *perm = xmalloc(c * sizeof(uint64_t));
	for (uint64_t i = 0; i < g; i++)
		for (uint64_t j = 0; j < n; j++)
			perm[j * g + i] = i * n + j;
	struct constant *w = permuted(m, as_constant(conv->ops[1].def), perm, c, d);
	struct constant *b = w ? permuted(m, as_constant(conv->ops[2].def), perm, c, d) : NULL;
	free(perm);
	if (!b)
		return false;
	node_set_operand(conv, 0, x);
	node_set_operand(conv, 1, node_val(&w->n, 0));
	node_set_operand(conv, 2, node_val(&b->n, 0));
	/* the shuffle, now of the convolution's result, before its users */
	const struct type *zt = node_type(conv);
	uint64_t dims[3] = {type_numel(zt) / c, g, n};
	const struct type *st = type_get(m->types, (enum elem_kind)zt->elem, dims, 3);
	static const int64_t swap[3] = {0, 2, 1};
	struct node *after = conv->next;
	struct node *r1 = pu_new_reshape(f, node_val(conv, 0), st, after, conv->name);
	struct node *t = pu_new_transpose(f, node_val(r1, 0), swap, after, conv->name);
	struct node *r2 = pu_new_reshape(f, node_val(t, 0), zt, after, conv->name);
	value_replace_all_uses(node_val(conv, 0), node_val(r2, 0));
	node_set_operand(r1, 0, node_val(conv, 0));
	return true;
}

/* Whether conv is a depthwise convolution of c channels (one KH x KW
 * filter per channel) with float constant filter and bias. */
static bool depthwise(const struct node *conv, uint64_t c)
{
	if (conv->kind != NK_Convolution || node_has_pred(conv) || conv->ops[0].res != 0)
		return false;
	struct constant *w = as_constant(conv->ops[1].def), *b = as_constant(conv->ops[2].def);
	const struct type *t = node_type(conv);
	if (!w || !b || t->elem != EK_FLOAT || w->n.types[0]->elem != EK_FLOAT || b->n.types[0]->elem != EK_FLOAT)
		return false;
	const struct type *wt = w->n.types[0];
	return node_int(conv, AN_group) == (int64_t)c && wt->rank == 4 && wt->dims[0] == c && wt->dims[3] == 1 &&
	       t->rank == 4 && t->dims[3] == c && type_numel(b->n.types[0]) == c;
}

bool shuffle_depthwise_run(struct func *f, struct pass_ctx *ctx)
{
	uint64_t moved = 0;
	func_for_each_safe(f, conv, next) {
		if (conv->kind != NK_Convolution)
			continue;
		struct value x;
		uint64_t g, n;
		if (!channel_shuffle(op_val(conv, 0), &x, &g, &n) || node_num_uses(conv->ops[0].def, -1) != 1 ||
		    !depthwise(conv, g * n))
			continue;
		if (!rewrite(f, conv, x, g, n, ctx->diag))
			break;
		moved++;
	}
	pass_stat(ctx, "Number of channel shuffles moved below a depthwise convolution", moved);
	return moved > 0;
}
