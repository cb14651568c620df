/* typerules.c - the type rule of every node kind (named in Nodes.def). */
#include "graph/typerules.h"

void tr_adaptive_avgpool(struct verifier *v, const struct node *n)
{
	(void)v;
	(void)n;
}

void tr_arg_reduce(struct verifier *v, const struct node *n)
{
	(void)v;
	(void)n;
}

void tr_arith(struct verifier *v, const struct node *n)
{
	(void)v;
	(void)n;
}

void tr_avgpool(struct verifier *v, const struct node *n)
{
	(void)v;
	(void)n;
}

void tr_batch_matmul(struct verifier *v, const struct node *n)
{
	(void)v;
	(void)n;
}

void tr_batched_add(struct verifier *v, const struct node *n)
{
	(void)v;
	(void)n;
}

void tr_batchnorm(struct verifier *v, const struct node *n)
{
	(void)v;
	(void)n;
}

void tr_broadcast(struct verifier *v, const struct node *n)
{
	(void)v;
	(void)n;
}

void tr_clip(struct verifier *v, const struct node *n)
{
	(void)v;
	(void)n;
}

void tr_compare(struct verifier *v, const struct node *n)
{
	(void)v;
	(void)n;
}

void tr_concat(struct verifier *v, const struct node *n)
{
	(void)v;
	(void)n;
}

void tr_conv_transpose(struct verifier *v, const struct node *n)
{
	(void)v;
	(void)n;
}

void tr_convert(struct verifier *v, const struct node *n)
{
	(void)v;
	(void)n;
}

void tr_convolution(struct verifier *v, const struct node *n)
{
	(void)v;
	(void)n;
}

void tr_cross_entropy(struct verifier *v, const struct node *n)
{
	(void)v;
	(void)n;
}

void tr_cumsum(struct verifier *v, const struct node *n)
{
	(void)v;
	(void)n;
}

void tr_depth_to_space(struct verifier *v, const struct node *n)
{
	(void)v;
	(void)n;
}

void tr_dequantize(struct verifier *v, const struct node *n)
{
	(void)v;
	(void)n;
}

void tr_flip(struct verifier *v, const struct node *n)
{
	(void)v;
	(void)n;
}

void tr_fully_connected(struct verifier *v, const struct node *n)
{
	(void)v;
	(void)n;
}

void tr_gather(struct verifier *v, const struct node *n)
{
	(void)v;
	(void)n;
}

void tr_gather_nd(struct verifier *v, const struct node *n)
{
	(void)v;
	(void)n;
}

void tr_gemm(struct verifier *v, const struct node *n)
{
	(void)v;
	(void)n;
}

void tr_insert_tensor(struct verifier *v, const struct node *n)
{
	(void)v;
	(void)n;
}

void tr_instancenorm(struct verifier *v, const struct node *n)
{
	(void)v;
	(void)n;
}

void tr_isnan(struct verifier *v, const struct node *n)
{
	(void)v;
	(void)n;
}

void tr_layernorm(struct verifier *v, const struct node *n)
{
	(void)v;
	(void)n;
}

void tr_logical(struct verifier *v, const struct node *n)
{
	(void)v;
	(void)n;
}

void tr_lrn(struct verifier *v, const struct node *n)
{
	(void)v;
	(void)n;
}

void tr_matmul(struct verifier *v, const struct node *n)
{
	(void)v;
	(void)n;
}

void tr_maxpool(struct verifier *v, const struct node *n)
{
	(void)v;
	(void)n;
}

void tr_pad(struct verifier *v, const struct node *n)
{
	(void)v;
	(void)n;
}

void tr_quantization_profile(struct verifier *v, const struct node *n)
{
	(void)v;
	(void)n;
}

void tr_quantize(struct verifier *v, const struct node *n)
{
	(void)v;
	(void)n;
}

void tr_reduce(struct verifier *v, const struct node *n)
{
	(void)v;
	(void)n;
}

void tr_regression(struct verifier *v, const struct node *n)
{
	(void)v;
	(void)n;
}

void tr_rescale(struct verifier *v, const struct node *n)
{
	(void)v;
	(void)n;
}

void tr_reshape(struct verifier *v, const struct node *n)
{
	(void)v;
	(void)n;
}

void tr_resize(struct verifier *v, const struct node *n)
{
	(void)v;
	(void)n;
}

void tr_save(struct verifier *v, const struct node *n)
{
	(void)v;
	(void)n;
}

void tr_select(struct verifier *v, const struct node *n)
{
	(void)v;
	(void)n;
}

void tr_sgd(struct verifier *v, const struct node *n)
{
	(void)v;
	(void)n;
}

void tr_slice(struct verifier *v, const struct node *n)
{
	(void)v;
	(void)n;
}

void tr_softmax(struct verifier *v, const struct node *n)
{
	(void)v;
	(void)n;
}

void tr_space_to_depth(struct verifier *v, const struct node *n)
{
	(void)v;
	(void)n;
}

void tr_splat(struct verifier *v, const struct node *n)
{
	(void)v;
	(void)n;
}

void tr_storage(struct verifier *v, const struct node *n)
{
	(void)v;
	(void)n;
}

void tr_tile(struct verifier *v, const struct node *n)
{
	(void)v;
	(void)n;
}

void tr_topk(struct verifier *v, const struct node *n)
{
	(void)v;
	(void)n;
}

void tr_transpose(struct verifier *v, const struct node *n)
{
	(void)v;
	(void)n;
}

void tr_unary(struct verifier *v, const struct node *n)
{
	(void)v;
	(void)n;
}

void tr_unary_float(struct verifier *v, const struct node *n)
{
	(void)v;
	(void)n;
}

