/* peak.c - this core's single-precision FMA peak, for bench/c-models.sh's
 * "fraction of peak" column. Twelve independent chains of 16-float vector
 * multiply-adds (GCC/Clang vector extension; built with -O2 -march=native
 * -ffp-contract=fast, so a * b + c is one FMA where the target has one, and
 * the compiler splits the vectors to the target's width), long enough to
 * hide the FMA latency on every current x86 and Arm core. Prints
 * "peak_gflops X": the best of five timed runs. */
#include <stdio.h>
#include <time.h>

typedef float vf __attribute__((vector_size(64)));

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

int main(void)
{
	volatile long iters = 50000000;
	const vf zero = {0}, b = zero + 1.0000001f, c = zero + 1e-7f;
	double best = 0, sink = 0;
	for (int run = 0; run < 5; run++) {
		vf a0 = zero, a1 = a0 + 1, a2 = a0 + 2, a3 = a0 + 3, a4 = a0 + 4, a5 = a0 + 5;
		vf a6 = a0 + 6, a7 = a0 + 7, a8 = a0 + 8, a9 = a0 + 9, a10 = a0 + 10, a11 = a0 + 11;
		long n = iters;
		double t0 = now();
		for (long k = 0; k < n; k++) {
			a0 = a0 * b + c;
			a1 = a1 * b + c;
			a2 = a2 * b + c;
			a3 = a3 * b + c;
			a4 = a4 * b + c;
			a5 = a5 * b + c;
			a6 = a6 * b + c;
			a7 = a7 * b + c;
			a8 = a8 * b + c;
			a9 = a9 * b + c;
			a10 = a10 * b + c;
			a11 = a11 * b + c;
		}
		double s = now() - t0;
		vf r = a0 + a1 + a2 + a3 + a4 + a5 + a6 + a7 + a8 + a9 + a10 + a11;
		sink += r[0];
		double g = (double)n * 12 * 16 * 2 / s / 1e9;
		if (g > best)
			best = g;
	}
	printf("peak_gflops %.1f\n", best);
	return sink == 12345.0 ? 1 : 0;
}
