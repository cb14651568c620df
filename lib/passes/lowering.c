/* lowering.c - the driver of the lowering rules and the helpers they share
 * (lowering.h).
 *
 * The driver sweeps the function in list order and hands each selected node
 * to the rule families; a rule inserts its nodes before the node it
 * replaces, so they are not visited in the same sweep. When a sweep lowered
 * something the next sweep looks at the new nodes (a Swish's Sigmoid, a
 * Broadcast's Tile). Rules only ever produce kinds that lower into strictly
 * simpler ones, so a few sweeps suffice; the cap guards that argument.
 */
#include "passes/lowering.h"
#include "passes/passutil.h"

#include <stdio.h>
#include <string.h>

enum { LOWER_MAX_SWEEPS = 16 };

bool lower_is_grad(const struct node *n)
{
	switch (n->kind) {
	case NK_FullyConnectedGrad:
	case NK_ConvolutionGrad:
	case NK_MaxPoolGrad:
	case NK_AvgPoolGrad:
	case NK_ReluGrad:
	case NK_SigmoidGrad:
	case NK_TanhGrad:
	case NK_SoftMaxGrad:
	case NK_CrossEntropyLossGrad:
	case NK_RegressionGrad: return true;
	default: return lower_train_owns(n);
	}
}

bool lower_has_rule(const struct node *n)
{
	/* the type rules make every gradient kind floating point */
	if (lower_is_grad(n))
		return !node_has_pred(n);
	if (node_has_pred(n) || n->nres != 1)
		return false;
	enum elem_kind k = (enum elem_kind)node_type(n)->elem;
	switch (n->kind) {
	case NK_Pad:
	case NK_Tile:
	case NK_Broadcast: return !elem_is_quantized(k);
	case NK_Convolution: return elem_is_float(k) && node_int(n, "group") > 1 && op_type(n, 1)->dims[3] > 1;
	case NK_FullyConnected:
	case NK_Gemm:
	case NK_BatchNormalization:
	case NK_LayerNormalization:
	case NK_InstanceNormalization:
	case NK_BatchedReduceMean:
	case NK_Clip:
	case NK_LeakyRelu:
	case NK_Sigmoid:
	case NK_Swish:
	case NK_HardSwish:
	case NK_Gelu:
	case NK_SoftPlus:
	case NK_Elu:
	case NK_LogSoftMax: return elem_is_float(k) && elem_is_float((enum elem_kind)op_type(n, 0)->elem);
	default: return false;
	}
}

static const char *stat_desc(unsigned kind)
{
	switch (kind) {
	case NK_FullyConnected: return "Number of FullyConnected lowered to MatMul + BatchedAdd";
	case NK_Gemm: return "Number of Gemm lowered to MatMul and arithmetic";
	case NK_Convolution: return "Number of grouped Convolutions lowered to one Convolution per group";
	case NK_BatchNormalization: return "Number of BatchNormalizations lowered to arithmetic";
	case NK_LayerNormalization: return "Number of LayerNormalizations lowered to reductions and arithmetic";
	case NK_InstanceNormalization: return "Number of InstanceNormalizations lowered to reductions and arithmetic";
	case NK_BatchedReduceMean: return "Number of BatchedReduceMean lowered to BatchedReduceAdd and Mul";
	case NK_Clip: return "Number of Clip lowered to Max and Min";
	case NK_LeakyRelu: return "Number of LeakyRelu lowered to arithmetic";
	case NK_Sigmoid: return "Number of Sigmoid lowered to arithmetic";
	case NK_Swish: return "Number of Swish lowered to Mul by Sigmoid";
	case NK_HardSwish: return "Number of HardSwish lowered to arithmetic";
	case NK_Gelu: return "Number of Gelu lowered to arithmetic";
	case NK_SoftPlus: return "Number of SoftPlus lowered to arithmetic";
	case NK_Elu: return "Number of Elu lowered to arithmetic";
	case NK_LogSoftMax: return "Number of LogSoftMax lowered to reductions and arithmetic";
	case NK_Pad: return "Number of Pad lowered to Splat + InsertTensor";
	case NK_Tile: return "Number of Tile lowered to InsertTensor";
	case NK_Broadcast: return "Number of Broadcast lowered to Reshape + Tile";
	case NK_FullyConnectedGrad:
		return "Number of FullyConnectedGrad lowered to MatMul, Transpose and BatchedReduceAdd";
	case NK_ConvolutionGrad:
		return "Number of ConvolutionGrad lowered to ConvTranspose, Convolution and data movement";
	case NK_MaxPoolGrad: return "Number of MaxPoolGrad lowered to ScatterElements";
	case NK_AvgPoolGrad: return "Number of AvgPoolGrad lowered to a depthwise ConvTranspose";
	case NK_ReluGrad: return "Number of ReluGrad lowered to Select";
	case NK_SigmoidGrad: return "Number of SigmoidGrad lowered to arithmetic";
	case NK_TanhGrad: return "Number of TanhGrad lowered to arithmetic";
	case NK_SoftMaxGrad: return "Number of SoftMaxGrad lowered to a one-hot Gather and Sub";
	case NK_CrossEntropyLossGrad:
		return "Number of CrossEntropyLossGrad lowered to a one-hot Gather and arithmetic";
	case NK_RegressionGrad: return "Number of RegressionGrad lowered to Sub";
	default:
		if (lower_train_stat(kind))
			return lower_train_stat(kind);
		unreachable("no lowering rule for this kind");
	}
}

bool lower_function(struct func *f, struct pass_ctx *ctx, bool (*want)(const struct pass_ctx *, const struct node *))
{
	uint64_t counts[NK_COUNT] = {0};
	bool any = false;
	for (unsigned sweep = 0; sweep < LOWER_MAX_SWEEPS; sweep++) {
		bool changed = false;
		func_for_each_safe(f, n, next) {
			if (!lower_has_rule(n) || !(lower_is_grad(n) || want(ctx, n)))
				continue;
			unsigned k = n->kind;
			if (lower_linalg(f, n) || lower_activation(f, n) || lower_norm(f, n) || lower_shape(f, n) ||
			    lower_grad(f, n) || lower_train(f, n)) {
				counts[k]++;
				changed = true;
			}
		}
		if (!changed)
			break;
		any = true;
	}
	for (unsigned k = 0; k < NK_COUNT; k++)
		if (counts[k])
			pass_stat(ctx, stat_desc(k), counts[k]);
	return any;
}

/* ------------------------------------------------------------------ */
/* Helpers                                                             */

const char *lw_name(char *buf, const struct node *n, const char *suffix)
{
	snprintf(buf, 64, "%.40s.%.22s", n->name ? n->name : "t", suffix);
	return buf;
}

struct node *lw_node(struct func *f, unsigned k, const struct value *ops, unsigned nops, const struct type *t,
		     struct node *n, const char *suffix)
{
	char buf[64];
	return node_create1(f, k, lw_name(buf, n, suffix), ops, nops, t, n, n->loc);
}

struct value lw_un(struct func *f, unsigned k, struct value a, struct node *n, const char *suffix)
{
	return node_val(lw_node(f, k, &a, 1, val_type(a), n, suffix), 0);
}

struct value lw_bin(struct func *f, unsigned k, struct value a, struct value b, struct node *n, const char *suffix)
{
	struct value ops[2] = {a, b};
	const struct type *t = val_type(a);
	if (k == NK_CmpLT || k == NK_CmpLTE || k == NK_CmpEQ)
		t = type_with_elem(f->mod->types, t, EK_BOOL);
	return node_val(lw_node(f, k, ops, 2, t, n, suffix), 0);
}

struct value lw_splat(struct func *f, const struct type *t, double x, struct node *n, const char *suffix)
{
	char buf[64];
	return node_val(pu_new_splat(f, t, x, n, lw_name(buf, n, suffix)), 0);
}

struct value lw_bin_splat(struct func *f, unsigned k, struct value a, double x, struct node *n, const char *suffix)
{
	/* "<n>.k", or "<n>.<suffix>.k" for a rule's further constants */
	char buf[64], ks[32];
	const char *k1 = "k";
	if (func_find(f, lw_name(buf, n, k1))) {
		snprintf(ks, sizeof ks, "%.20s.k", suffix);
		k1 = ks;
	}
	struct value s = lw_splat(f, val_type(a), x, n, k1);
	return lw_bin(f, k, a, s, n, suffix);
}

struct value lw_reduce(struct func *f, unsigned k, struct value v, const bool *drop, struct node *n,
		       const char *suffix)
{
	const struct type *t = val_type(v);
	uint64_t dims[GLOW_MAX_RANK];
	int64_t axes[GLOW_MAX_RANK];
	unsigned r = 0, na = 0;
	for (unsigned i = 0; i < t->rank; i++) {
		if (drop[i])
			axes[na++] = (int64_t)i;
		else
			dims[r++] = t->dims[i];
	}
	struct node *red = lw_node(f, k, &v, 1, type_with_dims(f->mod->types, t, dims, r), n, suffix);
	node_set_ints(f->mod, red, "axes", axes, na);
	return node_val(red, 0);
}

struct value lw_expand(struct func *f, struct value r, const struct type *t, const bool *drop, struct node *n,
		       const char *suffix)
{
	uint64_t dims[GLOW_MAX_RANK];
	for (unsigned i = 0; i < t->rank; i++)
		dims[i] = drop[i] ? 1 : t->dims[i];
	const struct type *kt = type_with_dims(f->mod->types, val_type(r), dims, t->rank);
	struct value kv = r;
	if (kt != val_type(r))
		kv = node_val(lw_node(f, NK_Reshape, &r, 1, kt, n, "keep"), 0);
	return lw_broadcast(f, kv, t, 0, n, suffix);
}

struct value lw_broadcast(struct func *f, struct value v, const struct type *t, unsigned axis, struct node *n,
			  const char *suffix)
{
	const struct type *bt = type_with_dims(f->mod->types, val_type(v), t->dims, t->rank);
	if (bt == val_type(v))
		return v;
	struct node *b = lw_node(f, NK_Broadcast, &v, 1, bt, n, suffix);
	node_set_int(f->mod, b, "axis", axis);
	return node_val(b, 0);
}

void lw_replace(struct func *f, struct node *n, struct value v)
{
	pu_replace(f, n, v);
}
