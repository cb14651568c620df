/* ocl_gen_types.c - the OpenCL backend's element types beyond float,
 * int32, int64 and bool (oclt, issue 19; docs/OpenCL.md "Element types"):
 * convertto, quantize and dequantize between the element kinds, as the
 * interpreter's convert_range (backends/interpreter/k_ew.c) converts them,
 * and the helpers the elementwise kernels on float16, bfloat16 and
 * quantized operands share (ocl_gen_ew.c).
 *
 * The interpreter converts by real value in double: ld_f reads the
 * source's value, st_f stores it (kern.h), except between the
 * integer-exact kinds (int32, int64, the index kinds and bool: exact and
 * wrapped) and for convertto's saturate and round_mode. The kernels here
 * compute in float, so a conversion is compiled only where float gives
 * the interpreter's bits. By what the source's value is:
 *
 *   exact in float (float, float16, bfloat16, the float8 kinds,
 *   float4e2m1, float8e8m0, int4, uint4): every destination; the
 *   encoders of lib/support/scalar.h restated on the bits (the "types"
 *   section of kernels/ocl_kernels.cl), integers truncated and saturated,
 *   the 4-bit integers rounded half away and wrapped, quantized kinds by
 *   the interpreter's quantize (ocl_quant: half to even, saturated, exact
 *   as double's is);
 *   an integer (int32, int64, index32, index64, bool): the integer kinds
 *   exact and wrapped; a float kind from (float)(double)x, an int64 first
 *   rounded to 53 bits as double does (ocl_l53); the 4-bit integers
 *   likewise; not a quantized kind (x / scale is not exact in float);
 *   quantized (qi8, qui8, qi16; scale * (q - offset), one float product
 *   that double computes exactly and rounds to float once): a float kind,
 *   or bool (q != offset); not an integer kind, a 4-bit integer or another
 *   quantized type (truncation or rounding of the unrounded product).
 *
 * Quantized types need a positive normal scale and an offset of at most
 * 2^16 in magnitude (then q - offset is exact in float and ocl_quant's
 * saturation bound holds); qi32 is not compiled (q - offset is not exact
 * in float), except a qi32 of scale 1 and offset 0 into int32 or int64
 * (the value is the stored integer; the result of ConvInteger and
 * MatMulInteger, ocl_gen_quant.c).
 */
#include "backends/opencl/ocl.h"
#include "support/util.h"

#include <inttypes.h>
#include <math.h>
#include <string.h>

/* what an element's value is (above) */
enum vclass { V_NONE, V_FLOAT, V_INT, V_QUANT };

static enum vclass vclass_of(unsigned k)
{
	switch (k) {
	case EK_FLOAT: case EK_FLOAT16: case EK_BFLOAT16: case EK_F8E4M3FN: case EK_F8E4M3FNUZ: case EK_F8E5M2:
	case EK_F8E5M2FNUZ: case EK_F4E2M1: case EK_F8E8M0: case EK_I4: case EK_U4:
		return V_FLOAT;
	case EK_I32: case EK_I64: case EK_INDEX32: case EK_INDEX64: case EK_BOOL:
		return V_INT;
	case EK_QI8: case EK_QUI8: case EK_QI16:
		return V_QUANT;
	default:
		return V_NONE;
	}
}

const char *ocl_elem_ctype(unsigned k)
{
	switch (k) {
	case EK_FLOAT: return "float";
	case EK_FLOAT16: case EK_BFLOAT16: return "ushort";
	case EK_QI8: case EK_I4: return "char";
	case EK_QUI8: case EK_BOOL: case EK_U4: case EK_F8E4M3FN: case EK_F8E4M3FNUZ: case EK_F8E5M2:
	case EK_F8E5M2FNUZ: case EK_F4E2M1: case EK_F8E8M0:
		return "uchar";
	case EK_QI16: return "short";
	case EK_I32: case EK_INDEX32: case EK_QI32: return "int";
	case EK_I64: case EK_INDEX64: return "long";
	default: return NULL;
	}
}

/* a destination that takes (float)v and encodes it */
static bool float_dest(unsigned k) { return vclass_of(k) == V_FLOAT && k != EK_I4 && k != EK_U4; }

bool ocl_convert_elems_ok(unsigned d, unsigned s)
{
	if (s == EK_QI32) /* the integer products' result to int32 or int64 (ocl_sup_convert: scale 1, offset 0) */
		return d == EK_I32 || d == EK_I64;
	enum vclass dc = vclass_of(d), sc = vclass_of(s);
	if (dc == V_NONE || sc == V_NONE)
		return false;
	if (sc == V_INT)
		return dc != V_QUANT;
	if (sc == V_QUANT)
		return float_dest(d) || d == EK_BOOL;
	return true;
}

bool ocl_quant_type_ok(const struct type *t)
{
	if (vclass_of(t->elem) != V_QUANT)
		return true;
	return isnormal(t->scale) && t->scale > 0 && t->offset >= -65536 && t->offset <= 65536;
}

bool ocl_sup_convert(const struct ir_instr *in)
{
	const struct type *d = in->ops[0].val->type, *s = in->ops[1].val->type;
	if (d == s && ocl_elem_ctype(d->elem))
		return true; /* the same type: a copy */
	if (s->elem == EK_QI32) /* the value is the stored integer: exact in int32 and int64 */
		return ocl_convert_elems_ok(d->elem, s->elem) && s->scale == 1.0f && s->offset == 0;
	return ocl_convert_elems_ok(d->elem, s->elem) && ocl_quant_type_ok(d) && ocl_quant_type_ok(s);
}

/* ---- the conversion's expression ---- */

/* The quantized type's scale as an exact float literal */
static void put_scale(struct ostream *o, const struct type *t) { os_printf(o, "%af", (double)t->scale); }

/* The float value of source element x (of t, class V_FLOAT, V_INT or
 * V_QUANT) as the interpreter's (float)ld_f or (float)(double)ld_i. */
static void load_float(struct ostream *o, const struct type *t)
{
	unsigned k = t->elem;
	switch (k) {
	case EK_FLOAT: os_puts(o, "(x)"); return;
	case EK_FLOAT16: os_puts(o, "as_float(ocl_h2f((uint)(x)))"); return;
	case EK_BFLOAT16: os_puts(o, "as_float((uint)(x) << 16)"); return;
	case EK_F8E4M3FN: case EK_F8E4M3FNUZ: case EK_F8E5M2: case EK_F8E5M2FNUZ:
		os_printf(o, "as_float(ocl_f82f((uint)(x), %d))", (int)(k - EK_F8E4M3FN));
		return;
	case EK_F4E2M1: os_puts(o, "ocl_f42f((uint)(x))"); return;
	case EK_F8E8M0: os_puts(o, "as_float(ocl_e8m02f((uint)(x)))"); return;
	case EK_I4: case EK_U4: case EK_I32: case EK_INDEX32: os_puts(o, "convert_float(x)"); return;
	case EK_I64: case EK_INDEX64: os_puts(o, "ocl_l2f(x)"); return;
	case EK_BOOL: os_puts(o, "((x) ? 1.0f : 0.0f)"); return;
	default: /* quantized: one float product, as double's rounded once */
		os_puts(o, "(");
		put_scale(o, t);
		os_printf(o, " * convert_float((int)(x) - %" PRId32 "))", t->offset);
		return;
	}
}

void ocl_quant_range(unsigned k, int64_t *lo, int64_t *hi)
{
	*lo = k == EK_QI8 ? -128 : k == EK_QUI8 ? 0 : k == EK_QI16 ? -32768 : INT32_MIN;
	*hi = k == EK_QI8 ? 127 : k == EK_QUI8 ? 255 : k == EK_QI16 ? 32767 : INT32_MAX;
}

/* Destination t's element from the float value F (the text f) as st_f
 * stores it; sat and mode: convertto's saturate and round_mode; nan: F
 * may be NaN. */
static void store_float(struct ostream *o, const struct type *t, const char *f, int sat, int mode, bool nan)
{
	unsigned k = t->elem;
	switch (k) {
	case EK_FLOAT: /* a NaN through double is quiet */
		os_printf(o, nan ? "ocl_quiet(%s)" : "(%s)", f);
		return;
	case EK_FLOAT16: os_printf(o, "(ushort)ocl_f2h(as_uint(%s))", f); return;
	case EK_BFLOAT16: os_printf(o, "(ushort)ocl_f2bf(as_uint(%s))", f); return;
	case EK_F8E4M3FN: case EK_F8E4M3FNUZ: case EK_F8E5M2: case EK_F8E5M2FNUZ:
		os_printf(o, "(uchar)ocl_f2f8(as_uint(%s), %d, %d)", f, (int)(k - EK_F8E4M3FN), sat);
		return;
	case EK_F4E2M1: os_printf(o, "(uchar)ocl_f2f4(as_uint(%s))", f); return;
	case EK_F8E8M0: os_printf(o, "(uchar)ocl_f2e8m0(as_uint(%s), %d, %d)", f, sat, mode); return;
	case EK_I4: os_printf(o, "(char)ocl_f2i4(%s, 1)", f); return;
	case EK_U4: os_printf(o, "(uchar)ocl_f2i4(%s, 0)", f); return;
	case EK_I32: case EK_INDEX32: os_printf(o, "convert_int_sat_rtz(%s)", f); return;
	case EK_I64: case EK_INDEX64: /* ocl_f2l, written out: float to int64 needs no helper */
		os_printf(o, "((%s) >= 0x1p63f ? 9223372036854774784L : convert_long_sat_rtz(%s))", f, f);
		return;
	case EK_BOOL: os_printf(o, "(uchar)((%s) != 0.0f)", f); return;
	default: {
		int64_t lo, hi;
		ocl_quant_range(k, &lo, &hi);
		os_printf(o, "(%s)ocl_quant(%s, ", ocl_elem_ctype(k), f);
		put_scale(o, t);
		os_printf(o, ", %" PRId32 "L, %" PRId64 "L, %" PRId64 "L)", t->offset, lo, hi);
		return;
	}
	}
}

/* CONV(x): source element x of s as an element of d, as convert_range
 * does (the checks of ocl_sup_convert passed). */
void ocl_convert_expr(struct ostream *o, const struct type *d, const struct type *s, int sat, int mode)
{
	enum vclass dc = vclass_of(d->elem), sc = vclass_of(s->elem);
	if (s->elem == EK_QI32) { /* scale 1, offset 0 (ocl_sup_convert): the integer itself */
		os_printf(o, "((%s)(x))", ocl_elem_ctype(d->elem));
		return;
	}
	if (d == s && (d->elem == EK_FLOAT || dc != V_FLOAT)) {
		os_puts(o, "(x)"); /* stored as is (the other float kinds: NaNs as their encoder gives them) */
		return;
	}
	if (sc == V_INT && dc == V_INT) { /* exact, wrapped to the width */
		if (d->elem == EK_BOOL)
			os_puts(o, "(uchar)((x) != 0)");
		else
			os_printf(o, "((%s)(x))", ocl_elem_ctype(d->elem));
		return;
	}
	if (sc == V_INT && (d->elem == EK_I4 || d->elem == EK_U4)) {
		os_printf(o, "(%s)ocl_l2i4((long)(x), %d)", ocl_elem_ctype(d->elem), d->elem == EK_I4);
		return;
	}
	if (sc == V_QUANT && d->elem == EK_BOOL) {
		os_printf(o, "(uchar)((int)(x) != %" PRId32 ")", s->offset);
		return;
	}
	struct ostream f;
	ostream_mem(&f);
	load_float(&f, s);
	store_float(o, d, ostream_cstr(&f), sat, mode, sc == V_FLOAT);
	ostream_abort(&f);
}

void ocl_types_helpers(struct ocl_gen *g)
{
	/* once per program: the section's guard keeps a second copy out of
	 * the compilation, this flag out of the text */
	if (!g->types_helpers)
		ocl_src_section(g, "types");
	g->types_helpers = true;
}

void ocl_gen_convert(struct ocl_gen *g, const struct ir_instr *in, unsigned arg, bool relu)
{
	(void)arg;
	(void)relu;
	const struct type *d = in->ops[0].val->type, *s = in->ops[1].val->type;
	int sat = 1, mode = 0; /* st_f's: saturating, e8m0 rounding up */
	if (in->kind == IK_convertto) {
		sat = (int)ir_int(in, AN_saturate);
		mode = (int)ir_int(in, AN_round_mode);
	}
	struct ostream e;
	ostream_mem(&e);
	ocl_convert_expr(&e, d, s, sat, mode);
	if (strstr(ostream_cstr(&e), "ocl_"))
		ocl_types_helpers(g);
	struct ocl_launch *l = ocl_src_begin(g, in);
	uint64_t n = type_numel(d);
	ocl_src_define(g, "N", "%" PRIu64 "UL", n);
	ocl_src_ptr(g, "PD", ocl_elem_ctype(d->elem), in, 0);
	ocl_src_ptr(g, "PS", ocl_elem_ctype(s->elem), in, 1);
	ocl_src_define(g, "CONV(x)", "%s", ostream_cstr(&e));
	ostream_abort(&e);
	ocl_src_section(g, "convert");
	ocl_launch_1d(l, g->gpu ? 256 : 32, n);
}
