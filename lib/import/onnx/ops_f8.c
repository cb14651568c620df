/* ops_f8.c - ONNX's float8 types (FLOAT8E4M3FN, E4M3FNUZ, E5M2, E5M2FNUZ)
 * and 4-bit integers (INT4, UINT4) in Cast, CastLike, QuantizeLinear and
 * DequantizeLinear, and blocked quantization (opset 21's block_size) of
 * every type:
 *
 *   Cast(x) to float8              ConvertTo {saturate} : f8...
 *   Cast(x) to or from int4/uint4  ConvertTo (round half to even, saturated)
 *   QuantizeLinear(x, s, z)        float8: ConvertTo(x / s [+ z]) {saturate}
 *                                  4-bit:  ConvertTo(Clip(Round(x / s) + z))
 *                                  8-bit blocked: Quantize(Round(x / s) + z)
 *   DequantizeLinear(q, s, z)      (ConvertTo float(q) [- z]) * s
 *
 * The graph IR has no quantized float8 or 4-bit kinds: the parameters
 * become float constants broadcast along the axis (per-axis), repeated
 * block_size times along it (blocked) or float values computed at run time
 * (per tensor and per axis), and the arithmetic is ONNX's own formula in
 * float32. The scalar conversions (round to nearest even, saturation, NaN
 * and infinity per format) are support/scalar.h's, the same bits on every
 * backend. Other operators refuse these types by their type rules, naming
 * the type (docs/ONNXVersions.md).
 */
#include "import/onnx/internal.h"

#include <string.h>

static const struct value no_value = {NULL, 0};

/* The types this file handles besides blocked 8-bit quantization. */
static bool narrow(int dtype) { return imp_dt_is_f8(dtype) || imp_dt_is_4bit(dtype); }

/* Tensor x as a graph value; a known uint8 or int8 tensor (which has no
 * graph kind of its own) as a constant of the raw quantized kind, its
 * stored integers the ONNX values. */
static struct value data_value(struct importer *im, struct tensor *x)
{
	if ((x->dtype == DT_UINT8 || x->dtype == DT_INT8) && !x->v.node && x->known && !x->poisoned)
		return imp_t_const(im, x, imp_input_type(im, x->dtype, x->dims, x->rank));
	return imp_tval(im, x);
}

/* internal.h: the operators that read these types are the four of this
 * file; the others would reach type rules that name no ONNX node */
bool imp_narrow_refused(struct importer *im, const onnx_node *n, const struct tensor *t)
{
	static const char *const readers[] = {"Cast", "CastLike", "QuantizeLinear", "DequantizeLinear"};
	if (!narrow(t->dtype))
		return false;
	for (size_t i = 0; i < GLOW_ARRAY_SIZE(readers); i++)
		if (imp_default_domain(n->domain) && strcmp(n->op_type, readers[i]) == 0)
			return false;
	imp_op_err(im,
		   "input \"%s\" has element type %s, which only Cast, CastLike, QuantizeLinear and DequantizeLinear "
		   "read (convert it to float first)",
		   t->name, imp_dt_name(t->dtype));
	return true;
}

/* internal.h: saturate is ConvertTo's attribute, set only where it is
 * not the default */
struct value imp_convert_sat(struct importer *im, struct value x, int elem, bool sat, const char *name)
{
	struct value r = imp_b_convert(im, x, elem, name);
	if (r.node && r.node != x.node && !sat && elem_is_f8((enum elem_kind)elem))
		node_set_int(im->m, r.node, AN_saturate, 0);
	return r;
}

/* internal.h: a ConvertTo, through the 8-bit integers' values where one
 * side is uint8 or int8 (to them: truncated through i32, then exact) */
int imp_cast_narrow(struct importer *im, int to)
{
	struct tensor *x = imp_in_req(im, 0);
	if (!x)
		return -1;
	if (imp_dt_elem(to) < 0 && to != DT_UINT8 && to != DT_INT8)
		return imp_op_err(im, "cast to %s is not supported by the graph IR", imp_dt_name(to));
	bool sat = imp_attr_i(im->node, "saturate", 1) != 0;
	const char *name = imp_out_name(im, 0);
	if (x->dtype == to)
		return imp_set_out_t(im, 0, x);
	struct value v = data_value(im, x);
	if (!v.node)
		return -1;
	if (elem_is_quantized((enum elem_kind)val_type(v)->elem)) /* 8-bit integers: their values */
		v = imp_q_integers(im, v, imp_dname(im, name, "int"));
	if (to == DT_UINT8 || to == DT_INT8) {
		/* truncated and saturated through i32, then exact into the raw kind */
		v = imp_b_convert(im, v, EK_I32, imp_dname(im, name, "i32"));
		if (!v.node)
			return -1;
		const struct type *t = val_type(v);
		return imp_set_out(im, 0, imp_b_node(im, NK_ConvertTo, name, &v, 1, imp_input_type(im, to, t->dims, t->rank)));
	}
	return imp_set_out(im, 0, imp_convert_sat(im, v, imp_dt_elem(to), sat, name));
}

/* ---- QuantizeLinear, DequantizeLinear ---- */

/* How a parameter (scale or zero point) of data x lies: per tensor, along
 * `axis` (one per index), or blocked (block indices of `block` along axis). */
struct qlayout {
	unsigned axis;
	uint64_t block; /* 0: not blocked */
};

/* Checks parameter t's shape against data x under layout l; -1 after
 * reporting. *per_tensor: one value for the whole tensor. */
static int check_param(struct importer *im, const struct tensor *t, const struct tensor *x, const struct qlayout *l,
		       bool *per_tensor)
{
	uint64_t n = imp_t_numel(t);
	*per_tensor = false;
	if (l->block) {
		if (t->rank != x->rank)
			return imp_op_err(im, "\"%s\" must have the rank of the data (%u) for blocked quantization, not %u",
					  t->name, x->rank, t->rank);
		for (unsigned i = 0; i < x->rank; i++) {
			uint64_t want = i == l->axis ? (x->dims[i] + l->block - 1) / l->block : x->dims[i];
			if (t->dims[i] != want)
				return imp_op_err(im,
						  "\"%s\" has %llu elements along axis %u; block_size %llu over %llu needs %llu",
						  t->name, (unsigned long long)t->dims[i], i, (unsigned long long)l->block,
						  (unsigned long long)x->dims[i], (unsigned long long)want);
		}
		return 0;
	}
	if (t->rank == 0 || (t->rank == 1 && n == 1)) {
		*per_tensor = true;
		return 0;
	}
	if (t->rank != 1)
		return imp_op_err(im, "\"%s\" must be a scalar or 1-D without block_size, not of rank %u", t->name, t->rank);
	if (x->rank == 0 || n != x->dims[l->axis])
		return imp_op_err(im, "\"%s\" has %llu elements for the %llu of axis %u", t->name, (unsigned long long)n,
				  x->rank ? (unsigned long long)x->dims[l->axis] : 0ULL, l->axis);
	return 0;
}

/* Parameter t of data x as a float value that broadcasts to x: a scalar,
 * [1.., n, ..1] along the axis, or (blocked) x's shape with each block's
 * value repeated; known parameters are constants, others run-time values
 * (not blocked). */
static struct value param_value(struct importer *im, struct tensor *t, const struct tensor *x,
				const struct qlayout *l, const char *name)
{
	bool per_tensor;
	if (check_param(im, t, x, l, &per_tensor))
		return no_value;
	uint64_t dims[GLOW_MAX_RANK];
	unsigned rank = per_tensor ? 0 : x->rank;
	for (unsigned i = 0; i < rank; i++)
		dims[i] = l->block || i == l->axis ? x->dims[i] : 1;
	const double *f = t->known ? imp_t_floats(im, t) : NULL;
	if (!f) {
		if (l->block) {
			imp_op_err(im, "\"%s\" must be known at import for blocked quantization", t->name);
			return no_value;
		}
		struct value v = imp_tval(im, t);
		if (v.node && elem_is_quantized((enum elem_kind)val_type(v)->elem))
			v = imp_q_integers(im, v, imp_dname(im, name, "int"));
		v = imp_b_convert(im, v, EK_FLOAT, imp_dname(im, name, "f"));
		return v.node ? imp_b_reshape(im, v, dims, rank, imp_dname(im, name, "axis")) : v;
	}
	uint64_t n = 1;
	for (unsigned i = 0; i < rank; i++)
		n *= dims[i];
	double *e = arena_alloc(&im->scratch, (n ? n : 1) * sizeof *e);
	if (!l->block) {
		for (uint64_t i = 0; i < n; i++)
			e[i] = f[i];
	} else { /* element (.., j, ..) takes block (.., j / block, ..) */
		uint64_t inner = 1;
		for (unsigned i = l->axis + 1; i < rank; i++)
			inner *= dims[i];
		uint64_t d = dims[l->axis], nb = t->dims[l->axis];
		for (uint64_t i = 0; i < n; i++) {
			uint64_t o = i / (inner * d), j = i / inner % d, r = i % inner;
			e[i] = f[(o * nb + j / l->block) * inner + r];
		}
	}
	struct tensor *c = imp_t_from_floats(im, name, DT_FLOAT, rank, dims, e);
	return imp_t_const(im, c, imp_ty(im, EK_FLOAT, dims, rank));
}

/* A zero point that is absent or known to be all zeros adds nothing. */
static bool zero_param(struct importer *im, struct tensor *z)
{
	if (!z)
		return true;
	const double *f = z->known ? imp_t_floats(im, z) : NULL;
	if (!f)
		return false;
	for (uint64_t i = 0, n = imp_t_numel(z); i < n; i++)
		if (f[i] != 0)
			return false;
	return true;
}

/* The layout of the node's parameters (scale s) on data x: its axis
 * (default 1; not read for a per-tensor scale) and block_size; -1 after
 * reporting. */
static int read_layout(struct importer *im, const struct tensor *x, const struct tensor *s, struct qlayout *l)
{
	int64_t b = imp_attr_i(im->node, "block_size", 0);
	l->axis = 0;
	l->block = 0;
	if (b < 0)
		return imp_op_err(im, "block_size must not be negative, got %lld", (long long)b);
	l->block = (uint64_t)b;
	bool per_tensor = !l->block && (s->rank == 0 || (s->rank == 1 && imp_t_numel(s) == 1));
	if (x->rank && !per_tensor && imp_norm_axis(im, imp_attr_i(im->node, "axis", 1), x->rank, &l->axis))
		return -1;
	if (l->block && !x->rank)
		return imp_op_err(im, "blocked quantization needs data of rank 1 or more");
	return 0;
}

/* internal.h: float8 and 4-bit data, and blocked quantization of any type */
bool imp_q_narrow(int dtype, const onnx_node *n)
{
	return narrow(dtype) || imp_attr_i(n, "block_size", 0) != 0;
}

/* internal.h: x / s (rounded and clipped for integers) + z, converted */
int imp_quantize_narrow(struct importer *im, int dtype)
{
	struct tensor *x = imp_in_req(im, 0), *s = imp_in_req(im, 1), *z = imp_in_opt(im, 2);
	struct qlayout l;
	if (!x || !s || !imp_float_input(im, x) || read_layout(im, x, s, &l))
		return -1;
	if (!narrow(dtype) && dtype != DT_UINT8 && dtype != DT_INT8)
		return imp_op_err(im, "quantizing to %s is not supported", imp_dt_name(dtype));
	if (z && z->dtype != dtype)
		return imp_op_err(im, "zero point \"%s\" is %s but the output is %s", z->name, imp_dt_name(z->dtype),
				  imp_dt_name(dtype));
	if (!imp_dt_is_float(s->dtype))
		return imp_op_err(im, "scale \"%s\" must be floating point, not %s", s->name, imp_dt_name(s->dtype));
	bool sat = imp_attr_i(im->node, "saturate", 1) != 0;
	if (!sat && !imp_dt_is_f8(dtype))
		return imp_op_err(im, "saturate = 0 applies to float8 outputs only, not %s", imp_dt_name(dtype));
	const char *name = imp_out_name(im, 0);
	struct value v = imp_b_convert(im, imp_tval(im, x), EK_FLOAT, imp_dname(im, name, "x"));
	v = imp_q_fbin(im, NK_Div, v, param_value(im, s, x, &l, imp_dname(im, name, "scale")), imp_dname(im, name, "scaled"));
	if (!imp_dt_is_f8(dtype))
		v = imp_b_unary(im, NK_Round, imp_dname(im, name, "rounded"), v);
	if (!zero_param(im, z))
		v = imp_q_fbin(im, NK_Add, v, param_value(im, z, x, &l, imp_dname(im, name, "zp")), imp_dname(im, name, "shifted"));
	if (!v.node)
		return -1;
	if (imp_dt_is_4bit(dtype)) { /* saturated (Cast would wrap) */
		v = imp_b_unary(im, NK_Clip, imp_dname(im, name, "clipped"), v);
		if (!v.node)
			return -1;
		node_set_float(im->m, v.node, AN_min, dtype == DT_INT4 ? -8 : 0);
		node_set_float(im->m, v.node, AN_max, dtype == DT_INT4 ? 7 : 15);
	}
	if (narrow(dtype))
		return imp_set_out(im, 0, imp_convert_sat(im, v, imp_dt_elem(dtype), sat, name));
	return imp_set_out(im, 0, imp_b_node(im, NK_Quantize, name, &v, 1, imp_input_type(im, dtype, x->dims, x->rank)));
}

/* internal.h: (float(x) - z) * s, in the scale's float type */
int imp_dequantize_narrow(struct importer *im)
{
	struct tensor *x = imp_in_req(im, 0), *s = imp_in_req(im, 1), *z = imp_in_opt(im, 2);
	struct qlayout l;
	if (!x || !s || read_layout(im, x, s, &l))
		return -1;
	if (!narrow(x->dtype) && x->dtype != DT_UINT8 && x->dtype != DT_INT8 && x->dtype != DT_INT32)
		return imp_op_err(im, "input must be an 8-bit, 4-bit, int32 or float8 type, not %s", imp_dt_name(x->dtype));
	if (z && z->dtype != x->dtype)
		return imp_op_err(im, "zero point \"%s\" is %s but the data is %s", z->name, imp_dt_name(z->dtype),
				  imp_dt_name(x->dtype));
	if (!imp_dt_is_float(s->dtype))
		return imp_op_err(im, "scale \"%s\" must be floating point, not %s", s->name, imp_dt_name(s->dtype));
	const char *name = imp_out_name(im, 0);
	struct value v = data_value(im, x);
	if (v.node && elem_is_quantized((enum elem_kind)val_type(v)->elem))
		v = imp_q_integers(im, v, imp_dname(im, name, "int"));
	v = imp_b_convert(im, v, EK_FLOAT, imp_dname(im, name, "real"));
	if (!zero_param(im, z))
		v = imp_q_fbin(im, NK_Sub, v, param_value(im, z, x, &l, imp_dname(im, name, "zp")), imp_dname(im, name, "centred"));
	int out = s->dtype == DT_DOUBLE ? DT_FLOAT : s->dtype;
	v = imp_q_fbin(im, NK_Mul, v, param_value(im, s, x, &l, imp_dname(im, name, "scale")),
		   out == DT_FLOAT ? name : imp_dname(im, name, "f"));
	return imp_set_out(im, 0, imp_b_convert(im, v, imp_dt_elem(out), name));
}
