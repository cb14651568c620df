/* build.c - node-building helpers shared by the translators.
 *
 * Every helper takes and returns graph values; a NULL node in means an
 * earlier step failed (and reported), and is passed through, so translators
 * check once, when they bind their outputs. Helper nodes get names derived
 * from the ONNX value they serve ("<name>.nhwc", "<name>.bcast", ...).
 */
#include "import/onnx/internal.h"

#include <stdio.h>
#include <string.h>

struct value imp_b_node(struct importer *im, unsigned kind, const char *name, const struct value *ops, unsigned nops,
		    const struct type *t)
{
	if (!t)
		return no_value;
	for (unsigned i = 0; i < nops; i++)
		if (!ops[i].node)
			return no_value;
	struct node *n = node_create1(im->f, kind, name, ops, nops, t, NULL, LOC_NONE);
	return node_val(n, 0);
}

/* The shape check is imp_ty's, so a too large result is reported rather
 * than typed. */
struct value imp_b_concat(struct importer *im, const struct value *vs, unsigned n, unsigned axis, const char *name)
{
	for (unsigned i = 0; i < n; i++)
		if (!vs[i].node)
			return no_value;
	const struct type *t = val_type(vs[0]);
	uint64_t d[GLOW_MAX_RANK];
	memcpy(d, t->dims, t->rank * sizeof *d);
	for (unsigned i = 1; i < n; i++)
		d[axis] += val_type(vs[i])->dims[axis];
	if (!type_shape_ok((enum elem_kind)t->elem, d, t->rank)) {
		imp_op_err(im, "result shape is too large");
		return no_value;
	}
	struct value r = imp_b_node(im, NK_Concat, name, vs, n, type_with_dims(im->tc, t, d, t->rank));
	if (r.node)
		node_set_int(im->m, r.node, AN_dim, axis);
	return r;
}

struct value imp_b_unary(struct importer *im, unsigned kind, const char *name, struct value x)
{
	if (!x.node)
		return x;
	return imp_b_node(im, kind, name, &x, 1, val_type(x));
}

struct value imp_b_transpose(struct importer *im, struct value x, const unsigned *perm, const char *name)
{
	if (!x.node)
		return x;
	const struct type *t = val_type(x);
	uint64_t dims[GLOW_MAX_RANK];
	int64_t shuffle[GLOW_MAX_RANK];
	bool ident = true;
	for (unsigned i = 0; i < t->rank; i++) {
		dims[i] = t->dims[perm[i]];
		shuffle[i] = perm[i];
		ident &= perm[i] == i;
	}
	if (ident)
		return x;
	struct value r = imp_b_node(im, NK_Transpose, name, &x, 1, type_with_dims(im->tc, t, dims, t->rank));
	if (r.node)
		node_set_ints(im->m, r.node, AN_shuffle, shuffle, t->rank);
	return r;
}

struct value imp_b_reshape(struct importer *im, struct value x, const uint64_t *dims, unsigned rank, const char *name)
{
	if (!x.node)
		return x;
	const struct type *t = val_type(x);
	if (rank > GLOW_MAX_RANK) {
		imp_op_err(im, "result rank %u exceeds the graph IR's %d", rank, GLOW_MAX_RANK);
		return no_value;
	}
	const struct type *rt = type_with_dims(im->tc, t, dims, rank);
	if (type_numel(rt) != type_numel(t)) {
		imp_op_err(im, "cannot reshape %llu elements into %llu", (unsigned long long)type_numel(t),
		       (unsigned long long)type_numel(rt));
		return no_value;
	}
	if (rt == t)
		return x;
	return imp_b_node(im, NK_Reshape, name, &x, 1, rt);
}

int imp_bcast_shape(struct importer *im, const struct type *a, const struct type *b, uint64_t *dims, unsigned *rank)
{
	unsigned r = a->rank > b->rank ? a->rank : b->rank;
	for (unsigned i = 0; i < r; i++) {
		int ia = (int)i - (int)(r - a->rank), ib = (int)i - (int)(r - b->rank);
		uint64_t da = ia >= 0 ? a->dims[ia] : 1, db = ib >= 0 ? b->dims[ib] : 1;
		if (da != db && da != 1 && db != 1)
			return imp_op_err(im, "shapes are not broadcastable (dimension %u: %llu vs %llu)", i,
				      (unsigned long long)da, (unsigned long long)db);
		dims[i] = da == 1 ? db : da;
	}
	*rank = r;
	return 0;
}

struct value imp_b_broadcast(struct importer *im, struct value x, const uint64_t *dims, unsigned rank, const char *name)
{
	if (!x.node)
		return x;
	const struct type *t = val_type(x);
	if (t->rank > rank) {
		imp_op_err(im, "cannot broadcast rank %u to rank %u", t->rank, rank);
		return no_value;
	}
	unsigned axis = rank - t->rank;
	for (unsigned i = 0; i < t->rank; i++)
		if (t->dims[i] != dims[axis + i] && t->dims[i] != 1) {
			imp_op_err(im, "cannot broadcast dimension %u of size %llu to %llu", i,
			       (unsigned long long)t->dims[i], (unsigned long long)dims[axis + i]);
			return no_value;
		}
	const struct type *rt = type_with_dims(im->tc, t, dims, rank);
	if (rt == t)
		return x;
	struct value r = imp_b_node(im, NK_Broadcast, name, &x, 1, rt);
	if (r.node)
		node_set_int(im->m, r.node, AN_axis, axis);
	return r;
}

struct value imp_b_convert(struct importer *im, struct value x, int elem, const char *name)
{
	if (!x.node)
		return x;
	const struct type *t = val_type(x);
	if (t->elem == elem)
		return x;
	return imp_b_node(im, NK_ConvertTo, name, &x, 1, type_with_elem(im->tc, t, (enum elem_kind)elem));
}

struct value imp_b_splat_const(struct importer *im, const char *name, const struct type *t, double f)
{
	if (!t)
		return no_value;
	struct constant *c = module_add_constant(im->m, module_fresh_name(im->m, name), t, LOC_NONE);
	c->init = INIT_SPLAT;
	c->splat_f = f;
	c->splat_i = elem_is_float((enum elem_kind)t->elem) ? 0 : (int64_t)f;
	return node_val(&c->n, 0);
}

struct value imp_b_to_nhwc(struct importer *im, struct value x, const char *name)
{
	if (!x.node)
		return x;
	uint64_t key = (uint64_t)(uintptr_t)x.node * 8 + x.res;
	struct tensor *cached = u64map_get(&im->nhwc, key);
	if (cached)
		return cached->v;
	static const unsigned perm[4] = {0, 2, 3, 1};
	struct value r = imp_b_transpose(im, x, perm, name);
	if (r.node) {
		struct tensor *t = arena_new(&im->scratch, struct tensor);
		t->v = r;
		u64map_put(&im->nhwc, key, t);
	}
	return r;
}

struct value imp_b_to_nchw(struct importer *im, struct value x, const char *name)
{
	static const unsigned perm[4] = {0, 3, 1, 2};
	return imp_b_transpose(im, x, perm, name);
}

struct value imp_b_binary(struct importer *im, unsigned kind, struct value a, struct value b, const char *name)
{
	if (!a.node || !b.node)
		return no_value;
	const struct type *t = val_type(a);
	if (kind == NK_CmpEQ || kind == NK_CmpNEQ || kind == NK_CmpLT || kind == NK_CmpLTE)
		t = type_with_elem(im->tc, t, EK_BOOL);
	struct value ops[2] = {a, b};
	return imp_b_node(im, kind, name, ops, 2, t);
}

struct value imp_b_splat_like(struct importer *im, struct value v, double f, const char *name)
{
	if (!v.node)
		return v;
	return imp_b_splat_const(im, name, val_type(v), f);
}

/* ONNX MatMul (numpy semantics): a 2-D right operand multiplies the
 * flattened rows of the left one (MatMul), batched operands broadcast their
 * batch dimensions into one BatchMatMul over a flattened batch; vectors
 * become matrices and lose the extra dimension at the end. */
struct value imp_matmul(struct importer *im, struct value a, struct value b, const struct type *rproto,
			const char *name)
{
	const struct value none = {NULL, 0};
	const struct type *ta = val_type(a), *tb = val_type(b);
	if (ta->rank == 0 || tb->rank == 0) {
		imp_op_err(im, "operands must not be scalars");
		return none;
	}
	/* vectors become matrices; the extra dimension is dropped at the end */
	uint64_t ad[GLOW_MAX_RANK + 1], bd[GLOW_MAX_RANK + 1];
	unsigned ar = ta->rank, br = tb->rank;
	memcpy(ad, ta->dims, ar * sizeof *ad);
	memcpy(bd, tb->dims, br * sizeof *bd);
	bool avec = ar == 1, bvec = br == 1;
	if (avec) {
		ad[1] = ad[0], ad[0] = 1, ar = 2;
	}
	if (bvec)
		bd[1] = 1, br = 2;
	uint64_t m = ad[ar - 2], k = ad[ar - 1], kb = bd[br - 2], nn = bd[br - 1];
	if (k != kb) {
		imp_op_err(im, "inner dimensions differ (%llu vs %llu)", (unsigned long long)k, (unsigned long long)kb);
		return none;
	}
	/* the result shape */
	uint64_t od[GLOW_MAX_RANK + 1];
	unsigned orank = (ar > br ? ar : br);
	for (unsigned i = 0; i + 2 < orank; i++) {
		int ia = (int)i - (int)(orank - ar), ib = (int)i - (int)(orank - br);
		uint64_t da = ia >= 0 ? ad[ia] : 1, db = ib >= 0 ? bd[ib] : 1;
		if (da != db && da != 1 && db != 1) {
			imp_op_err(im, "batch dimensions are not broadcastable");
			return none;
		}
		od[i] = da == 1 ? db : da;
	}
	od[orank - 2] = m;
	od[orank - 1] = nn;
	uint64_t fd[GLOW_MAX_RANK];
	unsigned fr = 0;
	for (unsigned i = 0; i < orank; i++)
		if (!((avec && i == orank - 2) || (bvec && i == orank - 1)))
			fd[fr++] = od[i];
	uint64_t batch = 1;
	for (unsigned i = 0; i + 2 < orank; i++)
		batch *= od[i];
	const char *mm = imp_dname(im, name, "mm");
	struct value r;
	if (br == 2) { /* (batch * m, k) x (k, n) */
		uint64_t a2[2] = {batch * m, k}, b2[2] = {k, nn}, r2[2] = {batch * m, nn};
		struct value ops[2] = {imp_b_reshape(im, a, a2, 2, imp_dname(im, name, "lhs")),
				       imp_b_reshape(im, b, b2, 2, imp_dname(im, name, "rhs"))};
		r = imp_b_node(im, NK_MatMul, fr == 2 ? name : mm, ops, 2, type_with_dims(im->tc, rproto, r2, 2));
	} else {
		uint64_t abd[GLOW_MAX_RANK + 1], bbd[GLOW_MAX_RANK + 1];
		memcpy(abd, od, sizeof od);
		memcpy(bbd, od, sizeof od);
		abd[orank - 2] = m, abd[orank - 1] = k;
		bbd[orank - 2] = k, bbd[orank - 1] = nn;
		uint64_t a3[3] = {batch, m, k}, b3[3] = {batch, k, nn}, r3[3] = {batch, m, nn};
		struct value av = imp_b_reshape(im, a, ad, ar, imp_dname(im, name, "lhs"));
		struct value bv = imp_b_reshape(im, b, bd, br, imp_dname(im, name, "rhs"));
		av = imp_b_broadcast(im, av, abd, orank, imp_dname(im, name, "lhs.bcast"));
		bv = imp_b_broadcast(im, bv, bbd, orank, imp_dname(im, name, "rhs.bcast"));
		struct value ops[2] = {imp_b_reshape(im, av, a3, 3, imp_dname(im, name, "lhs3")),
				       imp_b_reshape(im, bv, b3, 3, imp_dname(im, name, "rhs3"))};
		r = imp_b_node(im, NK_BatchMatMul, fr == 3 && orank == 3 ? name : mm, ops, 2,
			   type_with_dims(im->tc, rproto, r3, 3));
	}
	return imp_b_reshape(im, r, fd, fr, name);
}
