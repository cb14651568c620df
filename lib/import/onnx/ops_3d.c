/* ops_3d.c - windows the graph IR's 2-D kinds do not cover directly: 3-D
 * Conv and ConvTranspose, 3-D and dilated MaxPool and AveragePool, and
 * MaxPool's Indices output. ops_conv.c's translators dispatch here.
 *
 * A 3-D convolution is a 2-D one over (height, width) whose batch holds
 * every output depth and whose channels hold every depth tap: one Gather
 * picks, for output depth od and kernel depth kd, the input slice
 * od * stride - pad + kd * dilation (a zero slice appended to the input
 * stands for the padding), the taps move next to the channels, and a
 * single Convolution with the filter's depth folded into its input
 * channels (per group: tap-major, then the group's channels) sums over
 * kernel depth, height, width and channels at once.
 *
 * A 3-D transposed convolution runs the 2-D one on every input slice with
 * the kernel depths stacked in its output channels; output depth od sums
 * the (input slice, kernel depth) results with id * stride + kd * dilation
 * - pad = od, gathered (zero slice for the missing terms) and reduced.
 *
 * Pools are separable: the maximum (or sum) over a box is the maximum (sum)
 * along one spatial axis after another. Per axis a Gather of the window's
 * positions, shaped [out, kernel], is reduced over the kernel axis by
 * BatchedReduceMax (BatchedReduceAdd). Positions in the padding read a
 * position of the same window for a maximum (which leaves it unchanged)
 * and an appended zero slice for a sum. This covers any rank, strides,
 * pads, dilations and ceil_mode; an average divides the sums by a constant
 * holding each window's count (count_include_pad: positions inside the
 * explicitly padded input; else inside the input).
 */
#include "import/onnx/internal.h"

#include <string.h>

#define NW_MAX 3

/* Window parameters per spatial axis; pe grows for ceil_mode, pe0 is the
 * end padding the model asked for. */
struct nwin {
	unsigned nsp;
	int64_t k[NW_MAX], s[NW_MAX], d[NW_MAX], pb[NW_MAX], pe[NW_MAX], pe0[NW_MAX];
	int64_t in[NW_MAX], out[NW_MAX];
};

static int nw_read(struct importer *im, const onnx_node *n, const char *name, unsigned nsp, int64_t *v)
{
	const int64_t *a;
	long c = imp_attr_ints(n, name, &a);
	for (unsigned i = 0; i < nsp; i++)
		v[i] = 1;
	if (c < 0)
		return 0;
	if ((unsigned long)c != nsp)
		return imp_op_err(im, "%s has %ld entries for %u spatial dimensions", name, c, nsp);
	for (unsigned i = 0; i < nsp; i++) {
		if (a[i] < 1)
			return imp_op_err(im, "bad %s value %lld", name, (long long)a[i]);
		v[i] = a[i];
	}
	return 0;
}

/* Kernel (kdef when kernel_shape is absent), strides, dilations, pads with
 * auto_pad and ceil_mode of a forward window over x's spatial axes, and the
 * output extents (the formulas of window.c, per axis). */
static int nw_params(struct importer *im, const onnx_node *n, const struct tensor *x, const int64_t *kdef,
		     struct nwin *w)
{
	if (x->rank < 3 || x->rank > 2 + NW_MAX)
		return imp_op_err(im, "only 1-D to 3-D windows are supported (input rank %u)", x->rank);
	unsigned nsp = w->nsp = x->rank - 2;
	if (!imp_attr(n, "kernel_shape") && !kdef)
		return imp_op_err(im, "kernel_shape is required");
	if (nw_read(im, n, "kernel_shape", nsp, w->k) || nw_read(im, n, "strides", nsp, w->s) ||
	    nw_read(im, n, "dilations", nsp, w->d))
		return -1;
	if (!imp_attr(n, "kernel_shape"))
		for (unsigned i = 0; i < nsp; i++)
			w->k[i] = kdef[i];
	const int64_t *pv;
	long pc = imp_attr_ints(n, "pads", &pv);
	for (unsigned i = 0; i < nsp; i++)
		w->pb[i] = w->pe[i] = 0;
	if (pc >= 0) {
		if ((unsigned long)pc != 2 * nsp)
			return imp_op_err(im, "pads has %ld entries for %u spatial dimensions", pc, nsp);
		for (unsigned i = 0; i < nsp; i++) {
			if (pv[i] < 0 || pv[i + nsp] < 0)
				return imp_op_err(im, "negative pads are not supported");
			w->pb[i] = pv[i];
			w->pe[i] = pv[i + nsp];
		}
	}
	const char *ap = imp_attr_s(im, n, "auto_pad", "NOTSET");
	bool same = strcmp(ap, "SAME_UPPER") == 0 || strcmp(ap, "SAME_LOWER") == 0;
	bool valid = strcmp(ap, "VALID") == 0;
	if (!same && !valid && strcmp(ap, "NOTSET") != 0)
		return imp_op_err(im, "auto_pad '%s' is not supported", ap);
	bool ceil_mode = imp_attr_i(n, "ceil_mode", 0) != 0;
	for (unsigned i = 0; i < nsp; i++) {
		int64_t in = (int64_t)x->dims[2 + i], ek = (w->k[i] - 1) * w->d[i] + 1, s = w->s[i];
		w->in[i] = in;
		if (valid)
			w->pb[i] = w->pe[i] = 0;
		if (same)
			imp_window_same(in, ek, s, ap[5] == 'U', &w->pb[i], &w->pe[i]);
		w->pe0[i] = w->pe[i];
		int64_t o = imp_window_out(im, in, ek, s, ceil_mode, w->pb[i], &w->pe[i]);
		if (o < 0)
			return -1;
		w->out[i] = o;
	}
	return 0;
}

/* v with a zero slice appended along axis */
static struct value zero_slice(struct importer *im, struct value v, unsigned axis, const char *name)
{
	if (!v.node)
		return v;
	const struct type *t = val_type(v);
	uint64_t dims[GLOW_MAX_RANK];
	memcpy(dims, t->dims, t->rank * sizeof *dims);
	dims[axis] = 1;
	struct value ops[2] = {v, imp_b_splat_const(im, imp_dname(im, name, "zero"), type_with_dims(im->tc, t, dims, t->rank), 0)};
	dims[axis] = t->dims[axis] + 1;
	struct value r = imp_b_node(im, NK_Concat, imp_dname(im, name, "padded"), ops, 2,
				type_with_dims(im->tc, t, dims, t->rank));
	if (r.node)
		node_set_int(im->m, r.node, AN_dim, axis);
	return r;
}

/* Gather along axis with int64 indices of shape idims (rank ir). */
static struct value gather_idx(struct importer *im, struct value v, unsigned axis, const int64_t *idx,
			       const uint64_t *idims, unsigned ir, const char *name)
{
	if (!v.node)
		return v;
	const struct type *t = val_type(v);
	if (t->rank - 1 + ir > GLOW_MAX_RANK) {
		imp_op_err(im, "result rank exceeds the graph IR's %d", GLOW_MAX_RANK);
		return no_value;
	}
	uint64_t dims[GLOW_MAX_RANK];
	unsigned r = 0;
	for (unsigned i = 0; i < axis; i++)
		dims[r++] = t->dims[i];
	for (unsigned i = 0; i < ir; i++)
		dims[r++] = idims[i];
	for (unsigned i = axis + 1; i < t->rank; i++)
		dims[r++] = t->dims[i];
	struct tensor *it = imp_t_from_ints(im, imp_dname(im, name, "idx"), DT_INT64, ir, idims, idx);
	struct value ops[2] = {v, it ? imp_tval(im, it) : no_value};
	struct value g = imp_b_node(im, NK_Gather, imp_dname(im, name, "gather"), ops, 2, type_with_dims(im->tc, t, dims, r));
	if (g.node)
		node_set_int(im->m, g.node, AN_axis, axis);
	return g;
}

/* v without dimension axis, reduced over it by kind */
static struct value reduce_axis(struct importer *im, struct value v, unsigned kind, unsigned axis, const char *name)
{
	if (!v.node)
		return v;
	const struct type *t = val_type(v);
	uint64_t dims[GLOW_MAX_RANK];
	unsigned r = 0;
	for (unsigned i = 0; i < t->rank; i++)
		if (i != axis)
			dims[r++] = t->dims[i];
	struct value red = imp_b_node(im, kind, name, &v, 1, type_with_dims(im->tc, t, dims, r));
	if (red.node) {
		int64_t ax = axis;
		node_set_ints(im->m, red.node, AN_axes, &ax, 1);
	}
	return red;
}

/* The maximum (or sum) of v over window axis i of w, along v's axis. */
static struct value win_reduce(struct importer *im, struct value v, unsigned axis, const struct nwin *w, unsigned i,
			       bool max, const char *name)
{
	if (!v.node)
		return v;
	int64_t in = w->in[i], out = w->out[i], k = w->k[i];
	if (k == 1 && w->s[i] == 1 && w->pb[i] == 0 && out == in)
		return v;
	int64_t *idx = arena_alloc(&im->scratch, (size_t)(out * k) * sizeof *idx);
	bool zero = false;
	for (int64_t o = 0; o < out; o++) {
		int64_t first = -1;
		for (int64_t t = 0; t < k && first < 0; t++) {
			int64_t j = o * w->s[i] - w->pb[i] + t * w->d[i];
			if (j >= 0 && j < in)
				first = j;
		}
		if (first < 0 && max) {
			imp_op_err(im, "window %lld of spatial dimension %u lies entirely in the padding", (long long)o, i);
			return no_value;
		}
		for (int64_t t = 0; t < k; t++) {
			int64_t j = o * w->s[i] - w->pb[i] + t * w->d[i];
			bool inside = j >= 0 && j < in;
			idx[o * k + t] = inside ? j : max ? first : in;
			zero |= !inside && !max;
		}
	}
	if (zero)
		v = zero_slice(im, v, axis, name);
	uint64_t idims[2] = {(uint64_t)out, (uint64_t)k};
	v = gather_idx(im, v, axis, idx, idims, k == 1 ? 1 : 2, name);
	if (k == 1)
		return v;
	return reduce_axis(im, v, max ? NK_BatchedReduceMax : NK_BatchedReduceAdd, axis + 1, imp_dname(im, name, "win"));
}

/* MaxPool and AveragePool with 3 spatial axes or dilations, separably. */
int imp_op_pool_nd(struct importer *im, const onnx_node *n, bool max)
{
	struct tensor *x = imp_in_req(im, 0);
	if (!x || !imp_float_input(im, x))
		return -1;
	struct nwin w;
	if (nw_params(im, n, x, NULL, &w))
		return -1;
	if (max && imp_out_used(im, 1))
		return imp_op_err(im, "the Indices output of a 3-D or dilated MaxPool is not supported");
	const char *name = imp_out_name(im, 0);
	struct value v = imp_tval(im, x);
	for (unsigned i = 0; i < w.nsp; i++)
		v = win_reduce(im, v, 2 + i, &w, i, max, imp_dname(im, name, i == 0 ? "d0" : i == 1 ? "d1" : "d2"));
	if (max || !v.node)
		return imp_set_out(im, 0, v);
	/* the count of every window: a product of per-axis counts */
	bool inc = imp_attr_i(n, "count_include_pad", 0) != 0;
	uint64_t cdims[2 + NW_MAX] = {1, 1}, total = 1;
	for (unsigned i = 0; i < w.nsp; i++)
		total *= (cdims[2 + i] = (uint64_t)w.out[i]);
	double *cnt = arena_alloc(&im->scratch, total * sizeof *cnt);
	bool same = true;
	for (uint64_t e = 0; e < total; e++) {
		uint64_t rest = e;
		double c = 1;
		for (unsigned i = w.nsp; i-- > 0;) {
			int64_t o = (int64_t)(rest % (uint64_t)w.out[i]), ci = 0;
			rest /= (uint64_t)w.out[i];
			int64_t lo = inc ? -w.pb[i] : 0, hi = inc ? w.in[i] + w.pe0[i] : w.in[i];
			for (int64_t t = 0; t < w.k[i]; t++) {
				int64_t j = o * w.s[i] - w.pb[i] + t * w.d[i];
				ci += j >= lo && j < hi;
			}
			c *= ci ? (double)ci : 1;
		}
		cnt[e] = c;
		same &= c == cnt[0];
	}
	const struct type *t = val_type(v);
	struct value div;
	if (same) {
		div = imp_b_splat_const(im, imp_dname(im, name, "count"), t, cnt[0]);
	} else {
		struct tensor *ct = imp_t_from_floats(im, imp_dname(im, name, "count"), x->dtype, x->rank, cdims, cnt);
		div = imp_b_broadcast(im, ct ? imp_tval(im, ct) : no_value, t->dims, t->rank, imp_dname(im, name, "countb"));
	}
	struct value ops[2] = {v, div};
	return imp_set_out(im, 0, imp_b_node(im, NK_Div, name, ops, 2, t));
}

/* The bias (input 2) or zeros, of oc elements */
static struct value bias_of(struct importer *im, uint64_t oc, int elem)
{
	struct tensor *b = imp_in_opt(im, 2);
	if (!b)
		return imp_b_splat_const(im, imp_dname(im, imp_out_name(im, 0), "bias"), imp_ty(im, elem, &oc, 1), 0);
	if (b->rank != 1 || b->dims[0] != oc) {
		imp_op_err(im, "bias must have shape [%llu]", (unsigned long long)oc);
		return no_value;
	}
	return imp_tval(im, b);
}

/* (N, D, H, W, C) -> the ONNX layout (N, C, D, H, W), bound to output 0 */
static int ncdhw_out(struct importer *im, struct value r)
{
	static const unsigned perm[5] = {0, 4, 1, 2, 3};
	return imp_set_out(im, 0, imp_b_transpose(im, r, perm, imp_out_name(im, 0)));
}

/* Conv with 3 spatial axes (see the file's note). */
int imp_op_conv_3d(struct importer *im, const onnx_node *n)
{
	struct tensor *x, *w;
	if (imp_conv_inputs(im, &x, &w))
		return -1;
	int64_t kdef[3] = {(int64_t)w->dims[2], (int64_t)w->dims[3], (int64_t)w->dims[4]};
	struct nwin win;
	if (nw_params(im, n, x, kdef, &win))
		return -1;
	int64_t g = imp_attr_i(n, "group", 1);
	uint64_t N = x->dims[0], C = x->dims[1], D = x->dims[2], H = x->dims[3], W = x->dims[4], oc = w->dims[0];
	if (g < 1 || C % (uint64_t)g || oc % (uint64_t)g || w->dims[1] * (uint64_t)g != C)
		return imp_op_err(im, "group %lld does not fit %llu input and %llu output channels", (long long)g,
			      (unsigned long long)C, (unsigned long long)oc);
	for (unsigned i = 0; i < 3; i++)
		if ((uint64_t)win.k[i] != w->dims[2 + i])
			return imp_op_err(im, "kernel_shape does not match the weights");
	uint64_t G = (uint64_t)g, icg = C / G, KD = (uint64_t)win.k[0], OD = (uint64_t)win.out[0];
	const char *name = imp_out_name(im, 0);
	int elem = imp_dt_elem(x->dtype);
	/* input slices: (N, D, H, W, C) -> (N, OD, KD, H, W, C) */
	static const unsigned to_last[5] = {0, 2, 3, 4, 1};
	struct value xv = imp_b_transpose(im, imp_tval(im, x), to_last, imp_dname(im, x->name, "ndhwc"));
	int64_t *idx = arena_alloc(&im->scratch, OD * KD * sizeof *idx);
	bool zero = false;
	for (uint64_t o = 0; o < OD; o++)
		for (uint64_t t = 0; t < KD; t++) {
			int64_t j = (int64_t)o * win.s[0] - win.pb[0] + (int64_t)t * win.d[0];
			bool inside = j >= 0 && j < (int64_t)D;
			idx[o * KD + t] = inside ? j : (int64_t)D;
			zero |= !inside;
		}
	if (zero)
		xv = zero_slice(im, xv, 1, imp_dname(im, name, "depth"));
	uint64_t idims[2] = {OD, KD};
	xv = gather_idx(im, xv, 1, idx, idims, 2, imp_dname(im, name, "depth"));
	/* -> (N*OD, KD, H, W, G, IC/G) -> (N*OD, H, W, G, KD, IC/G) -> (N*OD, H, W, G*KD*IC/G) */
	uint64_t d6[6] = {N * OD, KD, H, W, G, icg}, d4[4] = {N * OD, H, W, G * KD * icg};
	static const unsigned taps_in[6] = {0, 2, 3, 4, 1, 5};
	xv = imp_b_reshape(im, xv, d6, 6, imp_dname(im, name, "taps"));
	xv = imp_b_transpose(im, xv, taps_in, imp_dname(im, name, "tapst"));
	xv = imp_b_reshape(im, xv, d4, 4, imp_dname(im, name, "in2d"));
	/* filter (OC, IC/G, KD, KH, KW) -> (OC, KH, KW, KD, IC/G) -> (OC, KH, KW, KD*IC/G) */
	static const unsigned fperm[5] = {0, 3, 4, 2, 1};
	uint64_t f4[4] = {oc, (uint64_t)win.k[1], (uint64_t)win.k[2], KD * icg};
	struct value fv = imp_b_transpose(im, imp_tval(im, w), fperm, imp_dname(im, w->name, "t"));
	fv = imp_b_reshape(im, fv, f4, 4, imp_dname(im, w->name, "nhwc"));
	struct value ops[3] = {xv, fv, bias_of(im, oc, elem)};
	uint64_t rd[4] = {N * OD, (uint64_t)win.out[1], (uint64_t)win.out[2], oc};
	struct value r = imp_b_node(im, NK_Convolution, imp_dname(im, name, "conv2d"), ops, 3, imp_ty(im, elem, rd, 4));
	if (!r.node)
		return -1;
	int64_t k2[2] = {win.k[1], win.k[2]}, s2[2] = {win.s[1], win.s[2]}, d2[2] = {win.d[1], win.d[2]};
	int64_t p4[4] = {win.pb[1], win.pb[2], win.pe[1], win.pe[2]};
	node_set_ints(im->m, r.node, AN_kernels, k2, 2);
	node_set_ints(im->m, r.node, AN_strides, s2, 2);
	node_set_ints(im->m, r.node, AN_pads, p4, 4);
	node_set_ints(im->m, r.node, AN_dilation, d2, 2);
	node_set_int(im->m, r.node, AN_group, g);
	uint64_t d5[5] = {N, OD, rd[1], rd[2], oc};
	return ncdhw_out(im, imp_b_reshape(im, r, d5, 5, imp_dname(im, name, "ndhwc")));
}

/* ConvTranspose with 3 spatial axes (see the file's note): explicit pads
 * (or VALID), strides, dilations, group and output_padding; in height and
 * width output_padding must fit in the end padding. */
int imp_op_conv_transpose_3d(struct importer *im, const onnx_node *n)
{
	struct tensor *x, *w;
	if (imp_conv_inputs(im, &x, &w))
		return -1;
	const char *ap = imp_attr_s(im, n, "auto_pad", "NOTSET");
	if (strcmp(ap, "NOTSET") != 0 && strcmp(ap, "VALID") != 0)
		return imp_op_err(im, "auto_pad '%s' is not supported for 3-D ConvTranspose", ap);
	if (imp_attr(n, "output_shape"))
		return imp_op_err(im, "output_shape is not supported for 3-D ConvTranspose");
	int64_t k[3], s[3], d[3], op[3] = {0, 0, 0}, pb[3] = {0, 0, 0}, pe[3] = {0, 0, 0}, out[3];
	if (nw_read(im, n, "kernel_shape", 3, k) || nw_read(im, n, "strides", 3, s) ||
	    nw_read(im, n, "dilations", 3, d))
		return -1;
	for (unsigned i = 0; i < 3; i++)
		if ((uint64_t)k[i] != w->dims[2 + i] && imp_attr(n, "kernel_shape"))
			return imp_op_err(im, "kernel_shape does not match the weights");
		else
			k[i] = (int64_t)w->dims[2 + i];
	const int64_t *v;
	long c = imp_attr_ints(n, "output_padding", &v);
	if (c >= 0 && c != 3)
		return imp_op_err(im, "output_padding has %ld entries for 3 spatial dimensions", c);
	for (long i = 0; i < c; i++)
		op[i] = v[i];
	c = imp_attr_ints(n, "pads", &v);
	if (c >= 0 && c != 6)
		return imp_op_err(im, "pads has %ld entries for 3 spatial dimensions", c);
	if (c >= 0 && strcmp(ap, "VALID") != 0)
		for (unsigned i = 0; i < 3; i++)
			pb[i] = v[i], pe[i] = v[i + 3];
	for (unsigned i = 0; i < 3; i++) {
		if (pb[i] < 0 || pe[i] < 0 || op[i] < 0)
			return imp_op_err(im, "negative pads are not supported");
		out[i] = s[i] * ((int64_t)x->dims[2 + i] - 1) + (k[i] - 1) * d[i] + 1 + op[i] - pb[i] - pe[i];
		if (out[i] < 1)
			return imp_op_err(im, "empty output");
		if (i > 0 && op[i] > pe[i])
			return imp_op_err(im, "output_padding beyond the end padding is not supported for 3-D ConvTranspose");
	}
	int64_t g = imp_attr_i(n, "group", 1);
	uint64_t N = x->dims[0], ic = w->dims[0], D = x->dims[2], H = x->dims[3], W = x->dims[4];
	if (g < 1 || ic != x->dims[1] || ic % (uint64_t)g)
		return imp_op_err(im, "group %lld does not fit the weights", (long long)g);
	uint64_t G = (uint64_t)g, icg = ic / G, ocg = w->dims[1], oc = ocg * G, KD = (uint64_t)k[0];
	uint64_t KH = (uint64_t)k[1], KW = (uint64_t)k[2], OD = (uint64_t)out[0];
	const char *name = imp_out_name(im, 0);
	int elem = imp_dt_elem(x->dtype);
	/* filter (IC, OC/G, KD, KH, KW) -> (G, IC/G, OC/G, KD, KH, KW) -> (G, KD, OC/G, KH, KW, IC/G) */
	uint64_t f6[6] = {G, icg, ocg, KD, KH, KW}, f4[4] = {G * KD * ocg, KH, KW, icg};
	static const unsigned fperm[6] = {0, 3, 2, 4, 5, 1};
	struct value fv = imp_b_reshape(im, imp_tval(im, w), f6, 6, imp_dname(im, w->name, "groups"));
	fv = imp_b_transpose(im, fv, fperm, imp_dname(im, w->name, "t"));
	fv = imp_b_reshape(im, fv, f4, 4, imp_dname(im, w->name, "nhwc"));
	/* input slices as the batch: (N*D, H, W, IC) */
	static const unsigned to_last[5] = {0, 2, 3, 4, 1};
	uint64_t x4[4] = {N * D, H, W, ic};
	struct value xv = imp_b_transpose(im, imp_tval(im, x), to_last, imp_dname(im, x->name, "ndhwc"));
	xv = imp_b_reshape(im, xv, x4, 4, imp_dname(im, x->name, "slices"));
	uint64_t zc = G * KD * ocg;
	struct value ops[3] = {xv, fv, imp_b_splat_const(im, imp_dname(im, name, "nobias"), imp_ty(im, elem, &zc, 1), 0)};
	uint64_t OH = (uint64_t)out[1], OW = (uint64_t)out[2];
	uint64_t rd[4] = {N * D, OH, OW, zc};
	struct value r = imp_b_node(im, NK_ConvTranspose, imp_dname(im, name, "convt2d"), ops, 3, imp_ty(im, elem, rd, 4));
	if (!r.node)
		return -1;
	int64_t k2[2] = {k[1], k[2]}, s2[2] = {s[1], s[2]}, d2[2] = {d[1], d[2]};
	int64_t p4[4] = {pb[1], pb[2], pe[1] - op[1], pe[2] - op[2]};
	node_set_ints(im->m, r.node, AN_kernels, k2, 2);
	node_set_ints(im->m, r.node, AN_strides, s2, 2);
	node_set_ints(im->m, r.node, AN_pads, p4, 4);
	node_set_ints(im->m, r.node, AN_dilation, d2, 2);
	node_set_int(im->m, r.node, AN_group, g);
	/* (N, D, OH, OW, G, KD, OC/G) -> (N, KD, D, OH, OW, G, OC/G) -> (N, KD*D, OH, OW, OC) */
	uint64_t r7[7] = {N, D, OH, OW, G, KD, ocg}, r5[5] = {N, KD * D, OH, OW, oc};
	static const unsigned rperm[7] = {0, 5, 1, 2, 3, 4, 6};
	r = imp_b_reshape(im, r, r7, 7, imp_dname(im, name, "taps"));
	r = imp_b_transpose(im, r, rperm, imp_dname(im, name, "tapst"));
	r = imp_b_reshape(im, r, r5, 5, imp_dname(im, name, "slices"));
	/* output depth o sums slice kd * D + id for id * s + kd * d - pb = o */
	uint64_t M = 1;
	for (uint64_t o = 0; o < OD; o++) {
		uint64_t m = 0;
		for (uint64_t t = 0; t < KD; t++) {
			int64_t num = (int64_t)o + pb[0] - (int64_t)t * d[0];
			m += num >= 0 && num % s[0] == 0 && num / s[0] < (int64_t)D;
		}
		M = m > M ? m : M;
	}
	int64_t *idx = arena_alloc(&im->scratch, OD * M * sizeof *idx);
	bool zero = false;
	for (uint64_t o = 0; o < OD; o++) {
		uint64_t m = 0;
		for (uint64_t t = 0; t < KD; t++) {
			int64_t num = (int64_t)o + pb[0] - (int64_t)t * d[0];
			if (num >= 0 && num % s[0] == 0 && num / s[0] < (int64_t)D)
				idx[o * M + m++] = (int64_t)(t * D) + num / s[0];
		}
		zero |= m < M;
		for (; m < M; m++)
			idx[o * M + m] = (int64_t)(KD * D);
	}
	if (zero)
		r = zero_slice(im, r, 1, imp_dname(im, name, "depth"));
	uint64_t idims[2] = {OD, M};
	r = gather_idx(im, r, 1, idx, idims, M == 1 ? 1 : 2, imp_dname(im, name, "depth"));
	if (M > 1)
		r = reduce_axis(im, r, NK_BatchedReduceAdd, 2, imp_dname(im, name, "sum"));
	if (imp_in_opt(im, 2) && r.node) {
		struct value b = imp_b_broadcast(im, bias_of(im, oc, elem), val_type(r)->dims, 5, imp_dname(im, name, "biasb"));
		struct value a[2] = {r, b};
		r = imp_b_node(im, NK_Add, imp_dname(im, name, "biased"), a, 2, val_type(r));
	}
	return ncdhw_out(im, r);
}

/* Binds output 1 of a 1-D or 2-D MaxPool (ONNX Indices: the flat position
 * in the N x C x H x W input, row-major, or with storage_order 1 the
 * height varying fastest within a channel) from the MaxPool kind's Argmax
 * (the flat NHWC position, of shape N x OH x OW x C):
 *   c = a % C, w = a / C % W, h = a / (C W) % H, n = a / (C W H),
 *   index = n C H W + c H W + h W + w   (or ... + w H + h). */
int imp_maxpool_indices(struct importer *im, struct value argmax, const struct tensor *x, unsigned nsp)
{
	if (!argmax.node)
		return -1;
	int64_t C = (int64_t)x->dims[1], H = (int64_t)x->dims[2], W = nsp == 2 ? (int64_t)x->dims[3] : 1;
	bool col = imp_attr_i(im->node, "storage_order", 0) != 0;
	const char *name = imp_out_name(im, 1);
	struct value a = imp_b_convert(im, argmax, EK_I64, imp_dname(im, name, "i64"));
	if (!a.node)
		return -1;
	const struct type *t = val_type(a);
	int64_t div[3] = {C, W, H}, mul[4] = {H * W, col ? 1 : W, col ? H : 1, C * H * W};
	struct value sum = no_value, cur = a;
	/* parts: c, w, h, then n = what is left */
	static const char *const part[4] = {"c", "w", "h", "n"};
	unsigned order[4] = {0, 2, 1, 3}; /* mul index of c, w, h, n */
	for (unsigned p = 0; p < 4 && cur.node; p++) {
		struct value digit = cur;
		if (p < 3) {
			struct value dv = imp_b_splat_const(im, imp_dname(im, name, "div"), t, (double)div[p]);
			struct value ops[2] = {cur, dv};
			digit = imp_b_node(im, NK_Mod, imp_dname(im, name, part[p]), ops, 2, t);
			cur = imp_b_node(im, NK_Div, imp_dname(im, name, "q"), ops, 2, t);
		}
		int64_t m = mul[order[p]];
		if (m != 1) {
			struct value ops[2] = {digit, imp_b_splat_const(im, imp_dname(im, name, "mul"), t, (double)m)};
			digit = imp_b_node(im, NK_Mul, imp_dname(im, name, "scaled"), ops, 2, t);
		}
		if (!sum.node) {
			sum = digit;
		} else {
			struct value ops[2] = {sum, digit};
			sum = imp_b_node(im, NK_Add, imp_dname(im, name, "sum"), ops, 2, t);
		}
	}
	if (!sum.node)
		return -1;
	struct value r = imp_b_to_nchw(im, sum, nsp == 2 ? name : imp_dname(im, name, "nchw"));
	if (nsp == 2 || !r.node)
		return imp_set_out(im, 1, r);
	const struct type *rt = val_type(r);
	uint64_t dims[3] = {rt->dims[0], rt->dims[1], rt->dims[2]};
	return imp_set_out(im, 1, imp_b_reshape(im, r, dims, 3, name));
}

/* LpPool (opset 1 to 18: ceil_mode and dilations in 18) and GlobalLpPool:
 * (sum over the window of |x|^p)^(1/p), the padding counting as zeros,
 * by the separable sums of the pools above on |x|^p. */
int imp_op_lppool(struct importer *im, const onnx_node *n)
{
	struct tensor *x = imp_in_req(im, 0);
	if (!x || !imp_float_input(im, x))
		return -1;
	bool global = strcmp(n->op_type, "GlobalLpPool") == 0;
	struct nwin w;
	int64_t kdef[NW_MAX];
	for (unsigned i = 0; i < NW_MAX; i++)
		kdef[i] = x->rank > 2 + i ? (int64_t)x->dims[2 + i] : 1;
	if (global && (imp_attr(n, "kernel_shape") || imp_attr(n, "pads") || imp_attr(n, "strides")))
		return imp_op_err(im, "GlobalLpPool takes no window attributes");
	if (nw_params(im, n, x, global ? kdef : NULL, &w))
		return -1;
	int64_t p = imp_attr_i(n, "p", 2);
	if (p < 1)
		return imp_op_err(im, "p is %lld; it must be at least 1", (long long)p);
	const char *name = imp_out_name(im, 0);
	struct value v = imp_tval(im, x);
	if (!v.node)
		return -1;
	const struct type *t = val_type(v);
	struct value a = imp_b_unary(im, NK_Abs, imp_dname(im, name, "abs"), v);
	if (p == 2) {
		struct value sq[2] = {v, v};
		a = imp_b_node(im, NK_Mul, imp_dname(im, name, "pow"), sq, 2, t);
	} else if (p > 2) {
		struct value pw[2] = {a, imp_b_splat_const(im, imp_dname(im, name, "p"), t, (double)p)};
		a = imp_b_node(im, NK_Pow, imp_dname(im, name, "pow"), pw, 2, t);
	}
	for (unsigned i = 0; i < w.nsp; i++)
		a = win_reduce(im, a, 2 + i, &w, i, false, imp_dname(im, name, i == 0 ? "d0" : i == 1 ? "d1" : "d2"));
	if (!a.node || p == 1)
		return imp_set_out(im, 0, a);
	if (p == 2)
		return imp_set_out(im, 0, imp_b_unary(im, NK_Sqrt, name, a));
	const struct type *rt = val_type(a);
	struct value rp[2] = {a, imp_b_splat_const(im, imp_dname(im, name, "invp"), rt, 1.0 / (double)p)};
	return imp_set_out(im, 0, imp_b_node(im, NK_Pow, name, rp, 2, rt));
}
