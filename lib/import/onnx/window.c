/* window.c - the window geometry and the node builders that the
 * importer's 1-D and 2-D convolutions and pools share, float and
 * quantized alike (ops_conv.c, ops_3d.c, ops_quant.c): the attributes of a
 * window (imp_win_params), SAME padding and output sizes
 * (imp_window_same, imp_window_out), the NCHW and NHWC reshapes around
 * the graph IR's NHWC kinds, and the convolution node itself
 * (imp_win_conv_node, imp_conv_q). It calls no translator, so the
 * translators' files depend on it and never the other way round.
 */
#include "import/onnx/internal.h"

#include <string.h>

/* The attribute name (ints) of n as a pair in v, def where absent. */
int imp_win_read_pair(struct importer *im, const onnx_node *n, const char *name, unsigned nsp, int64_t *v,
		      int64_t def)
{
	const int64_t *a;
	long c = imp_attr_ints(n, name, &a);
	v[0] = v[1] = def;
	if (c < 0)
		return 0;
	if ((unsigned long)c != nsp)
		return imp_op_err(im, "%s has %ld entries for %u spatial dimensions", name, c, nsp);
	for (unsigned i = 0; i < nsp; i++) {
		if (a[i] < (def == 0 ? 0 : 1))
			return imp_op_err(im, "bad %s value %lld", name, (long long)a[i]);
		v[i] = a[i];
	}
	return 0;
}

/* Reads kernel, strides, dilations and pads (with auto_pad) and computes
 * the output size; transposed: the ConvTranspose formulas. ceil: ceil_mode. */
int imp_win_params(struct importer *im, const onnx_node *n, const struct tensor *x, const int64_t *kdef,
		   struct imp_window *w, bool transposed)
{
	if (x->rank != 3 && x->rank != 4)
		return imp_op_err(im, "only 1-D and 2-D windows are supported (input rank %u)", x->rank);
	w->nsp = x->rank - 2;
	w->in[0] = x->dims[2];
	w->in[1] = w->nsp == 2 ? x->dims[3] : 1;
	const int64_t *kv;
	long kc = imp_attr_ints(n, "kernel_shape", &kv);
	if (kc < 0 && !kdef)
		return imp_op_err(im, "kernel_shape is required");
	if (imp_win_read_pair(im, n, "kernel_shape", w->nsp, w->k, 1) ||
	    imp_win_read_pair(im, n, "strides", w->nsp, w->s, 1) ||
	    imp_win_read_pair(im, n, "dilations", w->nsp, w->d, 1))
		return -1;
	if (kc < 0)
		for (unsigned i = 0; i < w->nsp; i++)
			w->k[i] = kdef[i];
	const int64_t *pv;
	long pc = imp_attr_ints(n, "pads", &pv);
	memset(w->pads, 0, sizeof w->pads);
	if (pc >= 0) {
		if ((unsigned long)pc != 2 * w->nsp)
			return imp_op_err(im, "pads has %ld entries for %u spatial dimensions", pc, w->nsp);
		for (unsigned i = 0; i < w->nsp; i++) {
			if (pv[i] < 0 || pv[i + w->nsp] < 0)
				return imp_op_err(im, "negative pads are not supported");
			w->pads[i] = pv[i];
			w->pads[i + 2] = pv[i + w->nsp];
		}
	}
	const char *ap = imp_attr_s(im, n, "auto_pad", "NOTSET");
	bool same = strcmp(ap, "SAME_UPPER") == 0 || strcmp(ap, "SAME_LOWER") == 0;
	if (!same && strcmp(ap, "NOTSET") != 0 && strcmp(ap, "VALID") != 0)
		return imp_op_err(im, "auto_pad '%s' is not supported", ap);
	if (strcmp(ap, "VALID") == 0)
		memset(w->pads, 0, sizeof w->pads);
	bool ceil_mode = imp_attr_i(n, "ceil_mode", 0) != 0;
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
				return imp_op_err(im, "empty output");
			w->out[i] = (uint64_t)o;
			continue;
		}
		if (same)
			imp_window_same(in, ek, s, ap[5] == 'U', &w->pads[i], &w->pads[i + 2]);
		int64_t o = imp_window_out(im, in, ek, s, ceil_mode, w->pads[i], &w->pads[i + 2]);
		if (o < 0)
			return -1;
		w->out[i] = (uint64_t)o;
	}
	return 0;
}

void imp_window_same(int64_t in, int64_t ek, int64_t s, bool upper, int64_t *pb, int64_t *pe)
{
	int64_t o = (in + s - 1) / s, total = (o - 1) * s + ek - in;
	total = total < 0 ? 0 : total;
	*pb = upper ? total / 2 : total - total / 2;
	*pe = total - *pb;
}

int64_t imp_window_out(struct importer *im, int64_t in, int64_t ek, int64_t s, bool ceil_mode, int64_t pb,
		       int64_t *pe)
{
	int64_t span = in + pb + *pe - ek;
	if (span < 0)
		return imp_op_err(im, "the window is larger than the padded input");
	int64_t o = span / s + 1;
	if (ceil_mode && span % s) {
		o = (span + s - 1) / s + 1;
		if ((o - 1) * s >= in + pb) /* the last window must start inside */
			o--;
		/* grow the end padding so that floor division gives o */
		int64_t need = (o - 1) * s + ek - in - pb;
		if (need > *pe)
			*pe = need;
	}
	return o;
}

/* x (N, C, L) -> (N, C, L, 1) for 1-D windows */
struct value imp_win_as_4d(struct importer *im, struct value x, const char *name)
{
	if (!x.node || val_type(x)->rank == 4)
		return x;
	const struct type *t = val_type(x);
	uint64_t dims[4] = {t->dims[0], t->dims[1], t->dims[2], 1};
	return imp_b_reshape(im, x, dims, 4, name);
}

/* The NHWC result r of an operator as the NCHW value name (of rank 3 for
 * 1-D windows). */
struct value imp_win_nchw_val(struct importer *im, struct value r, unsigned nsp, const char *name)
{
	if (nsp == 2)
		return imp_b_to_nchw(im, r, name);
	struct value t = imp_b_to_nchw(im, r, imp_dname(im, name, "nchw"));
	if (!t.node)
		return t;
	const struct type *tt = val_type(t);
	uint64_t dims[3] = {tt->dims[0], tt->dims[1], tt->dims[2]};
	return imp_b_reshape(im, t, dims, 3, name);
}

/* The window's attributes on node nd (dilation too when dil). */
void imp_win_set_attrs(struct importer *im, struct node *nd, const struct imp_window *w, bool dil)
{
	node_set_ints(im->m, nd, AN_kernels, w->k, 2);
	node_set_ints(im->m, nd, AN_strides, w->s, 2);
	node_set_ints(im->m, nd, AN_pads, w->pads, 4);
	if (dil)
		node_set_ints(im->m, nd, AN_dilation, w->d, 2);
}

/* The NHWC filter of weights w (value wv): reshaped to 4-D for 1-D
 * convolutions, then transposed. */
static struct value nhwc_filter(struct importer *im, const struct tensor *w, struct value wv)
{
	struct value v = imp_win_as_4d(im, wv, imp_dname(im, w->name, "4d"));
	return imp_b_to_nhwc(im, v, imp_dname(im, w->name, "nhwc"));
}

/* The 3-D translators call it again on the same inputs: it reports only
 * once, as the checks pass the second time. */
int imp_conv_inputs(struct importer *im, struct tensor **x, struct tensor **w)
{
	*x = imp_in_req(im, 0);
	*w = imp_in_req(im, 1);
	if (!*x || !*w || !imp_float_input(im, *x))
		return -1;
	if ((*w)->rank != (*x)->rank)
		return imp_op_err(im, "weights have rank %u for a rank-%u input", (*w)->rank, (*x)->rank);
	return 0;
}

/* Conv's group against x's input and w's output channels and its
 * kernel_shape against w's; -1 after reporting. */
static int conv_check(struct importer *im, const onnx_node *n, const struct tensor *x, const struct tensor *w,
		      const struct imp_window *win, int64_t *g)
{
	*g = imp_attr_i(n, "group", 1);
	uint64_t oc = w->dims[0];
	if (*g < 1 || x->dims[1] % (uint64_t)*g || oc % (uint64_t)*g || w->dims[1] * (uint64_t)*g != x->dims[1])
		return imp_op_err(im, "group %lld does not fit %llu input and %llu output channels", (long long)*g,
			      (unsigned long long)x->dims[1], (unsigned long long)oc);
	if ((uint64_t)win->k[0] != w->dims[2] || (w->rank == 4 && (uint64_t)win->k[1] != w->dims[3]))
		return imp_op_err(im, "kernel_shape does not match the weights");
	return 0;
}

/* The NHWC convolution node of kind on values xv (NCHW), wv (OIHW) and bv
 * (OC), whose result has rproto's element type; a NULL node after
 * reporting. */
struct value imp_win_conv_node(struct importer *im, const onnx_node *n, const struct tensor *x,
			       const struct tensor *w, const struct imp_window *win, struct value xv, struct value wv,
			       struct value bv, unsigned kind, const struct type *rproto)
{
	int64_t g;
	if (conv_check(im, n, x, w, win, &g))
		return no_value;
	xv = imp_win_as_4d(im, xv, imp_dname(im, x->name, "4d"));
	struct value ops[3] = {imp_b_to_nhwc(im, xv, imp_dname(im, x->name, "nhwc")), nhwc_filter(im, w, wv), bv};
	uint64_t dims[4] = {x->dims[0], win->out[0], win->out[1], w->dims[0]};
	const char *name = imp_dname(im, imp_out_name(im, 0), "nhwc");
	struct value r = imp_b_node(im, kind, name, ops, 3, type_with_dims(im->tc, rproto, dims, 4));
	if (!r.node)
		return r;
	imp_win_set_attrs(im, r.node, win, true);
	node_set_int(im->m, r.node, AN_group, g);
	return r;
}

struct value imp_conv_q(struct importer *im, const onnx_node *n, const struct tensor *x, const struct tensor *w,
			struct value xv, struct value wv, struct value bv, unsigned kind, const struct type *rproto,
			const char *name, struct node **core)
{
	*core = NULL;
	if (x->rank != 3 && x->rank != 4) {
		imp_op_err(im, "only 1-D and 2-D convolutions are supported (input rank %u)", x->rank);
		return no_value;
	}
	if (w->rank != x->rank) {
		imp_op_err(im, "weights have rank %u for a rank-%u input", w->rank, x->rank);
		return no_value;
	}
	struct imp_window win;
	int64_t kdef[2] = {(int64_t)w->dims[2], w->rank == 4 ? (int64_t)w->dims[3] : 1};
	if (imp_win_params(im, n, x, kdef, &win, false))
		return no_value;
	struct value r = imp_win_conv_node(im, n, x, w, &win, xv, wv, bv, kind, rproto);
	if (!r.node)
		return r;
	*core = r.node;
	return imp_win_nchw_val(im, r, win.nsp, name);
}
