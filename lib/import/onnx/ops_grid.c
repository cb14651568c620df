/* ops_grid.c - AffineGrid (opset 20) and Col2Im (opset 18), built from
 * existing kinds with tables computed at import.
 *
 * AffineGrid: the base grid of normalized output coordinates, one row
 * (x, y[, z], 1) per output position (built from one coordinate vector
 * per axis), times each batch entry's theta transposed: one BatchMatMul.
 *
 * Col2Im: every element of the columns input has a fixed place in the
 * padded image (channel c, block offset k, block l); a ScatterElements
 * with reduction add into zeros sums the overlaps, and a Slice drops the
 * padding.
 */
#include "import/onnx/internal.h"

#include <string.h>

/* The normalized coordinate of position i of n: align_corners spans
 * [-1, 1] with the corner centres, otherwise the pixel centres of n cells
 * covering [-1, 1]. */
static double grid_coord(uint64_t i, uint64_t n, bool align)
{
	if (align)
		return n == 1 ? 0 : -1 + 2 * (double)i / (double)(n - 1);
	return (2 * (double)i + 1) / (double)n - 1;
}

/* AffineGrid (opset 20): theta [N, 2, 3] with size [N, C, H, W] gives the
 * grid [N, H, W, 2]; theta [N, 3, 4] with size [N, C, D, H, W] the grid
 * [N, D, H, W, 3]. size must be known at import. */
int imp_op_affine_grid(struct importer *im, const onnx_node *n)
{
	struct value th = imp_in_val(im, 0);
	if (!th.node)
		return -1;
	uint64_t cnt;
	const int64_t *sz = imp_in_ints(im, 1, &cnt);
	if (!sz)
		return -1;
	const struct type *tt = val_type(th);
	const char *name = imp_out_name(im, 0);
	if (!elem_is_float((enum elem_kind)tt->elem))
		return imp_op_err(im, "theta must be floating point");
	if (cnt != 4 && cnt != 5)
		return imp_op_err(im, "size has %llu entries; [N, C, H, W] or [N, C, D, H, W]", (unsigned long long)cnt);
	unsigned ns = (unsigned)cnt - 2;
	uint64_t b = tt->rank == 3 ? tt->dims[0] : 0;
	if (tt->rank != 3 || tt->dims[1] != ns || tt->dims[2] != ns + 1 || sz[0] < 0 || (uint64_t)sz[0] != b)
		return imp_op_err(im, "theta must be [%lld, %u, %u] for size of %llu entries", (long long)sz[0], ns, ns + 1,
			      (unsigned long long)cnt);
	uint64_t sp[3], P = 1;
	for (unsigned k = 0; k < ns; k++) {
		if (sz[2 + k] <= 0)
			return imp_op_err(im, "size[%u] is %lld; the output dimensions must be positive", 2 + k,
				      (long long)sz[2 + k]);
		sp[k] = (uint64_t)sz[2 + k];
		if (sp[k] > TABLE_MAX)
			return imp_op_err(im, "size[%u] is %lld; more than 2^20 positions along an axis are not supported",
				      2 + k, (long long)sz[2 + k]);
		if (P * sp[k] > ((uint64_t)1 << 24))
			return imp_op_err(im, "an output grid of more than 2^24 positions is not supported");
		P *= sp[k];
	}
	bool align = imp_attr_i(n, "align_corners", 0) != 0;
	/* the base grid [1, sp..., ns + 1] of rows (x, y[, z], 1), x running
	 * along the last spatial axis: one coordinate vector per axis,
	 * broadcast over the others and concatenated (tables of the axes'
	 * lengths, not of the grid's) */
	uint64_t full[5] = {1}, one[5];
	for (unsigned k = 0; k < ns; k++)
		full[1 + k] = sp[k];
	full[1 + ns] = 1;
	struct value cols[4];
	for (unsigned c = 0; c <= ns; c++) {
		if (c == ns) {
			cols[c] = imp_b_splat_const(im, imp_dname(im, name, "ones"), imp_ty(im, tt->elem, full, ns + 2), 1);
			continue;
		}
		unsigned axis = ns - 1 - c; /* x: the last spatial axis */
		double *cv = arena_alloc(&im->scratch, sp[axis] * sizeof *cv);
		for (uint64_t i = 0; i < sp[axis]; i++)
			cv[i] = grid_coord(i, sp[axis], align);
		for (unsigned k = 0; k < ns + 2; k++)
			one[k] = 1;
		one[1 + axis] = sp[axis];
		struct tensor *ct = imp_t_from_floats(im, imp_dname(im, name, c == 0 ? "x" : c == 1 ? "y" : "z"), imp_dt_of_elem(tt->elem),
						  ns + 2, one, cv);
		cols[c] = imp_b_broadcast(im, imp_tval(im, ct), full, ns + 2, imp_dname(im, name, "coord"));
	}
	uint64_t bfull[5];
	memcpy(bfull, full, sizeof bfull);
	bfull[1 + ns] = ns + 1;
	struct value base = no_value;
	bool ok = true;
	for (unsigned c = 0; c <= ns; c++)
		ok &= cols[c].node != NULL;
	if (ok) {
		base = imp_b_node(im, NK_Concat, imp_dname(im, name, "base"), cols, ns + 1, imp_ty(im, tt->elem, bfull, ns + 2));
		if (base.node)
			node_set_int(im->m, base.node, AN_dim, ns + 1);
	}
	uint64_t bd[3] = {1, P, ns + 1}, bb[3] = {b, P, ns + 1};
	struct value bv = imp_b_broadcast(im, imp_b_reshape(im, base, bd, 3, imp_dname(im, name, "rows1")), bb, 3,
				      imp_dname(im, name, "baseb"));
	static const unsigned tr[3] = {0, 2, 1};
	struct value tht = imp_b_transpose(im, th, tr, imp_dname(im, name, "thetat"));
	uint64_t od[3] = {b, P, ns};
	struct value ops[2] = {bv, tht};
	struct value g = bv.node && tht.node ? imp_b_node(im, NK_BatchMatMul, imp_dname(im, name, "rows"), ops, 2,
						     imp_ty(im, tt->elem, od, 3))
					     : no_value;
	uint64_t gd[5] = {b};
	for (unsigned k = 0; k < ns; k++)
		gd[1 + k] = sp[k];
	gd[1 + ns] = ns;
	return imp_set_out(im, 0, imp_b_reshape(im, g, gd, ns + 2, name));
}

/* Col2Im (opset 18): input [N, C * prod(block), L] with image_shape and
 * block_shape known at import; dilations, pads (begin..., end...) and
 * strides per spatial axis. L must be the number of blocks. */
int imp_op_col2im(struct importer *im, const onnx_node *n)
{
	struct value x = imp_in_val(im, 0);
	if (!x.node)
		return -1;
	uint64_t ni, nb;
	const int64_t *img = imp_in_ints(im, 1, &ni), *blk = img ? imp_in_ints(im, 2, &nb) : NULL;
	if (!img || !blk)
		return -1;
	const struct type *xt = val_type(x);
	const char *name = imp_out_name(im, 0);
	if (xt->rank != 3)
		return imp_op_err(im, "input must be [N, C * prod(block_shape), L]");
	if (ni != nb || ni == 0 || ni + 2 > GLOW_MAX_RANK)
		return imp_op_err(im, "image_shape has %llu entries and block_shape %llu", (unsigned long long)ni,
			      (unsigned long long)nb);
	unsigned ns = (unsigned)ni;
	int64_t dil[GLOW_MAX_RANK], str[GLOW_MAX_RANK], pad[2 * GLOW_MAX_RANK];
	const char *names[3] = {"dilations", "strides", "pads"};
	int64_t *dst[3] = {dil, str, pad};
	for (unsigned a = 0; a < 3; a++) {
		const int64_t *v;
		long c = imp_attr_ints(n, names[a], &v);
		unsigned want = a == 2 ? 2 * ns : ns;
		for (unsigned k = 0; k < want; k++)
			dst[a][k] = a == 2 ? 0 : 1;
		if (c < 0)
			continue;
		if ((unsigned long)c != want)
			return imp_op_err(im, "%s has %ld entries for %u spatial axes", names[a], c, ns);
		for (unsigned k = 0; k < want; k++) {
			if (v[k] < (a == 2 ? 0 : 1))
				return imp_op_err(im, "bad %s value %lld", names[a], (long long)v[k]);
			dst[a][k] = v[k];
		}
	}
	uint64_t K = 1, L = 1, padded[GLOW_MAX_RANK], nblk[GLOW_MAX_RANK], HP = 1;
	for (unsigned k = 0; k < ns; k++) {
		if (img[k] <= 0 || blk[k] <= 0 || !table_fits((uint64_t)img[k], 1) || !table_fits((uint64_t)blk[k], 1) ||
		    pad[k] > (int64_t)TABLE_MAX || pad[k + ns] > (int64_t)TABLE_MAX || dil[k] > (int64_t)TABLE_MAX ||
		    str[k] > (int64_t)TABLE_MAX)
			return imp_op_err(im, "image_shape and block_shape must be positive and every size at most 2^20");
		int64_t p = img[k] + pad[k] + pad[k + ns], span = p - (blk[k] - 1) * dil[k] - 1;
		if (span < 0)
			return imp_op_err(im, "the block is larger than the padded image along axis %u", k);
		padded[k] = (uint64_t)p;
		nblk[k] = (uint64_t)(span / str[k] + 1);
		if (!table_fits(K, (uint64_t)blk[k]) || !table_fits(L, nblk[k]) || padded[k] > ((uint64_t)1 << 24) ||
		    HP * padded[k] > ((uint64_t)1 << 24))
			return imp_op_err(im, "images of more than 2^24 elements or more than 2^20 columns are not supported");
		K *= (uint64_t)blk[k];
		L *= nblk[k];
		HP *= padded[k];
	}
	if (xt->dims[1] % K || xt->dims[2] != L)
		return imp_op_err(im, "input is [%llu, %llu, %llu]; expected [N, C * %llu, %llu]",
			      (unsigned long long)xt->dims[0], (unsigned long long)xt->dims[1],
			      (unsigned long long)xt->dims[2], (unsigned long long)K, (unsigned long long)L);
	uint64_t N = xt->dims[0], C = xt->dims[1] / K, M = C * K * L;
	if (!table_fits(C, K) || !table_fits(C * K, L) || C * HP > ((uint64_t)1 << 24))
		return imp_op_err(im, "images of more than 2^24 elements or more than 2^20 columns are not supported");
	int64_t *tgt = arena_alloc(&im->scratch, (M + 1) * sizeof *tgt);
	for (uint64_t c = 0; c < C; c++)
		for (uint64_t kk = 0; kk < K; kk++)
			for (uint64_t l = 0; l < L; l++) {
				uint64_t kr = kk, lr = l, pos = 0;
				uint64_t ko[GLOW_MAX_RANK], lo[GLOW_MAX_RANK];
				for (unsigned k = ns; k-- > 0;) {
					ko[k] = kr % (uint64_t)blk[k], kr /= (uint64_t)blk[k];
					lo[k] = lr % nblk[k], lr /= nblk[k];
				}
				for (unsigned k = 0; k < ns; k++)
					pos = pos * padded[k] + lo[k] * (uint64_t)str[k] + ko[k] * (uint64_t)dil[k];
				tgt[(c * K + kk) * L + l] = (int64_t)(c * HP + pos);
			}
	uint64_t f2[2] = {N, M}, i1[2] = {1, M}, z2[2] = {N, C * HP};
	struct value flat = imp_b_reshape(im, x, f2, 2, imp_dname(im, name, "flat"));
	struct tensor *it = imp_t_from_ints(im, imp_dname(im, name, "at"), DT_INT64, 2, i1, tgt);
	struct value idx = imp_b_broadcast(im, imp_tval(im, it), f2, 2, imp_dname(im, name, "atb"));
	struct value zero = imp_b_splat_const(im, imp_dname(im, name, "zero"), imp_ty(im, xt->elem, z2, 2), 0);
	struct value ops[3] = {zero, idx, flat};
	if (!flat.node || !idx.node)
		return -1;
	struct value s = imp_b_node(im, NK_ScatterElements, imp_dname(im, name, "sum"), ops, 3, val_type(zero));
	if (s.node) {
		node_set_int(im->m, s.node, AN_axis, 1);
		node_set_int(im->m, s.node, AN_reduction, 1); /* add */
	}
	uint64_t pd[GLOW_MAX_RANK] = {N, C}, od[GLOW_MAX_RANK] = {N, C};
	int64_t start[GLOW_MAX_RANK] = {0, 0};
	bool crop = false;
	for (unsigned k = 0; k < ns; k++) {
		pd[2 + k] = padded[k];
		od[2 + k] = (uint64_t)img[k];
		start[2 + k] = pad[k];
		crop |= padded[k] != (uint64_t)img[k];
	}
	if (!crop)
		return imp_set_out(im, 0, imp_b_reshape(im, s, od, ns + 2, name));
	struct value p = imp_b_reshape(im, s, pd, ns + 2, imp_dname(im, name, "padded"));
	if (!p.node)
		return -1;
	struct value r = imp_b_node(im, NK_Slice, name, &p, 1, imp_ty(im, xt->elem, od, ns + 2));
	if (r.node)
		node_set_ints(im->m, r.node, AN_start, start, ns + 2);
	return imp_set_out(im, 0, r);
}
