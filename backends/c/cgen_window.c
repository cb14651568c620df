/* cgen_window.c - what the C backend's emitters of window kernels share
 * below both the convolution emitters (cgen_conv.c) and the gradient
 * emitters (cgen_grad.c): the kernels' scratch, the window table of a
 * convolution or its gradient, the zero-padded images' size, and the
 * one-input-channel convolution of a training step's first layer
 * (cb_conv_c1_f32), which the convolution emitter chooses and which reads
 * the same tables as the gradient kernels.
 */
#include "backends/c/cgen_ops.h"

#include <inttypes.h>
#include <stdio.h>

/* Makes the kernels' scratch hold at least n floats. */
void cg_need_scratch(struct cg *g, uint64_t n)
{
	if (n * sizeof(float) > g->scratch_bytes)
		g->scratch_bytes = n * sizeof(float);
}

/* The window table of a convolutiongrad or avgpoolgrad in (its input x,
 * output gradient gt), in the layout cb_grad.c's window kernels read:
 * N H W C OH OW, kernels, strides, pads top left, dilation, group,
 * count_include_pads (1 and 0 where the kind has no such attribute);
 * returns the table's number (tiN). */
unsigned cg_window_table(struct cg *g, struct ir_instr *in, const struct type *xt, const struct type *gt)
{
	unsigned n;
	const int64_t *k = ir_ints(in, AN_kernels, &n), *s = ir_ints(in, AN_strides, &n);
	const int64_t *p = ir_ints(in, AN_pads, &n);
	bool conv = instr_attr_slot(in->kind, AN_dilation) >= 0;
	const int64_t one[2] = {1, 1}, *dl = conv ? ir_ints(in, AN_dilation, &n) : one;
	int64_t v[17] = {(int64_t)xt->dims[0], (int64_t)xt->dims[1], (int64_t)xt->dims[2], (int64_t)xt->dims[3],
			 (int64_t)gt->dims[1], (int64_t)gt->dims[2], k[0], k[1], s[0], s[1], p[0], p[1], dl[0], dl[1],
			 conv ? ir_int(in, AN_group) : 1, conv ? 0 : ir_int(in, AN_count_include_pads), 0};
	return cg_int_table(g, v, 17);
}

/* The floats of cb_pad_images (kernels/cb_grad2.c) for input xt, output
 * gradient or output gt, kernels k, strides s, pads p and dilation dl:
 * the zero-padded images and 12 floats after them (the widest tile's
 * rows). */
uint64_t cg_padded_floats(const struct type *xt, const struct type *gt, const int64_t *k, const int64_t *s,
			 const int64_t *p, const int64_t *dl)
{
	uint64_t h = xt->dims[1] + (uint64_t)p[0], w = xt->dims[2] + (uint64_t)p[1];
	uint64_t rh = (gt->dims[1] - 1) * (uint64_t)s[0] + (uint64_t)((k[0] - 1) * dl[0]) + 1;
	uint64_t rw = (gt->dims[2] - 1) * (uint64_t)s[1] + (uint64_t)((k[1] - 1) * dl[1]) + 1;
	return xt->dims[0] * (rh > h ? rh : h) * (rw > w ? rw : w) * xt->dims[3] + 12;
}

/* oc rounded up to whole column blocks of the widest vectors (32) */
uint64_t cg_whole_blocks(uint64_t oc) { return (oc + 31) / 32 * 32; }

/* A convolution (dst, src, fil, bias: in's operands) of one input
 * channel, one group and stride 1 along W whose filter is not a constant
 * (a training step's first layer) as cb_conv_c1_f32, writing out with
 * activation act (CB_ACT_*: a fused relu or clip, bounds lo and hi);
 * false, emitting nothing, for other shapes. */
bool cg_emit_conv_one_channel(struct cg *g, struct ir_instr *in, struct ir_value *out, int act, double lo, double hi)
{
	const struct type *st = in->ops[1].val->type, *dt = in->ops[0].val->type, *ft = in->ops[2].val->type;
	unsigned n;
	const int64_t *k = ir_ints(in, AN_kernels, &n), *s = ir_ints(in, AN_strides, &n), *p = ir_ints(in, AN_pads, &n);
	const int64_t *dl = ir_ints(in, AN_dilation, &n);
	if (st->rank != 4 || st->dims[3] != 1 || ir_int(in, AN_group) != 1 || s[1] != 1 || ft->rank != 4)
		return false;
	unsigned id = cg_window_table(g, in, st, dt);
	uint64_t oc = dt->dims[3], ocp = cg_whole_blocks(oc);
	cg_need_scratch(g, cg_padded_floats(st, dt, k, s, p, dl) + ((uint64_t)(k[0] * k[1]) + 1) * ocp);
	char b[5][96], f[2][40];
	os_printf(g->body, "\tcb_conv_c1_f32(ti%u, %" PRIu64 ", %s, %s, %s, %s, %d, %s, %s, (float *)(A + %" PRIu64 "));\n",
		  id, oc, PTR(in->ops[1].val, "float", b[0]), PTR(in->ops[2].val, "float", b[1]),
		  PTR(in->ops[3].val, "float", b[2]), PTR(out, "float", b[3]), act, cg_flit(f[0], lo), cg_flit(f[1], hi),
		  g->scratch_off);
	return true;
}
