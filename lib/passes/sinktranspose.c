/* sinktranspose.c - sink Transposes towards the outputs so layout pairs cancel.
 *
 * The ONNX importer wraps every NHWC kind in a pair of layout Transposes
 * (NCHW->NHWC before, NHWC->NCHW after), so a network in NCHW reads
 * T -> Convolution -> T' -> BatchNormalization -> Relu -> T -> Convolution.
 * This pass moves a Transpose below the node that uses it, rewriting the
 * node to work in the Transpose's input layout, until it meets another
 * Transpose and the two merge (into nothing when they are inverses).
 *
 * With T = Transpose(x, s) (result dim i is x dim s[i]):
 *   Op(T)                    -> T(Op(x))               elementwise unary kinds (attributes kept)
 *   Op(T, b, ...)            -> T(Op(x, b', ...))      elementwise kinds with several operands,
 *                                                       when every other operand b can be taken to
 *                                                       x's layout: another Transpose with shuffle s
 *                                                       (b' is its input), a splat (b' a Splat), a
 *                                                       Constant (b' = Transpose(b, inverse of s),
 *                                                       folded by transpose-constants) or a Broadcast
 *                                                       of a vector (b' a Broadcast at the moved axis)
 *   BatchNormalization(T)    -> T(BN(x)), channel_idx c becomes s[c]
 *   Concat(T1..Tn) {dim d}   -> T(Concat(x1..xn)) {dim s[d]}, all with shuffle s
 *   Pad(T) {pads}            -> T(Pad(x)) with the pads permuted
 *   Slice(T) {start}         -> T(Slice(x)) with the start permuted
 *   BatchedReduce*(T) {axes} -> T2(Reduce(x)) with axes s[a]; T2 is the order the kept
 *                               dimensions end up in, left out when it is the identity
 *   Transpose(T)             -> Transpose(x) with the composed shuffle, or x itself when
 *                               the composition is the identity
 *
 * Only Transposes of computed values move: a Transpose of a Constant or a
 * splat is folded (transpose-constants, optimize-splat) rather than sunk, so
 * two constant operands cannot make the rewrites ping-pong. Nodes with a
 * predicate are left alone. Every rewrite moves data only, so results are
 * bit-exact.
 *
 * The node list is walked once as a worklist; when a Transpose is created
 * below a node, the users of the new Transpose are queued again, so a chain
 * of sinkable nodes is crossed in one run. Declared PASS_FIXED_POINT in the
 * pipeline anyway, since merged Transposes can open new opportunities above.
 *
 * Requires: a verified function. Preserves: validity; the old node and the
 * old Transpose go once unused (the Transpose may stay for other users).
 */
#include "passes/pass.h"
#include "passes/passutil.h"
#include "support/vec.h"

#include <stdio.h>
#include <string.h>

typedef VEC(struct node *) node_vec;

struct sink {
	struct func *f;
	struct module *m;
	node_vec work;
	uint64_t sunk, merged, cancelled;
};

/* The shuffle of a Transpose node (rank entries). */
static const int64_t *shuffle_of(const struct node *t)
{
	unsigned n;
	return node_ints(t, AN_shuffle, &n);
}

/* A Transpose of a computed value: the kind this pass moves. */
static bool movable_transpose(struct module *m, struct value v)
{
	double x;
	if (v.node->kind != NK_Transpose || node_has_pred(v.node))
		return false;
	struct value in = op_val(v.node, 0);
	return in.node->kind != NK_Constant && !pu_splat_of(m, in, &x);
}

static bool same_shuffle(const struct node *t, const int64_t *s, unsigned r)
{
	return t->kind == NK_Transpose && memcmp(shuffle_of(t), s, r * sizeof(int64_t)) == 0;
}

/* The single non-unit dimension of t (-1: none, -2: several). */
static int vector_dim(const struct type *t)
{
	int d = -1;
	for (unsigned i = 0; i < t->rank; i++)
		if (t->dims[i] != 1) {
			if (d >= 0)
				return -2;
			d = (int)i;
		}
	return d;
}

/* Whether operand value b (of an elementwise node, in the layout of T(x, s))
 * can be expressed in x's layout without moving a computed tensor. */
static bool can_retarget(struct module *m, struct value b, const int64_t *s, unsigned r)
{
	double x;
	if (same_shuffle(b.node, s, r) && !node_has_pred(b.node))
		return true;
	if (pu_splat_of(m, b, &x) || b.node->kind == NK_Constant)
		return true;
	if (b.node->kind == NK_Broadcast && !node_has_pred(b.node))
		return vector_dim(op_type(b.node, 0)) != -2;
	return false;
}

/* b in x's layout (can_retarget(b) holds); inv is the inverse of s. */
static struct value retarget(struct sink *sk, struct value b, const int64_t *s, const int64_t *inv, unsigned r,
			     struct node *before)
{
	struct type_ctx *tc = sk->m->types;
	double x;
	if (same_shuffle(b.node, s, r) && !node_has_pred(b.node))
		return op_val(b.node, 0);
	const struct type *nt = pu_transposed_type(tc, val_type(b), inv);
	if (pu_splat_of(sk->m, b, &x))
		return node_val(pu_new_splat(sk->f, nt, x, before, before->name), 0);
	if (b.node->kind == NK_Constant)
		return node_val(pu_new_transpose(sk->f, b, inv, before, b.node->name), 0);
	/* Broadcast of a vector (or of ones): its one non-unit dimension lands
	 * at result dim a, which x's layout puts at s[a] (inv[s[a]] == a). */
	struct node *bc = b.node;
	struct value in = op_val(bc, 0);
	const struct type *it = val_type(in);
	int j = vector_dim(it);
	int64_t axis = node_int(bc, AN_axis);
	uint64_t len = j >= 0 ? it->dims[j] : 1;
	int64_t na = j >= 0 ? s[axis + j] : 0;
	const struct type *vt = type_with_dims(tc, it, &len, 1);
	if (vt != it)
		in = node_val(pu_new_reshape(sk->f, in, vt, before, bc->name), 0);
	struct node *nb = node_create1(sk->f, NK_Broadcast, bc->name, &in, 1, nt, before, bc->loc);
	node_set_int(sk->m, nb, AN_axis, na);
	return node_val(nb, 0);
}

/* Replaces n (whose result is now T(nn, s)) and queues the new Transpose's users. */
static void finish(struct sink *sk, struct node *n, struct node *nn, const int64_t *s)
{
	struct node *t = pu_new_transpose(sk->f, node_val(nn, 0), s, n, n->name);
	glow_assert(t->types[0] == n->types[0]);
	pu_replace(sk->f, n, node_val(t, 0));
	for (struct use *u = t->uses; u; u = u->next)
		vec_push(&sk->work, use_user(u));
	sk->sunk++;
}

/* A copy of n (same kind and attributes) over ops, of type ty, before n;
 * t is the Transpose n is moved past. The copy computes n's value in the
 * layout of t's input x, so when x is named after t ("c1.nhwc" under "c1",
 * as the importer names layouts) the copy is named after n the same way
 * ("r1.nhwc" for n "r1"); otherwise after n (the builder adds a counter). */
static struct node *clone_with(struct sink *sk, struct node *n, const struct node *t, const struct value *ops,
			       unsigned nops, const struct type *ty)
{
	const char *name = n->name, *xn = t->ops[0].def->name;
	char buf[256];
	size_t tl = t->name ? strlen(t->name) : 0;
	if (name && xn && tl && strncmp(xn, t->name, tl) == 0 && xn[tl] == '.' && xn[tl + 1]) {
		int len = snprintf(buf, sizeof buf, "%s%s", name, xn + tl);
		if (len > 0 && (size_t)len < sizeof buf)
			name = buf;
	}
	struct node *c = node_create1(sk->f, n->kind, name, ops, nops, ty, n, n->loc);
	node_copy_attrs(sk->m, c, n);
	return c;
}

/* The Transpose a rule moves below a node: t, the rank r of its input x,
 * its shuffle s and the inverse inv. */
struct moving {
	struct node *t;
	unsigned r;
	const int64_t *s;
	int64_t inv[GLOW_MAX_RANK];
};

/* Fills *mv from operand i of n when that is a movable Transpose (the
 * first question of every rule: sink_node asks it for the table's rules,
 * sink_elementwise for each operand); false, with *mv unset, otherwise. */
static bool moving_at(struct sink *sk, struct node *n, unsigned i, struct moving *mv)
{
	if (!movable_transpose(sk->m, op_val(n, i)))
		return false;
	mv->t = n->ops[i].def;
	mv->r = op_type(mv->t, 0)->rank;
	mv->s = shuffle_of(mv->t);
	pu_perm_inverse(mv->s, mv->r, mv->inv);
	return true;
}

/* clone_with on the one operand x, the Transpose's input: the copy of a
 * one-input node (Pad, Slice, a reduction) in x's layout. */
static struct node *clone_on_input(struct sink *sk, struct node *n, const struct node *t, const struct type *ty)
{
	struct value x = op_val(t, 0);
	return clone_with(sk, n, t, &x, 1, ty);
}

/* finish for a node with one axis attribute an (BatchNormalization's
 * channel, Concat's dim): n's axis i is axis s[i] of x, so its copy c
 * gets that, then c replaces n. */
static void finish_axis(struct sink *sk, struct node *n, struct node *c, const struct moving *mv, enum attr_name an)
{
	node_set_int(sk->m, c, an, mv->s[node_int(n, an)]);
	finish(sk, n, c, mv->s);
}

/* Transpose(Transpose(x)) */
static bool merge_pair(struct sink *sk, struct node *n)
{
	struct node *t = n->ops[0].def;
	if (t->kind != NK_Transpose || node_has_pred(t) || node_has_pred(n))
		return false;
	unsigned r = node_type(n)->rank;
	int64_t s[GLOW_MAX_RANK];
	pu_perm_compose(shuffle_of(t), shuffle_of(n), r, s);
	struct value x = op_val(t, 0);
	if (pu_perm_is_identity(s, r)) {
		pu_replace(sk->f, n, x);
		sk->cancelled++;
		return true;
	}
	node_set_operand(n, 0, x);
	node_set_ints(sk->m, n, AN_shuffle, s, r);
	for (struct use *u = n->uses; u; u = u->next)
		vec_push(&sk->work, use_user(u));
	sk->merged++;
	return true;
}

static bool sink_elementwise(struct sink *sk, struct node *n)
{
	struct moving mv;
	unsigned lead = 0;
	while (lead < n->nops && !moving_at(sk, n, lead, &mv))
		lead++;
	if (lead == n->nops)
		return false;
	for (unsigned i = 0; i < n->nops; i++)
		if (i != lead && !can_retarget(sk->m, op_val(n, i), mv.s, mv.r))
			return false;
	struct value ops[8];
	if (n->nops > GLOW_ARRAY_SIZE(ops))
		return false;
	for (unsigned i = 0; i < n->nops; i++)
		ops[i] = i == lead ? op_val(mv.t, 0) : retarget(sk, op_val(n, i), mv.s, mv.inv, mv.r, n);
	const struct type *ty = pu_transposed_type(sk->m->types, node_type(n), mv.inv);
	finish(sk, n, clone_with(sk, n, mv.t, ops, n->nops, ty), mv.s);
	return true;
}

static bool sink_batchnorm(struct sink *sk, struct node *n, const struct moving *mv)
{
	struct value ops[5];
	for (unsigned i = 0; i < 5; i++)
		ops[i] = i == 0 ? op_val(mv->t, 0) : op_val(n, i);
	struct node *c = clone_with(sk, n, mv->t, ops, 5, op_type(mv->t, 0));
	finish_axis(sk, n, c, mv, AN_channel_idx);
	return true;
}

static bool sink_concat(struct sink *sk, struct node *n, const struct moving *mv)
{
	for (unsigned i = 1; i < n->nops; i++)
		if (!same_shuffle(n->ops[i].def, mv->s, mv->r) || node_has_pred(n->ops[i].def))
			return false;
	VEC(struct value) ops = {0};
	for (unsigned i = 0; i < n->nops; i++)
		vec_push(&ops, op_val(n->ops[i].def, 0));
	const struct type *ty = pu_transposed_type(sk->m->types, node_type(n), mv->inv);
	struct node *c = clone_with(sk, n, mv->t, ops.data, n->nops, ty);
	vec_free(&ops);
	finish_axis(sk, n, c, mv, AN_dim);
	return true;
}

/* Pad and Slice: a per-dimension attribute list permuted into x's order. */
static bool sink_pad_slice(struct sink *sk, struct node *n, const struct moving *mv)
{
	unsigned r = mv->r;
	const int64_t *s = mv->s;
	int64_t a[2 * GLOW_MAX_RANK];
	enum attr_name attr = n->kind == NK_Pad ? AN_pads : AN_start;
	unsigned cnt, per = n->kind == NK_Pad ? 2 : 1;
	const int64_t *old = node_ints(n, attr, &cnt);
	if (cnt != per * r)
		return false;
	for (unsigned k = 0; k < per; k++)
		for (unsigned i = 0; i < r; i++)
			a[k * r + (unsigned)s[i]] = old[k * r + i];
	const struct type *ty = pu_transposed_type(sk->m->types, node_type(n), mv->inv);
	struct node *c = clone_on_input(sk, n, mv->t, ty);
	node_set_ints(sk->m, c, attr, a, per * r);
	finish(sk, n, c, s);
	return true;
}

static bool sink_reduce(struct sink *sk, struct node *n, const struct moving *mv)
{
	struct node *t = mv->t;
	unsigned r = mv->r;
	const int64_t *s = mv->s;
	unsigned cnt;
	const int64_t *axes = node_ints(n, AN_axes, &cnt);
	bool drop[GLOW_MAX_RANK] = {false};
	int64_t na[GLOW_MAX_RANK];
	for (unsigned i = 0; i < cnt; i++) {
		na[i] = s[axes[i]];
		drop[na[i]] = true;
	}
	/* rank among the kept dimensions of x, and the kept x dims */
	int64_t pos[GLOW_MAX_RANK];
	uint64_t dims[GLOW_MAX_RANK];
	unsigned k = 0;
	const struct type *xt = op_type(t, 0);
	for (unsigned d = 0; d < r; d++)
		if (!drop[d]) {
			pos[d] = k;
			dims[k++] = xt->dims[d];
		}
	/* the reduced T result keeps T dims i (not reduced) in order: x dim s[i] */
	int64_t s2[GLOW_MAX_RANK];
	unsigned k2 = 0;
	for (unsigned i = 0; i < r; i++)
		if (!drop[s[i]])
			s2[k2++] = pos[s[i]];
	const struct type *ty = type_with_dims(sk->m->types, node_type(n), dims, k);
	struct node *c = clone_on_input(sk, n, t, ty);
	node_set_ints(sk->m, c, AN_axes, na, cnt);
	if (pu_perm_is_identity(s2, k)) {
		pu_replace(sk->f, n, node_val(c, 0));
		for (struct use *u = c->uses; u; u = u->next)
			vec_push(&sk->work, use_user(u));
		sk->sunk++;
	} else {
		finish(sk, n, c, s2);
	}
	return true;
}

/* The kinds a Transpose sinks below, each with its rule, which is called
 * with the movable Transpose of operand 0 (sink_node asks moving_at);
 * Transpose merges with its operand (merge_pair) and elementwise kinds
 * (NF_EW), whose Transpose may be any operand, share sink_elementwise. */
static bool (*const sinkers[NK_COUNT])(struct sink *sk, struct node *n, const struct moving *mv) = {
	[NK_BatchNormalization] = sink_batchnorm,
	[NK_Concat] = sink_concat,
	[NK_Pad] = sink_pad_slice,
	[NK_Slice] = sink_pad_slice,
	[NK_BatchedReduceAdd] = sink_reduce,
	[NK_BatchedReduceMean] = sink_reduce,
	[NK_BatchedReduceMax] = sink_reduce,
	[NK_BatchedReduceMin] = sink_reduce,
	[NK_BatchedReduceProd] = sink_reduce,
};

/* Sinks the Transpose operand of n below n when n's rule can; true if it
 * changed the function. */
static bool sink_node(struct sink *sk, struct node *n)
{
	if (node_has_pred(n) || n->nres != 1 || n->nops == 0)
		return false;
	if (n->kind == NK_Transpose)
		return merge_pair(sk, n);
	struct moving mv;
	if (sinkers[n->kind])
		return moving_at(sk, n, 0, &mv) && sinkers[n->kind](sk, n, &mv);
	if (node_desc(n->kind)->flags & NF_EW)
		return sink_elementwise(sk, n);
	return false;
}

bool sink_transposes_run(struct func *f, struct pass_ctx *ctx)
{
	struct sink sk = {f, f->mod, {0}, 0, 0, 0};
	func_for_each(f, n) {
		vec_push(&sk.work, n);
	}
	/* front to back: operands are sunk before their users look at them */
	for (size_t i = 0; i < sk.work.len; i++) {
		struct node *n = sk.work.data[i];
		if (!(n->bits & NODE_ERASED))
			sink_node(&sk, n);
	}
	vec_free(&sk.work);
	pass_stat(ctx, "Number of nodes a Transpose was sunk below", sk.sunk);
	pass_stat(ctx, "Number of Transpose pairs merged into one", sk.merged);
	pass_stat(ctx, "Number of Transpose pairs cancelled", sk.cancelled);
	return sk.sunk || sk.merged || sk.cancelled;
}
