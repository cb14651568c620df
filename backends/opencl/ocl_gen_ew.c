/* ocl_gen_ew.c - the OpenCL backend's elementwise kernels: every kind of
 * lib/ir/EW.def whose expression OpenCL C can state (docs/OpenCL.md).
 *
 * A kind is compiled from the column of its row that its operands' element
 * kind selects: the Real column on float operands, the Int column on
 * int32, int64 and bool operands (evaluated on long A and B, as EW.def
 * states, and wrapped to the destination's width by the store). A column
 * that calls a function OpenCL C lacks (the bundle's cb_ and sc_ helpers)
 * or computes in double (an optional type in OpenCL C) is not stated, and
 * the kind on those operands is unsupported: the graph side says so
 * (ocl_ew_elems_ok answers is_op_supported and the support test alike).
 * The kernel is the "ew" section of kernels/ocl_kernels.cl, specialized
 * on the element types (ET the computing type, A and B loaded as ET).
 * convertto is ocl_gen_types.c's.
 */
#include "backends/opencl/ocl.h"
#include "ir/ew.h"
#include "support/util.h"

#include <ctype.h>
#include <inttypes.h>
#include <math.h>
#include <string.h>

/* EW.def's functions that OpenCL C spells otherwise (the first two
 * defined in the preamble of kernels/ocl_kernels.cl) */
static const struct {
	const char *ew, *ocl;
} ocl_fns[] = {
	{"sigmoid", "ocl_sigmoid"},
	{"fmod_floor", "ocl_fmod_floor"},
	{"nearbyint", "rint"}, /* half to even, as nearbyint in the default mode */
};

/* The Int column's integer helpers (lib/support/scalar.h's sc_ functions),
 * restated in the preamble of kernels/ocl_kernels.cl (ocl3) */
static const struct {
	const char *ew, *ocl;
} ocl_int_fns[] = {
	{"sc_ipow", "ocl_sc_ipow"},
	{"sc_imod", "ocl_sc_imod"},
	{"sc_shift", "ocl_sc_shift"},
};

/* How OpenCL C spells EW.def's function `name` in column col: "" for its
 * own name, NULL if it has none (a bundle's cb_ helper; the Int column's
 * other functions work on double). */
static const char *ew_fn(const struct ew_tok *t, enum ew_col col)
{
	if (col == EW_INT) {
		for (size_t i = 0; i < GLOW_ARRAY_SIZE(ocl_int_fns); i++)
			if (ew_tok_is(t, ocl_int_fns[i].ew))
				return ocl_int_fns[i].ocl;
		return NULL;
	}
	for (size_t i = 0; i < GLOW_ARRAY_SIZE(ocl_fns); i++)
		if (ew_tok_is(t, ocl_fns[i].ew))
			return ocl_fns[i].ocl;
	const char *sp = ew_fn_spelling(t->s, t->len, EW_REAL);
	return sp && strncmp(sp, "cb_", 3) != 0 ? "" : NULL;
}

/* Column col of row as OpenCL C into o (NULL: only check); false if the
 * column is NONE or calls a function OpenCL C lacks, or (Int) names
 * double. K(x) becomes a float literal, IF_ATTR the chosen branch;
 * parameters and the Int column's T, BITS, int64_t and uint64_t stay names
 * (#defined by the generator). */
static bool ew_expr(const struct ew_row *row, enum ew_col col, struct ostream *o)
{
	const char *s = row->expr[col];
	if (!s)
		return false;
	const char *end = s + strlen(s), *gap = s;
	struct ew_tok t, p;
	while (ew_next_tok(&s, end, &t)) {
		if (o) /* the original spacing: punctuators are single characters */
			os_write(o, gap, (size_t)(t.s - gap));
		if (ew_tok_is(&t, "K")) {
			ew_next_tok(&s, end, &p); /* ( */
			ew_next_tok(&s, end, &p);
			if (o) {
				os_write(o, p.s, p.len);
				os_puts(o, memchr(p.s, '.', p.len) || memchr(p.s, 'e', p.len) ? "f" : ".0f");
			}
			ew_next_tok(&s, end, &p); /* ) */
		} else if (t.kind == EW_TOK_IDENT && col == EW_INT && ew_tok_is(&t, "double")) {
			return false;
		} else if (t.kind == EW_TOK_IDENT && !ew_tok_is(&t, "IF_ATTR")) {
			const char *after = s;
			bool call = ew_next_tok(&after, end, &p) && *p.s == '(';
			const char *fn = call ? ew_fn(&t, col) : "";
			if (!fn)
				return false;
			if (o && *fn)
				os_puts(o, fn);
			else if (o)
				os_write(o, t.s, t.len);
		} else if (o) {
			os_write(o, t.s, t.len);
		}
		gap = s;
	}
	return true;
}

bool ocl_ew_kind_ok(unsigned kind)
{
	const struct ew_row *row = ew_row(kind);
	return row && row->family == EW_FAMILY_TABLE && (ew_expr(row, EW_REAL, NULL) || ew_expr(row, EW_INT, NULL));
}

/* The OpenCL C type of element kind k and the column it selects; NULL for
 * a kind the elementwise kernels do not compute on. */
static const char *ew_ctype(unsigned k, enum ew_col *col)
{
	*col = k == EK_FLOAT ? EW_REAL : EW_INT;
	switch (k) {
	case EK_FLOAT: return "float";
	case EK_I32: return "int";
	case EK_I64: return "long";
	case EK_BOOL: return "uchar";
	/* oclk: the index kinds as the integers of their width (MaxPool's
	 * argmax converted to int64) */
	case EK_INDEX32: return "int";
	case EK_INDEX64: return "long";
	default: return NULL;
	}
}

/* ---- float16, bfloat16 and quantized operands (oclt, issue 19) ----
 *
 * float16 and bfloat16 operands take the Real column in float, as float
 * operands do (the interpreter: in double, stored through float), loaded
 * and stored by scalar.h's conversions (ocl_gen_types.c's helpers).
 * Quantized operands (qi8, qui8, qi16) take the Real column in the
 * interpreter: on the real values s (q - o) in double, the result
 * quantized again (half to even, saturated). The kernels compute it
 * exactly, on integers, for the kinds below with every operand and Dest
 * of one type (scale and offset): there the Real value is s times the
 * Int column on the centred integers q - o (the comparisons: the same
 * truth), which double computes exactly, so the quantized result is the
 * Int column plus o, saturated. Other kinds (mul, div, exp, ...) and
 * mixed types would need double's rounding: not compiled. */
enum ewt { EWT_NONE, EWT_HALF, EWT_QUANT };

static enum ewt ewt_of(unsigned k)
{
	return k == EK_FLOAT16 || k == EK_BFLOAT16 ? EWT_HALF : k == EK_QI8 || k == EK_QUI8 || k == EK_QI16 ? EWT_QUANT : EWT_NONE;
}

static const unsigned ewt_quant_kinds[] = {IK_add,  IK_sub,   IK_max,   IK_min,   IK_neg,  IK_abs,
					   IK_relu, IK_cmpeq, IK_cmpneq, IK_cmplt, IK_cmplte};

static bool ewt_elems_ok(unsigned kind, const struct ew_row *row, const enum elem_kind *elems, unsigned nelems)
{
	for (unsigned i = 2; i < nelems; i++)
		if (elems[i] != elems[1])
			return false;
	if (elems[0] != (row->result == EW_RESULT_BOOL ? (unsigned)EK_BOOL : (unsigned)elems[1]))
		return false;
	if (ewt_of(elems[1]) == EWT_HALF)
		return ew_expr(row, EW_REAL, NULL);
	for (size_t i = 0; i < GLOW_ARRAY_SIZE(ewt_quant_kinds); i++)
		if (ewt_quant_kinds[i] == kind)
			return ew_expr(row, EW_INT, NULL);
	return false;
}

bool ocl_ew_elems_ok(unsigned kind, const enum elem_kind *elems, unsigned nelems)
{
	const struct ew_row *row = ew_row(kind);
	enum ew_col col;
	if (!row || row->family != EW_FAMILY_TABLE || nelems != 1u + row->nargs)
		return false;
	if (ewt_of(elems[1]) != EWT_NONE)
		return ewt_elems_ok(kind, row, elems, nelems);
	if (!ew_ctype(elems[1], &col))
		return false;
	for (unsigned i = 2; i < nelems; i++)
		if (elems[i] != elems[1])
			return false;
	if (elems[0] != (row->result == EW_RESULT_BOOL ? (unsigned)EK_BOOL : (unsigned)elems[1]))
		return false;
	return ew_expr(row, col, NULL);
}

bool ocl_sup_ew(const struct ir_instr *in)
{
	enum elem_kind e[3];
	if (in->nops > 3)
		return false;
	for (unsigned i = 0; i < in->nops; i++)
		e[i] = (enum elem_kind)in->ops[i].val->type->elem;
	if (!ocl_ew_elems_ok(in->kind, e, in->nops))
		return false;
	if (ewt_of(e[1]) != EWT_QUANT)
		return true;
	/* quantized: one type (scale and offset) for every operand and Dest */
	const struct type *t = in->ops[1].val->type;
	for (unsigned i = 0; i < in->nops; i++)
		if (in->ops[i].val->type->elem != EK_BOOL && !type_same_elem(in->ops[i].val->type, t))
			return false;
	return ocl_quant_type_ok(t);
}

/* The expression text src with every identifier that names one of row's
 * parameters replaced by in's value of it, to out. Not #defines of those
 * names: they are attribute names (Clip's min and max) that may also name
 * OpenCL C built-ins, which a #define and the #undef after the kernel
 * would take from the kernels after it. */
static void ew_subst_params(const struct ew_row *row, const struct ir_instr *in, const char *src, struct ostream *out)
{
	for (const char *p = src; *p;) {
		if (!isalpha((unsigned char)*p) && *p != '_') {
			os_printf(out, "%c", *p++);
			continue;
		}
		const char *q = p;
		while (isalnum((unsigned char)*q) || *q == '_')
			q++;
		unsigned i = 0;
		while (i < row->nparams && !(strlen(row->params[i].name) == (size_t)(q - p) &&
					     strncmp(row->params[i].name, p, (size_t)(q - p)) == 0))
			i++;
		if (i == row->nparams)
			os_printf(out, "%.*s", (int)(q - p), p);
		else if (row->params[i].kind == EW_PARAM_F && isnan(in->attrs[i].f))
			os_printf(out, "NAN");
		else if (row->params[i].kind == EW_PARAM_F && isinf(in->attrs[i].f))
			os_printf(out, "%sINFINITY", in->attrs[i].f < 0 ? "-" : "");
		else if (row->params[i].kind == EW_PARAM_F)
			os_printf(out, "((float)%.9g)", in->attrs[i].f);
		else
			os_printf(out, "(%" PRId64 "L)", in->attrs[i].i);
		p = q;
	}
}

/* The kind's expression in column col, its parameters' values written in,
 * as EXPR */
static void ew_define_expr(struct ocl_gen *g, const struct ew_row *row, const struct ir_instr *in, enum ew_col col)
{
	ocl_src_define(g, "IF_ATTR(p, a, b)", "((p) ? (a) : (b))");
	struct ostream e, x;
	ostream_mem(&e);
	ew_expr(row, col, &e);
	ostream_mem(&x);
	ew_subst_params(row, in, ostream_cstr(&e), &x);
	ocl_src_define(g, "EXPR", "(%s)", ostream_cstr(&x));
	ostream_abort(&x);
	ostream_abort(&e);
}

/* The "ewt" section on float16, bfloat16 or quantized operands (above) */
static void gen_ewt(struct ocl_gen *g, const struct ir_instr *in, const struct ew_row *row)
{
	const struct type *at = in->ops[1].val->type, *dt = in->ops[0].val->type;
	const bool quant = ewt_of(at->elem) == EWT_QUANT, pred = row->result == EW_RESULT_BOOL;
	if (!quant)
		ocl_types_helpers(g);
	struct ocl_launch *l = ocl_src_begin(g, in);
	uint64_t n = type_numel(dt);
	ocl_src_define(g, "N", "%" PRIu64 "UL", n);
	ocl_src_ptr(g, "PD", ocl_elem_ctype(dt->elem), in, 0);
	ocl_src_ptr(g, "PA", ocl_elem_ctype(at->elem), in, 1);
	if (row->nargs > 1)
		ocl_src_ptr(g, "PB", ocl_elem_ctype(at->elem), in, 2);
	ocl_src_define(g, "ET", "%s", quant ? "long" : "float");
	if (quant) {
		ocl_src_define(g, "T", "long");
		ocl_src_define(g, "int64_t", "long");
		ocl_src_define(g, "uint64_t", "ulong");
		ocl_src_define(g, "BITS", "%zu", 8 * elem_size(at->elem));
		ocl_src_define(g, "LD(x)", "((long)(x) - %" PRId32 "L)", at->offset);
	} else if (at->elem == EK_FLOAT16) {
		ocl_src_define(g, "LD(x)", "as_float(ocl_h2f((uint)(x)))");
	} else {
		ocl_src_define(g, "LD(x)", "as_float((uint)(x) << 16)");
	}
	if (pred) {
		ocl_src_define(g, "STORE(x)", "((uchar)((x) ? 1 : 0))");
	} else if (quant) {
		int64_t lo = at->elem == EK_QI8 ? -128 : at->elem == EK_QUI8 ? 0 : -32768;
		int64_t hi = at->elem == EK_QI8 ? 127 : at->elem == EK_QUI8 ? 255 : 32767;
		ocl_src_define(g, "STORE(x)", "((%s)clamp((long)(x) + %" PRId32 "L, %" PRId64 "L, %" PRId64 "L))",
			       ocl_elem_ctype(dt->elem), dt->offset, lo, hi);
	} else {
		ocl_src_define(g, "STORE(x)", "((ushort)%s(as_uint((float)(x))))",
			       dt->elem == EK_FLOAT16 ? "ocl_f2h" : "ocl_f2bf");
	}
	ew_define_expr(g, row, in, quant ? EW_INT : EW_REAL);
	ocl_src_section(g, "ewt");
	ocl_launch_1d(l, g->gpu ? 256 : 32, n);
}

void ocl_gen_ew(struct ocl_gen *g, const struct ir_instr *in, unsigned arg, bool relu)
{
	(void)arg;
	(void)relu;
	const struct ew_row *row = ew_row(in->kind);
	if (ewt_of(in->ops[1].val->type->elem) != EWT_NONE) {
		gen_ewt(g, in, row);
		return;
	}
	struct ocl_launch *l = ocl_src_begin(g, in);
	uint64_t n = type_numel(in->ops[0].val->type);
	bool pred = row->result == EW_RESULT_BOOL;
	enum ew_col col, dcol;
	const char *at = ew_ctype(in->ops[1].val->type->elem, &col);
	const char *dt = ew_ctype(in->ops[0].val->type->elem, &dcol);
	ocl_src_define(g, "N", "%" PRIu64 "UL", n);
	ocl_src_ptr(g, "PD", dt, in, 0);
	ocl_src_ptr(g, "PA", at, in, 1);
	if (row->nargs > 1)
		ocl_src_ptr(g, "PB", at, in, 2);
	ocl_src_define(g, "ET", "%s", col == EW_INT ? "long" : "float");
	if (col == EW_INT) {
		/* the Int column's names: int64_t arithmetic wrapped to Dest */
		ocl_src_define(g, "T", "long");
		ocl_src_define(g, "int64_t", "long");
		ocl_src_define(g, "uint64_t", "ulong");
		ocl_src_define(g, "BITS", "%zu", 8 * elem_size(in->ops[1].val->type->elem));
	}
	if (pred)
		ocl_src_define(g, "STORE(x)", "((uchar)((x) ? 1 : 0))");
	else
		ocl_src_define(g, "STORE(x)", "((%s)(x))", dt);
	ew_define_expr(g, row, in, col);
	ocl_src_section(g, "ew");
	ocl_launch_1d(l, g->gpu ? 256 : 32, n);
}

/* ---- the element kinds of the scatters' reductions (ocl_gen_index.c) ---- */

bool ocl_numeric_elem(unsigned k)
{
	enum ew_col col;
	return ew_ctype(k, &col) != NULL;
}
