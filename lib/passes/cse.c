/* cse.c - common subexpression elimination.
 *
 * Two pure nodes compute the same values when they have the same kind, the
 * same operands in the same order (the same result of the same node), the
 * same predicate (or none), the same result types and the same attribute
 * values (floats compared bit for bit, so 0.0 and -0.0 stay apart). Operand
 * order always counts: commutativity is not assumed.
 *
 * The nodes are visited once in a topological order (list order wherever
 * the list is a valid evaluation order; operands pulled up otherwise). Each
 * pure node is looked up in a hash table keyed on the properties above; on a
 * hit, every use of the node's results moves to the node found, which came
 * earlier in the order and so dominates it; the node is erased after the walk. Because
 * operands are visited before their users, a user's operands are already
 * the survivors when it is hashed, so chains of duplicates collapse in the
 * same walk: the pass is linear in the size of the function.
 *
 * If the survivor sits later in the node list than the duplicate (the list
 * was not a valid order there), the survivor moves up to the duplicate's
 * place, which keeps the list a valid order wherever it was one.
 *
 * In a control-flow region (the pass runs on each, passes/regions.c) only
 * the region's own nodes merge, among themselves: a value of an enclosing
 * scope is never replaced by a region's. Nodes with regions never merge
 * (their regions are not compared).
 *
 * Requires: nothing (cycles in an unverified function are walked safely).
 * Preserves: the names of the surviving nodes, except that a survivor whose
 * name the builder made up or derived from a duplicate's takes that
 * duplicate's name (node_replace).
 */
#include "passes/pass.h"
#include "support/hashmap.h"
#include "support/vec.h"

#include <stdlib.h>
#include <string.h>

typedef VEC(struct node *) node_vec;

static unsigned slots_of(const struct node *n) { return n->nops + (node_has_pred(n) ? 1u : 0u); }

/* The function's nodes in a topological order, operands first, following
 * the list order wherever it is valid (iterative depth-first search).
 * NODE_MARK is the visited bit; it is clear again on return. */
static void topo_order(struct func *f, node_vec *order)
{
	struct frame {
		struct node *n;
		unsigned i;
	};
	VEC(struct frame) stack = {0};
	func_for_each(f, root) {
		if (root->bits & NODE_MARK)
			continue;
		root->bits |= NODE_MARK;
		struct frame fr0 = {root, 0};
		vec_push(&stack, fr0);
		while (stack.len) {
			struct frame *fr = &vec_last(&stack);
			if (fr->i < slots_of(fr->n)) {
				struct node *def = fr->n->ops[fr->i++].def;
				if (def && !node_is_storage(def) && !(def->bits & NODE_MARK)) {
					def->bits |= NODE_MARK;
					struct frame fr1 = {def, 0};
					vec_push(&stack, fr1);
				}
				continue;
			}
			vec_push(order, fr->n);
			stack.len--;
		}
	}
	vec_free(&stack);
	for (size_t i = 0; i < order->len; i++)
		order->data[i]->bits &= (uint8_t)~NODE_MARK;
}

static uint64_t hash_double(double v)
{
	uint64_t b;
	memcpy(&b, &v, sizeof b);
	return b;
}

static uint64_t node_hash(const struct node *n)
{
	const struct node_desc *d = node_desc(n->kind);
	uint64_t h = hash_combine(n->kind, n->nops);
	h = hash_combine(h, node_has_pred(n));
	for (unsigned i = 0; i < slots_of(n); i++) {
		h = hash_combine(h, (uint64_t)(uintptr_t)n->ops[i].def);
		h = hash_combine(h, n->ops[i].res);
	}
	for (unsigned r = 0; r < n->nres; r++)
		h = hash_combine(h, (uint64_t)(uintptr_t)n->types[r]);
	for (unsigned a = 0; a < d->nattrs; a++) {
		const union attr_val *v = &n->attrs[a];
		switch (d->attrs[a].kind) {
		case AK_INT:
		case AK_BOOL:
		case AK_ENUM: h = hash_combine(h, (uint64_t)v->i); break;
		case AK_FLOAT: h = hash_combine(h, hash_double(v->f)); break;
		case AK_INTS: h = hash_combine(h, v->ints.n ? hash_bytes(v->ints.v, v->ints.n * sizeof(int64_t)) : 0); break;
		case AK_FLOATS:
			h = hash_combine(h, v->floats.n ? hash_bytes(v->floats.v, v->floats.n * sizeof(double)) : 0);
			break;
		case AK_STRING: h = hash_combine(h, v->s ? hash_bytes(v->s, strlen(v->s)) : 0); break;
		}
	}
	return h;
}

static bool attr_equal(enum attr_kind k, const union attr_val *x, const union attr_val *y)
{
	switch (k) {
	case AK_INT:
	case AK_BOOL:
	case AK_ENUM: return x->i == y->i;
	case AK_FLOAT: return memcmp(&x->f, &y->f, sizeof(double)) == 0;
	case AK_INTS:
		return x->ints.n == y->ints.n &&
		       (!x->ints.n || memcmp(x->ints.v, y->ints.v, x->ints.n * sizeof(int64_t)) == 0);
	case AK_FLOATS:
		return x->floats.n == y->floats.n &&
		       (!x->floats.n || memcmp(x->floats.v, y->floats.v, x->floats.n * sizeof(double)) == 0);
	case AK_STRING: return x->s == y->s || (x->s && y->s && strcmp(x->s, y->s) == 0);
	}
	return false;
}

static bool node_equal(const struct node *x, const struct node *y)
{
	if (x->kind != y->kind || x->nops != y->nops || node_has_pred(x) != node_has_pred(y) || x->nres != y->nres)
		return false;
	for (unsigned i = 0; i < slots_of(x); i++)
		if (x->ops[i].def != y->ops[i].def || x->ops[i].res != y->ops[i].res)
			return false;
	for (unsigned r = 0; r < x->nres; r++)
		if (x->types[r] != y->types[r])
			return false;
	const struct node_desc *d = node_desc(x->kind);
	for (unsigned a = 0; a < d->nattrs; a++)
		if (!attr_equal(d->attrs[a].kind, &x->attrs[a], &y->attrs[a]))
			return false;
	return true;
}

struct cse_slot {
	struct node *n; /* NULL: empty */
	uint64_t h;
};

bool cse_run(struct func *f, struct pass_ctx *ctx)
{
	node_vec order = {0};
	topo_order(f, &order);

	/* list positions, to tell whether a survivor must move up */
	struct u64map pos;
	u64map_init(&pos);
	uintptr_t k = 0;
	func_for_each(f, n) {
		ptrmap_put(&pos, n, (void *)++k);
	}

	size_t cap = 16;
	while (cap < 2 * order.len)
		cap *= 2;
	struct cse_slot *tab = xcalloc(cap, sizeof(*tab));
	uint64_t merged;
	node_vec dups = {0}, keeps = {0};
	for (size_t i = 0; i < order.len; i++) {
		struct node *n = order.data[i];
		if (!(node_desc(n->kind)->flags & NF_PURE) || n->nres == 0 || node_desc(n->kind)->nregions ||
		    !ptrmap_get(&pos, n))
			continue;
		uint64_t h = node_hash(n);
		size_t s = (size_t)h & (cap - 1);
		while (tab[s].n && !(tab[s].h == h && node_equal(tab[s].n, n)))
			s = (s + 1) & (cap - 1);
		if (!tab[s].n) {
			tab[s].n = n;
			tab[s].h = h;
			continue;
		}
		struct node *keep = tab[s].n;
		void *npos = ptrmap_get(&pos, n);
		if ((uintptr_t)ptrmap_get(&pos, keep) > (uintptr_t)npos) {
			node_move_before(f, keep, n);
			ptrmap_put(&pos, keep, npos); /* keep now ranks where n was */
		}
		node_replace_all_uses(n, keep);
		vec_push(&dups, n);
		vec_push(&keeps, keep);
	}
	/* Erase last-created first: a use is unlinked by a walk of its producer's
	 * use list, which holds the newest uses first. */
	for (size_t i = dups.len; i-- > 0;)
		node_replace(f, dups.data[i], keeps.data[i]);
	merged = dups.len;
	vec_free(&dups);
	vec_free(&keeps);
	free(tab);
	u64map_free(&pos);
	vec_free(&order);
	pass_stat(ctx, "Number of nodes merged", merged);
	return merged != 0;
}
