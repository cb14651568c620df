/* ops_control_unroll.c - ONNX control flow unrolled at import, what
 * remains of it beside the regions of ops_control.c: a Loop whose body
 * needs at import a value that depends on the iteration (a shape or a
 * translator's parameter computed from the iteration number, so that the
 * iterations' shapes may differ) when its trip count and condition are
 * known there, and opset 8 Scan's batch entries; and the speculation that
 * lets the importer try a region first (docs/Conformance.md, "Scope").
 *
 * Known values stay known: a loop over constants folds at import. Slicing
 * and stacking use the folder's imp_k_* on known tensors, Slice/Reshape/
 * Concat nodes otherwise. Unrolling is bounded: at most CF_MAX_ITERS
 * iterations per Loop.
 */
#define _POSIX_C_SOURCE 200809L /* open_memstream */
#include "import/onnx/control.h"

#include <stdlib.h>
#include <string.h>

#define CF_MAX_ITERS 4096

/* x[..., pos, ...] along axis, the axis removed. NULL after reporting. */
struct tensor *cf_take(struct importer *im, struct tensor *x, unsigned axis, uint64_t pos, const char *name)
{
	uint64_t odims[GLOW_MAX_RANK], rdims[GLOW_MAX_RANK];
	int64_t start[GLOW_MAX_RANK], step[GLOW_MAX_RANK];
	unsigned r = 0;
	for (unsigned k = 0; k < x->rank; k++) {
		odims[k] = k == axis ? 1 : x->dims[k];
		start[k] = k == axis ? (int64_t)pos : 0;
		step[k] = 1;
		if (k != axis)
			rdims[r++] = x->dims[k];
	}
	if (x->known) {
		struct tensor *k = imp_k_slice(im, x, start, step, odims, name);
		if (k)
			return imp_t_view(im, k, name, r, rdims);
	}
	struct value v = imp_tval(im, x);
	if (!v.node)
		return NULL;
	const struct type *st = type_with_dims(im->tc, val_type(v), odims, x->rank);
	struct value s = imp_b_node(im, NK_Slice, imp_dname(im, name, "slice"), &v, 1, st);
	if (s.node)
		node_set_ints(im->m, s.node, AN_start, start, x->rank);
	return cf_t_of_value(im, name, x->dtype, imp_b_reshape(im, s, rdims, r, name));
}

/* ts[0..n) (n >= 1, of one type and shape) stacked along a new axis `axis`
 * (0..rank). NULL after reporting. */
static struct tensor *stack(struct importer *im, struct tensor **ts, unsigned n, unsigned axis, const char *name)
{
	const struct tensor *t0 = ts[0];
	unsigned r = t0->rank + 1;
	if (r > GLOW_MAX_RANK) {
		imp_op_err(im, "stacked output \"%s\" would have rank %u (at most %d)", name, r, GLOW_MAX_RANK);
		return NULL;
	}
	uint64_t one[GLOW_MAX_RANK], all[GLOW_MAX_RANK];
	for (unsigned k = 0, j = 0; k < r; k++) {
		one[k] = k == axis ? 1 : t0->dims[j];
		all[k] = k == axis ? n : t0->dims[j];
		j += k != axis;
	}
	bool known = true;
	for (unsigned i = 0; i < n; i++)
		known &= ts[i]->known;
	if (known) {
		struct tensor **views = arena_alloc(&im->scratch, n * sizeof *views);
		for (unsigned i = 0; i < n; i++)
			views[i] = imp_t_view(im, ts[i], ts[i]->name, r, one);
		struct tensor *k = imp_k_concat(im, views, n, axis, name);
		if (k)
			return k;
	}
	struct value *vs = arena_alloc(&im->scratch, n * sizeof *vs);
	for (unsigned i = 0; i < n; i++) {
		vs[i] = imp_b_reshape(im, imp_tval(im, ts[i]), one, r, imp_dname(im, name, "row"));
		if (!vs[i].node)
			return NULL;
	}
	if (n == 1)
		return cf_t_of_value(im, name, t0->dtype, vs[0]);
	const struct type *t = imp_ty(im, imp_dt_elem(t0->dtype), all, r);
	struct value c = imp_b_node(im, NK_Concat, name, vs, n, t);
	if (c.node)
		node_set_int(im->m, c.node, AN_dim, axis);
	return cf_t_of_value(im, name, t0->dtype, c);
}


/* Output `name` stacking scan output k of every step (steps[i][base + k]),
 * step order reversed when rev; all steps must agree in type and shape. */
struct tensor *cf_stack_steps(struct importer *im, step_list *steps, size_t base, unsigned k, unsigned axis,
				  bool rev, const char *name)
{
	unsigned n = (unsigned)steps->len;
	struct tensor **ts = arena_alloc(&im->scratch, n * sizeof *ts);
	for (unsigned i = 0; i < n; i++) {
		ts[i] = steps->data[rev ? n - 1 - i : i][base + k];
		if (!cf_same_shape(ts[i], steps->data[0][base + k])) {
			imp_op_err(im, "scan output %u is %s in iteration %u but %s in iteration 0", k,
			       cf_t_desc(im, steps->data[rev ? n - 1 - i : i][base + k]), rev ? n - 1 - i : i,
			       cf_t_desc(im, steps->data[0][base + k]));
			return NULL;
		}
	}
	return stack(im, ts, n, axis, name);
}

/* Scan output k of a Loop that runs no iteration (declared by the body's
 * output vi): no step gives it a shape, so it is an empty tensor whose
 * per-iteration shape is the one vi declares, each unknown dimension taken
 * as 0, or [0] when vi declares no shape (onnxruntime's rule, so results
 * compare). The element type must be declared. */
static struct tensor *empty_scan(struct importer *im, const Onnx__ValueInfoProto *vi, unsigned k, const char *name)
{
	const Onnx__TypeProto *tp = vi->type;
	const Onnx__TypeProto__Tensor *tt =
		tp && tp->value_case == ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE ? tp->tensor_type : NULL;
	if (!tt || !tt->has_elem_type || tt->elem_type == DT_UNDEF) {
		imp_op_err(im, "the loop runs no iteration and the body does not declare the element type of scan "
		       "output %u (\"%s\")", k, name);
		return NULL;
	}
	if (imp_dt_elem(tt->elem_type) < 0) {
		imp_op_err(im, "scan output %u (\"%s\") has element type %s, which the graph IR does not support", k, name,
		       imp_dt_name(tt->elem_type));
		return NULL;
	}
	uint64_t dims[GLOW_MAX_RANK] = {0};
	unsigned rank = 1;
	if (tt->shape) {
		if (tt->shape->n_dim + 1 > GLOW_MAX_RANK) {
			imp_op_err(im, "scan output %u (\"%s\") has rank %zu (at most %d)", k, name,
			       tt->shape->n_dim + 1, GLOW_MAX_RANK);
			return NULL;
		}
		for (size_t i = 0; i < tt->shape->n_dim; i++) {
			const Onnx__TensorShapeProto__Dimension *dm = tt->shape->dim[i];
			bool has = dm->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE &&
				   dm->dim_value >= 0;
			dims[rank++] = has ? (uint64_t)dm->dim_value : 0;
		}
	}
	return imp_k_splat(im, name, tt->elem_type, rank, dims, 0, 0);
}

/* Loop n unrolled at import: the fallback for a body that needs values
 * known at import which depend on the iteration (ConstantOfShape of a
 * shape computed from the iteration number), where the trip count and the
 * condition are known at import too. The iteration number is a constant, loop-carried values
 * thread from one iteration's body to the next, scan outputs are stacked
 * along a new axis 0 (of length 0 when the loop runs no iteration:
 * empty_scan). */
int cf_loop_unrolled(struct importer *im, const onnx_node *n, const Onnx__GraphProto *g, unsigned N, size_t K)
{
	struct tensor *M = imp_in_opt(im, 0), *C = imp_in_opt(im, 1);
	int64_t trips = -1;
	if (M) {
		const int64_t *mv = imp_t_ints(im, M);
		if (!M->known || !mv || imp_t_numel(M) != 1 || !imp_dt_is_int(M->dtype))
			return imp_op_err(im, "the trip count (input 0, \"%s\") must be an integer known at import", M->name);
		trips = mv[0] < 0 ? 0 : mv[0];
	}
	bool go = true;
	if (C) {
		if (imp_t_numel(C) != 1 || C->dtype != DT_BOOL)
			return imp_op_err(im, "the condition (input 1) must be a bool tensor of one element, not %s",
				      cf_t_desc(im, C));
		if (!cf_known_flag(im, C, &go))
			return imp_op_err(im, "Loop condition depends on run-time values (input 1, \"%s\")", C->name);
	}
	if (!M && !C)
		return imp_op_err(im, "neither a trip count nor a condition: the loop does not end");
	if (!C && trips > CF_MAX_ITERS)
		return imp_op_err(im, "trip count %lld exceeds the unrolling limit of %d iterations", (long long)trips,
			      CF_MAX_ITERS);

	struct tensor **ins = arena_alloc(&im->scratch, (2 + N) * sizeof *ins);
	for (unsigned i = 0; i < N; i++)
		ins[2 + i] = imp_in_opt(im, 2 + i);
	ins[1] = C ? C : imp_k_splat(im, "cond", DT_BOOL, 0, NULL, 1, 1);
	step_list steps = {0};
	int r = 0;
	for (int64_t it = 0; go && (trips < 0 || it < trips); it++) {
		if (it >= CF_MAX_ITERS) {
			r = imp_op_err(im, "the loop condition still holds after %d iterations, the unrolling limit",
				   CF_MAX_ITERS);
			break;
		}
		const char *iname = g->input[0]->name && *g->input[0]->name ? g->input[0]->name : "iter";
		ins[0] = imp_t_from_ints(im, iname, DT_INT64, 0, NULL, &it);
		struct tensor **outs = arena_alloc(&im->scratch, g->n_output * sizeof *outs);
		r = cf_run_body(im, "body", g, ins, 2 + N, (long)it, outs);
		if (r)
			break;
		vec_push(&steps, outs);
		ins[1] = outs[0];
		for (unsigned i = 0; i < N; i++)
			ins[2 + i] = outs[1 + i];
		if (C && (trips < 0 || it + 1 < trips)) {
			struct tensor *co = outs[0];
			if (imp_t_numel(co) != 1 || co->dtype != DT_BOOL) {
				r = imp_op_err(im, "the body's condition (output 0) must be a bool tensor of one element, "
					   "not %s", cf_t_desc(im, co));
				break;
			}
			if (!cf_known_flag(im, co, &go)) {
				r = imp_op_err(im, "Loop condition depends on run-time values (output 0 of the body, \"%s\", "
					   "in iteration %lld)", co->name, (long long)it);
				break;
			}
		}
	}
	if (r == 0) {
		for (unsigned i = 0; i < N && i < n->n_output; i++)
			imp_set_out_t(im, i, ins[2 + i]);
		for (unsigned k = 0; k < K && N + k < n->n_output; k++) {
			const char *name = imp_out_name(im, N + k);
			if (!*name || !imp_out_used(im, N + k))
				continue;
			struct tensor *s = steps.len ? cf_stack_steps(im, &steps, 1 + N, k, 0, false, name)
						     : empty_scan(im, g->output[1 + N + k], k, name);
			if (!s) {
				r = -1;
				break;
			}
			imp_set_out_t(im, N + k, s);
		}
	}
	vec_free(&steps);
	if (r > 0)
		return cf_poison_all(im, n);
	return r;
}



/* Reports go to a memory stream while the importer tries something it may
 * take back (spec_begin); spec_end keeps them (the try stands) or drops
 * them with the errors they counted. */

void cf_spec_begin(struct importer *im, struct cf_speculation *sp)
{
	sp->out = im->d->out;
	sp->buf = NULL;
	sp->len = 0;
	sp->mem = open_memstream(&sp->buf, &sp->len);
	if (sp->mem)
		im->d->out = sp->mem;
	sp->nerrors = im->d->nerrors;
	sp->nwarnings = im->d->nwarnings;
	sp->stopped = im->d->stopped;
	sp->errors = im->errors;
	sp->unrolled = im->unrolled;
}

void cf_spec_end(struct importer *im, struct cf_speculation *sp, bool keep)
{
	if (sp->mem) {
		fclose(sp->mem);
		im->d->out = sp->out;
		if (keep && sp->len)
			fwrite(sp->buf, 1, sp->len, sp->out);
		free(sp->buf);
	}
	if (keep)
		return;
	im->d->nerrors = sp->nerrors;
	im->d->nwarnings = sp->nwarnings;
	im->d->stopped = sp->stopped;
	im->errors = sp->errors;
	im->unrolled = sp->unrolled;
}

