/* fuzz_glow_parser.c - libFuzzer target for the graph IR reader: the round
 * trip of fuzz_roundtrip.h on .glow text.
 *
 * Build: cmake -DGLOW_FUZZ=ON -DCMAKE_C_COMPILER=clang ...; make fuzz-glow-parser
 * Run:   utils/fuzz/make-corpus.sh corpus && build/bin/fuzz-glow-parser corpus
 */
#include "fuzz_roundtrip.h"
#include "graph/graph.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void *parse(struct type_ctx *types, const char *buf, size_t len, const char *filename, struct diag *d)
{
	return module_parse(types, buf, len, filename, d, true);
}

static void print(struct ostream *o, void *m) { module_print(o, m); }
static void destroy(void *m) { module_destroy(m); }

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const struct fuzz_ir ir = {"fuzz.glow", parse, print, destroy};
	return fuzz_roundtrip(&ir, data, size);
}
