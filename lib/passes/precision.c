/* precision.c - precision conversion: float computations to float16 or
 * bfloat16, and the cleanup of conversions that cancel.
 *
 * convert-to-fp16 / convert-to-bf16 (module passes). Every node that
 * computes on float (32-bit) values, whose kind is not kept in float, is
 * rewritten to compute on the half kind:
 *   - each float operand becomes a half one: a constant is replaced by a
 *     new constant of the half kind (values rounded to nearest even; splat
 *     and zero constants stay splat and zero; a constant shared by several
 *     nodes is converted once, and nodes left in float keep the original);
 *     any other value gets a ConvertTo to the half kind right before the
 *     node (one per value and function, shared by its converted users);
 *   - each float result gets the half type, and a ConvertTo back to float
 *     right after the node takes over all its uses.
 * So every border between float and half code carries a ConvertTo, and the
 * module's interface does not change: placeholders keep their types (their
 * reads and Saves go through ConvertTo). Non-float operands and results
 * (indices, bools, quantized values) are left as they are.
 *
 * Kinds never converted: Save (its operand has the placeholder's type),
 * ConvertTo itself, the quantization kinds (Quantize, Dequantize,
 * RescaleQuantized, QuantizationProfile, whose float side is part of their
 * contract) and nodes with a predicate. Kinds listed in the pass context's
 * keep_float (glow-opt -keep-float=Kind,...) stay in float too, and so do
 * the nodes whose half form the target does not run (is_op_supported with
 * the half element kinds: on -backend=c a Convolution stays float).
 *
 * optimize-conversions (function pass) removes conversions that cancel
 * exactly:
 *   - ConvertTo(x) of x's own type -> x;
 *   - ConvertTo(ConvertTo(y)) back to y's type where the inner conversion
 *     is exact (widening: float16 or bfloat16 to float, i32 to i64, index32
 *     to index64) -> y. This is what removes the float16 -> float ->
 *     float16 pair between two converted nodes.
 *   - ConvertTo(Dequantize(q)) from float to float16 or bfloat16, the
 *     Dequantize read only there -> Dequantize(q) into the half kind (the
 *     border of a quantized node and a half one: -precision=quantize with
 *     -convert-to-fp16).
 * It does NOT cancel float -> float16 -> float (or any pair whose inner
 * conversion narrows): that pair rounds, and removing it would change the
 * result. Every rewrite of this pass is bit-exact.
 *
 * Numerics of the conversion: values are rounded to the half kind at every
 * border and after every converted node (the interpreter computes in
 * float/double and rounds the result once into float16/bfloat16), so
 * results differ from float ones by the half kind's precision (float16: 11
 * significant bits, range +-65504; bfloat16: 8 bits, float's range).
 *
 * Requires: a verified module. Preserves: validity and the placeholders'
 * types.
 */
#include "passes/kindfacts.h"
#include "passes/pass.h"
#include "passes/passutil.h"
#include "passes/target.h"
#include "support/hashmap.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* State of one conversion run. */
struct pr_state {
	const struct pass_ctx *ctx;
	struct module *m;
	enum elem_kind half;
	bool keep[NK_COUNT];
	struct u64map consts; /* old constant -> its converted twin */
	struct u64map cvts;   /* (value) -> its ConvertTo to half, per function */
	struct diag *d;
	uint64_t nodes, inserted, constants;
	bool failed;
};

/* Parses the comma-separated kind list into keep[]; false after reporting
 * an unknown kind. */
static bool pr_parse_keep(struct pr_state *s, const char *list)
{
	bool ok = true;
	if (!list)
		return true;
	while (*list) {
		size_t len = strcspn(list, ",");
		int k = len ? node_kind_lookup(list, len) : -1;
		if (k < 0 || k == NK_Placeholder || k == NK_Constant) {
			diag_error(s->d, LOC_NONE, "-keep-float: unknown node kind '%.*s'", (int)len, list);
			ok = false;
		} else
			s->keep[k] = true;
		list += len + (list[len] == ',');
	}
	return ok;
}

static bool is_f32(const struct type *t) { return t->elem == EK_FLOAT; }

#define PR_MAXELEMS 136

/* Whether the target runs n in the half kind: n's element kinds, results
 * then operands (is_op_supported's order), every float one made half. */
static bool pr_half_supported(const struct pr_state *s, const struct node *n)
{
	enum elem_kind e[PR_MAXELEMS];
	unsigned c = 0;
	for (unsigned r = 0; r < n->nres && c < PR_MAXELEMS; r++)
		e[c++] = is_f32(n->types[r]) ? s->half : (enum elem_kind)n->types[r]->elem;
	for (unsigned i = 0; i < n->nops && c < PR_MAXELEMS; i++)
		e[c++] = is_f32(op_type(n, i)) ? s->half : (enum elem_kind)op_type(n, i)->elem;
	return target_supports_elems(s->ctx, n->kind, e, c);
}

/* Whether n computes on float values and may be converted: the target
 * runs its half form. */
static bool pr_convertible(const struct pr_state *s, const struct node *n)
{
	if (node_is_storage(n) || pk_has(n->kind, PK_KEEP_PRECISION) || s->keep[n->kind] || node_has_pred(n))
		return false;
	bool any = false;
	for (unsigned i = 0; i < n->nops; i++)
		any |= is_f32(op_type(n, i));
	for (unsigned r = 0; r < n->nres; r++)
		any |= is_f32(n->types[r]);
	return any && pr_half_supported(s, n);
}

/* The half twin of float constant c; NULL after an unreadable weight was
 * reported. */
static struct constant *pr_constant(struct pr_state *s, struct constant *c)
{
	void *hit = u64map_get(&s->consts, (uint64_t)(uintptr_t)c);
	if (hit)
		return hit;
	const struct type *t = node_type(&c->n);
	const struct type *ht = type_with_elem(s->m->types, t, s->half);
	struct constant *nc;
	if (c->init == INIT_SPLAT || c->init == INIT_ZERO) {
		nc = module_add_constant(s->m, module_fresh_name(s->m, c->n.name), ht, LOC_NONE);
		glow_assert(nc);
		nc->init = c->init;
		/* the value the half kind holds, so the text shows it exactly */
		uint8_t one[2];
		pu_store(ht, one, 0, c->splat_f);
		nc->splat_f = c->init == INIT_SPLAT ? pu_load(ht, one, 0) : 0;
	} else {
		const uint8_t *data = constant_data(s->m, c, s->d);
		if (!data)
			return NULL;
		uint64_t n = type_numel(t);
		uint8_t *out = xmalloc((size_t)type_bytes(ht) + 1);
		for (uint64_t i = 0; i < n; i++)
			pu_store(ht, out, i, pu_load(t, data, i));
		nc = pu_new_constant(s->m, ht, out, c->n.name);
		free(out);
	}
	s->constants++;
	u64map_put(&s->consts, (uint64_t)(uintptr_t)c, nc);
	return nc;
}

/* A ConvertTo of v to type t right before `before`, named "<base>.<kind>"
 * ("x.float16", and "x.float" for the conversion back). */
static struct node *pr_convert(struct func *f, struct value v, const struct type *t, struct node *before,
			       const char *base)
{
	char buf[256];
	const char *name = base;
	if (base) {
		int len = snprintf(buf, sizeof buf, "%s.%s", base, elem_name((enum elem_kind)t->elem));
		if (len > 0 && (size_t)len < sizeof buf)
			name = buf;
	}
	return node_create1(f, NK_ConvertTo, name, &v, 1, t, before, before ? before->loc : LOC_NONE);
}

/* Converts node n; false after an error was reported. */
static bool pr_convert_node(struct pr_state *s, struct func *f, struct node *n)
{
	struct type_ctx *tc = s->m->types;
	for (unsigned i = 0; i < n->nops; i++) {
		const struct type *t = op_type(n, i);
		if (!is_f32(t))
			continue;
		struct value v = op_val(n, i);
		struct constant *c = as_constant(v.node);
		if (c) {
			struct constant *nc = pr_constant(s, c);
			if (!nc)
				return false;
			node_set_operand(n, i, node_val(&nc->n, 0));
			continue;
		}
		uint64_t key = (uint64_t)(uintptr_t)v.node * 8 + v.res;
		struct node *cv = u64map_get(&s->cvts, key);
		if (!cv) {
			cv = pr_convert(f, v, type_with_elem(tc, t, s->half), n, v.node->name);
			u64map_put(&s->cvts, key, cv);
			s->inserted++;
		}
		node_set_operand(n, i, node_val(cv, 0));
	}
	for (unsigned r = 0; r < n->nres; r++) {
		const struct type *t = n->types[r];
		if (!is_f32(t))
			continue;
		struct value v = node_val(n, r);
		/* the ConvertTo back takes over every use, then reads v */
		struct node *back = pr_convert(f, v, t, n->next, n->name);
		value_replace_all_uses(v, node_val(back, 0));
		node_set_operand(back, 0, v);
		n->types[r] = type_with_elem(tc, t, s->half);
		s->inserted++;
	}
	s->nodes++;
	return true;
}

/* pu_rewrite_funcs's step: converts n when it is convertible; false on an
 * error (reported). */
static bool pr_visit(void *arg, struct func *f, struct node *n)
{
	struct pr_state *s = arg;
	return !pr_convertible(s, n) || pr_convert_node(s, f, n);
}

static bool pr_run(struct module *m, struct pass_ctx *ctx, enum elem_kind half)
{
	struct pr_state s;
	memset(&s, 0, sizeof s);
	s.ctx = ctx;
	s.m = m;
	s.half = half;
	s.d = ctx->diag;
	if (!pr_parse_keep(&s, ctx->keep_float))
		return false;
	u64map_init(&s.consts);
	s.failed = !pu_rewrite_funcs(m, &s.cvts, pr_visit, &s);
	pu_rename_const_twins(s.m, &s.consts);
	u64map_free(&s.consts);
	pass_stat(ctx, "Number of nodes converted", s.nodes);
	pass_stat(ctx, "Number of ConvertTo nodes inserted", s.inserted);
	pass_stat(ctx, "Number of constants converted", s.constants);
	return s.nodes != 0;
}

bool convert_to_fp16_run(struct module *m, struct pass_ctx *ctx) { return pr_run(m, ctx, EK_FLOAT16); }

bool convert_to_bf16_run(struct module *m, struct pass_ctx *ctx) { return pr_run(m, ctx, EK_BFLOAT16); }

/* ------------------------------------------------------------------ */
/* optimize-conversions                                                */

/* Whether converting from kind a to kind b keeps every value exactly. */
static bool pr_exact(enum elem_kind a, enum elem_kind b)
{
	if (a == b)
		return true;
	switch (b) {
	case EK_FLOAT: return a == EK_FLOAT16 || a == EK_BFLOAT16;
	case EK_I64: return a == EK_I32;
	case EK_INDEX64: return a == EK_INDEX32;
	default: return false;
	}
}

bool optimize_conversions_run(struct func *f, struct pass_ctx *ctx)
{
	uint64_t identity = 0, pairs = 0;
	func_for_each_safe(f, n, next) {
		(void)next;
		if (n->kind != NK_ConvertTo || node_has_pred(n))
			continue;
		struct value x = op_val(n, 0);
		const struct type *t = node_type(n);
		if (val_type(x) == t) {
			pu_replace(f, n, x);
			identity++;
			continue;
		}
		struct node *in = x.node;
		/* a Dequantize read only by a conversion to another float kind
		 * dequantizes into that kind (the interpreter rounds the real
		 * value to float, then to the kind, either way) */
		if (in->kind == NK_Dequantize && !node_has_pred(in) && elem_is_float((enum elem_kind)t->elem) &&
		    val_type(x)->elem == EK_FLOAT && node_num_uses(in, -1) == 1) {
			in->types[0] = t;
			pu_replace(f, n, x);
			pairs++;
			continue;
		}
		if (in->kind != NK_ConvertTo || node_has_pred(in))
			continue;
		struct value y = op_val(in, 0);
		const struct type *mid = val_type(x);
		if (val_type(y) == t && !elem_is_quantized((enum elem_kind)mid->elem) &&
		    !elem_is_quantized((enum elem_kind)t->elem) &&
		    pr_exact((enum elem_kind)t->elem, (enum elem_kind)mid->elem)) {
			pu_replace(f, n, y);
			pairs++;
		}
	}
	pass_stat(ctx, "Number of identity conversions removed", identity);
	pass_stat(ctx, "Number of conversion pairs cancelled", pairs);
	return identity || pairs;
}
