/* ops_conv.c - translators of convolutions, pools, normalizations and
 * resampling.
 *
 * ONNX images are NCHW, the graph IR's convolution and pool kinds NHWC with
 * filters OC x KH x KW x IC/group: inputs and filters go through Transpose
 * nodes ("<name>.nhwc"), the NHWC result is "<out>.nhwc" and a Transpose
 * back to NCHW carries the ONNX output name; the optimizer cancels the pairs
 * between consecutive layers. 1-D convolutions and pools are 2-D ones with a
 * width of 1; 3-D windows, dilated pools and MaxPool's Indices output are
 * built in ops_3d.c. The window geometry and the convolution node are
 * window.c's (shared with the quantized convolutions of ops_quant.c).
 * Normalizations take the channel index as an attribute and work on NCHW
 * directly.
 */
#include "import/onnx/internal.h"

#include <math.h>
#include <string.h>

/* The NHWC result r of an operator becomes the NCHW output 0. */
static int nchw_out(struct importer *im, struct value r, unsigned nsp)
{
	return imp_set_out(im, 0, imp_win_nchw_val(im, r, nsp, imp_out_name(im, 0)));
}

static struct value bias_or_zero(struct importer *im, unsigned i, uint64_t oc, int elem)
{
	struct tensor *b = imp_in_opt(im, i);
	if (b) {
		if (b->rank != 1 || b->dims[0] != oc) {
			imp_op_err(im, "bias must have shape [%llu]", (unsigned long long)oc);
			return no_value;
		}
		return imp_tval(im, b);
	}
	return imp_b_splat_const(im, imp_dname(im, imp_out_name(im, 0), "bias"), imp_ty(im, elem, &oc, 1), 0);
}

/* What Conv and ConvTranspose start from: the inputs (imp_conv_inputs) and
 * the 2-D window, whose kernel shape defaults to the weights'. */
struct conv_args {
	struct tensor *x, *w;
	struct imp_window win;
	int rc; /* when conv_start returns nonzero: what the translator returns */
};

/* Fills c. 0: the caller goes on; else the caller returns c->rc, -1 after
 * reporting or the result of the 3-D translator that a rank-5 input goes
 * to. */
static int conv_start(struct importer *im, const onnx_node *n, bool transposed, struct conv_args *c)
{
	c->rc = -1;
	if (imp_conv_inputs(im, &c->x, &c->w))
		return 1;
	if (c->x->rank == 5) {
		c->rc = transposed ? imp_op_conv_transpose_3d(im, n) : imp_op_conv_3d(im, n);
		return 1;
	}
	int64_t kdef[2] = {(int64_t)c->w->dims[2], c->w->rank == 4 ? (int64_t)c->w->dims[3] : 1};
	return imp_win_params(im, n, c->x, kdef, &c->win, transposed) ? 1 : 0;
}

int imp_op_conv(struct importer *im, const onnx_node *n)
{
	struct conv_args c;
	int rc;
	if (conv_start(im, n, false, &c))
		return c.rc;
	if (c.w->qaxis && imp_qdq_channelwise_conv(im, n, c.x, c.w, &rc))
		return rc;
	const struct type *rt = imp_t_type(im, c.x);
	/* one statement each: the constants are made in operand order */
	struct value xv = imp_tval(im, c.x);
	struct value wv = imp_tval(im, c.w);
	struct value bv = bias_or_zero(im, 2, c.w->dims[0], imp_dt_elem(c.x->dtype));
	struct value r = imp_win_conv_node(im, n, c.x, c.w, &c.win, xv, wv, bv, NK_Convolution, rt);
	return r.node ? nchw_out(im, r, c.win.nsp) : -1;
}

int imp_op_conv_transpose(struct importer *im, const onnx_node *n)
{
	struct conv_args c;
	if (conv_start(im, n, true, &c))
		return c.rc;
	/* output_padding adds rows at the end: less end padding, and where
	 * there is none left, rows that only the bias reaches (ext, added by a
	 * Pad of the result before the bias). output_shape sets the total
	 * padding s*(in-1) + output_padding + d*(k-1) + 1 - output_shape,
	 * split as ONNX does (floor halves; SAME_UPPER puts the larger half at
	 * the end); a negative end pad extends the output the same way. */
	int64_t op[2] = {0, 0}, ext[2] = {0, 0};
	if (imp_win_read_pair(im, n, "output_padding", c.win.nsp, op, 0))
		return -1;
	const int64_t *osv;
	long osc = imp_attr_ints(n, "output_shape", &osv);
	if (osc >= 0 && (unsigned long)osc != c.win.nsp)
		return imp_op_err(im, "output_shape has %ld entries for %u spatial dimensions", osc, c.win.nsp);
	bool upper = strcmp(imp_attr_s(im, n, "auto_pad", "NOTSET"), "SAME_UPPER") == 0;
	for (unsigned i = 0; i < 2; i++) {
		int64_t full = c.win.s[i] * ((int64_t)c.win.in[i] - 1) + (c.win.k[i] - 1) * c.win.d[i] + 1;
		if (osc >= 0 && i < c.win.nsp) {
			int64_t total = full + op[i] - osv[i];
			int64_t half = total >= 0 ? total / 2 : -((1 - total) / 2);
			c.win.pads[i] = upper ? half : total - half;
			c.win.pads[i + 2] = total - c.win.pads[i];
		}
		c.win.pads[i + 2] -= op[i];
		if (c.win.pads[i] < 0)
			return imp_op_err(im, "output_shape needs padding before the start, which is not supported");
		if (c.win.pads[i + 2] < 0) {
			ext[i] = -c.win.pads[i + 2];
			c.win.pads[i + 2] = 0;
		}
		int64_t o = full - c.win.pads[i] - c.win.pads[i + 2];
		if (o < 1)
			return imp_op_err(im, "empty output");
		c.win.out[i] = (uint64_t)o;
	}
	int64_t g = imp_attr_i(n, "group", 1);
	uint64_t ic = c.w->dims[0];
	if (g < 1 || ic != c.x->dims[1] || ic % (uint64_t)g)
		return imp_op_err(im, "group %lld does not fit the weights", (long long)g);
	uint64_t ocg = c.w->dims[1], icg = ic / (uint64_t)g, oc = ocg * (uint64_t)g;
	uint64_t kh = c.w->dims[2], kw = c.w->rank == 4 ? c.w->dims[3] : 1;
	const char *name = imp_out_name(im, 0);
	int elem = imp_dt_elem(c.x->dtype);
	/* (IC, OC/g, KH, KW) -> (g, IC/g, OC/g, KH, KW) -> (g, OC/g, KH, KW, IC/g) -> (OC, KH, KW, IC/g) */
	uint64_t d5[5] = {(uint64_t)g, icg, ocg, kh, kw};
	static const unsigned perm5[5] = {0, 2, 3, 4, 1};
	uint64_t d4[4] = {oc, kh, kw, icg};
	struct value fv = imp_b_reshape(im, imp_tval(im, c.w), d5, 5, imp_dname(im, c.w->name, "groups"));
	fv = imp_b_transpose(im, fv, perm5, imp_dname(im, c.w->name, "t"));
	fv = imp_b_reshape(im, fv, d4, 4, imp_dname(im, c.w->name, "nhwc"));
	struct value xv = imp_win_as_4d(im, imp_tval(im, c.x), imp_dname(im, c.x->name, "4d"));
	bool extend = ext[0] || ext[1];
	struct value xn = imp_b_to_nhwc(im, xv, imp_dname(im, c.x->name, "nhwc"));
	struct value bias = bias_or_zero(im, 2, oc, elem);
	struct value ops[3] = {xn, fv, bias};
	if (extend && imp_in_opt(im, 2))
		ops[2] = imp_b_splat_const(im, imp_dname(im, name, "nobias"), imp_ty(im, elem, &oc, 1), 0);
	uint64_t dims[4] = {c.x->dims[0], c.win.out[0], c.win.out[1], oc};
	struct value r = imp_b_node(im, NK_ConvTranspose, imp_dname(im, name, extend ? "core" : "nhwc"), ops, 3,
				imp_ty(im, elem, dims, 4));
	if (!r.node)
		return -1;
	imp_win_set_attrs(im, r.node, &c.win, true);
	node_set_int(im->m, r.node, AN_group, g);
	if (extend) {
		int64_t pads[8] = {0, 0, 0, 0, 0, ext[0], ext[1], 0};
		dims[1] += (uint64_t)ext[0];
		dims[2] += (uint64_t)ext[1];
		const struct type *et = imp_ty(im, elem, dims, 4);
		bool biased = imp_in_opt(im, 2) != NULL;
		r = imp_b_node(im, NK_Pad, imp_dname(im, name, biased ? "ext" : "nhwc"), &r, 1, et);
		if (r.node)
			node_set_ints(im->m, r.node, AN_pads, pads, 8);
		if (biased) {
			struct value bb = imp_b_broadcast(im, bias, dims, 4, imp_dname(im, name, "biasb"));
			struct value add[2] = {r, bb};
			r = imp_b_node(im, NK_Add, imp_dname(im, name, "nhwc"), add, 2, et);
		}
		if (!r.node)
			return -1;
	}
	return nchw_out(im, r, c.win.nsp);
}

static int pool(struct importer *im, const onnx_node *n, bool max, bool global)
{
	struct tensor *x = imp_in_req(im, 0);
	if (!x || !imp_float_input(im, x))
		return -1;
	struct imp_window win;
	if (global) {
		if (x->rank != 3 && x->rank != 4)
			return imp_op_err(im, "only 1-D and 2-D pools are supported (input rank %u)", x->rank);
		memset(&win, 0, sizeof win);
		win.nsp = x->rank - 2;
		win.k[0] = (int64_t)x->dims[2];
		win.k[1] = x->rank == 4 ? (int64_t)x->dims[3] : 1;
		win.s[0] = win.s[1] = win.d[0] = win.d[1] = 1;
		win.out[0] = win.out[1] = 1;
	} else {
		const int64_t *dv;
		long dc = imp_attr_ints(n, "dilations", &dv);
		bool dilated = false;
		for (long i = 0; i < dc; i++)
			dilated |= dv[i] != 1;
		if (x->rank == 5 || dilated)
			return imp_op_pool_nd(im, n, max);
		if (imp_win_params(im, n, x, NULL, &win, false))
			return -1;
	}
	const char *name = imp_out_name(im, 0);
	int elem = imp_dt_elem(x->dtype);
	struct value xv = imp_win_as_4d(im, imp_tval(im, x), imp_dname(im, x->name, "4d"));
	xv = imp_b_to_nhwc(im, xv, imp_dname(im, x->name, "nhwc"));
	uint64_t dims[4] = {x->dims[0], win.out[0], win.out[1], x->dims[1]};
	const struct type *rt = imp_ty(im, elem, dims, 4);
	if (!rt || !xv.node)
		return -1;
	struct node *p;
	if (max) {
		const struct type *types[2] = {rt, imp_ty(im, EK_INDEX64, dims, 4)};
		p = node_create(im->f, NK_MaxPool, imp_dname(im, name, "nhwc"), &xv, 1, types, NULL, LOC_NONE);
	} else {
		p = node_create1(im->f, NK_AvgPool, imp_dname(im, name, "nhwc"), &xv, 1, rt, NULL, LOC_NONE);
		bool inc = imp_attr_i(n, "count_include_pad", 0) != 0;
		const int64_t *pv;
		long pc = imp_attr_ints(n, "pads", &pv);
		bool grew = pc >= 0 && (unsigned long)pc == 2 * win.nsp &&
			    (win.pads[2] != pv[win.nsp] || (win.nsp == 2 && win.pads[3] != pv[3]));
		if (inc && grew)
			return imp_op_err(im, "ceil_mode with count_include_pad is not supported");
		node_set_int(im->m, p, AN_count_include_pads, inc);
	}
	imp_win_set_attrs(im, p, &win, false);
	if (max && imp_out_used(im, 1) && imp_maxpool_indices(im, node_val(p, 1), x, win.nsp))
		return -1;
	return nchw_out(im, node_val(p, 0), win.nsp);
}

int imp_op_maxpool(struct importer *im, const onnx_node *n) { return pool(im, n, true, false); }
int imp_op_avgpool(struct importer *im, const onnx_node *n) { return pool(im, n, false, false); }
int imp_op_global_pool(struct importer *im, const onnx_node *n)
{
	return pool(im, n, strcmp(n->op_type, "GlobalMaxPool") == 0, true);
}

static bool extra_outputs_used(struct importer *im, unsigned from)
{
	for (unsigned i = from; i < im->node->n_output; i++)
		if (imp_out_used(im, i))
			return true;
	return false;
}

/* BatchNormalization and InstanceNormalization on channel axis 1 of x:
 * the node of kind with inputs 0 .. nops - 1 (x, then per-channel vectors
 * of shape [C], checked here) and the epsilon attribute; a NULL node after
 * reporting. */
static struct value channel_norm(struct importer *im, const onnx_node *n, const struct tensor *x, unsigned kind,
				 unsigned nops)
{
	struct value ops[5];
	for (unsigned i = 0; i < nops; i++) {
		ops[i] = imp_in_val(im, i);
		if (!ops[i].node)
			return no_value;
		if (i && (val_type(ops[i])->rank != 1 || val_type(ops[i])->dims[0] != x->dims[1])) {
			imp_op_err(im, "input %u must have shape [%llu]", i, (unsigned long long)x->dims[1]);
			return no_value;
		}
	}
	struct value r = imp_b_node(im, kind, imp_out_name(im, 0), ops, nops, val_type(ops[0]));
	if (!r.node)
		return r;
	node_set_int(im->m, r.node, AN_channel_idx, 1);
	node_set_float(im->m, r.node, AN_epsilon, imp_attr_f(n, "epsilon", 1e-5f));
	return r;
}

/* Input 0 of BatchNormalization and InstanceNormalization: floating point
 * and of rank min_rank at least, else "input must have MISSING" (what the
 * lower ranks lack). NULL after a diagnostic. */
static struct tensor *norm_input(struct importer *im, unsigned min_rank, const char *missing)
{
	struct tensor *x = imp_in_req(im, 0);
	if (!x || !imp_float_input(im, x))
		return NULL;
	if (x->rank < min_rank) {
		imp_op_err(im, "input must have %s", missing);
		return NULL;
	}
	return x;
}

int imp_op_batchnorm(struct importer *im, const onnx_node *n)
{
	struct tensor *x = norm_input(im, 2, "a channel dimension");
	if (!x)
		return -1;
	if (im->opset < 9 && imp_attr_i(n, "spatial", 1) == 0)
		return imp_op_err(im, "spatial = 0 is not supported");
	if (im->opset >= 14 && imp_attr_i(n, "training_mode", 0))
		return imp_batchnorm_training(im, n, x);
	if (imp_attr_i(n, "training_mode", 0) || extra_outputs_used(im, 1))
		return imp_op_err(im, "training mode (mean and variance outputs) is not supported");
	struct value r = channel_norm(im, n, x, NK_BatchNormalization, 5);
	if (!r.node)
		return -1;
	node_set_float(im->m, r.node, AN_momentum, imp_attr_f(n, "momentum", 0.9f));
	return imp_set_out(im, 0, r);
}

int imp_op_instancenorm(struct importer *im, const onnx_node *n)
{
	struct tensor *x = norm_input(im, 3, "spatial dimensions");
	if (!x)
		return -1;
	return imp_set_out(im, 0, channel_norm(im, n, x, NK_InstanceNormalization, 3));
}

/* LayerNormalization (opset 17): normalizes over dims [axis, rank); scale
 * and bias are broadcast to those dims. */
/* The Mean and InvStdDev outputs of LayerNormalization: over the
 * dimensions from axis on, mean = E[x] and 1 / sqrt(E[(x - mean)^2] + eps),
 * shaped like x with those dimensions 1. Computed on x viewed as
 * [outer, inner] with BatchedReduceMean. */
static int layernorm_stats(struct importer *im, struct value xv, unsigned axis, double eps)
{
	const struct type *xt = val_type(xv);
	uint64_t outer = 1, inner = 1, sd[GLOW_MAX_RANK];
	for (unsigned k = 0; k < xt->rank; k++) {
		sd[k] = k < axis ? xt->dims[k] : 1;
		if (k < axis)
			outer *= xt->dims[k];
		else
			inner *= xt->dims[k];
	}
	const char *mname = imp_out_used(im, 1) ? imp_out_name(im, 1) : imp_dname(im, imp_out_name(im, 0), "mean");
	uint64_t d2[2] = {outer, inner}, d1[1] = {outer}, dc[2] = {outer, 1};
	static const int64_t ax1[1] = {1};
	struct value x2 = imp_b_reshape(im, xv, d2, 2, imp_dname(im, mname, "rows"));
	struct value m1 = imp_b_node(im, NK_BatchedReduceMean, imp_dname(im, mname, "reduce"), &x2, 1,
				 type_with_dims(im->tc, xt, d1, 1));
	if (!m1.node)
		return -1;
	node_set_ints(im->m, m1.node, AN_axes, ax1, 1);
	if (imp_out_used(im, 1) && imp_set_out(im, 1, imp_b_reshape(im, m1, sd, xt->rank, mname)))
		return -1;
	if (!imp_out_used(im, 2))
		return 0;
	const char *iname = imp_out_name(im, 2);
	struct value mc = imp_b_reshape(im, m1, dc, 2, imp_dname(im, iname, "mean"));
	mc = imp_b_broadcast(im, mc, d2, 2, imp_dname(im, iname, "mean.bcast"));
	struct value ops[2] = {x2, mc};
	struct value dv = imp_b_node(im, NK_Sub, imp_dname(im, iname, "dev"), ops, 2, val_type(x2));
	ops[0] = dv, ops[1] = dv;
	struct value sq = imp_b_node(im, NK_Mul, imp_dname(im, iname, "sq"), ops, 2, dv.node ? val_type(dv) : NULL);
	struct value var = imp_b_node(im, NK_BatchedReduceMean, imp_dname(im, iname, "var"), &sq, 1,
				  type_with_dims(im->tc, xt, d1, 1));
	if (!var.node)
		return -1;
	node_set_ints(im->m, var.node, AN_axes, ax1, 1);
	ops[0] = var;
	ops[1] = imp_b_splat_const(im, imp_dname(im, iname, "eps"), val_type(var), eps);
	struct value ve = imp_b_node(im, NK_Add, imp_dname(im, iname, "vareps"), ops, 2, val_type(var));
	struct value inv = imp_b_unary(im, NK_Rsqrt, imp_dname(im, iname, "rsqrt"), ve);
	return imp_set_out(im, 2, imp_b_reshape(im, inv, sd, xt->rank, iname));
}

int imp_op_layernorm(struct importer *im, const onnx_node *n)
{
	struct tensor *x = imp_in_req(im, 0);
	if (!x || !imp_float_input(im, x))
		return -1;
	if (imp_attr_i(n, "stash_type", 1) != 1)
		return imp_op_err(im, "stash_type other than float is not supported");
	unsigned axis;
	if (imp_norm_axis(im, imp_attr_i(n, "axis", -1), x->rank, &axis))
		return -1;
	const char *name = imp_out_name(im, 0);
	const uint64_t *nd = x->dims + axis;
	unsigned nr = x->rank - axis;
	struct value xv = imp_tval(im, x);
	struct value sv = imp_b_broadcast(im, imp_in_val(im, 1), nd, nr, imp_dname(im, name, "scale"));
	struct value bv = imp_in_opt(im, 2) ? imp_b_broadcast(im, imp_in_val(im, 2), nd, nr, imp_dname(im, name, "bias"))
					: imp_b_splat_const(im, imp_dname(im, name, "bias"), imp_ty(im, imp_dt_elem(x->dtype), nd, nr), 0);
	struct value ops[3] = {xv, sv, bv};
	struct value r = imp_b_node(im, NK_LayerNormalization, name, ops, 3, xv.node ? val_type(xv) : NULL);
	if (!r.node)
		return -1;
	node_set_int(im->m, r.node, AN_axis, axis);
	node_set_float(im->m, r.node, AN_epsilon, imp_attr_f(n, "epsilon", 1e-5f));
	if (imp_set_out(im, 0, r))
		return -1;
	if (!imp_out_used(im, 1) && !imp_out_used(im, 2))
		return 0;
	return layernorm_stats(im, xv, axis, imp_attr_f(n, "epsilon", 1e-5f));
}

/* LRN across channels: NHWC, half window (size - 1) / 2; alpha as in ONNX
 * (the kind divides it by the window size). */
int imp_op_lrn(struct importer *im, const onnx_node *n)
{
	struct tensor *x = imp_in_req(im, 0);
	if (!x || !imp_float_input(im, x))
		return -1;
	if (x->rank != 4)
		return imp_op_err(im, "only 4-D inputs are supported");
	int64_t size = imp_attr_i(n, "size", 0);
	if (size < 1 || size % 2 == 0)
		return imp_op_err(im, "size %lld is not supported (odd sizes only)", (long long)size);
	const char *name = imp_out_name(im, 0);
	struct value xv = imp_b_to_nhwc(im, imp_tval(im, x), imp_dname(im, x->name, "nhwc"));
	struct value r = imp_b_unary(im, NK_LocalResponseNormalization, imp_dname(im, name, "nhwc"), xv);
	if (!r.node)
		return -1;
	node_set_int(im->m, r.node, AN_half_window_size, (size - 1) / 2);
	node_set_float(im->m, r.node, AN_alpha, imp_attr_f(n, "alpha", 1e-4f));
	node_set_float(im->m, r.node, AN_beta, imp_attr_f(n, "beta", 0.75f));
	node_set_float(im->m, r.node, AN_k, imp_attr_f(n, "bias", 1.0f));
	return imp_set_out(im, 0, imp_b_to_nchw(im, r, name));
}

static int space_depth(struct importer *im, const onnx_node *n, bool to_space)
{
	struct tensor *x = imp_in_req(im, 0);
	if (!x)
		return -1;
	if (x->rank != 4)
		return imp_op_err(im, "input must be 4-D");
	int64_t b = imp_attr_i(n, "blocksize", 0);
	if (b < 1)
		return imp_op_err(im, "blocksize must be positive");
	uint64_t ub = (uint64_t)b, dims[4];
	if (to_space) {
		if (x->dims[1] % (ub * ub))
			return imp_op_err(im, "channels are not divisible by blocksize^2");
		dims[0] = x->dims[0], dims[1] = x->dims[2] * ub, dims[2] = x->dims[3] * ub, dims[3] = x->dims[1] / (ub * ub);
	} else {
		if (x->dims[2] % ub || x->dims[3] % ub)
			return imp_op_err(im, "spatial dimensions are not divisible by blocksize");
		dims[0] = x->dims[0], dims[1] = x->dims[2] / ub, dims[2] = x->dims[3] / ub, dims[3] = x->dims[1] * ub * ub;
	}
	const char *name = imp_out_name(im, 0);
	struct value xv = imp_b_to_nhwc(im, imp_tval(im, x), imp_dname(im, x->name, "nhwc"));
	struct value r = imp_b_node(im, to_space ? NK_DepthToSpace : NK_SpaceToDepth, imp_dname(im, name, "nhwc"), &xv, 1,
				xv.node ? type_with_dims(im->tc, val_type(xv), dims, 4) : NULL);
	if (!r.node)
		return -1;
	node_set_int(im->m, r.node, AN_block_size, b);
	if (to_space) {
		const char *mode = imp_attr_s(im, n, "mode", "DCR");
		if (strcmp(mode, "DCR") != 0 && strcmp(mode, "CRD") != 0)
			return imp_op_err(im, "mode '%s' is not supported", mode);
		node_set_int(im->m, r.node, AN_mode, mode[0] == 'C');
	}
	return imp_set_out(im, 0, imp_b_to_nchw(im, r, name));
}

int imp_op_depth_to_space(struct importer *im, const onnx_node *n) { return space_depth(im, n, true); }
int imp_op_space_to_depth(struct importer *im, const onnx_node *n) { return space_depth(im, n, false); }
