/* control_slice.c - ONNX Slice whose starts or ends are known only at run
 * time, as a Loop body computes them from the iteration number (Debian's
 * test_loop11: x[i : i + 1]); docs/Conformance.md, "Control flow".
 *
 * Shapes are static, so the slice's width must be known at import though
 * its position is not: starts and ends (one axis) must be the same
 * run-time value plus known offsets (ends = starts + W, seen through
 * Unsqueeze/Reshape, integer casts and additions of constants). The slice
 * is then a Gather of the ceil(W / step) indices starts + j * step along
 * the axis. Where ONNX would clamp the slice shorter at run time (a start
 * past either end of the axis), the static width cannot follow: Gather's
 * index check stops the run instead. A negative run-time start counts from
 * the axis' end, as Gather's indices do; ONNX clamps a negative end of 0
 * differently (x[-1:0] is empty there), which a static width cannot be.
 */
#include "graph/region.h"
#include "import/onnx/control.h"
#include "import/onnx/internal.h"

#include <string.h>

/* operations an offset is followed through, at most (a chain in a body) */
#define CF_AFFINE_DEPTH 64

/* Whether v, of one integer element, is the same value as its operand 0
 * (a Reshape or Broadcast of it, or an integer ConvertTo). */
static bool passes_through(struct value v)
{
	const struct node *d = v.node;
	return (d->kind == NK_Reshape || d->kind == NK_Broadcast || d->kind == NK_ConvertTo) && d->nops == 1 &&
	       type_numel(val_type(v)) == 1 && elem_is_integer((enum elem_kind)op_type(d, 0)->elem) &&
	       elem_is_integer((enum elem_kind)val_type(v)->elem);
}

/* Operand i of d as a known integer *c (a constant, through passes_through). */
static bool const_operand(const struct node *d, unsigned i, int64_t *c)
{
	struct value v = op_val(d, i);
	for (unsigned depth = 0; depth < CF_AFFINE_DEPTH && passes_through(v); depth++)
		v = op_val(v.node, 0);
	return node_const_scalar(v.node, c);
}

/* Writes v as *base + *off, where *base is a run-time value (a NULL node
 * when v is the known *off) of one element, following passes_through and
 * Add or Sub of a constant. */
static void affine(struct value v, struct value *base, int64_t *off)
{
	*off = 0;
	for (unsigned depth = 0; v.node && depth < CF_AFFINE_DEPTH; depth++) {
		const struct node *d = v.node;
		int64_t c;
		if (type_numel(val_type(v)) != 1)
			break;
		if (node_const_scalar(d, &c)) {
			*off += c;
			v = (struct value){NULL, 0};
			break;
		}
		if (passes_through(v)) {
			v = op_val(d, 0);
		} else if ((d->kind == NK_Add || d->kind == NK_Sub) && d->nops == 2 && const_operand(d, 1, &c)) {
			*off += d->kind == NK_Add ? c : -c;
			v = op_val(d, 0);
		} else if (d->kind == NK_Add && d->nops == 2 && const_operand(d, 0, &c)) {
			*off += c;
			v = op_val(d, 1);
		} else {
			break;
		}
	}
	*base = v;
}

/* Slice (opset 10+) with starts or ends known only at run time. */
int imp_op_slice_runtime(struct importer *im, const onnx_node *n)
{
	(void)n;
	struct tensor *x = imp_in_req(im, 0), *S = imp_in_req(im, 1), *E = imp_in_req(im, 2);
	if (!x || !S || !E)
		return -1;
	const int64_t *axes = NULL, *steps = NULL;
	uint64_t na = 0, nst = 0;
	if (imp_in_opt(im, 3) && !(axes = imp_in_ints(im, 3, &na)))
		return -1;
	if (imp_in_opt(im, 4) && !(steps = imp_in_ints(im, 4, &nst)))
		return -1;
	if (imp_t_numel(S) != 1 || imp_t_numel(E) != 1 || (axes && na != 1) || (steps && nst != 1))
		return imp_op_err(im, "starts (input 1, \"%s\") or ends (input 2, \"%s\") are known only at run time: "
			      "such a slice is of one axis (one start, end, axis and step), not %s",
			      S->name, E->name, cf_t_desc(im, imp_t_numel(S) != 1 ? S : E));
	unsigned a;
	if (imp_norm_axis(im, axes ? axes[0] : 0, x->rank, &a))
		return -1;
	int64_t st = steps ? steps[0] : 1, so, eo;
	if (st == 0)
		return imp_op_err(im, "step is zero");
	struct value sv = imp_tval(im, S), ev = imp_tval(im, E), sb, eb;
	if (!sv.node || !ev.node)
		return -1;
	affine(sv, &sb, &so);
	affine(ev, &eb, &eo);
	if (sb.node != eb.node || sb.res != eb.res)
		return imp_op_err(im, "starts (input 1, \"%s\") and ends (input 2, \"%s\") are known only at run time "
			      "and their difference is not known at import: the slice's width, a static dimension, "
			      "would depend on run-time values", S->name, E->name);
	int64_t w = eo - so, len = st > 0 ? (w + st - 1) / st : (-w - st - 1) / -st;
	if (len < 0)
		len = 0;
	if ((uint64_t)len > x->dims[a])
		return imp_op_err(im, "the slice is %lld wide (ends - starts = %lld, step %lld), wider than axis %u "
			      "of %s", (long long)len, (long long)w, (long long)st, a, cf_t_desc(im, x));
	uint64_t dims[GLOW_MAX_RANK];
	memcpy(dims, x->dims, x->rank * sizeof dims[0]);
	dims[a] = (uint64_t)len;
	const char *name = imp_out_name(im, 0);
	if (len == 0)
		return imp_set_out_t(im, 0, imp_k_splat(im, name, x->dtype, x->rank, dims, 0, 0));
	/* the indices starts + j * step, j = 0 .. len-1 (starts itself for one) */
	uint64_t ilen = (uint64_t)len;
	struct value ix = sv;
	if (len == 1) {
		ix = imp_b_reshape(im, sv, &ilen, 1, imp_dname(im, name, "indices"));
	} else {
		int64_t *iota = arena_alloc(&im->scratch, (size_t)len * sizeof *iota);
		for (int64_t j = 0; j < len; j++)
			iota[j] = j * st;
		struct value steps_v =
			imp_tval(im, imp_t_from_ints(im, imp_dname(im, name, "steps"), S->dtype, 1, &ilen, iota));
		struct value sbc = imp_b_broadcast(im, imp_b_reshape(im, sv, NULL, 0, imp_dname(im, name, "start")),
						   &ilen, 1, imp_dname(im, name, "starts"));
		ix = imp_b_binary(im, NK_Add, sbc, steps_v, imp_dname(im, name, "indices"));
	}
	struct value gv[2] = {imp_tval(im, x), ix};
	if (!gv[0].node || !gv[1].node)
		return -1;
	struct value g = imp_b_node(im, NK_Gather, *name ? name : NULL, gv, 2,
				    type_with_dims(im->tc, val_type(gv[0]), dims, x->rank));
	if (!g.node)
		return -1;
	node_set_int(im->m, g.node, AN_axis, a);
	return imp_set_out(im, 0, g);
}
