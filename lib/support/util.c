#define _DEFAULT_SOURCE /* madvise */
#include "util.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#if defined(__linux__)
#include <sys/mman.h>
#include <unistd.h>
#endif

void glow_unreachable_at(const char *file, int line, const char *msg)
{
	fprintf(stderr, "%s:%d: internal error: %s\n", file, line, msg);
	fflush(stderr);
	abort();
}

static void oom(size_t n)
{
	fprintf(stderr, "fatal error: out of memory allocating %zu bytes\n", n);
	exit(2);
}

/* Large blocks (weights, activations, packed filters: up to gigabytes for
 * the big networks) are asked to be backed by transparent huge pages where
 * the system does that on request (Linux's "madvise" mode, the common
 * default): touching fresh memory then faults once per 2 MiB instead of
 * once per 4 KiB. On virtual machines, where a page fault is expensive,
 * that more than halved the time of compiling and running VGG-19 through
 * glow-diff (bench/README.md).
 * Only the whole pages inside the block are advised; the call is a hint
 * and its failure changes nothing. */
#define BIG_BLOCK ((size_t)4 << 20)
void glow_big_pages(void *p, size_t n)
{
#if defined(__linux__) && defined(MADV_HUGEPAGE)
	if (!p || n < BIG_BLOCK)
		return;
	/* asked each time (threads allocate too; the call is nothing beside
	 * a block of megabytes) */
	long ps = sysconf(_SC_PAGESIZE);
	size_t page = ps > 0 ? (size_t)ps : 4096;
	uintptr_t b = ((uintptr_t)p + page - 1) & ~(uintptr_t)(page - 1);
	uintptr_t e = ((uintptr_t)p + n) & ~(uintptr_t)(page - 1);
	if (e > b)
		(void)madvise((void *)b, e - b, MADV_HUGEPAGE);
#else
	(void)p;
	(void)n;
#endif
}

void *xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);
	if (!p)
		oom(n);
	glow_big_pages(p, n);
	return p;
}

void *xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size ? size : 1);
	if (!p)
		oom(n * size);
	if (size && n <= SIZE_MAX / size)
		glow_big_pages(p, n * size);
	return p;
}

void *xrealloc(void *p, size_t n)
{
	void *q = realloc(p, n ? n : 1);
	if (!q)
		oom(n);
	glow_big_pages(q, n);
	return q;
}

char *xstrndup(const char *s, size_t n)
{
	char *d = xmalloc(n + 1);
	memcpy(d, s, n);
	d[n] = 0;
	return d;
}

char *xstrdup(const char *s) { return xstrndup(s, strlen(s)); }

void *xgrow(void *p, size_t *cap, size_t need, size_t elem_size)
{
	size_t c = *cap;
	if (need <= c)
		return p;
	if (c < 8)
		c = 8;
	while (c < need) {
		if (c > SIZE_MAX / 2)
			oom(SIZE_MAX);
		c *= 2;
	}
	if (c > SIZE_MAX / elem_size)
		oom(SIZE_MAX);
	*cap = c;
	return xrealloc(p, c * elem_size);
}

int mul_overflow_u64(uint64_t a, uint64_t b, uint64_t *out)
{
	if (a != 0 && b > UINT64_MAX / a)
		return 0;
	*out = a * b;
	return 1;
}
