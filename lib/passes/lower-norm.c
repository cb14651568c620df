/* lower-norm.c - lowering rules for normalizations and the mean reduction
 * (lowering.h). Float kinds only. B_a(v) is v broadcast to the input's
 * shape with its dims aligned at axis a; E(r) a reduction's result put back
 * to the input's shape (Reshape with the reduced axes as 1s, Broadcast).
 *
 *   BatchNormalization(x, scale, bias, mean, var) {c = channel_idx, eps}
 *       mul = Div(scale, Sqrt(Add(var, k eps))), add = Sub(bias, Mul(mean, mul))
 *       -> Add(Mul(x, B_c(mul)), B_c(add))
 *     For statistics that are not constants (training, or graphs that feed
 *     them): lower-batchnorm already turns constant ones into constants.
 *   LayerNormalization(x, scale, bias) {a, eps}, reducing R = axes [a, rank):
 *       d = Sub(x, E(ReduceMean_R(x))), v = ReduceMean_R(Mul(d, d))
 *       -> Add(Mul(Mul(d, E(Rsqrt(Add(v, k eps)))), B_a(scale)), B_a(bias))
 *   InstanceNormalization(x, scale, bias) {c, eps}: the same with R = every
 *       axis but 0 and c, scale and bias B_c
 *   BatchedReduceMean(x) {axes} -> Mul(BatchedReduceAdd(x) {axes}, k 1/n),
 *       n the number of values reduced into each result (n > 0)
 *
 * Numerics: the kernels compute in double (two-pass variance) and round
 * once; the lowered forms round after every node (also eps and 1/n to the
 * kind): equal within float rounding of the sums.
 */
#include "passes/lowering.h"
#include "passes/passutil.h"

/* BatchNormalization (Lowering.def): not when a statistic's element kind differs. */
bool lower_batchnorm(struct func *f, struct node *n)
{
	struct value x = op_val(n, 0);
	const struct type *t = val_type(x);
	unsigned c = (unsigned)node_int(n, AN_channel_idx);
	for (unsigned i = 1; i < 5; i++)
		if (!type_same_elem(op_type(n, i), t))
			return false;
	struct value scale = op_val(n, 1), bias = op_val(n, 2), mean = op_val(n, 3), var = op_val(n, 4);
	struct value sd = lw_un(f, NK_Sqrt, lw_bin_splat(f, NK_Add, var, node_float(n, AN_epsilon), n, "veps"), n, "sd");
	struct value mul = lw_bin(f, NK_Div, scale, sd, n, "mul");
	struct value add = lw_bin(f, NK_Sub, bias, lw_bin(f, NK_Mul, mean, mul, n, "mm"), n, "add");
	struct value y = lw_bin(f, NK_Mul, x, lw_broadcast(f, mul, t, c, n, "mulb"), n, "scaled");
	lw_replace(f, n, lw_bin(f, NK_Add, y, lw_broadcast(f, add, t, c, n, "addb"), n, "bn"));
	return true;
}

/* Normalizes x over the axes in drop: Mul(d, E(Rsqrt(var + eps))). */
static struct value normalize(struct func *f, struct node *n, struct value x, const bool *drop)
{
	const struct type *t = val_type(x);
	struct value mean = lw_reduce(f, NK_BatchedReduceMean, x, drop, n, "mean");
	struct value d = lw_bin(f, NK_Sub, x, lw_expand(f, mean, t, drop, n, "meanb"), n, "centered");
	struct value var = lw_reduce(f, NK_BatchedReduceMean, lw_bin(f, NK_Mul, d, d, n, "sq"), drop, n, "var");
	struct value r = lw_un(f, NK_Rsqrt, lw_bin_splat(f, NK_Add, var, node_float(n, AN_epsilon), n, "veps"), n, "rsd");
	return lw_bin(f, NK_Mul, d, lw_expand(f, r, t, drop, n, "rsdb"), n, "normalized");
}

/* LayerNormalization and InstanceNormalization (Lowering.def): not when
 * Scale or Bias has another element kind, nor on an empty tensor. */
bool lower_layer_or_instance(struct func *f, struct node *n)
{
	struct value x = op_val(n, 0);
	const struct type *t = val_type(x);
	bool drop[GLOW_MAX_RANK] = {false};
	unsigned axis;
	if (n->kind == NK_LayerNormalization) {
		axis = (unsigned)node_int(n, AN_axis);
		for (unsigned i = axis; i < t->rank; i++)
			drop[i] = true;
	} else {
		axis = (unsigned)node_int(n, AN_channel_idx);
		for (unsigned i = 1; i < t->rank; i++)
			drop[i] = i != axis;
	}
	if (!type_same_elem(op_type(n, 1), t) || !type_same_elem(op_type(n, 2), t) || type_numel(t) == 0)
		return false;
	struct value y = normalize(f, n, x, drop);
	y = lw_bin(f, NK_Mul, y, lw_broadcast(f, op_val(n, 1), t, axis, n, "scaleb"), n, "scaled");
	lw_replace(f, n, lw_bin(f, NK_Add, y, lw_broadcast(f, op_val(n, 2), t, axis, n, "biasb"), n, "norm"));
	return true;
}

/* BatchedReduceMean (Lowering.def): not when it reduces nothing (a
 * mean of zero elements). */
bool lower_reduce_mean(struct func *f, struct node *n)
{
	struct value x = op_val(n, 0);
	const struct type *t = val_type(x);
	unsigned na;
	const int64_t *axes = node_ints(n, AN_axes, &na);
	uint64_t cnt = 1;
	for (unsigned i = 0; i < na; i++)
		cnt *= t->dims[axes[i]];
	if (cnt == 0)
		return false;
	struct node *sum = lw_node(f, NK_BatchedReduceAdd, &x, 1, node_type(n), n, "sum");
	node_set_ints(f->mod, sum, AN_axes, axes, na);
	lw_replace(f, n, lw_bin_splat(f, NK_Mul, node_val(sum, 0), 1.0 / (double)cnt, n, "mean"));
	return true;
}
