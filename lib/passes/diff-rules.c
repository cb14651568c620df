/* diff-rules.c - gradient rules of the differentiate pass kept apart from
 * the other rule files (Gradients.def names them):
 *
 *   LocalResponseNormalization: LocalResponseNormalizationGrad(X, G).
 *   BatchNormalization with -mode=train: BatchNormalizationGrad(X, Scale,
 *     batch Mean, batch Var, G) -> dX, dScale, dBias. Without -mode=train
 *     the statistics are the Mean and Var operands, so the normalization is
 *     affine per channel: dX = G * Scale / sqrt(Var + eps), dBias = sum G,
 *     dScale = sum G * (X - Mean) / sqrt(Var + eps), the sums over every
 *     axis but the channel; Mean and Var get no adjoint (a loss that needs
 *     one is reported).
 *
 * dg_bn_train_forward writes @F_grad's copy of a BatchNormalization with
 * -mode=train: the batch's statistics, mean = BatchedReduceMean(X) and
 * var = BatchedReduceMean((X - mean)^2) (biased) over every axis but the
 * channel, feed a BatchNormalization in place of Mean and Var; when Mean
 * and Var are placeholders, section 3 of the step Saves
 *   Mean' = Mean * momentum + mean * (1 - momentum)
 *   Var'  = Var * momentum + var * (1 - momentum)
 * (constant statistics are not updated).
 */
#include "passes/differentiate.h"
#include "passes/passutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* v (C values) reshaped to 1s but at axis ch and broadcast to t. */
static struct value bcast_c(struct dctx *c, struct value v, const struct type *t, unsigned ch,
			    const struct node *base, const char *sfx)
{
	uint64_t d[GLOW_MAX_RANK];
	for (unsigned i = 0; i < t->rank; i++)
		d[i] = i == ch ? t->dims[ch] : 1;
	struct value r =
		dg_mk1_s(c, NK_Reshape, &v, 1, type_with_dims(c->m->types, val_type(v), d, t->rank), base, sfx);
	return dg_mk1_s(c, NK_Broadcast, &r, 1, t, base, sfx);
}

/* A reduction k of v over every axis but ch: C values. */
static struct value reduce_c(struct dctx *c, unsigned k, struct value v, unsigned ch, const struct node *base,
			     const char *sfx)
{
	const struct type *t = val_type(v);
	int64_t axes[GLOW_MAX_RANK];
	unsigned na = 0;
	for (unsigned i = 0; i < t->rank; i++)
		if (i != ch)
			axes[na++] = (int64_t)i;
	uint64_t cdim = t->dims[ch];
	struct value r = dg_mk1_s(c, k, &v, 1, type_with_dims(c->m->types, t, &cdim, 1), base, sfx);
	node_set_ints(c->m, r.node, AN_axes, axes, na);
	return r;
}

/* LocalResponseNormalization (Gradients.def): LocalResponseNormalizationGrad(X, G). */
bool dr_lrn(struct dctx *c, struct node *n, struct value gy)
{
	struct value ops[2] = {op_val(n, 0), gy};
	struct value g = dg_mk1(c, NK_LocalResponseNormalizationGrad, ops, 2, val_type(gy), n);
	node_set_int(c->m, g.node, AN_half_window_size, node_int(n, AN_half_window_size));
	static const enum attr_name fl[3] = {AN_alpha, AN_beta, AN_k};
	for (unsigned i = 0; i < 3; i++)
		node_set_float(c->m, g.node, fl[i], node_float(n, fl[i]));
	dg_add_adj(c, ops[0], g);
	return true;
}

/* BatchNormalization without -mode=train: affine per channel. */
static bool bn_affine(struct dctx *c, struct node *n, struct value gy)
{
	struct value x = op_val(n, 0), scale = op_val(n, 1), bias = op_val(n, 2), mean = op_val(n, 3),
		     var = op_val(n, 4);
	if (dg_wants_grad(c, mean) || dg_wants_grad(c, var))
		return false;
	const struct type *t = val_type(x), *ct = val_type(var);
	unsigned ch = (unsigned)node_int(n, AN_channel_idx);
	struct value veps = dg_mk_bin(c, NK_Add, var, dg_mk_splat(c, ct, node_float(n, AN_epsilon), n), n);
	struct value sd = dg_mk1(c, NK_Sqrt, &veps, 1, ct, n);
	if (dg_wants_grad(c, x)) {
		struct value k = bcast_c(c, dg_mk_bin(c, NK_Div, scale, sd, n), t, ch, n, "grad");
		dg_add_adj(c, x, dg_mk_bin(c, NK_Mul, gy, k, n));
	}
	if (dg_wants_grad(c, bias))
		dg_add_adj(c, bias, reduce_c(c, NK_BatchedReduceAdd, gy, ch, n, "dbias"));
	if (dg_wants_grad(c, scale)) {
		struct value xc = dg_mk_bin(c, NK_Sub, x, bcast_c(c, mean, t, ch, n, "grad"), n);
		struct value xh = dg_mk_bin(c, NK_Div, xc, bcast_c(c, sd, t, ch, n, "grad"), n);
		struct value gxh = dg_mk_bin(c, NK_Mul, gy, xh, n);
		dg_add_adj(c, scale, reduce_c(c, NK_BatchedReduceAdd, gxh, ch, n, "dscale"));
	}
	return true;
}

static bool bn_batch(struct dctx *c, struct node *n, struct value gy)
{
	struct value ops[5] = {op_val(n, 0), op_val(n, 1), op_val(n, 3), op_val(n, 4), gy};
	const struct type *t[3] = {val_type(ops[0]), val_type(ops[1]), val_type(ops[1])};
	struct node *g = dg_mk(c, NK_BatchNormalizationGrad, ops, 5, t, n);
	node_set_int(c->m, g, AN_channel_idx, node_int(n, AN_channel_idx));
	node_set_float(c->m, g, AN_epsilon, node_float(n, AN_epsilon));
	dg_add_adj(c, ops[0], node_val(g, 0));
	dg_add_adj(c, ops[1], node_val(g, 1));
	dg_add_adj(c, op_val(n, 2), node_val(g, 2));
	return true;
}

/* BatchNormalization (Gradients.def): with the batch's statistics under
 * -mode=train, else affine per channel; float only. */
bool dr_batchnorm(struct dctx *c, struct node *n, struct value gy)
{
	if (!elem_is_float((enum elem_kind)op_type(n, 0)->elem))
		return false;
	return c->train ? bn_batch(c, n, gy) : bn_affine(c, n, gy);
}

/* Queues Save(old * momentum + batch * (1 - momentum), old) for section 3. */
static void queue_running(struct dctx *c, struct value old, struct value batch, double mom, const struct node *n,
			  const char *sfx)
{
	const struct type *t = val_type(old);
	/* 1 - momentum to 15 digits: 0.1, not 0.09999999999999998 */
	char buf[32];
	snprintf(buf, sizeof buf, "%.15g", 1 - mom);
	double rest = strtod(buf, NULL);
	struct value a = dg_mk_bin_s(c, NK_Mul, old, dg_mk_splat_s(c, t, mom, n, "momentum"), n, sfx);
	struct value b = dg_mk_bin_s(c, NK_Mul, batch, dg_mk_splat_s(c, t, rest, n, "rest"), n, sfx);
	if (c->nbn_save + 1 > c->bn_cap) {
		c->bn_cap = c->bn_cap ? 2 * c->bn_cap : 8;
		c->bn_save = realloc(c->bn_save, 2 * c->bn_cap * sizeof *c->bn_save);
		if (!c->bn_save)
			abort();
	}
	c->bn_save[2 * c->nbn_save] = dg_mk_bin_s(c, NK_Add, a, b, n, sfx);
	c->bn_save[2 * c->nbn_save + 1] = old;
	c->nbn_save++;
}

struct node *dg_bn_train_forward(struct dctx *c, const struct node *n, const struct value *o)
{
	struct node *base = (struct node *)n;
	struct value x = o[0];
	const struct type *t = val_type(x);
	unsigned ch = (unsigned)node_int(n, AN_channel_idx);
	struct value mean = reduce_c(c, NK_BatchedReduceMean, x, ch, base, "batch_mean");
	struct value xc = dg_mk_bin_s(c, NK_Sub, x, bcast_c(c, mean, t, ch, base, "batch_meanb"), base, "centered");
	struct value var = reduce_c(c, NK_BatchedReduceMean, dg_mk_bin_s(c, NK_Mul, xc, xc, base, "sq"), ch, base,
				    "batch_var");
	struct value ops[5] = {x, o[1], o[2], mean, var};
	struct node *k = node_create(c->g, NK_BatchNormalization, n->name, ops, 5, n->types, NULL, n->loc);
	node_copy_attrs(c->m, k, n);
	double mom = node_float(n, AN_momentum);
	if (o[3].node->kind == NK_Placeholder && o[4].node->kind == NK_Placeholder) {
		queue_running(c, o[3], mean, mom, base, "running_mean");
		queue_running(c, o[4], var, mom, base, "running_var");
	}
	return k;
}
