/* gradcheck.c - glow-gradcheck's driver: random inputs, compiling and
 * running the forward and gradient functions, the loss, and the comparison
 * of every trainable placeholder's gradient with central finite differences
 * (the behaviour is described in tools/glow-gradcheck/glow-gradcheck.c).
 */
#include "gradcheck/gradcheck.h"
#include "irgen/irgen.h"
#include "iropt/iropt.h"
#include "passes/lowering.h"
#include "passes/pass.h"
#include "passes/passutil.h"
#include "passes/target.h"
#include "support/cl.h"
#include "support/hashmap.h"
#include "support/io.h"
#include "support/rng.h"
#include "support/util.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { GC_MAX_ELEMS = 64 };

/* ---- random inputs ---- */

/* The class count of the CrossEntropyLoss that reads placeholder p as its
 * labels, or the size of the axis a Gather reads with p as its indices; 0
 * if neither does. */
static uint64_t label_bound(struct node *p)
{
	for (const struct use *u = p->uses; u; u = u->next) {
		const struct node *user = use_user(u);
		if (user->kind == NK_CrossEntropyLoss && u->idx == 1)
			return op_type(user, 0)->dims[1];
		if (user->kind == NK_Gather && u->idx == 1)
			return op_type(user, 0)->dims[node_int(user, AN_axis)];
	}
	return 0;
}

/* The value of every placeholder of m, by name: malloc'd buffers. */
struct tensors {
	struct strmap map; /* name -> uint8_t * */
};

static void fill_inputs(struct tensors *ts, struct module *m, uint64_t seed)
{
	strmap_init(&ts->map);
	module_for_each_global(m, g) {
		if (g->kind != NK_Placeholder)
			continue;
		const struct type *t = node_type(g);
		uint8_t *p = xcalloc((size_t)type_bytes(t) + 8, 1);
		uint64_t s = seed * 0x9e3779b97f4a7c15ULL ^ hash_bytes(g->name, strlen(g->name));
		uint64_t bound = elem_is_integer((enum elem_kind)t->elem) ? label_bound(g) : 0;
		for (uint64_t i = 0; i < type_numel(t); i++) {
			double u = rng_unit(&s);
			if (elem_is_float((enum elem_kind)t->elem))
				pu_store(t, p, i, 2 * u - 1);
			else if (bound)
				pu_store(t, p, i, floor(u * (double)bound));
		}
		strmap_put(&ts->map, g->name, strlen(g->name), p);
	}
}

static void free_tensors(struct tensors *ts)
{
	for (size_t i = 0; i < ts->map.cap; i++)
		if (ts->map.tab[i].key)
			free(ts->map.tab[i].val);
	strmap_free(&ts->map);
}

/* ---- compiling and running one function ---- */

struct prog {
	const struct backend *be;
	struct ir_module *im;
	struct backend_compiled *c;
	struct backend_io *io;
	size_t nio;
	uint8_t **out; /* the outputs' buffers, by io index (NULL: not an output) */
};

/* IRGen of f, the backend's IR pipeline of level olevel, compilation. */
static int prog_open(struct prog *p, struct module *m, struct func *f, const struct backend *be, int olevel,
		     struct diag *d)
{
	memset(p, 0, sizeof *p);
	p->be = be;
	p->im = ir_module_create(m->types);
	struct ir_func *xf = irgen_func(p->im, f, d);
	if (!xf)
		return -1;
	const char *pipe = be->ir_pipelines[olevel];
	if (pipe && *pipe) {
		struct iropt_ctx ctx = {d, NULL};
		struct pm pm;
		pm_init(&pm, &ir_pass_registry, d, &ctx);
		int rc = pm_add_text(&pm, pipe) || pm_run(&pm, p->im) || ir_module_verify(p->im, d);
		pm_free(&pm);
		if (rc)
			return -1;
	}
	p->io = backend_func_io(xf, &p->nio);
	p->out = xcalloc(p->nio + 1, sizeof *p->out);
	for (size_t i = 0; i < p->nio; i++)
		if (p->io[i].is_output)
			p->out[i] = xcalloc((size_t)type_bytes(p->io[i].w->v.type) + 8, 1);
	struct backend_options bo = {true, NULL};
	p->c = be->compile(be, xf, &bo, d);
	return p->c ? 0 : -1;
}

static void prog_close(struct prog *p)
{
	if (p->c)
		p->be->destroy(p->c);
	for (size_t i = 0; i < p->nio; i++)
		free(p->out[i]);
	free(p->out);
	free(p->io);
	if (p->im)
		ir_module_destroy(p->im);
}

/* Runs with the inputs from ts (outputs that are also inputs start from a
 * copy); 0 or -1 after reporting. */
static int prog_run(struct prog *p, struct tensors *ts, struct diag *d)
{
	struct backend_binding *b = xcalloc(p->nio + 1, sizeof *b);
	size_t nb = 0;
	for (size_t i = 0; i < p->nio; i++) {
		const struct ir_weight *w = p->io[i].w;
		uint8_t *src = strmap_get(&ts->map, w->v.name);
		if (p->out[i]) {
			if (src)
				memcpy(p->out[i], src, (size_t)type_bytes(w->v.type));
			b[nb].data = p->out[i];
		} else if (p->io[i].is_input)
			b[nb].data = src;
		else
			continue;
		b[nb++].w = p->io[i].w;
	}
	int rc = p->be->run(p->c, b, nb, d);
	free(b);
	return rc;
}

/* The output buffer of placeholder name, NULL if the program does not write it. */
static const uint8_t *prog_output(const struct prog *p, const char *name)
{
	for (size_t i = 0; i < p->nio; i++)
		if (p->out[i] && strcmp(p->io[i].w->v.name, name) == 0)
			return p->out[i];
	return NULL;
}

/* ---- the loss ---- */

/* What the loss is made of: per loss node, the placeholders the tool saves
 * its value (CrossEntropyLoss) or its Input and Expected (Regression) to. */
struct loss_part {
	bool regression;
	const char *a, *b; /* placeholder names */
	const struct type *t;
};

/* Adds a Save of v to a new placeholder of f's module; returns its name. */
static const char *save_value(struct func *f, struct value v, const char *base)
{
	struct placeholder *p = module_add_placeholder(f->mod, module_fresh_name(f->mod, base), val_type(v), f->loc);
	struct value ops[2] = {v, node_val(&p->n, 0)};
	node_create(f, NK_Save, NULL, ops, 2, NULL, NULL, f->loc);
	return p->n.name;
}

static size_t add_loss_saves(struct func *f, struct loss_part *parts, size_t cap)
{
	size_t n = 0;
	func_for_each(f, x) {
		if (n == cap)
			break;
		if (x->kind == NK_CrossEntropyLoss)
			parts[n++] = (struct loss_part){false, save_value(f, node_val(x, 0), "gradcheck_ce"), NULL,
						       node_type(x)};
		else if (x->kind == NK_Regression)
			parts[n++] = (struct loss_part){true, save_value(f, op_val(x, 0), "gradcheck_in"),
						       save_value(f, op_val(x, 1), "gradcheck_expected"),
						       op_type(x, 0)};
	}
	return n;
}

static double loss_value(const struct prog *p, const struct loss_part *parts, size_t n)
{
	double l = 0;
	for (size_t i = 0; i < n; i++) {
		const uint8_t *a = prog_output(p, parts[i].a);
		if (!parts[i].regression) {
			l += pu_load(parts[i].t, a, 0);
			continue;
		}
		const uint8_t *b = prog_output(p, parts[i].b);
		for (uint64_t e = 0; e < type_numel(parts[i].t); e++) {
			double r = pu_load(parts[i].t, a, e) - pu_load(parts[i].t, b, e);
			l += 0.5 * r * r;
		}
	}
	return l;
}

/* With -mode=train, f's BatchNormalizations normalize with the batch's
 * statistics as differentiate's copies in @F_grad do (biased variance),
 * inserted before each. */
static void batch_statistics(struct func *f)
{
	struct module *m = f->mod;
	func_for_each_safe(f, n, next) {
		if (n->kind != NK_BatchNormalization || node_has_pred(n))
			continue;
		struct value x = op_val(n, 0);
		const struct type *t = val_type(x);
		unsigned ch = (unsigned)node_int(n, AN_channel_idx);
		int64_t axes[GLOW_MAX_RANK];
		uint64_t d[GLOW_MAX_RANK], cdim = t->dims[ch];
		unsigned na = 0;
		for (unsigned i = 0; i < t->rank; i++) {
			if (i != ch)
				axes[na++] = (int64_t)i;
			d[i] = i == ch ? cdim : 1;
		}
		const struct type *ct = type_with_dims(m->types, t, &cdim, 1);
		struct node *mean = node_create1(f, NK_BatchedReduceMean, NULL, &x, 1, ct, n, n->loc);
		node_set_ints(m, mean, AN_axes, axes, na);
		struct value mv = node_val(mean, 0);
		struct node *r = node_create1(f, NK_Reshape, NULL, &mv, 1, type_with_dims(m->types, t, d, t->rank), n,
					      n->loc);
		struct value rv = node_val(r, 0);
		struct node *b = node_create1(f, NK_Broadcast, NULL, &rv, 1, t, n, n->loc);
		struct value sub[2] = {x, node_val(b, 0)};
		struct node *xc = node_create1(f, NK_Sub, NULL, sub, 2, t, n, n->loc);
		struct value sq[2] = {node_val(xc, 0), node_val(xc, 0)};
		struct value sqv = node_val(node_create1(f, NK_Mul, NULL, sq, 2, t, n, n->loc), 0);
		struct node *var = node_create1(f, NK_BatchedReduceMean, NULL, &sqv, 1, ct, n, n->loc);
		node_set_ints(m, var, AN_axes, axes, na);
		node_set_operand(n, 3, mv);
		node_set_operand(n, 4, node_val(var, 0));
	}
}

/* Gives f's Dropouts the masks differentiate gives @F_grad's copies:
 * Mul(x, DropoutMask(@<F>_dropout_step)), the step placeholder of the
 * same name, so the finite differences see the function the gradient is
 * of (the step's value is an input: 0); those of ratio 0 are the identity.
 * The masks are lowered here, as f runs without a pipeline. */
static void mask_dropouts(struct func *f)
{
	struct module *m = f->mod;
	struct node *step = NULL;
	func_for_each_safe(f, n, next) {
		if (n->kind != NK_Dropout || node_has_pred(n))
			continue;
		if (node_float(n, AN_ratio) == 0) { /* the identity */
			value_replace_all_uses(node_val(n, 0), op_val(n, 0));
			node_erase(f, n);
			continue;
		}
		if (!step) {
			char name[300];
			snprintf(name, sizeof name, "%s_dropout_step", f->name);
			uint64_t one = 1;
			const struct type *st = type_get(m->types, EK_I64, &one, 1);
			step = &module_add_placeholder(m, module_fresh_name(m, name), st, f->loc)->n;
		}
		struct value sv = node_val(step, 0);
		struct node *mask = node_create1(f, NK_DropoutMask, NULL, &sv, 1, node_type(n), n, n->loc);
		node_set_float(m, mask, AN_ratio, node_float(n, AN_ratio));
		node_set_int(m, mask, AN_seed, node_int(n, AN_seed));
		struct value ops[2] = {op_val(n, 0), node_val(mask, 0)};
		struct node *mul = node_create1(f, NK_Mul, NULL, ops, 2, node_type(n), n, n->loc);
		value_replace_all_uses(node_val(n, 0), node_val(mul, 0));
		node_erase(f, n);
		lower_dropout_mask(f, mask);
	}
}

/* ---- which gradient kinds a placeholder's gradient passes through ---- */

/* Marks in kinds[] the gradient kinds among the nodes dw depends on in
 * the backward part of g (the nodes after its first nfwd). */
static void grad_kinds(struct func *g, size_t nfwd, struct value dw, bool *kinds)
{
	struct u64map back, seen;
	u64map_init(&back);
	u64map_init(&seen);
	size_t i = 0;
	func_for_each(g, n) {
		if (i++ >= nfwd)
			u64map_put(&back, (uint64_t)(uintptr_t)n, n);
	}
	struct node **stack = xcalloc(g->nnodes + 1, sizeof *stack);
	size_t sp = 0;
	stack[sp++] = dw.node;
	u64map_put(&seen, (uint64_t)(uintptr_t)dw.node, dw.node);
	while (sp) {
		struct node *n = stack[--sp];
		if (lower_is_grad(n) && n->kind != NK_DropoutMask && n->kind != NK_SGD)
			kinds[n->kind] = true;
		for (unsigned k = 0; k < n->nops; k++) {
			struct node *o = n->ops[k].def;
			if (!u64map_get(&back, (uint64_t)(uintptr_t)o) || u64map_get(&seen, (uint64_t)(uintptr_t)o))
				continue;
			u64map_put(&seen, (uint64_t)(uintptr_t)o, o);
			stack[sp++] = o;
		}
	}
	free(stack);
	u64map_free(&back);
	u64map_free(&seen);
}

/* The adjoint of trainable w in the unlowered g: the update is
 * Save(SGD(dW, W), W), so dW is the SGD's operand 0. */
static struct value find_adjoint(struct func *g, struct node *w)
{
	struct value none = {NULL, 0};
	func_for_each(g, n) {
		if (n->kind != NK_Save || n->ops[1].def != w)
			continue;
		struct node *sgd = n->ops[0].def;
		return sgd->kind == NK_SGD ? op_val(sgd, 0) : none;
	}
	return none;
}

/* ---- the check ---- */

struct check {
	struct gc_options *o;
	struct diag *d;
	const struct backend *be;
	uint64_t seed;
	double step, tol;
};

static int parse_real(struct diag *d, const char *opt, const char *s, double def, double *out)
{
	*out = def;
	if (!s)
		return 0;
	char *end;
	double x = strtod(s, &end);
	if (end == s || *end || !(x > 0) || !isfinite(x)) {
		diag_error(d, LOC_NONE, "-%s takes a positive number, got '%s'", opt, s);
		return 1;
	}
	*out = x;
	return 0;
}

/* The function to check: -func, else the only one with a loss. */
static struct func *pick(struct module *m, const char *name, struct diag *d)
{
	if (name) {
		struct func *f = module_find_func(m, name[0] == '@' ? name + 1 : name);
		if (!f)
			diag_error(d, LOC_NONE, "no function %s in the module", name);
		return f;
	}
	struct func *found = NULL;
	for (size_t i = 0; i < m->nfuncs; i++) {
		bool loss = false;
		func_for_each(m->funcs[i], n) loss |= n->kind == NK_CrossEntropyLoss || n->kind == NK_Regression;
		if (!loss)
			continue;
		if (found) {
			diag_error(d, LOC_NONE, "several functions have a loss; choose one with -func=@name");
			return NULL;
		}
		found = m->funcs[i];
	}
	if (!found)
		diag_error(d, LOC_NONE, "no function has a loss (CrossEntropyLoss or Regression)");
	return found;
}

/* Runs the graph pipeline passes on m, after lowering every gradient and
 * training kind into forward kinds when lower_all_grads is set. */
static int run_pipeline(struct check *c, struct module *m, const char *passes, bool lower_all_grads)
{
	struct pass_target target = {c->o->backend > 0 ? c->be : NULL, backend_name(BACKEND_HOST, c->o->backend), NULL,
				     false};
	struct train_config tc = {1, 0, 0, 1};
	struct pass_ctx ctx;
	memset(&ctx, 0, sizeof ctx);
	ctx.diag = c->d;
	ctx.mode = c->o->mode ? PASS_MODE_INFER : PASS_MODE_TRAIN;
	ctx.backend = backend_name(BACKEND_HOST, c->o->backend);
	ctx.target = &target;
	ctx.train = &tc;
	struct pm pm;
	pm_init(&pm, &graph_pass_registry, c->d, &ctx);
	pm.skip_flags |= PASS_INFER_ONLY;
	for (size_t i = 0; lower_all_grads && i < m->nfuncs; i++)
		lower_grads(m->funcs[i], &ctx);
	int rc = pm_add_text(&pm, passes) || pm_run(&pm, m) || module_verify(m, c->d) ? -1 : 0;
	pm_free(&pm);
	return rc;
}

static int check_module(struct check *c, const char *buf, size_t len, const char *name)
{
	struct type_ctx types;
	type_ctx_init(&types);
	/* lm: @F with the loss saves; gm: @F_grad */
	struct module *lm = module_parse(&types, buf, len, name, c->d, true);
	struct module *gm = lm ? module_parse(&types, buf, len, name, c->d, false) : NULL;
	struct prog lp = {0}, gp = {0};
	struct tensors ts = {0};
	int status = 1;
	struct func *lf = gm ? pick(lm, c->o->func, c->d) : NULL;
	if (!lf)
		goto out;
	struct func *gf0 = module_find_func(gm, lf->name);
	size_t nfwd = gf0->nnodes;
	func_for_each(gf0, n) nfwd += n->kind == NK_Dropout && node_float(n, AN_ratio) != 0; /* + its mask */
	if (run_pipeline(c, gm, "differentiate", false))
		goto out;
	char gname[256];
	snprintf(gname, sizeof gname, "%s_grad", lf->name);
	struct func *gf = module_find_func(gm, gname);
	if (!gf) {
		diag_error(c->d, lf->loc, "function @%s has no loss (CrossEntropyLoss or Regression)", lf->name);
		goto out;
	}

	/* the gradient kinds each trainable's gradient passes through */
	size_t nw = 0;
	module_for_each_global(gm, w) nw += w->kind == NK_Placeholder && as_placeholder(w)->trainable;
	bool(*kinds)[NK_COUNT] = xcalloc(nw + 1, sizeof *kinds);
	size_t wi = 0;
	module_for_each_global(gm, w) {
		if (w->kind != NK_Placeholder || !as_placeholder(w)->trainable)
			continue;
		struct value dw = find_adjoint(gf, w);
		if (dw.node)
			grad_kinds(gf, nfwd, dw, kinds[wi]);
		wi++;
	}
	if (run_pipeline(c, gm, c->o->olevel == 2 ? "O2" : "lower", c->o->lower_grads)) {
		free(kinds);
		goto out;
	}
	struct loss_part parts[64];
	size_t nparts = add_loss_saves(lf, parts, 64);
	mask_dropouts(lf);
	if (!c->o->mode)
		batch_statistics(lf);
	fill_inputs(&ts, lm, c->seed);
	if (prog_open(&gp, gm, gf, c->be, c->o->olevel, c->d) || prog_open(&lp, lm, lf, c->be, c->o->olevel, c->d) ||
	    prog_run(&gp, &ts, c->d) || prog_run(&lp, &ts, c->d)) {
		free(kinds);
		goto out;
	}
	printf("@%s: loss %.6g\n", lf->name, loss_value(&lp, parts, nparts));
	double worst_kind[NK_COUNT];
	for (unsigned k = 0; k < NK_COUNT; k++)
		worst_kind[k] = -1;
	int failed = 0;
	wi = 0;
	status = 0;
	module_for_each_global(lm, w) {
		if (w->kind != NK_Placeholder || !as_placeholder(w)->trainable)
			continue;
		bool *wk = kinds[wi++];
		const struct type *t = node_type(w);
		const uint8_t *upd = prog_output(&gp, w->name);
		uint8_t *val = strmap_get(&ts.map, w->name);
		if (!upd || !elem_is_float((enum elem_kind)t->elem)) {
			printf("%s: no gradient (the loss does not depend on it)\n", w->name);
			continue;
		}
		uint64_t ne = type_numel(t), stepi = ne > GC_MAX_ELEMS ? ne / GC_MAX_ELEMS : 1;
		double worst = 0;
		uint64_t at = 0;
		double wa = 0, wn = 0;
		for (uint64_t e = 0; e < ne && status == 0; e += stepi) {
			double x = pu_load(t, val, e);
			double a = x - pu_load(t, upd, e);
			pu_store(t, val, e, x + c->step);
			double lp1 = (prog_run(&lp, &ts, c->d) ? (status = 1, 0) : loss_value(&lp, parts, nparts));
			pu_store(t, val, e, x - c->step);
			double lm1 = (prog_run(&lp, &ts, c->d) ? (status = 1, 0) : loss_value(&lp, parts, nparts));
			pu_store(t, val, e, x);
			double num = (lp1 - lm1) / (2 * c->step);
			double den = fmax(fmax(fabs(a), fabs(num)), 0.01);
			double err = fabs(a - num) / den;
			if (err > worst || e == 0) {
				worst = err;
				at = e;
				wa = a;
				wn = num;
			}
		}
		if (status)
			break;
		printf("%s: worst relative error %.2e at element %" PRIu64 " (analytic %.6g, numeric %.6g) via",
		       w->name, worst, at, wa, wn);
		for (unsigned k = 0; k < NK_COUNT; k++)
			if (wk[k]) {
				printf(" %s", node_kind_name(k));
				worst_kind[k] = fmax(worst_kind[k], worst);
			}
		printf("\n");
		failed += worst > c->tol;
	}
	free(kinds);
	if (status == 0) {
		for (unsigned k = 0; k < NK_COUNT; k++)
			if (worst_kind[k] >= 0)
				printf("%s: worst relative error %.2e%s\n", node_kind_name(k), worst_kind[k],
				       worst_kind[k] > c->tol ? " (FAILED)" : "");
		fflush(stdout);
		if (failed) {
			diag_error(c->d, LOC_NONE, "%d gradient%s differ%s from finite differences by more than %g",
				   failed, failed == 1 ? "" : "s", failed == 1 ? "s" : "", c->tol);
			status = 1;
		}
	}
out:
	prog_close(&gp);
	prog_close(&lp);
	if (ts.map.tab)
		free_tensors(&ts);
	module_destroy(gm);
	module_destroy(lm);
	type_ctx_free(&types);
	return status;
}

int gradcheck_run(void *opts, struct diag *d)
{
	struct gc_options *o = opts;
	struct check c = {o, d, NULL, 1, 0, 0};
	double seed;
	char *buf = NULL;
	size_t len = 0;
	int status = 1;
	const char *in = o->input.n ? o->input.v[0] : "-";
	if (parse_real(d, "step", o->step_s, 0.01, &c.step) || parse_real(d, "tolerance", o->tol_s, 0.01, &c.tol) ||
	    parse_real(d, "seed", o->seed_s, 1, &seed))
		status = 1;
	else if (!(c.be = backend_select(BACKEND_HOST, o->backend, "glow-gradcheck", d)))
		status = 1;
	else if (read_input(in, &buf, &len, d) == 0) {
		c.seed = (uint64_t)seed;
		status = check_module(&c, buf, len, strcmp(in, "-") == 0 ? "<stdin>" : in);
	}
	free(buf);
	return status;
}
