/* ipool.c - the interpreter's thread pool: the C bundles' pool
 * (backends/c/kernels/cb_thread.h, compiled here once more as one static
 * pool of this process) behind the interpreter's interface in kern.h.
 * Kernels split an instruction into parts that write disjoint outputs
 * (kgemm by rows or by column panels, convolution's patch rows, pooling by
 * output rows; kpar_ranges: the elementwise kernels, reductions,
 * normalizations and data movement, docs/Backends.md "Threads"), so
 * results are bitwise the same for every thread count.
 */
#define _GNU_SOURCE 1
#include "backends/c/kernels/cb_thread.h"
#include "backends/interpreter/kern.h"

int interp_set_threads(int n)
{
	return cb_pool_set(n);
}

int kpar_parts(double work, size_t units)
{
	return cb_par_parts(work, units);
}

size_t kpar_first(int i, int nparts, size_t units)
{
	return cb_par_first(i, nparts, units);
}

struct kpar_job {
	void (*fn)(const void *, int);
	const void *ctx;
};

static void kpar_part(const void *ctx, int part, float *scratch)
{
	const struct kpar_job *j = ctx;
	(void)scratch; /* the interpreter's kernels allocate their own */
	j->fn(j->ctx, part);
}

void kpar(void (*fn)(const void *ctx, int part), const void *ctx, int nparts)
{
	struct kpar_job j = {fn, ctx};
	cb_par(kpar_part, &j, nparts, NULL);
}

/* The least elements worth a part of their own in the interpreter's
 * element-access kernels (ld_f/st_f per value: several times the work of
 * a bundle's multiply-add, so fewer than CB_PAR_MIN_WORK). Measured
 * (bench/threads-kernels.sh sweep): two parts of the cheapest kernel, a
 * float add, break even here; every other kernel does more an element. */
#define KPAR_MIN_ELEMS 4096.0

/* kern.h: cb_par_ranges with the interpreter's element weight */
void kpar_ranges(void (*fn)(const void *ctx, size_t first, size_t end), const void *ctx, size_t units, double elems)
{
	cb_par_ranges(fn, ctx, units, elems * (CB_PAR_MIN_WORK / KPAR_MIN_ELEMS));
}

/* kern.h: the pool's thread count (the default started on first use) */
int kpar_threads(void)
{
	return cb_pool_threads();
}
