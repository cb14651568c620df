/* conditions.c - the pre- and postconditions graph passes declare in their
 * Passes.def rows (pass.h: PASS_REQUIRES_*, PASS_ENSURES_*,
 * PASS_PRESERVES_*), checked by the pass manager around each pass: check,
 * transform, check.
 *
 * Each check reports what breaks the condition at the node concerned and
 * returns the number of problems; the pass manager then names the pass.
 */
#include "graph/forms.h"
#include "graph/region.h"
#include "passes/lowering.h"
#include "passes/pass.h"
#include "passes/target.h"
#include "support/hashmap.h"
#include "support/util.h"

#include <stdlib.h>

/* lowered: no node is left that the lower pass would lower (a rule covers
 * it and the target wants it lowered). The first few are reported. */
static int check_lowered(void *ir, void *user, void *snap, struct diag *d)
{
	(void)snap;
	struct module *m = ir;
	const struct pass_ctx *ctx = user;
	int bad = 0;
	for (size_t i = 0; i < m->nfuncs; i++)
		func_for_each(m->funcs[i], n) {
			if (!lower_has_rule(n) || !target_wants_lowered(ctx, n))
				continue;
			if (bad++ < 3)
				diag_error(d, n->loc, "%s %%%s is not lowered for backend '%s'", node_kind_name(n->kind),
					   n->name ? n->name : "", ctx->target ? ctx->target->name : "interpreter");
		}
	return bad;
}

/* The schedule: every function's nodes in list order, each list ended by
 * NULL, after the number of functions. */
struct schedule_snap {
	size_t nfuncs;
	struct node **nodes;
};

static void *snap_schedule(void *ir, void *user)
{
	(void)user;
	struct module *m = ir;
	size_t n = 0;
	for (size_t i = 0; i < m->nfuncs; i++)
		n += m->funcs[i]->nnodes + 1;
	struct schedule_snap *s = xmalloc(sizeof(*s));
	s->nfuncs = m->nfuncs;
	s->nodes = xmalloc((n ? n : 1) * sizeof(*s->nodes));
	struct node **w = s->nodes;
	for (size_t i = 0; i < m->nfuncs; i++) {
		func_for_each(m->funcs[i], x) *w++ = x;
		*w++ = NULL;
	}
	return s;
}

static void snap_free(void *snap)
{
	struct schedule_snap *s = snap;
	free(s->nodes);
	free(s);
}

/* Surviving nodes keep their relative order: new nodes may appear
 * anywhere, erased ones disappear, functions the pass added are free. */
static int check_schedule(void *ir, void *user, void *snap, struct diag *d)
{
	(void)user;
	struct module *m = ir;
	const struct schedule_snap *ss = snap;
	struct node **s = ss->nodes;
	int bad = 0;
	for (size_t i = 0; i < ss->nfuncs && i < m->nfuncs; i++, s++) {
		struct func *f = m->funcs[i];
		struct u64map pos;
		u64map_init(&pos);
		size_t k = 0;
		func_for_each(f, x) ptrmap_put(&pos, x, (void *)(uintptr_t)++k);
		size_t last = 0;
		for (; *s; s++) {
			size_t p = (size_t)(uintptr_t)ptrmap_get(&pos, *s);
			if (!p)
				continue; /* erased */
			if (p < last && !bad++)
				diag_error(d, (*s)->loc, "in @%s, %s %%%s moved before a node that preceded it", f->name,
					   node_kind_name((*s)->kind), (*s)->name ? (*s)->name : "");
			last = p;
		}
		u64map_free(&pos);
	}
	return bad;
}

static int check_form(struct module *m, enum graph_form want, struct diag *d)
{
	enum graph_form got = module_form(m);
	if (got == want)
		return 0;
	diag_error(d, LOC_NONE, "the module records form '%s', not '%s'", got ? graph_form_name(got) : "default",
		   graph_form_name(want));
	return 1;
}

static int check_anf(void *ir, void *user, void *snap, struct diag *d)
{
	(void)user, (void)snap;
	return check_form(ir, FORM_ANF, d);
}

static int check_gnf(void *ir, void *user, void *snap, struct diag *d)
{
	(void)user, (void)snap;
	return check_form(ir, FORM_GNF, d);
}

static int check_bbnf(void *ir, void *user, void *snap, struct diag *d)
{
	(void)user, (void)snap;
	return check_form(ir, FORM_BBNF, d);
}

/* inlined: no Call or function literal is left, and no function with a
 * signature (the inline pass removes them): a pass that rewrites each
 * function on its own (precision, profiles, gradients) would break the
 * agreement of a Call with the signature it calls. The first few are
 * reported. */
struct inlined_check {
	struct diag *d;
	int bad;
};

static void check_call(struct func *scope, struct node *n, void *arg)
{
	(void)scope;
	struct inlined_check *c = arg;
	if (n->kind != NK_Call && n->kind != NK_Fn)
		return;
	const char *callee = n->kind == NK_Call ? node_str(n, AN_callee) : NULL;
	if (c->bad++ < 3)
		diag_error(c->d, n->loc, "%s %%%s%s%s is not inlined (run inline first: -passes=inline, or any -O level)",
			   node_kind_name(n->kind), n->name ? n->name : "", callee ? " of @" : "", callee ? callee : "");
}

static int check_inlined(void *ir, void *user, void *snap, struct diag *d)
{
	(void)user, (void)snap;
	struct module *m = ir;
	struct inlined_check c = {d, 0};
	for (size_t i = 0; i < m->nfuncs; i++) {
		if (func_has_sig(m->funcs[i]) && c.bad++ < 3)
			diag_error(d, m->funcs[i]->loc, "function @%s has a signature: it is only called (run inline "
							"first, which removes it)",
				   m->funcs[i]->name);
		func_walk_pre(m->funcs[i], check_call, &c);
	}
	return c.bad;
}

const struct pm_cond graph_pass_conds[GRAPH_PASS_NCONDS] = {
	{PASS_REQUIRES_LOWERED, "module lowered for the backend", false, NULL, NULL, check_lowered},
	{PASS_ENSURES_LOWERED, "module lowered for the backend", true, NULL, NULL, check_lowered},
	{PASS_PRESERVES_SCHEDULE, "schedule (node order) preserved", true, snap_schedule, snap_free,
	 check_schedule},
	{PASS_ENSURES_ANF, "module in form anf", true, NULL, NULL, check_anf},
	{PASS_ENSURES_GNF, "module in form gnf", true, NULL, NULL, check_gnf},
	{PASS_ENSURES_BBNF, "module in form bbnf", true, NULL, NULL, check_bbnf},
	{PASS_REQUIRES_INLINED, "calls inlined", false, NULL, NULL, check_inlined},
};
