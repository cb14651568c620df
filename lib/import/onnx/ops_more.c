/* ops_more.c - translators of indexing operators (GatherElements,
 * ScatterElements, ScatterND, Scatter), the math kinds without an older
 * composition (Asin, Acos, Atan, the hyperbolic functions, Tan, IsInf,
 * BitShift), and operators composed from existing kinds: the losses
 * NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss, Trilu, Hardmax,
 * OneHot and MeanVarianceNormalization.
 *
 * Compositions are exact rewrites of the ONNX definitions; where an ONNX
 * operator has a value-dependent part (Trilu's k, OneHot's depth), that
 * input must be known at import (an initializer, a folded value, or a graph
 * input bound with glow-import -freeze-input). Helper nodes get names
 * derived from the output ("<out>.mask", "<out>.gather", ...).
 */
#include "import/onnx/internal.h"

#include <stdio.h>
#include <string.h>

/* c ? a : b */
static struct value sel(struct importer *im, struct value c, struct value a, struct value b, const char *name)
{
	struct value ops[3] = {c, a, b};
	return imp_b_node(im, NK_Select, name, ops, 3, a.node ? val_type(a) : NULL);
}

/* A reduction over every dimension (internal.h). */
struct value imp_reduce_all(struct importer *im, unsigned kind, struct value x, const char *name)
{
	if (!x.node)
		return x;
	const struct type *t = val_type(x);
	if (t->rank == 0)
		return x;
	int64_t axes[GLOW_MAX_RANK];
	for (unsigned i = 0; i < t->rank; i++)
		axes[i] = i;
	uint64_t none[1] = {0};
	struct value r = imp_b_node(im, kind, name, &x, 1, imp_ty(im, t->elem, none, 0));
	if (r.node)
		node_set_ints(im->m, r.node, AN_axes, axes, t->rank);
	return r;
}

/* A reduction of x over axes that keeps them as dimensions of 1. */
static struct value reduce_keep(struct importer *im, unsigned kind, struct value x, const int64_t *axes,
				unsigned naxes, const char *name)
{
	if (!x.node)
		return x;
	const struct type *t = val_type(x);
	uint64_t rd[GLOW_MAX_RANK], kd[GLOW_MAX_RANK];
	unsigned rr = 0;
	for (unsigned i = 0; i < t->rank; i++) {
		bool drop = false;
		for (unsigned j = 0; j < naxes; j++)
			drop |= axes[j] == (int64_t)i;
		kd[i] = drop ? 1 : t->dims[i];
		if (!drop)
			rd[rr++] = t->dims[i];
	}
	struct value r = imp_b_node(im, kind, imp_dname(im, name, "reduce"), &x, 1, imp_ty(im, t->elem, rd, rr));
	if (r.node)
		node_set_ints(im->m, r.node, AN_axes, axes, naxes);
	return imp_b_reshape(im, r, kd, t->rank, name);
}

/* An index tensor input (int32 or int64), or a NULL node after reporting. */
static struct value index_input(struct importer *im, unsigned i)
{
	struct tensor *t = imp_in_req(im, i);
	if (!t)
		return no_value;
	if (t->dtype != DT_INT32 && t->dtype != DT_INT64) {
		imp_op_err(im, "input %u (\"%s\") must be int32 or int64 indices", i, t->name);
		return no_value;
	}
	return imp_tval(im, t);
}

/* ---- indexing ---- */

int imp_op_gather_elements(struct importer *im, const onnx_node *n)
{
	struct value d = imp_in_val(im, 0), ix = index_input(im, 1);
	if (!d.node || !ix.node)
		return -1;
	const struct type *dt = val_type(d), *it = val_type(ix);
	unsigned axis;
	if (imp_norm_axis(im, imp_attr_i(n, "axis", 0), dt->rank, &axis))
		return -1;
	if (it->rank != dt->rank)
		return imp_op_err(im, "indices must have the rank of data (%u), got %u", dt->rank, it->rank);
	struct value r = imp_b_node(im, NK_GatherElements, imp_out_name(im, 0), (struct value[]){d, ix}, 2,
				type_with_dims(im->tc, dt, it->dims, it->rank));
	if (r.node)
		node_set_int(im->m, r.node, AN_axis, axis);
	return imp_set_out(im, 0, r);
}

/* the reduction attribute of the scatters as the enum index */
static int reduction_attr(struct importer *im, const onnx_node *n, int64_t *out)
{
	const char *s = imp_attr_s(im, n, "reduction", "none");
	if (strcmp(s, "none") == 0)
		*out = 0;
	else if (strcmp(s, "add") == 0)
		*out = 1;
	else if (strcmp(s, "mul") == 0)
		*out = 2;
	else if (im->opset >= 18 && strcmp(s, "max") == 0)
		*out = 3; /* ops_scatter.c */
	else if (im->opset >= 18 && strcmp(s, "min") == 0)
		*out = 4;
	else
		return imp_op_err(im, "reduction \"%s\" is not defined (none, add, mul%s)", s,
			      im->opset >= 18 ? ", max or min" : " before opset 18");
	return 0;
}

/* ScatterElements, and Scatter (its older name, no reduction) */
int imp_op_scatter_elements(struct importer *im, const onnx_node *n)
{
	struct value d = imp_in_val(im, 0), ix = index_input(im, 1), u = imp_in_val(im, 2);
	if (!d.node || !ix.node || !u.node)
		return -1;
	const struct type *dt = val_type(d);
	unsigned axis;
	int64_t red = 0;
	if (imp_norm_axis(im, imp_attr_i(n, "axis", 0), dt->rank, &axis) || reduction_attr(im, n, &red))
		return -1;
	if (red >= 3)
		return imp_scatter_minmax(im, n, false, red == 3);
	if (val_type(u)->elem != dt->elem)
		return imp_op_err(im, "updates must have the element type of data");
	struct value r = imp_b_node(im, NK_ScatterElements, imp_out_name(im, 0), (struct value[]){d, ix, u}, 3, dt);
	if (r.node) {
		node_set_int(im->m, r.node, AN_axis, axis);
		node_set_int(im->m, r.node, AN_reduction, red);
	}
	return imp_set_out(im, 0, r);
}

int imp_op_scatter_nd(struct importer *im, const onnx_node *n)
{
	struct value d = imp_in_val(im, 0), ix = index_input(im, 1), u = imp_in_val(im, 2);
	if (!d.node || !ix.node || !u.node)
		return -1;
	int64_t red = 0;
	if (reduction_attr(im, n, &red))
		return -1;
	if (red >= 3)
		return imp_scatter_minmax(im, n, true, red == 3);
	const struct type *dt = val_type(d);
	if (val_type(u)->elem != dt->elem)
		return imp_op_err(im, "updates must have the element type of data");
	struct value r = imp_b_node(im, NK_ScatterND, imp_out_name(im, 0), (struct value[]){d, ix, u}, 3, dt);
	if (r.node)
		node_set_int(im->m, r.node, AN_reduction, red);
	return imp_set_out(im, 0, r);
}

/* ---- elementwise math ---- */

/* Tan, Asin, Acos, Atan, Sinh, Cosh, Asinh, Acosh, Atanh: one kind each */
int imp_op_math(struct importer *im, const onnx_node *n)
{
	unsigned kind = im->row->kind; /* ops.def */
	struct value x = imp_in_val(im, 0);
	if (!x.node)
		return -1;
	if (!elem_is_float((enum elem_kind)val_type(x)->elem))
		return imp_op_err(im, "input must be floating point");
	return imp_set_out(im, 0, imp_b_unary(im, kind, imp_out_name(im, 0), x));
}

int imp_op_isinf(struct importer *im, const onnx_node *n)
{
	struct value x = imp_in_val(im, 0);
	if (!x.node)
		return -1;
	if (!elem_is_float((enum elem_kind)val_type(x)->elem))
		return imp_op_err(im, "input must be floating point");
	struct value r = imp_b_node(im, NK_IsInf, imp_out_name(im, 0), &x, 1, type_with_elem(im->tc, val_type(x), EK_BOOL));
	if (r.node) {
		node_set_int(im->m, r.node, AN_detect_positive, imp_attr_i(n, "detect_positive", 1) != 0);
		node_set_int(im->m, r.node, AN_detect_negative, imp_attr_i(n, "detect_negative", 1) != 0);
	}
	return imp_set_out(im, 0, r);
}

/* broadcasts a and b to their common shape */
static int bcast2(struct importer *im, struct value *a, struct value *b, const char *name)
{
	uint64_t dims[GLOW_MAX_RANK];
	unsigned rank;
	if (!a->node || !b->node || imp_bcast_shape(im, val_type(*a), val_type(*b), dims, &rank))
		return -1;
	*a = imp_b_broadcast(im, *a, dims, rank, imp_dname(im, name, "bcast0"));
	*b = imp_b_broadcast(im, *b, dims, rank, imp_dname(im, name, "bcast1"));
	return a->node && b->node ? 0 : -1;
}

int imp_op_bitshift(struct importer *im, const onnx_node *n)
{
	struct value a = imp_in_val(im, 0), b = imp_in_val(im, 1);
	const char *name = imp_out_name(im, 0);
	const char *dir = imp_attr_s(im, n, "direction", "");
	int64_t d = strcmp(dir, "LEFT") == 0 ? 0 : strcmp(dir, "RIGHT") == 0 ? 1 : -1;
	if (d < 0)
		return imp_op_err(im, "direction must be \"LEFT\" or \"RIGHT\", got \"%s\"", dir);
	if (bcast2(im, &a, &b, name))
		return -1;
	if (!elem_is_integer((enum elem_kind)val_type(a)->elem) || val_type(a)->elem != val_type(b)->elem)
		return imp_op_err(im, "operands must be integers of one type");
	struct value r = imp_b_binary(im, NK_BitShift, a, b, name);
	if (r.node)
		node_set_int(im->m, r.node, AN_direction, d);
	return imp_set_out(im, 0, r);
}

/* ---- losses ---- */

/* The negative log-likelihood loss of log-probabilities lp (N x C x d...)
 * against target (N x d..., int32/int64), optional weight (C), optional
 * ignore_index, reduction none/sum/mean:
 *   loss[n, d] = -lp[n, t, d] * w[t] with t = target[n, d], w = weight or 1,
 *   and 0 (weight 0) where t == ignore_index;
 *   sum: the sum of loss; mean: sum(loss) / sum(weights). Ignored targets
 * may lie outside [0, C): they are replaced by 0 before indexing. */
static struct value nll(struct importer *im, const onnx_node *n, struct value lp, struct value tg,
			struct tensor *weight, const char *name)
{
	if (!lp.node || !tg.node)
		return no_value;
	const struct type *lt = val_type(lp), *tt = val_type(tg);
	if (lt->rank < 2 || tt->rank != lt->rank - 1u) {
		imp_op_err(im, "input must be N x C x d... and target N x d...");
		return no_value;
	}
	for (unsigned i = 0; i < tt->rank; i++)
		if (tt->dims[i] != lt->dims[i ? i + 1 : 0]) {
			imp_op_err(im, "target dimension %u does not match the input", i);
			return no_value;
		}
	const char *red = imp_attr_s(im, n, "reduction", "mean");
	if (strcmp(red, "none") != 0 && strcmp(red, "sum") != 0 && strcmp(red, "mean") != 0) {
		imp_op_err(im, "reduction \"%s\" is not supported (none, sum or mean)", red);
		return no_value;
	}
	bool has_ii = imp_attr(n, "ignore_index") != NULL;
	struct value ign = no_value, safe = tg;
	if (has_ii) {
		struct value ii = imp_b_splat_like(im, tg, (double)imp_attr_i(n, "ignore_index", 0), imp_dname(im, name, "ii"));
		ign = imp_b_binary(im, NK_CmpEQ, tg, ii, imp_dname(im, name, "ignored"));
		safe = sel(im, ign, imp_b_splat_like(im, tg, 0, imp_dname(im, name, "zeroidx")), tg, imp_dname(im, name, "target"));
	}
	/* lp[n, t, d]: GatherElements along 1 with target as N x 1 x d... */
	uint64_t d3[GLOW_MAX_RANK];
	d3[0] = tt->dims[0];
	d3[1] = 1;
	for (unsigned i = 1; i < tt->rank; i++)
		d3[i + 1] = tt->dims[i];
	struct value t3 = imp_b_reshape(im, safe, d3, lt->rank, imp_dname(im, name, "target3"));
	struct value g = imp_b_node(im, NK_GatherElements, imp_dname(im, name, "gather"), (struct value[]){lp, t3}, 2,
				type_with_dims(im->tc, lt, d3, lt->rank));
	if (g.node)
		node_set_int(im->m, g.node, AN_axis, 1);
	g = imp_b_reshape(im, g, tt->dims, tt->rank, imp_dname(im, name, "picked"));
	struct value loss = imp_b_unary(im, NK_Neg, imp_dname(im, name, "neg"), g), w = no_value;
	if (!loss.node)
		return no_value;
	const struct type *ft = val_type(loss);
	struct value zero = imp_b_splat_like(im, loss, 0, imp_dname(im, name, "zero"));
	if (weight) {
		struct value wv = imp_tval(im, weight);
		if (!wv.node)
			return no_value;
		if (val_type(wv)->rank != 1 || val_type(wv)->dims[0] != lt->dims[1] || val_type(wv)->elem != ft->elem) {
			imp_op_err(im, "weight must be a vector of the C = %llu classes of the input's type",
			       (unsigned long long)lt->dims[1]);
			return no_value;
		}
		w = imp_b_node(im, NK_Gather, imp_dname(im, name, "w"), (struct value[]){wv, safe}, 2, ft);
		if (has_ii)
			w = sel(im, ign, zero, w, imp_dname(im, name, "wmask"));
		loss = imp_b_binary(im, NK_Mul, loss, w, strcmp(red, "none") == 0 ? name : imp_dname(im, name, "loss"));
	} else if (has_ii) {
		loss = sel(im, ign, zero, loss, strcmp(red, "none") == 0 ? name : imp_dname(im, name, "loss"));
		w = sel(im, ign, zero, imp_b_splat_like(im, loss, 1, imp_dname(im, name, "one")), imp_dname(im, name, "wmask"));
	}
	if (strcmp(red, "none") == 0)
		return loss;
	if (strcmp(red, "sum") == 0)
		return imp_reduce_all(im, NK_BatchedReduceAdd, loss, name);
	if (!w.node)
		return imp_reduce_all(im, NK_BatchedReduceMean, loss, name);
	struct value total = imp_reduce_all(im, NK_BatchedReduceAdd, loss, imp_dname(im, name, "sum"));
	struct value wsum = imp_reduce_all(im, NK_BatchedReduceAdd, w, imp_dname(im, name, "wsum"));
	return imp_b_binary(im, NK_Div, total, wsum, name);
}

int imp_op_nll_loss(struct importer *im, const onnx_node *n)
{
	struct value lp = imp_in_val(im, 0), tg = index_input(im, 1);
	return imp_set_out(im, 0, nll(im, n, lp, tg, imp_in_opt(im, 2), imp_out_name(im, 0)));
}

/* SoftmaxCrossEntropyLoss: the loss of LogSoftMax(scores) along 1; the
 * optional second output is those log-probabilities. */
int imp_op_sce_loss(struct importer *im, const onnx_node *n)
{
	struct value x = imp_in_val(im, 0), tg = index_input(im, 1);
	if (!x.node || !tg.node)
		return -1;
	const char *name = imp_out_name(im, 0);
	if (val_type(x)->rank < 2 || !elem_is_float((enum elem_kind)val_type(x)->elem))
		return imp_op_err(im, "scores must be floating point N x C x d...");
	bool lp_out = n->n_output > 1 && *imp_out_name(im, 1);
	struct value lp = imp_b_unary(im, NK_LogSoftMax, lp_out ? imp_out_name(im, 1) : imp_dname(im, name, "logprob"), x);
	if (lp.node)
		node_set_int(im->m, lp.node, AN_axis, 1);
	if (imp_set_out(im, 0, nll(im, n, lp, tg, imp_in_opt(im, 2), name)))
		return -1;
	return lp_out ? imp_set_out(im, 1, lp) : 0;
}

/* ---- masks and one-hot encodings ---- */

/* Trilu(X ... x N x M, k): keeps the elements on and above (upper) or on
 * and below (lower) diagonal k, zeroes the rest: an N x M bool mask
 * broadcast over the batch, then Select. A known k gives a constant mask;
 * a run-time k is compared with the constant j - i. */
int imp_op_trilu(struct importer *im, const onnx_node *n)
{
	struct value x = imp_in_val(im, 0);
	struct tensor *kt = imp_in_opt(im, 1);
	if (!x.node)
		return -1;
	const struct type *t = val_type(x);
	const char *name = imp_out_name(im, 0);
	if (t->rank < 2)
		return imp_op_err(im, "input must have rank 2 or more");
	if (kt && (imp_t_numel(kt) != 1 || (kt->dtype != DT_INT64 && kt->dtype != DT_INT32)))
		return imp_op_err(im, "k must be an integer scalar");
	bool upper = imp_attr_i(n, "upper", 1) != 0;
	uint64_t rows = t->dims[t->rank - 2], cols = t->dims[t->rank - 1];
	if (rows * cols > ONNX_FOLD_MAX)
		return imp_op_err(im, "the %llu x %llu mask is too large", (unsigned long long)rows,
			      (unsigned long long)cols);
	const int64_t *kv = kt ? imp_t_ints(im, kt) : NULL;
	int64_t k = kv ? kv[0] : 0;
	bool known = !kt || kv;
	int64_t *m = arena_alloc(&im->scratch, (rows * cols + 1) * sizeof *m);
	for (uint64_t i = 0; i < rows; i++)
		for (uint64_t j = 0; j < cols; j++) {
			int64_t diff = (int64_t)j - (int64_t)i;
			m[i * cols + j] = !known ? diff : upper ? diff >= k : diff <= k;
		}
	const uint64_t *md = t->dims + t->rank - 2;
	struct value mask;
	if (known) {
		mask = imp_tval(im, imp_t_from_ints(im, imp_dname(im, name, "mask"), DT_BOOL, 2, md, m));
	} else {
		struct value diff = imp_tval(im, imp_t_from_ints(im, imp_dname(im, name, "diff"), DT_INT64, 2, md, m));
		uint64_t one[2] = {1, 1};
		struct value kb = imp_b_reshape(im, imp_b_convert(im, imp_tval(im, kt), EK_I64, imp_dname(im, name, "k64")), one, 2,
					    imp_dname(im, name, "kr"));
		kb = imp_b_broadcast(im, kb, md, 2, imp_dname(im, name, "kb"));
		mask = upper ? imp_b_binary(im, NK_CmpLTE, kb, diff, imp_dname(im, name, "mask"))
			     : imp_b_binary(im, NK_CmpLTE, diff, kb, imp_dname(im, name, "mask"));
	}
	mask = imp_b_broadcast(im, mask, t->dims, t->rank, imp_dname(im, name, "maskb"));
	return imp_set_out(im, 0, sel(im, mask, x, imp_b_splat_like(im, x, 0, imp_dname(im, name, "zero")), name));
}

/* 0, 1, ..., len-1 as an i64 tensor of rank `rank` laid along axis */
static struct value iota(struct importer *im, uint64_t len, unsigned axis, unsigned rank, const char *name)
{
	if (len > ONNX_FOLD_MAX) {
		imp_op_err(im, "%llu positions are too many to enumerate", (unsigned long long)len);
		return no_value;
	}
	int64_t *v = arena_alloc(&im->scratch, (len + 1) * sizeof *v);
	for (uint64_t i = 0; i < len; i++)
		v[i] = (int64_t)i;
	uint64_t dims[GLOW_MAX_RANK];
	for (unsigned i = 0; i < rank; i++)
		dims[i] = i == axis ? len : 1;
	return imp_tval(im, imp_t_from_ints(im, name, DT_INT64, rank, dims, v));
}

/* Hardmax: 1 at the first maximum along axis, 0 elsewhere; ArgMax (kept
 * dimension) compared with the positions along axis. Before opset 13 the
 * input is seen as 2-D [prod(dims[:axis]), prod(dims[axis:])]. */
int imp_op_hardmax(struct importer *im, const onnx_node *n)
{
	struct imp_float_op f;
	if (imp_float_op_start(im, &f))
		return -1;
	unsigned axis;
	if (imp_norm_axis(im, imp_attr_i(n, "axis", im->opset >= 13 ? -1 : 1), f.t->rank, &axis))
		return -1;
	struct value v = f.x;
	if (im->opset < 13) {
		uint64_t d2[2] = {1, 1};
		for (unsigned i = 0; i < f.t->rank; i++)
			d2[i >= axis] *= f.t->dims[i];
		v = imp_b_reshape(im, f.x, d2, 2, imp_dname(im, f.name, "2d"));
		axis = 1;
	}
	const struct type *vt = val_type(v);
	uint64_t kd[GLOW_MAX_RANK];
	memcpy(kd, vt->dims, sizeof kd);
	kd[axis] = 1;
	struct value am = imp_b_node(im, NK_ArgMax, imp_dname(im, f.name, "argmax"), &v, 1, imp_ty(im, EK_I64, kd, vt->rank));
	if (am.node) {
		node_set_int(im->m, am.node, AN_axis, axis);
		node_set_int(im->m, am.node, AN_keep_dims, 1);
	}
	struct value pos = iota(im, vt->dims[axis], axis, vt->rank, imp_dname(im, f.name, "pos"));
	am = imp_b_broadcast(im, am, vt->dims, vt->rank, imp_dname(im, f.name, "argmaxb"));
	pos = imp_b_broadcast(im, pos, vt->dims, vt->rank, imp_dname(im, f.name, "posb"));
	struct value eq = imp_b_binary(im, NK_CmpEQ, am, pos, imp_dname(im, f.name, "eq"));
	struct value one = imp_b_splat_like(im, v, 1, imp_dname(im, f.name, "one"));
	struct value zero = imp_b_splat_like(im, v, 0, imp_dname(im, f.name, "zero"));
	struct value r = sel(im, eq, one, zero, im->opset < 13 ? imp_dname(im, f.name, "r") : f.name);
	if (im->opset < 13)
		r = imp_b_reshape(im, r, f.t->dims, f.t->rank, f.name);
	return imp_set_out(im, 0, r);
}

/* OneHot(indices, depth known, values [off, on]) {axis}: the output has the
 * indices' shape with depth inserted at axis; on where the position along
 * axis equals the index (negative indices count from depth), off
 * elsewhere. */
int imp_op_onehot(struct importer *im, const onnx_node *n)
{
	struct value ix = imp_in_val(im, 0), vals = imp_in_val(im, 2);
	struct tensor *dt = imp_in_req(im, 1);
	if (!ix.node || !vals.node || !dt)
		return -1;
	const double *dv = imp_t_floats(im, dt);
	if (!dv || imp_t_numel(dt) != 1)
		return imp_op_err(im, "input 1 (\"%s\") must be a scalar known at import time", dt->name);
	if (!(dv[0] >= 1 && dv[0] <= (double)ONNX_FOLD_MAX))
		return imp_op_err(im, "depth %g is not a positive count", dv[0]);
	int64_t depth = (int64_t)dv[0];
	const struct type *it = val_type(ix), *vt = val_type(vals);
	const char *name = imp_out_name(im, 0);
	if (vt->rank != 1 || vt->dims[0] != 2)
		return imp_op_err(im, "values must be a vector of two elements [off, on]");
	if (it->rank + 1 > GLOW_MAX_RANK)
		return imp_op_err(im, "result rank exceeds the graph IR's %d", GLOW_MAX_RANK);
	unsigned axis;
	if (imp_norm_axis(im, imp_attr_i(n, "axis", -1), it->rank + 1, &axis))
		return -1;
	uint64_t od[GLOW_MAX_RANK], kd[GLOW_MAX_RANK];
	for (unsigned i = 0, j = 0; i <= it->rank; i++) {
		od[i] = i == axis ? (uint64_t)depth : it->dims[j];
		kd[i] = i == axis ? 1 : it->dims[j];
		j += i != axis;
	}
	unsigned r = it->rank + 1;
	struct value i64 = imp_b_convert(im, ix, EK_I64, imp_dname(im, name, "idx"));
	struct value neg = imp_b_binary(im, NK_CmpLT, i64, imp_b_splat_like(im, i64, 0, imp_dname(im, name, "zero")),
			      imp_dname(im, name, "neg"));
	struct value wrapped = imp_b_binary(im, NK_Add, i64, imp_b_splat_like(im, i64, (double)depth, imp_dname(im, name, "depth")),
				  imp_dname(im, name, "wrap"));
	i64 = sel(im, neg, wrapped, i64, imp_dname(im, name, "fixed"));
	i64 = imp_b_broadcast(im, imp_b_reshape(im, i64, kd, r, imp_dname(im, name, "idxr")), od, r, imp_dname(im, name, "idxb"));
	struct value pos = imp_b_broadcast(im, iota(im, (uint64_t)depth, axis, r, imp_dname(im, name, "pos")), od, r,
				       imp_dname(im, name, "posb"));
	struct value eq = imp_b_binary(im, NK_CmpEQ, i64, pos, imp_dname(im, name, "eq"));
	uint64_t ones[GLOW_MAX_RANK];
	for (unsigned i = 0; i < r; i++)
		ones[i] = 1;
	struct value pick[2];
	for (unsigned k = 0; k < 2; k++) {
		const char *pn = imp_dname(im, name, k ? "on" : "off");
		struct value s = imp_b_node(im, NK_Slice, imp_dname(im, pn, "slice"), &vals, 1,
					type_with_dims(im->tc, vt, (uint64_t[]){1}, 1));
		if (s.node)
			node_set_ints(im->m, s.node, AN_start, (int64_t[]){k}, 1);
		pick[k] = imp_b_broadcast(im, imp_b_reshape(im, s, ones, r, imp_dname(im, pn, "r")), od, r, pn);
	}
	return imp_set_out(im, 0, sel(im, eq, pick[1], pick[0], name));
}

/* MeanVarianceNormalization {axes}: (X - E[X]) / (sqrt(E[(X - E[X])^2]) +
 * 1e-9) over axes (default [0, 2, 3]). */
int imp_op_mvn(struct importer *im, const onnx_node *n)
{
	struct imp_float_op f;
	if (imp_float_op_start(im, &f))
		return -1;
	static const int64_t def_axes[3] = {0, 2, 3};
	const int64_t *av = def_axes;
	long na = imp_attr_ints(n, "axes", &av);
	if (na < 0) {
		av = def_axes;
		na = 3;
	}
	int64_t axes[GLOW_MAX_RANK];
	bool seen[GLOW_MAX_RANK] = {false};
	if (na == 0 || na > (long)f.t->rank)
		return imp_op_err(im, "axes must name between 1 and %u dimensions", f.t->rank);
	for (long i = 0; i < na; i++) {
		unsigned a;
		if (imp_norm_axis(im, av[i], f.t->rank, &a))
			return -1;
		if (seen[a])
			return imp_op_err(im, "axis %u appears twice", a);
		seen[a] = true;
		axes[i] = a;
	}
	struct value mean = imp_b_broadcast(im, reduce_keep(im, NK_BatchedReduceMean, f.x, axes, (unsigned)na,
							imp_dname(im, f.name, "mean")),
					f.t->dims, f.t->rank, imp_dname(im, f.name, "meanb"));
	struct value dev = imp_b_binary(im, NK_Sub, f.x, mean, imp_dname(im, f.name, "dev"));
	struct value var = reduce_keep(im, NK_BatchedReduceMean, imp_b_binary(im, NK_Mul, dev, dev, imp_dname(im, f.name, "sq")), axes,
				       (unsigned)na, imp_dname(im, f.name, "var"));
	struct value sd = imp_b_unary(im, NK_Sqrt, imp_dname(im, f.name, "sd"), var);
	sd = imp_b_binary(im, NK_Add, sd, imp_b_splat_like(im, sd, 1e-9, imp_dname(im, f.name, "eps")), imp_dname(im, f.name, "sdeps"));
	sd = imp_b_broadcast(im, sd, f.t->dims, f.t->rank, imp_dname(im, f.name, "sdb"));
	return imp_set_out(im, 0, imp_b_binary(im, NK_Div, dev, sd, f.name));
}

/* GroupNormalization: x [N, C, D...] normalized over each group of C /
 * num_groups channels (and all of D), as a [N, G, C/G * D] view: mean and
 * biased variance over its last axis, (x - mean) / sqrt(var + epsilon), then
 * scale * y + bias per channel. Opset 18 gives scale and bias per group
 * (each repeated over the group's channels), opset 21 per channel. */
int imp_op_groupnorm(struct importer *im, const onnx_node *n)
{
	struct value x = imp_in_val(im, 0), sc = imp_in_val(im, 1), bi = imp_in_val(im, 2);
	if (!x.node || !sc.node || !bi.node)
		return -1;
	const struct type *t = val_type(x);
	const char *name = imp_out_name(im, 0);
	if (!elem_is_float((enum elem_kind)t->elem))
		return imp_op_err(im, "input must be floating point");
	if (t->rank < 2)
		return imp_op_err(im, "the input has rank %u, at least 2 (N, C, ...)", t->rank);
	int64_t g = imp_attr_i(n, "num_groups", -1);
	uint64_t c = t->dims[1];
	if (g <= 0 || c % (uint64_t)g)
		return imp_op_err(im, "num_groups %lld does not divide the %llu channels", (long long)g, (unsigned long long)c);
	uint64_t per = c / (uint64_t)g, rest = 1;
	for (unsigned k = 2; k < t->rank; k++)
		rest *= t->dims[k];
	uint64_t want = im->opset >= 21 ? c : (uint64_t)g;
	const struct type *st = val_type(sc), *bt = val_type(bi);
	if (st->rank != 1 || st->dims[0] != want || bt->rank != 1 || bt->dims[0] != want)
		return imp_op_err(im, "scale and bias must have %llu elements (one per %s at opset %lld)",
			      (unsigned long long)want, im->opset >= 21 ? "channel" : "group", (long long)im->opset);
	uint64_t gd[3] = {t->dims[0], (uint64_t)g, per * rest};
	struct value xg = imp_b_reshape(im, x, gd, 3, imp_dname(im, name, "groups"));
	int64_t ax = 2;
	struct value mean = imp_b_broadcast(im, reduce_keep(im, NK_BatchedReduceMean, xg, &ax, 1, imp_dname(im, name, "mean")),
					gd, 3, imp_dname(im, name, "meanb"));
	struct value dev = imp_b_binary(im, NK_Sub, xg, mean, imp_dname(im, name, "dev"));
	struct value var = reduce_keep(im, NK_BatchedReduceMean, imp_b_binary(im, NK_Mul, dev, dev, imp_dname(im, name, "sq")), &ax, 1,
				       imp_dname(im, name, "var"));
	var = imp_b_binary(im, NK_Add, var, imp_b_splat_like(im, var, imp_attr_f(n, "epsilon", 1e-5f), imp_dname(im, name, "eps")),
		 imp_dname(im, name, "vareps"));
	struct value sd = imp_b_broadcast(im, imp_b_unary(im, NK_Sqrt, imp_dname(im, name, "sd"), var), gd, 3,
				      imp_dname(im, name, "sdb"));
	struct value y = imp_b_reshape(im, imp_b_binary(im, NK_Div, dev, sd, imp_dname(im, name, "norm")), t->dims, t->rank,
				   imp_dname(im, name, "normr"));
	/* per-channel scale and bias as [C, 1, ...] broadcast over x */
	struct value cs[2] = {sc, bi};
	for (unsigned i = 0; i < 2; i++) {
		if (im->opset < 21) {
			uint64_t g1[2] = {(uint64_t)g, 1}, gp[2] = {(uint64_t)g, per};
			cs[i] = imp_b_broadcast(im, imp_b_reshape(im, cs[i], g1, 2, imp_dname(im, name, i ? "biasg" : "scaleg")), gp, 2,
					    imp_dname(im, name, i ? "biasgb" : "scalegb"));
		}
		uint64_t cd[GLOW_MAX_RANK];
		cd[0] = c;
		for (unsigned k = 2; k < t->rank; k++)
			cd[k - 1] = 1;
		cs[i] = imp_b_broadcast(im, imp_b_reshape(im, cs[i], cd, t->rank - 1, imp_dname(im, name, i ? "biasc" : "scalec")),
				    t->dims, t->rank, imp_dname(im, name, i ? "biasb" : "scaleb"));
	}
	return imp_set_out(im, 0, imp_b_binary(im, NK_Add, imp_b_binary(im, NK_Mul, y, cs[0], imp_dname(im, name, "scaled")), cs[1], name));
}

/* RMSNormalization (opset 23): x / sqrt(mean(x^2) + epsilon) * scale, the
 * mean over the dimensions from axis on; scale broadcasts to x (numpy). */
int imp_op_rmsnorm(struct importer *im, const onnx_node *n)
{
	struct value x = imp_in_val(im, 0), sc = imp_in_val(im, 1);
	if (!x.node || !sc.node)
		return -1;
	const struct type *t = val_type(x), *st = val_type(sc);
	const char *name = imp_out_name(im, 0);
	if (!elem_is_float((enum elem_kind)t->elem) || st->elem != t->elem)
		return imp_op_err(im, "the input and scale must be floating point of one type");
	if (imp_attr_i(n, "stash_type", 1) != 1)
		return imp_op_err(im, "stash_type other than float is not supported");
	unsigned axis;
	if (imp_norm_axis(im, imp_attr_i(n, "axis", -1), t->rank, &axis))
		return -1;
	if (st->rank > t->rank)
		return imp_op_err(im, "scale has rank %u, more than the input's %u", st->rank, t->rank);
	for (unsigned k = 0; k < st->rank; k++) {
		uint64_t d = st->dims[k], xd = t->dims[t->rank - st->rank + k];
		if (d != 1 && d != xd)
			return imp_op_err(im, "scale does not broadcast to the input");
	}
	int64_t axes[GLOW_MAX_RANK];
	for (unsigned k = axis; k < t->rank; k++)
		axes[k - axis] = k;
	struct value ms = reduce_keep(im, NK_BatchedReduceMean, imp_b_binary(im, NK_Mul, x, x, imp_dname(im, name, "sq")), axes,
				      t->rank - axis, imp_dname(im, name, "ms"));
	ms = imp_b_binary(im, NK_Add, ms, imp_b_splat_like(im, ms, imp_attr_f(n, "epsilon", 1e-5f), imp_dname(im, name, "eps")),
		imp_dname(im, name, "mseps"));
	struct value rms = imp_b_broadcast(im, imp_b_unary(im, NK_Sqrt, imp_dname(im, name, "rms"), ms), t->dims, t->rank,
				       imp_dname(im, name, "rmsb"));
	struct value y = imp_b_binary(im, NK_Div, x, rms, imp_dname(im, name, "norm"));
	struct value s = imp_b_broadcast(im, sc, t->dims, t->rank, imp_dname(im, name, "scaleb"));
	return imp_set_out(im, 0, imp_b_binary(im, NK_Mul, y, s, name));
}

/* LpNormalization: x divided by its L1 (p = 1) or L2 (p = 2) norm along
 * axis. */
int imp_op_lpnorm(struct importer *im, const onnx_node *n)
{
	struct imp_float_op f;
	if (imp_float_op_start(im, &f))
		return -1;
	unsigned axis;
	if (imp_norm_axis(im, imp_attr_i(n, "axis", -1), f.t->rank, &axis))
		return -1;
	int64_t p = imp_attr_i(n, "p", 2);
	if (p != 1 && p != 2)
		return imp_op_err(im, "p is %lld; only 1 and 2 are defined", (long long)p);
	int64_t ax = axis;
	struct value v = p == 1 ? imp_b_unary(im, NK_Abs, imp_dname(im, f.name, "abs"), f.x) : imp_b_binary(im, NK_Mul, f.x, f.x, imp_dname(im, f.name, "sq"));
	struct value s = reduce_keep(im, NK_BatchedReduceAdd, v, &ax, 1, imp_dname(im, f.name, "sum"));
	if (p == 2)
		s = imp_b_unary(im, NK_Sqrt, imp_dname(im, f.name, "l2"), s);
	s = imp_b_broadcast(im, s, f.t->dims, f.t->rank, imp_dname(im, f.name, "normb"));
	return imp_set_out(im, 0, imp_b_binary(im, NK_Div, f.x, s, f.name));
}
