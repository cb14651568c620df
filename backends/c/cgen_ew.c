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
 * Semantics follow the interpreter (backends/interpreter/k_ew.c) on float,
 * int32, int64 and bool tensors: Max and Min propagate NaN, Round is half
 * to even, integer arithmetic wraps, conversions to integers truncate and
 * saturate.
 */
#include "backends/c/cgen.h"
#include "support/util.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAXG 8

/* float, integer (int32/int64/index), bool, quantized, float16/bfloat16 */
enum { T_F, T_I, T_B, T_Q, T_H, T_NONE };

static int tclass(const struct ir_value *v)
{
	switch ((enum elem_kind)v->type->elem) {
	case EK_FLOAT: return T_F;
	case EK_I32: case EK_INDEX32: case EK_I64: case EK_INDEX64: return T_I;
	case EK_BOOL: return T_B;
	case EK_QI8: case EK_QUI8: case EK_QI16: case EK_QI32: return T_Q;
	case EK_FLOAT16: case EK_BFLOAT16: return T_H;
	default: return T_NONE;
	}
}

/* the C type elements are stored in */
static const char *stype(unsigned elem)
{
	switch ((enum elem_kind)elem) {
	case EK_QI8: return "int8_t";
	case EK_QUI8: return "uint8_t";
	case EK_QI16: return "int16_t";
	case EK_QI32: return "int32_t";
	case EK_FLOAT16: case EK_BFLOAT16: return "uint16_t";
	default: return cg_ctype(elem);
	}
}

/* The real value of expression a of element type t, as a double
 * expression. */
static void real_of(const struct type *t, const char *a, char *buf, size_t n)
{
	char f1[40], f2[40];
	switch ((enum elem_kind)t->elem) {
	case EK_FLOAT16: snprintf(buf, n, "(double)cb_h2f(%s)", a); break;
	case EK_BFLOAT16: snprintf(buf, n, "(double)cb_bf2f(%s)", a); break;
	case EK_BOOL: snprintf(buf, n, "(double)(%s != 0)", a); break;
	case EK_QI8: case EK_QUI8: case EK_QI16: case EK_QI32:
		snprintf(buf, n, "(%s * ((double)%s - %s))", cg_flit(f1, t->scale), a, cg_flit(f2, t->offset));
		/* doubles from float literals: scale and offset are floats */
		break;
	default: snprintf(buf, n, "(double)%s", a); break;
	}
}

/* The stored element of type t for the real double expression v (float16
 * and bfloat16 round to nearest even, quantized kinds quantize and
 * saturate, integers truncate and saturate, bool is v != 0). */
static void store_of(const struct type *t, const char *v, char *buf, size_t n)
{
	char f1[40], f2[40];
	switch ((enum elem_kind)t->elem) {
	case EK_FLOAT: snprintf(buf, n, "(float)%s", v); break;
	case EK_FLOAT16: snprintf(buf, n, "cb_f2h((float)%s)", v); break;
	case EK_BFLOAT16: snprintf(buf, n, "cb_f2bf((float)%s)", v); break;
	case EK_BOOL: snprintf(buf, n, "(uint8_t)(%s != 0)", v); break;
	case EK_I32: case EK_INDEX32: snprintf(buf, n, "cb_f2i32(%s)", v); break;
	case EK_I64: case EK_INDEX64: snprintf(buf, n, "cb_f2i64(%s)", v); break;
	case EK_QI8: case EK_QUI8: case EK_QI16: case EK_QI32: {
		static const char *const lim[] = {"-128.0, 127.0", "0.0, 255.0", "-32768.0, 32767.0",
						  "-2147483648.0, 2147483647.0"};
		int li = t->elem == EK_QI8 ? 0 : t->elem == EK_QUI8 ? 1 : t->elem == EK_QI16 ? 2 : 3;
		snprintf(buf, n, "(%s)cb_quant(%s / %s, %s, %s)", stype(t->elem), v, cg_flit(f1, t->scale),
			 cg_flit(f2, t->offset), lim[li]);
		break;
	}
	default: unreachable("no storage for this element kind");
	}
}

/* The float expression of a unary or binary kind on float operand
 * expressions a and b. */
static bool expr_f(const struct ir_instr *in, const char *a, const char *b, char *buf, size_t n)
{
	char f1[40], f2[40];
	switch (in->kind) {
	case IK_add: snprintf(buf, n, "(%s + %s)", a, b); return true;
	case IK_sub: case IK_regression: snprintf(buf, n, "(%s - %s)", a, b); return true;
	case IK_mul: snprintf(buf, n, "(%s * %s)", a, b); return true;
	case IK_div: snprintf(buf, n, "(%s / %s)", a, b); return true;
	case IK_max: snprintf(buf, n, "(%s != %s || %s != %s ? NAN : %s > %s ? %s : %s)", a, a, b, b, a, b, a, b); return true;
	case IK_min: snprintf(buf, n, "(%s != %s || %s != %s ? NAN : %s < %s ? %s : %s)", a, a, b, b, a, b, a, b); return true;
	case IK_pow: snprintf(buf, n, "powf(%s, %s)", a, b); return true;
	case IK_fmod: snprintf(buf, n, "fmodf(%s, %s)", a, b); return true;
	case IK_prelu: snprintf(buf, n, "(%s >= 0.0f ? %s : %s * %s)", a, a, a, b); return true;
	case IK_neg: snprintf(buf, n, "(-%s)", a); return true;
	case IK_abs: snprintf(buf, n, "fabsf(%s)", a); return true;
	case IK_exp: snprintf(buf, n, "expf(%s)", a); return true;
	case IK_log: snprintf(buf, n, "logf(%s)", a); return true;
	case IK_sqrt: snprintf(buf, n, "sqrtf(%s)", a); return true;
	case IK_rsqrt: snprintf(buf, n, "(1.0f / sqrtf(%s))", a); return true;
	case IK_reciprocal: snprintf(buf, n, "(1.0f / %s)", a); return true;
	case IK_floor: snprintf(buf, n, "floorf(%s)", a); return true;
	case IK_ceil: snprintf(buf, n, "ceilf(%s)", a); return true;
	case IK_round: snprintf(buf, n, "nearbyintf(%s)", a); return true;
	case IK_sign: snprintf(buf, n, "(%s > 0.0f ? 1.0f : %s < 0.0f ? -1.0f : %s)", a, a, a); return true;
	case IK_sin: snprintf(buf, n, "sinf(%s)", a); return true;
	case IK_cos: snprintf(buf, n, "cosf(%s)", a); return true;
	case IK_erf: snprintf(buf, n, "erff(%s)", a); return true;
	case IK_tan: snprintf(buf, n, "tanf(%s)", a); return true;
	case IK_asin: snprintf(buf, n, "asinf(%s)", a); return true;
	case IK_acos: snprintf(buf, n, "acosf(%s)", a); return true;
	case IK_atan: snprintf(buf, n, "atanf(%s)", a); return true;
	case IK_sinh: snprintf(buf, n, "sinhf(%s)", a); return true;
	case IK_cosh: snprintf(buf, n, "coshf(%s)", a); return true;
	case IK_asinh: snprintf(buf, n, "asinhf(%s)", a); return true;
	case IK_acosh: snprintf(buf, n, "acoshf(%s)", a); return true;
	case IK_atanh: snprintf(buf, n, "atanhf(%s)", a); return true;
	case IK_mod: snprintf(buf, n, "cb_fmodf_floor(%s, %s)", a, b); return true;
	case IK_relu: snprintf(buf, n, "(%s > 0.0f ? %s : 0.0f)", a, a); return true;
	case IK_leakyrelu: snprintf(buf, n, "(%s >= 0.0f ? %s : %s * %s)", a, a, cg_flit(f1, ir_float(in, "alpha")), a); return true;
	case IK_sigmoid: snprintf(buf, n, "cb_sigmoid(%s)", a); return true;
	case IK_tanh: snprintf(buf, n, "tanhf(%s)", a); return true;
	case IK_clip:
		cg_flit(f1, ir_float(in, "min"));
		cg_flit(f2, ir_float(in, "max"));
		snprintf(buf, n, "(%s < %s ? %s : %s > %s ? %s : %s)", a, f1, f1, a, f2, f2, a);
		return true;
	case IK_gelu:
		if (ir_int(in, "approximate") == 0)
			snprintf(buf, n, "(0.5f * %s * (1.0f + erff(%s * 0.70710678f)))", a, a);
		else
			snprintf(buf, n, "(0.5f * %s * (1.0f + tanhf(0.79788456f * (%s + 0.044715f * %s * %s * %s))))", a,
				 a, a, a, a);
		return true;
	case IK_hardswish:
		snprintf(buf, n, "(%s * fminf(fmaxf(%s + 3.0f, 0.0f), 6.0f) / 6.0f)", a, a);
		return true;
	case IK_swish: snprintf(buf, n, "(%s * cb_sigmoid(%s))", a, a); return true;
	case IK_softplus:
		snprintf(buf, n, "(%s > 0.0f ? %s + log1pf(expf(-%s)) : log1pf(expf(%s)))", a, a, a, a);
		return true;
	case IK_elu: snprintf(buf, n, "(%s > 0.0f ? %s : %s * (expf(%s) - 1.0f))", a, a, cg_flit(f1, ir_float(in, "alpha")), a); return true;
	default: return false;
	}
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
			snprintf(buf, n, "%s", cg_flit(f, ir_float(in, "value")));
		else if (t == T_I || t == T_B)
			snprintf(buf, n, "(%s)%.17g", ct, ir_float(in, "value"));
		else
			return false;
		return true;
	}
	const char *a = x[1], *b = in->nops > 2 ? x[2] : "", *c = in->nops > 3 ? x[3] : "";
	char f1[40], f2[40], r[256];
	if (t == T_NONE || s == T_NONE)
		return false;
	switch (in->kind) {
	case IK_convertto: case IK_quantize: case IK_dequantize: case IK_rescalequantized:
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
		store_of(in->ops[0].val->type, r, buf, n);
		return true;
	default:
		break;
	}
	if (in->kind == IK_select && tclass(in->ops[1].val) == T_B) {
		/* stored elements are copied as they are, any kind */
		snprintf(buf, n, "(%s ? %s : %s)", a, b, c);
		return true;
	}
	if (t == T_Q || t == T_H || s == T_Q || s == T_H) {
		/* on real values: load, compute in float, store (requantize) */
		char ra[256], rb[256], fa[300], fb[300], res[1024];
		real_of(in->ops[1].val->type, a, ra, sizeof ra);
		snprintf(fa, sizeof fa, "(float)%s", ra);
		if (in->nops > 2) {
			real_of(in->ops[2].val->type, b, rb, sizeof rb);
			snprintf(fb, sizeof fb, "(float)%s", rb);
		} else {
			fb[0] = 0;
		}
		switch (in->kind) {
		case IK_cmpeq: snprintf(buf, n, "(uint8_t)(%s == %s)", fa, fb); return true;
		case IK_cmpneq: snprintf(buf, n, "(uint8_t)(%s != %s)", fa, fb); return true;
		case IK_cmplt: snprintf(buf, n, "(uint8_t)(%s < %s)", fa, fb); return true;
		case IK_cmplte: snprintf(buf, n, "(uint8_t)(%s <= %s)", fa, fb); return true;
		case IK_isnan: snprintf(buf, n, "(uint8_t)(%s != %s)", fa, fa); return true;
		default: break;
		}
		if (t != T_Q && t != T_H && t != T_F)
			return false;
		if (!expr_f(in, fa, fb, res, sizeof res))
			return false;
		char dres[1100];
		snprintf(dres, sizeof dres, "(double)%s", res);
		store_of(in->ops[0].val->type, dres, buf, n);
		return true;
	}
	if (in->kind == IK_sgd) {
		if (t != T_F)
			return false;
		char f3[40], f4[40];
		snprintf(buf, n, "(float)((double)%s - %s * ((double)%s / %s + %s * (%s > 0 ? 1.0 : %s < 0 ? -1.0 : 0.0) + %s * (double)%s))",
			 b, cg_flit(f1, ir_float(in, "learning_rate")), a, cg_flit(f2, (double)ir_int(in, "batch_size")),
			 cg_flit(f3, ir_float(in, "l1_decay")), b, b, cg_flit(f4, ir_float(in, "l2_decay")), b);
		return true;
	}
	if (in->kind == IK_select) {
		if (tclass(in->ops[1].val) != T_B)
			return false;
		snprintf(buf, n, "(%s ? %s : %s)", a, b, c);
		return true;
	}
	switch (in->kind) {
	case IK_cmpeq: snprintf(buf, n, "(uint8_t)(%s == %s)", a, b); return true;
	case IK_cmpneq: snprintf(buf, n, "(uint8_t)(%s != %s)", a, b); return true;
	case IK_cmplt: snprintf(buf, n, "(uint8_t)(%s < %s)", a, b); return s != T_B;
	case IK_cmplte: snprintf(buf, n, "(uint8_t)(%s <= %s)", a, b); return s != T_B;
	case IK_isnan: snprintf(buf, n, "(uint8_t)(%s != %s)", a, a); return s == T_F;
	case IK_isinf:
		snprintf(buf, n, "(uint8_t)(isinf(%s) && (%s > 0 ? %d : %d))", a, a, (int)ir_int(in, "detect_positive"),
			 (int)ir_int(in, "detect_negative"));
		return s == T_F;
	default: break;
	}
	if (t == T_B) {
		switch (in->kind) {
		case IK_and: snprintf(buf, n, "(uint8_t)(%s && %s)", a, b); return true;
		case IK_or: snprintf(buf, n, "(uint8_t)(%s || %s)", a, b); return true;
		case IK_xor: snprintf(buf, n, "(uint8_t)((%s != 0) != (%s != 0))", a, b); return true;
		case IK_not: snprintf(buf, n, "(uint8_t)!%s", a); return true;
		default: return false;
		}
	}
	if (t == T_I) {
		switch (in->kind) {
		case IK_add: snprintf(buf, n, "(%s)((uint64_t)%s + (uint64_t)%s)", ct, a, b); return true;
		case IK_sub: snprintf(buf, n, "(%s)((uint64_t)%s - (uint64_t)%s)", ct, a, b); return true;
		case IK_mul: snprintf(buf, n, "(%s)((uint64_t)%s * (uint64_t)%s)", ct, a, b); return true;
		case IK_max: snprintf(buf, n, "(%s > %s ? %s : %s)", a, b, a, b); return true;
		case IK_min: snprintf(buf, n, "(%s < %s ? %s : %s)", a, b, a, b); return true;
		case IK_neg: snprintf(buf, n, "(%s)(0 - (uint64_t)%s)", ct, a); return true;
		case IK_relu: snprintf(buf, n, "(%s > 0 ? %s : 0)", a, a); return true;
		case IK_sign: snprintf(buf, n, "(%s)(%s > 0 ? 1 : %s < 0 ? -1 : 0)", ct, a, a); return true;
		case IK_abs: snprintf(buf, n, "(%s)(%s < 0 ? 0 - (uint64_t)%s : (uint64_t)%s)", ct, a, a, a); return true;
		case IK_div:
			snprintf(buf, n, "(%s)(%s == 0 ? 0 : %s == -1 ? (int64_t)(0 - (uint64_t)%s) : %s / %s)", ct, b, b, a, a, b);
			return true;
		case IK_fmod: snprintf(buf, n, "(%s)(%s == 0 || %s == -1 ? 0 : %s %% %s)", ct, b, b, a, b); return true;
		case IK_mod: snprintf(buf, n, "(%s)cb_imod(%s, %s)", ct, a, b); return true;
		case IK_bitshift:
			snprintf(buf, n, "(%s)cb_shift((uint64_t)%s, %s, %d, %d)", ct, a, b,
				 (int)elem_size((enum elem_kind)in->ops[1].val->type->elem) * 8, ir_int(in, "direction") == 0);
			return true;
		case IK_pow: snprintf(buf, n, "(%s)cb_ipow(%s, %s)", ct, a, b); return true;
		case IK_prelu: snprintf(buf, n, "(%s)(%s >= 0 ? (uint64_t)%s : (uint64_t)%s * (uint64_t)%s)", ct, a, a, a, b); return true;
		default: return false;
		}
	}
	return expr_f(in, a, b, buf, n);
}

bool cg_ew_supported(const struct ir_instr *in)
{
	if ((!(instr_desc(in->kind)->flags & IF_EW) && in->kind != IK_splat) || in->kind == IK_copy)
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
	struct ostream *o = g->body;
	os_printf(o, "\t{ /* %s", instr_kind_name(first->kind));
	for (unsigned k = 1; k < n; k++)
		os_printf(o, ", %s", instr_kind_name(run[k]->kind));
	os_puts(o, " */\n");
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
	if (period)
		os_printf(o, "\t\tfor (size_t o = 0; o < %" PRIu64 "u; o++)\n"
			     "\t\tfor (size_t c = 0; c < %" PRIu64 "u; c++) {\n"
			     "\t\t\tconst size_t i = o * %" PRIu64 "u + c;\n",
			  numel / period, period, period);
	else
		os_printf(o, "\t\tfor (size_t i = 0; i < %" PRIu64 "u; i++) {\n", numel);
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
	os_puts(o, "\t\t}\n\t}\n");
}
