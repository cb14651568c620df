/* analysis.c - what the IR passes share: alloc roots, positions and the
 * first/last use of every alloc, operand renaming, dropping a plan.
 *
 * Uses are counted by root (iropt.h): an operand that names a view is a use
 * of the alloc at the end of the view chain. Blocks: a use inside a block
 * nested deeper than the alloc counts as a use of that whole block (its
 * opening instruction to its end) at the alloc's level, so "first use" and
 * "last use" are always instructions of the alloc's own block. The numbering lives in the
 * instructions' mark field between iropt_uses_build and iropt_uses_free.
 */
#include "iropt/iropt.h"
#include "support/util.h"
#include "support/vec.h"

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

/* The position of the `end` matching each opening instruction (if,
 * loop), by position; 0 elsewhere. Positions are numbered already. */
static uint32_t *block_ends(struct ir_func *f, size_t n)
{
	uint32_t *end = xcalloc(n + 1, sizeof(*end));
	VEC(uint32_t) open = {0};
	ir_for_each_instr(f, in) {
		unsigned fl = instr_desc(in->kind)->flags;
		if (fl & IF_BLOCK_OPEN)
			vec_push(&open, in->mark);
		else if ((fl & IF_BLOCK_END) && open.len)
			end[open.data[--open.len]] = in->mark;
	}
	/* an unbalanced list (not verified): an open block ends at the end */
	while (open.len)
		end[open.data[--open.len]] = (uint32_t)n;
	vec_free(&open);
	return end;
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
	/* blocks: the open blocks' opening positions (innermost last), each
	 * position's depth, the end of each block */
	uint32_t *end = block_ends(f, n);
	uint32_t *depth = xcalloc(n + 1, sizeof(*depth));
	VEC(uint32_t) open = {0};
	ir_for_each_instr(f, in) {
		uint32_t p = in->mark;
		unsigned fl = instr_desc(in->kind)->flags;
		u->at[p] = in;
		depth[p] = (uint32_t)open.len;
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
			/* a use inside a block deeper than the alloc's is a use of
			 * the whole block at the alloc's level; an opening
			 * instruction's operands are used until its end (a loop
			 * reads its condition again at its end) */
			uint32_t da = depth[a->mark], lo = p, hi = (fl & IF_BLOCK_OPEN) ? end[p] : p;
			if (depth[p] > da && da < open.len)
				lo = open.data[da], hi = end[lo];
			if (!u->first[a->mark])
				u->first[a->mark] = lo;
			if (hi > u->last[a->mark])
				u->last[a->mark] = hi;
		}
		if (fl & IF_BLOCK_OPEN)
			vec_push(&open, p);
		else if ((fl & IF_BLOCK_END) && open.len)
			open.len--;
	}
	vec_free(&open);
	free(depth);
	free(end);
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
