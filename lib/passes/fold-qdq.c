/* fold-qdq.c - QDQ folding (fold-qdq, function pass, repeated until
 * nothing changes): a float node between Dequantize operands and a
 * Quantize result becomes the quantized node, as a QDQ model (ONNX's float
 * operators wrapped in DequantizeLinear/QuantizeLinear pairs) means it.
 *
 *   - data movement (PK_QUANT_SAME_PARAMS kinds: Reshape, Transpose,
 *     Slice, Pad, Gather, MaxPool) of Dequantize(q) becomes Dequantize of
 *     the movement of q, and Concat of Dequantizes of one type likewise
 *     (exact: the movement copies stored integers; Pad's value must be
 *     representable);
 *   - Quantizes (to one type) of such a movement of x become the movement
 *     of Quantize(x) (exact: quantizing commutes with copying and, being
 *     monotonic, with MaxPool);
 *   - a requantizing kind (PK_REQUANTIZES: Convolution, FullyConnected,
 *     MatMul, BatchMatMul, AvgPool, AdaptiveAvgPool, Add, Sub, Mul, Max,
 *     Min, Relu, Clip, Sigmoid, Tanh) whose float operands are all
 *     Dequantizes (a linear kind's bias may also be a float constant) and
 *     whose uses are all Quantizes to one type T becomes the quantized
 *     kind with result T, when the target supports it; the element kinds
 *     must agree as the quantized kernels need (the linear kinds take any);
 *     such a node under a Relu or Clip whose clipping T's range makes
 *     redundant becomes the quantized node with result T (the saturation
 *     clips, as fold-quantization folds the quantized pair);
 *   - a Relu or Clip of a Transpose or Reshape, read by Quantizes only,
 *     becomes the movement of the Relu or Clip (exact), so the Quantize
 *     reaches the node under them;
 *   - Quantize(Dequantize(x)) : T becomes x when x has type T, else
 *     RescaleQuantized(x) : T (as fold-quantization does), and a quantized
 *     Relu or Clip of a value of its own type that clips nothing goes;
 *   - Quantizes and Dequantizes that nothing reads are erased.
 *
 * The fused node rounds once where the float node and the Quantize round
 * twice, so results may differ from the float graph by one quantization
 * step: the integer arithmetic is docs/Quantization.md's. The ONNX
 * importer runs it on every imported function (fold_qdq_func), so an
 * imported QDQ model is a quantized graph.
 *
 * Requires: a verified function. Preserves: validity.
 */
#include "passes/fold-qdq.h"
#include "passes/kindfacts.h"
#include "passes/pass.h"
#include "passes/passutil.h"
#include "passes/target.h"

#include <math.h>
#include <stdio.h>

#define QDQ_MAXOPS 16

static bool qdq_is_deq(struct value v) { return v.node->kind == NK_Dequantize && v.res == 0; }

/* The linear kinds, whose quantized kernels take operands of any quantized
 * kinds (and operand 2, the bias, also in float). */
static bool qdq_linear(unsigned kind)
{
	return kind == NK_Convolution || kind == NK_FullyConnected || kind == NK_MatMul || kind == NK_BatchMatMul;
}

/* Erases n when nothing uses it, then its operands that became unused
 * (pure computing nodes only). */
static void qdq_erase_dead(struct func *f, struct node *n)
{
	if (!n || node_is_storage(n) || node_has_uses(n) || !(node_desc(n->kind)->flags & NF_PURE))
		return;
	struct node *ops[QDQ_MAXOPS];
	unsigned k = 0;
	for (unsigned i = 0; i < n->nops && k < QDQ_MAXOPS; i++)
		ops[k++] = op_val(n, i).node;
	node_erase(f, n);
	for (unsigned i = 0; i < k; i++)
		qdq_erase_dead(f, ops[i]);
}

/* A node of n's kind and attributes on ops, with n's result types but
 * result 0 of type t0, placed before `before` and named after `like`
 * (n when NULL). */
static struct node *qdq_clone(struct func *f, const struct node *n, const struct value *ops, const struct type *t0,
			      struct node *before, const struct node *like)
{
	const struct type *types[8];
	for (unsigned r = 0; r < n->nres && r < 8; r++)
		types[r] = r ? n->types[r] : t0;
	char name[256];
	like = like ? like : n;
	snprintf(name, sizeof name, "%s.q", like->name ? like->name : "q");
	struct node *c = node_create(f, n->kind, name, ops, n->nops, types, before, n->loc);
	node_copy_attrs(f->mod, c, n);
	return c;
}

/* Pad's constant value is exactly a value of quantized type t. */
static bool qdq_pad_ok(const struct node *n, const struct type *t)
{
	if (n->kind != NK_Pad)
		return true;
	if (node_int(n, AN_mode) != 0)
		return true;
	double qmin, qmax, v = node_float(n, AN_value);
	pu_quant_limits((enum elem_kind)t->elem, &qmin, &qmax);
	double q = nearbyint(v / (double)t->scale) + t->offset;
	return q >= qmin && q <= qmax && (float)((double)t->scale * (q - t->offset)) == (float)v;
}

/* Whether the results of n other than result 0 are unused. */
static bool qdq_only_res0_used(const struct node *n)
{
	return n->nres == 1 || node_num_uses(n, -1) == node_num_uses(n, 0);
}

/* The type every use of n's result 0 quantizes it to; NULL unless every
 * use is a Quantize to one type. */
static const struct type *qdq_use_type(const struct node *n)
{
	const struct type *t = NULL;
	for (const struct use *u = n->uses; u; u = u->next) {
		const struct node *q = use_user(u);
		if (q->kind != NK_Quantize || u->idx != 0 || (t && q->types[0] != t))
			return NULL;
		t = q->types[0];
	}
	return t;
}

/* Movement n of Dequantize(q) (Concat: of Dequantizes of one type) ->
 * Dequantize(movement of q). */
static bool qdq_sink(struct func *f, struct node *n)
{
	bool concat = n->kind == NK_Concat;
	if (!concat && (!pk_has(n->kind, PK_QUANT_SAME_PARAMS) || !qdq_is_deq(op_val(n, 0))))
		return false;
	if (node_has_pred(n) || n->nops > QDQ_MAXOPS || !qdq_only_res0_used(n) || !node_has_uses(n))
		return false;
	struct value ops[QDQ_MAXOPS];
	const struct type *qt = NULL;
	for (unsigned i = 0; i < n->nops; i++) {
		ops[i] = op_val(n, i);
		if (i && !concat)
			continue;
		if (!qdq_is_deq(ops[i]))
			return false;
		ops[i] = op_val(ops[i].node, 0);
		if (qt && val_type(ops[i])->elem != qt->elem)
			return false;
		if (qt && (val_type(ops[i])->scale != qt->scale || val_type(ops[i])->offset != qt->offset))
			return false;
		qt = val_type(ops[i]);
	}
	const struct type *rt = n->types[0];
	const struct type *t0 = type_with_dims(f->mod->types, qt, rt->dims, rt->rank);
	if (!qdq_pad_ok(n, t0))
		return false;
	struct node *m = qdq_clone(f, n, ops, t0, n, NULL);
	struct value mv = node_val(m, 0);
	struct node *d = node_create1(f, NK_Dequantize, NULL, &mv, 1, rt, n, n->loc);
	value_replace_all_uses(node_val(n, 0), node_val(d, 0));
	if (node_has_uses(n)) /* other results (MaxPool's Argmax) */
		node_replace_all_uses(n, m);
	const char *name = n->name;
	qdq_erase_dead(f, n);
	node_rename(f, d, name);
	return true;
}

/* Quantizes of movement n of x, all to type T -> the movement of
 * Quantize(x) (Concat: of each input quantized to T, once per value). */
static bool qdq_hoist(struct func *f, struct node *qn)
{
	struct value mv = op_val(qn, 0);
	struct node *n = mv.node;
	bool concat = n->kind == NK_Concat;
	const struct type *t = qn->types[0];
	if (mv.res || (!concat && !pk_has(n->kind, PK_QUANT_SAME_PARAMS)) || node_is_storage(n) || node_has_pred(n) ||
	    n->nops > QDQ_MAXOPS || qdq_is_deq(op_val(n, 0)) || qdq_use_type(n) != t ||
	    !qdq_pad_ok(n, t))
		return false;
	struct value ops[QDQ_MAXOPS];
	for (unsigned i = 0; i < n->nops; i++) {
		ops[i] = op_val(n, i);
		if (i && !concat)
			continue;
		const struct type *xt = val_type(ops[i]);
		if (!elem_is_float((enum elem_kind)xt->elem))
			return false;
	}
	struct node *first = n->uses ? use_user(n->uses) : qn;
	for (unsigned i = 0; i < (concat ? n->nops : 1u); i++) {
		unsigned k = 0;
		while (k < i && !(op_val(n, k).node == op_val(n, i).node && op_val(n, k).res == op_val(n, i).res))
			k++;
		if (k < i) {
			ops[i] = ops[k];
			continue;
		}
		const struct type *xt = val_type(ops[i]);
		const struct type *it = type_with_dims(f->mod->types, t, xt->dims, xt->rank);
		char name[256];
		snprintf(name, sizeof name, "%s.q", ops[i].node->name ? ops[i].node->name : "q");
		ops[i] = node_val(node_create1(f, NK_Quantize, name, &ops[i], 1, it, n, n->loc), 0);
	}
	struct node *m = qdq_clone(f, n, ops, t, n, first);
	for (struct use *u = n->uses; u; u = n->uses)
		pu_replace(f, use_user(u), node_val(m, 0));
	qdq_erase_dead(f, n);
	return true;
}

/* The quantized operands of requantizing node n (Dequantizes: their
 * inputs; a linear kind's bias may stay a float constant) into ops, for a
 * result of type t; false if n cannot be quantized so. */
static bool qdq_operands(const struct node *n, const struct type *t, struct value *ops)
{
	if (!pk_has(n->kind, PK_REQUANTIZES) || n->nres != 1 || node_has_pred(n) || n->nops > QDQ_MAXOPS ||
	    !elem_is_float((enum elem_kind)n->types[0]->elem))
		return false;
	bool linear = qdq_linear(n->kind);
	for (unsigned i = 0; i < n->nops; i++) {
		ops[i] = op_val(n, i);
		if (qdq_is_deq(ops[i])) {
			ops[i] = op_val(ops[i].node, 0);
			if (!linear && val_type(ops[i])->elem != t->elem)
				return false;
		} else if (!(linear && i == 2 && ops[i].node->kind == NK_Constant)) {
			return false;
		}
	}
	return true;
}

/* Relu or Clip n clips no real value of quantized type t. */
static bool qdq_clip_redundant(const struct node *n, const struct type *t)
{
	double qmin, qmax, lo_ok = 0, hi_ok = INFINITY;
	if (n->kind == NK_Clip) {
		lo_ok = node_float(n, AN_min);
		hi_ok = node_float(n, AN_max);
	}
	pu_quant_limits((enum elem_kind)t->elem, &qmin, &qmax);
	return (double)t->scale * (qmin - t->offset) >= lo_ok && (double)t->scale * (qmax - t->offset) <= hi_ok;
}

/* Relu or Clip n of a requantizing node used only by n, whose result
 * type t represents no real value that n would clip: that node, as
 * fold-quantization folds the quantized pair (the saturation of the
 * requantization clips). NULL otherwise. */
static struct node *qdq_clipped(const struct node *n, const struct type *t)
{
	if ((n->kind != NK_Relu && n->kind != NK_Clip) || node_has_pred(n))
		return NULL;
	struct value x = op_val(n, 0);
	if (x.res || node_is_storage(x.node) || !pk_has(x.node->kind, PK_REQUANTIZES) ||
	    node_num_uses(x.node, -1) != 1)
		return NULL;
	return qdq_clip_redundant(n, t) ? x.node : NULL;
}

/* A requantizing kind n between Dequantizes and Quantizes to one type T
 * (or such a node under a Relu or Clip that T's range makes redundant) ->
 * its quantized form with result T. */
static bool qdq_fuse(struct func *f, struct node *n, const struct pass_ctx *ctx)
{
	const struct type *t = n->nres == 1 ? qdq_use_type(n) : NULL;
	if (!t)
		return false;
	struct node *core = qdq_clipped(n, t);
	struct value ops[QDQ_MAXOPS];
	if (core && !qdq_operands(core, t, ops))
		core = NULL;
	if (!core) {
		core = n;
		if (!qdq_operands(n, t, ops))
			return false;
	}
	struct node *q = qdq_clone(f, core, ops, t, n, NULL);
	if (ctx && !target_supports(ctx, q)) {
		node_erase(f, q);
		return false;
	}
	for (struct use *u = n->uses; u; u = n->uses)
		pu_replace(f, use_user(u), node_val(q, 0));
	const char *name = n->name;
	qdq_erase_dead(f, n);
	node_rename(f, q, name);
	return true;
}

/* Relu or Clip n of a Transpose or Reshape used only by n, n's uses all
 * Quantizes -> the Transpose or Reshape of the Relu or Clip (exact: an
 * elementwise kind commutes with moving elements), so that the Quantize
 * reaches the node under it (an ONNX Relu after a Conv reads the
 * Convolution through the Transpose back to NCHW). */
static bool qdq_swap(struct func *f, struct node *n)
{
	if ((n->kind != NK_Relu && n->kind != NK_Clip) || node_has_pred(n) || !qdq_use_type(n))
		return false;
	struct value mv = op_val(n, 0);
	struct node *m = mv.node;
	if ((m->kind != NK_Transpose && m->kind != NK_Reshape) || node_num_uses(m, -1) != 1)
		return false;
	struct value x = op_val(m, 0);
	const struct type *xt = val_type(x);
	struct node *e = qdq_clone(f, n, &x, xt, n, NULL);
	struct value ev = node_val(e, 0);
	struct node *m2 = qdq_clone(f, m, &ev, n->types[0], n, m);
	pu_replace(f, n, node_val(m2, 0));
	qdq_erase_dead(f, m);
	return true;
}

/* A quantized Relu or Clip n of a value of its own type T, where T holds
 * no real value n would clip -> that value. */
static bool qdq_noop_clip(struct func *f, struct node *n)
{
	if ((n->kind != NK_Relu && n->kind != NK_Clip) || node_has_pred(n) || op_type(n, 0) != n->types[0] ||
	    !elem_is_quantized((enum elem_kind)n->types[0]->elem))
		return false;
	if (!qdq_clip_redundant(n, n->types[0]))
		return false;
	pu_replace(f, n, op_val(n, 0));
	return true;
}

/* Quantize(Dequantize(x)) : T -> x, or RescaleQuantized(x) : T. */
static bool qdq_pair(struct func *f, struct node *n)
{
	if (n->kind != NK_Quantize || !qdq_is_deq(op_val(n, 0)) || node_has_pred(n))
		return false;
	struct value x = op_val(op_val(n, 0).node, 0);
	struct node *d = op_val(n, 0).node;
	if (val_type(x) == n->types[0]) {
		pu_replace(f, n, x);
	} else {
		struct node *r = node_create1(f, NK_RescaleQuantized, NULL, &x, 1, n->types[0], n, n->loc);
		pu_replace(f, n, node_val(r, 0));
	}
	qdq_erase_dead(f, d);
	return true;
}

bool fold_qdq_func(struct func *f, const struct pass_ctx *ctx, struct fold_qdq_stats *st)
{
	bool any = false, changed = true;
	while (changed) {
		changed = false;
		func_for_each_safe(f, n, next) {
			(void)next;
			if (n->bits & NODE_ERASED)
				continue;
			bool done = false;
			if (n->kind == NK_Quantize) {
				if ((done = qdq_pair(f, n)))
					st->pairs++;
				else if ((done = qdq_hoist(f, n)))
					st->moved++;
			} else if ((done = qdq_sink(f, n))) {
				st->moved++;
			} else if ((done = qdq_fuse(f, n, ctx))) {
				st->fused++;
			} else if ((done = qdq_swap(f, n))) {
				st->moved++;
			} else if ((done = qdq_noop_clip(f, n))) {
				st->pairs++;
			}
			if (done) {
				changed = any = true;
				break; /* the list changed around n: start again */
			}
		}
	}
	/* the Dequantizes that the rewrites (or the importer) left unread */
	func_for_each_safe(f, n, next) {
		(void)next;
		if ((n->kind == NK_Dequantize || n->kind == NK_Quantize) && !node_has_uses(n)) {
			node_erase(f, n);
			any = true;
		}
	}
	return any;
}

bool fold_qdq_run(struct func *f, struct pass_ctx *ctx)
{
	struct fold_qdq_stats st = {0, 0, 0};
	bool changed = fold_qdq_func(f, ctx, &st);
	pass_stat(ctx, "Number of float nodes between Dequantize and Quantize made quantized", st.fused);
	pass_stat(ctx, "Number of Dequantize/Quantize moved across data movement", st.moved);
	pass_stat(ctx, "Number of Quantize/Dequantize pairs folded", st.pairs);
	return changed;
}
