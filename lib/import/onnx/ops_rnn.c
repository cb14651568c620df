/* ops_rnn.c - translators of the recurrent operators RNN, GRU and LSTM,
 * unrolled over the sequence length, which the graph IR's static shapes
 * make known at import.
 *
 * Per direction and gate g, the input contributions of every time step are
 * one FullyConnected of X flattened to [seq * batch, input] with the gate's
 * transposed weights and its biases (Wb + Rb; for GRU's hidden gate Wb
 * alone, since Rb sits inside the reset product). Each step then slices its
 * rows, adds the recurrent MatMul of the previous hidden state, clips when
 * asked, and applies the direction's activations (attribute activations,
 * with activation_alpha and activation_beta consumed in order by the
 * functions that take parameters; ONNX defaults otherwise):
 *   RNN:  H = f(x Wi + H Ri + b)
 *   GRU:  z = f(x Wz + H Rz + b), r = f(x Wr + H Rr + b),
 *         h = g(x Wh + (r * H) Rh + Rbh + Wbh)          linear_before_reset 0
 *         h = g(x Wh + r * (H Rh + Rbh) + Wbh)          linear_before_reset 1
 *         H = (1 - z) * h + z * H
 *   LSTM: i = f(x Wi + H Ri + Pi * C + b), f = f(x Wf + H Rf + Pf * C + b)
 *         (f = 1 - i with input_forget), c = g(x Wc + H Rc + b),
 *         C = f * C + i * c, o = f(x Wo + H Ro + Po * C + b), H = o * h(C)
 * The reverse direction walks the steps from last to first. Y stacks the
 * hidden states of every step and direction, Y_h (and Y_c) the last ones;
 * layout 1 puts the batch dimension first in X, the initial states and the
 * outputs. Weights may be constants or run-time values alike (the slices
 * and transposes of constants fold in glow-opt).
 *
 * sequence_lens must be known at import and equal to the sequence length
 * for every batch entry (shorter sequences are reported as unsupported).
 */
#include "import/onnx/internal.h"

#include <stdio.h>
#include <string.h>

enum rnn_act { ACT_RELU, ACT_TANH, ACT_SIGMOID, ACT_AFFINE, ACT_LEAKY, ACT_THRESH, ACT_SCALEDTANH,
	       ACT_HARDSIGMOID, ACT_ELU, ACT_SOFTSIGN, ACT_SOFTPLUS };

struct rnn_fn {
	enum rnn_act kind;
	double alpha, beta;
};

#define RNN_SPLATS 16

struct rnn {
	struct importer *im;
	const char *name;       /* base of helper names */
	int elem;
	uint64_t S, B, I, H;    /* steps, batch, input size, hidden size */
	unsigned D, G;          /* directions, gates */
	bool clip;
	double clipv;
	struct rnn_fn fn[2][3]; /* per direction: f, g, h */
	struct value W, R, Bias, P;
	struct value X2;        /* X as [S * B, I] */
	/* splat constants of type [B, H], made once */
	unsigned nsplat;
	double splat_f[RNN_SPLATS];
	struct value splat_v[RNN_SPLATS];
};

static bool eq_nocase(const char *a, size_t alen, const char *b)
{
	if (alen != strlen(b))
		return false;
	for (size_t i = 0; i < alen; i++) {
		char c = a[i];
		if (c >= 'A' && c <= 'Z')
			c = (char)(c - 'A' + 'a');
		char d = b[i];
		if (d >= 'A' && d <= 'Z')
			d = (char)(d - 'A' + 'a');
		if (c != d)
			return false;
	}
	return true;
}

/* Reads the activations of every direction (nfn per direction, defaults
 * def[] when the attribute is absent). */
static int rnn_parse_fns(struct rnn *c, const onnx_node *n, unsigned nfn, const enum rnn_act *def)
{
	static const struct {
		const char *name;
		enum rnn_act kind;
		unsigned nparams;
		double alpha, beta;
	} table[] = {{"Relu", ACT_RELU, 0, 0, 0},
		     {"Tanh", ACT_TANH, 0, 0, 0},
		     {"Sigmoid", ACT_SIGMOID, 0, 0, 0},
		     {"Affine", ACT_AFFINE, 2, 1, 0},
		     {"LeakyRelu", ACT_LEAKY, 1, 0.01, 0},
		     {"ThresholdedRelu", ACT_THRESH, 1, 1, 0},
		     {"ScaledTanh", ACT_SCALEDTANH, 2, 1, 1},
		     {"HardSigmoid", ACT_HARDSIGMOID, 2, 0.2, 0.5},
		     {"Elu", ACT_ELU, 1, 1, 0},
		     {"Softsign", ACT_SOFTSIGN, 0, 0, 0},
		     {"Softplus", ACT_SOFTPLUS, 0, 0, 0}};
	const Onnx__AttributeProto *a = imp_attr(n, "activations");
	const float *al = NULL, *be = NULL;
	long nal = imp_attr_floats(n, "activation_alpha", &al), nbe = imp_attr_floats(n, "activation_beta", &be);
	long ial = 0, ibe = 0;
	if (a && a->n_strings != (size_t)nfn * c->D)
		return imp_op_err(c->im, "activations must name %u functions, got %zu", nfn * c->D, a->n_strings);
	for (unsigned d = 0; d < c->D; d++)
		for (unsigned k = 0; k < nfn; k++) {
			struct rnn_fn *f = &c->fn[d][k];
			if (!a) {
				f->kind = def[k];
				continue;
			}
			const ProtobufCBinaryData *s = &a->strings[d * nfn + k];
			size_t j = 0;
			while (j < GLOW_ARRAY_SIZE(table) && !eq_nocase((const char *)s->data, s->len, table[j].name))
				j++;
			if (j == GLOW_ARRAY_SIZE(table))
				return imp_op_err(c->im, "activation \"%.*s\" is not supported", (int)s->len,
					      (const char *)s->data);
			f->kind = table[j].kind;
			f->alpha = table[j].alpha;
			f->beta = table[j].beta;
			if (table[j].nparams >= 1 && ial < nal)
				f->alpha = imp_f32_short(al[ial++]);
			if (table[j].nparams >= 2 && ibe < nbe)
				f->beta = imp_f32_short(be[ibe++]);
		}
	return 0;
}

/* ---- node helpers (every value is [B, H] unless said otherwise) ---- */

static struct value rnn_splat(struct rnn *c, double f)
{
	for (unsigned i = 0; i < c->nsplat; i++)
		if (c->splat_f[i] == f)
			return c->splat_v[i];
	uint64_t dims[2] = {c->B, c->H};
	struct value v = imp_b_splat_const(c->im, imp_dname(c->im, c->name, "k"), imp_ty(c->im, c->elem, dims, 2), f);
	if (c->nsplat < RNN_SPLATS) {
		c->splat_f[c->nsplat] = f;
		c->splat_v[c->nsplat++] = v;
	}
	return v;
}

static struct value bin(struct rnn *c, unsigned kind, struct value a, struct value b, const char *suffix)
{
	struct value ops[2] = {a, b};
	return imp_b_node(c->im, kind, imp_dname(c->im, c->name, suffix), ops, 2, a.node ? val_type(a) : NULL);
}

static struct value slice(struct rnn *c, struct value x, const int64_t *start, const uint64_t *dims,
			  unsigned rank, const char *suffix)
{
	if (!x.node)
		return x;
	const struct type *xt = val_type(x);
	bool whole = xt->rank == rank;
	for (unsigned i = 0; whole && i < rank; i++)
		whole = start[i] == 0 && dims[i] == xt->dims[i];
	if (whole)
		return x;
	struct value r = imp_b_node(c->im, NK_Slice, imp_dname(c->im, c->name, suffix), &x, 1,
				imp_ty(c->im, val_type(x)->elem, dims, rank));
	if (r.node)
		node_set_ints(c->im->m, r.node, AN_start, start, rank);
	return r;
}

/* rows [row0, row0 + rows) of direction d of a [D, *, cols] tensor,
 * transposed: [cols, rows] */
static struct value weight_t(struct rnn *c, struct value w, unsigned d, uint64_t row0, uint64_t rows, uint64_t cols,
			     const char *suffix)
{
	int64_t st[3] = {d, (int64_t)row0, 0};
	uint64_t sd[3] = {1, rows, cols}, md[2] = {rows, cols};
	struct value s = slice(c, w, st, sd, 3, suffix);
	s = imp_b_reshape(c->im, s, md, 2, imp_dname(c->im, c->name, suffix));
	static const unsigned perm[2] = {1, 0};
	return imp_b_transpose(c->im, s, perm, imp_dname(c->im, c->name, suffix));
}

/* H values from offset off of direction d of a [D, *] tensor: [H] */
static struct value vec(struct rnn *c, struct value v, unsigned d, uint64_t off, const char *suffix)
{
	int64_t st[2] = {d, (int64_t)off};
	uint64_t sd[2] = {1, c->H}, vd[1] = {c->H};
	return imp_b_reshape(c->im, slice(c, v, st, sd, 2, suffix), vd, 1, imp_dname(c->im, c->name, suffix));
}

static struct value fully_connected(struct rnn *c, struct value x, struct value w, struct value b, const char *suffix)
{
	if (!x.node || !w.node)
		return no_value;
	uint64_t dims[2] = {val_type(x)->dims[0], val_type(w)->dims[1]};
	struct value ops[3] = {x, w, b};
	return imp_b_node(c->im, NK_FullyConnected, imp_dname(c->im, c->name, suffix), ops, 3, imp_ty(c->im, c->elem, dims, 2));
}

static struct value matmul(struct rnn *c, struct value x, struct value w, const char *suffix)
{
	if (!x.node || !w.node)
		return no_value;
	uint64_t dims[2] = {val_type(x)->dims[0], val_type(w)->dims[1]};
	struct value ops[2] = {x, w};
	return imp_b_node(c->im, NK_MatMul, imp_dname(c->im, c->name, suffix), ops, 2, imp_ty(c->im, c->elem, dims, 2));
}

static struct value apply_fn(struct rnn *c, const struct rnn_fn *f, struct value x, const char *suffix)
{
	struct importer *im = c->im;
	const char *name = imp_dname(im, c->name, suffix);
	struct value r;
	switch (f->kind) {
	case ACT_RELU:
		return imp_b_unary(im, NK_Relu, name, x);
	case ACT_TANH:
		return imp_b_unary(im, NK_Tanh, name, x);
	case ACT_SIGMOID:
		return imp_b_unary(im, NK_Sigmoid, name, x);
	case ACT_SOFTPLUS:
		return imp_b_unary(im, NK_SoftPlus, name, x);
	case ACT_LEAKY:
	case ACT_ELU:
		r = imp_b_unary(im, f->kind == ACT_LEAKY ? NK_LeakyRelu : NK_Elu, name, x);
		if (r.node)
			node_set_float(im->m, r.node, AN_alpha, f->alpha);
		return r;
	case ACT_AFFINE: {
		/* one call per statement: the order of the nodes does not depend
		 * on the compiler's order of evaluating arguments */
		struct value b = rnn_splat(c, f->beta), a = rnn_splat(c, f->alpha);
		return bin(c, NK_Add, bin(c, NK_Mul, x, a, suffix), b, suffix);
	}
	case ACT_SCALEDTANH: {
		struct value b = rnn_splat(c, f->beta);
		r = imp_b_unary(im, NK_Tanh, name, bin(c, NK_Mul, x, b, suffix));
		struct value a = rnn_splat(c, f->alpha);
		return bin(c, NK_Mul, r, a, suffix);
	}
	case ACT_HARDSIGMOID: {
		struct value b = rnn_splat(c, f->beta), a = rnn_splat(c, f->alpha);
		r = bin(c, NK_Add, bin(c, NK_Mul, x, a, suffix), b, suffix);
		r = imp_b_unary(im, NK_Clip, name, r);
		if (r.node) {
			node_set_float(im->m, r.node, AN_min, 0);
			node_set_float(im->m, r.node, AN_max, 1);
		}
		return r;
	}
	case ACT_SOFTSIGN: {
		struct value one = rnn_splat(c, 1);
		r = bin(c, NK_Add, imp_b_unary(im, NK_Abs, name, x), one, suffix);
		return bin(c, NK_Div, x, r, suffix);
	}
	case ACT_THRESH: {
		struct value ops[2] = {rnn_splat(c, f->alpha), x};
		struct value m = imp_b_node(im, NK_CmpLT, name, ops, 2,
					x.node ? type_with_elem(im->tc, val_type(x), EK_BOOL) : NULL);
		struct value sops[3] = {m, x, rnn_splat(c, 0)};
		return imp_b_node(im, NK_Select, name, sops, 3, x.node ? val_type(x) : NULL);
	}
	}
	unreachable("unknown recurrent activation");
}

/* clip (when asked), then the activation */
static struct value gate(struct rnn *c, const struct rnn_fn *f, struct value pre, const char *suffix)
{
	if (c->clip && pre.node) {
		pre = imp_b_unary(c->im, NK_Clip, imp_dname(c->im, c->name, "clip"), pre);
		if (pre.node) {
			node_set_float(c->im->m, pre.node, AN_min, -c->clipv);
			node_set_float(c->im->m, pre.node, AN_max, c->clipv);
		}
	}
	return apply_fn(c, f, pre, suffix);
}

/* The input contributions of gate g of direction d for every step:
 * [S * B, H], with bias wb (+ rb when with_rb). */
static struct value gate_inputs(struct rnn *c, unsigned d, unsigned g, bool with_rb)
{
	struct value wt = weight_t(c, c->W, d, g * c->H, c->H, c->I, "w");
	struct value b;
	if (c->Bias.node) {
		b = vec(c, c->Bias, d, g * c->H, "wb");
		if (with_rb) {
			struct value rb = vec(c, c->Bias, d, (c->G + g) * c->H, "rb");
			b = bin(c, NK_Add, b, rb, "bias");
		}
	} else {
		uint64_t hd[1] = {c->H};
		b = imp_b_splat_const(c->im, imp_dname(c->im, c->name, "bias"), imp_ty(c->im, c->elem, hd, 1), 0);
	}
	return fully_connected(c, c->X2, wt, b, "x");
}

/* rows of step t of an [S * B, H] value */
static struct value step_rows(struct rnn *c, struct value all, uint64_t t)
{
	int64_t st[2] = {(int64_t)(t * c->B), 0};
	uint64_t sd[2] = {c->B, c->H};
	return slice(c, all, st, sd, 2, "xt");
}

/* x W + H R of step t: the MatMul first, then the slice of the step's
 * input rows (one call per statement, so the node order does not depend on
 * the compiler's order of evaluating arguments) */
static struct value step_pre(struct rnn *c, struct value xall, uint64_t t, struct value h, struct value rt)
{
	struct value hr = matmul(c, h, rt, "hr");
	struct value xt = step_rows(c, xall, t);
	return bin(c, NK_Add, xt, hr, "pre");
}

/* a [B, H] per-direction state from a [D, B, H] tensor (NULL node: zeros) */
static struct value init_state(struct rnn *c, struct value s, unsigned d, const char *suffix)
{
	if (!s.node)
		return rnn_splat(c, 0);
	int64_t st[3] = {d, 0, 0};
	uint64_t sd[3] = {1, c->B, c->H}, md[2] = {c->B, c->H};
	return imp_b_reshape(c->im, slice(c, s, st, sd, 3, suffix), md, 2, imp_dname(c->im, c->name, suffix));
}

/* peephole term P[d, k * H ..] * C, or NULL node when there is no P */
static struct value peep(struct rnn *c, unsigned d, unsigned k, struct value cs)
{
	if (!c->P.node)
		return no_value;
	uint64_t bd[2] = {c->B, c->H};
	struct value p = vec(c, c->P, d, k * c->H, "p");
	p = imp_b_broadcast(c->im, p, bd, 2, imp_dname(c->im, c->name, "pb"));
	return bin(c, NK_Mul, p, cs, "peep");
}

static struct value add_opt(struct rnn *c, struct value a, struct value b)
{
	return b.node ? bin(c, NK_Add, a, b, "pre") : a;
}

/* Unrolls direction d; hs[t] receives the hidden state of step t (in time
 * order), *hlast and *clast the final states. */
static int rnn_direction(struct rnn *c, int kind, unsigned d, bool reverse, struct value h0, struct value c0,
			 bool lbr, bool input_forget, struct value *hs, struct value *hlast, struct value *clast)
{
	const struct rnn_fn *fn = c->fn[d];
	struct value xin[4], rt[4];
	for (unsigned g = 0; g < c->G; g++) {
		/* GRU's hidden gate keeps Rbh for the reset product */
		bool gru_h = kind == 1 && g == 2;
		xin[g] = gate_inputs(c, d, g, !gru_h);
		rt[g] = weight_t(c, c->R, d, g * c->H, c->H, c->H, "r");
	}
	struct value rbh = no_value;
	if (kind == 1) {
		if (c->Bias.node)
			rbh = vec(c, c->Bias, d, 5 * c->H, "rbh");
		else {
			uint64_t hd[1] = {c->H};
			rbh = imp_b_splat_const(c->im, imp_dname(c->im, c->name, "rbh"), imp_ty(c->im, c->elem, hd, 1), 0);
		}
	}
	struct value h = init_state(c, h0, d, "h0"), cs = kind == 2 ? init_state(c, c0, d, "c0") : no_value;
	for (uint64_t s = 0; s < c->S; s++) {
		uint64_t t = reverse ? c->S - 1 - s : s;
		if (kind == 0) {
			struct value pre = step_pre(c, xin[0], t, h, rt[0]);
			h = gate(c, &fn[0], pre, "h");
		} else if (kind == 1) {
			/* gates z, r, h */
			struct value z = gate(c, &fn[0],
					      step_pre(c, xin[0], t, h, rt[0]), "z");
			struct value r = gate(c, &fn[0],
					      step_pre(c, xin[1], t, h, rt[1]), "r");
			struct value rec;
			if (lbr)
				rec = bin(c, NK_Mul, r, fully_connected(c, h, rt[2], rbh, "hr"), "rh");
			else
				rec = fully_connected(c, bin(c, NK_Mul, r, h, "rh"), rt[2], rbh, "hr");
			struct value hh = gate(c, &fn[1], bin(c, NK_Add, step_rows(c, xin[2], t), rec, "pre"), "hh");
			/* H = (1 - z) * hh + z * H = hh + z * (H - hh) */
			h = bin(c, NK_Add, hh, bin(c, NK_Mul, z, bin(c, NK_Sub, h, hh, "d"), "zd"), "h");
		} else {
			/* gates i, o, f, c; P holds i, o, f */
			struct value pi = step_pre(c, xin[0], t, h, rt[0]);
			struct value i = gate(c, &fn[0], add_opt(c, pi, peep(c, d, 0, cs)), "i");
			struct value f;
			if (input_forget)
				f = bin(c, NK_Sub, rnn_splat(c, 1), i, "f");
			else {
				struct value pf =
					step_pre(c, xin[2], t, h, rt[2]);
				f = gate(c, &fn[0], add_opt(c, pf, peep(c, d, 2, cs)), "f");
			}
			struct value pc = step_pre(c, xin[3], t, h, rt[3]);
			struct value cc = gate(c, &fn[1], pc, "cc");
			struct value ic = bin(c, NK_Mul, i, cc, "ic");
			struct value fc = bin(c, NK_Mul, f, cs, "fc");
			cs = bin(c, NK_Add, fc, ic, "c");
			struct value po = step_pre(c, xin[1], t, h, rt[1]);
			struct value o = gate(c, &fn[0], add_opt(c, po, peep(c, d, 1, cs)), "o");
			h = bin(c, NK_Mul, o, apply_fn(c, &fn[2], cs, "hc"), "h");
		}
		if (!h.node)
			return -1;
		hs[t] = h;
	}
	*hlast = h;
	*clast = cs;
	return 0;
}

/* Concat of n values along dim */
static struct value concat(struct rnn *c, const struct value *v, unsigned n, unsigned dim, const char *name)
{
	return n == 1 ? v[0] : imp_b_concat(c->im, v, n, dim, name);
}

/* the final states [B, H] of every direction as Y_h / Y_c:
 * [D, B, H] (layout 0) or [B, D, H] (layout 1) */
static struct value stack_last(struct rnn *c, const struct value *last, bool layout1, const char *name)
{
	struct value parts[2];
	for (unsigned d = 0; d < c->D; d++) {
		uint64_t d0[3] = {1, c->B, c->H}, d1[3] = {c->B, 1, c->H};
		parts[d] = imp_b_reshape(c->im, last[d], layout1 ? d1 : d0, 3, imp_dname(c->im, name, "dir"));
	}
	return concat(c, parts, c->D, layout1 ? 1 : 0, name);
}

/* a [D, B, H] (or [D, B, I]) input given in layout 1 as [B, D, H] */
static struct value from_layout1(struct rnn *c, struct value v, bool layout1, const char *suffix)
{
	static const unsigned perm[3] = {1, 0, 2};
	return layout1 && v.node ? imp_b_transpose(c->im, v, perm, imp_dname(c->im, c->name, suffix)) : v;
}

/* a float input of rank `rank` with the given dims (0: any), or NULL node */
static struct value shaped_input(struct rnn *c, unsigned i, unsigned rank, const uint64_t *dims, const char *what)
{
	struct tensor *t = imp_in_opt(c->im, i);
	if (!t)
		return no_value;
	struct value v = imp_tval(c->im, t);
	if (!v.node)
		return v;
	const struct type *vt = val_type(v);
	bool ok = vt->rank == rank && vt->elem == c->elem;
	for (unsigned k = 0; ok && k < rank; k++)
		ok = dims[k] == 0 || vt->dims[k] == dims[k];
	if (!ok) {
		char want[96];
		int len = 0;
		for (unsigned k = 0; k < rank && len < 80; k++)
			len += snprintf(want + len, sizeof want - (size_t)len, "%s%llu", k ? " x " : "",
					(unsigned long long)dims[k]);
		imp_op_err(c->im, "%s (input %u) must be of X's element type with shape [%s]", what, i, want);
		return no_value;
	}
	return v;
}

/* RNN, GRU and LSTM */
int imp_op_rnn(struct importer *im, const onnx_node *n)
{
	int kind = strcmp(n->op_type, "RNN") == 0 ? 0 : strcmp(n->op_type, "GRU") == 0 ? 1 : 2;
	static const unsigned gates[3] = {1, 3, 4}, nfns[3] = {1, 2, 3};
	static const enum rnn_act defs[3][3] = {{ACT_TANH, ACT_TANH, ACT_TANH},
						{ACT_SIGMOID, ACT_TANH, ACT_TANH},
						{ACT_SIGMOID, ACT_TANH, ACT_TANH}};
	struct rnn c;
	memset(&c, 0, sizeof c);
	c.im = im;
	c.G = gates[kind];
	/* a base name for helpers: the first output that has one */
	c.name = n->name && *n->name ? n->name : n->op_type;
	for (unsigned i = n->n_output; i-- > 0;)
		if (*imp_out_name(im, i))
			c.name = imp_out_name(im, i);
	struct value x = imp_in_val(im, 0);
	if (!x.node)
		return -1;
	const struct type *xt = val_type(x);
	c.elem = xt->elem;
	if (!elem_is_float((enum elem_kind)c.elem))
		return imp_op_err(im, "X must be floating point");
	if (xt->rank != 3)
		return imp_op_err(im, "X must have rank 3, got %u", xt->rank);
	int64_t layout = imp_attr_i(n, "layout", 0);
	if (layout != 0 && layout != 1)
		return imp_op_err(im, "layout must be 0 or 1, got %lld", (long long)layout);
	bool l1 = layout == 1;
	const char *dir = imp_attr_s(im, n, "direction", "forward");
	if (strcmp(dir, "forward") != 0 && strcmp(dir, "reverse") != 0 && strcmp(dir, "bidirectional") != 0)
		return imp_op_err(im, "direction \"%s\" is not forward, reverse or bidirectional", dir);
	c.D = strcmp(dir, "bidirectional") == 0 ? 2 : 1;
	int64_t hs = imp_attr_i(n, "hidden_size", 0);
	c.S = xt->dims[l1 ? 1 : 0];
	c.B = xt->dims[l1 ? 0 : 1];
	c.I = xt->dims[2];
	struct tensor *wt = imp_in_req(im, 1);
	if (!wt)
		return -1;
	if (hs <= 0 && wt->rank == 3 && wt->dims[1] % c.G == 0)
		hs = (int64_t)(wt->dims[1] / c.G);
	if (hs <= 0 || hs > 1 << 20)
		return imp_op_err(im, "hidden_size must be positive, got %lld", (long long)hs);
	c.H = (uint64_t)hs;
	if (c.S == 0 || c.B == 0)
		return imp_op_err(im, "empty sequences are not supported");
	if (c.S > 4096)
		return imp_op_err(im, "a sequence of %llu steps is too long to unroll (4096 at most)",
			      (unsigned long long)c.S);
	const Onnx__AttributeProto *ca = imp_attr(n, "clip");
	if (ca && ca->has_f) {
		c.clip = true;
		c.clipv = imp_f32_short(ca->f);
		if (!(c.clipv >= 0))
			return imp_op_err(im, "clip must be non-negative");
	}
	if (rnn_parse_fns(&c, n, nfns[kind], defs[kind]))
		return -1;
	bool lbr = kind == 1 && imp_attr_i(n, "linear_before_reset", 0) != 0;
	bool input_forget = kind == 2 && imp_attr_i(n, "input_forget", 0) != 0;

	uint64_t wd[3] = {c.D, c.G * c.H, c.I}, rd[3] = {c.D, c.G * c.H, c.H}, bd[2] = {c.D, 2 * c.G * c.H};
	uint64_t sd[3] = {l1 ? c.B : c.D, l1 ? c.D : c.B, c.H}, pd[2] = {c.D, 3 * c.H};
	c.W = shaped_input(&c, 1, 3, wd, "W");
	c.R = imp_in_req(im, 2) ? shaped_input(&c, 2, 3, rd, "R") : no_value;
	c.Bias = shaped_input(&c, 3, 2, bd, "B");
	struct value h0 = shaped_input(&c, 5, 3, sd, "initial_h");
	struct value c0 = kind == 2 ? shaped_input(&c, 6, 3, sd, "initial_c") : no_value;
	c.P = kind == 2 ? shaped_input(&c, 7, 2, pd, "P") : no_value;
	if (!c.W.node || !c.R.node || (imp_in_opt(im, 3) && !c.Bias.node) || (imp_in_opt(im, 5) && !h0.node) ||
	    (kind == 2 && ((imp_in_opt(im, 6) && !c0.node) || (imp_in_opt(im, 7) && !c.P.node))))
		return -1;
	if (imp_in_opt(im, 4)) {
		struct tensor *sl = imp_in_opt(im, 4);
		const int64_t *v = imp_t_ints(im, sl);
		if (!v || !imp_dt_is_int(sl->dtype))
			return imp_op_err(im, "sequence_lens must be known at import (only lengths equal to the sequence "
					  "length are supported)");
		if (imp_t_numel(sl) != c.B)
			return imp_op_err(im, "sequence_lens must hold %llu lengths, got %llu", (unsigned long long)c.B,
				      (unsigned long long)imp_t_numel(sl));
		for (uint64_t b = 0; b < c.B; b++)
			if (v[b] != (int64_t)c.S)
				return imp_op_err(im, "sequence_lens[%llu] = %lld: sequences shorter than the sequence "
						  "length (%llu) are not supported",
					      (unsigned long long)b, (long long)v[b], (unsigned long long)c.S);
	}
	h0 = from_layout1(&c, h0, l1, "h0t");
	c0 = from_layout1(&c, c0, l1, "c0t");
	static const unsigned perm[3] = {1, 0, 2};
	struct value xs = l1 ? imp_b_transpose(im, x, perm, imp_dname(im, c.name, "xt")) : x;
	uint64_t x2d[2] = {c.S * c.B, c.I};
	c.X2 = imp_b_reshape(im, xs, x2d, 2, imp_dname(im, c.name, "x2"));

	struct value *hstates = arena_alloc(&im->scratch, 2 * c.S * sizeof *hstates);
	struct value hlast[2], clast[2];
	for (unsigned d = 0; d < c.D; d++) {
		bool rev = strcmp(dir, "reverse") == 0 || d == 1;
		if (rnn_direction(&c, kind, d, rev, h0, c0, lbr, input_forget, hstates + d * c.S, &hlast[d], &clast[d]))
			return -1;
	}
	int rc = 0;
	if (imp_out_used(im, 0)) {
		/* Y: [S, D, B, H] (layout 0) or [B, S, D, H] (layout 1) */
		const char *yname = imp_out_name(im, 0);
		struct value *steps = arena_alloc(&im->scratch, c.S * sizeof *steps);
		for (uint64_t t = 0; t < c.S; t++) {
			struct value dirs[2];
			for (unsigned d = 0; d < c.D; d++) {
				uint64_t d0[4] = {1, 1, c.B, c.H}, d1[4] = {c.B, 1, 1, c.H};
				dirs[d] = imp_b_reshape(im, hstates[d * c.S + t], l1 ? d1 : d0, 4, imp_dname(im, yname, "step"));
			}
			steps[t] = concat(&c, dirs, c.D, l1 ? 2 : 1, imp_dname(im, yname, "dirs"));
		}
		if (c.S > 0xffffffffu)
			return imp_op_err(im, "too many steps");
		rc |= imp_set_out(im, 0, concat(&c, steps, (unsigned)c.S, l1 ? 1 : 0, yname));
	}
	if (imp_out_used(im, 1))
		rc |= imp_set_out(im, 1, stack_last(&c, hlast, l1, imp_out_name(im, 1)));
	if (kind == 2 && imp_out_used(im, 2))
		rc |= imp_set_out(im, 2, stack_last(&c, clast, l1, imp_out_name(im, 2)));
	return rc ? -1 : 0;
}
