/* arena.h - bump allocation; everything in an arena is freed at once.
 * One arena per module (graph IR) or function (instruction IR). */
#ifndef GLOW_SUPPORT_ARENA_H
#define GLOW_SUPPORT_ARENA_H

#include <stddef.h>

struct arena_chunk;

struct arena {
	struct arena_chunk *head;
	char *cur, *end;
	size_t total; /* bytes handed out, for statistics */
};

void arena_init(struct arena *a);
void arena_free(struct arena *a);
/* 16-byte aligned, uninitialised */
void *arena_alloc(struct arena *a, size_t n);
/* 8-byte aligned, uninitialised: for many small objects that need no more
 * (it saves the rounding up to 16 bytes) */
void *arena_alloc8(struct arena *a, size_t n);
/* zeroed */
void *arena_zalloc(struct arena *a, size_t n);
char *arena_strndup(struct arena *a, const char *s, size_t n);
char *arena_strdup(struct arena *a, const char *s);
void *arena_memdup(struct arena *a, const void *p, size_t n);

#define arena_new(a, T) ((T *)arena_zalloc((a), sizeof(T)))
#define arena_array(a, T, n) ((T *)arena_zalloc((a), sizeof(T) * (n)))

#endif
