/* deadallocs.c - delete-dead-allocs: removes tensorviews no instruction
 * names, then allocs that nothing but their dealloc names (no instruction
 * reads or writes them, no view of them is left), with their deallocs.
 * Views go last to first, so a chain of unused views goes at once.
 *
 * Requires: a verified function. Preserves: the meaning of the program
 * (only buffers nobody touches disappear). Uses the mark field as a count
 * of the operands naming each view and alloc, and clears it.
 */
#include "iropt/iropt.h"

bool iropt_delete_dead_allocs(struct ir_func *f, struct iropt_ctx *ctx)
{
	ir_for_each_instr(f, in)
		in->mark = 0;
	ir_for_each_instr(f, in) {
		if (in->kind == IK_dealloc)
			continue;
		for (unsigned i = 0; i < in->nops; i++) {
			struct ir_instr *d = ir_as_instr(in->ops[i].val);
			if (d)
				d->mark++;
		}
	}
	unsigned views = 0, allocs = 0;
	for (struct ir_instr *in = f->last, *prev; in; in = prev) {
		prev = in->prev;
		if (in->kind != IK_tensorview || in->mark)
			continue;
		struct ir_instr *src = ir_as_instr(in->ops[0].val);
		if (src)
			src->mark--;
		ir_instr_erase(f, in);
		views++;
	}
	ir_for_each_instr_safe(f, in, next) {
		if (in->kind != IK_dealloc)
			continue;
		struct ir_instr *a = ir_as_instr(in->ops[0].val);
		if (a && a->kind == IK_alloc && a->mark == 0 && !(a->bits & IR_ERASED))
			ir_instr_erase(f, in);
	}
	ir_for_each_instr_safe(f, in, next) {
		if (in->kind == IK_alloc && in->mark == 0) {
			ir_instr_erase(f, in);
			allocs++;
		}
	}
	ir_for_each_instr(f, in)
		in->mark = 0;
	iropt_stat(ctx, "Number of tensorviews deleted", views);
	iropt_stat(ctx, "Number of allocs deleted", allocs);
	return views + allocs > 0;
}
