/* lower-train.c - lowering rules of the training kinds that are not
 * gradients of one forward kind: SGD, Dropout and DropoutMask, into forward
 * kinds, so every backend runs a training step with the kernels it has.
 * lower-grad.c holds the gradient kinds of the first training release;
 * the ones added with these (BatchNormalizationGrad,
 * LocalResponseNormalizationGrad) are at the end. Each is lowered where
 * the backend's should_lower asks for it, or where the kind has no
 * instruction (lower_grad_needed); backends/interpreter/k_grad.c and
 * backends/c/cgen_grad.c run the same arithmetic whole.
 *
 *   SGD(G, W) {learning_rate lr, momentum mu, l1_decay l1, l2_decay l2,
 *   batch_size b}, exactly the arithmetic differentiate used to write out:
 *     g = G * (1 / b)              (when b > 1)
 *     g = g + W * l2               (when l2 > 0)
 *     g = g + Sign(W) * l1         (when l1 > 0)
 *     v = V * mu + g, Save(v, V)   (when mu > 0)
 *     UpdatedWeight = W - v * lr
 *   V is the velocity placeholder "<W>_velocity" (W a placeholder; else
 *   "<SGD's name>_velocity"), of W's type: found when it exists with that
 *   type, so every function that trains W shares it, else created. A run
 *   binds it like any input (zeros before the first step).
 *
 *   Dropout(X) = X: outside a training step Dropout is the identity
 *   (differentiate gives @F_grad's copies their mask).
 *
 *   DropoutMask(S) {ratio r, seed}: per element i of the mask, with
 *   M = 2^31 - 1 (a prime) and K[i] = mix64(mix64(seed + g) + i) mod M
 *   computed here (g an odd constant, so seed 0 is no fixed point):
 *     t = (S mod M) * 48271 mod M                      (once, on <1>)
 *     h = (K[i] + t) mod M
 *     h = (h * h + K[i]) mod M, twice
 *     Mask[i] = h < round((1 - r) * M) ? 1 / (1 - r) : 0
 *   Every value stays below 2^62, so the 64-bit integer arithmetic never
 *   wraps; the squarings make the mask of step S + 1 unrelated to that of
 *   step S (a sum alone would shift one fixed pattern).
 *
 *   BatchNormalizationGrad(X, Scale, Mean, Var, G), over every axis but
 *   the channel (cnt values per channel), xhat = (X - Mean) / sqrt(Var +
 *   eps): dBias = sum G, dScale = sum G xhat,
 *   dX = Scale / sqrt(Var + eps) * (G - dBias / cnt - xhat dScale / cnt).
 *
 *   LocalResponseNormalizationGrad(X, G) of y = X d, d = s^-beta,
 *   s = k + alpha / size * (window sum of X^2 along the channels):
 *   dX = G d - 2 alpha beta / size * X * (window sum of G X d / s); the
 *   window sums are MatMuls of [N*H*W, C] by a C x C band of ones.
 */
#include "passes/dropoutmask.h"
#include "passes/lowering.h"
#include "passes/passutil.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MASK_PRIME DROPOUT_MASK_PRIME

/* The velocity placeholder of SGD node n (see the top). */
static struct value velocity(struct func *f, struct node *n, const struct type *t)
{
	struct module *m = f->mod;
	const struct node *w = op_val(n, 1).node;
	char name[96];
	snprintf(name, sizeof name, "%.80s_velocity",
		 w->kind == NK_Placeholder ? w->name : n->name ? n->name : "sgd");
	struct node *v = module_find_global(m, name);
	if (!v || v->kind != NK_Placeholder || node_type(v) != t)
		v = &module_add_placeholder(m, module_fresh_name(m, name), t, n->loc)->n;
	return node_val(v, 0);
}

/* SGD (Lowering.def). */
bool lower_sgd(struct func *f, struct node *n)
{
	struct value g = op_val(n, 0), w = op_val(n, 1);
	const struct type *t = val_type(w);
	int64_t batch = node_int(n, AN_batch_size);
	double l1 = node_float(n, AN_l1_decay), l2 = node_float(n, AN_l2_decay);
	double mu = node_float(n, AN_momentum), lr = node_float(n, AN_learning_rate);
	if (batch > 1)
		g = lw_bin(f, NK_Mul, g, lw_splat(f, t, 1.0 / (double)batch, n, "inv_batch"), n, "mean");
	if (l2 > 0)
		g = lw_bin(f, NK_Add, g, lw_bin(f, NK_Mul, w, lw_splat(f, t, l2, n, "wd"), n, "decay"), n, "decayed");
	if (l1 > 0) {
		struct value s = lw_un(f, NK_Sign, w, n, "sign");
		g = lw_bin(f, NK_Add, g, lw_bin(f, NK_Mul, s, lw_splat(f, t, l1, n, "l1"), n, "l1decay"), n,
			   "l1decayed");
	}
	if (mu > 0) {
		struct value v = velocity(f, n, t);
		struct value mv = lw_bin(f, NK_Mul, v, lw_splat(f, t, mu, n, "mu"), n, "momentum");
		g = lw_bin(f, NK_Add, mv, g, n, "velocity");
		struct value save[2] = {g, v};
		node_create(f, NK_Save, NULL, save, 2, NULL, n, n->loc);
	}
	struct value step = lw_bin(f, NK_Mul, g, lw_splat(f, t, lr, n, "lr"), n, "step");
	lw_replace(f, n, lw_bin(f, NK_Sub, w, step, n, "updated"));
	return true;
}

/* DropoutMask (Lowering.def). */
bool lower_dropout_mask(struct func *f, struct node *n)
{
	struct module *m = f->mod;
	struct value s = op_val(n, 0);
	const struct type *st = val_type(s), *mt = node_type(n);
	const struct type *kt = type_with_elem(m->types, mt, (enum elem_kind)st->elem);
	uint64_t cnt = type_numel(mt), seed = (uint64_t)node_int(n, AN_seed);
	double r = node_float(n, AN_ratio);

	int64_t *keys = malloc((cnt ? cnt : 1) * sizeof *keys);
	if (!keys)
		abort();
	for (uint64_t i = 0; i < cnt; i++)
		keys[i] = dropout_key(seed, i);
	char buf[64];
	struct constant *kc = pu_new_constant(m, kt, keys, lw_name(buf, n, "keys"));
	free(keys);
	struct value k = node_val(&kc->n, 0);

	struct value t = lw_bin(f, NK_Mod, s, lw_splat(f, st, MASK_PRIME, n, "prime"), n, "stepmod");
	t = lw_bin(f, NK_Mul, t, lw_splat(f, st, 48271, n, "mult"), n, "stepmul");
	t = lw_bin(f, NK_Mod, t, lw_splat(f, st, MASK_PRIME, n, "prime1"), n, "steprnd");
	uint64_t ones[GLOW_MAX_RANK];
	for (unsigned i = 0; i < mt->rank; i++)
		ones[i] = 1;
	t = node_val(lw_node(f, NK_Reshape, &t, 1, type_with_dims(m->types, st, ones, mt->rank), n, "step1"), 0);
	t = lw_broadcast(f, t, kt, 0, n, "steps");
	struct value prime = lw_splat(f, kt, MASK_PRIME, n, "primes");
	struct value h = lw_bin(f, NK_Mod, lw_bin(f, NK_Add, k, t, n, "h0"), prime, n, "h1");
	static const char *const sq[2] = {"sq1", "sq2"}, *const ad[2] = {"ad1", "ad2"}, *const md[2] = {"h2", "h3"};
	for (unsigned i = 0; i < 2; i++)
		h = lw_bin(f, NK_Mod, lw_bin(f, NK_Add, lw_bin(f, NK_Mul, h, h, n, sq[i]), k, n, ad[i]), prime, n,
			   md[i]);
	double thr = (double)dropout_threshold(r);
	struct value keep = lw_bin(f, NK_CmpLT, h, lw_splat(f, kt, thr, n, "threshold"), n, "keep");
	struct value ops[3] = {keep, lw_splat(f, mt, 1.0 / (1.0 - r), n, "scale"), lw_splat(f, mt, 0, n, "zero")};
	lw_replace(f, n, node_val(lw_node(f, NK_Select, ops, 3, mt, n, "mask"), 0));
	return true;
}

/* BatchNormalizationGrad (Lowering.def). */
bool lower_bn_grad(struct func *f, struct node *n)
{
	struct value x = op_val(n, 0), scale = op_val(n, 1), mean = op_val(n, 2), var = op_val(n, 3), g = op_val(n, 4);
	const struct type *t = val_type(x);
	unsigned ch = (unsigned)node_int(n, AN_channel_idx);
	bool drop[GLOW_MAX_RANK];
	for (unsigned i = 0; i < t->rank; i++)
		drop[i] = i != ch;
	double cnt = (double)(type_numel(t) / t->dims[ch]);
	struct value sd = lw_un(f, NK_Sqrt, lw_bin_splat(f, NK_Add, var, node_float(n, AN_epsilon), n, "veps"), n, "sd");
	struct value xc = lw_bin(f, NK_Sub, x, lw_broadcast(f, mean, t, ch, n, "meanb"), n, "xc");
	struct value xh = lw_bin(f, NK_Div, xc, lw_broadcast(f, sd, t, ch, n, "sdb"), n, "xhat");
	struct value r[3];
	r[2] = lw_reduce(f, NK_BatchedReduceAdd, g, drop, n, "dbias");
	r[1] = lw_reduce(f, NK_BatchedReduceAdd, lw_bin(f, NK_Mul, g, xh, n, "gxhat"), drop, n, "dscale");
	/* dx = scale / sd * (g - dbias / cnt - xhat * dscale / cnt) */
	struct value mb = lw_broadcast(f, lw_bin_splat(f, NK_Mul, r[2], 1 / cnt, n, "mbias"), t, ch, n, "mbiasb");
	struct value ms = lw_broadcast(f, lw_bin_splat(f, NK_Mul, r[1], 1 / cnt, n, "mscale"), t, ch, n, "mscaleb");
	struct value inner = lw_bin(f, NK_Sub, lw_bin(f, NK_Sub, g, mb, n, "gc"), lw_bin(f, NK_Mul, xh, ms, n, "xs"), n,
				    "inner");
	struct value k = lw_broadcast(f, lw_bin(f, NK_Div, scale, sd, n, "k"), t, ch, n, "kb");
	r[0] = lw_bin(f, NK_Mul, k, inner, n, "dx");
	for (unsigned i = 0; i < 3; i++)
		value_replace_all_uses(node_val(n, i), r[i]);
	node_erase(f, n);
	return true;
}

/* v [N, H, W, C] times the C x C band constant (1 where the channels are
 * at most hw apart: the window sum along the channels), back to v's
 * shape. */
static struct value window_sum(struct func *f, struct value v, struct value band, struct node *n, const char *sfx)
{
	const struct type *t = val_type(v);
	uint64_t d2[2] = {type_numel(t) / t->dims[3], t->dims[3]};
	const struct type *t2 = type_with_dims(f->mod->types, t, d2, 2);
	struct value ops[2] = {node_val(lw_node(f, NK_Reshape, &v, 1, t2, n, sfx), 0), band};
	struct value m = node_val(lw_node(f, NK_MatMul, ops, 2, t2, n, sfx), 0);
	return node_val(lw_node(f, NK_Reshape, &m, 1, t, n, sfx), 0);
}

/* LocalResponseNormalizationGrad (Lowering.def). */
bool lower_lrn_grad(struct func *f, struct node *n)
{
	struct value x = op_val(n, 0), g = op_val(n, 1);
	const struct type *t = val_type(x);
	uint64_t c = t->dims[3], bd[2] = {c, c};
	int64_t hw = node_int(n, AN_half_window_size);
	double alpha = node_float(n, AN_alpha), beta = node_float(n, AN_beta), size = (double)(2 * hw + 1);
	float *band = malloc(c * c * sizeof *band);
	if (!band)
		abort();
	for (uint64_t i = 0; i < c; i++)
		for (uint64_t j = 0; j < c; j++)
			band[i * c + j] = (i > j ? i - j : j - i) <= (uint64_t)hw ? 1.0f : 0.0f;
	char buf[64];
	const struct type *ft = type_get(f->mod->types, EK_FLOAT, bd, 2);
	struct value b = node_val(&pu_new_constant(f->mod, ft, band, lw_name(buf, n, "band"))->n, 0);
	free(band);
	if (t->elem != EK_FLOAT) {
		const struct type *kt = type_with_elem(f->mod->types, ft, (enum elem_kind)t->elem);
		b = node_val(lw_node(f, NK_ConvertTo, &b, 1, kt, n, "bandk"), 0);
	}
	/* s = k + alpha / size * window_sum(x^2), d = s^-beta: y = x d */
	struct value s = window_sum(f, lw_bin(f, NK_Mul, x, x, n, "x2"), b, n, "sq");
	s = lw_bin_splat(f, NK_Add, lw_bin_splat(f, NK_Mul, s, alpha / size, n, "as"), node_float(n, AN_k), n, "s");
	struct value d = lw_bin(f, NK_Pow, s, lw_splat(f, t, -beta, n, "mbeta"), n, "d");
	/* dx = g d - 2 alpha beta / size * x * window_sum(g x d / s) */
	struct value q = lw_bin(f, NK_Div, lw_bin(f, NK_Mul, lw_bin(f, NK_Mul, g, x, n, "gx"), d, n, "gxd"), s, n, "q");
	struct value w = lw_bin(f, NK_Mul, x, window_sum(f, q, b, n, "qs"), n, "xq");
	w = lw_bin_splat(f, NK_Mul, w, 2 * alpha * beta / size, n, "corr");
	lw_replace(f, n, lw_bin(f, NK_Sub, lw_bin(f, NK_Mul, g, d, n, "gd"), w, n, "dx"));
	return true;
}

/* Dropout (Lowering.def): the identity outside a training step (where
 * differentiate made it a Mul by a DropoutMask). */
bool lower_dropout(struct func *f, struct node *n)
{
	lw_replace(f, n, op_val(n, 0));
	return true;
}
