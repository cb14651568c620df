/* fold-conv-affine.c - fold a per-channel Mul or Add by a constant into the
 * Convolution before it.
 *
 * A model may scale and shift a convolution's result channel by channel
 * with ordinary arithmetic rather than a BatchNormalization (Caffe2's
 * Inception v2 follows every normalization with Mul and Add by broadcast
 * per-channel vectors, which constant folding turns into whole constant
 * tensors). When one operand of a float Mul or Add is a Convolution (NHWC:
 * output channels innermost) whose filter and bias are constants and whose
 * result has no other use, and the other operand holds one value per output
 * channel (a splat, or a constant whose elements repeat with the period of
 * the channel count), the arithmetic moves into the convolution's weights:
 *   Mul by s: filter'[oc, ...] = filter[oc, ...] * s[oc], bias' = bias * s
 *   Add by t: bias'[oc] = bias[oc] + t[oc]
 * computed in double and rounded once to float. A filter or bias that only
 * this convolution uses is rewritten in place and keeps its name; a shared
 * one is left to its other users and the convolution gets a new constant
 * named after it. The folded convolution takes the Mul's or Add's name when
 * that was chosen (not made up). Splat filters and biases scaled by a splat
 * stay splats. A chain Conv -> Mul -> Add folds in one run (the nodes are
 * visited in order and the Add then reads the folded convolution), so
 * whatever follows (a Relu) can fuse with the convolution in a backend.
 *
 * Numerics: sum(x * (w * s)) + b * s instead of (sum(x * w) + b) * s:
 * results agree within float rounding of the accumulation, not bit for
 * bit. Only 32-bit float values are folded.
 *
 * Inference only (PASS_INFER_ONLY): training updates the weights.
 * Requires: a verified function. Preserves: validity and result types.
 */
#include "passes/pass.h"
#include "passes/passutil.h"

#include <stdlib.h>
#include <string.h>

/* The Convolution that operand i of n is, if n may fold into it. */
static struct node *foldable_conv(const struct node *n, unsigned i)
{
	struct node *conv = n->ops[i].def;
	if (conv->kind != NK_Convolution || node_has_pred(conv) || n->ops[i].res != 0)
		return NULL;
	if (node_num_uses(conv, -1) != 1)
		return NULL;
	struct constant *w = as_constant(conv->ops[1].def), *b = as_constant(conv->ops[2].def);
	const struct type *t = node_type(conv);
	if (!w || !b || w->n.types[0]->elem != EK_FLOAT || b->n.types[0]->elem != EK_FLOAT || t->elem != EK_FLOAT)
		return NULL;
	/* NHWC: the filter's first dimension and the result's last are the
	 * output channels, one bias value each */
	const struct type *wt = w->n.types[0], *bt = b->n.types[0];
	if (t->rank < 1 || wt->rank < 1 || wt->dims[0] != t->dims[t->rank - 1] || type_numel(bt) != wt->dims[0])
		return NULL;
	return conv;
}

/* The per-channel values of v (ch channels, innermost) into co[0..ch), if
 * v has one value per channel: a splat, or a float constant whose elements
 * repeat with period ch. False when not; *bad set after a weight could not
 * be read (reported to d). */
static bool channel_values(struct module *m, struct value v, uint64_t ch, double *co, bool *bad, struct diag *d)
{
	double x;
	if (val_type(v)->elem == EK_FLOAT && pu_splat_of(m, v, &x)) {
		for (uint64_t c = 0; c < ch; c++)
			co[c] = x;
		return true;
	}
	struct constant *k = pu_constant(v);
	const struct type *t = val_type(v);
	if (!k || t->elem != EK_FLOAT || ch == 0)
		return false;
	uint64_t n = type_numel(t);
	if (n % ch != 0)
		return false;
	const uint8_t *data = pu_constant_data(m, k, d);
	if (!data) {
		*bad = true;
		return false;
	}
	for (uint64_t i = ch; i < n; i++)
		if (memcmp(data + i * 4, data + (i % ch) * 4, 4) != 0)
			return false;
	for (uint64_t c = 0; c < ch; c++)
		co[c] = pu_load(t, data, c);
	return true;
}

/* If constant c (float) holds one value in every element, stores it in *x. */
static bool uniform(struct constant *c, double *x)
{
	if (c->init == INIT_SPLAT || c->init == INIT_ZERO) {
		*x = c->init == INIT_SPLAT ? (double)(float)c->splat_f : 0.0;
		return type_numel(c->n.types[0]) > 0;
	}
	return false;
}

/* Folds y = conv * mul[c] + add[c] into conv's filter and bias (scale:
 * whether the filter changes at all); false after an unreadable weight was
 * reported. */
static bool fold_into(struct module *m, struct node *conv, const double *mul, const double *add, bool scale,
		      struct diag *d)
{
	struct constant *w = as_constant(conv->ops[1].def), *b = as_constant(conv->ops[2].def);
	const struct type *wt = w->n.types[0], *bt = b->n.types[0];
	uint64_t oc = wt->dims[0], per = oc ? type_numel(wt) / oc : 0;
	double wv, bv;
	if (oc > 0 && uniform(w, &wv) && uniform(b, &bv) && pu_all_equal(mul, oc) && pu_all_equal(add, oc)) {
		if (scale) {
			struct constant *nw = pu_rewrite_target(m, w);
			pu_make_splat(nw, wv * mul[0]);
			node_set_operand(conv, 1, node_val(&nw->n, 0));
		}
		struct constant *nb = pu_rewrite_target(m, b);
		pu_make_splat(nb, bv * mul[0] + add[0]);
		node_set_operand(conv, 2, node_val(&nb->n, 0));
		return true;
	}
	const uint8_t *bd = pu_constant_data(m, b, d);
	if (!bd)
		return false;
	if (scale) {
		const uint8_t *wd = pu_constant_data(m, w, d);
		if (!wd)
			return false;
		uint8_t *nwd = xmalloc(type_bytes(wt) ? type_bytes(wt) : 1);
		for (uint64_t o = 0; o < oc; o++)
			for (uint64_t i = 0; i < per; i++)
				pu_store(wt, nwd, o * per + i, pu_load(wt, wd, o * per + i) * mul[o]);
		struct constant *nw = pu_rewrite_target(m, w);
		constant_set_data(m, nw, nwd);
		free(nwd);
		node_set_operand(conv, 1, node_val(&nw->n, 0));
	}
	uint8_t *nbd = xmalloc(type_bytes(bt) ? type_bytes(bt) : 1);
	for (uint64_t o = 0; o < oc; o++)
		pu_store(bt, nbd, o, pu_load(bt, bd, o) * mul[o] + add[o]);
	struct constant *nb = pu_rewrite_target(m, b);
	constant_set_data(m, nb, nbd);
	free(nbd);
	node_set_operand(conv, 2, node_val(&nb->n, 0));
	return true;
}

bool fold_conv_affine_run(struct func *f, struct pass_ctx *ctx)
{
	struct module *m = f->mod;
	uint64_t muls = 0, adds = 0;
	bool stop = false;
	func_for_each_safe(f, n, next) {
		if ((n->kind != NK_Mul && n->kind != NK_Add) || node_has_pred(n) || node_type(n)->elem != EK_FLOAT)
			continue;
		for (unsigned i = 0; i < 2; i++) {
			struct node *conv = foldable_conv(n, i);
			if (!conv || n->ops[1 - i].def == conv)
				continue;
			const struct type *t = node_type(conv);
			if (t != node_type(n)) /* types are interned */
				continue;
			uint64_t ch = t->dims[t->rank - 1];
			double *co = xcalloc(2 * ch + 1, sizeof(double));
			bool bad = false, ok = channel_values(m, op_val(n, 1 - i), ch, co, &bad, ctx->diag);
			if (ok) {
				/* co holds the operand; make it mul (co) and add (co + ch) */
				if (n->kind == NK_Add) {
					memcpy(co + ch, co, ch * sizeof(double));
					for (uint64_t c = 0; c < ch; c++)
						co[c] = 1.0;
				}
				ok = fold_into(m, conv, co, co + ch, n->kind == NK_Mul, ctx->diag);
				bad = !ok;
			}
			free(co);
			if (bad) {
				stop = true;
				break;
			}
			if (!ok)
				continue;
			/* n is erased by the replacement */
			const char *name = n->bits & NODE_NAME_MADE ? NULL : n->name;
			*(n->kind == NK_Mul ? &muls : &adds) += 1;
			pu_replace(f, n, node_val(conv, 0));
			if (name)
				node_rename(f, conv, name);
			break;
		}
		if (stop)
			break;
	}
	pass_stat(ctx, "Number of per-channel Muls folded into a Convolution", muls);
	pass_stat(ctx, "Number of per-channel Adds folded into a Convolution", adds);
	return muls || adds;
}
