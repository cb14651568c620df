/* dot.c - what both dot writers share: IR detection, output format names,
 * the one label escaper, node styles, -focus value references and -range ends.
 *
 * Escaping is done in exactly one place (dot_quote) so that no name, string
 * attribute or type text can break the dot syntax or be reinterpreted by
 * Graphviz: inside a dot string only `"` and `\` are special to the parser,
 * but Graphviz also expands `\N`, `\G`, `\l` ... escapes and HTML entities in
 * labels, so backslashes are doubled and `&` is written as `&amp;`. Bytes that
 * are not printable UTF-8 are shown as `\XX`, so the dot text is always valid
 * UTF-8 (Graphviz's default charset).
 */
#include "dot/dot_impl.h"
#include "graph/graph.h"
#include "support/suggest.h"
#include "support/textparse.h"
#include "support/util.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ */
/* IR detection and formats                                             */

static bool has_suffix(const char *s, const char *suf)
{
	size_t n = strlen(s), k = strlen(suf);
	return n > k && memcmp(s + n - k, suf, k) == 0;
}

static bool word_is(const char *p, size_t n, const char *w) { return strlen(w) == n && memcmp(p, w, n) == 0; }

enum dot_ir dot_detect_ir(const char *path, const char *buf, size_t len)
{
	if (path && strcmp(path, "-") != 0) {
		if (has_suffix(path, ".glow"))
			return DOT_IR_GRAPH;
		if (has_suffix(path, ".gir"))
			return DOT_IR_INSTR;
	}
	size_t i = 0;
	for (;;) {
		while (i < len && (buf[i] == ' ' || buf[i] == '\t' || buf[i] == '\n' || buf[i] == '\r'))
			i++;
		if (i + 1 < len && buf[i] == '/' && buf[i + 1] == '/') {
			while (i < len && buf[i] != '\n')
				i++;
			continue;
		}
		break;
	}
	size_t b = i;
	while (i < len && ((buf[i] >= 'a' && buf[i] <= 'z') || (buf[i] >= 'A' && buf[i] <= 'Z') || buf[i] == '_'))
		i++;
	const char *w = buf + b;
	size_t n = i - b;
	if (word_is(w, n, "function") || word_is(w, n, "memory") || word_is(w, n, "declare") ||
	    word_is(w, n, "program"))
		return DOT_IR_INSTR;
	if (word_is(w, n, "module") || word_is(w, n, "placeholder") || word_is(w, n, "constant") ||
	    word_is(w, n, "func"))
		return DOT_IR_GRAPH;
	return DOT_IR_UNKNOWN;
}

int dot_format_lookup(const char *s)
{
	static const char *const names[] = {[DOT_FMT_DOT] = "dot", [DOT_FMT_SVG] = "svg", [DOT_FMT_PNG] = "png",
					    [DOT_FMT_PDF] = "pdf"};
	for (unsigned i = 0; i < GLOW_ARRAY_SIZE(names); i++)
		if (strcmp(s, names[i]) == 0)
			return (int)i;
	return -1;
}

/* ------------------------------------------------------------------ */
/* Escaping                                                             */

/* Length of the valid UTF-8 sequence (2..4 bytes) starting at s, or 0. */
static size_t utf8_seq(const unsigned char *s, size_t avail)
{
	unsigned char c = s[0];
	size_t n;
	uint32_t cp;
	if (c >= 0xc2 && c <= 0xdf) {
		n = 2;
		cp = c & 0x1f;
	} else if (c >= 0xe0 && c <= 0xef) {
		n = 3;
		cp = c & 0x0f;
	} else if (c >= 0xf0 && c <= 0xf4) {
		n = 4;
		cp = c & 0x07;
	} else {
		return 0;
	}
	if (n > avail)
		return 0;
	for (size_t i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = (cp << 6) | (s[i] & 0x3f);
	}
	if ((n == 3 && cp < 0x800) || (n == 4 && (cp < 0x10000 || cp > 0x10ffff)) || (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return n;
}

/* One line (no '\n' inside): characters up to max (0: all), then "...". */
static void quote_line(struct ostream *o, const unsigned char *s, size_t len, unsigned max)
{
	static const char hexdig[] = "0123456789abcdef";
	size_t chars = 0;
	for (size_t i = 0; i < len;) {
		if (max && chars == max) {
			os_write(o, "...", 3);
			return;
		}
		unsigned char c = s[i];
		chars++;
		if (c == '"' || c == '\\') {
			os_putc(o, '\\');
			os_putc(o, (char)c);
			i++;
		} else if (c == '&') {
			os_write(o, "&amp;", 5);
			i++;
		} else if (c >= 0x20 && c < 0x7f) {
			os_putc(o, (char)c);
			i++;
		} else {
			size_t n = c >= 0x80 ? utf8_seq(s + i, len - i) : 0;
			if (n) {
				os_write(o, s + i, n);
				i += n;
			} else {
				char esc[4] = {'\\', '\\', hexdig[c >> 4], hexdig[c & 15]};
				os_write(o, esc, 4);
				i++;
			}
		}
	}
}

void dot_quote(struct ostream *o, const char *raw, size_t len, unsigned max_line)
{
	const unsigned char *s = (const unsigned char *)raw;
	os_putc(o, '"');
	size_t b = 0;
	for (size_t i = 0; i <= len; i++) {
		if (i < len && s[i] != '\n')
			continue;
		if (b)
			os_write(o, "\\n", 2);
		quote_line(o, s + b, i - b, max_line);
		b = i + 1;
	}
	os_putc(o, '"');
}

void dot_quote_cstr(struct ostream *o, const char *raw, unsigned max_line)
{
	dot_quote(o, raw, strlen(raw), max_line);
}

/* ------------------------------------------------------------------ */
/* Labels and styles                                                    */

void dot_label_init(struct dot_label *l)
{
	ostream_mem(&l->text);
	l->started = false;
}

struct ostream *dot_label_line(struct dot_label *l)
{
	if (l->started)
		os_putc(&l->text, '\n');
	l->started = true;
	return &l->text;
}

void dot_label_emit_as(struct ostream *o, const char *attr, struct dot_label *l, unsigned max_line)
{
	os_puts(o, attr);
	os_putc(o, '=');
	dot_quote(o, l->text.buf, l->text.len, max_line);
	ostream_abort(&l->text);
}

void dot_label_emit(struct ostream *o, struct dot_label *l, unsigned max_line)
{
	dot_label_emit_as(o, "label", l, max_line);
}

void dot_layout_limits(struct ostream *o, size_t nnodes)
{
	if (nnodes > DOT_BIG_NODES)
		os_puts(o, "  nslimit=0.2;\n");
}

bool dot_is_highlighted(const struct dot_options *opt, const char *kind)
{
	for (size_t i = 0; i < opt->nhighlight; i++)
		if (strcmp(opt->highlight[i], kind) == 0)
			return true;
	return false;
}

void dot_node_style(struct ostream *o, const char *shape, const char *style, const char *fill, bool highlight,
		    bool center)
{
	os_printf(o, ", shape=%s", shape);
	if (highlight) {
		bool filled = style && strstr(style, "filled");
		os_printf(o, ", style=\"%s%s%s\", fillcolor=\"#ffd84d\"", style ? style : "", style ? "," : "",
			  filled ? "bold" : "filled,bold");
	} else {
		if (style)
			os_printf(o, ", style=\"%s\"", style);
		if (fill)
			os_printf(o, ", fillcolor=\"%s\"", fill);
	}
	if (center)
		os_puts(o, ", color=\"#c00000\", penwidth=3");
	else if (highlight)
		os_puts(o, ", penwidth=2");
}

/* ------------------------------------------------------------------ */
/* Attributes (both IRs use the attribute rows of Nodes.def)             */

bool dot_attr_is_default(const struct attr_desc *a, const union attr_val *v)
{
	if (a->required)
		return false;
	switch (a->kind) {
	case AK_INT:
	case AK_BOOL:
	case AK_ENUM:
		return v->i == a->def_i;
	case AK_FLOAT:
		return v->f == a->def_f;
	case AK_INTS:
		return v->ints.n == a->def_n &&
		       (a->def_n == 0 || memcmp(v->ints.v, a->def_ints, a->def_n * sizeof(int64_t)) == 0);
	case AK_FLOATS:
		return v->floats.n == 0;
	case AK_STRING:
		return v->s == NULL; /* an optional string: none given (Call's callee) */
	}
	return false;
}

/* The enum's i-th name out of "a|b|c". */
static void put_enum(struct ostream *o, const char *values, int64_t i)
{
	const char *s = values;
	for (int64_t k = 0; k < i && s; k++) {
		s = strchr(s, '|');
		if (s)
			s++;
	}
	if (!s) {
		os_i64(o, i);
		return;
	}
	const char *e = strchr(s, '|');
	os_write(o, s, e ? (size_t)(e - s) : strlen(s));
}

void dot_put_attr(struct ostream *o, const struct attr_desc *a, const union attr_val *v)
{
	os_puts(o, a->name);
	os_write(o, " = ", 3);
	switch (a->kind) {
	case AK_INT:
		os_i64(o, v->i);
		break;
	case AK_BOOL:
		os_puts(o, v->i ? "true" : "false");
		break;
	case AK_ENUM:
		put_enum(o, a->enum_values, v->i);
		break;
	case AK_FLOAT:
		os_double(o, v->f);
		break;
	case AK_INTS: os_i64_list(o, v->ints.v, v->ints.n); break;
	case AK_FLOATS: os_double_list(o, v->floats.v, v->floats.n); break;
	case AK_STRING:
		os_putc(o, '"');
		os_puts(o, v->s ? v->s : "");
		os_putc(o, '"');
		break;
	}
}

const char *dot_init_name(int k)
{
	switch (k) {
	case INIT_DENSE: return "dense";
	case INIT_SPLAT: return "splat";
	case INIT_ZERO: return "zero";
	case INIT_XAVIER: return "xavier";
	case INIT_FILE: return "file";
	}
	return "?";
}

/* ------------------------------------------------------------------ */
/* Value references                                                     */

char *dot_parse_value_ref(const char *text, char *sigil)
{
	if ((text[0] != '%' && text[0] != '@') || !text[1])
		return NULL;
	*sigil = text[0];
	const char *s = text + 1;
	size_t n = strlen(s);
	if (s[0] != '"')
		return xstrdup(s);
	if (n < 3 || s[n - 1] != '"')
		return NULL;
	char *out = xmalloc(n);
	size_t k = 0;
	for (size_t i = 1; i + 1 < n; i++) {
		if (s[i] != '\\') {
			out[k++] = s[i];
			continue;
		}
		if (i + 2 >= n) {
			free(out);
			return NULL;
		}
		char e = s[++i];
		if (e == '\\' || e == '"') {
			out[k++] = e;
		} else if (e == 'n') {
			out[k++] = '\n';
		} else if (e == 't') {
			out[k++] = '\t';
		} else if (i + 2 < n && tp_hexval(e) >= 0 && tp_hexval(s[i + 1]) >= 0) {
			out[k++] = (char)(tp_hexval(e) * 16 + tp_hexval(s[i + 1]));
			i++;
		} else {
			free(out);
			return NULL;
		}
	}
	out[k] = 0;
	if (k == 0) {
		free(out);
		return NULL;
	}
	return out;
}

char *dot_parse_focus(const char *text, char *sigil)
{
	if (text[0] == '%' || text[0] == '@')
		return dot_parse_value_ref(text, sigil);
	if (!text[0] || text[0] == '"')
		return NULL;
	*sigil = 0;
	return xstrdup(text);
}

/* ------------------------------------------------------------------ */
/* -range                                                               */

static int parse_range_end(const char *s, size_t n, struct dot_range_end *e)
{
	*e = (struct dot_range_end){0};
	if (n == 0) {
		e->open = true;
		return 0;
	}
	size_t k = 0;
	while (k < n && s[k] >= '0' && s[k] <= '9')
		k++;
	if (k == n) {
		if (n > 9)
			return -1; /* no program has that many instructions */
		e->is_pos = true;
		e->pos = strtoul(s, NULL, 10);
		return 0;
	}
	char *t = xstrndup(s, n);
	char sigil = 0;
	e->name = dot_parse_focus(t, &sigil);
	free(t);
	if (e->name && sigil != '@')
		return 0;
	free(e->name);
	e->name = NULL;
	return -1;
}

int dot_parse_range(const char *text, struct dot_range_end *first, struct dot_range_end *last, struct diag *d)
{
	/* the ':' outside a quoted name ("%\"a:b\"" is one name) */
	const char *colon = NULL;
	bool quoted = false;
	for (const char *p = text; *p; p++) {
		if (quoted && *p == '\\' && p[1])
			p++;
		else if (*p == '"')
			quoted = !quoted;
		else if (*p == ':' && !quoted && !colon)
			colon = p;
	}
	if (!colon || (colon == text && !colon[1])) {
		diag_error(d, LOC_NONE, "-range: '%s' is not a range (expected FIRST:LAST, positions or names)", text);
		return -1;
	}
	if (parse_range_end(text, (size_t)(colon - text), first) < 0 ||
	    parse_range_end(colon + 1, strlen(colon + 1), last) < 0) {
		dot_range_end_free(first);
		diag_error(d, LOC_NONE, "-range: '%s' is not a range (expected FIRST:LAST, positions or names)", text);
		return -1;
	}
	return 0;
}

void dot_range_end_free(struct dot_range_end *e)
{
	free(e->name);
	e->name = NULL;
}

/* The position an end of -range names, dflt for an open end; -1 after a
 * diagnostic. */
static long range_end_pos(const struct dot_range_view *v, const struct dot_range_end *e, unsigned long dflt,
			  const char *text, struct diag *d)
{
	if (e->open)
		return (long)dflt;
	if (e->is_pos) {
		if (e->pos >= v->n) {
			diag_error(d, LOC_NONE, "-range: '%s': position %lu is past the last %s (%zu)", text, e->pos,
				   v->item, v->n - 1);
			return -1;
		}
		return (long)e->pos;
	}
	struct ostream hint, nm;
	ostream_mem(&hint);
	ostream_mem(&nm);
	long pos = v->lookup(v->ctx, e->name, &hint, &nm);
	if (pos < 0)
		diag_error(d, LOC_NONE, "-range: no %s '%s'%s", v->item, ostream_cstr(&nm), ostream_cstr(&hint));
	ostream_abort(&nm);
	ostream_abort(&hint);
	return pos;
}

int dot_range_resolve(const char *text, const struct dot_range_view *v, long *lo, long *hi, struct diag *d)
{
	struct dot_range_end a, b;
	if (dot_parse_range(text, &a, &b, d) < 0)
		return -1;
	if (v->n == 0) {
		dot_range_end_free(&a);
		dot_range_end_free(&b);
		struct ostream nm;
		ostream_mem(&nm);
		print_global_name(&nm, v->func);
		diag_error(d, LOC_NONE, "-range: function %s has no %ss", ostream_cstr(&nm), v->item);
		ostream_abort(&nm);
		return -1;
	}
	*lo = range_end_pos(v, &a, 0, text, d);
	*hi = *lo < 0 ? -1 : range_end_pos(v, &b, v->n - 1, text, d);
	dot_range_end_free(&a);
	dot_range_end_free(&b);
	if (*lo < 0 || *hi < 0)
		return -1;
	if (*lo > *hi) {
		diag_error(d, LOC_NONE, "-range: '%s' is empty (%ld comes after %ld)", text, *lo, *hi);
		return -1;
	}
	return 0;
}

void dot_put_suggestion(struct ostream *hint, const struct suggest *sg, void (*put)(struct ostream *, const char *))
{
	if (!sg->best)
		return;
	char *best = xstrndup(sg->best, sg->best_len);
	os_puts(hint, "; did you mean '");
	put(hint, best);
	os_puts(hint, "'?");
	free(best);
}

bool dot_focus_found(const char *text, unsigned hits, bool in_selected, struct ostream *hint, struct diag *d)
{
	if (hits == 0)
		diag_error(d, LOC_NONE, "-focus: no value '%s'%s%s", text, in_selected ? " in the selected function" : "",
			   ostream_cstr(hint));
	else if (hits > 1)
		diag_error(d, LOC_NONE, "-focus: '%s' names a value in %u functions; choose one with -func", text, hits);
	ostream_abort(hint);
	return hits == 1;
}
