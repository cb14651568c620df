/* sinkalloc.c - sink-alloc: every tensorview, then every alloc, moves right
 * before the first instruction that uses it (for an alloc: through any view,
 * its dealloc included). Views go first, last to first, so a chain of views
 * follows its first user and the alloc follows its first view. An unused
 * view stays where it is (delete-dead-allocs removes it). An instruction
 * separated from its first user only by allocs (and, for a view, views)
 * stays, so the pass is idempotent.
 *
 * Requires: a verified function. Preserves: everything but instruction
 * order; the first use of a value stays after its definition.
 */
#include "iropt/iropt.h"
#include "support/vec.h"

static bool names_value(const struct ir_instr *in, const struct ir_value *v)
{
	for (unsigned i = 0; i < in->nops; i++)
		if (in->ops[i].val == v)
			return true;
	return false;
}

static bool uses_alloc(const struct ir_instr *in, const struct ir_instr *a)
{
	for (unsigned i = 0; i < in->nops; i++)
		if (iropt_alloc_root(in->ops[i].val) == a)
			return true;
	return false;
}

/* Moves `in` before its first user `u` unless only allocs (and views, if
 * views_too) lie between them; returns true if it moved. */
static bool sink_to(struct ir_func *f, struct ir_instr *in, struct ir_instr *u, bool views_too)
{
	if (!u)
		return false;
	struct ir_instr *p = in->next;
	while (p != u && (p->kind == IK_alloc || (views_too && p->kind == IK_tensorview)))
		p = p->next;
	if (p == u)
		return false;
	ir_instr_move_before(f, in, u);
	return true;
}

bool iropt_sink_alloc(struct ir_func *f, struct iropt_ctx *ctx)
{
	VEC(struct ir_instr *) items = {0};
	ir_for_each_instr(f, in)
		if (in->kind == IK_tensorview || in->kind == IK_alloc)
			vec_push(&items, in);
	unsigned views = 0, allocs = 0;
	for (size_t k = items.len; k-- > 0;) {
		struct ir_instr *v = items.data[k];
		if (v->kind != IK_tensorview)
			continue;
		struct ir_instr *u = v->next;
		while (u && !names_value(u, &v->v))
			u = u->next;
		views += sink_to(f, v, u, true);
	}
	for (size_t k = 0; k < items.len; k++) {
		struct ir_instr *a = items.data[k];
		if (a->kind != IK_alloc)
			continue;
		struct ir_instr *u = a->next;
		while (u && !uses_alloc(u, a))
			u = u->next;
		allocs += sink_to(f, a, u, false);
	}
	vec_free(&items);
	iropt_stat(ctx, "Number of tensorviews sunk", views);
	iropt_stat(ctx, "Number of allocs sunk", allocs);
	return views + allocs > 0;
}
