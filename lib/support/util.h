/* util.h - small helpers every library uses: checked allocation, growth with
 * overflow checks, the one unreachable() for internal bugs. */
#ifndef GLOW_SUPPORT_UTIL_H
#define GLOW_SUPPORT_UTIL_H

#include <stddef.h>
#include <stdint.h>

#if defined(__GNUC__)
#define GLOW_PRINTF(f, a) __attribute__((format(printf, f, a)))
#define GLOW_NORETURN __attribute__((noreturn))
#define GLOW_UNUSED __attribute__((unused))
#define GLOW_LIKELY(x) __builtin_expect(!!(x), 1)
#define GLOW_UNLIKELY(x) __builtin_expect(!!(x), 0)
#else
#define GLOW_PRINTF(f, a)
#define GLOW_NORETURN
#define GLOW_UNUSED
#define GLOW_LIKELY(x) (x)
#define GLOW_UNLIKELY(x) (x)
#endif

#define GLOW_ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define GLOW_VERSION "0.1.0"

/* Internal bugs only: bad input must never get here. Prints file:line and aborts. */
GLOW_NORETURN void glow_unreachable_at(const char *file, int line, const char *msg);
#define unreachable(msg) glow_unreachable_at(__FILE__, __LINE__, (msg))
#define glow_assert(c) ((c) ? (void)0 : glow_unreachable_at(__FILE__, __LINE__, "assertion failed: " #c))

/* Allocation that cannot fail (out of memory aborts with a message). */
void *xmalloc(size_t n);
void *xcalloc(size_t n, size_t size);
void *xrealloc(void *p, size_t n);
/* Asks for transparent huge pages behind the n bytes at p when n is large
 * (4 MiB or more; Linux, a hint). x*alloc do it; for the blocks allocated
 * otherwise (aligned_alloc, or malloc where failure is reported), call it
 * before the memory is first touched. p may be NULL (nothing is done). */
void glow_big_pages(void *p, size_t n);
char *xstrdup(const char *s);
char *xstrndup(const char *s, size_t n);

/* Grows *cap (at least to need elements, doubling) and reallocs p; checks
 * size_t overflow. Returns the new pointer. */
void *xgrow(void *p, size_t *cap, size_t need, size_t elem_size);

/* a * b with overflow detection; returns 0 on overflow, 1 otherwise. */
int mul_overflow_u64(uint64_t a, uint64_t b, uint64_t *out);

#endif
