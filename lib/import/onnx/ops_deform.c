/* ops_deform.c - DeformConv (opset 19, 2-D) from existing kinds.
 *
 * Every kernel tap k = (i, j) of output position p = (oh, ow) samples the
 * input at (oh * sh - ph + i * dh + dy, ow * sw - pw + j * dw + dx), the
 * offsets (dy, dx) being run-time data per batch entry, offset group, tap
 * and position. The sampling is bilinear with zeros outside the image:
 * four corner taps read the input, flattened per offset group to
 * [N, G, C / G, H * W], by GatherElements at y * W + x (clamped; a corner
 * outside the image is Selected to zero) and are weighed by the fractional
 * parts. The samples times the optional mask are the columns
 * [N, C, K, P] of an ordinary convolution: per group a BatchMatMul of the
 * filter [OC / group, C / group * K] with the columns, plus the bias.
 */
#include "import/onnx/internal.h"

#include <stdio.h>
#include <string.h>

static const struct value no_value = {NULL, 0};

struct dc {
	struct importer *im;
	const char *name;
	unsigned k;               /* helper-name counter */
	const struct type *ft;    /* [N, G, 1, K * P] float: coordinates, weights */
	const struct type *it;    /* the same shape, int64 */
	const struct type *vt;    /* [N, G, Cg, K * P]: samples */
	struct value flat;        /* [N, G, Cg, H * W] */
	uint64_t H, W;
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

/* The input at the integer-valued float coordinates (y, x), zero outside
 * the image, times w; [N, G, Cg, K * P]. */
static struct value dc_corner(struct dc *c, struct value y, struct value x, struct value w)
{
	struct importer *im = c->im;
	struct value zero = dc_f(c, c->ft, 0);
	struct value ok = dc_bin(c, NK_And, dc_bin(c, NK_CmpLTE, zero, y),
				 dc_bin(c, NK_CmpLT, y, dc_f(c, c->ft, (double)c->H)));
	ok = dc_bin(c, NK_And, ok, dc_bin(c, NK_CmpLTE, zero, x));
	ok = dc_bin(c, NK_And, ok, dc_bin(c, NK_CmpLT, x, dc_f(c, c->ft, (double)c->W)));
	struct value yc = imp_b_unary(im, NK_Clip, dc_name(c), y), xc = imp_b_unary(im, NK_Clip, dc_name(c), x);
	if (!yc.node || !xc.node)
		return no_value;
	node_set_float(im->m, yc.node, AN_min, 0);
	node_set_float(im->m, yc.node, AN_max, (double)c->H - 1);
	node_set_float(im->m, xc.node, AN_min, 0);
	node_set_float(im->m, xc.node, AN_max, (double)c->W - 1);
	struct value idx = dc_bin(c, NK_Add,
				  dc_bin(c, NK_Mul, imp_b_convert(im, yc, EK_I64, dc_name(c)), dc_f(c, c->it, (double)c->W)),
				  imp_b_convert(im, xc, EK_I64, dc_name(c)));
	struct value ib = imp_b_broadcast(im, idx, c->vt->dims, 4, dc_name(c));
	struct value ops[2] = {c->flat, ib};
	struct value g = ib.node && c->flat.node ? imp_b_node(im, NK_GatherElements, dc_name(c), ops, 2, c->vt) : no_value;
	if (g.node)
		node_set_int(im->m, g.node, AN_axis, 3);
	struct value wz = imp_b_node(im, NK_Select, dc_name(c), (struct value[]){ok, w, zero}, 3, c->ft);
	return dc_bin(c, NK_Mul, g, imp_b_broadcast(im, wz, c->vt->dims, 4, dc_name(c)));
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
	if (xt->rank != 4 || wt->rank != 4 || ot->rank != 4)
		return imp_op_err(im, "only 2-D DeformConv is supported (X, W and offset of rank 4)");
	for (unsigned i = 0; i < 4; i++)
		if (!table_fits(xt->dims[i], 1) || !table_fits(wt->dims[i], 1))
			return imp_op_err(im, "dimensions above 2^20 are not supported");
	uint64_t N = xt->dims[0], C = xt->dims[1], H = xt->dims[2], W = xt->dims[3], OC = wt->dims[0];
	uint64_t kh = wt->dims[2], kw = wt->dims[3];
	int64_t group = imp_attr_i(n, "group", 1), og = imp_attr_i(n, "offset_group", 1);
	if (group < 1 || og < 1 || C % (uint64_t)group || OC % (uint64_t)group || C % (uint64_t)og ||
	    wt->dims[1] * (uint64_t)group != C)
		return imp_op_err(im, "group %lld and offset_group %lld do not fit %llu input and %llu output channels",
			      (long long)group, (long long)og, (unsigned long long)C, (unsigned long long)OC);
	int64_t st[2] = {1, 1}, dl[2] = {1, 1}, pd[4] = {0, 0, 0, 0}, ks[2] = {(int64_t)kh, (int64_t)kw};
	/* attribute values are bounded so that the window arithmetic below
	 * cannot overflow */
	const char *an[4] = {"strides", "dilations", "pads", "kernel_shape"};
	int64_t *av[4] = {st, dl, pd, ks};
	for (unsigned a = 0; a < 4; a++) {
		const int64_t *v;
		long cnt = imp_attr_ints(n, an[a], &v);
		if (cnt < 0)
			continue;
		if (cnt != (a == 2 ? 4 : 2))
			return imp_op_err(im, "%s has %ld entries for 2 spatial axes", an[a], cnt);
		for (long i = 0; i < cnt; i++) {
			if (v[i] < (a == 2 ? 0 : 1) || v[i] > (int64_t)TABLE_MAX)
				return imp_op_err(im, "bad %s value %lld", an[a], (long long)v[i]);
			av[a][i] = v[i];
		}
	}
	if ((uint64_t)ks[0] != kh || (uint64_t)ks[1] != kw)
		return imp_op_err(im, "kernel_shape differs from W's spatial dimensions");
	int64_t sh = (int64_t)H + pd[0] + pd[2] - ((int64_t)kh - 1) * dl[0] - 1;
	int64_t sw = (int64_t)W + pd[1] + pd[3] - ((int64_t)kw - 1) * dl[1] - 1;
	if (sh < 0 || sw < 0)
		return imp_op_err(im, "the kernel is larger than the padded input");
	uint64_t OH = (uint64_t)(sh / st[0] + 1), OW = (uint64_t)(sw / st[1] + 1), K = kh * kw, P = OH * OW;
	uint64_t G = (uint64_t)og, Cg = C / G;
	if (ot->dims[0] != N || ot->dims[1] != G * 2 * K || ot->dims[2] != OH || ot->dims[3] != OW)
		return imp_op_err(im, "offset must be [%llu, %llu, %llu, %llu]", (unsigned long long)N,
			      (unsigned long long)(G * 2 * K), (unsigned long long)OH, (unsigned long long)OW);
	if (H * W > ((uint64_t)1 << 24) || !table_fits(K, P))
		return imp_op_err(im, "images of more than 2^24 pixels or more than 2^20 sampling positions are not supported");
	struct dc c = {.im = im, .name = name, .H = H, .W = W};
	uint64_t f4[4] = {N, G, 1, K * P}, v4[4] = {N, G, Cg, K * P}, x4[4] = {N, G, Cg, H * W};
	c.ft = imp_ty(im, elem, f4, 4);
	c.it = imp_ty(im, EK_I64, f4, 4);
	c.vt = imp_ty(im, elem, v4, 4);
	c.flat = imp_b_reshape(im, x, x4, 4, imp_dname(im, name, "flat"));
	/* the undeformed sampling positions, [1, 1, 1, K * P] per axis */
	double *by = arena_alloc(&im->scratch, K * P * sizeof *by), *bx = arena_alloc(&im->scratch, K * P * sizeof *bx);
	for (uint64_t i = 0; i < kh; i++)
		for (uint64_t j = 0; j < kw; j++)
			for (uint64_t oh = 0; oh < OH; oh++)
				for (uint64_t ow = 0; ow < OW; ow++) {
					uint64_t e = (i * kw + j) * P + oh * OW + ow;
					by[e] = (double)((int64_t)oh * st[0] - pd[0] + (int64_t)i * dl[0]);
					bx[e] = (double)((int64_t)ow * st[1] - pd[1] + (int64_t)j * dl[1]);
				}
	uint64_t b4[4] = {1, 1, 1, K * P};
	struct tensor *byt = imp_t_from_floats(im, imp_dname(im, name, "base_y"), imp_dt_of_elem(elem), 4, b4, by);
	struct tensor *bxt = imp_t_from_floats(im, imp_dname(im, name, "base_x"), imp_dt_of_elem(elem), 4, b4, bx);
	/* offsets [N, G, K, 2, P] -> dy, dx as [N, G, 1, K * P] */
	uint64_t o5[5] = {N, G, K, 2, P}, s5[5] = {N, G, K, 1, P};
	struct value o = imp_b_reshape(im, off, o5, 5, imp_dname(im, name, "off5"));
	struct value d[2];
	for (unsigned a = 0; a < 2; a++) {
		struct value s = o.node ? imp_b_node(im, NK_Slice, imp_dname(im, name, a ? "dx" : "dy"), &o, 1, imp_ty(im, elem, s5, 5))
					: no_value;
		if (s.node)
			node_set_ints(im->m, s.node, AN_start, (int64_t[]){0, 0, 0, a, 0}, 5);
		d[a] = imp_b_reshape(im, s, f4, 4, dc_name(&c));
	}
	struct value yy = dc_bin(&c, NK_Add, imp_b_broadcast(im, imp_tval(im, byt), f4, 4, dc_name(&c)), d[0]);
	struct value xx = dc_bin(&c, NK_Add, imp_b_broadcast(im, imp_tval(im, bxt), f4, 4, dc_name(&c)), d[1]);
	struct value y0 = imp_b_unary(im, NK_Floor, dc_name(&c), yy), x0 = imp_b_unary(im, NK_Floor, dc_name(&c), xx);
	struct value one = dc_f(&c, c.ft, 1);
	struct value y1 = dc_bin(&c, NK_Add, y0, one), x1 = dc_bin(&c, NK_Add, x0, one);
	struct value fy = dc_bin(&c, NK_Sub, yy, y0), fx = dc_bin(&c, NK_Sub, xx, x0);
	struct value gy = dc_bin(&c, NK_Sub, one, fy), gx = dc_bin(&c, NK_Sub, one, fx);
	struct value s = dc_corner(&c, y0, x0, dc_bin(&c, NK_Mul, gy, gx));
	s = dc_bin(&c, NK_Add, s, dc_corner(&c, y0, x1, dc_bin(&c, NK_Mul, gy, fx)));
	s = dc_bin(&c, NK_Add, s, dc_corner(&c, y1, x0, dc_bin(&c, NK_Mul, fy, gx)));
	s = dc_bin(&c, NK_Add, s, dc_corner(&c, y1, x1, dc_bin(&c, NK_Mul, fy, fx)));
	if (mt) {
		struct value mv = imp_tval(im, mt);
		if (!mv.node)
			return -1;
		const struct type *mty = val_type(mv);
		if (mty->elem != elem || mty->rank != 4 || mty->dims[0] != N || mty->dims[1] != G * K ||
		    mty->dims[2] != OH || mty->dims[3] != OW)
			return imp_op_err(im, "mask must be [%llu, %llu, %llu, %llu] of X's type", (unsigned long long)N,
				      (unsigned long long)(G * K), (unsigned long long)OH, (unsigned long long)OW);
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
	uint64_t y4[4] = {N, OC, OH, OW};
	if (!bt)
		return imp_set_out(im, 0, imp_b_reshape(im, r, y4, 4, name));
	struct value bv = imp_tval(im, bt);
	if (!bv.node)
		return -1;
	if (val_type(bv)->rank != 1 || val_type(bv)->dims[0] != OC || val_type(bv)->elem != elem)
		return imp_op_err(im, "B must be [%llu] of X's type", (unsigned long long)OC);
	uint64_t bd[4] = {1, OC, 1, 1};
	r = imp_b_reshape(im, r, y4, 4, imp_dname(im, name, "nobias"));
	struct value bb = imp_b_broadcast(im, imp_b_reshape(im, bv, bd, 4, imp_dname(im, name, "b4")), y4, 4, imp_dname(im, name, "bb"));
	struct value ab[2] = {r, bb};
	return imp_set_out(im, 0, r.node && bb.node ? imp_b_node(im, NK_Add, name, ab, 2, val_type(r)) : no_value);
}
