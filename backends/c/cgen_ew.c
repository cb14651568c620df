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
#include <string.h>

#define MAXG 8

enum { T_F, T_I, T_B, T_NONE }; /* float, integer (int32/int64/index), bool */

static int tclass(const struct ir_value *v)
{
	switch ((enum elem_kind)v->type->elem) {
	case EK_FLOAT: return T_F;
	case EK_I32: case EK_INDEX32: case EK_I64: case EK_INDEX64: return T_I;
	case EK_BOOL: return T_B;
	default: return T_NONE;
	}
}

/* Writes the C expression of in's result from operand expressions x[1..]
 * into buf; returns false if the kind is not compiled on these types. */
static bool expr(const struct ir_instr *in, const char *const *x, char *buf, size_t n)
{
	int t = tclass(in->ops[0].val), s = in->nops > 1 ? tclass(in->ops[1].val) : T_NONE;
	const char *ct = cg_ctype(in->ops[0].val->type->elem);
	const char *a = x[1], *b = in->nops > 2 ? x[2] : "", *c = in->nops > 3 ? x[3] : "";
	char f1[40], f2[40];
	if (t == T_NONE || s == T_NONE)
		return false;
	if (in->kind == IK_convertto) {
		const char *st = cg_ctype(in->ops[1].val->type->elem);
		bool i64 = in->ops[0].val->type->elem == EK_I64 || in->ops[0].val->type->elem == EK_INDEX64;
		if (t == T_B)
			snprintf(buf, n, "(uint8_t)(%s != 0)", a);
		else if (t == T_I && s == T_F)
			snprintf(buf, n, "(%s)cb_f2i%s((double)%s)", ct, i64 ? "64" : "32", a);
		else
			snprintf(buf, n, "(%s)(%s)%s", ct, st, a);
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
		default: return false;
		}
	}
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

bool cg_ew_supported(const struct ir_instr *in)
{
	if (!(instr_desc(in->kind)->flags & IF_EW) || in->kind == IK_copy || in->kind == IK_sgd)
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
	/* pointers: p<k>_<i> for operand i of run[k] */
	for (unsigned k = 0; k < n; k++)
		for (unsigned i = 0; i < run[k]->nops; i++) {
			char p[96];
			struct ir_value *v = run[k]->ops[i].val;
			const char *ct = cg_ctype(v->type->elem);
			os_printf(o, "\t\t%s%s *p%u_%u = %s;\n", i == 0 ? "" : "const ", ct, k, i, cg_ptr(g, v, ct, p, sizeof p));
		}
	for (unsigned k = 0; k < n; k++)
		for (unsigned i = 0; i < run[k]->nops; i++)
			os_printf(o, "\t\t(void)p%u_%u;\n", k, i);
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
				snprintf(xs[i], sizeof xs[i], "p%u_%u[i]", k, i);
			x[i] = xs[i];
		}
		x[0] = "";
		char e[1024];
		if (!expr(in, x, e, sizeof e))
			unreachable("elementwise kind checked before");
		const char *ct = cg_ctype(in->ops[0].val->type->elem);
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
