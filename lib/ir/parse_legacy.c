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

/* A row of Legacy.def. */
enum legacy_what { LR_KIND, LR_POS, LR_FIELD, LR_CHANNELS };
struct legacy_row {
	enum legacy_what what;
	const char *a, *b; /* KIND: written, modifier; POS: written, fields; FIELD: field, attribute */
	unsigned kind;     /* KIND, POS */
	unsigned copies;   /* FIELD */
};

static const struct legacy_row legacy_rows[] = {
#define LEGACY_KIND(w, m, k) {LR_KIND, #w, #m, IK_##k, 0},
#define LEGACY_POS(k, w, f) {LR_POS, #w, f, IK_##k, 0},
#define LEGACY_FIELD(f, a, n) {LR_FIELD, #f, #a, 0, n},
#define LEGACY_CHANNELS(f) {LR_CHANNELS, #f, NULL, 0, 0},
#include "ir/Legacy.def"
#undef LEGACY_KIND
#undef LEGACY_POS
#undef LEGACY_FIELD
#undef LEGACY_CHANNELS
};

#define for_each_row(r, w) \
	for (const struct legacy_row *r = legacy_rows; r < legacy_rows + GLOW_ARRAY_SIZE(legacy_rows); r++) \
		if (r->what == (w))

/* at most this many fields in a list, and copies of a value */
enum { LEGACY_MAX_FIELDS = 8 };

static bool span_is(const char *s, size_t len, const char *word) { return strlen(word) == len && !memcmp(s, word, len); }

/* The field row (FIELD or CHANNELS) named by [s, s + len), NULL if none. */
static const struct legacy_row *field_find(const char *s, size_t len)
{
	for_each_row(r, LR_FIELD)
		if (span_is(s, len, r->a))
			return r;
	for_each_row(r, LR_CHANNELS)
		if (span_is(s, len, r->a))
			return r;
	return NULL;
}

GLOW_NORETURN static void row_bug(const struct legacy_row *r, const char *what, const char *name, size_t len)
{
	static char msg[160];
	snprintf(msg, sizeof msg, "Legacy.def row %s: %s '%.*s'", r->a, what, (int)len, name);
	unreachable(msg);
}

/* The fields of a POS row, in order, with the attribute index of each (-1:
 * a channel check) in idx; returns their count. Stops with an internal
 * error naming the row when a field or an attribute is missing. */
static unsigned pos_fields(const struct legacy_row *pos, const struct legacy_row **out, int *idx)
{
	unsigned n = 0;
	for (const char *c = pos->b; *c;) {
		size_t len = strcspn(c, " ");
		const struct legacy_row *f = field_find(c, len);
		if (!f || n == LEGACY_MAX_FIELDS)
			row_bug(pos, "no LEGACY_FIELD (or too many fields) for", c, len);
		if (f->copies > LEGACY_MAX_FIELDS)
			row_bug(f, "too many copies for attribute", f->b, strlen(f->b));
		idx[n] = f->b ? instr_attr_index(pos->kind, f->b, strlen(f->b)) : -1;
		if (f->b && idx[n] < 0)
			row_bug(pos, "the kind has no attribute", f->b, strlen(f->b));
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
	const struct legacy_row *f[LEGACY_MAX_FIELDS];
	int idx[LEGACY_MAX_FIELDS];
	for_each_row(r, LR_POS)
		pos_fields(r, f, idx);
}

int gir_legacy_kind(struct gir_parser *p, const struct tp_span *kind, struct loc kloc)
{
	unsigned nmods = 0;
	for_each_row(r, LR_KIND) {
		if (!span_is(kind->s, kind->len, r->a))
			continue;
		if (p->has_mod && span_is(p->mod.s, p->mod.len, r->b))
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
	char mods[128];
	size_t len = 0;
	unsigned j = 0;
	mods[0] = 0;
	for_each_row(r, LR_KIND)
		if (span_is(kind->s, kind->len, r->a) && len < sizeof mods)
			len += (size_t)snprintf(mods + len, sizeof mods - len, "%s'%s'",
						j++ == 0 ? "" : j == nmods ? " or " : ", ", r->b);
	gir_p_error(p, p->has_mod ? p->mod_loc : kloc, "%.*s needs %s", (int)kind->len, kind->s, mods);
	return -1;
}

/* "convolution and pool": the written names of the POS rows, each once, in
 * table order. */
static void pos_names(char *buf, size_t size)
{
	const char *names[GLOW_ARRAY_SIZE(legacy_rows)];
	size_t n = 0, len = 0;
	for_each_row(r, LR_POS) {
		bool seen = false;
		for (size_t j = 0; j < n; j++)
			seen |= strcmp(names[j], r->a) == 0;
		if (!seen)
			names[n++] = r->a;
	}
	buf[0] = 0;
	for (size_t i = 0; i < n && len < size; i++)
		len += (size_t)snprintf(buf + len, size - len, "%s%s", i == 0 ? "" : i + 1 == n ? " and " : ", ",
					names[i]);
}

bool gir_legacy_positional(struct gir_parser *p, struct ir_instr *in, bool *set)
{
	const struct legacy_row *pos = NULL;
	for_each_row(r, LR_POS)
		if (r->kind == in->kind && !pos)
			pos = r;
	if (!pos) {
		char names[128];
		pos_names(names, sizeof names);
		gir_p_error(p, p->pos_loc, "a positional attribute list is only accepted by %s", names);
		return false;
	}
	const struct legacy_row *f[LEGACY_MAX_FIELDS];
	int idx[LEGACY_MAX_FIELDS];
	unsigned n = pos_fields(pos, f, idx);
	if (p->pos.len != n) {
		gir_p_error(p, p->pos_loc, "%s takes %u positional attributes [%s], got %zu", pos->a, n, pos->b,
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
			gir_p_error(p, p->pos_loc, "%s %s %lld does not match the channels of destination %s", pos->a,
				    f[i]->a, (long long)v, type_str(dst, b, sizeof b));
			return false;
		}
	}
	return true;
}
