/* ops_quant.c - translators of ONNX's quantization operators:
 * QuantizeLinear, DequantizeLinear, DynamicQuantizeLinear, QLinearConv,
 * QLinearMatMul, ConvInteger and MatMulInteger.
 *
 * The graph IR keeps quantization parameters in types (qui8[scale:offset],
 * docs/Quantization.md), so a scale and a zero point known at import (an
 * initializer, a Constant, a folded value or -freeze-input) make a
 * quantized type and the operators become quantized nodes:
 *
 *   QuantizeLinear(x, s, z)     Quantize(x) : q[s:z]
 *   DequantizeLinear(q, s, z)   Dequantize(q : q[s:z]) : float
 *   QLinearConv                 Convolution (per-tensor weights) or
 *                               ChannelwiseQuantizedConvolution (per channel)
 *   QLinearMatMul               MatMul / BatchMatMul of quantized operands
 *   ConvInteger, MatMulInteger  the same with scale 1 and the zero points as
 *                               offsets into a qi32[1.0:0] accumulator, then
 *                               ConvertTo i32 (ONNX's int32 result)
 *
 * ONNX uint8 and int8 tensors with no parameters of their own (graph
 * inputs, Cast results, DynamicQuantizeLinear's outputs) are "raw":
 * qui8[1.0:0] and qi8[1.0:0], real value = stored integer. A raw graph input
 * read by a quantized operator takes that operator's type (a placeholder
 * with no uses yet is retyped: its stored integers are the ONNX values
 * either way); a value whose type differs is reinterpreted through float
 * (exact for 8-bit integers). Per-axis scales become float arithmetic
 * around raw integers (exact as ONNX's float32 formula), except where
 * they are a convolution's weights (the channelwise kind). A scale known
 * only at run time (DynamicQuantizeLinear's) is float arithmetic ending
 * in a raw Quantize: round(x / s) + z, saturated. Cast to and from 8-bit
 * types and ONNX's wrapping integer arithmetic on them are here too.
 *
 * QDQ models: the importer runs fold-qdq (lib/passes/fold-qdq.c) after
 * translating, which makes the float operators between Dequantize and
 * Quantize nodes quantized; what the pass cannot see, per-channel weights
 * (a per-axis DequantizeLinear of known integers, a float constant here),
 * Conv and Gemm look at when they translate (imp_qdq_channelwise_conv,
 * imp_qdq_channelwise_fc): with a Dequantize input and a QuantizeLinear
 * reader they become the channelwise kinds.
 */
#include "import/onnx/internal.h"

#include <math.h>
#include <string.h>

/* The parameters of one quantized operand: n scales (one per tensor, or
 * one per index of axis) and n zero points, known at import. */
struct qparams {
	uint64_t n;
	unsigned axis;
	const double *scale;
	const int64_t *zp; /* NULL: all 0 */
	int dtype;         /* of the integers: uint8, int8 or int32 */
};

/* The ONNX types quantized data may have. */
static bool int_dtype_ok(int dtype) { return dtype == DT_UINT8 || dtype == DT_INT8 || dtype == DT_INT32; }

/* Reads the scale (input si) and the zero point (input zi, optional) of
 * data tensor x (dtype: the integers' type; the zero point, when given,
 * must have it). per_axis: a 1-D scale of the length of dimension `axis`
 * (the attribute "axis", default per_axis) is accepted unless per_axis is
 * negative. -1 after reporting. */
static int read_qparams(struct importer *im, unsigned si, unsigned zi, const struct tensor *x, int dtype,
			int per_axis, struct qparams *q)
{
	struct tensor *s = imp_in_req(im, si), *z = imp_in_opt(im, zi);
	if (!s)
		return -1;
	const char *sn = im->node->input[si], *zn = z ? im->node->input[zi] : "";
	if (!s->known || !(q->scale = imp_t_floats(im, s)))
		return imp_op_err(im, "scale \"%s\" must be known at import (an initializer, a Constant or -freeze-input)",
				  sn);
	if (!imp_dt_is_float(s->dtype))
		return imp_op_err(im, "scale \"%s\" must be floating point, not %s", sn, imp_dt_name(s->dtype));
	q->n = imp_t_numel(s);
	q->axis = 0;
	q->zp = NULL;
	q->dtype = z ? z->dtype : dtype;
	if (q->n == 0)
		return imp_op_err(im, "scale \"%s\" is empty", sn);
	if (q->n != 1 && x->rank == 0)
		return imp_op_err(im, "scale \"%s\" has %llu elements for scalar data", sn, (unsigned long long)q->n);
	if (s->rank > 1 || (q->n != 1 && per_axis < 0))
		return imp_op_err(im, "scale \"%s\" must be a scalar (per-tensor quantization), not of %llu elements", sn,
				  (unsigned long long)q->n);
	if (q->n != 1 || s->rank == 1) {
		if (per_axis >= 0 && x->rank > 0) {
			if (imp_norm_axis(im, imp_attr_i(im->node, "axis", per_axis), x->rank, &q->axis))
				return -1;
			if (q->n != x->dims[q->axis] && q->n != 1)
				return imp_op_err(im, "scale \"%s\" has %llu elements for the %llu of axis %u", sn,
						  (unsigned long long)q->n, (unsigned long long)x->dims[q->axis], q->axis);
		}
	}
	for (uint64_t i = 0; i < q->n; i++)
		if (!(q->scale[i] > 0) || !isfinite(q->scale[i]) || q->scale[i] > 3.4028234663852886e38)
			return imp_op_err(im, "scale \"%s\" must be positive and finite, got %g", sn, q->scale[i]);
	if (!z)
		return int_dtype_ok(q->dtype) ? 0
					       : imp_op_err(im, "element type %s cannot be quantized", imp_dt_name(q->dtype));
	if (!int_dtype_ok(z->dtype))
		return imp_op_err(im, "zero point \"%s\" has element type %s (uint8, int8 or int32 expected)", zn,
				  imp_dt_name(z->dtype));
	if (z->dtype != dtype && dtype != DT_UNDEF)
		return imp_op_err(im, "zero point \"%s\" is %s but the data is %s", zn, imp_dt_name(z->dtype),
				  imp_dt_name(dtype));
	if (!z->known || !(q->zp = imp_t_ints(im, z)))
		return imp_op_err(im,
				  "zero point \"%s\" must be known at import (an initializer, a Constant or -freeze-input)",
				  zn);
	if (imp_t_numel(z) != q->n || z->rank != s->rank)
		return imp_op_err(im, "zero point \"%s\" does not have the shape of scale \"%s\"", zn, sn);
	return 0;
}

/* The quantized type of dims with parameter i of q (per tensor: 0). */
static const struct type *qtype(struct importer *im, const struct qparams *q, uint64_t i, const uint64_t *dims,
				unsigned rank)
{
	if (!imp_ty(im, EK_FLOAT, dims, rank))
		return NULL;
	return type_get_q(im->tc, (enum elem_kind)imp_dt_qelem(q->dtype), dims, rank, (float)q->scale[i],
			  q->zp ? (int32_t)q->zp[i] : 0);
}

/* A float<> constant of value f. */
/* A float constant of `rank` dimensions, all 1 but dimension axis (n):
 * q's scales (zp false) or zero points (zp true), to broadcast along axis. */
static struct value axis_const(struct importer *im, const struct qparams *q, bool zp, unsigned rank, const char *name)
{
	uint64_t dims[GLOW_MAX_RANK];
	for (unsigned i = 0; i < rank; i++)
		dims[i] = i == q->axis ? q->n : 1;
	double *v = arena_alloc(&im->scratch, q->n * sizeof *v);
	for (uint64_t i = 0; i < q->n; i++)
		v[i] = zp ? (q->zp ? (double)q->zp[i] : 0.0) : q->scale[i];
	struct tensor *t = imp_t_from_floats(im, name, DT_FLOAT, rank, dims, v);
	return imp_t_const(im, t, imp_ty(im, EK_FLOAT, dims, rank));
}

/* x (float) quantized into the raw kind of dtype: round(x / s) + z,
 * saturated, with s and z (float values, broadcast to x) known only at run
 * time or per axis; name: the result's. */
static struct value quantize_raw(struct importer *im, struct value x, struct value s, struct value z, int dtype,
				 const char *name)
{
	if (!x.node)
		return x;
	struct value v = imp_q_fbin(im, NK_Div, x, s, imp_dname(im, name, "scaled"));
	v = imp_b_unary(im, NK_Round, imp_dname(im, name, "rounded"), v);
	v = imp_q_fbin(im, NK_Add, v, z, imp_dname(im, name, "shifted"));
	const struct type *t = val_type(x);
	return imp_b_node(im, NK_Quantize, name, &v, 1, imp_input_type(im, dtype, t->dims, t->rank));
}

/* ONNX's Cast to or from uint8 and int8 (operands of a raw kind or of one
 * with parameters, whose stored integers are the ONNX values): to float
 * kinds and int32/int64 the integers' values; from a float kind the value
 * truncated toward zero and saturated (ONNX leaves out-of-range casts
 * undefined); from one 8-bit type to itself the value. */
static struct value wrap8(struct importer *im, struct value f, int dtype, const char *name);

int imp_cast_int8(struct importer *im, int to)
{
	struct tensor *x = imp_in_req(im, 0);
	if (!x)
		return -1;
	struct value v = imp_tval(im, x);
	const char *name = imp_out_name(im, 0);
	if (!v.node)
		return -1;
	const struct type *t = val_type(v);
	if (x->dtype == to)
		return imp_set_out_t(im, 0, x);
	if (elem_is_quantized((enum elem_kind)t->elem) && (x->dtype == DT_UINT8 || x->dtype == DT_INT8)) {
		if (to == DT_UINT8 || to == DT_INT8) /* the stored integers, wrapped to the other range */
			return imp_set_out(im, 0, wrap8(im, imp_q_integers(im, v, imp_dname(im, name, "int")), to, name));
		int elem = imp_dt_elem(to);
		if (elem < 0)
			return imp_op_err(im, "cast to %s is not supported by the graph IR", imp_dt_name(to));
		struct value f = imp_q_integers(im, v, elem == EK_FLOAT ? name : imp_dname(im, name, "int"));
		return imp_set_out(im, 0, imp_b_convert(im, f, elem, name));
	}
	if (elem_class((enum elem_kind)t->elem) == EC_I || t->elem == EK_BOOL)
		return imp_set_out(im, 0, wrap8(im, v, to, name)); /* integers wrap, as onnxruntime's Cast */
	if (!elem_is_float((enum elem_kind)t->elem))
		return imp_op_err(im, "cast from %s to %s is not supported", imp_dt_name(x->dtype), imp_dt_name(to));
	struct value neg = imp_b_binary(im, NK_CmpLT, v, imp_b_splat_like(im, v, 0, imp_dname(im, name, "zero")),
					imp_dname(im, name, "neg"));
	struct value sel[3] = {neg, imp_b_unary(im, NK_Ceil, imp_dname(im, name, "ceil"), v),
			       imp_b_unary(im, NK_Floor, imp_dname(im, name, "floor"), v)};
	struct value tr = imp_b_node(im, NK_Select, imp_dname(im, name, "trunc"), sel, 3, t);
	return imp_set_out(im, 0, imp_b_node(im, NK_Quantize, name, &tr, 1, imp_input_type(im, to, t->dims, t->rank)));
}

/* A float (or integer or bool) value of integers as the raw kind of dtype
 * (uint8 or int8), wrapped modulo 256 as ONNX's integer arithmetic wraps: through i32,
 * ((v - lo) mod 256) + lo with lo the type's least value. */
static struct value wrap8(struct importer *im, struct value f, int dtype, const char *name)
{
	struct value v = imp_b_convert(im, f, EK_I32, imp_dname(im, name, "i32"));
	int64_t lo = dtype == DT_INT8 ? -128 : 0;
	if (lo)
		v = imp_b_binary(im, NK_Sub, v, imp_b_splat_like(im, v, (double)lo, imp_dname(im, name, "lo")),
				 imp_dname(im, name, "up"));
	v = imp_b_binary(im, NK_Mod, v, imp_b_splat_like(im, v, 256, imp_dname(im, name, "m")), imp_dname(im, name, "mod"));
	if (lo)
		v = imp_b_binary(im, NK_Add, v, imp_b_splat_like(im, v, (double)lo, imp_dname(im, name, "lo2")),
				 imp_dname(im, name, "down"));
	v = imp_b_convert(im, v, EK_FLOAT, imp_dname(im, name, "f"));
	if (!v.node)
		return v;
	const struct type *t = val_type(v);
	return imp_b_node(im, NK_Quantize, name, &v, 1, imp_input_type(im, dtype, t->dims, t->rank));
}

struct value imp_int8_binary(struct importer *im, unsigned kind, struct value a, struct value b, const char *name)
{
	if (!a.node || !b.node)
		return no_value;
	const struct type *ta = val_type(a), *tb = val_type(b);
	if (ta->elem != tb->elem || !elem_is_quantized((enum elem_kind)ta->elem)) {
		imp_op_err(im, "operands have different element types");
		return no_value;
	}
	int dtype = imp_dt_of_elem(ta->elem);
	if (kind != NK_Add && kind != NK_Sub && kind != NK_Mul && kind != NK_Div && kind != NK_Mod) {
		imp_op_err(im, "%s on %s is not supported", node_kind_name(kind), imp_dt_name(dtype));
		return no_value;
	}
	struct value x = imp_b_convert(im, imp_q_integers(im, a, imp_dname(im, name, "a")), EK_I32, imp_dname(im, name, "ai"));
	struct value y = imp_b_convert(im, imp_q_integers(im, b, imp_dname(im, name, "b")), EK_I32, imp_dname(im, name, "bi"));
	struct value r = imp_b_binary(im, kind, x, y, imp_dname(im, name, "i32"));
	return wrap8(im, imp_b_convert(im, r, EK_FLOAT, imp_dname(im, name, "wide")), dtype, name);
}

/* Tensor x (integers) as a value of quantized type qt (its shape): a
 * constant of its known contents, the value itself when it has type qt, a
 * raw placeholder not read yet retyped to qt, else reinterpreted. */
static struct value qinput_of(struct importer *im, struct tensor *x, const struct type *qt);

/* qinput_of on input i of the node. */
static struct value qinput(struct importer *im, unsigned i, const struct type *qt)
{
	struct tensor *x = imp_in_req(im, i);
	return x ? qinput_of(im, x, qt) : no_value;
}

static struct value qinput_of(struct importer *im, struct tensor *x, const struct type *qt)
{
	if (!qt)
		return no_value;
	if (x->poisoned)
		return no_value;
	if (imp_dt_qelem(x->dtype) != (int)qt->elem) {
		imp_op_err(im, "input \"%s\" is %s, not %s", x->name, imp_dt_name(x->dtype),
			   imp_dt_name(imp_dt_of_elem(qt->elem)));
		return no_value;
	}
	if (!x->v.node && x->known) {
		struct value c = imp_t_const(im, x, qt);
		if (x->dtype != DT_INT32) /* 8-bit data has no other graph value: later readers share it */
			x->v = c;
		return c;
	}
	struct value v = imp_tval(im, x);
	if (!v.node || val_type(v) == qt)
		return v;
	if (v.node->kind == NK_Placeholder && !node_has_uses(v.node) && imp_q_is_raw(val_type(v))) {
		v.node->types[0] = qt;
		return v;
	}
	return imp_q_reinterpret(im, v, qt, imp_dname(im, x->name, "as"));
}

/* ---- QuantizeLinear, DequantizeLinear ---- */

/* Run-time parameter t (a scale or a zero point) of QuantizeLinear on x:
 * a float value that broadcasts to x (scalar, or 1-D along axis); a NULL
 * node after reporting. */
static struct value runtime_param(struct importer *im, struct tensor *t, const struct tensor *x, const char *name)
{
	struct value v = t->known && (t->dtype == DT_UINT8 || t->dtype == DT_INT8)
				 ? qinput_of(im, t, imp_input_type(im, t->dtype, t->dims, t->rank))
				 : imp_tval(im, t);
	if (!v.node)
		return v;
	if (elem_is_quantized((enum elem_kind)val_type(v)->elem))
		v = imp_q_integers(im, v, imp_dname(im, name, "int"));
	else if (val_type(v)->elem != EK_FLOAT)
		v = imp_b_convert(im, v, EK_FLOAT, imp_dname(im, name, "f"));
	if (t->rank == 0 || imp_t_numel(t) == 1)
		return imp_b_reshape(im, v, NULL, 0, imp_dname(im, name, "scalar"));
	unsigned axis;
	if (t->rank != 1) {
		imp_op_err(im, "\"%s\" must be a scalar or 1-D", t->name);
		return no_value;
	}
	if (imp_norm_axis(im, imp_attr_i(im->node, "axis", 1), x->rank, &axis))
		return no_value;
	if (t->dims[0] != x->dims[axis]) {
		imp_op_err(im, "\"%s\" has %llu elements for the %llu of axis %u", t->name, (unsigned long long)t->dims[0],
			   (unsigned long long)x->dims[axis], axis);
		return no_value;
	}
	uint64_t dims[GLOW_MAX_RANK];
	for (unsigned i = 0; i < x->rank; i++)
		dims[i] = i == axis ? t->dims[0] : 1;
	return imp_b_reshape(im, v, dims, x->rank, imp_dname(im, name, "axis"));
}

int imp_op_quantize(struct importer *im, const onnx_node *n)
{
	struct tensor *x = imp_in_req(im, 0), *s = imp_in_req(im, 1), *z = imp_in_opt(im, 2);
	if (!x || !s || !imp_float_input(im, x))
		return -1;
	int prec = imp_q_precision(im);
	if (prec < 0)
		return -1;
	int64_t attr_dt = imp_attr_i(n, "output_dtype", 0);
	if (z && attr_dt && attr_dt != z->dtype)
		return imp_op_err(im, "output_dtype %s does not match the zero point \"%s\" of %s",
				  imp_dt_name((int)attr_dt), z->name, imp_dt_name(z->dtype));
	int odt = z ? z->dtype : attr_dt ? (int)attr_dt : DT_UINT8;
	if (imp_q_narrow(odt, n) || imp_q_float_path(s->dtype, prec))
		return imp_quantize_narrow(im, odt);
	if (imp_attr_i(n, "saturate", 1) != 1)
		return imp_op_err(im, "saturate = 0 is not supported");
	struct value xv = imp_tval(im, x);
	const char *name = imp_out_name(im, 0);
	if (!s->known || (z && !z->known)) { /* parameters computed at run time */
		int dtype = z ? z->dtype : DT_UINT8;
		if (dtype != DT_UINT8 && dtype != DT_INT8)
			return imp_op_err(im, "quantizing to %s is not supported", imp_dt_name(dtype));
		if (!imp_dt_is_float(s->dtype))
			return imp_op_err(im, "scale \"%s\" must be floating point, not %s", s->name, imp_dt_name(s->dtype));
		struct value sv = runtime_param(im, s, x, imp_dname(im, name, "scale"));
		struct value zv = z ? runtime_param(im, z, x, imp_dname(im, name, "zp")) : imp_q_fconst(im, imp_dname(im, name, "zp"), 0);
		return imp_set_out(im, 0, quantize_raw(im, xv, sv, zv, dtype, name));
	}
	struct qparams q;
	if (read_qparams(im, 1, 2, x, DT_UNDEF, 1, &q))
		return -1;
	if (q.dtype == DT_INT32)
		return imp_op_err(im, "quantizing to int32 is not supported");
	if (q.n == 1)
		return imp_set_out(im, 0, imp_b_node(im, NK_Quantize, name, &xv, 1, qtype(im, &q, 0, x->dims, x->rank)));
	return imp_set_out(im, 0, quantize_raw(im, xv, axis_const(im, &q, false, x->rank, imp_dname(im, name, "scale")),
					       axis_const(im, &q, true, x->rank, imp_dname(im, name, "zp")), q.dtype,
					       name));
}

/* Per-axis DequantizeLinear of known integers: the float result,
 * (q - z) * s per element in float32 as ONNX computes it. */
static struct tensor *dequantize_known(struct importer *im, struct tensor *x, const struct qparams *q,
				       const char *name)
{
	const int64_t *v = imp_t_ints(im, x);
	if (!v)
		return NULL;
	uint64_t numel = imp_t_numel(x), inner = 1;
	for (unsigned i = q->axis + 1; i < x->rank; i++)
		inner *= x->dims[i];
	double *f = arena_alloc(&im->scratch, (numel ? numel : 1) * sizeof *f);
	for (uint64_t e = 0; e < numel; e++) {
		uint64_t c = (e / inner) % q->n;
		f[e] = (float)((double)(v[e] - (q->zp ? q->zp[c] : 0)) * (double)(float)q->scale[c]);
	}
	return imp_t_from_floats(im, name, DT_FLOAT, x->rank, x->dims, f);
}

int imp_op_dequantize(struct importer *im, const onnx_node *n)
{
	struct tensor *x = imp_in_req(im, 0);
	struct qparams q;
	if (!x)
		return -1;
	struct tensor *s = imp_in_req(im, 1), *z = imp_in_opt(im, 2);
	int out = s ? imp_dq_out_dtype(im, s) : -1;
	if (out < 0)
		return -1;
	/* parameters computed at run time: float arithmetic, as blocked */
	bool runtime = !s->known || (z && !z->known);
	if (imp_q_narrow(x->dtype, n) || imp_q_float_path(s->dtype, out) || (runtime && int_dtype_ok(x->dtype)))
		return imp_dequantize_narrow(im);
	if (!int_dtype_ok(x->dtype))
		return imp_op_err(im, "input must be int8, uint8 or int32, not %s", imp_dt_name(x->dtype));
	if (read_qparams(im, 1, 2, x, x->dtype, 1, &q))
		return -1;
	const char *name = imp_out_name(im, 0);
	const struct type *ft = imp_ty(im, EK_FLOAT, x->dims, x->rank);
	if (q.n == 1) {
		struct value xv = qinput(im, 0, qtype(im, &q, 0, x->dims, x->rank));
		return imp_set_out(im, 0, imp_b_node(im, NK_Dequantize, name, &xv, 1, ft));
	}
	if (x->known && imp_t_numel(x) <= ONNX_FOLD_MAX) {
		struct tensor *t = dequantize_known(im, x, &q, name);
		if (!t)
			return -1;
		struct imp_qaxis *qa = arena_new(&im->scratch, struct imp_qaxis);
		*qa = (struct imp_qaxis){x, q.scale, q.zp, q.n, q.axis};
		t->qaxis = qa;
		return imp_set_out_t(im, 0, t);
	}
	/* per axis at run time: (float(q) - z) * s */
	struct value xv = qinput(im, 0, imp_input_type(im, x->dtype, x->dims, x->rank));
	struct value f = xv.node ? imp_b_node(im, NK_Dequantize, imp_dname(im, name, "int"), &xv, 1, ft) : xv;
	f = imp_q_fbin(im, NK_Sub, f, axis_const(im, &q, true, x->rank, imp_dname(im, name, "zp")),
		 imp_dname(im, name, "centred"));
	f = imp_q_fbin(im, NK_Mul, f, axis_const(im, &q, false, x->rank, imp_dname(im, name, "scale")), name);
	if (!f.node || !x->known)
		return imp_set_out(im, 0, f);
	/* known integers too many to fold (a large weight): the float form
	 * stays in the graph, and the result still carries the integers and
	 * their parameters, so that a Conv or Gemm reading it becomes the
	 * channelwise quantized kind (imp_qdq_channelwise_conv; the float form
	 * is then dead code) as a folded weight does */
	struct tensor *t = arena_new(&im->scratch, struct tensor);
	*t = (struct tensor){.name = name, .dtype = DT_FLOAT, .rank = x->rank, .v = f};
	memcpy(t->dims, x->dims, sizeof t->dims);
	struct imp_qaxis *qa = arena_new(&im->scratch, struct imp_qaxis);
	*qa = (struct imp_qaxis){x, q.scale, q.zp, q.n, q.axis};
	t->qaxis = qa;
	return imp_set_out_t(im, 0, t);
}

/* ---- DynamicQuantizeLinear ---- */

/* ONNX's formula, in float32 like its reference: the range [min(x, 0),
 * max(x, 0)], scale = range / 255, zero point = round(clip(0 - min / scale,
 * 0, 255)), y = saturate(round(x / scale) + zero point), all uint8. */
int imp_op_dynamic_quantize(struct importer *im, const onnx_node *n)
{
	(void)n;
	struct value x;
	const struct type *t;
	if (imp_in_float(im, 0, &x, &t))
		return -1;
	if (t->elem != EK_FLOAT)
		return imp_op_err(im, "input must be float32");
	const char *y = imp_out_name(im, 0), *sn = imp_out_name(im, 1), *zn = imp_out_name(im, 2);
	const char *base = *y ? y : *sn ? sn : zn;
	struct value zero = imp_q_fconst(im, imp_dname(im, base, "zero"), 0);
	struct value lo = imp_reduce_all(im, NK_BatchedReduceMin, x, imp_dname(im, base, "min"));
	struct value hi = imp_reduce_all(im, NK_BatchedReduceMax, x, imp_dname(im, base, "max"));
	lo = imp_b_binary(im, NK_Min, lo, zero, imp_dname(im, base, "lo"));
	hi = imp_b_binary(im, NK_Max, hi, zero, imp_dname(im, base, "hi"));
	struct value range = imp_b_binary(im, NK_Sub, hi, lo, imp_dname(im, base, "range"));
	struct value scale = imp_b_binary(im, NK_Div, range, imp_q_fconst(im, imp_dname(im, base, "qmax"), 255),
					  *sn ? sn : imp_dname(im, base, "scale"));
	struct value zf = imp_b_binary(im, NK_Div, lo, scale, imp_dname(im, base, "minscaled"));
	zf = imp_b_binary(im, NK_Sub, zero, zf, imp_dname(im, base, "zpf"));
	zf = imp_b_unary(im, NK_Clip, imp_dname(im, base, "zpclip"), zf);
	if (zf.node) {
		node_set_float(im->m, zf.node, AN_min, 0);
		node_set_float(im->m, zf.node, AN_max, 255);
	}
	zf = imp_b_unary(im, NK_Round, imp_dname(im, base, "zpround"), zf);
	struct value zq = zf.node ? imp_b_node(im, NK_Quantize, *zn ? zn : imp_dname(im, base, "zp"), &zf, 1,
					       imp_input_type(im, DT_UINT8, NULL, 0))
				  : zf;
	int rc = imp_set_out(im, 1, scale);
	rc |= imp_set_out(im, 2, zq);
	if (*y)
		rc |= imp_set_out(im, 0, quantize_raw(im, x, scale, zf, DT_UINT8, y));
	return rc ? -1 : 0;
}

/* ---- QLinearConv, ConvInteger ---- */

/* The per-channel bias of a channelwise convolution: ONNX's int32 bias
 * b (input bi; 0 or absent: zeros) as real values b * s_x * s_w[c]. */
static struct value cw_bias(struct importer *im, unsigned bi, const struct tensor *w, double sx, const double *sw,
			    const char *name)
{
	uint64_t oc = w->dims[0];
	struct tensor *b = bi ? imp_in_opt(im, bi) : NULL;
	const int64_t *bv = NULL;
	if (b) {
		if (b->dtype != DT_INT32 || b->rank != 1 || b->dims[0] != oc) {
			imp_op_err(im, "bias must be int32 of shape [%llu]", (unsigned long long)oc);
			return no_value;
		}
		if (!b->known || !(bv = imp_t_ints(im, b))) {
			imp_op_err(im, "with per-channel weight scales the bias must be known at import");
			return no_value;
		}
	}
	double *f = arena_alloc(&im->scratch, oc * sizeof *f);
	for (uint64_t c = 0; c < oc; c++)
		f[c] = bv ? (double)bv[c] * ((double)(float)sx * (double)(float)sw[c]) : 0.0;
	struct tensor *t = imp_t_from_floats(im, name, DT_FLOAT, 1, &oc, f);
	return imp_t_const(im, t, imp_ty(im, EK_FLOAT, &oc, 1));
}

/* The bias of a per-tensor quantized convolution: input bi (int32; 0
 * or absent: zeros) as qi32 with scale s_x * s_w (the float product) and
 * offset 0. */
static struct value pt_bias(struct importer *im, unsigned bi, uint64_t oc, float acc_scale, const char *name)
{
	const struct type *bt = type_get_q(im->tc, EK_QI32, &oc, 1, acc_scale, 0);
	struct tensor *b = bi ? imp_in_opt(im, bi) : NULL;
	if (!b)
		return imp_b_splat_const(im, name, bt, 0);
	if (b->dtype != DT_INT32 || b->rank != 1 || b->dims[0] != oc) {
		imp_op_err(im, "bias must be int32 of shape [%llu]", (unsigned long long)oc);
		return no_value;
	}
	return qinput(im, bi, bt);
}

/* The per-channel attributes of a channelwise kind's node core (scales
 * san, offsets oan): n scales (as the floats they are) and zero points
 * (NULL: zeros). */
static void cw_attrs(struct importer *im, struct node *core, enum attr_name san, enum attr_name oan,
		     const double *scale, const int64_t *zp, uint64_t n)
{
	int64_t *offs = arena_alloc(&im->scratch, n * sizeof *offs);
	double *scales = arena_alloc(&im->scratch, n * sizeof *scales);
	for (uint64_t c = 0; c < n; c++) {
		offs[c] = zp ? zp[c] : 0;
		scales[c] = imp_f32_short((float)scale[c]);
	}
	node_set_floats(im->m, core, san, scales, (unsigned)n);
	node_set_ints(im->m, core, oan, offs, (unsigned)n);
}

/* A quantized convolution: x with parameters qx (input xi), w with qw
 * (input wi; per channel: the channelwise kind), bias input bi (0: none),
 * result of parameters qy (NULL: qi32[1:0], ConvInteger's) named name. */
static struct value qconv(struct importer *im, const onnx_node *n, unsigned xi, const struct qparams *qx, unsigned wi,
			  const struct qparams *qw, unsigned bi, const struct qparams *qy, const char *name)
{
	struct tensor *x = imp_in_req(im, xi), *w = imp_in_req(im, wi);
	if (!x || !w)
		return no_value;
	if (w->rank < 3 || (qw->n != 1 && qw->n != w->dims[0])) {
		imp_op_err(im, "weight parameters must be per tensor or one per output channel");
		return no_value;
	}
	const struct type *xt = qtype(im, qx, 0, x->dims, x->rank), *rt;
	if (qy)
		rt = qtype(im, qy, 0, x->dims, 1);
	else
		rt = type_get_q(im->tc, EK_QI32, x->dims, 1, 1.0f, 0);
	/* one statement each: the constants are made in operand order */
	bool per_tensor = qw->n == 1;
	struct value xv = qinput(im, xi, xt);
	struct value wv = qinput(im, wi, per_tensor ? qtype(im, qw, 0, w->dims, w->rank)
					      : imp_input_type(im, w->dtype, w->dims, w->rank));
	struct value bv = per_tensor ? pt_bias(im, bi, w->dims[0], (float)qx->scale[0] * (float)qw->scale[0],
					       imp_dname(im, name, "bias"))
				     : cw_bias(im, bi, w, qx->scale[0], qw->scale, imp_dname(im, name, "bias"));
	struct node *core;
	struct value r = imp_conv_q(im, n, x, w, xv, wv, bv,
				    per_tensor ? NK_Convolution : NK_ChannelwiseQuantizedConvolution, rt, name, &core);
	if (per_tensor)
		return r;
	if (core)
		cw_attrs(im, core, AN_filter_scales, AN_filter_offsets, qw->scale, qw->zp, qw->n);
	return r;
}

/* The single reader of value name in the main graph, NULL if it has
 * another number of readers or is a graph output. */
static const onnx_node *sole_reader(struct importer *im, const char *name)
{
	const onnx_node *r = NULL;
	if (!im->graph || im->inner || strmap_get(&im->outputs, name))
		return NULL;
	for (size_t i = 0; i < im->graph->n_node; i++) {
		const onnx_node *g = im->graph->node[i];
		for (size_t k = 0; k < g->n_input; k++) {
			if (!g->input[k] || strcmp(g->input[k], name) != 0)
				continue;
			if (r)
				return NULL;
			r = g;
		}
	}
	return r;
}

/* The quantized type a per-tensor QuantizeLinear q gives dims, from its
 * known scale and zero point; NULL if they are not known or per axis. */
static const struct type *reader_qtype(struct importer *im, const onnx_node *q, const uint64_t *dims, unsigned rank)
{
	if (!q || strcmp(q->op_type, "QuantizeLinear") != 0 || !imp_default_domain(q->domain) || q->n_input < 2)
		return NULL;
	struct tensor *s = imp_t_lookup(im, q->input[1]);
	struct tensor *z = q->n_input > 2 && *q->input[2] ? imp_t_lookup(im, q->input[2]) : NULL;
	const double *sv = s && s->known ? imp_t_floats(im, s) : NULL;
	const int64_t *zv = z && z->known ? imp_t_ints(im, z) : NULL;
	if (!sv || imp_t_numel(s) != 1 || !(sv[0] > 0) || !isfinite(sv[0]) || (z && (!zv || imp_t_numel(z) != 1)) ||
	    (z && z->dtype != DT_UINT8 && z->dtype != DT_INT8))
		return NULL;
	struct qparams qp = {1, 0, sv, zv, z ? z->dtype : DT_UINT8};
	return qtype(im, &qp, 0, dims, rank);
}

/* The quantized type, of rproto's shape, that the only reader of output 0
 * quantizes it to: a per-tensor QuantizeLinear with known parameters, or
 * a Relu read only by one whose type holds no negative value (the
 * saturation clips). NULL otherwise. */
static const struct type *qdq_out_type(struct importer *im, const uint64_t *dims, unsigned rank)
{
	const onnx_node *q = sole_reader(im, imp_out_name(im, 0));
	bool relu = q && strcmp(q->op_type, "Relu") == 0 && imp_default_domain(q->domain) && q->n_output == 1;
	if (relu)
		q = sole_reader(im, q->output[0]);
	const struct type *rt = reader_qtype(im, q, dims, rank);
	if (!rt || (relu && rt->offset != (rt->elem == EK_QUI8 ? 0 : -128)))
		return NULL;
	return rt;
}

/* Output 0 as the Dequantize of quantized result r (the reader's
 * QuantizeLinear meets it: fold-qdq joins the pair). */
static int qdq_out(struct importer *im, struct value r)
{
	const struct type *ft = r.node ? type_with_elem(im->tc, val_type(r), EK_FLOAT) : NULL;
	return imp_set_out(im, 0, imp_b_node(im, NK_Dequantize, imp_out_name(im, 0), &r, 1, ft));
}

/* Bias input bi of N channels for a channelwise kind: absent (zeros) or
 * known float values; *ok false for anything else. */
static struct value qdq_float_bias(struct importer *im, unsigned bi, uint64_t nch, bool *ok)
{
	struct tensor *b = imp_in_opt(im, bi);
	*ok = !b || (b->known && b->dtype == DT_FLOAT && imp_t_numel(b) == nch);
	if (!*ok)
		return no_value;
	if (!b)
		return imp_b_splat_const(im, imp_dname(im, imp_out_name(im, 0), "bias"), imp_ty(im, EK_FLOAT, &nch, 1), 0);
	return imp_b_reshape(im, imp_tval(im, b), &nch, 1, imp_dname(im, b->name, "1d"));
}

int imp_qdq_channelwise_conv(struct importer *im, const onnx_node *n, struct tensor *x, struct tensor *w, int *rc)
{
	const struct imp_qaxis *qa = w->qaxis;
	struct tensor *b = imp_in_opt(im, 2);
	if (qa->axis != 0 || qa->n != w->dims[0] || !x->v.node || x->v.node->kind != NK_Dequantize ||
	    (b && (!b->known || b->dtype != DT_FLOAT || imp_t_numel(b) != qa->n)))
		return 0;
	const struct type *rt = qdq_out_type(im, x->dims, 1);
	if (!rt)
		return 0;
	bool ok;
	struct value xv = op_val(x->v.node, 0);
	struct value wv = qinput_of(im, qa->q, imp_input_type(im, qa->q->dtype, w->dims, w->rank));
	struct value bv = qdq_float_bias(im, 2, qa->n, &ok);
	struct node *core;
	struct value r = imp_conv_q(im, n, x, w, xv, wv, bv, NK_ChannelwiseQuantizedConvolution, rt,
				    imp_dname(im, imp_out_name(im, 0), "q"), &core);
	if (core)
		cw_attrs(im, core, AN_filter_scales, AN_filter_offsets, qa->scale, qa->zp, qa->n);
	*rc = qdq_out(im, r);
	return 1;
}

int imp_qdq_channelwise_fc(struct importer *im, struct value a, struct tensor *w, bool trb, int *rc)
{
	const struct imp_qaxis *qa = w->qaxis;
	const struct type *ta = val_type(a);
	uint64_t nn = w->dims[trb ? 0 : 1], dims[2] = {ta->dims[0], nn};
	if (!qa || w->rank != 2 || qa->axis != (trb ? 0u : 1u) || qa->n != nn || a.node->kind != NK_Dequantize)
		return 0;
	struct tensor *b = imp_in_opt(im, 2);
	if (b && (!b->known || b->dtype != DT_FLOAT || imp_t_numel(b) != nn))
		return 0;
	const struct type *rt = qdq_out_type(im, dims, 2);
	if (!rt)
		return 0;
	bool ok;
	const char *name = imp_dname(im, imp_out_name(im, 0), "q");
	struct value ops[3] = {op_val(a.node, 0), qinput_of(im, qa->q, imp_input_type(im, qa->q->dtype, w->dims, 2)),
			       no_value};
	if (trb) {
		static const unsigned perm[2] = {1, 0};
		ops[1] = imp_b_transpose(im, ops[1], perm, imp_dname(im, w->name, "kn"));
	}
	ops[2] = qdq_float_bias(im, 2, nn, &ok);
	struct value r = imp_b_node(im, NK_ChannelwiseQuantizedFullyConnected, name, ops, 3, rt);
	if (r.node)
		cw_attrs(im, r.node, AN_weight_scales, AN_weight_offsets, qa->scale, qa->zp, qa->n);
	*rc = qdq_out(im, r);
	return 1;
}

int imp_op_qlinear_conv(struct importer *im, const onnx_node *n)
{
	struct tensor *x = imp_in_req(im, 0), *w = imp_in_req(im, 3);
	struct qparams qx, qw, qy;
	if (!x || !w)
		return -1;
	if (read_qparams(im, 1, 2, x, x->dtype, -1, &qx) | read_qparams(im, 4, 5, w, w->dtype, 0, &qw) |
	    read_qparams(im, 6, 7, x, DT_UNDEF, -1, &qy))
		return -1;
	if (qx.dtype == DT_INT32 || qw.dtype == DT_INT32 || qy.dtype == DT_INT32)
		return imp_op_err(im, "operands must be int8 or uint8");
	return imp_set_out(im, 0, qconv(im, n, 0, &qx, 3, &qw, 8, &qy, imp_out_name(im, 0)));
}

/* The parameters of ConvInteger's and MatMulInteger's input di: scale 1,
 * the zero point zi (absent: 0) as its offset; per_axis as read_qparams. */
static int int_params(struct importer *im, unsigned di, unsigned zi, bool per_axis, struct qparams *q)
{
	static const double one = 1;
	struct tensor *d = imp_in_req(im, di), *z = imp_in_opt(im, zi);
	if (!d)
		return -1;
	if (d->dtype != DT_UINT8 && d->dtype != DT_INT8)
		return imp_op_err(im, "input \"%s\" must be uint8 or int8, not %s", d->name, imp_dt_name(d->dtype));
	*q = (struct qparams){.n = 1, .scale = &one, .dtype = d->dtype};
	if (!z)
		return 0;
	if (z->dtype != d->dtype)
		return imp_op_err(im, "zero point \"%s\" is %s but the data is %s", z->name, imp_dt_name(z->dtype),
				  imp_dt_name(d->dtype));
	if (!z->known || !(q->zp = imp_t_ints(im, z)))
		return imp_op_err(im,
				  "zero point \"%s\" must be known at import (an initializer, a Constant or -freeze-input)",
				  z->name);
	q->n = imp_t_numel(z);
	if (q->n != 1 && !per_axis)
		return imp_op_err(im, "zero point \"%s\" must be a scalar", z->name);
	if (q->n != 1) {
		double *s = arena_alloc(&im->scratch, q->n * sizeof *s);
		for (uint64_t i = 0; i < q->n; i++)
			s[i] = 1;
		q->scale = s;
	}
	return 0;
}

/* The qi32[1:0] accumulator r as ONNX's int32 output 0. */
static int int32_out(struct importer *im, struct value r)
{
	if (!r.node)
		return -1;
	return imp_set_out(im, 0, imp_b_convert(im, r, EK_I32, imp_out_name(im, 0)));
}

int imp_op_conv_integer(struct importer *im, const onnx_node *n)
{
	struct qparams qx, qw;
	if (int_params(im, 0, 2, false, &qx) | int_params(im, 1, 3, true, &qw))
		return -1;
	return int32_out(im, qconv(im, n, 0, &qx, 1, &qw, 0, NULL, imp_dname(im, imp_out_name(im, 0), "acc")));
}

/* ---- QLinearMatMul, MatMulInteger ---- */

int imp_op_qlinear_matmul(struct importer *im, const onnx_node *n)
{
	(void)n;
	struct tensor *a = imp_in_req(im, 0), *b = imp_in_req(im, 3);
	struct qparams qa, qb, qy;
	if (!a || !b)
		return -1;
	if (read_qparams(im, 1, 2, a, a->dtype, -1, &qa) | read_qparams(im, 4, 5, b, b->dtype, -1, &qb) |
	    read_qparams(im, 6, 7, a, DT_UNDEF, -1, &qy))
		return -1;
	if (qa.dtype == DT_INT32 || qb.dtype == DT_INT32 || qy.dtype == DT_INT32)
		return imp_op_err(im, "operands must be int8 or uint8");
	struct value av = qinput(im, 0, qtype(im, &qa, 0, a->dims, a->rank));
	struct value bv = qinput(im, 3, qtype(im, &qb, 0, b->dims, b->rank));
	if (!av.node || !bv.node)
		return -1;
	return imp_set_out(im, 0, imp_matmul(im, av, bv, qtype(im, &qy, 0, NULL, 0), imp_out_name(im, 0)));
}

int imp_op_matmul_integer(struct importer *im, const onnx_node *n)
{
	(void)n;
	struct tensor *a = imp_in_req(im, 0), *b = imp_in_req(im, 1);
	struct qparams qa, qb;
	if (!a || !b || (int_params(im, 0, 2, false, &qa) | int_params(im, 1, 3, false, &qb)))
		return -1;
	struct value av = qinput(im, 0, qtype(im, &qa, 0, a->dims, a->rank));
	struct value bv = qinput(im, 1, qtype(im, &qb, 0, b->dims, b->rank));
	if (!av.node || !bv.node)
		return -1;
	const struct type *acc = type_get_q(im->tc, EK_QI32, NULL, 0, 1.0f, 0);
	return int32_out(im, imp_matmul(im, av, bv, acc, imp_dname(im, imp_out_name(im, 0), "acc")));
}
