/* fuzz_dataset.c - libFuzzer target for the data set readers of glow-run's
 * training run (lib/dataset): IDX files and .npy batches, parsed from
 * memory by dataset_parse (the path dataset_load takes after gzread).
 *
 * Every input (arbitrary bytes: truncated headers, dimensions beyond the
 * data, products past 64 bits, unknown element types) must be rejected
 * with a diagnostic or parse into a data set whose sizes match its bytes;
 * a parsed set is then converted into float and integer batches as the
 * training run does, which reads every element. Crashes, leaks and
 * sanitizer reports are findings.
 *
 * Build: cmake -DGLOW_FUZZ=ON -DCMAKE_C_COMPILER=clang ...; make fuzz-dataset
 * Run:   utils/fuzz/run-fuzzers.sh (seeds: the IDX and .npy files of
 *        test/dataset/Inputs/corpus)
 */
#include "dataset/dataset.h"
#include "support/types.h"

#include <stdio.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A batch of up to four examples of ds into a placeholder of kind k. */
static void convert(struct type_ctx *types, const struct dataset *ds, enum elem_kind k, struct diag *d)
{
	if (ds->example_elems > (1u << 20))
		return; /* the batch buffer below would be the fuzzer's memory limit, not a finding */
	uint64_t dims[2] = {4, ds->example_elems ? ds->example_elems : 1};
	const struct type *ty = type_get(types, k, dims, 2);
	if (dataset_check(ds, "x", ty, d) != 0)
		return;
	uint64_t idx[4];
	size_t n = ds->count < 4 ? (size_t)ds->count : 4;
	for (size_t i = 0; i < n; i++)
		idx[i] = ds->count - 1 - i;
	void *buf = malloc((size_t)type_bytes(ty));
	if (!buf)
		abort();
	dataset_gather(ds, ty, idx, n, buf);
	free(buf);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	FILE *sink = fopen("/dev/null", "w");
	if (!sink)
		abort();
	struct diag d;
	diag_init(&d, "fuzz");
	d.out = sink;
	struct dataset ds;
	if (dataset_parse("fuzz.idx", data, size, &ds, &d) == 0) {
		if (ds.count == 0 || ds.rank < 1 || ds.dims[0] != ds.count)
			abort(); /* a parsed set always holds examples */
		struct type_ctx types;
		type_ctx_init(&types);
		convert(&types, &ds, EK_FLOAT, &d);
		convert(&types, &ds, EK_I32, &d);
		convert(&types, &ds, EK_INDEX64, &d);
		type_ctx_free(&types);
		dataset_free(&ds);
	}
	diag_free(&d);
	fclose(sink);
	return 0;
}
