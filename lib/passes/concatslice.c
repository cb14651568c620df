/* concatslice.c - remove Slices of Concats and Concats of Slices.
 *
 *   Slice(Concat(a, b, c) {dim d})   -> b, or Slice(b) with the start moved,
 *                                       when the slice lies within one input
 *                                       (along d; every other dimension of a
 *                                       Concat input is the whole dimension)
 *   Concat(Slice(x), Slice(x), ...)  -> adjacent operands that slice one tensor
 *                                       contiguously along the Concat's dim (and
 *                                       identically in every other dim) become
 *                                       one Slice; a Concat left with one
 *                                       operand is that operand, and a Slice of
 *                                       all of x is x
 * Data movement only: exact.
 *
 * Requires: a verified function. Preserves: validity and result types.
 */
#include "passes/pass.h"
#include "passes/passutil.h"
#include "support/vec.h"

#include <string.h>

/* Slice(Concat): the value the slice reads, or a null value. */
static bool slice_of_concat(struct func *f, struct node *n)
{
	struct node *cc = n->ops[0].def;
	if (cc->kind != NK_Concat || node_has_pred(cc))
		return false;
	unsigned d = (unsigned)node_int(cc, AN_dim), r;
	const int64_t *st = node_ints(n, AN_start, &r);
	const struct type *t = node_type(n);
	uint64_t off = 0;
	for (unsigned i = 0; i < cc->nops; i++) {
		const struct type *it = op_type(cc, i);
		uint64_t len = it->dims[d];
		if ((uint64_t)st[d] >= off && (uint64_t)st[d] + t->dims[d] <= off + len) {
			int64_t ns[GLOW_MAX_RANK];
			memcpy(ns, st, r * sizeof(int64_t));
			ns[d] -= (int64_t)off;
			struct value in = op_val(cc, i);
			bool whole = val_type(in) == t;
			for (unsigned k = 0; k < r; k++)
				whole = whole && ns[k] == 0;
			if (whole) {
				pu_replace(f, n, in);
			} else {
				struct node *s = node_create1(f, NK_Slice, n->name, &in, 1, t, n, n->loc);
				node_set_ints(f->mod, s, AN_start, ns, r);
				pu_replace(f, n, node_val(s, 0));
			}
			return true;
		}
		off += len;
	}
	return false;
}

/* b continues slice a of the same tensor along d (same extent elsewhere). */
static bool adjacent(const struct node *a, const struct node *b, unsigned d)
{
	if (a->kind != NK_Slice || b->kind != NK_Slice || node_has_pred(a) || node_has_pred(b) ||
	    a->ops[0].def != b->ops[0].def || a->ops[0].res != b->ops[0].res)
		return false;
	unsigned r;
	const int64_t *sa = node_ints(a, AN_start, &r), *sb = node_ints(b, AN_start, &r);
	const struct type *ta = node_type(a), *tb = node_type(b);
	for (unsigned k = 0; k < r; k++) {
		if (k == d) {
			if ((uint64_t)sb[k] != (uint64_t)sa[k] + ta->dims[k])
				return false;
		} else if (sa[k] != sb[k] || ta->dims[k] != tb->dims[k]) {
			return false;
		}
	}
	return true;
}

static bool concat_of_slices(struct func *f, struct node *n)
{
	unsigned d = (unsigned)node_int(n, AN_dim);
	bool any = false;
	for (unsigned i = 0; i + 1 < n->nops && !any; i++)
		any = adjacent(n->ops[i].def, n->ops[i + 1].def, d);
	if (!any)
		return false;
	struct type_ctx *tc = f->mod->types;
	VEC(struct value) ops = {0};
	for (unsigned i = 0; i < n->nops;) {
		unsigned j = i;
		while (j + 1 < n->nops && n->ops[j].res == 0 && adjacent(n->ops[j].def, n->ops[j + 1].def, d))
			j++;
		if (j == i) {
			vec_push(&ops, op_val(n, i));
			i++;
			continue;
		}
		/* one Slice over operands i..j */
		struct node *first = n->ops[i].def;
		const struct type *ft = node_type(first);
		uint64_t dims[GLOW_MAX_RANK];
		memcpy(dims, ft->dims, ft->rank * sizeof(uint64_t));
		for (unsigned k = i + 1; k <= j; k++)
			dims[d] += op_type(n, k)->dims[d];
		const struct type *st = type_with_dims(tc, ft, dims, ft->rank);
		struct value src = op_val(first, 0);
		unsigned r;
		const int64_t *start = node_ints(first, AN_start, &r);
		bool whole = val_type(src) == st;
		for (unsigned k = 0; k < r; k++)
			whole = whole && start[k] == 0;
		if (whole) {
			vec_push(&ops, src);
		} else {
			struct node *s = node_create1(f, NK_Slice, first->name, &src, 1, st, n, n->loc);
			node_set_ints(f->mod, s, AN_start, start, r);
			vec_push(&ops, node_val(s, 0));
		}
		i = j + 1;
	}
	if (ops.len == 1) {
		pu_replace(f, n, ops.data[0]);
	} else {
		struct node *c = node_create1(f, NK_Concat, n->name, ops.data, (unsigned)ops.len, node_type(n), n, n->loc);
		node_copy_attrs(f->mod, c, n);
		pu_replace(f, n, node_val(c, 0));
	}
	vec_free(&ops);
	return true;
}

bool eliminate_concat_slice_run(struct func *f, struct pass_ctx *ctx)
{
	uint64_t slices = 0, concats = 0;
	func_for_each_safe(f, n, next) {
		if (node_has_pred(n))
			continue;
		if (n->kind == NK_Slice && slice_of_concat(f, n))
			slices++;
		else if (n->kind == NK_Concat && concat_of_slices(f, n))
			concats++;
	}
	pass_stat(ctx, "Number of Slices of Concats replaced by an input", slices);
	pass_stat(ctx, "Number of Concats of adjacent Slices merged", concats);
	return slices || concats;
}
