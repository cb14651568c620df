/* fuzz_gir_parser.c - libFuzzer target for the instruction IR reader.
 *
 * Every input must either be rejected with a diagnostic or parse, verify and
 * print; the printed text must parse again and print identically (the
 * printer's fixed point). Crashes, leaks, sanitizer reports and a failed
 * round trip are findings.
 *
 * Build: cmake -DGLOW_FUZZ=ON -DCMAKE_C_COMPILER=clang ...; make fuzz-gir-parser
 * Run:   mkdir corpus; cp test/ir/roundtrip-[a-z]*.gir corpus; build/bin/fuzz-gir-parser corpus
 */
#include "ir/ir.h"
#include "support/io.h"
#include "support/types.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

enum { PAD = 16 };

/* Parses text (copied with the lexer's zero padding); prints into *out. */
static struct ir_module *parse_print(struct type_ctx *types, const char *text, size_t len, FILE *sink,
				  struct ostream *out)
{
	char *buf = malloc(len + PAD);
	if (!buf)
		abort();
	memcpy(buf, text, len);
	memset(buf + len, 0, PAD);
	struct diag d;
	diag_init(&d, "fuzz");
	d.out = sink;
	struct ir_module *m = ir_module_parse(types, buf, len, "fuzz.gir", &d, true);
	if (m) {
		ostream_mem(out);
		ir_module_print(out, m);
		ostream_cstr(out);
	}
	diag_free(&d);
	free(buf);
	return m;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	FILE *sink = fopen("/dev/null", "w");
	if (!sink)
		abort();
	struct type_ctx types;
	type_ctx_init(&types);
	struct ostream o1, o2;
	struct ir_module *m = parse_print(&types, (const char *)data, size, sink, &o1);
	if (m) {
		struct ir_module *m2 = parse_print(&types, o1.buf, o1.len, stderr, &o2);
		if (!m2) {
			fprintf(stderr, "printed module does not parse again:\n%s\n", o1.buf);
			abort();
		}
		if (o1.len != o2.len || memcmp(o1.buf, o2.buf, o1.len) != 0) {
			fprintf(stderr, "print(parse(print(parse(t)))) differs:\n%s\n----\n%s\n", o1.buf, o2.buf);
			abort();
		}
		ostream_abort(&o2);
		ir_module_destroy(m2);
		ostream_abort(&o1);
		ir_module_destroy(m);
	}
	type_ctx_free(&types);
	fclose(sink);
	return 0;
}
