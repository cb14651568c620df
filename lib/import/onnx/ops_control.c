/* ops_control.c - ONNX control flow (If, Loop, Scan) as control-flow
 * regions of the graph IR (docs/GraphIR.md, "Control flow";
 * docs/Conformance.md).
 *
 * A subgraph is translated like the main graph, node by node with the same
 * translators and the same folding, in a nested scope (struct scope,
 * internal.h): its initializers, inputs and node outputs shadow the names
 * of the enclosing scopes, and any other name resolves outward, as ONNX's
 * lexical scoping asks. The nodes it makes go into a region (im->f is the
 * region while it is translated): its inputs are the region's parameters,
 * its outputs the region's Yield; values of the enclosing scopes are used
 * in place. Diagnostics inside a subgraph name the body's node and, for
 * each enclosing subgraph, its attribute and owning node.
 *
 *   If    a condition known at import translates the taken branch only,
 *         into the enclosing scope. A run-time condition makes an If node
 *         whose then and else regions are the branches; both must give
 *         outputs of one type and shape (static shapes).
 *   Loop  a Loop node: the trip count (an int64 of one element; absent: no
 *         bound, INT64_MAX) and the condition (a bool of one element;
 *         absent: true) at run time, the loop-carried values threaded by
 *         the body region. Scan outputs are stacked on a new axis 0 whose
 *         length is the trip count when it is known at import, else the
 *         length the model declares for them (a graph output's or a
 *         value_info's leading dimension), the Loop's scan_length: a bound
 *         on the iterations checked at run time. Rows of iterations not
 *         run are zero. A body that needs at import a value depending on
 *         the iteration is unrolled instead, when the trip count and the
 *         condition are known (ops_control_unroll.c), else an error.
 *   Scan  a Loop over the static sequence length: the body region takes
 *         scan input slices with Gather at the iteration number (L-1-i for
 *         direction 1) along each input's axis; the stacked scan outputs are
 *         flipped (direction 1) and transposed to their output axes (opset
 *         9+: scan_input_axes/directions, scan_output_axes/directions).
 *         Opset 8's batch axis is unrolled at import around one such Loop
 *         per batch entry (the batch is a static dimension); its
 *         sequence_lens must be known and equal the sequence length.
 *
 * Known values stay known where they can: a branch taken at import folds,
 * and values of the enclosing scopes known at import are constants inside
 * the regions. The passes fold-if, loop-unroll and if-to-select (the
 * pipelines' control-flow stage) then remove the regions a backend does
 * not execute. Bounded: CF_MAX_NODES subgraph nodes translated in one
 * import, CF_MAX_DEPTH nested subgraphs, CF_MAX_BATCH batch entries (opset
 * 8). The import-time unrolling that remains is ops_control_unroll.c's.
 */
#include "graph/region.h"
#include "import/onnx/control.h"
#include "import/onnx/internal.h"
#include "support/vec.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CF_MAX_BATCH 4096
#define CF_MAX_DEPTH 32

/* ---- subgraphs ---- */

/* Graph attribute `name` of n, within the nesting limit. NULL after
 * reporting. */
static const Onnx__GraphProto *body_attr(struct importer *im, const onnx_node *n, const char *name)
{
	const Onnx__AttributeProto *a = imp_attr(n, name);
	if (!a || !a->g) {
		imp_op_err(im, "attribute %s (a graph) is required", name);
		return NULL;
	}
	unsigned depth = 0;
	for (const struct scope *sc = im->inner; sc; sc = sc->parent)
		depth++;
	if (depth >= CF_MAX_DEPTH) {
		imp_op_err(im, "subgraphs are nested more than %d deep", CF_MAX_DEPTH);
		return NULL;
	}
	return a->g;
}

/* ---- regions ---- */

/* The enclosing scope's state while a region is translated. */
struct region_save {
	struct func *f;
	struct u64map nhwc;
};

/* Makes region r the scope new nodes go into; the NHWC transpose cache
 * starts empty there, so no value made in a region is found outside it. */
static void enter_region(struct importer *im, struct func *r, struct region_save *sv)
{
	sv->f = im->f;
	sv->nhwc = im->nhwc;
	u64map_init(&im->nhwc);
	im->f = r;
}

static void leave_region(struct importer *im, const struct region_save *sv)
{
	u64map_free(&im->nhwc);
	im->nhwc = sv->nhwc;
	im->f = sv->f;
}

/* A node of kind (If or Loop) with nres results and operands ops[0..nops)
 * in the current scope, named after the first output; its result types are
 * set once its regions are translated (placeholders until then). */
static struct node *make_owner(struct importer *im, unsigned kind, const struct value *ops, unsigned nops,
			       unsigned nres)
{
	const struct type **ts = arena_alloc(&im->scratch, (nres + 1) * sizeof *ts);
	const struct type *none = type_get(im->tc, EK_BOOL, NULL, 0);
	for (unsigned r = 0; r < nres; r++)
		ts[r] = none;
	const char *name = imp_out_name(im, 0);
	return node_create_n(im->f, kind, *name ? name : NULL, ops, nops, ts, nres, NULL, LOC_NONE);
}

/* A parameter of the region being translated for tensor t's type, named
 * name, as a tensor. NULL after reporting. */
static struct tensor *param_of(struct importer *im, const struct tensor *t, int dtype, const char *name)
{
	const struct type *ty = imp_t_type(im, t);
	if (!ty) {
		imp_op_err(im, "\"%s\" has element type %s, which the graph IR does not support", name,
			   imp_dt_name(dtype));
		return NULL;
	}
	return cf_t_of_value(im, name, dtype, node_val(region_add_param(im->f, name, ty, LOC_NONE), 0));
}

/* Input i of subgraph g's name, or dflt. */
static const char *in_name(const Onnx__GraphProto *g, size_t i, const char *dflt)
{
	return i < g->n_input && g->input[i]->name && *g->input[i]->name ? g->input[i]->name : dflt;
}

/* The value of t (one element) as a scalar of its kind, in the current
 * scope: t's own value when it has rank 0, else a Reshape. */
static struct value scalar_of(struct importer *im, struct tensor *t, const char *name)
{
	struct value v = imp_tval(im, t);
	if (!v.node || val_type(v)->rank == 0)
		return v;
	return imp_b_reshape(im, v, NULL, 0, imp_dname(im, name, "scalar"));
}

/* Ends the region being translated with Yield(pre[0..npre), outs[0..nout)),
 * outs[i] reshaped to want[i] where want and want[i] are given and the
 * shapes differ (a bool[1] condition yields bool<>). -1 after reporting. */
static int yield_outs(struct importer *im, const struct value *pre, unsigned npre, struct tensor *const *outs,
		      size_t nout, const struct type *const *want)
{
	struct value *ys = arena_alloc(&im->scratch, (npre + nout + 1) * sizeof *ys);
	for (unsigned i = 0; i < npre; i++)
		ys[i] = pre[i];
	for (size_t i = 0; i < nout; i++) {
		struct value v = imp_tval(im, outs[i]);
		if (!v.node)
			return -1;
		const struct type *w = want ? want[i] : NULL;
		if (w && val_type(v) != w && val_type(v)->elem == w->elem && type_numel(val_type(v)) == type_numel(w))
			v = imp_b_reshape(im, v, w->dims, w->rank, imp_dname(im, outs[i]->name, "yield"));
		ys[npre + i] = v;
	}
	region_set_yield(im->f, ys, (unsigned)(npre + nout), LOC_NONE);
	return 0;
}

/* Sets the owner's result types and binds the node's outputs to them;
 * dtypes[r] is result r's ONNX type. */
static void bind_results(struct importer *im, const onnx_node *n, struct node *owner, const struct type *const *types,
			 const int *dtypes)
{
	for (unsigned r = 0; r < owner->nres; r++)
		owner->types[r] = types[r];
	for (unsigned i = 0; i < n->n_output && i < owner->nres; i++)
		if (*imp_out_name(im, i))
			imp_set_out_t(im, i, cf_t_of_value(im, imp_out_name(im, i), dtypes[i], node_val(owner, i)));
}

/* ---- If ---- */

int imp_op_if(struct importer *im, const onnx_node *n)
{
	struct tensor *c = imp_in_req(im, 0);
	if (!c)
		return -1;
	if (imp_t_numel(c) != 1 || c->dtype != DT_BOOL)
		return imp_op_err(im, "the condition must be a bool tensor of one element, not %s", cf_t_desc(im, c));
	const Onnx__AttributeProto *at = imp_attr(n, "then_branch"), *ae = imp_attr(n, "else_branch");
	if (!at || !at->g || !ae || !ae->g)
		return imp_op_err(im, "attributes then_branch and else_branch (graphs) are required");
	if (at->g->n_output != ae->g->n_output)
		return imp_op_err(im, "then_branch has %zu outputs and else_branch %zu", at->g->n_output,
			      ae->g->n_output);
	size_t nout = at->g->n_output;
	if (n->n_output > nout)
		return imp_op_err(im, "%zu outputs, but the branches have %zu", n->n_output, nout);
	if (nout == 0)
		return imp_op_err(im, "the branches have no outputs");
	struct tensor **t_outs = arena_alloc(&im->scratch, (nout + 1) * sizeof *t_outs);
	struct tensor **e_outs = arena_alloc(&im->scratch, (nout + 1) * sizeof *e_outs);
	bool cv;
	if (cf_known_flag(im, c, &cv)) {
		const char *aname = cv ? "then_branch" : "else_branch";
		const Onnx__GraphProto *g = body_attr(im, n, aname);
		if (!g)
			return -1;
		int r = cf_run_body(im, aname, g, NULL, 0, -1, t_outs);
		if (r)
			return r < 0 ? -1 : cf_poison_all(im, n);
		for (unsigned i = 0; i < n->n_output; i++)
			imp_set_out_t(im, i, t_outs[i]);
		return 0;
	}
	const Onnx__GraphProto *gt = body_attr(im, n, "then_branch");
	const Onnx__GraphProto *ge = gt ? body_attr(im, n, "else_branch") : NULL;
	if (!ge)
		return -1;
	struct value cond = scalar_of(im, c, c->name);
	if (!cond.node)
		return -1;
	struct node *ifn = make_owner(im, NK_If, &cond, 1, (unsigned)nout);
	struct region_save sv;
	enter_region(im, node_region(ifn, 0), &sv);
	int r = cf_run_body(im, "then_branch", gt, NULL, 0, -1, t_outs);
	if (r == 0)
		r = yield_outs(im, NULL, 0, t_outs, nout, NULL);
	leave_region(im, &sv);
	if (r == 0) {
		enter_region(im, node_region(ifn, 1), &sv);
		r = cf_run_body(im, "else_branch", ge, NULL, 0, -1, e_outs);
		if (r == 0)
			r = yield_outs(im, NULL, 0, e_outs, nout, NULL);
		leave_region(im, &sv);
	}
	const struct type **types = arena_alloc(&im->scratch, (nout + 1) * sizeof *types);
	int *dtypes = arena_alloc(&im->scratch, (nout + 1) * sizeof *dtypes);
	for (unsigned i = 0; r == 0 && i < nout; i++) {
		types[i] = op_type(region_yield(node_region(ifn, 0)), i);
		dtypes[i] = t_outs[i]->dtype;
		if (types[i] != op_type(region_yield(node_region(ifn, 1)), i) || t_outs[i]->dtype != e_outs[i]->dtype)
			r = imp_op_err(im,
				       "output %u is %s in then_branch but %s in else_branch; with a condition known "
				       "only at run time both branches must agree",
				       i, cf_t_desc(im, t_outs[i]), cf_t_desc(im, e_outs[i]));
	}
	if (r) {
		node_erase(im->f, ifn);
		return r < 0 ? -1 : cf_poison_all(im, n);
	}
	bind_results(im, n, ifn, types, dtypes);
	return 0;
}

/* ---- Loop ---- */

/* The type t stacked over rows iterations: rows x t's shape. NULL after
 * reporting. */
static const struct type *stacked_type(struct importer *im, const struct type *t, uint64_t rows, unsigned k)
{
	if (t->rank + 1u > GLOW_MAX_RANK) {
		imp_op_err(im, "scan output %u would have rank %u (at most %d)", k, t->rank + 1u, GLOW_MAX_RANK);
		return NULL;
	}
	uint64_t dims[GLOW_MAX_RANK];
	dims[0] = rows;
	memcpy(dims + 1, t->dims, t->rank * sizeof dims[0]);
	if (elem_is_quantized((enum elem_kind)t->elem))
		return type_get_q(im->tc, (enum elem_kind)t->elem, dims, t->rank + 1u, t->scale, t->offset);
	return imp_ty(im, t->elem, dims, t->rank + 1u);
}

/* The declaration of value name in the graph that holds the current node
 * (the main graph, or the subgraph being translated): a graph output or a
 * value_info. NULL when it has none. */
static const Onnx__ValueInfoProto *declared(struct importer *im, const char *name)
{
	const Onnx__GraphProto *g = im->graph;
	if (im->inner) {
		const Onnx__AttributeProto *a = imp_attr(im->inner->owner, im->inner->attr);
		g = a ? a->g : NULL;
	}
	for (size_t i = 0; g && i < g->n_output; i++)
		if (g->output[i]->name && strcmp(g->output[i]->name, name) == 0)
			return g->output[i];
	for (size_t i = 0; g && i < g->n_value_info; i++)
		if (g->value_info[i]->name && strcmp(g->value_info[i]->name, name) == 0)
			return g->value_info[i];
	return NULL;
}

/* The leading dimension vi declares (a number, or a symbol bound by -dim);
 * -1 when it declares none. *sym receives an unbound symbol's name. */
static int64_t declared_rows(struct importer *im, const Onnx__ValueInfoProto *vi, const char **sym)
{
	const Onnx__TypeProto *tp = vi ? vi->type : NULL;
	const Onnx__TypeProto__Tensor *tt =
		tp && tp->value_case == ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE ? tp->tensor_type : NULL;
	if (!tt || !tt->shape || tt->shape->n_dim == 0)
		return -1;
	const Onnx__TensorShapeProto__Dimension *dm = tt->shape->dim[0];
	if (dm->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE)
		return dm->dim_value >= 0 ? dm->dim_value : -1;
	if (dm->value_case != ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM || !dm->dim_param || !*dm->dim_param)
		return -1;
	bool ok = true;
	int64_t v = imp_bound_dim(im, dm->dim_param, &ok);
	if (!ok)
		*sym = dm->dim_param;
	return ok && v >= 0 ? v : -1;
}

/* The static scan length of Loop n (N carried values, K > 0 scan outputs)
 * whose trip count is trips when known at import (-1: known only at run
 * time or absent; INT64_MAX: no bound): that trip count, or the leading
 * dimension the model declares for the scan outputs when the trip count is
 * not known or exceeds it (exporters write INT64_MAX for while loops);
 * *bound is set in that case: the length is the Loop's scan_length, an
 * upper bound on the iterations (more stop the run). -1 after reporting:
 * no length at all, or two declarations that differ. */
static int64_t scan_length(struct importer *im, const onnx_node *n, unsigned N, size_t K, int64_t trips, bool *bound)
{
	int64_t len = -1, other = -1;
	unsigned from = 0, k2 = 0;
	const char *sym = NULL;
	for (unsigned k = 0; k < K && N + k < n->n_output && other < 0; k++) {
		const char *name = imp_out_name(im, N + k);
		int64_t rows = *name ? declared_rows(im, declared(im, name), &sym) : -1;
		if (rows >= 0 && len >= 0 && rows != len) {
			other = rows;
			k2 = k;
		} else if (rows >= 0 && len < 0) {
			len = rows;
			from = k;
		}
	}
	*bound = false;
	if (trips >= 0 && trips != INT64_MAX && (other >= 0 || len < 0 || trips <= len))
		return trips;
	if (other >= 0)
		return imp_op_err(im, "scan outputs %u (\"%s\") and %u (\"%s\") are declared with %lld and %lld rows; "
			      "they stack the same iterations", from, imp_out_name(im, N + from), k2,
			      imp_out_name(im, N + k2), (long long)len, (long long)other);
	*bound = true;
	if (len >= 0)
		return len;
	struct tensor *M = imp_in_opt(im, 0);
	const char *first = N < n->n_output ? imp_out_name(im, N) : "";
	if (sym)
		return imp_op_err(im, "the loop's %zu scan output%s stack%s as many rows as it runs iterations, known only "
			      "at run time, and the declared length is the symbol '%s', which is not bound (use -dim %s=N)",
			      K, K == 1 ? "" : "s", K == 1 ? "s" : "", sym, sym);
	return imp_op_err(im, "the loop's %zu scan output%s (\"%s\") stack%s as many rows as it runs iterations, "
		      "known only at run time (%s%s%s), and the model declares no length for %s: declare the "
		      "output's shape (a graph output or value_info) or freeze the trip count (glow-import "
		      "-freeze-input)", K, K == 1 ? "" : "s", first, K == 1 ? "s" : "",
		      M ? "trip count \"" : "no trip count", M ? M->name : "",
		      !M ? "" : trips == INT64_MAX ? "\", the largest int64: no bound" : "\"", K == 1 ? "it" : "them");
}

/* Loop n as a Loop node whose body region is g (N carried values, K scan
 * outputs), *owner set to it; its inputs are checked. 0; -1 after
 * reporting; 1 when an output depends on a value that failed earlier. */
static int loop_region(struct importer *im, const onnx_node *n, const Onnx__GraphProto *g, unsigned N, size_t K,
		       struct node **owner)
{
	*owner = NULL;
	struct tensor *M = imp_in_opt(im, 0), *C = imp_in_opt(im, 1);
	int64_t trips = INT64_MAX;
	const int64_t *mv = M && M->known ? imp_t_ints(im, M) : NULL;
	if (mv)
		trips = mv[0] < 0 ? 0 : mv[0];
	/* scan outputs stack to the known trip count, else to the declared
	 * length (the Loop's scan_length: a bound checked at run time) */
	bool bound = false;
	int64_t rows = K ? scan_length(im, n, N, K, mv ? trips : -1, &bound) : 0;
	if (rows < 0)
		return -1;
	int64_t one = 1;
	struct tensor *tm = M ? M : imp_t_from_ints(im, "trips", DT_INT64, 0, NULL, &trips);
	struct tensor *tc = C ? C : imp_t_from_ints(im, "cond", DT_BOOL, 0, NULL, &one);
	struct value *ops = arena_alloc(&im->scratch, (2 + N) * sizeof *ops);
	ops[0] = scalar_of(im, tm, tm->name);
	ops[1] = scalar_of(im, tc, tc->name);
	for (unsigned i = 0; i < N; i++)
		ops[2 + i] = imp_tval(im, imp_in_opt(im, 2 + i));
	for (unsigned i = 0; i < 2 + N; i++)
		if (!ops[i].node)
			return -1;
	struct node *loop = make_owner(im, NK_Loop, ops, 2 + N, (unsigned)(N + K));
	if (bound)
		node_set_int(im->m, loop, AN_scan_length, rows);
	struct region_save sv;
	enter_region(im, node_region(loop, 0), &sv);
	struct tensor **ins = arena_alloc(&im->scratch, (2 + N) * sizeof *ins);
	struct tensor *it0 = imp_t_from_ints(im, "iter", DT_INT64, 0, NULL, &one);
	int r = 0;
	ins[0] = param_of(im, it0, DT_INT64, in_name(g, 0, "iter"));
	ins[1] = param_of(im, imp_t_from_ints(im, "cond", DT_BOOL, 0, NULL, &one), DT_BOOL, in_name(g, 1, "cond"));
	for (unsigned i = 0; i < N; i++) {
		struct tensor *init = imp_in_opt(im, 2 + i);
		ins[2 + i] = param_of(im, init, init->dtype, in_name(g, 2 + i, init->name));
	}
	for (unsigned i = 0; i < 2 + N; i++)
		if (!ins[i])
			r = -1;
	struct tensor **outs = arena_alloc(&im->scratch, (g->n_output + 1) * sizeof *outs);
	if (r == 0)
		r = cf_run_body(im, "body", g, ins, 2 + N, -1, outs);
	/* the condition yields bool<> and each carried value its init's type */
	const struct type **want = arena_alloc(&im->scratch, (g->n_output + 1) * sizeof *want);
	for (size_t i = 0; i < g->n_output; i++)
		want[i] = i == 0 ? val_type(ops[1]) : i <= N ? val_type(ops[1 + i]) : NULL;
	if (r == 0)
		r = yield_outs(im, NULL, 0, outs, g->n_output, want);
	leave_region(im, &sv);
	struct node *y = r == 0 ? region_yield(node_region(loop, 0)) : NULL;
	const struct type **types = arena_alloc(&im->scratch, (N + K + 1) * sizeof *types);
	int *dtypes = arena_alloc(&im->scratch, (N + K + 1) * sizeof *dtypes);
	for (unsigned i = 0; y && r == 0 && i < 1 + N; i++)
		if (op_type(y, i) != want[i])
			r = imp_op_err(im, "the body's output %u is %s, but the %s is %s: %s", i, cf_t_desc(im, outs[i]),
				       i ? "loop-carried value" : "condition", cf_t_desc(im, i ? imp_in_opt(im, 1 + i) : tc),
				       "static shapes need one type in every iteration");
	for (unsigned i = 0; r == 0 && i < N + K; i++) {
		dtypes[i] = outs[1 + i]->dtype;
		types[i] = i < N ? want[1 + i] : stacked_type(im, op_type(y, 1 + i), (uint64_t)rows, i - N);
		if (!types[i])
			r = -1;
	}
	if (r) {
		node_erase(im->f, loop);
		return r < 0 ? -1 : cf_poison_all(im, n);
	}
	bind_results(im, n, loop, types, dtypes);
	*owner = loop;
	return 0;
}

int imp_op_loop(struct importer *im, const onnx_node *n)
{
	const Onnx__GraphProto *g = body_attr(im, n, "body");
	if (!g)
		return -1;
	unsigned nin = imp_n_in(n), N = nin > 2 ? nin - 2 : 0;
	for (unsigned i = 2; i < nin; i++)
		if (!imp_in_req(im, i))
			return -1;
	if (g->n_input != 2 + (size_t)N)
		return imp_op_err(im, "the body has %zu inputs, expected %u: the iteration number, the condition, "
			      "then the loop-carried values", g->n_input, 2 + N);
	if (g->n_output < 1 + (size_t)N)
		return imp_op_err(im, "the body has %zu outputs, expected at least %u: the condition, then the "
			      "loop-carried values", g->n_output, 1 + N);
	size_t K = g->n_output - 1 - N;
	if (n->n_output > N + K)
		return imp_op_err(im, "%zu outputs, but the body gives %u loop-carried values and %zu scan outputs",
			      n->n_output, N, K);
	struct tensor *M = imp_in_opt(im, 0), *C = imp_in_opt(im, 1);
	if (!M && !C)
		return imp_op_err(im, "neither a trip count nor a condition: the loop does not end");
	if (M && (imp_t_numel(M) != 1 || M->dtype != DT_INT64))
		return imp_op_err(im, "the trip count (input 0) must be an int64 tensor of one element, not %s",
			      cf_t_desc(im, M));
	if (C && (imp_t_numel(C) != 1 || C->dtype != DT_BOOL))
		return imp_op_err(im, "the condition (input 1) must be a bool tensor of one element, not %s",
			      cf_t_desc(im, C));
	bool go;
	struct node *loop;
	if ((M && !M->known) || (C && !cf_known_flag(im, C, &go)))
		return loop_region(im, n, g, N, K, &loop);
	/* Trip count and condition known at import: a region as well (the
	 * backends run the conditions the body computes; loop-unroll copies
	 * what it can), unless the body needs at import a value that depends
	 * on the iteration (a shape or a translator's parameter computed from
	 * the iteration number): then the body unrolled here, where each
	 * iteration's values are known */
	struct cf_speculation sp;
	cf_spec_begin(im, &sp);
	int r = loop_region(im, n, g, N, K, &loop);
	cf_spec_end(im, &sp, r >= 0);
	return r < 0 ? cf_loop_unrolled(im, n, g, N, K) : r;
}

/* ---- Scan ---- */

struct scan {
	const Onnx__GraphProto *g;
	unsigned N, M;       /* state variables, scan inputs */
	size_t K;            /* scan outputs */
	const unsigned *in_axis;
	const bool *in_rev, *out_rev;
	const int64_t *out_axis; /* NULL: 0 */
	uint64_t L;          /* sequence length */
	long iter0;          /* label of the first step (opset 8: batch * L) */
};

/* One scan over states[0..N) and xs[0..M) as a Loop of L iterations:
 * final states into states, stacked scan outputs into ys[0..K) (names[k]
 * NULL: not needed). 0, -1 after reporting, 1 on an earlier failure. */
static int scan_run(struct importer *im, const struct scan *s, struct tensor **states, struct tensor **xs,
		    struct tensor **ys, const char *const *names)
{
	const Onnx__GraphProto *g = s->g;
	int64_t L = (int64_t)s->L, one = 1, last = L - 1;
	struct value *ops = arena_alloc(&im->scratch, (2 + s->N) * sizeof *ops);
	ops[0] = imp_tval(im, imp_t_from_ints(im, "len", DT_INT64, 0, NULL, &L));
	ops[1] = imp_tval(im, imp_t_from_ints(im, "cond", DT_BOOL, 0, NULL, &one));
	for (unsigned i = 0; i < s->N; i++)
		ops[2 + i] = imp_tval(im, states[i]);
	for (unsigned i = 0; i < 2 + s->N; i++)
		if (!ops[i].node)
			return -1;
	struct node *loop = make_owner(im, NK_Loop, ops, 2 + s->N, (unsigned)(s->N + s->K));
	struct region_save sv;
	enter_region(im, node_region(loop, 0), &sv);
	struct tensor **ins = arena_alloc(&im->scratch, (s->N + s->M + 1) * sizeof *ins);
	struct tensor *iter = param_of(im, imp_t_from_ints(im, "iter", DT_INT64, 0, NULL, &one), DT_INT64, "iter");
	struct tensor *cond = param_of(im, imp_t_from_ints(im, "cond", DT_BOOL, 0, NULL, &one), DT_BOOL, "cond");
	int r = iter && cond ? 0 : -1;
	for (unsigned i = 0; r == 0 && i < s->N; i++)
		if (!(ins[i] = param_of(im, states[i], states[i]->dtype, in_name(g, i, states[i]->name))))
			r = -1;
	/* step t reads x[..., t, ...] (x[..., L-1-t, ...] reversed) with Gather */
	struct value rev_ix = {NULL, 0};
	for (unsigned j = 0; r == 0 && j < s->M; j++) {
		struct tensor *x = xs[j];
		struct value ix = imp_tval(im, iter);
		if (s->in_rev[j] && !rev_ix.node) {
			struct value sub[2] = {imp_tval(im, imp_t_from_ints(im, "last", DT_INT64, 0, NULL, &last)), ix};
			rev_ix = imp_b_node(im, NK_Sub, "rev", sub, 2, val_type(ix));
		}
		if (s->in_rev[j])
			ix = rev_ix;
		uint64_t dims[GLOW_MAX_RANK];
		unsigned rank = 0;
		for (unsigned k = 0; k < x->rank; k++)
			if (k != s->in_axis[j])
				dims[rank++] = x->dims[k];
		const char *bname = in_name(g, s->N + j, x->name);
		struct value gv[2] = {imp_tval(im, x), ix};
		struct value v = imp_b_node(im, NK_Gather, bname, gv, 2, imp_ty(im, imp_dt_elem(x->dtype), dims, rank));
		if (v.node)
			node_set_int(im->m, v.node, AN_axis, s->in_axis[j]);
		if (!(ins[s->N + j] = cf_t_of_value(im, bname, x->dtype, v)))
			r = -1;
	}
	struct tensor **outs = arena_alloc(&im->scratch, (g->n_output + 1) * sizeof *outs);
	const struct type **want = arena_alloc(&im->scratch, (g->n_output + 1) * sizeof *want);
	for (size_t i = 0; i < g->n_output; i++)
		want[i] = i < s->N ? val_type(ops[2 + i]) : NULL;
	if (r == 0)
		r = cf_run_body(im, "body", g, ins, s->N + s->M, s->iter0, outs);
	if (r == 0) {
		struct value cv = imp_tval(im, cond);
		r = yield_outs(im, &cv, 1, outs, g->n_output, want);
	}
	leave_region(im, &sv);
	struct node *y = r == 0 ? region_yield(node_region(loop, 0)) : NULL;
	const struct type **types = arena_alloc(&im->scratch, (s->N + s->K + 1) * sizeof *types);
	int *dtypes = arena_alloc(&im->scratch, (s->N + s->K + 1) * sizeof *dtypes);
	for (unsigned i = 0; r == 0 && i < s->N + s->K; i++) {
		dtypes[i] = outs[i]->dtype;
		if (i < s->N && op_type(y, 1 + i) != want[i])
			r = imp_op_err(im, "the body's output %u is %s, but state variable %u is %s: static shapes need "
				       "one type in every step", i, cf_t_desc(im, outs[i]), i, cf_t_desc(im, states[i]));
		types[i] = i < s->N ? want[i] : stacked_type(im, op_type(y, 1 + i), s->L, i - s->N);
		if (!types[i])
			r = -1;
	}
	if (r) {
		node_erase(im->f, loop);
		return r;
	}
	for (unsigned r2 = 0; r2 < loop->nres; r2++)
		loop->types[r2] = types[r2];
	for (unsigned i = 0; i < s->N; i++)
		states[i] = cf_t_of_value(im, states[i]->name, dtypes[i], node_val(loop, i));
	for (unsigned k = 0; k < s->K && r == 0; k++) {
		if (!names[k])
			continue;
		const struct type *t = types[s->N + k];
		struct value v = node_val(loop, s->N + k);
		if (s->out_rev[k]) {
			v = imp_b_node(im, NK_Flip, imp_dname(im, names[k], "rev"), &v, 1, t);
			if (v.node)
				node_set_int(im->m, v.node, AN_axis, 0);
		}
		unsigned axis = 0;
		if (s->out_axis && imp_norm_axis(im, s->out_axis[k], t->rank, &axis)) {
			r = -1;
			break;
		}
		if (axis) {
			/* the step axis 0 moves to position axis */
			int64_t shuffle[GLOW_MAX_RANK];
			uint64_t dims[GLOW_MAX_RANK];
			for (unsigned d = 0, src = 1; d < t->rank; d++)
				shuffle[d] = d == axis ? 0 : (int64_t)src++;
			for (unsigned d = 0; d < t->rank; d++)
				dims[d] = t->dims[shuffle[d]];
			v = imp_b_node(im, NK_Transpose, imp_dname(im, names[k], "axis"), &v, 1,
				       imp_ty(im, t->elem, dims, t->rank));
			if (v.node)
				node_set_ints(im->m, v.node, AN_shuffle, shuffle, t->rank);
		}
		if (!(ys[k] = cf_t_of_value(im, names[k], dtypes[s->N + k], v)))
			r = -1;
	}
	return r;
}

/* Attribute `name`: NULL if absent, else exactly count ints. */
static int scan_ints(struct importer *im, const onnx_node *n, const char *name, size_t count, const int64_t **v)
{
	long len = imp_attr_ints(n, name, v);
	if (len < 0) {
		*v = NULL;
		return 0;
	}
	if ((size_t)len != count)
		return imp_op_err(im, "attribute %s has %ld entries, expected %zu", name, len, count);
	return 0;
}

static int scan_dirs(struct importer *im, const int64_t *v, size_t count, const char *name, bool *out)
{
	for (size_t i = 0; i < count; i++) {
		if (v && v[i] != 0 && v[i] != 1)
			return imp_op_err(im, "%s[%zu] is %lld (0 forward or 1 reverse)", name, i, (long long)v[i]);
		out[i] = v && v[i] == 1;
	}
	return 0;
}

int imp_op_scan(struct importer *im, const onnx_node *n)
{
	bool batched = im->opset < 9;
	const Onnx__GraphProto *g = body_attr(im, n, "body");
	if (!g)
		return -1;
	int64_t M = imp_attr_i(n, "num_scan_inputs", -1);
	unsigned first = batched ? 1 : 0, nin = imp_n_in(n);
	if (nin < first)
		nin = first;
	if (M < 1 || M > (int64_t)(nin - first))
		return imp_op_err(im, "num_scan_inputs must be between 1 and the %u inputs", nin - first);
	struct scan s;
	memset(&s, 0, sizeof s);
	s.g = g;
	s.M = (unsigned)M;
	s.N = nin - first - s.M;
	if (g->n_input != (size_t)s.N + s.M)
		return imp_op_err(im, "the body has %zu inputs, expected %u: the state variables, then the scan inputs",
			      g->n_input, s.N + s.M);
	if (g->n_output < s.N)
		return imp_op_err(im, "the body has %zu outputs, expected at least the %u state variables", g->n_output,
			      s.N);
	s.K = g->n_output - s.N;
	if (n->n_output > s.N + s.K)
		return imp_op_err(im, "%zu outputs, but the body gives %u state variables and %zu scan outputs",
			      n->n_output, s.N, s.K);
	struct tensor **states = arena_alloc(&im->scratch, (s.N + 1) * sizeof *states);
	struct tensor **xs = arena_alloc(&im->scratch, (s.M + 1) * sizeof *xs);
	for (unsigned i = 0; i < s.N + s.M; i++) {
		struct tensor *t = imp_in_req(im, first + i);
		if (!t)
			return -1;
		if (i < s.N)
			states[i] = t;
		else
			xs[i - s.N] = t;
	}
	unsigned *in_axis = arena_alloc(&im->scratch, (s.M + 1) * sizeof *in_axis);
	bool *in_rev = arena_alloc(&im->scratch, s.M + 1), *out_rev = arena_alloc(&im->scratch, s.K + 1);
	const int64_t *v;
	if (batched) {
		if (scan_ints(im, n, "directions", s.M, &v) || scan_dirs(im, v, s.M, "directions", in_rev))
			return -1;
		scan_dirs(im, NULL, s.K, "", out_rev);
	} else {
		if (scan_ints(im, n, "scan_input_directions", s.M, &v) ||
		    scan_dirs(im, v, s.M, "scan_input_directions", in_rev))
			return -1;
		if (scan_ints(im, n, "scan_output_directions", s.K, &v) ||
		    scan_dirs(im, v, s.K, "scan_output_directions", out_rev))
			return -1;
		if (scan_ints(im, n, "scan_output_axes", s.K, &s.out_axis))
			return -1;
	}
	const int64_t *axes = NULL;
	if (!batched && scan_ints(im, n, "scan_input_axes", s.M, &axes))
		return -1;
	/* opset 8: axis 0 is the batch, the sequence axis 1 (0 once sliced) */
	uint64_t B = 1;
	for (unsigned j = 0; j < s.M; j++) {
		struct tensor *x = xs[j];
		unsigned need = batched ? 2 : 1;
		if (x->rank < need)
			return imp_op_err(im, "scan input %u has rank %u (at least %u)", j, x->rank, need);
		if (batched)
			in_axis[j] = 0;
		else if (imp_norm_axis(im, axes ? axes[j] : 0, x->rank, &in_axis[j]))
			return -1;
		uint64_t len = x->dims[batched ? 1 : in_axis[j]];
		if (j == 0)
			s.L = len;
		else if (len != s.L)
			return imp_op_err(im, "scan input %u has sequence length %llu, scan input 0 %llu", j,
				      (unsigned long long)len, (unsigned long long)s.L);
		if (batched && j == 0)
			B = x->dims[0];
		else if (batched && x->dims[0] != B)
			return imp_op_err(im, "scan input %u has batch size %llu, scan input 0 %llu", j,
				      (unsigned long long)x->dims[0], (unsigned long long)B);
	}
	for (unsigned i = 0; batched && i < s.N; i++)
		if (states[i]->rank < 1 || states[i]->dims[0] != B)
			return imp_op_err(im, "state variable %u is %s, without the batch size %llu as dimension 0", i,
				      cf_t_desc(im, states[i]), (unsigned long long)B);
	if (batched && B == 0)
		return imp_op_err(im, "the batch size is 0");
	if (B > CF_MAX_BATCH)
		return imp_op_err(im, "batch size %llu exceeds the limit of %d entries unrolled at import",
			      (unsigned long long)B, CF_MAX_BATCH);
	if (batched && imp_in_opt(im, 0)) {
		uint64_t cnt;
		const int64_t *lens = imp_in_ints(im, 0, &cnt);
		if (!lens)
			return -1;
		for (uint64_t b = 0; b < cnt; b++)
			if (lens[b] != (int64_t)s.L)
				return imp_op_err(im, "sequence_lens[%llu] = %lld: only sequences of the full length (%llu) "
					      "are supported", (unsigned long long)b, (long long)lens[b],
					      (unsigned long long)s.L);
	}
	s.in_axis = in_axis;
	s.in_rev = in_rev;
	s.out_rev = out_rev;
	const char **names = arena_alloc(&im->scratch, (s.K + 1) * sizeof *names);
	for (unsigned k = 0; k < s.K; k++)
		names[k] = s.N + k < n->n_output && *imp_out_name(im, s.N + k) && imp_out_used(im, s.N + k)
				   ? imp_out_name(im, s.N + k) : NULL;
	struct tensor **ys = arena_alloc(&im->scratch, (s.K + 1) * sizeof *ys);
	if (!batched) {
		int r = scan_run(im, &s, states, xs, ys, names);
		if (r)
			return r < 0 ? -1 : cf_poison_all(im, n);
		for (unsigned i = 0; i < s.N && i < n->n_output; i++)
			imp_set_out_t(im, i, states[i]);
		for (unsigned k = 0; k < s.K; k++)
			if (names[k])
				imp_set_out_t(im, s.N + k, ys[k]);
		return 0;
	}
	/* opset 8: one scan per batch entry, results stacked along axis 0 */
	step_list per_batch = {0};
	const char **bnames = arena_alloc(&im->scratch, (s.K + 1) * sizeof *bnames);
	for (unsigned k = 0; k < s.K; k++)
		bnames[k] = names[k] ? imp_dname(im, names[k], "batch") : NULL;
	struct tensor **bstates = arena_alloc(&im->scratch, (s.N + 1) * sizeof *bstates);
	struct tensor **bxs = arena_alloc(&im->scratch, (s.M + 1) * sizeof *bxs);
	int r = 0;
	for (uint64_t b = 0; b < B && r == 0; b++) {
		for (unsigned i = 0; i < s.N && r == 0; i++)
			if (!(bstates[i] = cf_take(im, states[i], 0, b, imp_dname(im, states[i]->name, "batch"))))
				r = -1;
		for (unsigned j = 0; j < s.M && r == 0; j++)
			if (!(bxs[j] = cf_take(im, xs[j], 0, b, imp_dname(im, xs[j]->name, "batch"))))
				r = -1;
		if (r)
			break;
		s.iter0 = (long)(b * s.L);
		struct tensor **res = arena_alloc(&im->scratch, (s.N + s.K + 1) * sizeof *res);
		r = scan_run(im, &s, bstates, bxs, res + s.N, bnames);
		if (r)
			break;
		for (unsigned i = 0; i < s.N; i++)
			res[i] = bstates[i];
		vec_push(&per_batch, res);
	}
	for (unsigned i = 0; i < s.N + s.K && r == 0; i++) {
		if (i >= n->n_output || (i >= s.N && !names[i - s.N]) || !*imp_out_name(im, i))
			continue;
		struct tensor *st = cf_stack_steps(im, &per_batch, 0, i, 0, false, imp_out_name(im, i));
		if (!st)
			r = -1;
		else
			imp_set_out_t(im, i, st);
	}
	vec_free(&per_batch);
	if (r > 0)
		return cf_poison_all(im, n);
	return r;
}
