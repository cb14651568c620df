/* qvalue.c - quantized values of the importer: the graph type of an ONNX
 * integer tensor, float arithmetic broadcast over a quantized value's
 * float form, and reinterpreting stored integers under other parameters.
 * Below ops_quant.c (8-bit QuantizeLinear, QLinear*, ...) and ops_f8.c
 * (float8, 4-bit and blocked quantization), which both build on it.
 */
#include "import/onnx/internal.h"

int imp_dt_qelem(int dtype)
{
	return dtype == DT_UINT8 ? EK_QUI8 : dtype == DT_INT8 ? EK_QI8 : dtype == DT_INT32 ? EK_QI32 : -1;
}

const struct type *imp_input_type(struct importer *im, int dtype, const uint64_t *dims, unsigned rank)
{
	if (dtype != DT_UINT8 && dtype != DT_INT8) {
		if (imp_dt_elem(dtype) < 0) {
			imp_op_err(im, "element type %s is not supported here", imp_dt_name(dtype));
			return NULL;
		}
		return imp_ty(im, imp_dt_elem(dtype), dims, rank);
	}
	if (!imp_ty(im, EK_FLOAT, dims, rank)) /* the shape check */
		return NULL;
	return type_get_q(im->tc, (enum elem_kind)imp_dt_qelem(dtype), dims, rank, 1.0f, 0);
}

/* t holds raw integers: scale 1, offset 0. */
bool imp_q_is_raw(const struct type *t) { return t->scale == 1.0f && t->offset == 0; }

struct value imp_q_fconst(struct importer *im, const char *name, double f)
{
	return imp_b_splat_const(im, name, imp_ty(im, EK_FLOAT, NULL, 0), f);
}

struct value imp_q_fbin(struct importer *im, unsigned kind, struct value x, struct value c, const char *name)
{
	if (!x.node || !c.node)
		return no_value;
	const struct type *t = val_type(x);
	c = imp_b_broadcast(im, c, t->dims, t->rank, imp_dname(im, name, "bcast"));
	return imp_b_binary(im, kind, x, c, name);
}

/* internal.h. Value v (quantized, of the stored integers ONNX means) as type qt with
 * the same stored integers: through float, d = round(real / s) is the
 * integer minus v's offset, and d + offset - qt's offset scaled by qt's
 * scale quantizes back to the same integer (exact for 8-bit integers). */
struct value imp_q_reinterpret(struct importer *im, struct value v, const struct type *qt, const char *name)
{
	const struct type *t = val_type(v);
	struct value f = imp_b_node(im, NK_Dequantize, imp_dname(im, name, "real"), &v, 1,
				    type_with_elem(im->tc, t, EK_FLOAT));
	if (!imp_q_is_raw(t)) {
		f = imp_q_fbin(im, NK_Div, f, imp_q_fconst(im, imp_dname(im, name, "s0"), t->scale), imp_dname(im, name, "div"));
		f = imp_b_unary(im, NK_Round, imp_dname(im, name, "int"), f);
	}
	if (t->offset != qt->offset)
		f = imp_q_fbin(im, NK_Add, f, imp_q_fconst(im, imp_dname(im, name, "z"), (double)t->offset - qt->offset),
			 imp_dname(im, name, "centred"));
	if (qt->scale != 1.0f)
		f = imp_q_fbin(im, NK_Mul, f, imp_q_fconst(im, imp_dname(im, name, "s"), qt->scale), imp_dname(im, name, "scaled"));
	return f.node ? imp_b_node(im, NK_Quantize, name, &f, 1, qt) : f;
}

struct value imp_q_integers(struct importer *im, struct value v, const char *name)
{
	if (!v.node)
		return v;
	const struct type *t = val_type(v);
	if (!imp_q_is_raw(t))
		v = imp_q_reinterpret(im, v, type_get_q(im->tc, (enum elem_kind)t->elem, t->dims, t->rank, 1.0f, 0),
				imp_dname(im, name, "raw"));
	return v.node ? imp_b_node(im, NK_Dequantize, name, &v, 1, type_with_elem(im->tc, t, EK_FLOAT)) : v;
}
