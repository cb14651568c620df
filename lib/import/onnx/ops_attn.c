/* ops_attn.c - the transformer operators of opsets 23 and 24, decomposed
 * into existing graph kinds at import: Attention (23, 24) and
 * RotaryEmbedding (23), and the activations of those models, Mish (18) and
 * Swish (24).
 *
 * Attention works on 4-D heads [B, heads, seq, head_size]; 3-D inputs
 * [B, seq, heads * head_size] are reshaped and transposed to that form and
 * the output back. The scores are two BatchMatMuls over B * q_heads
 * batches, with the key and value heads repeated for grouped and
 * multi-query attention (q head h reads kv head h / (q_heads / kv_heads),
 * onnxruntime's grouping).
 */
#include "import/onnx/internal.h"

#include <math.h>
#include <string.h>

/* a op b after numpy broadcasting of both */
static struct value bin_bc(struct importer *im, unsigned kind, struct value a, struct value b, const char *name)
{
	if (!a.node || !b.node)
		return no_value;
	uint64_t d[GLOW_MAX_RANK];
	unsigned r;
	if (imp_bcast_shape(im, val_type(a), val_type(b), d, &r))
		return no_value;
	return imp_b_binary(im, kind, imp_b_broadcast(im, a, d, r, imp_dname(im, name, "lhs")),
		   imp_b_broadcast(im, b, d, r, imp_dname(im, name, "rhs")), name);
}

/* x[start .. start + dims) */
static struct value slice(struct importer *im, struct value x, const int64_t *start, const uint64_t *dims,
			  const char *name)
{
	if (!x.node)
		return x;
	const struct type *t = val_type(x);
	struct value r = imp_b_node(im, NK_Slice, name, &x, 1, type_with_dims(im->tc, t, dims, t->rank));
	if (r.node)
		node_set_ints(im->m, r.node, AN_start, start, t->rank);
	return r;
}

/* x[..., off : off + len] along the last axis (step 2 when strided) */
static struct value last_axis(struct importer *im, struct value x, uint64_t off, uint64_t len, bool strided,
			      const char *name)
{
	if (!x.node)
		return x;
	const struct type *t = val_type(x);
	uint64_t d[GLOW_MAX_RANK];
	int64_t st[GLOW_MAX_RANK] = {0};
	memcpy(d, t->dims, t->rank * sizeof *d);
	d[t->rank - 1] = len;
	if (!strided) {
		st[t->rank - 1] = (int64_t)off;
		return slice(im, x, st, d, name);
	}
	int64_t *iv = arena_alloc(&im->scratch, (len + 1) * sizeof *iv);
	for (uint64_t j = 0; j < len; j++)
		iv[j] = (int64_t)(off + 2 * j);
	struct tensor *it = imp_t_from_ints(im, imp_dname(im, name, "idx"), DT_INT64, 1, &len, iv);
	struct value ops[2] = {x, imp_tval(im, it)};
	struct value r = imp_b_node(im, NK_Gather, name, ops, 2, type_with_dims(im->tc, t, d, t->rank));
	if (r.node)
		node_set_int(im->m, r.node, AN_axis, t->rank - 1);
	return r;
}

static struct value reshape4(struct importer *im, struct value x, uint64_t a, uint64_t b, uint64_t c, uint64_t d,
			     unsigned rank, const char *name)
{
	uint64_t dims[4] = {a, b, c, d};
	return imp_b_reshape(im, x, dims, rank, name);
}

static const unsigned swap12[4] = {0, 2, 1, 3};

/* The 4-D heads form [B, heads, seq, hs] of a 3-D [B, seq, heads * hs]
 * input (rank 4: itself). */
static struct value heads4(struct importer *im, struct value x, uint64_t heads, const char *name)
{
	if (!x.node)
		return x;
	const struct type *t = val_type(x);
	if (t->rank == 4)
		return x;
	struct value r = reshape4(im, x, t->dims[0], t->dims[1], heads, t->dims[2] / heads, 4, imp_dname(im, name, "split"));
	return imp_b_transpose(im, r, swap12, imp_dname(im, name, "heads"));
}

/* [B, kvh, ts, d] -> [B * qh, ts, d], each kv head repeated for its group
 * of qh / kvh consecutive q heads */
static struct value repeat_kv(struct importer *im, struct value x, uint64_t qh, const char *name)
{
	if (!x.node)
		return x;
	const struct type *t = val_type(x);
	uint64_t b = t->dims[0], kvh = t->dims[1], ts = t->dims[2], d = t->dims[3];
	if (qh != kvh) {
		uint64_t d5[5] = {b, kvh, 1, ts, d}, e5[5] = {b, kvh, qh / kvh, ts, d};
		x = imp_b_reshape(im, x, d5, 5, imp_dname(im, name, "g"));
		x = imp_b_broadcast(im, x, e5, 5, imp_dname(im, name, "rep"));
	}
	uint64_t d3[3] = {b * qh, ts, d};
	return imp_b_reshape(im, x, d3, 3, imp_dname(im, name, "bh"));
}

/* The additive bias of the attention mask: a float mask as is, a bool
 * mask as 0 (attend) or -inf; its last axis must cover the ts keys (or
 * broadcast). */
static struct value mask_bias(struct importer *im, struct tensor *m, int elem, uint64_t ts, const char *name)
{
	struct value mv = imp_tval(im, m);
	if (!mv.node)
		return mv;
	const struct type *t = val_type(mv);
	if (m->dtype == DT_BOOL) {
		struct value z = imp_b_splat_const(im, imp_dname(im, name, "zero"), imp_ty(im, elem, t->dims, t->rank), 0);
		struct value ni = imp_b_splat_const(im, imp_dname(im, name, "ninf"), imp_ty(im, elem, t->dims, t->rank), -INFINITY);
		struct value ops[3] = {mv, z, ni};
		mv = imp_b_node(im, NK_Select, imp_dname(im, name, "bias"), ops, 3, val_type(z));
	} else if (t->elem != elem) {
		imp_op_err(im, "attn_mask must be bool or the element type of Q");
		return no_value;
	}
	t = val_type(mv);
	uint64_t last = t->rank ? t->dims[t->rank - 1] : 1;
	if (last != ts && last != 1) {
		/* the spec pads a shorter mask with -inf; onnxruntime 1.30
		 * refuses it, so there is nothing to test that against */
		imp_op_err(im, "attn_mask's last dimension is %llu, not the %llu keys", (unsigned long long)last,
		       (unsigned long long)ts);
		return no_value;
	}
	return mv;
}

/* Attention (opset 23, 24): softmax(scale * Q K^T + bias) V per head, with
 * the optional past key and value prepended to K and V (present_key and
 * present_value are the concatenations), the causal mask (query i attends
 * keys j <= i + past length), softcap and the qk_matmul_output modes
 * (0 the scaled product, 1 after the bias, 2 after softcap, 3 after
 * softmax). Opset 24's nonpad_kv_seqlen masks the keys past each batch's
 * count. A query row with every key masked gets probabilities 0 (and an
 * output row of 0), as onnxruntime computes it, not the NaN of a softmax
 * of -inf. */
int imp_op_attention(struct importer *im, const onnx_node *n)
{
	struct value q = imp_in_val(im, 0), k = imp_in_val(im, 1), v = imp_in_val(im, 2);
	if (!q.node || !k.node || !v.node)
		return -1;
	struct tensor *mask = imp_in_opt(im, 3), *pk = imp_in_opt(im, 4), *pv = imp_in_opt(im, 5);
	struct tensor *nonpad = im->opset >= 24 ? imp_in_opt(im, 6) : NULL;
	const struct type *qt = val_type(q), *kt = val_type(k), *vt = val_type(v);
	const char *name = imp_out_name(im, 0);
	int elem = qt->elem;
	if (!elem_is_float((enum elem_kind)elem) || kt->elem != elem || vt->elem != elem)
		return imp_op_err(im, "Q, K and V must be floating point of one type");
	if ((qt->rank != 3 && qt->rank != 4) || kt->rank != qt->rank || vt->rank != qt->rank)
		return imp_op_err(im, "Q, K and V must all be 3-D or all 4-D");
	int64_t sprec = imp_attr_i(n, "softmax_precision", 0);
	if (sprec != 0 && sprec != DT_FLOAT && sprec != imp_dt_of_elem(elem))
		return imp_op_err(im, "softmax_precision %lld is not supported (float or the inputs' type)", (long long)sprec);
	int64_t mode = imp_attr_i(n, "qk_matmul_output_mode", 0);
	if (mode < 0 || mode > 3)
		return imp_op_err(im, "qk_matmul_output_mode is %lld; 0 to 3 are defined", (long long)mode);
	uint64_t b = qt->dims[0], qh, kvh, qs, ks, hd, vd;
	if (qt->rank == 3) {
		int64_t aq = imp_attr_i(n, "q_num_heads", 0), ak = imp_attr_i(n, "kv_num_heads", 0);
		if (aq <= 0 || ak <= 0)
			return imp_op_err(im, "3-D inputs need q_num_heads and kv_num_heads");
		qh = (uint64_t)aq;
		kvh = (uint64_t)ak;
		if (qt->dims[2] % qh || kt->dims[2] % kvh || vt->dims[2] % kvh)
			return imp_op_err(im, "the hidden sizes of Q (%llu), K (%llu) and V (%llu) are not multiples of "
					  "q_num_heads (%llu) and kv_num_heads (%llu)",
				      (unsigned long long)qt->dims[2], (unsigned long long)kt->dims[2],
				      (unsigned long long)vt->dims[2], (unsigned long long)qh, (unsigned long long)kvh);
		qs = qt->dims[1], ks = kt->dims[1], hd = qt->dims[2] / qh, vd = vt->dims[2] / kvh;
		if (kt->dims[2] / kvh != hd)
			return imp_op_err(im, "Q's head size %llu differs from K's %llu", (unsigned long long)hd,
				      (unsigned long long)(kt->dims[2] / kvh));
	} else {
		qh = qt->dims[1], kvh = kt->dims[1], qs = qt->dims[2], ks = kt->dims[2], hd = qt->dims[3],
		vd = vt->dims[3];
		if (kt->dims[3] != hd || vt->dims[1] != kvh || vt->dims[2] != ks)
			return imp_op_err(im, "K must be [B, kv_heads, kv_seq, %llu] and V [B, kv_heads, kv_seq, v_head]",
				      (unsigned long long)hd);
	}
	if (kt->dims[0] != b || vt->dims[0] != b || (qt->rank == 3 && vt->dims[1] != ks))
		return imp_op_err(im, "Q, K and V disagree on the batch or the key sequence length");
	if (kvh == 0 || qh % kvh)
		return imp_op_err(im, "q_num_heads (%llu) is not a multiple of kv_num_heads (%llu)", (unsigned long long)qh,
			      (unsigned long long)kvh);
	q = heads4(im, q, qh, imp_dname(im, name, "q"));
	k = heads4(im, k, kvh, imp_dname(im, name, "k"));
	v = heads4(im, v, kvh, imp_dname(im, name, "v"));
	uint64_t ps = 0;
	if (!pk != !pv)
		return imp_op_err(im, "past_key and past_value must be given together");
	if (pk) {
		struct value pkv = imp_tval(im, pk), pvv = imp_tval(im, pv);
		if (!pkv.node || !pvv.node)
			return -1;
		const struct type *a = val_type(pkv), *c = val_type(pvv);
		if (a->rank != 4 || c->rank != 4 || a->elem != elem || c->elem != elem || a->dims[0] != b ||
		    a->dims[1] != kvh || a->dims[3] != hd || c->dims[0] != b || c->dims[1] != kvh ||
		    c->dims[2] != a->dims[2] || c->dims[3] != vd)
			return imp_op_err(im, "past_key must be [%llu, %llu, past, %llu] and past_value [%llu, %llu, past, "
					  "%llu] of Q's element type",
				      (unsigned long long)b, (unsigned long long)kvh, (unsigned long long)hd,
				      (unsigned long long)b, (unsigned long long)kvh, (unsigned long long)vd);
		ps = a->dims[2];
		struct value kk[2] = {pkv, k}, vv[2] = {pvv, v};
		k = imp_b_concat(im, kk, 2, 2, imp_out_used(im, 1) ? imp_out_name(im, 1) : imp_dname(im, name, "present_k"));
		v = imp_b_concat(im, vv, 2, 2, imp_out_used(im, 2) ? imp_out_name(im, 2) : imp_dname(im, name, "present_v"));
	}
	uint64_t ts = ps + ks;
	if (!table_fits(qs, 1) || !table_fits(ts, 1))
		return imp_op_err(im, "%llu queries and %llu keys: more than the importer's position tables hold (2^20)",
			      (unsigned long long)qs, (unsigned long long)ts);
	if (imp_out_used(im, 1) && imp_set_out(im, 1, k))
		return -1;
	if (imp_out_used(im, 2) && imp_set_out(im, 2, v))
		return -1;
	double scale = imp_attr(n, "scale") ? imp_attr_f(n, "scale", 1) : 1.0 / sqrt((double)hd);
	/* scores [B * qh, qs, ts] */
	uint64_t q3[3] = {b * qh, qs, hd};
	struct value qm = imp_b_reshape(im, q, q3, 3, imp_dname(im, name, "qbh"));
	qm = imp_b_binary(im, NK_Mul, qm, imp_b_splat_const(im, imp_dname(im, name, "scale"), imp_ty(im, elem, q3, 3), scale),
		 imp_dname(im, name, "qscaled"));
	static const unsigned tr3[3] = {0, 2, 1};
	struct value kx = imp_b_transpose(im, repeat_kv(im, k, qh, imp_dname(im, name, "kr")), tr3, imp_dname(im, name, "kt"));
	uint64_t s3[3] = {b * qh, qs, ts}, s4[4] = {b, qh, qs, ts};
	struct value ops[2] = {qm, kx};
	struct value s = imp_b_node(im, NK_BatchMatMul, imp_dname(im, name, "qk"), ops, 2, imp_ty(im, elem, s3, 3));
	s = imp_b_reshape(im, s, s4, 4, imp_dname(im, name, "scores"));
	struct value s0 = s;
	/* the bias: mask, causal, non-padding lengths */
	struct value bias = no_value;
	bool have_bias = false;
	if (mask) {
		if (mask->rank < 2 || mask->rank > 4)
			return imp_op_err(im, "attn_mask has rank %u; 2 to 4 are defined", mask->rank);
		bias = mask_bias(im, mask, elem, ts, imp_dname(im, name, "mask"));
		if (!bias.node)
			return -1;
		have_bias = true;
	}
	if (imp_attr_i(n, "is_causal", 0)) {
		/* key j is seen by query i when j <= i + past: compared at run
		 * time from a column of i + past and a row of j */
		int64_t *qi = arena_alloc(&im->scratch, qs * sizeof *qi + 1), *kj = arena_alloc(&im->scratch, ts * sizeof *kj + 1);
		for (uint64_t i = 0; i < qs; i++)
			qi[i] = (int64_t)(i + ps);
		for (uint64_t j = 0; j < ts; j++)
			kj[j] = (int64_t)j;
		uint64_t qd[2] = {qs, 1}, kd[2] = {1, ts}, cd[2] = {qs, ts};
		struct tensor *qt2 = imp_t_from_ints(im, imp_dname(im, name, "qpos"), DT_INT64, 2, qd, qi);
		struct tensor *kt2 = imp_t_from_ints(im, imp_dname(im, name, "kpos_c"), DT_INT64, 2, kd, kj);
		struct value cmp[2] = {imp_b_broadcast(im, imp_tval(im, kt2), cd, 2, imp_dname(im, name, "kposcb")),
				       imp_b_broadcast(im, imp_tval(im, qt2), cd, 2, imp_dname(im, name, "qposb"))};
		struct value seen = cmp[0].node && cmp[1].node ? imp_b_node(im, NK_CmpLTE, imp_dname(im, name, "seen"), cmp, 2,
									imp_ty(im, EK_BOOL, cd, 2))
							       : no_value;
		struct value z = imp_b_splat_const(im, imp_dname(im, name, "czero"), imp_ty(im, elem, cd, 2), 0);
		struct value ni = imp_b_splat_const(im, imp_dname(im, name, "cninf"), imp_ty(im, elem, cd, 2), -INFINITY);
		struct value sops[3] = {seen, z, ni};
		struct value c = seen.node ? imp_b_node(im, NK_Select, imp_dname(im, name, "causal"), sops, 3, val_type(z)) : no_value;
		if (!c.node)
			return -1;
		bias = have_bias ? bin_bc(im, NK_Add, bias, c, imp_dname(im, name, "bias_causal")) : c;
		have_bias = true;
	}
	if (nonpad) {
		struct value nv = imp_tval(im, nonpad);
		if (!nv.node)
			return -1;
		const struct type *nt = val_type(nv);
		if (nt->rank != 1 || nt->dims[0] != b || (nonpad->dtype != DT_INT64))
			return imp_op_err(im, "nonpad_kv_seqlen must be int64 [%llu]", (unsigned long long)b);
		int64_t *iv = arena_alloc(&im->scratch, ts * sizeof *iv + 1);
		for (uint64_t j = 0; j < ts; j++)
			iv[j] = (int64_t)j;
		uint64_t bt[2] = {b, ts}, b1[2] = {b, 1}, one_t[2] = {1, ts};
		struct tensor *it = imp_t_from_ints(im, imp_dname(im, name, "kpos"), DT_INT64, 2, one_t, iv);
		struct value pos = imp_b_broadcast(im, imp_tval(im, it), bt, 2, imp_dname(im, name, "kposb"));
		struct value lim = imp_b_broadcast(im, imp_b_reshape(im, nv, b1, 2, imp_dname(im, name, "nonpad2")), bt, 2,
					       imp_dname(im, name, "nonpadb"));
		struct value cmp[2] = {pos, lim};
		struct value ok = pos.node && lim.node ? imp_b_node(im, NK_CmpLT, imp_dname(im, name, "valid"), cmp, 2,
								imp_ty(im, EK_BOOL, bt, 2))
						       : no_value;
		struct value z = imp_b_splat_const(im, imp_dname(im, name, "npzero"), imp_ty(im, elem, bt, 2), 0);
		struct value ni = imp_b_splat_const(im, imp_dname(im, name, "npninf"), imp_ty(im, elem, bt, 2), -INFINITY);
		struct value sops[3] = {ok, z, ni};
		struct value nb = imp_b_node(im, NK_Select, imp_dname(im, name, "npbias"), sops, 3, val_type(z));
		nb = reshape4(im, nb, b, 1, 1, ts, 4, imp_dname(im, name, "npbias4"));
		bias = have_bias ? bin_bc(im, NK_Add, bias, nb, imp_dname(im, name, "bias_np")) : nb;
		have_bias = true;
	}
	if (have_bias)
		s = bin_bc(im, NK_Add, s, bias, imp_dname(im, name, "biased"));
	struct value s1 = s;
	double cap = imp_attr_f(n, "softcap", 0);
	if (cap > 0) {
		struct value c = imp_b_splat_const(im, imp_dname(im, name, "cap"), imp_ty(im, elem, s4, 4), cap);
		s = imp_b_binary(im, NK_Mul, imp_b_unary(im, NK_Tanh, imp_dname(im, name, "captanh"),
					     imp_b_binary(im, NK_Div, s, c, imp_dname(im, name, "capdiv"))),
			c, imp_dname(im, name, "capped"));
	}
	struct value s2 = s;
	struct value p = imp_b_unary(im, NK_SoftMax, imp_dname(im, name, "probs"), s);
	if (p.node)
		node_set_int(im->m, p.node, AN_axis, 3);
	if (have_bias && p.node) {
		/* a row whose every key is masked is -inf throughout: softmax
		 * gives NaN; onnxruntime gives 0 (the output row is 0) */
		struct value isn = imp_b_node(im, NK_IsNaN, imp_dname(im, name, "masked_row"), &p, 1,
					  imp_ty(im, EK_BOOL, s4, 4));
		struct value sops[3] = {isn, imp_b_splat_const(im, imp_dname(im, name, "pzero"), imp_ty(im, elem, s4, 4), 0), p};
		p = imp_b_node(im, NK_Select, imp_dname(im, name, "probs0"), sops, 3, val_type(p));
	}
	if (imp_out_used(im, 3)) {
		struct value sel[4] = {s0, s1, s2, p};
		if (imp_set_out(im, 3, imp_b_reshape(im, sel[mode], s4, 4, imp_out_name(im, 3))))
			return -1;
	}
	struct value vx = repeat_kv(im, v, qh, imp_dname(im, name, "vr"));
	struct value pv3[2] = {imp_b_reshape(im, p, s3, 3, imp_dname(im, name, "p3")), vx};
	uint64_t o3[3] = {b * qh, qs, vd};
	struct value o = imp_b_node(im, NK_BatchMatMul, imp_dname(im, name, "pv"), pv3, 2, imp_ty(im, elem, o3, 3));
	if (qt->rank == 4)
		return imp_set_out(im, 0, reshape4(im, o, b, qh, qs, vd, 4, name));
	o = reshape4(im, o, b, qh, qs, vd, 4, imp_dname(im, name, "o4"));
	o = imp_b_transpose(im, o, swap12, imp_dname(im, name, "oseq"));
	uint64_t y3[3] = {b, qs, qh * vd};
	return imp_set_out(im, 0, imp_b_reshape(im, o, y3, 3, name));
}

/* RotaryEmbedding (opset 23): x in [B, heads, seq, hs] (or 3-D
 * [B, seq, heads * hs] with num_heads); the first rotary_embedding_dim
 * (default hs) channels of each head are rotated as pairs, (c[i], c[i +
 * rd/2]) or interleaved (c[2i], c[2i+1]), by the angle whose cos and sin
 * are cos_cache and sin_cache at the token's position ([B, seq, rd/2], or
 * [max_pos, rd/2] indexed by position_ids [B, seq]). */
int imp_op_rotary_embedding(struct importer *im, const onnx_node *n)
{
	struct value x = imp_in_val(im, 0), cc = imp_in_val(im, 1), sc = imp_in_val(im, 2);
	if (!x.node || !cc.node || !sc.node)
		return -1;
	struct tensor *pos = imp_in_opt(im, 3);
	const struct type *xt = val_type(x), *ct = val_type(cc), *st = val_type(sc);
	const char *name = imp_out_name(im, 0);
	int elem = xt->elem;
	if (!elem_is_float((enum elem_kind)elem) || ct->elem != elem || st->elem != elem)
		return imp_op_err(im, "X, cos_cache and sin_cache must be floating point of one type");
	if (xt->rank != 3 && xt->rank != 4)
		return imp_op_err(im, "X must be 3-D or 4-D, not rank %u", xt->rank);
	uint64_t b = xt->dims[0], nh, s, hs;
	if (xt->rank == 4) {
		nh = xt->dims[1], s = xt->dims[2], hs = xt->dims[3];
		x = imp_b_transpose(im, x, swap12, imp_dname(im, name, "bsnh"));
	} else {
		int64_t a = imp_attr_i(n, "num_heads", 0);
		if (a <= 0 || xt->dims[2] % (uint64_t)a)
			return imp_op_err(im, "3-D X needs num_heads dividing its hidden size %llu",
				      (unsigned long long)xt->dims[2]);
		nh = (uint64_t)a, s = xt->dims[1], hs = xt->dims[2] / nh;
		x = reshape4(im, x, b, s, nh, hs, 4, imp_dname(im, name, "bsnh"));
	}
	int64_t rd = imp_attr_i(n, "rotary_embedding_dim", 0);
	if (rd == 0)
		rd = (int64_t)hs;
	if (rd < 0 || rd % 2 || (uint64_t)rd > hs)
		return imp_op_err(im, "rotary_embedding_dim %lld must be even and at most the head size %llu", (long long)rd,
			      (unsigned long long)hs);
	uint64_t half = (uint64_t)rd / 2;
	if (ct->rank != st->rank || memcmp(ct->dims, st->dims, ct->rank * sizeof *ct->dims))
		return imp_op_err(im, "cos_cache and sin_cache differ in shape");
	if (pos) {
		struct value pv = imp_tval(im, pos);
		if (!pv.node)
			return -1;
		const struct type *pt = val_type(pv);
		if (pt->rank != 2 || pt->dims[0] != b || pt->dims[1] != s)
			return imp_op_err(im, "position_ids must be [%llu, %llu]", (unsigned long long)b, (unsigned long long)s);
		if (ct->rank != 2 || ct->dims[1] != half)
			return imp_op_err(im, "with position_ids the caches must be [max_position, %llu]",
				      (unsigned long long)half);
		const int64_t *iv = imp_t_ints(im, pos);
		if (iv)
			for (uint64_t i = 0; i < b * s; i++)
				if (iv[i] < 0 || (uint64_t)iv[i] >= ct->dims[0])
					return imp_op_err(im, "position_ids[%llu] is %lld, outside the caches' %llu rows",
						      (unsigned long long)i, (long long)iv[i],
						      (unsigned long long)ct->dims[0]);
		uint64_t gd[3] = {b, s, half};
		struct value g1[2] = {cc, pv}, g2[2] = {sc, pv};
		cc = imp_b_node(im, NK_Gather, imp_dname(im, name, "cos"), g1, 2, imp_ty(im, elem, gd, 3));
		sc = imp_b_node(im, NK_Gather, imp_dname(im, name, "sin"), g2, 2, imp_ty(im, elem, gd, 3));
	} else if (ct->rank != 3 || ct->dims[0] != b || ct->dims[1] != s || ct->dims[2] != half) {
		return imp_op_err(im, "without position_ids the caches must be [%llu, %llu, %llu]", (unsigned long long)b,
			      (unsigned long long)s, (unsigned long long)half);
	}
	/* [B, S, 1, half] broadcast over the heads */
	uint64_t full[4] = {b, s, nh, half};
	cc = imp_b_broadcast(im, reshape4(im, cc, b, s, 1, half, 4, imp_dname(im, name, "cos4")), full, 4,
			 imp_dname(im, name, "cosb"));
	sc = imp_b_broadcast(im, reshape4(im, sc, b, s, 1, half, 4, imp_dname(im, name, "sin4")), full, 4,
			 imp_dname(im, name, "sinb"));
	bool il = imp_attr_i(n, "interleaved", 0) != 0;
	struct value x1 = last_axis(im, x, 0, half, il, imp_dname(im, name, "x1"));
	struct value x2 = last_axis(im, x, il ? 1 : half, half, il, imp_dname(im, name, "x2"));
	struct value r1 = imp_b_binary(im, NK_Sub, imp_b_binary(im, NK_Mul, x1, cc, imp_dname(im, name, "x1c")),
			      imp_b_binary(im, NK_Mul, x2, sc, imp_dname(im, name, "x2s")), imp_dname(im, name, "r1"));
	struct value r2 = imp_b_binary(im, NK_Add, imp_b_binary(im, NK_Mul, x2, cc, imp_dname(im, name, "x2c")),
			      imp_b_binary(im, NK_Mul, x1, sc, imp_dname(im, name, "x1s")), imp_dname(im, name, "r2"));
	struct value rot;
	if (il) {
		/* pairs back in place: [.., half, 2] flattened */
		uint64_t d5[5] = {b, s, nh, half, 1};
		struct value p[2] = {imp_b_reshape(im, r1, d5, 5, imp_dname(im, name, "r1e")),
				     imp_b_reshape(im, r2, d5, 5, imp_dname(im, name, "r2e"))};
		rot = reshape4(im, imp_b_concat(im, p, 2, 4, imp_dname(im, name, "pairs")), b, s, nh, (uint64_t)rd, 4,
			       imp_dname(im, name, "rot"));
	} else {
		struct value p[2] = {r1, r2};
		rot = imp_b_concat(im, p, 2, 3, imp_dname(im, name, "rot"));
	}
	if ((uint64_t)rd < hs) {
		struct value p[2] = {rot, last_axis(im, x, (uint64_t)rd, hs - (uint64_t)rd, false, imp_dname(im, name, "pass"))};
		rot = imp_b_concat(im, p, 2, 3, imp_dname(im, name, "full"));
	}
	if (xt->rank == 4)
		return imp_set_out(im, 0, imp_b_transpose(im, rot, swap12, name));
	uint64_t y3[3] = {b, s, nh * hs};
	return imp_set_out(im, 0, imp_b_reshape(im, rot, y3, 3, name));
}

/* Mish (opset 18, 22: bfloat16) x * tanh(softplus(x)) and Swish (opset
 * 24) x * sigmoid(alpha * x), from the activation kinds. */
int imp_op_mish_swish(struct importer *im, const onnx_node *n)
{
	struct imp_float_op f;
	if (imp_float_op_start(im, &f))
		return -1;
	struct value g;
	if (strcmp(n->op_type, "Mish") == 0) {
		g = imp_b_unary(im, NK_Tanh, imp_dname(im, f.name, "tanh"), imp_b_unary(im, NK_SoftPlus, imp_dname(im, f.name, "softplus"), f.x));
	} else {
		double alpha = imp_attr_f(n, "alpha", 1.0f);
		struct value ax = alpha == 1 ? f.x
					     : imp_b_binary(im, NK_Mul, f.x, imp_b_splat_const(im, imp_dname(im, f.name, "alpha"), f.t, alpha),
						   imp_dname(im, f.name, "ax"));
		g = imp_b_unary(im, NK_Sigmoid, imp_dname(im, f.name, "sigmoid"), ax);
	}
	return imp_set_out(im, 0, imp_b_binary(im, NK_Mul, f.x, g, f.name));
}
