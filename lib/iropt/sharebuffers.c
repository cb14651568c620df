/* sharebuffers.c - share-buffers: lets an output reuse the buffer of an
 * input that dies where the output is born, and removes copies.
 *
 * In place: at an instruction I with an in-place pair (Out, In) of the table
 * (Instrs.def), where Out names an alloc %a whose first use is I and In
 * names an alloc %b whose last use is I, of the very same type, %a is
 * replaced by %b from I on; %a's alloc and %b's dealloc go (%a's dealloc
 * now ends %b). Every other operand of I in %b's buffer must be %b itself,
 * read, and in place with Out too. Weights are never shared this way, and an
 * input still used after I is never shared.
 *
 * Copies, `copy @out %d, @in %b` with %b an alloc whose last use is the copy:
 *   - %d an alloc whose first use is the copy: %d is replaced by %b, the copy
 *     and %d's alloc and %b's dealloc go;
 *   - otherwise, when nothing between %b's alloc and the copy touches the
 *     buffer %d lives in (a mutable weight: an output; an earlier alloc; a
 *     view of either): %b is replaced by %d there, so its producers write
 *     straight into %d; the copy and %b's alloc and dealloc go.
 *
 * One rewrite at a time, then the uses are recomputed. Requires: a verified
 * function (sink-alloc before it helps: outputs are then born at their
 * producer). Preserves: the values every later instruction reads.
 */
#include "iropt/iropt.h"

static struct ir_instr *as_alloc(struct ir_value *v)
{
	return v->vkind == IV_ALLOC ? ir_as_instr(v) : NULL;
}

/* Replaces %a (born at I) by %b (dying at I) from I on. */
static void merge_into(struct ir_func *f, const struct iropt_uses *u, struct ir_instr *I, struct ir_instr *a,
		       struct ir_instr *b)
{
	iropt_replace_uses(f, &a->v, &b->v, I, NULL);
	ir_instr_erase(f, u->dealloc[b->mark]);
	ir_instr_erase(f, a);
}

static bool try_inplace(struct ir_func *f, const struct iropt_uses *u, struct ir_instr *I)
{
	const struct instr_desc *d = instr_desc(I->kind);
	uint32_t p = I->mark;
	for (unsigned k = 0; k < d->ninplace; k++) {
		unsigned o = d->inplace[k][0], i = d->inplace[k][1];
		struct ir_instr *a = as_alloc(I->ops[o].val), *b = as_alloc(I->ops[i].val);
		if (!a || !b || a == b || a->v.type != b->v.type || d->op_quals[o] != IQ_OUT)
			continue;
		if (u->first[a->mark] != p || !u->dealloc[a->mark] || u->last[b->mark] != p || !u->dealloc[b->mark])
			continue;
		bool ok = true;
		for (unsigned j = 0; j < I->nops && ok; j++) {
			if (j == o)
				continue;
			struct ir_instr *r = iropt_alloc_root(I->ops[j].val);
			if (r == a)
				ok = false;
			else if (r == b)
				ok = I->ops[j].val == &b->v && !iropt_qual_writes(d->op_quals[j]) &&
				     instr_inplace_ok(I->kind, o, j);
		}
		if (!ok)
			continue;
		merge_into(f, u, I, a, b);
		return true;
	}
	return false;
}

/* Whether an instruction at positions [from, to) touches root r (its alloc
 * included). */
static bool touches(const struct iropt_uses *u, uint32_t from, uint32_t to, struct ir_value *r)
{
	for (uint32_t q = from; q < to; q++) {
		struct ir_instr *x = u->at[q];
		if (&x->v == r)
			return true;
		for (unsigned i = 0; i < x->nops; i++)
			if (ir_value_root(x->ops[i].val, NULL) == r)
				return true;
	}
	return false;
}

static bool try_copy(struct ir_func *f, const struct iropt_uses *u, struct ir_instr *I)
{
	struct ir_value *dv = I->ops[0].val;
	struct ir_instr *b = as_alloc(I->ops[1].val);
	uint32_t p = I->mark;
	if (!b || dv->type != b->v.type || u->last[b->mark] != p || !u->dealloc[b->mark])
		return false;
	struct ir_instr *a = as_alloc(dv);
	if (a && a != b && u->first[a->mark] == p && u->dealloc[a->mark]) {
		struct ir_instr *bd = u->dealloc[b->mark];
		ir_instr_erase(f, I);
		iropt_replace_uses(f, &a->v, &b->v, a, NULL);
		ir_instr_erase(f, bd);
		ir_instr_erase(f, a);
		return true;
	}
	struct ir_value *r = ir_value_root(dv, NULL);
	if (!r || r == &b->v || touches(u, b->mark, p, r))
		return false;
	struct ir_instr *bd = u->dealloc[b->mark];
	ir_instr_erase(f, I);
	iropt_replace_uses(f, &b->v, dv, b->next, bd);
	ir_instr_erase(f, bd);
	ir_instr_erase(f, b);
	return true;
}

bool iropt_share_buffers(struct ir_func *f, struct iropt_ctx *ctx)
{
	unsigned shared = 0, copies = 0;
	for (;;) {
		struct iropt_uses u;
		iropt_uses_build(&u, f);
		bool found = false;
		for (size_t p = 1; p <= u.n && !found; p++) {
			struct ir_instr *I = u.at[p];
			if (I->kind == IK_copy) {
				if (try_copy(f, &u, I)) {
					copies++;
					found = true;
				}
			} else if (instr_desc(I->kind)->ninplace && try_inplace(f, &u, I)) {
				shared++;
				found = true;
			}
		}
		iropt_uses_free(&u, f);
		if (!found)
			break;
	}
	iropt_stat(ctx, "Number of buffers shared in place", shared);
	iropt_stat(ctx, "Number of copies eliminated", copies);
	return shared + copies > 0;
}
