/* differentiate.c - automatic differentiation: for every function @F with a
 * loss, adds @F_grad, one training step of @F (lifecycle step 2 of the
 * design, before lowering, so gradient nodes are lowered like any other).
 *
 * @F_grad is built in three parts, in list order:
 *   1. forward: a copy of every node of @F (its Saves included, so the
 *      step still writes the loss and the outputs @F writes), but a
 *      Dropout multiplies by a DropoutMask of the step counter
 *      "<F>_dropout_step" and, with -mode=train, a BatchNormalization
 *      normalizes with the batch's statistics (train_forward);
 *   2. backward: the adjoint of every value the loss depends on, in reverse
 *      list order. A loss node (CrossEntropyLoss, Regression) seeds it; a
 *      value with several users gets the Add of their contributions. Only
 *      values that depend on a trainable placeholder get an adjoint;
 *      constants, labels and indices get none. backprop() holds the rules
 *      (diff-rules.c those added with Dropout and training-mode
 *      BatchNormalization): the windowed and linear kinds and the
 *      activations with a cheap derivative make gradient kinds
 *      (Nodes.def), the rest forward kinds;
 *   3. update: one SGD node per trainable placeholder W with adjoint dW,
 *      carrying the training configuration, and the Save of its result to
 *      W (lower-train.c lowers SGD into the arithmetic and the velocity
 *      placeholder "<W>_velocity"); then the Saves of BatchNormalization's
 *      running statistics and the increment of the dropout step counter.
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
#include "passes/differentiate.h"
#include "passes/passutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const struct train_config train_config_default = {0.01, 0, 0, 1};


/* The adjoint map's key of a value: nodes are 8-byte aligned arena
 * objects and no kind has more than 8 results. */
static uint64_t vkey(struct value v) { return (uint64_t)(uintptr_t)v.node | v.res; }

static bool is_trainable(const struct node *n)
{
	return n->kind == NK_Placeholder && ((const struct placeholder *)n)->trainable;
}

/* A source: an explicit one of differentiate_values, else a trainable
 * placeholder. */
static bool is_source(const struct dctx *c, const struct node *n)
{
	return c->explicit_srcs ? u64map_get(&c->srcs, (uint64_t)(uintptr_t)n) != NULL : is_trainable(n);
}

bool dg_wants_grad(struct dctx *c, struct value v)
		   {
	if (!elem_is_float((enum elem_kind)val_type(v)->elem))
		return false;
	return is_source(c, v.node) || u64map_get(&c->needs, (uint64_t)(uintptr_t)v.node);
}

struct value *dg_get_adj(struct dctx *c, struct value v) { return u64map_get(&c->adj, vkey(v)); }
			 
/* A node of @F_grad at the end of its list, named "<base>.<sfx>" after the
 * node it belongs to, at that node's location. */
struct node *dg_mk_s(struct dctx *c, unsigned kind, const struct value *ops, unsigned nops,
		     const struct type *const *types, const struct node *base, const char *sfx)
{
	char name[96];
	snprintf(name, sizeof name, "%.60s.%.20s", base->name ? base->name : "t", sfx);
	return node_create(c->g, kind, kind == NK_Save ? NULL : name, ops, nops, types, NULL, base->loc);
}

/* mk_s for the adjoints: "<base>.grad" */
struct node *dg_mk(struct dctx *c, unsigned kind, const struct value *ops, unsigned nops,
		   const struct type *const *types, const struct node *base)
{
	return dg_mk_s(c, kind, ops, nops, types, base, "grad");
}

struct value dg_mk1_s(struct dctx *c, unsigned kind, const struct value *ops, unsigned nops,
		      const struct type *t, const struct node *base, const char *sfx)
{
	return node_val(dg_mk_s(c, kind, ops, nops, &t, base, sfx), 0);
}

struct value dg_mk1(struct dctx *c, unsigned kind, const struct value *ops, unsigned nops, const struct type *t,
		    const struct node *base)
{
	return dg_mk1_s(c, kind, ops, nops, t, base, "grad");
}

struct value dg_mk_bin_s(struct dctx *c, unsigned kind, struct value a, struct value b, const struct node *base,
			 const char *sfx)
{
	struct value ops[2] = {a, b};
	return dg_mk1_s(c, kind, ops, 2, val_type(a), base, sfx);
}

struct value dg_mk_bin(struct dctx *c, unsigned kind, struct value a, struct value b, const struct node *base)
		       {
	return dg_mk_bin_s(c, kind, a, b, base, "grad");
}

struct value dg_mk_splat_s(struct dctx *c, const struct type *t, double x, const struct node *base,
			   const char *sfx)
{
	struct value v = dg_mk1_s(c, NK_Splat, NULL, 0, t, base, sfx);
	node_set_float(c->m, v.node, "value", x);
	return v;
}

struct value dg_mk_splat(struct dctx *c, const struct type *t, double x, const struct node *base)
			 {
	return dg_mk_splat_s(c, t, x, base, "grad");
}

/* k(a, b) for a comparison k: a bool tensor of a's shape. */
struct value dg_mk_cmp(struct dctx *c, unsigned k, struct value a, struct value b, const struct node *base)
		       {
	struct value ops[2] = {a, b};
	return dg_mk1(c, k, ops, 2, type_with_elem(c->m->types, val_type(a), EK_BOOL), base);
}

struct value dg_mk_select(struct dctx *c, struct value cond, struct value x, struct value y,
			  const struct node *base)
{
	struct value ops[3] = {cond, x, y};
	return dg_mk1(c, NK_Select, ops, 3, val_type(x), base);
}

struct value dg_mk_transpose(struct dctx *c, struct value v, const int64_t *shuffle, const struct node *base)
			     {
	const struct type *t = val_type(v);
	uint64_t d[GLOW_MAX_RANK];
	for (unsigned i = 0; i < t->rank; i++)
		d[i] = t->dims[shuffle[i]];
	struct value r = dg_mk1(c, NK_Transpose, &v, 1, type_with_dims(c->m->types, t, d, t->rank), base);
	node_set_ints(c->m, r.node, "shuffle", shuffle, t->rank);
	return r;
}

/* The sum of v over axis, kept as a 1 and broadcast back to v's shape. */
struct value dg_sum_axis(struct dctx *c, struct value v, unsigned axis, const struct node *base)
			 {
	const struct type *t = val_type(v);
	uint64_t d[GLOW_MAX_RANK], k = 0;
	for (unsigned i = 0; i < t->rank; i++)
		if (i != axis)
			d[k++] = t->dims[i];
	int64_t ax = axis;
	struct value r = dg_mk1(c, NK_BatchedReduceAdd, &v, 1, type_with_dims(c->m->types, t, d, (unsigned)k), base);
	node_set_ints(c->m, r.node, "axes", &ax, 1);
	for (unsigned i = 0; i < t->rank; i++)
		d[i] = i == axis ? 1 : t->dims[i];
	r = dg_mk1(c, NK_Reshape, &r, 1, type_with_dims(c->m->types, t, d, t->rank), base);
	return dg_mk1(c, NK_Broadcast, &r, 1, t, base);
}

/* Adds g to the adjoint of v (when v wants one): the first contribution is
 * the adjoint, later ones are summed into it. */
void dg_add_adj(struct dctx *c, struct value v, struct value g)
		{
	if (!dg_wants_grad(c, v))
		return;
	struct value *a = dg_get_adj(c, v);
	if (a) {
		*a = dg_mk_bin(c, NK_Add, *a, g, v.node);
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
		dg_add_adj(c, p, dg_mk1(c, NK_RegressionGrad, ops, 2, val_type(p), n));
		return;
	}
	if (fusable_softmax(p.node, n) && dg_wants_grad(c, op_val(p.node, 0))) {
		struct value ops[2] = {p, labels};
		dg_add_adj(c, op_val(p.node, 0), dg_mk1(c, NK_SoftMaxGrad, ops, 2, val_type(p), p.node));
		u64map_put(&c->done, (uint64_t)(uintptr_t)p.node, p.node);
		return;
	}
	struct value ops[3] = {p, labels, dg_mk_splat(c, node_type(n), 1.0, n)};
	dg_add_adj(c, p, dg_mk1(c, NK_CrossEntropyLossGrad, ops, 3, val_type(p), n));
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
		struct node *gn = dg_mk(c, n->kind == NK_Convolution ? NK_ConvolutionGrad : NK_FullyConnectedGrad, ops,
				     3, t, n);
		copy_window(c, gn, n);
		for (unsigned i = 0; i < 3; i++)
			dg_add_adj(c, op_val(n, i), node_val(gn, i));
		return true;
	}
	case NK_MaxPool: {
		struct value ops[2] = {node_val(n, 1), gy};
		struct value gx = dg_mk1(c, NK_MaxPoolGrad, ops, 2, val_type(a), n);
		copy_window(c, gx.node, n);
		dg_add_adj(c, a, gx);
		return true;
	}
	case NK_AvgPool: {
		struct value gx = dg_mk1(c, NK_AvgPoolGrad, &gy, 1, val_type(a), n);
		copy_window(c, gx.node, n);
		dg_add_adj(c, a, gx);
		return true;
	}
	case NK_Relu: {
		struct value ops[2] = {a, gy};
		dg_add_adj(c, a, dg_mk1(c, NK_ReluGrad, ops, 2, val_type(a), n));
		return true;
	}
	case NK_Sigmoid:
	case NK_Tanh: {
		struct value ops[2] = {node_val(n, 0), gy};
		unsigned k = n->kind == NK_Sigmoid ? NK_SigmoidGrad : NK_TanhGrad;
		dg_add_adj(c, a, dg_mk1(c, k, ops, 2, val_type(a), n));
		return true;
	}
	case NK_Add: dg_add_adj(c, a, gy); dg_add_adj(c, b, gy); return true;
	case NK_Sub:
		dg_add_adj(c, a, gy);
		if (dg_wants_grad(c, b))
			dg_add_adj(c, b, dg_mk1(c, NK_Neg, &gy, 1, val_type(gy), n));
		return true;
	case NK_Mul:
		if (dg_wants_grad(c, a))
			dg_add_adj(c, a, dg_mk_bin(c, NK_Mul, gy, b, n));
		if (dg_wants_grad(c, b))
			dg_add_adj(c, b, dg_mk_bin(c, NK_Mul, gy, a, n));
		return true;
	case NK_Div:
		/* d(a/b)/da = 1/b, d(a/b)/db = -(a/b)/b */
		if (dg_wants_grad(c, a))
			dg_add_adj(c, a, dg_mk_bin(c, NK_Div, gy, b, n));
		if (dg_wants_grad(c, b)) {
			struct value q = dg_mk_bin(c, NK_Div, dg_mk_bin(c, NK_Mul, gy, node_val(n, 0), n), b, n);
			dg_add_adj(c, b, dg_mk1(c, NK_Neg, &q, 1, val_type(q), n));
		}
		return true;
	case NK_Reshape: dg_add_adj(c, a, dg_mk1(c, NK_Reshape, &gy, 1, val_type(a), n)); return true;
	case NK_Transpose: {
		unsigned len;
		const int64_t *s = node_ints(n, "shuffle", &len);
		int64_t inv[GLOW_MAX_RANK];
		for (unsigned i = 0; i < len; i++)
			inv[s[i]] = (int64_t)i;
		struct value gx = dg_mk1(c, NK_Transpose, &gy, 1, val_type(a), n);
		node_set_ints(c->m, gx.node, "shuffle", inv, len);
		dg_add_adj(c, a, gx);
		return true;
	}
	case NK_MatMul: {
		static const int64_t swap[2] = {1, 0};
		if (dg_wants_grad(c, a)) {
			const struct type *bt = val_type(b);
			uint64_t d[2] = {bt->dims[1], bt->dims[0]};
			struct value tb = dg_mk1(c, NK_Transpose, &b, 1, type_with_dims(c->m->types, bt, d, 2), n);
			node_set_ints(c->m, tb.node, "shuffle", swap, 2);
			struct value ops[2] = {gy, tb};
			dg_add_adj(c, a, dg_mk1(c, NK_MatMul, ops, 2, val_type(a), n));
		}
		if (dg_wants_grad(c, b)) {
			const struct type *at = val_type(a);
			uint64_t d[2] = {at->dims[1], at->dims[0]};
			struct value ta = dg_mk1(c, NK_Transpose, &a, 1, type_with_dims(c->m->types, at, d, 2), n);
			node_set_ints(c->m, ta.node, "shuffle", swap, 2);
			struct value ops[2] = {ta, gy};
			dg_add_adj(c, b, dg_mk1(c, NK_MatMul, ops, 2, val_type(b), n));
		}
		return true;
	}
	case NK_BatchedAdd: {
		dg_add_adj(c, a, gy);
		if (dg_wants_grad(c, b)) {
			static const int64_t axis0[1] = {0};
			struct value r = dg_mk1(c, NK_BatchedReduceAdd, &gy, 1, val_type(b), n);
			node_set_ints(c->m, r.node, "axes", axis0, 1);
			dg_add_adj(c, b, r);
		}
		return true;
	}
	case NK_BatchMatMul: {
		static const int64_t swap[3] = {0, 2, 1};
		if (dg_wants_grad(c, a)) {
			struct value ops[2] = {gy, dg_mk_transpose(c, b, swap, n)};
			dg_add_adj(c, a, dg_mk1(c, NK_BatchMatMul, ops, 2, val_type(a), n));
		}
		if (dg_wants_grad(c, b)) {
			struct value ops[2] = {dg_mk_transpose(c, a, swap, n), gy};
			dg_add_adj(c, b, dg_mk1(c, NK_BatchMatMul, ops, 2, val_type(b), n));
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
			struct value s = dg_sum_axis(c, dg_mk_bin(c, NK_Mul, gy, y, n), axis, n);
			dg_add_adj(c, a, dg_mk_bin(c, NK_Mul, y, dg_mk_bin(c, NK_Sub, gy, s, n), n));
		} else {
			struct value p = dg_mk1(c, NK_Exp, &y, 1, val_type(y), n);
			struct value ps = dg_mk_bin(c, NK_Mul, p, dg_sum_axis(c, gy, axis, n), n);
			dg_add_adj(c, a, dg_mk_bin(c, NK_Sub, gy, ps, n));
		}
		return true;
	}
	case NK_Gather: {
		/* the rows of gy added back where they came from, a
		 * ScatterElements {add} along the axis of the indices broadcast to
		 * gy's shape; indices of another rank than 1 are flattened first
		 * (gy's index dimensions with them) */
		if (!dg_wants_grad(c, a))
			return true;
		const struct type *it = op_type(n, 1), *gt = val_type(gy), *at = val_type(a);
		unsigned axis = (unsigned)node_int(n, "axis");
		struct value ix = op_val(n, 1), g = gy;
		uint64_t d[GLOW_MAX_RANK];
		if (it->rank != 1) {
			uint64_t cnt = type_numel(it);
			for (unsigned i = 0; i < at->rank; i++)
				d[i] = i == axis ? cnt : at->dims[i];
			g = dg_mk1(c, NK_Reshape, &gy, 1, type_with_dims(c->m->types, gt, d, at->rank), n);
			it = type_with_dims(c->m->types, it, &cnt, 1);
			ix = dg_mk1(c, NK_Reshape, &ix, 1, it, n);
			gt = val_type(g);
		}
		for (unsigned i = 0; i < gt->rank; i++)
			d[i] = i == axis ? gt->dims[i] : 1;
		ix = dg_mk1(c, NK_Reshape, &ix, 1, type_with_dims(c->m->types, it, d, gt->rank), n);
		ix = dg_mk1(c, NK_Broadcast, &ix, 1, type_with_dims(c->m->types, it, gt->dims, gt->rank), n);
		struct value ops[3] = {dg_mk_splat(c, at, 0, n), ix, g};
		struct value r = dg_mk1(c, NK_ScatterElements, ops, 3, at, n);
		node_set_int(c->m, r.node, "axis", axis);
		node_set_int(c->m, r.node, "reduction", 1); /* add */
		dg_add_adj(c, a, r);
		return true;
	}
	case NK_Gelu: {
		/* x Phi(x): Phi(x) + x phi(x), Phi(x) = (1 + erf(x / sqrt 2)) / 2,
		 * phi(x) = exp(-x^2 / 2) / sqrt(2 pi); the tanh form in
		 * diff-rules.c */
		if (strcmp(node_enum(n, "approximate"), "none") != 0)
			return dg_backprop_more(c, n, gy);
		const struct type *t = val_type(a);
		struct value xs = dg_mk_bin(c, NK_Mul, a, dg_mk_splat(c, t, 0.70710678118654752, n), n);
		struct value e = dg_mk1(c, NK_Erf, &xs, 1, t, n);
		struct value cdf = dg_mk_bin(c, NK_Add, e, dg_mk_splat(c, t, 1, n), n);
		cdf = dg_mk_bin(c, NK_Mul, cdf, dg_mk_splat(c, t, 0.5, n), n);
		struct value x2 = dg_mk_bin(c, NK_Mul, dg_mk_bin(c, NK_Mul, a, a, n), dg_mk_splat(c, t, -0.5, n), n);
		struct value pdf = dg_mk1(c, NK_Exp, &x2, 1, t, n);
		pdf = dg_mk_bin(c, NK_Mul, pdf, dg_mk_splat(c, t, 0.39894228040143268, n), n);
		struct value d = dg_mk_bin(c, NK_Add, cdf, dg_mk_bin(c, NK_Mul, a, pdf, n), n);
		dg_add_adj(c, a, dg_mk_bin(c, NK_Mul, gy, d, n));
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
		struct value g = dg_mk_transpose(c, gy, to_nc, n);
		g = dg_mk1(c, NK_Reshape, &g, 1, type_with_dims(c->m->types, gt, g2, 2), n);
		struct value ops[2] = {g, node_val(&k->n, 0)};
		md[0] = nb * ch;
		g = dg_mk1(c, NK_MatMul, ops, 2, type_with_dims(c->m->types, xt, md, 2), n);
		g = dg_mk1(c, NK_Reshape, &g, 1, type_with_dims(c->m->types, xt, x4, 4), n);
		dg_add_adj(c, a, dg_mk_transpose(c, g, to_nhwc, n));
		return true;
	}
	case NK_Neg: dg_add_adj(c, a, dg_mk1(c, NK_Neg, &gy, 1, val_type(gy), n)); return true;
	case NK_Dropout: dg_add_adj(c, a, gy); return true; /* ratio 0: the identity */
	case NK_Exp: dg_add_adj(c, a, dg_mk_bin(c, NK_Mul, gy, node_val(n, 0), n)); return true;
	case NK_Log: dg_add_adj(c, a, dg_mk_bin(c, NK_Div, gy, a, n)); return true;
	case NK_Sqrt: /* 1 / (2 sqrt(x)) */
		dg_add_adj(c, a, dg_mk_bin(c, NK_Div, gy, dg_mk_bin(c, NK_Add, node_val(n, 0), node_val(n, 0), n), n));
		return true;
	case NK_Max:
	case NK_Min: {
		/* the operand that was chosen; a tie goes to the LHS */
		struct value zero = dg_mk_splat(c, val_type(gy), 0, n);
		struct value lhs_lost =
			n->kind == NK_Max ? dg_mk_cmp(c, NK_CmpLT, a, b, n) : dg_mk_cmp(c, NK_CmpLT, b, a, n);
		dg_add_adj(c, a, dg_mk_select(c, lhs_lost, zero, gy, n));
		dg_add_adj(c, b, dg_mk_select(c, lhs_lost, gy, zero, n));
		return true;
	}
	case NK_LeakyRelu: {
		struct value zero = dg_mk_splat(c, val_type(a), 0, n);
		struct value alpha = dg_mk_splat(c, val_type(a), node_float(n, "alpha"), n);
		struct value slope = dg_mk_bin(c, NK_Mul, gy, alpha, n);
		dg_add_adj(c, a, dg_mk_select(c, dg_mk_cmp(c, NK_CmpLT, zero, a, n), gy, slope, n));
		return true;
	}
	case NK_Clip: {
		/* passes where min <= x <= max */
		struct value zero = dg_mk_splat(c, val_type(a), 0, n);
		struct value lo = dg_mk_cmp(c, NK_CmpLTE, dg_mk_splat(c, val_type(a), node_float(n, "min"), n), a, n);
		struct value hi = dg_mk_cmp(c, NK_CmpLTE, a, dg_mk_splat(c, val_type(a), node_float(n, "max"), n), n);
		struct value in = dg_mk_select(c, lo, gy, zero, n);
		dg_add_adj(c, a, dg_mk_select(c, hi, in, zero, n));
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
		struct value g = dg_mk1(c, NK_Reshape, &gy, 1, type_with_dims(c->m->types, at, d, at->rank), n);
		g = dg_mk1(c, NK_Broadcast, &g, 1, at, n);
		if (n->kind == NK_BatchedReduceMean)
			g = dg_mk_bin(c, NK_Mul, g, dg_mk_splat(c, at, 1.0 / (double)cnt, n), n);
		dg_add_adj(c, a, g);
		return true;
	}
	case NK_Slice: {
		/* gy written into zeros of the input's shape */
		unsigned len;
		const int64_t *start = node_ints(n, "start", &len);
		struct value ops[2] = {dg_mk_splat(c, val_type(a), 0, n), gy};
		struct value g = dg_mk1(c, NK_InsertTensor, ops, 2, val_type(a), n);
		node_set_ints(c->m, g.node, "start", start, len);
		dg_add_adj(c, a, g);
		return true;
	}
	case NK_Pad: {
		/* constant padding: the slice of gy the input was copied to;
		 * other modes and negative pads in diff-rules.c */
		unsigned len;
		const int64_t *pads = node_ints(n, "pads", &len);
		int64_t start[GLOW_MAX_RANK];
		for (unsigned i = 0; i < len / 2; i++) {
			if (pads[i] < 0 || pads[i + len / 2] < 0)
				return dg_backprop_more(c, n, gy);
			start[i] = pads[i];
		}
		if (strcmp(node_enum(n, "mode"), "constant") != 0)
			return dg_backprop_more(c, n, gy);
		struct value g = dg_mk1(c, NK_Slice, &gy, 1, val_type(a), n);
		node_set_ints(c->m, g.node, "start", start, len / 2);
		dg_add_adj(c, a, g);
		return true;
	}
	case NK_Concat: {
		/* each input's slice of gy */
		unsigned dim = (unsigned)node_int(n, "dim"), rank = val_type(gy)->rank;
		int64_t start[GLOW_MAX_RANK] = {0};
		for (unsigned i = 0; i < n->nops; i++) {
			struct value x = op_val(n, i);
			if (dg_wants_grad(c, x)) {
				struct value g = dg_mk1(c, NK_Slice, &gy, 1, val_type(x), n);
				node_set_ints(c->m, g.node, "start", start, rank);
				dg_add_adj(c, x, g);
			}
			start[dim] += (int64_t)val_type(x)->dims[dim];
		}
		return true;
	}
	default: return dg_backprop_more(c, n, gy);
	}
}

/* The SGD update of trainable placeholder w with adjoint dw: one SGD node
 * carrying the training configuration (lower-train.c lowers it into the
 * arithmetic at the top and creates the velocity placeholder), then the
 * Save of its result to w. */
static void sgd_update(struct dctx *c, struct node *w, struct value dw)
{
	const struct train_config *cfg = c->cfg;
	struct value ops[2] = {dw, node_val(w, 0)};
	struct value nw = dg_mk1_s(c, NK_SGD, ops, 2, node_type(w), w, "sgd");
	node_set_float(c->m, nw.node, "learning_rate", cfg->learning_rate);
	node_set_float(c->m, nw.node, "momentum", cfg->momentum);
	node_set_float(c->m, nw.node, "l2_decay", cfg->weight_decay);
	node_set_int(c->m, nw.node, "batch_size", (int64_t)cfg->batch_size);
	struct value save[2] = {nw, ops[1]};
	dg_mk(c, NK_Save, save, 2, NULL, w);
}

/* The copy in @F_grad of forward node n (operands o, already mapped) where
 * a training step computes something else than @F, or NULL to copy n as it
 * is: a Dropout with a ratio becomes Mul(x, DropoutMask(step)), the step
 * counter "<F>_dropout_step" (i64<1>, created on first use, incremented
 * by the step's last Save) shared by the function's Dropouts. */
static struct node *train_forward(struct dctx *c, const struct node *n, const struct value *o)
{
	if (n->kind == NK_BatchNormalization && c->train && !node_has_pred(n) &&
	    elem_is_float((enum elem_kind)op_type(n, 0)->elem))
		return dg_bn_train_forward(c, n, o);
	if (n->kind != NK_Dropout || node_has_pred(n) || node_float(n, "ratio") == 0)
		return NULL;
	if (!c->step) {
		char name[96];
		snprintf(name, sizeof name, "%.80s_dropout_step", c->f->name);
		uint64_t one = 1;
		const struct type *t = type_get(c->m->types, EK_I64, &one, 1);
		struct node *p = module_find_global(c->m, name);
		c->step = p && p->kind == NK_Placeholder && node_type(p) == t
				  ? p
				  : &module_add_placeholder(c->m, module_fresh_name(c->m, name), t, c->f->loc)->n;
	}
	struct value sv = node_val(c->step, 0);
	struct value mask = dg_mk1_s(c, NK_DropoutMask, &sv, 1, node_type(n), n, "mask");
	node_set_float(c->m, mask.node, "ratio", node_float(n, "ratio"));
	node_set_int(c->m, mask.node, "seed", node_int(n, "seed"));
	struct value ops[2] = {o[0], mask};
	return node_create(c->g, NK_Mul, n->name, ops, 2, n->types, NULL, n->loc);
}

static bool is_loss(const struct node *n) { return n->kind == NK_CrossEntropyLoss || n->kind == NK_Regression; }

static void dctx_init(struct dctx *c, struct module *m, struct func *g, struct diag *d)
{
	memset(c, 0, sizeof *c);
	c->m = m;
	c->g = g;
	c->d = d;
	c->cfg = &train_config_default;
	u64map_init(&c->clone);
	u64map_init(&c->needs);
	u64map_init(&c->adj);
	u64map_init(&c->done);
	u64map_init(&c->srcs);
}

static void dctx_free(struct dctx *c)
{
	u64map_free(&c->clone);
	u64map_free(&c->needs);
	u64map_free(&c->adj);
	u64map_free(&c->done);
	u64map_free(&c->srcs);
	free(c->bn_save);
}

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
	struct dctx c;
	dctx_init(&c, m, func_create(m, name, f->loc), ctx->diag);
	c.cfg = &cfg;
	c.train = ctx->mode == PASS_MODE_TRAIN;
	c.f = f;

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
		struct node *k = train_forward(&c, n, o);
		if (!k) {
			k = node_create_pred(c.g, n->kind, n->name, o, n->nops, pred, n->types, NULL, n->loc);
			node_copy_attrs(m, k, n);
		}
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
		if (u64map_get(&c.done, (uint64_t)(uintptr_t)n) && !dg_get_adj(&c, node_val(n, 0)))
			continue;
		if (is_loss(n)) {
			seed_loss(&c, n);
			seeded++;
			continue;
		}
		struct value *gy = n->nres ? dg_get_adj(&c, node_val(n, 0)) : NULL;
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
	if (status > 0) {
		module_for_each_global(m, w) {
			struct value *dw = is_trainable(w) ? dg_get_adj(&c, node_val(w, 0)) : NULL;
			if (dw)
				sgd_update(&c, w, *dw);
		}
		for (unsigned i = 0; i < c.nbn_save; i++)
			dg_mk(&c, NK_Save, &c.bn_save[2 * i], 2, NULL, c.bn_save[2 * i + 1].node);
		if (c.step) {
			/* the next step draws other dropout masks */
			struct value sv = node_val(c.step, 0);
			struct value one = dg_mk_splat_s(&c, node_type(c.step), 1, c.step, "one");
			struct value save[2] = {dg_mk_bin_s(&c, NK_Add, sv, one, c.step, "next"), sv};
			dg_mk(&c, NK_Save, save, 2, NULL, c.step);
		}
	}
	dctx_free(&c);
	return status;
}

const struct node *differentiate_values(struct func *f, struct value y, struct value seed, const struct value *xs,
					unsigned nx, struct value *out)
{
	struct dctx c;
	dctx_init(&c, f->mod, f, NULL);
	c.explicit_srcs = true;
	for (unsigned i = 0; i < nx; i++)
		u64map_put(&c.srcs, (uint64_t)(uintptr_t)xs[i].node, xs[i].node);
	struct node *last = f->last;
	func_for_each(f, n) {
		for (unsigned i = 0; i < n->nops; i++) {
			const struct node *def = n->ops[i].def;
			if (is_source(&c, def) || u64map_get(&c.needs, (uint64_t)(uintptr_t)def)) {
				u64map_put(&c.needs, (uint64_t)(uintptr_t)n, n);
				break;
			}
		}
	}
	dg_add_adj(&c, y, seed);
	const struct node *bad = NULL;
	for (struct node *n = last; n && !bad; n = n->prev) {
		if (!n->nres || !u64map_get(&c.needs, (uint64_t)(uintptr_t)n))
			continue;
		struct value *gy = dg_get_adj(&c, node_val(n, 0));
		if (gy && (node_has_pred(n) || !backprop(&c, n, *gy)))
			bad = n;
	}
	for (unsigned i = 0; i < nx && !bad; i++) {
		struct value *a = dg_get_adj(&c, xs[i]);
		out[i] = a ? *a : dg_mk_splat_s(&c, val_type(xs[i]), 0, xs[i].node, "zero_grad");
	}
	dctx_free(&c);
	return bad;
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
