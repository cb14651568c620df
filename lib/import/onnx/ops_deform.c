/* ops_deform.c - DeformConv (opsets 19 and 22; 1-D, 2-D and 3-D) from
 * existing kinds.
 *
 * Every kernel tap k = (i, j) of output position p = (oh, ow) samples the
 * input at (oh * sh - ph + i * dh + dy, ow * sw - pw + j * dw + dx) (and
 * likewise along each of 1 to 3 spatial axes), the offsets (dy, dx) being
 * run-time data per batch entry, offset group, tap and position. The
 * sampling is n-linear with zeros outside the image: 2^S corner taps read
 * the input, flattened per offset group to [N, G, C / G, H * W], by
 * GatherElements at y * W + x (clamped; a corner outside the image is
 * Selected to zero) and are weighed by the products of the fractional
 * parts. The samples times the optional mask are the columns
 * [N, C, K, P] of an ordinary convolution: per group a BatchMatMul of the
 * filter [OC / group, C / group * K] with the columns, plus the bias.
 */
#include "import/onnx/internal.h"

#include <stdio.h>
#include <string.h>

/* Spatial axes: 1 to DC_MAXS (ONNX's DeformConv is N-dimensional). */
#define DC_MAXS 3

struct dc {
	struct importer *im;
	const char *name;
	unsigned k;               /* helper-name counter */
	const struct type *ft;    /* [N, G, 1, K * P] float: coordinates, weights */
	const struct type *it;    /* the same shape, int64 */
	const struct type *vt;    /* [N, G, Cg, K * P]: samples */
	struct value flat;        /* [N, G, Cg, H * W ...] */
	unsigned S;               /* spatial axes */
	uint64_t sp[DC_MAXS];     /* their sizes */
	uint64_t stride[DC_MAXS]; /* their strides in the flattened image */
};

static const char *dc_name(struct dc *c)
{
	char sfx[24];
	snprintf(sfx, sizeof sfx, "dc%u", c->k++);
	return imp_dname(c->im, c->name, sfx);
}

static struct value dc_f(struct dc *c, const struct type *t, double f)
{
	return imp_b_splat_const(c->im, dc_name(c), t, f);
}

static struct value dc_bin(struct dc *c, unsigned kind, struct value a, struct value b)
{
	if (!a.node || !b.node)
		return no_value;
	const struct type *t = val_type(a);
	if (kind == NK_CmpLT || kind == NK_CmpLTE)
		t = type_with_elem(c->im->tc, t, EK_BOOL);
	struct value ops[2] = {a, b};
	return imp_b_node(c->im, kind, dc_name(c), ops, 2, t);
}

/* One corner coordinate along axis a (integer-valued float y): whether it
 * lies inside the image (*in) and its term of the flat index (clamped
 * coordinate times the axis's stride, int64). Each is computed once per
 * axis and side, shared by the 2^(S-1) corners that use it. */
static struct value dc_axis_term(struct dc *c, unsigned a, struct value y, struct value *in)
{
	struct importer *im = c->im;
	*in = dc_bin(c, NK_And, dc_bin(c, NK_CmpLTE, dc_f(c, c->ft, 0), y),
		     dc_bin(c, NK_CmpLT, y, dc_f(c, c->ft, (double)c->sp[a])));
	struct value yc = imp_b_unary(im, NK_Clip, dc_name(c), y);
	if (!yc.node)
		return no_value;
	node_set_float(im->m, yc.node, AN_min, 0);
	node_set_float(im->m, yc.node, AN_max, (double)c->sp[a] - 1);
	struct value term = imp_b_convert(im, yc, EK_I64, dc_name(c));
	return c->stride[a] != 1 ? dc_bin(c, NK_Mul, term, dc_f(c, c->it, (double)c->stride[a])) : term;
}

/* The input at one corner, zero outside the image, times w; the corner's
 * axis terms and inside flags (dc_axis_term) per spatial axis;
 * [N, G, Cg, K * P]. */
static struct value dc_corner(struct dc *c, const struct value *term, const struct value *in, struct value w)
{
	struct importer *im = c->im;
	struct value zero = dc_f(c, c->ft, 0), ok = in[0], idx = term[0];
	for (unsigned a = 1; a < c->S; a++) {
		ok = dc_bin(c, NK_And, ok, in[a]);
		idx = dc_bin(c, NK_Add, idx, term[a]);
	}
	struct value ib = imp_b_broadcast(im, idx, c->vt->dims, 4, dc_name(c));
	struct value ops[2] = {c->flat, ib};
	struct value g = ib.node && c->flat.node ? imp_b_node(im, NK_GatherElements, dc_name(c), ops, 2, c->vt) : no_value;
	if (g.node)
		node_set_int(im->m, g.node, AN_axis, 3);
	struct value wz = imp_b_node(im, NK_Select, dc_name(c), (struct value[]){ok, w, zero}, 3, c->ft);
	return dc_bin(c, NK_Mul, g, imp_b_broadcast(im, wz, c->vt->dims, 4, dc_name(c)));
}

/* The window attributes of S spatial axes (defaults: strides and
 * dilations 1, pads 0, kernel_shape W's), bounded so that the window
 * arithmetic cannot overflow; -1 after reporting. */
static int dc_attrs(struct importer *im, const onnx_node *n, unsigned S, const uint64_t *kern, int64_t *st,
		    int64_t *dl, int64_t *pd)
{
	int64_t ks[DC_MAXS];
	for (unsigned a = 0; a < S; a++) {
		st[a] = dl[a] = 1;
		pd[a] = pd[S + a] = 0;
		ks[a] = (int64_t)kern[a];
	}
	const char *an[4] = {"strides", "dilations", "pads", "kernel_shape"};
	int64_t *av[4] = {st, dl, pd, ks};
	for (unsigned a = 0; a < 4; a++) {
		const int64_t *v;
		long cnt = imp_attr_ints(n, an[a], &v);
		if (cnt < 0)
			continue;
		if (cnt != (long)(a == 2 ? 2 * S : S))
			return imp_op_err(im, "%s has %ld entries for %u spatial axes", an[a], cnt, S);
		for (long i = 0; i < cnt; i++) {
			if (v[i] < (a == 2 ? 0 : 1) || v[i] > (int64_t)TABLE_MAX)
				return imp_op_err(im, "bad %s value %lld", an[a], (long long)v[i]);
			av[a][i] = v[i];
		}
	}
	for (unsigned a = 0; a < S; a++)
		if ((uint64_t)ks[a] != kern[a])
			return imp_op_err(im, "kernel_shape differs from W's spatial dimensions");
	return 0;
}

/* The undeformed sampling coordinate along axis `axis` of every kernel tap
 * (row-major over kern) and output position (row-major over out): a
 * constant [1, 1, 1, K * P]. */
static struct value dc_base(struct dc *c, unsigned axis, const uint64_t *kern, const uint64_t *out, const int64_t *st,
			    const int64_t *dl, const int64_t *pd, uint64_t K, uint64_t P, int elem)
{
	double *b = arena_alloc(&c->im->scratch, K * P * sizeof *b);
	for (uint64_t t = 0; t < K; t++)
		for (uint64_t p = 0; p < P; p++) {
			uint64_t kt = t, op = p, ka = 0, oa = 0;
			for (unsigned a = c->S; a-- > 0;) { /* the coordinates along `axis` */
				if (a == axis) {
					ka = kt % kern[a];
					oa = op % out[a];
				}
				kt /= kern[a];
				op /= out[a];
			}
			b[t * P + p] = (double)((int64_t)oa * st[axis] - pd[axis] + (int64_t)ka * dl[axis]);
		}
	uint64_t b4[4] = {1, 1, 1, K * P};
	char sfx[16];
	snprintf(sfx, sizeof sfx, "base%u", axis);
	struct tensor *t = imp_t_from_floats(c->im, imp_dname(c->im, c->name, sfx), imp_dt_of_elem(elem), 4, b4, b);
	return imp_b_broadcast(c->im, imp_tval(c->im, t), c->ft->dims, 4, dc_name(c));
}

/* "[d0, d1, ...]" of n dims into buf (at least 8 + 22 * n bytes) */
static const char *dc_dims_str(char *buf, const uint64_t *d, unsigned n)
{
	int k = sprintf(buf, "[");
	for (unsigned i = 0; i < n; i++)
		k += sprintf(buf + k, "%s%llu", i ? ", " : "", (unsigned long long)d[i]);
	sprintf(buf + k, "]");
	return buf;
}

int imp_op_deform_conv(struct importer *im, const onnx_node *n)
{
	struct value x = imp_in_val(im, 0), w = imp_in_val(im, 1), off = imp_in_val(im, 2);
	if (!x.node || !w.node || !off.node)
		return -1;
	struct tensor *bt = imp_in_opt(im, 3), *mt = imp_in_opt(im, 4);
	const struct type *xt = val_type(x), *wt = val_type(w), *ot = val_type(off);
	const char *name = imp_out_name(im, 0);
	int elem = xt->elem;
	if (!elem_is_float((enum elem_kind)elem) || wt->elem != elem || ot->elem != elem)
		return imp_op_err(im, "X, W and offset must be floating point of one type");
	unsigned R = xt->rank, S = R - 2;
	if (R < 3 || R > 2 + DC_MAXS || wt->rank != R || ot->rank != R)
		return imp_op_err(im, "X, W and offset must have one rank of 3 to %d (1 to %d spatial axes), not %u, %u and %u",
				  2 + DC_MAXS, DC_MAXS, xt->rank, wt->rank, ot->rank);
	for (unsigned i = 0; i < R; i++)
		if (!table_fits(xt->dims[i], 1) || !table_fits(wt->dims[i], 1))
			return imp_op_err(im, "dimensions above 2^20 are not supported");
	uint64_t N = xt->dims[0], C = xt->dims[1], OC = wt->dims[0], HW = 1, K = 1, P = 1;
	uint64_t out[DC_MAXS];
	int64_t group = imp_attr_i(n, "group", 1), og = imp_attr_i(n, "offset_group", 1);
	if (group < 1 || og < 1 || C % (uint64_t)group || OC % (uint64_t)group || C % (uint64_t)og ||
	    wt->dims[1] * (uint64_t)group != C)
		return imp_op_err(im, "group %lld and offset_group %lld do not fit %llu input and %llu output channels",
			      (long long)group, (long long)og, (unsigned long long)C, (unsigned long long)OC);
	int64_t st[DC_MAXS], dl[DC_MAXS], pd[2 * DC_MAXS];
	if (dc_attrs(im, n, S, wt->dims + 2, st, dl, pd))
		return -1;
	struct dc c = {.im = im, .name = name, .S = S};
	for (unsigned a = S; a-- > 0;) {
		int64_t span = (int64_t)xt->dims[2 + a] + pd[a] + pd[S + a] - ((int64_t)wt->dims[2 + a] - 1) * dl[a] - 1;
		if (span < 0)
			return imp_op_err(im, "the kernel is larger than the padded input");
		out[a] = (uint64_t)(span / st[a] + 1);
		c.sp[a] = xt->dims[2 + a];
		c.stride[a] = HW;
		HW *= xt->dims[2 + a];
		K *= wt->dims[2 + a];
		P *= out[a];
	}
	uint64_t G = (uint64_t)og, Cg = C / G;
	bool off_ok = ot->dims[0] == N && ot->dims[1] == G * S * K;
	for (unsigned a = 0; a < S; a++)
		off_ok = off_ok && ot->dims[2 + a] == out[a];
	if (!off_ok) {
		uint64_t od[2 + DC_MAXS] = {N, G * S * K};
		memcpy(od + 2, out, S * sizeof *out);
		char tb[160];
		return imp_op_err(im, "offset must be %s", dc_dims_str(tb, od, R));
	}
	if (HW > ((uint64_t)1 << 24) || !table_fits(K, P))
		return imp_op_err(im, "images of more than 2^24 pixels or more than 2^20 sampling positions are not supported");
	uint64_t f4[4] = {N, G, 1, K * P}, v4[4] = {N, G, Cg, K * P}, x4[4] = {N, G, Cg, HW};
	c.ft = imp_ty(im, elem, f4, 4);
	c.it = imp_ty(im, EK_I64, f4, 4);
	c.vt = imp_ty(im, elem, v4, 4);
	c.flat = imp_b_reshape(im, x, x4, 4, imp_dname(im, name, "flat"));
	/* offsets [N, G, K, S, P]: the sampling coordinates per axis, [N, G, 1, K * P] */
	uint64_t o5[5] = {N, G, K, S, P}, s5[5] = {N, G, K, 1, P};
	struct value o = imp_b_reshape(im, off, o5, 5, imp_dname(im, name, "off5"));
	struct value term[2][DC_MAXS], in[2][DC_MAXS], fr[DC_MAXS], gf[DC_MAXS];
	struct value one = dc_f(&c, c.ft, 1);
	for (unsigned a = 0; a < S; a++) {
		struct value s = o.node ? imp_b_node(im, NK_Slice, dc_name(&c), &o, 1, imp_ty(im, elem, s5, 5)) : no_value;
		if (s.node)
			node_set_ints(im->m, s.node, AN_start, (int64_t[]){0, 0, 0, a, 0}, 5);
		struct value co = dc_bin(&c, NK_Add, dc_base(&c, a, wt->dims + 2, out, st, dl, pd, K, P, elem),
					 imp_b_reshape(im, s, f4, 4, dc_name(&c)));
		struct value lo = imp_b_unary(im, NK_Floor, dc_name(&c), co);
		fr[a] = dc_bin(&c, NK_Sub, co, lo);
		gf[a] = dc_bin(&c, NK_Sub, one, fr[a]);
		term[0][a] = dc_axis_term(&c, a, lo, &in[0][a]);
		term[1][a] = dc_axis_term(&c, a, dc_bin(&c, NK_Add, lo, one), &in[1][a]);
	}
	/* n-linear: 2^S corners, each weighed by the product of its axes' parts */
	struct value s = no_value;
	for (unsigned m = 0; m < (1u << S); m++) {
		struct value ct[DC_MAXS], ci[DC_MAXS], wgt = no_value;
		for (unsigned a = 0; a < S; a++) {
			unsigned up = (m >> (S - 1 - a)) & 1;
			ct[a] = term[up][a];
			ci[a] = in[up][a];
			wgt = a ? dc_bin(&c, NK_Mul, wgt, up ? fr[a] : gf[a]) : (up ? fr[a] : gf[a]);
		}
		struct value cv = dc_corner(&c, ct, ci, wgt);
		s = m ? dc_bin(&c, NK_Add, s, cv) : cv;
	}
	uint64_t mk[2 + DC_MAXS] = {N, G * K}, y_dims[2 + DC_MAXS] = {N, OC}, bd[2 + DC_MAXS] = {1, OC};
	memcpy(mk + 2, out, S * sizeof *out);
	memcpy(y_dims + 2, out, S * sizeof *out);
	for (unsigned a = 0; a < S; a++)
		bd[2 + a] = 1;
	if (mt) {
		struct value mv = imp_tval(im, mt);
		if (!mv.node)
			return -1;
		const struct type *want = imp_ty(im, elem, mk, R);
		char tb[160];
		if (val_type(mv) != want)
			return imp_op_err(im, "mask must be %s of X's type", dc_dims_str(tb, mk, R));
		s = dc_bin(&c, NK_Mul, s, imp_b_broadcast(im, imp_b_reshape(im, mv, f4, 4, dc_name(&c)), v4, 4, dc_name(&c)));
	}
	/* columns per convolution group: [group * N, C / group * K, P] */
	uint64_t gr = (uint64_t)group, Cq = C / gr, OCq = OC / gr;
	uint64_t c5[4] = {N, gr, Cq * K, P};
	struct value cols = imp_b_reshape(im, s, c5, 4, imp_dname(im, name, "cols"));
	static const unsigned swap01[4] = {1, 0, 2, 3};
	cols = imp_b_transpose(im, cols, swap01, imp_dname(im, name, "cols_g"));
	uint64_t c3[3] = {gr * N, Cq * K, P};
	cols = imp_b_reshape(im, cols, c3, 3, imp_dname(im, name, "cols3"));
	uint64_t w3[3] = {gr, OCq, Cq * K}, w4[4] = {gr, 1, OCq, Cq * K}, wb[4] = {gr, N, OCq, Cq * K};
	uint64_t wm[3] = {gr * N, OCq, Cq * K};
	struct value wv = imp_b_reshape(im, w, w3, 3, imp_dname(im, name, "wg"));
	wv = imp_b_reshape(im, imp_b_broadcast(im, imp_b_reshape(im, wv, w4, 4, imp_dname(im, name, "wg4")), wb, 4,
				       imp_dname(im, name, "wgb")),
		       wm, 3, imp_dname(im, name, "wm"));
	uint64_t r3[3] = {gr * N, OCq, P};
	struct value mm[2] = {wv, cols};
	struct value r = wv.node && cols.node ? imp_b_node(im, NK_BatchMatMul, imp_dname(im, name, "mm"), mm, 2,
						      imp_ty(im, elem, r3, 3))
					      : no_value;
	uint64_t r4[4] = {gr, N, OCq, P};
	r = imp_b_transpose(im, imp_b_reshape(im, r, r4, 4, imp_dname(im, name, "mm4")), swap01, imp_dname(im, name, "mmn"));
	if (!bt)
		return imp_set_out(im, 0, imp_b_reshape(im, r, y_dims, R, name));
	struct value bv = imp_tval(im, bt);
	if (!bv.node)
		return -1;
	if (val_type(bv)->rank != 1 || val_type(bv)->dims[0] != OC || val_type(bv)->elem != elem)
		return imp_op_err(im, "B must be [%llu] of X's type", (unsigned long long)OC);
	r = imp_b_reshape(im, r, y_dims, R, imp_dname(im, name, "nobias"));
	struct value bb = imp_b_broadcast(im, imp_b_reshape(im, bv, bd, R, imp_dname(im, name, "b4")), y_dims, R,
					  imp_dname(im, name, "bb"));
	struct value ab[2] = {r, bb};
	return imp_set_out(im, 0, r.node && bb.node ? imp_b_node(im, NK_Add, name, ab, 2, val_type(r)) : no_value);
}
