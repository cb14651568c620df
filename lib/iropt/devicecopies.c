/* devicecopies.c - device-copies: makes a device backend's memory explicit
 * (docs/OpenCL.md). Activations (allocs) are device memory and constant
 * weights are uploaded once, when the program is loaded; the mutable
 * weights (the placeholders the caller binds) are host memory, so every
 * instruction that reads or writes one is given a device buffer instead:
 *
 *   - the result of a computation saved into a placeholder (`copy @out %w,
 *     @in %x`, x an activation; IRGen's Save) becomes `copyfromdevice @out
 *     %w, @in %x`, waited for right before the next instruction that
 *     writes x's buffer, copies it again or deallocates it (or at the end),
 *     so the transfer runs beside whatever is computed in between and no
 *     kernel overwrites the buffer while the copy reads it (IR optimization
 *     may compute later values in place in the buffer of a saved one);
 *   - any other placeholder w gets an alloc %w.dev of its type: when the
 *     program reads w before writing it, `copytodevice @out %w.dev, @in %w`
 *     at the start of the program and `devicewait @in %w.dev` right before
 *     the first instruction that needs it (so the upload of one input runs
 *     beside the computation on the others); every use of w (and every view
 *     of it) uses %w.dev; when the program writes w, `copyfromdevice @out
 *     %w, @in %w.dev` after the last use, waited for at the end.
 *
 * Blocks (if, loop: docs/InstrIR.md): every copy and wait is at the top
 * level, so each runs once per run of the function. A wait that would go
 * before an instruction inside a block goes before the outermost block
 * that holds it; a copy out after the last use goes after the end of that
 * block. A placeholder whose first use is inside a block (or a block
 * bracket's operand) is uploaded as if read first: the block may not run,
 * or not write all of it. A Save inside a block is staged as any other
 * use (a device buffer copied out once after the block), not rewritten.
 *
 * Requires: a verified function. The allocs it adds are placed at the
 * start and deallocated at the end: run the lifetimes pipeline and
 * plan-memory after it (ocl-O0..ocl-O3 do), and no pass that turns
 * mutable weights constant (make-weights-const) after it, as device copies
 * read placeholders only.
 */
#include "iropt/iropt.h"

#include <stdlib.h>
#include <string.h>

/* Whether the operand i of in lives in weight w. */
static bool in_weight(const struct ir_instr *in, unsigned i, const struct ir_weight *w)
{
	return ir_value_root(in->ops[i].val, NULL) == &w->v;
}

static bool is_copy_kind(unsigned k)
{
	return k == IK_copytodevice || k == IK_copyfromdevice || k == IK_devicewait;
}

static unsigned block_flags(const struct ir_instr *in) { return instr_descs[in->kind].flags & IF_BLOCK; }

/* The outermost block opener (if, loop) whose block holds `in`, or `in`
 * itself at the top level (an opener at the top level is itself). */
static struct ir_instr *outermost(struct ir_func *f, struct ir_instr *in)
{
	unsigned depth = 0;
	struct ir_instr *open = NULL;
	for (struct ir_instr *p = f->first; p; p = p->next) {
		if (p == in)
			return depth ? open : in;
		if (block_flags(p) & IF_BLOCK_OPEN) {
			if (depth++ == 0)
				open = p;
		} else if (block_flags(p) & IF_BLOCK_END) {
			depth--;
		}
	}
	return in;
}

/* Whether `in` is inside a block. */
static bool in_block(struct ir_func *f, struct ir_instr *in) { return outermost(f, in) != in; }

/* The instruction after the outermost block that holds `in` (or after
 * `in` itself, and after an opener's whole block): where a copy out
 * after `in` goes at the top level; NULL at the end. */
static struct ir_instr *top_after(struct ir_func *f, struct ir_instr *in)
{
	struct ir_instr *o = outermost(f, in);
	if (!(block_flags(o) & IF_BLOCK_OPEN))
		return o->next;
	unsigned depth = 0;
	for (struct ir_instr *p = o; p; p = p->next) {
		if (block_flags(p) & IF_BLOCK_OPEN)
			depth++;
		else if ((block_flags(p) & IF_BLOCK_END) && --depth == 0)
			return p->next;
	}
	return NULL;
}

/* Where the wait of a copy out of alloc a (started right before `from`)
 * goes: before the first instruction from `from` on that writes a (any
 * view of it: the copy still reads the buffer), copies a again (a Save or
 * a copyfromdevice: every copy of a buffer is waited for before the next
 * one starts, so each wait completes exactly one copy) or is a's dealloc;
 * NULL (the end) if none. Instructions that only read a run beside the
 * copy. */
static struct ir_instr *wait_point(struct ir_instr *from, const struct ir_value *a)
{
	for (struct ir_instr *p = from; p; p = p->next) {
		if (!iropt_names(p, a))
			continue;
		if (p->kind == IK_dealloc || p->kind == IK_copy || p->kind == IK_copyfromdevice)
			return p;
		for (unsigned i = 0; i < p->nops; i++)
			if (iropt_qual_writes(iropt_op_qual(p, i)) && ir_value_root(p->ops[i].val, NULL) == a)
				return p;
	}
	return NULL;
}

/* A Save into w: `copy @out %w, @in %x` with x in an alloc, the only
 * instruction that touches w. Returns it or NULL. */
static struct ir_instr *save_of(struct ir_func *f, struct ir_weight *w)
{
	struct ir_instr *save = NULL;
	/* (one inside a block is staged instead) */
	ir_for_each_instr(f, in) {
		for (unsigned i = 0; i < in->nops; i++) {
			if (!in_weight(in, i, w))
				continue;
			if (save || in->kind != IK_copy || i != 0 || in->ops[0].val != &w->v ||
			    !iropt_alloc_root(in->ops[1].val))
				return NULL;
			save = in;
		}
	}
	return save && !in_block(f, save) ? save : NULL;
}

/* Turns Save `save` into a copyfromdevice and its wait (wait_point). */
static void rewrite_save(struct ir_func *f, struct ir_instr *save)
{
	struct ir_value *ops[2] = {save->ops[0].val, save->ops[1].val};
	struct ir_instr *c = ir_instr_create(f, IK_copyfromdevice, NULL, NULL, ops, 2, save, save->v.loc);
	struct ir_instr *at = wait_point(save->next, &iropt_alloc_root(ops[1])->v);
	if (at)
		at = outermost(f, at); /* a write inside a block: before the block */
	struct ir_value *b = ops[1];
	ir_instr_create(f, IK_devicewait, NULL, NULL, &b, 1, at, save->v.loc);
	(void)c;
	ir_instr_erase(f, save);
}

/* Stages weight w through a device buffer; false if nothing touches it. */
static bool stage(struct ir_func *f, struct ir_weight *w)
{
	struct ir_instr *first = NULL, *last = NULL;
	bool read_first = false, written = false;
	ir_for_each_instr(f, in) {
		if (in->kind == IK_dealloc || is_copy_kind(in->kind))
			continue;
		for (unsigned i = 0; i < in->nops; i++) {
			if (!in_weight(in, i, w))
				continue;
			last = in;
			if (in->kind == IK_tensorview)
				continue;
			unsigned q = iropt_op_qual(in, i);
			if (!first)
				first = in;
			/* any operand of the first instruction that reads w, or
			 * writes only part of it (a view), or a first use in a
			 * block (which may not run) or by a block bracket */
			if (first == in && (q == IQ_IN || q == IQ_INOUT || in->ops[i].val != &w->v || block_flags(in) ||
					    in_block(f, in)))
				read_first = true;
			written |= iropt_qual_writes(q);
		}
	}
	if (!last)
		return false;
	struct ir_instr *start = f->first;
	char name[256];
	snprintf(name, sizeof name, "%s.dev", w->v.name);
	struct ir_instr *dev = ir_alloc(f, name, w->v.type, start, w->v.loc);
	/* every use of w becomes a use of the device buffer (views included) */
	ir_for_each_instr(f, in)
		for (unsigned i = 0; i < in->nops; i++)
			if (in != dev && in->ops[i].val == &w->v && !is_copy_kind(in->kind))
				ir_set_operand(in, i, &dev->v);
	struct ir_value *dv = &dev->v;
	if (read_first && first) {
		struct ir_value *ops[2] = {dv, &w->v};
		ir_instr_create(f, IK_copytodevice, NULL, NULL, ops, 2, start, w->v.loc);
		ir_instr_create(f, IK_devicewait, NULL, NULL, &dv, 1, outermost(f, first), w->v.loc);
	}
	if (written) {
		struct ir_value *ops[2] = {&w->v, dv};
		ir_instr_create(f, IK_copyfromdevice, NULL, NULL, ops, 2, top_after(f, last), w->v.loc);
		ir_instr_create(f, IK_devicewait, NULL, NULL, &dv, 1, NULL, w->v.loc);
	}
	ir_dealloc(f, dev, NULL, w->v.loc);
	return true;
}

bool iropt_device_copies(struct ir_func *f, struct iropt_ctx *ctx)
{
	/* a function that has device copies already is left as it is */
	ir_for_each_instr(f, in) if (is_copy_kind(in->kind)) return false;
	unsigned n = 0;
	ir_for_each_weight(f, w) {
		if (w->is_const)
			continue;
		struct ir_instr *save = save_of(f, w);
		if (save) {
			rewrite_save(f, save);
			n++;
		} else if (stage(f, w)) {
			n++;
		}
	}
	iropt_stat(ctx, "Number of placeholders given device copies", n);
	return n > 0;
}
