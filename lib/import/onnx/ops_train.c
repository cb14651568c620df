/* ops_train.c - training computations that are deterministic with static
 * shapes, built from existing elementwise and reduction kinds.
 *
 * The optimizers of domain ai.onnx.preview.training (opset 1) take a
 * learning rate R (float scalar), an update count T (int64 scalar), then N
 * tensors X, N gradients G and N tensors of each optimizer state, and
 * return the N new X followed by the N new values of each state:
 *
 *   Adagrad   state H       G' = norm_coefficient * X + G
 *                           r = R / (1 + T * decay_factor)
 *                           H' = H + G' * G'
 *                           X' = X - r * G' / (sqrt(H') + epsilon)
 *   Momentum  state V       b = beta if T > 0 else 1
 *                           V' = alpha * V + b * G'
 *                           standard: X' = X - R * V'
 *                           nesterov: X' = X - R * (G' + alpha * V')
 *   Adam      states V, H   V' = alpha * V + (1 - alpha) * G'
 *                           H' = beta * H + (1 - beta) * G' * G'
 *                           r = R * sqrt(1 - beta^T) / (1 - alpha^T) if T > 0
 *                               else R
 *                           X' = (1 - norm_coefficient_post)
 *                                * (X - r * (V' / (sqrt(H') + epsilon)))
 *
 * R and T are run-time scalars: the scalar factors are computed once on
 * rank-0 values (T converted to X's element type, its sign tested in
 * int64) and broadcast to each X. A zero norm_coefficient drops its term
 * (G' = G), a zero norm_coefficient_post the final scaling. No call takes
 * two arguments that create nodes, so the graph's order does not depend on
 * the compiler's order of evaluating arguments.
 *
 * Training-mode BatchNormalization (opset 14+, training_mode = 1)
 * normalizes with the batch's statistics over every axis but the channel
 * axis (BatchedReduceMean of x and of its squared deviations: the biased
 * variance) and outputs the running statistics
 *   running_mean = mean * momentum + batch_mean * (1 - momentum)
 *   running_var  = var * momentum + batch_var * (1 - momentum).
 *
 * Training-mode Dropout is deterministic only when its ratio is known to
 * be 0: the output is the input and the mask is all true. Any other ratio
 * draws a random mask and is refused. (The graph IR's Dropout kind, whose
 * mask a training step draws from a seed and a step counter, could take
 * it: not done, ONNX's masks would not match.)
 *
 * Gradient (automatic differentiation of the graph so far) is at the end.
 */
#include "import/onnx/internal.h"
#include "passes/differentiate.h"

#include <string.h>

/* a OP b for two values of the same type. */
static struct value ew(struct importer *im, unsigned kind, const char *name, struct value a, struct value b)
{
	if (!a.node || !b.node)
		return no_value;
	struct value ops[2] = {a, b};
	return imp_b_node(im, kind, name, ops, 2, val_type(a));
}

/* A splat constant shaped like v (NULL node if v's is NULL). */
static struct value splat_like(struct importer *im, struct value v, const char *name, double f)
{
	return v.node ? imp_b_splat_const(im, name, val_type(v), f) : no_value;
}

/* ---- optimizers ---- */

struct opt {
	unsigned n;                 /* tensors optimized */
	unsigned nstate;            /* state tensors per X */
	const char *base;           /* names of the shared scalars */
	struct value r, t;          /* R (X's element kind) and T (int64), rank 0 */
	const struct type *stype;   /* rank 0 of X's element kind */
};

/* The name of output i, or one derived from input in when the output has
 * no name (it is not needed, but its value may be an operand of others). */
static const char *res_name(struct importer *im, unsigned out, unsigned in, const char *suffix)
{
	const char *s = imp_out_name(im, out);
	return *s ? s : imp_dname(im, im->node->input[in], suffix);
}

/* A scalar tensor (one element) as a rank-0 value. */
static struct value scalar_in(struct importer *im, unsigned i, const char *what, bool is_float)
{
	struct tensor *t = imp_in_req(im, i);
	if (!t)
		return no_value;
	if (imp_t_numel(t) != 1 || (is_float ? !imp_dt_is_float(t->dtype) : t->dtype != DT_INT64)) {
		imp_op_err(im, "input %u (%s, \"%s\") must be a%s scalar", i, what, t->name, is_float ? " float" : "n int64");
		return no_value;
	}
	uint64_t none[1] = {1};
	return imp_b_reshape(im, imp_tval(im, t), none, 0, imp_dname(im, t->name, "scalar"));
}

/* Checks the inputs R, T, X1..Xn, G1..Gn and nstate groups of n state
 * tensors, and the n * (1 + nstate) outputs; builds the shared scalars.
 * state names the state tensors for messages ("H", "V, H"). */
static int opt_begin(struct importer *im, const onnx_node *n, unsigned nstate, const char *state, struct opt *o)
{
	memset(o, 0, sizeof *o);
	unsigned ni = imp_n_in(n), group = 2 + nstate;
	if (ni < 2 + group || (ni - 2) % group != 0)
		return imp_op_err(im,
			      "inputs must be R, T and N tensors each of X, G, %s (2 + %u * N inputs), not %u "
			      "inputs",
			      state, group, ni);
	o->n = (ni - 2) / group;
	o->nstate = nstate;
	if (n->n_output != (size_t)o->n * (1 + nstate))
		return imp_op_err(im, "outputs must be the N new tensors each of X, %s (%u for N = %u), not %zu outputs",
			      state, o->n * (1 + nstate), o->n, n->n_output);
	struct tensor *x0 = imp_in_req(im, 2);
	if (!x0)
		return -1;
	int elem = imp_dt_elem(x0->dtype);
	for (unsigned i = 0; i < o->n; i++) {
		struct tensor *x = imp_in_req(im, 2 + i);
		if (!x)
			return -1;
		if (!imp_dt_is_float(x->dtype) || imp_dt_elem(x->dtype) < 0)
			return imp_op_err(im, "input %u (\"%s\") must be a floating-point tensor, not %s", 2 + i, x->name,
				      imp_dt_name(x->dtype));
		if (x->dtype != x0->dtype)
			return imp_op_err(im, "input %u (\"%s\") must have the element type of input 2 (%s)", 2 + i,
				      x->name, imp_dt_name(x0->dtype));
		for (unsigned k = 1; k < group; k++) {
			unsigned j = 2 + k * o->n + i;
			struct tensor *s = imp_in_req(im, j);
			if (!s)
				return -1;
			if (s->dtype != x->dtype || s->rank != x->rank ||
			    memcmp(s->dims, x->dims, x->rank * sizeof x->dims[0]) != 0)
				return imp_op_err(im, "input %u (\"%s\") must have the type and shape of input %u (\"%s\")",
					      j, s->name, 2 + i, x->name);
		}
	}
	o->base = res_name(im, 0, 2, "new");
	uint64_t none[1] = {1};
	o->stype = imp_ty(im, elem, none, 0);
	o->r = imp_b_convert(im, scalar_in(im, 0, "R", true), elem, imp_dname(im, o->base, "R"));
	o->t = scalar_in(im, 1, "T", false);
	return o->r.node && o->t.node && o->stype ? 0 : -1;
}

/* T in X's element kind. */
static struct value t_float(struct importer *im, const struct opt *o)
{
	return imp_b_convert(im, o->t, o->stype->elem, imp_dname(im, o->base, "T"));
}

/* T > 0 (a bool scalar): an update has been done before. */
static struct value t_pos(struct importer *im, const struct opt *o)
{
	struct value cmp[2] = {splat_like(im, o->t, imp_dname(im, o->base, "zero"), 0), o->t};
	return imp_b_node(im, NK_CmpLT, imp_dname(im, o->base, "tpos"), cmp, 2,
		      type_with_elem(im->tc, val_type(o->t), EK_BOOL));
}

/* 1 - c rounded to float, as the element type would store it. */
static double one_minus(double c)
{
	return imp_f32_short((float)(1 - c));
}

/* A rank-0 constant of X's element kind. */
static struct value sconst(struct importer *im, const struct opt *o, const char *suffix, double f)
{
	return imp_b_splat_const(im, imp_dname(im, o->base, suffix), o->stype, f);
}

/* Scalar s broadcast to the shape of x. */
static struct value bscal(struct importer *im, struct value s, struct value x, const char *name)
{
	if (!s.node || !x.node)
		return no_value;
	const struct type *xt = val_type(x);
	return imp_b_broadcast(im, s, xt->dims, xt->rank, name);
}

/* c * v for a constant c (v itself when c is 1). */
static struct value scale(struct importer *im, struct value v, double c, const char *name)
{
	if (c == 1)
		return v;
	return ew(im, NK_Mul, name, splat_like(im, v, imp_dname(im, name, "c"), c), v);
}

/* G' = norm_coefficient * X + G (G when the coefficient is 0). */
static struct value regularized(struct importer *im, struct value x, struct value g, double norm, const char *name)
{
	if (norm == 0)
		return g;
	return ew(im, NK_Add, imp_dname(im, name, "greg"), scale(im, x, norm, imp_dname(im, name, "xnorm")), g);
}

/* Binds output i; NULL values were reported. */
static int bind_out(struct importer *im, unsigned i, struct value v)
{
	return v.node ? imp_set_out(im, i, v) : -1;
}

/* Adagrad: inputs R, T, X..., G..., H...; outputs X'..., H'...
 * (decay_factor, epsilon, norm_coefficient default to 0, 1e-6, 0). */
int imp_op_adagrad(struct importer *im, const onnx_node *n)
{
	struct opt o;
	if (opt_begin(im, n, 1, "H", &o))
		return -1;
	double decay = imp_attr_f(n, "decay_factor", 0.0f), eps = imp_attr_f(n, "epsilon", 1e-6f),
	       norm = imp_attr_f(n, "norm_coefficient", 0.0f);
	/* r = R / (1 + T * decay_factor) */
	struct value tf = t_float(im, &o);
	struct value td = ew(im, NK_Mul, imp_dname(im, o.base, "tdecay"), tf, sconst(im, &o, "decay", decay));
	struct value den = ew(im, NK_Add, imp_dname(im, o.base, "rden"), td, sconst(im, &o, "one", 1));
	struct value r = ew(im, NK_Div, imp_dname(im, o.base, "lr"), o.r, den);
	int rc = 0;
	for (unsigned i = 0; i < o.n; i++) {
		const char *xn = res_name(im, i, 2 + i, "new"), *hn = res_name(im, o.n + i, 2 + 2 * o.n + i, "new");
		struct value x = imp_in_val(im, 2 + i), g = imp_in_val(im, 2 + o.n + i), h = imp_in_val(im, 2 + 2 * o.n + i);
		struct value gr = regularized(im, x, g, norm, xn);
		struct value hnew = ew(im, NK_Add, hn, h, ew(im, NK_Mul, imp_dname(im, hn, "g2"), gr, gr));
		struct value hs = imp_b_unary(im, NK_Sqrt, imp_dname(im, xn, "hsqrt"), hnew);
		struct value ha = ew(im, NK_Add, imp_dname(im, xn, "hadapt"), hs, splat_like(im, hs, imp_dname(im, xn, "eps"), eps));
		struct value rg = ew(im, NK_Mul, imp_dname(im, xn, "rg"), bscal(im, r, x, imp_dname(im, xn, "lrb")), gr);
		struct value step = ew(im, NK_Div, imp_dname(im, xn, "step"), rg, ha);
		rc |= bind_out(im, i, ew(im, NK_Sub, xn, x, step));
		rc |= bind_out(im, o.n + i, hnew);
	}
	return rc;
}

/* Momentum: inputs R, T, X..., G..., V...; outputs X'..., V'... (alpha,
 * beta, mode and norm_coefficient are required). */
int imp_op_momentum(struct importer *im, const onnx_node *n)
{
	static const char *const req[] = {"alpha", "beta", "mode", "norm_coefficient"};
	for (unsigned k = 0; k < GLOW_ARRAY_SIZE(req); k++)
		if (!imp_attr(n, req[k]))
			return imp_op_err(im, "attribute %s is required", req[k]);
	const char *mode = imp_attr_s(im, n, "mode", "");
	bool nesterov = strcmp(mode, "nesterov") == 0;
	if (!nesterov && strcmp(mode, "standard") != 0)
		return imp_op_err(im, "mode \"%s\" is neither \"standard\" nor \"nesterov\"", mode);
	struct opt o;
	if (opt_begin(im, n, 1, "V", &o))
		return -1;
	double alpha = imp_attr_f(n, "alpha", 0.0f), beta = imp_attr_f(n, "beta", 0.0f),
	       norm = imp_attr_f(n, "norm_coefficient", 0.0f);
	/* the gradient's coefficient: beta after the first update, else 1 */
	struct value pos = t_pos(im, &o);
	struct value cbeta = sconst(im, &o, "beta", beta);
	struct value one = sconst(im, &o, "one", 1);
	struct value sel[3] = {pos, cbeta, one};
	struct value b = imp_b_node(im, NK_Select, imp_dname(im, o.base, "badj"), sel, 3, o.stype);
	int rc = 0;
	for (unsigned i = 0; i < o.n; i++) {
		const char *xn = res_name(im, i, 2 + i, "new"), *vn = res_name(im, o.n + i, 2 + 2 * o.n + i, "new");
		struct value x = imp_in_val(im, 2 + i), g = imp_in_val(im, 2 + o.n + i), v = imp_in_val(im, 2 + 2 * o.n + i);
		struct value gr = regularized(im, x, g, norm, xn);
		struct value bg = ew(im, NK_Mul, imp_dname(im, vn, "bg"), bscal(im, b, x, imp_dname(im, vn, "b")), gr);
		struct value vnew = ew(im, NK_Add, vn, scale(im, v, alpha, imp_dname(im, vn, "av")), bg);
		struct value dir = vnew;
		if (nesterov)
			dir = ew(im, NK_Add, imp_dname(im, xn, "dir"), gr, scale(im, vnew, alpha, imp_dname(im, xn, "av")));
		struct value step = ew(im, NK_Mul, imp_dname(im, xn, "step"), bscal(im, o.r, x, imp_dname(im, xn, "lrb")), dir);
		rc |= bind_out(im, i, ew(im, NK_Sub, xn, x, step));
		rc |= bind_out(im, o.n + i, vnew);
	}
	return rc;
}

/* Adam: inputs R, T, X..., G..., V..., H...; outputs X'..., V'..., H'...
 * (alpha 0.9, beta 0.999, epsilon 1e-6, both norm coefficients 0 by
 * default). */
int imp_op_adam(struct importer *im, const onnx_node *n)
{
	struct opt o;
	if (opt_begin(im, n, 2, "V, H", &o))
		return -1;
	double alpha = imp_attr_f(n, "alpha", 0.9f), beta = imp_attr_f(n, "beta", 0.999f), eps = imp_attr_f(n, "epsilon", 1e-6f),
	       norm = imp_attr_f(n, "norm_coefficient", 0.0f), post = imp_attr_f(n, "norm_coefficient_post", 0.0f);
	/* bias correction of the learning rate after the first update */
	struct value one = sconst(im, &o, "one", 1), tf = t_float(im, &o);
	struct value bt = ew(im, NK_Pow, imp_dname(im, o.base, "betat"), sconst(im, &o, "beta", beta), tf);
	struct value at = ew(im, NK_Pow, imp_dname(im, o.base, "alphat"), sconst(im, &o, "alpha", alpha), tf);
	struct value bc = ew(im, NK_Sub, imp_dname(im, o.base, "betac"), one, bt);
	struct value num = imp_b_unary(im, NK_Sqrt, imp_dname(im, o.base, "rnum"), bc);
	struct value den = ew(im, NK_Sub, imp_dname(im, o.base, "rden"), one, at);
	struct value rnum = ew(im, NK_Mul, imp_dname(im, o.base, "rnumr"), o.r, num);
	struct value rcorr = ew(im, NK_Div, imp_dname(im, o.base, "rcorr"), rnum, den);
	struct value pos = t_pos(im, &o);
	struct value sel[3] = {pos, rcorr, o.r};
	struct value r = imp_b_node(im, NK_Select, imp_dname(im, o.base, "radj"), sel, 3, o.stype);
	int rc = 0;
	for (unsigned i = 0; i < o.n; i++) {
		const char *xn = res_name(im, i, 2 + i, "new"), *vn = res_name(im, o.n + i, 2 + 2 * o.n + i, "new"),
			   *hn = res_name(im, 2 * o.n + i, 2 + 3 * o.n + i, "new");
		struct value x = imp_in_val(im, 2 + i), g = imp_in_val(im, 2 + o.n + i), v = imp_in_val(im, 2 + 2 * o.n + i),
			     h = imp_in_val(im, 2 + 3 * o.n + i);
		struct value gr = regularized(im, x, g, norm, xn);
		struct value av = scale(im, v, alpha, imp_dname(im, vn, "av"));
		struct value ag = scale(im, gr, one_minus(alpha), imp_dname(im, vn, "ag"));
		struct value vnew = ew(im, NK_Add, vn, av, ag);
		struct value g2 = ew(im, NK_Mul, imp_dname(im, hn, "g2"), gr, gr);
		struct value bh = scale(im, h, beta, imp_dname(im, hn, "bh"));
		struct value bg = scale(im, g2, one_minus(beta), imp_dname(im, hn, "bg"));
		struct value hnew = ew(im, NK_Add, hn, bh, bg);
		struct value hs = imp_b_unary(im, NK_Sqrt, imp_dname(im, xn, "hsqrt"), hnew);
		struct value he = ew(im, NK_Add, imp_dname(im, xn, "hadapt"), hs, splat_like(im, hs, imp_dname(im, xn, "eps"), eps));
		struct value q = ew(im, NK_Div, imp_dname(im, xn, "vh"), vnew, he);
		struct value step = ew(im, NK_Mul, imp_dname(im, xn, "step"), bscal(im, r, x, imp_dname(im, xn, "lrb")), q);
		struct value xnew = ew(im, NK_Sub, post == 0 ? xn : imp_dname(im, xn, "pre"), x, step);
		if (post != 0)
			xnew = ew(im, NK_Mul, xn, splat_like(im, xnew, imp_dname(im, xn, "post"), one_minus(post)), xnew);
		rc |= bind_out(im, i, xnew);
		rc |= bind_out(im, o.n + i, vnew);
		rc |= bind_out(im, 2 * o.n + i, hnew);
	}
	return rc;
}

/* ---- BatchNormalization and Dropout in training mode ---- */

/* BatchNormalization with training_mode = 1 (x is a float tensor of rank
 * >= 2, checked by the caller): outputs y and, when used, the running mean
 * and variance. */
int imp_batchnorm_training(struct importer *im, const onnx_node *n, struct tensor *x)
{
	uint64_t C = x->dims[1];
	struct value ops[5];
	for (unsigned i = 0; i < 5; i++) {
		ops[i] = imp_in_val(im, i);
		if (!ops[i].node)
			return -1;
		if (i && (val_type(ops[i])->rank != 1 || val_type(ops[i])->dims[0] != C))
			return imp_op_err(im, "input %u must have shape [%llu]", i, (unsigned long long)C);
	}
	const struct type *xt = val_type(ops[0]);
	unsigned rank = xt->rank;
	const char *yname = imp_out_name(im, 0);
	double eps = imp_attr_f(n, "epsilon", 1e-5f), mom = imp_attr_f(n, "momentum", 0.9f);
	/* the batch statistics over every axis but the channel axis */
	int64_t axes[GLOW_MAX_RANK];
	unsigned na = 0;
	uint64_t sd[GLOW_MAX_RANK];
	for (unsigned k = 0; k < rank; k++) {
		sd[k] = k == 1 ? C : 1;
		if (k != 1)
			axes[na++] = k;
	}
	const struct type *ct = val_type(ops[3]);
	const char *mname = imp_dname(im, yname, "mean"), *vname = imp_dname(im, yname, "var");
	struct value mean = imp_b_node(im, NK_BatchedReduceMean, mname, &ops[0], 1, ct);
	if (!mean.node)
		return -1;
	node_set_ints(im->m, mean.node, AN_axes, axes, na);
	struct value mb = imp_b_reshape(im, mean, sd, rank, imp_dname(im, mname, "c"));
	mb = imp_b_broadcast(im, mb, xt->dims, rank, imp_dname(im, mname, "bcast"));
	struct value dev = ew(im, NK_Sub, imp_dname(im, vname, "dev"), ops[0], mb);
	struct value sq = ew(im, NK_Mul, imp_dname(im, vname, "sq"), dev, dev);
	struct value var = imp_b_node(im, NK_BatchedReduceMean, vname, &sq, 1, ct);
	if (!var.node)
		return -1;
	node_set_ints(im->m, var.node, AN_axes, axes, na);
	struct value bn[5] = {ops[0], ops[1], ops[2], mean, var};
	struct value y = imp_b_node(im, NK_BatchNormalization, yname, bn, 5, xt);
	if (!y.node)
		return -1;
	node_set_int(im->m, y.node, AN_channel_idx, 1);
	node_set_float(im->m, y.node, AN_epsilon, eps);
	node_set_float(im->m, y.node, AN_momentum, mom);
	if (imp_set_out(im, 0, y))
		return -1;
	/* running = input * momentum + batch * (1 - momentum) */
	struct value batch[2] = {mean, var};
	for (unsigned k = 0; k < 2; k++) {
		if (!imp_out_used(im, 1 + k))
			continue;
		const char *rn = imp_out_name(im, 1 + k);
		struct value old = scale(im, ops[3 + k], mom, imp_dname(im, rn, "old"));
		struct value cur = scale(im, batch[k], one_minus(mom), imp_dname(im, rn, "cur"));
		if (bind_out(im, 1 + k, ew(im, NK_Add, rn, old, cur)))
			return -1;
	}
	return 0;
}

/* Dropout in training mode: the ratio (input 1 from opset 12, else the
 * attribute; 0.5 when absent) must be known and 0. */
int imp_dropout_training(struct importer *im, const onnx_node *n, struct tensor *x)
{
	double ratio = 0.5;
	if (im->opset >= 12) {
		struct tensor *rt = imp_in_opt(im, 1);
		if (rt) {
			const double *rv = imp_dt_is_float(rt->dtype) && imp_t_numel(rt) == 1 ? imp_t_floats(im, rt) : NULL;
			if (!rv)
				return imp_op_err(im, "training-mode Dropout needs its ratio (input 1) as a float scalar "
						  "known at import");
			ratio = rv[0];
		}
	} else {
		ratio = imp_attr_f(n, "ratio", 0.5f);
	}
	if (!(ratio >= 0 && ratio < 1))
		return imp_op_err(im, "ratio %g is outside [0, 1)", ratio);
	if (ratio > 0)
		return imp_op_err(im, "training-mode Dropout with ratio > 0 is random (ratio %g)", ratio);
	/* nothing is dropped and the scale 1 / (1 - ratio) is 1 */
	if (imp_out_used(im, 1) && imp_set_out_t(im, 1, imp_k_splat(im, imp_out_name(im, 1), DT_BOOL, x->rank, x->dims, 1, 1)))
		return -1;
	return imp_set_out_t(im, 0, x);
}

/* Gradient (ai.onnx.preview.training, opset 1): attributes xs (names of
 * the differentiated tensors, the node's first inputs), y (the name of the
 * differentiated tensor) and zs (further inputs, only read); output i is
 * the gradient of the sum of y's elements with respect to xs[i], as the
 * differentiate pass computes it (differentiate_values: the adjoints of
 * the graph built so far, seeded with ones). A tensor y does not depend on
 * gets zeros. In the main graph only: a subgraph's nodes are unrolled into
 * the caller's. An x known at import (an initializer) is refused: the
 * importer folds computations on known tensors into new constants, so the
 * graph would not show how y depends on it. */
int imp_op_gradient(struct importer *im, const onnx_node *n)
{
	const Onnx__AttributeProto *xa = imp_attr(n, "xs"), *za = imp_attr(n, "zs");
	const char *yname = imp_attr_s(im, n, "y", NULL);
	if (!xa || !xa->n_strings || !yname)
		return imp_op_err(im, "attributes xs (one or more names) and y are required");
	if (im->inner)
		return imp_op_err(im, "Gradient inside a subgraph is not supported");
	size_t nx = xa->n_strings, nz = za ? za->n_strings : 0;
	if (imp_n_in(n) != nx + nz)
		return imp_op_err(im, "inputs must be the %zu tensors of xs and the %zu of zs, not %u inputs", nx, nz,
			      imp_n_in(n));
	if (n->n_output != nx)
		return imp_op_err(im, "outputs must be one gradient per name of xs (%zu), not %zu", nx, n->n_output);
	for (size_t i = 0; i < nx; i++) {
		const char *want = (const char *)xa->strings[i].data;
		size_t wl = xa->strings[i].len;
		if (strlen(n->input[i]) != wl || memcmp(n->input[i], want, wl) != 0)
			return imp_op_err(im, "input %zu (\"%s\") must be the tensor xs[%zu] names (\"%.*s\")", i,
				      n->input[i], i, (int)wl, want);
	}
	struct tensor *yt = imp_t_lookup(im, yname);
	if (!yt)
		return imp_op_err(im, "y names \"%s\", which no node before the Gradient computes", yname);
	struct value y = imp_tval(im, yt);
	if (!y.node)
		return -1;
	if (!elem_is_float((enum elem_kind)val_type(y)->elem))
		return imp_op_err(im, "y (\"%s\") must be a floating-point tensor", yname);
	struct value *xs = arena_alloc(&im->scratch, 2 * nx * sizeof *xs), *g = xs + nx;
	for (size_t i = 0; i < nx; i++) {
		/* the importer folds what is computed from known tensors alone
		 * into new constants, cutting the path from such an x to y */
		struct tensor *xt = imp_in_req(im, (unsigned)i);
		if (xt && xt->known)
			return imp_op_err(im,
				      "xs[%zu] (\"%s\") is known at import (an initializer or constant): "
				      "computations on it are folded, so its gradient is not supported",
				      i, xt->name);
		xs[i] = imp_in_val(im, (unsigned)i);
		if (!xs[i].node)
			return -1;
	}
	struct value seed = imp_b_splat_const(im, imp_dname(im, yname, "seed"), val_type(y), 1);
	if (!seed.node)
		return -1;
	const struct node *bad = differentiate_values(im->f, y, seed, xs, (unsigned)nx, g);
	if (bad)
		return imp_op_err(im, "%s %%%s on the way from xs to y has no gradient rule", node_kind_name(bad->kind),
			      bad->name);
	for (size_t i = 0; i < nx; i++)
		if (imp_set_out(im, (unsigned)i, g[i]))
			return -1;
	return 0;
}
