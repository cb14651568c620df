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

/* add, sub, max, min (each operand brought to the result's scale with
 * CQ_FRAC fraction bits) and mul (the exact product requantized by
 * sa sb / sd); the row's param is the operator. */
void cg_emit_qbinary(struct cg *g, struct ir_instr *in, const struct cg_emit_row *row)
{
	struct ir_value *d = in->ops[0].val, *a = in->ops[1].val, *b = in->ops[2].val;
	if (!cq_all_quantized(g, in, 3))
		return;
	const struct type *dt = d->type, *at = a->type, *bt = b->type;
	double ra, rb;
	if (row->param == CQ_MUL)
		ra = (double)at->scale * bt->scale / dt->scale, rb = 0;
	else
		ra = (double)at->scale / dt->scale * (double)(1 << CQ_FRAC),
		rb = (double)bt->scale / dt->scale * (double)(1 << CQ_FRAC);
	char pa[96], pb[96], pd[96], qa[128], qb[128], qd[128];
	os_printf(g->body, "\tcb_qbinary(%d, %" PRIu64 "u, %s, %s, %s, %s, %s, %s);\n", row->param, type_numel(dt),
		  PTR(a, "void", pa), cq_opnd(at, ra, qa, sizeof qa), PTR(b, "void", pb), cq_opnd(bt, rb, qb, sizeof qb),
		  PTR(d, "void", pd), cq_res(dt, qd, sizeof qd));
}

static double cq_sigmoid(double x) { return 1.0 / (1.0 + exp(-x)); }

/* sigmoid or tanh of an 8-bit input: the 256 stored results, as the
 * interpreter's table (round half to even of f(real) / sd, plus the
 * offset, saturated) */
static unsigned cq_lut_table(struct cg *g, const struct type *xt, const struct type *dt, int fn)
{
	int64_t t[256], lo, hi, base = xt->elem == EK_QUI8 ? 0 : -128;
	cq_limits(dt, &lo, &hi);
	for (int64_t q = 0; q < 256; q++) {
		double x = (double)xt->scale * (double)(base + q - xt->offset);
		double v = nearbyint((fn == CQ_TANH ? tanh(x) : cq_sigmoid(x)) / dt->scale) + dt->offset;
		t[q] = v < (double)lo ? lo : v > (double)hi ? hi : (int64_t)v;
	}
	return cg_int_table(g, t, 256);
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
 * bits, clamped there: clip's bounds rounded half to even into those
 * units), sigmoid and tanh (a table for 8-bit inputs, else per element). */
void cg_emit_qunary(struct cg *g, struct ir_instr *in, const struct cg_emit_row *row)
{
	struct ir_value *d = in->ops[0].val, *a = in->ops[1].val;
	if (!cq_all_quantized(g, in, 2))
		return;
	const struct type *dt = d->type, *at = a->type;
	char pa[96], pd[96], qa[128], qd[128];
	uint64_t n = type_numel(dt);
	if (row->param == CQ_SIGMOID || row->param == CQ_TANH) {
		if (at->elem == EK_QI8 || at->elem == EK_QUI8) {
			unsigned id = cq_lut_table(g, at, dt, row->param);
			os_printf(g->body, "\tcb_qlut8(%" PRIu64 "u, %s, %d, %d, ti%u, %s, %d);\n", n, PTR(a, "void", pa),
				  cq_kind(at), at->elem == EK_QUI8 ? 0 : -128, id, PTR(d, "void", pd), cq_kind(dt));
		} else
			os_printf(g->body, "\tcb_qlut_wide(%" PRIu64 "u, %s, %s, %a, %d, %a, %s, %s);\n", n,
				  PTR(a, "void", pa), cq_opnd(at, 0, qa, sizeof qa), (double)at->scale,
				  row->param == CQ_TANH, (double)dt->scale, PTR(d, "void", pd), cq_res(dt, qd, sizeof qd));
		return;
	}
	int64_t cl = 0, ch = INT64_MAX;
	if (row->param == CQ_CLIP) {
		double one = (double)(1 << CQ_FRAC) / dt->scale;
		double l = nearbyint(ir_float(in, AN_min) * one), h = nearbyint(ir_float(in, AN_max) * one);
		cl = l < -9.0e18 ? INT64_MIN : (int64_t)l;
		ch = h > 9.0e18 ? INT64_MAX : (int64_t)h;
	}
	char lb[32], hb[32];
	os_printf(g->body, "\tcb_qclamp(%" PRIu64 "u, %s, %s, %s, %s, %s, %s);\n", n, PTR(a, "void", pa),
		  cq_opnd(at, (double)at->scale / dt->scale * (double)(1 << CQ_FRAC), qa, sizeof qa), cq_i64(lb, cl),
		  cq_i64(hb, ch), PTR(d, "void", pd), cq_res(dt, qd, sizeof qd));
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
