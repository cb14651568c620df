/* glow.re - the lexer of the graph IR text format (docs/GraphIR.md).
 *
 * Design: re2c over the whole input, which ends in at least 16 zero bytes
 * (read_input), so the sentinel NUL stops every rule and no fill is needed;
 * a NUL before the end is an invalid character. All state is in struct
 * glow_parser: no globals, any number of parses may run at once.
 *
 * Tokens carry a struct loc (source id, byte offset). Names, identifiers and
 * strings are returned as spans into the source, never copied here: quoted
 * ones are validated here (escapes, characters) and decoded by the actions
 * only where a name is needed. A digit run directly followed by 'x' is one
 * DIMX token, so "8x28" and "8 x 28" are both dimension lists.
 *
 * Lexical errors are reported here and signalled to the parser with YYerror
 * (error recovery without a second message). After any error the parser sets
 * sync_pending and the next call skips to the start of the next statement
 * line and returns SYNC (see glow.y).
 */
#include "glow.tab.h"
#include "support/textread.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef unsigned char uchar;

/* the tokens of the shared rules (textlex.re) */
#define LEX_T(t) GT_##t

_Static_assert((int)GT_END == (int)TP_TOK_END && (int)GT_GLOW_YYerror == (int)TP_TOK_ERROR, "the shell's token numbers");

/* Records the token for error messages and recovery and returns it. */
static int lex_tok(struct glow_parser *p, struct loc *lloc, int t, const uchar *start, const uchar *end, bool bol)
{
	if (t == GT_KW_MODULE || t == GT_KW_PLACEHOLDER || t == GT_KW_CONSTANT || t == GT_KW_FUNC)
		p->decl_tok = t;
	tp_lex_keep_prev(&p->r);
	return tp_lex_tok(&p->r, lloc, t, start, end, bol);
}

/* A statement or declaration may start at s (error recovery: lines that
 * continue a broken statement are skipped). */
static bool lex_line_starts_stmt(const struct tp_reader *r, const char *s)
{
	const struct glow_parser *p = (const struct glow_parser *)(const void *)r; /* r is its first member */
	static const char *const kws[] = {"module", "placeholder", "constant", "func", "attributes"};
	for (size_t i = 0; i < GLOW_ARRAY_SIZE(kws); i++) {
		size_t n = strlen(kws[i]);
		if ((size_t)(p->r.lim - s) >= n && memcmp(s, kws[i], n) == 0) {
			char c = s + n < p->r.lim ? s[n] : ' ';
			if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_'))
				return true;
		}
	}
	return p->in_func && (*s == '%' || *s == '}' || (*s >= 'A' && *s <= 'Z') ||
			      ((size_t)(p->r.lim - s) > 4 && memcmp(s, "let ", 4) == 0));
}

static int lex_error(struct glow_parser *p, struct loc *lloc, const uchar *tok, const uchar *cur, const uchar *at,
		     const char *fmt, const char *arg)
{
	tp_lex_keep_prev(&p->r);
	return tp_lex_error(&p->r, lloc, tok, cur, at, fmt, arg);
}

/* Bytes that stand for themselves inside quotes: not '"', '\\', control
 * characters (NUL and newline included) or DEL. */
static const uint8_t lex_plain[256] = {
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	1, 1, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
	1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 1, 1, 1,
	1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0,
	1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
	1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
	1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
	1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
};

static bool lex_is_hex(uchar c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

/* Scans the inside of a quoted name or string from c (after the opening
 * quote); returns the closing quote, or the byte that is not allowed there.
 * Hand-written rather than a re2c loop: dense constants are hundreds of
 * megabytes of string. */
static const uchar *lex_scan_quoted(const uchar *c)
{
	for (;;) {
		while (lex_plain[c[0]] & lex_plain[c[1]] & lex_plain[c[2]] & lex_plain[c[3]])
			c += 4;
		while (lex_plain[*c])
			c++;
		if (*c != '\\')
			return c;
		if (c[1] == '\\' || c[1] == '"' || c[1] == 'n' || c[1] == 't')
			c += 2;
		else if (lex_is_hex(c[1]) && lex_is_hex(c[2]) && !(c[1] == '0' && c[2] == '0'))
			c += 3;
		else
			return c;
	}
}

/* A quoted name (t LOCAL or GLOBAL) or string (t STRING); tok is its first
 * byte, body the byte after the opening quote. */
static int lex_quoted(struct glow_parser *p, GLOW_YYSTYPE *lval, struct loc *lloc, int t, const uchar *tok,
		      const uchar *body, bool bol)
{
	const uchar *c = lex_scan_quoted(body);
	char buf[16];
	if (*c == '"') {
		lval->span.s = (const char *)body;
		lval->span.len = (uint32_t)(c - body);
		lval->span.esc = 1;
		if (t != GT_STRING && c == body)
			return lex_error(p, lloc, tok, c + 1, tok, "%s", "empty name");
		return lex_tok(p, lloc, t, tok, c + 1, bol);
	}
	if (*c == '\\') {
		if (c[1] == '0' && c[2] == '0')
			return lex_error(p, lloc, tok, c + 3, c, "%s",
					 "escape '\\00' is not allowed: names and strings cannot contain NUL");
		snprintf(buf, sizeof buf, "%c", c[1] >= 0x20 && c[1] < 0x7f ? c[1] : '?');
		return lex_error(p, lloc, tok, c + 1, c, "invalid escape sequence '\\%s'", buf);
	}
	const uchar *q = body - 1;
	if (*c == '\n' || *c == '\r' || (const char *)c >= p->r.lim)
		return lex_error(p, lloc, tok, c, q, "%s", "unterminated string");
	return lex_error(p, lloc, tok, c + 1, c, "invalid character %s in string (use an escape)",
			 tp_char_name(*c, buf, sizeof buf));
}

/* A type is due: after ':' (declarations, result types) or '->' (a
 * signature's result types), or after a type and ',' (more result types). */
static bool lex_type_due(const struct glow_parser *p)
{
	return p->r.last_tok == ':' || p->r.last_tok == GT_ARROW || (p->r.last_tok == ',' && (p->r.prev_tok == '>' || p->r.prev_tok == GT_TYPE));
}

static bool lex_is_digit(uchar c) { return c >= '0' && c <= '9'; }

/* The rest of a plain type from its '<' at c: dimensions separated by 'x'
 * as the token rules would read them ("16 x 16", "16x16", "<>"), spaces
 * only, each at most 18 digits, at most GLOW_MAX_RANK of them. Stores them
 * in p->dims and returns the byte after '>'; NULL (nothing stored) for
 * anything else, which the token rules then read one token at a time
 * (quantization parameters, comments or line breaks inside, errors). This
 * fast path is what most statements' types take: one token instead of six
 * or eight for the parser. */
static const uchar *lex_type_tail(struct glow_parser *p, const uchar *c)
{
	uint64_t dims[GLOW_MAX_RANK];
	unsigned n = 0;
	c++;
	while (*c == ' ')
		c++;
	if (*c != '>') {
		for (;;) {
			const uchar *d = c;
			uint64_t v = 0;
			while (lex_is_digit(*c))
				v = v * 10 + (uint64_t)(*c++ - '0');
			if (c == d || c - d > 18 || n == GLOW_MAX_RANK)
				return NULL;
			dims[n++] = v;
			if (*c == 'x') { /* "16x": one DIMX token */
				c++;
			} else {
				while (*c == ' ')
					c++;
				if (*c == '>')
					break;
				if (*c != 'x' || c[1] != ' ') /* "x16" would be an identifier */
					return NULL;
				c++;
			}
			while (*c == ' ')
				c++;
		}
	}
	memcpy(p->dims, dims, n * sizeof(dims[0]));
	p->ndims = n;
	p->dims_bad = false;
	return c + 1;
}

/* An identifier or keyword: its text is its value. */
static int lex_word(struct glow_parser *p, GLOW_YYSTYPE *lval, struct loc *lloc, int t, const uchar *tok,
		    const uchar *cur, bool bol)
{
	lval->span.s = (const char *)tok;
	lval->span.len = (uint32_t)(cur - tok);
	lval->span.esc = 0;
	return lex_tok(p, lloc, t, tok, cur, bol);
}

/* %name, @name: the span is the text after the sigil. */
static int lex_name(GLOW_YYSTYPE *lval, struct loc *lloc, struct glow_parser *p, int t, const uchar *tok,
		    const uchar *cur, bool bol)
{
	lval->span.s = (const char *)tok + 1;
	lval->span.len = (uint32_t)(cur - tok - 1);
	lval->span.esc = 0;
	return lex_tok(p, lloc, t, tok, cur, bol);
}

int glow_yylex(GLOW_YYSTYPE *lval, struct loc *lloc, struct glow_parser *p)
{
	if (tp_lex_sync(&p->r, lloc, lex_line_starts_stmt))
		return GT_SYNC;

	const uchar *cur = (const uchar *)p->r.cur, *mar, *tok;
	bool bol = cur == (const uchar *)p->r.buf;
	char cbuf[16];
	for (;;) {
		tok = cur;
		/*!re2c
		re2c:define:YYCTYPE = uchar;
		re2c:define:YYCURSOR = cur;
		re2c:define:YYMARKER = mar;
		re2c:yyfill:enable = 0;
		re2c:indent:string = "\t";

		!include "textlex.re";

		"%" bare { return lex_name(lval, lloc, p, GT_LOCAL, tok, cur, bol); }
		"@" bare { return lex_name(lval, lloc, p, GT_GLOBAL, tok, cur, bol); }
		"%\"" { return lex_quoted(p, lval, lloc, GT_LOCAL, tok, cur, bol); }
		"@\"" { return lex_quoted(p, lval, lloc, GT_GLOBAL, tok, cur, bol); }
		"\"" { return lex_quoted(p, lval, lloc, GT_STRING, tok, cur, bol); }

		digits "x" {
			if (!tp_i64(tok, cur - 1, &lval->i))
				return lex_error(p, lloc, tok, cur, tok, "%s", "integer out of range (64-bit signed)");
			return lex_tok(p, lloc, GT_DIMX, tok, cur, bol);
		}

		"module" { return lex_word(p, lval, lloc, GT_KW_MODULE, tok, cur, bol); }
		"placeholder" { return lex_word(p, lval, lloc, GT_KW_PLACEHOLDER, tok, cur, bol); }
		"constant" { return lex_word(p, lval, lloc, GT_KW_CONSTANT, tok, cur, bol); }
		"func" { return lex_word(p, lval, lloc, GT_KW_FUNC, tok, cur, bol); }
		"trainable" { return lex_word(p, lval, lloc, GT_KW_TRAINABLE, tok, cur, bol); }
		"static" { return lex_word(p, lval, lloc, GT_KW_STATIC, tok, cur, bol); }
		"dense" { return lex_word(p, lval, lloc, GT_KW_DENSE, tok, cur, bol); }
		"splat" { return lex_word(p, lval, lloc, GT_KW_SPLAT, tok, cur, bol); }
		"zero" { return lex_word(p, lval, lloc, GT_KW_ZERO, tok, cur, bol); }
		"xavier" { return lex_word(p, lval, lloc, GT_KW_XAVIER, tok, cur, bol); }
		"seed" { return lex_word(p, lval, lloc, GT_KW_SEED, tok, cur, bol); }
		"file" { return lex_word(p, lval, lloc, GT_KW_FILE, tok, cur, bol); }
		"offset" { return lex_word(p, lval, lloc, GT_KW_OFFSET, tok, cur, bol); }
		"true" { return lex_word(p, lval, lloc, GT_KW_TRUE, tok, cur, bol); }
		"false" { return lex_word(p, lval, lloc, GT_KW_FALSE, tok, cur, bol); }
		"predicate" { return lex_word(p, lval, lloc, GT_KW_PREDICATE, tok, cur, bol); }
		"x" { return lex_word(p, lval, lloc, GT_KW_X, tok, cur, bol); }
		"let" { return lex_word(p, lval, lloc, GT_KW_LET, tok, cur, bol); }
		"attributes" { return lex_word(p, lval, lloc, GT_KW_ATTRIBUTES, tok, cur, bol); }
		"lowered_from" { return lex_word(p, lval, lloc, GT_KW_LOWERED_FROM, tok, cur, bol); }
		"then" { return lex_word(p, lval, lloc, GT_KW_THEN, tok, cur, bol); }
		"else" { return lex_word(p, lval, lloc, GT_KW_ELSE, tok, cur, bol); }
		"body" { return lex_word(p, lval, lloc, GT_KW_BODY, tok, cur, bol); }
		"fn" { return lex_word(p, lval, lloc, GT_KW_FN, tok, cur, bol); }
		"->" { return lex_tok(p, lloc, GT_ARROW, tok, cur, bol); }
		ident "." ident { return lex_word(p, lval, lloc, GT_IDENT, tok, cur, bol); } /* OpenCL.ConvBiasRelu */
		ident {
			if (*cur == '<' && lex_type_due(p)) {
				const uchar *end = lex_type_tail(p, cur);
				if (end) {
					p->type_lt = loc_make(p->r.file, (uint32_t)((const char *)cur - p->r.buf));
					lval->span.s = (const char *)tok;
					lval->span.len = (uint32_t)(cur - tok);
					lval->span.esc = 0;
					return lex_tok(p, lloc, GT_TYPE, tok, end, bol);
				}
			}
			return lex_word(p, lval, lloc, GT_IDENT, tok, cur, bol);
		}
		[(){}<>[\]:,=#] { return lex_tok(p, lloc, *tok, tok, cur, bol); }
		* { return lex_error(p, lloc, tok, cur, tok, "invalid character %s", tp_char_name(*tok, cbuf, sizeof cbuf)); }
		*/
	}
}
