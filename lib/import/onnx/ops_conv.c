/* ops_conv.c - translators of convolutions, pools, normalizations and
 * resampling.
 *
 * ONNX images are NCHW, the graph IR's convolution and pool kinds NHWC with
 * filters OC x KH x KW x IC/group: inputs and filters go through Transpose
 * nodes ("<name>.nhwc"), the NHWC result is "<out>.nhwc" and a Transpose
 * back to NCHW carries the ONNX output name; the optimizer cancels the pairs
 * between consecutive layers. 1-D convolutions and pools are 2-D ones with a
 * width of 1; 3-D windows, dilated pools and MaxPool's Indices output are
 * built in ops_3d.c. Normalizations take the channel index as an attribute and
 * work on NCHW directly.
 */
#include "import/onnx/internal.h"

#include <math.h>
#include <string.h>

static const struct value no_value = {NULL, 0};

#define RESIZE_MAX_TAPS 4

/* Spatial parameters of a 1-D or 2-D window, always as 2-D (a 1-D window has
 * width 1). */
struct window {
	unsigned nsp;          /* spatial dims in the ONNX input: 1 or 2 */
	int64_t k[2], s[2], d[2];
	int64_t pads[4];       /* top, left, bottom, right */
	uint64_t in[2], out[2];
};

static int read_pair(struct importer *im, const onnx_node *n, const char *name, unsigned nsp, int64_t *v,
		     int64_t def)
{
	const int64_t *a;
	long c = attr_ints(n, name, &a);
	v[0] = v[1] = def;
	if (c < 0)
		return 0;
	if ((unsigned long)c != nsp)
		return op_err(im, "%s has %ld entries for %u spatial dimensions", name, c, nsp);
	for (unsigned i = 0; i < nsp; i++) {
		if (a[i] < (def == 0 ? 0 : 1))
			return op_err(im, "bad %s value %lld", name, (long long)a[i]);
		v[i] = a[i];
	}
	return 0;
}

/* Reads kernel, strides, dilations and pads (with auto_pad) and computes
 * the output size; transposed: the ConvTranspose formulas. ceil: ceil_mode. */
static int window_params(struct importer *im, const onnx_node *n, const struct tensor *x, const int64_t *kdef,
			 struct window *w, bool transposed)
{
	if (x->rank != 3 && x->rank != 4)
		return op_err(im, "only 1-D and 2-D windows are supported (input rank %u)", x->rank);
	w->nsp = x->rank - 2;
	w->in[0] = x->dims[2];
	w->in[1] = w->nsp == 2 ? x->dims[3] : 1;
	const int64_t *kv;
	long kc = attr_ints(n, "kernel_shape", &kv);
	if (kc < 0 && !kdef)
		return op_err(im, "kernel_shape is required");
	if (read_pair(im, n, "kernel_shape", w->nsp, w->k, 1) || read_pair(im, n, "strides", w->nsp, w->s, 1) ||
	    read_pair(im, n, "dilations", w->nsp, w->d, 1))
		return -1;
	if (kc < 0)
		for (unsigned i = 0; i < w->nsp; i++)
			w->k[i] = kdef[i];
	const int64_t *pv;
	long pc = attr_ints(n, "pads", &pv);
	memset(w->pads, 0, sizeof w->pads);
	if (pc >= 0) {
		if ((unsigned long)pc != 2 * w->nsp)
			return op_err(im, "pads has %ld entries for %u spatial dimensions", pc, w->nsp);
		for (unsigned i = 0; i < w->nsp; i++) {
			if (pv[i] < 0 || pv[i + w->nsp] < 0)
				return op_err(im, "negative pads are not supported");
			w->pads[i] = pv[i];
			w->pads[i + 2] = pv[i + w->nsp];
		}
	}
	const char *ap = attr_s(im, n, "auto_pad", "NOTSET");
	bool same = strcmp(ap, "SAME_UPPER") == 0 || strcmp(ap, "SAME_LOWER") == 0;
	if (!same && strcmp(ap, "NOTSET") != 0 && strcmp(ap, "VALID") != 0)
		return op_err(im, "auto_pad '%s' is not supported", ap);
	if (strcmp(ap, "VALID") == 0)
		memset(w->pads, 0, sizeof w->pads);
	bool ceil_mode = attr_i(n, "ceil_mode", 0) != 0;
	for (unsigned i = 0; i < 2; i++) {
		int64_t in = (int64_t)w->in[i], ek = (w->k[i] - 1) * w->d[i] + 1, s = w->s[i];
		if (transposed) {
			if (same) {
				int64_t total = s * (in - 1) + ek - in * s;
				total = total < 0 ? 0 : total;
				bool upper = ap[5] == 'U';
				w->pads[i] = upper ? total / 2 : total - total / 2;
				w->pads[i + 2] = total - w->pads[i];
			}
			int64_t o = s * (in - 1) + ek - w->pads[i] - w->pads[i + 2];
			if (o < 1)
				return op_err(im, "empty output");
			w->out[i] = (uint64_t)o;
			continue;
		}
		if (same) {
			int64_t o = (in + s - 1) / s, total = (o - 1) * s + ek - in;
			total = total < 0 ? 0 : total;
			bool upper = ap[5] == 'U';
			w->pads[i] = upper ? total / 2 : total - total / 2;
			w->pads[i + 2] = total - w->pads[i];
		}
		int64_t span = in + w->pads[i] + w->pads[i + 2] - ek;
		if (span < 0)
			return op_err(im, "the window is larger than the padded input");
		int64_t o = span / s + 1;
		if (ceil_mode && span % s) {
			o = (span + s - 1) / s + 1;
			if ((o - 1) * s >= in + w->pads[i]) /* the last window must start inside */
				o--;
			/* grow the end padding so that floor division gives o */
			int64_t need = (o - 1) * s + ek - in - w->pads[i];
			if (need > w->pads[i + 2])
				w->pads[i + 2] = need;
		}
		w->out[i] = (uint64_t)o;
	}
	return 0;
}

/* x (N, C, L) -> (N, C, L, 1) for 1-D windows */
static struct value as_4d(struct importer *im, struct value x, const char *name)
{
	if (!x.node || val_type(x)->rank == 4)
		return x;
	const struct type *t = val_type(x);
	uint64_t dims[4] = {t->dims[0], t->dims[1], t->dims[2], 1};
	return b_reshape(im, x, dims, 4, name);
}

/* The NHWC result r of an operator becomes the NCHW output 0 (of rank 3 for
 * 1-D windows). */
static int nchw_out(struct importer *im, struct value r, unsigned nsp)
{
	const char *name = out_name(im, 0);
	if (nsp == 2)
		return set_out(im, 0, b_to_nchw(im, r, name));
	struct value t = b_to_nchw(im, r, dname(im, name, "nchw"));
	if (!t.node)
		return -1;
	const struct type *tt = val_type(t);
	uint64_t dims[3] = {tt->dims[0], tt->dims[1], tt->dims[2]};
	return set_out(im, 0, b_reshape(im, t, dims, 3, name));
}

static void set_window(struct importer *im, struct node *nd, const struct window *w, bool dil)
{
	node_set_ints(im->m, nd, "kernels", w->k, 2);
	node_set_ints(im->m, nd, "strides", w->s, 2);
	node_set_ints(im->m, nd, "pads", w->pads, 4);
	if (dil)
		node_set_ints(im->m, nd, "dilation", w->d, 2);
}

static bool is_float_input(struct importer *im, const struct tensor *x)
{
	if (!dt_is_float(x->dtype) || dt_elem(x->dtype) < 0) {
		op_err(im, "input must be floating point, not %s", dt_name(x->dtype));
		return false;
	}
	return true;
}

/* The NHWC filter: reshaped to 4-D for 1-D convolutions, then transposed. */
static struct value nhwc_filter(struct importer *im, struct tensor *w)
{
	struct value v = as_4d(im, tval(im, w), dname(im, w->name, "4d"));
	return b_to_nhwc(im, v, dname(im, w->name, "nhwc"));
}

static struct value bias_or_zero(struct importer *im, unsigned i, uint64_t oc, int elem)
{
	struct tensor *b = in_opt(im, i);
	if (b) {
		if (b->rank != 1 || b->dims[0] != oc) {
			op_err(im, "bias must have shape [%llu]", (unsigned long long)oc);
			return no_value;
		}
		return tval(im, b);
	}
	return b_splat_const(im, dname(im, out_name(im, 0), "bias"), ty(im, elem, &oc, 1), 0);
}

int op_conv(struct importer *im, const onnx_node *n)
{
	struct tensor *x = in_req(im, 0), *w = in_req(im, 1);
	if (!x || !w || !is_float_input(im, x))
		return -1;
	if (x->rank == 5)
		return op_conv_3d(im, n);
	if (w->rank != x->rank)
		return op_err(im, "weights have rank %u for a rank-%u input", w->rank, x->rank);
	struct window win;
	int64_t kdef[2] = {(int64_t)w->dims[2], w->rank == 4 ? (int64_t)w->dims[3] : 1};
	if (window_params(im, n, x, kdef, &win, false))
		return -1;
	int64_t g = attr_i(n, "group", 1);
	uint64_t oc = w->dims[0];
	if (g < 1 || x->dims[1] % (uint64_t)g || oc % (uint64_t)g || w->dims[1] * (uint64_t)g != x->dims[1])
		return op_err(im, "group %lld does not fit %llu input and %llu output channels", (long long)g,
			      (unsigned long long)x->dims[1], (unsigned long long)oc);
	if ((uint64_t)win.k[0] != w->dims[2] || (w->rank == 4 && (uint64_t)win.k[1] != w->dims[3]))
		return op_err(im, "kernel_shape does not match the weights");
	const char *name = out_name(im, 0);
	int elem = dt_elem(x->dtype);
	struct value xv = as_4d(im, tval(im, x), dname(im, x->name, "4d"));
	struct value ops[3] = {b_to_nhwc(im, xv, dname(im, x->name, "nhwc")), nhwc_filter(im, w),
			       bias_or_zero(im, 2, oc, elem)};
	uint64_t dims[4] = {x->dims[0], win.out[0], win.out[1], oc};
	struct value r = b_node(im, NK_Convolution, dname(im, name, "nhwc"), ops, 3, ty(im, elem, dims, 4));
	if (!r.node)
		return -1;
	set_window(im, r.node, &win, true);
	node_set_int(im->m, r.node, "group", g);
	return nchw_out(im, r, win.nsp);
}

int op_conv_transpose(struct importer *im, const onnx_node *n)
{
	struct tensor *x = in_req(im, 0), *w = in_req(im, 1);
	if (!x || !w || !is_float_input(im, x))
		return -1;
	if (x->rank == 5)
		return op_conv_transpose_3d(im, n);
	if (w->rank != x->rank)
		return op_err(im, "weights have rank %u for a rank-%u input", w->rank, x->rank);
	struct window win;
	int64_t kdef[2] = {(int64_t)w->dims[2], w->rank == 4 ? (int64_t)w->dims[3] : 1};
	if (window_params(im, n, x, kdef, &win, true))
		return -1;
	/* output_padding adds rows at the end: less end padding, and where
	 * there is none left, rows that only the bias reaches (ext, added by a
	 * Pad of the result before the bias). output_shape sets the total
	 * padding s*(in-1) + output_padding + d*(k-1) + 1 - output_shape,
	 * split as ONNX does (floor halves; SAME_UPPER puts the larger half at
	 * the end); a negative end pad extends the output the same way. */
	int64_t op[2] = {0, 0}, ext[2] = {0, 0};
	if (read_pair(im, n, "output_padding", win.nsp, op, 0))
		return -1;
	const int64_t *osv;
	long osc = attr_ints(n, "output_shape", &osv);
	if (osc >= 0 && (unsigned long)osc != win.nsp)
		return op_err(im, "output_shape has %ld entries for %u spatial dimensions", osc, win.nsp);
	bool upper = strcmp(attr_s(im, n, "auto_pad", "NOTSET"), "SAME_UPPER") == 0;
	for (unsigned i = 0; i < 2; i++) {
		int64_t full = win.s[i] * ((int64_t)win.in[i] - 1) + (win.k[i] - 1) * win.d[i] + 1;
		if (osc >= 0 && i < win.nsp) {
			int64_t total = full + op[i] - osv[i];
			int64_t half = total >= 0 ? total / 2 : -((1 - total) / 2);
			win.pads[i] = upper ? half : total - half;
			win.pads[i + 2] = total - win.pads[i];
		}
		win.pads[i + 2] -= op[i];
		if (win.pads[i] < 0)
			return op_err(im, "output_shape needs padding before the start, which is not supported");
		if (win.pads[i + 2] < 0) {
			ext[i] = -win.pads[i + 2];
			win.pads[i + 2] = 0;
		}
		int64_t o = full - win.pads[i] - win.pads[i + 2];
		if (o < 1)
			return op_err(im, "empty output");
		win.out[i] = (uint64_t)o;
	}
	int64_t g = attr_i(n, "group", 1);
	uint64_t ic = w->dims[0];
	if (g < 1 || ic != x->dims[1] || ic % (uint64_t)g)
		return op_err(im, "group %lld does not fit the weights", (long long)g);
	uint64_t ocg = w->dims[1], icg = ic / (uint64_t)g, oc = ocg * (uint64_t)g;
	uint64_t kh = w->dims[2], kw = w->rank == 4 ? w->dims[3] : 1;
	const char *name = out_name(im, 0);
	int elem = dt_elem(x->dtype);
	/* (IC, OC/g, KH, KW) -> (g, IC/g, OC/g, KH, KW) -> (g, OC/g, KH, KW, IC/g) -> (OC, KH, KW, IC/g) */
	uint64_t d5[5] = {(uint64_t)g, icg, ocg, kh, kw};
	static const unsigned perm5[5] = {0, 2, 3, 4, 1};
	uint64_t d4[4] = {oc, kh, kw, icg};
	struct value fv = b_reshape(im, tval(im, w), d5, 5, dname(im, w->name, "groups"));
	fv = b_transpose(im, fv, perm5, dname(im, w->name, "t"));
	fv = b_reshape(im, fv, d4, 4, dname(im, w->name, "nhwc"));
	struct value xv = as_4d(im, tval(im, x), dname(im, x->name, "4d"));
	bool extend = ext[0] || ext[1];
	struct value xn = b_to_nhwc(im, xv, dname(im, x->name, "nhwc"));
	struct value bias = bias_or_zero(im, 2, oc, elem);
	struct value ops[3] = {xn, fv, bias};
	if (extend && in_opt(im, 2))
		ops[2] = b_splat_const(im, dname(im, name, "nobias"), ty(im, elem, &oc, 1), 0);
	uint64_t dims[4] = {x->dims[0], win.out[0], win.out[1], oc};
	struct value r = b_node(im, NK_ConvTranspose, dname(im, name, extend ? "core" : "nhwc"), ops, 3,
				ty(im, elem, dims, 4));
	if (!r.node)
		return -1;
	set_window(im, r.node, &win, true);
	node_set_int(im->m, r.node, "group", g);
	if (extend) {
		int64_t pads[8] = {0, 0, 0, 0, 0, ext[0], ext[1], 0};
		dims[1] += (uint64_t)ext[0];
		dims[2] += (uint64_t)ext[1];
		const struct type *et = ty(im, elem, dims, 4);
		bool biased = in_opt(im, 2) != NULL;
		r = b_node(im, NK_Pad, dname(im, name, biased ? "ext" : "nhwc"), &r, 1, et);
		if (r.node)
			node_set_ints(im->m, r.node, "pads", pads, 8);
		if (biased) {
			struct value bb = b_broadcast(im, bias, dims, 4, dname(im, name, "biasb"));
			struct value add[2] = {r, bb};
			r = b_node(im, NK_Add, dname(im, name, "nhwc"), add, 2, et);
		}
		if (!r.node)
			return -1;
	}
	return nchw_out(im, r, win.nsp);
}

static int pool(struct importer *im, const onnx_node *n, bool max, bool global)
{
	struct tensor *x = in_req(im, 0);
	if (!x || !is_float_input(im, x))
		return -1;
	struct window win;
	if (global) {
		if (x->rank != 3 && x->rank != 4)
			return op_err(im, "only 1-D and 2-D pools are supported (input rank %u)", x->rank);
		memset(&win, 0, sizeof win);
		win.nsp = x->rank - 2;
		win.k[0] = (int64_t)x->dims[2];
		win.k[1] = x->rank == 4 ? (int64_t)x->dims[3] : 1;
		win.s[0] = win.s[1] = win.d[0] = win.d[1] = 1;
		win.out[0] = win.out[1] = 1;
	} else {
		const int64_t *dv;
		long dc = attr_ints(n, "dilations", &dv);
		bool dilated = false;
		for (long i = 0; i < dc; i++)
			dilated |= dv[i] != 1;
		if (x->rank == 5 || dilated)
			return op_pool_nd(im, n, max);
		if (window_params(im, n, x, NULL, &win, false))
			return -1;
	}
	const char *name = out_name(im, 0);
	int elem = dt_elem(x->dtype);
	struct value xv = as_4d(im, tval(im, x), dname(im, x->name, "4d"));
	xv = b_to_nhwc(im, xv, dname(im, x->name, "nhwc"));
	uint64_t dims[4] = {x->dims[0], win.out[0], win.out[1], x->dims[1]};
	const struct type *rt = ty(im, elem, dims, 4);
	if (!rt || !xv.node)
		return -1;
	struct node *p;
	if (max) {
		const struct type *types[2] = {rt, ty(im, EK_INDEX64, dims, 4)};
		p = node_create(im->f, NK_MaxPool, dname(im, name, "nhwc"), &xv, 1, types, NULL, LOC_NONE);
	} else {
		p = node_create1(im->f, NK_AvgPool, dname(im, name, "nhwc"), &xv, 1, rt, NULL, LOC_NONE);
		bool inc = attr_i(n, "count_include_pad", 0) != 0;
		const int64_t *pv;
		long pc = attr_ints(n, "pads", &pv);
		bool grew = pc >= 0 && (unsigned long)pc == 2 * win.nsp &&
			    (win.pads[2] != pv[win.nsp] || (win.nsp == 2 && win.pads[3] != pv[3]));
		if (inc && grew)
			return op_err(im, "ceil_mode with count_include_pad is not supported");
		node_set_int(im->m, p, "count_include_pads", inc);
	}
	set_window(im, p, &win, false);
	if (max && out_used(im, 1) && maxpool_indices(im, node_val(p, 1), x, win.nsp))
		return -1;
	return nchw_out(im, node_val(p, 0), win.nsp);
}

int op_maxpool(struct importer *im, const onnx_node *n) { return pool(im, n, true, false); }
int op_avgpool(struct importer *im, const onnx_node *n) { return pool(im, n, false, false); }
int op_global_pool(struct importer *im, const onnx_node *n)
{
	return pool(im, n, strcmp(n->op_type, "GlobalMaxPool") == 0, true);
}

static bool extra_outputs_used(struct importer *im, unsigned from)
{
	for (unsigned i = from; i < im->node->n_output; i++)
		if (out_used(im, i))
			return true;
	return false;
}

int op_batchnorm(struct importer *im, const onnx_node *n)
{
	struct tensor *x = in_req(im, 0);
	if (!x || !is_float_input(im, x))
		return -1;
	if (x->rank < 2)
		return op_err(im, "input must have a channel dimension");
	if (im->opset < 9 && attr_i(n, "spatial", 1) == 0)
		return op_err(im, "spatial = 0 is not supported");
	if (im->opset >= 14 && attr_i(n, "training_mode", 0))
		return batchnorm_training(im, n, x);
	if (attr_i(n, "training_mode", 0) || extra_outputs_used(im, 1))
		return op_err(im, "training mode (mean and variance outputs) is not supported");
	struct value ops[5];
	for (unsigned i = 0; i < 5; i++) {
		ops[i] = in_val(im, i);
		if (!ops[i].node)
			return -1;
		if (i && (val_type(ops[i])->rank != 1 || val_type(ops[i])->dims[0] != x->dims[1]))
			return op_err(im, "input %u must have shape [%llu]", i, (unsigned long long)x->dims[1]);
	}
	struct value r = b_node(im, NK_BatchNormalization, out_name(im, 0), ops, 5, val_type(ops[0]));
	if (!r.node)
		return -1;
	node_set_int(im->m, r.node, "channel_idx", 1);
	node_set_float(im->m, r.node, "epsilon", attr_f(n, "epsilon", 1e-5f));
	node_set_float(im->m, r.node, "momentum", attr_f(n, "momentum", 0.9f));
	return set_out(im, 0, r);
}

int op_instancenorm(struct importer *im, const onnx_node *n)
{
	struct tensor *x = in_req(im, 0);
	if (!x || !is_float_input(im, x))
		return -1;
	if (x->rank < 3)
		return op_err(im, "input must have spatial dimensions");
	struct value ops[3];
	for (unsigned i = 0; i < 3; i++) {
		ops[i] = in_val(im, i);
		if (!ops[i].node)
			return -1;
		if (i && (val_type(ops[i])->rank != 1 || val_type(ops[i])->dims[0] != x->dims[1]))
			return op_err(im, "input %u must have shape [%llu]", i, (unsigned long long)x->dims[1]);
	}
	struct value r = b_node(im, NK_InstanceNormalization, out_name(im, 0), ops, 3, val_type(ops[0]));
	if (!r.node)
		return -1;
	node_set_int(im->m, r.node, "channel_idx", 1);
	node_set_float(im->m, r.node, "epsilon", attr_f(n, "epsilon", 1e-5f));
	return set_out(im, 0, r);
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
	const char *mname = out_used(im, 1) ? out_name(im, 1) : dname(im, out_name(im, 0), "mean");
	uint64_t d2[2] = {outer, inner}, d1[1] = {outer}, dc[2] = {outer, 1};
	static const int64_t ax1[1] = {1};
	struct value x2 = b_reshape(im, xv, d2, 2, dname(im, mname, "rows"));
	struct value m1 = b_node(im, NK_BatchedReduceMean, dname(im, mname, "reduce"), &x2, 1,
				 type_with_dims(im->tc, xt, d1, 1));
	if (!m1.node)
		return -1;
	node_set_ints(im->m, m1.node, "axes", ax1, 1);
	if (out_used(im, 1) && set_out(im, 1, b_reshape(im, m1, sd, xt->rank, mname)))
		return -1;
	if (!out_used(im, 2))
		return 0;
	const char *iname = out_name(im, 2);
	struct value mc = b_reshape(im, m1, dc, 2, dname(im, iname, "mean"));
	mc = b_broadcast(im, mc, d2, 2, dname(im, iname, "mean.bcast"));
	struct value ops[2] = {x2, mc};
	struct value dv = b_node(im, NK_Sub, dname(im, iname, "dev"), ops, 2, val_type(x2));
	ops[0] = dv, ops[1] = dv;
	struct value sq = b_node(im, NK_Mul, dname(im, iname, "sq"), ops, 2, dv.node ? val_type(dv) : NULL);
	struct value var = b_node(im, NK_BatchedReduceMean, dname(im, iname, "var"), &sq, 1,
				  type_with_dims(im->tc, xt, d1, 1));
	if (!var.node)
		return -1;
	node_set_ints(im->m, var.node, "axes", ax1, 1);
	ops[0] = var;
	ops[1] = b_splat_const(im, dname(im, iname, "eps"), val_type(var), eps);
	struct value ve = b_node(im, NK_Add, dname(im, iname, "vareps"), ops, 2, val_type(var));
	struct value inv = b_unary(im, NK_Rsqrt, dname(im, iname, "rsqrt"), ve);
	return set_out(im, 2, b_reshape(im, inv, sd, xt->rank, iname));
}

int op_layernorm(struct importer *im, const onnx_node *n)
{
	struct tensor *x = in_req(im, 0);
	if (!x || !is_float_input(im, x))
		return -1;
	if (attr_i(n, "stash_type", 1) != 1)
		return op_err(im, "stash_type other than float is not supported");
	unsigned axis;
	if (norm_axis(im, attr_i(n, "axis", -1), x->rank, &axis))
		return -1;
	const char *name = out_name(im, 0);
	const uint64_t *nd = x->dims + axis;
	unsigned nr = x->rank - axis;
	struct value xv = tval(im, x);
	struct value sv = b_broadcast(im, in_val(im, 1), nd, nr, dname(im, name, "scale"));
	struct value bv = in_opt(im, 2) ? b_broadcast(im, in_val(im, 2), nd, nr, dname(im, name, "bias"))
					: b_splat_const(im, dname(im, name, "bias"), ty(im, dt_elem(x->dtype), nd, nr), 0);
	struct value ops[3] = {xv, sv, bv};
	struct value r = b_node(im, NK_LayerNormalization, name, ops, 3, xv.node ? val_type(xv) : NULL);
	if (!r.node)
		return -1;
	node_set_int(im->m, r.node, "axis", axis);
	node_set_float(im->m, r.node, "epsilon", attr_f(n, "epsilon", 1e-5f));
	if (set_out(im, 0, r))
		return -1;
	if (!out_used(im, 1) && !out_used(im, 2))
		return 0;
	return layernorm_stats(im, xv, axis, attr_f(n, "epsilon", 1e-5f));
}

/* LRN across channels: NHWC, half window (size - 1) / 2; alpha as in ONNX
 * (the kind divides it by the window size). */
int op_lrn(struct importer *im, const onnx_node *n)
{
	struct tensor *x = in_req(im, 0);
	if (!x || !is_float_input(im, x))
		return -1;
	if (x->rank != 4)
		return op_err(im, "only 4-D inputs are supported");
	int64_t size = attr_i(n, "size", 0);
	if (size < 1 || size % 2 == 0)
		return op_err(im, "size %lld is not supported (odd sizes only)", (long long)size);
	const char *name = out_name(im, 0);
	struct value xv = b_to_nhwc(im, tval(im, x), dname(im, x->name, "nhwc"));
	struct value r = b_unary(im, NK_LocalResponseNormalization, dname(im, name, "nhwc"), xv);
	if (!r.node)
		return -1;
	node_set_int(im->m, r.node, "half_window_size", (size - 1) / 2);
	node_set_float(im->m, r.node, "alpha", attr_f(n, "alpha", 1e-4f));
	node_set_float(im->m, r.node, "beta", attr_f(n, "beta", 0.75f));
	node_set_float(im->m, r.node, "k", attr_f(n, "bias", 1.0f));
	return set_out(im, 0, b_to_nchw(im, r, name));
}

/* ---- Resize as gathers along each axis ----
 *
 * Every ONNX resampling is separable: along one axis, output position i
 * reads at most four input positions with weights that depend only on i
 * (the shapes, scales and roi are known at import). So a Resize whose mode
 * has no node kind becomes, per resized axis, a Gather of each tap's input
 * indices, a Mul by the tap's weights (broadcast along the axis) and the
 * sum of the taps. The coefficients follow ONNX's reference resampler: the
 * n nearest positions of the edge-padded input (pad ceil(n/2), ties to the
 * lower index), linear [1-r, r], cubic with coefficient A, nearest by
 * nearest_mode, exclude_outside renormalizing the taps inside the input,
 * tf_crop_and_resize giving extrapolation_value outside [0, in-1]. The
 * weights of a position sum to 1, so an extrapolated value survives the
 * later axes unchanged. */

enum { RS_NEAREST, RS_LINEAR, RS_CUBIC };

struct resize_spec {
	int mode;
	const char *ctm, *nearest_mode;
	double cubic_a;
	bool exclude_outside;
};

/* The source coordinate of output position i along an axis of in input
 * positions at scale s (ow = s * in, a real number as in ONNX's reference);
 * *outside for tf_crop_and_resize positions outside the input. */
static double resize_coord(const struct resize_spec *sp, uint64_t i, uint64_t in, double s, double lo, double hi,
			   bool *outside)
{
	double x = (double)i, ow = s * (double)in, li = (double)in - 1, xo;
	*outside = false;
	if (strcmp(sp->ctm, "align_corners") == 0) {
		xo = ow == 1 ? 0 : x * li / (ow - 1);
	} else if (strcmp(sp->ctm, "asymmetric") == 0) {
		xo = x / s;
	} else if (strcmp(sp->ctm, "tf_crop_and_resize") == 0) {
		xo = ow == 1 ? (hi - lo) * li / 2 : x * (hi - lo) * li / (ow - 1);
		xo += lo * li;
		*outside = xo < 0 || xo > li;
	} else if (strcmp(sp->ctm, "pytorch_half_pixel") == 0) {
		xo = ow == 1 ? -0.5 : (x + 0.5) / s - 0.5;
	} else if (strcmp(sp->ctm, "tf_half_pixel_for_nn") == 0) {
		xo = (x + 0.5) / s;
	} else {
		xo = (x + 0.5) / s - 0.5;
	}
	return xo;
}

/* The taps of one output position at source coordinate xo: n input indices
 * (clamped to the input) and their weights. */
static void resize_taps(const struct resize_spec *sp, double xo, uint64_t in, unsigned n, int64_t *idx, double *w)
{
	double fl = floor(xo);
	double r = xo == fl ? 1 : xo - fl;
	if (sp->mode == RS_CUBIC) {
		double a = sp->cubic_a, p = r + 1, q = 1 - r, u = 2 - r;
		w[0] = ((a * p - 5 * a) * p + 8 * a) * p - 4 * a;
		w[1] = ((a + 2) * r - (a + 3)) * r * r + 1;
		w[2] = ((a + 2) * q - (a + 3)) * q * q + 1;
		w[3] = ((a * u - 5 * a) * u + 8 * a) * u - 4 * a;
	} else if (sp->mode == RS_LINEAR) {
		w[0] = 1 - r, w[1] = r;
	} else if (xo == fl) {
		w[0] = 0, w[1] = 1;
	} else {
		const char *m = sp->nearest_mode;
		bool up = strcmp(m, "ceil") == 0 ? true
			: strcmp(m, "floor") == 0 ? false
			: strcmp(m, "round_prefer_ceil") == 0 ? r >= 0.5 : r > 0.5;
		w[0] = up ? 0 : 1, w[1] = up ? 1 : 0;
	}
	/* the n positions of the padded input nearest to xo, ascending */
	int64_t pad = (int64_t)(n + 1) / 2, len = (int64_t)in + 2 * pad;
	double xp = xo + (double)pad;
	int64_t c = xp < 0 ? 0 : xp > (double)(len - 1) ? len - 1 : (int64_t)floor(xp);
	int64_t lo = c - (int64_t)n - 1 < 0 ? 0 : c - (int64_t)n - 1;
	int64_t hi = c + (int64_t)n + 1 > len - 1 ? len - 1 : c + (int64_t)n + 1;
	/* at most 2n + 3 candidates: sort by (distance, index), keep n, then
	 * put those in ascending order */
	int64_t pick[2 * RESIZE_MAX_TAPS + 3];
	unsigned got = 0;
	for (int64_t j = lo; j <= hi; j++) {
		unsigned at = got++;
		while (at > 0 && fabs(xp - (double)j) < fabs(xp - (double)pick[at - 1])) {
			pick[at] = pick[at - 1];
			at--;
		}
		pick[at] = j;
	}
	if (got > n)
		got = n;
	for (unsigned a = 1; a < got; a++)
		for (unsigned b = a; b > 0 && pick[b - 1] > pick[b]; b--) {
			int64_t t = pick[b];
			pick[b] = pick[b - 1], pick[b - 1] = t;
		}
	double sum = 0;
	for (unsigned t = 0; t < n; t++) {
		int64_t j = t < got ? pick[t] - pad : 0;
		if (sp->exclude_outside && (j < 0 || j >= (int64_t)in))
			w[t] = 0;
		sum += w[t];
		idx[t] = j < 0 ? 0 : j >= (int64_t)in ? (int64_t)in - 1 : j;
	}
	if (sp->exclude_outside && sum != 0)
		for (unsigned t = 0; t < n; t++)
			w[t] /= sum;
}

/* An output dimension of Resize from its real value: a whole number from 0
 * to RESIZE_MAX_DIM, checked before it is converted (a float out of the
 * integer's range converts to nothing defined) and before tables of its
 * length are built. Reports and returns -1 otherwise. */
#define RESIZE_MAX_DIM ((uint64_t)1 << 24)
#define RESIZE_MAX_TABLE ((uint64_t)1 << 20)
static int resize_dim(struct importer *im, double d, uint64_t *out)
{
	if (!(d >= 0) || d > (double)RESIZE_MAX_DIM)
		return op_err(im, "output dimension %g is out of range (0 to %llu)", d,
			      (unsigned long long)RESIZE_MAX_DIM);
	*out = (uint64_t)d;
	return 0;
}

/* Resamples x along every axis whose mapping is not the identity. */
static struct value resize_gathers(struct importer *im, const struct resize_spec *sp, struct tensor *x,
				   const double *scales, const uint64_t *dims, const double *roi, double extrap,
				   const char *name)
{
	unsigned rank = x->rank, n = sp->mode == RS_CUBIC ? 4 : 2;
	struct value cur = tval(im, x);
	uint64_t cd[GLOW_MAX_RANK];
	memcpy(cd, x->dims, rank * sizeof *cd);
	for (unsigned k = 0; k < rank && cur.node; k++) {
		uint64_t in = x->dims[k], out = dims[k];
		/* the tables become constants of the module: a resampled axis
		 * longer than any image or signal a model resizes is refused
		 * rather than written out as hundreds of megabytes of weights */
		if (out > RESIZE_MAX_TABLE) {
			op_err(im, "resampling axis %u to %llu elements needs tables larger than %llu entries", k,
			       (unsigned long long)out, (unsigned long long)RESIZE_MAX_TABLE);
			return no_value;
		}
		int64_t *idx = arena_alloc(&im->scratch, (n * out + 1) * sizeof *idx);
		double *w = arena_alloc(&im->scratch, (n * out + 1) * sizeof *w);
		double *ext = arena_alloc(&im->scratch, (out + 1) * sizeof *ext);
		bool ident = in == out, any_out = false;
		for (uint64_t i = 0; i < out; i++) {
			bool outside;
			double xo = resize_coord(sp, i, in, scales[k], roi ? roi[k] : 0, roi ? roi[rank + k] : 1,
						 &outside);
			int64_t ti[RESIZE_MAX_TAPS];
			double tw[RESIZE_MAX_TAPS];
			resize_taps(sp, xo, in, n, ti, tw);
			ext[i] = outside ? extrap : 0;
			any_out |= outside && extrap != 0;
			for (unsigned t = 0; t < n; t++) {
				idx[t * out + i] = ti[t];
				w[t * out + i] = outside ? 0 : tw[t];
				if (w[t * out + i] != 0 && (ti[t] != (int64_t)i || w[t * out + i] != 1))
					ident = false;
			}
			ident &= !outside;
		}
		if (ident)
			continue;
		uint64_t od[GLOW_MAX_RANK], wd[GLOW_MAX_RANK];
		for (unsigned j = 0; j < rank; j++)
			od[j] = cd[j], wd[j] = 1;
		od[k] = wd[k] = out;
		const struct type *gt = type_with_dims(im->tc, val_type(cur), od, rank);
		struct value acc = no_value;
		bool have = false;
		for (unsigned t = 0; t < n && (!have || acc.node); t++) {
			bool zero = true, ones = true;
			for (uint64_t i = 0; i < out; i++)
				zero &= w[t * out + i] == 0, ones &= w[t * out + i] == 1;
			if (zero)
				continue;
			struct tensor *it = t_from_ints(im, dname(im, name, "idx"), DT_INT64, 1, &out, idx + t * out);
			struct value ops[2] = {cur, tval(im, it)};
			struct value g = b_node(im, NK_Gather, dname(im, name, "tap"), ops, 2, gt);
			if (!g.node)
				return no_value;
			node_set_int(im->m, g.node, "axis", k);
			if (!ones) {
				struct tensor *wt = t_from_floats(im, dname(im, name, "w"), x->dtype, rank, wd, w + t * out);
				struct value m[2] = {g, b_broadcast(im, tval(im, wt), od, rank, dname(im, name, "wb"))};
				g = b_node(im, NK_Mul, dname(im, name, "wtap"), m, 2, gt);
			}
			if (have) {
				struct value a[2] = {acc, g};
				acc = b_node(im, NK_Add, dname(im, name, "sum"), a, 2, gt);
			} else {
				acc = g, have = true;
			}
		}
		if (!have)
			acc = b_splat_const(im, dname(im, name, "zero"), gt, 0);
		if (any_out && acc.node) {
			struct tensor *et = t_from_floats(im, dname(im, name, "extrap"), x->dtype, rank, wd, ext);
			struct value a[2] = {acc, b_broadcast(im, tval(im, et), od, rank, dname(im, name, "eb"))};
			acc = b_node(im, NK_Add, dname(im, name, "outside"), a, 2, gt);
		}
		cur = acc;
		memcpy(cd, od, rank * sizeof *cd);
	}
	return cur;
}

/* Resize (opset 10+) and Upsample: ResizeNearest / ResizeBilinear with a
 * scale per dimension, on the ONNX layout, where they agree with ONNX:
 * nearest with "asymmetric, floor" (every mode for integer upscales with
 * round_prefer_*), linear with asymmetric coordinates. Every other mode
 * (cubic, the other coordinate transformations and nearest modes,
 * exclude_outside, tf_crop_and_resize) is resize_gathers. */
int op_resize(struct importer *im, const onnx_node *n)
{
	struct tensor *x = in_req(im, 0);
	if (!x || !is_float_input(im, x))
		return -1;
	bool upsample = strcmp(n->op_type, "Upsample") == 0;
	const char *mode = attr_s(im, n, "mode", "nearest");
	const char *ctm = attr_s(im, n, "coordinate_transformation_mode",
				 upsample || im->opset < 11 ? "asymmetric" : "half_pixel");
	const char *nm = attr_s(im, n, "nearest_mode", upsample || im->opset < 11 ? "floor" : "round_prefer_floor");
	double scales[GLOW_MAX_RANK];
	uint64_t dims[GLOW_MAX_RANK];
	struct tensor *st = NULL, *sz = NULL;
	if (upsample && im->opset < 9) {
		const float *fv;
		long c = attr_floats(n, "scales", &fv);
		if (c != (long)x->rank)
			return op_err(im, "scales must have %u entries", x->rank);
		for (unsigned k = 0; k < x->rank; k++)
			scales[k] = fv[k];
	} else {
		st = in_opt(im, im->opset < 11 || upsample ? 1 : 2);
		sz = im->opset < 11 || upsample ? NULL : in_opt(im, 3);
		if (st && t_numel(st) == 0)
			st = NULL;
		if (sz && t_numel(sz) == 0)
			sz = NULL;
		if (!st && !sz)
			return op_err(im, "scales or sizes are required");
		struct tensor *use = sz ? sz : st;
		const double *v = t_floats(im, use);
		if (!v)
			return op_err(im, "%s must be known at import", sz ? "sizes" : "scales");
		/* opset 18: axes names the axes scales or sizes cover; the
		 * others keep their size */
		unsigned ax[GLOW_MAX_RANK], nax = x->rank;
		const int64_t *av;
		long ac = attr_ints(n, "axes", &av);
		if (ac >= 0) {
			if (ac == 0 || ac > (long)x->rank)
				return op_err(im, "axes has %ld entries for rank %u", ac, x->rank);
			nax = (unsigned)ac;
			for (unsigned k = 0; k < nax; k++) {
				if (norm_axis(im, av[k], x->rank, &ax[k]))
					return -1;
				for (unsigned j = 0; j < k; j++)
					if (ax[j] == ax[k])
						return op_err(im, "axis %u is repeated in axes", ax[k]);
			}
		} else {
			for (unsigned k = 0; k < nax; k++)
				ax[k] = k;
		}
		if (t_numel(use) != nax)
			return op_err(im, "%s must have %u entries", sz ? "sizes" : "scales", nax);
		for (unsigned k = 0; k < x->rank; k++) {
			scales[k] = 1;
			dims[k] = x->dims[k];
		}
		/* keep_aspect_ratio_policy (opset 18) with sizes: one scale for
		 * the covered axes, the smallest (not_larger) or the largest
		 * (not_smaller) of sizes / input, each size rounded from it */
		const char *kp = attr_s(im, n, "keep_aspect_ratio_policy", "stretch");
		bool not_larger = strcmp(kp, "not_larger") == 0, not_smaller = strcmp(kp, "not_smaller") == 0;
		if (!not_larger && !not_smaller && strcmp(kp, "stretch") != 0)
			return op_err(im, "unknown keep_aspect_ratio_policy '%s'", kp);
		double common = 0;
		for (unsigned k = 0; sz && (not_larger || not_smaller) && k < nax; k++) {
			double r = v[k] / (double)x->dims[ax[k]];
			if (k == 0 || (not_larger ? r < common : r > common))
				common = r;
		}
		for (unsigned k = 0; k < nax; k++) {
			unsigned a = ax[k];
			if (sz && (not_larger || not_smaller)) {
				scales[a] = common;
				if (resize_dim(im, floor(common * (double)x->dims[a] + 0.5), &dims[a]))
					return -1;
			} else {
				scales[a] = sz ? v[k] / (double)x->dims[a] : v[k];
				if (sz && resize_dim(im, v[k], &dims[a]))
					return -1;
			}
		}
	}
	bool ints = true, down = false;
	for (unsigned k = 0; k < x->rank; k++) {
		if (!(scales[k] > 0) || !isfinite(scales[k]))
			return op_err(im, "bad scale %g", scales[k]);
		down |= scales[k] < 1;
		if (!sz && resize_dim(im, floor((double)x->dims[k] * scales[k]), &dims[k]))
			return -1;
		ints &= scales[k] >= 1 && scales[k] == floor(scales[k]);
	}
	/* antialias (opset 18) widens the filter when downsampling only */
	if (attr_i(n, "antialias", 0) && down && strcmp(mode, "nearest") != 0)
		return op_err(im, "antialias when downsampling is not supported");
	if (strcmp(ctm, "half_pixel_symmetric") == 0)
		return op_err(im, "coordinate_transformation_mode 'half_pixel_symmetric' (opset 19) is not supported");
	struct resize_spec sp = {RS_NEAREST, ctm, nm, attr_f(n, "cubic_coeff_a", -0.75f),
				 attr_i(n, "exclude_outside", 0) != 0};
	unsigned kind = NK_ResizeNearest;
	if (strcmp(mode, "nearest") == 0) {
		bool asym_floor = strcmp(ctm, "asymmetric") == 0 && strcmp(nm, "floor") == 0;
		bool half = (strcmp(ctm, "half_pixel") == 0 || strcmp(ctm, "pytorch_half_pixel") == 0) &&
			    strncmp(nm, "round_prefer", 12) == 0;
		if (!asym_floor && !(ints && half))
			kind = 0;
	} else if (strcmp(mode, "linear") == 0 || strcmp(mode, "bilinear") == 0) {
		sp.mode = RS_LINEAR;
		kind = strcmp(ctm, "asymmetric") == 0 ? NK_ResizeBilinear : 0;
	} else if (strcmp(mode, "cubic") == 0) {
		sp.mode = RS_CUBIC;
		kind = 0;
	} else {
		return op_err(im, "resize mode '%s' is not supported", mode);
	}
	static const char *const ctms[] = {"half_pixel", "pytorch_half_pixel", "align_corners", "asymmetric",
					   "tf_half_pixel_for_nn", "tf_crop_and_resize"};
	static const char *const nms[] = {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"};
	bool ctm_ok = false, nm_ok = false;
	for (unsigned k = 0; k < sizeof ctms / sizeof *ctms; k++)
		ctm_ok |= strcmp(ctm, ctms[k]) == 0;
	for (unsigned k = 0; k < sizeof nms / sizeof *nms; k++)
		nm_ok |= strcmp(nm, nms[k]) == 0;
	if (!ctm_ok)
		return op_err(im, "unknown coordinate_transformation_mode '%s'", ctm);
	if (!nm_ok)
		return op_err(im, "unknown nearest_mode '%s'", nm);
	bool crop = strcmp(ctm, "tf_crop_and_resize") == 0;
	if (sp.exclude_outside || crop)
		kind = 0;
	if (!kind) {
		const double *roi = NULL;
		if (crop) {
			struct tensor *rt = upsample || im->opset < 11 ? NULL : in_opt(im, 1);
			if (!rt || t_numel(rt) != 2 * (uint64_t)x->rank)
				return op_err(im, "tf_crop_and_resize needs roi with %u entries", 2 * x->rank);
			if (!(roi = t_floats(im, rt)))
				return op_err(im, "roi must be known at import");
		}
		return set_out(im, 0, resize_gathers(im, &sp, x, scales, dims, roi,
						     attr_f(n, "extrapolation_value", 0.0f), out_name(im, 0)));
	}
	struct value xv = tval(im, x);
	struct value r = b_node(im, kind, out_name(im, 0), &xv, 1, xv.node ? type_with_dims(im->tc, val_type(xv), dims, x->rank) : NULL);
	if (!r.node)
		return -1;
	node_set_floats(im->m, r.node, "scale", scales, x->rank);
	return set_out(im, 0, r);
}

static int space_depth(struct importer *im, const onnx_node *n, bool to_space)
{
	struct tensor *x = in_req(im, 0);
	if (!x)
		return -1;
	if (x->rank != 4)
		return op_err(im, "input must be 4-D");
	int64_t b = attr_i(n, "blocksize", 0);
	if (b < 1)
		return op_err(im, "blocksize must be positive");
	uint64_t ub = (uint64_t)b, dims[4];
	if (to_space) {
		if (x->dims[1] % (ub * ub))
			return op_err(im, "channels are not divisible by blocksize^2");
		dims[0] = x->dims[0], dims[1] = x->dims[2] * ub, dims[2] = x->dims[3] * ub, dims[3] = x->dims[1] / (ub * ub);
	} else {
		if (x->dims[2] % ub || x->dims[3] % ub)
			return op_err(im, "spatial dimensions are not divisible by blocksize");
		dims[0] = x->dims[0], dims[1] = x->dims[2] / ub, dims[2] = x->dims[3] / ub, dims[3] = x->dims[1] * ub * ub;
	}
	const char *name = out_name(im, 0);
	struct value xv = b_to_nhwc(im, tval(im, x), dname(im, x->name, "nhwc"));
	struct value r = b_node(im, to_space ? NK_DepthToSpace : NK_SpaceToDepth, dname(im, name, "nhwc"), &xv, 1,
				xv.node ? type_with_dims(im->tc, val_type(xv), dims, 4) : NULL);
	if (!r.node)
		return -1;
	node_set_int(im->m, r.node, "block_size", b);
	if (to_space) {
		const char *mode = attr_s(im, n, "mode", "DCR");
		if (strcmp(mode, "DCR") != 0 && strcmp(mode, "CRD") != 0)
			return op_err(im, "mode '%s' is not supported", mode);
		node_set_int(im->m, r.node, "mode", mode[0] == 'C');
	}
	return set_out(im, 0, b_to_nchw(im, r, name));
}

int op_depth_to_space(struct importer *im, const onnx_node *n) { return space_depth(im, n, true); }
int op_space_to_depth(struct importer *im, const onnx_node *n) { return space_depth(im, n, false); }
