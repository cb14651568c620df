/* flops.c - an analysis pass: count nodes and estimate floating-point work.
 *
 * Prints one line per function and one for the module to the pass manager's
 * report stream (stderr):
 *   count-flops: @main: 230 nodes, 7.71e+09 flops
 *   count-flops: module: 230 nodes, 7.71e+09 flops
 * and changes nothing. Used by bench/opt-models.sh to compare a model before
 * and after -O2.
 *
 * The estimate (one row per kind in Flops.def) counts a multiply-add as 2
 * operations:
 *   Convolution          2 * N*OH*OW*OC * KH*KW*IC/group + N*OH*OW*OC (bias)
 *   ConvTranspose        2 * N*H*W*IC * KH*KW*OC/group + result (bias)
 *   FullyConnected       2*N*K*M + N*M;  MatMul 2*N*K*M;  BatchMatMul 2*B*N*K*M
 *   Gemm                 2*M*K*N + 2*M*N (alpha, beta * C)
 *   MaxPool, AvgPool     result elements * KH*KW
 *   BatchNormalization   2 per element; Layer/InstanceNormalization 5 per element
 *   LocalResponseNorm.   (2 * window + 3) per element
 *   SoftMax, LogSoftMax  3 per element;  reductions 1 per input element
 *   data movement        0 (Reshape, Transpose, Concat, Slice, Broadcast, Tile, Pad,
 *                          Splat, Gather, Insert, Flip, resizes, depth/space moves, Save)
 *   anything else        1 per result element (elementwise kinds, activations, ...)
 *
 * Requires: a verified module. Preserves: everything.
 */
#include "passes/pass.h"

#include <stdio.h>

static double numel_d(const struct type *t)
{
	double c = 1;
	for (unsigned i = 0; i < t->rank; i++)
		c *= (double)t->dims[i];
	return c;
}

/* KH*KW of windowed node n, 0 without a 2-D window. */
static double window(const struct node *n)
{
	unsigned c;
	const int64_t *k = node_ints(n, AN_kernels, &c);
	return c == 2 ? (double)k[0] * (double)k[1] : 0;
}

/* The number of elements of n's operand 0. */
static double numel_in(const struct node *n) { return numel_d(op_type(n, 0)); }

/* Dimension d of n's operand i. */
static double dim_of(const struct node *n, unsigned i, unsigned d) { return (double)op_type(n, i)->dims[d]; }

/* ConvTranspose: each input element times the window times the output
 * channels of its group, plus the bias. */
static double conv_transpose_flops(const struct node *n, double out)
{
	double g = (double)node_int(n, AN_group);
	return 2 * numel_in(n) * window(n) * (dim_of(n, 1, 0) / (g > 0 ? g : 1)) + out;
}

/* Gemm: the product over K (A's dimension 0 when transposed), alpha and
 * beta * C. */
static double gemm_flops(const struct node *n, double out)
{
	double k = dim_of(n, 0, node_int(n, AN_trans_a) ? 0 : 1);
	return 2 * out * k + 2 * out;
}

/* One estimate function per row of Flops.def. */
#define FLOPS(K, expr)                                                  \
	static double flops_##K(const struct node *n, double out)       \
	{                                                               \
		(void)n;                                                \
		(void)out;                                              \
		return expr;                                            \
	}
#include "passes/Flops.def"
#undef FLOPS

static double (*const flops_rows[NK_COUNT])(const struct node *n, double out) = {
#define FLOPS(K, expr) [NK_##K] = flops_##K,
#include "passes/Flops.def"
#undef FLOPS
};

/* The estimated operation count of one node. */
static double node_flops(const struct node *n)
{
	if (n->nres == 0)
		return 0;
	double out = numel_d(node_type(n));
	return flops_rows[n->kind] ? flops_rows[n->kind](n, out) : out;
}

bool count_flops_run(struct module *m, struct pass_ctx *ctx)
{
	FILE *out = ctx->pm->pm->err ? ctx->pm->pm->err : stderr;
	double total = 0;
	size_t nodes = 0;
	for (size_t i = 0; i < m->nfuncs; i++) {
		struct func *f = m->funcs[i];
		double fl = 0;
		func_for_each(f, n) {
			fl += node_flops(n);
		}
		fprintf(out, "count-flops: @%s: %zu nodes, %.6g flops\n", f->name, f->nnodes, fl);
		total += fl;
		nodes += f->nnodes;
	}
	fprintf(out, "count-flops: module: %zu nodes, %.6g flops\n", nodes, total);
	pass_stat(ctx, "Number of nodes counted", nodes);
	return false;
}
