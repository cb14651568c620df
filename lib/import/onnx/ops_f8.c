/* ops_f8.c - ONNX's float8 types (FLOAT8E4M3FN, E4M3FNUZ, E5M2, E5M2FNUZ),
 * 4-bit integers (INT4, UINT4), FLOAT4E2M1 and FLOAT8E8M0 in Cast,
 * CastLike, QuantizeLinear and DequantizeLinear; blocked quantization
 * (opset 21's block_size) of every type; DequantizeLinear's output_dtype
 * and QuantizeLinear's precision (opset 23) and float8e8m0 scales (24):
 *
 *   Cast(x) to float8              ConvertTo {saturate} : f8...
 *   Cast(x) to float8e8m0          ConvertTo {saturate, round_mode} : f8e8m0
 *   Cast(x) to or from int4/uint4  ConvertTo (round half to even, saturated)
 *   QuantizeLinear(x, s, z)        float8, float4: ConvertTo(x / s [+ z]) {saturate}
 *                                  4-bit ints:     ConvertTo(Clip(Round(x / s) + z))
 *                                  8-bit:          Quantize(Round(x / s) + z)
 *   DequantizeLinear(q, s, z)      ConvertTo out((ConvertTo float(q) [- z]) * s)
 *
 * The graph IR has no quantized float8 or 4-bit kinds: the parameters
 * become float constants broadcast along the axis (per-axis), repeated
 * block_size times along it (blocked) or float values computed at run time
 * (gathered block by block when blocked), and the arithmetic is ONNX's own
 * formula in float32 (the division in `precision` when it is given). The
 * scalar conversions (round to nearest even, saturation, NaN and infinity
 * per format) are support/scalar.h's, the same bits on every backend.
 * Other operators refuse these types by their type rules, naming the type
 * (docs/ONNXVersions.md).
 */
#include "import/onnx/internal.h"
#include "support/scalar.h"

#include <string.h>

/* The types this file handles besides blocked 8-bit quantization. */
static bool narrow(int dtype) { return imp_dt_is_narrow(dtype); }

/* The 4-bit integers, which quantize rounded and clipped. */
static bool int4(int dtype) { return dtype == DT_INT4 || dtype == DT_UINT4; }

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
	static const char *const readers[] = {"Cast", "CastLike", "QuantizeLinear", "DequantizeLinear", "BitCast"};
	if (!narrow(t->dtype))
		return false;
	for (size_t i = 0; i < GLOW_ARRAY_SIZE(readers); i++)
		if (imp_default_domain(n->domain) && strcmp(n->op_type, readers[i]) == 0)
			return false;
	imp_op_err(im,
		   "input \"%s\" has element type %s, which only Cast, CastLike, QuantizeLinear, DequantizeLinear and "
		   "BitCast read (convert it to float first)",
		   t->name, imp_dt_name(t->dtype));
	return true;
}

/* internal.h: saturate is ConvertTo's attribute, set only where it is
 * not the default */
struct value imp_convert_sat(struct importer *im, struct value x, int elem, bool sat, const char *name)
{
	struct value r = imp_b_convert(im, x, elem, name);
	if (r.node && r.node != x.node && !sat && (elem_is_f8((enum elem_kind)elem) || elem == EK_F8E8M0))
		node_set_int(im->m, r.node, AN_saturate, 0);
	return r;
}

/* Cast's round_mode (opset 24) as ConvertTo's enum (support/scalar.h's
 * SC_E8M0_* order); -1 after reporting a value it does not have. */
static int round_mode(struct importer *im)
{
	static const char *const modes[] = {"up", "down", "nearest"};
	const char *s = imp_attr_s(im, im->node, "round_mode", "up");
	if (!s)
		return -1;
	for (int i = 0; i < (int)GLOW_ARRAY_SIZE(modes); i++)
		if (strcmp(s, modes[i]) == 0)
			return i;
	return imp_op_err(im, "round_mode must be up, down or nearest, not '%s'", s);
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
	int mode = round_mode(im);
	if (mode < 0)
		return -1;
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
	struct value r = imp_convert_sat(im, v, imp_dt_elem(to), sat, name);
	if (r.node && r.node != v.node && mode != SC_E8M0_UP && to == DT_FLOAT8E8M0)
		node_set_int(im->m, r.node, AN_round_mode, mode);
	return imp_set_out(im, 0, r);
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

/* Run-time blocked parameter v (t's shape: x's with ceil(d / block) along
 * the axis) with each block's value repeated to x's shape: a Gather along
 * the axis of the constant block indices j / block, j < d. */
static struct value gather_blocks(struct importer *im, struct value v, const struct tensor *x, const struct qlayout *l,
				  const char *name)
{
	uint64_t d = x->dims[l->axis];
	int64_t *idx = arena_alloc(&im->scratch, (d ? d : 1) * sizeof *idx);
	for (uint64_t j = 0; j < d; j++)
		idx[j] = (int64_t)(j / l->block);
	const char *iname = imp_dname(im, name, "blocks");
	struct tensor *it = imp_t_from_ints(im, iname, DT_INT64, 1, &d, idx);
	struct value ops[2] = {v, imp_t_const(im, it, imp_ty(im, EK_I64, &d, 1))};
	if (!v.node || !ops[1].node)
		return no_value;
	struct value r = imp_b_node(im, NK_Gather, imp_dname(im, name, "blocked"), ops, 2,
				    imp_ty(im, EK_FLOAT, x->dims, x->rank));
	if (r.node)
		node_set_int(im->m, r.node, AN_axis, l->axis);
	return r;
}

/* Parameter t of data x as a float value that broadcasts to x: a scalar,
 * [1.., n, ..1] along the axis, or (blocked) x's shape with each block's
 * value repeated; known parameters are constants, others run-time values. */
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
		struct value v = data_value(im, t);
		if (v.node && elem_is_quantized((enum elem_kind)val_type(v)->elem))
			v = imp_q_integers(im, v, imp_dname(im, name, "int"));
		v = imp_b_convert(im, v, EK_FLOAT, imp_dname(im, name, "f"));
		if (l->block)
			return gather_blocks(im, v, x, l, name);
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

/* internal.h: float8, float4 and 4-bit data, and blocked quantization of
 * any type */
bool imp_q_narrow(int dtype, const onnx_node *n)
{
	return narrow(dtype) || imp_attr_i(n, "block_size", 0) != 0;
}

/* internal.h: the float path's other cases, where the parameters are not
 * a quantized type's: a float8e8m0 scale (opset 24), a division in
 * float16 or bfloat16 (QuantizeLinear's precision, opset 23) or a result
 * other than float32 (DequantizeLinear's output type) */
bool imp_q_float_path(int scale_dtype, int arith_dtype)
{
	return scale_dtype == DT_FLOAT8E8M0 || (arith_dtype != DT_UNDEF && arith_dtype != DT_FLOAT);
}

/* A scale's type: floating point or float8e8m0; -1 after reporting. */
static int check_scale(struct importer *im, const struct tensor *s)
{
	if (imp_dt_is_float(s->dtype) || s->dtype == DT_FLOAT8E8M0)
		return 0;
	return imp_op_err(im, "scale \"%s\" must be floating point or float8e8m0, not %s", s->name,
			  imp_dt_name(s->dtype));
}

/* internal.h: the type QuantizeLinear divides in (`precision`, opset 23:
 * float32, float16 or bfloat16; absent: float32, as onnxruntime divides
 * every scale type); -1 after reporting */
int imp_q_precision(struct importer *im)
{
	int64_t p = imp_attr_i(im->node, "precision", 0);
	if (p == 0 || p == DT_FLOAT)
		return DT_FLOAT;
	if (p == DT_FLOAT16 || p == DT_BFLOAT16)
		return (int)p;
	return imp_op_err(im, "precision must be float, float16 or bfloat16, not %s", imp_dt_name((int)p));
}

/* internal.h: DequantizeLinear's output type: output_dtype (opset 23) or
 * the scale's type (float for a double scale); -1 after reporting */
int imp_dq_out_dtype(struct importer *im, const struct tensor *s)
{
	int64_t o = imp_attr_i(im->node, "output_dtype", 0);
	if (o == DT_FLOAT || o == DT_FLOAT16 || o == DT_BFLOAT16)
		return (int)o;
	if (o != 0)
		return imp_op_err(im, "output_dtype must be float, float16 or bfloat16, not %s", imp_dt_name((int)o));
	if (s->dtype == DT_FLOAT8E8M0)
		return imp_op_err(im, "output_dtype is required with the float8e8m0 scale \"%s\"", s->name);
	return s->dtype == DT_DOUBLE ? DT_FLOAT : s->dtype;
}

/* Float value v computed in ONNX type dt: rounded to it and back to
 * float (nothing for float). */
static struct value in_precision(struct importer *im, struct value v, int dt, const char *name)
{
	if (dt == DT_FLOAT)
		return v;
	v = imp_b_convert(im, v, imp_dt_elem(dt), imp_dname(im, name, imp_dt_name(dt)));
	return imp_b_convert(im, v, EK_FLOAT, imp_dname(im, name, "float"));
}

/* internal.h: x / s (rounded and clipped for integers) + z, converted;
 * the division in `precision` */
int imp_quantize_narrow(struct importer *im, int dtype)
{
	struct tensor *x = imp_in_req(im, 0), *s = imp_in_req(im, 1), *z = imp_in_opt(im, 2);
	struct qlayout l;
	if (!x || !s || !imp_float_input(im, x) || read_layout(im, x, s, &l))
		return -1;
	if ((!narrow(dtype) && dtype != DT_UINT8 && dtype != DT_INT8) || dtype == DT_FLOAT8E8M0)
		return imp_op_err(im, "quantizing to %s is not supported", imp_dt_name(dtype));
	if (z && z->dtype != dtype)
		return imp_op_err(im, "zero point \"%s\" is %s but the output is %s", z->name, imp_dt_name(z->dtype),
				  imp_dt_name(dtype));
	int prec = imp_q_precision(im);
	if (prec < 0 || check_scale(im, s))
		return -1;
	bool sat = imp_attr_i(im->node, "saturate", 1) != 0;
	if (!sat && !imp_dt_is_f8(dtype))
		return imp_op_err(im, "saturate = 0 applies to float8 outputs only, not %s", imp_dt_name(dtype));
	const char *name = imp_out_name(im, 0);
	struct value v = imp_b_convert(im, imp_tval(im, x), EK_FLOAT, imp_dname(im, name, "x"));
	struct value sv = param_value(im, s, x, &l, imp_dname(im, name, "scale"));
	v = in_precision(im, v, prec, imp_dname(im, name, "xp"));
	sv = in_precision(im, sv, prec, imp_dname(im, name, "sp"));
	v = in_precision(im, imp_q_fbin(im, NK_Div, v, sv, imp_dname(im, name, "scaled")), prec,
			 imp_dname(im, name, "quot"));
	if (!imp_dt_is_narrow(dtype) || int4(dtype))
		v = imp_b_unary(im, NK_Round, imp_dname(im, name, "rounded"), v);
	if (!zero_param(im, z))
		v = imp_q_fbin(im, NK_Add, v, param_value(im, z, x, &l, imp_dname(im, name, "zp")), imp_dname(im, name, "shifted"));
	if (!v.node)
		return -1;
	if (int4(dtype)) { /* saturated (Cast would wrap) */
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

/* internal.h: (float(x) - z) * s in float32, the scale first rounded to
 * the output type, the product then converted to it: the output type's
 * multiplication wherever the float32 product is exact (8- and 4-bit
 * data) */
int imp_dequantize_narrow(struct importer *im)
{
	struct tensor *x = imp_in_req(im, 0), *s = imp_in_req(im, 1), *z = imp_in_opt(im, 2);
	struct qlayout l;
	if (!x || !s || read_layout(im, x, s, &l))
		return -1;
	if ((!narrow(x->dtype) && x->dtype != DT_UINT8 && x->dtype != DT_INT8 && x->dtype != DT_INT32) ||
	    x->dtype == DT_FLOAT8E8M0)
		return imp_op_err(im, "input must be an 8-bit, 4-bit, int32, float8 or float4e2m1 type, not %s",
				  imp_dt_name(x->dtype));
	if (z && z->dtype != x->dtype)
		return imp_op_err(im, "zero point \"%s\" is %s but the data is %s", z->name, imp_dt_name(z->dtype),
				  imp_dt_name(x->dtype));
	int out = check_scale(im, s) ? -1 : imp_dq_out_dtype(im, s);
	if (out < 0)
		return -1;
	const char *name = imp_out_name(im, 0);
	struct value v = data_value(im, x);
	if (v.node && elem_is_quantized((enum elem_kind)val_type(v)->elem))
		v = imp_q_integers(im, v, imp_dname(im, name, "int"));
	v = imp_b_convert(im, v, EK_FLOAT, imp_dname(im, name, "real"));
	if (!zero_param(im, z))
		v = imp_q_fbin(im, NK_Sub, v, param_value(im, z, x, &l, imp_dname(im, name, "zp")), imp_dname(im, name, "centred"));
	struct value sv = in_precision(im, param_value(im, s, x, &l, imp_dname(im, name, "scale")), out,
				       imp_dname(im, name, "sr"));
	v = imp_q_fbin(im, NK_Mul, v, sv, out == DT_FLOAT ? name : imp_dname(im, name, "f"));
	return imp_set_out(im, 0, imp_b_convert(im, v, imp_dt_elem(out), name));
}

/* BitCast (opset 26): the input's bits as type `to`, of the same width and
 * shape (ONNX: little-endian bytes, which is how the graph IR stores every
 * kind). Types the graph IR has no kind for (double, the 16-bit, uint32
 * and uint64 integers, int2/uint2) are refused by name. */
int imp_op_bitcast(struct importer *im, const onnx_node *n)
{
	const Onnx__AttributeProto *a = imp_attr(n, "to");
	if (!a)
		return imp_op_err(im, "the 'to' attribute is required");
	int to = a->has_i ? (int)a->i : DT_UNDEF;
	struct tensor *in = imp_in_req(im, 0);
	if (!in)
		return -1;
	if (imp_dt_elem(to) < 0 && to != DT_UINT8 && to != DT_INT8)
		return imp_op_err(im, "BitCast to %s is not supported by the graph IR", imp_dt_name(to));
	if (imp_dt_elem(in->dtype) < 0 && in->dtype != DT_UINT8 && in->dtype != DT_INT8)
		return imp_op_err(im, "BitCast from %s is not supported by the graph IR", imp_dt_name(in->dtype));
	unsigned wi = imp_dt_is_4bit(in->dtype) ? 4 : (unsigned)imp_dt_size(in->dtype) * 8;
	unsigned wt = imp_dt_is_4bit(to) ? 4 : (unsigned)imp_dt_size(to) * 8;
	if (wi != wt)
		return imp_op_err(im, "BitCast from %s (%u bits) to %s (%u bits): the widths must be equal",
				  imp_dt_name(in->dtype), wi, imp_dt_name(to), wt);
	if (in->dtype == to)
		return imp_set_out_t(im, 0, in);
	struct value x = data_value(im, in);
	if (!x.node)
		return -1;
	const struct type *t = val_type(x);
	return imp_set_out(im, 0, imp_b_node(im, NK_BitCast, imp_out_name(im, 0), &x, 1,
					     imp_input_type(im, to, t->dims, t->rank)));
}
