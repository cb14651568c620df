/* parse_scope.c - the .gir reader's name scope: an open-addressing table
 * from a statement's name to its value, tagged with the name's hash so a
 * miss costs one cache line. Names are hashed once by the reader (parse.c),
 * which passes the hash in.
 */
#define _POSIX_C_SOURCE 200809L
#define _DEFAULT_SOURCE /* madvise */
#include "gir.tab.h"
#include "ir/ir.h"
#include "ir/parse.h"
#include "support/util.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#if defined(__linux__)
#include <sys/mman.h>
#endif

/* The scope: a table of 2^k uint64_t entries, 0 empty, else a value's
 * pointer with the top SCOPE_TAG_BITS bits of its name's hash in bits 48-63
 * (user-space pointers leave them clear; if one does not, the table turns
 * plain). A probe compares names only when the tags agree, so a miss costs
 * one cache line, and a million entries take 16 MB. Big tables ask for huge
 * pages: a name's slot is a random access, and a TLB miss per statement
 * costs as much as the rest of the statement. */
enum { SCOPE_TAG_SHIFT = 48 };
#define SCOPE_PTR_MASK ((UINT64_C(1) << SCOPE_TAG_SHIFT) - 1)

static void scope_alloc(struct gir_scope *s, size_t cap)
{
	size_t bytes = cap * sizeof(uint64_t);
	s->tab = NULL;
#if defined(__linux__) && defined(MADV_HUGEPAGE)
	if (bytes >= (size_t)4 << 20) {
		void *m;
		if (posix_memalign(&m, (size_t)2 << 20, bytes) == 0) {
			madvise(m, bytes, MADV_HUGEPAGE);
			memset(m, 0, bytes);
			s->tab = m;
		}
	}
#endif
	if (!s->tab)
		s->tab = xcalloc(cap, sizeof(uint64_t));
	s->cap = cap;
}

void gir_scope_free(struct gir_scope *s)
{
	free(s->tab);
	memset(s, 0, sizeof(*s));
}

static struct ir_value *scope_val(const struct gir_scope *s, uint64_t e)
{
	return (struct ir_value *)(uintptr_t)(s->untagged ? e : e & SCOPE_PTR_MASK);
}

static void scope_put(struct gir_scope *s, struct ir_value *v, uint64_t h)
{
	uint64_t e = (uint64_t)(uintptr_t)v;
	if (!s->untagged && (e >> SCOPE_TAG_SHIFT)) {
		s->untagged = true;
		for (size_t i = 0; i < s->cap; i++)
			s->tab[i] &= SCOPE_PTR_MASK;
	}
	if (!s->untagged)
		e |= h >> SCOPE_TAG_SHIFT << SCOPE_TAG_SHIFT;
	size_t mask = s->cap - 1, i = (size_t)h & mask;
	while (s->tab[i])
		i = (i + 1) & mask;
	s->tab[i] = e;
	s->len++;
}

/* Room for n entries without a rehash. */
void gir_scope_reserve(struct gir_scope *s, size_t n)
{
	size_t cap = s->cap ? s->cap : 1024;
	while (n * 4 > cap * 3 && cap < SIZE_MAX / 16)
		cap *= 2;
	if (cap == s->cap)
		return;
	struct gir_scope old = *s;
	scope_alloc(s, cap);
	s->len = 0;
	for (size_t i = 0; i < old.cap; i++)
		if (old.tab[i]) {
			struct ir_value *v = scope_val(&old, old.tab[i]);
			scope_put(s, v, hash_bytes(v->name, strlen(v->name)));
		}
	free(old.tab);
}

void gir_scope_add(struct gir_scope *s, struct ir_value *v, uint64_t h)
{
	gir_scope_reserve(s, s->len + 1);
	scope_put(s, v, h);
}

/* The value defined under a name (key, len, hash); NULL if none, or if its
 * definition was erased after an error. */
struct ir_value *gir_scope_find(const struct gir_scope *s, const char *k, size_t len, uint64_t h)
{
	if (!s->cap)
		return NULL;
	size_t mask = s->cap - 1, i = (size_t)h & mask;
	uint64_t tag = h >> SCOPE_TAG_SHIFT;
	for (;; i = (i + 1) & mask) {
		uint64_t e = s->tab[i];
		if (!e)
			return NULL;
		if (!s->untagged && e >> SCOPE_TAG_SHIFT != tag)
			continue;
		struct ir_value *v = scope_val(s, e);
		if (strncmp(v->name, k, len) != 0 || v->name[len] != 0)
			continue;
		if (v->vkind != IV_WEIGHT && (((struct ir_instr *)(void *)v)->bits & IR_ERASED))
			return NULL;
		return v;
	}
}
