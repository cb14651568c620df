/* foldbn.c - fold inference BatchNormalization into the Convolution before it,
 * and remove identity BatchNormalizations.
 *
 * In inference a BatchNormalization with constant statistics is a
 * per-channel affine map y = x * mul[c] + add[c] (mul = scale /
 * sqrt(var + epsilon), add = bias - mean * mul). When its input is a
 * Convolution over the channel dimension (NHWC: channel_idx 3) whose filter
 * and bias are constants and whose result has no other use, the map moves
 * into the convolution's weights:
 *   filter'[oc, ...] = filter[oc, ...] * mul[oc]
 *   bias'[oc]        = bias[oc] * mul[oc] + add[oc]
 * computed in double and rounded once to the weights' kind. A filter or bias
 * that only this convolution uses is rewritten in place and keeps its name;
 * a shared one is left to its other users and the convolution gets a new
 * constant named after it. The folded convolution computes the
 * BatchNormalization's value, not its own any more, so it takes the
 * BatchNormalization's name when that was chosen (not made up by the
 * builder). Uniform
 * inputs (splat filter and bias, the same coefficients in every channel)
 * give splat constants rather than dense data: the same values, no payload
 * to compute or print.
 *
 * A BatchNormalization whose mul is exactly 1 and add exactly 0 in every
 * channel is removed (x * 1 + 0 == x; only the sign of a zero can differ).
 *
 * Numerics: the folded convolution sums (x * w * mul) where the original
 * computed (sum x * w) * mul + add, so results agree within float rounding
 * of the accumulation, not bit for bit. Only float (32-bit) weights are
 * folded.
 *
 * Inference only (PASS_INFER_ONLY): training updates the statistics.
 * Requires: a verified function. Preserves: validity and result types.
 */
#include "passes/pass.h"
#include "passes/passutil.h"

#include <stdlib.h>
#include <string.h>

/* Whether every channel of the coefficients is the identity. */
static bool identity_coeffs(const double *co, uint64_t ch)
{
	for (uint64_t c = 0; c < ch; c++)
		if (co[c] != 1.0 || co[ch + c] != 0.0)
			return false;
	return true;
}

/* The Convolution n's input comes from, if BN n may fold into it. */
static struct node *foldable_conv(const struct node *n)
{
	struct node *conv = n->ops[0].def;
	if (conv->kind != NK_Convolution || node_has_pred(conv) || n->ops[0].res != 0)
		return NULL;
	if (node_num_uses(conv, -1) != 1 || node_int(n, AN_channel_idx) != 3)
		return NULL;
	struct constant *w = as_constant(conv->ops[1].def), *b = as_constant(conv->ops[2].def);
	if (!w || !b || w->n.types[0]->elem != EK_FLOAT || b->n.types[0]->elem != EK_FLOAT ||
	    node_type(conv)->elem != EK_FLOAT)
		return NULL;
	return conv;
}

/* If constant c (float) holds one value in every element, stores it in *x
 * and returns true, without materializing a splat or zero initializer. */
static bool uniform_value(struct constant *c, double *x)
{
	const struct type *t = c->n.types[0];
	uint64_t n = type_numel(t);
	if (n == 0)
		return false;
	if (c->init == INIT_SPLAT || c->init == INIT_ZERO) {
		*x = c->init == INIT_SPLAT ? (double)(float)c->splat_f : 0.0;
		return true;
	}
	if (!c->data)
		return false;
	for (uint64_t i = 1; i < n; i++)
		if (memcmp(c->data, c->data + i * 4, 4) != 0)
			return false;
	*x = pu_load(t, c->data, 0);
	return true;
}

/* Scales the filter and bias of conv by the coefficients; false after an
 * unreadable weight was reported. When the filter and the bias are uniform
 * and so are mul and add across channels (models whose weights are splats),
 * the results are uniform too: they stay splat constants, computed by the
 * same formula and rounding as the dense ones, with no payload made. */
static bool fold_into(struct module *m, struct node *conv, const double *co, struct diag *d)
{
	struct constant *w = as_constant(conv->ops[1].def), *b = as_constant(conv->ops[2].def);
	const struct type *wt = w->n.types[0], *bt = b->n.types[0];
	uint64_t oc = wt->dims[0], per = oc ? type_numel(wt) / oc : 0;
	double wv, bv;
	struct constant *ncw, *ncb;
	if (oc > 0 && per > 0 && uniform_value(w, &wv) && uniform_value(b, &bv) && pu_all_equal(co, oc) &&
	    pu_all_equal(co + oc, oc)) {
		ncw = pu_rewrite_target(m, w);
		ncb = pu_rewrite_target(m, b);
		pu_make_splat(ncw, wv * co[0]);
		pu_make_splat(ncb, bv * co[0] + co[oc]);
	} else {
		const uint8_t *wd = constant_data(m, w, d), *bd = wd ? constant_data(m, b, d) : NULL;
		if (!bd)
			return false;
		uint8_t *nw = xmalloc(type_bytes(wt) ? type_bytes(wt) : 1);
		uint8_t *nb = xmalloc(type_bytes(bt) ? type_bytes(bt) : 1);
		for (uint64_t o = 0; o < oc; o++) {
			for (uint64_t i = 0; i < per; i++)
				pu_store(wt, nw, o * per + i, pu_load(wt, wd, o * per + i) * co[o]);
			pu_store(bt, nb, o, pu_load(bt, bd, o) * co[o] + co[oc + o]);
		}
		/* the old payloads were read in full above */
		ncw = pu_rewrite_target(m, w);
		ncb = pu_rewrite_target(m, b);
		constant_set_data(m, ncw, nw);
		constant_set_data(m, ncb, nb);
		free(nw);
		free(nb);
	}
	node_set_operand(conv, 1, node_val(&ncw->n, 0));
	node_set_operand(conv, 2, node_val(&ncb->n, 0));
	return true;
}

/* The BatchNormalizations fold-batchnorm looks at: those of a float input. */
static bool float_input(const struct node *n) { return elem_is_float((enum elem_kind)op_type(n, 0)->elem); }

/* fold-batchnorm's counters, and the diag fold_into reports to. */
struct fb_count {
	uint64_t folded, removed;
	struct diag *d;
};

/* pu_each_batchnorm's step: removes an identity BatchNormalization, or
 * folds it into the Convolution before it; false (stop) when fold_into
 * reported an error. */
static bool fold_one(struct func *f, struct node *n, const double *co, uint64_t ch, void *arg)
{
	struct fb_count *cnt = arg;
	struct node *conv;
	if (identity_coeffs(co, ch)) {
		pu_replace(f, n, op_val(n, 0));
		cnt->removed++;
	} else if ((conv = foldable_conv(n)) != NULL) {
		if (!fold_into(f->mod, conv, co, cnt->d))
			return false;
		/* the BN's successor may be the walk's next node; erasing n keeps it valid */
		const char *name = n->bits & NODE_NAME_MADE ? NULL : n->name;
		pu_replace(f, n, node_val(conv, 0));
		if (name)
			node_rename(f, conv, name);
		cnt->folded++;
	}
	return true;
}

bool fold_batchnorm_run(struct func *f, struct pass_ctx *ctx)
{
	struct fb_count cnt = {0, 0, ctx->diag};
	pu_each_batchnorm(f, float_input, fold_one, &cnt, ctx->diag);
	pass_stat(ctx, "Number of BatchNormalizations folded into a Convolution", cnt.folded);
	pass_stat(ctx, "Number of identity BatchNormalizations removed", cnt.removed);
	return cnt.folded || cnt.removed;
}
