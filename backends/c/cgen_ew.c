/* cgen_ew.c - elementwise instructions as fused loops.
 *
 * A run of elementwise instructions of one element count, each reading a
 * result of an earlier one, becomes one loop: element i of every
 * instruction is computed in program order, results pass in registers, and
 * a result is stored only if something after the run reads it (or it is a
 * weight). This is only equivalent to running the instructions one after
 * the other when no instruction reads, at another index, memory the run
 * writes: so every operand of a fused instruction is either exactly a
 * written buffer of the run or disjoint from all of them.
 *
 * The semantics are lib/ir/EW.def's, the interpreter's: a row's Real
 * expression in float (float16, bfloat16 and quantized operands as float
 * real values, the result stored back), its Int expression on int32,
 * int64, index and bool; select and the conversions (EW_SPECIAL) are
 * written here: conversions to integers truncate and saturate.
 */
#include "backends/c/cgen.h"
#include "ir/ew.h"
#include "support/util.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAXG 8

/* float, integer (int32/int64/index), bool, quantized, float16/bfloat16
 * (and the storage-only float8 and 4-bit kinds, which only conversions
 * and select reach: real values through support/scalar.h) */
enum { T_F, T_I, T_B, T_Q, T_H, T_NONE };

static int tclass(const struct ir_value *v)
{
	switch ((enum elem_kind)v->type->elem) {
	case EK_FLOAT: return T_F;
	case EK_I32: case EK_INDEX32: case EK_I64: case EK_INDEX64: return T_I;
	case EK_BOOL: return T_B;
	case EK_QI8: case EK_QUI8: case EK_QI16: case EK_QI32: return T_Q;
	case EK_FLOAT16: case EK_BFLOAT16: return T_H;
	case EK_F8E4M3FN: case EK_F8E4M3FNUZ: case EK_F8E5M2: case EK_F8E5M2FNUZ: case EK_I4: case EK_U4: return T_H;
	case EK_F4E2M1: case EK_F8E8M0: return T_H;
	default: return T_NONE;
	}
}

/* the C type elements are stored in */
static const char *stype(unsigned elem)
{
	switch ((enum elem_kind)elem) {
	case EK_QI8: case EK_I4: return "int8_t";
	case EK_QUI8: case EK_U4: return "uint8_t";
	case EK_F8E4M3FN: case EK_F8E4M3FNUZ: case EK_F8E5M2: case EK_F8E5M2FNUZ: return "uint8_t";
	case EK_F4E2M1: case EK_F8E8M0: return "uint8_t";
	case EK_QI16: return "int16_t";
	case EK_QI32: return "int32_t";
	case EK_FLOAT16: case EK_BFLOAT16: return "uint16_t";
	default: return cg_ctype(elem);
	}
}

/* How a stored element of each kind and its real value as a double convert
 * into each other, as C text PRE x POST around the expression x; the
 * quantized kinds, whose scale and offset are the type's, are written out
 * in real_of and store_of. */
static const struct {
	const char *real[2];  /* double from the stored x */
	const char *store[2]; /* stored from the double x */
} elem_conv[EK_COUNT] = {
	[EK_FLOAT] = {{"(double)", ""}, {"(float)", ""}},
	[EK_FLOAT16] = {{"(double)sc_h2f(", ")"}, {"sc_f2h((float)", ")"}},
	[EK_BFLOAT16] = {{"(double)sc_bf2f(", ")"}, {"sc_f2bf((float)", ")"}},
	[EK_BOOL] = {{"(double)(", " != 0)"}, {"(uint8_t)(", " != 0)"}},
	[EK_I32] = {{"(double)", ""}, {"cb_f2i32(", ")"}},
	[EK_INDEX32] = {{"(double)", ""}, {"cb_f2i32(", ")"}},
	[EK_I64] = {{"(double)", ""}, {"sc_f2i64(", ")"}},
	[EK_INDEX64] = {{"(double)", ""}, {"sc_f2i64(", ")"}},
	/* float8 (support/scalar.h: SC_F8_* is the kinds' order), saturating */
	[EK_F8E4M3FN] = {{"(double)sc_f82f(", ", 0)"}, {"sc_f2f8((float)", ", 0, 1)"}},
	[EK_F8E4M3FNUZ] = {{"(double)sc_f82f(", ", 1)"}, {"sc_f2f8((float)", ", 1, 1)"}},
	[EK_F8E5M2] = {{"(double)sc_f82f(", ", 2)"}, {"sc_f2f8((float)", ", 2, 1)"}},
	[EK_F8E5M2FNUZ] = {{"(double)sc_f82f(", ", 3)"}, {"sc_f2f8((float)", ", 3, 1)"}},
	[EK_I4] = {{"(double)", ""}, {"sc_f2i4(", ", 1)"}},
	[EK_U4] = {{"(double)", ""}, {"(uint8_t)sc_f2i4(", ", 0)"}},
	/* float8e8m0 saturating and rounding up, ONNX's Cast defaults */
	[EK_F4E2M1] = {{"(double)sc_f42f(", ")"}, {"sc_f2f4((float)", ")"}},
	[EK_F8E8M0] = {{"(double)sc_e8m02f(", ")"}, {"sc_f2e8m0((float)", ", 1, SC_E8M0_UP)"}},
};

/* The real value of expression a of element type t, as a double
 * expression. */
static void real_of(const struct type *t, const char *a, char *buf, size_t n)
{
	char f1[40], f2[40];
	/* quantized: doubles from float literals (scale and offset are floats) */
	if (elem_is_quantized((enum elem_kind)t->elem))
		snprintf(buf, n, "(%s * ((double)%s - %s))", cg_flit(f1, t->scale), a, cg_flit(f2, t->offset));
	else
		snprintf(buf, n, "%s%s%s", elem_conv[t->elem].real[0], a, elem_conv[t->elem].real[1]);
}

/* The stored element of type t for the real double expression v (float16
 * and bfloat16 round to nearest even, quantized kinds quantize and
 * saturate, integers truncate and saturate, bool is v != 0). */
static void store_of(const struct type *t, const char *v, char *buf, size_t n)
{
	char f1[40], f2[40];
	if (elem_is_quantized((enum elem_kind)t->elem)) {
		static const char *const lim[] = {"-128.0, 127.0", "0.0, 255.0", "-32768.0, 32767.0",
						  "-2147483648.0, 2147483647.0"};
		int li = t->elem == EK_QI8 ? 0 : t->elem == EK_QUI8 ? 1 : t->elem == EK_QI16 ? 2 : 3;
		snprintf(buf, n, "(%s)cb_quant(%s / %s, %s, %s)", stype(t->elem), v, cg_flit(f1, t->scale),
			 cg_flit(f2, t->offset), lim[li]);
		return;
	}
	if (!elem_conv[t->elem].store[0])
		unreachable("no storage for this element kind");
	snprintf(buf, n, "%s%s%s", elem_conv[t->elem].store[0], v, elem_conv[t->elem].store[1]);
}

/* ---- EW.def's expressions as bundle text ---- */

/* What the names of one row's expression stand for in one instruction. */
struct ew_text {
	const struct ir_instr *in;
	const struct ew_row *row;
	enum ew_col col;
	const char *a, *b; /* the operands' expressions */
	const char *t;     /* Dest's C type */
	char *buf;
	size_t n, len;
	bool ok;
};

static void put(struct ew_text *e, const char *s, size_t len)
{
	if (e->len + len >= e->n) {
		e->ok = false;
		return;
	}
	memcpy(e->buf + e->len, s, len);
	e->len += len;
	e->buf[e->len] = 0;
}

/* the shortest double literal that reads back as v */
static const char *dlit(char *buf, double v)
{
	if (v != v) {
		snprintf(buf, 40, "NAN");
		return buf;
	}
	if (isinf(v)) {
		snprintf(buf, 40, "%sINFINITY", v < 0 ? "-" : "");
		return buf;
	}
	for (int prec = 1; prec <= 17; prec++) {
		snprintf(buf, 40, "%.*g", prec, v);
		if (strtod(buf, NULL) == v)
			break;
	}
	if (!strpbrk(buf, ".e")) /* a double, not an int */
		strcat(buf, ".0");
	return buf;
}

/* Parameter i's value: an integer, a float literal in Real columns (the
 * bundle computes in float), a double literal in Int columns (it computes
 * as the interpreter does). */
static void put_param(struct ew_text *e, unsigned i)
{
	char lit[48];
	const union attr_val *v = &e->in->attrs[i];
	if (e->row->params[i].kind == EW_PARAM_I)
		snprintf(lit, sizeof lit, "%" PRId64, v->i);
	else if (e->col == EW_REAL)
		cg_flit(lit, v->f);
	else
		dlit(lit, v->f);
	/* "x - -1.0f", not "x --1.0f" */
	if (lit[0] == '-' && e->len && (e->buf[e->len - 1] == '-' || e->buf[e->len - 1] == '+'))
		put(e, " ", 1);
	put(e, lit, strlen(lit));
}

static int param_of(const struct ew_text *e, const struct ew_tok *t)
{
	for (unsigned i = 0; i < e->row->nparams; i++)
		if (ew_tok_is(t, e->row->params[i].name))
			return (int)i;
	return -1;
}

/* The end of the macro argument starting at s: the next ',' or ')' outside
 * parentheses. */
static const char *arg_end(const char *s, const char *end)
{
	int depth = 0;
	for (; s < end; s++) {
		if (*s == '(')
			depth++;
		else if (*s == ')' && depth-- == 0)
			return s;
		else if (*s == ',' && depth == 0)
			return s;
	}
	return end;
}

/* Writes expression text [s, end) with its names replaced (ew.h: the table
 * was checked at start-up, so every name is known here). Spacing between
 * tokens is kept, so the bundle reads like the table. */
static void put_expr(struct ew_text *e, const char *s, const char *end)
{
	struct ew_tok t, p;
	const char *gap = s;
	while (ew_next_tok(&s, end, &t)) {
		put(e, gap, (size_t)(t.s - gap));
		if (t.kind != EW_TOK_IDENT) {
			put(e, t.s, t.len);
		} else if (ew_tok_is(&t, "A")) {
			put(e, e->a, strlen(e->a));
		} else if (ew_tok_is(&t, "B")) {
			put(e, e->b, strlen(e->b));
		} else if (ew_tok_is(&t, "T")) {
			put(e, e->t, strlen(e->t));
		} else if (ew_tok_is(&t, "BITS")) {
			char w[16];
			snprintf(w, sizeof w, "%u", (unsigned)elem_size((enum elem_kind)e->in->ops[1].val->type->elem) * 8);
			put(e, w, strlen(w));
		} else if (ew_tok_is(&t, "K")) { /* K(number): float in Real columns */
			ew_next_tok(&s, end, &p);
			ew_next_tok(&s, end, &p);
			put(e, p.s, p.len);
			if (e->col == EW_REAL)
				put(e, "f", 1);
			ew_next_tok(&s, end, &p);
		} else if (ew_tok_is(&t, "IF_ATTR")) { /* IF_ATTR(p, e1, e0): the chosen text only */
			ew_next_tok(&s, end, &p);
			ew_next_tok(&s, end, &p);
			int i = param_of(e, &p);
			ew_next_tok(&s, end, &p); /* , */
			const char *e1 = s, *e1end = arg_end(e1, end), *e0 = e1end + 1, *e0end = arg_end(e0, end);
			while (*e0 == ' ')
				e0++;
			while (*e1 == ' ')
				e1++;
			if (e->in->attrs[i].i)
				put_expr(e, e1, e1end);
			else
				put_expr(e, e0, e0end);
			s = e0end + 1;
		} else if (param_of(e, &t) >= 0) {
			put_param(e, (unsigned)param_of(e, &t));
		} else {
			const char *after = s;
			const char *fn = ew_next_tok(&after, end, &p) && *p.s == '(' ? ew_fn_spelling(t.s, t.len, e->col) : NULL;
			if (fn)
				put(e, fn, strlen(fn));
			else
				put(e, t.s, t.len);
		}
		gap = s;
	}
}

/* Column col of in's row on operand expressions a and b, after `prefix`,
 * into buf; false if the row has no such column. */
static bool row_text(const struct ir_instr *in, const struct ew_row *row, enum ew_col col, const char *prefix,
		     const char *a, const char *b, char *buf, size_t n)
{
	const char *x = row->expr[col];
	if (!x)
		return false;
	struct ew_text e = {in, row, col, a, b, cg_ctype(in->ops[0].val->type->elem), buf, n, 0, true};
	buf[0] = 0;
	put(&e, prefix, strlen(prefix));
	put_expr(&e, x, x + strlen(x));
	return e.ok;
}

/* A kind of EW.def's table: the Real column on float values (float16,
 * bfloat16 and quantized operands widened to float, the result stored
 * back), the Int column on integers and bool. */
static bool expr_row(const struct ir_instr *in, const struct ew_row *row, const char *a, const char *b, char *buf,
		     size_t n)
{
	int t = tclass(in->ops[0].val), s = tclass(in->ops[1].val);
	bool pred = row->result == EW_RESULT_BOOL;
	if (t == T_Q || t == T_H || s == T_Q || s == T_H) {
		char ra[256], rb[256], fa[300], fb[300], res[1024];
		real_of(in->ops[1].val->type, a, ra, sizeof ra);
		snprintf(fa, sizeof fa, "(float)%s", ra);
		if (row->nargs > 1) {
			real_of(in->ops[2].val->type, b, rb, sizeof rb);
			snprintf(fb, sizeof fb, "(float)%s", rb);
		} else {
			fb[0] = 0;
		}
		if (pred)
			return row_text(in, row, EW_REAL, "(uint8_t)", fa, fb, buf, n);
		if (t != T_Q && t != T_H && t != T_F)
			return false;
		if (!row_text(in, row, EW_REAL, "(double)", fa, fb, res, sizeof res))
			return false;
		store_of(in->ops[0].val->type, res, buf, n);
		return true;
	}
	if (pred)
		return row_text(in, row, s == T_F ? EW_REAL : EW_INT, "(uint8_t)", a, b, buf, n);
	if (t == T_F)
		return row_text(in, row, EW_REAL, "", a, b, buf, n);
	if (t == T_I)
		return row_text(in, row, EW_INT, "", a, b, buf, n);
	return false;
}

/* Writes the C expression of in's result from operand expressions x[1..]
 * into buf; returns false if the kind is not compiled on these types. */
static bool expr(const struct ir_instr *in, const char *const *x, char *buf, size_t n)
{
	int t = tclass(in->ops[0].val), s = in->nops > 1 ? tclass(in->ops[1].val) : T_NONE;
	const char *ct = cg_ctype(in->ops[0].val->type->elem);
	if (in->kind == IK_splat) {
		char f[40];
		if (t == T_F)
			snprintf(buf, n, "%s", cg_flit(f, ir_float(in, AN_value)));
		else if (t == T_I || t == T_B)
			snprintf(buf, n, "(%s)%.17g", ct, ir_float(in, AN_value));
		else
			return false;
		return true;
	}
	const struct ew_row *row = ew_row(in->kind);
	const char *a = x[1], *b = in->nops > 2 ? x[2] : "", *c = in->nops > 3 ? x[3] : "";
	char r[256];
	if (!row || t == T_NONE || s == T_NONE)
		return false;
	switch ((enum ew_family)row->family) {
	case EW_FAMILY_TABLE: return expr_row(in, row, a, b, buf, n);
	case EW_FAMILY_copy: return false; /* a memmove (cg_emit_instr) */
	case EW_FAMILY_select:
		/* stored elements are copied as they are, any kind */
		if (tclass(in->ops[1].val) != T_B)
			return false;
		snprintf(buf, n, "(%s ? %s : %s)", a, b, c);
		return true;
	case EW_FAMILY_convert:
		if ((t == T_I || t == T_B) && (s == T_I || s == T_B)) { /* exact */
			if (t == T_B)
				snprintf(buf, n, "(uint8_t)(%s != 0)", a);
			else
				snprintf(buf, n, "(%s)%s", ct, a);
			return true;
		}
		if (t == T_F && s == T_F) {
			snprintf(buf, n, "%s", a);
			return true;
		}
		real_of(in->ops[1].val->type, a, r, sizeof r);
		if (in->kind == IK_convertto && !ir_int(in, AN_saturate) && elem_is_f8((enum elem_kind)in->ops[0].val->type->elem)) {
			/* ONNX's Cast saturate = 0: overflow to infinity or NaN */
			snprintf(buf, n, "sc_f2f8((float)%s, %d, 0)", r,
				 elem_f8_format((enum elem_kind)in->ops[0].val->type->elem));
			return true;
		}
		if (in->kind == IK_convertto && in->ops[0].val->type->elem == EK_F8E8M0) {
			snprintf(buf, n, "sc_f2e8m0((float)%s, %d, %d)", r, (int)ir_int(in, AN_saturate),
				 (int)ir_int(in, AN_round_mode));
			return true;
		}
		store_of(in->ops[0].val->type, r, buf, n);
		return true;
	}
	return false;
}

bool cg_ew_supported(const struct ir_instr *in)
{
	if (in->kind != IK_splat && !ew_row(in->kind))
		return false;
	for (unsigned i = 0; i < in->nops; i++)
		if (tclass(in->ops[i].val) == T_NONE)
			return false;
	const char *x[IR_MAX_OPS] = {"v", "v", "v", "v", "v", "v", "v", "v"};
	char buf[512];
	return expr(in, x, buf, sizeof buf);
}

/* Whether adding `nx` to the run keeps per-element order equivalent. */
static bool fits(struct cg *g, struct ir_instr **run, unsigned n, struct ir_instr *nx)
{
	bool chained = false;
	for (unsigned k = 0; k < n; k++) {
		struct ir_value *w = run[k]->ops[0].val;
		for (unsigned i = 0; i < nx->nops; i++) {
			struct ir_value *v = nx->ops[i].val;
			if (cg_same(g, v, w)) {
				chained |= i > 0;
				continue;
			}
			if (cg_overlap(g, v, w))
				return false;
		}
		/* what nx writes against everything the run touched */
		for (unsigned i = 0; i < run[k]->nops; i++) {
			struct ir_value *v = run[k]->ops[i].val;
			if (!cg_same(g, nx->ops[0].val, v) && cg_overlap(g, nx->ops[0].val, v))
				return false;
		}
	}
	return chained;
}

/* If v is a whole constant float weight whose elements repeat with the
 * period of its last dimension (a per-channel vector broadcast to a whole
 * tensor), the blob offset of one period; else -1. */
static int64_t periodic_row(struct cg *g, struct ir_value *v)
{
	struct ir_weight *w = ir_as_weight(v);
	const struct type *t = v->type;
	if (!w || !w->is_const || t->elem != EK_FLOAT || t->rank < 2 || t->dims[t->rank - 1] < 2 ||
	    type_numel(t) == t->dims[t->rank - 1])
		return -1;
	void *s = ptrmap_get(&g->periodic, w);
	if (s)
		return (uint64_t)(uintptr_t)s >> 63 ? -1 : (int64_t)((uintptr_t)s - 1);
	int64_t r = -1;
	float *p = (float *)cg_weight_data(g, w);
	if (p) {
		uint64_t c = t->dims[t->rank - 1], n = type_numel(t), i = c;
		while (i < n && memcmp(&p[i], &p[i % c], sizeof(float)) == 0)
			i++;
		if (i == n)
			r = (int64_t)cg_blob_add(g, p, (size_t)c * sizeof(float));
	}
	free(p);
	u64map_put(&g->periodic, (uint64_t)(uintptr_t)w,
		   (void *)(uintptr_t)(r < 0 ? (uint64_t)1 << 63 : (uint64_t)r + 1));
	return r;
}

void cg_emit_ew(struct cg *g, struct ir_instr *first)
{
	struct ir_instr *run[MAXG];
	unsigned n = 0;
	uint64_t numel = type_numel(first->ops[0].val->type);
	run[n++] = first;
	for (struct ir_instr *nx = cg_next_real(first); nx && n < MAXG; nx = cg_next_real(nx)) {
		if (!cg_ew_supported(nx) || type_numel(nx->ops[0].val->type) != numel || !fits(g, run, n, nx))
			break;
		run[n++] = nx;
	}
	/* the loop is a function of its own, ewN(regions, part, scratch),
	 * over part of the elements (whole periods), called through cb_par:
	 * parts write disjoint elements, each computed as in one loop */
	unsigned id = g->uniq++;
	struct ostream fn;
	ostream_mem(&fn);
	struct ostream *o = &fn;
	os_printf(o, "/* %s", instr_kind_name(first->kind));
	for (unsigned k = 1; k < n; k++)
		os_printf(o, ", %s", instr_kind_name(run[k]->kind));
	os_printf(o, " */\nstatic void ew%u(const void *ctx, int part, float *scratch)\n{\n"
		     "\tconst struct cb_regions *R = ctx;\n\tconst uint8_t *C = R->C;\n\tuint8_t *W = R->W, *A = R->A;\n"
		     "\t(void)scratch;\n\t(void)C;\n\t(void)W;\n\t(void)A;\n\t{\n",
		  id);
	/* pointers: p<k>_<i> for operand i of run[k]; a constant repeating
	 * per channel points at one period, read with the channel index */
	bool per[MAXG][IR_MAX_OPS] = {{false}};
	uint64_t period = 0;
	for (unsigned k = 0; k < n; k++)
		for (unsigned i = 0; i < run[k]->nops; i++) {
			char p[96];
			struct ir_value *v = run[k]->ops[i].val;
			const char *ct = stype(v->type->elem);
			int64_t row = i ? periodic_row(g, v) : -1;
			uint64_t c = v->type->dims[v->type->rank ? v->type->rank - 1 : 0];
			if (row >= 0 && (!period || period == c)) {
				period = c;
				per[k][i] = true;
				os_printf(o, "\t\tconst float *p%u_%u = (const float *)(C + %" PRId64 ");\n", k, i, row);
				continue;
			}
			os_printf(o, "\t\t%s%s *p%u_%u = %s;\n", i == 0 ? "" : "const ", ct, k, i, cg_ptr(g, v, ct, p, sizeof p));
		}
	for (unsigned k = 0; k < n; k++)
		for (unsigned i = 0; i < run[k]->nops; i++)
			os_printf(o, "\t\t(void)p%u_%u;\n", k, i);
	const uint64_t units = period ? numel / period : numel;
	os_printf(o, "\t\tconst size_t lo = cb_par_first(part, R->nparts, %" PRIu64 "u), "
		     "hi = cb_par_first(part + 1, R->nparts, %" PRIu64 "u);\n",
		  units, units);
	if (period)
		os_printf(o, "\t\tfor (size_t o = lo; o < hi; o++)\n"
			     "\t\tfor (size_t c = 0; c < %" PRIu64 "u; c++) {\n"
			     "\t\t\tconst size_t i = o * %" PRIu64 "u + c;\n",
			  period, period);
	else
		os_printf(o, "\t\tfor (size_t i = lo; i < hi; i++) {\n");
	for (unsigned k = 0; k < n; k++) {
		struct ir_instr *in = run[k];
		char xs[IR_MAX_OPS][32];
		const char *x[IR_MAX_OPS];
		for (unsigned i = 1; i < in->nops; i++) {
			int from = -1;
			for (unsigned j = 0; j < k; j++)
				if (cg_same(g, in->ops[i].val, run[j]->ops[0].val))
					from = (int)j;
			if (from >= 0)
				snprintf(xs[i], sizeof xs[i], "v%d", from);
			else
				snprintf(xs[i], sizeof xs[i], "p%u_%u[%s]", k, i, per[k][i] ? "c" : "i");
			x[i] = xs[i];
		}
		x[0] = "";
		char e[1024];
		if (!expr(in, x, e, sizeof e))
			unreachable("elementwise kind checked before");
		const char *ct = stype(in->ops[0].val->type->elem);
		os_printf(o, "\t\t\tconst %s v%u = %s;\n", ct, k, e);
		bool store = cg_read_later(g, run[n - 1], in->ops[0].val);
		for (unsigned j = k + 1; j < n && store; j++)
			if (cg_same(g, run[j]->ops[0].val, in->ops[0].val))
				store = false;
		if (k == n - 1)
			store = true;
		if (store)
			os_printf(o, "\t\t\tp%u_0[i] = v%u;\n", k, k);
		if (k)
			u64map_put(&g->fused, (uint64_t)(uintptr_t)in, in);
	}
	os_puts(o, "\t\t}\n\t}\n}\n\n");
	os_puts(g->decls, ostream_cstr(&fn));
	ostream_abort(&fn);
	/* work: the elements times the instructions of the run */
	os_printf(g->body,
		  "\t{\n\t\tstruct cb_regions R = {C, W, A, cb_par_parts(%" PRIu64 ".0, %" PRIu64 "u)};\n"
		  "\t\tcb_par(ew%u, &R, R.nparts, 0);\n\t}\n",
		  numel * n, units, id);
}
