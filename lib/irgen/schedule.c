/* schedule.c - the schedule pass: a memory-aware evaluation order.
 *
 * Generalized Sethi-Ullman. For every node, bottom-up in topological order,
 * need(n) estimates the peak memory of computing n with its operands'
 * subtrees, if the subtrees are computed one after the other and each
 * result is held until n runs:
 *
 *   need(n) = max( max_i (hold(c_1) + ... + hold(c_{i-1}) + need(c_i)),
 *                  hold(c_1) + ... + hold(c_k) + own(n) )
 *
 * where hold(c) is what c's value keeps alive (its bytes; a Reshape view
 * keeps its input alive) and own(n) the buffers n allocates. Ordering the
 * children by need - hold, largest first (the child that needs the most
 * and leaves the least comes first), minimizes the first term: the
 * classic exchange argument. The order is then a depth-first walk from the
 * roots (nodes no other node uses, in text order), children in that order,
 * each node emitted after its dependencies. Ordering dependencies
 * (sgraph.h: side effects, placeholder reads and writes) are children that
 * hold nothing, so side effects keep their text order.
 *
 * On a DAG shared subtrees make need() an estimate, so the pass tries
 * several orders -- children by need - hold, children by need alone, and
 * the topological order of the text -- computes the exact peak of each
 * with the storage plan IRGen will use (sg_plan), and keeps the smallest,
 * the first on a tie. The kept order's peak is therefore never above the
 * topological order's. Everything is iterative (explicit stacks): a chain
 * of a million nodes is fine.
 *
 * The pass reorders the function's node list; IRGen follows the list. An
 * If or a Loop is one node here, whose operands include every value its
 * regions use from outside (sgraph.h); each of its regions is then
 * scheduled the same way on its own, its parameters kept first and its
 * Yield last.
 */
#include "irgen/irgen.h"
#include "graph/region.h"
#include "irgen/sgraph.h"
#include "support/vec.h"

#include <stdlib.h>
#include <string.h>

const char *irgen_order_name(unsigned order)
{
	static const char *const names[] = {"sethi-ullman", "need", "topo"};
	return order < IRGEN_ORDER_COUNT ? names[order] : "?";
}

/* hold: what a node's value keeps alive while a user waits for it; own:
 * what the node allocates */
static void compute_hold(const struct sgraph *g, uint64_t *hold, uint64_t *own)
{
	for (uint32_t k = 0; k < g->n; k++) {
		uint64_t h = 0, o = g->scratch[k];
		for (uint32_t v = g->val_begin[k]; v < g->val_begin[k + 1]; v++) {
			if (g->val_static[v] == SV_ALLOC) {
				h = sg_add(h, g->val_bytes[v]);
				o = sg_add(o, g->val_bytes[v]);
			} else if (g->val_static[v] == SV_VIEW) {
				int64_t src = sg_op(g, k, 0);
				if (!sg_is_storage(src))
					h = sg_add(h, hold[g->val_node[src]]);
			}
		}
		hold[k] = h;
		own[k] = o;
	}
}

struct kid {
	int64_t key;
	uint64_t need, hold;
	uint32_t node;
};

static int kid_cmp(const void *a, const void *b)
{
	const struct kid *x = a, *y = b;
	if (x->key != y->key)
		return x->key > y->key ? -1 : 1;
	return x->node < y->node ? -1 : x->node > y->node;
}

static int64_t clamp62(uint64_t v) { return v > ((uint64_t)1 << 62) ? (int64_t)1 << 62 : (int64_t)v; }

/* Sorts every node's dependencies into `kids` (same layout as g->deps) by
 * the order's key and computes need() on the way. */
static void sort_kids(const struct sgraph *g, unsigned how, const uint64_t *hold, const uint64_t *own,
		      uint32_t *kids)
{
	uint64_t *need = xcalloc(g->n ? g->n : 1, sizeof(uint64_t));
	VEC(struct kid) tmp = {0};
	for (uint32_t k = 0; k < g->n; k++) {
		uint32_t b = g->dep_begin[k], e = g->dep_begin[k + 1];
		tmp.len = 0;
		for (uint32_t i = b; i < e; i++) {
			uint32_t c = g->deps[i];
			uint64_t h = i - b < g->ndata[k] ? hold[c] : 0;
			int64_t key = how == IRGEN_ORDER_SU ? clamp62(need[c]) - clamp62(h) : clamp62(need[c]);
			vec_push(&tmp, ((struct kid){key, need[c], h, c}));
		}
		if (tmp.len > 1)
			qsort(tmp.data, tmp.len, sizeof(*tmp.data), kid_cmp);
		uint64_t acc = 0, peak = 0;
		for (size_t i = 0; i < tmp.len; i++) {
			uint64_t x = sg_add(acc, tmp.data[i].need);
			if (x > peak)
				peak = x;
			acc = sg_add(acc, tmp.data[i].hold);
			kids[b + i] = tmp.data[i].node;
		}
		uint64_t fin = sg_add(acc, own[k]);
		need[k] = fin > peak ? fin : peak;
	}
	vec_free(&tmp);
	free(need);
}

struct frame {
	uint32_t node, next;
};

/* Depth-first, children in kids order, post-order emission. Roots are the
 * nodes without users, in text order (then anything left, for safety). */
static void dfs_order(const struct sgraph *g, const uint32_t *kids, uint32_t *order)
{
	bool *done = xcalloc(g->n ? g->n : 1, sizeof(bool));
	bool *has_user = xcalloc(g->n ? g->n : 1, sizeof(bool));
	for (uint32_t i = 0; i < g->dep_begin[g->n]; i++)
		has_user[g->deps[i]] = true;
	VEC(struct frame) stack = {0};
	uint32_t out = 0;
	for (int pass = 0; pass < 2; pass++) {
		for (uint32_t r = 0; r < g->n; r++) {
			if (done[r] || (pass == 0 && has_user[r]))
				continue;
			done[r] = true;
			vec_push(&stack, ((struct frame){r, g->dep_begin[r]}));
			while (stack.len) {
				struct frame *fr = &stack.data[stack.len - 1];
				uint32_t e = g->dep_begin[fr->node + 1];
				while (fr->next < e && done[kids[fr->next]])
					fr->next++;
				if (fr->next == e) {
					order[out++] = fr->node;
					stack.len--;
					continue;
				}
				uint32_t c = kids[fr->next++];
				done[c] = true;
				vec_push(&stack, ((struct frame){c, g->dep_begin[c]}));
			}
		}
	}
	glow_assert(out == g->n);
	vec_free(&stack);
	free(has_user);
	free(done);
}

struct irgen_sched_stats irgen_schedule_func(struct func *f, enum irgen_schedule how)
{
	struct sgraph g;
	sg_build(&g, f);
	size_t cn = g.n ? g.n : 1;
	uint32_t *orders[IRGEN_ORDER_COUNT];
	uint64_t peaks[IRGEN_ORDER_COUNT];
	for (unsigned o = 0; o < IRGEN_ORDER_COUNT; o++) {
		orders[o] = NULL;
		peaks[o] = UINT64_MAX;
	}
	/* the topological order of the text */
	orders[IRGEN_ORDER_TOPO] = xmalloc(cn * sizeof(uint32_t));
	for (uint32_t k = 0; k < g.n; k++)
		orders[IRGEN_ORDER_TOPO][k] = k;
	struct sg_plan p;
	sg_plan(&g, orders[IRGEN_ORDER_TOPO], &p);
	peaks[IRGEN_ORDER_TOPO] = p.peak;
	unsigned best = IRGEN_ORDER_TOPO;
	if (how == IRGEN_SCHED_MEMORY) {
		uint64_t *hold = xcalloc(cn, sizeof(uint64_t)), *own = xcalloc(cn, sizeof(uint64_t));
		size_t nd = g.dep_begin[g.n] ? g.dep_begin[g.n] : 1;
		uint32_t *kids = xmalloc(nd * sizeof(uint32_t));
		compute_hold(&g, hold, own);
		for (unsigned o = IRGEN_ORDER_SU; o < IRGEN_ORDER_TOPO; o++) {
			sort_kids(&g, o, hold, own, kids);
			orders[o] = xmalloc(cn * sizeof(uint32_t));
			dfs_order(&g, kids, orders[o]);
			sg_plan(&g, orders[o], &p);
			peaks[o] = p.peak;
		}
		free(kids);
		free(own);
		free(hold);
		best = 0;
		for (unsigned o = 1; o < IRGEN_ORDER_COUNT; o++)
			if (peaks[o] < peaks[best])
				best = o;
	}
	/* a region keeps its parameters first and its Yield last
	 * (graph/region.h): nothing orders them against the rest */
	unsigned nparams = func_is_region(f) ? region_num_params(f) : 0;
	struct node **params = xcalloc(nparams + 1, sizeof *params);
	for (unsigned i = 0; i < nparams; i++)
		params[i] = region_param(f, i);
	struct node *yield = func_is_region(f) ? region_yield(f) : NULL;
	/* the list becomes the kept order */
	for (uint32_t t = 0; t < g.n; t++)
		node_move_before(f, g.nodes[orders[best][t]], NULL);
	if (yield)
		node_move_before(f, yield, NULL);
	for (unsigned i = nparams; i-- > 0;)
		node_move_before(f, params[i], f->first);
	free(params);
	/* then every region inside, on its own */
	for (uint32_t t = 0; t < g.n; t++)
		for (unsigned r = 0; r < node_num_regions(g.nodes[t]); r++)
			irgen_schedule_func(node_region(g.nodes[t], r), how);
	struct irgen_sched_stats st = {f->name, g.n, peaks[IRGEN_ORDER_TOPO], peaks[best], best};
	for (unsigned o = 0; o < IRGEN_ORDER_COUNT; o++)
		free(orders[o]);
	sg_free(&g);
	return st;
}
