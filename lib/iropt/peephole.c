/* peephole.c - peephole: local rewrites of single instructions or pairs.
 *
 *   copy @out %x, @in %x (same memory)         -> removed
 *   tensorview of a whole buffer, same type    -> its source (uses renamed)
 *   splat @out %a {v} ... copy @out %b, @in %a -> splat @out %b {v}, when no
 *                                                 write to %a's buffer lies
 *                                                 between (the first splat
 *                                                 is left to dse)
 *   maxpoolwithargmax whose argmax activation nothing else uses -> maxpool
 *                                                 (the alloc is left to
 *                                                 delete-dead-allocs)
 *   transpose with the identity shuffle        -> copy
 *
 * Requires: a verified function. Preserves: the values of every buffer that
 * is read later; it may leave stores and allocs dead for dse and
 * delete-dead-allocs.
 */
#include "iropt/iropt.h"

#include <string.h>

/* same root, same offset, same type */
static bool same_memory(struct ir_value *a, struct ir_value *b)
{
	uint64_t oa = 0, ob = 0;
	struct ir_value *ra = ir_value_root(a, &oa), *rb = ir_value_root(b, &ob);
	return ra && ra == rb && oa == ob && a->type == b->type;
}

/* Replaces `old` by a new instruction of `kind` at its place, keeping its
 * name and location. */
static struct ir_instr *replace_instr(struct ir_func *f, struct ir_instr *old, unsigned kind,
				      struct ir_value *const *ops, unsigned nops)
{
	struct ir_instr *before = old->next;
	const char *name = old->v.name;
	struct loc loc = old->v.loc;
	ir_instr_erase(f, old);
	return ir_instr_create(f, kind, name, NULL, ops, nops, before, loc);
}

/* The splat that last wrote all of src's memory before `in`, or NULL if
 * another write to src's buffer (or its alloc) comes first. */
static struct ir_instr *splat_source(struct ir_instr *in, struct ir_value *src)
{
	struct ir_value *root = ir_value_root(src, NULL);
	if (!root)
		return NULL;
	for (struct ir_instr *p = in->prev; p; p = p->prev) {
		if (&p->v == root || instr_is_block(p->kind))
			return NULL; /* a block bracket: the last write is not known */
		if (p->kind == IK_dealloc || p->kind == IK_tensorview)
			continue;
		for (unsigned i = 0; i < p->nops; i++) {
			if (!iropt_qual_writes(iropt_op_qual(p, i)) || ir_value_root(p->ops[i].val, NULL) != root)
				continue;
			return p->kind == IK_splat && same_memory(p->ops[0].val, src) ? p : NULL;
		}
	}
	return NULL;
}

static bool identity_shuffle(const struct ir_instr *in)
{
	unsigned n;
	const int64_t *s = ir_ints(in, AN_shuffle, &n);
	for (unsigned i = 0; i < n; i++)
		if (s[i] != (int64_t)i)
			return false;
	return in->ops[0].val->type == in->ops[1].val->type;
}

bool iropt_peephole(struct ir_func *f, struct iropt_ctx *ctx)
{
	unsigned self_copies = 0, views = 0, splats = 0, argmax = 0, transposes = 0;
	ir_for_each_instr_safe(f, in, next) {
		switch (in->kind) {
		case IK_copy:
			if (same_memory(in->ops[0].val, in->ops[1].val)) {
				ir_instr_erase(f, in);
				self_copies++;
			} else {
				struct ir_instr *s = splat_source(in, in->ops[1].val);
				if (s) {
					struct ir_value *dest = in->ops[0].val;
					double value = ir_float(s, AN_value);
					struct ir_instr *n = replace_instr(f, in, IK_splat, &dest, 1);
					ir_set_float(f->mod, n, AN_value, value);
					splats++;
				}
			}
			break;
		case IK_tensorview: {
			unsigned n;
			const int64_t *off = ir_ints(in, AN_offsets, &n);
			bool zero = true;
			for (unsigned i = 0; i < n; i++)
				zero &= off[i] == 0;
			struct ir_value *src = in->ops[0].val;
			if (zero && src->type == in->v.type) {
				iropt_replace_uses(f, &in->v, src, in->next, NULL);
				ir_instr_erase(f, in);
				views++;
			}
			break;
		}
		case IK_transpose:
			if (identity_shuffle(in)) {
				struct ir_value *ops[2] = {in->ops[0].val, in->ops[1].val};
				replace_instr(f, in, IK_copy, ops, 2);
				transposes++;
			}
			break;
		default: break;
		}
	}
	/* maxpoolwithargmax whose argmax nobody else looks at */
	struct iropt_uses u;
	iropt_uses_build(&u, f);
	for (size_t p = 1; p <= u.n; p++) {
		struct ir_instr *in = u.at[p];
		if (in->kind != IK_maxpoolwithargmax)
			continue;
		struct ir_instr *a = iropt_alloc_root(in->ops[2].val);
		if (!a || u.first[a->mark] != p || u.last[a->mark] != p)
			continue;
		struct ir_value *ops[2] = {in->ops[0].val, in->ops[1].val};
		unsigned n;
		const int64_t *k = ir_ints(in, AN_kernels, &n);
		unsigned ns;
		const int64_t *s = ir_ints(in, AN_strides, &ns);
		unsigned np;
		const int64_t *pads = ir_ints(in, AN_pads, &np);
		uint32_t pos = in->mark;
		struct ir_instr *mp = replace_instr(f, in, IK_maxpool, ops, 2);
		mp->mark = pos;
		u.at[p] = mp;
		ir_set_ints(f->mod, mp, AN_kernels, k, n);
		ir_set_ints(f->mod, mp, AN_strides, s, ns);
		ir_set_ints(f->mod, mp, AN_pads, pads, np);
		argmax++;
	}
	iropt_uses_free(&u, f);
	iropt_stat(ctx, "Number of self copies removed", self_copies);
	iropt_stat(ctx, "Number of identity tensorviews removed", views);
	iropt_stat(ctx, "Number of copies of splats turned into splats", splats);
	iropt_stat(ctx, "Number of unused argmax results dropped", argmax);
	iropt_stat(ctx, "Number of identity transposes turned into copies", transposes);
	return self_copies + views + splats + argmax + transposes > 0;
}
