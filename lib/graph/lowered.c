/* lowered.c - the lowered-info map (lowered.h): an open-addressing table
 * from node to entry in the module's arena. The arena frees nothing, so a
 * grown table leaves the old slots behind: at most as many as the live
 * table holds. */
#include "graph/lowered.h"
#include "support/hashmap.h"

#include <string.h>

struct lowered_map {
	struct lowered_entry *slots; /* cap slots; node NULL: empty */
	size_t cap, n;
};

/* The slot of n, or the empty slot where it would go. */
static struct lowered_entry *lw_slot(const struct lowered_map *t, const struct node *n)
{
	size_t mask = t->cap - 1, i = (size_t)hash_u64((uint64_t)(uintptr_t)n) & mask;
	while (t->slots[i].node && t->slots[i].node != n)
		i = (i + 1) & mask;
	return &t->slots[i];
}

void lowered_set(struct module *m, const struct node *n, const char *name, unsigned res)
{
	struct lowered_map *t = m->lowered;
	if (!t) {
		t = m->lowered = arena_zalloc(&m->arena, sizeof *t);
		t->cap = 16;
		t->slots = arena_zalloc(&m->arena, t->cap * sizeof *t->slots);
	}
	if (2 * (t->n + 1) > t->cap) { /* at most half full */
		struct lowered_map old = *t;
		t->cap *= 2;
		t->n = 0;
		t->slots = arena_zalloc(&m->arena, t->cap * sizeof *t->slots);
		for (size_t i = 0; i < old.cap; i++)
			if (old.slots[i].node) {
				*lw_slot(t, old.slots[i].node) = old.slots[i];
				t->n++;
			}
	}
	struct lowered_entry *e = lw_slot(t, n);
	if (!e->node)
		t->n++;
	e->node = n;
	e->name = arena_strdup(&m->arena, name);
	e->res = res;
}

const struct lowered_entry *lowered_get(const struct module *m, const struct node *n)
{
	if (!m->lowered)
		return NULL;
	const struct lowered_entry *e = lw_slot(m->lowered, n);
	return e->node && !(n->bits & NODE_ERASED) ? e : NULL;
}

void lowered_origin(const struct module *m, struct value v, const char **name, unsigned *res)
{
	const struct lowered_entry *e = v.res == 0 ? lowered_get(m, v.node) : NULL;
	*name = e ? e->name : v.node->name;
	*res = e ? e->res : v.res;
}

int lowered_for_each(const struct module *m, int (*fn)(void *arg, const struct lowered_entry *e), void *arg)
{
	const struct lowered_map *t = m->lowered;
	for (size_t i = 0; t && i < t->cap; i++) {
		const struct lowered_entry *e = &t->slots[i];
		if (e->node && !(e->node->bits & NODE_ERASED)) {
			int rc = fn(arg, e);
			if (rc)
				return rc;
		}
	}
	return 0;
}
