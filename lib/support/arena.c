#include "arena.h"
#include "util.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct arena_chunk {
	struct arena_chunk *next;
	size_t size;
	/* data follows, 16-byte aligned */
	_Alignas(16) char data[];
};

enum { ARENA_CHUNK = 256 * 1024, ARENA_ALIGN = 16, ARENA_BIG = 64 * 1024 };

void arena_init(struct arena *a) { memset(a, 0, sizeof(*a)); }

void arena_free(struct arena *a)
{
	struct arena_chunk *c = a->head, *n;
	for (; c; c = n) {
		n = c->next;
		free(c);
	}
	memset(a, 0, sizeof(*a));
}

static struct arena_chunk *new_chunk(size_t size)
{
	if (size > SIZE_MAX - sizeof(struct arena_chunk))
		unreachable("arena allocation too large");
	struct arena_chunk *c = xmalloc(sizeof(*c) + size);
	c->size = size;
	return c;
}

void *arena_alloc(struct arena *a, size_t n)
{
	n = (n + ARENA_ALIGN - 1) & ~(size_t)(ARENA_ALIGN - 1);
	if (n == 0)
		n = ARENA_ALIGN;
	a->total += n;
	if (a->cur) {
		/* cur is 8-aligned after arena_alloc8 */
		char *p = a->cur + ((size_t)(-(uintptr_t)a->cur) & (ARENA_ALIGN - 1));
		if (p <= a->end && (size_t)(a->end - p) >= n) {
			a->cur = p + n;
			return p;
		}
	}
	if (n >= ARENA_BIG) {
		/* a dedicated chunk behind the current one keeps the bump region */
		struct arena_chunk *c = new_chunk(n);
		if (a->head) {
			c->next = a->head->next;
			a->head->next = c;
		} else {
			c->next = NULL;
			a->head = c;
			a->cur = a->end = c->data + n;
		}
		return c->data;
	}
	struct arena_chunk *c = new_chunk(ARENA_CHUNK);
	c->next = a->head;
	a->head = c;
	a->cur = c->data + n;
	a->end = c->data + ARENA_CHUNK;
	return c->data;
}

void *arena_alloc8(struct arena *a, size_t n)
{
	n = (n + 7) & ~(size_t)7;
	if (n == 0)
		n = 8;
	if (a->cur && (size_t)(a->end - a->cur) >= n) {
		void *p = a->cur;
		a->cur += n;
		a->total += n;
		return p;
	}
	return arena_alloc(a, n);
}

void *arena_zalloc(struct arena *a, size_t n)
{
	void *p = arena_alloc(a, n);
	memset(p, 0, n);
	return p;
}

char *arena_strndup(struct arena *a, const char *s, size_t n)
{
	char *d = arena_alloc(a, n + 1);
	if (n) /* s may be NULL when n is 0 (an empty token) */
		memcpy(d, s, n);
	d[n] = 0;
	return d;
}

char *arena_strdup(struct arena *a, const char *s) { return arena_strndup(a, s, strlen(s)); }

void *arena_memdup(struct arena *a, const void *p, size_t n)
{
	void *d = arena_alloc(a, n);
	if (n)
		memcpy(d, p, n);
	return d;
}
