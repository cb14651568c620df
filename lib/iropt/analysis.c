/* analysis.c - what the IR passes share: alloc roots, positions and the
 * first/last use of every alloc, operand renaming, dropping a plan.
 *
 * Uses are counted by root (iropt.h): an operand that names a view is a use
 * of the alloc at the end of the view chain. The numbering lives in the
 * instructions' mark field between iropt_uses_build and iropt_uses_free.
 */
#include "iropt/iropt.h"
#include "support/util.h"

#include <stdlib.h>

struct ir_instr *iropt_alloc_root(struct ir_value *v)
{
	struct ir_value *r = ir_value_root(v, NULL);
	return r && r->vkind == IV_ALLOC ? ir_as_instr(r) : NULL;
}

bool iropt_names(const struct ir_instr *in, const struct ir_value *b)
{
	for (unsigned i = 0; i < in->nops; i++)
		if (ir_value_root(in->ops[i].val, NULL) == b)
			return true;
	return false;
}

void iropt_uses_build(struct iropt_uses *u, struct ir_func *f)
{
	size_t n = 0;
	ir_for_each_instr(f, in)
		in->mark = (uint32_t)++n;
	u->n = n;
	u->at = xcalloc(n + 1, sizeof(*u->at));
	u->first = xcalloc(n + 1, sizeof(*u->first));
	u->last = xcalloc(n + 1, sizeof(*u->last));
	u->dealloc = xcalloc(n + 1, sizeof(*u->dealloc));
	ir_for_each_instr(f, in) {
		uint32_t p = in->mark;
		u->at[p] = in;
		if (in->kind == IK_dealloc) {
			struct ir_instr *a = ir_as_instr(in->ops[0].val);
			if (a && a->kind == IK_alloc && !(a->bits & IR_ERASED) && a->mark)
				u->dealloc[a->mark] = in;
			continue;
		}
		for (unsigned i = 0; i < in->nops; i++) {
			struct ir_instr *a = iropt_alloc_root(in->ops[i].val);
			if (!a || !a->mark)
				continue;
			if (!u->first[a->mark])
				u->first[a->mark] = p;
			u->last[a->mark] = p;
		}
	}
}

void iropt_uses_free(struct iropt_uses *u, struct ir_func *f)
{
	ir_for_each_instr(f, in)
		in->mark = 0;
	free(u->at);
	free(u->first);
	free(u->last);
	free(u->dealloc);
	u->at = NULL;
	u->first = u->last = NULL;
	u->dealloc = NULL;
	u->n = 0;
}

unsigned iropt_replace_uses(struct ir_func *f, struct ir_value *from, struct ir_value *to, struct ir_instr *start,
			    struct ir_instr *stop)
{
	unsigned n = 0;
	for (struct ir_instr *in = start ? start : f->first; in && in != stop; in = in->next)
		for (unsigned i = 0; i < in->nops; i++)
			if (in->ops[i].val == from) {
				ir_set_operand(in, i, to);
				n++;
			}
	return n;
}

void iropt_drop_plan(struct ir_func *f)
{
	if (!f->plan.present)
		return;
	f->plan.present = false;
	f->plan.constant_size = f->plan.mutable_size = f->plan.activations_size = f->plan.alignment = 0;
	ir_for_each_weight(f, w)
		w->offset = -1;
	ir_for_each_instr(f, in)
		in->offset = -1;
}
