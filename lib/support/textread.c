/* textread.c - the text-reader shell both IR readers share (textread.h).
 *
 * Called per statement or per message, never per byte of a payload: the
 * per-token step (tp_lex_tok) is inline in the header.
 */
#define _POSIX_C_SOURCE 200809L
#include "support/textread.h"

#include "support/io.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- set up ---- */

bool tp_reader_begin(struct tp_reader *r, const char *buf, size_t len, const struct input *in,
		     const char *filename, struct diag *d, enum tp_level want)
{
	memset(r, 0, sizeof *r);
	r->buf = r->cur = buf;
	r->lim = buf + len;
	r->in = in;
	r->d = d;
	r->file = diag_add_source(d, filename ? filename : "<stdin>", buf, len);
	/* a location is a 32-bit offset */
	if (len > UINT32_MAX - 16) {
		tp_error(r, loc_make(r->file, 0), "input too large (4 GiB limit)");
		return false;
	}
	/* another level's text or an ONNX model here: one error, then which
	 * tool reads it, rather than every line's syntax error */
	tp_hint_level(d, r->file, buf, len, want);
	return true;
}

int tp_reader_end(struct tp_reader *r, int rc)
{
	diag_hint_first_error(r->d, LOC_NONE, NULL);
	free(r->sb);
	r->sb = NULL;
	r->sbcap = 0;
	if (rc != 0 && r->errors == 0)
		tp_error(r, tp_loc_at(r, r->lim), "cannot parse the input");
	return r->errors;
}

char *tp_path_join(const char *base_dir, const char *path)
{
	if (path[0] == '/' || !base_dir)
		return xstrdup(path);
	size_t a = strlen(base_dir), b = strlen(path);
	char *full = xmalloc(a + b + 1);
	memcpy(full, base_dir, a);
	memcpy(full + a, path, b + 1);
	return full;
}

/* ---- the lexers ---- */

int tp_lex_error(struct tp_reader *r, struct loc *lloc, const unsigned char *tok, const unsigned char *cur,
		 const unsigned char *at, const char *fmt, const char *arg)
{
	tp_error(r, tp_loc_at(r, (const char *)at), fmt, arg);
	return tp_lex_tok(r, lloc, TP_TOK_ERROR, tok, cur, false);
}

/* The first non-blank character of the next line that may start a
 * statement (or the end of the input). */
static const char *skip_lines(const struct tp_reader *r, const char *c, tp_line_starts *starts)
{
	for (;;) {
		while (c < r->lim && *c != '\n')
			c++;
		if (c >= r->lim)
			return r->lim;
		c++;
		while (c < r->lim && (*c == ' ' || *c == '\t' || *c == '\r'))
			c++;
		if (c >= r->lim)
			return r->lim;
		if (starts(r, c))
			return c;
	}
}

bool tp_lex_resync(struct tp_reader *r, struct loc *lloc, tp_line_starts *starts)
{
	if (r->d->stopped)
		r->cur = r->lim;
	if (!r->sync_pending)
		return false;
	r->sync_pending = false;
	const char *c;
	if (r->last_bol && !r->last_after_sync && r->last_tok != TP_TOK_END && r->last_tok != TP_TOK_ERROR)
		c = r->last_start; /* the offending token starts a line: resume right there */
	else
		c = skip_lines(r, r->cur, starts);
	r->cur = c;
	if (c < r->lim || !r->eof_synced) {
		if (c >= r->lim)
			r->eof_synced = true;
		r->after_sync = true;
		*lloc = tp_loc_at(r, c);
		return true;
	}
	return false;
}

/* ---- messages ---- */

void tp_error(struct tp_reader *r, struct loc loc, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	diag_vreport(r->d, DIAG_ERROR, loc, fmt, ap);
	va_end(ap);
	r->errors++;
}

const char *tp_tok_describe(enum tp_tok_class c, const char *s, const char *e, char *buf, size_t size)
{
	static const char *const what[] = {
		[TP_TC_IDENT] = "identifier", [TP_TC_NAME] = "name", [TP_TC_NUMBER] = "number", [TP_TC_TYPE] = "type",
	};
	char t[64];
	switch (c) {
	case TP_TC_END: return "end of file";
	case TP_TC_STRING: return "string";
	case TP_TC_OTHER: return tp_tok_text(s, e, buf, size);
	default: snprintf(buf, size, "%s %s", what[c], tp_tok_text(s, e, t, sizeof t)); return buf;
	}
}

const char *tp_describe_lookahead(const struct tp_reader *r, const struct tp_tok_class_row *rows, size_t n,
				  const char *e, char *buf, size_t size)
{
	enum tp_tok_class c = TP_TC_OTHER;
	for (size_t i = 0; i < n; i++)
		if (rows[i].tok == r->last_tok)
			c = rows[i].c;
	return tp_tok_describe(c, r->last_start, e, buf, size);
}

void tp_syntax_error(struct tp_reader *r, struct loc loc, const char *const *expected, int nexp, const char *la,
		     const char *after)
{
	char exp[512];
	r->sync_pending = true;
	if (r->syntax_errors++ && loc.off == r->last_syntax_error)
		return;
	r->last_syntax_error = loc.off;
	tp_expected(exp, sizeof exp, expected, nexp);
	if (after && nexp == 1) {
		/* what is missing belongs to the line before: point right after it */
		if (r->last_bol)
			loc = tp_loc_at(r, r->prev_end);
		tp_error(r, loc, "expected %s after %s", exp, after);
	} else if (nexp > 0) {
		tp_error(r, loc, "unexpected %s, expected %s", la, exp);
	} else {
		tp_error(r, loc, "unexpected %s", la);
	}
}

/* ---- names ---- */

void tp_poison(struct tp_reader *r, struct strmap *set, struct arena *a, const struct tp_span *name)
{
	size_t len;
	const char *k = tp_span_key(r, name, &len);
	char *copy = arena_strndup(a, k, len);
	strmap_put(set, copy, len, copy);
}

bool tp_poisoned(struct tp_reader *r, const struct strmap *set, const struct tp_span *name)
{
	size_t len;
	const char *k = tp_span_key(r, name, &len);
	return strmap_getn(set, k, len) != NULL;
}

/* ---- weights ---- */

/* Checks the dense hex string against the type and decodes it into a (or
 * takes what the lexer decoded); NULL for an empty type or after reporting
 * (*ok false). */
/* Dense bytes of the one-byte kinds with fewer values than a byte (i4,
 * u4, f4e2m1) hold one of those values each; reports the first that does
 * not. */
static uint8_t *dense_in_range(struct tp_reader *r, const struct tp_init *init, const struct type *t, uint8_t *data,
			       bool *ok)
{
	int64_t bad = tp_dense_bad_elem((enum elem_kind)t->elem, data, type_numel(t));
	if (bad < 0)
		return data;
	tp_error(r, init->str_loc, "dense element %lld is 0x%02x, out of range for element kind %s", (long long)bad,
		 data[bad], elem_name((enum elem_kind)t->elem));
	*ok = false;
	return NULL;
}

static uint8_t *dense_decode(struct tp_reader *r, const struct tp_init *init, const struct type *t,
			     struct arena *a, bool *ok)
{
	const struct tp_span *s = &init->str;
	uint64_t bytes = type_bytes(t);
	*ok = false;
	if (s->len < 2 || s->s[0] != '0' || (s->s[1] != 'x' && s->s[1] != 'X')) {
		tp_error(r, init->str_loc, "dense data must start with '0x'");
		return NULL;
	}
	uint64_t digits = s->len - 2;
	if (digits != 2 * bytes) {
		char tb[128];
		tp_error(r, init->str_loc, "dense data has %llu hex digits; %s needs %llu (%llu bytes)",
			 (unsigned long long)digits, type_str(t, tb, sizeof tb), (unsigned long long)(2 * bytes),
			 (unsigned long long)bytes);
		return NULL;
	}
	*ok = true;
	if (bytes == 0)
		return NULL;
	if (r->hex_data && r->hex_s == s->s)
		return dense_in_range(r, init, t, r->hex_data, ok); /* decoded by the lexer */
	uint8_t *data = arena_alloc(a, (size_t)bytes);
	long bad = hex_decode_fast(s->s + 2, (size_t)bytes, data);
	if (bad >= 0) {
		const char *c = s->s + 2 + bad;
		char cb[16];
		tp_error(r, tp_loc_at(r, c), "invalid hex digit %s in dense data",
			 tp_char_name((unsigned char)*c, cb, sizeof cb));
		*ok = false;
		return NULL;
	}
	return dense_in_range(r, init, t, data, ok);
}

/* The external weight file exists and holds the payload at its offset;
 * reports at the path. */
static bool weight_file_ok(struct tp_reader *r, const struct tp_init *init, const char *full, const struct type *t)
{
	bool ok = false;
	FILE *f = fopen(full, "rb");
	if (!f) {
		tp_error(r, init->str_loc, "cannot open weight file '%s': %s", full, strerror(errno));
		return false;
	}
	long size = -1;
	if (fseek(f, 0, SEEK_END) == 0)
		size = ftell(f);
	uint64_t need = type_bytes(t), off = (uint64_t)init->offset;
	if (size < 0)
		tp_error(r, init->str_loc, "cannot read weight file '%s'", full);
	else if ((uint64_t)size < off || (uint64_t)size - off < need)
		tp_error(r, init->str_loc, "weight file '%s' is too short: %ld bytes, %llu needed at offset %llu", full,
			 size, (unsigned long long)need, (unsigned long long)off);
	else
		ok = true;
	fclose(f);
	return ok;
}

bool tp_init_check(struct tp_reader *r, const struct tp_init *init, const struct type *t, const char *base_dir,
		   struct arena *a, uint8_t **data, char **path)
{
	bool ok = true;
	*data = NULL;
	*path = NULL;
	switch (init->kind) {
	case INIT_DENSE: *data = dense_decode(r, init, t, a, &ok); break;
	case INIT_SPLAT:
		ok = tp_splat_ok(r->d, init->num.loc, (enum elem_kind)t->elem, init->is_bool, init->num.is_int,
				 init->num.i);
		if (!ok)
			r->errors++;
		break;
	case INIT_XAVIER:
		if (init->seed < 0) {
			tp_error(r, init->seed_loc, "seed must be non-negative");
			ok = false;
		}
		break;
	case INIT_FILE: {
		if (init->offset < 0) {
			tp_error(r, init->offset_loc, "offset must be non-negative");
			return false;
		}
		char *full = tp_path_join(base_dir, tp_span_cstr(r, &init->str));
		ok = weight_file_ok(r, init, full, t);
		free(full);
		if (ok)
			*path = xstrdup(tp_span_cstr(r, &init->str));
		break;
	}
	default: break;
	}
	return ok;
}
