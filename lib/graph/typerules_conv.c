/* typerules_conv.c - the type rules of the sliding-window kinds (NHWC):
 * Convolution, ConvTranspose, MaxPool, AvgPool, AdaptiveAvgPool, and Pad.
 * Conventions (reporting, element types, saturation) as in typerules.c.
 */
#include "graph/typerules.h"
#include "graph/typerules_check.h"

#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* ------------------------------------------------------------------ */
/* Convolution and pooling (NHWC)                                      */

/* The sliding-window attributes of Convolution, ConvTranspose, MaxPool and
 * AvgPool: kernels [KH, KW] and strides [SH, SW] positive, pads [top, left,
 * bottom, right] non-negative, dilation [DH, DW] positive ([1, 1] for kinds
 * without it: the pools, window_attrs' dilation false). */
struct window {
	const int64_t *k, *s, *p, *d;
};

static const int64_t no_dilation[2] = {1, 1};

static bool window_attrs(struct typed_op *op, struct window *w, bool dilation)
{
	w->k = trc_ints_attr(op, "kernels", top_attr(op, AN_kernels), 2, 1);
	w->s = trc_ints_attr(op, "strides", top_attr(op, AN_strides), 2, 1);
	w->p = trc_ints_attr(op, "pads", top_attr(op, AN_pads), 4, 0);
	w->d = dilation ? trc_ints_attr(op, "dilation", top_attr(op, AN_dilation), 2, 1) : no_dilation;
	return w->k && w->s && w->p && w->d;
}

static const char *const spatial_name[2] = {"height", "width"};

/* Output extent of spatial dimension i (0: H, 1: W) of extent `in`:
 *   forward (conv, pool):  floor((in + pb + pe - d*(k-1) - 1) / s) + 1
 *   transposed:            (in - 1)*s + d*(k-1) + 1 - pb - pe
 * pb/pe are the pads before/after (top/bottom, left/right). Reports and
 * returns -1 when the window does not fit (forward) or the pads remove the
 * whole output (transposed). */
static int64_t window_out(struct typed_op *op, const struct window *w, unsigned i,
			  int64_t in, bool transposed)
{
	int64_t pads = trc_sat_add(w->p[i], w->p[i + 2]);
	int64_t span = trc_sat_add(trc_sat_mul(w->d[i], w->k[i] - 1), 1);
	if (!transposed) {
		int64_t padded = trc_sat_add(in, pads);
		if (span > padded) {
			top_err(op, "kernel %s %" PRId64 " (dilation %" PRId64 ") exceeds the padded input %s %" PRId64,
				spatial_name[i], w->k[i], w->d[i], spatial_name[i], padded);
			return -1;
		}
		return (padded - span) / w->s[i] + 1;
	}
	if (in < 1) {
		top_err(op, "input %s is 0", spatial_name[i]);
		return -1;
	}
	int64_t full = trc_sat_add(trc_sat_mul(in - 1, w->s[i]), span);
	if (full <= pads) {
		top_err(op, "pads %" PRId64 " + %" PRId64 " remove the whole output %s %" PRId64, w->p[i], w->p[i + 2],
			spatial_name[i], full);
		return -1;
	}
	return full - pads;
}

/* Convolution(Input N x H x W x IC, Filter OC x KH x KW x IC/group, Bias OC)
 *   -> Result N x OH x OW x OC, [KH, KW] = kernels, group >= 1 divides IC and OC,
 *   OH = floor((H + pt + pb - DH*(KH-1) - 1) / SH) + 1, OW alike.
 * ConvTranspose: the same operands, with OH = (H-1)*SH + DH*(KH-1) + 1 - pt - pb. */
static void conv_rule(struct typed_op *op, bool transposed)
{
	const struct type *in = top_optype(op, 0), *f = top_optype(op, 1), *b = top_optype(op, 2);
	trc_linear_elems(op, 2);
	struct window w;
	bool attrs = window_attrs(op, &w, true);
	int64_t group = top_int(op, AN_group);
	if (group < 1) {
		top_err(op, "group must be positive, got %" PRId64, group);
		attrs = false;
	}
	bool ranks = trc_op_rank(op, 0, 4, "N x H x W x C");
	ranks &= trc_op_rank(op, 1, 4, "OC x KH x KW x IC/group");
	ranks &= trc_op_rank(op, 2, 1, "OC");
	if (!ranks)
		return;
	int64_t ic = trc_dimv(in, 3), oc = trc_dimv(f, 0);
	if (trc_dimv(b, 0) != oc)
		top_err(op, "bias has %" PRId64 " elements but filter %s has %" PRId64 " output channels", trc_dimv(b, 0),
			TYS(f), oc);
	if (!attrs)
		return;
	bool ok = true;
	if (trc_dimv(f, 1) != w.k[0] || trc_dimv(f, 2) != w.k[1]) {
		top_err(op, "filter %s does not match kernels [%" PRId64 ", %" PRId64 "]", TYS(f), w.k[0], w.k[1]);
		ok = false;
	}
	if (ic % group) {
		top_err(op, "group %" PRId64 " does not divide the %" PRId64 " input channels", group, ic);
		ok = false;
	} else if (trc_dimv(f, 3) != ic / group) {
		top_err(op,
			"filter has %" PRId64 " input channels per group but input has %" PRId64 " / group %" PRId64,
			trc_dimv(f, 3), ic, group);
		ok = false;
	}
	if (oc % group) {
		top_err(op, "group %" PRId64 " does not divide the %" PRId64 " output channels of filter %s", group, oc,
			TYS(f));
		ok = false;
	}
	struct shape s = {4, {trc_dimv(in, 0), 0, 0, oc}};
	for (unsigned i = 0; i < 2; i++) {
		s.d[1 + i] = window_out(op, &w, i, trc_dimv(in, 1 + i), transposed);
		ok &= s.d[1 + i] >= 0;
	}
	if (ok)
		trc_res_shape(op, 0, &s);
}

void tr_convolution(struct typed_op *op) { conv_rule(op, false); }

void tr_conv_transpose(struct typed_op *op) { conv_rule(op, true); }

/* Pooling of Input N x H x W x C (elements in `classes`) to N x OH x OW x C
 * with OH, OW as for Convolution (dilation 1). Result 0 keeps the input's
 * exact element type when `exact`, else its kind. Every result must have the
 * pooled shape; returns false if a check failed. */
static bool pool_rule(struct typed_op *op, unsigned classes, bool exact)
{
	const struct type *in = top_optype(op, 0);
	bool ok = trc_op_class(op, 0, classes);
	if (ok)
		ok = exact ? trc_want_elem(op, RESW(op, 0), top_type(op), OPW(op, 0), in)
			   : trc_want_kind(op, RESW(op, 0), top_type(op), OPW(op, 0), in);
	struct window w;
	bool attrs = window_attrs(op, &w, false);
	if (!trc_op_rank(op, 0, 4, "N x H x W x C") || !attrs)
		return false;
	struct shape s = {4, {trc_dimv(in, 0), 0, 0, trc_dimv(in, 3)}};
	for (unsigned i = 0; i < 2; i++) {
		s.d[1 + i] = window_out(op, &w, i, trc_dimv(in, 1 + i), false);
		if (s.d[1 + i] < 0)
			return false;
	}
	for (unsigned r = 0; r < op->nres; r++)
		ok &= trc_res_shape(op, r, &s);
	return ok;
}

/* MaxPool(Input N x H x W x C) -> Result N x OH x OW x C (Input's element
 * type), Argmax N x OH x OW x C (an index type: the flattened NHWC position
 * of each maximum). */
void tr_maxpool(struct typed_op *op)
{
	pool_rule(op, C_NUM, true);
	trc_res_class(op, 1, C_IDX);
}

/* AvgPool(Input N x H x W x C, float or quantized) -> N x OH x OW x C of
 * Input's element kind. */
void tr_avgpool(struct typed_op *op) { pool_rule(op, C_FQ, false); }

/* AdaptiveAvgPool(Input N x H x W x C, float or quantized) -> N x OH x OW x C
 * for any OH, OW >= 1 (the result type chooses them), Input's element kind. */
void tr_adaptive_avgpool(struct typed_op *op)
{
	const struct type *in = top_optype(op, 0), *r = top_type(op);
	if (trc_op_class(op, 0, C_FQ))
		trc_want_kind(op, LITW("result"), r, LITW("input"), in);
	if (!trc_op_rank(op, 0, 4, "N x H x W x C") || !trc_want_rank(op, LITW("result"), r, 4, "N x OH x OW x C"))
		return;
	struct shape s = {4, {trc_dimv(in, 0), trc_dimv(r, 1), trc_dimv(r, 2), trc_dimv(in, 3)}};
	if (r->dims[1] == 0 || r->dims[2] == 0)
		top_err(op, "result %s must have a positive height and width", TYS(r));
	else
		trc_res_shape(op, 0, &s);
}

/* Pad(Input) {pads = [b_0 .. b_{r-1}, e_0 .. e_{r-1}]} -> Result with
 *   dim i = in_i + b_i + e_i >= 0 (negative pads crop), Input's element type.
 * reflect needs every pad <= in_i - 1; edge needs in_i >= 1 where it pads. */
void tr_pad(struct typed_op *op)
{
	const struct type *in = top_optype(op, 0);
	trc_want_elem(op, LITW("result"), top_type(op), LITW("input"), in);
	unsigned cnt;
	const int64_t *p = top_ints(op, AN_pads, &cnt);
	if (cnt != 2u * in->rank) {
		top_err(op, "pads must have 2 x rank = %u values for input %s, got %u", 2u * in->rank, TYS(in), cnt);
		return;
	}
	const char *mode = top_enum(op, AN_mode);
	bool reflect = strcmp(mode, "reflect") == 0, edge = strcmp(mode, "edge") == 0;
	struct shape s = trc_shape_of(in);
	bool ok = true;
	for (unsigned i = 0; i < in->rank; i++) {
		int64_t b = p[i], e = p[i + in->rank], d = trc_dimv(in, i);
		s.d[i] = trc_sat_add(trc_sat_add(d, b), e);
		if (s.d[i] < 0) {
			top_err(op, "pads %" PRId64 " and %" PRId64 " crop more than dimension %u (%" PRId64 ") of input %s",
				b, e, i, d, TYS(in));
			ok = false;
		} else if (reflect && (b > d - 1 || e > d - 1)) {
			top_err(op, "reflect pads %" PRId64 " and %" PRId64 " must be at most %" PRId64
				" (dimension %u of input %s minus 1)", b, e, d - 1, i, TYS(in));
			ok = false;
		} else if (edge && d == 0 && (b > 0 || e > 0)) {
			top_err(op, "edge padding of the empty dimension %u of input %s", i, TYS(in));
			ok = false;
		}
	}
	if (ok)
		trc_res_shape(op, 0, &s);
}

/* C.ConvAddRelu(Input, Filter, Bias, Residual) (the C backend's node, issue
 * 19): floating-point; Convolution's rule on the first three operands,
 * and the Residual of the result's type (the result is Relu(conv +
 * Residual)). */
void tr_conv_add_relu(struct typed_op *op)
{
	if (!trc_op_class(op, 0, CF))
		return;
	conv_rule(op, false);
	trc_res_same_type(op, 0, 3);
}
