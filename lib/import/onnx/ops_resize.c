/* ops_resize.c - Resize (opsets 10 to 19) and Upsample: the node kinds
 * where they agree with ONNX, gathers along each axis for every other
 * mode, coordinate transformation and the antialias filter of opset 18.
 */
#include "import/onnx/internal.h"

#include <math.h>
#include <string.h>

/* the taps of one output position without antialias; with antialias at
 * most RESIZE_MAX_AA_TAPS (a downsampling by up to 1/15 for linear, 1/7
 * for cubic) */
#define RESIZE_MAX_TAPS 4
#define RESIZE_MAX_AA_TAPS 33

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
	bool antialias; /* opset 18: linear and cubic as filters widened by 1 / scale */
};

/* The source coordinate of output position i along an axis of in input
 * positions at scale s (ow = s * in, a real number as in ONNX's reference);
 * *outside for tf_crop_and_resize positions outside the input. */
static double resize_coord(const struct resize_spec *sp, uint64_t i, uint64_t in, uint64_t out, double s, double lo,
			   double hi, bool *outside)
{
	double x = (double)i, ow = s * (double)in, li = (double)in - 1, xo;
	*outside = false;
	if (strcmp(sp->ctm, "half_pixel_symmetric") == 0) {
		/* opset 19: half_pixel about the input's centre, corrected for
		 * the rounding of the output size */
		double adj = (double)out / ow, c = (double)in / 2;
		xo = c * (1 - adj) + (x + 0.5) / s - 0.5;
	} else if (strcmp(sp->ctm, "align_corners") == 0) {
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

/* The filter of antialias (opset 18) at distance x (in input positions,
 * already divided by the widening): a triangle for linear, the cubic
 * kernel with coefficient a for cubic. */
static double aa_filter(const struct resize_spec *sp, double x)
{
	x = fabs(x);
	if (sp->mode == RS_LINEAR)
		return x < 1 ? 1 - x : 0;
	double a = sp->cubic_a;
	if (x < 1)
		return ((a + 2) * x - (a + 3)) * x * x + 1;
	if (x < 2)
		return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a;
	return 0;
}

/* The number of taps of antialias along an axis at scale s, as a double:
 * a tiny scale asks for more taps than any integer type holds, and the
 * caller refuses more than RESIZE_MAX_AA_TAPS before converting. */
static double aa_ntaps(const struct resize_spec *sp, double s)
{
	double support = (sp->mode == RS_CUBIC ? 2.0 : 1.0) * (s < 1 ? 1 / s : 1);
	return ceil(support) * 2 + 1;
}

/* The taps of antialias (onnxruntime's resampler): the filter centred on
 * xo + 0.5 and widened by 1 / s when downsampling covers the input
 * positions floor(c - support + 0.5) .. floor(c + support + 0.5) - 1;
 * the weights are normalized to sum 1; positions outside the input read
 * the edge, or are dropped with exclude_outside. n taps, the unused ones
 * of weight 0. */
static void aa_taps(const struct resize_spec *sp, double xo, uint64_t in, double s, unsigned n, int64_t *idx,
		    double *w)
{
	double widen = s < 1 ? 1 / s : 1, support = (sp->mode == RS_CUBIC ? 2.0 : 1.0) * widen, c = xo + 0.5;
	int64_t lo = (int64_t)floor(c - support + 0.5), hi = (int64_t)floor(c + support + 0.5);
	double sum = 0;
	unsigned t = 0;
	for (int64_t j = lo; j < hi && t < n; j++) {
		bool inside = j >= 0 && j < (int64_t)in;
		if (sp->exclude_outside && !inside)
			continue;
		w[t] = aa_filter(sp, ((double)j - c + 0.5) / widen);
		idx[t] = j < 0 ? 0 : j >= (int64_t)in ? (int64_t)in - 1 : j;
		sum += w[t++];
	}
	for (unsigned k = 0; k < t; k++)
		w[k] = sum != 0 ? w[k] / sum : 0;
	for (; t < n; t++)
		w[t] = 0, idx[t] = 0;
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
		return imp_op_err(im, "output dimension %g is out of range (0 to %llu)", d,
			      (unsigned long long)RESIZE_MAX_DIM);
	*out = (uint64_t)d;
	return 0;
}

/* Resamples x along every axis whose mapping is not the identity. */
static struct value resize_gathers(struct importer *im, const struct resize_spec *sp, struct tensor *x,
				   const double *scales, const uint64_t *dims, const double *roi, double extrap,
				   const char *name)
{
	unsigned rank = x->rank;
	struct value cur = imp_tval(im, x);
	uint64_t cd[GLOW_MAX_RANK];
	memcpy(cd, x->dims, rank * sizeof *cd);
	for (unsigned k = 0; k < rank && cur.node; k++) {
		uint64_t in = x->dims[k], out = dims[k];
		/* the tables become constants of the module: a resampled axis
		 * longer than any image or signal a model resizes is refused
		 * rather than written out as hundreds of megabytes of weights */
		if (out > RESIZE_MAX_TABLE) {
			imp_op_err(im, "resampling axis %u to %llu elements needs tables larger than %llu entries", k,
			       (unsigned long long)out, (unsigned long long)RESIZE_MAX_TABLE);
			return no_value;
		}
		bool aa = sp->antialias && sp->mode != RS_NEAREST;
		double taps = aa ? aa_ntaps(sp, scales[k]) : sp->mode == RS_CUBIC ? 4 : 2;
		if (taps > RESIZE_MAX_AA_TAPS) {
			imp_op_err(im, "antialias downsampling of axis %u by %g needs %.0f taps, more than %u", k, scales[k],
			       taps, (unsigned)RESIZE_MAX_AA_TAPS);
			return no_value;
		}
		unsigned n = (unsigned)taps;
		/* the index and weight tables of the n taps, and the
		 * extrapolation table, checked against the import's budget
		 * before they are computed */
		if (!imp_generated_fits(im, (uint64_t)n * out * (8 + imp_dt_size(x->dtype)) + out * imp_dt_size(x->dtype)))
			return no_value;
		/* the wider filter must not make the tables larger than cubic's
		 * largest (4 taps of RESIZE_MAX_TABLE positions) */
		if (aa && (uint64_t)n * out > 4 * RESIZE_MAX_TABLE) {
			imp_op_err(im, "antialias resampling of axis %u to %llu elements with %u taps needs tables larger than "
				   "%llu entries",
			       k, (unsigned long long)out, n, (unsigned long long)(4 * RESIZE_MAX_TABLE));
			return no_value;
		}
		int64_t *idx = arena_alloc(&im->scratch, (n * out + 1) * sizeof *idx);
		double *w = arena_alloc(&im->scratch, (n * out + 1) * sizeof *w);
		double *ext = arena_alloc(&im->scratch, (out + 1) * sizeof *ext);
		bool ident = in == out, any_out = false;
		for (uint64_t i = 0; i < out; i++) {
			bool outside;
			double xo = resize_coord(sp, i, in, out, scales[k], roi ? roi[k] : 0, roi ? roi[rank + k] : 1,
						 &outside);
			int64_t ti[RESIZE_MAX_AA_TAPS];
			double tw[RESIZE_MAX_AA_TAPS];
			if (aa)
				aa_taps(sp, xo, in, scales[k], n, ti, tw);
			else
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
			struct tensor *it = imp_t_from_ints(im, imp_dname(im, name, "idx"), DT_INT64, 1, &out, idx + t * out);
			struct value ops[2] = {cur, imp_tval(im, it)};
			struct value g = imp_b_node(im, NK_Gather, imp_dname(im, name, "tap"), ops, 2, gt);
			if (!g.node)
				return no_value;
			node_set_int(im->m, g.node, AN_axis, k);
			if (!ones) {
				struct tensor *wt = imp_t_from_floats(im, imp_dname(im, name, "w"), x->dtype, rank, wd, w + t * out);
				struct value m[2] = {g, imp_b_broadcast(im, imp_tval(im, wt), od, rank, imp_dname(im, name, "wb"))};
				g = imp_b_node(im, NK_Mul, imp_dname(im, name, "wtap"), m, 2, gt);
			}
			if (have) {
				struct value a[2] = {acc, g};
				acc = imp_b_node(im, NK_Add, imp_dname(im, name, "sum"), a, 2, gt);
			} else {
				acc = g, have = true;
			}
		}
		if (!have)
			acc = imp_b_splat_const(im, imp_dname(im, name, "zero"), gt, 0);
		if (any_out && acc.node) {
			struct tensor *et = imp_t_from_floats(im, imp_dname(im, name, "extrap"), x->dtype, rank, wd, ext);
			struct value a[2] = {acc, imp_b_broadcast(im, imp_tval(im, et), od, rank, imp_dname(im, name, "eb"))};
			acc = imp_b_node(im, NK_Add, imp_dname(im, name, "outside"), a, 2, gt);
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
int imp_op_resize(struct importer *im, const onnx_node *n)
{
	struct tensor *x = imp_in_req(im, 0);
	if (!x || !imp_float_input(im, x))
		return -1;
	bool upsample = strcmp(n->op_type, "Upsample") == 0;
	const char *mode = imp_attr_s(im, n, "mode", "nearest");
	const char *ctm = imp_attr_s(im, n, "coordinate_transformation_mode",
				 upsample || im->opset < 11 ? "asymmetric" : "half_pixel");
	const char *nm = imp_attr_s(im, n, "nearest_mode", upsample || im->opset < 11 ? "floor" : "round_prefer_floor");
	double scales[GLOW_MAX_RANK];
	uint64_t dims[GLOW_MAX_RANK];
	struct tensor *st = NULL, *sz = NULL;
	if (upsample && im->opset < 9) {
		const float *fv;
		long c = imp_attr_floats(n, "scales", &fv);
		if (c != (long)x->rank)
			return imp_op_err(im, "scales must have %u entries", x->rank);
		for (unsigned k = 0; k < x->rank; k++)
			scales[k] = fv[k];
	} else {
		st = imp_in_opt(im, im->opset < 11 || upsample ? 1 : 2);
		sz = im->opset < 11 || upsample ? NULL : imp_in_opt(im, 3);
		if (st && imp_t_numel(st) == 0)
			st = NULL;
		if (sz && imp_t_numel(sz) == 0)
			sz = NULL;
		if (!st && !sz)
			return imp_op_err(im, "scales or sizes are required");
		struct tensor *use = sz ? sz : st;
		const double *v = imp_t_floats(im, use);
		if (!v)
			return imp_op_err(im, "%s must be known at import", sz ? "sizes" : "scales");
		/* opset 18: axes names the axes scales or sizes cover; the
		 * others keep their size */
		unsigned ax[GLOW_MAX_RANK], nax;
		if (imp_attr_axes(im, n, x->rank, false, ax, &nax))
			return -1;
		if (imp_t_numel(use) != nax)
			return imp_op_err(im, "%s must have %u entries", sz ? "sizes" : "scales", nax);
		for (unsigned k = 0; k < x->rank; k++) {
			scales[k] = 1;
			dims[k] = x->dims[k];
		}
		/* keep_aspect_ratio_policy (opset 18) with sizes: one scale for
		 * the covered axes, the smallest (not_larger) or the largest
		 * (not_smaller) of sizes / input, each size rounded from it */
		const char *kp = imp_attr_s(im, n, "keep_aspect_ratio_policy", "stretch");
		bool not_larger = strcmp(kp, "not_larger") == 0, not_smaller = strcmp(kp, "not_smaller") == 0;
		if (!not_larger && !not_smaller && strcmp(kp, "stretch") != 0)
			return imp_op_err(im, "unknown keep_aspect_ratio_policy '%s'", kp);
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
			return imp_op_err(im, "bad scale %g", scales[k]);
		down |= scales[k] < 1;
		if (!sz && resize_dim(im, floor((double)x->dims[k] * scales[k]), &dims[k]))
			return -1;
		ints &= scales[k] >= 1 && scales[k] == floor(scales[k]);
	}
	/* antialias (opset 18) widens the linear and cubic filters when
	 * downsampling; nearest ignores it */
	bool aa = imp_attr_i(n, "antialias", 0) != 0 && strcmp(mode, "nearest") != 0;
	if (strcmp(ctm, "half_pixel_symmetric") == 0 && im->opset < 19)
		return imp_op_err(im, "coordinate_transformation_mode 'half_pixel_symmetric' is not defined before opset 19");
	struct resize_spec sp = {RS_NEAREST, ctm, nm, imp_attr_f(n, "cubic_coeff_a", -0.75f),
				 imp_attr_i(n, "exclude_outside", 0) != 0, aa};
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
		return imp_op_err(im, "resize mode '%s' is not supported", mode);
	}
	static const char *const ctms[] = {"half_pixel", "pytorch_half_pixel", "align_corners", "asymmetric",
					   "tf_half_pixel_for_nn", "tf_crop_and_resize", "half_pixel_symmetric"};
	static const char *const nms[] = {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"};
	bool ctm_ok = false, nm_ok = false;
	for (unsigned k = 0; k < sizeof ctms / sizeof *ctms; k++)
		ctm_ok |= strcmp(ctm, ctms[k]) == 0;
	for (unsigned k = 0; k < sizeof nms / sizeof *nms; k++)
		nm_ok |= strcmp(nm, nms[k]) == 0;
	if (!ctm_ok)
		return imp_op_err(im, "unknown coordinate_transformation_mode '%s'", ctm);
	if (!nm_ok)
		return imp_op_err(im, "unknown nearest_mode '%s'", nm);
	bool crop = strcmp(ctm, "tf_crop_and_resize") == 0;
	if (sp.exclude_outside || crop || (aa && down) || strcmp(ctm, "half_pixel_symmetric") == 0)
		kind = 0;
	if (!kind) {
		const double *roi = NULL;
		if (crop) {
			struct tensor *rt = upsample || im->opset < 11 ? NULL : imp_in_opt(im, 1);
			if (!rt || imp_t_numel(rt) != 2 * (uint64_t)x->rank)
				return imp_op_err(im, "tf_crop_and_resize needs roi with %u entries", 2 * x->rank);
			if (!(roi = imp_t_floats(im, rt)))
				return imp_op_err(im, "roi must be known at import");
		}
		return imp_set_out(im, 0, resize_gathers(im, &sp, x, scales, dims, roi,
						     imp_attr_f(n, "extrapolation_value", 0.0f), imp_out_name(im, 0)));
	}
	struct value xv = imp_tval(im, x);
	const struct type *rt = xv.node ? type_with_dims(im->tc, val_type(xv), dims, x->rank) : NULL;
	struct value r = imp_b_node(im, kind, imp_out_name(im, 0), &xv, 1, rt);
	if (!r.node)
		return -1;
	node_set_floats(im->m, r.node, AN_scale, scales, x->rank);
	return imp_set_out(im, 0, r);
}

