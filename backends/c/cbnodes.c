/* cbnodes.c - the C backend's own node kinds (docs/CBackend.md, "The
 * backend's node"): its transform_post_lowering hook, which makes them.
 *
 * C.ConvAddRelu (Nodes.def): Relu(Add(Convolution(x, w, b), r)), the end
 * of a residual block. The code generator used to find this chain in the
 * instruction stream after scheduling (cgen_conv.c, find_fusion) and fuse
 * it only when the add and the relu came right after the convolution; as
 * one node it is one instruction whatever the schedule, and the
 * convolution's own result, which nothing but the add read, gets no
 * buffer in the memory plan. Only float, with a constant filter and bias
 * (what the packed kernels take with every -gemm choice), and only where
 * the convolution and the add have no other user and no predicate.
 */
#include "backends/c/cbackend.h"
#include "graph/graph.h"

/* Whether n is a float convolution with constant filter and bias, read by
 * one use only and without a predicate: one C.ConvAddRelu can absorb it. */
static bool fusible_conv(struct node *n)
{
	return n->kind == NK_Convolution && !node_has_pred(n) && n->types[0]->elem == EK_FLOAT &&
	       node_num_uses(n, 0) == 1 && as_constant(op_val(n, 1).node) && as_constant(op_val(n, 2).node);
}

int cbackend_post_lowering(struct func *f)
{
	int changed = 0;
	func_for_each_safe(f, n, tmp) {
		if (n->kind != NK_Relu || node_has_pred(n) || n->types[0]->elem != EK_FLOAT)
			continue;
		struct node *add = op_val(n, 0).node;
		if (add->kind != NK_Add || node_has_pred(add) || node_num_uses(add, 0) != 1)
			continue;
		/* the convolution: the add's first operand when it can be,
		 * else its second; the other operand is the residual, of the
		 * result's type (the Add rule allows no broadcast) */
		unsigned ci = fusible_conv(op_val(add, 0).node) ? 0 : 1;
		struct node *conv = op_val(add, ci).node;
		struct value res = op_val(add, 1 - ci);
		if (!fusible_conv(conv) || op_type(add, 1 - ci) != n->types[0] || conv->types[0] != n->types[0])
			continue;
		struct value ops[4] = {op_val(conv, 0), op_val(conv, 1), op_val(conv, 2), res};
		struct node *fused = node_create1(f, NK_C_ConvAddRelu, NULL, ops, 4, n->types[0], n, conv->loc);
		const struct node_desc *cd = node_desc(NK_Convolution);
		for (unsigned i = 0; i < cd->nattrs; i++)
			fused->attrs[i] = conv->attrs[i]; /* the same attributes in the same order */
		node_replace(f, n, fused);
		node_erase(f, add);
		node_erase(f, conv);
		tmp = fused->next; /* n's next, whatever was erased */
		changed = 1;
	}
	return changed;
}
