/* hoistconcat.c - hoist-concat: each part of a concatenation is inserted
 * right after it is computed, and the concatenation's buffer lives from
 * before the first part's computation.
 *
 * IR generation emits a Concat as `touch` of a fresh buffer followed by one
 * `inserttensor` per part, after all the parts: the concatenation's buffer
 * then starts its life after every part, so the memory plan may place it
 * over the parts' inputs, and a backend cannot have a part's producer write
 * its slice of the concatenation directly (the C backend does for a
 * convolution, with its add / relu / clip epilogue, whose result is
 * inserted along the channels). This pass reorders, never rewrites:
 *
 *   1. Each inserttensor I (count 1) of a part (an alloc, through views)
 *      into a concatenation (another alloc) moves up to right after P, the
 *      last instruction before it that writes the part, when no
 *      instruction between P and I reads or writes the concatenation
 *      (except inserts of other parts into disjoint slices, which commute)
 *      and any view I names that is defined in between moves along.
 *   2. When the concatenation's first use is its `touch`, that touch and
 *      the alloc move up to right before the start of the earliest moved
 *      part's computation: P, or, walking back, the instruction writing a
 *      buffer that only P reads (a convolution whose result only the relu
 *      P reads), up to eight steps.
 *
 * If an instruction in that stretch names the concatenation's buffer (a
 * buffer shared by earlier values), they move right before the insert
 * instead. A concatenation that is a weight (an output the plan wrote
 * into) is live throughout: only its touch moves, right before the insert.
 *
 * The touch is the buffer's first use (so sink-alloc leaves the alloc
 * where it is: the pass is stable under the lifetimes pipeline), deallocs
 * of the parts can then move up (hoist-dealloc, which runs after it). The
 * parts' buffers die earlier and the concatenation's lives longer, so the
 * peak of the plan may grow by a concatenation.
 *
 * Requires: a verified function. Preserves: semantics and validity; only
 * instruction order changes. A function with blocks (if, loop) is left
 * as it is.
 */
#include "iropt/iropt.h"
#include "support/vec.h"

#include <string.h>

/* The buffer (alloc or weight) v lives in, NULL if none. */
static struct ir_value *root_of(struct ir_value *v) { return ir_value_root(v, NULL); }

/* Whether instruction q reads (reads) or writes (!reads) buffer b through
 * any operand. */
static bool touches(const struct ir_instr *q, const struct ir_value *b, bool reads)
{
	for (unsigned i = 0; i < q->nops; i++) {
		unsigned qual = iropt_op_qual(q, i);
		if ((reads ? iropt_qual_reads(qual) : iropt_qual_writes(qual)) && root_of(q->ops[i].val) == b)
			return true;
	}
	return false;
}

/* The box an inserttensor of count 1 writes: [lo, lo + ext) per dimension,
 * in the coordinates of its destination operand. */
static bool insert_box(const struct ir_instr *in, const int64_t **lo, const uint64_t **ext, unsigned *rank)
{
	unsigned n;
	const int64_t *start = ir_ints(in, AN_start, &n);
	const struct type *st = in->ops[1].val->type, *dt = in->ops[0].val->type;
	if (ir_int(in, AN_count) != 1 || n != dt->rank || st->rank != dt->rank)
		return false;
	*lo = start;
	*ext = st->dims;
	*rank = n;
	return true;
}

/* Whether two inserts into the same destination value write disjoint
 * boxes. */
static bool disjoint_inserts(const struct ir_instr *a, const struct ir_instr *b)
{
	const int64_t *la, *lb;
	const uint64_t *ea, *eb;
	unsigned ra, rb;
	if (a->ops[0].val != b->ops[0].val || !insert_box(a, &la, &ea, &ra) || !insert_box(b, &lb, &eb, &rb) ||
	    ra != rb)
		return false;
	for (unsigned i = 0; i < ra; i++)
		if (la[i] + (int64_t)ea[i] <= lb[i] || lb[i] + (int64_t)eb[i] <= la[i])
			return true;
	return false;
}

/* The number of instructions other than dealloc and views that name the
 * buffer of alloc a (a itself excluded). */
static unsigned real_uses(struct ir_func *f, const struct ir_instr *a)
{
	unsigned n = 0;
	ir_for_each_instr(f, q)
		if (q->kind != IK_dealloc && q->kind != IK_tensorview && q != a && iropt_names(q, &a->v))
			n++;
	return n;
}

/* Where the computation of a part written by p starts: p, or walking back
 * through buffers that only the instruction after them reads. */
static struct ir_instr *chain_start(struct ir_func *f, struct ir_instr *p)
{
	struct ir_instr *cur = p;
	for (int step = 0; step < 8; step++) {
		struct ir_instr *best = NULL;
		for (unsigned i = 0; i < cur->nops; i++) {
			struct ir_instr *a = iropt_alloc_root(cur->ops[i].val);
			if (!a || !iropt_qual_reads(iropt_op_qual(cur, i)) || iropt_qual_writes(iropt_op_qual(cur, i)))
				continue;
			/* a is written once, by j, and read only by cur */
			if (real_uses(f, a) != 2)
				continue;
			struct ir_instr *j = cur->prev;
			while (j && !iropt_names(j, &a->v))
				j = j->prev;
			if (!j || j->kind == IK_tensorview || touches(j, &a->v, true) || !touches(j, &a->v, false))
				continue;
			if (!best || iropt_pos(j) < iropt_pos(best))
				best = j;
		}
		if (!best)
			break;
		cur = best;
	}
	return cur;
}

/* Moves insert `in` up to right after the last writer of its part; the
 * concatenation's touch (and its alloc), when they lie in between, move
 * before the start of the part's computation (a weight's touch: right
 * before the insert). Returns 0 when nothing moved, 1 when the insert
 * moved, 2 when the concatenation's alloc moved too. Instruction marks hold
 * positions. */
static int hoist_insert(struct ir_func *f, struct ir_instr *in, struct ir_value *cat, struct ir_value *part)
{
	VEC(struct ir_instr *) views = {0};
	struct ir_instr *cat_alloc = ir_as_instr(cat);
	struct ir_instr *p = in->prev, *found = NULL, *touch = NULL;
	bool alloc_seen = false;
	for (; p; p = p->prev) {
		if (&p->v == part)
			break;
		if (&p->v == cat) {
			alloc_seen = true;
			continue;
		}
		if (p->kind == IK_alloc)
			continue;
		if (p->kind == IK_dealloc) {
			if (iropt_names(p, part) || iropt_names(p, cat))
				break;
			continue;
		}
		if (p->kind == IK_tensorview) {
			/* a view `in` names moves along; others stay */
			for (unsigned i = 0; i < in->nops; i++)
				if (in->ops[i].val == &p->v)
					vec_push(&views, p);
			continue;
		}
		if (touches(p, part, false)) {
			found = p;
			break;
		}
		if (p->kind == IK_touch && root_of(p->ops[0].val) == cat && !touch) {
			touch = p;
			continue;
		}
		if (p->kind == IK_inserttensor && root_of(p->ops[0].val) == cat && !touch && !iropt_names(p, part) &&
		    root_of(p->ops[1].val) != cat && disjoint_inserts(p, in))
			continue;
		if (iropt_names(p, cat))
			break;
	}
	/* the views move after found: their own operands must be defined
	 * before it (the part's or the concatenation's buffer, or an earlier
	 * view) */
	for (size_t k = 0; found && k < views.len; k++) {
		struct ir_instr *src = ir_as_instr(views.data[k]->ops[0].val);
		if (src && src->kind == IK_tensorview && iropt_pos(src) > iropt_pos(found))
			found = NULL;
	}
	/* the insert goes after found and the deallocs right after it
	 * (hoist-dealloc puts them there) */
	struct ir_instr *at = found ? found->next : NULL;
	while (at && at != in && at->kind == IK_dealloc)
		at = at->next;
	if (!found || at == in || (alloc_seen && !cat_alloc)) {
		vec_free(&views);
		return 0;
	}
	struct ir_instr *start = cat_alloc && (alloc_seen || touch) ? chain_start(f, found) : NULL;
	/* the touch may only move above instructions that do not name the
	 * concatenation (a buffer shared by earlier values): else it goes
	 * right before the insert */
	bool named = false;
	for (struct ir_instr *q = start; q && q != found->next && !named; q = q->next)
		named = q->kind != IK_tensorview && q != cat_alloc && iropt_names(q, cat);
	bool move_alloc = start && (alloc_seen || (!named && iropt_pos(cat_alloc) > iropt_pos(start)));
	/* the stretch that may be reordered, to tell a real change */
	struct ir_instr *lo = start && !named && iropt_pos(start) < iropt_pos(found) ? start : found;
	if (move_alloc && iropt_pos(cat_alloc) < iropt_pos(lo))
		lo = cat_alloc;
	struct ir_instr *anchor = lo->prev;
	VEC(struct ir_instr *) before = {0};
	for (struct ir_instr *q = lo; q != in->next; q = q->next)
		vec_push(&before, q);
	ir_instr_move_before(f, in, at);
	/* views were collected last to first: keep their order */
	for (size_t k = views.len; k-- > 0;)
		ir_instr_move_before(f, views.data[k], in);
	/* the first moved view, or the insert */
	struct ir_instr *first = views.len ? views.data[views.len - 1] : in;
	if (named)
		start = first;
	vec_free(&views);
	if (!cat_alloc) {
		/* a weight is live throughout: its touch only has to stay first */
		if (touch)
			ir_instr_move_before(f, touch, first);
	} else if (start) {
		if (move_alloc)
			ir_instr_move_before(f, cat_alloc, start);
		if (touch)
			ir_instr_move_before(f, touch, start);
	}
	/* the same order as before (only a touch and views were in the way)
	 * is no change */
	bool same = true;
	struct ir_instr *q = anchor ? anchor->next : f->first;
	for (size_t k = 0; k < before.len && same; k++, q = q->next)
		same = q == before.data[k];
	vec_free(&before);
	if (same)
		return 0;
	return move_alloc ? 2 : 1;
}

static void renumber(struct ir_func *f)
{
	uint32_t n = 0;
	ir_for_each_instr(f, q)
		q->mark = ++n;
}

bool iropt_hoist_concat(struct ir_func *f, struct iropt_ctx *ctx)
{
	if (ir_func_has_blocks(f))
		return false; /* its moves span several instructions: not across block brackets */
	VEC(struct ir_instr *) inserts = {0};
	ir_for_each_instr(f, in)
		if (in->kind == IK_inserttensor)
			vec_push(&inserts, in);
	uint64_t moved = 0, hoisted = 0;
	for (size_t k = 0; k < inserts.len; k++) {
		struct ir_instr *in = inserts.data[k];
		struct ir_value *cat = root_of(in->ops[0].val), *part = root_of(in->ops[1].val);
		struct ir_instr *pa = part ? ir_as_instr(part) : NULL;
		if (!cat || !pa || pa->kind != IK_alloc || cat == part || ir_int(in, AN_count) != 1)
			continue;
		if (ir_as_instr(cat) && ir_as_instr(cat)->kind != IK_alloc)
			continue;
		renumber(f);
		int r = hoist_insert(f, in, cat, part);
		moved += r > 0;
		hoisted += r > 1;
	}
	ir_for_each_instr(f, q)
		q->mark = 0;
	vec_free(&inserts);
	iropt_stat(ctx, "Number of inserttensors moved after their part's producer", moved);
	iropt_stat(ctx, "Number of concatenation buffers hoisted", hoisted);
	return moved > 0;
}
