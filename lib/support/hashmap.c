#include "hashmap.h"
#include "arena.h"
#include "util.h"

#include <stdlib.h>
#include <string.h>

/* FNV-1a on 8-byte words: fast enough for names, well mixed by hash_u64. */
uint64_t hash_bytes(const void *p, size_t n)
{
	const unsigned char *s = p;
	uint64_t h = 0xcbf29ce484222325ULL;
	while (n >= 8) {
		uint64_t w;
		memcpy(&w, s, 8);
		h = (h ^ w) * 0x100000001b3ULL;
		s += 8;
		n -= 8;
	}
	uint64_t w = 0;
	memcpy(&w, s, n);
	h = (h ^ w ^ ((uint64_t)n << 56)) * 0x100000001b3ULL;
	return hash_u64(h);
}

void strmap_init(struct strmap *m) { memset(m, 0, sizeof(*m)); }
void strmap_free(struct strmap *m)
{
	free(m->tab);
	memset(m, 0, sizeof(*m));
}

static struct strmap_ent *strmap_find(const struct strmap *m, const char *key, size_t len, uint32_t h)
{
	size_t mask = m->cap - 1, i = h & mask;
	for (;;) {
		struct strmap_ent *e = &m->tab[i];
		if (!e->key || (e->hash == h && e->klen == len && memcmp(e->key, key, len) == 0))
			return e;
		i = (i + 1) & mask;
	}
}

static void strmap_rehash(struct strmap *m, size_t ncap)
{
	struct strmap_ent *old = m->tab;
	size_t ocap = m->cap;
	m->tab = xcalloc(ncap, sizeof(*m->tab));
	m->cap = ncap;
	for (size_t i = 0; i < ocap; i++) {
		if (!old[i].key)
			continue;
		size_t j = old[i].hash & (ncap - 1);
		while (m->tab[j].key)
			j = (j + 1) & (ncap - 1);
		m->tab[j] = old[i];
	}
	free(old);
}

void *strmap_getn(const struct strmap *m, const char *key, size_t len)
{
	if (!m->len)
		return NULL;
	struct strmap_ent *e = strmap_find(m, key, len, (uint32_t)hash_bytes(key, len));
	return e->key ? e->val : NULL;
}

void *strmap_get(const struct strmap *m, const char *key) { return strmap_getn(m, key, strlen(key)); }

void *strmap_getn_h(const struct strmap *m, const char *key, size_t len, uint64_t hash)
{
	if (!m->len)
		return NULL;
	struct strmap_ent *e = strmap_find(m, key, len, (uint32_t)hash);
	return e->key ? e->val : NULL;
}

void **strmap_slot_h(struct strmap *m, const char *key, size_t len, uint64_t hash, int *inserted)
{
	if ((m->len + 1) * 4 > m->cap * 3)
		strmap_rehash(m, m->cap ? m->cap * 2 : 16);
	uint32_t h = (uint32_t)hash;
	struct strmap_ent *e = strmap_find(m, key, len, h);
	*inserted = !e->key;
	if (!e->key) {
		e->key = key;
		e->klen = (uint32_t)len;
		e->hash = h;
		e->val = NULL;
		m->len++;
	}
	return &e->val;
}

void strmap_reserve(struct strmap *m, size_t n)
{
	size_t cap = m->cap ? m->cap : 16;
	while (n * 4 > cap * 3) {
		if (cap > SIZE_MAX / 2 / sizeof(*m->tab))
			unreachable("strmap_reserve: too many entries");
		cap *= 2;
	}
	if (cap != m->cap)
		strmap_rehash(m, cap);
}

void strmap_rekey(void **slot, const char *key)
{
	struct strmap_ent *e = (struct strmap_ent *)(void *)((char *)slot - offsetof(struct strmap_ent, val));
	e->key = key;
}

void **strmap_slot(struct strmap *m, const char *key, size_t len, int *inserted)
{
	return strmap_slot_h(m, key, len, hash_bytes(key, len), inserted);
}

void strmap_put(struct strmap *m, const char *key, size_t len, void *val)
{
	int ins;
	*strmap_slot(m, key, len, &ins) = val;
}

int strmap_del(struct strmap *m, const char *key, size_t len)
{
	if (!m->len)
		return 0;
	struct strmap_ent *e = strmap_find(m, key, len, (uint32_t)hash_bytes(key, len));
	if (!e->key)
		return 0;
	/* backward-shift deletion keeps probe chains intact */
	size_t mask = m->cap - 1, i = (size_t)(e - m->tab), j = i;
	for (;;) {
		j = (j + 1) & mask;
		if (!m->tab[j].key)
			break;
		size_t k = m->tab[j].hash & mask;
		if ((j > i && (k <= i || k > j)) || (j < i && (k <= i && k > j))) {
			m->tab[i] = m->tab[j];
			i = j;
		}
	}
	m->tab[i].key = NULL;
	m->len--;
	return 1;
}

void u64map_init(struct u64map *m) { memset(m, 0, sizeof(*m)); }
void u64map_free(struct u64map *m)
{
	free(m->tab);
	memset(m, 0, sizeof(*m));
}

static struct u64map_ent *u64map_find(const struct u64map *m, uint64_t key)
{
	size_t mask = m->cap - 1, i = hash_u64(key) & mask;
	for (;;) {
		struct u64map_ent *e = &m->tab[i];
		if (!e->val || e->key == key)
			return e;
		i = (i + 1) & mask;
	}
}

void *u64map_get(const struct u64map *m, uint64_t key)
{
	if (!m->len)
		return NULL;
	return u64map_find(m, key)->val;
}

void u64map_put(struct u64map *m, uint64_t key, void *val)
{
	glow_assert(val != NULL);
	if ((m->len + 1) * 4 > m->cap * 3) {
		struct u64map_ent *old = m->tab;
		size_t ocap = m->cap;
		m->cap = ocap ? ocap * 2 : 16;
		m->tab = xcalloc(m->cap, sizeof(*m->tab));
		m->len = 0;
		for (size_t i = 0; i < ocap; i++)
			if (old[i].val) {
				struct u64map_ent *e = u64map_find(m, old[i].key);
				*e = old[i];
				m->len++;
			}
		free(old);
	}
	struct u64map_ent *e = u64map_find(m, key);
	if (!e->val)
		m->len++;
	e->key = key;
	e->val = val;
}

void interner_init(struct interner *in, struct arena *a)
{
	strmap_init(&in->map);
	in->arena = a;
}

void interner_free(struct interner *in) { strmap_free(&in->map); }

const char *intern(struct interner *in, const char *s, size_t len)
{
	int ins;
	void **slot = strmap_slot(&in->map, s, len, &ins);
	if (ins) {
		char *copy = arena_strndup(in->arena, s, len);
		/* re-point the key at the stable copy */
		struct strmap_ent *e = (struct strmap_ent *)((char *)slot - offsetof(struct strmap_ent, val));
		e->key = copy;
		*slot = copy;
	}
	return *slot;
}

const char *intern_cstr(struct interner *in, const char *s) { return intern(in, s, strlen(s)); }
