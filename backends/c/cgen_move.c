/* cgen_move.c - the emitters of the data-movement kinds (transpose, slices,
 * concatenation pieces, tiles, gathers, ...): data movement of any element
 * kind is one strided copy (cb_copy_nd) or a reference kernel over raw
 * elements. */
#include "backends/c/cgen.h"
#include "backends/c/cgen_ops.h"
#include "support/util.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* cb_copy_nd(dst + doff, ds, src + soff, ss, dims, rank) */
static void emit_copy_nd(struct cg *g, struct ir_value *dst, int64_t doff, const int64_t *ds0, struct ir_value *src,
			 int64_t soff, const int64_t *ss0, const int64_t *dims0, unsigned rank0)
{
	size_t es = elem_size((enum elem_kind)dst->type->elem);
	char a[96], o[96];
	/* drop dimensions of size 1, merge neighbours contiguous in both */
	int64_t ds[GLOW_MAX_RANK + 2], ss[GLOW_MAX_RANK + 2], dims[GLOW_MAX_RANK + 2];
	unsigned rank = 0;
	for (unsigned i = 0; i < rank0; i++) {
		if (dims0[i] == 1)
			continue;
		if (rank && ds[rank - 1] == ds0[i] * dims0[i] && ss[rank - 1] == ss0[i] * dims0[i]) {
			dims[rank - 1] *= dims0[i];
			ds[rank - 1] = ds0[i];
			ss[rank - 1] = ss0[i];
			continue;
		}
		dims[rank] = dims0[i];
		ds[rank] = ds0[i];
		ss[rank] = ss0[i];
		rank++;
	}
	/* a short strided innermost run over a longer one: loop the longer one
	 * innermost (fewer, longer runs) */
	if (rank >= 2 && dims[rank - 1] < 16 && dims[rank - 2] > dims[rank - 1] &&
	    !(ss[rank - 1] == 1 && ds[rank - 1] == 1)) {
		int64_t t;
		t = dims[rank - 1], dims[rank - 1] = dims[rank - 2], dims[rank - 2] = t;
		t = ds[rank - 1], ds[rank - 1] = ds[rank - 2], ds[rank - 2] = t;
		t = ss[rank - 1], ss[rank - 1] = ss[rank - 2], ss[rank - 2] = t;
	}
	unsigned t1 = cg_i64_table(g, ds, rank), t2 = cg_i64_table(g, ss, rank), t3 = cg_i64_table(g, dims, rank);
	os_printf(g->body, "\tcb_copy_nd((uint8_t *)%s + %" PRId64 ", tb%u, (const uint8_t *)%s + %" PRId64
		  ", tb%u, tb%u, %u, %zu);\n",
		  PTR(dst, "void", o), doff * (int64_t)es, t1, PTR(src, "void", a), soff * (int64_t)es, t2, t3, rank,
		  es);
}

/* What every data-movement kind starts from: the operands, their types
 * and row-major element strides, the row's parameter. */
struct move {
	int op; /* enum cg_move_op */
	struct ir_value *dst, *src;
	const struct type *dt, *st;
	unsigned rank; /* the destination's */
	int64_t dst_st[GLOW_MAX_RANK + 1], src_st[GLOW_MAX_RANK + 1];
};

/* Fills m for instruction in; false after reporting a rank the copies do
 * not take. */
static bool move_begin(struct cg *g, struct ir_instr *in, struct move *m)
{
	m->dst = in->ops[0].val;
	m->src = in->ops[1].val;
	m->dt = m->dst->type;
	m->st = m->src->type;
	m->rank = m->dt->rank;
	if (m->rank > 7) {
		cg_unsupported(g, in, "rank above 7");
		return false;
	}
	cg_strides_of(m->st, m->src_st);
	cg_strides_of(m->dt, m->dst_st);
	return true;
}

/* A transpose: one strided copy. */
static void move_transpose(struct cg *g, struct ir_instr *in, const struct move *m)
{
	int64_t ds[GLOW_MAX_RANK + 1], ss[GLOW_MAX_RANK + 1], dims[GLOW_MAX_RANK + 1];
	unsigned n;
	const int64_t *sh = ir_ints(in, AN_shuffle, &n);
	for (unsigned i = 0; i < m->rank; i++) {
		dims[i] = (int64_t)m->dt->dims[i];
		ds[i] = m->dst_st[i];
		ss[i] = m->src_st[sh[i]];
	}
	emit_copy_nd(g, m->dst, 0, ds, m->src, 0, ss, dims, m->rank);
}

/* A slice: the source read from its start. */
static void move_extract(struct cg *g, struct ir_instr *in, const struct move *m)
{
	int64_t dims[GLOW_MAX_RANK + 1];
	unsigned n;
	const int64_t *start = ir_ints(in, AN_start, &n);
	int64_t off = 0;
	for (unsigned i = 0; i < m->rank; i++)
		off += start[i] * m->src_st[i];
	for (unsigned i = 0; i < m->rank; i++)
		dims[i] = (int64_t)m->dt->dims[i];
	emit_copy_nd(g, m->dst, 0, m->dst_st, m->src, off, m->src_st, dims, m->rank);
}

/* An insertion of count copies of Src along axis into Dest. */
static void move_insert(struct cg *g, struct ir_instr *in, const struct move *m)
{
	int64_t dims[GLOW_MAX_RANK + 1];
	unsigned n;
	const int64_t *start = ir_ints(in, AN_start, &n);
	int64_t count = ir_int(in, AN_count), axis = ir_int(in, AN_axis);
	for (int64_t c = 0; c < count; c++) {
		int64_t off = 0;
		for (unsigned i = 0; i < m->rank; i++)
			off += (start[i] + ((int64_t)i == axis ? c * (int64_t)m->st->dims[i] : 0)) * m->dst_st[i];
		for (unsigned i = 0; i < m->rank; i++)
			dims[i] = (int64_t)m->st->dims[i];
		emit_copy_nd(g, m->dst, off, m->dst_st, m->src, 0, m->src_st, dims, m->rank);
	}
}

/* Tiling: an outer dimension of stride 0 over the source. */
static void move_tile(struct cg *g, struct ir_instr *in, const struct move *m)
{
	int64_t ds[GLOW_MAX_RANK + 1], ss[GLOW_MAX_RANK + 1], dims[GLOW_MAX_RANK + 1];
	unsigned axis = (unsigned)ir_int(in, AN_axis);
	unsigned j = 0;
	for (unsigned i = 0; i < m->rank; i++) {
		if (i == axis) {
			dims[j] = ir_int(in, AN_count);
			ds[j] = m->dst_st[i] * (int64_t)m->st->dims[i];
			ss[j++] = 0;
		}
		dims[j] = (int64_t)m->st->dims[i];
		ds[j] = m->dst_st[i];
		ss[j++] = m->src_st[i];
	}
	emit_copy_nd(g, m->dst, 0, ds, m->src, 0, ss, dims, j);
}

/* Broadcasting: dimensions of size 1 read with stride 0. */
static void move_broadcast(struct cg *g, struct ir_instr *in, const struct move *m)
{
	int64_t ss[GLOW_MAX_RANK + 1], dims[GLOW_MAX_RANK + 1];
	unsigned axis = (unsigned)ir_int(in, AN_axis);
	for (unsigned i = 0; i < m->rank; i++) {
		dims[i] = (int64_t)m->dt->dims[i];
		ss[i] = 0;
		if (i >= axis && i - axis < m->st->rank && m->st->dims[i - axis] == m->dt->dims[i])
			ss[i] = m->src_st[i - axis];
	}
	emit_copy_nd(g, m->dst, 0, m->dst_st, m->src, 0, ss, dims, m->rank);
}

/* A flip: the axis read backwards. */
static void move_flip(struct cg *g, struct ir_instr *in, const struct move *m)
{
	int64_t ss[GLOW_MAX_RANK + 1], dims[GLOW_MAX_RANK + 1];
	unsigned axis = (unsigned)ir_int(in, AN_axis);
	for (unsigned i = 0; i < m->rank; i++) {
		dims[i] = (int64_t)m->dt->dims[i];
		ss[i] = i == axis ? -m->src_st[i] : m->src_st[i];
	}
	int64_t off = dims[axis] > 0 ? (dims[axis] - 1) * m->src_st[axis] : 0;
	emit_copy_nd(g, m->dst, 0, m->dst_st, m->src, off, ss, dims, m->rank);
}

/* SpaceToDepth (CG_MOVE_TO_DEPTH) and DepthToSpace (CG_MOVE_TO_SPACE). */
static void move_depth(struct cg *g, struct ir_instr *in, const struct move *m)
{
	/* the spatial side viewed as N x H/b x b x W/b x b x C, the
	 * depth side as N x H/b x W/b x (b x b x C) (dcr) or
	 * (C x b x b) (crd) */
	bool to_depth = m->op == CG_MOVE_TO_DEPTH;
	const struct type *big = to_depth ? m->st : m->dt;
	int64_t b = ir_int(in, AN_block_size), N = (int64_t)big->dims[0], H = (int64_t)big->dims[1],
		W = (int64_t)big->dims[2], C = (int64_t)big->dims[3];
	bool crd = !to_depth && ir_int(in, AN_mode) == 1;
	int64_t oh = H / b, ow = W / b, oc = C * b * b;
	int64_t sp[6] = {H * W * C, b * W * C, W * C, b * C, C, 1}; /* n, y, by, x, bx, c */
	int64_t dp[6] = {oh * ow * oc, ow * oc, crd ? b : b * C, oc, crd ? 1 : C, crd ? b * b : 1};
	int64_t d6[6] = {N, oh, b, ow, b, C};
	if (to_depth)
		emit_copy_nd(g, m->dst, 0, dp, m->src, 0, sp, d6, 6);
	else
		emit_copy_nd(g, m->dst, 0, sp, m->src, 0, dp, d6, 6);
}

/* Padding: a fill and a copy of the kept part (constant mode), or the
 * reference kernel (the other modes). */
static void move_pad(struct cg *g, struct ir_instr *in, const struct move *m)
{
	int64_t dims[GLOW_MAX_RANK + 1];
	unsigned n;
	if (ir_int(in, AN_mode) != 0) {
		const int64_t *pads = ir_ints(in, AN_pads, &n);
		unsigned t1 = cg_dims_table(g, m->st), t2 = cg_dims_table(g, m->dt), t3 = cg_i64_table(g, pads, m->rank);
		char a[96], o[96];
		os_printf(g->body, "\tcb_pad_mode(%s, tb%u, %s, tb%u, tb%u, %u, %d, %zu);\n", PTR(m->src, "void", a), t1,
			  PTR(m->dst, "void", o), t2, t3, m->rank, (int)ir_int(in, AN_mode),
			  elem_size((enum elem_kind)m->dt->elem));
		return;
	}
	if (!cg_ctype(m->dt->elem)) {
		cg_unsupported(g, in, "constant padding of this element kind is not compiled");
		return;
	}
	const int64_t *pads = ir_ints(in, AN_pads, &n);
	char o[96];
	double val = ir_float(in, AN_value);
	os_printf(g->body, "\tfor (size_t i = 0; i < %" PRIu64 "u; i++)\n\t\t%s[i] = (%s)%.17g;\n",
		  type_numel(m->dt), PTR(m->dst, cg_ctype(m->dt->elem), o), cg_ctype(m->dt->elem), val);
	int64_t doff = 0, soff = 0;
	for (unsigned i = 0; i < m->rank; i++) {
		int64_t b = pads[i];
		int64_t lo = b < 0 ? -b : 0; /* cropped from the source */
		int64_t d0 = b > 0 ? b : 0;
		int64_t len = (int64_t)m->st->dims[i] - lo;
		if (len > (int64_t)m->dt->dims[i] - d0)
			len = (int64_t)m->dt->dims[i] - d0;
		if (len <= 0)
			return;
		dims[i] = len;
		doff += d0 * m->dst_st[i];
		soff += lo * m->src_st[i];
	}
	emit_copy_nd(g, m->dst, doff, m->dst_st, m->src, soff, m->src_st, dims, m->rank);
}

/* by enum cg_move_op */
static void (*const movers[])(struct cg *g, struct ir_instr *in, const struct move *m) = {
	[CG_MOVE_TRANSPOSE] = move_transpose,
	[CG_MOVE_EXTRACT] = move_extract,
	[CG_MOVE_INSERT] = move_insert,
	[CG_MOVE_TILE] = move_tile,
	[CG_MOVE_BROADCAST] = move_broadcast,
	[CG_MOVE_FLIP] = move_flip,
	[CG_MOVE_TO_DEPTH] = move_depth,
	[CG_MOVE_TO_SPACE] = move_depth,
	[CG_MOVE_PAD] = move_pad,
};

/* The data-movement kinds: the row's parameter (enum cg_move_op) picks
 * the copies. */
void cg_emit_move(struct cg *g, struct ir_instr *in, const struct cg_emit_row *row)
{
	struct move m;
	if (!move_begin(g, in, &m))
		return;
	m.op = row->param;
	movers[row->param](g, in, &m);
}

/* A transpose: nothing when the next matrix product reads its source
 * (cg_emit_transpose_into_product, cgen_conv.c), else its copies. */
void cg_emit_transpose(struct cg *g, struct ir_instr *in, const struct cg_emit_row *row)
{
	if (!cg_emit_transpose_into_product(g, in))
		cg_emit_move(g, in, row);
}

/* the strided copy of emit_copy_nd for the other emitter files
 * (cgen_ops.h) */
void cg_emit_copy_nd(struct cg *g, struct ir_value *dst, int64_t doff, const int64_t *ds, struct ir_value *src,
		     int64_t soff, const int64_t *ss, const int64_t *dims, unsigned rank)
{
	emit_copy_nd(g, dst, doff, ds, src, soff, ss, dims, rank);
}
