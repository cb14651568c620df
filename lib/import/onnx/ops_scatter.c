/* ops_scatter.c - the max and min reductions of ScatterElements and
 * ScatterND (opset 18), which the graph kinds (none, add, mul) lack.
 *
 * With the indices known at import every update's target is known: the
 * updates are grouped by target (as rows of S elements: one element for
 * ScatterElements, the slice behind an index tuple for ScatterND), each
 * group padded to the largest group's size by repeating its first update
 * (which changes neither a maximum nor a minimum), gathered to
 * [targets, group, S] and reduced over the group; the data at the targets
 * is combined with that by Max or Min and written back by a ScatterND
 * whose targets are now distinct. Indices computed at run time are
 * refused for these two reductions.
 */
#include "import/onnx/internal.h"

#include <string.h>

static struct value gather0(struct importer *im, struct value d, const int64_t *iv, const uint64_t *idims,
			    unsigned irank, const char *name)
{
	if (!d.node)
		return d;
	const struct type *t = val_type(d);
	uint64_t od[GLOW_MAX_RANK];
	for (unsigned i = 0; i < irank; i++)
		od[i] = idims[i];
	for (unsigned i = 1; i < t->rank; i++)
		od[irank + i - 1] = t->dims[i];
	struct tensor *it = imp_t_from_ints(im, imp_dname(im, name, "idx"), DT_INT64, irank, idims, iv);
	struct value ops[2] = {d, imp_tval(im, it)};
	return imp_b_node(im, NK_Gather, name, ops, 2, type_with_dims(im->tc, t, od, irank + t->rank - 1));
}

/* The max (is_max) or min reduction of ScatterND (nd) or ScatterElements
 * (see the file's note); output 0 bound or an error reported. */
int imp_scatter_minmax(struct importer *im, const onnx_node *n, bool nd, bool is_max)
{
	struct tensor *dt = imp_in_req(im, 0), *it = imp_in_req(im, 1), *ut = imp_in_req(im, 2);
	if (!dt || !it || !ut)
		return -1;
	const char *name = imp_out_name(im, 0);
	const char *red = is_max ? "max" : "min";
	const int64_t *iv = imp_t_ints(im, it);
	if (!iv)
		return imp_op_err(im, "reduction \"%s\" needs indices known at import", red);
	unsigned r = dt->rank;
	uint64_t m_upd, s = 1, rows = 1;
	int64_t *tgt;
	if (nd) {
		if (it->rank < 1)
			return imp_op_err(im, "indices must have rank at least 1");
		uint64_t q = it->dims[it->rank - 1];
		if (q > r)
			return imp_op_err(im, "index tuples of %llu entries for data of rank %u", (unsigned long long)q, r);
		m_upd = q ? imp_t_numel(it) / q : 0;
		for (unsigned i = 0; i < r; i++) {
			if (i < q)
				rows *= dt->dims[i];
			else
				s *= dt->dims[i];
		}
		if (ut->rank != it->rank - 1 + (r - q))
			return imp_op_err(im, "updates must have rank %llu", (unsigned long long)(it->rank - 1 + (r - q)));
		for (unsigned i = 0; i + 1 < it->rank; i++)
			if (ut->dims[i] != it->dims[i])
				return imp_op_err(im, "updates' dimension %u must be %llu", i, (unsigned long long)it->dims[i]);
		for (unsigned i = q; i < r; i++)
			if (ut->dims[it->rank - 1 + i - q] != dt->dims[i])
				return imp_op_err(im, "updates' slices must match data's dimensions from %llu on",
					      (unsigned long long)q);
		tgt = arena_alloc(&im->scratch, (m_upd + 1) * sizeof *tgt);
		for (uint64_t j = 0; j < m_upd; j++) {
			int64_t lin = 0;
			for (uint64_t k = 0; k < q; k++) {
				int64_t x = iv[j * q + k], d = (int64_t)dt->dims[k];
				if (x < -d || x >= d)
					return imp_op_err(im, "index %lld out of range for dimension %llu of size %lld",
						      (long long)x, (unsigned long long)k, (long long)d);
				lin = lin * d + (x < 0 ? x + d : x);
			}
			tgt[j] = lin;
		}
	} else {
		unsigned axis;
		if (imp_norm_axis(im, imp_attr_i(n, "axis", 0), r, &axis))
			return -1;
		if (it->rank != r || ut->rank != r || memcmp(it->dims, ut->dims, r * sizeof *it->dims))
			return imp_op_err(im, "indices and updates must have one shape of data's rank");
		m_upd = imp_t_numel(it);
		rows = imp_t_numel(dt);
		tgt = arena_alloc(&im->scratch, (m_upd + 1) * sizeof *tgt);
		for (uint64_t j = 0; j < m_upd; j++) {
			uint64_t rest = j, pos[GLOW_MAX_RANK];
			for (unsigned k = r; k-- > 0;)
				pos[k] = rest % it->dims[k], rest /= it->dims[k];
			int64_t x = iv[j], d = (int64_t)dt->dims[axis];
			if (x < -d || x >= d)
				return imp_op_err(im, "index %lld out of range for axis %u of size %lld", (long long)x, axis,
					      (long long)d);
			pos[axis] = (uint64_t)(x < 0 ? x + d : x);
			int64_t lin = 0;
			for (unsigned k = 0; k < r; k++)
				lin = lin * (int64_t)dt->dims[k] + (int64_t)pos[k];
			tgt[j] = lin;
		}
	}
	struct value d = imp_tval(im, dt), u = imp_tval(im, ut);
	if (!d.node || !u.node)
		return -1;
	if (val_type(u)->elem != val_type(d)->elem)
		return imp_op_err(im, "updates must have the element type of data");
	if (m_upd == 0)
		return imp_set_out(im, 0, d);
	/* groups in order of first appearance */
	int64_t *uniq = arena_alloc(&im->scratch, m_upd * sizeof *uniq);
	uint64_t *grp = arena_alloc(&im->scratch, m_upd * sizeof *grp), *cnt = arena_alloc(&im->scratch, m_upd * sizeof *cnt);
	uint64_t nt = 0, mult = 1;
	struct u64map seen;
	u64map_init(&seen);
	for (uint64_t j = 0; j < m_upd; j++) {
		uint64_t g;
		void *hit = u64map_get(&seen, (uint64_t)tgt[j]);
		if (hit) {
			g = (uint64_t)(uintptr_t)hit - 1;
			cnt[g]++;
		} else {
			g = nt++;
			u64map_put(&seen, (uint64_t)tgt[j], (void *)(uintptr_t)(g + 1));
			uniq[g] = tgt[j];
			cnt[g] = 1;
		}
		grp[j] = g;
		if (cnt[g] > mult)
			mult = cnt[g];
	}
	u64map_free(&seen);
	if (!table_fits(nt, mult))
		return imp_op_err(im, "%llu targets with up to %llu updates each exceed the importer's tables (2^20 entries)",
			      (unsigned long long)nt, (unsigned long long)mult);
	int64_t *mat = arena_alloc(&im->scratch, nt * mult * sizeof *mat);
	uint64_t *fill = arena_alloc(&im->scratch, nt * sizeof *fill);
	memset(fill, 0, nt * sizeof *fill);
	for (uint64_t j = 0; j < m_upd; j++)
		mat[grp[j] * mult + fill[grp[j]]++] = (int64_t)j;
	for (uint64_t g = 0; g < nt; g++)
		for (uint64_t k = fill[g]; k < mult; k++)
			mat[g * mult + k] = mat[g * mult];
	int elem = val_type(d)->elem;
	uint64_t d2[2] = {rows, s}, u2[2] = {m_upd, s}, md[2] = {nt, mult}, ts[2] = {nt, s};
	struct value data2 = imp_b_reshape(im, d, d2, 2, imp_dname(im, name, "rows"));
	struct value upd2 = imp_b_reshape(im, u, u2, 2, imp_dname(im, name, "updrows"));
	struct value g = gather0(im, upd2, mat, md, 2, imp_dname(im, name, "groups"));
	struct value gr = g.node ? imp_b_node(im, is_max ? NK_BatchedReduceMax : NK_BatchedReduceMin, imp_dname(im, name, "grouped"),
				       &g, 1, imp_ty(im, elem, ts, 2))
				 : no_value;
	if (gr.node)
		node_set_ints(im->m, gr.node, AN_axes, (int64_t[]){1}, 1);
	struct value cur = gather0(im, data2, uniq, &nt, 1, imp_dname(im, name, "cur"));
	struct value ops[2] = {cur, gr};
	struct value nv = cur.node && gr.node ? imp_b_node(im, is_max ? NK_Max : NK_Min, imp_dname(im, name, "combined"), ops, 2,
						      val_type(cur))
					      : no_value;
	uint64_t t2[2] = {nt, 1};
	struct tensor *tt = imp_t_from_ints(im, imp_dname(im, name, "targets"), DT_INT64, 2, t2, uniq);
	struct value sops[3] = {data2, imp_tval(im, tt), nv};
	if (!data2.node || !sops[1].node || !nv.node)
		return -1;
	struct value sc = imp_b_node(im, NK_ScatterND, imp_dname(im, name, "scattered"), sops, 3, val_type(data2));
	return imp_set_out(im, 0, imp_b_reshape(im, sc, dt->dims, dt->rank, name));
}
