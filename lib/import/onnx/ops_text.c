/* ops_text.c - TfIdfVectorizer and Compress as compositions of existing
 * kinds.
 *
 * TfIdfVectorizer (opset 9): the pool of n-grams and every attribute are
 * known at import, so each n-gram length n gets one static comparison. The
 * input (rank 1 [C] or rank 2 [N, C], int32 or int64, widened to int64) is
 * read by one Gather of constant positions: the windows of every skip s in
 * [0, max_skip_count] (items i, i + (s + 1), ..., i + (n - 1)(s + 1), for
 * every i where the window fits; unigrams only at s = 0, since skips do not
 * change them; the unigram windows are the input itself, reshaped)
 * stacked into [N, windows, 1, n]. CmpEQ against the pooled
 * n-grams [K_n, n] (both broadcast to [N, windows, K_n, n]) marks matching
 * items; ConvertTo float and BatchedReduceMin over the n items give 1 where
 * the whole window matches, BatchedReduceAdd over the windows the count of
 * every pooled n-gram. So a window found at several skips counts once per
 * skip, as the operator's reference does. Pooled n-grams whose length is
 * outside [min_gram_length, max_gram_length] count zero. The counts of all
 * lengths, concatenated in pool order, are weighted by the mode (TF: the
 * counts; IDF: the n-gram's weight where its count is positive, else 0;
 * TFIDF: count * weight; weights[k] belongs to the k-th pooled n-gram, as
 * the operator's definition says, and defaults to 1) and placed at their
 * ngram_indexes by a Gather (slots no n-gram names read an appended zero
 * column). ngram_indexes must be distinct. String pools and inputs are out
 * of scope (the graph IR has no strings). A comparison of more than
 * TFIDF_MAX_ELEMS items per n-gram length is refused rather than built.
 *
 * Compress: its condition decides the output's shape, so it must be known at
 * import (an initializer, a folded value, or a graph input bound with
 * glow-import -freeze-input). The selected positions (those of true
 * elements; a condition shorter than the axis selects only within its
 * length) become one Gather along the axis, or along the flattened input
 * when no axis is given; a known input is gathered at import.
 */
#include "import/onnx/internal.h"

#include <stdio.h>
#include <string.h>

/* Items compared per n-gram length (N x windows x pooled n-grams x n). */
#define TFIDF_MAX_ELEMS ((uint64_t)1 << 24)
/* Output columns (max(ngram_indexes) + 1). */
#define TFIDF_MAX_OUT ((int64_t)1 << 20)

/* The attributes of one TfIdfVectorizer node, checked. */
struct tfidf {
	int mode;                 /* 0 TF, 1 IDF, 2 TFIDF */
	int64_t min_n, max_n, max_skip;
	const int64_t *pool;
	long npool;
	const int64_t *starts;    /* ngram_counts: where the (i+1)-grams start in pool */
	long nstarts;
	const int64_t *slots;     /* ngram_indexes, one per pooled n-gram */
	uint64_t npooled;         /* pooled n-grams, all lengths */
	const float *weights;     /* NULL: all 1 */
	int64_t nout;             /* max(ngram_indexes) + 1 */
};

/* Pool items of the (i+1)-grams: [*begin, *end). */
static void tf_segment(const struct tfidf *t, long i, int64_t *begin, int64_t *end)
{
	*begin = t->starts[i];
	*end = i + 1 < t->nstarts ? t->starts[i + 1] : t->npool;
}

static int tf_attrs(struct importer *im, const onnx_node *n, struct tfidf *t)
{
	memset(t, 0, sizeof *t);
	const char *mode = imp_attr_s(im, n, "mode", NULL);
	if (!mode)
		return imp_op_err(im, "attribute mode is required (TF, IDF or TFIDF)");
	t->mode = !strcmp(mode, "TF") ? 0 : !strcmp(mode, "IDF") ? 1 : !strcmp(mode, "TFIDF") ? 2 : -1;
	if (t->mode < 0)
		return imp_op_err(im, "unknown mode '%s' (TF, IDF or TFIDF)", mode);
	t->min_n = imp_attr_i(n, "min_gram_length", -1);
	t->max_n = imp_attr_i(n, "max_gram_length", -1);
	t->max_skip = imp_attr_i(n, "max_skip_count", 0);
	if (t->min_n < 1 || t->max_n < t->min_n)
		return imp_op_err(im, "min_gram_length (%lld) and max_gram_length (%lld) must satisfy "
			      "1 <= min_gram_length <= max_gram_length",
			      (long long)t->min_n, (long long)t->max_n);
	if (t->max_skip < 0)
		return imp_op_err(im, "max_skip_count %lld is negative", (long long)t->max_skip);
	long npool = t->npool = imp_attr_ints(n, "pool_int64s", &t->pool);
	if (npool < 0)
		return imp_op_err(im, "attribute pool_int64s is required");
	t->nstarts = imp_attr_ints(n, "ngram_counts", &t->starts);
	if (t->nstarts < 1)
		return imp_op_err(im, "attribute ngram_counts is required (where each n-gram length starts in the pool)");
	if (t->starts[0] != 0)
		return imp_op_err(im, "ngram_counts must start at 0, not %lld", (long long)t->starts[0]);
	for (long i = 0; i < t->nstarts; i++) {
		int64_t b, e;
		tf_segment(t, i, &b, &e);
		if (b < 0 || e < b || e > npool)
			return imp_op_err(im, "ngram_counts must be non-decreasing offsets into the pool of %ld items "
				      "(ngram_counts[%ld] = %lld)", npool, i, (long long)t->starts[i]);
		if ((e - b) % (i + 1) != 0)
			return imp_op_err(im, "the pool's %ld-grams (items %lld to %lld) are not a whole number of "
				      "%ld-grams", i + 1, (long long)b, (long long)e, i + 1);
		t->npooled += (uint64_t)((e - b) / (i + 1));
	}
	long nslots = imp_attr_ints(n, "ngram_indexes", &t->slots);
	if (nslots < 0 || (uint64_t)nslots != t->npooled)
		return imp_op_err(im, "ngram_indexes has %ld values but the pool holds %llu n-grams (per ngram_counts)",
			      nslots < 0 ? 0 : nslots, (unsigned long long)t->npooled);
	for (long k = 0; k < nslots; k++) {
		if (t->slots[k] < 0 || t->slots[k] >= TFIDF_MAX_OUT)
			return imp_op_err(im, "ngram index %lld (ngram_indexes[%ld]) is out of range [0, %lld)",
				      (long long)t->slots[k], k, (long long)TFIDF_MAX_OUT);
		if (t->slots[k] + 1 > t->nout)
			t->nout = t->slots[k] + 1;
	}
	if (t->nout == 0)
		return imp_op_err(im, "the pool is empty: the output would have no columns");
	uint8_t *seen = arena_alloc(&im->scratch, (size_t)t->nout);
	memset(seen, 0, (size_t)t->nout);
	for (long k = 0; k < nslots; k++) {
		if (seen[t->slots[k]])
			return imp_op_err(im, "ngram index %lld appears twice in ngram_indexes", (long long)t->slots[k]);
		seen[t->slots[k]] = 1;
	}
	long nw = imp_attr_floats(n, "weights", &t->weights);
	if (nw >= 0 && (uint64_t)nw != t->npooled)
		return imp_op_err(im, "weights has %ld values but the pool holds %llu n-grams", nw,
			      (unsigned long long)t->npooled);
	if (nw < 0)
		t->weights = NULL;
	return 0;
}

/* [N, K] counts of the K pooled n-grams of length len (pool items from
 * first) in the rows of x ([N, C] int64); NULL node after reporting. */
static struct value tf_count(struct importer *im, const struct tfidf *t, struct value x, int64_t len,
			     const int64_t *first, uint64_t K, const char *name)
{
	const struct type *xt = val_type(x);
	uint64_t N = xt->dims[0], C = xt->dims[1], nn = (uint64_t)len;
	uint64_t cd[2] = {N, K};
	char sfx[32];
	snprintf(sfx, sizeof sfx, "count%lld", (long long)len);
	const char *cname = imp_dname(im, name, sfx);
	/* windows of every skip: skip s spans (n - 1)(s + 1) + 1 items; the
	 * spans grow with s, so the loop ends by s = C (or past the limit) */
	uint64_t nwin = 0;
	bool more = false;
	int64_t skips = len == 1 ? 0 : t->max_skip;
	for (int64_t s = 0; s <= skips && !more; s++) {
		uint64_t span = (nn - 1) * (uint64_t)(s + 1) + 1;
		if (span > C)
			break;
		nwin += C - span + 1;
		more = nwin > TFIDF_MAX_ELEMS;
	}
	if (len < t->min_n || len > t->max_n || nwin == 0)
		return imp_b_splat_const(im, cname, imp_ty(im, EK_FLOAT, cd, 2), 0);
	uint64_t total = N > 0 ? N : 1; /* the window positions are a constant even without rows */
	if (more || !mul_overflow_u64(total, nwin, &total) || !mul_overflow_u64(total, K, &total) ||
	    !mul_overflow_u64(total, nn, &total) || total > TFIDF_MAX_ELEMS) {
		imp_op_err(im, "counting the %lld-grams compares N x windows x pooled n-grams x n = %llu x %s%llu x %llu "
		       "x %lld items; at most 2^24 are supported",
		       (long long)len, (unsigned long long)N, more ? "at least " : "", (unsigned long long)nwin,
		       (unsigned long long)K, (long long)len);
		return no_value;
	}
	int64_t *pos = len > 1 ? arena_alloc(&im->scratch, nwin * nn * sizeof *pos) : NULL;
	uint64_t w = 0;
	for (int64_t s = 0; s <= skips && len > 1; s++) {
		uint64_t dist = (uint64_t)(s + 1), span = (nn - 1) * dist + 1;
		if (span > C)
			break;
		for (uint64_t i = 0; i + span <= C; i++, w++)
			for (uint64_t j = 0; j < nn; j++)
				pos[w * nn + j] = (int64_t)(i + j * dist);
	}
	snprintf(sfx, sizeof sfx, "win%lld", (long long)len);
	const char *wname = imp_dname(im, name, sfx);
	snprintf(sfx, sizeof sfx, "pool%lld", (long long)len);
	const char *pname = imp_dname(im, name, sfx);
	/* unigrams compare [N, windows, K]; longer n-grams [N, windows, K, n] */
	unsigned r = len == 1 ? 3 : 4;
	uint64_t wd[3] = {nwin, 1, nn}, pd[2] = {K, nn}, ed[4] = {N, nwin, K, nn};
	struct tensor *wt = len == 1 ? NULL : imp_t_from_ints(im, wname, DT_INT64, r - 1, wd, pos);
	struct tensor *pt = imp_t_from_ints(im, pname, DT_INT64, r - 2, pd, first);
	if ((len > 1 && !wt) || !pt)
		return no_value;
	uint64_t gd[4] = {N, nwin, 1, nn};
	struct value g;
	if (len == 1) { /* the unigram windows are the items themselves */
		g = imp_b_reshape(im, x, gd, 3, imp_dname(im, wname, "items"));
	} else {
		struct value gops[2] = {x, imp_tval(im, wt)};
		g = imp_b_node(im, NK_Gather, imp_dname(im, wname, "items"), gops, 2, imp_ty(im, EK_I64, gd, r));
		if (g.node)
			node_set_int(im->m, g.node, AN_axis, 1);
	}
	struct value eops[2] = {imp_b_broadcast(im, g, ed, r, imp_dname(im, wname, "bcast")),
				imp_b_broadcast(im, imp_tval(im, pt), ed, r, imp_dname(im, pname, "bcast"))};
	snprintf(sfx, sizeof sfx, "eq%lld", (long long)len);
	struct value eq = imp_b_node(im, NK_CmpEQ, imp_dname(im, name, sfx), eops, 2, imp_ty(im, EK_BOOL, ed, r));
	snprintf(sfx, sizeof sfx, "hit%lld", (long long)len);
	struct value hit = imp_b_convert(im, eq, EK_FLOAT, imp_dname(im, name, sfx));
	if (len > 1) {
		int64_t ax = 3;
		snprintf(sfx, sizeof sfx, "all%lld", (long long)len);
		hit = imp_b_node(im, NK_BatchedReduceMin, imp_dname(im, name, sfx), &hit, 1, imp_ty(im, EK_FLOAT, ed, 3));
		if (hit.node)
			node_set_ints(im->m, hit.node, AN_axes, &ax, 1);
	}
	int64_t ax = 1;
	struct value c = imp_b_node(im, NK_BatchedReduceAdd, cname, &hit, 1, imp_ty(im, EK_FLOAT, cd, 2));
	if (c.node)
		node_set_ints(im->m, c.node, AN_axes, &ax, 1);
	return c;
}

int imp_op_tfidf(struct importer *im, const onnx_node *n)
{
	struct tensor *x = imp_in_req(im, 0);
	if (!x)
		return -1;
	if (x->dtype == DT_STRING || imp_attr(n, "pool_strings"))
		return imp_op_err(im, "string n-grams (pool_strings, string input) are not supported: the graph IR has no "
			      "string tensors");
	if (x->dtype != DT_INT32 && x->dtype != DT_INT64)
		return imp_op_err(im, "input must be int32 or int64, not %s", imp_dt_name(x->dtype));
	if (x->rank != 1 && x->rank != 2)
		return imp_op_err(im, "input must have rank 1 [C] or 2 [N, C], not %u", x->rank);
	struct tfidf t;
	if (tf_attrs(im, n, &t))
		return -1;
	const char *name = imp_out_name(im, 0);
	uint64_t N = x->rank == 2 ? x->dims[0] : 1, C = x->dims[x->rank - 1];
	uint64_t xd[2] = {N, C};
	struct value xv = imp_b_reshape(im, imp_tval(im, x), xd, 2, imp_dname(im, name, "rows"));
	xv = imp_b_convert(im, xv, EK_I64, imp_dname(im, name, "wide"));
	if (!xv.node)
		return -1;
	/* counts of every pooled n-gram, in pool order */
	struct value *parts = arena_alloc(&im->scratch, (size_t)t.nstarts * sizeof *parts);
	unsigned np = 0;
	for (long i = 0; i < t.nstarts; i++) {
		int64_t b, e;
		tf_segment(&t, i, &b, &e);
		uint64_t K = (uint64_t)((e - b) / (i + 1));
		if (K == 0)
			continue;
		parts[np] = tf_count(im, &t, xv, i + 1, t.pool + b, K, name);
		if (!parts[np].node)
			return -1;
		np++;
	}
	/* the placement by ngram_indexes is the identity when they are 0, 1, ... */
	bool ident = (uint64_t)t.nout == t.npooled;
	for (uint64_t k = 0; ident && k < t.npooled; k++)
		ident = t.slots[k] == (int64_t)k;
	bool weigh = t.mode == 1 || (t.mode == 2 && t.weights);
	uint64_t cd[2] = {N, t.npooled};
	struct value v = parts[0];
	if (np > 1) {
		bool last = x->rank == 2 && ident && !weigh;
		v = imp_b_node(im, NK_Concat, last ? name : imp_dname(im, name, "counts"), parts, np, imp_ty(im, EK_FLOAT, cd, 2));
		if (v.node)
			node_set_int(im->m, v.node, AN_dim, 1);
	}
	struct value wv = no_value;
	if (t.weights && t.mode != 0) {
		double *wd = arena_alloc(&im->scratch, t.npooled * sizeof *wd);
		for (uint64_t k = 0; k < t.npooled; k++)
			wd[k] = imp_f32_short(t.weights[k]);
		struct tensor *wt = imp_t_from_floats(im, imp_dname(im, name, "weights"), DT_FLOAT, 1, &t.npooled, wd);
		if (!wt)
			return -1;
		wv = imp_b_broadcast(im, imp_tval(im, wt), cd, 2, imp_dname(im, name, "weightsb"));
	}
	if (t.mode == 1) {
		struct value z = imp_b_splat_const(im, imp_dname(im, name, "zero"), imp_ty(im, EK_FLOAT, cd, 2), 0);
		struct value cops[2] = {z, v};
		struct value seen = imp_b_node(im, NK_CmpLT, imp_dname(im, name, "seen"), cops, 2, imp_ty(im, EK_BOOL, cd, 2));
		if (!wv.node)
			wv = imp_b_splat_const(im, imp_dname(im, name, "one"), imp_ty(im, EK_FLOAT, cd, 2), 1);
		struct value sops[3] = {seen, wv, z};
		v = imp_b_node(im, NK_Select, x->rank == 2 && ident ? name : imp_dname(im, name, "idf"), sops, 3, imp_ty(im, EK_FLOAT, cd, 2));
	} else if (t.mode == 2 && wv.node) {
		struct value mops[2] = {v, wv};
		v = imp_b_node(im, NK_Mul, x->rank == 2 && ident ? name : imp_dname(im, name, "tfidf"), mops, 2, imp_ty(im, EK_FLOAT, cd, 2));
	}
	/* placement: column o reads the pooled n-gram k with ngram_indexes[k] = o */
	if (!ident) {
		uint64_t src_cols = t.npooled;
		if ((uint64_t)t.nout > t.npooled) {
			/* some columns have no n-gram: they read an appended zero column */
			uint64_t zd[2] = {N, 1}, ad[2] = {N, t.npooled + 1};
			struct value cops[2] = {v, imp_b_splat_const(im, imp_dname(im, name, "none"), imp_ty(im, EK_FLOAT, zd, 2), 0)};
			v = imp_b_node(im, NK_Concat, imp_dname(im, name, "padded"), cops, 2, imp_ty(im, EK_FLOAT, ad, 2));
			if (v.node)
				node_set_int(im->m, v.node, AN_dim, 1);
			src_cols++;
		}
		int64_t *src = arena_alloc(&im->scratch, (size_t)t.nout * sizeof *src);
		for (int64_t o = 0; o < t.nout; o++)
			src[o] = (int64_t)src_cols - 1;
		for (uint64_t k = 0; k < t.npooled; k++)
			src[t.slots[k]] = (int64_t)k;
		uint64_t no = (uint64_t)t.nout, od[2] = {N, no};
		struct tensor *st = imp_t_from_ints(im, imp_dname(im, name, "slots"), DT_INT64, 1, &no, src);
		if (!st)
			return -1;
		struct value gops[2] = {v, imp_tval(im, st)};
		v = imp_b_node(im, NK_Gather, x->rank == 2 ? name : imp_dname(im, name, "placed"), gops, 2,
			   imp_ty(im, EK_FLOAT, od, 2));
		if (v.node)
			node_set_int(im->m, v.node, AN_axis, 1);
	}
	if (x->rank == 1) {
		uint64_t no = (uint64_t)t.nout;
		v = imp_b_reshape(im, v, &no, 1, name);
	}
	/* imp_set_out fails on a node that was not built */
	return imp_set_out(im, 0, v);
}

int imp_op_compress(struct importer *im, const onnx_node *n)
{
	struct tensor *data = imp_in_req(im, 0), *cond = imp_in_req(im, 1);
	if (!data || !cond)
		return -1;
	if (!imp_t_type(im, data))
		return -1;
	if (cond->dtype != DT_BOOL || cond->rank != 1)
		return imp_op_err(im, "condition must be a 1-D bool tensor");
	if (!cond->known)
		return imp_op_err(im, "Compress condition must be known at import: the output shape depends on it");
	const int64_t *cv = imp_t_ints(im, cond);
	if (!cv)
		return imp_op_err(im, "condition has %llu values; at most %u are supported",
			      (unsigned long long)imp_t_numel(cond), ONNX_FOLD_MAX);
	const Onnx__AttributeProto *ax = imp_attr(n, "axis");
	bool flat = !ax || !ax->has_i;
	unsigned axis = 0;
	if (!flat && imp_norm_axis(im, ax->i, data->rank, &axis))
		return -1;
	uint64_t len = flat ? imp_t_numel(data) : data->dims[axis], cnt = imp_t_numel(cond);
	if (cnt > len)
		return imp_op_err(im, "condition has %llu values but the %s has only %llu", (unsigned long long)cnt,
			      flat ? "flattened input" : "axis", (unsigned long long)len);
	int64_t *idx = arena_alloc(&im->scratch, (cnt + 1) * sizeof *idx);
	uint64_t m = 0;
	for (uint64_t k = 0; k < cnt; k++)
		if (cv[k])
			idx[m++] = (int64_t)k;
	const char *name = imp_out_name(im, 0);
	struct tensor *src = flat ? imp_t_view(im, data, imp_dname(im, name, "flat"), 1, &len) : data;
	struct tensor *it = imp_t_from_ints(im, imp_dname(im, name, "selected"), DT_INT64, 1, &m, idx);
	if (!it)
		return -1;
	if (src->known) {
		struct tensor *k = imp_k_gather(im, src, it, axis, name);
		if (k)
			return imp_set_out_t(im, 0, k);
	}
	uint64_t od[GLOW_MAX_RANK];
	memcpy(od, src->dims, sizeof od);
	od[axis] = m;
	const struct type *rt = imp_ty(im, imp_dt_elem(src->dtype), od, src->rank);
	if (!rt)
		return -1;
	if (m == 0) /* nothing selected: an empty value */
		return imp_set_out(im, 0, imp_b_splat_const(im, imp_dname(im, name, "empty"), rt, 0));
	struct value sv = flat && !data->known ? imp_b_reshape(im, imp_tval(im, data), &len, 1, src->name) : imp_tval(im, src);
	struct value gops[2] = {sv, imp_tval(im, it)};
	struct value y = imp_b_node(im, NK_Gather, name, gops, 2, rt);
	if (!y.node)
		return -1;
	node_set_int(im->m, y.node, AN_axis, axis);
	return imp_set_out(im, 0, y);
}
