/* lowering.c - the driver of the lowering rules and the helpers they share
 * (lowering.h).
 *
 * The driver sweeps the function in list order and hands each selected node
 * to its kind's rule (Lowering.def); a rule inserts its nodes before the
 * node it replaces, so they are not visited in the same sweep. When a sweep
 * lowered something the next sweep looks at the new nodes (a Swish's
 * Sigmoid, a Broadcast's Tile). Rules only ever produce kinds that lower
 * into strictly simpler ones, so a few sweeps suffice; the cap guards that
 * argument.
 */
#include "passes/lowering.h"
#include "ir/ir.h"
#include "passes/lowerinfo.h"
#include "passes/passutil.h"

#include <stdio.h>
#include <string.h>

enum { LOWER_MAX_SWEEPS = 16 };

/* The table's row of each kind (Lowering.def); a kind without a row has a
 * null rule. */
struct lower_row {
	bool (*rule)(struct func *f, struct node *n);
	enum lower_when when;
	enum lower_guard guard;
	const char *stat;
};

static const struct lower_row lower_rows[NK_COUNT] = {
#define LOWER(K, rule_, when_, guard_, stat_) [NK_##K] = {rule_, when_, guard_, stat_},
#include "passes/Lowering.def"
#undef LOWER
};

bool lower_is_grad(const struct node *n)
{
	return lower_rows[n->kind].rule && lower_rows[n->kind].when == LW_GRAD;
}

bool lower_grad_needed(const struct node *n)
{
	/* IRGen's instruction for the kind: the one named like it (ir.h) */
	return lower_is_grad(n) && instr_kind_named_like(n->kind) < 0;
}

bool lower_has_rule(const struct node *n)
{
	const struct lower_row *r = &lower_rows[n->kind];
	if (!r->rule)
		return false;
	/* the type rules make every gradient kind floating point */
	if (r->when == LW_GRAD)
		return !node_has_pred(n);
	if (node_has_pred(n) || n->nres != 1)
		return false;
	enum elem_kind k = (enum elem_kind)node_type(n)->elem;
	switch (r->when) {
	case LW_UNQUANTIZED: return !elem_is_quantized(k);
	case LW_GROUPED: return elem_is_float(k) && node_int(n, AN_group) > 1 && op_type(n, 1)->dims[3] > 1;
	default: return elem_is_float(k) && elem_is_float((enum elem_kind)op_type(n, 0)->elem);
	}
}

/* Whether n's operand 0 passes its row's guard (Lowering.def). */
static bool lower_guard_ok(const struct lower_row *r, const struct node *n)
{
	if (r->guard == LG_SAME_TYPE)
		return op_type(n, 0) == node_type(n);
	if (r->guard == LG_SAME_ELEM)
		return type_same_elem(op_type(n, 0), node_type(n));
	return true;
}

bool lower_function(struct func *f, struct pass_ctx *ctx, bool (*want)(const struct pass_ctx *, const struct node *))
{
	uint64_t counts[NK_COUNT] = {0};
	bool any = false;
	for (unsigned sweep = 0; sweep < LOWER_MAX_SWEEPS; sweep++) {
		bool changed = false;
		func_for_each_safe(f, n, next) {
			if (!lower_has_rule(n) || !(lower_grad_needed(n) || want(ctx, n)))
				continue;
			unsigned k = n->kind;
			const struct lower_row *r = &lower_rows[k];
			if (!lower_guard_ok(r, n))
				continue;
			/* the lowered-info map: what stands for n's results after */
			struct lower_info li;
			lower_info_before(&li, f, n, next);
			if (r->rule(f, n)) {
				lower_info_after(&li, f, n);
				counts[k]++;
				changed = true;
			}
		}
		if (!changed)
			break;
		any = true;
	}
	for (unsigned k = 0; k < NK_COUNT; k++)
		if (counts[k] && ctx->pm) /* outside a pass (lower_grads): no counters */
			pass_stat(ctx, lower_rows[k].stat, counts[k]);
	return any;
}

static bool is_grad_kind(const struct pass_ctx *ctx, const struct node *n)
{
	(void)ctx;
	return lower_is_grad(n);
}

bool lower_grads(struct func *f, struct pass_ctx *ctx)
{
	return lower_function(f, ctx, is_grad_kind);
}

/* ------------------------------------------------------------------ */
/* Helpers                                                             */

const char *lw_name(char *buf, const struct node *n, const char *suffix)
{
	snprintf(buf, 64, "%.40s.%.22s", n->name ? n->name : "t", suffix);
	return buf;
}

struct node *lw_node(struct func *f, unsigned k, const struct value *ops, unsigned nops, const struct type *t,
		     struct node *n, const char *suffix)
{
	char buf[64];
	return node_create1(f, k, lw_name(buf, n, suffix), ops, nops, t, n, n->loc);
}

struct value lw_un(struct func *f, unsigned k, struct value a, struct node *n, const char *suffix)
{
	return node_val(lw_node(f, k, &a, 1, val_type(a), n, suffix), 0);
}

struct value lw_bin(struct func *f, unsigned k, struct value a, struct value b, struct node *n, const char *suffix)
{
	struct value ops[2] = {a, b};
	const struct type *t = val_type(a);
	if (k == NK_CmpLT || k == NK_CmpLTE || k == NK_CmpEQ)
		t = type_with_elem(f->mod->types, t, EK_BOOL);
	return node_val(lw_node(f, k, ops, 2, t, n, suffix), 0);
}

struct value lw_splat(struct func *f, const struct type *t, double x, struct node *n, const char *suffix)
{
	char buf[64];
	return node_val(pu_new_splat(f, t, x, n, lw_name(buf, n, suffix)), 0);
}

struct value lw_bin_splat(struct func *f, unsigned k, struct value a, double x, struct node *n, const char *suffix)
{
	/* "<n>.k", or "<n>.<suffix>.k" for a rule's further constants */
	char buf[64], ks[32];
	const char *k1 = "k";
	if (func_find(f, lw_name(buf, n, k1))) {
		snprintf(ks, sizeof ks, "%.20s.k", suffix);
		k1 = ks;
	}
	struct value s = lw_splat(f, val_type(a), x, n, k1);
	return lw_bin(f, k, a, s, n, suffix);
}

struct value lw_reduce(struct func *f, unsigned k, struct value v, const bool *drop, struct node *n,
		       const char *suffix)
{
	const struct type *t = val_type(v);
	uint64_t dims[GLOW_MAX_RANK];
	int64_t axes[GLOW_MAX_RANK];
	unsigned r = 0, na = 0;
	for (unsigned i = 0; i < t->rank; i++) {
		if (drop[i])
			axes[na++] = (int64_t)i;
		else
			dims[r++] = t->dims[i];
	}
	struct node *red = lw_node(f, k, &v, 1, type_with_dims(f->mod->types, t, dims, r), n, suffix);
	node_set_ints(f->mod, red, AN_axes, axes, na);
	return node_val(red, 0);
}

struct value lw_expand(struct func *f, struct value r, const struct type *t, const bool *drop, struct node *n,
		       const char *suffix)
{
	uint64_t dims[GLOW_MAX_RANK];
	for (unsigned i = 0; i < t->rank; i++)
		dims[i] = drop[i] ? 1 : t->dims[i];
	const struct type *kt = type_with_dims(f->mod->types, val_type(r), dims, t->rank);
	struct value kv = r;
	if (kt != val_type(r))
		kv = node_val(lw_node(f, NK_Reshape, &r, 1, kt, n, "keep"), 0);
	return lw_broadcast(f, kv, t, 0, n, suffix);
}

struct value lw_broadcast(struct func *f, struct value v, const struct type *t, unsigned axis, struct node *n,
			  const char *suffix)
{
	const struct type *bt = type_with_dims(f->mod->types, val_type(v), t->dims, t->rank);
	if (bt == val_type(v))
		return v;
	struct node *b = lw_node(f, NK_Broadcast, &v, 1, bt, n, suffix);
	node_set_int(f->mod, b, AN_axis, axis);
	return node_val(b, 0);
}

void lw_replace(struct func *f, struct node *n, struct value v)
{
	pu_replace(f, n, v);
}
