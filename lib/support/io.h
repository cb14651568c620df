/* io.h - whole-file input, buffered output written whole or not at all,
 * hex and number formatting shared by the IR printers. */
#ifndef GLOW_SUPPORT_IO_H
#define GLOW_SUPPORT_IO_H

#include "diag.h"
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Reads a file ("-" or NULL: standard input) into a malloc'd buffer with
 * 16 zero bytes after the data (a lexer sentinel). Reports and returns -1 on
 * failure. */
int read_input(const char *path, char **buf, size_t *len, struct diag *d);

/* A whole input as read_input gives it (len bytes, then at least 16 zero
 * bytes), but a regular file is mapped rather than copied: nothing is read
 * up front, and a reader may let go of the pages it has passed
 * (input_drop). Other inputs (standard input, pipes, empty files) are read
 * into a malloc'd buffer. The file must not shrink while it is open (as with
 * any mapped file, touching a page past its new end would fault). */
struct input {
	const char *buf;
	size_t len;
	void *map;     /* the mapping, NULL when buf is malloc'd */
	size_t maplen;
};
int input_open(struct input *in, const char *path, struct diag *d);
void input_close(struct input *in);
/* The pages of [buf + from, buf + to) leave memory (the one holding
 * buf + from included, the one holding buf + to not); a mapped
 * file's pages are read again from the file when touched later (a
 * diagnostic quoting a source line), so the contents never change. Does
 * nothing for a malloc'd buffer. */
void input_drop(const struct input *in, size_t from, size_t to);

/* Output stream. To a file: written to a temporary file beside it, renamed over
 * the target by ostream_commit (so a failed run leaves no partial output);
 * a target that exists and is not a regular file (/dev/null, a pipe) is
 * written in place.
 * To stdout for "-" or NULL. To memory with ostream_mem (buf holds the text,
 * NUL-terminated after ostream_commit or ostream_cstr).
 * SIGXFSZ is ignored from the first ostream_open on: a write past the
 * file-size limit fails with EFBIG and ostream_commit reports "cannot write
 * 'X': File too large". A hidden test hook, the environment variable
 * GLOW_TEST_RAISE_WHILE_WRITING=N, raises signal N once the first bytes are
 * in a temporary file (test/tools/signals-*.test). */
struct ostream {
	FILE *f;
	char *buf;
	size_t len, cap;
	char *path, *tmp;
	int to_mem, err;
	int direct; /* a non-regular file (device, pipe) opened in place */
	int cleanup; /* support/cleanup.h handle of tmp (removed on a signal) */
	int raise;   /* test hook (io.c): signal to raise after the first write */
};

int ostream_open(struct ostream *o, const char *path, struct diag *d);
void ostream_mem(struct ostream *o);
/* flushes and, for files, renames into place; returns 0 on success */
int ostream_commit(struct ostream *o, struct diag *d);
/* discards everything (removes the temporary file) */
void ostream_abort(struct ostream *o);
/* memory streams: the text so far, NUL-terminated; caller frees with ostream_abort */
const char *ostream_cstr(struct ostream *o);

void os_flush(struct ostream *o);
void os_write(struct ostream *o, const void *p, size_t n);
void os_puts(struct ostream *o, const char *s);
void os_printf(struct ostream *o, const char *fmt, ...) GLOW_PRINTF(2, 3);
static inline void os_putc(struct ostream *o, char c)
{
	if (GLOW_UNLIKELY(o->len == o->cap))
		os_write(o, &c, 1);
	else
		o->buf[o->len++] = c;
}
void os_u64(struct ostream *o, uint64_t v);
void os_i64(struct ostream *o, int64_t v);
/* shortest text that reads back as the same float / double ("nan", "inf", "-inf") */
void os_float(struct ostream *o, float v);
void os_double(struct ostream *o, double v);
/* lower-case hex of n bytes, no prefix */
void os_hex(struct ostream *o, const void *p, size_t n);
/* "[a, b, c]" of n integers / shortest-round-trip doubles (attribute lists) */
void os_i64_list(struct ostream *o, const int64_t *v, size_t n);
void os_double_list(struct ostream *o, const double *v, size_t n);
/* `"..."` with the escapes of both IR texts: \\ \" \n \t and \XX (two
 * lower-case hex digits) for the other bytes below 0x20 and 0x7f; other
 * bytes (UTF-8) go out as they are. For quoted names and string literals. */
void os_quoted(struct ostream *o, const char *s, size_t len);

/* The directory part of a path, with its trailing '/' ("a/b.glow" -> "a/"),
 * malloc'd; NULL for a path without one and for "-" or NULL (standard
 * streams): the working directory. */
char *path_dir(const char *path);

/* A relative file name as written in an IR text read from from_dir, as it
 * must be written in a text in to_dir (either NULL: the working directory;
 * both as path_dir gives them). Unchanged (a copy) when it is absolute or
 * both directories are the same one; otherwise the relative path from to_dir
 * to the file, through the real paths of both (symbolic links resolved), so
 * the file must exist. malloc'd; NULL with errno set when a path cannot be
 * resolved. */
char *path_rebase(const char *file, const char *from_dir, const char *to_dir);

int format_float(char *buf, size_t size, float v);   /* shortest round-trip */
int format_double(char *buf, size_t size, double v); /* shortest round-trip */

#endif
