/* hoistdealloc.c - hoist-dealloc: every dealloc moves right after the last
 * instruction that uses its buffer (through any view), or right after the
 * alloc when nothing uses it. A dealloc already separated from that point
 * by deallocs only stays where it is, so the pass is idempotent. A nested
 * block counts as one instruction (its end), which uses the buffer when
 * anything inside does: a dealloc stays in its alloc's block.
 *
 * Requires: a verified function. Preserves: everything but instruction
 * order; shortening a lifetime never makes a use fall outside it.
 */
#include "iropt/iropt.h"
#include "support/vec.h"

bool iropt_hoist_dealloc(struct ir_func *f, struct iropt_ctx *ctx)
{
	VEC(struct ir_instr *) deallocs = {0};
	ir_for_each_instr(f, in)
		if (in->kind == IK_dealloc)
			vec_push(&deallocs, in);
	unsigned moved = 0;
	for (size_t k = 0; k < deallocs.len; k++) {
		struct ir_instr *d = deallocs.data[k];
		struct ir_instr *a = ir_as_instr(d->ops[0].val);
		if (!a || a->kind != IK_alloc)
			continue;
		struct ir_instr *u = d->prev;
		while (u && u != a) {
			unsigned fl = instr_desc(u->kind)->flags;
			if (fl & (IF_BLOCK_OPEN | IF_BLOCK_ELSE)) {
				u = NULL; /* the alloc is not in the dealloc's block */
				break;
			}
			if (fl & IF_BLOCK_END) { /* a nested block: one instruction */
				struct ir_instr *o = ir_block_opener(u);
				if (!o || iropt_block_names(o, u, &a->v)) {
					u = o ? u : NULL;
					break;
				}
				u = o->prev;
				continue;
			}
			if (u->kind != IK_dealloc && iropt_names(u, &a->v))
				break;
			u = u->prev;
		}
		if (!u)
			continue; /* the alloc is not before its dealloc: leave it to the verifier */
		struct ir_instr *p = u->next;
		while (p != d && p->kind == IK_dealloc)
			p = p->next;
		if (p == d)
			continue;
		ir_instr_move_before(f, d, p);
		moved++;
	}
	vec_free(&deallocs);
	iropt_stat(ctx, "Number of deallocs hoisted", moved);
	return moved > 0;
}
