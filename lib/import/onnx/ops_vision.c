/* ops_vision.c - ReverseSequence and Det as compositions of existing kinds.
 *
 * ReverseSequence: along the time axis, position t of batch entry b reads
 * len[b] - 1 - t when t < len[b] and t otherwise; the index tensor is
 * computed at run time from sequence_lens (Select of a compare with a
 * constant iota) and read with one GatherElements.
 *
 * Det of a static n x n matrix (n <= DET_MAX) by the Leibniz formula: the
 * last two dimensions are flattened, one Gather picks the n factors
 * x[i][p(i)] of every permutation p, BatchedReduceProd multiplies them,
 * a Mul by the permutations' signs and a BatchedReduceAdd sum the terms.
 */
#include "import/onnx/internal.h"

#include <string.h>

/* Largest matrix Det expands (5! = 120 terms of 5 factors). */
#define DET_MAX 5

int imp_op_reverse_sequence(struct importer *im, const onnx_node *n)
{
	struct tensor *x = imp_in_req(im, 0), *lt = imp_in_req(im, 1);
	if (!x || !lt)
		return -1;
	if (x->rank < 2)
		return imp_op_err(im, "input must have rank 2 or more");
	int64_t ba = imp_attr_i(n, "batch_axis", 1), ta = imp_attr_i(n, "time_axis", 0);
	if ((ba != 0 && ba != 1) || (ta != 0 && ta != 1) || ba == ta)
		return imp_op_err(im, "batch_axis and time_axis must be 0 and 1 in some order");
	uint64_t B = x->dims[ba], T = x->dims[ta];
	if (lt->rank != 1 || lt->dims[0] != B || (lt->dtype != DT_INT64 && lt->dtype != DT_INT32))
		return imp_op_err(im, "sequence_lens must be an int64 vector of %llu elements", (unsigned long long)B);
	const char *name = imp_out_name(im, 0);
	const struct type *xt = imp_t_type(im, x);
	if (!xt)
		return -1;
	unsigned r = x->rank;
	uint64_t ld[GLOW_MAX_RANK], td[GLOW_MAX_RANK];
	for (unsigned i = 0; i < r; i++)
		ld[i] = td[i] = 1;
	ld[ba] = B;
	td[ta] = T;
	int64_t *iota = arena_alloc(&im->scratch, T * sizeof *iota);
	for (uint64_t t = 0; t < T; t++)
		iota[t] = (int64_t)t;
	const struct type *it = imp_ty(im, EK_I64, x->dims, r);
	struct value len = imp_b_convert(im, imp_tval(im, lt), EK_I64, imp_dname(im, name, "len64"));
	len = imp_b_reshape(im, len, ld, r, imp_dname(im, name, "lenr"));
	len = imp_b_broadcast(im, len, x->dims, r, imp_dname(im, name, "lenb"));
	struct tensor *iot = imp_t_from_ints(im, imp_dname(im, name, "iota"), DT_INT64, r, td, iota);
	struct value pos = imp_b_broadcast(im, iot ? imp_tval(im, iot) : no_value, x->dims, r, imp_dname(im, name, "iotab"));
	struct value cmp[2] = {pos, len};
	struct value inside = imp_b_node(im, NK_CmpLT, imp_dname(im, name, "inside"), cmp, 2,
				     it ? type_with_elem(im->tc, it, EK_BOOL) : NULL);
	struct value sub[2] = {len, imp_b_splat_const(im, imp_dname(im, name, "one"), it, 1)};
	struct value last = imp_b_node(im, NK_Sub, imp_dname(im, name, "last"), sub, 2, it);
	struct value rsub[2] = {last, pos};
	struct value rev = imp_b_node(im, NK_Sub, imp_dname(im, name, "rev"), rsub, 2, it);
	struct value sel[3] = {inside, rev, pos};
	struct value idx = imp_b_node(im, NK_Select, imp_dname(im, name, "idx"), sel, 3, it);
	struct value ge[2] = {imp_tval(im, x), idx};
	struct value y = imp_b_node(im, NK_GatherElements, name, ge, 2, xt);
	if (!y.node)
		return -1;
	node_set_int(im->m, y.node, AN_axis, ta);
	return imp_set_out(im, 0, y);
}

/* Permutations of 0..n-1 in p (n! rows of n), their signs in sign. */
static void det_perms(unsigned n, int64_t *p, double *sign)
{
	unsigned cur[DET_MAX], rows = 0;
	/* iterate every n-tuple of 0..n-1 in lexicographic order and keep the
	 * permutations (at most 5^5 tuples) */
	unsigned total = 1;
	for (unsigned i = 0; i < n; i++)
		total *= n;
	for (unsigned code = 0; code < total; code++) {
		unsigned c = code, seen = 0;
		bool perm = true;
		for (unsigned i = n; i-- > 0;) {
			cur[i] = c % n;
			c /= n;
		}
		for (unsigned i = 0; i < n && perm; i++) {
			perm = !(seen & (1u << cur[i]));
			seen |= 1u << cur[i];
		}
		if (!perm)
			continue;
		unsigned inv = 0;
		for (unsigned i = 0; i < n; i++)
			for (unsigned j = i + 1; j < n; j++)
				inv += cur[i] > cur[j];
		for (unsigned i = 0; i < n; i++)
			p[rows * n + i] = (int64_t)(i * n + cur[i]);
		sign[rows++] = inv % 2 ? -1 : 1;
	}
}

int imp_op_det(struct importer *im, const onnx_node *n)
{
	(void)n;
	struct tensor *x = imp_in_req(im, 0);
	if (!x)
		return -1;
	if (!imp_dt_is_float(x->dtype) || imp_dt_elem(x->dtype) < 0)
		return imp_op_err(im, "input must be floating point, not %s", imp_dt_name(x->dtype));
	if (x->rank < 2 || x->dims[x->rank - 1] != x->dims[x->rank - 2])
		return imp_op_err(im, "input must be a (batch of) square matrices");
	uint64_t m = x->dims[x->rank - 1];
	if (m < 1 || m > DET_MAX)
		return imp_op_err(im, "Det of %llu x %llu matrices is not supported (at most %d x %d)",
			      (unsigned long long)m, (unsigned long long)m, DET_MAX, DET_MAX);
	const char *name = imp_out_name(im, 0);
	unsigned br = x->rank - 2;
	uint64_t dims[GLOW_MAX_RANK];
	memcpy(dims, x->dims, br * sizeof *dims);
	dims[br] = m * m;
	struct value v = imp_b_reshape(im, imp_tval(im, x), dims, br + 1, imp_dname(im, name, "flat"));
	uint64_t terms = 1;
	for (uint64_t i = 2; i <= m; i++)
		terms *= i;
	int64_t *p = arena_alloc(&im->scratch, terms * m * sizeof *p);
	double *sign = arena_alloc(&im->scratch, terms * sizeof *sign);
	det_perms((unsigned)m, p, sign);
	uint64_t pd[2] = {terms, m};
	struct tensor *pt = imp_t_from_ints(im, imp_dname(im, name, "perms"), DT_INT64, 2, pd, p);
	struct value gops[2] = {v, pt ? imp_tval(im, pt) : no_value};
	dims[br] = terms;
	dims[br + 1] = m;
	const struct type *gt = v.node ? type_with_dims(im->tc, val_type(v), dims, br + 2) : NULL;
	struct value g = imp_b_node(im, NK_Gather, imp_dname(im, name, "factors"), gops, 2, gt);
	if (!g.node)
		return -1;
	node_set_int(im->m, g.node, AN_axis, br);
	const struct type *tt = type_with_dims(im->tc, gt, dims, br + 1);
	struct value prod = imp_b_node(im, NK_BatchedReduceProd, imp_dname(im, name, "terms"), &g, 1, tt);
	if (!prod.node)
		return -1;
	int64_t ax = br + 1;
	node_set_ints(im->m, prod.node, AN_axes, &ax, 1);
	struct tensor *st = imp_t_from_floats(im, imp_dname(im, name, "signs"), x->dtype, 1, &terms, sign);
	struct value mops[2] = {prod, imp_b_broadcast(im, st ? imp_tval(im, st) : no_value, dims, br + 1,
						  imp_dname(im, name, "signsb"))};
	struct value signed_terms = imp_b_node(im, NK_Mul, imp_dname(im, name, "signed"), mops, 2, tt);
	struct value sum = imp_b_node(im, NK_BatchedReduceAdd, name, &signed_terms, 1,
				  type_with_dims(im->tc, gt, dims, br));
	if (!sum.node)
		return -1;
	ax = br;
	node_set_ints(im->m, sum.node, AN_axes, &ax, 1);
	return imp_set_out(im, 0, sum);
}
