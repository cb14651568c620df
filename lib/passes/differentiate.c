/* differentiate.c - automatic differentiation: for every function @F with a
 * loss, adds @F_grad, one training step of @F (lifecycle step 2 of the
 * design, before lowering, so gradient nodes are lowered like any other).
 *
 * @F_grad is built in three parts, in list order:
 *   1. forward: a copy of every node of @F (its Saves included, so the
 *      step still writes the loss and the outputs @F writes);
 *   2. backward: the adjoint of every value the loss depends on, in reverse
 *      list order. A loss node (CrossEntropyLoss, Regression) seeds it; a
 *      value with several users gets the Add of their contributions. Only
 *      values that depend on a trainable placeholder get an adjoint;
 *      constants, labels and indices get none. backprop() holds the rules:
 *      the windowed and linear kinds and the activations with a cheap
 *      derivative make gradient kinds (Nodes.def), the rest forward kinds;
 *   3. update: one SGD step per trainable placeholder W with adjoint dW,
 *      written with forward kinds so every backend runs it:
 *        g = dW / batch_size + weight_decay * W
 *        v = momentum * V + g   (Save to V, a placeholder the pass creates,
 *                                "<W>_velocity", shared by every function
 *                                that trains W; only when momentum > 0)
 *        W = W - learning_rate * v   (Save to W)
 *      The Saves come last, after every read of W.
 * @F is left unchanged; both functions use the same placeholders.
 *
 * SoftMax followed by CrossEntropyLoss (the SoftMax feeding nothing else
 * but Saves, over the last axis of N x C) is differentiated as one: the
 * adjoint of the SoftMax's input is SoftMaxGrad(Result, Labels) =
 * Result - one_hot(Labels), which is exact
 * where -1/P would overflow for a tiny probability. The loss of
 * CrossEntropyLoss is the sum over the batch; batch_size turns the gradient
 * into that of the mean.
 *
 * Diagnostics: a module where no function has a loss; a loss that depends
 * on no trainable placeholder; a node on the way from a loss to a trainable
 * placeholder whose kind has no gradient rule (at that node); an existing
 * @F_grad.
 */
#include "passes/pass.h"
#include "passes/passutil.h"
#include "support/hashmap.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const struct train_config train_config_default = {0.01, 0, 0, 1};

struct dctx {
	struct module *m;
	struct func *g; /* @F_grad */
	struct diag *d;
	const struct train_config *cfg;
	struct u64map clone; /* node of @F -> its copy in @F_grad */
	struct u64map needs; /* node of @F_grad -> non-NULL when it depends on a trainable placeholder */
	struct u64map adj;   /* (node, result) key -> struct value * holding its adjoint */
	struct u64map done;  /* nodes whose adjoint a fused rule already propagated */
};

/* The adjoint map's key of a value: nodes are 8-byte aligned arena
 * objects and no kind has more than 8 results. */
static uint64_t vkey(struct value v) { return (uint64_t)(uintptr_t)v.node | v.res; }

static bool is_trainable(const struct node *n)
{
	return n->kind == NK_Placeholder && ((const struct placeholder *)n)->trainable;
}

/* Whether v carries an adjoint: a float value that depends on (or is) a
 * trainable placeholder. */
static bool wants_grad(struct dctx *c, struct value v)
{
	if (!elem_is_float((enum elem_kind)val_type(v)->elem))
		return false;
	return is_trainable(v.node) || u64map_get(&c->needs, (uint64_t)(uintptr_t)v.node);
}

static struct value *get_adj(struct dctx *c, struct value v) { return u64map_get(&c->adj, vkey(v)); }

/* A node of @F_grad at the end of its list, named "<base>.<sfx>" after the
 * node it belongs to, at that node's location. */
static struct node *mk_s(struct dctx *c, unsigned kind, const struct value *ops, unsigned nops,
			 const struct type *const *types, const struct node *base, const char *sfx)
{
	char name[96];
	snprintf(name, sizeof name, "%.60s.%.20s", base->name ? base->name : "t", sfx);
	return node_create(c->g, kind, kind == NK_Save ? NULL : name, ops, nops, types, NULL, base->loc);
}

/* mk_s for the adjoints: "<base>.grad" */
static struct node *mk(struct dctx *c, unsigned kind, const struct value *ops, unsigned nops,
		       const struct type *const *types, const struct node *base)
{
	return mk_s(c, kind, ops, nops, types, base, "grad");
}

static struct value mk1_s(struct dctx *c, unsigned kind, const struct value *ops, unsigned nops,
			  const struct type *t, const struct node *base, const char *sfx)
{
	return node_val(mk_s(c, kind, ops, nops, &t, base, sfx), 0);
}

static struct value mk1(struct dctx *c, unsigned kind, const struct value *ops, unsigned nops, const struct type *t,
			const struct node *base)
{
	return mk1_s(c, kind, ops, nops, t, base, "grad");
}

static struct value mk_bin_s(struct dctx *c, unsigned kind, struct value a, struct value b, const struct node *base,
			     const char *sfx)
{
	struct value ops[2] = {a, b};
	return mk1_s(c, kind, ops, 2, val_type(a), base, sfx);
}

static struct value mk_bin(struct dctx *c, unsigned kind, struct value a, struct value b, const struct node *base)
{
	return mk_bin_s(c, kind, a, b, base, "grad");
}

static struct value mk_splat_s(struct dctx *c, const struct type *t, double x, const struct node *base,
			       const char *sfx)
{
	struct value v = mk1_s(c, NK_Splat, NULL, 0, t, base, sfx);
	node_set_float(c->m, v.node, "value", x);
	return v;
}

static struct value mk_splat(struct dctx *c, const struct type *t, double x, const struct node *base)
{
	return mk_splat_s(c, t, x, base, "grad");
}

/* k(a, b) for a comparison k: a bool tensor of a's shape. */
static struct value mk_cmp(struct dctx *c, unsigned k, struct value a, struct value b, const struct node *base)
{
	struct value ops[2] = {a, b};
	return mk1(c, k, ops, 2, type_with_elem(c->m->types, val_type(a), EK_BOOL), base);
}

static struct value mk_select(struct dctx *c, struct value cond, struct value x, struct value y,
			      const struct node *base)
{
	struct value ops[3] = {cond, x, y};
	return mk1(c, NK_Select, ops, 3, val_type(x), base);
}

static struct value mk_transpose(struct dctx *c, struct value v, const int64_t *shuffle, const struct node *base)
{
	const struct type *t = val_type(v);
	uint64_t d[GLOW_MAX_RANK];
	for (unsigned i = 0; i < t->rank; i++)
		d[i] = t->dims[shuffle[i]];
	struct value r = mk1(c, NK_Transpose, &v, 1, type_with_dims(c->m->types, t, d, t->rank), base);
	node_set_ints(c->m, r.node, "shuffle", shuffle, t->rank);
	return r;
}

/* The sum of v over axis, kept as a 1 and broadcast back to v's shape. */
static struct value sum_axis(struct dctx *c, struct value v, unsigned axis, const struct node *base)
{
	const struct type *t = val_type(v);
	uint64_t d[GLOW_MAX_RANK], k = 0;
	for (unsigned i = 0; i < t->rank; i++)
		if (i != axis)
			d[k++] = t->dims[i];
	int64_t ax = axis;
	struct value r = mk1(c, NK_BatchedReduceAdd, &v, 1, type_with_dims(c->m->types, t, d, (unsigned)k), base);
	node_set_ints(c->m, r.node, "axes", &ax, 1);
	for (unsigned i = 0; i < t->rank; i++)
		d[i] = i == axis ? 1 : t->dims[i];
	r = mk1(c, NK_Reshape, &r, 1, type_with_dims(c->m->types, t, d, t->rank), base);
	return mk1(c, NK_Broadcast, &r, 1, t, base);
}

/* Adds g to the adjoint of v (when v wants one): the first contribution is
 * the adjoint, later ones are summed into it. */
static void add_adj(struct dctx *c, struct value v, struct value g)
{
	if (!wants_grad(c, v))
		return;
	struct value *a = get_adj(c, v);
	if (a) {
		*a = mk_bin(c, NK_Add, *a, g, v.node);
		return;
	}
	a = arena_alloc(&c->m->arena, sizeof *a);
	*a = g;
	u64map_put(&c->adj, vkey(v), a);
}

/* Copies the window attributes of a Convolution or pool n to its gradient gn. */
static void copy_window(struct dctx *c, struct node *gn, const struct node *n)
{
	static const char *const ints[] = {"kernels", "strides", "pads", "dilation"};
	for (unsigned i = 0; i < 4; i++)
		if (node_attr_index(n->kind, ints[i]) >= 0) {
			unsigned len;
			const int64_t *v = node_ints(n, ints[i], &len);
			node_set_ints(c->m, gn, ints[i], v, len);
		}
	if (node_attr_index(n->kind, "group") >= 0)
		node_set_int(c->m, gn, "group", node_int(n, "group"));
	if (node_attr_index(n->kind, "count_include_pads") >= 0)
		node_set_int(c->m, gn, "count_include_pads", node_int(n, "count_include_pads"));
}

/* SoftMax over the last axis of N x C whose only users other than the
 * CrossEntropyLoss ce are Saves: the pair is differentiated as one. */
static bool fusable_softmax(const struct node *sm, const struct node *ce)
{
	if (sm->kind != NK_SoftMax || node_has_pred(sm) || node_type(sm)->rank != 2 || node_int(sm, "axis") != 1)
		return false;
	for (const struct use *u = sm->uses; u; u = u->next) {
		const struct node *user = use_user(u);
		if (user != ce && user->kind != NK_Save)
			return false;
	}
	return true;
}

/* The adjoints of the operands of loss node n (the seed: d loss / d loss = 1). */
static void seed_loss(struct dctx *c, struct node *n)
{
	struct value p = op_val(n, 0), labels = op_val(n, 1);
	if (n->kind == NK_Regression) {
		struct value ops[2] = {p, labels};
		add_adj(c, p, mk1(c, NK_RegressionGrad, ops, 2, val_type(p), n));
		return;
	}
	if (fusable_softmax(p.node, n) && wants_grad(c, op_val(p.node, 0))) {
		struct value ops[2] = {p, labels};
		add_adj(c, op_val(p.node, 0), mk1(c, NK_SoftMaxGrad, ops, 2, val_type(p), p.node));
		u64map_put(&c->done, (uint64_t)(uintptr_t)p.node, p.node);
		return;
	}
	struct value ops[3] = {p, labels, mk_splat(c, node_type(n), 1.0, n)};
	add_adj(c, p, mk1(c, NK_CrossEntropyLossGrad, ops, 3, val_type(p), n));
}

/* Propagates the adjoint gy of n's result 0 to n's operands; false if n's
 * kind has no gradient rule. */
static bool backprop(struct dctx *c, struct node *n, struct value gy)
{
	struct value a = op_val(n, 0), b = n->nops > 1 ? op_val(n, 1) : a;
	switch (n->kind) {
	case NK_FullyConnected:
	case NK_Convolution: {
		struct value ops[3] = {a, b, gy};
		const struct type *t[3] = {val_type(a), val_type(b), op_type(n, 2)};
		struct node *gn = mk(c, n->kind == NK_Convolution ? NK_ConvolutionGrad : NK_FullyConnectedGrad, ops,
				     3, t, n);
		copy_window(c, gn, n);
		for (unsigned i = 0; i < 3; i++)
			add_adj(c, op_val(n, i), node_val(gn, i));
		return true;
	}
	case NK_MaxPool: {
		struct value ops[2] = {node_val(n, 1), gy};
		struct value gx = mk1(c, NK_MaxPoolGrad, ops, 2, val_type(a), n);
		copy_window(c, gx.node, n);
		add_adj(c, a, gx);
		return true;
	}
	case NK_AvgPool: {
		struct value gx = mk1(c, NK_AvgPoolGrad, &gy, 1, val_type(a), n);
		copy_window(c, gx.node, n);
		add_adj(c, a, gx);
		return true;
	}
	case NK_Relu: {
		struct value ops[2] = {a, gy};
		add_adj(c, a, mk1(c, NK_ReluGrad, ops, 2, val_type(a), n));
		return true;
	}
	case NK_Sigmoid:
	case NK_Tanh: {
		struct value ops[2] = {node_val(n, 0), gy};
		add_adj(c, a, mk1(c, n->kind == NK_Sigmoid ? NK_SigmoidGrad : NK_TanhGrad, ops, 2, val_type(a), n));
		return true;
	}
	case NK_Add: add_adj(c, a, gy); add_adj(c, b, gy); return true;
	case NK_Sub:
		add_adj(c, a, gy);
		if (wants_grad(c, b))
			add_adj(c, b, mk1(c, NK_Neg, &gy, 1, val_type(gy), n));
		return true;
	case NK_Mul:
		if (wants_grad(c, a))
			add_adj(c, a, mk_bin(c, NK_Mul, gy, b, n));
		if (wants_grad(c, b))
			add_adj(c, b, mk_bin(c, NK_Mul, gy, a, n));
		return true;
	case NK_Div:
		/* d(a/b)/da = 1/b, d(a/b)/db = -(a/b)/b */
		if (wants_grad(c, a))
			add_adj(c, a, mk_bin(c, NK_Div, gy, b, n));
		if (wants_grad(c, b)) {
			struct value q = mk_bin(c, NK_Div, mk_bin(c, NK_Mul, gy, node_val(n, 0), n), b, n);
			add_adj(c, b, mk1(c, NK_Neg, &q, 1, val_type(q), n));
		}
		return true;
	case NK_Reshape: add_adj(c, a, mk1(c, NK_Reshape, &gy, 1, val_type(a), n)); return true;
	case NK_Transpose: {
		unsigned len;
		const int64_t *s = node_ints(n, "shuffle", &len);
		int64_t inv[GLOW_MAX_RANK];
		for (unsigned i = 0; i < len; i++)
			inv[s[i]] = (int64_t)i;
		struct value gx = mk1(c, NK_Transpose, &gy, 1, val_type(a), n);
		node_set_ints(c->m, gx.node, "shuffle", inv, len);
		add_adj(c, a, gx);
		return true;
	}
	case NK_MatMul: {
		static const int64_t swap[2] = {1, 0};
		if (wants_grad(c, a)) {
			const struct type *bt = val_type(b);
			uint64_t d[2] = {bt->dims[1], bt->dims[0]};
			struct value tb = mk1(c, NK_Transpose, &b, 1, type_with_dims(c->m->types, bt, d, 2), n);
			node_set_ints(c->m, tb.node, "shuffle", swap, 2);
			struct value ops[2] = {gy, tb};
			add_adj(c, a, mk1(c, NK_MatMul, ops, 2, val_type(a), n));
		}
		if (wants_grad(c, b)) {
			const struct type *at = val_type(a);
			uint64_t d[2] = {at->dims[1], at->dims[0]};
			struct value ta = mk1(c, NK_Transpose, &a, 1, type_with_dims(c->m->types, at, d, 2), n);
			node_set_ints(c->m, ta.node, "shuffle", swap, 2);
			struct value ops[2] = {ta, gy};
			add_adj(c, b, mk1(c, NK_MatMul, ops, 2, val_type(b), n));
		}
		return true;
	}
	case NK_BatchedAdd: {
		add_adj(c, a, gy);
		if (wants_grad(c, b)) {
			static const int64_t axis0[1] = {0};
			struct value r = mk1(c, NK_BatchedReduceAdd, &gy, 1, val_type(b), n);
			node_set_ints(c->m, r.node, "axes", axis0, 1);
			add_adj(c, b, r);
		}
		return true;
	}
	case NK_BatchMatMul: {
		static const int64_t swap[3] = {0, 2, 1};
		if (wants_grad(c, a)) {
			struct value ops[2] = {gy, mk_transpose(c, b, swap, n)};
			add_adj(c, a, mk1(c, NK_BatchMatMul, ops, 2, val_type(a), n));
		}
		if (wants_grad(c, b)) {
			struct value ops[2] = {mk_transpose(c, a, swap, n), gy};
			add_adj(c, b, mk1(c, NK_BatchMatMul, ops, 2, val_type(b), n));
		}
		return true;
	}
	case NK_SoftMax:
	case NK_LogSoftMax: {
		/* SoftMax: y * (gy - sum(gy * y)); LogSoftMax: gy - exp(y) * sum(gy),
		 * the sums over the axis, broadcast back */
		if (!elem_is_float((enum elem_kind)val_type(a)->elem))
			return false;
		unsigned axis = (unsigned)node_int(n, "axis");
		struct value y = node_val(n, 0);
		if (n->kind == NK_SoftMax) {
			struct value s = sum_axis(c, mk_bin(c, NK_Mul, gy, y, n), axis, n);
			add_adj(c, a, mk_bin(c, NK_Mul, y, mk_bin(c, NK_Sub, gy, s, n), n));
		} else {
			struct value p = mk1(c, NK_Exp, &y, 1, val_type(y), n);
			add_adj(c, a, mk_bin(c, NK_Sub, gy, mk_bin(c, NK_Mul, p, sum_axis(c, gy, axis, n), n), n));
		}
		return true;
	}
	case NK_Gather: {
		/* one-dimensional indices: the rows of gy added back where they
		 * came from, a ScatterElements {add} along the axis of indices
		 * broadcast to gy's shape */
		const struct type *it = op_type(n, 1), *gt = val_type(gy);
		if (it->rank != 1 || !wants_grad(c, a))
			return it->rank == 1;
		unsigned axis = (unsigned)node_int(n, "axis");
		uint64_t d[GLOW_MAX_RANK];
		for (unsigned i = 0; i < gt->rank; i++)
			d[i] = i == axis ? gt->dims[i] : 1;
		struct value ix = op_val(n, 1);
		ix = mk1(c, NK_Reshape, &ix, 1, type_with_dims(c->m->types, it, d, gt->rank), n);
		ix = mk1(c, NK_Broadcast, &ix, 1, type_with_dims(c->m->types, it, gt->dims, gt->rank), n);
		struct value ops[3] = {mk_splat(c, val_type(a), 0, n), ix, gy};
		struct value g = mk1(c, NK_ScatterElements, ops, 3, val_type(a), n);
		node_set_int(c->m, g.node, "axis", axis);
		node_set_int(c->m, g.node, "reduction", 1); /* add */
		add_adj(c, a, g);
		return true;
	}
	case NK_Gelu: {
		/* x Phi(x): Phi(x) + x phi(x), Phi(x) = (1 + erf(x / sqrt 2)) / 2,
		 * phi(x) = exp(-x^2 / 2) / sqrt(2 pi); the tanh form has no rule */
		if (strcmp(node_enum(n, "approximate"), "none") != 0)
			return false;
		const struct type *t = val_type(a);
		struct value xs = mk_bin(c, NK_Mul, a, mk_splat(c, t, 0.70710678118654752, n), n);
		struct value e = mk1(c, NK_Erf, &xs, 1, t, n);
		struct value cdf = mk_bin(c, NK_Add, e, mk_splat(c, t, 1, n), n);
		cdf = mk_bin(c, NK_Mul, cdf, mk_splat(c, t, 0.5, n), n);
		struct value x2 = mk_bin(c, NK_Mul, mk_bin(c, NK_Mul, a, a, n), mk_splat(c, t, -0.5, n), n);
		struct value pdf = mk1(c, NK_Exp, &x2, 1, t, n);
		pdf = mk_bin(c, NK_Mul, pdf, mk_splat(c, t, 0.39894228040143268, n), n);
		struct value d = mk_bin(c, NK_Add, cdf, mk_bin(c, NK_Mul, a, pdf, n), n);
		add_adj(c, a, mk_bin(c, NK_Mul, gy, d, n));
		return true;
	}
	case NK_AdaptiveAvgPool: {
		/* dX = G spread by the constant matrix A [OH*OW, H*W] of window
		 * weights (1/count where output o's window covers pixel p):
		 * [N, OH, OW, C] -> [N, C, OH*OW] (Transpose, Reshape to 2-D)
		 * -> MatMul A -> [N, C, H, W] -> NHWC */
		const struct type *xt = val_type(a), *gt = val_type(gy);
		if (!elem_is_float((enum elem_kind)xt->elem))
			return false;
		uint64_t nb = xt->dims[0], h = xt->dims[1], w = xt->dims[2], ch = xt->dims[3];
		uint64_t oh = gt->dims[1], ow = gt->dims[2];
		float *mat = calloc(oh * ow * h * w, sizeof *mat);
		if (!mat)
			abort();
		for (uint64_t oy = 0; oy < oh; oy++)
			for (uint64_t ox = 0; ox < ow; ox++) {
				uint64_t y0 = oy * h / oh, y1 = ((oy + 1) * h + oh - 1) / oh;
				uint64_t x0 = ox * w / ow, x1 = ((ox + 1) * w + ow - 1) / ow;
				float inv = 1.0f / (float)((y1 - y0) * (x1 - x0));
				for (uint64_t y = y0; y < y1; y++)
					for (uint64_t x = x0; x < x1; x++)
						mat[(oy * ow + ox) * h * w + y * w + x] = inv;
			}
		uint64_t md[2] = {oh * ow, h * w};
		char name[96];
		snprintf(name, sizeof name, "%.80s.spread", n->name);
		struct constant *k = pu_new_constant(c->m, type_with_dims(c->m->types, xt, md, 2), mat, name);
		free(mat);
		static const int64_t to_nc[4] = {0, 3, 1, 2}, to_nhwc[4] = {0, 2, 3, 1};
		uint64_t g2[2] = {nb * ch, oh * ow}, x4[4] = {nb, ch, h, w};
		struct value g = mk_transpose(c, gy, to_nc, n);
		g = mk1(c, NK_Reshape, &g, 1, type_with_dims(c->m->types, gt, g2, 2), n);
		struct value ops[2] = {g, node_val(&k->n, 0)};
		md[0] = nb * ch;
		g = mk1(c, NK_MatMul, ops, 2, type_with_dims(c->m->types, xt, md, 2), n);
		g = mk1(c, NK_Reshape, &g, 1, type_with_dims(c->m->types, xt, x4, 4), n);
		add_adj(c, a, mk_transpose(c, g, to_nhwc, n));
		return true;
	}
	case NK_Neg: add_adj(c, a, mk1(c, NK_Neg, &gy, 1, val_type(gy), n)); return true;
	case NK_Exp: add_adj(c, a, mk_bin(c, NK_Mul, gy, node_val(n, 0), n)); return true;
	case NK_Log: add_adj(c, a, mk_bin(c, NK_Div, gy, a, n)); return true;
	case NK_Sqrt: /* 1 / (2 sqrt(x)) */
		add_adj(c, a, mk_bin(c, NK_Div, gy, mk_bin(c, NK_Add, node_val(n, 0), node_val(n, 0), n), n));
		return true;
	case NK_Max:
	case NK_Min: {
		/* the operand that was chosen; a tie goes to the LHS */
		struct value zero = mk_splat(c, val_type(gy), 0, n);
		struct value lhs_lost = n->kind == NK_Max ? mk_cmp(c, NK_CmpLT, a, b, n) : mk_cmp(c, NK_CmpLT, b, a, n);
		add_adj(c, a, mk_select(c, lhs_lost, zero, gy, n));
		add_adj(c, b, mk_select(c, lhs_lost, gy, zero, n));
		return true;
	}
	case NK_LeakyRelu: {
		struct value zero = mk_splat(c, val_type(a), 0, n);
		struct value slope = mk_bin(c, NK_Mul, gy, mk_splat(c, val_type(a), node_float(n, "alpha"), n), n);
		add_adj(c, a, mk_select(c, mk_cmp(c, NK_CmpLT, zero, a, n), gy, slope, n));
		return true;
	}
	case NK_Clip: {
		/* passes where min <= x <= max */
		struct value zero = mk_splat(c, val_type(a), 0, n);
		struct value lo = mk_cmp(c, NK_CmpLTE, mk_splat(c, val_type(a), node_float(n, "min"), n), a, n);
		struct value hi = mk_cmp(c, NK_CmpLTE, a, mk_splat(c, val_type(a), node_float(n, "max"), n), n);
		struct value in = mk_select(c, lo, gy, zero, n);
		add_adj(c, a, mk_select(c, hi, in, zero, n));
		return true;
	}
	case NK_BatchedReduceAdd:
	case NK_BatchedReduceMean: {
		/* gy back to the input's shape: the reduced axes as 1s, Broadcast */
		const struct type *at = val_type(a);
		unsigned len;
		const int64_t *axes = node_ints(n, "axes", &len);
		uint64_t d[GLOW_MAX_RANK], cnt = 1;
		for (unsigned i = 0; i < at->rank; i++)
			d[i] = at->dims[i];
		for (unsigned i = 0; i < len; i++) {
			cnt *= at->dims[axes[i]];
			d[axes[i]] = 1;
		}
		struct value g = mk1(c, NK_Reshape, &gy, 1, type_with_dims(c->m->types, at, d, at->rank), n);
		g = mk1(c, NK_Broadcast, &g, 1, at, n);
		if (n->kind == NK_BatchedReduceMean)
			g = mk_bin(c, NK_Mul, g, mk_splat(c, at, 1.0 / (double)cnt, n), n);
		add_adj(c, a, g);
		return true;
	}
	case NK_Slice: {
		/* gy written into zeros of the input's shape */
		unsigned len;
		const int64_t *start = node_ints(n, "start", &len);
		struct value ops[2] = {mk_splat(c, val_type(a), 0, n), gy};
		struct value g = mk1(c, NK_InsertTensor, ops, 2, val_type(a), n);
		node_set_ints(c->m, g.node, "start", start, len);
		add_adj(c, a, g);
		return true;
	}
	case NK_Pad: {
		/* constant padding: the slice of gy the input was copied to */
		unsigned len;
		const int64_t *pads = node_ints(n, "pads", &len);
		int64_t start[GLOW_MAX_RANK];
		for (unsigned i = 0; i < len / 2; i++) {
			if (pads[i] < 0 || pads[i + len / 2] < 0)
				return false;
			start[i] = pads[i];
		}
		if (strcmp(node_enum(n, "mode"), "constant") != 0)
			return false;
		struct value g = mk1(c, NK_Slice, &gy, 1, val_type(a), n);
		node_set_ints(c->m, g.node, "start", start, len / 2);
		add_adj(c, a, g);
		return true;
	}
	case NK_Concat: {
		/* each input's slice of gy */
		unsigned dim = (unsigned)node_int(n, "dim"), rank = val_type(gy)->rank;
		int64_t start[GLOW_MAX_RANK] = {0};
		for (unsigned i = 0; i < n->nops; i++) {
			struct value x = op_val(n, i);
			if (wants_grad(c, x)) {
				struct value g = mk1(c, NK_Slice, &gy, 1, val_type(x), n);
				node_set_ints(c->m, g.node, "start", start, rank);
				add_adj(c, x, g);
			}
			start[dim] += (int64_t)val_type(x)->dims[dim];
		}
		return true;
	}
	default: return false;
	}
}

/* The SGD update of trainable placeholder w with adjoint dw (see the top). */
static void sgd_update(struct dctx *c, struct node *w, struct value dw)
{
	const struct train_config *cfg = c->cfg;
	const struct type *t = node_type(w);
	struct value wv = node_val(w, 0), g = dw;
	if (cfg->batch_size > 1)
		g = mk_bin_s(c, NK_Mul, g, mk_splat_s(c, t, 1.0 / cfg->batch_size, w, "inv_batch"), w, "mean");
	if (cfg->weight_decay > 0) {
		struct value wd = mk_bin_s(c, NK_Mul, wv, mk_splat_s(c, t, cfg->weight_decay, w, "wd"), w, "decay");
		g = mk_bin_s(c, NK_Add, g, wd, w, "decayed");
	}
	if (cfg->momentum > 0) {
		char name[96];
		snprintf(name, sizeof name, "%.80s_velocity", w->name);
		struct node *v = module_find_global(c->m, name);
		if (!v || v->kind != NK_Placeholder || node_type(v) != t)
			v = &module_add_placeholder(c->m, module_fresh_name(c->m, name), t, w->loc)->n;
		struct value vv = node_val(v, 0);
		struct value mv = mk_bin_s(c, NK_Mul, vv, mk_splat_s(c, t, cfg->momentum, w, "mu"), w, "momentum");
		g = mk_bin_s(c, NK_Add, mv, g, w, "velocity");
		struct value save[2] = {g, vv};
		mk(c, NK_Save, save, 2, NULL, w);
	}
	struct value step = mk_bin_s(c, NK_Mul, g, mk_splat_s(c, t, cfg->learning_rate, w, "lr"), w, "step");
	struct value nw = mk_bin_s(c, NK_Sub, wv, step, w, "updated");
	struct value save[2] = {nw, wv};
	mk(c, NK_Save, save, 2, NULL, w);
}

static bool is_loss(const struct node *n) { return n->kind == NK_CrossEntropyLoss || n->kind == NK_Regression; }

/* Builds @F_grad for f; returns -1 after an error, 0 if f has no loss, 1
 * when it added the function. */
static int differentiate_func(struct module *m, struct func *f, struct pass_ctx *ctx)
{
	const struct node *loss = NULL;
	func_for_each(f, n) {
		if (is_loss(n)) {
			loss = n;
			break;
		}
	}
	if (!loss)
		return 0;
	if (!pass_diff_selects(ctx, f->name))
		return 0;
	char name[256];
	snprintf(name, sizeof name, "%s%s", f->name, pass_opt_string(ctx, POPT_DIFF_SUFFIX));
	if (module_find_func(m, name)) {
		diag_error(ctx->diag, f->loc, "differentiate: function @%s already exists", name);
		return -1;
	}
	struct train_config cfg = pass_train_config(ctx); /* the tool's, with differentiate{...} */
	struct dctx c = {m, func_create(m, name, f->loc), ctx->diag, &cfg, {0}, {0}, {0}, {0}};
	u64map_init(&c.clone);
	u64map_init(&c.needs);
	u64map_init(&c.adj);
	u64map_init(&c.done);

	/* 1. forward */
	struct value ops[64];
	func_for_each(f, n) {
		struct value *o = ops;
		if (n->nops + 1 > 64)
			o = arena_alloc(&m->arena, (n->nops + 1) * sizeof *o);
		bool needs = false;
		for (unsigned i = 0; i < n->nops + (node_has_pred(n) ? 1u : 0u); i++) {
			struct node *def = n->ops[i].def;
			if (!node_is_storage(def))
				def = u64map_get(&c.clone, (uint64_t)(uintptr_t)def);
			o[i] = node_val(def, n->ops[i].res);
			if (i < n->nops)
				needs |= is_trainable(def) || u64map_get(&c.needs, (uint64_t)(uintptr_t)def);
		}
		struct value pred = {NULL, 0};
		if (node_has_pred(n))
			pred = o[n->nops];
		struct node *k = node_create_pred(c.g, n->kind, n->name, o, n->nops, pred, n->types, NULL, n->loc);
		node_copy_attrs(m, k, n);
		u64map_put(&c.clone, (uint64_t)(uintptr_t)n, k);
		if (needs)
			u64map_put(&c.needs, (uint64_t)(uintptr_t)k, k);
	}

	/* 2. backward, from the last forward node up */
	int status = 1;
	struct node *last = c.g->last;
	unsigned seeded = 0;
	for (struct node *n = last; n && status > 0; n = n->prev) {
		if (!u64map_get(&c.needs, (uint64_t)(uintptr_t)n))
			continue;
		/* a fused SoftMax passed its loss's adjoint on already; anything
		 * else that reached its result goes through SoftMax's own rule */
		if (u64map_get(&c.done, (uint64_t)(uintptr_t)n) && !get_adj(&c, node_val(n, 0)))
			continue;
		if (is_loss(n)) {
			seed_loss(&c, n);
			seeded++;
			continue;
		}
		struct value *gy = n->nres ? get_adj(&c, node_val(n, 0)) : NULL;
		if (!gy)
			continue; /* the loss does not depend on it */
		if (node_has_pred(n) || !backprop(&c, n, *gy)) {
			diag_error(ctx->diag, n->loc,
				   "differentiate: %s %%%s has no gradient rule, and the loss of @%s depends on it",
				   node_kind_name(n->kind), n->name, f->name);
			status = -1;
		}
	}
	if (status > 0 && !seeded) {
		diag_error(ctx->diag, loss->loc,
			   "differentiate: the loss %s %%%s of @%s depends on no trainable placeholder",
			   node_kind_name(loss->kind), loss->name, f->name);
		status = -1;
	}

	/* 3. update, in declaration order of the placeholders */
	if (status > 0)
		module_for_each_global(m, w) {
			struct value *dw = is_trainable(w) ? get_adj(&c, node_val(w, 0)) : NULL;
			if (dw)
				sgd_update(&c, w, *dw);
		}
	u64map_free(&c.clone);
	u64map_free(&c.needs);
	u64map_free(&c.adj);
	u64map_free(&c.done);
	return status;
}

bool differentiate_run(struct module *m, struct pass_ctx *ctx)
{
	size_t nfuncs = m->nfuncs; /* not the functions it adds */
	if (pass_diff_check_funcs(m, ctx))
		return false;
	int added = 0;
	for (size_t i = 0; i < nfuncs; i++) {
		int r = differentiate_func(m, m->funcs[i], ctx);
		if (r < 0)
			return true;
		added += r;
	}
	if (!added)
		for (size_t i = 0; i < nfuncs; i++)
			if (pass_diff_selects(ctx, m->funcs[i]->name))
				diag_error(ctx->diag, m->funcs[i]->loc,
					   "differentiate: function @%s has no loss (CrossEntropyLoss or Regression)",
					   m->funcs[i]->name);
	pass_stat(ctx, "Number of gradient functions added", (uint64_t)added);
	if (added)
		pass_record_train_config(m, ctx);
	return added > 0;
}
