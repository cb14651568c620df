/* fuzz_roundtrip.h - the check both IR reader fuzz targets make.
 *
 * Every input must either be rejected with a diagnostic or parse, verify and
 * print; the printed text must parse again and print identically (the
 * printer's fixed point). Crashes, leaks, sanitizer reports and a failed
 * round trip are findings. A target describes its IR with three functions
 * and calls fuzz_roundtrip from LLVMFuzzerTestOneInput.
 */
#ifndef GLOW_FUZZ_ROUNDTRIP_H
#define GLOW_FUZZ_ROUNDTRIP_H

#include "support/diag.h"
#include "support/io.h"
#include "support/types.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct fuzz_ir {
	const char *filename; /* names the input in diagnostics */
	/* the reader (buf has the lexer's zero padding); NULL after a diagnostic */
	void *(*parse)(struct type_ctx *types, const char *buf, size_t len, const char *filename, struct diag *d);
	void (*print)(struct ostream *o, void *ir);
	void (*destroy)(void *ir);
};

/* Parses text (copied with the lexer's zero padding); prints into *out. */
static inline void *fuzz_parse_print(const struct fuzz_ir *ir, struct type_ctx *types, const char *text, size_t len,
			      FILE *sink, struct ostream *out)
{
	enum { PAD = 16 };
	char *buf = malloc(len + PAD);
	if (!buf)
		abort();
	memcpy(buf, text, len);
	memset(buf + len, 0, PAD);
	struct diag d;
	diag_init(&d, "fuzz");
	d.out = sink;
	void *m = ir->parse(types, buf, len, ir->filename, &d);
	if (m) {
		ostream_mem(out);
		ir->print(out, m);
		ostream_cstr(out);
	}
	diag_free(&d);
	free(buf);
	return m;
}

/* The round trip's verdict, shared with the targets of other readers
 * (fuzz_profile.c): aborts (a finding) unless the printed text o1 parsed
 * again (reparsed) and printed as o2, the same bytes. what names the text
 * in the message ("text", "profile"). */
static inline void fuzz_expect_fixed_point(bool reparsed, const char *what, const struct ostream *o1,
					   const struct ostream *o2)
{
	if (!reparsed) {
		fprintf(stderr, "printed %s does not parse again:\n%s\n", what, o1->buf);
		abort();
	}
	if (o1->len != o2->len || memcmp(o1->buf, o2->buf, o1->len) != 0) {
		fprintf(stderr, "print(parse(print(parse(t)))) differs:\n%s\n----\n%s\n", o1->buf, o2->buf);
		abort();
	}
}

static inline int fuzz_roundtrip(const struct fuzz_ir *ir, const uint8_t *data, size_t size)
{
	FILE *sink = fopen("/dev/null", "w");
	if (!sink)
		abort();
	struct type_ctx types;
	type_ctx_init(&types);
	struct ostream o1, o2;
	void *m = fuzz_parse_print(ir, &types, (const char *)data, size, sink, &o1);
	if (m) {
		void *m2 = fuzz_parse_print(ir, &types, o1.buf, o1.len, stderr, &o2);
		fuzz_expect_fixed_point(m2 != NULL, "text", &o1, &o2);
		ostream_abort(&o2);
		ir->destroy(m2);
		ostream_abort(&o1);
		ir->destroy(m);
	}
	type_ctx_free(&types);
	fclose(sink);
	return 0;
}

/* Defines a whole target (LLVMFuzzerTestOneInput) for a text IR whose
 * reader is PARSE(types, buf, len, filename, diag, true) and whose printer
 * and destructor are PRINT(ostream, module) and DESTROY(module); FILENAME
 * names the input in diagnostics. A macro because the three are different
 * functions of different module types in each target. */
#define FUZZ_ROUNDTRIP_TARGET(FILENAME, PARSE, PRINT, DESTROY)                                                    \
	int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);                                              \
	static void *fuzz_ir_parse(struct type_ctx *types, const char *buf, size_t len, const char *filename,     \
				   struct diag *d)                                                                 \
	{                                                                                                          \
		return PARSE(types, buf, len, filename, d, true);                                                  \
	}                                                                                                          \
	static void fuzz_ir_print(struct ostream *o, void *m) { PRINT(o, m); }                                     \
	static void fuzz_ir_destroy(void *m) { DESTROY(m); }                                                       \
	int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)                                               \
	{                                                                                                          \
		static const struct fuzz_ir ir = {FILENAME, fuzz_ir_parse, fuzz_ir_print, fuzz_ir_destroy};      \
		return fuzz_roundtrip(&ir, data, size);                                                            \
	}

#endif
