/* reducemean.c - turn a spatial ReduceMean into an AvgPool.
 *
 * BatchedReduceMean(x N x H x W x C) {axes = [1, 2]} (the NHWC global
 * average, as ONNX's ReduceMean over the spatial axes becomes once
 * sink-transposes has moved the layout Transposes) is
 *   Reshape(AvgPool(x) {kernels = [H, W]} : N x 1 x 1 x C) : N x C
 * A backend has a pooling kernel for this, and the AvgPool stays in the NHWC
 * world of the convolutions around it. The ONNX importer already gives
 * GlobalAveragePool as an AvgPool; this catches ReduceMean.
 *
 * Numerics: both divide the sum of the H*W values by H*W; the order of the
 * summation may differ, so the results agree within float rounding.
 * Float kinds only. Requires: a verified function. Preserves: result types.
 */
#include "passes/pass.h"
#include "passes/passutil.h"

bool reduce_mean_to_avgpool_run(struct func *f, struct pass_ctx *ctx)
{
	uint64_t done = 0;
	func_for_each_safe(f, n, next) {
		if (n->kind != NK_BatchedReduceMean || node_has_pred(n))
			continue;
		const struct type *in = op_type(n, 0);
		unsigned c;
		const int64_t *axes = node_ints(n, AN_axes, &c);
		if (in->rank != 4 || !elem_is_float((enum elem_kind)in->elem) || c != 2)
			continue;
		if (!((axes[0] == 1 && axes[1] == 2) || (axes[0] == 2 && axes[1] == 1)))
			continue;
		if (in->dims[1] == 0 || in->dims[2] == 0)
			continue;
		uint64_t dims[4] = {in->dims[0], 1, 1, in->dims[3]};
		const struct type *pt = type_with_dims(f->mod->types, node_type(n), dims, 4);
		struct value x = op_val(n, 0);
		struct node *pool = node_create1(f, NK_AvgPool, n->name, &x, 1, pt, n, n->loc);
		int64_t k[2] = {(int64_t)in->dims[1], (int64_t)in->dims[2]};
		node_set_ints(f->mod, pool, AN_kernels, k, 2);
		struct node *r = pu_new_reshape(f, node_val(pool, 0), node_type(n), n, n->name);
		pu_replace(f, n, node_val(r, 0));
		done++;
	}
	pass_stat(ctx, "Number of ReduceMeans made AvgPools", done);
	return done != 0;
}
