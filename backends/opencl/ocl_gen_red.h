/* ocl_gen_red.h - the OpenCL backend's reductions, arg-reductions, batched
 * matrix products (ocl_gen_red.c; OclKernels.def's rows
 * "reductions, argmax, batchmatmul (ocl2)").
 */
#ifndef GLOW_BACKENDS_OPENCL_OCL_GEN_RED_H
#define GLOW_BACKENDS_OPENCL_OCL_GEN_RED_H

#include "backends/opencl/ocl.h"

/* OclKernels.def's Arg of ocl_gen_reduce (the five batchedreduce kinds)
 * and ocl_gen_argred (argmax, argmin). */
enum {
	OCL_RED_ADD,
	OCL_RED_MEAN,
	OCL_RED_PROD,
	OCL_RED_MAX,
	OCL_RED_MIN,
	OCL_RED_ARGMAX,
	OCL_RED_ARGMIN,
};

/* The generators: batchedreduce* (arg OCL_RED_ADD .. OCL_RED_MIN),
 * argmax and argmin (OCL_RED_ARGMAX, OCL_RED_ARGMIN), batchmatmul. */
ocl_gen_fn ocl_gen_reduce, ocl_gen_argred, ocl_gen_bmm;
/* Their support tests: a reduction whose source and result are of one
 * kind among float, int32, int64, index32 and index64; an arg-reduction
 * of such a source into an integer or index result; float operands of
 * rank 3. */
ocl_supports_fn ocl_sup_reduce, ocl_sup_argred, ocl_sup_bmm;

/* The graph side of Elems OCL_EL_REDUCE (elems[0] the result, elems[1]
 * the source, one of the kinds above) and OCL_EL_ARG (an integer or index
 * result of such a source). */
bool ocl_red_elems_ok(enum ocl_elems el, const enum elem_kind *elems, unsigned nelems);

#endif
