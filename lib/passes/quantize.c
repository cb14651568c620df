/* quantize.c - the Quantize step of the precision stage (glow-opt
 * -precision=quantize -profile=FILE): turns float computations into
 * quantized ones with the ranges a profiling run recorded
 * (docs/Quantization.md states the rules and the arithmetic).
 *
 * quantize (module pass). In every function, in order, a node of a kind
 * with a quantized kernel (PK_QUANT_KERNEL in KindFacts.def) whose kind is
 * not kept in float (-keep-float) and that has no predicate is quantized
 * when every float operand and result has parameters:
 *   - a constant: quantized here, at compile time, from its own range
 *     (a Convolution's or FullyConnected's Bias: qi32 with scale
 *     input scale * filter scale and offset 0, so the bias adds into the
 *     accumulator exactly, where its values fit int32 at that scale; else,
 *     and when it is not a constant, the bias stays float);
 *   - a Dequantize (the border of a node quantized before): its quantized
 *     input, as it is;
 *   - any other value: the profile's range of the value (its node's name
 *     and result index), through a Quantize right before the node;
 *   - a result: the profile's range of the result, except for the kinds
 *     that only move or select elements (Reshape, Transpose, Slice, Pad,
 *     Gather, MaxPool), whose result keeps the input's parameters, and
 *     Concat, whose inputs are all brought to the result's. These kinds
 *     and ArgMax are quantized only when an input is quantized already
 *     (comes from a Dequantize): quantizing a float value just to move or
 *     compare it would only add a border.
 * With per_channel, a Convolution or FullyConnected whose filter is a
 * constant becomes ChannelwiseQuantizedConvolution / ...FullyConnected
 * (qz_channelwise).
 * and when the backend supports the quantized form (is_op_supported with
 * the element kinds it would have). Each quantized result gets a Dequantize
 * right after the node that takes over its uses; the folding passes
 * (fold-quantization) then join the borders between quantized nodes.
 * A value the profile does not have leaves its node in float; a profile
 * entry the module has no value for is an error at the entry.
 *
 * The configuration is the tool's (ctx->quant, ctx->keep_float) with the
 * pass's options (quantize{profile=... schema=...}, quantize-opts.c).
 *
 * Requires: a verified module and a profile (-profile or profile=).
 * Preserves: validity and the module's interface (placeholders keep their
 * float types).
 */
#include "passes/quantize.h"
#include "backends/backend.h"
#include "graph/lowered.h"
#include "passes/kindfacts.h"
#include "passes/pass.h"
#include "passes/passutil.h"
#include "passes/target.h"
#include "support/hashmap.h"
#include "support/io.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const struct quant_options quant_options_default = {NULL, EK_QI8, QS_ASYMMETRIC, QC_NONE, false};

struct qz_state {
	struct module *m;
	struct pass_ctx *ctx;
	const struct quant_options *o;
	struct qprofile prof;
	bool keep[NK_COUNT];
	struct u64map quants; /* (value, type) -> its Quantize, per function */
	struct u64map consts; /* float constant -> its quantized twin (the last made) */
	struct qz_twin {
		struct constant *c;
		const struct type *t;
		struct node *twin;
	} *twins; /* every quantized twin made, by constant and type */
	size_t ntwins, captwins;
	uint64_t nodes, quantizes, constants, unprofiled;
	bool failed;
};

/* Whether operand i of kind k is a bias added into the accumulator. */
static bool qz_is_bias(unsigned k, unsigned i)
{
	return (k == NK_Convolution || k == NK_FullyConnected) && i == 2;
}

/* The parameters the options give a real range [lo, hi]; kind forces an
 * element kind (EK_FLOAT: the schema's own choice). */
static struct qparams qz_choose(const struct qz_state *s, float lo, float hi, enum elem_kind kind)
{
	return quant_choose_kind(lo, hi, s->o->schema, s->o->precision, kind);
}

/* The profiled range of value v, calibrated; false if not profiled. The
 * profile names the output of the user's graph v stands for (the
 * lowered-info map, graph/lowered.h), or v itself. */
static bool qz_profiled(struct qz_state *s, struct value v, float *lo, float *hi)
{
	const char *name;
	unsigned res;
	lowered_origin(s->m, v, &name, &res);
	struct qp_entry *e = name ? qprofile_find(&s->prof, name, res) : NULL;
	if (!e && v.node->name)
		e = qprofile_find(&s->prof, v.node->name, v.res);
	if (!e)
		return false;
	e->used = true;
	*lo = e->min;
	*hi = e->max;
	if (s->o->calibration == QC_KL)
		quant_kl_range(e, s->o->precision == EK_QI16 ? 65535u : 255u, lo, hi);
	return true;
}

/* The real values quantized type t represents. */
static void qz_type_range(const struct type *t, float *lo, float *hi)
{
	double qmin = t->elem == EK_QUI8 ? 0 : t->elem == EK_QI16 ? -32768 : -128;
	double qmax = t->elem == EK_QUI8 ? 255 : t->elem == EK_QI16 ? 32767 : 127;
	*lo = (float)((double)t->scale * (qmin - t->offset));
	*hi = (float)((double)t->scale * (qmax - t->offset));
}

static const struct type *qz_type(struct qz_state *s, const struct type *t, struct qparams p)
{
	return type_get_q(s->m->types, p.kind, t->dims, t->rank, p.scale, p.offset);
}

/* The range of float constant c's elements; false when it cannot be read
 * (reported). */
static bool qz_const_range(struct qz_state *s, struct constant *c, float *lo, float *hi)
{
	const struct type *t = node_type(&c->n);
	const uint8_t *data = constant_data(s->m, c, s->ctx->diag);
	if (!data)
		return false;
	const float *v = (const float *)(const void *)data;
	float a = 0, b = 0;
	for (uint64_t i = 0; i < type_numel(t); i++) {
		if (v[i] < a)
			a = v[i];
		if (v[i] > b)
			b = v[i];
	}
	*lo = a;
	*hi = b;
	return true;
}

/* A new constant of quantized type qt holding float constant c's values
 * (round half to even, saturated: the interpreter's st_f). */
static struct node *qz_const(struct qz_state *s, struct constant *c, const struct type *qt)
{
	/* a constant shared by nodes that want the same type is quantized once */
	for (size_t i = 0; i < s->ntwins; i++)
		if (s->twins[i].c == c && s->twins[i].t == qt)
			return s->twins[i].twin;
	const struct type *t = node_type(&c->n);
	const float *v = (const float *)(const void *)constant_data(s->m, c, s->ctx->diag);
	uint64_t n = type_numel(t);
	uint8_t *out = xmalloc((size_t)type_bytes(qt) + 1);
	double qmin, qmax;
	pu_quant_limits((enum elem_kind)qt->elem, &qmin, &qmax);
	for (uint64_t i = 0; i < n; i++) {
		double r = nearbyint((double)v[i] / qt->scale);
		if (r != r)
			r = 0;
		r += qt->offset;
		r = r < qmin ? qmin : r > qmax ? qmax : r;
		pu_store(qt, out, i, r);
	}
	struct constant *nc = pu_new_constant(s->m, qt, out, c->n.name);
	free(out);
	u64map_put(&s->consts, (uint64_t)(uintptr_t)c, nc);
	s->twins = xgrow(s->twins, &s->captwins, s->ntwins + 1, sizeof *s->twins);
	s->twins[s->ntwins++] = (struct qz_twin){c, qt, &nc->n};
	s->constants++;
	return &nc->n;
}

/* The quantized value standing for float operand v with type qt: the
 * Dequantize's input when that has type qt already, else a Quantize of v
 * (shared per value and type in the function). */
static struct value qz_operand(struct qz_state *s, struct func *f, struct value v, const struct type *qt,
			       struct node *before)
{
	if (v.node->kind == NK_Dequantize && op_type(v.node, 0) == qt)
		return op_val(v.node, 0);
	uint64_t key = ((uint64_t)(uintptr_t)v.node * 8 + v.res) ^ ((uint64_t)(uintptr_t)qt * 0x9e3779b97f4a7c15ull);
	struct node *q = u64map_get(&s->quants, key);
	if (!q || op_val(q, 0).node != v.node || node_type(q) != qt) {
		char name[256];
		snprintf(name, sizeof name, "%s.quant", v.node->name ? v.node->name : "q");
		q = node_create1(f, NK_Quantize, name, &v, 1, qt, before, before->loc);
		u64map_put(&s->quants, key, q);
		s->quantizes++;
	}
	return node_val(q, 0);
}

/* Whether the target runs kind with these element kinds. */
static bool qz_supported(const struct qz_state *s, unsigned kind, const enum elem_kind *elems, unsigned n)
{
	return target_supports_elems(s->ctx, kind, elems, n);
}

#define QZ_MAXOPS 64

/* A float as the double that prints as its shortest text (the attribute
 * lists of the per-channel kinds hold doubles; the kernels round them to
 * float, which gives f back). */
static double qz_short(float f)
{
	char buf[48];
	format_float(buf, sizeof buf, f);
	return strtod(buf, NULL);
}

/* Replaces Convolution / FullyConnected n, whose filter is a float
 * constant, by its per-channel kind: input of type in_q (a Quantize or a
 * quantized producer), result of type res_q, the filter quantized per
 * output channel with the schema over that channel's range (kind: the
 * precision's signed one), the bias kept float. False after an error was
 * reported. */
static bool qz_channelwise(struct qz_state *s, struct func *f, struct node *n, const struct type *in_q,
			   const struct type *res_q)
{
	bool conv = n->kind == NK_Convolution;
	unsigned kind = conv ? NK_ChannelwiseQuantizedConvolution : NK_ChannelwiseQuantizedFullyConnected;
	struct constant *c = as_constant(op_val(n, 1).node);
	const struct type *t = node_type(&c->n);
	const float *v = (const float *)(const void *)constant_data(s->m, c, s->ctx->diag);
	if (!v)
		return false;
	uint64_t num = type_numel(t), nch = conv ? t->dims[0] : t->dims[1], per = num / (nch ? nch : 1);
	enum elem_kind wk = s->o->precision;
	const struct type *wt = type_get_q(s->m->types, wk, t->dims, t->rank, 1.0f, 0);
	/* backend support with the kinds the node would have */
	enum elem_kind elems[4] = {(enum elem_kind)res_q->elem, (enum elem_kind)in_q->elem, wk,
				   (enum elem_kind)op_type(n, 2)->elem};
	if (!qz_supported(s, kind, elems, 4))
		return true;
	double *sc = xmalloc(nch * sizeof *sc + 1);
	int64_t *of = xmalloc(nch * sizeof *of + 1);
	float *clo = xmalloc(nch * sizeof *clo + 1), *chi = xmalloc(nch * sizeof *chi + 1);
	for (uint64_t ch = 0; ch < nch; ch++)
		clo[ch] = chi[ch] = 0;
	for (uint64_t i = 0; i < num; i++) {
		uint64_t ch = conv ? i / per : i % nch;
		clo[ch] = v[i] < clo[ch] ? v[i] : clo[ch];
		chi[ch] = v[i] > chi[ch] ? v[i] : chi[ch];
	}
	float *fsc = xmalloc(nch * sizeof *fsc + 1);
	for (uint64_t ch = 0; ch < nch; ch++) {
		struct qparams p = qz_choose(s, clo[ch], chi[ch], wk);
		fsc[ch] = p.scale;
		sc[ch] = qz_short(p.scale);
		of[ch] = p.offset;
	}
	double qmin = wk == EK_QI16 ? -32768 : -128, qmax = wk == EK_QI16 ? 32767 : 127;
	uint8_t *out = xmalloc((size_t)type_bytes(wt) + 1);
	for (uint64_t i = 0; i < num; i++) {
		uint64_t ch = conv ? i / per : i % nch;
		double r = nearbyint((double)v[i] / fsc[ch]);
		if (r != r)
			r = 0;
		r += (double)of[ch];
		pu_store(wt, out, i, r < qmin ? qmin : r > qmax ? qmax : r);
	}
	struct constant *nc = pu_new_constant(s->m, wt, out, c->n.name);
	u64map_put(&s->consts, (uint64_t)(uintptr_t)c, nc);
	s->constants++;
	free(out);
	free(clo);
	free(chi);
	free(fsc);
	/* the input as in_q, the node, its Dequantize */
	struct value in = op_val(n, 0);
	struct value qin = in.node->kind == NK_Dequantize && op_type(in.node, 0) == in_q ? op_val(in.node, 0)
											: qz_operand(s, f, in, in_q, n);
	struct value ops[3] = {qin, node_val(&nc->n, 0), op_val(n, 2)};
	struct node *cw = node_create1(f, kind, n->name, ops, 3, res_q, n, n->loc);
	if (conv) {
		static const enum attr_name attrs[] = {AN_kernels, AN_strides, AN_pads, AN_dilation};
		for (size_t a = 0; a < GLOW_ARRAY_SIZE(attrs); a++) {
			unsigned len;
			const int64_t *iv = node_ints(n, attrs[a], &len);
			node_set_ints(s->m, cw, attrs[a], iv, len);
		}
		node_set_int(s->m, cw, AN_group, node_int(n, AN_group));
	}
	node_set_floats(s->m, cw, conv ? AN_filter_scales : AN_weight_scales, sc, (unsigned)nch);
	node_set_ints(s->m, cw, conv ? AN_filter_offsets : AN_weight_offsets, of, (unsigned)nch);
	free(sc);
	free(of);
	char name[256];
	snprintf(name, sizeof name, "%s.dequant", n->name ? n->name : "q");
	struct node *back = node_create1(f, NK_Dequantize, name, (struct value[]){node_val(cw, 0)}, 1, node_type(n),
					 n->next, n->loc);
	value_replace_all_uses(node_val(n, 0), node_val(back, 0));
	const char *old = n->name;
	node_erase(f, n);
	/* the new node takes the old one's name (taken while both lived) */
	if (old)
		node_rename(f, cw, old);
	s->nodes++;
	return true;
}

/* Quantizes node n if it can; false after an error was reported. */
static bool qz_node(struct qz_state *s, struct func *f, struct node *n)
{
	if (!pk_has(n->kind, PK_QUANT_KERNEL) || s->keep[n->kind] || node_has_pred(n) || n->nops > QZ_MAXOPS)
		return true;
	const struct type *opq[QZ_MAXOPS];
	const struct type *resq[4] = {NULL, NULL, NULL, NULL};
	float lo[QZ_MAXOPS], hi[QZ_MAXOPS];
	bool any = false, from_q = false;
	/* the real range of every float operand (bias later: it needs the
	 * others' scales) */
	for (unsigned i = 0; i < n->nops; i++) {
		const struct type *t = op_type(n, i);
		opq[i] = t;
		if (t->elem != EK_FLOAT || qz_is_bias(n->kind, i)) {
			any |= t->elem == EK_FLOAT;
			continue;
		}
		any = true;
		struct value v = op_val(n, i);
		struct constant *c = as_constant(v.node);
		if (v.node->kind == NK_Dequantize) {
			opq[i] = op_type(v.node, 0); /* as it is, unless its kind must change */
			qz_type_range(opq[i], &lo[i], &hi[i]);
			from_q = true;
		} else if (c) {
			if (!qz_const_range(s, c, &lo[i], &hi[i]))
				return false;
		} else if (!qz_profiled(s, v, &lo[i], &hi[i])) {
			s->unprofiled++;
			return true;
		}
	}
	if (!any)
		return true;
	/* a kind that only moves elements is worth quantizing when its input
	 * is quantized already; else the border stays before its user */
	if ((pk_has(n->kind, PK_QUANT_SAME_PARAMS) || n->kind == NK_Concat || n->kind == NK_ArgMax) && !from_q)
		return true;
	/* the kinds other than the linear ones compute on one element kind:
	 * the first operand's, which every other operand and the result take */
	bool linear = n->kind == NK_Convolution || n->kind == NK_FullyConnected || n->kind == NK_MatMul ||
		      n->kind == NK_BatchMatMul;
	enum elem_kind one = EK_FLOAT;
	for (unsigned i = 0; i < n->nops; i++) {
		if (op_type(n, i)->elem != EK_FLOAT || qz_is_bias(n->kind, i))
			continue;
		bool as_is = op_val(n, i).node->kind == NK_Dequantize && (one == EK_FLOAT || opq[i]->elem == one);
		if (!as_is) {
			struct qparams p = qz_choose(s, lo[i], hi[i], linear ? EK_FLOAT : one);
			opq[i] = qz_type(s, op_type(n, i), p);
		}
		if (!linear && one == EK_FLOAT)
			one = (enum elem_kind)opq[i]->elem;
	}
	/* result parameters */
	for (unsigned r = 0; r < n->nres; r++) {
		const struct type *t = n->types[r];
		resq[r] = t;
		if (t->elem != EK_FLOAT)
			continue;
		if (pk_has(n->kind, PK_QUANT_SAME_PARAMS)) {
			resq[r] = type_get_q(s->m->types, (enum elem_kind)opq[0]->elem, t->dims, t->rank, opq[0]->scale,
					     opq[0]->offset);
			continue;
		}
		float rlo, rhi;
		if (!qz_profiled(s, node_val(n, r), &rlo, &rhi)) {
			s->unprofiled++;
			return true;
		}
		resq[r] = qz_type(s, t, qz_choose(s, rlo, rhi, linear || n->kind == NK_Concat ? EK_FLOAT : one));
	}
	if (n->kind == NK_Concat)
		for (unsigned i = 0; i < n->nops; i++)
			if (op_type(n, i)->elem == EK_FLOAT)
				opq[i] = type_with_dims(s->m->types, resq[0], op_type(n, i)->dims, op_type(n, i)->rank);
	for (unsigned i = 0; i < n->nops; i++)
		if (qz_is_bias(n->kind, i) && op_type(n, i)->elem == EK_FLOAT) {
			/* a constant bias whose values fit int32 at the accumulator's
			 * scale becomes qi32; any other bias stays float (the
			 * kernels round it per element: with 16-bit operands the
			 * accumulator's scale is small enough to overflow int32) */
			const struct type *t = op_type(n, i);
			float acc = opq[0]->scale * opq[1]->scale, blo, bhi;
			struct constant *c = as_constant(op_val(n, i).node);
			if (c && !qz_const_range(s, c, &blo, &bhi))
				return false;
			if (c && fmax(-blo, bhi) / acc < 2147483647.0)
				opq[i] = type_get_q(s->m->types, EK_QI32, t->dims, t->rank, acc, 0);
		}
	/* an operand that must stay float (a kind with mixed operands) or any
	 * operand left float but a bias means the node stays as it is */
	for (unsigned i = 0; i < n->nops; i++)
		if (opq[i]->elem == EK_FLOAT && !qz_is_bias(n->kind, i))
			return true;
	if (s->o->per_channel && (n->kind == NK_Convolution || n->kind == NK_FullyConnected) &&
	    as_constant(op_val(n, 1).node))
		return qz_channelwise(s, f, n, opq[0], resq[0]);
	enum elem_kind elems[QZ_MAXOPS + 4];
	unsigned ne = 0;
	for (unsigned r = 0; r < n->nres; r++)
		elems[ne++] = (enum elem_kind)resq[r]->elem;
	for (unsigned i = 0; i < n->nops; i++)
		elems[ne++] = (enum elem_kind)opq[i]->elem;
	if (!qz_supported(s, n->kind, elems, ne))
		return true;
	/* rewrite */
	for (unsigned i = 0; i < n->nops; i++) {
		if (op_type(n, i)->elem != EK_FLOAT || opq[i]->elem == EK_FLOAT)
			continue;
		struct value v = op_val(n, i);
		struct constant *c = as_constant(v.node);
		struct value qv = c ? node_val(qz_const(s, c, opq[i]), 0) : qz_operand(s, f, v, opq[i], n);
		node_set_operand(n, i, qv);
	}
	for (unsigned r = 0; r < n->nres; r++) {
		const struct type *t = n->types[r];
		if (t->elem != EK_FLOAT)
			continue;
		struct value v = node_val(n, r);
		char name[256];
		snprintf(name, sizeof name, "%s.dequant", n->name ? n->name : "q");
		struct node *back = node_create1(f, NK_Dequantize, name, &v, 1, t, n->next, n->loc);
		value_replace_all_uses(v, node_val(back, 0));
		node_set_operand(back, 0, v);
		n->types[r] = resq[r];
	}
	s->nodes++;
	return true;
}

/* lowered_for_each's step: marks the profile's entry of map entry e. */
static int qz_mark_origin(void *arg, const struct lowered_entry *e)
{
	struct qp_entry *pe = qprofile_find(arg, e->name, e->res);
	if (pe)
		pe->used = true;
	return 0;
}

/* Every value the profile names must be one of the module's, by its own
 * name or as the lowered-info map's origin of one: a profile of another
 * model (or another pipeline) is reported at its first stray entry. */
static bool qz_check_names(struct qz_state *s)
{
	for (size_t i = 0; i < s->prof.n; i++)
		s->prof.v[i].used = false;
	lowered_for_each(s->m, qz_mark_origin, &s->prof);
	for (size_t i = 0; i < s->prof.n; i++) {
		struct qp_entry *e = &s->prof.v[i];
		bool found = e->used;
		e->used = false;
		struct node *g = found ? NULL : module_find_global(s->m, e->name);
		found |= g && g->kind == NK_Placeholder && e->output == 0;
		for (size_t fi = 0; fi < s->m->nfuncs && !found; fi++) {
			struct node *n = func_find(s->m->funcs[fi], e->name);
			found = n && e->output < n->nres;
		}
		if (!found) {
			diag_error(s->ctx->diag, e->loc, "the profile names value \"%s\" result %lld, which the module does not have",
				   e->name, (long long)e->output);
			return false;
		}
	}
	return true;
}

/* pu_rewrite_funcs's step: quantizes n unless it is a Quantize or
 * Dequantize already or a storage node; false on an error (reported). */
static bool qz_visit(void *arg, struct func *f, struct node *n)
{
	struct qz_state *s = arg;
	return n->kind == NK_Quantize || n->kind == NK_Dequantize || node_is_storage(n) || qz_node(s, f, n);
}

bool quantize_run(struct module *m, struct pass_ctx *ctx)
{
	struct qz_state s;
	memset(&s, 0, sizeof s);
	struct quant_options o;
	if (!quant_pass_options(ctx, &o, s.keep))
		return false;
	s.m = m;
	s.ctx = ctx;
	s.o = &o;
	if (qprofile_read(&s.prof, o.profile, ctx->diag))
		return false;
	u64map_init(&s.consts);
	if (!qz_check_names(&s)) {
		u64map_free(&s.consts);
		qprofile_free(&s.prof);
		return false;
	}
	s.failed = !pu_rewrite_funcs(m, &s.quants, qz_visit, &s);
	pu_rename_const_twins(s.m, &s.consts);
	u64map_free(&s.consts);
	free(s.twins);
	qprofile_free(&s.prof);
	pass_stat(ctx, "Number of nodes quantized", s.nodes);
	pass_stat(ctx, "Number of Quantize nodes inserted", s.quantizes);
	pass_stat(ctx, "Number of constants quantized", s.constants);
	pass_stat(ctx, "Number of nodes left float for want of a profiled range", s.unprofiled);
	return s.nodes != 0;
}
