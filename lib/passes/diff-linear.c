/* diff-linear.c - gradient rules of the differentiate pass (Gradients.def)
 * for the linear and windowed kinds and SoftMax. Convolution,
 * FullyConnected and the pools make gradient kinds (ConvolutionGrad, ...,
 * lowered by lower-grad.c) that carry the forward window; the matrix
 * products are products with the transposed other operand:
 *   MatMul: dA = G B^T, dB = A^T G (BatchMatMul per batch);
 *   BatchedAdd: dBatch = G, dSlice = BatchedReduceAdd(G) over axis 0;
 *   SoftMax: y * (G - sum(G * y)), LogSoftMax: G - exp(y) * sum(G), the
 *     sums over the axis, broadcast back;
 *   AdaptiveAvgPool: G spread by a constant matrix of window weights.
 */
#include "passes/differentiate.h"
#include "passes/passutil.h"

#include <stdio.h>
#include <stdlib.h>

/* Copies the window attributes of a Convolution or pool n to its gradient gn. */
static void copy_window(struct dctx *c, struct node *gn, const struct node *n)
{
	static const enum attr_name ints[] = {AN_kernels, AN_strides, AN_pads, AN_dilation};
	for (unsigned i = 0; i < 4; i++)
		if (node_attr_slot(n->kind, ints[i]) >= 0) {
			unsigned len;
			const int64_t *v = node_ints(n, ints[i], &len);
			node_set_ints(c->m, gn, ints[i], v, len);
		}
	if (node_attr_slot(n->kind, AN_group) >= 0)
		node_set_int(c->m, gn, AN_group, node_int(n, AN_group));
	if (node_attr_slot(n->kind, AN_count_include_pads) >= 0)
		node_set_int(c->m, gn, AN_count_include_pads, node_int(n, AN_count_include_pads));
}

/* FullyConnected and Convolution (Gradients.def): FullyConnectedGrad or
 * ConvolutionGrad, with the forward window. */
bool dr_fc_conv(struct dctx *c, struct node *n, struct value gy)
{
	struct value a = op_val(n, 0), b = op_val(n, 1);
	struct value ops[3] = {a, b, gy};
	const struct type *t[3] = {val_type(a), val_type(b), op_type(n, 2)};
	struct node *gn =
		dg_mk(c, n->kind == NK_Convolution ? NK_ConvolutionGrad : NK_FullyConnectedGrad, ops, 3, t, n);
	copy_window(c, gn, n);
	for (unsigned i = 0; i < 3; i++)
		dg_add_adj(c, op_val(n, i), node_val(gn, i));
	return true;
}

/* MaxPool (Gradients.def): MaxPoolGrad of its Argmax and G. */
bool dr_maxpool(struct dctx *c, struct node *n, struct value gy)
{
	struct value a = op_val(n, 0);
	struct value ops[2] = {node_val(n, 1), gy};
	struct value gx = dg_mk1(c, NK_MaxPoolGrad, ops, 2, val_type(a), n);
	copy_window(c, gx.node, n);
	return dg_to_input(c, n, gx);
}

/* AvgPool (Gradients.def): AvgPoolGrad of G. */
bool dr_avgpool(struct dctx *c, struct node *n, struct value gy)
{
	struct value a = op_val(n, 0);
	struct value gx = dg_mk1(c, NK_AvgPoolGrad, &gy, 1, val_type(a), n);
	copy_window(c, gx.node, n);
	return dg_to_input(c, n, gx);
}

/* AdaptiveAvgPool (Gradients.def): G spread by the window weights. */
bool dr_adaptive_avgpool(struct dctx *c, struct node *n, struct value gy)
{
	struct value a = op_val(n, 0);
	/* dX = G spread by the constant matrix A [OH*OW, H*W] of window
	 * weights (1/count where output o's window covers pixel p):
	 * [N, OH, OW, C] -> [N, C, OH*OW] (Transpose, Reshape to 2-D)
	 * -> MatMul A -> [N, C, H, W] -> NHWC */
	const struct type *xt = val_type(a), *gt = val_type(gy);
	if (!elem_is_float((enum elem_kind)xt->elem))
		return false;
	uint64_t nb = xt->dims[0], h = xt->dims[1], w = xt->dims[2], ch = xt->dims[3];
	uint64_t oh = gt->dims[1], ow = gt->dims[2];
	float *mat = calloc(oh * ow * h * w, sizeof *mat);
	if (!mat)
		abort();
	for (uint64_t oy = 0; oy < oh; oy++)
		for (uint64_t ox = 0; ox < ow; ox++) {
			uint64_t y0 = oy * h / oh, y1 = ((oy + 1) * h + oh - 1) / oh;
			uint64_t x0 = ox * w / ow, x1 = ((ox + 1) * w + ow - 1) / ow;
			float inv = 1.0f / (float)((y1 - y0) * (x1 - x0));
			for (uint64_t y = y0; y < y1; y++)
				for (uint64_t x = x0; x < x1; x++)
					mat[(oy * ow + ox) * h * w + y * w + x] = inv;
		}
	uint64_t md[2] = {oh * ow, h * w};
	char name[96];
	snprintf(name, sizeof name, "%.80s.spread", n->name);
	struct constant *k = pu_new_constant(c->m, type_with_dims(c->m->types, xt, md, 2), mat, name);
	free(mat);
	static const int64_t to_nc[4] = {0, 3, 1, 2}, to_nhwc[4] = {0, 2, 3, 1};
	uint64_t g2[2] = {nb * ch, oh * ow}, x4[4] = {nb, ch, h, w};
	struct value g = dg_mk_transpose(c, gy, to_nc, n);
	g = dg_mk1(c, NK_Reshape, &g, 1, type_with_dims(c->m->types, gt, g2, 2), n);
	struct value ops[2] = {g, node_val(&k->n, 0)};
	md[0] = nb * ch;
	g = dg_mk1(c, NK_MatMul, ops, 2, type_with_dims(c->m->types, xt, md, 2), n);
	g = dg_mk1(c, NK_Reshape, &g, 1, type_with_dims(c->m->types, xt, x4, 4), n);
	return dg_to_input(c, n, dg_mk_transpose(c, g, to_nhwc, n));
}

/* MatMul and BatchMatMul (Gradients.def): dA = G B^T, dB = A^T G, with
 * the last two axes transposed. */
bool dr_matmul(struct dctx *c, struct node *n, struct value gy)
{
	static const int64_t swap2[2] = {1, 0}, swap3[3] = {0, 2, 1};
	struct value a = op_val(n, 0), b = op_val(n, 1);
	const int64_t *swap = n->kind == NK_MatMul ? swap2 : swap3;
	if (dg_wants_grad(c, a)) {
		struct value ops[2] = {gy, dg_mk_transpose(c, b, swap, n)};
		dg_add_adj(c, a, dg_mk1(c, n->kind, ops, 2, val_type(a), n));
	}
	if (dg_wants_grad(c, b)) {
		struct value ops[2] = {dg_mk_transpose(c, a, swap, n), gy};
		dg_add_adj(c, b, dg_mk1(c, n->kind, ops, 2, val_type(b), n));
	}
	return true;
}

/* BatchedAdd (Gradients.def): dBatch = G, dSlice = G summed over axis 0. */
bool dr_batched_add(struct dctx *c, struct node *n, struct value gy)
{
	/* BatchedAddGrad(G): dBatch = G, dSlice = G summed over the batch */
	struct value a = op_val(n, 0), b = op_val(n, 1);
	const struct type *t[2] = {val_type(a), val_type(b)};
	struct node *g = dg_mk(c, NK_BatchedAddGrad, &gy, 1, t, n);
	dg_add_adj(c, a, node_val(g, 0));
	dg_add_adj(c, b, node_val(g, 1));
	return true;
}

/* SoftMax and LogSoftMax (Gradients.def), float only. */
bool dr_softmax(struct dctx *c, struct node *n, struct value gy)
{
	struct value a = op_val(n, 0);
	/* SoftMax: y * (gy - sum(gy * y)); LogSoftMax: gy - exp(y) * sum(gy),
	 * the sums over the axis, broadcast back */
	if (!elem_is_float((enum elem_kind)val_type(a)->elem))
		return false;
	unsigned axis = (unsigned)node_int(n, AN_axis);
	struct value y = node_val(n, 0);
	if (n->kind == NK_SoftMax) {
		struct value s = dg_sum_axis(c, dg_mk_bin(c, NK_Mul, gy, y, n), axis, n);
		dg_add_adj(c, a, dg_mk_bin(c, NK_Mul, y, dg_mk_bin(c, NK_Sub, gy, s, n), n));
	} else {
		struct value p = dg_mk1(c, NK_Exp, &y, 1, val_type(y), n);
		struct value ps = dg_mk_bin(c, NK_Mul, p, dg_sum_axis(c, gy, axis, n), n);
		dg_add_adj(c, a, dg_mk_bin(c, NK_Sub, gy, ps, n));
	}
	return true;
}
