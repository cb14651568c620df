#include "types.h"
#include "io.h"
#include "scalar.h"
#include "util.h"

#include <stdio.h>
#include <string.h>

static const struct {
	const char *name;
	size_t size;
	enum elem_class cls;
} elems[] = {
#define ELEM(e, s, b, c) {s, b, EC_##c},
	GLOW_ELEM_KINDS(ELEM)
#undef ELEM
};

_Static_assert(EK_F8E4M3FNUZ - EK_F8E4M3FN == SC_F8_E4M3FNUZ && EK_F8E5M2 - EK_F8E4M3FN == SC_F8_E5M2 &&
		       EK_F8E5M2FNUZ - EK_F8E4M3FN == SC_F8_E5M2FNUZ,
	       "the float8 element kinds are not in scalar.h's format order");

const char *elem_name(enum elem_kind k) { return elems[k].name; }
size_t elem_size(enum elem_kind k) { return elems[k].size; }
enum elem_class elem_class(enum elem_kind k) { return elems[k].cls; }

int elem_lookup(const char *s, size_t len)
{
	if (len == 5 && memcmp(s, "index", 5) == 0)
		return EK_INDEX64;
	for (int i = 0; i < EK_COUNT; i++)
		if (strlen(elems[i].name) == len && memcmp(elems[i].name, s, len) == 0)
			return i;
	return -1;
}

void type_ctx_init(struct type_ctx *c)
{
	arena_init(&c->arena);
	strmap_init(&c->map);
}

void type_ctx_free(struct type_ctx *c)
{
	strmap_free(&c->map);
	arena_free(&c->arena);
}

const struct type *type_get_q(struct type_ctx *c, enum elem_kind k, const uint64_t *dims, unsigned rank,
			      float scale, int32_t offset)
{
	glow_assert(rank <= GLOW_MAX_RANK && k < EK_COUNT);
	struct type t;
	memset(&t, 0, sizeof t);
	t.elem = (uint8_t)k;
	t.rank = (uint8_t)rank;
	if (elem_is_quantized(k)) {
		t.scale = scale;
		t.offset = offset;
	}
	if (rank)
		memcpy(t.dims, dims, rank * sizeof(uint64_t));
	int ins;
	void **slot = strmap_slot(&c->map, (const char *)&t, sizeof t, &ins);
	if (ins) {
		struct type *n = arena_memdup(&c->arena, &t, sizeof t);
		struct strmap_ent *e = (struct strmap_ent *)((char *)slot - offsetof(struct strmap_ent, val));
		e->key = (const char *)n;
		*slot = n;
	}
	return *slot;
}

const struct type *type_get(struct type_ctx *c, enum elem_kind k, const uint64_t *dims, unsigned rank)
{
	return type_get_q(c, k, dims, rank, 0.0f, 0);
}

const struct type *type_with_dims(struct type_ctx *c, const struct type *t, const uint64_t *dims, unsigned rank)
{
	return type_get_q(c, (enum elem_kind)t->elem, dims, rank, t->scale, t->offset);
}

const struct type *type_with_elem(struct type_ctx *c, const struct type *t, enum elem_kind k)
{
	return type_get(c, k, t->dims, t->rank);
}

uint64_t type_numel(const struct type *t)
{
	uint64_t n = 1;
	for (unsigned i = 0; i < t->rank; i++)
		n *= t->dims[i];
	return n;
}

uint64_t type_bytes(const struct type *t) { return type_numel(t) * elem_size((enum elem_kind)t->elem); }

int type_shape_ok(enum elem_kind k, const uint64_t *dims, unsigned rank)
{
	uint64_t n = elem_size(k);
	for (unsigned i = 0; i < rank; i++)
		if (!mul_overflow_u64(n, dims[i], &n) || n > ((uint64_t)1 << 48))
			return 0;
	return 1;
}

/* Formats into one local buffer and writes it at once: printers call this
 * for every value, so it avoids a stream call per dimension. */
void type_print(struct ostream *o, const struct type *t)
{
	/* name + quantization + '<' + 8 dims of <= 20 digits + 7 " x " + '>' */
	char b[16 + 64 + GLOW_MAX_RANK * 23 + 8];
	size_t n = 0;
	const char *name = elem_name((enum elem_kind)t->elem);
	size_t nl = strlen(name);
	memcpy(b, name, nl);
	n = nl;
	if (elem_is_quantized((enum elem_kind)t->elem)) {
		b[n++] = '[';
		n += (size_t)format_float(b + n, 48, t->scale);
		b[n++] = ':';
		n += (size_t)snprintf(b + n, 16, "%d", (int)t->offset);
		b[n++] = ']';
	}
	b[n++] = '<';
	for (unsigned i = 0; i < t->rank && i < GLOW_MAX_RANK; i++) {
		if (i) {
			memcpy(b + n, " x ", 3);
			n += 3;
		}
		char d[24];
		int k = 24;
		uint64_t v = t->dims[i];
		do {
			d[--k] = (char)('0' + v % 10);
			v /= 10;
		} while (v);
		memcpy(b + n, d + k, (size_t)(24 - k));
		n += (size_t)(24 - k);
	}
	b[n++] = '>';
	os_write(o, b, n);
}

char *type_str(const struct type *t, char *buf, size_t size)
{
	struct ostream o;
	ostream_mem(&o);
	type_print(&o, t);
	snprintf(buf, size, "%s", ostream_cstr(&o));
	ostream_abort(&o);
	return buf;
}
