/* textread.h - the text-reader shell: the state and the steps the graph IR
 * reader (.glow, lib/graph/parse.c) and the instruction IR reader (.gir,
 * lib/ir/parse.c) share around their grammars.
 *
 * Each reader's parser state begins with a struct tp_reader (member `r`):
 * the lexer's position and the tokens it last returned, error recovery (skip
 * to a line where a statement may start, then a SYNC token), diagnostics
 * with an error count, the scratch buffer names are decoded into, and the
 * decoded bytes of a long hex string when the lexer read it itself. The
 * shell also checks weight initializers (dense hex, splat, xavier, external
 * files relative to the module's base directory) and keeps poison sets, the
 * names whose definition failed so that their uses do not report again.
 * What differs between the two formats (keywords, statements, the tables
 * kinds are looked up in) stays with each reader.
 */
#ifndef GLOW_SUPPORT_TEXTREAD_H
#define GLOW_SUPPORT_TEXTREAD_H

#include "arena.h"
#include "diag.h"
#include "hashmap.h"
#include "textparse.h"
#include "types.h"
#include "util.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

struct input;

/* Bison's fixed token numbers: end of input and the error token a lexer
 * returns after reporting a lexical error (each lexer asserts them). */
enum { TP_TOK_END = 0, TP_TOK_ERROR = 256 };

/* A name, identifier, string or type as written: s points into the source
 * (after the sigil, inside the quotes); esc is set when it holds escapes. */
struct tp_span {
	const char *s;
	uint32_t len;
	uint32_t esc;
};

/* A number as written: an integer (is_int) also carries its double value. */
struct tp_num {
	double f;
	int64_t i;
	bool is_int;
	struct loc loc;
};

/* A weight initializer as written (graph IR constants, instruction IR
 * weights): kind is an enum init_kind, or TP_INIT_NONE when there is none. */
enum { TP_INIT_NONE = -1 };
struct tp_init {
	int kind;
	struct tp_num num;    /* splat value, xavier fan-in */
	bool is_bool;         /* splat true/false */
	struct tp_span str;   /* dense data, file path */
	struct loc loc;       /* the initializer's keyword */
	struct loc str_loc;   /* its string */
	int64_t seed, offset; /* xavier seed, file offset */
	struct loc seed_loc, offset_loc;
};

/* The state every reader shares; the first member of its parser state. */
struct tp_reader {
	/* the lexer */
	const char *buf, *lim, *cur;
	const struct input *in; /* read through input_open; NULL otherwise */
	size_t dropped;         /* input before this offset was let go (input_drop) */
	uint32_t file;
	int last_tok, prev_tok;            /* the lookahead and the token before */
	const char *last_start, *last_end; /* text of the lookahead */
	const char *prev_start, *prev_end; /* text of the token before (tp_lex_keep_prev) */
	bool last_bol;                     /* the lookahead is first on its line */
	bool last_after_sync;              /* ... and directly follows a SYNC */
	bool after_sync;
	bool sync_pending; /* skip to the next statement line, then SYNC */
	bool eof_synced;
	/* the decoded bytes of the last long hex string the lexer read itself */
	const char *hex_s; /* its span's text ("0x...") */
	uint8_t *hex_data;
	/* diagnostics */
	struct diag *d;
	int errors;
	int syntax_errors;
	uint32_t last_syntax_error; /* offset */
	/* NUL-terminated copies of names */
	char *sb;
	size_t sbcap;
};

/* ---- set up ---- */

/* Starts a reader on buf[0, len) (ending in the lexers' zero padding), read
 * from in when not NULL, named filename (NULL: "<stdin>") in the
 * diagnostics d; arms the hint for input of another level (tp_hint_level).
 * Returns false after reporting an input beyond the 4 GiB offsets of a
 * location. */
bool tp_reader_begin(struct tp_reader *r, const char *buf, size_t len, const struct input *in,
		     const char *filename, struct diag *d, enum tp_level want);

/* Ends the level hint and frees the scratch buffer; reports "cannot parse
 * the input" when the parser failed (rc != 0) with nothing reported.
 * Returns the number of errors. */
int tp_reader_end(struct tp_reader *r, int rc);

/* Defines a reader's two entry points over its
 * parse(types, buf, len, in, filename, d, &errors), which returns the module
 * read (NULL when the reader could not start) and the number of errors it
 * reported: NAME, of a text in memory, and NAME_INPUT, of an input from
 * input_open (support/io.h), both returning MOD * with the contract of
 * module_parse (graph/graph.h): NULL after errors, or when verify is set and
 * VERIFY(m, d) finds some (the module is freed with DESTROY). A macro
 * because the module types differ; both readers define theirs with it. */
#define TP_READER_ENTRY_POINTS(MOD, NAME, NAME_INPUT, PARSE, VERIFY, DESTROY)                                    \
	static MOD *NAME##_checked(struct type_ctx *types, const char *buf, size_t len, const struct input *in,  \
				   const char *filename, struct diag *d, bool verify)                              \
	{                                                                                                          \
		int errors = 0;                                                                                    \
		MOD *m = PARSE(types, buf, len, in, filename, d, &errors);                                         \
		if (m && (errors || (verify && VERIFY(m, d) != 0))) {                                              \
			DESTROY(m);                                                                                \
			return NULL;                                                                               \
		}                                                                                                  \
		return m;                                                                                          \
	}                                                                                                          \
	MOD *NAME(struct type_ctx *types, const char *buf, size_t len, const char *filename, struct diag *d,      \
		  bool verify)                                                                                     \
	{                                                                                                          \
		return NAME##_checked(types, buf, len, NULL, filename, d, verify);                                 \
	}                                                                                                          \
	MOD *NAME_INPUT(struct type_ctx *types, const struct input *in, const char *filename, struct diag *d,    \
			bool verify)                                                                               \
	{                                                                                                          \
		return NAME##_checked(types, in->buf, in->len, in, filename, d, verify);                           \
	}

/* path taken relative to base_dir (NULL: the working directory) unless it
 * is absolute; malloc'd. */
char *tp_path_join(const char *base_dir, const char *path);

/* Lets go of the input pages behind the lexer (tp_drop_behind): call where
 * the spans still in use are the statement's own, a token or two behind;
 * a dropped page touched again is read back from the file. */
static inline void tp_reader_drop(struct tp_reader *r)
{
	tp_drop_behind(r->in, &r->dropped, (size_t)(r->cur - r->buf));
}

/* ---- the lexers ---- */

/* Records token t over [start, end) for messages and recovery, sets *lloc
 * and returns t. bol: t is the first token of its line. A reader whose
 * messages name the token before the lookahead keeps prev_* itself
 * (tp_lex_keep_prev first). */
static inline int tp_lex_tok(struct tp_reader *r, struct loc *lloc, int t, const unsigned char *start,
			     const unsigned char *end, bool bol)
{
	r->last_tok = t;
	r->last_start = (const char *)start;
	r->last_end = (const char *)end;
	r->last_bol = bol || r->after_sync;
	r->last_after_sync = r->after_sync;
	r->after_sync = false;
	r->cur = (const char *)end;
	if (t == TP_TOK_ERROR)
		r->sync_pending = true;
	*lloc = loc_make(r->file, (uint32_t)((const char *)start - r->buf));
	return t;
}

/* Keeps the lookahead as the token before the next one (prev_*). */
static inline void tp_lex_keep_prev(struct tp_reader *r)
{
	r->prev_tok = r->last_tok;
	r->prev_start = r->last_start;
	r->prev_end = r->last_end;
}

/* Reports fmt (with one string argument) at `at` and returns the error
 * token over [tok, cur). */
int tp_lex_error(struct tp_reader *r, struct loc *lloc, const unsigned char *tok, const unsigned char *cur,
		 const unsigned char *at, const char *fmt, const char *arg);

/* Where a statement may start again after an error: a line for which
 * starts(r, c) holds, c its first non-blank character. */
typedef bool tp_line_starts(const struct tp_reader *r, const char *c);

/* Error recovery (tp_lex_sync's slow path). */
bool tp_lex_resync(struct tp_reader *r, struct loc *lloc, tp_line_starts *starts);

/* Error recovery, first thing in a lexer call: after an error, moves to the
 * next line a statement may start on (or stays at the offending token when
 * it starts a line) and returns true with *lloc set: the lexer returns its
 * SYNC token. Also stops at the end once the diagnostics have stopped.
 * Inline: one test per token when nothing went wrong. */
static inline bool tp_lex_sync(struct tp_reader *r, struct loc *lloc, tp_line_starts *starts)
{
	if (!r->sync_pending && !r->d->stopped)
		return false;
	return tp_lex_resync(r, lloc, starts);
}

/* ---- messages ---- */

/* Reports an error at loc and counts it. */
void tp_error(struct tp_reader *r, struct loc loc, const char *fmt, ...) GLOW_PRINTF(3, 4);

/* The location of byte c of the input. */
static inline struct loc tp_loc_at(const struct tp_reader *r, const char *c)
{
	return loc_make(r->file, (uint32_t)(c - r->buf));
}

/* What a token is, for a syntax error's "unexpected ...". */
enum tp_tok_class { TP_TC_END, TP_TC_IDENT, TP_TC_NAME, TP_TC_NUMBER, TP_TC_TYPE, TP_TC_STRING, TP_TC_OTHER };

/* "identifier 'x'", "name '%a'", "number '1'", "type 't'", "string",
 * "end of file" or the token itself, for the text [s, e). Returns buf or a
 * constant. */
const char *tp_tok_describe(enum tp_tok_class c, const char *s, const char *e, char *buf, size_t size);

/* A row of a reader's token classes: bison's token number tok is a c. */
struct tp_tok_class_row {
	int tok;
	enum tp_tok_class c;
};

/* The lookahead of r (its text up to e, which a reader may cut short),
 * described as tp_tok_describe says by its class among the n rows
 * (TP_TC_OTHER when it has none): a syntax error's "unexpected ...". */
const char *tp_describe_lookahead(const struct tp_reader *r, const struct tp_tok_class_row *rows, size_t n,
				  const char *e, char *buf, size_t size);

/* A syntax error at loc with bison's expected tokens: "unexpected LA,
 * expected A or B" (la: the lookahead as tp_tok_describe says it); when
 * after is not NULL and one token was expected, "expected A after AFTER"
 * right after the token before when the lookahead starts a line. Reported
 * once per offset: a token that failed at a line start fails again after
 * recovery resumes there. */
void tp_syntax_error(struct tp_reader *r, struct loc loc, const char *const *expected, int nexp, const char *la,
		     const char *after);

/* ---- names ---- */

/* The text of a span, escapes decoded, NUL terminated, in the scratch
 * buffer (valid until its next use). */
static inline const char *tp_span_cstr(struct tp_reader *r, const struct tp_span *s)
{
	return tp_unescape(&r->sb, &r->sbcap, s->s, s->len, s->esc);
}

/* A lookup key for a span: the source text itself when it has no escapes. */
static inline const char *tp_span_key(struct tp_reader *r, const struct tp_span *s, size_t *len)
{
	return tp_key(&r->sb, &r->sbcap, s->s, s->len, s->esc, len);
}

/* A name as written, for messages: the sigil, then the source text. */
static inline const char *tp_span_name(const struct tp_span *s, char sigil, char *buf, size_t size)
{
	return tp_name_text(s->s, s->len, s->esc, sigil, buf, size);
}

/* A direct-mapped cache of recently defined or used names in front of a
 * reader's name table (operands mostly name values defined a few lines up:
 * a hit saves a cache miss into a table of a million names). An entry
 * keeps the address of its value's name field, so a value renamed since
 * is compared under its current name. The table has a power-of-two size n
 * and is cleared with memset. */
struct tp_recent {
	uint64_t hash;
	const char *const *name; /* &value->name */
	void *v;
};

/* The value cached under the name [k, k + len) hashed to h, NULL if none. */
static inline void *tp_recent_get(const struct tp_recent *tab, size_t n, const char *k, size_t len, uint64_t h)
{
	const struct tp_recent *e = &tab[h & (n - 1)];
	if (e->v && e->hash == h && strncmp(*e->name, k, len) == 0 && (*e->name)[len] == 0)
		return e->v;
	return NULL;
}

/* Caches v, whose name field is *name, under the hash h of its name. */
static inline void tp_recent_put(struct tp_recent *tab, size_t n, uint64_t h, const char *const *name, void *v)
{
	struct tp_recent *e = &tab[h & (n - 1)];
	e->hash = h;
	e->name = name;
	e->v = v;
}

/* Adds the name to the poison set (its key copied into arena a). */
void tp_poison(struct tp_reader *r, struct strmap *set, struct arena *a, const struct tp_span *name);

/* The name is in the poison set. */
bool tp_poisoned(struct tp_reader *r, const struct strmap *set, const struct tp_span *name);

/* ---- weights ---- */

/* Checks an initializer against the type t of its weight, reporting at the
 * offending token: dense data is decoded into arena a (*data; NULL for an
 * empty type), a file's path (*path, malloc'd, relative to base_dir unless
 * absolute) must name a file holding the payload at its offset. Returns
 * false after reporting; *path is then NULL. */
bool tp_init_check(struct tp_reader *r, const struct tp_init *init, const struct type *t, const char *base_dir,
		   struct arena *a, uint8_t **data, char **path);

#endif
