/* shapechain.c - fold chains of Reshapes and Transposes into the fewest nodes.
 *
 * A chain of Reshape and Transpose nodes only moves elements, so it equals
 * at most three nodes: Reshape the input into "atoms", Transpose the atoms,
 * Reshape to the result. This pass computes that form and uses it when it
 * has fewer Transposes, or as many Transposes and fewer nodes:
 *   Reshape(Reshape(x))                -> Reshape(x)          (or x itself)
 *   Transpose that only moves unit dims -> Reshape
 *   Transpose(Reshape(Transpose(...))) -> e.g. ShuffleNet's NCHW channel shuffle between
 *                                         layout Transposes becomes one NHWC shuffle
 *
 * Atoms. Each non-unit dimension of the chain's input starts as one atom.
 * A Transpose permutes the dimensions (lists of atoms); a Reshape regroups
 * the atom sequence row-major into its dimensions, splitting an atom in two
 * where a new dimension boundary falls inside it (the split applies to the
 * atom everywhere, including the input). If a boundary cannot fall on an
 * atom factor the chain is left alone. At the end the result is the input
 * split into atoms (input order), permuted into the result's atom order,
 * regrouped into the result's dimensions. Atoms adjacent in both orders are
 * merged before building the nodes, and a Reshape is left out when the shape
 * already matches; a single Transpose is used when input and result have the
 * same rank and each non-unit dimension is one atom.
 *
 * Only chain ends are rewritten (a node none of whose uses is a single-use
 * Reshape or Transpose link); chain nodes still used elsewhere stay. Data
 * movement only: exact. Nodes with predicates and empty tensors are skipped.
 *
 * Requires: a verified function. Preserves: validity.
 */
#include "passes/pass.h"
#include "passes/passutil.h"

#include <string.h>

#define MAX_ATOMS 32
#define MAX_CHAIN 64

struct atoms {
	uint64_t size[MAX_ATOMS];
	unsigned n;
	unsigned in[MAX_ATOMS]; /* input order */
	unsigned nin;
	/* current dimensions: atoms cur[start[d] .. start[d+1]) */
	unsigned cur[MAX_ATOMS];
	unsigned ncur;
	unsigned start[GLOW_MAX_RANK + 1];
	unsigned rank;
};

static bool is_link(const struct node *n)
{
	return (n->kind == NK_Reshape || n->kind == NK_Transpose) && !node_has_pred(n) && n->nops == 1;
}

/* Replaces atom a by (a, b) in an atom list; b is the new atom. */
static void split_in(unsigned *list, unsigned *len, unsigned a, unsigned b)
{
	for (unsigned i = 0; i < *len; i++)
		if (list[i] == a) {
			memmove(list + i + 2, list + i + 1, (*len - i - 1) * sizeof(unsigned));
			list[i + 1] = b;
			(*len)++;
			return;
		}
}

static bool init_atoms(struct atoms *A, const struct type *t)
{
	memset(A, 0, sizeof *A);
	A->rank = t->rank;
	for (unsigned d = 0; d < t->rank; d++) {
		A->start[d] = A->ncur;
		if (t->dims[d] == 0)
			return false;
		if (t->dims[d] != 1) {
			A->size[A->n] = t->dims[d];
			A->in[A->nin++] = A->n;
			A->cur[A->ncur++] = A->n++;
		}
	}
	A->start[t->rank] = A->ncur;
	return true;
}

static void apply_transpose(struct atoms *A, const int64_t *s)
{
	unsigned cur[MAX_ATOMS], start[GLOW_MAX_RANK + 1], k = 0;
	for (unsigned i = 0; i < A->rank; i++) {
		start[i] = k;
		for (unsigned j = A->start[s[i]]; j < A->start[s[i] + 1]; j++)
			cur[k++] = A->cur[j];
	}
	start[A->rank] = k;
	memcpy(A->cur, cur, k * sizeof(unsigned));
	memcpy(A->start, start, sizeof start);
}

static bool apply_reshape(struct atoms *A, const struct type *t)
{
	unsigned p = 0; /* next atom of cur */
	for (unsigned d = 0; d < t->rank; d++) {
		A->start[d] = p;
		uint64_t want = t->dims[d], prod = 1;
		if (want == 0)
			return false;
		while (prod < want) {
			if (p >= A->ncur)
				return false;
			unsigned a = A->cur[p];
			uint64_t sz = A->size[a];
			if (want % prod == 0 && (want / prod) % sz == 0) {
				prod *= sz;
				p++;
			} else if (want % prod == 0 && sz % (want / prod) == 0) {
				if (A->n >= MAX_ATOMS || A->ncur >= MAX_ATOMS)
					return false;
				uint64_t first = want / prod;
				unsigned b = A->n++;
				A->size[b] = sz / first;
				A->size[a] = first;
				split_in(A->in, &A->nin, a, b);
				split_in(A->cur, &A->ncur, a, b);
				prod = want;
				p++;
			} else {
				return false;
			}
		}
	}
	A->start[t->rank] = p;
	A->rank = t->rank;
	return p == A->ncur;
}

/* The form: in-order atom groups (merged), the permutation, sizes. */
struct form {
	unsigned ng;
	uint64_t gsize[MAX_ATOMS]; /* group sizes in input order */
	int64_t perm[MAX_ATOMS];   /* result group i is input group perm[i] */
};

static void make_form(const struct atoms *A, struct form *F)
{
	/* position of each atom in the input order */
	unsigned pos[MAX_ATOMS];
	for (unsigned i = 0; i < A->nin; i++)
		pos[A->in[i]] = i;
	/* an input atom starts a group unless it follows its predecessor in the result order too */
	bool starts[MAX_ATOMS];
	for (unsigned i = 0; i < A->nin; i++)
		starts[i] = true;
	for (unsigned k = 1; k < A->ncur; k++)
		if (pos[A->cur[k]] == pos[A->cur[k - 1]] + 1)
			starts[pos[A->cur[k]]] = false;
	unsigned group[MAX_ATOMS];
	F->ng = 0;
	for (unsigned i = 0; i < A->nin; i++) {
		if (starts[i])
			F->gsize[F->ng++] = 1;
		F->gsize[F->ng - 1] *= A->size[A->in[i]];
		group[i] = F->ng - 1;
	}
	unsigned k = 0;
	for (unsigned j = 0; j < A->ncur; j++)
		if (starts[pos[A->cur[j]]])
			F->perm[k++] = group[pos[A->cur[j]]];
}

/* A single Transpose from x to the result when every non-unit dimension of
 * both is one atom and the ranks agree. */
static bool single_transpose(const struct atoms *A, const struct type *xt, const struct type *rt, int64_t *s)
{
	if (xt->rank != rt->rank || A->nin != A->ncur)
		return false;
	unsigned xdim_of_atom[MAX_ATOMS];
	unsigned k = 0;
	for (unsigned d = 0; d < xt->rank; d++)
		if (xt->dims[d] != 1) {
			if (k >= A->nin || A->size[A->in[k]] != xt->dims[d])
				return false;
			xdim_of_atom[A->in[k++]] = d;
		}
	bool used[GLOW_MAX_RANK] = {false};
	for (unsigned i = 0; i < rt->rank; i++) {
		unsigned len = A->start[i + 1] - A->start[i];
		if (len > 1)
			return false;
		if (len == 1) {
			s[i] = xdim_of_atom[A->cur[A->start[i]]];
			used[s[i]] = true;
		} else {
			s[i] = -1;
		}
	}
	unsigned u = 0;
	for (unsigned i = 0; i < rt->rank; i++) {
		if (s[i] >= 0)
			continue;
		while (u < xt->rank && (used[u] || xt->dims[u] != 1))
			u++;
		if (u >= xt->rank)
			return false;
		s[i] = u;
		used[u] = true;
	}
	return true;
}

/* Rewrites the chain ending at e; returns true if it did. */
static bool fold_chain(struct func *f, struct node *e, uint64_t *stat_t)
{
	struct node *chain[MAX_CHAIN];
	unsigned len = 0;
	for (struct node *c = e; is_link(c) && len < MAX_CHAIN; c = c->ops[0].def)
		chain[len++] = c;
	unsigned old_t = 0;
	for (unsigned i = 0; i < len; i++)
		old_t += chain[i]->kind == NK_Transpose;
	if (len < 2 && old_t == 0)
		return false;
	struct value x = op_val(chain[len - 1], 0);
	const struct type *xt = val_type(x), *rt = node_type(e);
	struct atoms A;
	if (!init_atoms(&A, xt))
		return false;
	for (unsigned i = len; i-- > 0;) {
		struct node *c = chain[i];
		if (c->kind == NK_Transpose) {
			unsigned r;
			apply_transpose(&A, node_ints(c, AN_shuffle, &r));
		} else if (!apply_reshape(&A, node_type(c))) {
			return false;
		}
	}
	struct type_ctx *tc = f->mod->types;
	int64_t s[GLOW_MAX_RANK];
	struct form F;
	make_form(&A, &F);
	bool ident = pu_perm_is_identity(F.perm, F.ng);
	unsigned new_t = ident ? 0 : 1, new_n;
	bool single = !ident && single_transpose(&A, xt, rt, s);
	const struct type *gt = NULL, *pt = NULL;
	if (ident) {
		new_n = xt == rt ? 0 : 1;
	} else if (single) {
		new_n = 1;
	} else {
		if (F.ng > GLOW_MAX_RANK)
			return false;
		gt = type_with_dims(tc, xt, F.gsize, F.ng);
		pt = pu_transposed_type(tc, gt, F.perm);
		new_n = 1 + (gt != xt) + (pt != rt);
	}
	if (new_t > old_t || (new_t == old_t && new_n >= len))
		return false;
	struct value v = x;
	if (ident) {
		if (xt != rt)
			v = node_val(pu_new_reshape(f, v, rt, e, e->name), 0);
	} else if (single) {
		v = node_val(pu_new_transpose(f, v, s, e, e->name), 0);
	} else {
		if (gt != xt)
			v = node_val(pu_new_reshape(f, v, gt, e, e->name), 0);
		v = node_val(pu_new_transpose(f, v, F.perm, e, e->name), 0);
		if (pt != rt)
			v = node_val(pu_new_reshape(f, v, rt, e, e->name), 0);
	}
	*stat_t += old_t - new_t;
	pu_replace(f, e, v);
	return true;
}

/* e is a chain end: no use of it is a Reshape or Transpose that uses it alone. */
static bool chain_end(const struct node *e)
{
	if (!e->uses || e->uses->next)
		return true;
	return !is_link(use_user(e->uses));
}

bool fold_shape_chains_run(struct func *f, struct pass_ctx *ctx)
{
	uint64_t chains = 0, transposes = 0;
	func_for_each_safe(f, n, next) {
		if (is_link(n) && chain_end(n) && fold_chain(f, n, &transposes))
			chains++;
	}
	pass_stat(ctx, "Number of Reshape/Transpose chains folded", chains);
	pass_stat(ctx, "Number of Transposes removed from chains", transposes);
	return chains != 0;
}
