/* cgen_grad2.c - the emitters of the gradient kinds of the binary
 * elementwise and the shape kinds (Emitters.def, the "issue 13 part B"
 * block; the activation gradients are EW.def rows the elementwise emitter
 * compiles). The two-result elementwise gradients are a loop written from
 * lib/ir/EWGrad.def's text; the movement back (ReshapeGrad, TransposeGrad,
 * ConcatGrad, SliceGrad) is one strided copy of any element kind; the kinds
 * that sum call the float kernels of kernels/cb_grad2.c.
 */
#include "backends/c/cgen.h"
#include "backends/c/cgen_ops.h"
#include "graph/reduce_axes.h"

#include <inttypes.h>

/* ---- two-result elementwise gradients ---- */

/* A row of EWGrad.def as text: the two expressions and the operand
 * indices of A, B and Y (-1: not taken). */
struct ew_grad2_text {
	const char *da, *db;
	int ia, ib, iy;
};

static const struct ew_grad2_text ew_grad2_text[IK_COUNT] = {
#define EW_GRAD2(kind, ia_, ib_, iy_, da_, db_) [IK_##kind] = {#da_, #db_, ia_, ib_, iy_},
#include "ir/EWGrad.def"
};

/* Whether every operand of in holds float; reports in otherwise. */
static bool all_float_ops(struct cg *g, struct ir_instr *in)
{
	for (unsigned i = 0; i < in->nops; i++)
		if (!cg_is_float(in->ops[i].val)) {
			cg_unsupported(g, in, "only float gradients are compiled");
			return false;
		}
	return true;
}

/* addgrad, subgrad, mulgrad, divgrad, maxgrad, mingrad: one loop that
 * writes both adjoints of every element. */
void cg_emit_ew_grad2(struct cg *g, struct ir_instr *in, const struct cg_emit_row *row)
{
	(void)row;
	if (!all_float_ops(g, in))
		return;
	const struct ew_grad2_text *t = &ew_grad2_text[in->kind];
	char p[96], q[96];
	struct ir_value *gv = in->ops[in->nops - 1].val;
	os_printf(g->body, "\t{\n\t\tconst float *g_ = %s;\n", PTR(gv, "float", p));
	os_printf(g->body, "\t\tfloat *da_ = %s, *db_ = %s;\n", PTR(in->ops[0].val, "float", p),
		  PTR(in->ops[1].val, "float", q));
	const int idx[3] = {t->ia, t->ib, t->iy};
	static const char name[3] = {'A', 'B', 'Y'};
	for (unsigned j = 0; j < 3; j++)
		if (idx[j] >= 0)
			os_printf(g->body, "\t\tconst float *%c_ = %s;\n", name[j],
				  PTR(in->ops[idx[j]].val, "float", p));
	os_printf(g->body, "\t\tfor (size_t i_ = 0; i_ < %" PRIu64 "; i_++) {\n\t\t\tconst float G = g_[i_];\n",
		  type_numel(gv->type));
	for (unsigned j = 0; j < 3; j++)
		if (idx[j] >= 0)
			os_printf(g->body, "\t\t\tconst float %c = %c_[i_];\n", name[j], name[j]);
	os_printf(g->body, "\t\t\tda_[i_] = %s;\n\t\t\tdb_[i_] = %s;\n\t\t}\n\t}\n", t->da, t->db);
}

/* ---- data movement back ---- */

/* reshapegrad, transposegrad, concatgrad, slicegrad (row parameter enum
 * cg_grad_move_op): one strided copy. It walks OutputGrad into Dest at the
 * same axes, except that a reshape walks both as flat arrays, a transpose
 * steps along Dest's axis shuffle[i] for OutputGrad's axis i, a concat
 * walks Dest from offset along dim of OutputGrad, and a slice writes
 * zeros first and starts at start. */
void cg_emit_move_grad(struct cg *g, struct ir_instr *in, const struct cg_emit_row *row)
{
	struct ir_value *d = in->ops[0].val, *s = in->ops[1].val;
	const struct type *dt = d->type, *st = s->type;
	int64_t ds[GLOW_MAX_RANK], ss[GLOW_MAX_RANK], step[GLOW_MAX_RANK], dims[GLOW_MAX_RANK], doff = 0, soff = 0;
	cg_strides_of(dt, ds);
	cg_strides_of(st, ss);
	unsigned rank = st->rank, len;
	for (unsigned i = 0; i < rank; i++) {
		dims[i] = (int64_t)st->dims[i];
		step[i] = ds[i];
	}
	if (row->param == CG_GRAD_RESHAPE) {
		rank = 1;
		dims[0] = (int64_t)type_numel(st);
		step[0] = ss[0] = 1;
	} else if (row->param == CG_GRAD_TRANSPOSE) {
		const int64_t *shuffle = ir_ints(in, AN_shuffle, &len);
		for (unsigned i = 0; i < rank; i++)
			step[i] = ds[shuffle[i]];
	} else if (row->param == CG_GRAD_CONCAT) {
		for (unsigned i = 0; i < rank; i++)
			dims[i] = (int64_t)dt->dims[i];
		soff = ir_int(in, AN_offset) * ss[ir_int(in, AN_dim)];
	} else {
		const int64_t *start = ir_ints(in, AN_start, &len);
		for (unsigned i = 0; i < rank; i++)
			doff += start[i] * ds[i];
		char o[96];
		os_printf(g->body, "\tmemset(%s, 0, %" PRIu64 ");\n", PTR(d, "void", o), type_bytes(dt));
	}
	cg_emit_copy_nd(g, d, doff, step, s, soff, ss, dims, rank);
}

/* ---- the kinds that sum (kernels/cb_grad2.c) ---- */

/* gathergrad: a run-time error on an index out of range, as gather. */
void cg_emit_gathergrad(struct cg *g, struct ir_instr *in, const struct cg_emit_row *row)
{
	(void)row;
	struct ir_value *dst = in->ops[0].val, *ind = in->ops[1].val, *gv = in->ops[2].val;
	if (!cg_is_float(dst) || !cg_is_float(gv)) {
		cg_unsupported(g, in, "only float gradients are compiled");
		return;
	}
	char a[96], b[96], o[96];
	uint64_t outer, d, inner;
	cg_split_axis(dst->type, (unsigned)ir_int(in, AN_axis), &outer, &d, &inner);
	int i64 = ind->type->elem == EK_I64 || ind->type->elem == EK_INDEX64;
	os_printf(g->body,
		  "\tif (cb_gathergrad_f32(%s, %d, %s, %s, %" PRIu64 ", %" PRIu64 ", %" PRIu64 ", %" PRIu64
		  "))\n\t\treturn -1;\n",
		  PTR(ind, "void", a), i64, PTR(gv, "float", b), PTR(dst, "float", o), outer, d, inner,
		  type_numel(ind->type));
}

/* padgrad: every mode. */
void cg_emit_padgrad(struct cg *g, struct ir_instr *in, const struct cg_emit_row *row)
{
	(void)row;
	if (!all_float_ops(g, in))
		return;
	struct ir_value *d = in->ops[0].val, *s = in->ops[1].val;
	unsigned len;
	const int64_t *pads = ir_ints(in, AN_pads, &len);
	unsigned tg = cg_dims_table(g, s->type), td = cg_dims_table(g, d->type), tp = cg_i64_table(g, pads, len);
	char a[96], o[96];
	os_printf(g->body, "\tcb_padgrad_f32(%s, tb%u, %s, tb%u, tb%u, %u, %d);\n", PTR(s, "float", a), tg,
		  PTR(d, "float", o), td, tp, d->type->rank, (int)ir_int(in, AN_mode));
}

/* batchedaddgrad: BatchGrad a copy, SliceGrad the sum over the batch. */
void cg_emit_batchedaddgrad(struct cg *g, struct ir_instr *in, const struct cg_emit_row *row)
{
	(void)row;
	if (!all_float_ops(g, in))
		return;
	char a[96], b[96], o[96];
	struct ir_value *db = in->ops[0].val, *ds = in->ops[1].val, *gv = in->ops[2].val;
	os_printf(g->body, "\tcb_batchedaddgrad_f32(%s, %s, %s, %" PRIu64 ", %" PRIu64 ");\n", PTR(gv, "float", a),
		  PTR(db, "float", b), PTR(ds, "float", o), type_numel(gv->type), type_numel(ds->type));
}

/* batchedreduceaddgrad, batchedreducemeangrad (row parameter 1: mean):
 * OutputGrad broadcast back over the axes. */
void cg_emit_reducegrad(struct cg *g, struct ir_instr *in, const struct cg_emit_row *row)
{
	if (!all_float_ops(g, in))
		return;
	struct ir_value *d = in->ops[0].val, *s = in->ops[1].val;
	const struct type *t = d->type;
	unsigned n;
	const int64_t *axes = ir_ints(in, AN_axes, &n);
	bool red[GLOW_MAX_RANK] = {false};
	double cnt = (double)reduce_axes_mark(t, axes, n, red);
	int64_t gs[GLOW_MAX_RANK];
	reduce_axes_strides(t, red, gs);
	unsigned t1 = cg_dims_table(g, t), t2 = cg_i64_table(g, gs, t->rank);
	char a[96], o[96], k[40];
	os_printf(g->body, "\tcb_reducegrad_f32(%s, %s, %" PRIu64 ", tb%u, tb%u, %u, %s);\n", PTR(s, "float", a),
		  PTR(d, "float", o), type_numel(t), t1, t2, t->rank, cg_flit(k, row->param ? 1 / cnt : 1));
}
