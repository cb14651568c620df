/* fold-layernorm.c - raises the arithmetic form of layer normalization.
 *
 * Over a float tensor x of type t and rank r, with R = axes [a, r) (a
 * contiguous suffix of t's axes) and n the number of values in a row:
 *
 *   mean = M_R(x)              d = Sub(x, E(mean))
 *   sq   = Pow(d, 2) or Mul(d, d)
 *   var  = M_R(sq)             ve = Add(var, eps) (either way round)
 *   nrm  = Div(d, E(Sqrt(ve)))  or  Mul(d, E(Rsqrt(ve))) (either way round)
 *   Add(Mul(nrm, S(scale)), S(bias))   (each either way round)
 *   -> LayerNormalization(x, scale', bias') {axis = a, epsilon = eps}
 *
 * M_R(v) is a biased mean over exactly R: BatchedReduceMean(v) {axes = R},
 * Mul(BatchedReduceAdd(v) {axes = R}, 1/n) or Div(BatchedReduceAdd(v), n),
 * with 1/n and n splats equal to the number rounded to the kind (a sum
 * divided by n - 1, the unbiased variance, is not a mean). E(s) puts a
 * per-row statistic back to t's shape: a Broadcast whose input, aligned to
 * t, has t's dims before a and 1s from a on. Reshapes may sit anywhere
 * between a reduction and its E (they keep the row order): the ONNX
 * importer's keepdims form, Reshape then Add and Sqrt, and the lowered form
 * (lower-norm.c), Add and Rsqrt then Reshape, both match. eps and the 2 are
 * splats (passutil.h), eps finite and >= 0. S(v) gives every row the same
 * vector: a Broadcast whose input, aligned to t, has 1s before a and from a
 * on 1 or t's dim (or v itself when t's dims before a are all 1); scale'
 * and bias' are v reshaped or broadcast to t's dims from a on, the shape
 * LayerNormalization wants.
 *
 * Only when every node of the pattern but the Add has one use (d: exactly
 * its uses in sq and nrm), nothing carries a predicate and all values share
 * one float kind. The unused nodes are left to dce.
 *
 * Numerics: the LayerNormalization kernel computes the mean and the
 * two-pass variance in double and rounds once; the arithmetic form rounds
 * after every node (and 1/n to the kind): equal within float rounding.
 * Requires: a verified function. Preserves: validity and result types.
 */
#include "passes/pass.h"
#include "passes/passutil.h"

#include <math.h>
#include <stdio.h>

/* One match in progress: t the normalized type, a the first normalized
 * axis (GLOW_MAX_RANK until a reduction fixes it). */
struct lnm {
	struct module *m;
	const struct type *t;
	unsigned a;
};

/* n has one use and no predicate: an intermediate the fold may drop. */
static bool single(const struct node *n)
{
	return !node_has_pred(n) && node_num_uses(n, -1) == 1;
}

/* v with single-use Reshapes skipped (they keep the row order of a
 * statistic); a NULL node if a skipped Reshape has another use. */
static struct value skip_reshapes(struct value v)
{
	while (v.node->kind == NK_Reshape) {
		if (!single(v.node)) {
			v.node = NULL;
			return v;
		}
		v = op_val(v.node, 0);
	}
	return v;
}

/* If reduction r of kind k reduces a value of type t over a contiguous
 * suffix [a, rank) of its axes, with a the one of the match (or the first
 * found), returns its input. */
static bool reduces_rows(struct lnm *lm, const struct node *r, unsigned k, struct value *in)
{
	if (r->kind != k || node_has_pred(r) || op_type(r, 0) != lm->t)
		return false;
	unsigned na, rank = lm->t->rank;
	const int64_t *axes = node_ints(r, AN_axes, &na);
	if (na == 0 || na > rank)
		return false;
	unsigned a = rank - na;
	bool seen[GLOW_MAX_RANK] = {false};
	for (unsigned i = 0; i < na; i++) {
		if (axes[i] < (int64_t)a || axes[i] >= (int64_t)rank || seen[axes[i]])
			return false;
		seen[axes[i]] = true;
	}
	if (lm->a != GLOW_MAX_RANK && lm->a != a)
		return false;
	lm->a = a;
	*in = op_val(r, 0);
	return true;
}

/* x rounded to t's element kind. */
static double in_kind(const struct type *t, double x)
{
	uint8_t buf[16];
	pu_store(t, buf, 0, x);
	return pu_load(t, buf, 0);
}

/* If v is M_R(in) (single-use nodes), sets *in. */
static bool mean_of(struct lnm *lm, struct value v, struct value *in)
{
	v = skip_reshapes(v);
	if (!v.node || !single(v.node))
		return false;
	struct node *n = v.node;
	if (n->kind == NK_BatchedReduceMean)
		return reduces_rows(lm, n, NK_BatchedReduceMean, in);
	if (n->kind != NK_Mul && n->kind != NK_Div)
		return false;
	for (unsigned side = 0; side < (n->kind == NK_Mul ? 2u : 1u); side++) {
		double c;
		if (!pu_splat_of(lm->m, op_val(n, 1 - side), &c))
			continue;
		struct value s = skip_reshapes(op_val(n, side));
		if (!s.node || !single(s.node) || !reduces_rows(lm, s.node, NK_BatchedReduceAdd, in))
			continue;
		uint64_t cnt = 1;
		for (unsigned i = lm->a; i < lm->t->rank; i++)
			cnt *= lm->t->dims[i];
		if (cnt == 0)
			return false;
		double want = n->kind == NK_Mul ? 1.0 / (double)cnt : (double)cnt;
		return in_kind(lm->t, c) == in_kind(lm->t, want); /* a Splat node holds a double */
	}
	return false;
}

/* The input of Broadcast b aligned to t: dims[i] for every axis i of t (1
 * where the input has no dimension). */
static void aligned_dims(const struct node *b, const struct type *t, uint64_t *dims)
{
	const struct type *it = op_type(b, 0);
	unsigned axis = (unsigned)node_int(b, AN_axis);
	for (unsigned i = 0; i < t->rank; i++)
		dims[i] = i >= axis && i < axis + it->rank ? it->dims[i - axis] : 1;
}

/* If v is a single-use Broadcast to t, returns it, else NULL. */
static struct node *bcast_of(const struct lnm *lm, struct value v)
{
	struct node *b = v.node;
	return b->kind == NK_Broadcast && single(b) && val_type(v) == lm->t ? b : NULL;
}

/* Broadcast b (from bcast_of) is E(s) for the match's axis a. */
static bool expands_rows(const struct lnm *lm, const struct node *b)
{
	uint64_t dims[GLOW_MAX_RANK];
	aligned_dims(b, lm->t, dims);
	for (unsigned i = 0; i < lm->t->rank; i++)
		if (dims[i] != (i < lm->a ? lm->t->dims[i] : 1))
			return false;
	return true;
}

/* If n is k(x, splat) or k(splat, x) (Add: either way round; other kinds
 * only with the splat second), sets *x and *c. */
static bool with_splat(struct module *m, const struct node *n, unsigned k, struct value *x, double *c)
{
	if (n->kind != k || node_has_pred(n))
		return false;
	for (unsigned side = 0; side < (k == NK_Add || k == NK_Mul ? 2u : 1u); side++)
		if (pu_splat_of(m, op_val(n, 1 - side), c)) {
			*x = op_val(n, side);
			return true;
		}
	return false;
}

/* If sd (the statistic under nrm's E) is Sqrt(ve) (rsqrt false) or
 * Rsqrt(ve) (rsqrt true), ve = Add(var, eps), var = M_R(sq), sets *sq and
 * *eps. */
static bool deviation(struct lnm *lm, struct value sd, bool rsqrt, struct value *sq, double *eps)
{
	sd = skip_reshapes(sd);
	if (!sd.node || !single(sd.node) || sd.node->kind != (rsqrt ? NK_Rsqrt : NK_Sqrt))
		return false;
	struct value ve = skip_reshapes(op_val(sd.node, 0)), var;
	if (!ve.node || !single(ve.node) || !with_splat(lm->m, ve.node, NK_Add, &var, eps))
		return false;
	if (!isfinite(*eps) || *eps < 0)
		return false;
	return mean_of(lm, var, sq);
}

/* If y (of type t) is nrm = Div(d, E(Sqrt(..))) or Mul(d, E(Rsqrt(..))),
 * matches down to x; sets *x and *eps. */
static bool normalized(struct lnm *lm, struct node *nrm, struct value *x, double *eps)
{
	if (!single(nrm) || (nrm->kind != NK_Div && nrm->kind != NK_Mul))
		return false;
	bool rsqrt = nrm->kind == NK_Mul;
	for (unsigned side = 0; side < (rsqrt ? 2u : 1u); side++) {
		struct node *d = nrm->ops[side].def, *b = bcast_of(lm, op_val(nrm, 1 - side));
		struct value sq;
		if (!b || d->kind != NK_Sub || node_has_pred(d) || node_type(d) != lm->t)
			continue;
		lm->a = GLOW_MAX_RANK; /* the reductions fix it */
		if (!deviation(lm, op_val(b, 0), rsqrt, &sq, eps) || !expands_rows(lm, b))
			continue;
		/* sq = Pow(d, 2) or Mul(d, d), and d has no other uses */
		struct node *s = sq.node;
		unsigned d_uses;
		if (!single(s) || node_type(s) != lm->t)
			continue;
		if (s->kind == NK_Pow && s->ops[0].def == d && pu_is_splat(lm->m, op_val(s, 1), 2.0))
			d_uses = 2;
		else if (s->kind == NK_Mul && s->ops[0].def == d && s->ops[1].def == d)
			d_uses = 3;
		else
			continue;
		if (node_num_uses(d, -1) != d_uses)
			continue;
		/* d = Sub(x, E(M_R(x))) */
		struct node *mb = bcast_of(lm, op_val(d, 1));
		struct value mx;
		if (!mb || !expands_rows(lm, mb) || !mean_of(lm, op_val(mb, 0), &mx))
			continue;
		if (mx.node != d->ops[0].def || mx.res != d->ops[0].res)
			continue;
		*x = mx;
		return true;
	}
	return false;
}

/* If v is S(p), sets *p and *axis (where p's dims sit in t). */
static bool per_row_view(const struct lnm *lm, struct value v, struct value *p, unsigned *axis)
{
	const struct type *t = lm->t;
	uint64_t dims[GLOW_MAX_RANK];
	*p = v;
	*axis = 0;
	if (v.node->kind == NK_Broadcast && !node_has_pred(v.node)) {
		aligned_dims(v.node, t, dims);
		*p = op_val(v.node, 0);
		*axis = (unsigned)node_int(v.node, AN_axis);
	} else {
		for (unsigned i = 0; i < t->rank; i++)
			dims[i] = t->dims[i];
	}
	if (!type_same_elem(val_type(*p), t))
		return false;
	for (unsigned i = 0; i < t->rank; i++)
		if (i < lm->a ? dims[i] != 1 : dims[i] != 1 && dims[i] != t->dims[i])
			return false;
	return true;
}

/* p (from per_row_view) as a value of t's dims from a on: p itself, or a
 * Reshape dropping its dims before a (all 1) and a Broadcast of what is
 * left, created before n. */
static struct value per_row(struct func *f, const struct lnm *lm, struct value p, unsigned axis, struct node *n,
			    const char *what)
{
	const struct type *t = lm->t;
	unsigned a = lm->a;
	const struct type *want = type_with_dims(f->mod->types, t, t->dims + a, t->rank - a);
	const struct type *pt = val_type(p);
	if (pt == want)
		return p;
	char buf[64];
	snprintf(buf, sizeof buf, "%.40s.%s", n->name, what);
	if (axis < a) {
		unsigned skip = a - axis < pt->rank ? a - axis : pt->rank;
		const struct type *rt = type_with_dims(f->mod->types, pt, pt->dims + skip, pt->rank - skip);
		p = node_val(pu_new_reshape(f, p, rt, n, buf), 0);
		axis = a; /* what is left (maybe nothing) starts at a */
		if (rt == want)
			return p;
	}
	struct node *b = node_create1(f, NK_Broadcast, buf, &p, 1, want, n, n->loc);
	node_set_int(f->mod, b, AN_axis, axis - a);
	return node_val(b, 0);
}

static bool fold(struct func *f, struct node *n)
{
	const struct type *t = node_type(n);
	if (node_has_pred(n) || !elem_is_float((enum elem_kind)t->elem) || t->rank == 0)
		return false;
	struct lnm lm = {f->mod, t, GLOW_MAX_RANK};
	for (unsigned side = 0; side < 2; side++) {
		struct node *mul = n->ops[side].def;
		if (mul->kind != NK_Mul || !single(mul))
			continue;
		for (unsigned ms = 0; ms < 2; ms++) {
			struct value x;
			double eps;
			if (!normalized(&lm, mul->ops[ms].def, &x, &eps) || val_type(x) != t)
				continue;
			struct value sp, bp;
			unsigned sa, ba;
			if (!per_row_view(&lm, op_val(mul, 1 - ms), &sp, &sa) ||
			    !per_row_view(&lm, op_val(n, 1 - side), &bp, &ba))
				continue;
			struct value ops[3] = {x, per_row(f, &lm, sp, sa, n, "scale"),
					       per_row(f, &lm, bp, ba, n, "bias")};
			struct node *ln = pu_replace_new(f, n, NK_LayerNormalization, ops, 3);
			node_set_int(f->mod, ln, AN_axis, lm.a);
			node_set_float(f->mod, ln, AN_epsilon, eps);
			return true;
		}
	}
	return false;
}

bool fold_layernorm_run(struct func *f, struct pass_ctx *ctx)
{
	return pu_fold_each(f, ctx, NK_Add, NK_Add, fold, "Number of layer-normalization patterns folded into LayerNormalization");
}
