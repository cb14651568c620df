/* diff-linear.c - gradient rules of the differentiate pass (Gradients.def)
 * for the linear and windowed kinds and SoftMax. Convolution,
 * FullyConnected, the matrix products, the pools and LogSoftMax make
 * gradient kinds (ConvolutionGrad, MatMulGrad, ..., whose lowering rules in
 * lower-grad.c give the forward kinds, where the backend wants them
 * lowered) that carry the forward window or axis:
 *   MatMul: dA = G B^T, dB = A^T G (BatchMatMul per batch), one
 *     MatMulGrad (BatchMatMulGrad) for both;
 *   AdaptiveAvgPool: AdaptiveAvgPoolGrad, G spread by the window weights;
 *   LogSoftMax: LogSoftMaxGrad, G - exp(y) * sum(G) over the axis;
 *   BatchedAdd: dBatch = G, dSlice = BatchedReduceAdd(G) over axis 0;
 *   SoftMax: y * (G - sum(G * y)), the sum over the axis, broadcast back.
 */
#include "passes/differentiate.h"
#include "passes/passutil.h"


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

/* AdaptiveAvgPool (Gradients.def): AdaptiveAvgPoolGrad of G, float only
 * (its lowering spreads G by a constant matrix of window weights). */
bool dr_adaptive_avgpool(struct dctx *c, struct node *n, struct value gy)
{
	struct value a = op_val(n, 0);
	if (!elem_is_float((enum elem_kind)val_type(a)->elem))
		return false;
	return dg_to_input(c, n, dg_mk1(c, NK_AdaptiveAvgPoolGrad, &gy, 1, val_type(a), n));
}

/* MatMul and BatchMatMul (Gradients.def): MatMulGrad or BatchMatMulGrad
 * of both operands and G, when either wants a gradient. */
bool dr_matmul(struct dctx *c, struct node *n, struct value gy)
{
	struct value a = op_val(n, 0), b = op_val(n, 1);
	if (!dg_wants_grad(c, a) && !dg_wants_grad(c, b))
		return true;
	struct value ops[3] = {a, b, gy};
	const struct type *t[2] = {val_type(a), val_type(b)};
	struct node *gn = dg_mk(c, n->kind == NK_MatMul ? NK_MatMulGrad : NK_BatchMatMulGrad, ops, 3, t, n);
	dg_add_adj(c, a, node_val(gn, 0));
	dg_add_adj(c, b, node_val(gn, 1));
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
		struct value ops[2] = {y, gy};
		struct value g = dg_mk1(c, NK_LogSoftMaxGrad, ops, 2, val_type(y), n);
		node_set_int(c->m, g.node, AN_axis, (int64_t)axis);
		dg_add_adj(c, a, g);
	}
	return true;
}
