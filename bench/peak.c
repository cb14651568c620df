/* peak.c - this core's single-precision FMA peak, for bench/c-models.sh's
 * "fraction of peak" column. Twelve independent chains of 16-float vector
 * multiply-adds (GCC/Clang vector extension; built with -O2 -march=native
 * -ffp-contract=fast, so a * b + c is one FMA where the target has one, and
 * the compiler splits the vectors to the target's width), long enough to
 * hide the FMA latency on every current x86 and Arm core. Prints
 * "peak_gflops X": the best of five timed runs by the wall clock, then
 * "peak_gflops_cpu X": the best by processor time (this process's
 * CLOCK_PROCESS_CPUTIME_ID), the figure to set beside other processor-time
 * rates on a machine that other work shares (bench/train.sh): time-slicing
 * leaves it alone, where it lowers the wall-clock one. */
#include <stdio.h>
#include <time.h>

typedef float vf __attribute__((vector_size(64)));

enum { CHAINS = 12 }; /* independent multiply-add chains */

static double now(clockid_t id)
{
	struct timespec t;
	clock_gettime(id, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

int main(void)
{
	volatile long iters = 50000000;
	const vf zero = {0}, b = zero + 1.0000001f, c = zero + 1e-7f;
	double best = 0, best_cpu = 0, sink = 0;
	for (int run = 0; run < 5; run++) {
		/* the chains live in registers: the loops over them are unrolled */
		vf a[CHAINS];
#pragma GCC unroll 12
		for (int j = 0; j < CHAINS; j++)
			a[j] = zero + (float)j;
		long n = iters;
		double t0 = now(CLOCK_MONOTONIC), c0 = now(CLOCK_PROCESS_CPUTIME_ID);
		for (long k = 0; k < n; k++) {
#pragma GCC unroll 12
			for (int j = 0; j < CHAINS; j++)
				a[j] = a[j] * b + c;
		}
		double s = now(CLOCK_MONOTONIC) - t0, cs = now(CLOCK_PROCESS_CPUTIME_ID) - c0;
		vf r = a[0];
#pragma GCC unroll 12
		for (int j = 1; j < CHAINS; j++)
			r += a[j];
		sink += r[0];
		double g = (double)n * CHAINS * 16 * 2 / s / 1e9;
		if (g > best)
			best = g;
		double gc = (double)n * CHAINS * 16 * 2 / cs / 1e9;
		if (gc > best_cpu)
			best_cpu = gc;
	}
	printf("peak_gflops %.1f\npeak_gflops_cpu %.1f\n", best, best_cpu);
	return sink == 12345.0 ? 1 : 0;
}
