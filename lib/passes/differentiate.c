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
 *      constants, labels and indices get none. Gradients.def names each
 *      kind's rule (diff-linear.c, diff-ew.c, diff-shape.c, diff-rules.c):
 *      most kinds make their gradient kinds (Nodes.def: FullyConnectedGrad,
 *      AddGrad, ...), the rest forward kinds;
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
#include "graph/region.h"
#include "passes/differentiate.h"
#include "passes/passutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const struct train_config train_config_default = {0.01, 0, 0, 1};

/* SoftMax over the last axis of N x C whose only users other than the
 * CrossEntropyLoss ce are Saves: the pair is differentiated as one. */
static bool fusable_softmax(const struct node *sm, const struct node *ce)
{
	if (sm->kind != NK_SoftMax || node_has_pred(sm) || node_type(sm)->rank != 2 || node_int(sm, AN_axis) != 1)
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

/* The gradient rule of each kind (Gradients.def); NULL: none. */
static const dg_rule dg_rules[NK_COUNT] = {
#define GRAD(K, rule) [NK_##K] = rule,
#include "passes/Gradients.def"
#undef GRAD
};

/* Propagates the adjoint gy of n's result 0 to n's operands; false if n's
 * kind has no gradient rule or n is outside what its rule handles. */
static bool backprop(struct dctx *c, struct node *n, struct value gy)
{
	return dg_rules[n->kind] && dg_rules[n->kind](c, n, gy);
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
	node_set_float(c->m, nw.node, AN_learning_rate, cfg->learning_rate);
	node_set_float(c->m, nw.node, AN_momentum, cfg->momentum);
	node_set_float(c->m, nw.node, AN_l2_decay, cfg->weight_decay);
	node_set_int(c->m, nw.node, AN_batch_size, (int64_t)cfg->batch_size);
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
	if (n->kind != NK_Dropout || node_has_pred(n) || node_float(n, AN_ratio) == 0)
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
	node_set_float(c->m, mask.node, AN_ratio, node_float(n, AN_ratio));
	node_set_int(c->m, mask.node, AN_seed, node_int(n, AN_seed));
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
				needs |= dg_is_trainable(def) || u64map_get(&c.needs, (uint64_t)(uintptr_t)def);
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
			struct value *dw = dg_is_trainable(w) ? dg_get_adj(&c, node_val(w, 0)) : NULL;
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
			if (dg_is_source(&c, def) || u64map_get(&c.needs, (uint64_t)(uintptr_t)def)) {
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
	/* control flow (issue 18): no gradient rule covers regions yet */
	for (size_t i = 0; i < nfuncs; i++) {
		if (!m->nowners || !pass_diff_selects(ctx, m->funcs[i]->name))
			continue;
		func_for_each(m->funcs[i], n) {
			if (!node_num_regions(n))
				continue;
			diag_error(ctx->diag, n->loc,
				   "differentiate: @%s has control flow (%s %%%s), which differentiate does not handle; "
				   "fold-if, loop-unroll and if-to-select (or -O2 without a backend that executes it) remove it",
				   m->funcs[i]->name, node_kind_name(n->kind), n->name);
			return false;
		}
	}
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
