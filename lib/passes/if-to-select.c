/* if-to-select.c - an If whose condition is known only at run time, for a
 * backend without control flow: both branches are computed (regions have
 * no side effects, docs/GraphIR.md) and each result is a Select between
 * them on the condition broadcast to the result's shape. The branches'
 * nodes move out of their regions to just before the If.
 *
 * This is what the ONNX importer did for every run-time If before regions
 * existed; the control-flow stage of -O1..-O3 runs it with
 * unsupported-only=true, on the Ifs the target backend does not execute
 * (target_supports; backends/backend.c answers no for every backend until
 * one executes regions). Costs both branches' work, so fold-if goes first.
 *
 * Requires: a verified function. Preserves: every result's value.
 */
#include "graph/region.h"
#include "passes/pass.h"
#include "passes/regions.h"

/* Select(cond broadcast to t, a, b) before `before`. */
static struct value select_on(struct func *f, struct value cond, struct value a, struct value b, struct node *before,
			      const char *name)
{
	struct module *m = f->mod;
	const struct type *t = val_type(a);
	uint64_t ones[GLOW_MAX_RANK];
	for (unsigned k = 0; k < t->rank; k++)
		ones[k] = 1;
	struct value c = cond;
	if (t->rank) {
		const struct type *ct = type_get(m->types, EK_BOOL, ones, t->rank);
		c = node_val(node_create1(f, NK_Reshape, name, &c, 1, ct, before, LOC_NONE), 0);
		const struct type *bt = type_get(m->types, EK_BOOL, t->dims, t->rank);
		c = node_val(node_create1(f, NK_Broadcast, name, &c, 1, bt, before, LOC_NONE), 0);
	}
	struct value ops[3] = {c, a, b};
	return node_val(node_create1(f, NK_Select, name, ops, 3, t, before, LOC_NONE), 0);
}

/* Both branches of If n out before it, a Select per result. */
static bool select_one(struct func *f, struct node *n, void *arg)
{
	(void)arg;
	struct node *yt = region_inline(node_region(n, 0), f, n);
	struct node *ye = region_inline(node_region(n, 1), f, n);
	struct node *sel = NULL;
	for (unsigned k = 0; k < n->nres; k++) {
		struct value a = op_val(yt, k), b = op_val(ye, k), r = a;
		if (a.node != b.node || a.res != b.res) {
			r = select_on(f, op_val(n, 0), a, b, n, n->name);
			sel = r.node;
		}
		value_replace_all_uses(node_val(n, k), r);
	}
	/* a one-result If's Select takes its name, which its users read */
	const char *name = n->name;
	bool rename = n->nres == 1 && sel;
	node_erase(f, n);
	if (rename)
		node_rename(f, sel, name);
	return true;
}

bool if_to_select_run(struct func *f, struct pass_ctx *ctx)
{
	uint64_t done = pass_rewrite_kind(f, NK_If, pass_opt_bool(ctx, POPT_IS_UNSUPPORTED), ctx, select_one, NULL);
	pass_stat(ctx, "Number of If turned into Select", done);
	return done != 0;
}
