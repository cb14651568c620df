/* cbsplit.c - image by image: the C backend's batch split (docs/CBackend.md,
 * "Image by image: the batch split").
 *
 * A batch of N images runs layer by layer: each layer reads and writes N
 * images' activations before the next starts. In the first layers of a
 * convolutional network those are many megabytes per layer (ResNet-50's
 * first convolution writes 3.2 MB per image, 25.7 MB at batch 8), more
 * than the caches hold, so every layer streams them from memory; one
 * image's pass keeps them in cache. Measured on a Zen 4 core: ResNet-50's
 * layers up to its fourth stage run faster as eight batch-1 passes than
 * at batch 8 (bench/README.md, "Image by image").
 *
 * So after lowering the backend takes the region of f where images do not
 * mix and each layer's activations outweigh its weights, and computes it
 * in parts of the batch: each input placeholder of the region is cut into
 * its parts (Slice), the region's nodes are cloned once per part with
 * dimension 0 the part's size, and each value that leaves the region is
 * the Concat of its parts along dimension 0 (under the original's name).
 * The scheduler (memory-aware, depth-first) then runs the copies one after
 * the other, and the memory plan lets each part reuse the last one's
 * buffers.
 *
 * The region: in text order (a topological order), every node that
 * treats images independently along dimension 0 (the kinds of Nodes.def's
 * NF_BATCH: convolutions, pooling, LRN; the NF_EW kinds without
 * broadcast; transposes that keep dimension 0, concatenations along
 * another dimension), all of whose results have dimension 0 = N and at most
 * SPLIT_MAX_BYTES per image, whose operands are region values, input
 * placeholders of dimension 0 = N, or (the filter and bias of a
 * convolution) constants; and, for a convolution, whose filter is at most
 * SPLIT_WEIGHT_RATIO times one image's result in bytes (past that, reading
 * the weights once per part costs more than the cache saves: ResNet-50's
 * 3x3 layers of its fourth stage). The region is split only when it holds
 * a convolution and its nodes average SPLIT_MIN_FLOPS per image, in parts
 * of the fewest images (a divisor of N) that average SPLIT_PART_FLOPS per
 * node and keep their largest result within SPLIT_MAX_BYTES: every part
 * is one more launch of each kernel on the thread pool, whose
 * synchronization made smaller parts slower on two threads (SqueezeNet,
 * ShuffleNet, VGG-19: docs/CBackend.md).
 *
 * Each output element is computed by the same kernel arithmetic in both
 * forms (the kernels' sums do not depend on the batch), so only where the
 * code generator picks another algorithm for the smaller shape (Winograd,
 * by its cost model) do results move, within that algorithm's usual
 * tolerance.
 */
#include "backends/c/cbackend.h"
#include "graph/graph.h"
#include "graph/region.h"
#include "support/hashmap.h"
#include "support/util.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* filter bytes at most this many times one image's result bytes */
#define SPLIT_WEIGHT_RATIO 4.0
/* average floating-point work per region node per image */
#define SPLIT_MIN_FLOPS 4e6
/* and per node per part (several images when one image's layers are small) */
#define SPLIT_PART_FLOPS 16e6
/* a part's largest result at most a core's share of a last-level cache
 * (Zen 4: 32 MiB for 8 cores); past that the part's activations do not
 * stay in cache, and the split only adds synchronization on the thread
 * pool (VGG-19's 12.8 MB per image, SqueezeNet's two-image parts of 6.3
 * MB were slower on two threads) */
#define SPLIT_MAX_BYTES (4.0 * 1024 * 1024)

static bool is_conv(const struct node *n) { return n->kind == NK_Convolution || n->kind == NK_C_ConvAddRelu; }

/* The region's nodes by address: an open-addressing table from node to
 * its index in region order. */
struct region {
	struct node **key;
	size_t *idx;
	size_t cap, n;
};

static size_t region_slot(const struct region *g, const struct node *n)
{
	size_t h = (size_t)hash_u64((uint64_t)(uintptr_t)n) & (g->cap - 1);
	while (g->key[h] && g->key[h] != n)
		h = (h + 1) & (g->cap - 1);
	return h;
}

static bool in_region(const struct region *g, const struct node *n) { return g->key[region_slot(g, n)] == n; }

/* One image's bytes of t (dimension 0 the batch). */
static double image_bytes(const struct type *t, uint64_t batch)
{
	return (double)type_bytes(t) / (double)batch;
}

/* Whether n computes each image of dimension 0 from that image alone: the
 * kinds of Nodes.def's NF_BATCH and NF_EW (region_ok checks that their
 * operands have the result's batch, and no broadcast for NF_EW), a
 * Transpose that keeps dimension 0 first, a Concat along another one. */
static bool per_image(const struct node *n)
{
	if (node_desc(n->kind)->flags & (NF_BATCH | NF_EW))
		return true;
	if (n->kind == NK_Transpose) {
		unsigned c;
		const int64_t *sh = node_ints(n, AN_shuffle, &c);
		return c > 0 && sh[0] == 0;
	}
	return n->kind == NK_Concat && node_int(n, AN_dim) != 0;
}

/* Whether n can join the region g holds so far. */
static bool region_ok(const struct region *g, struct node *n, uint64_t batch)
{
	if (!per_image(n) || node_has_pred(n) || n->nres == 0 || n->nres > 8 || n->nops == 0)
		return false;
	for (unsigned r = 0; r < n->nres; r++)
		if (n->types[r]->rank < 2 || n->types[r]->dims[0] != batch ||
		    image_bytes(n->types[r], batch) > SPLIT_MAX_BYTES)
			return false;
	for (unsigned i = 0; i < n->nops; i++) {
		struct node *d = n->ops[i].def;
		if (is_conv(n) && (i == 1 || i == 2)) {
			if (!as_constant(d)) /* filter and bias */
				return false;
			continue;
		}
		const struct type *t = op_type(n, i);
		if (t->rank < 2 || t->dims[0] != batch)
			return false;
		if ((node_desc(n->kind)->flags & NF_EW) &&
		    (t->rank != n->types[0]->rank || memcmp(t->dims, n->types[0]->dims, sizeof t->dims) != 0))
			return false;
		if (d->kind != NK_Placeholder && !in_region(g, d))
			return false;
	}
	if (is_conv(n)) {
		const struct type *w = op_type(n, 1), *o = n->types[0];
		double wb = (double)type_bytes(w), ob = image_bytes(o, batch);
		if (wb > SPLIT_WEIGHT_RATIO * ob)
			return false;
	}
	return true;
}

/* One image's floating-point work of region node n (a multiply-add is 2). */
static double image_flops(const struct node *n, uint64_t batch)
{
	double out = (double)type_numel(n->types[0]) / (double)batch;
	if (is_conv(n)) {
		const struct type *w = op_type(n, 1);
		return 2 * out * (double)type_numel(w) / (double)w->dims[0];
	}
	return out;
}

/* t with dimension 0 set to sub */
static const struct type *one_image(struct module *m, const struct type *t, uint64_t sub)
{
	uint64_t dims[GLOW_MAX_RANK];
	memcpy(dims, t->dims, sizeof dims);
	dims[0] = sub;
	return type_with_dims(m->types, t, dims, t->rank);
}

/* The image-i copy of value v read by a region node: a clone, a slice of
 * a placeholder (made on first use, right before `at`), or v itself
 * (a constant). */
struct pslice {
	struct node *ph, **img;
};

/* "NAME.partI" in buf (grown as needed) */
static char *image_name(char *buf, size_t *cap, const char *base, uint64_t i)
{
	size_t need = strlen(base) + 32;
	if (need > *cap) {
		buf = xrealloc(buf, need);
		*cap = need;
	}
	snprintf(buf, need, "%s.part%llu", base, (unsigned long long)i);
	return buf;
}

int cbackend_batch_split(struct func *f)
{
	if (f->owner || f->has_sig)
		return 0;
	/* the batch: dimension 0 of the first convolution's input */
	uint64_t batch = 0;
	size_t total = 0;
	func_for_each(f, n) {
		total++;
		/* an If or a Loop reads values inside its regions that are not
		 * its operands: the Concats' place below (before the first reader
		 * outside the region) would not see those readers */
		if (node_num_regions(n))
			return 0;
		if (!batch && is_conv(n) && op_type(n, 0)->rank == 4)
			batch = op_type(n, 0)->dims[0];
	}
	if (batch < 2 || batch > 1024)
		return 0;
	struct region g = {NULL, NULL, 16, 0};
	while (g.cap < 2 * total)
		g.cap *= 2;
	g.key = xcalloc(g.cap, sizeof *g.key);
	g.idx = xcalloc(g.cap, sizeof *g.idx);
	struct node **order = xcalloc(total ? total : 1, sizeof *order);
	size_t convs = 0;
	double flops = 0, big = 0; /* big: the largest result of one image */
	func_for_each(f, n) {
		if (!region_ok(&g, n, batch))
			continue;
		size_t h = region_slot(&g, n);
		g.key[h] = n;
		g.idx[h] = g.n;
		order[g.n++] = n;
		convs += is_conv(n);
		flops += image_flops(n, batch);
		for (unsigned q = 0; q < n->nres; q++)
			if (image_bytes(n->types[q], batch) > big)
				big = image_bytes(n->types[q], batch);
	}
	int changed = 0;
	if (!convs || flops / (double)g.n < SPLIT_MIN_FLOPS)
		goto done;
	/* the Slices are made where the region's copies go, maybe before a
	 * Save that the original read came after: no split when the function
	 * writes a placeholder the region reads */
	func_for_each(f, sv) {
		if (sv->kind != NK_Save)
			continue;
		for (size_t r = 0; r < g.n; r++)
			for (unsigned k = 0; k < order[r]->nops; k++)
				if (order[r]->ops[k].def == sv->ops[1].def)
					goto done;
	}
	/* a region value read as another node's predicate would keep that
	 * use of the original (only operands are redirected to the Concats);
	 * a verified graph has none (a predicate has rank 0 or 1, region
	 * values at least 2), so this only guards the invariant */
	for (size_t r = 0; r < g.n; r++)
		for (struct use *u = order[r]->uses; u; u = u->next)
			if (u->idx >= use_user(u)->nops)
				goto done;
	/* images per part: the fewest (a divisor of the batch) that give each
	 * node SPLIT_PART_FLOPS on average */
	uint64_t sub = 1;
	while (sub < batch && (batch % sub || flops * (double)sub / (double)g.n < SPLIT_PART_FLOPS))
		sub++;
	if (sub == batch || (double)sub * big > SPLIT_MAX_BYTES)
		goto done;
	const uint64_t parts = batch / sub;
	changed = 1;
	struct module *m = f->mod;
	/* the clones and the Concats go right before the first node outside
	 * the region that reads a region value (region nodes read only region
	 * values and storage, so all of them can move there) */
	struct node *at = NULL;
	func_for_each(f, n) {
		if (in_region(&g, n))
			continue;
		for (unsigned k = 0; k < n->nops && !at; k++)
			if (in_region(&g, n->ops[k].def))
				at = n;
		if (at)
			break;
	}
	struct node **clones = xcalloc(g.n * (size_t)parts, sizeof *clones);
	struct pslice *ps = NULL;
	size_t nps = 0, cps = 0;
	char *name = NULL;
	size_t ncap = 0;
	for (uint64_t i = 0; i < parts; i++) {
		for (size_t r = 0; r < g.n; r++) {
			struct node *n = order[r];
			struct value *opv = xmalloc(n->nops * sizeof *opv);
			for (unsigned k = 0; k < n->nops; k++) {
				struct node *d = n->ops[k].def;
				opv[k] = op_val(n, k);
				if (d->kind == NK_Placeholder && !(is_conv(n) && (k == 1 || k == 2))) {
					size_t j = 0;
					while (j < nps && ps[j].ph != d)
						j++;
					if (j == nps) {
						if (nps == cps) {
							cps = cps ? 2 * cps : 4;
							ps = xrealloc(ps, cps * sizeof *ps);
						}
						ps[nps].ph = d;
						ps[nps].img = xcalloc((size_t)parts, sizeof(struct node *));
						nps++;
					}
					if (!ps[j].img[i]) {
						int64_t start[GLOW_MAX_RANK] = {0};
						const struct type *pt = node_type(d);
						start[0] = (int64_t)(i * sub);
						struct value pv = node_val(d, 0);
						name = image_name(name, &ncap, d->name, i);
						struct node *s = node_create1(f, NK_Slice, name, &pv, 1,
									      one_image(m, pt, sub), at, n->loc);
						node_set_ints(m, s, AN_start, start, pt->rank);
						ps[j].img[i] = s;
					}
					opv[k] = node_val(ps[j].img[i], 0);
				} else if (in_region(&g, d)) {
					opv[k] = node_val(clones[i * g.n + g.idx[region_slot(&g, d)]], n->ops[k].res);
				}
			}
			const struct type *types[8];
			for (unsigned q = 0; q < n->nres; q++)
				types[q] = one_image(m, n->types[q], sub);
			name = image_name(name, &ncap, n->name, i);
			struct node *c = node_create_n(f, n->kind, name, opv, n->nops, types, n->nres, at, n->loc);
			node_copy_attrs(m, c, n);
			clones[i * g.n + r] = c;
			free(opv);
		}
	}
	/* each value read outside the region: the Concat of its images */
	struct value *cv = xmalloc((size_t)parts * sizeof *cv);
	struct node **cats = xcalloc(g.n * 8, sizeof *cats); /* by region node and result */
	for (size_t r = 0; r < g.n; r++) {
		struct node *n = order[r];
		for (unsigned q = 0; q < n->nres; q++) {
			struct node *cat = NULL;
			for (struct use *u = n->uses, *nu; u; u = nu) {
				nu = u->next;
				struct node *user = use_user(u);
				if (u->res != q || in_region(&g, user) || u->idx >= user->nops)
					continue;
				if (!cat) {
					for (uint64_t i = 0; i < parts; i++)
						cv[i] = node_val(clones[i * g.n + r], q);
					cat = node_create1(f, NK_Concat, n->name, cv, (unsigned)parts, n->types[q], at,
							   n->loc);
					node_set_int(m, cat, AN_dim, 0);
					cats[r * 8 + q] = cat;
				}
				node_set_operand(user, u->idx, node_val(cat, 0));
			}
		}
	}
	free(cv);
	/* the originals, last first: nothing outside reads them any more */
	for (size_t r = g.n; r-- > 0;) {
		const char *orig = order[r]->name;
		node_erase(f, order[r]);
		/* the Concat of a result takes the original's name (result 0's;
		 * the names are in the module's arena) */
		if (cats[r * 8])
			node_rename(f, cats[r * 8], orig);
	}
	free(cats);
	for (size_t j = 0; j < nps; j++)
		free(ps[j].img);
	free(ps);
	free(clones);
	free(name);
done:
	free(order);
	free(g.key);
	free(g.idx);
	return changed;
}
