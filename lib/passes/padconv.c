/* padconv.c - merge zero Pads into the Convolution or AvgPool that uses them.
 *
 * Convolution(Pad(x) {mode = constant, value = 0}) where the Pad only pads
 * the height and width of an NHWC tensor (non-negative amounts) is
 * Convolution(x) with the Pad's amounts added to the convolution's own pads
 * [top, left, bottom, right]: a convolution pads with zeros too, so every
 * output element sums exactly the same products. The same holds for an
 * AvgPool that counts padded elements (count_include_pads = true): padded
 * zeros and the Pad's zeros both count and add nothing. MaxPool is left
 * alone (its padding is ignored, not zero), as is an AvgPool that excludes
 * pads, and quantized tensors (a stored 0 is not the real 0). The Pad stays
 * while anything else uses it.
 *
 * Exact: the same terms are summed in the same order.
 * Requires: a verified function. Preserves: validity and result types.
 */
#include "passes/pass.h"

/* The H and W pad amounts of a zero constant Pad over NHWC: top, left,
 * bottom, right; false when the Pad does anything else. */
static bool spatial_zero_pad(const struct node *p, int64_t out[4])
{
	if (p->kind != NK_Pad || node_has_pred(p) || node_int(p, AN_mode) != 0 || node_float(p, AN_value) != 0)
		return false;
	const struct type *t = node_type(p);
	if (t->rank != 4 || !elem_is_float((enum elem_kind)t->elem))
		return false;
	unsigned c;
	const int64_t *v = node_ints(p, AN_pads, &c);
	if (c != 8 || v[0] || v[3] || v[4] || v[7])
		return false;
	for (unsigned i = 0; i < 8; i++)
		if (v[i] < 0)
			return false;
	out[0] = v[1];
	out[1] = v[2];
	out[2] = v[5];
	out[3] = v[6];
	return true;
}

bool merge_pad_run(struct func *f, struct pass_ctx *ctx)
{
	uint64_t convs = 0, pools = 0;
	func_for_each(f, n) {
		if (node_has_pred(n))
			continue;
		if (n->kind != NK_Convolution && !(n->kind == NK_AvgPool && node_int(n, AN_count_include_pads)))
			continue;
		int64_t add[4];
		struct node *p = n->ops[0].def;
		if (!spatial_zero_pad(p, add))
			continue;
		unsigned c;
		const int64_t *old = node_ints(n, AN_pads, &c);
		if (c != 4)
			continue;
		int64_t np[4];
		for (unsigned i = 0; i < 4; i++)
			np[i] = old[i] + add[i];
		node_set_ints(f->mod, n, AN_pads, np, 4);
		node_set_operand(n, 0, op_val(p, 0));
		if (n->kind == NK_Convolution)
			convs++;
		else
			pools++;
	}
	pass_stat(ctx, "Number of Pads merged into a Convolution", convs);
	pass_stat(ctx, "Number of Pads merged into an AvgPool", pools);
	return convs || pools;
}
