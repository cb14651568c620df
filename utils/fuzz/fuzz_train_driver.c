/* fuzz_train_driver.c - libFuzzer target for the data set readers of a
 * training bundle's driver (backends/c/kernels/cb_train_driver.c, copied
 * into NAME_main.c): its own IDX and .npy readers, which a bundle carries
 * instead of lib/dataset so that it depends on libc and libm only.
 *
 * The driver's text is compiled here as its warnings check compiles it
 * (CB_DRIVER_CHECK: a stand-in bundle), its main renamed away. Every input
 * (arbitrary bytes) must be rejected with a message or describe a data set
 * whose elements lie inside the bytes; every element of an accepted set is
 * then read as the driver reads it (td_value, td_int). Crashes and
 * sanitizer reports are findings.
 *
 * Build: cmake -DGLOW_FUZZ=ON -DCMAKE_C_COMPILER=clang ...; make fuzz-train-driver
 * Run:   utils/fuzz/run-fuzzers.sh (seeds: the IDX and .npy files of the tests)
 */
#define CB_DRIVER_CHECK 1
#define main cb_train_driver_main
int cb_train_driver_main(int argc, char **argv);
#include "cb_train_driver.c"
#undef main

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* the reader's own copy of the file, as td_load's drv_slurp gives it */
	struct td_set s;
	memset(&s, 0, sizeof s);
	s.file = "fuzz";
	s.buf = malloc(size ? size : 1);
	if (!s.buf)
		abort();
	memcpy(s.buf, data, size);
	int r = size >= 10 && memcmp(s.buf, "\x93NUMPY", 6) == 0 ? td_npy(&s, size) : td_idx(&s, size);
	if (r == 0) {
		double sum = 0;
		for (uint64_t i = 0; i < s.count * s.per; i++)
			sum += td_value(&s, i) + (double)td_int(&s, i);
		if (sum != sum && s.elem < TD_F32)
			abort(); /* an integer element read as NaN */
	}
	free(s.buf);
	return 0;
}
