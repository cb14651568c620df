/* ops_reduce.c - translators of matrix products, reductions, selection
 * (ArgMax/ArgMin/TopK), softmax and CumSum (the quantization operators are
 * ops_quant.c's).
 *
 * MatMul follows numpy: a 2-D right operand multiplies the flattened rows
 * of the left one (MatMul), batched operands broadcast their batch
 * dimensions and become one BatchMatMul over a flattened batch. Reductions
 * drop the reduced dimensions; keepdims is a Reshape carrying the output
 * name. Index results (ArgMax, TopK) are i64, ONNX's int64.
 */
#include "import/onnx/internal.h"

#include <math.h>
#include <string.h>

/* element kind of index results */
#define IDX_ELEM EK_I64

static struct value bin(struct importer *im, unsigned kind, struct value a, struct value b, const char *name)
{
	struct value ops[2] = {a, b};
	return imp_b_node(im, kind, name, ops, 2, a.node ? val_type(a) : NULL);
}

/* A Gemm of a QDQ model (A read through DequantizeLinear) that is a fully
 * connected layer (alpha = beta = 1, A not transposed, C absent or of N
 * elements) as FullyConnected, which fold-qdq can quantize: B transposed
 * to K x N when transB, C reshaped to N. */
static int gemm_fc(struct importer *im, struct value a, struct value b, bool trb, uint64_t nn, const char *name)
{
	const struct type *ta = val_type(a);
	struct value c;
	if (trb) {
		static const unsigned perm[2] = {1, 0};
		b = imp_b_transpose(im, b, perm, imp_dname(im, name, "weights"));
	}
	if (imp_in_opt(im, 2))
		c = imp_b_reshape(im, imp_in_val(im, 2), &nn, 1, imp_dname(im, name, "bias"));
	else
		c = imp_b_splat_const(im, imp_dname(im, name, "bias"), type_with_dims(im->tc, ta, &nn, 1), 0);
	struct value ops[3] = {a, b, c};
	uint64_t dims[2] = {ta->dims[0], nn};
	return imp_set_out(im, 0, imp_b_node(im, NK_FullyConnected, name, ops, 3, type_with_dims(im->tc, ta, dims, 2)));
}

/* Whether Gemm n is a fully connected layer of a QDQ model (gemm_fc's
 * conditions) on A (value a) and B (tensor bt). */
static bool gemm_is_fc(struct importer *im, const onnx_node *n, struct value a, const struct tensor *bt)
{
	struct tensor *ct = imp_in_opt(im, 2);
	const struct type *ta = val_type(a);
	bool trb = imp_attr_i(n, "transB", 0) != 0;
	uint64_t nn = bt->rank == 2 ? bt->dims[trb ? 0 : 1] : 0;
	return a.node->kind == NK_Dequantize && ta->rank == 2 && bt->rank == 2 && !imp_attr_i(n, "transA", 0) &&
	       imp_attr_f(n, "alpha", 1) == 1 && imp_attr_f(n, "beta", 1) == 1 && bt->dtype == imp_dt_of_elem(ta->elem) &&
	       ta->dims[1] == bt->dims[trb ? 1 : 0] && (!ct || (imp_t_numel(ct) == nn && ct->dtype == bt->dtype));
}

int imp_op_gemm(struct importer *im, const onnx_node *n)
{
	struct value a = imp_in_val(im, 0);
	struct tensor *bt = imp_in_req(im, 1);
	int rc;
	/* per-channel weights first: their float form is then never made */
	if (a.node && bt && bt->qaxis && gemm_is_fc(im, n, a, bt) &&
	    imp_qdq_channelwise_fc(im, a, bt, imp_attr_i(n, "transB", 0) != 0, &rc))
		return rc;
	struct value b = imp_in_val(im, 1);
	if (!a.node || !b.node)
		return -1;
	const struct type *ta = val_type(a), *tb = val_type(b);
	if (ta->rank != 2 || tb->rank != 2)
		return imp_op_err(im, "A and B must be 2-D");
	bool tra = imp_attr_i(n, "transA", 0) != 0, trb = imp_attr_i(n, "transB", 0) != 0;
	uint64_t m = ta->dims[tra ? 1 : 0], k = ta->dims[tra ? 0 : 1];
	uint64_t kb = tb->dims[trb ? 1 : 0], nn = tb->dims[trb ? 0 : 1];
	if (k != kb)
		return imp_op_err(im, "inner dimensions differ (%llu vs %llu)", (unsigned long long)k, (unsigned long long)kb);
	const char *name = imp_out_name(im, 0);
	if (gemm_is_fc(im, n, a, bt))
		return gemm_fc(im, a, b, trb, nn, name);
	uint64_t dims[2] = {m, nn};
	const struct type *rt = type_with_dims(im->tc, ta, dims, 2);
	struct value c = imp_in_opt(im, 2) ? imp_in_val(im, 2) : imp_b_splat_const(im, imp_dname(im, name, "c"), rt, 0);
	c = imp_b_broadcast(im, c, dims, 2, imp_dname(im, name, "bcast"));
	struct value ops[3] = {a, b, c};
	struct value r = imp_b_node(im, NK_Gemm, name, ops, 3, rt);
	if (!r.node)
		return -1;
	node_set_float(im->m, r.node, AN_alpha, imp_attr_f(n, "alpha", 1));
	node_set_float(im->m, r.node, AN_beta, imp_attr_f(n, "beta", 1));
	node_set_int(im->m, r.node, AN_trans_a, tra);
	node_set_int(im->m, r.node, AN_trans_b, trb);
	return imp_set_out(im, 0, r);
}

int imp_op_matmul(struct importer *im, const onnx_node *n)
{
	(void)n;
	struct value a = imp_in_val(im, 0), b = imp_in_val(im, 1);
	if (!a.node || !b.node)
		return -1;
	if (val_type(a)->elem != val_type(b)->elem)
		return imp_op_err(im, "operands have different element types");
	return imp_set_out(im, 0, imp_matmul(im, a, b, val_type(a), imp_out_name(im, 0)));
}

/* ---- reductions ---- */

int imp_op_reduce(struct importer *im, const onnx_node *n)
{
	struct tensor *x = imp_in_req(im, 0);
	if (!x)
		return -1;
	const char *op = n->op_type + 6, *name = imp_out_name(im, 0);
	bool keep = imp_attr_i(n, "keepdims", 1) != 0;
	const int64_t *axes = NULL;
	uint64_t na = 0;
	bool axes_input = strcmp(op, "Sum") == 0 ? im->opset >= 13 : im->opset >= 18;
	if (axes_input) {
		if (imp_in_opt(im, 1) && !(axes = imp_in_ints(im, 1, &na)))
			return -1;
	} else {
		long c = imp_attr_ints(n, "axes", &axes);
		na = c < 0 ? 0 : (uint64_t)c;
	}
	bool red[GLOW_MAX_RANK] = {false};
	if (na == 0) {
		if (imp_attr_i(n, "noop_with_empty_axes", 0))
			return imp_set_out_t(im, 0, x);
		for (unsigned k = 0; k < x->rank; k++)
			red[k] = true;
	}
	for (uint64_t k = 0; k < na; k++) {
		unsigned a;
		if (imp_norm_axis(im, axes[k], x->rank, &a))
			return -1;
		red[a] = true;
	}
	int64_t ax[GLOW_MAX_RANK];
	uint64_t kd[GLOW_MAX_RANK], dd[GLOW_MAX_RANK];
	unsigned nax = 0, dr = 0;
	for (unsigned k = 0; k < x->rank; k++) {
		kd[k] = red[k] ? 1 : x->dims[k];
		if (red[k])
			ax[nax++] = k;
		else
			dd[dr++] = x->dims[k];
	}
	struct value v = imp_tval(im, x);
	if (!v.node)
		return -1;
	bool fl = elem_is_float((enum elem_kind)val_type(v)->elem);
	unsigned kind = NK_BatchedReduceAdd;
	enum { POST_NONE, POST_SQRT, POST_LOG } post = POST_NONE;
	if (strcmp(op, "Mean") == 0)
		kind = NK_BatchedReduceMean;
	else if (strcmp(op, "Max") == 0)
		kind = NK_BatchedReduceMax;
	else if (strcmp(op, "Min") == 0)
		kind = NK_BatchedReduceMin;
	else if (strcmp(op, "Prod") == 0)
		kind = NK_BatchedReduceProd;
	else if (strcmp(op, "L1") == 0)
		v = imp_b_unary(im, NK_Abs, imp_dname(im, name, "abs"), v);
	else if (strcmp(op, "L2") == 0 || strcmp(op, "SumSquare") == 0) {
		v = bin(im, NK_Mul, v, v, imp_dname(im, name, "sq"));
		post = op[0] == 'L' ? POST_SQRT : POST_NONE;
	} else if (strcmp(op, "LogSum") == 0) {
		post = POST_LOG;
	} else if (strcmp(op, "LogSumExp") == 0) {
		v = imp_b_unary(im, NK_Exp, imp_dname(im, name, "exp"), v);
		post = POST_LOG;
	}
	if (post != POST_NONE && !fl)
		return imp_op_err(im, "input must be floating point");
	if (nax == 0)
		return imp_set_out(im, 0, v);
	bool last = post == POST_NONE && !keep;
	struct value r = imp_b_node(im, kind, last ? name : imp_dname(im, name, "reduce"), &v, 1,
				v.node ? type_with_dims(im->tc, val_type(v), dd, dr) : NULL);
	if (!r.node)
		return -1;
	node_set_ints(im->m, r.node, AN_axes, ax, nax);
	if (post != POST_NONE)
		r = imp_b_unary(im, post == POST_SQRT ? NK_Sqrt : NK_Log, keep ? imp_dname(im, name, "post") : name, r);
	if (keep)
		r = imp_b_reshape(im, r, kd, x->rank, name);
	return imp_set_out(im, 0, r);
}

int imp_op_argminmax(struct importer *im, const onnx_node *n)
{
	unsigned axis;
	struct tensor *x = imp_in_axis(im, n, 0, &axis);
	if (!x)
		return -1;
	bool last = imp_attr_i(n, "select_last_index", 0) != 0;
	bool keep = imp_attr_i(n, "keepdims", 1) != 0;
	uint64_t dims[GLOW_MAX_RANK];
	unsigned r = 0;
	for (unsigned k = 0; k < x->rank; k++)
		if (k != axis || keep)
			dims[r++] = k == axis ? 1 : x->dims[k];
	const char *name = imp_out_name(im, 0);
	struct value xv = imp_tval(im, x);
	/* select_last_index: the first extremum of the input flipped along
	 * axis is the last one of the input, at (size - 1) - index */
	if (last) {
		xv = imp_b_node(im, NK_Flip, imp_dname(im, name, "flip"), &xv, 1, xv.node ? val_type(xv) : NULL);
		if (!xv.node)
			return -1;
		node_set_int(im->m, xv.node, AN_axis, axis);
	}
	struct value res = imp_b_node(im, im->row->kind /* ops.def */,
				  last ? imp_dname(im, name, "flipped") : name, &xv, 1, imp_ty(im, IDX_ELEM, dims, r));
	if (!res.node)
		return -1;
	node_set_int(im->m, res.node, AN_axis, axis);
	node_set_int(im->m, res.node, AN_keep_dims, keep);
	if (last) {
		struct value top = imp_b_splat_const(im, imp_dname(im, name, "top"), val_type(res), (double)(x->dims[axis] - 1));
		res = bin(im, NK_Sub, top, res, name);
	}
	return imp_set_out(im, 0, res);
}

/* TopK on the last dimension; another axis is moved last and back. The k
 * smallest (largest = 0) are the k largest of -x, negated back (ties keep
 * the lower index first either way; for integers, -x overflows only for
 * the most negative value). */
int imp_op_topk(struct importer *im, const onnx_node *n)
{
	struct tensor *x = imp_in_req(im, 0);
	if (!x)
		return -1;
	int64_t k;
	if (im->opset < 10) {
		k = imp_attr_i(n, "k", -1);
	} else {
		uint64_t c;
		const int64_t *kv = imp_in_ints(im, 1, &c);
		if (!kv)
			return -1;
		if (c != 1)
			return imp_op_err(im, "k must hold one value");
		k = kv[0];
	}
	unsigned axis;
	if (x->rank == 0 || imp_norm_axis(im, imp_attr_i(n, "axis", -1), x->rank, &axis))
		return x->rank == 0 ? imp_op_err(im, "input must not be a scalar") : -1;
	if (k < 0 || (uint64_t)k > x->dims[axis])
		return imp_op_err(im, "k = %lld is out of range", (long long)k);
	bool smallest = !imp_attr_i(n, "largest", 1);
	if (!imp_attr_i(n, "sorted", 1))
		imp_op_warn(im, "sorted = 0: results are sorted anyway");
	const char *vname = imp_out_name(im, 0), *iname = imp_out_name(im, 1);
	unsigned perm[GLOW_MAX_RANK], last = x->rank - 1;
	for (unsigned i = 0; i < x->rank; i++)
		perm[i] = i;
	perm[axis] = last;
	perm[last] = axis;
	bool moved = axis != last;
	struct value xv = imp_tval(im, x);
	if (smallest)
		xv = imp_b_unary(im, NK_Neg, imp_dname(im, vname, "neg"), xv);
	xv = imp_b_transpose(im, xv, perm, imp_dname(im, vname, "in"));
	if (!xv.node)
		return -1;
	uint64_t dims[GLOW_MAX_RANK];
	memcpy(dims, val_type(xv)->dims, sizeof dims);
	dims[last] = (uint64_t)k;
	const struct type *types[2] = {imp_ty(im, val_type(xv)->elem, dims, x->rank), imp_ty(im, IDX_ELEM, dims, x->rank)};
	if (!types[0] || !types[1])
		return -1;
	struct node *p = node_create(im->f, NK_TopK, moved || smallest ? imp_dname(im, vname, "topk") : (*vname ? vname : iname), &xv, 1,
				     types, NULL, LOC_NONE);
	node_set_int(im->m, p, AN_k, k);
	struct value vals = node_val(p, 0), idx = node_val(p, 1);
	if (moved) {
		vals = imp_b_transpose(im, vals, perm, smallest ? imp_dname(im, vname, "negvals") : vname);
		idx = imp_b_transpose(im, idx, perm, iname);
	}
	if (smallest)
		vals = imp_b_unary(im, NK_Neg, vname, vals);
	if (imp_set_out(im, 0, vals))
		return -1;
	return imp_set_out(im, 1, idx);
}

/* Softmax, LogSoftmax: before opset 13 the input is coerced to 2-D at axis. */
int imp_op_softmax(struct importer *im, const onnx_node *n)
{
	struct tensor *x = imp_in_req(im, 0);
	if (!x || !imp_dt_is_float(x->dtype))
		return x ? imp_op_err(im, "input must be floating point") : -1;
	bool old = im->opset < 13;
	unsigned kind = strcmp(n->op_type, "Softmax") == 0 ? NK_SoftMax : NK_LogSoftMax;
	const char *name = imp_out_name(im, 0);
	struct value xv = imp_tval(im, x);
	if (!xv.node)
		return -1;
	if (x->rank == 0)
		return imp_op_err(im, "input must not be a scalar");
	int64_t a = imp_attr_i(n, "axis", old ? 1 : -1);
	unsigned axis;
	if (old && a == (int64_t)x->rank)
		a = 0; /* a legal but degenerate coercion: one row */
	if (imp_norm_axis(im, a, x->rank, &axis))
		return -1;
	if (!old || axis == x->rank - 1) {
		struct value r = imp_b_unary(im, kind, name, xv);
		if (r.node)
			node_set_int(im->m, r.node, AN_axis, axis);
		return imp_set_out(im, 0, r);
	}
	uint64_t d2[2] = {1, 1};
	for (unsigned k = 0; k < x->rank; k++)
		d2[k < axis ? 0 : 1] *= x->dims[k];
	struct value f = imp_b_reshape(im, xv, d2, 2, imp_dname(im, name, "2d"));
	struct value r = imp_b_unary(im, kind, imp_dname(im, name, "sm"), f);
	if (r.node)
		node_set_int(im->m, r.node, AN_axis, 1);
	return imp_set_out(im, 0, imp_b_reshape(im, r, x->dims, x->rank, name));
}

int imp_op_cumsum(struct importer *im, const onnx_node *n)
{
	struct tensor *x;
	uint64_t c;
	const int64_t *av = imp_in_x_ints(im, &x, &c);
	if (!av)
		return -1;
	unsigned axis;
	if (c != 1 || imp_norm_axis(im, av[0], x->rank, &axis))
		return c != 1 ? imp_op_err(im, "axis must hold one value") : -1;
	/* CumSum or CumProd (issue 15): the row's kind */
	struct value r = imp_b_unary(im, im->row->kind, imp_out_name(im, 0), imp_tval(im, x));
	if (!r.node)
		return -1;
	node_set_int(im->m, r.node, AN_axis, axis);
	node_set_int(im->m, r.node, AN_exclusive, imp_attr_i(n, "exclusive", 0) != 0);
	node_set_int(im->m, r.node, AN_reverse, imp_attr_i(n, "reverse", 0) != 0);
	return imp_set_out(im, 0, r);
}
