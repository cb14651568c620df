/* hashmap.h - open-addressing hash maps.
 *   strmap: NUL-terminated string keys (not copied: keep them alive) -> void *
 *   u64map: 64-bit keys (integers or pointers) -> void *
 * Both grow at 3/4 load, never shrink; iteration order is slot order (do not
 * rely on it for output: anything printed must be sorted or follow IR order). */
#ifndef GLOW_SUPPORT_HASHMAP_H
#define GLOW_SUPPORT_HASHMAP_H

#include <stddef.h>
#include <stdint.h>

uint64_t hash_bytes(const void *p, size_t n);
static inline uint64_t hash_u64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ULL;
	x ^= x >> 33;
	return x;
}
static inline uint64_t hash_combine(uint64_t h, uint64_t v) { return hash_u64(h ^ (v + 0x9e3779b97f4a7c15ULL + (h << 6))); }

struct strmap_ent {
	const char *key; /* NULL: empty slot */
	void *val;
	uint32_t hash;
	uint32_t klen;
};

struct strmap {
	struct strmap_ent *tab;
	size_t cap, len;
};

void strmap_init(struct strmap *m);
void strmap_free(struct strmap *m);
/* lookup by (ptr, len); the key need not be NUL-terminated */
void *strmap_getn(const struct strmap *m, const char *key, size_t len);
void *strmap_get(const struct strmap *m, const char *key);
/* inserts or replaces; key must stay alive and be NUL-terminated at key[len] */
void strmap_put(struct strmap *m, const char *key, size_t len, void *val);
/* returns the slot's value pointer, inserting NULL if absent (*inserted set) */
void **strmap_slot(struct strmap *m, const char *key, size_t len, int *inserted);
/* remove; returns 1 if the key was there */
int strmap_del(struct strmap *m, const char *key, size_t len);
/* The same with the key's hash given (hash_bytes(key, len)), for callers
 * that hash a name once and use it for several lookups. */
void *strmap_getn_h(const struct strmap *m, const char *key, size_t len, uint64_t hash);
void **strmap_slot_h(struct strmap *m, const char *key, size_t len, uint64_t hash, int *inserted);
/* Grows the table so that n entries in all fit without a rehash. */
void strmap_reserve(struct strmap *m, size_t n);
/* Re-points the key of the entry whose value slot is `slot` (from
 * strmap_slot) at `key`, an equal string that lives longer: a stable copy
 * of a key inserted from a transient buffer. */
void strmap_rekey(void **slot, const char *key);

struct u64map_ent {
	uint64_t key;
	void *val; /* NULL value marks an empty slot: store non-NULL values only */
};

struct u64map {
	struct u64map_ent *tab;
	size_t cap, len;
};

void u64map_init(struct u64map *m);
void u64map_free(struct u64map *m);
void *u64map_get(const struct u64map *m, uint64_t key);
void u64map_put(struct u64map *m, uint64_t key, void *val); /* val != NULL */

#define ptrmap_get(m, p) u64map_get((m), (uint64_t)(uintptr_t)(p))
#define ptrmap_put(m, p, v) u64map_put((m), (uint64_t)(uintptr_t)(p), (v))

/* string interning: equal strings get the same pointer */
struct arena;
struct interner {
	struct strmap map;
	struct arena *arena;
};
void interner_init(struct interner *in, struct arena *a);
void interner_free(struct interner *in);
const char *intern(struct interner *in, const char *s, size_t len);
const char *intern_cstr(struct interner *in, const char *s);

#endif
