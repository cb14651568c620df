/* ops_sample.c - GridSample, RoiAlign and MaxUnpool as compositions of
 * existing kinds.
 *
 * GridSample (opset 16; 20: also 3-D, trilinear with eight taps at the
 * flattened index (z * H + y) * W + x, and the modes named linear and
 * cubic): the grid is run-time data, so the sampling is
 * computed in the graph. For N x C x H x W input and an N x Ho x Wo x 2
 * grid, the P = Ho * Wo sample points of every batch entry become [N, 1, P]
 * vectors x and y; each is unnormalized to pixel space (align_corners:
 * (g + 1) / 2 * (S - 1), else ((g + 1) * S - 1) / 2) and, for border and
 * reflection padding, clamped or reflected then clamped into [0, S - 1].
 * A tap at integer coordinates (tx, ty) reads the input flattened to
 * [N, C, H * W] with one GatherElements at ty * W + tx (coordinates clamped
 * into range first), and a validity mask (0 <= tx < W and 0 <= ty < H)
 * Selects zero for taps outside the image. bilinear weighs four taps by the
 * fractional parts, nearest reads one tap at the coordinates rounded half to
 * even, bicubic sixteen taps with the cubic convolution weights (A = -0.75),
 * the padding applied to each tap's integer coordinates.
 *
 * RoiAlign (average mode, sampling_ratio > 0 so the sample count is
 * static): every region's sampling points (output_height x output_width
 * bins of sampling_ratio^2 points) are computed at run time from rois in the
 * reference's order of operations (start + bin_index * bin_size + (i + 0.5)
 * * bin_size / grid), clamped as the reference does (points beyond [-1, size]
 * get zero weights; coordinates below 0 read 0; the last row and column
 * repeat), and the four bilinear taps are read with the GridSample taps from
 * the image of the region's batch entry (Gather of the input by
 * batch_indices); BatchedReduceAdd sums each bin's points, a Div averages.
 *
 * MaxUnpool: the values scatter (ScatterElements on the flattened tensor)
 * into zeros at their indices, which count in the default output shape
 * ((in - 1) * stride - pads + kernel per spatial dimension); an explicit
 * output_shape, which must be known and at least that large, places the
 * default-shaped result at its origin (InsertTensor into zeros).
 */
#include "import/onnx/internal.h"

#include <stdio.h>
#include <string.h>

/* Building context of one GridSample node. */
struct gs {
	struct importer *im;
	const char *name;
	const struct type *ft;  /* [N, 1, P] of the grid's float kind */
	const struct type *it;  /* [N, 1, P] int64 */
	const struct type *vt;  /* [N, C, P] of the input's kind */
	struct value flat;      /* input as [N, C, D * H * W] */
	uint64_t D, H, W;       /* D = 1 for a 2-D input */
	int pad;                /* 0 zeros, 1 border, 2 reflection */
	bool align;
	unsigned k;             /* helper-name counter */
};

/* Sets c's types for n samplings of p points each from ch channels, of
 * float kind fe: ft and it [n, 1, p], vt [n, ch, p]; NULL where imp_ty
 * reported. */
static void gs_types(struct gs *c, int fe, uint64_t n, uint64_t ch, uint64_t p)
{
	uint64_t d3[3] = {n, 1, p};
	c->ft = imp_ty(c->im, fe, d3, 3);
	c->it = imp_ty(c->im, EK_I64, d3, 3);
	d3[1] = ch;
	c->vt = imp_ty(c->im, fe, d3, 3);
}

static const char *gs_name(struct gs *c)
{
	char sfx[24];
	snprintf(sfx, sizeof sfx, "gs%u", c->k++);
	return imp_dname(c->im, c->name, sfx);
}

static struct value gs_f(struct gs *c, double f)
{
	return imp_b_splat_const(c->im, imp_dname(c->im, c->name, "k"), c->ft, f);
}

static struct value gs_bin(struct gs *c, unsigned kind, struct value a, struct value b)
{
	struct value ops[2] = {a, b};
	const struct type *t = a.node ? val_type(a) : NULL;
	if (t && (kind == NK_CmpLT || kind == NK_CmpLTE || kind == NK_CmpEQ))
		t = type_with_elem(c->im->tc, t, EK_BOOL);
	return imp_b_node(c->im, kind, gs_name(c), ops, 2, t);
}

static struct value gs_clip(struct gs *c, struct value a, double lo, double hi)
{
	struct value r = imp_b_unary(c->im, NK_Clip, gs_name(c), a);
	if (r.node) {
		node_set_float(c->im->m, r.node, AN_min, lo);
		node_set_float(c->im->m, r.node, AN_max, hi);
	}
	return r;
}

static struct value gs_sel(struct gs *c, struct value cond, struct value a, struct value b)
{
	struct value ops[3] = {cond, a, b};
	return imp_b_node(c->im, NK_Select, gs_name(c), ops, 3, a.node ? val_type(a) : NULL);
}

/* Grid coordinate g in [-1, 1] -> pixel coordinate along a size-S axis. */
static struct value gs_unnormalize(struct gs *c, struct value g, uint64_t S)
{
	struct value p1 = gs_bin(c, NK_Add, g, gs_f(c, 1));
	if (c->align)
		return gs_bin(c, NK_Mul, gs_bin(c, NK_Div, p1, gs_f(c, 2)), gs_f(c, (double)S - 1));
	struct value s = gs_bin(c, NK_Sub, gs_bin(c, NK_Mul, p1, gs_f(c, (double)S)), gs_f(c, 1));
	return gs_bin(c, NK_Div, s, gs_f(c, 2));
}

/* Reflects v into [tlo / 2, thi / 2] (bounds given doubled). */
static struct value gs_reflect(struct gs *c, struct value v, double tlo, double thi)
{
	if (tlo == thi)
		return gs_f(c, 0);
	double lo = tlo / 2, span = (thi - tlo) / 2;
	struct value a = imp_b_unary(c->im, NK_Abs, gs_name(c), gs_bin(c, NK_Sub, v, gs_f(c, lo)));
	struct value extra = gs_bin(c, NK_Fmod, a, gs_f(c, span));
	struct value flips = imp_b_unary(c->im, NK_Floor, gs_name(c), gs_bin(c, NK_Div, a, gs_f(c, span)));
	struct value odd = gs_bin(c, NK_CmpEQ, gs_bin(c, NK_Fmod, flips, gs_f(c, 2)), gs_f(c, 1));
	struct value even_v = gs_bin(c, NK_Add, extra, gs_f(c, lo));
	struct value odd_v = gs_bin(c, NK_Add, gs_bin(c, NK_Sub, gs_f(c, span), extra), gs_f(c, lo));
	return gs_sel(c, odd, odd_v, even_v);
}

/* The padding mode's coordinate mapping along a size-S axis. */
static struct value gs_pad(struct gs *c, struct value v, uint64_t S)
{
	if (c->pad == 0)
		return v;
	if (c->pad == 2) {
		double s = (double)S;
		v = c->align ? gs_reflect(c, v, 0, 2 * (s - 1)) : gs_reflect(c, v, -1, 2 * s - 1);
	}
	return gs_clip(c, v, 0, (double)S - 1);
}

static struct value gs_bcast(struct gs *c, struct value v)
{
	return imp_b_broadcast(c->im, v, c->vt->dims, 3, gs_name(c));
}

/* The input at integer-valued float coordinates (x, y) and, for a 3-D
 * input, z; zero outside. */
static struct value gs_tap3(struct gs *c, struct value x, struct value y, struct value z)
{
	struct value zero = gs_f(c, 0);
	struct value ok = gs_bin(c, NK_And, gs_bin(c, NK_CmpLTE, zero, x), gs_bin(c, NK_CmpLT, x, gs_f(c, (double)c->W)));
	ok = gs_bin(c, NK_And, ok, gs_bin(c, NK_CmpLTE, zero, y));
	ok = gs_bin(c, NK_And, ok, gs_bin(c, NK_CmpLT, y, gs_f(c, (double)c->H)));
	struct value xi = imp_b_convert(c->im, gs_clip(c, x, 0, (double)c->W - 1), EK_I64, gs_name(c));
	struct value yi = imp_b_convert(c->im, gs_clip(c, y, 0, (double)c->H - 1), EK_I64, gs_name(c));
	struct value w = imp_b_splat_const(c->im, imp_dname(c->im, c->name, "w"), c->it, (double)c->W);
	struct value idx = gs_bin(c, NK_Add, gs_bin(c, NK_Mul, yi, w), xi);
	if (z.node) {
		ok = gs_bin(c, NK_And, ok, gs_bin(c, NK_CmpLTE, zero, z));
		ok = gs_bin(c, NK_And, ok, gs_bin(c, NK_CmpLT, z, gs_f(c, (double)c->D)));
		struct value zi = imp_b_convert(c->im, gs_clip(c, z, 0, (double)c->D - 1), EK_I64, gs_name(c));
		struct value hw = imp_b_splat_const(c->im, imp_dname(c->im, c->name, "hw"), c->it, (double)(c->H * c->W));
		idx = gs_bin(c, NK_Add, gs_bin(c, NK_Mul, zi, hw), idx);
	}
	struct value ops[2] = {c->flat, gs_bcast(c, idx)};
	struct value g = imp_b_node(c->im, NK_GatherElements, gs_name(c), ops, 2, c->vt);
	if (g.node)
		node_set_int(c->im->m, g.node, AN_axis, 2);
	struct value vz = imp_b_splat_const(c->im, imp_dname(c->im, c->name, "z"), c->vt, 0);
	return gs_sel(c, gs_bcast(c, ok), g, vz);
}

static struct value gs_tap(struct gs *c, struct value x, struct value y)
{
	return gs_tap3(c, x, y, no_value);
}

/* acc + v * w (w broadcast over channels); v * w when acc is absent. */
static struct value gs_acc(struct gs *c, struct value acc, struct value v, struct value w)
{
	struct value t = gs_bin(c, NK_Mul, v, gs_bcast(c, w));
	return acc.node ? gs_bin(c, NK_Add, acc, t) : t;
}

/* GridSample 20's linear mode on a 3-D input: eight taps. */
static struct value gs_trilinear(struct gs *c, struct value ix, struct value iy, struct value iz)
{
	struct value p0[3], p1[3], e[3], d[3], v[3] = {ix, iy, iz};
	for (unsigned k = 0; k < 3; k++) {
		p0[k] = imp_b_unary(c->im, NK_Floor, gs_name(c), v[k]);
		p1[k] = gs_bin(c, NK_Add, p0[k], gs_f(c, 1));
		e[k] = gs_bin(c, NK_Sub, p1[k], v[k]);
		d[k] = gs_bin(c, NK_Sub, v[k], p0[k]);
	}
	struct value acc = no_value;
	for (unsigned t = 0; t < 8; t++) {
		bool bx = t & 1, by = t & 2, bz = t & 4;
		struct value w = gs_bin(c, NK_Mul, gs_bin(c, NK_Mul, bx ? d[0] : e[0], by ? d[1] : e[1]), bz ? d[2] : e[2]);
		acc = gs_acc(c, acc, gs_tap3(c, bx ? p1[0] : p0[0], by ? p1[1] : p0[1], bz ? p1[2] : p0[2]), w);
	}
	return acc;
}

static struct value gs_bilinear(struct gs *c, struct value ix, struct value iy)
{
	struct value x0 = imp_b_unary(c->im, NK_Floor, gs_name(c), ix);
	struct value y0 = imp_b_unary(c->im, NK_Floor, gs_name(c), iy);
	struct value x1 = gs_bin(c, NK_Add, x0, gs_f(c, 1)), y1 = gs_bin(c, NK_Add, y0, gs_f(c, 1));
	struct value ex = gs_bin(c, NK_Sub, x1, ix), dx = gs_bin(c, NK_Sub, ix, x0);
	struct value ey = gs_bin(c, NK_Sub, y1, iy), dy = gs_bin(c, NK_Sub, iy, y0);
	struct value acc = gs_acc(c, no_value, gs_tap(c, x0, y0), gs_bin(c, NK_Mul, ex, ey));
	acc = gs_acc(c, acc, gs_tap(c, x1, y0), gs_bin(c, NK_Mul, dx, ey));
	acc = gs_acc(c, acc, gs_tap(c, x0, y1), gs_bin(c, NK_Mul, ex, dy));
	return gs_acc(c, acc, gs_tap(c, x1, y1), gs_bin(c, NK_Mul, dx, dy));
}

/* Cubic convolution weights of the four taps around fraction t. */
static void gs_cubic_weights(struct gs *c, struct value t, struct value w[4])
{
	const double A = -0.75;
	for (unsigned i = 0; i < 4; i++) {
		/* distances 1 + t, t, 1 - t, 2 - t */
		struct value d = i == 0 ? gs_bin(c, NK_Add, t, gs_f(c, 1))
			       : i == 1 ? t
			       : gs_bin(c, NK_Sub, gs_f(c, i == 2 ? 1 : 2), t);
		if (i == 1 || i == 2) {
			/* ((A + 2) d - (A + 3)) d d + 1 */
			struct value p = gs_bin(c, NK_Sub, gs_bin(c, NK_Mul, d, gs_f(c, A + 2)), gs_f(c, A + 3));
			p = gs_bin(c, NK_Mul, gs_bin(c, NK_Mul, p, d), d);
			w[i] = gs_bin(c, NK_Add, p, gs_f(c, 1));
		} else {
			/* ((A d - 5A) d + 8A) d - 4A */
			struct value p = gs_bin(c, NK_Sub, gs_bin(c, NK_Mul, d, gs_f(c, A)), gs_f(c, 5 * A));
			p = gs_bin(c, NK_Add, gs_bin(c, NK_Mul, p, d), gs_f(c, 8 * A));
			w[i] = gs_bin(c, NK_Sub, gs_bin(c, NK_Mul, p, d), gs_f(c, 4 * A));
		}
	}
}

static struct value gs_bicubic(struct gs *c, struct value ix, struct value iy)
{
	struct value x0 = imp_b_unary(c->im, NK_Floor, gs_name(c), ix);
	struct value y0 = imp_b_unary(c->im, NK_Floor, gs_name(c), iy);
	struct value wx[4], wy[4], xs[4], ys[4];
	gs_cubic_weights(c, gs_bin(c, NK_Sub, ix, x0), wx);
	gs_cubic_weights(c, gs_bin(c, NK_Sub, iy, y0), wy);
	for (unsigned i = 0; i < 4; i++) {
		xs[i] = gs_pad(c, i == 1 ? x0 : gs_bin(c, NK_Add, x0, gs_f(c, (double)i - 1)), c->W);
		ys[i] = gs_pad(c, i == 1 ? y0 : gs_bin(c, NK_Add, y0, gs_f(c, (double)i - 1)), c->H);
	}
	struct value out = no_value;
	for (unsigned j = 0; j < 4; j++) {
		struct value row = no_value;
		for (unsigned i = 0; i < 4; i++)
			row = gs_acc(c, row, gs_tap(c, xs[i], ys[j]), wx[i]);
		out = gs_acc(c, out, row, wy[j]);
	}
	return out;
}

int imp_op_grid_sample(struct importer *im, const onnx_node *n)
{
	struct tensor *x = imp_in_req(im, 0), *g = imp_in_req(im, 1);
	if (!x || !g)
		return -1;
	/* opset 20: 2-D or 3-D, modes renamed linear and cubic */
	bool v20 = im->opset >= 20;
	bool three = v20 && x->rank == 5;
	unsigned ns = three ? 3 : 2;
	if ((x->rank != 4 && !three) || g->rank != x->rank || g->dims[x->rank - 1] != ns || g->dims[0] != x->dims[0])
		return imp_op_err(im, v20 ? "input must be N x C x H x W (or N x C x D x H x W) and grid N x Ho x Wo x 2 "
					"(or N x Do x Ho x Wo x 3)"
				      : "input must be N x C x H x W and grid N x Ho x Wo x 2");
	if (!imp_dt_is_float(g->dtype) || g->dtype != x->dtype || imp_dt_elem(x->dtype) < 0)
		return imp_op_err(im, "input and grid must have one floating-point type");
	const char *mode = imp_attr_s(im, n, "mode", v20 ? "linear" : "bilinear");
	const char *pmode = imp_attr_s(im, n, "padding_mode", "zeros");
	int m = !strcmp(mode, v20 ? "linear" : "bilinear") ? 0
		: !strcmp(mode, "nearest")                  ? 1
		: !strcmp(mode, v20 ? "cubic" : "bicubic")  ? 2
							    : -1;
	int pad = !strcmp(pmode, "zeros") ? 0 : !strcmp(pmode, "border") ? 1 : !strcmp(pmode, "reflection") ? 2 : -1;
	if (m < 0)
		return imp_op_err(im, "unknown mode '%s' (%s)", mode, v20 ? "linear, nearest or cubic from opset 20"
								     : "bilinear, nearest or bicubic");
	if (pad < 0)
		return imp_op_err(im, "unknown padding_mode '%s'", pmode);
	if (three && m == 2)
		return imp_op_err(im, "the cubic mode is defined for 2-D inputs only");
	uint64_t N = x->dims[0], C = x->dims[1], P = 1, pix = 1;
	for (unsigned k = 1; k <= ns; k++) {
		uint64_t lim = (uint64_t)1 << 24;
		if (g->dims[k] > lim || x->dims[1 + k] > lim || P * g->dims[k] > lim || pix * x->dims[1 + k] > lim)
			return imp_op_err(im, "input images or grids of more than 2^24 positions are not supported");
		P *= g->dims[k], pix *= x->dims[1 + k];
	}
	if (pix == 0)
		return imp_op_err(im, "input must not be empty");
	struct gs c = {.im = im, .name = imp_out_name(im, 0), .D = three ? x->dims[2] : 1, .H = x->dims[x->rank - 2],
		       .W = x->dims[x->rank - 1], .pad = pad, .align = imp_attr_i(n, "align_corners", 0) != 0};
	int fe = imp_dt_elem(g->dtype);
	gs_types(&c, fe, N, C, P);
	uint64_t d3[3] = {N, C, pix};
	c.flat = imp_b_reshape(im, imp_tval(im, x), d3, 3, imp_dname(im, c.name, "flat"));
	uint64_t gd[3] = {N, P, ns}, sd[3] = {N, P, 1};
	struct value gv = imp_b_reshape(im, imp_tval(im, g), gd, 3, imp_dname(im, c.name, "grid"));
	struct value coord[3];
	uint64_t size[3] = {c.W, c.H, c.D};
	for (unsigned k = 0; k < ns; k++) {
		struct value s = imp_b_node(im, NK_Slice, gs_name(&c), &gv, 1, imp_ty(im, fe, sd, 3));
		if (s.node)
			node_set_ints(im->m, s.node, AN_start, (int64_t[]){0, 0, k}, 3);
		coord[k] = imp_b_reshape(im, s, c.ft ? c.ft->dims : sd, 3, gs_name(&c));
		coord[k] = gs_unnormalize(&c, coord[k], size[k]);
	}
	struct value y;
	if (m == 2) {
		y = gs_bicubic(&c, coord[0], coord[1]);
	} else {
		struct value ic[3];
		for (unsigned k = 0; k < ns; k++)
			ic[k] = gs_pad(&c, coord[k], size[k]);
		if (m == 0 && three)
			y = gs_trilinear(&c, ic[0], ic[1], ic[2]);
		else if (m == 0)
			y = gs_bilinear(&c, ic[0], ic[1]);
		else
			y = gs_tap3(&c, imp_b_unary(im, NK_Round, gs_name(&c), ic[0]), imp_b_unary(im, NK_Round, gs_name(&c), ic[1]),
				    three ? imp_b_unary(im, NK_Round, gs_name(&c), ic[2]) : no_value);
	}
	uint64_t od[5] = {N, C};
	for (unsigned k = 1; k <= ns; k++)
		od[1 + k] = g->dims[k];
	y = imp_b_reshape(im, y, od, 2 + ns, c.name);
	if (!y.node)
		return -1;
	return imp_set_out(im, 0, y);
}

/* [R, 1, S] broadcast of per-sample constants v[S] (float kind of c->ft). */
static struct value ra_samples(struct gs *c, int dtype, const double *v, uint64_t S)
{
	uint64_t d[3] = {1, 1, S};
	struct tensor *t = imp_t_from_floats(c->im, gs_name(c), dtype, 3, d, v);
	return imp_b_broadcast(c->im, t ? imp_tval(c->im, t) : no_value, c->ft->dims, 3, gs_name(c));
}

/* Clamps a sample coordinate v along a size-S axis as the reference does:
 * lo and hi are the taps, frac the weight of hi. */
static void ra_axis(struct gs *c, struct value v, uint64_t S, struct value *lo, struct value *hi,
		    struct value *frac)
{
	double last = (double)S - 1;
	v = gs_bin(c, NK_Max, v, gs_f(c, 0));
	struct value l = imp_b_unary(c->im, NK_Floor, gs_name(c), v);
	struct value at_end = gs_bin(c, NK_CmpLTE, gs_f(c, last), l);
	*lo = gs_sel(c, at_end, gs_f(c, last), l);
	*hi = gs_sel(c, at_end, gs_f(c, last), gs_bin(c, NK_Add, l, gs_f(c, 1)));
	v = gs_sel(c, at_end, *lo, v);
	*frac = gs_bin(c, NK_Sub, v, *lo);
}

int imp_op_roi_align(struct importer *im, const onnx_node *n)
{
	struct tensor *x = imp_in_req(im, 0), *rois = imp_in_req(im, 1), *bi = imp_in_req(im, 2);
	if (!x || !rois || !bi)
		return -1;
	if (x->rank != 4 || rois->rank != 2 || rois->dims[1] != 4 || bi->rank != 1 || bi->dims[0] != rois->dims[0])
		return imp_op_err(im, "X must be N x C x H x W, rois R x 4 and batch_indices of R elements");
	if (!imp_dt_is_float(x->dtype) || rois->dtype != x->dtype || imp_dt_elem(x->dtype) < 0 ||
	    (bi->dtype != DT_INT64 && bi->dtype != DT_INT32))
		return imp_op_err(im, "X and rois must have one floating-point type, batch_indices integers");
	const char *mode = imp_attr_s(im, n, "mode", "avg");
	if (strcmp(mode, "avg") != 0)
		return imp_op_err(im, "mode '%s' is not supported (only avg)", mode);
	const char *ctm = imp_attr_s(im, n, "coordinate_transformation_mode",
				 im->opset >= 16 ? "half_pixel" : "output_half_pixel");
	bool half = !strcmp(ctm, "half_pixel");
	if (!half && strcmp(ctm, "output_half_pixel") != 0)
		return imp_op_err(im, "unknown coordinate_transformation_mode '%s'", ctm);
	int64_t oh = imp_attr_i(n, "output_height", 1), ow = imp_attr_i(n, "output_width", 1);
	int64_t sr = imp_attr_i(n, "sampling_ratio", 0);
	double scale = imp_attr_f(n, "spatial_scale", 1.0f);
	if (oh < 1 || ow < 1 || oh > 4096 || ow > 4096)
		return imp_op_err(im, "output_height and output_width must be in [1, 4096]");
	if (sr < 1 || sr > 64)
		return imp_op_err(im, "sampling_ratio %lld is not supported (the adaptive 0 depends on run-time rois; "
			      "at most 64)", (long long)sr);
	if (x->dims[2] == 0 || x->dims[3] == 0 || x->dims[2] * x->dims[3] > ((uint64_t)1 << 24))
		return imp_op_err(im, "images must have between 1 and 2^24 pixels");
	uint64_t R = rois->dims[0], C = x->dims[1], G = (uint64_t)(sr * sr);
	uint64_t S = (uint64_t)(oh * ow) * G;
	if (S > ((uint64_t)1 << 20))
		return imp_op_err(im, "output_height * output_width * sampling_ratio^2 must be at most 2^20");
	struct gs c = {.im = im, .name = imp_out_name(im, 0), .H = x->dims[2], .W = x->dims[3], .pad = 0};
	int fe = imp_dt_elem(x->dtype);
	gs_types(&c, fe, R, C, S);
	if (!c.ft || !c.it || !c.vt)
		return -1;
	uint64_t fd[3] = {x->dims[0], C, c.H * c.W};
	struct value gops[2] = {imp_b_reshape(im, imp_tval(im, x), fd, 3, imp_dname(im, c.name, "flat")), imp_tval(im, bi)};
	fd[0] = R;
	c.flat = imp_b_node(im, NK_Gather, imp_dname(im, c.name, "images"), gops, 2, imp_ty(im, fe, fd, 3));
	if (!c.flat.node)
		return -1;
	node_set_int(im->m, c.flat.node, AN_axis, 0);
	/* per-sample bin and point indices, sample s = ((ph * ow + pw) * sr + iy) * sr + ix */
	double *pb[2], *pi[2];
	for (unsigned k = 0; k < 2; k++) {
		pb[k] = arena_alloc(&im->scratch, S * sizeof(double));
		pi[k] = arena_alloc(&im->scratch, S * sizeof(double));
	}
	for (uint64_t s = 0; s < S; s++) {
		uint64_t ix = s % (uint64_t)sr, iy = s / (uint64_t)sr % (uint64_t)sr, bin = s / G;
		pb[0][s] = (double)(bin % (uint64_t)ow);
		pb[1][s] = (double)(bin / (uint64_t)ow);
		pi[0][s] = (double)ix + 0.5;
		pi[1][s] = (double)iy + 0.5;
	}
	struct value coord[2], outside = no_value;
	uint64_t rd[2] = {R, 1}, r3[3] = {R, 1, 1};
	struct value rv = imp_tval(im, rois);
	for (unsigned k = 0; k < 2; k++) {
		struct value corner[2];
		for (unsigned e = 0; e < 2; e++) {
			struct value s = imp_b_node(im, NK_Slice, gs_name(&c), &rv, 1, imp_ty(im, fe, rd, 2));
			if (s.node)
				node_set_ints(im->m, s.node, AN_start, (int64_t[]){0, 2 * e + k}, 2);
			s = imp_b_broadcast(im, imp_b_reshape(im, s, r3, 3, gs_name(&c)), c.ft->dims, 3, gs_name(&c));
			s = gs_bin(&c, NK_Mul, s, gs_f(&c, scale));
			corner[e] = half ? gs_bin(&c, NK_Sub, s, gs_f(&c, 0.5)) : s;
		}
		struct value size = gs_bin(&c, NK_Sub, corner[1], corner[0]);
		if (!half)
			size = gs_bin(&c, NK_Max, size, gs_f(&c, 1));
		struct value bin = gs_bin(&c, NK_Div, size, gs_f(&c, (double)(k ? oh : ow)));
		struct value v = gs_bin(&c, NK_Add, corner[0], gs_bin(&c, NK_Mul, ra_samples(&c, x->dtype, pb[k], S), bin));
		struct value off = gs_bin(&c, NK_Mul, ra_samples(&c, x->dtype, pi[k], S), bin);
		coord[k] = gs_bin(&c, NK_Add, v, gs_bin(&c, NK_Div, off, gs_f(&c, (double)sr)));
		double lim = (double)(k ? c.H : c.W);
		struct value o = gs_bin(&c, NK_Or, gs_bin(&c, NK_CmpLT, coord[k], gs_f(&c, -1)),
					gs_bin(&c, NK_CmpLT, gs_f(&c, lim), coord[k]));
		outside = k ? gs_bin(&c, NK_Or, outside, o) : o;
	}
	struct value xl, xh, lx, yl, yh, ly;
	ra_axis(&c, coord[0], c.W, &xl, &xh, &lx);
	ra_axis(&c, coord[1], c.H, &yl, &yh, &ly);
	struct value hx = gs_bin(&c, NK_Sub, gs_f(&c, 1), lx), hy = gs_bin(&c, NK_Sub, gs_f(&c, 1), ly);
	struct value zero = gs_f(&c, 0);
	struct value w[4] = {gs_bin(&c, NK_Mul, hy, hx), gs_bin(&c, NK_Mul, hy, lx), gs_bin(&c, NK_Mul, ly, hx),
			     gs_bin(&c, NK_Mul, ly, lx)};
	struct value tx[4] = {xl, xh, xl, xh}, tyv[4] = {yl, yl, yh, yh};
	struct value acc = no_value;
	for (unsigned i = 0; i < 4; i++)
		acc = gs_acc(&c, acc, gs_tap(&c, tx[i], tyv[i]), gs_sel(&c, outside, zero, w[i]));
	uint64_t d5[5] = {R, C, (uint64_t)oh, (uint64_t)ow, G};
	struct value bins = imp_b_reshape(im, acc, d5, 5, gs_name(&c));
	struct value sum = imp_b_node(im, NK_BatchedReduceAdd, gs_name(&c), &bins, 1, imp_ty(im, fe, d5, 4));
	if (!sum.node)
		return -1;
	int64_t ax = 4;
	node_set_ints(im->m, sum.node, AN_axes, &ax, 1);
	struct value dops[2] = {sum, imp_b_splat_const(im, imp_dname(im, c.name, "count"), val_type(sum), (double)G)};
	/* imp_set_out fails on a node that was not built */
	return imp_set_out(im, 0, imp_b_node(im, NK_Div, c.name, dops, 2, val_type(sum)));
}

int imp_op_max_unpool(struct importer *im, const onnx_node *n)
{
	struct tensor *x = imp_in_req(im, 0), *it = imp_in_req(im, 1);
	if (!x || !it)
		return -1;
	unsigned r = x->rank;
	if (r < 3 || it->rank != r || memcmp(it->dims, x->dims, r * sizeof *x->dims) != 0 || it->dtype != DT_INT64)
		return imp_op_err(im, "I must be an int64 tensor of X's shape (N x C x spatial)");
	unsigned nsp = r - 2;
	const int64_t *ks = NULL, *st = NULL, *pads = NULL;
	if (imp_attr_ints(n, "kernel_shape", &ks) != (long)nsp)
		return imp_op_err(im, "kernel_shape must have %u values", nsp);
	long ns = imp_attr_ints(n, "strides", &st), np = imp_attr_ints(n, "pads", &pads);
	if ((ns >= 0 && ns != (long)nsp) || (np >= 0 && np != 2 * (long)nsp))
		return imp_op_err(im, "strides must have %u values and pads %u", nsp, 2 * nsp);
	uint64_t dd[GLOW_MAX_RANK];
	dd[0] = x->dims[0];
	dd[1] = x->dims[1];
	for (unsigned i = 0; i < nsp; i++) {
		int64_t s = ns >= 0 ? st[i] : 1, pb = np >= 0 ? pads[i] : 0, pe = np >= 0 ? pads[i + nsp] : 0;
		const int64_t lim = (int64_t)1 << 20;
		if (s < 1 || s > lim || ks[i] < 1 || ks[i] > lim || pb < 0 || pb > lim || pe < 0 || pe > lim)
			return imp_op_err(im, "kernel_shape and strides must be in [1, 2^20], pads in [0, 2^20]");
		if (x->dims[2 + i] == 0 || x->dims[2 + i] > ((uint64_t)1 << 40))
			return imp_op_err(im, "spatial dimensions must be in [1, 2^40]");
		int64_t d = ((int64_t)x->dims[2 + i] - 1) * s - pb - pe + ks[i];
		if (d < 1)
			return imp_op_err(im, "kernel_shape, strides and pads give an empty output");
		dd[2 + i] = (uint64_t)d;
	}
	uint64_t od[GLOW_MAX_RANK];
	memcpy(od, dd, r * sizeof *od);
	if (imp_in_opt(im, 2)) {
		uint64_t cnt;
		const int64_t *os = imp_in_ints(im, 2, &cnt);
		if (!os)
			return -1;
		if (cnt != r)
			return imp_op_err(im, "output_shape must have %u values", r);
		for (unsigned i = 0; i < r; i++) {
			if (os[i] < (int64_t)dd[i] || (i < 2 && os[i] != (int64_t)dd[i]))
				return imp_op_err(im, "output_shape must keep N and C and be at least the default shape");
			od[i] = (uint64_t)os[i];
		}
	}
	const char *name = imp_out_name(im, 0);
	const struct type *xt = imp_t_type(im, x);
	if (!xt)
		return -1;
	uint64_t cnt = imp_t_numel(x), total = 1;
	for (unsigned i = 0; i < r; i++)
		if (!mul_overflow_u64(total, dd[i], &total))
			return imp_op_err(im, "output shape is too large");
	struct value ops[3];
	ops[0] = imp_b_splat_const(im, imp_dname(im, name, "zeros"), imp_ty(im, xt->elem, &total, 1), 0);
	ops[1] = imp_b_reshape(im, imp_tval(im, it), &cnt, 1, imp_dname(im, name, "idx"));
	ops[2] = imp_b_reshape(im, imp_tval(im, x), &cnt, 1, imp_dname(im, name, "upd"));
	struct value s = imp_b_node(im, NK_ScatterElements, imp_dname(im, name, "scatter"), ops, 3,
				ops[0].node ? val_type(ops[0]) : NULL);
	bool same = memcmp(od, dd, r * sizeof *od) == 0;
	struct value y = imp_b_reshape(im, s, dd, r, same ? name : imp_dname(im, name, "default"));
	if (!same) {
		struct value ins[2] = {imp_b_splat_const(im, imp_dname(im, name, "big"), imp_ty(im, xt->elem, od, r), 0), y};
		y = imp_b_node(im, NK_InsertTensor, name, ins, 2, ins[0].node ? val_type(ins[0]) : NULL);
		if (y.node) {
			int64_t zero[GLOW_MAX_RANK] = {0};
			node_set_ints(im->m, y.node, AN_start, zero, r);
		}
	}
	if (!y.node)
		return -1;
	return imp_set_out(im, 0, y);
}
