/* loop-unroll.c - a Loop whose iterations are all known at compile time
 * becomes its body repeated (loop-unroll{max-trips=N max-nodes=M}).
 *
 * Which Loops: the trip count is a constant (loop_const_trip), the initial
 * condition a constant, and the body yields as its next condition either
 * its condition parameter (the condition never changes) or a constant
 * (constant-fold, which runs inside regions, makes one of a computed
 * condition that does not depend on the iteration). The number of
 * iterations is then known: none when the condition starts false, one when
 * the body yields false, else the trip count (a Loop with no bound and a
 * condition that stays true never ends, and stays). Loops of more than
 * max-trips iterations, or whose copies would add more than max-nodes
 * nodes, stay too, and so do Loops that would run more iterations than
 * their scan_length (a run-time error); with unsupported-only=true (the control-flow stage of
 * -O1..-O3) so do the Loops the target backend executes.
 *
 * Each iteration copies the body's nodes before the Loop (node_clone_deep:
 * regions of nested If and Loop nodes copied whole), with the iteration
 * number a constant i64<> and the carried values the previous iteration's
 * yields (the inits for the first). The Loop's carried results become the
 * last iteration's values; each scan output is the iterations' values, each
 * reshaped to 1 x shape and concatenated on axis 0 (docs/GraphIR.md: rows
 * of iterations that do not run, when the condition ends the Loop early,
 * are zero, a Splat). Then the Loop is erased.
 *
 * Requires: a verified function. Preserves: every result's value.
 */
#include "graph/region.h"
#include "passes/pass.h"
#include "passes/regions.h"
#include "support/util.h"

#include <stdlib.h>
#include <string.h>

/* The number of iterations of n when known at compile time, else -1. */
static int64_t known_iterations(const struct node *n)
{
	int64_t trip = loop_const_trip(n), c0, cy;
	struct func *body = node_region(n, 0);
	struct node *y = region_yield(body);
	if (trip < 0 || !y || !node_const_scalar(n->ops[1].def, &c0))
		return -1;
	if (!c0 || trip == 0)
		return 0;
	if (y->ops[0].def == region_param(body, 1))
		return trip == INT64_MAX ? -1 : trip;
	if (!node_const_scalar(y->ops[0].def, &cy))
		return -1;
	return cy ? (trip == INT64_MAX ? -1 : trip) : 1;
}

/* A scalar constant of kind ek and value v (a splat), named after base. */
static struct value scalar_const(struct module *m, enum elem_kind ek, int64_t v, const char *base)
{
	struct constant *c = module_add_constant(m, module_fresh_name(m, base), type_get(m->types, ek, NULL, 0), LOC_NONE);
	c->init = INIT_SPLAT;
	c->splat_i = v;
	return node_val(&c->n, 0);
}

/* rows[0..nrows) (each of t's shape less its leading axis) stacked into t,
 * zero rows after them up to t's leading dimension. */
static struct value stack_rows(struct func *f, const struct type *t, const struct value *rows, size_t nrows,
			       struct node *before, const char *name)
{
	struct module *m = f->mod;
	size_t total = (size_t)t->dims[0];
	struct value *parts = xmalloc((nrows + 1) * sizeof(*parts));
	uint64_t dims[GLOW_MAX_RANK];
	memcpy(dims, t->dims, t->rank * sizeof(dims[0]));
	dims[0] = 1;
	const struct type *row = elem_is_quantized((enum elem_kind)t->elem)
					 ? type_get_q(m->types, (enum elem_kind)t->elem, dims, t->rank, t->scale, t->offset)
					 : type_get(m->types, (enum elem_kind)t->elem, dims, t->rank);
	size_t np = 0;
	for (size_t i = 0; i < nrows; i++)
		parts[np++] = node_val(node_create1(f, NK_Reshape, name, &rows[i], 1, row, before, LOC_NONE), 0);
	if (nrows < total || nrows == 0) {
		dims[0] = total - nrows;
		const struct type *zt = elem_is_quantized((enum elem_kind)t->elem)
						? type_get_q(m->types, (enum elem_kind)t->elem, dims, t->rank, t->scale, t->offset)
						: type_get(m->types, (enum elem_kind)t->elem, dims, t->rank);
		struct node *z = node_create1(f, NK_Splat, name, NULL, 0, zt, before, LOC_NONE);
		node_set_float(m, z, AN_value, 0);
		parts[np++] = node_val(z, 0);
	}
	struct value out = parts[0];
	if (np > 1) {
		struct node *c = node_create1(f, NK_Concat, name, parts, (unsigned)np, t, before, LOC_NONE);
		node_set_int(m, c, AN_dim, 0);
		out = node_val(c, 0);
	}
	free(parts);
	return out;
}

/* Unrolls Loop n of f, iters iterations. */
static void unroll(struct func *f, struct node *n, int64_t iters)
{
	struct module *m = f->mod;
	struct func *body = node_region(n, 0);
	struct node *y = region_yield(body);
	unsigned nc = loop_num_carried(n), ns = loop_num_scans(n);
	struct value *cur = xmalloc((nc + 1) * sizeof(*cur));
	struct value *scans = xmalloc(((size_t)iters * ns + 1) * sizeof(*scans));
	for (unsigned k = 0; k < nc; k++)
		cur[k] = op_val(n, 2 + k);
	for (int64_t it = 0; it < iters; it++) {
		struct clone_map cm;
		clone_map_init(&cm, m);
		clone_map_set(&cm, region_param(body, 0), scalar_const(m, EK_I64, it, "iter"));
		clone_map_set(&cm, region_param(body, 1), scalar_const(m, EK_BOOL, 1, "cond"));
		for (unsigned k = 0; k < nc; k++)
			clone_map_set(&cm, region_param(body, 2 + k), cur[k]);
		func_for_each(body, b) if (b->kind != NK_RegionArg && b != y) node_clone_deep(f, b, n, &cm);
		for (unsigned k = 0; k < nc; k++)
			cur[k] = clone_map_value(&cm, op_val(y, 1 + k));
		for (unsigned j = 0; j < ns; j++)
			scans[(size_t)j * (size_t)iters + (size_t)it] = clone_map_value(&cm, op_val(y, 1 + nc + j));
		clone_map_free(&cm);
	}
	for (unsigned k = 0; k < nc; k++)
		value_replace_all_uses(node_val(n, k), cur[k]);
	for (unsigned j = 0; j < ns; j++)
		if (node_num_uses(n, (int)(nc + j)))
			value_replace_all_uses(node_val(n, nc + j),
					       stack_rows(f, n->types[nc + j], scans + (size_t)j * (size_t)iters,
							  (size_t)iters, n, n->name));
	free(cur);
	free(scans);
	node_erase(f, n);
}

/* The limits of one run and what it did. */
struct unroll_run {
	int64_t max_trips, max_nodes;
	uint64_t copies;
};

/* Unrolls Loop n of f if its iterations are known and within the limits. */
static bool unroll_one(struct func *f, struct node *n, void *arg)
{
	struct unroll_run *ur = arg;
	int64_t iters = known_iterations(n);
	if (iters < 0 || iters > ur->max_trips)
		return false;
	/* more iterations than the scan outputs have rows (scan_length): the
	 * Loop stays, to stop the run as it would have */
	if (loop_num_scans(n) && iters > loop_scan_length(n))
		return false;
	uint64_t size = func_count_nodes(node_region(n, 0));
	if ((uint64_t)iters * size > (uint64_t)ur->max_nodes)
		return false;
	unroll(f, n, iters);
	ur->copies += (uint64_t)iters;
	return true;
}

bool loop_unroll_run(struct func *f, struct pass_ctx *ctx)
{
	struct unroll_run ur = {pass_opt_int(ctx, POPT_LU_MAX_TRIPS), pass_opt_int(ctx, POPT_LU_MAX_NODES), 0};
	uint64_t unrolled = pass_rewrite_kind(f, NK_Loop, pass_opt_bool(ctx, POPT_LU_UNSUPPORTED), ctx, unroll_one, &ur);
	pass_stat(ctx, "Number of Loops unrolled", unrolled);
	pass_stat(ctx, "Number of iterations copied", ur.copies);
	return unrolled != 0;
}
