/* fuzz_gir_parser.c - libFuzzer target for the instruction IR reader: the
 * round trip of fuzz_roundtrip.h on .gir text.
 *
 * Build: cmake -DGLOW_FUZZ=ON -DCMAKE_C_COMPILER=clang ...; make fuzz-gir-parser
 * Run:   mkdir corpus; cp test/ir/roundtrip-[a-z]*.gir corpus; build/bin/fuzz-gir-parser corpus
 */
#include "fuzz_roundtrip.h"
#include "ir/ir.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void *parse(struct type_ctx *types, const char *buf, size_t len, const char *filename, struct diag *d)
{
	return ir_module_parse(types, buf, len, filename, d, true);
}

static void print(struct ostream *o, void *m) { ir_module_print(o, m); }
static void destroy(void *m) { ir_module_destroy(m); }

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const struct fuzz_ir ir = {"fuzz.gir", parse, print, destroy};
	return fuzz_roundtrip(&ir, data, size);
}
