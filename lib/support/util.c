#include "util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

void *xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);
	if (!p)
		oom(n);
	return p;
}

void *xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size ? size : 1);
	if (!p)
		oom(n * size);
	return p;
}

void *xrealloc(void *p, size_t n)
{
	void *q = realloc(p, n ? n : 1);
	if (!q)
		oom(n);
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
