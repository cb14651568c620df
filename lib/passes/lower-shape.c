/* lower-shape.c - lowering rules for data movement (lowering.h). Any kind
 * but quantized ones.
 *
 *   Pad(x) {constant, pads, value}, no negative pad
 *                 -> InsertTensor(Splat value : result, x) {start = leading pads}
 *   Tile(x) {count, axis}
 *                 -> InsertTensor(Splat 0 : result, x) {start = 0, count, axis}
 *   Broadcast(x) {axis}
 *                 -> Reshape(x) to the result's rank (x's dims at axis, 1s
 *                    elsewhere), then one Tile per dimension that grows
 * All exact: every result element is a copy of an input element or the
 * pad value (which must be a value of the kind).
 */
#include "passes/lowering.h"
#include "passes/passutil.h"

#include <string.h>

static struct value insert(struct func *f, struct node *n, struct value big, struct value small, const int64_t *start)
{
	struct value ops[2] = {big, small};
	struct node *ins = lw_node(f, NK_InsertTensor, ops, 2, val_type(big), n, "insert");
	node_set_ints(f->mod, ins, AN_start, start, val_type(big)->rank);
	return node_val(ins, 0);
}

/* Pad (Lowering.def): constant mode with no negative pad and a pad value
 * of the kind. */
bool lower_pad(struct func *f, struct node *n)
{
	struct value x = op_val(n, 0);
	const struct type *t = node_type(n);
	unsigned np;
	const int64_t *pads = node_ints(n, AN_pads, &np);
	double v = node_float(n, AN_value);
	if (node_int(n, AN_mode) != 0 || !pu_representable((enum elem_kind)t->elem, v))
		return false;
	for (unsigned i = 0; i < np; i++)
		if (pads[i] < 0)
			return false;
	lw_replace(f, n, insert(f, n, lw_splat(f, t, v, n, "fill"), x, pads));
	return true;
}

/* Tile (Lowering.def): always applies. */
bool lower_tile(struct func *f, struct node *n)
{
	struct value x = op_val(n, 0);
	const struct type *t = node_type(n);
	int64_t start[GLOW_MAX_RANK] = {0};
	struct value ins = insert(f, n, lw_splat(f, t, 0, n, "fill"), x, start);
	node_set_int(f->mod, ins.node, AN_count, node_int(n, AN_count));
	node_set_int(f->mod, ins.node, AN_axis, node_int(n, AN_axis));
	lw_replace(f, n, ins);
	return true;
}

/* Broadcast (Lowering.def): not to a shape with an empty dimension. */
bool lower_broadcast(struct func *f, struct node *n)
{
	struct value x = op_val(n, 0);
	struct module *m = f->mod;
	const struct type *t = node_type(n), *in = val_type(x);
	unsigned axis = (unsigned)node_int(n, AN_axis);
	uint64_t dims[GLOW_MAX_RANK];
	for (unsigned i = 0; i < t->rank; i++)
		if (t->dims[i] == 0)
			return false; /* no Tile makes an empty dimension */
	for (unsigned i = 0; i < t->rank; i++)
		dims[i] = i >= axis && i < axis + in->rank ? in->dims[i - axis] : 1;
	const struct type *rt = type_with_dims(m->types, in, dims, t->rank);
	struct value v = x;
	if (rt != in)
		v = node_val(lw_node(f, NK_Reshape, &x, 1, rt, n, "aligned"), 0);
	for (unsigned i = 0; i < t->rank; i++) {
		if (dims[i] == t->dims[i])
			continue;
		dims[i] = t->dims[i];
		struct node *tile = lw_node(f, NK_Tile, &v, 1, type_with_dims(m->types, in, dims, t->rank), n, "tile");
		node_set_int(m, tile, AN_count, (int64_t)t->dims[i]);
		node_set_int(m, tile, AN_axis, i);
		v = node_val(tile, 0);
	}
	lw_replace(f, n, v);
	return true;
}
