/* sgraph.c - the scheduling view of a graph function: numbering in the
 * stable topological order, dependencies (data and ordering), operand
 * values, storage touches, and the storage plan of an order with its peak
 * live memory (see sgraph.h).
 *
 * Everything is iterative and linear in the size of the function (plus
 * hashing), so a function of a million nodes is fine. Arrays live in the
 * view's arena.
 */
#include "graph/region.h"
#include "irgen/sgraph.h"
#include "support/util.h"
#include "support/vec.h"

#include <stdlib.h>
#include <string.h>

static void *idx_val(uint32_t i) { return (void *)(uintptr_t)((uint64_t)i + 1); }
static uint32_t val_idx(void *v) { return (uint32_t)((uintptr_t)v - 1); }

uint32_t sg_index(const struct sgraph *g, const struct node *n)
{
	void *v = ptrmap_get(&g->idx, n);
	glow_assert(v != NULL);
	return val_idx(v);
}

/* ---- the stable topological order ---- */

struct frame {
	uint32_t li; /* list position */
	unsigned i;  /* next operand slot */
};

/* The first operand slot from i on (predicate included, as the printer
 * does) whose producer is a node of f not emitted yet, or the slot count. */
static unsigned next_pending(const struct u64map *lpos, const bool *emitted, const struct node *n, unsigned i,
			     uint32_t *li)
{
	unsigned slots = n->nops + (node_has_pred(n) ? 1u : 0u);
	for (; i < slots; i++) {
		const struct node *def = n->ops[i].def;
		if (!def || node_is_storage(def))
			continue;
		void *v = ptrmap_get(lpos, def);
		if (!v || emitted[val_idx(v)])
			continue;
		*li = val_idx(v);
		return i;
	}
	return slots;
}

/* nodes[] := the printer's order: the list order, producers pulled up
 * right before their first user where the list is not an evaluation order. */
static void stable_order(struct sgraph *g)
{
	struct func *f = g->f;
	struct u64map lpos;
	u64map_init(&lpos);
	struct node **list = xcalloc(f->nnodes ? f->nnodes : 1, sizeof(*list));
	uint32_t m = 0;
	func_for_each(f, n) {
		list[m] = n;
		ptrmap_put(&lpos, n, idx_val(m));
		m++;
	}
	bool *emitted = xcalloc(m ? m : 1, sizeof(bool));
	g->n = m;
	g->nodes = arena_array(&g->arena, struct node *, m ? m : 1);
	uint32_t out = 0;
	VEC(struct frame) stack = {0};
	for (uint32_t r = 0; r < m; r++) {
		if (emitted[r])
			continue;
		emitted[r] = true;
		stack.len = 0;
		vec_push(&stack, ((struct frame){r, 0}));
		while (stack.len) {
			struct frame *fr = &stack.data[stack.len - 1];
			const struct node *n = list[fr->li];
			uint32_t li = 0;
			unsigned slots = n->nops + (node_has_pred(n) ? 1u : 0u);
			fr->i = next_pending(&lpos, emitted, n, fr->i, &li);
			if (fr->i == slots) {
				g->nodes[out++] = list[fr->li];
				stack.len--;
				continue;
			}
			fr->i++;
			emitted[li] = true;
			vec_push(&stack, ((struct frame){li, 0}));
		}
	}
	glow_assert(out == m);
	vec_free(&stack);
	free(emitted);
	free(list);
	u64map_free(&lpos);
	for (uint32_t i = 0; i < m; i++)
		ptrmap_put(&g->idx, g->nodes[i], idx_val(i));
}

/* ---- building ---- */

/* How node n uses storage operand slot j. */
static bool slot_writes(const struct node *n, unsigned j)
{
	if (n->kind == NK_Save)
		return j == 1;
	if (n->kind == NK_QuantizationProfile)
		return j == 1 || j == 2;
	return false;
}

static bool slot_reads(const struct node *n, unsigned j) { return !(n->kind == NK_Save && j == 1); }

struct edge {
	uint32_t user, dep;
};

/* reads of a placeholder since its last write: a linked list in a pool */
struct rd {
	uint32_t node;
	int64_t next;
};

/* ---- operand slots ---- */

struct capture_ctx {
	struct u64map inside; /* nodes of the regions being walked */
	struct u64map seen;   /* captures found (sg_ext_key) */
	VEC(struct node *) def;
	VEC(uint8_t) res;
};

/* func_walk_pre callback: n is inside the regions being walked. */
static void mark_inside(struct func *scope, struct node *n, void *arg)
{
	(void)scope;
	ptrmap_put(&((struct capture_ctx *)arg)->inside, n, (void *)1);
}

/* func_walk_pre callback: n's operands produced outside the regions
 * (storage, or values of enclosing scopes), each (producer, result) once. */
static void add_captures(struct func *scope, struct node *n, void *arg)
{
	(void)scope;
	struct capture_ctx *c = arg;
	for (unsigned i = 0; i < n->nops; i++) {
		struct node *def = n->ops[i].def;
		uint64_t key = sg_ext_key(def, n->ops[i].res);
		if (ptrmap_get(&c->inside, def) || u64map_get(&c->seen, key))
			continue;
		u64map_put(&c->seen, key, (void *)1);
		vec_push(&c->def, def);
		vec_push(&c->res, (uint8_t)n->ops[i].res);
	}
}

/* op_begin, slot_def, slot_res: each node's operands, then its regions'
 * captures (in the order the regions use them). */
static void build_slots(struct sgraph *g)
{
	uint32_t n = g->n;
	struct capture_ctx c;
	memset(&c, 0, sizeof c);
	u64map_init(&c.inside);
	u64map_init(&c.seen);
	VEC(uint32_t) ncap = {0};
	uint64_t no = 0;
	for (uint32_t k = 0; k < n; k++) {
		struct node *nd = g->nodes[k];
		uint32_t before = (uint32_t)c.def.len;
		if (node_num_regions(nd)) { /* captures are per owner */
			u64map_free(&c.seen);
			u64map_init(&c.seen);
		}
		for (unsigned r = 0; r < node_num_regions(nd); r++)
			func_walk_pre(node_region(nd, r), mark_inside, &c);
		for (unsigned r = 0; r < node_num_regions(nd); r++)
			func_walk_pre(node_region(nd, r), add_captures, &c);
		vec_push(&ncap, (uint32_t)c.def.len - before);
		no += nd->nops + (uint64_t)c.def.len - before;
	}
	glow_assert(no < UINT32_MAX);
	g->op_begin = arena_array(&g->arena, uint32_t, n + 1);
	g->slot_def = arena_array(&g->arena, struct node *, no ? (size_t)no : 1);
	g->slot_res = arena_array(&g->arena, uint8_t, no ? (size_t)no : 1);
	uint32_t w = 0, cap = 0;
	for (uint32_t k = 0; k < n; k++) {
		const struct node *nd = g->nodes[k];
		g->op_begin[k] = w;
		for (unsigned i = 0; i < nd->nops; i++, w++) {
			g->slot_def[w] = nd->ops[i].def;
			g->slot_res[w] = (uint8_t)nd->ops[i].res;
		}
		for (uint32_t j = 0; j < ncap.data[k]; j++, w++, cap++) {
			g->slot_def[w] = c.def.data[cap];
			g->slot_res[w] = c.res.data[cap];
		}
	}
	g->op_begin[n] = w;
	vec_free(&ncap);
	vec_free(&c.def);
	vec_free(&c.res);
	u64map_free(&c.inside);
	u64map_free(&c.seen);
}

/* A producer outside the view: storage, or a value of an enclosing scope. */
static bool is_external(const struct sgraph *g, const struct node *def)
{
	return node_is_storage(def) || !ptrmap_get(&g->idx, def);
}

static void build_storage(struct sgraph *g)
{
	VEC(struct node *) st = {0};
	VEC(uint8_t) sres = {0};
	for (uint32_t i = 0; i < g->op_begin[g->n]; i++) {
		struct node *def = g->slot_def[i];
		uint64_t key = sg_ext_key(def, g->slot_res[i]);
		if (is_external(g, def) && !u64map_get(&g->sidx, key)) {
			u64map_put(&g->sidx, key, idx_val((uint32_t)st.len));
			vec_push(&st, def);
			vec_push(&sres, g->slot_res[i]);
		}
	}
	g->nstorage = (uint32_t)st.len;
	g->storage = arena_array(&g->arena, struct node *, st.len ? st.len : 1);
	g->storage_res = arena_array(&g->arena, uint8_t, st.len ? st.len : 1);
	if (st.len) {
		memcpy(g->storage, st.data, st.len * sizeof(*st.data));
		memcpy(g->storage_res, sres.data, st.len);
	}
	vec_free(&st);
	vec_free(&sres);
	g->written = arena_array(&g->arena, bool, g->nstorage ? g->nstorage : 1);
}

static void build_operands(struct sgraph *g)
{
	uint32_t n = g->n;
	g->val_begin = arena_array(&g->arena, uint32_t, n + 1);
	uint64_t nv = 0, no = g->op_begin[n];
	for (uint32_t k = 0; k < n; k++) {
		g->val_begin[k] = (uint32_t)nv;
		nv += g->nodes[k]->nres;
	}
	glow_assert(nv < UINT32_MAX);
	g->val_begin[n] = (uint32_t)nv;
	g->nvals = (uint32_t)nv;
	size_t cv = nv ? (size_t)nv : 1;
	g->val_node = arena_array(&g->arena, uint32_t, cv);
	g->val_bytes = arena_array(&g->arena, uint64_t, cv);
	g->val_nuses = arena_array(&g->arena, uint32_t, cv);
	g->val_user = arena_array(&g->arena, uint32_t, cv);
	g->val_static = arena_array(&g->arena, uint8_t, cv);
	g->opv = arena_array(&g->arena, int64_t, no ? (size_t)no : 1);
	g->scratch = arena_array(&g->arena, uint64_t, n ? n : 1);
	for (uint32_t k = 0; k < n; k++) {
		const struct node *nd = g->nodes[k];
		for (unsigned r = 0; r < nd->nres; r++) {
			uint32_t v = g->val_begin[k] + r;
			g->val_node[v] = k;
			g->val_bytes[v] = type_bytes(nd->types[r]);
		}
		for (uint32_t i = 0; i < g->op_begin[k + 1] - g->op_begin[k]; i++) {
			uint32_t slot = g->op_begin[k] + i;
			const struct node *def = g->slot_def[slot];
			int64_t ov;
			if (is_external(g, def)) {
				uint32_t s = val_idx(u64map_get(&g->sidx, sg_ext_key(def, g->slot_res[slot])));
				ov = -(int64_t)s - 1;
				if (i < nd->nops && slot_writes(nd, i))
					g->written[s] = true;
			} else {
				ov = (int64_t)g->val_begin[sg_index(g, def)] + g->slot_res[slot];
				g->val_nuses[ov]++;
				g->val_user[ov] = k;
			}
			g->opv[slot] = ov;
		}
		if (nd->kind == NK_TopK) {
			/* one row of the input and an index64 per element of it */
			const struct type *t = op_type(nd, 0);
			uint64_t row = t->rank ? t->dims[t->rank - 1] : 1;
			uint64_t bytes;
			if (!mul_overflow_u64(row, elem_size((enum elem_kind)t->elem) + 8, &bytes))
				bytes = UINT64_MAX;
			g->scratch[k] = bytes;
		}
	}
	/* static storage kinds */
	for (uint32_t k = 0; k < n; k++) {
		const struct node *nd = g->nodes[k];
		for (unsigned r = 0; r < nd->nres; r++) {
			uint32_t v = g->val_begin[k] + r;
			uint8_t kind = SV_ALLOC;
			if (nd->kind == NK_Reshape) {
				/* a view, unless the input is a placeholder written in
				 * this function: then the view could see the new value */
				int64_t src = sg_op(g, k, 0);
				if (!(sg_is_storage(src) && g->written[sg_storage_of(src)]))
					kind = SV_VIEW;
			} else if ((nd->kind == NK_MaxPool && r == 1 && g->val_nuses[v] == 0) || nd->kind == NK_RegionArg) {
				kind = SV_NONE; /* a region's parameter: the owner's buffer */
			}
			g->val_static[v] = kind;
		}
	}
}

/* Touch lists: for every storage, the nodes that have it as an operand. */
static void build_touches(struct sgraph *g)
{
	uint32_t ns = g->nstorage;
	g->touch_begin = arena_array(&g->arena, uint32_t, ns + 1);
	uint32_t *last = xcalloc(ns ? ns : 1, sizeof(uint32_t)); /* node number + 1 */
	uint32_t *cnt = xcalloc(ns ? ns : 1, sizeof(uint32_t));
	uint64_t total = 0;
	for (int pass = 0; pass < 2; pass++) {
		memset(last, 0, (ns ? ns : 1) * sizeof(uint32_t));
		for (uint32_t k = 0; k < g->n; k++) {
			for (uint32_t i = g->op_begin[k]; i < g->op_begin[k + 1]; i++) {
				int64_t ov = g->opv[i];
				if (!sg_is_storage(ov))
					continue;
				uint32_t s = sg_storage_of(ov);
				if (last[s] == k + 1)
					continue;
				last[s] = k + 1;
				if (pass == 0)
					cnt[s]++;
				else
					g->touch[g->touch_begin[s] + cnt[s]++] = k;
			}
		}
		if (pass == 0) {
			for (uint32_t s = 0; s < ns; s++) {
				g->touch_begin[s] = (uint32_t)total;
				total += cnt[s];
				cnt[s] = 0;
			}
			g->touch_begin[ns] = (uint32_t)total;
			g->touch = arena_array(&g->arena, uint32_t, total ? (size_t)total : 1);
		}
	}
	free(cnt);
	free(last);
}

/* Ordering edges: side effects in order, placeholder reads and writes on
 * their side of every write. */
static void order_edges(struct sgraph *g, void *vedges)
{
	VEC(struct edge) *edges = vedges;
	uint32_t ns = g->nstorage;
	int64_t *lastw = xmalloc((ns ? ns : 1) * sizeof(int64_t));
	int64_t *head = xmalloc((ns ? ns : 1) * sizeof(int64_t));
	for (uint32_t s = 0; s < ns; s++)
		lastw[s] = head[s] = -1;
	VEC(struct rd) pool = {0};
	int64_t prev_side = -1;
	for (uint32_t k = 0; k < g->n; k++) {
		const struct node *nd = g->nodes[k];
		for (uint32_t i = 0; i < g->op_begin[k + 1] - g->op_begin[k]; i++) {
			int64_t ov = sg_op(g, k, i);
			if (!sg_is_storage(ov) || (i < nd->nops && !slot_reads(nd, i)))
				continue;
			uint32_t s = sg_storage_of(ov);
			if (g->slot_def[g->op_begin[k] + i]->kind != NK_Placeholder)
				continue;
			if (head[s] >= 0 && pool.data[head[s]].node == k)
				continue; /* read twice by k */
			if (lastw[s] >= 0 && lastw[s] != k)
				vec_push(edges, ((struct edge){k, (uint32_t)lastw[s]}));
			vec_push(&pool, ((struct rd){k, head[s]}));
			head[s] = (int64_t)pool.len - 1;
		}
		for (unsigned i = 0; i < nd->nops; i++) {
			int64_t ov = sg_op(g, k, i);
			if (!sg_is_storage(ov) || !slot_writes(nd, i))
				continue;
			uint32_t s = sg_storage_of(ov);
			if (lastw[s] == k)
				continue;
			for (int64_t r = head[s]; r >= 0; r = pool.data[r].next)
				if (pool.data[r].node != k)
					vec_push(edges, ((struct edge){k, pool.data[r].node}));
			if (lastw[s] >= 0)
				vec_push(edges, ((struct edge){k, (uint32_t)lastw[s]}));
			head[s] = -1;
			lastw[s] = k;
		}
		if (node_desc(nd->kind)->flags & NF_SIDE) {
			if (prev_side >= 0)
				vec_push(edges, ((struct edge){k, (uint32_t)prev_side}));
			prev_side = k;
		}
	}
	vec_free(&pool);
	free(head);
	free(lastw);
}

static void build_deps(struct sgraph *g)
{
	uint32_t n = g->n;
	VEC(struct edge) edges = {0};
	order_edges(g, &edges);
	/* group the ordering edges by user (counting sort, stable) */
	uint32_t *obeg = xcalloc((size_t)n + 1, sizeof(uint32_t));
	for (size_t e = 0; e < edges.len; e++)
		obeg[edges.data[e].user + 1]++;
	for (uint32_t k = 0; k < n; k++)
		obeg[k + 1] += obeg[k];
	uint32_t *ofill = xmalloc((size_t)(n ? n : 1) * sizeof(uint32_t));
	memcpy(ofill, obeg, (size_t)n * sizeof(uint32_t));
	uint32_t *odep = xmalloc((edges.len ? edges.len : 1) * sizeof(uint32_t));
	for (size_t e = 0; e < edges.len; e++)
		odep[ofill[edges.data[e].user]++] = edges.data[e].dep;
	free(ofill);

	uint64_t cap = (uint64_t)g->op_begin[n] + edges.len;
	glow_assert(cap < UINT32_MAX);
	g->dep_begin = arena_array(&g->arena, uint32_t, n + 1);
	g->ndata = arena_array(&g->arena, uint32_t, n ? n : 1);
	g->deps = arena_array(&g->arena, uint32_t, cap ? (size_t)cap : 1);
	uint32_t *stamp = xcalloc(n ? n : 1, sizeof(uint32_t)); /* user number + 1 */
	uint32_t w = 0;
	for (uint32_t k = 0; k < n; k++) {
		g->dep_begin[k] = w;
		for (uint32_t i = g->op_begin[k]; i < g->op_begin[k + 1]; i++) {
			if (sg_is_storage(g->opv[i]))
				continue;
			uint32_t d = g->val_node[g->opv[i]];
			if (stamp[d] == k + 1)
				continue;
			stamp[d] = k + 1;
			g->deps[w++] = d;
		}
		g->ndata[k] = w - g->dep_begin[k];
		for (uint32_t e = obeg[k]; e < obeg[k + 1]; e++) {
			uint32_t d = odep[e];
			if (stamp[d] == k + 1)
				continue;
			stamp[d] = k + 1;
			g->deps[w++] = d;
		}
	}
	g->dep_begin[n] = w;
	free(stamp);
	free(odep);
	free(obeg);
	vec_free(&edges);
}

void sg_build(struct sgraph *g, struct func *f)
{
	memset(g, 0, sizeof(*g));
	g->f = f;
	arena_init(&g->arena);
	u64map_init(&g->idx);
	u64map_init(&g->sidx);
	stable_order(g);
	build_slots(g);
	build_storage(g);
	build_operands(g);
	build_touches(g);
	build_deps(g);
}

void sg_free(struct sgraph *g)
{
	u64map_free(&g->idx);
	u64map_free(&g->sidx);
	arena_free(&g->arena);
}

/* ---- plans ---- */

/* The first index in [lo, hi) of a[] whose value is >= x (a ascending). */
static uint32_t lower_bound(const uint32_t *a, uint32_t lo, uint32_t hi, uint32_t x)
{
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		if (a[mid] < x)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* May value v (SV_ALLOC, one use, by a Save) be computed straight into the
 * Save's placeholder? tpos holds, per storage, the positions of the nodes
 * touching it, ascending. */
static bool direct_ok(const struct sgraph *g, const struct sg_plan *p, const uint32_t *tpos, uint32_t v)
{
	if (g->val_static[v] != SV_ALLOC || g->val_nuses[v] != 1)
		return false;
	uint32_t s = g->val_user[v], k = g->val_node[v];
	const struct node *save = g->nodes[s], *prod = g->nodes[k];
	if (save->kind != NK_Save || prod->kind == NK_Reshape)
		return false;
	int64_t dst = sg_op(g, s, 1);
	if (!sg_is_storage(dst))
		return false;
	uint32_t st = sg_storage_of(dst);
	for (uint32_t i = g->op_begin[k]; i < g->op_begin[k + 1]; i++)
		if (g->opv[i] == dst)
			return false; /* the producer (or its regions) reads the placeholder */
	/* nothing touches the placeholder between the producer and the Save:
	 * the touch just before the Save's own must not be after the producer */
	uint32_t b = g->touch_begin[st], e = g->touch_begin[st + 1];
	uint32_t at = lower_bound(tpos, b, e, p->pos[s]);
	return at == b || tpos[at - 1] < p->pos[k];
}

void sg_plan(struct sgraph *g, const uint32_t *order, struct sg_plan *p)
{
	uint32_t n = g->n, nv = g->nvals;
	p->pos = arena_array(&g->arena, uint32_t, n ? n : 1);
	p->kind = arena_array(&g->arena, uint8_t, nv ? nv : 1);
	p->root = arena_array(&g->arena, int64_t, nv ? nv : 1);
	p->last = arena_array(&g->arena, uint32_t, nv ? nv : 1);
	for (uint32_t t = 0; t < n; t++)
		p->pos[order[t]] = t;
	/* positions of the touches of each storage, ascending */
	uint32_t ntouch = g->touch_begin[g->nstorage];
	uint32_t *tpos = xmalloc((ntouch ? ntouch : 1) * sizeof(uint32_t));
	uint32_t *fill = xmalloc((g->nstorage ? g->nstorage : 1) * sizeof(uint32_t));
	uint32_t *seen = xcalloc(g->nstorage ? g->nstorage : 1, sizeof(uint32_t));
	for (uint32_t s = 0; s < g->nstorage; s++)
		fill[s] = g->touch_begin[s];
	for (uint32_t t = 0; t < n; t++) {
		uint32_t k = order[t];
		for (uint32_t i = g->op_begin[k]; i < g->op_begin[k + 1]; i++) {
			if (!sg_is_storage(g->opv[i]))
				continue;
			uint32_t s = sg_storage_of(g->opv[i]);
			if (seen[s] == t + 1)
				continue;
			seen[s] = t + 1;
			tpos[fill[s]++] = t;
		}
	}
	free(seen);
	free(fill);
	for (uint32_t v = 0; v < nv; v++)
		p->kind[v] = direct_ok(g, p, tpos, v) ? SV_DIRECT : g->val_static[v];
	free(tpos);

	/* roots and last uses, in order */
	uint64_t *freed = xcalloc(n ? n : 1, sizeof(uint64_t));
	for (uint32_t t = 0; t < n; t++) {
		uint32_t k = order[t];
		for (uint32_t i = g->op_begin[k]; i < g->op_begin[k + 1]; i++) {
			int64_t ov = g->opv[i];
			if (!sg_is_storage(ov) && p->root[ov] >= 0)
				p->last[p->root[ov]] = t;
		}
		for (uint32_t v = g->val_begin[k]; v < g->val_begin[k + 1]; v++) {
			switch (p->kind[v]) {
			case SV_ALLOC:
				p->root[v] = v;
				p->last[v] = t;
				break;
			case SV_VIEW: {
				int64_t src = sg_op(g, k, 0);
				p->root[v] = sg_is_storage(src) ? -1 : p->root[src];
				break;
			}
			default: p->root[v] = -1; break;
			}
		}
	}
	for (uint32_t v = 0; v < nv; v++)
		if (p->kind[v] == SV_ALLOC)
			freed[p->last[v]] = sg_add(freed[p->last[v]], g->val_bytes[v]);
	/* the sweep: at each node, what is live plus its new buffers */
	uint64_t live = 0, peak = 0;
	for (uint32_t t = 0; t < n; t++) {
		uint32_t k = order[t];
		uint64_t add = g->scratch[k];
		for (uint32_t v = g->val_begin[k]; v < g->val_begin[k + 1]; v++)
			if (p->kind[v] == SV_ALLOC)
				add = sg_add(add, g->val_bytes[v]);
		live = sg_add(live, add);
		if (live > peak)
			peak = live;
		if (live != UINT64_MAX)
			live -= g->scratch[k] + freed[t];
	}
	free(freed);
	p->peak = peak;
}
