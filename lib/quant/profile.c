/* profile.c - the quantization profile file: reader and writer.
 *
 * The format (docs/Quantization.md has the full statement):
 *
 *   glow-profile 1
 *   value "conv1" 0 min -1.5 max 3.25 bins 4 = 1 2 0 7
 *
 * A header, then one entry per profiled value: the node's name (a quoted
 * string, escapes \\ and \"), the result index, the range and the histogram
 * (bins counts over [min, max] in equal bins). Tokens are separated by
 * blanks and newlines; '#' starts a comment to the end of the line. The
 * writer prints one entry per line in the profile's order and numbers as
 * the shortest text that reads back to the same float.
 */
#include "quant/quant.h"
#include "support/io.h"
#include "support/textparse.h"
#include "support/util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void qprofile_init(struct qprofile *p) { memset(p, 0, sizeof *p); }

void qprofile_free(struct qprofile *p)
{
	for (size_t i = 0; i < p->n; i++) {
		free(p->v[i].name);
		free(p->v[i].hist);
	}
	free(p->v);
	free(p->buf);
	memset(p, 0, sizeof *p);
}

struct qp_entry *qprofile_find(const struct qprofile *p, const char *name, int64_t output)
{
	for (size_t i = 0; i < p->n; i++)
		if (p->v[i].output == output && strcmp(p->v[i].name, name) == 0)
			return &p->v[i];
	return NULL;
}

struct qp_entry *qprofile_add(struct qprofile *p, const char *name, int64_t output, float min, float max,
			      const float *hist, size_t nbins)
{
	p->v = xgrow(p->v, &p->cap, p->n + 1, sizeof *p->v);
	struct qp_entry *e = &p->v[p->n++];
	memset(e, 0, sizeof *e);
	e->name = xstrdup(name);
	e->output = output;
	e->min = min;
	e->max = max;
	e->nbins = nbins;
	e->hist = xcalloc(nbins + 1, sizeof *e->hist);
	if (hist)
		memcpy(e->hist, hist, nbins * sizeof *hist);
	e->loc = LOC_NONE;
	return e;
}

/* ---- reader ---- */

enum qp_tok { QT_EOF, QT_WORD, QT_NUM, QT_STR, QT_EQ, QT_BAD };

struct qp_lex {
	const char *s, *end, *base;
	uint32_t file;
	struct diag *d;
	/* the current token */
	enum qp_tok t;
	const char *ts;
	size_t tlen;
	double num;
	char *str; /* QT_STR: decoded, malloc'd */
};

static struct loc qp_loc(const struct qp_lex *l) { return loc_make(l->file, (uint32_t)(l->ts - l->base)); }

/* Decodes the quoted string at l->ts (escapes \\ and \"); false after
 * reporting an unterminated string or a bad escape. */
static bool qp_string(struct qp_lex *l)
{
	const char *p = l->s + 1;
	char *out = xmalloc((size_t)(l->end - p) + 1);
	size_t n = 0;
	for (; p < l->end && *p != '"' && *p != '\n'; p++) {
		if ((unsigned char)*p < 0x20 || *p == 0x7f) {
			diag_error(l->d, loc_make(l->file, (uint32_t)(p - l->base)), "control character in a value name");
			free(out);
			return false;
		}
		if (*p == '\\') {
			if (p + 1 >= l->end || (p[1] != '\\' && p[1] != '"')) {
				diag_error(l->d, loc_make(l->file, (uint32_t)(p - l->base)),
					   "bad escape in a value name (only \\\\ and \\\" are allowed)");
				free(out);
				return false;
			}
			p++;
		}
		out[n++] = *p;
	}
	if (p >= l->end || *p != '"') {
		diag_error(l->d, qp_loc(l), "unterminated value name");
		free(out);
		return false;
	}
	out[n] = 0;
	l->str = out;
	l->s = p + 1;
	return true;
}

/* Reads the next token; false after reporting a bad one. */
static bool qp_next(struct qp_lex *l)
{
	free(l->str);
	l->str = NULL;
	for (;;) {
		while (l->s < l->end && (*l->s == ' ' || *l->s == '\t' || *l->s == '\n' || *l->s == '\r'))
			l->s++;
		if (l->s < l->end && *l->s == '#') {
			while (l->s < l->end && *l->s != '\n')
				l->s++;
			continue;
		}
		break;
	}
	l->ts = l->s;
	if (l->s >= l->end) {
		l->t = QT_EOF;
		l->tlen = 0;
		return true;
	}
	char c = *l->s;
	if (c == '"') {
		l->t = QT_STR;
		bool ok = qp_string(l);
		l->tlen = (size_t)(l->s - l->ts);
		return ok;
	}
	if (c == '=') {
		l->t = QT_EQ;
		l->s++;
		l->tlen = 1;
		return true;
	}
	const char *e = l->s;
	while (e < l->end && *e != ' ' && *e != '\t' && *e != '\n' && *e != '\r' && *e != '#' && *e != '"' &&
	       *e != '=')
		e++;
	l->tlen = (size_t)(e - l->s);
	l->s = e;
	if ((c >= '0' && c <= '9') || c == '-' || c == '+' || c == '.') {
		char buf[64];
		if (l->tlen >= sizeof buf) {
			diag_error(l->d, qp_loc(l), "number '%.20s...' is too long", l->ts);
			l->t = QT_BAD;
			return false;
		}
		memcpy(buf, l->ts, l->tlen);
		buf[l->tlen] = 0;
		char *endp;
		l->num = strtod(buf, &endp);
		if (*endp || endp == buf) {
			diag_error(l->d, qp_loc(l), "'%s' is not a number", buf);
			l->t = QT_BAD;
			return false;
		}
		l->t = QT_NUM;
		return true;
	}
	l->t = QT_WORD;
	return true;
}

static const char *qp_tok_desc(const struct qp_lex *l, char *buf, size_t size)
{
	if (l->t == QT_EOF)
		return "end of file";
	return tp_tok_text(l->ts, l->ts + l->tlen, buf, size);
}

/* Reports "expected WHAT, found TOKEN" at the current token; false. */
static bool qp_expected(struct qp_lex *l, const char *what)
{
	char buf[64];
	diag_error(l->d, qp_loc(l), "expected %s, found %s", what, qp_tok_desc(l, buf, sizeof buf));
	return false;
}

static bool qp_word(struct qp_lex *l, const char *w)
{
	if (l->t != QT_WORD || l->tlen != strlen(w) || memcmp(l->ts, w, l->tlen) != 0) {
		char what[32];
		snprintf(what, sizeof what, "'%s'", w);
		return qp_expected(l, what);
	}
	return qp_next(l);
}

/* A finite number that is a float; false after reporting. */
static bool qp_float(struct qp_lex *l, const char *what, float *out)
{
	if (l->t != QT_NUM)
		return qp_expected(l, what);
	if (!isfinite(l->num) || fabs(l->num) > 3.4028234663852886e38) {
		diag_error(l->d, qp_loc(l), "%s must be a finite float", what);
		return false;
	}
	*out = (float)l->num;
	return qp_next(l);
}

/* An integer in [lo, hi]; false after reporting. */
static bool qp_int(struct qp_lex *l, const char *what, double lo, double hi, int64_t *out)
{
	if (l->t != QT_NUM)
		return qp_expected(l, what);
	if (l->num != floor(l->num) || l->num < lo || l->num > hi) {
		diag_error(l->d, qp_loc(l), "%s must be an integer in [%.0f, %.0f]", what, lo, hi);
		return false;
	}
	*out = (int64_t)l->num;
	return qp_next(l);
}

/* value "NAME" OUTPUT min MIN max MAX bins N = C1 ... CN */
static bool qp_entry(struct qp_lex *l, struct qprofile *p)
{
	struct loc at = qp_loc(l);
	if (!qp_word(l, "value"))
		return false;
	if (l->t != QT_STR)
		return qp_expected(l, "a quoted value name");
	struct loc name_loc = qp_loc(l);
	char *name = l->str;
	l->str = NULL;
	int64_t output = 0, bins = 0;
	float mn = 0, mx = 0;
	bool ok = qp_next(l) && qp_int(l, "the result index", 0, 255, &output) && qp_word(l, "min") &&
		  qp_float(l, "the minimum", &mn);
	struct loc max_loc = qp_loc(l);
	ok = ok && qp_word(l, "max") && qp_float(l, "the maximum", &mx);
	if (ok && !(mn <= mx)) {
		diag_error(l->d, max_loc, "the maximum is below the minimum");
		ok = false;
	}
	ok = ok && qp_word(l, "bins") && qp_int(l, "the bin count", 1, QP_MAX_BINS, &bins) &&
	     (l->t == QT_EQ ? qp_next(l) : qp_expected(l, "'='"));
	if (ok && qprofile_find(p, name, output)) {
		diag_error(l->d, name_loc, "value \"%s\" result %lld is profiled twice", name, (long long)output);
		ok = false;
	}
	if (!ok) {
		free(name);
		return false;
	}
	struct qp_entry *e = qprofile_add(p, name, output, mn, mx, NULL, (size_t)bins);
	e->loc = at;
	free(name);
	for (int64_t i = 0; i < bins; i++) {
		if (l->t != QT_NUM) {
			char what[96];
			snprintf(what, sizeof what, "histogram count %lld of %lld", (long long)i + 1, (long long)bins);
			return qp_expected(l, what);
		}
		if (!(l->num >= 0) || !isfinite(l->num) || l->num > 3.4028234663852886e38) {
			diag_error(l->d, qp_loc(l), "a histogram count must be a finite number >= 0");
			return false;
		}
		e->hist[i] = (float)l->num;
		if (!qp_next(l))
			return false;
	}
	if (l->t == QT_NUM)
		return qp_expected(l, "'value' (more histogram counts than 'bins' says)");
	return true;
}

int qprofile_parse(struct qprofile *p, const char *buf, size_t len, const char *name, struct diag *d)
{
	qprofile_init(p);
	struct qp_lex l = {buf, buf + len, buf, diag_add_source(d, name, buf, len), d, QT_EOF, buf, 0, 0, NULL};
	bool ok = qp_next(&l);
	if (ok && (l.t != QT_WORD || l.tlen != 12 || memcmp(l.ts, "glow-profile", 12) != 0))
		ok = qp_expected(&l, "'glow-profile 1' (the header of a quantization profile)");
	else if (ok) {
		ok = qp_next(&l);
		if (ok && (l.t != QT_NUM || l.num != 1)) {
			char tok[64];
			diag_error(d, qp_loc(&l), "unsupported profile format version %s (this reader reads 1)",
				   qp_tok_desc(&l, tok, sizeof tok));
			ok = false;
		} else if (ok)
			ok = qp_next(&l);
	}
	while (ok && l.t != QT_EOF)
		ok = qp_entry(&l, p);
	free(l.str);
	if (!ok) {
		qprofile_free(p);
		return -1;
	}
	return 0;
}

int qprofile_read(struct qprofile *p, const char *path, struct diag *d)
{
	char *buf;
	size_t len;
	qprofile_init(p);
	if (read_input(path, &buf, &len, d))
		return -1;
	if (qprofile_parse(p, buf, len, path, d)) {
		/* the diagnostics printed already; the source goes with them */
		free(buf);
		return -1;
	}
	p->buf = buf;
	return 0;
}

/* ---- writer ---- */

int qprofile_write(const struct qprofile *p, const char *path, struct diag *d)
{
	struct ostream os;
	if (ostream_open(&os, path, d))
		return -1;
	qprofile_print(&os, p);
	return ostream_commit(&os, d) ? -1 : 0;
}

void qprofile_print(struct ostream *os, const struct qprofile *p)
{
	os_puts(os, "glow-profile 1\n");
	for (size_t i = 0; i < p->n; i++) {
		const struct qp_entry *e = &p->v[i];
		os_puts(os, "value ");
		os_putc(os, '"');
		for (const char *c = e->name; *c; c++) {
			if (*c == '"' || *c == '\\')
				os_putc(os, '\\');
			os_putc(os, *c);
		}
		os_printf(os, "\" %lld min ", (long long)e->output);
		os_float(os, e->min);
		os_puts(os, " max ");
		os_float(os, e->max);
		os_printf(os, " bins %zu =", e->nbins);
		for (size_t b = 0; b < e->nbins; b++) {
			os_putc(os, ' ');
			/* counts are whole numbers unless re-binning split one */
			if (e->hist[b] == floorf(e->hist[b]) && e->hist[b] < 16777216.0f)
				os_printf(os, "%.0f", (double)e->hist[b]);
			else
				os_float(os, e->hist[b]);
		}
		os_putc(os, '\n');
	}
}
