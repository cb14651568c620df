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
#include "backends/interpreter/kern.h"
#include "backends/opencl/ocl.h"
#include "ir/ew.h"
#include "support/util.h"

#include <ctype.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
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

/* The kind's expression in column col, its parameters' values written
 * in, to out (IF_ATTR is the caller's #define) */
static void ew_write_expr(const struct ew_row *row, const struct ir_instr *in, enum ew_col col, struct ostream *out)
{
	struct ostream e;
	ostream_mem(&e);
	ew_expr(row, col, &e);
	ew_subst_params(row, in, ostream_cstr(&e), out);
	ostream_abort(&e);
}

/* The kind's expression in column col as EXPR */
static void ew_define_expr(struct ocl_gen *g, const struct ew_row *row, const struct ir_instr *in, enum ew_col col)
{
	ocl_src_define(g, "IF_ATTR(p, a, b)", "((p) ? (a) : (b))");
	struct ostream x;
	ostream_mem(&x);
	ew_write_expr(row, in, col, &x);
	ocl_src_define(g, "EXPR", "(%s)", ostream_cstr(&x));
	ostream_abort(&x);
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
		int64_t lo, hi;
		ocl_quant_range(at->elem, &lo, &hi);
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

/* ---- runs of elementwise instructions (oclr) ----
 *
 * A run of elementwise instructions of one element count, with only memory
 * bookkeeping (alloc, dealloc, tensorview) between them, is one kernel:
 * work-item i computes element i of every instruction in program order,
 * each result in a register of its destination's element type, and stores
 * at the end the last value of each place the run writes, except a place
 * whose buffer is deallocated before anything else reads it. Members:
 * splats, the table kinds on float, int32, int64, bool and index operands
 * (a comparison's result bool), selects, conversions and broadcasts
 * between those kinds. Each computes as its kernel alone does (ocl_gen_ew,
 * ocl_gen_select, ocl_gen_convert, ocl_gen_map: the same expression on
 * the same loaded types, the result converted to the destination's type
 * as that kernel stores it), so the results are the same bits. This is what the instructions one
 * after the other compute only when no work-item reads memory that another
 * writes: so an operand is either exactly a place the run writes (its
 * element i is work-item i's own; written before: read from the register)
 * or disjoint from every place the run writes, and every place written is
 * exactly or not at all another's; a broadcast's source, whose other
 * elements work-item i reads, is apart from every place the run writes.
 * Places are the memory plan's (region, offset, bytes) with the element
 * kind (a view of another kind at the same bytes is not the register's
 * value), so a buffer that reuses another's memory inside the run is that
 * place. DenseNet's batch normalizations
 * before each convolution (a scale and a shift by splats, then by
 * broadcast constants, and a relu: seven kernels) become one kernel each,
 * and the index arithmetic that GridSample, Resize and the window
 * functions lower to (compares, ands, selects, conversions between
 * float and integers) one kernel per stretch between its gathers: fewer
 * launches, one pass over memory, and a smaller program for the device
 * compiler. */

#define RUN_MAX 16
/* the most operand pointers (#defines) of one run's kernel: ocl_src.c
 * keeps 64 names per kernel, of which the run's own take 6 */
#define RUN_MAX_PTRS 56

struct run_place {
	unsigned region, elem;
	uint64_t off, bytes;
};

static bool place_eq(struct run_place a, struct run_place b)
{
	return a.region == b.region && a.off == b.off && a.bytes == b.bytes && a.elem == b.elem;
}

static bool place_apart(struct run_place a, struct run_place b)
{
	return a.region != b.region || a.off + a.bytes <= b.off || b.off + b.bytes <= a.off;
}

struct run {
	const struct ir_instr *mem[RUN_MAX]; /* the instructions, in order */
	unsigned n;
	struct run_place wr[RUN_MAX]; /* the places written */
	unsigned wlast[RUN_MAX];      /* the member that writes each last */
	unsigned nw;
	struct run_place rd[3 * RUN_MAX]; /* the places read from memory */
	const struct ir_instr *rd_in[3 * RUN_MAX];
	unsigned rd_op[3 * RUN_MAX];
	bool rd_any[3 * RUN_MAX]; /* read at other elements than i (a broadcast's source) */
	unsigned nr;
	/* per member and read operand (1 to 3): >= 0 the member whose
	 * register it reads, < 0 the memory read -1 - src */
	int src[RUN_MAX][3];
};

/* The register type of element kind k (ew_ctype's), NULL for the kinds
 * runs do not hold (float16, bfloat16, quantized, ...). */
static const char *run_ctype(unsigned k)
{
	enum ew_col col;
	return ew_ctype(k, &col);
}

/* Whether instruction `in` can be a member: a splat, a select or a
 * conversion on run_ctype kinds, or a table kind that ocl_gen_ew computes
 * on them (ocl_sup_ew without the float16, bfloat16 and quantized
 * forms). */
static bool run_kind_ok(const struct ir_instr *in)
{
	for (unsigned i = 0; i < in->nops; i++)
		if (!run_ctype(in->ops[i].val->type->elem))
			return false;
	if (in->kind == IK_splat)
		return true;
	if (in->kind == IK_broadcast) /* ocl_sup_map's rule (not called: ocl_gen_index.c uses this file) */
		return in->ops[1].val->type->elem == in->ops[0].val->type->elem;
	if (in->kind == IK_select)
		return ocl_sup_select(in);
	if (in->kind == IK_convertto)
		return ocl_sup_convert(in);
	/* (a kind ocl_ew_kind_ok admits has no row of its own: ocl_table_check) */
	return ocl_ew_kind_ok(in->kind) && in->nops <= 3 && ocl_sup_ew(in);
}

static struct run_place run_place_of(struct ocl_gen *g, const struct ir_instr *in, unsigned i)
{
	struct ocl_place p = ocl_operand_place(g, in, i);
	const struct type *t = in->ops[i].val->type;
	struct run_place r = {p.region, t->elem, p.offset, type_bytes(t)};
	return r;
}

/* Adds `in` to run r where the rules above allow; false (r unchanged)
 * where they do not. */
static bool run_add(struct ocl_gen *g, struct run *r, const struct ir_instr *in)
{
	if (r->n == RUN_MAX || !run_kind_ok(in) ||
	    (r->n && type_numel(in->ops[0].val->type) != type_numel(r->mem[0]->ops[0].val->type)))
		return false;
	struct run t = *r;
	unsigned k = t.n;
	if (in->kind == IK_broadcast) {
		/* work-item i reads other elements of the source: it must be
		 * apart from every place the run writes, before and after */
		struct run_place p = run_place_of(g, in, 1);
		for (unsigned w = 0; w < t.nw; w++)
			if (!place_apart(t.wr[w], p))
				return false;
		t.rd[t.nr] = p;
		t.rd_in[t.nr] = in;
		t.rd_op[t.nr] = 1;
		t.rd_any[t.nr] = true;
		t.src[k][0] = -1 - (int)t.nr++;
	}
	for (unsigned i = 1; i < in->nops && in->kind != IK_broadcast; i++) {
		struct run_place p = run_place_of(g, in, i);
		unsigned w = 0;
		while (w < t.nw && !place_eq(t.wr[w], p))
			w++;
		if (w < t.nw) {
			t.src[k][i - 1] = (int)t.wlast[w];
			continue;
		}
		for (w = 0; w < t.nw; w++)
			if (!place_apart(t.wr[w], p))
				return false;
		unsigned m = 0;
		while (m < t.nr && (t.rd_any[m] || !place_eq(t.rd[m], p)))
			m++;
		if (m == t.nr) {
			t.rd[m] = p;
			t.rd_in[m] = in;
			t.rd_op[m] = i;
			t.nr++;
		}
		t.src[k][i - 1] = -1 - (int)m;
	}
	struct run_place d = run_place_of(g, in, 0);
	unsigned w = t.nw;
	for (unsigned j = 0; j < t.nw; j++) {
		if (place_eq(t.wr[j], d))
			w = j;
		else if (!place_apart(t.wr[j], d))
			return false;
	}
	for (unsigned m = 0; m < t.nr; m++)
		if ((t.rd_any[m] || !place_eq(t.rd[m], d)) && !place_apart(t.rd[m], d))
			return false;
	if (w == t.nw)
		t.wr[t.nw++] = d;
	if (t.nw + t.nr > RUN_MAX_PTRS)
		return false;
	t.wlast[w] = k;
	t.mem[t.n++] = in;
	*r = t;
	return true;
}

/* Whether the last value of write place w must be stored: its buffer is
 * a weight, or something other than a member's register read mentions it
 * before its dealloc. */
static bool run_store_needed(struct ocl_gen *g, const struct run *r, unsigned w)
{
	const struct ir_instr *last = r->mem[r->n - 1], *wi = r->mem[r->wlast[w]];
	struct ir_value *root = ir_value_root(wi->ops[0].val, NULL);
	if (ir_as_weight(root))
		return true;
	bool inside = wi != last;
	for (const struct ir_instr *q = wi->next; q; q = q->next) {
		if (q->kind == IK_dealloc && ir_value_root(q->ops[0].val, NULL) == root)
			return false;
		if (instr_is_block(q->kind))
			return true;
		bool member = false;
		for (unsigned k = 0; inside && k < r->n; k++)
			member |= r->mem[k] == q;
		for (unsigned i = 0; i < q->nops; i++) {
			if (ir_value_root(q->ops[i].val, NULL) != root)
				continue;
			if (member && i > 0 && place_eq(run_place_of(g, q, i), r->wr[w]))
				continue; /* its register */
			return true;
		}
		if (q == last)
			inside = false;
	}
	return true;
}

/* Member k's operand i (1 to 3) as a value of OpenCL C type ct named nm,
 * from its register or memory. */
static void run_operand(struct ostream *o, const struct run *r, unsigned k, unsigned i, const char *ct, const char *nm)
{
	int s = r->src[k][i - 1];
	if (s >= 0)
		os_printf(o, "\t\tconst %s %s = v%d;\n", ct, nm, s);
	else
		os_printf(o, "\t\tconst %s %s = PR%d[i];\n", ct, nm, -1 - s);
}

/* Member k's statements: its register v<k>, computed as its own kernel
 * computes the element. */
static void run_member(struct ostream *o, const struct run *r, unsigned k, bool *bits_defined)
{
	const struct ir_instr *in = r->mem[k];
	const struct type *dt = in->ops[0].val->type;
	const char *dc = run_ctype(dt->elem);
	if (in->kind == IK_splat) {
		uint64_t bits = 0; /* as ocl_gen_splat stores it: the element in the low bytes */
		st_f(dt, &bits, 0, ir_float(in, AN_value));
		switch (elem_size(dt->elem)) {
		case 1: os_printf(o, "\tconst %s v%u = (uchar)%" PRIu64 "u;\n", dc, k, bits); break;
		case 4: os_printf(o, "\tconst %s v%u = as_%s((uint)%" PRIu64 "u);\n", dc, k, dc, bits); break;
		default: os_printf(o, "\tconst %s v%u = as_%s((ulong)%" PRIu64 "UL);\n", dc, k, dc, bits); break;
		}
		return;
	}
	os_printf(o, "\t%s v%u;\n\t{\n", dc, k);
	if (in->kind == IK_broadcast) { /* ocl_gen_map's: source dimension k is dimension axis + k, repeated where 1 */
		const struct type *st = in->ops[1].val->type;
		unsigned axis = (unsigned)ir_int(in, AN_axis);
		os_puts(o, "\t\tsize_t t = i;\n");
		for (unsigned d = dt->rank; d-- > 0;) {
			os_printf(o, "\t\tconst size_t c%u = t %% %" PRIu64 "UL;\n", d, dt->dims[d]);
			os_printf(o, "\t\tt /= %" PRIu64 "UL;\n", dt->dims[d]);
		}
		os_printf(o, "\t\t(void)t;\n\t\tv%u = PR%d[0", k, -1 - r->src[k][0]);
		uint64_t stride = 1;
		for (unsigned j = st->rank; j-- > 0;) {
			if (st->dims[j] != 1)
				os_printf(o, " + c%u * %" PRIu64 "UL", axis + j, stride);
			stride *= st->dims[j];
		}
		os_puts(o, "];\n\t}\n");
		return;
	}
	if (in->kind == IK_select) { /* ocl_gen_select: the element moved as it is */
		run_operand(o, r, k, 1, "uchar", "C");
		run_operand(o, r, k, 2, dc, "L");
		run_operand(o, r, k, 3, dc, "R");
		os_printf(o, "\t\tv%u = C ? L : R;\n\t}\n", k);
		return;
	}
	if (in->kind == IK_convertto) { /* ocl_gen_convert: CONV(x) on the source element */
		run_operand(o, r, k, 1, run_ctype(in->ops[1].val->type->elem), "x");
		struct ostream e;
		ostream_mem(&e);
		ocl_convert_expr(&e, dt, in->ops[1].val->type, (int)ir_int(in, AN_saturate), (int)ir_int(in, AN_round_mode));
		os_printf(o, "\t\tv%u = %s;\n\t}\n", k, ostream_cstr(&e));
		ostream_abort(&e);
		return;
	}
	/* ocl_gen_ew: ET A, B loaded; STORE(EXPR) to the destination */
	const struct ew_row *row = ew_row(in->kind);
	enum ew_col col;
	unsigned ak = in->ops[1].val->type->elem;
	ew_ctype(ak, &col);
	const char *et = col == EW_INT ? "long" : "float";
	for (unsigned i = 1; i < in->nops; i++)
		run_operand(o, r, k, i, et, i == 1 ? "A" : "B");
	if (col == EW_INT) {
		if (*bits_defined)
			os_puts(o, "#undef BITS\n");
		os_printf(o, "#define BITS %zu\n", 8 * elem_size(ak));
		*bits_defined = true;
	}
	if (row->result == EW_RESULT_BOOL)
		os_printf(o, "\t\tv%u = (uchar)((", k);
	else
		os_printf(o, "\t\tv%u = (%s)(", k, dc);
	ew_write_expr(row, in, col, o);
	os_puts(o, row->result == EW_RESULT_BOOL ? ") ? 1 : 0);\n\t}\n" : ");\n\t}\n");
}

const struct ir_instr *ocl_gen_ew_run(struct ocl_gen *g, const struct ir_instr *first)
{
	struct run r;
	memset(&r, 0, sizeof r);
	if (!run_add(g, &r, first))
		return NULL;
	for (const struct ir_instr *q = first->next; q; q = q->next) {
		if (q->kind == IK_alloc || q->kind == IK_dealloc || q->kind == IK_tensorview)
			continue;
		if (!run_add(g, &r, q))
			break;
	}
	if (r.n < 2)
		return NULL;
	bool ints = false;
	for (unsigned k = 0; k < r.n; k++) {
		const struct ir_instr *in = r.mem[k];
		if (in->kind == IK_convertto) { /* the "types" helpers go before the kernel */
			struct ostream e;
			ostream_mem(&e);
			ocl_convert_expr(&e, in->ops[0].val->type, in->ops[1].val->type, (int)ir_int(in, AN_saturate),
					 (int)ir_int(in, AN_round_mode));
			if (strstr(ostream_cstr(&e), "ocl_"))
				ocl_types_helpers(g);
			ostream_abort(&e);
		} else if (in->kind != IK_splat && in->kind != IK_select && in->kind != IK_broadcast) {
			enum ew_col col;
			ew_ctype(in->ops[1].val->type->elem, &col);
			ints |= col == EW_INT;
		}
	}
	struct ocl_launch *l = ocl_src_begin(g, first);
	for (unsigned k = 1; k < r.n; k++) {
		os_puts(&g->src, "/* ");
		ir_instr_print(&g->src, r.mem[k]);
		os_puts(&g->src, " */\n");
	}
	uint64_t n = type_numel(first->ops[0].val->type);
	ocl_src_define(g, "N", "%" PRIu64 "UL", n);
	ocl_src_define(g, "IF_ATTR(p, a, b)", "((p) ? (a) : (b))");
	if (ints) { /* the Int column's names: int64_t arithmetic wrapped to Dest */
		ocl_src_define(g, "T", "long");
		ocl_src_define(g, "int64_t", "long");
		ocl_src_define(g, "uint64_t", "ulong");
	}
	bool store[RUN_MAX];
	char name[16];
	for (unsigned w = 0; w < r.nw; w++) {
		store[w] = run_store_needed(g, &r, w);
		snprintf(name, sizeof name, "PW%u", w);
		if (store[w])
			ocl_src_ptr(g, name, run_ctype(r.wr[w].elem), r.mem[r.wlast[w]], 0);
	}
	for (unsigned m = 0; m < r.nr; m++) {
		snprintf(name, sizeof name, "PR%u", m);
		ocl_src_ptr(g, name, run_ctype(r.rd[m].elem), r.rd_in[m], r.rd_op[m]);
	}
	struct ostream *o = &g->src;
	os_printf(o, "/* %u elementwise instructions in one pass (ocl_gen_ew.c, runs) */\n"
		     "__kernel void KNAME(ARGS)\n{\n\tconst size_t i = get_global_id(0);\n\tif (i >= N)\n\t\treturn;\n",
		  r.n);
	bool bits = false;
	for (unsigned k = 0; k < r.n; k++)
		run_member(o, &r, k, &bits);
	for (unsigned w = 0; w < r.nw; w++)
		if (store[w])
			os_printf(o, "\tPW%u[i] = v%u;\n", w, r.wlast[w]);
	os_puts(o, "}\n");
	if (bits)
		os_puts(o, "#undef BITS\n");
	ocl_src_end(g);
	ocl_launch_1d(l, g->gpu ? 256 : 32, n);
	return r.mem[r.n - 1];
}
