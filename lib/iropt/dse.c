/* dse.c - dse: dead store elimination. An instruction whose written
 * operands all live in activations (allocs, directly or through views) none
 * of which is read afterwards, before it is deallocated or overwritten
 * whole, is removed. Instructions writing a weight are never removed:
 * mutable weights are the function's observable outputs. A read is any
 * @in, @inout or scratch operand in the same buffer (any part of it: the
 * check is by buffer, not by byte range); an overwrite is an @out operand
 * covering the whole buffer in an instruction that does not also read it.
 * The walk goes last to first, so a chain of dead stores goes in one run.
 * Blocks: the block instructions themselves stay; reads anywhere after
 * count (also in an if's other block: conservative), an overwrite counts
 * only before any block bracket (it may not run), and leaving a loop
 * around the store counts as a read (the next iteration may read it).
 *
 * Requires: a verified function. Preserves: every value that is read.
 */
#include "iropt/iropt.h"

/* Whether the contents of alloc a after `in` are read before being
 * deallocated or overwritten whole. */
static bool read_later(const struct ir_instr *in, struct ir_instr *a)
{
	uint64_t abytes = type_bytes(a->v.type);
	unsigned depth = 0;   /* blocks entered since `in` */
	bool crossed = false; /* a block bracket lies between: a write may not run */
	for (const struct ir_instr *p = in->next; p; p = p->next) {
		unsigned fl = instr_desc(p->kind)->flags;
		if (fl & IF_BLOCK) {
			crossed = true;
			if (fl & IF_BLOCK_OPEN) {
				depth++;
			} else if ((fl & IF_BLOCK_END) && depth) {
				depth--;
			} else if (fl & IF_BLOCK_END) {
				/* leaving a block around `in`: a loop runs it again */
				const struct ir_instr *o = ir_block_opener(p);
				if (!o || o->kind == IK_loop)
					return true;
			}
		}
		if (p->kind == IK_dealloc) {
			if (p->ops[0].val == &a->v)
				return false;
			continue;
		}
		if (p->kind == IK_tensorview || p->kind == IK_alloc)
			continue;
		bool kills = false;
		for (unsigned i = 0; i < p->nops; i++) {
			uint64_t off = 0;
			struct ir_value *r = ir_value_root(p->ops[i].val, &off);
			if (r != &a->v)
				continue;
			unsigned q = iropt_op_qual(p, i);
			if (iropt_qual_reads(q))
				return true;
			if (q == IQ_OUT && off == 0 && type_bytes(p->ops[i].val->type) == abytes)
				kills = true;
		}
		if (kills && !crossed)
			return false;
	}
	return true; /* never deallocated: keep (the verifier reports it) */
}

static bool dead_store(const struct ir_instr *in)
{
	if (in->kind == IK_alloc || in->kind == IK_dealloc || in->kind == IK_tensorview || instr_is_block(in->kind))
		return false;
	bool writes = false;
	for (unsigned i = 0; i < in->nops; i++) {
		if (!iropt_qual_writes(iropt_op_qual(in, i)))
			continue;
		writes = true;
		struct ir_instr *a = iropt_alloc_root(in->ops[i].val);
		if (!a || read_later(in, a))
			return false;
	}
	return writes;
}

bool iropt_dse(struct ir_func *f, struct iropt_ctx *ctx)
{
	unsigned n = 0;
	for (struct ir_instr *in = f->last, *prev; in; in = prev) {
		prev = in->prev;
		if (dead_store(in)) {
			ir_instr_erase(f, in);
			n++;
		}
	}
	iropt_stat(ctx, "Number of dead stores removed", n);
	return n > 0;
}
