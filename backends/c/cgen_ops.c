/* cgen_ops.c - the emitters of the operator kinds (Emitters.def names
 * each kind's): a call of a kernel with literal shapes, weights packed
 * into the constants blob on the way. The families with more code live
 * beside it: matrix products in cgen_conv.c, data movement in cgen_move.c,
 * the shared helpers in cgen_tables.c, fused elementwise loops in
 * cgen_ew.c; the table in cgen_rows.c and the dispatch in cgen_emit.c;
 * the kinds that emit nothing (cg_emit_nothing) in cgen_rows.c.
 *
 * Pooling, reductions and the rarer kinds call kernels/cb_ref.c. Batch
 * normalizations with constant statistics become a per-channel multiply-add
 * whose factors are computed here.
 */
#include "backends/c/cgen.h"
#include "backends/c/cgen_ops.h"
#include "support/util.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Max, average and adaptive average pooling (the row's enum cg_pool_op). */
void cg_emit_pool(struct cg *g, struct ir_instr *in, const struct cg_emit_row *row)
{
	static const char *const kernel[] = {
		[CG_POOL_MAX] = "cb_maxpool_f32",
		[CG_POOL_AVG] = "cb_avgpool_f32",
		[CG_POOL_ADAPTIVE] = "cb_adaptiveavgpool_f32",
	};
	const char *fn = kernel[row->param];
	struct ir_value *dst = in->ops[0].val, *src = in->ops[1].val;
	if (!cg_is_float(dst) || !cg_is_float(src)) {
		cg_unsupported(g, in, "only float pooling is compiled");
		return;
	}
	const struct type *st = src->type, *dt = dst->type;
	int64_t k[2] = {1, 1}, s[2] = {1, 1}, p[4] = {0, 0, 0, 0}, incl = 0;
	if (row->param != CG_POOL_ADAPTIVE) { /* an adaptive pooling's windows follow from the shapes */
		unsigned n;
		const int64_t *kv = ir_ints(in, AN_kernels, &n), *sv = ir_ints(in, AN_strides, &n),
			      *pv = ir_ints(in, AN_pads, &n);
		memcpy(k, kv, sizeof k);
		memcpy(s, sv, sizeof s);
		memcpy(p, pv, sizeof p);
		if (row->param == CG_POOL_AVG)
			incl = ir_int(in, AN_count_include_pads);
	}
	unsigned id = g->uniq++;
	os_printf(g->decls,
		  "static const struct cb_pool_args pl%u = {%" PRIu64 ", %" PRIu64 ", %" PRIu64 ", %" PRIu64 ", %" PRIu64
		  ", %" PRIu64 ", %" PRId64 ", %" PRId64 ", %" PRId64 ", %" PRId64 ", %" PRId64 ", %" PRId64
		  ", %" PRId64 "};\n",
		  id, st->dims[0], st->dims[1], st->dims[2], st->dims[3], dt->dims[1], dt->dims[2], k[0], k[1], s[0], s[1],
		  p[0], p[1], incl);
	char a[96], o[96];
	os_printf(g->body, "\t%s(&pl%u, %s, %s);\n", fn, id, PTR(src, "float", a), PTR(dst, "float", o));
}

/* Whether the first nops operands of in are float; reports why not
 * otherwise. */
static bool all_float(struct cg *g, struct ir_instr *in, unsigned nops, const char *why)
{
	for (unsigned i = 0; i < nops; i++)
		if (!cg_is_float(in->ops[i].val)) {
			cg_unsupported(g, in, why);
			return false;
		}
	return true;
}

/* Batch normalization: with constant statistics a per-channel
 * multiply-add whose factors are computed here. */
void cg_emit_batchnorm(struct cg *g, struct ir_instr *in, const struct cg_emit_row *row)
{
	(void)row;
	char a[96], o[96], b1[96], b2[96], b3[96], b4[96];
	struct ir_value *dst = in->ops[0].val, *src = in->ops[1].val;
	if (!all_float(g, in, in->nops, "only float normalizations are compiled"))
		return;
	uint64_t outer, c, inner;
	cg_split_axis(src->type, (unsigned)ir_int(in, AN_channel_idx), &outer, &c, &inner);
	float eps = (float)ir_float(in, AN_epsilon);
	struct ir_weight *w[4];
	bool all = true;
	for (unsigned i = 0; i < 4; i++)
		all &= (w[i] = cg_const_weight(in->ops[2 + i].val)) != NULL;
	if (all) {
		float *sc = (float *)cg_weight_data(g, w[0]), *bi = (float *)cg_weight_data(g, w[1]);
		float *mean = (float *)cg_weight_data(g, w[2]), *var = (float *)cg_weight_data(g, w[3]);
		if (sc && bi && mean && var) {
			float *mul = xmalloc(2 * c * sizeof(float) + 1);
			for (uint64_t i = 0; i < c; i++) {
				mul[i] = sc[i] / sqrtf(var[i] + eps);
				mul[c + i] = bi[i] - mean[i] * mul[i];
			}
			size_t off = cg_blob_add(g, mul, 2 * c * sizeof(float));
			free(mul);
			os_printf(g->body,
				  "\tcb_chan_affine_f32(%s, %s, (const float *)(C + %zu), (const float *)(C + %zu), %"
				  PRIu64 ", %" PRIu64 ", %" PRIu64 ");\n",
				  PTR(src, "float", a), PTR(dst, "float", o), off, off + c * sizeof(float), outer, c,
				  inner);
		}
		free(sc);
		free(bi);
		free(mean);
		free(var);
		return;
	}
	char fe[40];
	os_printf(g->body, "\tcb_batchnorm_f32(%s, %s, %s, %s, %s, %s, %s, %" PRIu64 ", %" PRIu64 ", %" PRIu64 ");\n",
		  PTR(src, "float", a), PTR(dst, "float", o), PTR(in->ops[2].val, "float", b1),
		  PTR(in->ops[3].val, "float", b2), PTR(in->ops[4].val, "float", b3),
		  PTR(in->ops[5].val, "float", b4), cg_flit(fe, eps), outer, c, inner);
}

void cg_emit_lrn(struct cg *g, struct ir_instr *in, const struct cg_emit_row *row)
{
	(void)row;
	char a[96], o[96];
	struct ir_value *dst = in->ops[0].val, *src = in->ops[1].val;
	if (!all_float(g, in, in->nops, "only float normalizations are compiled"))
		return;
	const struct type *t = src->type;
	char f1[40], f2[40], f3[40];
	os_printf(g->body, "\tcb_lrn_f32(%s, %s, %" PRIu64 ", %" PRIu64 ", %" PRId64 ", %s, %s, %s);\n",
		  PTR(src, "float", a), PTR(dst, "float", o), t->dims[0] * t->dims[1] * t->dims[2], t->dims[3],
		  ir_int(in, AN_half_window_size), cg_flit(f1, ir_float(in, AN_alpha)),
		  cg_flit(f2, ir_float(in, AN_beta)), cg_flit(f3, ir_float(in, AN_k)));
}

void cg_emit_layernorm(struct cg *g, struct ir_instr *in, const struct cg_emit_row *row)
{
	(void)row;
	char a[96], o[96], b1[96], b2[96];
	struct ir_value *dst = in->ops[0].val, *src = in->ops[1].val;
	if (!all_float(g, in, in->nops, "only float normalizations are compiled"))
		return;
	uint64_t outer, c, inner;
	unsigned axis = (unsigned)ir_int(in, AN_axis);
	cg_split_axis(src->type, axis, &outer, &c, &inner);
	inner *= c;
	if (type_numel(in->ops[2].val->type) != inner || type_numel(in->ops[3].val->type) != inner) {
		cg_unsupported(g, in, "scale and bias must cover the normalized dimensions");
		return;
	}
	char fe[40];
	os_printf(g->body, "\tcb_layernorm_f32(%s, %s, %s, %s, %" PRIu64 ", %" PRIu64 ", %s);\n",
		  PTR(src, "float", a), PTR(dst, "float", o), PTR(in->ops[2].val, "float", b1),
		  PTR(in->ops[3].val, "float", b2), outer, inner, cg_flit(fe, ir_float(in, AN_epsilon)));
}

/* The batched reductions over the attribute axes (the row's enum
 * cg_reduce_op, the kernels' op code). */
void cg_emit_reduce(struct cg *g, struct ir_instr *in, const struct cg_emit_row *row)
{
	const int op = row->param;
	struct ir_value *dst = in->ops[0].val, *src = in->ops[1].val;
	int es = cg_int_es(src);
	if ((!cg_is_float(dst) || !cg_is_float(src)) && (!es || cg_int_es(dst) != es)) {
		cg_unsupported(g, in, "only float and int32/int64 reductions are compiled");
		return;
	}
	const struct type *t = src->type;
	unsigned n;
	const int64_t *axes = ir_ints(in, AN_axes, &n);
	int64_t dims[GLOW_MAX_RANK], ys[GLOW_MAX_RANK];
	bool red[GLOW_MAX_RANK] = {0};
	for (unsigned i = 0; i < n; i++)
		red[axes[i]] = true;
	int64_t s = 1;
	uint64_t cnt = 1;
	for (unsigned i = t->rank; i-- > 0;) {
		dims[i] = (int64_t)t->dims[i];
		ys[i] = red[i] ? 0 : s;
		if (red[i])
			cnt *= t->dims[i];
		else
			s *= (int64_t)t->dims[i];
	}
	unsigned t1 = cg_i64_table(g, dims, t->rank), t2 = cg_i64_table(g, ys, t->rank);
	char a[96], o[96];
	if (es)
		os_printf(g->body, "\tcb_reduce_i(%s, %s, %" PRIu64 ", tb%u, tb%u, %u, %d, %d, %" PRIu64 ");\n",
			  PTR(src, "void", a), PTR(dst, "void", o), type_numel(dst->type), t1, t2, t->rank, op, es, cnt);
	else
		os_printf(g->body, "\tcb_reduce_f32(%s, %s, %" PRIu64 ", tb%u, tb%u, %u, %d, %.1ff);\n",
			  PTR(src, "float", a), PTR(dst, "float", o), type_numel(dst->type), t1, t2, t->rank, op,
			  (double)cnt);
}

/* A transposed convolution: the packed path at stride 1, else the
 * reference kernel. */
void cg_emit_convtranspose(struct cg *g, struct ir_instr *in, const struct cg_emit_row *row)
{
	(void)row;
	char a[96], b[96], c[96], o[96];
	struct ir_value *d0 = in->ops[0].val, *s1 = in->ops[1].val;
	unsigned n;
	if (!all_float(g, in, 4, "only float transposed convolutions are compiled") ||
	    cg_emit_convtranspose_packed(g, in))
		return;
	const struct type *st = s1->type, *dt = d0->type;
	const int64_t *k = ir_ints(in, AN_kernels, &n), *s = ir_ints(in, AN_strides, &n),
		      *p = ir_ints(in, AN_pads, &n), *dl = ir_ints(in, AN_dilation, &n);
	int64_t v[16] = {(int64_t)st->dims[0], (int64_t)st->dims[1], (int64_t)st->dims[2], (int64_t)st->dims[3],
			 (int64_t)dt->dims[1], (int64_t)dt->dims[2], (int64_t)dt->dims[3], k[0], k[1], s[0], s[1],
			 p[0], p[1], dl[0], dl[1], ir_int(in, AN_group)};
	unsigned id = cg_int_table(g, v, 16);
	os_printf(g->body, "\tcb_convtranspose_f32(ti%u, %s, %s, %s, %s);\n", id, PTR(s1, "float", a),
		  PTR(in->ops[2].val, "float", b), PTR(in->ops[3].val, "float", c), PTR(d0, "float", o));
}

/* Max pooling that also writes the flat index of each maximum. */
void cg_emit_maxpool_argmax(struct cg *g, struct ir_instr *in, const struct cg_emit_row *row)
{
	(void)row;
	char a[96], b[96], o[96];
	struct ir_value *d0 = in->ops[0].val, *s1 = in->ops[1].val;
	unsigned n;
	const struct type *st = s1->type, *dt = d0->type, *at = in->ops[2].val->type;
	if (!cg_is_float(d0) || at->rank != dt->rank || cg_int_es(in->ops[2].val) != 8) {
		cg_unsupported(g, in, "only float max pooling with an int64 argmax of the result's shape is compiled");
		return;
	}
	const int64_t *k = ir_ints(in, AN_kernels, &n), *s = ir_ints(in, AN_strides, &n),
		      *p = ir_ints(in, AN_pads, &n);
	int64_t v[12] = {(int64_t)st->dims[0], (int64_t)st->dims[1], (int64_t)st->dims[2], (int64_t)st->dims[3],
			 (int64_t)dt->dims[1], (int64_t)dt->dims[2], k[0], k[1], s[0], s[1], p[0], p[1]};
	unsigned id = cg_int_table(g, v, 12);
	os_printf(g->body, "\tcb_maxpool_argmax_f32(ti%u, %s, %s, %s);\n", id, PTR(s1, "float", a),
		  PTR(d0, "float", o), PTR(in->ops[2].val, "int64_t", b));
}

/* Instance normalization (reference kernel). */
void cg_emit_instancenorm(struct cg *g, struct ir_instr *in, const struct cg_emit_row *row)
{
	(void)row;
	char a[96], b[96], c[96], o[96];
	struct ir_value *d0 = in->ops[0].val, *s1 = in->ops[1].val;
	if (!all_float(g, in, 4, "only float instance normalization is compiled"))
		return;
	char fe[40];
	unsigned t = cg_dims_table(g, s1->type);
	os_printf(g->body, "\tcb_instancenorm_f32(%s, %s, %s, %s, tb%u, %u, %d, %s);\n", PTR(s1, "float", a),
		  PTR(d0, "float", o), PTR(in->ops[2].val, "float", b), PTR(in->ops[3].val, "float", c), t,
		  s1->type->rank, (int)ir_int(in, AN_channel_idx), cg_flit(fe, ir_float(in, AN_epsilon)));
}

/* GatherND: index tuples into the data's leading dimensions. */
void cg_emit_gathernd(struct cg *g, struct ir_instr *in, const struct cg_emit_row *row)
{
	(void)row;
	char a[96], b[96], o[96];
	struct ir_value *d0 = in->ops[0].val, *s1 = in->ops[1].val;
	struct ir_value *ix = in->ops[2].val;
	const struct type *it = ix->type;
	int ies = cg_int_es(ix);
	uint64_t m = it->rank ? it->dims[it->rank - 1] : 0;
	if (!ies || !m) {
		cg_unsupported(g, in, "indices must be int32/int64 tuples");
		return;
	}
	unsigned t = cg_dims_table(g, s1->type);
	os_printf(g->body, "\tif (cb_gathernd(%s, tb%u, %u, %s, %d, %" PRIu64 ", %" PRIu64 ", %d, %s, %zu))\n"
		  "\t\treturn -1;\n",
		  PTR(s1, "void", a), t, s1->type->rank, PTR(ix, "void", b), ies, type_numel(it) / m, m,
		  (int)ir_int(in, AN_batch_dims), PTR(d0, "void", o), elem_size((enum elem_kind)s1->type->elem));
}

/* Resizing by scale factors: nearest, or bilinear (row parameter
 * CG_RESIZE_BILINEAR). */
void cg_emit_resize(struct cg *g, struct ir_instr *in, const struct cg_emit_row *row)
{
	char a[96], o[96];
	struct ir_value *d0 = in->ops[0].val, *s1 = in->ops[1].val;
	unsigned n;
	bool bil = row->param == CG_RESIZE_BILINEAR;
	if (bil && !cg_is_float(d0)) {
		cg_unsupported(g, in, "only float bilinear resizing is compiled");
		return;
	}
	const double *sc = ir_floats(in, AN_scale, &n);
	unsigned id = g->uniq++;
	os_printf(g->decls, "static const double sc%u[] = {", id);
	for (unsigned i = 0; i < n; i++)
		os_printf(g->decls, "%s%.17g", i ? ", " : "", sc[i]);
	os_puts(g->decls, "};\n");
	unsigned t1 = cg_dims_table(g, s1->type), t2 = cg_dims_table(g, d0->type);
	os_printf(g->body, "\tcb_resize(%s, tb%u, %s, tb%u, sc%u, %u, %d, %zu);\n", PTR(s1, "void", a), t1,
		  PTR(d0, "void", o), t2, id, s1->type->rank, bil, elem_size((enum elem_kind)s1->type->elem));
}

/* The k largest along the last dimension, with their indices. */
void cg_emit_topk(struct cg *g, struct ir_instr *in, const struct cg_emit_row *row)
{
	(void)row;
	char a[96], b[96], c[96], o[96];
	struct ir_value *vals = in->ops[0].val, *ind = in->ops[1].val, *src = in->ops[2].val,
			*scr = in->ops[3].val;
	const struct type *t = src->type;
	uint64_t len = t->dims[t->rank - 1];
	if (!cg_is_float(src) || !cg_int_es(ind) || type_bytes(scr->type) < len * sizeof(size_t)) {
		cg_unsupported(g, in, "only float top-k with int32/int64 indices is compiled");
		return;
	}
	os_printf(g->body, "\tcb_topk_f32(%s, %s, %s, %d, %" PRIu64 ", %" PRIu64 ", %" PRId64 ", (size_t *)%s);\n",
		  PTR(src, "float", a), PTR(vals, "float", o), PTR(ind, "void", b), cg_int_es(ind),
		  len ? type_numel(t) / len : 0, len, ir_int(in, AN_k), PTR(scr, "void", c));
}

/* Cumulative sum along an axis. */
void cg_emit_cumsum(struct cg *g, struct ir_instr *in, const struct cg_emit_row *row)
{
	char a[96], o[96];
	struct ir_value *d0 = in->ops[0].val, *s1 = in->ops[1].val;
	int ies = cg_int_es(s1);
	if (!cg_is_float(s1) && !ies) {
		cg_unsupported(g, in, "only float and int32/int64 cumulative sums and products are compiled");
		return;
	}
	uint64_t outer, len, inner;
	cg_split_axis(s1->type, (unsigned)ir_int(in, AN_axis), &outer, &len, &inner);
	/* the row's param: 1 for cumprod's products */
	os_printf(g->body, "\tcb_cumsum(%s, %s, %" PRIu64 ", %" PRIu64 ", %" PRIu64 ", %d, %d, %d, %d);\n",
		  PTR(s1, "void", a), PTR(d0, "void", o), outer, len, inner, (int)ir_int(in, AN_exclusive),
		  (int)ir_int(in, AN_reverse), ies, (int)row->param);
}

/* Cross-entropy of probabilities against labels. */
void cg_emit_crossentropy(struct cg *g, struct ir_instr *in, const struct cg_emit_row *row)
{
	(void)row;
	char a[96], b[96], o[96];
	struct ir_value *d0 = in->ops[0].val;
	struct ir_value *p = in->ops[1].val, *l = in->ops[2].val;
	if (!cg_is_float(p) || !cg_is_float(d0) || !cg_int_es(l)) {
		cg_unsupported(g, in, "only float probabilities with int32/int64 labels are compiled");
		return;
	}
	os_printf(g->body, "\tif (cb_crossentropy_f32(%s, %s, %d, %" PRIu64 ", %" PRIu64 ", %s))\n\t\treturn -1;\n",
		  PTR(p, "float", a), PTR(l, "void", b), cg_int_es(l), p->type->dims[0], p->type->dims[1],
		  PTR(d0, "float", o));
}

/* A quantization profile: the running range and histogram of a tensor. */
void cg_emit_qprofile(struct cg *g, struct ir_instr *in, const struct cg_emit_row *row)
{
	(void)row;
	char a[96], b[96], e[96];
	struct ir_value *src = in->ops[0].val, *h = in->ops[1].val, *info = in->ops[2].val;
	if (!cg_is_float(src) || !cg_is_float(h) || !cg_is_float(info)) {
		cg_unsupported(g, in, "only float profiles are compiled");
		return;
	}
	uint64_t bins = type_numel(h->type);
	if (bins * sizeof(float) > g->scratch_bytes)
		g->scratch_bytes = bins * sizeof(float);
	os_printf(g->body, "\tcb_qprofile_f32(%s, %" PRIu64 ", %s, %" PRIu64 ", %s, (float *)(A + %" PRIu64 "));\n",
		  PTR(src, "float", a), type_numel(src->type), PTR(h, "float", b), bins, PTR(info, "float", e),
		  g->scratch_off);
}

/* GatherElements along an axis. */
void cg_emit_gatherelements(struct cg *g, struct ir_instr *in, const struct cg_emit_row *row)
{
	(void)row;
	char a[96], b[96], o[96];
	struct ir_value *d0 = in->ops[0].val, *s1 = in->ops[1].val;
	struct ir_value *ix = in->ops[2].val;
	int ies = cg_int_es(ix);
	if (!ies) {
		cg_unsupported(g, in, "indices must be int32/int64");
		return;
	}
	unsigned t1 = cg_dims_table(g, s1->type), t2 = cg_dims_table(g, ix->type);
	os_printf(g->body, "\tif (cb_gather_elements(%s, tb%u, %s, %d, tb%u, %u, %d, %s, %zu))\n\t\treturn -1;\n",
		  PTR(s1, "void", a), t1, PTR(ix, "void", b), ies, t2, ix->type->rank, (int)ir_int(in, AN_axis),
		  PTR(d0, "void", o), elem_size((enum elem_kind)s1->type->elem));
}

/* ScatterElements (row parameter CG_SCATTER_ELEMENTS) and ScatterND: the data copied, then the updates written. */
void cg_emit_scatter(struct cg *g, struct ir_instr *in, const struct cg_emit_row *row)
{
	char a[96], b[96], c[96], o[96];
	struct ir_value *d0 = in->ops[0].val, *s1 = in->ops[1].val;
	struct ir_value *ix = in->ops[2].val, *up = in->ops[3].val;
	int ies = cg_int_es(ix), red = (int)ir_int(in, AN_reduction), cls = cg_int_es(d0);
	const struct type *it = ix->type;
	if (!ies || (red && !cls && !cg_is_float(d0)) || (row->param != CG_SCATTER_ELEMENTS && !it->rank)) {
		cg_unsupported(g, in, "int32/int64 indices and, with a reduction, float or int32/int64 data needed");
		return;
	}
	if (!cg_same(g, d0, s1))
		os_printf(g->body, "\tmemmove(%s, %s, %" PRIu64 ");\n", PTR(d0, "uint8_t", o), PTR(s1, "uint8_t", a),
			  type_bytes(d0->type));
	unsigned t1 = cg_dims_table(g, d0->type);
	size_t es = elem_size((enum elem_kind)d0->type->elem);
	if (row->param == CG_SCATTER_ELEMENTS) {
		unsigned t2 = cg_dims_table(g, it);
		os_printf(g->body, "\tif (cb_scatter_elements(%s, tb%u, %s, %d, tb%u, %u, %d, %s, %d, %d, %zu))\n"
			  "\t\treturn -1;\n",
			  PTR(d0, "void", o), t1, PTR(ix, "void", b), ies, t2, it->rank, (int)ir_int(in, AN_axis),
			  PTR(up, "void", c), red, cls, es);
	} else {
		uint64_t m = it->dims[it->rank - 1];
		os_printf(g->body, "\tif (cb_scatter_nd(%s, tb%u, %u, %s, %d, %" PRIu64 ", %" PRIu64 ", %s, %d, %d, %zu))\n"
			  "\t\treturn -1;\n",
			  PTR(d0, "void", o), t1, d0->type->rank, PTR(ix, "void", b), ies, m ? type_numel(it) / m : 0, m,
			  PTR(up, "void", c), red, cls, es);
	}
}

/* A copy: a memmove, none onto itself. */
void cg_emit_copy(struct cg *g, struct ir_instr *in, const struct cg_emit_row *row)
{
	(void)row;
	char a[96], o[96];
	if (!cg_same(g, in->ops[0].val, in->ops[1].val))
		os_printf(g->body, "\tmemmove(%s, %s, %" PRIu64 ");\n", PTR(in->ops[0].val, "uint8_t", o),
			  PTR(in->ops[1].val, "uint8_t", a), type_bytes(in->ops[0].val->type));
}

/* A bitcast: the stored bytes, except into a nibble kind (the low four
 * bits, i4 sign-extended) or bool (whether the byte is nonzero), as the
 * interpreter's kern_bitcast. */
void cg_emit_bitcast(struct cg *g, struct ir_instr *in, const struct cg_emit_row *row)
{
	(void)row;
	char a[96], o[96];
	const struct type *t = in->ops[0].val->type;
	const char *e = NULL;
	switch ((enum elem_kind)t->elem) {
	case EK_I4: e = "(uint8_t)((s[i] & 8u) ? (s[i] | 0xf0u) : (s[i] & 0x0fu))"; break;
	case EK_U4: case EK_F4E2M1: e = "(uint8_t)(s[i] & 0x0fu)"; break;
	case EK_BOOL: e = "(uint8_t)(s[i] != 0)"; break;
	default: break;
	}
	if (!e) {
		cg_emit_copy(g, in, row);
		return;
	}
	os_printf(g->body,
		  "\t{\n\t\tconst uint8_t *s = %s;\n\t\tuint8_t *d = %s;\n"
		  "\t\tfor (size_t i = 0; i < %" PRIu64 "u; i++)\n\t\t\td[i] = %s;\n\t}\n",
		  PTR(in->ops[1].val, "uint8_t", a), PTR(in->ops[0].val, "uint8_t", o), type_bytes(t), e);
}

/* A splat: a loop that may fuse with its readers, else a plain fill. */
void cg_emit_splat(struct cg *g, struct ir_instr *in, const struct cg_emit_row *row)
{
	(void)row;
	char o[96];
	const struct type *t = in->ops[0].val->type;
	if (cg_ew_supported(in)) {
		cg_emit_ew(g, in);
		return;
	}
	const char *ct = cg_ctype(t->elem);
	if (!ct) {
		cg_unsupported(g, in, "element kind not compiled");
		return;
	}
	os_printf(g->body, "\tfor (size_t i = 0; i < %" PRIu64 "u; i++)\n\t\t%s[i] = (%s)%.17g;\n", type_numel(t),
		  PTR(in->ops[0].val, ct, o), ct, ir_float(in, AN_value));
}

/* Batched matrix products: the reference kernel (or cblas_sgemm). */
void cg_emit_batchmatmul(struct cg *g, struct ir_instr *in, const struct cg_emit_row *row)
{
	(void)row;
	char a[96], b[96], o[96];
	const struct type *lt = in->ops[1].val->type, *rt = in->ops[2].val->type;
	if (!cg_is_float(in->ops[0].val) || !cg_is_float(in->ops[1].val) || !cg_is_float(in->ops[2].val)) {
		cg_unsupported(g, in, "only float matrix products are compiled");
		return;
	}
	os_printf(g->body, "\t%s(%s, %s, 0, %s, %" PRIu64 ", %" PRIu64 ", %" PRIu64 ", %" PRIu64 ");\n",
		  g->gemm == CBACKEND_GEMM_OPENBLAS ? "cb_matmul_blas_f32" : "cb_matmul_f32",
		  PTR(in->ops[1].val, "float", a), PTR(in->ops[2].val, "float", b), PTR(in->ops[0].val, "float", o),
		  lt->dims[0], lt->dims[1], lt->dims[2], rt->dims[2]);
}

/* Softmax along an axis; log-softmax with row parameter CG_SOFTMAX_LOG. */
void cg_emit_softmax(struct cg *g, struct ir_instr *in, const struct cg_emit_row *row)
{
	char a[96], o[96];
	if (!cg_is_float(in->ops[0].val) || !cg_is_float(in->ops[1].val)) {
		cg_unsupported(g, in, "only float softmax is compiled");
		return;
	}
	uint64_t outer, d, inner;
	cg_split_axis(in->ops[1].val->type, (unsigned)ir_int(in, AN_axis), &outer, &d, &inner);
	os_printf(g->body, "\tcb_softmax_f32(%s, %s, %" PRIu64 ", %" PRIu64 ", %" PRIu64 ", %d);\n",
		  PTR(in->ops[1].val, "float", a), PTR(in->ops[0].val, "float", o), outer, d, inner,
		  row->param == CG_SOFTMAX_LOG);
}

/* Dest[b][i] = Src[b][i] + Slice[i], in the stored element type. */
void cg_emit_batchedadd(struct cg *g, struct ir_instr *in, const struct cg_emit_row *row)
{
	(void)row;
	char a[96], o[96];
	const struct type *t = in->ops[0].val->type;
	const char *ct = cg_ctype(t->elem);
	if (!ct || t->elem == EK_BOOL || in->ops[2].val->type->elem != t->elem) {
		cg_unsupported(g, in, "element kind not compiled");
		return;
	}
	uint64_t sl = type_numel(in->ops[2].val->type);
	char s[96];
	os_printf(g->body, "\tfor (size_t b = 0; b < %" PRIu64 "u; b++)\n\t\tfor (size_t i = 0; i < %" PRIu64
		  "u; i++)\n\t\t\t%s[b * %" PRIu64 "u + i] = (%s)(%s[b * %" PRIu64 "u + i] + %s[i]);\n",
		  t->dims[0], sl, PTR(in->ops[0].val, ct, o), sl, ct, PTR(in->ops[1].val, ct, a), sl,
		  PTR(in->ops[2].val, ct, s));
}

/* Arg max along an axis; arg min with row parameter CG_ARG_MIN. */
void cg_emit_argmax(struct cg *g, struct ir_instr *in, const struct cg_emit_row *row)
{
	char a[96], o[96];
	struct ir_value *src = in->ops[1].val, *dst = in->ops[0].val;
	if (!cg_is_float(src)) {
		cg_unsupported(g, in, "only float arg max/min is compiled");
		return;
	}
	uint64_t outer, d, inner;
	cg_split_axis(src->type, (unsigned)ir_int(in, AN_axis), &outer, &d, &inner);
	int i64 = dst->type->elem == EK_I64 || dst->type->elem == EK_INDEX64;
	os_printf(g->body, "\tcb_argmax_f32(%s, %s, %" PRIu64 ", %" PRIu64 ", %" PRIu64 ", %d, %d);\n",
		  PTR(src, "float", a), PTR(dst, "void", o), outer, d, inner, row->param == CG_ARG_MIN, i64);
}

/* Gather along an axis: slices of any element kind picked by indices. */
void cg_emit_gather(struct cg *g, struct ir_instr *in, const struct cg_emit_row *row)
{
	(void)row;
	char a[96], b[96], o[96];
	struct ir_value *dst = in->ops[0].val, *data = in->ops[1].val, *ind = in->ops[2].val;
	uint64_t outer, d, inner;
	cg_split_axis(data->type, (unsigned)ir_int(in, AN_axis), &outer, &d, &inner);
	int i64 = ind->type->elem == EK_I64 || ind->type->elem == EK_INDEX64;
	os_printf(g->body, "\tif (cb_gather(%s, %s, %s, %" PRIu64 ", %" PRIu64 ", %" PRIu64 ", %" PRIu64
		  ", %d, %zu))\n\t\treturn -1;\n",
		  PTR(data, "void", a), PTR(ind, "void", b), PTR(dst, "void", o), outer, d, inner,
		  type_numel(ind->type), i64, elem_size((enum elem_kind)data->type->elem));
}
