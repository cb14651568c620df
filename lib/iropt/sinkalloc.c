/* sinkalloc.c - sink-alloc: every tensorview, then every alloc, moves right
 * before the first instruction that uses it (for an alloc: through any view,
 * its dealloc included). Views go first, last to first, so a chain of views
 * follows its first user and the alloc follows its first view. An unused
 * view stays where it is (delete-dead-allocs removes it). An instruction
 * separated from its first user only by allocs (and, for a view, views)
 * stays, so the pass is idempotent. A nested block counts as one
 * instruction (its opening one), which uses a value when anything inside
 * does: an alloc or view stays in its block, visible to all its users.
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

/* Moves `in` (a tensorview or an alloc) right before its first user, the
 * first later instruction that names it (a view: its value itself; an
 * alloc: its buffer, through views too), unless only allocs (and views,
 * when `in` is a view) lie between them; returns true if it moved. */
static bool sink_to_first_use(struct ir_func *f, struct ir_instr *in)
{
	bool view = in->kind == IK_tensorview;
	struct ir_instr *u = in->next;
	while (u) {
		unsigned fl = instr_desc(u->kind)->flags;
		if (fl & (IF_BLOCK_ELSE | IF_BLOCK_END))
			return false; /* not used in its block */
		if (fl & IF_BLOCK_OPEN) { /* a nested block: one instruction */
			struct ir_instr *end = ir_block_end(u);
			if (!end)
				return false;
			if (view ? iropt_block_names_value(u, end, &in->v) : iropt_block_names(u, end, &in->v))
				break;
			u = end->next;
			continue;
		}
		if (view ? names_value(u, &in->v) : iropt_names(u, &in->v))
			break;
		u = u->next;
	}
	if (!u)
		return false;
	struct ir_instr *p = in->next;
	while (p != u && (p->kind == IK_alloc || (view && p->kind == IK_tensorview)))
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
	/* views from the last, allocs from the first (the order this pass keeps) */
	for (size_t k = items.len; k-- > 0;)
		if (items.data[k]->kind == IK_tensorview)
			views += sink_to_first_use(f, items.data[k]);
	for (size_t k = 0; k < items.len; k++)
		if (items.data[k]->kind == IK_alloc)
			allocs += sink_to_first_use(f, items.data[k]);
	vec_free(&items);
	iropt_stat(ctx, "Number of tensorviews sunk", views);
	iropt_stat(ctx, "Number of allocs sunk", allocs);
	return views + allocs > 0;
}
