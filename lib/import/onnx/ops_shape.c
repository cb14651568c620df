/* ops_shape.c - translators of shape and data-movement operators, and of
 * the operators whose values are always known at import (Constant, Shape,
 * Size, ConstantOfShape, Range, EyeLike).
 *
 * Each translator computes the static result shape; when its data input is
 * known it produces a known result (so Shape -> Gather -> Concat -> Reshape
 * chains fold to a static Reshape), otherwise a graph node named as the ONNX
 * output.
 */
#include "import/onnx/internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int out_known(struct importer *im, unsigned i, struct tensor *src)
{
	return imp_set_out_t(im, i, src);
}

/* Identity; Dropout in inference: the data passes through, the mask is all
 * true. Dropout in training mode (training_mode, or is_test = 0 before
 * opset 7): dropout_training. */
int imp_op_identity(struct importer *im, const onnx_node *n)
{
	struct tensor *x = imp_in_req(im, 0);
	if (!x)
		return -1;
	if (strcmp(n->op_type, "Dropout") == 0) {
		struct tensor *train = imp_in_opt(im, 2);
		if (train) {
			const int64_t *tv = imp_t_ints(im, train);
			if (!tv || imp_t_numel(train) != 1)
				return imp_op_err(im, "training_mode must be known at import");
			if (tv[0])
				return imp_dropout_training(im, n, x);
		}
		if (imp_attr_i(n, "is_test", 1) == 0 && im->opset < 7)
			return imp_dropout_training(im, n, x);
		if (imp_out_used(im, 1))
			out_known(im, 1, imp_k_splat(im, imp_out_name(im, 1), DT_BOOL, x->rank, x->dims, 1, 1));
	}
	return out_known(im, 0, x);
}

/* Constant: one of value (a tensor), value_float(s), value_int(s). */
int imp_op_constant(struct importer *im, const onnx_node *n)
{
	const char *name = imp_out_name(im, 0);
	const Onnx__AttributeProto *a;
	if ((a = imp_attr(n, "value")) && a->t)
		return out_known(im, 0, imp_t_from_proto(im, a->t, name));
	if ((a = imp_attr(n, "value_float")) && a->has_f) {
		double f = a->f;
		return out_known(im, 0, imp_t_from_floats(im, name, DT_FLOAT, 0, NULL, &f));
	}
	if ((a = imp_attr(n, "value_int")) && a->has_i)
		return out_known(im, 0, imp_t_from_ints(im, name, DT_INT64, 0, NULL, &a->i));
	if ((a = imp_attr(n, "value_floats"))) {
		uint64_t d = a->n_floats;
		double *v = arena_alloc(&im->scratch, (d + 1) * sizeof *v);
		for (size_t i = 0; i < a->n_floats; i++)
			v[i] = a->floats[i];
		return out_known(im, 0, imp_t_from_floats(im, name, DT_FLOAT, 1, &d, v));
	}
	if ((a = imp_attr(n, "value_ints"))) {
		uint64_t d = a->n_ints;
		return out_known(im, 0, imp_t_from_ints(im, name, DT_INT64, 1, &d, a->ints));
	}
	if (imp_attr(n, "sparse_value"))
		return imp_op_err(im, "sparse constants are not supported");
	if (imp_attr(n, "value_string") || imp_attr(n, "value_strings"))
		return imp_op_err(im, "string constants are not supported");
	return imp_op_err(im, "no value attribute");
}

static int shape_from_ints(struct importer *im, const int64_t *v, uint64_t n, uint64_t *dims)
{
	if (n > GLOW_MAX_RANK)
		return imp_op_err(im, "shape of rank %llu exceeds the graph IR's %d", (unsigned long long)n,
			      GLOW_MAX_RANK);
	for (uint64_t i = 0; i < n; i++) {
		if (v[i] < 0)
			return imp_op_err(im, "negative dimension %lld", (long long)v[i]);
		dims[i] = (uint64_t)v[i];
	}
	return 0;
}

int imp_op_constant_of_shape(struct importer *im, const onnx_node *n)
{
	uint64_t cnt, dims[GLOW_MAX_RANK];
	const int64_t *sv = imp_in_ints(im, 0, &cnt);
	if (!sv || shape_from_ints(im, sv, cnt, dims))
		return -1;
	int dtype = DT_FLOAT;
	double f = 0;
	int64_t i = 0;
	const Onnx__AttributeProto *a = imp_attr(n, "value");
	if (a && a->t) {
		struct tensor *vt = imp_t_from_proto(im, a->t, "value");
		if (!vt)
			return -1;
		if (imp_t_numel(vt) != 1 || !vt->known)
			return imp_op_err(im, "value must hold one element");
		dtype = vt->dtype;
		f = imp_t_floats(im, vt)[0];
		i = imp_t_ints(im, vt)[0];
	}
	struct tensor *t = imp_k_splat(im, imp_out_name(im, 0), dtype, (unsigned)cnt, dims, f, i);
	if (!t)
		return imp_op_err(im, "element type %s is not supported", imp_dt_name(dtype));
	return out_known(im, 0, t);
}

/* Shape (start/end since opset 15) */
int imp_op_shape(struct importer *im, const onnx_node *n)
{
	struct tensor *x = imp_in_req(im, 0);
	if (!x)
		return -1;
	int64_t r = x->rank, s = imp_attr_i(n, "start", 0), e = imp_attr_i(n, "end", r);
	s = s < 0 ? s + r : s;
	e = e < 0 ? e + r : e;
	s = s < 0 ? 0 : s > r ? r : s;
	e = e < 0 ? 0 : e > r ? r : e;
	int64_t v[GLOW_MAX_RANK];
	uint64_t len = e > s ? (uint64_t)(e - s) : 0;
	for (uint64_t k = 0; k < len; k++)
		v[k] = (int64_t)x->dims[s + (int64_t)k];
	return out_known(im, 0, imp_t_from_ints(im, imp_out_name(im, 0), DT_INT64, 1, &len, v));
}

int imp_op_size(struct importer *im, const onnx_node *n)
{
	(void)n;
	struct tensor *x = imp_in_req(im, 0);
	if (!x)
		return -1;
	int64_t v = (int64_t)imp_t_numel(x);
	return out_known(im, 0, imp_t_from_ints(im, imp_out_name(im, 0), DT_INT64, 0, NULL, &v));
}

int imp_op_range(struct importer *im, const onnx_node *n)
{
	(void)n;
	struct tensor *st = imp_in_req(im, 0), *lt = imp_in_req(im, 1), *dt = imp_in_req(im, 2);
	if (!st || !lt || !dt)
		return -1;
	const double *s = imp_t_floats(im, st), *l = imp_t_floats(im, lt), *d = imp_t_floats(im, dt);
	if (!s || !l || !d || imp_t_numel(st) != 1 || imp_t_numel(lt) != 1 || imp_t_numel(dt) != 1)
		return imp_op_err(im, "start, limit and delta must be scalars known at import");
	if (d[0] == 0)
		return imp_op_err(im, "delta is zero");
	double cnt = ceil((l[0] - s[0]) / d[0]);
	if (!(cnt < ONNX_FOLD_MAX))
		return imp_op_err(im, "range of %g elements is too large to fold", cnt);
	uint64_t len = cnt > 0 ? (uint64_t)cnt : 0;
	double *v = arena_alloc(&im->scratch, (len + 1) * sizeof *v);
	if (imp_dt_is_int(st->dtype)) {
		const int64_t *si = imp_t_ints(im, st), *di = imp_t_ints(im, dt);
		for (uint64_t k = 0; k < len; k++)
			v[k] = (double)(si[0] + (int64_t)k * di[0]);
	} else {
		for (uint64_t k = 0; k < len; k++)
			v[k] = s[0] + (double)k * d[0];
	}
	return out_known(im, 0, imp_t_from_floats(im, imp_out_name(im, 0), st->dtype, 1, &len, v));
}

int imp_op_eyelike(struct importer *im, const onnx_node *n)
{
	struct tensor *x = imp_in_req(im, 0);
	if (!x)
		return -1;
	if (x->rank != 2)
		return imp_op_err(im, "input must be 2-D");
	int dtype = (int)imp_attr_i(n, "dtype", x->dtype);
	int64_t k = imp_attr_i(n, "k", 0);
	uint64_t numel = imp_t_numel(x);
	if (numel > ONNX_FOLD_MAX)
		return imp_op_err(im, "too large to fold");
	if (imp_dt_size(dtype) == 0)
		return imp_op_err(im, "element type %s is not supported", imp_dt_name(dtype));
	double *v = arena_alloc(&im->scratch, (numel + 1) * sizeof *v);
	for (uint64_t i = 0; i < x->dims[0]; i++)
		for (uint64_t j = 0; j < x->dims[1]; j++)
			v[i * x->dims[1] + j] = (int64_t)j - (int64_t)i == k;
	return out_known(im, 0, imp_t_from_floats(im, imp_out_name(im, 0), dtype, 2, x->dims, v));
}

/* Output i is input x with a new shape (known contents stay known). */
static int reshape_to(struct importer *im, unsigned i, struct tensor *x, unsigned rank, const uint64_t *dims)
{
	uint64_t numel = 1;
	for (unsigned k = 0; k < rank; k++)
		numel *= dims[k];
	if (numel != imp_t_numel(x))
		return imp_op_err(im, "cannot reshape %llu elements into %llu", (unsigned long long)imp_t_numel(x),
			      (unsigned long long)numel);
	if (x->known)
		return out_known(im, i, imp_t_view(im, x, imp_out_name(im, i), rank, dims));
	return imp_set_out(im, i, imp_b_reshape(im, imp_tval(im, x), dims, rank, imp_out_name(im, i)));
}

int imp_op_reshape(struct importer *im, const onnx_node *n)
{
	struct tensor *x = imp_in_req(im, 0);
	if (!x)
		return -1;
	const int64_t *sv;
	uint64_t cnt;
	if (im->opset < 5) {
		long c = imp_attr_ints(n, "shape", &sv);
		if (c < 0)
			return imp_op_err(im, "no shape attribute");
		cnt = (uint64_t)c;
	} else if (!(sv = imp_in_ints(im, 1, &cnt))) {
		return -1;
	}
	if (cnt > GLOW_MAX_RANK)
		return imp_op_err(im, "shape of rank %llu exceeds the graph IR's %d", (unsigned long long)cnt,
			      GLOW_MAX_RANK);
	bool allowzero = imp_attr_i(n, "allowzero", 0) != 0;
	uint64_t dims[GLOW_MAX_RANK], known = 1;
	int infer = -1;
	for (unsigned k = 0; k < cnt; k++) {
		if (sv[k] == -1) {
			if (infer >= 0)
				return imp_op_err(im, "more than one -1 in the shape");
			infer = (int)k;
			dims[k] = 1;
			continue;
		}
		if (sv[k] < -1)
			return imp_op_err(im, "bad dimension %lld in the shape", (long long)sv[k]);
		if (sv[k] == 0 && !allowzero) {
			if (k >= x->rank)
				return imp_op_err(im, "shape copies dimension %u of a rank-%u input", k, x->rank);
			dims[k] = x->dims[k];
		} else {
			dims[k] = (uint64_t)sv[k];
		}
		known *= dims[k];
	}
	if (infer >= 0) {
		if (known == 0 || imp_t_numel(x) % known)
			return imp_op_err(im, "cannot infer the -1 dimension (%llu elements, %llu per row)",
				      (unsigned long long)imp_t_numel(x), (unsigned long long)known);
		dims[infer] = imp_t_numel(x) / known;
	}
	return reshape_to(im, 0, x, (unsigned)cnt, dims);
}

int imp_op_flatten(struct importer *im, const onnx_node *n)
{
	struct tensor *x = imp_in_req(im, 0);
	if (!x)
		return -1;
	int64_t axis = imp_attr_i(n, "axis", 1);
	if (axis < 0)
		axis += x->rank;
	if (axis < 0 || axis > (int64_t)x->rank)
		return imp_op_err(im, "axis %lld is out of range for rank %u", (long long)imp_attr_i(n, "axis", 1), x->rank);
	uint64_t dims[2] = {1, 1};
	for (unsigned k = 0; k < x->rank; k++)
		dims[(int64_t)k < axis ? 0 : 1] *= x->dims[k];
	return reshape_to(im, 0, x, 2, dims);
}

/* The arguments of Squeeze and Unsqueeze: input 0 and the axes, from the
 * attribute before opset 13, else from input 1 (count -1: absent). */
struct squeeze_args {
	struct tensor *x;
	const int64_t *axes;
	long count;
};

/* Fills a; -1 after a diagnostic (input 0 absent, axes not constant). */
static int get_squeeze_args(struct importer *im, const onnx_node *n, struct squeeze_args *a)
{
	a->x = imp_in_req(im, 0);
	if (!a->x)
		return -1;
	a->axes = NULL;
	if (im->opset < 13) {
		a->count = imp_attr_ints(n, "axes", &a->axes);
		return 0;
	}
	a->count = -1;
	if (!imp_in_opt(im, 1))
		return 0;
	uint64_t c;
	a->axes = imp_in_ints(im, 1, &c);
	if (!a->axes)
		return -1;
	a->count = (long)c;
	return 0;
}

int imp_op_squeeze(struct importer *im, const onnx_node *n)
{
	struct squeeze_args a;
	if (get_squeeze_args(im, n, &a))
		return -1;
	struct tensor *x = a.x;
	bool drop[GLOW_MAX_RANK] = {false};
	if (a.count < 0) {
		for (unsigned k = 0; k < x->rank; k++)
			drop[k] = x->dims[k] == 1;
	}
	for (long k = 0; k < a.count; k++) {
		unsigned ax;
		if (imp_norm_axis(im, a.axes[k], x->rank, &ax))
			return -1;
		if (x->dims[ax] != 1)
			return imp_op_err(im, "cannot squeeze dimension %u of size %llu", ax,
				      (unsigned long long)x->dims[ax]);
		drop[ax] = true;
	}
	uint64_t dims[GLOW_MAX_RANK];
	unsigned r = 0;
	for (unsigned k = 0; k < x->rank; k++)
		if (!drop[k])
			dims[r++] = x->dims[k];
	return reshape_to(im, 0, x, r, dims);
}

int imp_op_unsqueeze(struct importer *im, const onnx_node *n)
{
	struct squeeze_args a;
	if (get_squeeze_args(im, n, &a))
		return -1;
	if (a.count < 0)
		return imp_op_err(im, "axes are required");
	struct tensor *x = a.x;
	unsigned r = x->rank + (unsigned)a.count;
	if (r > GLOW_MAX_RANK)
		return imp_op_err(im, "result rank %u exceeds the graph IR's %d", r, GLOW_MAX_RANK);
	bool ins[GLOW_MAX_RANK] = {false};
	for (long k = 0; k < a.count; k++) {
		unsigned ax;
		if (imp_norm_axis(im, a.axes[k], r, &ax))
			return -1;
		if (ins[ax])
			return imp_op_err(im, "axis %lld repeats", (long long)a.axes[k]);
		ins[ax] = true;
	}
	uint64_t dims[GLOW_MAX_RANK];
	for (unsigned k = 0, j = 0; k < r; k++)
		dims[k] = ins[k] ? 1 : x->dims[j++];
	return reshape_to(im, 0, x, r, dims);
}

int imp_op_transpose(struct importer *im, const onnx_node *n)
{
	struct tensor *x = imp_in_req(im, 0);
	if (!x)
		return -1;
	const int64_t *pv;
	long c = imp_attr_ints(n, "perm", &pv);
	unsigned perm[GLOW_MAX_RANK];
	bool seen[GLOW_MAX_RANK] = {false};
	if (c >= 0 && (unsigned long)c != x->rank)
		return imp_op_err(im, "perm has %ld entries for a rank-%u input", c, x->rank);
	for (unsigned k = 0; k < x->rank; k++) {
		int64_t p = c >= 0 ? pv[k] : (int64_t)(x->rank - 1 - k);
		unsigned a;
		if (imp_norm_axis(im, p, x->rank, &a))
			return -1;
		if (seen[a])
			return imp_op_err(im, "perm is not a permutation");
		seen[a] = true;
		perm[k] = a;
	}
	if (x->known) {
		struct tensor *k = imp_k_permute(im, x, perm, imp_out_name(im, 0));
		if (k)
			return out_known(im, 0, k);
	}
	return imp_set_out(im, 0, imp_b_transpose(im, imp_tval(im, x), perm, imp_out_name(im, 0)));
}

int imp_op_concat(struct importer *im, const onnx_node *n)
{
	unsigned cnt = imp_n_in(n);
	if (cnt == 0)
		return imp_op_err(im, "no inputs");
	struct tensor **ts = arena_alloc(&im->scratch, cnt * sizeof *ts);
	for (unsigned i = 0; i < cnt; i++)
		if (!(ts[i] = imp_in_req(im, i)))
			return -1;
	unsigned axis, rank = ts[0]->rank;
	if (!imp_attr(n, "axis") && im->opset >= 4)
		return imp_op_err(im, "the axis attribute is required");
	if (imp_norm_axis(im, imp_attr_i(n, "axis", 1), rank, &axis))
		return -1;
	uint64_t dims[GLOW_MAX_RANK];
	memcpy(dims, ts[0]->dims, sizeof dims);
	dims[axis] = 0;
	bool known = true;
	unsigned nonempty = 0;
	for (unsigned i = 0; i < cnt; i++) {
		if (ts[i]->rank != rank || ts[i]->dtype != ts[0]->dtype)
			return imp_op_err(im, "input %u has another rank or element type", i);
		for (unsigned k = 0; k < rank; k++)
			if (k != axis && ts[i]->dims[k] != dims[k])
				return imp_op_err(im, "input %u: dimension %u is %llu, expected %llu", i, k,
					      (unsigned long long)ts[i]->dims[k], (unsigned long long)dims[k]);
		dims[axis] += ts[i]->dims[axis];
		known &= ts[i]->known;
		nonempty += imp_t_numel(ts[i]) != 0;
	}
	if (known) {
		struct tensor *k = imp_k_concat(im, ts, cnt, axis, imp_out_name(im, 0));
		if (k)
			return out_known(im, 0, k);
	}
	struct value *ops = arena_alloc(&im->scratch, cnt * sizeof *ops);
	unsigned nops = 0;
	for (unsigned i = 0; i < cnt; i++)
		if (imp_t_numel(ts[i]) != 0 || nonempty == 0)
			ops[nops++] = imp_tval(im, ts[i]);
	if (nops == 1 && ops[0].node)
		return imp_set_out(im, 0, imp_b_reshape(im, ops[0], dims, rank, imp_out_name(im, 0)));
	const struct type *t = imp_ty(im, imp_dt_elem(ts[0]->dtype), dims, rank);
	struct value r = imp_b_node(im, NK_Concat, imp_out_name(im, 0), ops, nops, t);
	if (r.node)
		node_set_int(im->m, r.node, AN_dim, axis);
	return imp_set_out(im, 0, r);
}

/* x[start + j * step] along every axis that is not the identity, as a
 * Gather of the index list per axis (a slice with steps other than 1 on
 * run-time data; the Slice kind has unit steps). */
static struct value slice_gathers(struct importer *im, struct tensor *x, const int64_t *start, const int64_t *step,
				  const uint64_t *odims, const char *name)
{
	struct value cur = imp_tval(im, x);
	uint64_t cd[GLOW_MAX_RANK];
	memcpy(cd, x->dims, x->rank * sizeof *cd);
	for (unsigned k = 0; k < x->rank && cur.node; k++) {
		if (step[k] == 1 && start[k] == 0 && odims[k] == x->dims[k])
			continue;
		int64_t *iv = arena_alloc(&im->scratch, (odims[k] + 1) * sizeof *iv);
		for (uint64_t j = 0; j < odims[k]; j++)
			iv[j] = start[k] + (int64_t)j * step[k];
		cd[k] = odims[k];
		struct tensor *it = imp_t_from_ints(im, imp_dname(im, name, "idx"), DT_INT64, 1, &odims[k], iv);
		struct value ops[2] = {cur, imp_tval(im, it)};
		cur = imp_b_node(im, NK_Gather, imp_dname(im, name, "rows"), ops, 2,
			     type_with_dims(im->tc, val_type(cur), cd, x->rank));
		if (cur.node)
			node_set_int(im->m, cur.node, AN_axis, k);
	}
	return cur;
}

/* Output i is x[start + j * step] with dims odims. */
static int slice_out(struct importer *im, unsigned i, struct tensor *x, const int64_t *start,
		     const int64_t *step, const uint64_t *odims)
{
	const char *name = imp_out_name(im, i);
	bool unit = true;
	for (unsigned k = 0; k < x->rank; k++)
		unit &= step[k] == 1;
	if (x->known) {
		struct tensor *k = imp_k_slice(im, x, start, step, odims, name);
		if (k)
			return out_known(im, i, k);
	}
	if (!unit)
		return imp_set_out(im, i, slice_gathers(im, x, start, step, odims, name));
	struct value xv = imp_tval(im, x);
	if (!xv.node)
		return -1;
	const struct type *xt = val_type(xv);
	const struct type *t = type_with_dims(im->tc, xt, odims, x->rank);
	if (t == xt)
		return imp_set_out(im, i, xv);
	struct value r = imp_b_node(im, NK_Slice, name, &xv, 1, t);
	if (r.node)
		node_set_ints(im->m, r.node, AN_start, start, x->rank);
	return imp_set_out(im, i, r);
}

int imp_op_split(struct importer *im, const onnx_node *n)
{
	unsigned axis;
	struct tensor *x = imp_in_axis(im, n, 0, &axis);
	if (!x)
		return -1;
	unsigned nout = (unsigned)n->n_output;
	const int64_t *sv = NULL;
	uint64_t cnt = 0;
	if (im->opset < 13) {
		long c = imp_attr_ints(n, "split", &sv);
		cnt = c < 0 ? 0 : (uint64_t)c;
		if (c < 0 && im->opset < 2 && imp_in_opt(im, 1) && !(sv = imp_in_ints(im, 1, &cnt)))
			return -1;
	} else if (imp_in_opt(im, 1) && !(sv = imp_in_ints(im, 1, &cnt))) {
		return -1;
	}
	if (nout == 0)
		return imp_op_err(im, "no outputs");
	int64_t sizes_buf[64];
	int64_t *sizes = nout <= 64 ? sizes_buf : arena_alloc(&im->scratch, nout * sizeof *sizes);
	if (sv && im->opset >= 18 && imp_attr(n, "num_outputs"))
		return imp_op_err(im, "split and num_outputs are both given");
	if (sv) {
		if (cnt != nout)
			return imp_op_err(im, "split has %llu entries for %u outputs", (unsigned long long)cnt, nout);
		int64_t sum = 0;
		for (unsigned k = 0; k < nout; k++) {
			if (sv[k] < 0)
				return imp_op_err(im, "negative split size");
			sizes[k] = sv[k];
			sum += sv[k];
		}
		if ((uint64_t)sum != x->dims[axis])
			return imp_op_err(im, "split sizes add up to %lld, not %llu", (long long)sum,
				      (unsigned long long)x->dims[axis]);
	} else if (im->opset >= 18) {
		/* opset 18: num_outputs chunks of ceil(d / num_outputs), the last
		 * one smaller when d does not divide */
		int64_t no = imp_attr_i(n, "num_outputs", -1);
		if (no < 0)
			return imp_op_err(im, "without the split input, num_outputs is required");
		if ((uint64_t)no != nout)
			return imp_op_err(im, "num_outputs is %lld but the node has %u outputs", (long long)no, nout);
		uint64_t d = x->dims[axis], each = (d + nout - 1) / nout, left = d;
		for (unsigned k = 0; k < nout; k++) {
			sizes[k] = (int64_t)(left < each ? left : each);
			left -= (uint64_t)sizes[k];
		}
		if (nout > 1 && sizes[nout - 1] == 0)
			return imp_op_err(im, "dimension %llu does not make %u chunks of %llu", (unsigned long long)d, nout,
				      (unsigned long long)each);
	} else {
		uint64_t d = x->dims[axis], each = (d + nout - 1) / nout;
		if (d % nout)
			return imp_op_err(im, "dimension %llu does not split evenly into %u outputs",
				      (unsigned long long)d, nout);
		for (unsigned k = 0; k < nout; k++)
			sizes[k] = (int64_t)each;
	}
	int64_t start[GLOW_MAX_RANK] = {0}, step[GLOW_MAX_RANK];
	uint64_t odims[GLOW_MAX_RANK];
	memcpy(odims, x->dims, sizeof odims);
	for (unsigned k = 0; k < GLOW_MAX_RANK; k++)
		step[k] = 1;
	for (unsigned k = 0; k < nout; k++) {
		odims[axis] = (uint64_t)sizes[k];
		if (slice_out(im, k, x, start, step, odims))
			return -1;
		start[axis] += sizes[k];
	}
	return 0;
}

/* Clamps a slice bound as ONNX does (negative counts from the end). */
static int64_t clamp_bound(int64_t v, int64_t dim, int64_t step)
{
	if (v < 0)
		v += dim;
	if (step > 0)
		return v < 0 ? 0 : v > dim ? dim : v;
	return v < -1 ? -1 : v > dim - 1 ? dim - 1 : v;
}

int imp_op_slice(struct importer *im, const onnx_node *n)
{
	struct tensor *x = imp_in_req(im, 0);
	if (!x)
		return -1;
	const int64_t *starts, *ends, *axes = NULL, *steps = NULL;
	uint64_t ns, ne, na = 0, nst = 0;
	if (im->opset < 10) {
		long a = imp_attr_ints(n, "starts", &starts), b = imp_attr_ints(n, "ends", &ends);
		if (a < 0 || b < 0)
			return imp_op_err(im, "starts and ends are required");
		ns = (uint64_t)a;
		ne = (uint64_t)b;
		long c = imp_attr_ints(n, "axes", &axes);
		na = c < 0 ? 0 : (uint64_t)c;
		if (c < 0)
			axes = NULL;
	} else {
		/* known only at run time (a Loop body's x[i : i + 1]): control_slice.c */
		struct tensor *s = imp_in_opt(im, 1), *e = imp_in_opt(im, 2);
		if (s && e && (!s->known || !e->known))
			return imp_op_slice_runtime(im, n);
		if (!(starts = imp_in_ints(im, 1, &ns)) || !(ends = imp_in_ints(im, 2, &ne)))
			return -1;
		if (imp_in_opt(im, 3) && !(axes = imp_in_ints(im, 3, &na)))
			return -1;
		if (imp_in_opt(im, 4) && !(steps = imp_in_ints(im, 4, &nst)))
			return -1;
	}
	if (ns != ne || (axes && na != ns) || (steps && nst != ns))
		return imp_op_err(im, "starts, ends, axes and steps differ in length");
	int64_t start[GLOW_MAX_RANK], step[GLOW_MAX_RANK];
	uint64_t odims[GLOW_MAX_RANK];
	for (unsigned k = 0; k < x->rank; k++) {
		start[k] = 0;
		step[k] = 1;
		odims[k] = x->dims[k];
	}
	for (uint64_t k = 0; k < ns; k++) {
		unsigned a;
		if (imp_norm_axis(im, axes ? axes[k] : (int64_t)k, x->rank, &a))
			return -1;
		int64_t st = steps ? steps[k] : 1, dim = (int64_t)x->dims[a];
		if (st == 0)
			return imp_op_err(im, "step is zero");
		int64_t b = clamp_bound(starts[k], dim, st), e = clamp_bound(ends[k], dim, st);
		int64_t len = st > 0 ? (e - b + st - 1) / st : (b - e + (-st) - 1) / (-st);
		start[a] = b;
		step[a] = st;
		odims[a] = len > 0 ? (uint64_t)len : 0;
		if (len <= 0)
			start[a] = 0;
	}
	return slice_out(im, 0, x, start, step, odims);
}

int imp_op_gather(struct importer *im, const onnx_node *n)
{
	struct tensor *data = imp_in_req(im, 0), *idx = imp_in_req(im, 1);
	if (!data || !idx)
		return -1;
	unsigned axis;
	if (imp_norm_axis(im, imp_attr_i(n, "axis", 0), data->rank, &axis))
		return -1;
	if (idx->dtype != DT_INT32 && idx->dtype != DT_INT64)
		return imp_op_err(im, "indices must be int32 or int64");
	if (data->rank + idx->rank - 1 > GLOW_MAX_RANK)
		return imp_op_err(im, "result rank exceeds the graph IR's %d", GLOW_MAX_RANK);
	uint64_t dims[GLOW_MAX_RANK];
	unsigned r = imp_gather_dims(data, idx, axis, dims);
	if (idx->known) {
		const int64_t *iv = imp_t_ints(im, idx);
		if (iv) {
			uint64_t cnt = imp_t_numel(idx);
			int64_t *nv = arena_alloc(&im->scratch, (cnt + 1) * sizeof *nv);
			bool changed = false;
			for (uint64_t k = 0; k < cnt; k++) {
				int64_t v = iv[k] < 0 ? iv[k] + (int64_t)data->dims[axis] : iv[k];
				if (v < 0 || (uint64_t)v >= data->dims[axis])
					return imp_op_err(im, "index %lld is out of range for dimension %llu",
						      (long long)iv[k], (unsigned long long)data->dims[axis]);
				changed |= v != iv[k];
				nv[k] = v;
			}
			if (changed)
				idx = imp_t_from_ints(im, imp_dname(im, idx->name, "norm"), idx->dtype, idx->rank, idx->dims,
						  nv);
			if (data->known) {
				struct tensor *k = imp_k_gather(im, data, idx, axis, imp_out_name(im, 0));
				if (k)
					return out_known(im, 0, k);
			}
		}
	}
	struct value ops[2] = {imp_tval(im, data), imp_tval(im, idx)};
	struct value res = imp_b_node(im, NK_Gather, imp_out_name(im, 0), ops, 2, imp_ty(im, imp_dt_elem(data->dtype), dims, r));
	if (res.node)
		node_set_int(im->m, res.node, AN_axis, axis);
	return imp_set_out(im, 0, res);
}

int imp_op_gather_nd(struct importer *im, const onnx_node *n)
{
	struct tensor *data = imp_in_req(im, 0), *idx = imp_in_req(im, 1);
	if (!data || !idx)
		return -1;
	int64_t b = imp_attr_i(n, "batch_dims", 0);
	if (idx->rank < 1 || b < 0 || (uint64_t)b >= idx->rank || (uint64_t)b >= data->rank)
		return imp_op_err(im, "bad batch_dims %lld", (long long)b);
	uint64_t last = idx->dims[idx->rank - 1];
	if (last < 1 || (uint64_t)b + last > data->rank)
		return imp_op_err(im, "index depth %llu does not fit the data rank %u", (unsigned long long)last,
			      data->rank);
	uint64_t dims[2 * GLOW_MAX_RANK];
	unsigned r = 0;
	for (unsigned k = 0; k + 1 < idx->rank; k++)
		dims[r++] = idx->dims[k];
	for (uint64_t k = (uint64_t)b + last; k < data->rank; k++)
		dims[r++] = data->dims[k];
	struct value ops[2] = {imp_tval(im, data), imp_tval(im, idx)};
	struct value res = imp_b_node(im, NK_GatherND, imp_out_name(im, 0), ops, 2, imp_ty(im, imp_dt_elem(data->dtype), dims, r));
	if (res.node)
		node_set_int(im->m, res.node, AN_batch_dims, b);
	return imp_set_out(im, 0, res);
}

/* Expand and Tile: input 0 and the integer list of input 1 (the shape, the
 * repeats) handed to build, which translates the operator. */
static int x_and_ints(struct importer *im,
		      int (*build)(struct importer *im, struct tensor *x, const int64_t *v, uint64_t cnt))
{
	struct tensor *x;
	uint64_t cnt;
	const int64_t *v = imp_in_x_ints(im, &x, &cnt);
	return v ? build(im, x, v, cnt) : -1;
}

/* Expand: x broadcast to the shape sv (of cnt dimensions). */
static int expand(struct importer *im, struct tensor *x, const int64_t *sv, uint64_t cnt)
{
	uint64_t sd[GLOW_MAX_RANK], dims[GLOW_MAX_RANK];
	if (shape_from_ints(im, sv, cnt, sd))
		return -1;
	unsigned r = x->rank > cnt ? x->rank : (unsigned)cnt;
	for (unsigned i = 0; i < r; i++) {
		int ia = (int)i - (int)(r - x->rank), ib = (int)i - (int)(r - cnt);
		uint64_t da = ia >= 0 ? x->dims[ia] : 1, db = ib >= 0 ? sd[ib] : 1;
		if (da != db && da != 1 && db != 1)
			return imp_op_err(im, "cannot expand dimension %u of size %llu to %llu", i,
				      (unsigned long long)da, (unsigned long long)db);
		dims[i] = da == 1 ? db : da;
	}
	if (x->known) {
		struct tensor *k = imp_k_broadcast(im, x, dims, r, imp_out_name(im, 0));
		if (k)
			return out_known(im, 0, k);
	}
	struct value xv = imp_tval(im, x);
	struct value res = imp_b_broadcast(im, xv, dims, r, imp_out_name(im, 0));
	if (res.node && res.node == xv.node && res.res == xv.res)
		return imp_set_out_t(im, 0, x);
	return imp_set_out(im, 0, res);
}

int imp_op_expand(struct importer *im, const onnx_node *n)
{
	(void)n;
	return x_and_ints(im, expand);
}

/* Tile: x repeated rv[k] times along each axis k (cnt repeats). */
static int tile(struct importer *im, struct tensor *x, const int64_t *rv, uint64_t cnt)
{
	if (cnt != x->rank)
		return imp_op_err(im, "repeats has %llu entries for a rank-%u input", (unsigned long long)cnt, x->rank);
	struct value v = imp_tval(im, x);
	if (!v.node)
		return -1;
	unsigned last = x->rank;
	for (unsigned k = 0; k < x->rank; k++) {
		if (rv[k] < 1)
			return imp_op_err(im, "repeat %lld is not supported", (long long)rv[k]);
		if (rv[k] > 1)
			last = k;
	}
	if (last == x->rank)
		return imp_set_out_t(im, 0, x);
	for (unsigned k = 0; k < x->rank; k++) {
		if (rv[k] == 1)
			continue;
		const struct type *t = val_type(v);
		uint64_t dims[GLOW_MAX_RANK];
		memcpy(dims, t->dims, sizeof dims);
		dims[k] *= (uint64_t)rv[k];
		v = imp_b_node(im, NK_Tile, k == last ? imp_out_name(im, 0) : imp_dname(im, imp_out_name(im, 0), "tile"), &v, 1,
			   imp_ty(im, t->elem, dims, t->rank));
		if (!v.node)
			return -1;
		node_set_int(im->m, v.node, AN_count, rv[k]);
		node_set_int(im->m, v.node, AN_axis, k);
	}
	return imp_set_out(im, 0, v);
}

int imp_op_tile(struct importer *im, const onnx_node *n)
{
	(void)n;
	return x_and_ints(im, tile);
}

/* Pad: constant, reflect and edge modes; from opset 18 the axes input
 * names the axes pads covers (the others get no padding). A negative pad
 * crops: the input is padded by the positive pads, then sliced. */
/* Pad's wrap mode (opset 19), onnxruntime's order: the negative pads crop
 * first, then each axis grows by the positive ones taken cyclically from
 * the cropped range: output o of an axis reads cb + (o - gb) mod L. One
 * Gather per padded or cropped axis. */
static int pad_wrap(struct importer *im, struct tensor *x, const int64_t *pads /* full rank */)
{
	const char *name = imp_out_name(im, 0);
	struct value cur = imp_tval(im, x);
	uint64_t cd[GLOW_MAX_RANK];
	memcpy(cd, x->dims, x->rank * sizeof *cd);
	for (unsigned k = 0; k < x->rank && cur.node; k++) {
		int64_t b = pads[k], e = pads[k + x->rank], in = (int64_t)x->dims[k];
		if (b == 0 && e == 0)
			continue;
		int64_t cb = b < 0 ? -b : 0, L = in - cb - (e < 0 ? -e : 0), gb = b > 0 ? b : 0, ge = e > 0 ? e : 0;
		if (L <= 0 && gb + ge > 0)
			return imp_op_err(im, "wrap mode: axis %u is cropped to nothing and cannot be padded", k);
		if (L < 0)
			return imp_op_err(im, "the negative pads of axis %u crop %lld of %lld elements", k, (long long)(in - L), (long long)in);
		if (!table_fits((uint64_t)L, 1) || !table_fits((uint64_t)gb, 1) || !table_fits((uint64_t)ge, 1) ||
		    !table_fits((uint64_t)(L + gb + ge), 1))
			return imp_op_err(im, "wrap mode: axis %u would need an index table of more than 2^20 entries", k);
		uint64_t od = (uint64_t)(L + gb + ge);
		int64_t *iv = arena_alloc(&im->scratch, (od + 1) * sizeof *iv);
		for (int64_t o = 0; o < (int64_t)od; o++)
			iv[o] = cb + (((o - gb) % L) + L) % L;
		cd[k] = od;
		struct tensor *it = imp_t_from_ints(im, imp_dname(im, name, "wrap"), DT_INT64, 1, &od, iv);
		struct value ops[2] = {cur, imp_tval(im, it)};
		cur = imp_b_node(im, NK_Gather, imp_dname(im, name, "wrapped"), ops, 2, type_with_dims(im->tc, val_type(cur), cd, x->rank));
		if (cur.node)
			node_set_int(im->m, cur.node, AN_axis, k);
	}
	return imp_set_out(im, 0, cur);
}

int imp_op_pad(struct importer *im, const onnx_node *n)
{
	struct tensor *x = imp_in_req(im, 0);
	if (!x)
		return -1;
	const char *mode = imp_attr_s(im, n, "mode", "constant");
	int m = strcmp(mode, "constant") == 0 ? 0 : strcmp(mode, "reflect") == 0 ? 1 : strcmp(mode, "edge") == 0 ? 2 : -1;
	if (m < 0 && im->opset >= 19 && strcmp(mode, "wrap") == 0)
		m = 3;
	if (m < 0 && strcmp(mode, "wrap") == 0)
		return imp_op_err(im, "pad mode 'wrap' is not defined before opset 19");
	if (m < 0)
		return imp_op_err(im, "pad mode '%s' is not supported", mode);
	const int64_t *pv;
	uint64_t cnt;
	double value = 0;
	unsigned ax[GLOW_MAX_RANK], nax = x->rank;
	for (unsigned k = 0; k < x->rank; k++)
		ax[k] = k;
	if (im->opset < 11) {
		long c = imp_attr_ints(n, im->opset < 2 ? "paddings" : "pads", &pv);
		if (c < 0)
			return imp_op_err(im, "pads are required");
		cnt = (uint64_t)c;
		value = imp_attr_f(n, "value", 0);
	} else {
		if (!(pv = imp_in_ints(im, 1, &cnt)))
			return -1;
		struct tensor *cv = imp_in_opt(im, 2);
		if (cv) {
			const double *f = imp_t_floats(im, cv);
			if (!f || imp_t_numel(cv) != 1)
				return imp_op_err(im, "constant_value must be a scalar known at import");
			value = f[0];
		}
		if (imp_in_opt(im, 3)) {
			uint64_t na;
			const int64_t *av = imp_in_ints(im, 3, &na);
			if (!av)
				return -1;
			if (na > x->rank)
				return imp_op_err(im, "axes has %llu entries for a rank-%u input", (unsigned long long)na, x->rank);
			nax = (unsigned)na;
			for (unsigned k = 0; k < nax; k++) {
				if (imp_norm_axis(im, av[k], x->rank, &ax[k]))
					return -1;
				for (unsigned j = 0; j < k; j++)
					if (ax[j] == ax[k])
						return imp_op_err(im, "axis %u is repeated in axes", ax[k]);
			}
		}
	}
	if (cnt != 2 * (uint64_t)nax)
		return imp_op_err(im, "pads has %llu entries for %u axes", (unsigned long long)cnt, nax);
	/* no tensor has 2^61 elements along an axis: larger pads are refused
	 * before the sums below (which would overflow) */
	for (uint64_t k = 0; k < cnt; k++)
		if (pv[k] > ((int64_t)1 << 61) || pv[k] < -((int64_t)1 << 61))
			return imp_op_err(im, "pads value %lld is out of range", (long long)pv[k]);
	/* full-rank pads: grow (the positive parts) and crop (the negative ones) */
	int64_t grow[2 * GLOW_MAX_RANK] = {0}, start[GLOW_MAX_RANK] = {0}, step[GLOW_MAX_RANK];
	uint64_t dims[GLOW_MAX_RANK], odims[GLOW_MAX_RANK];
	bool zero = true, crop = false;
	for (unsigned k = 0; k < nax; k++) {
		int64_t b = pv[k], e = pv[k + nax];
		grow[ax[k]] = b > 0 ? b : 0;
		grow[ax[k] + x->rank] = e > 0 ? e : 0;
		start[ax[k]] = b < 0 ? -b : 0;
		crop |= b < 0 || e < 0;
	}
	if (m == 3) {
		int64_t full[2 * GLOW_MAX_RANK] = {0};
		for (unsigned k = 0; k < nax; k++)
			full[ax[k]] = pv[k], full[ax[k] + x->rank] = pv[k + nax];
		return pad_wrap(im, x, full);
	}
	for (unsigned k = 0; k < x->rank; k++) {
		step[k] = 1;
		dims[k] = x->dims[k] + (uint64_t)grow[k] + (uint64_t)grow[k + x->rank];
		zero &= grow[k] == 0 && grow[k + x->rank] == 0;
		int64_t cut = start[k];
		for (unsigned j = 0; j < nax; j++)
			if (ax[j] == k && pv[j + nax] < 0)
				cut -= pv[j + nax];
		if ((uint64_t)cut > dims[k])
			return imp_op_err(im, "the negative pads of axis %u crop %lld of %llu elements", k, (long long)cut,
				      (unsigned long long)dims[k]);
		odims[k] = dims[k] - (uint64_t)cut;
	}
	struct tensor *p = x;
	if (!zero) {
		struct value xv = imp_tval(im, x);
		if (!xv.node)
			return -1;
		const char *pname = crop ? imp_dname(im, imp_out_name(im, 0), "pad") : imp_out_name(im, 0);
		struct value r = imp_b_node(im, NK_Pad, pname, &xv, 1, type_with_dims(im->tc, val_type(xv), dims, x->rank));
		if (!r.node)
			return -1;
		node_set_int(im->m, r.node, AN_mode, m);
		node_set_ints(im->m, r.node, AN_pads, grow, 2 * x->rank);
		node_set_float(im->m, r.node, AN_value, value);
		if (!crop)
			return imp_set_out(im, 0, r);
		p = imp_t_new(im, pname, x->dtype, x->rank, dims);
		p->v = r;
	}
	if (!crop)
		return imp_set_out_t(im, 0, x);
	return slice_out(im, 0, p, start, step, odims);
}

/* CenterCropPad (opset 18): each axis of axes (all by default) is cropped
 * or zero-padded to the size shape gives, centred: a crop starts at
 * (size - target) / 2, a pad puts (target - size) / 2 before and the rest
 * after. Built as a Pad of the growing axes, then a Slice of the shrinking
 * ones. */
int imp_op_center_crop_pad(struct importer *im, const onnx_node *n)
{
	struct tensor *x = imp_in_req(im, 0);
	uint64_t ns;
	const int64_t *sv = x ? imp_in_ints(im, 1, &ns) : NULL;
	if (!sv)
		return -1;
	unsigned ax[GLOW_MAX_RANK], nax;
	if (imp_attr_axes(im, n, x->rank, true, ax, &nax))
		return -1;
	if (ns != nax)
		return imp_op_err(im, "shape has %llu entries for %u axes", (unsigned long long)ns, nax);
	int64_t grow[2 * GLOW_MAX_RANK] = {0}, start[GLOW_MAX_RANK] = {0}, step[GLOW_MAX_RANK];
	uint64_t dims[GLOW_MAX_RANK], odims[GLOW_MAX_RANK];
	memcpy(dims, x->dims, sizeof dims);
	memcpy(odims, x->dims, sizeof odims);
	bool pad = false;
	for (unsigned k = 0; k < nax; k++) {
		unsigned a = ax[k];
		if (sv[k] < 0)
			return imp_op_err(im, "negative size %lld in shape", (long long)sv[k]);
		uint64_t d = x->dims[a], w = (uint64_t)sv[k];
		if (w > d) {
			grow[a] = (int64_t)((w - d) / 2);
			grow[a + x->rank] = (int64_t)(w - d) - grow[a];
			dims[a] = w;
			pad = true;
		} else {
			start[a] = (int64_t)((d - w) / 2);
		}
		odims[a] = w;
	}
	for (unsigned k = 0; k < x->rank; k++)
		step[k] = 1;
	struct tensor *p = x;
	if (pad) {
		struct value xv = imp_tval(im, x);
		if (!xv.node)
			return -1;
		const char *pname = imp_dname(im, imp_out_name(im, 0), "pad");
		struct value r = imp_b_node(im, NK_Pad, pname, &xv, 1, type_with_dims(im->tc, val_type(xv), dims, x->rank));
		if (!r.node)
			return -1;
		node_set_ints(im->m, r.node, AN_pads, grow, 2 * x->rank);
		p = imp_t_new(im, pname, x->dtype, x->rank, dims);
		p->v = r;
	}
	return slice_out(im, 0, p, start, step, odims);
}
