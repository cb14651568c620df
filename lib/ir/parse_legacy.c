/* parse_legacy.c - the seed design's spellings of the .gir reader, read
 * from the table lib/ir/Legacy.def: `pool max` and `pool avg` for kinds,
 * and the bracketed positional attribute lists (`convolution [5 1 2 16]`).
 *
 * Nothing here names a kind or an attribute: a new legacy spelling is a row
 * of Legacy.def. The grammar (gir.y) only recognizes the shape (a modifier
 * identifier and a bracketed list after the kind).
 */
#include "ir/parse.h"
#include "support/suggest.h"
#include "support/util.h"

#include <stdio.h>
#include <string.h>

/* `Written Modifier` names kind. */
struct legacy_kind {
	const char *written, *modifier;
	unsigned kind;
};

static const struct legacy_kind legacy_kinds[] = {
#define LEGACY_KIND(w, m, k) {#w, #m, IK_##k},
#define LEGACY_POS(k, w, f)
#define LEGACY_FIELD(f, a, n)
#define LEGACY_CHANNELS(f)
#include "ir/Legacy.def"
#undef LEGACY_KIND
#undef LEGACY_POS
#undef LEGACY_FIELD
#undef LEGACY_CHANNELS
};

/* kind accepts a positional list of the fields in `fields`. */
struct legacy_pos {
	unsigned kind;
	const char *written, *fields;
};

static const struct legacy_pos legacy_pos[] = {
#define LEGACY_KIND(w, m, k)
#define LEGACY_POS(k, w, f) {IK_##k, #w, f},
#define LEGACY_FIELD(f, a, n)
#define LEGACY_CHANNELS(f)
#include "ir/Legacy.def"
#undef LEGACY_KIND
#undef LEGACY_POS
#undef LEGACY_FIELD
#undef LEGACY_CHANNELS
};

/* A positional field: copies of its value in attribute attr, or (copies 0)
 * a check against the destination's channels. */
struct legacy_field {
	const char *name, *attr;
	unsigned copies;
};

static const struct legacy_field legacy_fields[] = {
#define LEGACY_KIND(w, m, k)
#define LEGACY_POS(k, w, f)
#define LEGACY_FIELD(f, a, n) {#f, #a, n},
#define LEGACY_CHANNELS(f) {#f, NULL, 0},
#include "ir/Legacy.def"
#undef LEGACY_KIND
#undef LEGACY_POS
#undef LEGACY_FIELD
#undef LEGACY_CHANNELS
};

/* at most this many fields in a list, and copies of a value */
enum { LEGACY_MAX_FIELDS = 8 };

static bool span_is(const char *s, size_t len, const char *word) { return strlen(word) == len && !memcmp(s, word, len); }

/* The field named by [s, s + len), NULL if it has no row. */
static const struct legacy_field *field_find(const char *s, size_t len)
{
	for (size_t i = 0; i < GLOW_ARRAY_SIZE(legacy_fields); i++)
		if (span_is(s, len, legacy_fields[i].name))
			return &legacy_fields[i];
	return NULL;
}

/* The fields of a LEGACY_POS row, in order, with the attribute index of
 * each (-1: a channel check) in idx; returns their count. Stops with an
 * internal error naming the row when a field or an attribute is missing. */
static unsigned pos_fields(const struct legacy_pos *r, const struct legacy_field **out, int *idx)
{
	unsigned n = 0;
	for (const char *c = r->fields; *c;) {
		size_t len = strcspn(c, " ");
		const struct legacy_field *f = field_find(c, len);
		static char msg[160];
		if (!f || n == LEGACY_MAX_FIELDS) {
			snprintf(msg, sizeof msg, "Legacy.def row %s: no LEGACY_FIELD for '%.*s'", instr_kind_name(r->kind),
				 (int)len, c);
			unreachable(msg);
		}
		if (f->copies > LEGACY_MAX_FIELDS) {
			snprintf(msg, sizeof msg, "Legacy.def field %s: more than %d copies", f->name, LEGACY_MAX_FIELDS);
			unreachable(msg);
		}
		idx[n] = f->attr ? instr_attr_index(r->kind, f->attr, strlen(f->attr)) : -1;
		if (f->attr && idx[n] < 0) {
			snprintf(msg, sizeof msg, "Legacy.def row %s: the kind has no attribute '%s'",
				 instr_kind_name(r->kind), f->attr);
			unreachable(msg);
		}
		out[n++] = f;
		c += len;
		while (*c == ' ')
			c++;
	}
	return n;
}

void gir_legacy_check(void)
{
	static bool done;
	if (done)
		return;
	done = true;
	instr_desc_init();
	const struct legacy_field *f[LEGACY_MAX_FIELDS];
	int idx[LEGACY_MAX_FIELDS];
	for (size_t i = 0; i < GLOW_ARRAY_SIZE(legacy_pos); i++)
		pos_fields(&legacy_pos[i], f, idx);
}

int gir_legacy_kind(struct gir_parser *p, const struct tp_span *kind, struct loc kloc)
{
	char mods[128];
	size_t len = 0;
	mods[0] = 0;
	unsigned nmods = 0;
	for (size_t i = 0; i < GLOW_ARRAY_SIZE(legacy_kinds); i++) {
		const struct legacy_kind *r = &legacy_kinds[i];
		if (!span_is(kind->s, kind->len, r->written))
			continue;
		if (p->has_mod && span_is(p->mod.s, p->mod.len, r->modifier))
			return (int)r->kind;
		nmods++;
	}
	if (nmods == 0) {
		if (!p->has_mod)
			return -2;
		gir_p_error(p, kloc, "unknown instruction kind '%.*s %.*s'", (int)kind->len, kind->s, (int)p->mod.len,
			    p->mod.s);
		return -1;
	}
	/* "'max' or 'avg'": the modifiers of the written name, in table order */
	unsigned j = 0;
	for (size_t i = 0; i < GLOW_ARRAY_SIZE(legacy_kinds) && len < sizeof mods; i++)
		if (span_is(kind->s, kind->len, legacy_kinds[i].written))
			len += (size_t)snprintf(mods + len, sizeof mods - len, "%s'%s'",
						j++ == 0 ? "" : j == nmods ? " or " : ", ", legacy_kinds[i].modifier);
	gir_p_error(p, p->has_mod ? p->mod_loc : kloc, "%.*s needs %s", (int)kind->len, kind->s, mods);
	return -1;
}

/* "convolution and pool": the written names of the LEGACY_POS rows, each
 * once, in table order. */
static void pos_names(char *buf, size_t size)
{
	const char *names[GLOW_ARRAY_SIZE(legacy_pos)];
	size_t n = 0, len = 0;
	for (size_t i = 0; i < GLOW_ARRAY_SIZE(legacy_pos); i++) {
		bool seen = false;
		for (size_t j = 0; j < n; j++)
			seen |= strcmp(names[j], legacy_pos[i].written) == 0;
		if (!seen)
			names[n++] = legacy_pos[i].written;
	}
	buf[0] = 0;
	for (size_t i = 0; i < n && len < size; i++)
		len += (size_t)snprintf(buf + len, size - len, "%s%s", i == 0 ? "" : i + 1 == n ? " and " : ", ",
					names[i]);
}

bool gir_legacy_positional(struct gir_parser *p, struct ir_instr *in, bool *set)
{
	const struct legacy_pos *r = NULL;
	for (size_t i = 0; i < GLOW_ARRAY_SIZE(legacy_pos) && !r; i++)
		if (legacy_pos[i].kind == in->kind)
			r = &legacy_pos[i];
	if (!r) {
		char names[128];
		pos_names(names, sizeof names);
		gir_p_error(p, p->pos_loc, "a positional attribute list is only accepted by %s", names);
		return false;
	}
	const struct legacy_field *f[LEGACY_MAX_FIELDS];
	int idx[LEGACY_MAX_FIELDS];
	unsigned n = pos_fields(r, f, idx);
	if (p->pos.len != n) {
		gir_p_error(p, p->pos_loc, "%s takes %u positional attributes [%s], got %zu", r->written, n, r->fields,
			    p->pos.len);
		return false;
	}
	for (unsigned i = 0; i < n; i++) {
		int64_t v = p->pos.data[i];
		if (idx[i] >= 0) {
			int64_t copies[LEGACY_MAX_FIELDS];
			for (unsigned c = 0; c < f[i]->copies; c++)
				copies[c] = v;
			gir_p_set_ints(p, in, (unsigned)idx[i], copies, f[i]->copies);
			set[idx[i]] = true;
			continue;
		}
		const struct type *dst = ir_op_type(in, 0);
		if (dst->rank == 0 || (int64_t)dst->dims[dst->rank - 1u] != v) {
			char b[128];
			gir_p_error(p, p->pos_loc, "%s %s %lld does not match the channels of destination %s", r->written,
				    f[i]->name, (long long)v, type_str(dst, b, sizeof b));
			return false;
		}
	}
	return true;
}
