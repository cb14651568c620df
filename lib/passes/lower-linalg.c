/* lower-linalg.c - lowering rules for linear algebra (lowering.h).
 *
 *   FullyConnected(x, W, b)  -> BatchedAdd(MatMul(x, W), b)
 *   Gemm(A, B, C)            -> MatMul(A', B') [* Splat alpha] + C'
 *       A' = Transpose(A) when trans_a (B' likewise); C' is C itself
 *       through BatchedAdd when C is a vector of N and beta is 1, else
 *       Broadcast(C [* Splat beta]) to M x N and Add
 *   Convolution {group = g > 1} -> per group i: Convolution(Slice of the
 *       input's channels, Slice of the filter's output channels, Slice of
 *       the bias) {group = 1}, then Concat along the channels
 * Depthwise convolutions (one input channel per group) are kept: one
 * Convolution per channel is never what a backend wants.
 *
 * Numerics: the FullyConnected kernel starts its accumulation from the
 * bias, MatMul + BatchedAdd adds the bias to the finished sum; Gemm rounds
 * the product, the scaled terms and the sum separately where the kernel
 * rounds once. Both agree within float rounding. The grouped convolution
 * computes every output from the same products in the same order.
 */
#include "passes/lowering.h"
#include "passes/passutil.h"

#include <stdlib.h>

/* FullyConnected (Lowering.def): always applies. */
bool lower_fc(struct func *f, struct node *n)
{
	const struct type *t = node_type(n);
	struct value ops[2] = {op_val(n, 0), op_val(n, 1)};
	struct node *mm = lw_node(f, NK_MatMul, ops, 2, t, n, "matmul");
	struct value aops[2] = {node_val(mm, 0), op_val(n, 2)};
	struct node *add = lw_node(f, NK_BatchedAdd, aops, 2, t, n, "bias");
	lw_replace(f, n, node_val(add, 0));
	return true;
}

static struct value transposed(struct func *f, struct value v, struct node *n, const char *suffix)
{
	static const int64_t swap[2] = {1, 0};
	char buf[64];
	return node_val(pu_new_transpose(f, v, swap, n, lw_name(buf, n, suffix)), 0);
}

/* Gemm (Lowering.def): always applies. */
bool lower_gemm(struct func *f, struct node *n)
{
	const struct type *t = node_type(n), *ct = op_type(n, 2);
	double alpha = node_float(n, AN_alpha), beta = node_float(n, AN_beta);
	struct value a = op_val(n, 0), b = op_val(n, 1), c = op_val(n, 2);
	if (node_int(n, AN_trans_a))
		a = transposed(f, a, n, "a");
	if (node_int(n, AN_trans_b))
		b = transposed(f, b, n, "b");
	struct value ops[2] = {a, b};
	struct value p = node_val(lw_node(f, NK_MatMul, ops, 2, t, n, "matmul"), 0);
	if (alpha != 1)
		p = lw_bin_splat(f, NK_Mul, p, alpha, n, "alpha");
	if (beta == 1 && ct->rank == 1 && ct->dims[0] == t->dims[1]) {
		struct value aops[2] = {p, c};
		lw_replace(f, n, node_val(lw_node(f, NK_BatchedAdd, aops, 2, t, n, "c"), 0));
		return true;
	}
	if (beta != 1)
		c = lw_bin_splat(f, NK_Mul, c, beta, n, "beta");
	c = lw_broadcast(f, c, t, ct->rank == 1 ? 1 : 0, n, "cb");
	lw_replace(f, n, lw_bin(f, NK_Add, p, c, n, "sum"));
	return true;
}

static struct value slice(struct func *f, struct value v, const int64_t *start, const uint64_t *dims,
			  struct node *n, const char *suffix)
{
	const struct type *t = val_type(v);
	const struct type *st = type_with_dims(f->mod->types, t, dims, t->rank);
	struct node *s = lw_node(f, NK_Slice, &v, 1, st, n, suffix);
	node_set_ints(f->mod, s, AN_start, start, t->rank);
	return node_val(s, 0);
}

/* Grouped Convolution (Lowering.def, LW_GROUPED): always applies. */
bool lower_group_conv(struct func *f, struct node *n)
{
	struct module *m = f->mod;
	const struct type *t = node_type(n), *in = op_type(n, 0), *ft = op_type(n, 1);
	uint64_t g = (uint64_t)node_int(n, AN_group);
	uint64_t icg = in->dims[3] / g, ocg = ft->dims[0] / g;
	struct value *parts = xmalloc(g * sizeof *parts);
	uint64_t ot_dims[4] = {t->dims[0], t->dims[1], t->dims[2], ocg};
	const struct type *ot = type_with_dims(m->types, t, ot_dims, 4);
	for (uint64_t i = 0; i < g; i++) {
		int64_t xs[4] = {0, 0, 0, (int64_t)(i * icg)}, fs[4] = {(int64_t)(i * ocg), 0, 0, 0};
		int64_t bs[1] = {(int64_t)(i * ocg)};
		uint64_t xd[4] = {in->dims[0], in->dims[1], in->dims[2], icg};
		uint64_t fd[4] = {ocg, ft->dims[1], ft->dims[2], ft->dims[3]};
		uint64_t bd[1] = {ocg};
		struct value ops[3] = {slice(f, op_val(n, 0), xs, xd, n, "in"), slice(f, op_val(n, 1), fs, fd, n, "filter"),
				       slice(f, op_val(n, 2), bs, bd, n, "bias")};
		struct node *c = lw_node(f, NK_Convolution, ops, 3, ot, n, "group");
		node_copy_attrs(m, c, n);
		node_set_int(m, c, AN_group, 1);
		parts[i] = node_val(c, 0);
	}
	struct node *cat = lw_node(f, NK_Concat, parts, (unsigned)g, t, n, "cat");
	node_set_int(m, cat, AN_dim, 3);
	free(parts);
	lw_replace(f, n, node_val(cat, 0));
	return true;
}
