/* diag.h - LLVM-style diagnostics:
 *   in.glow:12:7: error: message
 *     %x = Relu(%y, %z) : float<4>
 *         ^
 * Locations are (source id, byte offset); line and column are computed on
 * demand. Library code reports here and returns; only tools exit. */
#ifndef GLOW_SUPPORT_DIAG_H
#define GLOW_SUPPORT_DIAG_H

#include "util.h"
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>

struct loc {
	uint32_t file; /* 0: no location */
	uint32_t off;  /* byte offset into the source */
};

#define LOC_NONE ((struct loc){0, 0})
/* A location naming a source as a whole ("in.gir: error: ..."), no line. */
#define LOC_FILE_OFF UINT32_MAX

struct diag_source {
	char *name;
	const char *buf;
	size_t len;
	uint32_t *line_starts; /* computed lazily */
	size_t nlines;
};

enum diag_level { DIAG_ERROR, DIAG_WARNING, DIAG_NOTE };

struct diag {
	struct diag_source *src;
	size_t nsrc, capsrc;
	FILE *out;           /* stderr by default */
	const char *prog;    /* prefix for messages without a location */
	int nerrors, nwarnings;
	int max_errors;      /* 0: unlimited; default 20 */
	int stopped;         /* too many errors: callers should stop */
	const char *hint;    /* diag_hint_first_error: the note, NULL: none */
	struct loc hint_loc;
};

void diag_init(struct diag *d, const char *prog);
void diag_free(struct diag *d);
/* Registers a source buffer (kept, not copied) and returns its id (>= 1). */
uint32_t diag_add_source(struct diag *d, const char *name, const char *buf, size_t len);
const char *diag_source_name(const struct diag *d, uint32_t file);
/* Line and column (1-based) of a location; returns 0 if it has none. */
int diag_line_col(struct diag *d, struct loc loc, unsigned *line, unsigned *col);

void diag_report(struct diag *d, enum diag_level lvl, struct loc loc, const char *fmt, ...) GLOW_PRINTF(4, 5);
void diag_vreport(struct diag *d, enum diag_level lvl, struct loc loc, const char *fmt, va_list ap);
#define diag_error(d, loc, ...) diag_report((d), DIAG_ERROR, (loc), __VA_ARGS__)
#define diag_warning(d, loc, ...) diag_report((d), DIAG_WARNING, (loc), __VA_ARGS__)
#define diag_note(d, loc, ...) diag_report((d), DIAG_NOTE, (loc), __VA_ARGS__)

/* After the next error is reported, the note `text` follows at loc and
 * the diagnostics stop (d->stopped): one error and what to do about it
 * rather than a screen of consequences. For a reader given the wrong kind
 * of input (tp_sniff_level). text is kept, not copied; NULL clears it. */
void diag_hint_first_error(struct diag *d, struct loc loc, const char *text);

static inline struct loc loc_make(uint32_t file, uint32_t off) { struct loc l = {file, off}; return l; }

#endif
