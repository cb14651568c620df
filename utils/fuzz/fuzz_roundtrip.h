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
		if (!m2) {
			fprintf(stderr, "printed text does not parse again:\n%s\n", o1.buf);
			abort();
		}
		if (o1.len != o2.len || memcmp(o1.buf, o2.buf, o1.len) != 0) {
			fprintf(stderr, "print(parse(print(parse(t)))) differs:\n%s\n----\n%s\n", o1.buf, o2.buf);
			abort();
		}
		ostream_abort(&o2);
		ir->destroy(m2);
		ostream_abort(&o1);
		ir->destroy(m);
	}
	type_ctx_free(&types);
	fclose(sink);
	return 0;
}

#endif
