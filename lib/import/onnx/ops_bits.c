/* ops_bits.c - operators of opsets 18 to 24 on integers and caches,
 * decomposed into existing graph kinds: BitwiseAnd, BitwiseOr, BitwiseXor,
 * BitwiseNot (18) and TensorScatter (24).
 *
 * The graph IR's And, Or, Xor and Not are logical (bool). A bitwise
 * operation of two W-bit integers is computed on their bits: x's bit k is
 * (x >> k) - ((x >> (k + 1)) << 1) with logical shifts (BitShift of the
 * element's width; a shift by W gives 0), taken for every k at once along
 * a new last axis of length W; the combined bits (a*b, a+b-a*b,
 * (a-b)^2) shifted back (<< k) and summed over that axis give the result
 * (integer arithmetic wraps, so the sign bit's term lands where it
 * belongs). Not is -1 - x in two's complement.
 */
#include "import/onnx/internal.h"

#include <string.h>

static struct value shift(struct importer *im, struct value x, struct value k, bool left, const char *name)
{
	struct value r = imp_b_binary(im, NK_BitShift, x, k, name);
	if (r.node)
		node_set_int(im->m, r.node, AN_direction, left ? 0 : 1);
	return r;
}

/* [dims..., W]: the bits of x (0 or 1, in x's kind); *ks: the shift
 * amounts 0..W-1 broadcast to that shape */
static struct value bits(struct importer *im, struct value x, struct value ks, struct value ks1, const char *name)
{
	if (!x.node || !ks.node)
		return no_value;
	const struct type *kt = val_type(ks), *xt = val_type(x);
	uint64_t d1[GLOW_MAX_RANK + 1];
	memcpy(d1, xt->dims, xt->rank * sizeof *d1);
	d1[xt->rank] = 1;
	struct value xb = imp_b_broadcast(im, imp_b_reshape(im, x, d1, xt->rank + 1, imp_dname(im, name, "col")), kt->dims, kt->rank,
				      imp_dname(im, name, "cols"));
	struct value hi = shift(im, xb, ks, false, imp_dname(im, name, "shr"));
	struct value hi1 = shift(im, xb, ks1, false, imp_dname(im, name, "shr1"));
	struct value one = imp_b_splat_const(im, imp_dname(im, name, "one"), kt, 1);
	return imp_b_binary(im, NK_Sub, hi, shift(im, hi1, one, true, imp_dname(im, name, "even")), imp_dname(im, name, "bits"));
}

/* BitwiseAnd, BitwiseOr, BitwiseXor, BitwiseNot (opset 18) on int32 and
 * int64, with numpy broadcasting. */
int imp_op_bitwise(struct importer *im, const onnx_node *n)
{
	bool not = strcmp(n->op_type, "BitwiseNot") == 0;
	struct value a = imp_in_val(im, 0), b = not ? no_value : imp_in_val(im, 1);
	if (!a.node || (!not && !b.node))
		return -1;
	const struct type *at = val_type(a);
	const char *name = imp_out_name(im, 0);
	if (at->elem != EK_I32 && at->elem != EK_I64)
		return imp_op_err(im, "the operands must be int32 or int64, not %s", elem_name((enum elem_kind)at->elem));
	if (not) {
		struct value m1 = imp_b_splat_const(im, imp_dname(im, name, "minus1"), at, -1);
		return imp_set_out(im, 0, imp_b_binary(im, NK_Sub, m1, a, name));
	}
	const struct type *bt = val_type(b);
	if (bt->elem != at->elem)
		return imp_op_err(im, "the operands have different element types (%s and %s)",
			      elem_name((enum elem_kind)at->elem), elem_name((enum elem_kind)bt->elem));
	uint64_t d[GLOW_MAX_RANK + 1];
	unsigned r;
	if (imp_bcast_shape(im, at, bt, d, &r))
		return -1;
	if (r + 1 > GLOW_MAX_RANK)
		return imp_op_err(im, "the bits of a rank-%u result exceed the graph IR's rank %d", r, GLOW_MAX_RANK);
	a = imp_b_broadcast(im, a, d, r, imp_dname(im, name, "lhs"));
	b = imp_b_broadcast(im, b, d, r, imp_dname(im, name, "rhs"));
	uint64_t w = elem_size((enum elem_kind)at->elem) * 8;
	int64_t kv[64], kv1[64];
	for (uint64_t k = 0; k < w; k++)
		kv[k] = (int64_t)k, kv1[k] = (int64_t)k + 1;
	uint64_t kd[GLOW_MAX_RANK + 1];
	for (unsigned i = 0; i < r; i++)
		kd[i] = 1;
	kd[r] = w;
	d[r] = w;
	int dt = imp_dt_of_elem(at->elem);
	struct tensor *k0 = imp_t_from_ints(im, imp_dname(im, name, "k"), dt, r + 1, kd, kv);
	struct tensor *k1 = imp_t_from_ints(im, imp_dname(im, name, "k1"), dt, r + 1, kd, kv1);
	struct value ks = imp_b_broadcast(im, imp_tval(im, k0), d, r + 1, imp_dname(im, name, "kb"));
	struct value ks1 = imp_b_broadcast(im, imp_tval(im, k1), d, r + 1, imp_dname(im, name, "k1b"));
	struct value ba = bits(im, a, ks, ks1, imp_dname(im, name, "a")), bb = bits(im, b, ks, ks1, imp_dname(im, name, "b"));
	struct value c;
	if (strcmp(n->op_type, "BitwiseAnd") == 0) {
		c = imp_b_binary(im, NK_Mul, ba, bb, imp_dname(im, name, "and"));
	} else if (strcmp(n->op_type, "BitwiseOr") == 0) {
		c = imp_b_binary(im, NK_Sub, imp_b_binary(im, NK_Add, ba, bb, imp_dname(im, name, "sum")),
			imp_b_binary(im, NK_Mul, ba, bb, imp_dname(im, name, "both")), imp_dname(im, name, "or"));
	} else {
		struct value df = imp_b_binary(im, NK_Sub, ba, bb, imp_dname(im, name, "diff"));
		c = imp_b_binary(im, NK_Mul, df, df, imp_dname(im, name, "xor"));
	}
	c = shift(im, c, ks, true, imp_dname(im, name, "placed"));
	if (!c.node)
		return -1;
	struct value s = imp_b_node(im, NK_BatchedReduceAdd, name, &c, 1, imp_ty(im, at->elem, d, r));
	if (s.node) {
		int64_t ax = r;
		node_set_ints(im->m, s.node, AN_axes, &ax, 1);
	}
	return imp_set_out(im, 0, s);
}

/* TensorScatter (opset 24): a copy of past_cache with update written along
 * axis (default -2, not the batch axis 0) from write_indices[b] (default
 * 0) in each batch b; mode linear (the rows must fit) or circular (row
 * positions modulo the cache length). A ScatterElements of the update at
 * run-time positions write_indices[b] + i. */
int imp_op_tensor_scatter(struct importer *im, const onnx_node *n)
{
	struct value c = imp_in_val(im, 0), u = imp_in_val(im, 1);
	if (!c.node || !u.node)
		return -1;
	struct tensor *wi = imp_in_opt(im, 2);
	const struct type *ct = val_type(c), *ut = val_type(u);
	const char *name = imp_out_name(im, 0);
	if (ut->elem != ct->elem || ut->rank != ct->rank || ct->rank < 2)
		return imp_op_err(im, "update must have past_cache's element type and rank (at least 2)");
	unsigned axis;
	if (imp_norm_axis(im, imp_attr_i(n, "axis", -2), ct->rank, &axis))
		return -1;
	if (axis == 0)
		return imp_op_err(im, "axis must not be the batch axis 0");
	const char *mode = imp_attr_s(im, n, "mode", "linear");
	bool circ = strcmp(mode, "circular") == 0;
	if (!circ && strcmp(mode, "linear") != 0)
		return imp_op_err(im, "mode '%s' is not defined (linear or circular)", mode);
	for (unsigned i = 0; i < ct->rank; i++)
		if (i != axis && ut->dims[i] != ct->dims[i])
			return imp_op_err(im, "update's dimension %u is %llu, past_cache's %llu", i,
				      (unsigned long long)ut->dims[i], (unsigned long long)ct->dims[i]);
	uint64_t len = ct->dims[axis], seq = ut->dims[axis], b = ct->dims[0];
	if (!table_fits(seq, 1))
		return imp_op_err(im, "update has %llu rows along axis %u, more than supported (2^20)",
			      (unsigned long long)seq, axis);
	if (seq > len)
		return imp_op_err(im, "update has %llu rows along axis %u, more than the cache's %llu",
			      (unsigned long long)seq, axis, (unsigned long long)len);
	struct value start;
	uint64_t bd[GLOW_MAX_RANK], sd[GLOW_MAX_RANK];
	for (unsigned i = 0; i < ct->rank; i++)
		bd[i] = i == 0 ? b : 1, sd[i] = i == axis ? seq : 1;
	if (wi) {
		if (wi->rank != 1 || wi->dims[0] != b || wi->dtype != DT_INT64)
			return imp_op_err(im, "write_indices must be int64 [%llu]", (unsigned long long)b);
		const int64_t *iv = imp_t_ints(im, wi);
		if (iv)
			for (uint64_t i = 0; i < b; i++)
				if (iv[i] < 0 || (!circ && (uint64_t)iv[i] + seq > len) || (circ && (uint64_t)iv[i] >= len))
					return imp_op_err(im, "write_indices[%llu] = %lld does not fit %llu rows in a cache of %llu",
						      (unsigned long long)i, (long long)iv[i], (unsigned long long)seq,
						      (unsigned long long)len);
		start = imp_b_reshape(im, imp_tval(im, wi), bd, ct->rank, imp_dname(im, name, "start"));
	} else {
		start = imp_b_splat_const(im, imp_dname(im, name, "start"), imp_ty(im, EK_I64, bd, ct->rank), 0);
	}
	int64_t *iv = arena_alloc(&im->scratch, seq * sizeof *iv + 1);
	for (uint64_t i = 0; i < seq; i++)
		iv[i] = (int64_t)i;
	struct tensor *io = imp_t_from_ints(im, imp_dname(im, name, "rows"), DT_INT64, ct->rank, sd, iv);
	struct value pos = imp_b_binary(im, NK_Add, imp_b_broadcast(im, start, ut->dims, ut->rank, imp_dname(im, name, "startb")),
			       imp_b_broadcast(im, imp_tval(im, io), ut->dims, ut->rank, imp_dname(im, name, "rowsb")),
			       imp_dname(im, name, "pos"));
	if (circ)
		pos = imp_b_binary(im, NK_Mod, pos, imp_b_splat_const(im, imp_dname(im, name, "len"), imp_ty(im, EK_I64, ut->dims, ut->rank),
							 (double)len),
			  imp_dname(im, name, "wrapped"));
	if (!pos.node)
		return -1;
	struct value ops[3] = {c, pos, u};
	struct value r = imp_b_node(im, NK_ScatterElements, name, ops, 3, ct);
	if (r.node)
		node_set_int(im->m, r.node, AN_axis, axis);
	return imp_set_out(im, 0, r);
}
