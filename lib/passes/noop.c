/* noop.c - eliminate nodes that return their input unchanged.
 *
 * A node is replaced by its input (or, for Relu of Relu, by the inner node)
 * when its result type is exactly the input's and it provably copies it:
 *   Reshape to the input's own type        Transpose with the identity shuffle
 *   Slice starting at 0 of the whole input Pad with every pad 0 (any mode)
 *   Tile with count 1                      Flip along a dimension of size 1
 *   Broadcast to the input's own shape     ConvertTo the input's own type
 *   Concat of a single input               Select(c, x, x)
 *   AvgPool and MaxPool (Argmax unused) with a 1x1 kernel, stride 1, no pads
 *   Clip whose [min, max] covers every value of the element kind (float:
 *     +-largest finite value or wider; NaN passes through Clip unchanged)
 *   Relu(Relu(x)) -> Relu(x)
 * All of these are exact (bit for bit) for every input, NaN included.
 *
 * Requires: a verified function. Preserves: validity; erased nodes' operands
 * may become dead (dce).
 */
#include "passes/pass.h"
#include "passes/passutil.h"

#include <float.h>

/* Largest finite value of a float kind. */
static double float_max(enum elem_kind k)
{
	switch (k) {
	case EK_FLOAT16: return 65504.0;
	case EK_BFLOAT16: return 3.3895313892515355e38;
	default: return FLT_MAX;
	}
}

static bool clip_covers_kind(const struct node *n)
{
	enum elem_kind k = (enum elem_kind)node_type(n)->elem;
	double lo = node_float(n, AN_min), hi = node_float(n, AN_max);
	switch (k) {
	case EK_FLOAT:
	case EK_FLOAT16:
	case EK_BFLOAT16: return lo <= -float_max(k) && hi >= float_max(k);
	case EK_I32:
	case EK_INDEX32: return lo <= -2147483648.0 && hi >= 2147483647.0;
	case EK_I64:
	case EK_INDEX64: return lo <= -9223372036854775808.0 && hi >= 9223372036854775807.0;
	default: return false; /* quantized: the range is in stored units */
	}
}

static bool all_zero(const int64_t *v, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		if (v[i])
			return false;
	return true;
}

static bool unit_window(const struct node *n)
{
	unsigned c;
	const int64_t *k = node_ints(n, AN_kernels, &c);
	if (c != 2 || k[0] != 1 || k[1] != 1)
		return false;
	const int64_t *s = node_ints(n, AN_strides, &c);
	if (c != 2 || s[0] != 1 || s[1] != 1)
		return false;
	const int64_t *p = node_ints(n, AN_pads, &c);
	return all_zero(p, c);
}

/* The no-op tests, one per kind in noop_tests below: n, whose result type
 * is (same) or is not its operand 0's, copies operand ... (the index), or
 * -1 when it does not provably copy one. */
static int copy_when_same(const struct node *n, bool same)
{
	(void)n;
	return same ? 0 : -1;
}

static int noop_transpose(const struct node *n, bool same)
{
	unsigned c;
	const int64_t *s = node_ints(n, AN_shuffle, &c);
	return same && pu_perm_is_identity(s, c) ? 0 : -1;
}

static int noop_slice(const struct node *n, bool same)
{
	unsigned c;
	const int64_t *s = node_ints(n, AN_start, &c);
	return same && all_zero(s, c) ? 0 : -1;
}

static int noop_pad(const struct node *n, bool same)
{
	unsigned c;
	const int64_t *p = node_ints(n, AN_pads, &c);
	return same && all_zero(p, c) ? 0 : -1;
}

static int noop_tile(const struct node *n, bool same) { return same && node_int(n, AN_count) == 1 ? 0 : -1; }

static int noop_flip(const struct node *n, bool same)
{
	(void)same;
	return op_type(n, 0)->dims[node_int(n, AN_axis)] == 1 ? 0 : -1;
}

static int noop_concat(const struct node *n, bool same) { return n->nops == 1 && same ? 0 : -1; }

static int noop_select(const struct node *n, bool same)
{
	(void)same;
	return n->ops[1].def == n->ops[2].def && n->ops[1].res == n->ops[2].res ? 1 : -1;
}

static int noop_avgpool(const struct node *n, bool same) { return same && unit_window(n) ? 0 : -1; }

static int noop_maxpool(const struct node *n, bool same)
{
	return same && unit_window(n) && node_num_uses(n, 1) == 0 ? 0 : -1;
}

static int noop_clip(const struct node *n, bool same) { return same && clip_covers_kind(n) ? 0 : -1; }

static int noop_relu(const struct node *n, bool same) { return n->ops[0].def->kind == NK_Relu && same ? 0 : -1; }

/* The kinds that can be no-ops (the list at the top), each with its test. */
static int (*const noop_tests[NK_COUNT])(const struct node *n, bool same) = {
	[NK_Reshape] = copy_when_same,
	[NK_Broadcast] = copy_when_same,
	[NK_ConvertTo] = copy_when_same,
	[NK_BitCast] = copy_when_same,
	[NK_Transpose] = noop_transpose,
	[NK_Slice] = noop_slice,
	[NK_Pad] = noop_pad,
	[NK_Tile] = noop_tile,
	[NK_Flip] = noop_flip,
	[NK_Concat] = noop_concat,
	[NK_Select] = noop_select,
	[NK_AvgPool] = noop_avgpool,
	[NK_MaxPool] = noop_maxpool,
	[NK_Clip] = noop_clip,
	[NK_Relu] = noop_relu,
};

/* The value n copies, or a null value when it is not a no-op. */
static struct value noop_source(const struct node *n)
{
	struct value none = {NULL, 0};
	if (n->nops == 0 || n->nres == 0 || node_has_pred(n) || !noop_tests[n->kind])
		return none;
	int i = noop_tests[n->kind](n, op_type(n, 0) == node_type(n));
	return i < 0 ? none : op_val(n, (unsigned)i);
}

bool eliminate_noop_run(struct func *f, struct pass_ctx *ctx)
{
	uint64_t removed = 0;
	func_for_each_safe(f, n, next) {
		struct value src = noop_source(n);
		if (!src.node)
			continue;
		pu_replace(f, n, src);
		removed++;
	}
	pass_stat(ctx, "Number of no-op nodes removed", removed);
	return removed != 0;
}
