/* textparse.h - what the two IR readers (the graph IR's .glow and the
 * instruction IR's .gir) share below their grammars.
 *
 * Both lexers hand the parser tokens as spans into the source (a pointer, a
 * length and whether the text holds escapes) and convert number literals the
 * same way; both parsers decode quoted text with the same escapes (\\, \",
 * \n, \t, \XX), show tokens and names in messages the same way, list the
 * expected tokens of a syntax error the same way, check splat values against
 * the same element ranges and let go of the input behind them the same way.
 * Nothing here knows a grammar or a parser state: callers pass the pieces
 * (a scratch buffer, a span's fields) and keep their own error counts.
 */
#ifndef GLOW_SUPPORT_TEXTPARSE_H
#define GLOW_SUPPORT_TEXTPARSE_H

#include "diag.h"
#include "types.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct input;

/* The initializers of a graph IR constant and of an instruction IR weight
 * (the same keywords in both formats: lib/graph/initializer.h). */
enum init_kind { INIT_DENSE, INIT_SPLAT, INIT_ZERO, INIT_XAVIER, INIT_FILE };

/* The values of an initializer, fields of a graph IR constant, an
 * instruction IR weight and struct init_spec (lib/graph/initializer.h). */
#define INIT_VALUE_FIELDS                                                                                        \
	double splat_f;       /* INIT_SPLAT on float kinds */                                                    \
	int64_t splat_i;      /* INIT_SPLAT on integer, quantized and bool kinds */                              \
	double fan_in;        /* INIT_XAVIER */                                                                  \
	uint64_t seed;        /* INIT_XAVIER */                                                                  \
	const char *file;     /* INIT_FILE: the path as written */                                               \
	uint64_t file_offset; /* INIT_FILE */

/* ---- literals (the lexers) ---- */

/* Decimal digits in [s, e) with an optional leading '-' (already matched by
 * the lexer) to *out; returns 0 on overflow. Inline: the lexers' hot path. */
static inline int tp_i64(const unsigned char *s, const unsigned char *e, int64_t *out)
{
	bool neg = *s == '-';
	if (neg)
		s++;
	uint64_t v = 0, lim = neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
	for (; s < e; s++) {
		unsigned d = (unsigned)(*s - '0');
		if (v > (lim - d) / 10)
			return 0;
		v = v * 10 + d;
	}
	*out = neg ? (v == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)v) : (int64_t)v;
	return 1;
}

/* A float literal in [s, e) (already matched) through strtod; returns 0 if
 * it overflows to infinity. */
int tp_f64(const unsigned char *s, const unsigned char *e, double *out);

/* A byte for a message: 'c' when printable, else '\xNN'. Returns buf. */
const char *tp_char_name(unsigned char c, char *buf, size_t size);

/* ---- quoted text ---- */

/* The value of a hex digit, -1 if c is not one. */
int tp_hexval(char c);
/* Decodes 2*n hex digits into out (a weight's dense initializer); returns
 * -1 on success, otherwise the index of the first bad digit. */
long hex_decode(const char *hex, size_t n, uint8_t *out);
/* The same contract, faster on long strings (weights). */
long hex_decode_fast(const char *hex, size_t n, uint8_t *out);

/* The text of a span [s, s + len), escapes decoded when esc (the lexer has
 * validated them), NUL terminated, in the caller's scratch buffer *sb of
 * *sbcap bytes (grown as needed; valid until its next use). */
const char *tp_unescape(char **sb, size_t *sbcap, const char *s, uint32_t len, bool esc);

/* A lookup key for a span: the source text itself when it holds no escape
 * (no copy), else the decoded text in the scratch buffer; *klen its length. */
const char *tp_key(char **sb, size_t *sbcap, const char *s, uint32_t len, bool esc, size_t *klen);

/* The index of the value [s, s + len) in the enumerator list "a|b|c" of an
 * attribute row, -1 if it is none of them. */
int tp_enum_index(const char *vals, const char *s, size_t len);

/* ---- messages ---- */

/* A name as written, for messages: the sigil, then the source text (quoted
 * when it was), cut after 60 bytes with "...". Returns buf. */
const char *tp_name_text(const char *s, uint32_t len, bool esc, char sigil, char *buf, size_t size);

/* The text of a token [s, e) for a message: quoted, cut after 40 bytes with
 * "...", control characters shown as '?'. Returns buf. */
const char *tp_tok_text(const char *s, const char *e, char *buf, size_t size);

/* "a, b or c" from bison's expected-token names (string aliases lose their
 * quotes) into buf (truncated to size). */
void tp_expected(char *buf, size_t size, const char *const *expected, int nexp);

/* ---- checks ---- */

/* v is in the range of the stored integer of element kind k (splat values
 * of integer, quantized and bool kinds; other kinds take any value). */
bool tp_int_fits(enum elem_kind k, int64_t v);

/* Checks a splat value against element kind k and reports at loc:
 * true/false (is_bool) only for bool, integers (is_int) for every kind but
 * the floating-point ones, in the stored integer's range. */
bool tp_splat_ok(struct diag *d, struct loc loc, enum elem_kind k, bool is_bool, bool is_int, int64_t i);
/* The index of the first of n dense elements of kind k (data: one byte
 * each for i4, u4, f4e2m1) that is not a value of the kind, -1 if none
 * (and for every other kind). */
int64_t tp_dense_bad_elem(enum elem_kind k, const uint8_t *data, uint64_t n);

/* ---- the kind of an input ---- */

/* What a file given to a reader is, judged from its first bytes: graph IR
 * text (its first keyword is module, placeholder, constant or func),
 * instruction IR text (function, memory, declare or program), a binary ONNX
 * ModelProto (its top-level protobuf fields parse to the end and include a
 * graph), or none of these (TP_LEVEL_UNKNOWN: a broken file of any kind).
 * Comments and blank space before the first keyword are skipped. */
enum tp_level { TP_LEVEL_UNKNOWN, TP_LEVEL_GRAPH, TP_LEVEL_INSTR, TP_LEVEL_ONNX };
/* *at is the offset of the keyword that decided (0 for ONNX). */
enum tp_level tp_sniff_level(const char *buf, size_t len, size_t *at);

/* Arms the diagnostics of a reader of level `want` on the source `file`
 * (diag_add_source) holding buf: when the input is of another known level,
 * the reader's first error is followed by a note naming the tool that reads
 * it ("this is instruction IR (.gir): glow-llc and glow-run read it") and
 * the diagnostics stop there. Call before parsing; diag_hint_first_error(d,
 * LOC_NONE, NULL) after it. */
void tp_hint_level(struct diag *d, uint32_t file, const char *buf, size_t len, enum tp_level want);

/* The note for an input of level l, NULL for TP_LEVEL_UNKNOWN. */
const char *tp_level_hint(enum tp_level l);

/* ---- input pages ---- */

/* Lets go of the pages of in (NULL: nothing to do) more than 1 MiB behind
 * at, the reader's position, in steps of 4 MiB; *dropped is how far the
 * input has been let go of so far. Spans still in use must lie within the
 * last MiB. */
void tp_drop_behind(const struct input *in, size_t *dropped, size_t at);

#endif
