/* cgen_quant_ew.c - the emitters of quantized pooling and of the
 * elementwise kinds with integer arithmetic of their own (the QEMIT rows
 * of Emitters.def that cgen_quant.c does not take): add, sub, max, min
 * and mul, relu and clip, sigmoid and tanh, max, average and adaptive
 * average pooling. The multipliers, bounds and tables are computed here
 * with the interpreter's formulas (backends/interpreter/k_quant.c); the
 * kernels are kernels/cb_qmisc.c's.
 */
#include "backends/c/cgen.h"
#include "backends/c/cgen_ops.h"
#include "backends/c/cgen_quant.h"
#include "quant/quant.h"
#include "support/util.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* fraction bits of the common units of add, sub, max, min, relu, clip
 * (the interpreter's QK_FRAC) */
#define CQ_FRAC 16

/* "{kind, offset, mult, shift}" of an operand of type t brought to the
 * result's units by ratio, into buf (a struct cb_qopnd literal) */
static const char *cq_opnd(const struct type *t, double ratio, char *buf, size_t n)
{
	int64_t m = 0, s = 0;
	if (ratio > 0)
		cq_mult(ratio, &m, &s);
	snprintf(buf, n, "(struct cb_qopnd){%d, %" PRId64 ", %" PRId64 ", %" PRId64 "}", cq_kind(t), (int64_t)t->offset,
		 m, s);
	return buf;
}

/* "{kind, offset, lo, hi}" of the result type t (a struct cb_qres literal) */
static const char *cq_res(const struct type *t, char *buf, size_t n)
{
	int64_t lo, hi;
	cq_limits(t, &lo, &hi);
	snprintf(buf, n, "(struct cb_qres){%d, %" PRId64 ", %" PRId64 ", %" PRId64 "}", cq_kind(t), (int64_t)t->offset,
		 lo, hi);
	return buf;
}

static double cq_sigmoid(double x) { return 1.0 / (1.0 + exp(-x)); }

/* The bounds of clip (relu: [0, INT64_MAX]) in units of 2^-CQ_FRAC of the
 * result's scale, rounded half to even as the interpreter rounds them. */
static void cq_clamp_bounds(const struct ir_instr *in, const struct type *dt, int64_t *cl, int64_t *ch)
{
	*cl = 0, *ch = INT64_MAX;
	if (in->kind != IK_clip)
		return;
	double one = (double)(1 << CQ_FRAC) / dt->scale;
	double l = nearbyint(ir_float(in, AN_min) * one), h = nearbyint(ir_float(in, AN_max) * one);
	*cl = l < -9.0e18 ? INT64_MIN : (int64_t)l;
	*ch = h > 9.0e18 ? INT64_MAX : (int64_t)h;
}

/* The stored result of unary kind in (relu, clip, sigmoid, tanh,
 * rescalequantized) for the stored input q, by the interpreter's formula. */
static int64_t cq_unary_value(const struct ir_instr *in, int64_t q)
{
	const struct type *dt = in->ops[0].val->type, *at = in->ops[1].val->type;
	int64_t lo, hi;
	cq_limits(dt, &lo, &hi);
	double v;
	if (in->kind == IK_relu || in->kind == IK_clip) {
		int64_t m, s, cl, ch;
		cq_mult((double)at->scale / dt->scale * (double)(1 << CQ_FRAC), &m, &s);
		cq_clamp_bounds(in, dt, &cl, &ch);
		int64_t a = quant_requant(q - at->offset, (int32_t)m, (int)s);
		a = a < cl ? cl : a > ch ? ch : a;
		int64_t r = quant_rshift(a, CQ_FRAC) + dt->offset;
		return r < lo ? lo : r > hi ? hi : r;
	}
	double x = (double)at->scale * ((double)q - at->offset);
	if (in->kind == IK_rescalequantized)
		v = nearbyint(x / dt->scale);
	else
		v = nearbyint((in->kind == IK_tanh ? tanh(x) : cq_sigmoid(x)) / dt->scale);
	if (v != v)
		v = 0;
	v += dt->offset;
	return v <= (double)lo ? lo : v >= (double)hi ? hi : (int64_t)v;
}

/* Whether in is a unary kind a byte table computes: 8-bit quantized
 * input and result (relu, clip, sigmoid, tanh, rescalequantized). */
static bool cq_byte_unary(const struct ir_instr *in)
{
	if (in->kind != IK_relu && in->kind != IK_clip && in->kind != IK_sigmoid && in->kind != IK_tanh &&
	    in->kind != IK_rescalequantized)
		return false;
	int dk = cq_kind(in->ops[0].val->type), ak = cq_kind(in->ops[1].val->type);
	return (dk == 0 || dk == 1) && (ak == 0 || ak == 1);
}

/* The stored value of byte b of an 8-bit type t. */
static int64_t cq_byte_value(const struct type *t, int b) { return t->elem == EK_QI8 && b > 127 ? b - 256 : b; }

/* Writes the byte table t (uint8_t[256]) to the declarations; returns its
 * number ("tqN"). */
static unsigned cq_emit_bytes(struct cg *g, const uint8_t *t)
{
	unsigned id = g->uniq++;
	os_printf(g->decls, "static const uint8_t tq%u[256] = {", id);
	for (int b = 0; b < 256; b++)
		os_printf(g->decls, "%s%u", b ? ", " : "", (unsigned)t[b]);
	os_printf(g->decls, "};\n");
	return id;
}

/* t[b] = the stored byte unary kind in (cq_byte_unary) makes of the
 * stored byte t[b] (starting from the identity, a chain composes). */
static void cq_apply_unary(const struct ir_instr *in, uint8_t *t)
{
	const struct type *at = in->ops[1].val->type;
	for (int b = 0; b < 256; b++)
		t[b] = (uint8_t)(int8_t)cq_unary_value(in, cq_byte_value(at, t[b]));
}

/* Emits the table of the fine units (2^-16 of the result's scale) of an
 * 8-bit operand of type t of add, sub, max or min with result type dt, by
 * stored byte; returns its number ("tbN"). */
static unsigned cq_fine_table(struct cg *g, const struct type *t, const struct type *dt)
{
	int64_t m, s, v[256];
	cq_mult((double)t->scale / dt->scale * (double)(1 << CQ_FRAC), &m, &s);
	for (int b = 0; b < 256; b++)
		v[b] = quant_requant(cq_byte_value(t, b) - t->offset, (int32_t)m, (int)s);
	return cg_i64_table(g, v, 256);
}

/* bits of a fine-unit multiplier below its high part (CB_QFT) */
#define CQ_FT 9

/* The parameters of the 32-bit fine units of an 8-bit operand of type t
 * of add, sub, max or min with result type dt (cb_q_fine16: zero point,
 * mh, ml, half, shift - CQ_FT) into f, when they give every stored
 * byte's value of cq_fine_table (checked here, byte by byte) within
 * +-2^29, so that two of them join in int32; false otherwise. */
static bool cq_fine32(const struct type *t, const struct type *dt, int64_t f[5])
{
	int64_t m, s;
	cq_mult((double)t->scale / dt->scale * (double)(1 << CQ_FRAC), &m, &s);
	if (s < CQ_FT || s > 30)
		return false;
	int64_t mh = m >> CQ_FT, ml = m & ((1 << CQ_FT) - 1), half = (int64_t)1 << (s - 1);
	for (int b = 0; b < 256; b++) {
		int64_t d = cq_byte_value(t, b) - t->offset, want = quant_requant(d, (int32_t)m, (int)s);
		int64_t x = d * mh, y = d * ml + half - (d < 0);
		if (x < INT32_MIN || x > INT32_MAX || y < INT32_MIN || y > INT32_MAX || want < -(1 << 29) ||
		    want > (1 << 29))
			return false;
		int64_t sum = x + (y >> CQ_FT);
		if (sum < INT32_MIN || sum > INT32_MAX || sum >> (s - CQ_FT) != want)
			return false;
	}
	f[0] = t->offset, f[1] = mh, f[2] = ml, f[3] = half, f[4] = s - CQ_FT;
	return true;
}

/* Whether in is add, sub, max or min of 8-bit quantized operands. */
static bool cq_byte_binary(const struct ir_instr *in)
{
	if (in->kind != IK_add && in->kind != IK_sub && in->kind != IK_max && in->kind != IK_min)
		return false;
	for (unsigned i = 0; i < 3; i++) {
		int k = cq_kind(in->ops[i].val->type);
		if (k != 0 && k != 1)
			return false;
	}
	return true;
}

/* the operator code of a cq_byte_binary kind (CB_QADD ...) */
static int cq_binary_op(const struct ir_instr *in)
{
	return in->kind == IK_add ? CQ_ADD : in->kind == IK_sub ? CQ_SUB : in->kind == IK_max ? CQ_MAX : CQ_MIN;
}

/* the most instructions fused after one (an elementwise binary kind and
 * byte-table unary kinds) */
#define CQ_CHAIN_MAX 16

/* Instructions fused after in, built tentatively: val[0] is in's result,
 * val[i + 1] the result of ins[i]. Only an intermediate result is never
 * written; the kernel writes the chain's last one. */
struct cq_chain {
	struct ir_instr *in;
	bool ew;               /* in is elementwise: the same bytes as an operand are fine */
	struct ir_value *res;  /* the fused binary kind's other operand, or NULL */
	struct ir_instr *ins[CQ_CHAIN_MAX];
	struct ir_value *val[CQ_CHAIN_MAX + 1];
	int n;
	int how; /* cq_chain_ok's answer for the n kept */
};

/* cq_chain_ok's answers */
enum { CQ_NO, CQ_DIRECT, CQ_VIA_D };

/* How the first k instructions of chain c may be fused: CQ_DIRECT, the
 * result of the k-th written in place of them all: it overlaps no operand
 * of c->in (nor the fused operand res unless it is res), and no
 * intermediate result is read after them unless it is exactly the last
 * result (whose bytes then hold what a later reader expects); CQ_VIA_D,
 * when the last result overlaps an operand of the product c->in (a memory
 * plan may put it over the product's input, dead after it): the kernel
 * writes the product's own result instead, copied to the last result
 * after it, provided nothing reads that result later and the two do
 * not overlap; else CQ_NO. */
static int cq_chain_ok(struct cg *g, const struct cq_chain *c, int k)
{
	struct ir_value *fin = c->val[k];
	bool clash = false;
	for (unsigned i = 1; i < c->in->nops; i++)
		clash |= !(c->ew && cg_same(g, fin, c->in->ops[i].val)) && cg_overlap(g, fin, c->in->ops[i].val);
	for (int i = 1; i < k; i++)
		if (!cg_same(g, c->val[i], fin) && cg_read_later(g, c->ins[k - 1], c->val[i]))
			return CQ_NO;
	if (!clash) {
		if (c->res && !cg_same(g, fin, c->res) && cg_overlap(g, fin, c->res))
			return CQ_NO;
		return cg_same(g, c->val[0], fin) || !cg_read_later(g, c->ins[k - 1], c->val[0]) ? CQ_DIRECT : CQ_NO;
	}
	return !c->ew && !cg_overlap(g, c->val[0], fin) && !cg_read_later(g, c->ins[k - 1], c->val[0]) ? CQ_VIA_D
													  : CQ_NO;
}

/* Extends chain c (of at most have instructions so far, c->n of them
 * kept) by the byte-table unary kinds from nx on, each reading the
 * previous result, composing their table into tab (the identity at the
 * start); keeps the longest safe prefix (cq_chain_ok): c->n and the
 * composed table of that prefix in tab. Whether any table kind was kept. */
static bool cq_chain_tables(struct cg *g, struct cq_chain *c, struct ir_instr *nx, uint8_t tab[256])
{
	uint8_t cur[256];
	memcpy(cur, tab, 256);
	int have = c->n, kept = c->n;
	while (nx && have < CQ_CHAIN_MAX && cq_byte_unary(nx) && cg_same(g, nx->ops[1].val, c->val[have])) {
		cq_apply_unary(nx, cur);
		c->ins[have] = nx;
		c->val[++have] = nx->ops[0].val;
		int how = cq_chain_ok(g, c, have);
		if (how != CQ_NO) {
			kept = have;
			c->how = how;
			memcpy(tab, cur, 256);
		}
		nx = cg_next_real(nx);
	}
	bool any = kept > c->n;
	c->n = kept;
	return any;
}

/* Marks chain c's kept instructions fused. */
static void cq_chain_mark(struct cg *g, const struct cq_chain *c)
{
	for (int i = 0; i < c->n; i++)
		u64map_put(&g->fused, (uint64_t)(uintptr_t)c->ins[i], c->ins[i]);
}

/* The byte table tab as the kernels' argument ("tqN", 32 bytes) when
 * any is fused, else "0". */
static void cq_table_arg(struct cg *g, bool any, const uint8_t tab[256], char *tq)
{
	if (any)
		snprintf(tq, 32, "tq%u", cq_emit_bytes(g, tab));
	else
		snprintf(tq, 32, "0");
}

/* Whether byte table tab over the stored bytes of 8-bit type t is a
 * clamp: every stored value v to itself clamped to [a, b] (the table's
 * values at the ends of t's range); then narrows [*lo, *hi] to [a, b]. A
 * kernel then clamps instead of looking the table up (a Relu of the
 * product's own type). */
static bool cq_table_clamp(const struct type *t, const uint8_t tab[256], int64_t *lo, int64_t *hi)
{
	int64_t tlo, thi;
	cq_limits(t, &tlo, &thi);
	int64_t a = cq_byte_value(t, tab[(uint8_t)tlo]), b = cq_byte_value(t, tab[(uint8_t)thi]);
	if (a > b)
		return false;
	for (int64_t v = tlo; v <= thi; v++)
		if (tab[(uint8_t)v] != (uint8_t)(v < a ? a : v > b ? b : v))
			return false;
	*lo = a > *lo ? a : *lo;
	*hi = b < *hi ? b : *hi;
	return true;
}

/* cgen_quant.h */
const char *cq_fuse_post(struct cg *g, struct ir_instr *in, struct ir_value **dst, struct ir_value **copy_to,
			 struct ir_instr **last, struct ir_value **res, int64_t *plo, int64_t *phi, char *buf, size_t n)
{
	struct ir_value *d = in->ops[0].val;
	struct cq_chain c = {.in = in, .val = {d}};
	struct ir_instr *nx = cg_next_real(in);
	int op = -1, left = 0;
	uint8_t tab[256];
	for (int b = 0; b < 256; b++)
		tab[b] = (uint8_t)b;
	/* the binary kind reads the product's result and another operand
	 * that the product does not overwrite */
	if (nx && cq_byte_binary(nx) && cq_kind(d->type) <= 1) {
		bool l = cg_same(g, nx->ops[1].val, d), r = cg_same(g, nx->ops[2].val, d);
		struct ir_value *other = l ? nx->ops[2].val : nx->ops[1].val;
		if (l != r && !cg_overlap(g, other, d)) {
			c.res = other;
			c.ins[0] = nx;
			c.val[1] = nx->ops[0].val;
			c.n = 1;
			c.how = cq_chain_ok(g, &c, 1);
			/* its result may be an intermediate of a longer chain */
			cq_chain_tables(g, &c, cg_next_real(nx), tab);
			if (c.how == CQ_NO)
				c.n = 0, c.res = NULL;
			if (c.n > 0)
				op = cq_binary_op(nx), left = l;
		}
	}
	bool have_tab = op >= 0 ? c.n > 1 : cq_chain_tables(g, &c, nx, tab);
	*dst = c.how == CQ_VIA_D ? d : c.val[c.n];
	*copy_to = c.how == CQ_VIA_D ? c.val[c.n] : NULL;
	*last = c.n > 0 ? c.ins[c.n - 1] : in;
	*res = c.n > 0 ? c.res : NULL;
	if (c.n == 0)
		return "0";
	cq_chain_mark(g, &c);
	char rp[96], tq[32], l1[16] = "0", r1[16] = "0";
	int64_t lo = 0, hi = 0, off = 0;
	if (op >= 0) {
		struct ir_value *nd = nx->ops[0].val;
		snprintf(l1, sizeof l1, "tb%u", cq_fine_table(g, nx->ops[1].val->type, nd->type));
		snprintf(r1, sizeof r1, "tb%u", cq_fine_table(g, nx->ops[2].val->type, nd->type));
		cq_limits(nd->type, &lo, &hi);
		off = nd->type->offset;
	}
	/* a table that only clamps narrows the range it follows */
	if (have_tab && op < 0)
		have_tab = !cq_table_clamp(d->type, tab, plo, phi);
	else if (have_tab)
		have_tab = !cq_table_clamp(nx->ops[0].val->type, tab, &lo, &hi);
	if (op < 0 && !have_tab)
		return "0";
	cq_table_arg(g, have_tab, tab, tq);
	/* the binary kind's operands in 32-bit fine units where they fit */
	int64_t fl[5] = {0}, fr[5] = {0};
	bool f32 = op >= 0 && cq_fine32(nx->ops[1].val->type, nx->ops[0].val->type, fl) &&
		   cq_fine32(nx->ops[2].val->type, nx->ops[0].val->type, fr);
	if (!f32)
		memset(fl, 0, sizeof fl), memset(fr, 0, sizeof fr);
	snprintf(buf, n,
		 "&(struct cb_qpost){%d, %d, %s, %s, %s, %" PRId64 ", %" PRId64 ", %" PRId64 ", %s, %d, %d, {%" PRId64
		 ", %" PRId64 ", %" PRId64 ", %" PRId64 ", %" PRId64 "}, {%" PRId64 ", %" PRId64 ", %" PRId64 ", %" PRId64
		 ", %" PRId64 "}}",
		 op, left, c.res ? PTR(c.res, "uint8_t", rp) : "0", l1, r1, off, lo, hi, tq, f32,
		 c.res && c.res->type->elem == EK_QI8, fl[0], fl[1], fl[2], fl[3], fl[4], fr[0], fr[1], fr[2], fr[3],
		 fr[4]);
	return buf;
}

/* add, sub, max, min (each operand brought to the result's scale with
 * CQ_FRAC fraction bits) and mul (the exact product requantized by
 * sa sb / sd); the row's param is the operator. */
void cg_emit_qbinary(struct cg *g, struct ir_instr *in, const struct cg_emit_row *row)
{
	struct ir_value *d = in->ops[0].val, *a = in->ops[1].val, *b = in->ops[2].val;
	if (!cq_all_quantized(g, in, 3))
		return;
	const struct type *dt = d->type, *at = a->type, *bt = b->type;
	char pa[96], pb[96], pd[96], qa[128], qb[128], qd[128];
	if (cq_byte_binary(in)) {
		unsigned ta = cq_fine_table(g, at, dt), tb = cq_fine_table(g, bt, dt);
		int64_t lo, hi;
		cq_limits(dt, &lo, &hi);
		/* the byte-table kinds after it run on each chunk of its result */
		struct cq_chain c = {.in = in, .ew = true, .val = {d}};
		uint8_t tab[256];
		for (int i = 0; i < 256; i++)
			tab[i] = (uint8_t)i;
		bool any = cq_chain_tables(g, &c, cg_next_real(in), tab);
		cq_chain_mark(g, &c);
		struct ir_value *fin = c.val[c.n];
		char tq[32];
		cq_table_arg(g, any, tab, tq);
		os_printf(g->body,
			  "\tcb_qbin8(%d, %" PRIu64 "u, %s, tb%u, %s, tb%u, %s, %" PRId64 ", %" PRId64 ", %" PRId64
			  ", %s);\n",
			  row->param, type_numel(dt), PTR(a, "uint8_t", pa), ta, PTR(b, "uint8_t", pb), tb,
			  PTR(fin, "uint8_t", pd), (int64_t)dt->offset, lo, hi, tq);
		return;
	}
	double ra, rb;
	if (row->param == CQ_MUL)
		ra = (double)at->scale * bt->scale / dt->scale, rb = 0;
	else
		ra = (double)at->scale / dt->scale * (double)(1 << CQ_FRAC),
		rb = (double)bt->scale / dt->scale * (double)(1 << CQ_FRAC);
	os_printf(g->body, "\tcb_qbinary(%d, %" PRIu64 "u, %s, %s, %s, %s, %s, %s);\n", row->param, type_numel(dt),
		  PTR(a, "void", pa), cq_opnd(at, ra, qa, sizeof qa), PTR(b, "void", pb), cq_opnd(bt, rb, qb, sizeof qb),
		  PTR(d, "void", pd), cq_res(dt, qd, sizeof qd));
}

/* v as a C literal of type int64_t (buf: 32 bytes) */
static const char *cq_i64(char *buf, int64_t v)
{
	if (v == INT64_MIN)
		snprintf(buf, 32, "INT64_MIN");
	else
		snprintf(buf, 32, "(int64_t)%" PRId64, v);
	return buf;
}

/* relu, clip (the operand at the result's scale with CQ_FRAC fraction
 * bits, clamped there), sigmoid, tanh and rescalequantized: a byte table
 * for 8-bit operands; relu and clip otherwise per element, sigmoid and
 * tanh through a table of the 256 results for 8-bit inputs, else per
 * element in double; rescalequantized of wider kinds by real value (the
 * elementwise path, cgen_ew.c). */
void cg_emit_qunary(struct cg *g, struct ir_instr *in, const struct cg_emit_row *row)
{
	struct ir_value *d = in->ops[0].val, *a = in->ops[1].val;
	if (!cq_all_quantized(g, in, 2))
		return;
	const struct type *dt = d->type, *at = a->type;
	char pa[96], pd[96], qa[128], qd[128];
	uint64_t n = type_numel(dt);
	if (cq_byte_unary(in)) {
		uint8_t t[256];
		for (int b = 0; b < 256; b++)
			t[b] = (uint8_t)b;
		cq_apply_unary(in, t);
		unsigned id = cq_emit_bytes(g, t);
		os_printf(g->body, "\tcb_qlut_b(%" PRIu64 "u, %s, tq%u, %s);\n", n, PTR(a, "uint8_t", pa), id,
			  PTR(d, "uint8_t", pd));
		return;
	}
	if (row->param == CQ_SIGMOID || row->param == CQ_TANH) {
		if (at->elem == EK_QI8 || at->elem == EK_QUI8) {
			int64_t t[256], base = at->elem == EK_QUI8 ? 0 : -128;
			for (int64_t q = 0; q < 256; q++)
				t[q] = cq_unary_value(in, base + q);
			unsigned id = cg_int_table(g, t, 256);
			os_printf(g->body, "\tcb_qlut8(%" PRIu64 "u, %s, %d, %d, ti%u, %s, %d);\n", n, PTR(a, "void", pa),
				  cq_kind(at), (int)base, id, PTR(d, "void", pd), cq_kind(dt));
		} else
			os_printf(g->body, "\tcb_qlut_wide(%" PRIu64 "u, %s, %s, %a, %d, %a, %s, %s);\n", n,
				  PTR(a, "void", pa), cq_opnd(at, 0, qa, sizeof qa), (double)at->scale,
				  row->param == CQ_TANH, (double)dt->scale, PTR(d, "void", pd), cq_res(dt, qd, sizeof qd));
		return;
	}
	if (row->param == CQ_RESCALE) {
		cg_emit_ew(g, in); /* wider kinds: by real value, as before */
		return;
	}
	int64_t cl, ch;
	cq_clamp_bounds(in, dt, &cl, &ch);
	char lb[32], hb[32];
	os_printf(g->body, "\tcb_qclamp(%" PRIu64 "u, %s, %s, %s, %s, %s, %s);\n", n, PTR(a, "void", pa),
		  cq_opnd(at, (double)at->scale / dt->scale * (double)(1 << CQ_FRAC), qa, sizeof qa), cq_i64(lb, cl),
		  cq_i64(hb, ch), PTR(d, "void", pd), cq_res(dt, qd, sizeof qd));
}

/* dequantize of an 8-bit operand: a table of the 256 real values, as the
 * interpreter computes them (scale * (q - offset) in double, to float) */
void cg_emit_qdequantize(struct cg *g, struct ir_instr *in, const struct cg_emit_row *row)
{
	(void)row;
	struct ir_value *d = in->ops[0].val, *a = in->ops[1].val;
	const struct type *at = a->type;
	if ((at->elem != EK_QI8 && at->elem != EK_QUI8) || !cg_is_float(d)) {
		cg_emit_ew(g, in); /* wider kinds: by real value, as before */
		return;
	}
	unsigned id = g->uniq++;
	os_printf(g->decls, "static const float tf%u[256] = {", id);
	for (int b = 0; b < 256; b++) {
		int64_t q = at->elem == EK_QI8 && b > 127 ? b - 256 : b;
		os_printf(g->decls, "%s%af", b ? ", " : "", (double)(float)((double)at->scale * ((double)q - at->offset)));
	}
	os_printf(g->decls, "};\n");
	char pa[96], pd[96];
	os_printf(g->body, "\tcb_qdeq8(%" PRIu64 "u, %s, tf%u, %s);\n", type_numel(d->type), PTR(a, "uint8_t", pa), id,
		  PTR(d, "float", pd));
}

/* quantize of a float operand to an 8-bit result: the interpreter's
 * double arithmetic (round half to even of x / scale, NaN to 0, plus the
 * offset, saturated), vectorized by the kernel */
void cg_emit_qquantize(struct cg *g, struct ir_instr *in, const struct cg_emit_row *row)
{
	(void)row;
	struct ir_value *d = in->ops[0].val, *a = in->ops[1].val;
	const struct type *dt = d->type;
	if ((dt->elem != EK_QI8 && dt->elem != EK_QUI8) || a->type->elem != EK_FLOAT) {
		cg_emit_ew(g, in); /* other kinds: by real value, as before */
		return;
	}
	int64_t lo, hi;
	cq_limits(dt, &lo, &hi);
	char pa[96], pd[96];
	os_printf(g->body, "\tcb_qquant8(%" PRIu64 "u, %s, %a, %" PRId64 ".0, %" PRId64 ".0, %" PRId64 ".0, %s);\n",
		  type_numel(dt), PTR(a, "float", pa), (double)dt->scale, (int64_t)dt->offset, lo, hi,
		  PTR(d, "uint8_t", pd));
}

/* The largest window (in pixels) of an adaptive pooling from h x w to
 * oh x ow. */
static int64_t cq_adaptive_max(const struct type *st, const struct type *dt)
{
	int64_t h = (int64_t)st->dims[1], w = (int64_t)st->dims[2], oh = (int64_t)dt->dims[1], ow = (int64_t)dt->dims[2];
	int64_t mh = 0, mw = 0;
	for (int64_t y = 0; y < oh; y++) {
		int64_t e = ((y + 1) * h + oh - 1) / oh - y * h / oh;
		mh = e > mh ? e : mh;
	}
	for (int64_t x = 0; x < ow; x++) {
		int64_t e = ((x + 1) * w + ow - 1) / ow - x * w / ow;
		mw = e > mw ? e : mw;
	}
	return mh * mw;
}

/* Max, average and adaptive average pooling (the row's enum cg_pool_op):
 * max compares stored integers; the averages requantize the window's sum
 * by (sx / sd) / count, one multiplier per count (a table). */
void cg_emit_qpool(struct cg *g, struct ir_instr *in, const struct cg_emit_row *row)
{
	struct ir_value *d = in->ops[0].val, *s = in->ops[1].val;
	if (!cq_all_quantized(g, in, 2))
		return;
	const struct type *st = s->type, *dt = d->type;
	if (row->param == CQ_POOL_ARGMAX &&
	    (in->ops[2].val->type->rank != dt->rank || cg_int_es(in->ops[2].val) != 8)) {
		cg_unsupported(g, in, "only max pooling with an int64 argmax of the result's shape is compiled");
		return;
	}
	int64_t k[2] = {1, 1}, sv[2] = {1, 1}, p[4] = {0, 0, 0, 0}, incl = 0;
	if (row->param != CG_POOL_ADAPTIVE) { /* an adaptive pooling's windows follow from the shapes */
		unsigned n;
		memcpy(k, ir_ints(in, AN_kernels, &n), sizeof k);
		memcpy(sv, ir_ints(in, AN_strides, &n), sizeof sv);
		memcpy(p, ir_ints(in, AN_pads, &n), sizeof p);
		if (row->param == CG_POOL_AVG)
			incl = ir_int(in, AN_count_include_pads);
	}
	int64_t lo, hi;
	cq_limits(dt, &lo, &hi);
	int64_t zero = dt->offset < lo ? lo : dt->offset > hi ? hi : dt->offset;
	unsigned id = g->uniq++;
	os_printf(g->decls,
		  "static const struct cb_qpool_args qp%u = {%" PRIu64 ", %" PRIu64 ", %" PRIu64 ", %" PRIu64 ", %" PRIu64
		  ", %" PRIu64 ", %" PRId64 ", %" PRId64 ", %" PRId64 ", %" PRId64 ", %" PRId64 ", %" PRId64
		  ", %" PRId64 ", %d, %d, %" PRId64 ", %" PRId64 ", %" PRId64 ", %" PRId64 ", %" PRId64 "};\n",
		  id, st->dims[0], st->dims[1], st->dims[2], st->dims[3], dt->dims[1], dt->dims[2], k[0], k[1], sv[0],
		  sv[1], p[0], p[1], incl, cq_kind(st), cq_kind(dt), (int64_t)st->offset, (int64_t)dt->offset, lo, hi,
		  zero);
	char a[96], o[96];
	if (row->param == CG_POOL_MAX && (st->elem == EK_QI8 || st->elem == EK_QUI8) && dt->elem == st->elem) {
		os_printf(g->body, "\tcb_qmaxpool8(&qp%u, %s, %s);\n", id, PTR(s, "uint8_t", a), PTR(d, "uint8_t", o));
		return;
	}
	if (row->param == CG_POOL_MAX || row->param == CQ_POOL_ARGMAX) {
		char m[96];
		os_printf(g->body, "\tcb_qmaxpool(&qp%u, %s, %s, %s);\n", id, PTR(s, "void", a), PTR(d, "void", o),
			  row->param == CQ_POOL_ARGMAX ? PTR(in->ops[2].val, "int64_t", m) : "0");
		return;
	}
	int64_t maxdiv = row->param == CG_POOL_ADAPTIVE ? cq_adaptive_max(st, dt) : k[0] * k[1];
	int64_t *mult = xcalloc((size_t)maxdiv + 1, sizeof *mult), *shift = xcalloc((size_t)maxdiv + 1, sizeof *shift);
	double ratio = (double)st->scale / dt->scale;
	for (int64_t c = 1; c <= maxdiv; c++)
		cq_mult(ratio / (double)c, &mult[c], &shift[c]);
	unsigned tm = cg_i64_table(g, mult, (unsigned)maxdiv + 1), ts = cg_i64_table(g, shift, (unsigned)maxdiv + 1);
	free(mult);
	free(shift);
	os_printf(g->body, "\tcb_qavgpool(&qp%u, %d, %s, tb%u, tb%u, %s);\n", id, row->param == CG_POOL_ADAPTIVE,
		  PTR(s, "void", a), tm, ts, PTR(d, "void", o));
}
