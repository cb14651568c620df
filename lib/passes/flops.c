/* flops.c - an analysis pass: count nodes and estimate floating-point work.
 *
 * Prints one line per function and one for the module to the pass manager's
 * report stream (stderr):
 *   count-flops: @main: 230 nodes, 7.71e+09 flops
 *   count-flops: module: 230 nodes, 7.71e+09 flops
 * and changes nothing. Used by bench/opt-models.sh to compare a model before
 * and after -O2.
 *
 * The estimate counts a multiply-add as 2 operations:
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

static double window(const struct node *n)
{
	unsigned c;
	const int64_t *k = node_ints(n, "kernels", &c);
	return c == 2 ? (double)k[0] * (double)k[1] : 0;
}

/* The estimated operation count of one node. */
static double node_flops(const struct node *n)
{
	if (n->nres == 0)
		return 0;
	const struct type *r = node_type(n);
	double out = numel_d(r);
	switch (n->kind) {
	case NK_Convolution: {
		const struct type *f = op_type(n, 1);
		return 2 * out * window(n) * (double)f->dims[3] + out;
	}
	case NK_ConvTranspose: {
		const struct type *in = op_type(n, 0), *f = op_type(n, 1);
		double g = (double)node_int(n, "group");
		return 2 * numel_d(in) * window(n) * ((double)f->dims[0] / (g > 0 ? g : 1)) + out;
	}
	case NK_FullyConnected: return 2 * out * (double)op_type(n, 0)->dims[1] + out;
	case NK_MatMul: return 2 * out * (double)op_type(n, 0)->dims[1];
	case NK_BatchMatMul: return 2 * out * (double)op_type(n, 0)->dims[2];
	case NK_Gemm: {
		const struct type *a = op_type(n, 0);
		double k = (double)a->dims[node_int(n, "trans_a") ? 0 : 1];
		return 2 * out * k + 2 * out;
	}
	case NK_MaxPool:
	case NK_AvgPool: return out * window(n);
	case NK_AdaptiveAvgPool: return numel_d(op_type(n, 0));
	case NK_BatchNormalization: return 2 * out;
	case NK_LayerNormalization:
	case NK_InstanceNormalization: return 5 * out;
	case NK_LocalResponseNormalization: return out * (2.0 * (2.0 * (double)node_int(n, "half_window_size") + 1) + 3);
	case NK_SoftMax:
	case NK_LogSoftMax: return 3 * out;
	case NK_BatchedReduceAdd:
	case NK_BatchedReduceMean:
	case NK_BatchedReduceMax:
	case NK_BatchedReduceMin:
	case NK_BatchedReduceProd: return numel_d(op_type(n, 0));
	case NK_Reshape:
	case NK_Transpose:
	case NK_Concat:
	case NK_Slice:
	case NK_InsertTensor:
	case NK_Gather:
	case NK_GatherND:
	case NK_Tile:
	case NK_Broadcast:
	case NK_SpaceToDepth:
	case NK_DepthToSpace:
	case NK_ResizeNearest:
	case NK_Splat:
	case NK_Flip:
	case NK_Pad: return 0;
	default: return out;
	}
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
