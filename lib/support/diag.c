#include "diag.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

void diag_init(struct diag *d, const char *prog)
{
	memset(d, 0, sizeof(*d));
	d->out = stderr;
	d->prog = prog;
	d->max_errors = 20;
}

void diag_free(struct diag *d)
{
	for (size_t i = 0; i < d->nsrc; i++) {
		free(d->src[i].name);
		free(d->src[i].line_starts);
	}
	free(d->src);
	d->src = NULL;
	d->nsrc = d->capsrc = 0;
}

uint32_t diag_add_source(struct diag *d, const char *name, const char *buf, size_t len)
{
	d->src = xgrow(d->src, &d->capsrc, d->nsrc + 1, sizeof(*d->src));
	struct diag_source *s = &d->src[d->nsrc++];
	memset(s, 0, sizeof(*s));
	s->name = xstrdup(name);
	s->buf = buf;
	s->len = len;
	return (uint32_t)d->nsrc;
}

const char *diag_source_name(const struct diag *d, uint32_t file)
{
	return file >= 1 && file <= d->nsrc ? d->src[file - 1].name : "<unknown>";
}

static void compute_lines(struct diag_source *s)
{
	size_t cap = 0, n = 0;
	uint32_t *ls = NULL;
	ls = xgrow(ls, &cap, 1, sizeof(*ls));
	ls[n++] = 0;
	for (size_t i = 0; i < s->len; i++)
		if (s->buf[i] == '\n') {
			ls = xgrow(ls, &cap, n + 1, sizeof(*ls));
			ls[n++] = (uint32_t)(i + 1);
		}
	s->line_starts = ls;
	s->nlines = n;
}

int diag_line_col(struct diag *d, struct loc loc, unsigned *line, unsigned *col)
{
	if (loc.file == 0 || loc.file > d->nsrc)
		return 0;
	struct diag_source *s = &d->src[loc.file - 1];
	if (!s->buf || loc.off > s->len)
		return 0;
	if (!s->line_starts)
		compute_lines(s);
	size_t lo = 0, hi = s->nlines; /* find last start <= off */
	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;
		if (s->line_starts[mid] <= loc.off)
			lo = mid;
		else
			hi = mid;
	}
	*line = (unsigned)lo + 1;
	*col = loc.off - s->line_starts[lo] + 1;
	return 1;
}

static const char *level_name(enum diag_level l)
{
	switch (l) {
	case DIAG_ERROR: return "error";
	case DIAG_WARNING: return "warning";
	case DIAG_NOTE: return "note";
	}
	return "error";
}

/* Lines up to this many bytes are echoed whole; longer ones (dense weights
 * run to megabytes on one line) as a window of DIAG_WINDOW bytes around the
 * column, "..." marking each end that was cut. */
enum { DIAG_WHOLE_LINE = 160, DIAG_WINDOW = 80 };

/* UTF-8 continuation bytes: a window edge must not split a character. */
static bool utf8_cont(char c)
{
	return ((unsigned char)c & 0xc0) == 0x80;
}

/* The length of the valid UTF-8 sequence at c (before e), 1 for an ASCII
 * byte, 0 for a byte that starts none. */
static size_t utf8_len(const char *c, const char *e)
{
	unsigned char u = (unsigned char)*c;
	size_t n = u < 0x80		  ? 1
		   : u >= 0xc2 && u <= 0xdf ? 2
		   : u >= 0xe0 && u <= 0xef ? 3
		   : u >= 0xf0 && u <= 0xf4 ? 4
					    : 0;
	if (n <= 1 || (size_t)(e - c) < n)
		return n == 1;
	for (size_t i = 1; i < n; i++)
		if (!utf8_cont(c[i]))
			return 0;
	return n;
}

/* Echoes line `line` of s (or the window of it around col) and a caret
 * under column col. Control bytes other than tab print as '?' so binary
 * input (an ONNX model given to a text reader) cannot drive the terminal,
 * and so do bytes that are not valid UTF-8; each such byte stays one
 * column, so the caret stays where it was. */
static void echo_line(struct diag *d, const struct diag_source *s, unsigned line, unsigned col)
{
	const char *b = s->buf + s->line_starts[line - 1], *end = s->buf + s->len;
	const char *e = memchr(b, '\n', (size_t)(end - b));
	if (!e)
		e = end;
	if (e > b && e[-1] == '\r')
		e--;
	const char *at = b + col - 1; /* the column's byte (may be e) */
	const char *wb = b, *we = e;
	if (e - b > DIAG_WHOLE_LINE) {
		if (at - b > DIAG_WINDOW / 2)
			wb = at - DIAG_WINDOW / 2;
		we = e - wb > DIAG_WINDOW ? wb + DIAG_WINDOW : e;
		if (we == e && e - b > DIAG_WINDOW) /* near the end: a full window */
			wb = e - DIAG_WINDOW;
		while (wb > b && wb < at && utf8_cont(*wb))
			wb++;
		while (we > wb && we < e && utf8_cont(*we))
			we--;
	}
	const char *pre = wb > b ? "..." : "";
	fputs(pre, d->out);
	for (const char *c = wb; c < we; c++) {
		unsigned char u = (unsigned char)*c;
		size_t n = utf8_len(c, we);
		if (n > 1) {
			fwrite(c, 1, n, d->out);
			c += n - 1;
		} else
			fputc(u >= 0x80 || (u < 0x20 && u != '\t') || u == 0x7f ? '?' : (int)u, d->out);
	}
	fputs(we < e ? "...\n" : "\n", d->out);
	for (size_t i = 0; i < strlen(pre); i++)
		fputc(' ', d->out);
	for (const char *c = wb; c < at && c < we; c++)
		fputc(*c == '\t' ? '\t' : ' ', d->out);
	fputs("^\n", d->out);
}

void diag_vreport(struct diag *d, enum diag_level lvl, struct loc loc, const char *fmt, va_list ap)
{
	if (d->stopped)
		return;
	if (lvl == DIAG_ERROR && d->max_errors && d->nerrors >= d->max_errors) {
		fprintf(d->out, "%s: fatal error: too many errors emitted, stopping now\n", d->prog ? d->prog : "glow");
		d->stopped = 1;
		d->nerrors++;
		return;
	}
	unsigned line, col;
	int has = diag_line_col(d, loc, &line, &col);
	if (has)
		fprintf(d->out, "%s:%u:%u: %s: ", d->src[loc.file - 1].name, line, col, level_name(lvl));
	else if (loc.file >= 1 && loc.file <= d->nsrc)
		fprintf(d->out, "%s: %s: ", d->src[loc.file - 1].name, level_name(lvl));
	else
		fprintf(d->out, "%s: %s: ", d->prog ? d->prog : "glow", level_name(lvl));
	vfprintf(d->out, fmt, ap);
	fputc('\n', d->out);
	if (has)
		echo_line(d, &d->src[loc.file - 1], line, col);
	if (lvl == DIAG_ERROR)
		d->nerrors++;
	else if (lvl == DIAG_WARNING)
		d->nwarnings++;
	if (lvl == DIAG_ERROR && d->hint) {
		const char *hint = d->hint;
		d->hint = NULL;
		diag_report(d, DIAG_NOTE, d->hint_loc, "%s", hint);
		d->stopped = 1;
	}
}

void diag_hint_first_error(struct diag *d, struct loc loc, const char *text)
{
	d->hint = text;
	d->hint_loc = loc;
}

void diag_report(struct diag *d, enum diag_level lvl, struct loc loc, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	diag_vreport(d, lvl, loc, fmt, ap);
	va_end(ap);
}
