/* profile.c - the Profile step of the precision stage (glow-opt
 * -precision=profile): instruments every function so that running it
 * records the range and histogram of every float value quantization may
 * need (docs/Quantization.md).
 *
 * quantization-profile (module pass). For every function, each float
 * placeholder the function reads and each float result of a computing node
 * gets one QuantizationProfile node reading it, right after the value is
 * made (placeholders: at the function's start), with two new placeholders
 * of its own: @prof.<name>.<res>.hist (float<bins>, the histogram; the
 * option quantization-profile{bins=N}, default QP_DEFAULT_BINS) and
 * @prof.<name>.<res>.info (float<2>, the running min and max).
 * profiled_node_name and profiled_output name the output of the graph the
 * user wrote that the value stands for: the lowered-info map's entry of a
 * value lowering made (graph/lowered.h), else the value's own node name and
 * result index. That is the key of the value in the profile file glow-run
 * -profile=FILE writes. Save and the quantization kinds themselves are not
 * profiled (their float side is a contract, not a computation).
 *
 * Run it last, after lowering (glow-opt places it after the pipeline), so
 * the profiled values are the ones the quantize step later finds by name in
 * the same pipeline's output.
 *
 * Requires: a verified module. Preserves: validity; the computation (the
 * profile nodes only read).
 */
#include "graph/lowered.h"
#include "passes/kindfacts.h"
#include "passes/pass.h"
#include "quant/quant.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Whether the value at (n, r) is one the profile records. */
static bool prof_wanted(const struct node *n, unsigned r)
{
	if (n->types[r]->elem != EK_FLOAT)
		return false;
	return !pk_has(n->kind, PK_NOT_PROFILED) && n->name != NULL;
}

/* Adds the QuantizationProfile of value v, with a histogram of `bins`
 * bins, before `before` (NULL: at the end). */
static void prof_insert(struct module *m, struct func *f, struct value v, struct node *before, uint64_t bins)
{
	char base[512];
	snprintf(base, sizeof base, "prof.%s.%u.hist", v.node->name, v.res);
	const uint64_t two = 2;
	struct placeholder *h =
		module_add_placeholder(m, module_fresh_name(m, base), type_get(m->types, EK_FLOAT, &bins, 1), LOC_NONE);
	snprintf(base, sizeof base, "prof.%s.%u.info", v.node->name, v.res);
	struct placeholder *i =
		module_add_placeholder(m, module_fresh_name(m, base), type_get(m->types, EK_FLOAT, &two, 1), LOC_NONE);
	glow_assert(h && i);
	struct value ops[3] = {v, node_val(&h->n, 0), node_val(&i->n, 0)};
	struct node *p = node_create(f, NK_QuantizationProfile, NULL, ops, 3, NULL, before, v.node->loc);
	/* the profile names the output of the user's graph the value stands
	 * for (the lowered-info map), unless another value of f has that
	 * name: then its own */
	const char *name;
	unsigned res;
	lowered_origin(m, v, &name, &res);
	struct node *clash = name != v.node->name ? func_find(f, name) : NULL;
	if (clash && clash != v.node) {
		name = v.node->name;
		res = v.res;
	}
	node_set_str(m, p, AN_profiled_node_name, name);
	node_set_int(m, p, AN_profiled_output, res);
}

bool quantization_profile_run(struct module *m, struct pass_ctx *ctx)
{
	uint64_t added = 0, bins = (uint64_t)pass_opt_int(ctx, POPT_QP_BINS);
	for (size_t fi = 0; fi < m->nfuncs; fi++) {
		struct func *f = m->funcs[fi];
		/* a function profiled already (its profile nodes are there) is
		 * left as it is: the pass is idempotent */
		bool done = false;
		func_for_each(f, n) done |= n->kind == NK_QuantizationProfile;
		if (done)
			continue;
		struct node *first = f->first;
		func_for_each(f, x) x->bits |= NODE_MARK; /* this function's nodes */
		/* the placeholders the function reads, in module order */
		module_for_each_global(m, g) {
			if (g->kind != NK_Placeholder || !prof_wanted(g, 0))
				continue;
			bool read = false;
			for (const struct use *u = g->uses; u && !read; u = u->next) {
				struct node *user = use_user(u);
				read = (user->bits & NODE_MARK) && !(user->bits & NODE_ERASED) && user->kind != NK_Save;
			}
			if (read) {
				prof_insert(m, f, node_val(g, 0), first, bins);
				added++;
			}
		}
		func_for_each(f, x) x->bits &= (uint8_t)~NODE_MARK;
		func_for_each_safe(f, n, next) {
			if (n->kind == NK_QuantizationProfile)
				continue;
			for (unsigned r = 0; r < n->nres; r++)
				if (prof_wanted(n, r)) {
					prof_insert(m, f, node_val(n, r), next, bins);
					added++;
				}
		}
	}
	pass_stat(ctx, "Number of values profiled", added);
	return added != 0;
}
