/* fuzz_profile.c - libFuzzer target for the quantization profile reader
 * (lib/quant/profile.c): every input is either rejected with a diagnostic
 * or parses and prints; the printed text must parse again and print
 * identically.
 *
 * Build: cmake -DGLOW_FUZZ=ON -DCMAKE_C_COMPILER=clang ...; make fuzz-profile
 * Run:   utils/fuzz/make-corpus.sh corpus '*.prof'; build/bin/fuzz-profile corpus
 */
#include "fuzz_roundtrip.h"
#include "quant/quant.h"
#include "support/io.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Parses text (a private copy) into p and prints it into *out; false when
 * the reader rejected it. */
static bool parse_print(const char *text, size_t len, FILE *sink, struct qprofile *p, struct ostream *out)
{
	char *buf = malloc(len + 1);
	if (!buf)
		abort();
	memcpy(buf, text, len);
	buf[len] = 0;
	struct diag d;
	diag_init(&d, "fuzz");
	d.out = sink;
	bool ok = qprofile_parse(p, buf, len, "fuzz.prof", &d) == 0;
	if (ok) {
		ostream_mem(out);
		qprofile_print(out, p);
		ostream_cstr(out);
	}
	diag_free(&d);
	free(buf);
	return ok;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	FILE *sink = fopen("/dev/null", "w");
	if (!sink)
		abort();
	struct qprofile p1, p2;
	struct ostream o1, o2;
	if (parse_print((const char *)data, size, sink, &p1, &o1)) {
		fuzz_expect_fixed_point(parse_print(o1.buf, o1.len, stderr, &p2, &o2), "profile", &o1, &o2);
		ostream_abort(&o2);
		qprofile_free(&p2);
		ostream_abort(&o1);
		qprofile_free(&p1);
	}
	fclose(sink);
	return 0;
}
