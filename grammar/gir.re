/* gir.re - the lexer of the instruction IR text format (docs/InstrIR.md).
 *
 * Design: re2c over the whole input, which ends in at least 16 zero bytes
 * (read_input), so the sentinel NUL stops every rule and no fill is needed;
 * a NUL before the end is an invalid character. All state is in struct
 * gir_parser: no globals.
 *
 * Tokens carry a struct loc. Names, identifiers, strings and types are spans
 * into the source, never copied here. A type (`float<8 x 28>`,
 * `qi8[0.5:-3]<4>`) is one TYPE token, decoded by parse.c; an identifier
 * followed by '[' and no '<' after the ']' stays an identifier (`pool max
 * [3 3 0]`). `@in`, `@out`, `@inout` are QUAL tokens.
 *
 * A long string of hex digits (a dense weight, often hundreds of megabytes)
 * skips the DFA: lex_hex_string finds its end with memchr and decodes it in
 * the same pass; anything else in the string sends it back to the DFA.
 *
 * Lexical errors are reported here and signalled to the parser with YYerror.
 * After any error the next call skips to the start of the next line and
 * returns SYNC (see gir.y).
 */
#include "gir.tab.h"
#include "support/io.h"
#include "support/textread.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef unsigned char uchar;

/* the tokens of the shared rules (textlex.re) */
#define LEX_T(t) GIR_##t

_Static_assert((int)GIR_END == (int)TP_TOK_END && (int)GIR_GIR_YYerror == (int)TP_TOK_ERROR, "the shell's token numbers");

static int lex_tok(struct gir_parser *p, struct loc *lloc, int t, const uchar *start, const uchar *end, bool bol)
{
	return tp_lex_tok(&p->r, lloc, t, start, end, bol);
}

/* Recovery resumes at the next line that is neither blank nor a comment. */
static bool lex_line_starts(const struct tp_reader *r, const char *c)
{
	(void)r;
	return *c != '\n' && !(c[0] == '/' && c[1] == '/');
}

static int lex_error(struct gir_parser *p, struct loc *lloc, const uchar *tok, const uchar *cur, const uchar *at,
		     const char *fmt, const char *arg)
{
	return tp_lex_error(&p->r, lloc, tok, cur, at, fmt, arg);
}

/* A quoted name or string that did not close at cur: why. */
static int lex_bad_quote(struct gir_parser *p, struct loc *lloc, const uchar *tok, const uchar *cur)
{
	const uchar *q = tok;
	while (*q != '"')
		q++;
	if (*cur == '\\')
		return lex_error(p, lloc, tok, cur + 1, cur, "%s", "invalid escape sequence");
	if (*cur == '\n' || *cur == '\r' || (const char *)cur >= p->r.lim)
		return lex_error(p, lloc, tok, cur, q, "%s", "unterminated string");
	char buf[16];
	return lex_error(p, lloc, tok, cur + 1, cur, "invalid character %s in string (use an escape)",
			 tp_char_name(*cur, buf, sizeof buf));
}

static int lex_span(struct gir_parser *p, GIR_YYSTYPE *lval, struct loc *lloc, int t, const uchar *tok,
		    const uchar *cur, unsigned skip, unsigned trail, bool esc, bool bol)
{
	lval->span.s = (const char *)tok + skip;
	lval->span.len = (uint32_t)(cur - tok - skip - trail);
	lval->span.esc = esc;
	if ((t == GIR_LOCAL || t == GIR_GLOBAL) && lval->span.len == 0)
		return lex_error(p, lloc, tok, cur, tok, "%s", "empty name");
	return lex_tok(p, lloc, t, tok, cur, bol);
}

enum { HEX_CHUNK = 8 << 20 };

/* Lets go of the input pages of [from, to) when reading through
 * ir_module_parse_input (a touched page is read again from the file). */
static void lex_drop(struct gir_parser *p, const char *from, const char *to)
{
	if (p->r.in)
		input_drop(p->r.in, (size_t)(from - p->r.buf), (size_t)(to - p->r.buf));
}

/* The quote closing a string whose body starts at s, if it is on the same
 * line; NULL otherwise. Each chunk is searched for a newline first, so the
 * search never runs past the end of the line (work linear in the input,
 * whatever the input); chunks passed are let go. */
static const char *lex_string_end(struct gir_parser *p, const char *s)
{
	for (const char *c = s; c < p->r.lim;) {
		size_t n = (size_t)(p->r.lim - c) < HEX_CHUNK ? (size_t)(p->r.lim - c) : HEX_CHUNK;
		const char *nl = memchr(c, '\n', n);
		const char *q = memchr(c, '"', nl ? (size_t)(nl - c) : n);
		if (q || nl)
			return q;
		lex_drop(p, c, c + n);
		c += n;
	}
	return NULL;
}

/* A long string of hex digits after "0x" (a dense weight): the closing
 * quote found with memchr, the digits checked and decoded in one pass into
 * the module's arena (p->r.hex_data, used by the dense initializer), in
 * chunks whose input pages are let go behind the decoder. Returns the
 * STRING token the DFA would have returned, or 0 when the string is not all
 * hex digits in pairs (the DFA then reads it and reports any error). The
 * bytes of a failed attempt stay in the arena; they are at most half the
 * string the DFA then consumes. */
static int lex_hex_string(struct gir_parser *p, GIR_YYSTYPE *lval, struct loc *lloc, const uchar *tok, bool bol)
{
	const char *s = (const char *)tok + 3;
	const char *q = lex_string_end(p, s);
	if (!q || q - s < GIR_HEX_FAST || (q - s) % 2)
		return 0;
	size_t bytes = (size_t)(q - s) / 2;
	uint8_t *data = arena_alloc(&p->m->arena, bytes);
	for (size_t done = 0; done < bytes;) {
		size_t n = bytes - done < HEX_CHUNK / 2 ? bytes - done : HEX_CHUNK / 2;
		if (hex_decode_fast(s + 2 * done, n, data + done) >= 0)
			return 0;
		lex_drop(p, s + 2 * done, s + 2 * (done + n));
		done += n;
	}
	p->r.hex_s = (const char *)tok + 1;
	p->r.hex_data = data;
	lval->span.s = (const char *)tok + 1;
	lval->span.len = (uint32_t)(q - (const char *)tok - 1);
	lval->span.esc = false;
	return lex_tok(p, lloc, GIR_STRING, tok, (const uchar *)q + 1, bol);
}

int gir_yylex(GIR_YYSTYPE *lval, struct loc *lloc, struct gir_parser *p)
{
	if (tp_lex_sync(&p->r, lloc, lex_line_starts))
		return GIR_SYNC;

	const uchar *cur = (const uchar *)p->r.cur, *mar, *tok;
	bool bol = cur == (const uchar *)p->r.buf;
	char cbuf[16];
	for (;;) {
		tok = cur;
		if (*cur == '"' && cur[1] == '0' && (cur[2] | 0x20) == 'x') {
			int t = lex_hex_string(p, lval, lloc, tok, bol);
			if (t)
				return t;
		}
		/*!re2c
		re2c:define:YYCTYPE = uchar;
		re2c:define:YYCURSOR = cur;
		re2c:define:YYMARKER = mar;
		re2c:yyfill:enable = 0;
		re2c:indent:string = "\t";

		!include "textlex.re";

		sc = [^"\\\x00-\x1f\x7f];
		hx = [0-9a-fA-F];
		esc = "\\" ([\\"nt] | [1-9a-fA-F] hx | "0" [1-9a-fA-F]);
		qbody = (sc | esc)*;
		sp = [ \t]*;
		type = ident sp ("[" [^\]\n\x00<>]* "]" sp)? "<" [^>\n\x00]* ">";

		"@in" { lval->i = IQ_IN; return lex_tok(p, lloc, GIR_QUAL, tok, cur, bol); }
		"@out" { lval->i = IQ_OUT; return lex_tok(p, lloc, GIR_QUAL, tok, cur, bol); }
		"@inout" { lval->i = IQ_INOUT; return lex_tok(p, lloc, GIR_QUAL, tok, cur, bol); }
		"%" bare { return lex_span(p, lval, lloc, GIR_LOCAL, tok, cur, 1, 0, false, bol); }
		"@" bare { return lex_span(p, lval, lloc, GIR_GLOBAL, tok, cur, 1, 0, false, bol); }
		"%\"" qbody "\"" { return lex_span(p, lval, lloc, GIR_LOCAL, tok, cur, 2, 1, true, bol); }
		"@\"" qbody "\"" { return lex_span(p, lval, lloc, GIR_GLOBAL, tok, cur, 2, 1, true, bol); }
		"\"" qbody "\"" { return lex_span(p, lval, lloc, GIR_STRING, tok, cur, 1, 1, true, bol); }
		[%@]? "\"" qbody { return lex_bad_quote(p, lloc, tok, cur); }

		type { return lex_span(p, lval, lloc, GIR_TYPE, tok, cur, 0, 0, false, bol); }

		"function" { return lex_span(p, lval, lloc, GIR_KW_FUNCTION, tok, cur, 0, 0, false, bol); }
		"memory" { return lex_span(p, lval, lloc, GIR_KW_MEMORY, tok, cur, 0, 0, false, bol); }
		"declare" { return lex_span(p, lval, lloc, GIR_KW_DECLARE, tok, cur, 0, 0, false, bol); }
		"program" { return lex_span(p, lval, lloc, GIR_KW_PROGRAM, tok, cur, 0, 0, false, bol); }
		"weight" { return lex_span(p, lval, lloc, GIR_KW_WEIGHT, tok, cur, 0, 0, false, bol); }
		"mutable" { return lex_span(p, lval, lloc, GIR_KW_MUTABLE, tok, cur, 0, 0, false, bol); }
		"constant" { return lex_span(p, lval, lloc, GIR_KW_CONSTANT, tok, cur, 0, 0, false, bol); }
		"dense" { return lex_span(p, lval, lloc, GIR_KW_DENSE, tok, cur, 0, 0, false, bol); }
		"splat" { return lex_span(p, lval, lloc, GIR_KW_SPLAT, tok, cur, 0, 0, false, bol); }
		"broadcast" { return lex_span(p, lval, lloc, GIR_KW_BROADCAST, tok, cur, 0, 0, false, bol); }
		"zero" { return lex_span(p, lval, lloc, GIR_KW_ZERO, tok, cur, 0, 0, false, bol); }
		"xavier" { return lex_span(p, lval, lloc, GIR_KW_XAVIER, tok, cur, 0, 0, false, bol); }
		"seed" { return lex_span(p, lval, lloc, GIR_KW_SEED, tok, cur, 0, 0, false, bol); }
		"file" { return lex_span(p, lval, lloc, GIR_KW_FILE, tok, cur, 0, 0, false, bol); }
		"offset" { return lex_span(p, lval, lloc, GIR_KW_OFFSET, tok, cur, 0, 0, false, bol); }
		"if" { return lex_span(p, lval, lloc, GIR_KW_IF, tok, cur, 0, 0, false, bol); }
		"else" { return lex_span(p, lval, lloc, GIR_KW_ELSE, tok, cur, 0, 0, false, bol); }
		"loop" { return lex_span(p, lval, lloc, GIR_KW_LOOP, tok, cur, 0, 0, false, bol); }
		"true" { return lex_span(p, lval, lloc, GIR_KW_TRUE, tok, cur, 0, 0, false, bol); }
		"false" { return lex_span(p, lval, lloc, GIR_KW_FALSE, tok, cur, 0, 0, false, bol); }
		ident { return lex_span(p, lval, lloc, GIR_IDENT, tok, cur, 0, 0, false, bol); }
		[{}[\],=] { return lex_tok(p, lloc, *tok, tok, cur, bol); }
		* { return lex_error(p, lloc, tok, cur, tok, "invalid character %s", tp_char_name(*tok, cbuf, sizeof cbuf)); }
		*/
	}
}
