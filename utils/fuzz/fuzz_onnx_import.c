/* fuzz_onnx_import.c - libFuzzer target for the ONNX importer.
 *
 * Every input (arbitrary bytes: truncated, corrupted or hostile protobuf)
 * must either be rejected with a diagnostic or import into a module that
 * verifies and prints. Crashes, leaks, sanitizer reports and a module that
 * fails the verifier after a successful import are findings.
 *
 * Build: cmake -DGLOW_FUZZ=ON -DCMAKE_C_COMPILER=clang ...; make fuzz-onnx-import
 * Run:   utils/fuzz/run-fuzzers.sh (seeds: the model-zoo and node-test models)
 */
#include "graph/graph.h"
#include "import/onnx/onnx.h"
#include "support/io.h"
#include "support/types.h"

#include <stdio.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	FILE *sink = fopen("/dev/null", "w");
	if (!sink)
		abort();
	struct type_ctx types;
	type_ctx_init(&types);
	struct diag d;
	diag_init(&d, "fuzz");
	d.out = sink;
	struct onnx_import_opts opts = {0};
	/* a fixed binding so models with symbolic dims get further */
	struct onnx_dim_binding dims[] = {{"N", 1}, {"batch", 1}, {"batch_size", 1}};
	opts.dims = dims;
	opts.ndims = sizeof dims / sizeof dims[0];
	/* computed constants (folds, sampling tables) up to 4 MiB, not the
	 * default 256: each is correct work linear in its size, but an input
	 * of a few hundred bytes can ask for the whole budget, and building
	 * and printing that module in an instrumented build takes longer than
	 * the run's time limit per input; the budget's error paths are what
	 * the fuzzer should reach */
	opts.max_generated_bytes = (uint64_t)4 << 20;
	struct module *m = onnx_import(&types, data, size, "/nonexistent/fuzz.onnx", &opts, &d);
	if (m) {
		if (module_verify(m, &d) != 0)
			abort(); /* the importer must only build valid IR */
		struct ostream o;
		ostream_mem(&o);
		module_print(&o, m);
		ostream_abort(&o);
		module_destroy(m);
	}
	diag_free(&d);
	type_ctx_free(&types);
	fclose(sink);
	return 0;
}
