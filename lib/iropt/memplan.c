/* memplan.c - the static memory allocator (memplan.h) and the plan-memory
 * pass.
 *
 * Activations: each alloc becomes an interval [position of the alloc,
 * position of its dealloc) over program positions and a size rounded up to
 * MEMPLAN_ALIGN; two allocs interfere when their intervals intersect (the
 * verifier's rule: a buffer deallocated before another's alloc may share its
 * memory). Views need no interval of their own: the verifier keeps every use
 * of a view inside its root's lifetime.
 *
 * A strategy is an order of the allocs and a fit rule. Each alloc in turn
 * gets an offset among the gaps left by the interfering allocs placed before
 * it: the lowest gap that holds it (first fit) or the smallest such gap, the
 * space above them all counting as the last gap (best fit). Orders: program
 * order; size descending; lifetime length descending; and by pressure:
 * program points by live bytes descending, at each the live allocs not yet
 * placed by size descending (the allocs that make the peak are packed
 * first). The smallest arena wins. If it is above the lower bound, a local
 * search perturbs the winning order (swaps of two allocs drawn by a
 * fixed-seed generator), keeping every swap that does not grow the arena,
 * until the arena reaches the lower bound or the tries run out; the plan
 * stays deterministic. The tries: MEMPLAN_SEARCH_WORK over the size of the
 * interference graph (one placement costs about that), at least
 * MEMPLAN_SEARCH_MIN and at most MEMPLAN_SEARCH_MAX, so small functions get
 * many and huge ones stay linear. Then the allocs move inside the arena
 * for the threads' caches ("thread affinity" below).
 */
#include "iropt/memplan.h"
#include "iropt/iropt.h"
#include "support/io.h"
#include "support/util.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

enum { MEMPLAN_SEARCH_MIN = 400, MEMPLAN_SEARCH_MAX = 4000 };
#define MEMPLAN_SEARCH_WORK ((uint64_t)1 << 24)

struct mp_buf {
	struct ir_instr *alloc;
	uint64_t size;        /* rounded */
	uint32_t start, end;  /* positions: [start, end) */
	uint32_t idx;         /* program order */
	size_t nbr0, nbr1;    /* neighbours: nbr[nbr0..nbr1) */
	int64_t off;          /* -1: not placed */
};

struct mp {
	struct mp_buf *b;
	size_t n;
	uint32_t *nbr;
	size_t nnbr;
};

struct mp_gap {
	uint64_t lo, hi;
};

static uint64_t round_up(uint64_t x) { return (x + MEMPLAN_ALIGN - 1) / MEMPLAN_ALIGN * MEMPLAN_ALIGN; }

/* Intervals of the allocs and the interference lists. */
static void mp_build(struct mp *m, struct ir_func *f)
{
	memset(m, 0, sizeof(*m));
	uint32_t pos = 0;
	size_t nallocs = 0;
	ir_for_each_instr(f, in) {
		in->mark = ++pos;
		nallocs += in->kind == IK_alloc;
	}
	m->b = xcalloc(nallocs ? nallocs : 1, sizeof(*m->b));
	ir_for_each_instr(f, in) {
		if (in->kind != IK_alloc)
			continue;
		struct mp_buf *b = &m->b[m->n];
		b->alloc = in;
		b->size = round_up(type_bytes(in->v.type));
		b->start = in->mark;
		b->end = pos + 1;
		b->idx = (uint32_t)m->n++;
		b->off = -1;
		in->mark = (uint32_t)m->n; /* 1 + index into b, until the deallocs are seen */
	}
	ir_for_each_instr(f, in) {
		if (in->kind != IK_dealloc)
			continue;
		struct ir_instr *a = ir_as_instr(in->ops[0].val);
		if (a && a->kind == IK_alloc && a->mark >= 1 && a->mark <= m->n && m->b[a->mark - 1].alloc == a)
			m->b[a->mark - 1].end = in->mark;
	}
	ir_for_each_instr(f, in)
		in->mark = 0;
	/* neighbours: allocs are in start order, so j > i interferes with i
	 * exactly when start_j < end_i */
	size_t *deg = xcalloc(m->n + 1, sizeof(size_t));
	for (size_t pass = 0; pass < 2; pass++) {
		for (size_t i = 0; i < m->n; i++)
			for (size_t j = i + 1; j < m->n && m->b[j].start < m->b[i].end; j++) {
				if (m->b[i].size == 0 || m->b[j].size == 0)
					continue;
				if (pass == 0) {
					deg[i]++;
					deg[j]++;
				} else {
					m->nbr[m->b[i].nbr1++] = (uint32_t)j;
					m->nbr[m->b[j].nbr1++] = (uint32_t)i;
				}
			}
		if (pass == 0) {
			size_t total = 0;
			for (size_t i = 0; i < m->n; i++) {
				m->b[i].nbr0 = m->b[i].nbr1 = total;
				total += deg[i];
			}
			m->nnbr = total;
			m->nbr = xcalloc(total ? total : 1, sizeof(uint32_t));
		}
	}
	free(deg);
}

static void mp_free(struct mp *m)
{
	free(m->b);
	free(m->nbr);
}

static int cmp_gap(const void *x, const void *y)
{
	const struct mp_gap *a = x, *b = y;
	if (a->lo != b->lo)
		return a->lo < b->lo ? -1 : 1;
	return a->hi < b->hi ? -1 : a->hi > b->hi;
}

/* The memory of b's interfering allocs placed so far, sorted by start;
 * returns how many. */
static size_t mp_busy(const struct mp *m, const struct mp_buf *b, struct mp_gap *busy)
{
	size_t nb = 0;
	for (size_t e = b->nbr0; e < b->nbr1; e++) {
		const struct mp_buf *o = &m->b[m->nbr[e]];
		if (o->off >= 0)
			busy[nb++] = (struct mp_gap){(uint64_t)o->off, (uint64_t)o->off + o->size};
	}
	qsort(busy, nb, sizeof(*busy), cmp_gap);
	return nb;
}

/* Places the allocs in `order` (indices) with first fit or best fit;
 * returns the arena size. */
static uint64_t mp_place(struct mp *m, const uint32_t *order, bool best)
{
	for (size_t i = 0; i < m->n; i++)
		m->b[i].off = -1;
	struct mp_gap *busy = xcalloc(m->n + 1, sizeof(*busy));
	uint64_t arena = 0;
	for (size_t k = 0; k < m->n; k++) {
		struct mp_buf *b = &m->b[order[k]];
		if (b->size == 0) {
			b->off = 0;
			continue;
		}
		size_t nb = mp_busy(m, b, busy);
		uint64_t cursor = 0, pick = UINT64_MAX, pick_len = UINT64_MAX;
		for (size_t i = 0; i < nb; i++) {
			if (busy[i].lo > cursor) {
				uint64_t len = busy[i].lo - cursor;
				if (len >= b->size && (best ? len < pick_len : pick == UINT64_MAX)) {
					pick = cursor;
					pick_len = len;
				}
			}
			if (busy[i].hi > cursor)
				cursor = busy[i].hi;
		}
		if (pick == UINT64_MAX)
			pick = cursor;
		b->off = (int64_t)pick;
		if (pick + b->size > arena)
			arena = pick + b->size;
	}
	free(busy);
	return arena;
}

/* ---- thread affinity ----
 *
 * A multi-threaded kernel (the C backend's pool, the interpreter's) splits
 * its output into contiguous shares: of T threads, thread t writes about
 * the t-th T-th of the buffer (rows of pixels, tiles of rows). Where an
 * alloc reuses memory, a cache line whose last writer was another thread's
 * share must first come from that thread's cache (on a machine whose cores
 * sit on different chiplets, a round trip of some 0.6 us a line). So once
 * the arena is fixed, each alloc in program order moves to the offset,
 * among the places its interfering allocs leave free inside the arena,
 * where its shares at 2 and 4 threads fall on lines the same thread's
 * share wrote last, as far as the allocs before it (painted on a map of
 * the arena as they are placed) say; the arena never grows. Two sweeps:
 * the second starts from the first one's last writers, as a run starts
 * from the previous run's. */

struct mp_seg {
	uint64_t lo, hi;      /* [lo, hi) of the arena */
	uint64_t boff, bsize; /* the alloc that wrote it last */
	bool one;             /* a small alloc: one thread wrote all of it */
};

/* Allocs below this many bytes stay where the arena's plan put them:
 * their writers hardly split among threads (cb_thread.h's least work per
 * part), and what a move could save is a few dozen lines. */
#define MEMPLAN_AFFINITY_MIN 4096
/* The places tried per alloc, at most (huge functions stay fast: a place
 * costs a walk over the segments it covers) */
#define MEMPLAN_AFFINITY_TRIES 512

struct mp_map {
	struct mp_seg *s;
	size_t n, cap;
};

/* the first segment whose hi is above lo */
static size_t map_find(const struct mp_map *map, uint64_t lo)
{
	size_t a = 0, b = map->n;
	while (a < b) {
		size_t mid = (a + b) / 2;
		if (map->s[mid].hi <= lo)
			a = mid + 1;
		else
			b = mid;
	}
	return a;
}

static void map_paint(struct mp_map *map, uint64_t lo, uint64_t hi, bool one)
{
	size_t i = map_find(map, lo), j = i;
	struct mp_seg left = {0, 0, 0, 0, false}, right = {0, 0, 0, 0, false};
	bool has_left = false, has_right = false;
	while (j < map->n && map->s[j].lo < hi) {
		if (map->s[j].lo < lo) {
			left = map->s[j];
			left.hi = lo;
			has_left = true;
		}
		if (map->s[j].hi > hi) {
			right = map->s[j];
			right.lo = hi;
			has_right = true;
		}
		j++;
	}
	size_t add = (size_t)has_left + 1 + (size_t)has_right;
	if (map->n - (j - i) + add > map->cap) {
		map->cap = (map->n + add) * 2;
		map->s = xrealloc(map->s, map->cap * sizeof(*map->s));
	}
	memmove(map->s + i + add, map->s + j, (map->n - j) * sizeof(*map->s));
	map->n = map->n - (j - i) + add;
	size_t k = i;
	if (has_left)
		map->s[k++] = left;
	map->s[k++] = (struct mp_seg){lo, hi, lo, hi - lo, one};
	if (has_right)
		map->s[k] = right;
}

static int cmp_u64(const void *x, const void *y)
{
	uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;
	return a < b ? -1 : a > b;
}

/* Bytes of [o, o + size) whose share at t threads differs from that of
 * their last writer, summed over 2 and 4 threads. */
static uint64_t mp_mismatch(const struct mp_map *map, uint64_t o, uint64_t size)
{
	uint64_t cost = 0, pts[8];
	for (size_t i = map_find(map, o); i < map->n && map->s[i].lo < o + size; i++) {
		const struct mp_seg *g = &map->s[i];
		uint64_t lo = g->lo > o ? g->lo : o, hi = g->hi < o + size ? g->hi : o + size;
		for (unsigned t = 2; t <= 4; t += 2) {
			size_t np = 0;
			pts[np++] = lo;
			pts[np++] = hi;
			for (unsigned k = 1; k < t; k++) {
				uint64_t a = g->boff + g->bsize * k / t, b = o + size * k / t;
				if (!g->one && a > lo && a < hi)
					pts[np++] = a;
				if (b > lo && b < hi)
					pts[np++] = b;
			}
			qsort(pts, np, sizeof(*pts), cmp_u64);
			for (size_t p = 0; p + 1 < np; p++) {
				if (pts[p + 1] == pts[p])
					continue;
				uint64_t mid = pts[p] + (pts[p + 1] - pts[p]) / 2;
				uint64_t was = g->one ? 0 : (mid - g->boff) * t / g->bsize, now = (mid - o) * t / size;
				if (was != now)
					cost += pts[p + 1] - pts[p];
			}
		}
	}
	return cost;
}

static void mp_affinity(struct mp *m, uint64_t arena)
{
	struct mp_map map = {NULL, 0, 0};
	struct mp_gap *busy = xcalloc(m->n + 1, sizeof(*busy));
	size_t ncand = 0, capcand = 64;
	uint64_t *cand = xcalloc(capcand, sizeof(*cand));
	for (int sweep = 0; sweep < 2; sweep++) {
		for (size_t i = 0; i < m->n; i++) {
			struct mp_buf *b = &m->b[i];
			if (b->size == 0)
				continue;
			if (b->size < MEMPLAN_AFFINITY_MIN) {
				map_paint(&map, (uint64_t)b->off, (uint64_t)b->off + b->size, true);
				continue;
			}
			size_t nb = mp_busy(m, b, busy);
			uint64_t cur = (uint64_t)b->off, best = cur, best_cost = mp_mismatch(&map, cur, b->size);
			uint64_t cursor = 0;
			size_t tries = 0;
			for (size_t g = 0; g <= nb && best_cost > 0 && tries < MEMPLAN_AFFINITY_TRIES; g++) {
				uint64_t glo = cursor, ghi = g < nb ? busy[g].lo : arena;
				if (g < nb && busy[g].hi > cursor)
					cursor = busy[g].hi;
				if (ghi <= glo || ghi - glo < b->size)
					continue;
				/* the places where a share boundary of b meets one of a last
				 * writer in the gap, and the gap's ends */
				uint64_t last = ghi - b->size;
				ncand = 0;
				cand[ncand++] = glo;
				cand[ncand++] = last;
				for (size_t k = map_find(&map, glo);
				     k < map.n && map.s[k].lo < ghi && tries + ncand < MEMPLAN_AFFINITY_TRIES; k++) {
					const struct mp_seg *sg = &map.s[k];
					if (sg->one)
						continue;
					for (unsigned t = 2; t <= 4; t += 2)
						for (unsigned q = 1; q < t; q++)
							for (unsigned r = 1; r < t; r++) {
								uint64_t at = sg->boff + sg->bsize * q / t, into = b->size * r / t;
								if (ncand + 1 >= capcand) {
									capcand *= 2;
									cand = xrealloc(cand, capcand * sizeof(*cand));
								}
								if (at >= into)
									cand[ncand++] = at - into;
							}
				}
				tries += ncand;
				for (size_t c = 0; c < ncand; c++) {
					uint64_t o = cand[c] / MEMPLAN_ALIGN * MEMPLAN_ALIGN;
					if (o < glo)
						o = glo;
					if (o > last)
						o = last;
					uint64_t cost = mp_mismatch(&map, o, b->size);
					if (cost < best_cost) {
						best_cost = cost;
						best = o;
					}
				}
			}
			b->off = (int64_t)best;
			map_paint(&map, best, best + b->size, false);
		}
	}
	free(cand);
	free(busy);
	free(map.s);
}

/* ---- orders ---- */

static int cmp_u32(uint64_t a, uint64_t b) { return a < b ? -1 : a > b; }

/* qsort has no context argument: the orders sort small records instead */
struct mp_key {
	uint64_t k1, k2;
	uint32_t idx;
};

static int cmp_key_desc(const void *x, const void *y)
{
	const struct mp_key *a = x, *b = y;
	int c = cmp_u32(b->k1, a->k1);
	if (!c)
		c = cmp_u32(b->k2, a->k2);
	return c ? c : cmp_u32(a->idx, b->idx);
}

enum mp_order { ORD_PROGRAM, ORD_SIZE, ORD_LIFETIME, ORD_PRESSURE };

static void mp_order(const struct mp *m, enum mp_order ord, uint32_t *out)
{
	struct mp_key *keys = xcalloc(m->n + 1, sizeof(*keys));
	switch (ord) {
	case ORD_PROGRAM:
		for (size_t i = 0; i < m->n; i++)
			out[i] = (uint32_t)i;
		break;
	case ORD_SIZE:
	case ORD_LIFETIME:
		for (size_t i = 0; i < m->n; i++) {
			uint64_t life = m->b[i].end - m->b[i].start;
			keys[i] = ord == ORD_SIZE ? (struct mp_key){m->b[i].size, life, (uint32_t)i}
						  : (struct mp_key){life, m->b[i].size, (uint32_t)i};
		}
		qsort(keys, m->n, sizeof(*keys), cmp_key_desc);
		for (size_t i = 0; i < m->n; i++)
			out[i] = keys[i].idx;
		break;
	case ORD_PRESSURE: {
		/* the program point of alloc i: live bytes right after it */
		for (size_t i = 0; i < m->n; i++) {
			uint64_t live = 0;
			for (size_t j = 0; j <= i; j++)
				if (m->b[j].end > m->b[i].start)
					live += m->b[j].size;
			keys[i] = (struct mp_key){live, 0, (uint32_t)i};
		}
		qsort(keys, m->n, sizeof(*keys), cmp_key_desc);
		bool *taken = xcalloc(m->n + 1, sizeof(bool));
		struct mp_key *live = xcalloc(m->n + 1, sizeof(*live));
		size_t k = 0;
		for (size_t p = 0; p < m->n; p++) {
			const struct mp_buf *at = &m->b[keys[p].idx];
			size_t nl = 0;
			for (size_t j = 0; j <= keys[p].idx; j++)
				if (!taken[j] && m->b[j].end > at->start)
					live[nl++] = (struct mp_key){m->b[j].size, m->b[j].end - m->b[j].start, (uint32_t)j};
			qsort(live, nl, sizeof(*live), cmp_key_desc);
			for (size_t j = 0; j < nl; j++) {
				taken[live[j].idx] = true;
				out[k++] = live[j].idx;
			}
		}
		glow_assert(k == m->n);
		free(taken);
		free(live);
		break;
	}
	}
	free(keys);
}

static const struct {
	const char *name;
	enum mp_order order;
	bool best;
} strategies[] = {
	{"program-order-first-fit", ORD_PROGRAM, false},
	{"size-first-fit", ORD_SIZE, false},
	{"size-best-fit", ORD_SIZE, true},
	{"lifetime-first-fit", ORD_LIFETIME, false},
	{"pressure-first-fit", ORD_PRESSURE, false},
	{"pressure-best-fit", ORD_PRESSURE, true},
};

static uint64_t mp_lower_bound(const struct mp *m)
{
	uint64_t lb = 0;
	for (size_t i = 0; i < m->n; i++) {
		uint64_t live = 0;
		for (size_t j = 0; j <= i; j++)
			if (m->b[j].end > m->b[i].start)
				live += m->b[j].size;
		if (live > lb)
			lb = live;
	}
	return lb;
}

uint64_t memplan_lower_bound(struct ir_func *f)
{
	struct mp m;
	mp_build(&m, f);
	uint64_t lb = mp_lower_bound(&m);
	mp_free(&m);
	return lb;
}

bool memplan_func(struct ir_func *f, struct memplan_result *res)
{
	struct ir_plan old = f->plan;
	bool changed = !old.present || old.alignment != MEMPLAN_ALIGN;
	uint64_t csize = 0, msize = 0;
	ir_for_each_weight(f, w) {
		uint64_t *cursor = w->is_const ? &csize : &msize;
		changed |= w->offset != (int64_t)*cursor;
		w->offset = (int64_t)*cursor;
		*cursor += round_up(type_bytes(w->v.type));
	}
	struct mp m;
	mp_build(&m, f);
	uint32_t *order = xcalloc(m.n + 1, sizeof(uint32_t));
	int64_t *best_off = xcalloc(m.n + 1, sizeof(int64_t));
	uint64_t best = UINT64_MAX;
	const char *best_name = NULL;
	for (size_t s = 0; s < GLOW_ARRAY_SIZE(strategies); s++) {
		mp_order(&m, strategies[s].order, order);
		uint64_t arena = mp_place(&m, order, strategies[s].best);
		if (arena < best) {
			best = arena;
			best_name = strategies[s].name;
			for (size_t i = 0; i < m.n; i++)
				best_off[i] = m.b[i].off;
		}
	}
	/* local search: perturb the winning order (a fixed-seed generator, so
	 * the plan is deterministic) and keep changes that do not grow it */
	uint64_t lb = mp_lower_bound(&m);
	if (m.n > 1 && best > lb) {
		uint32_t *cur = xcalloc(m.n, sizeof(uint32_t));
		bool fit_best = false;
		for (size_t s = 0; s < GLOW_ARRAY_SIZE(strategies); s++)
			if (strategies[s].name == best_name) {
				mp_order(&m, strategies[s].order, cur);
				fit_best = strategies[s].best;
				break;
			}
		uint64_t rng = 0x9e3779b97f4a7c15ULL;
		uint64_t steps = MEMPLAN_SEARCH_WORK / (m.n + m.nnbr);
		if (steps < MEMPLAN_SEARCH_MIN)
			steps = MEMPLAN_SEARCH_MIN;
		if (steps > MEMPLAN_SEARCH_MAX)
			steps = MEMPLAN_SEARCH_MAX;
		for (uint64_t it = 0; it < steps && best > lb; it++) {
			memcpy(order, cur, m.n * sizeof(uint32_t));
			rng = rng * 6364136223846793005ULL + 1442695040888963407ULL;
			size_t i = (size_t)(rng >> 33) % m.n;
			rng = rng * 6364136223846793005ULL + 1442695040888963407ULL;
			size_t j = (size_t)(rng >> 33) % m.n;
			uint32_t t = order[i];
			order[i] = order[j];
			order[j] = t;
			uint64_t arena = mp_place(&m, order, fit_best);
			if (arena <= best) {
				if (arena < best) {
					best_name = "local-search";
					for (size_t k = 0; k < m.n; k++)
						best_off[k] = m.b[k].off;
				}
				best = arena;
				memcpy(cur, order, m.n * sizeof(uint32_t));
			}
		}
		free(cur);
	}
	for (size_t i = 0; i < m.n; i++)
		m.b[i].off = best_off[i];
	mp_affinity(&m, best);
	for (size_t i = 0; i < m.n; i++) {
		best_off[i] = m.b[i].off;
		changed |= m.b[i].alloc->offset != best_off[i];
		m.b[i].alloc->offset = best_off[i];
	}
	changed |= old.constant_size != csize || old.mutable_size != msize || old.activations_size != best;
	f->plan.present = true;
	f->plan.constant_size = csize;
	f->plan.mutable_size = msize;
	f->plan.activations_size = best;
	f->plan.alignment = MEMPLAN_ALIGN;
	if (res) {
		res->constant_size = csize;
		res->mutable_size = msize;
		res->arena = best;
		res->lower_bound = lb;
		res->strategy = best_name;
	}
	free(order);
	free(best_off);
	mp_free(&m);
	return changed;
}

void memplan_print(struct ostream *o, struct ir_func *f)
{
	os_puts(o, "memory plan of ");
	print_global_name(o, f->name);
	if (!f->plan.present) {
		os_puts(o, ": none\n");
		return;
	}
	os_printf(o, " (alignment %" PRIu64 ")\n", f->plan.alignment);
	ir_for_each_weight(f, w) {
		os_puts(o, "  ");
		ir_print_local(o, w->v.name);
		os_printf(o, " %s offset %" PRId64 " size %" PRIu64 "\n", w->is_const ? "constant" : "mutable", w->offset,
			  type_bytes(w->v.type));
	}
	ir_for_each_instr(f, in) {
		if (in->kind != IK_alloc)
			continue;
		os_puts(o, "  ");
		ir_print_local(o, in->v.name);
		os_printf(o, " activations offset %" PRId64 " size %" PRIu64 "\n", in->offset, type_bytes(in->v.type));
	}
	uint64_t lb = memplan_lower_bound(f);
	uint64_t arena = f->plan.activations_size;
	os_printf(o, "  constant weights: %" PRIu64 " bytes\n", f->plan.constant_size);
	os_printf(o, "  mutable weights: %" PRIu64 " bytes\n", f->plan.mutable_size);
	os_printf(o, "  activation arena: %" PRIu64 " bytes\n", arena);
	os_printf(o, "  lower bound: %" PRIu64 " bytes\n", lb);
	os_printf(o, "  ratio: %.3f\n", lb ? (double)arena / (double)lb : 1.0);
}

/* ---- the pass ---- */

bool iropt_plan_memory(struct ir_func *f, struct iropt_ctx *ctx)
{
	struct memplan_result r;
	bool changed = memplan_func(f, &r);
	iropt_stat(ctx, "Bytes of activation arenas", r.arena);
	iropt_stat(ctx, "Bytes of activation lower bounds", r.lower_bound);
	return changed;
}
