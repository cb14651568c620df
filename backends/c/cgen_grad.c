/* cgen_grad.c - the C backend's emitters of the gradient and training
 * kinds that are not elementwise (Emitters.def's gradient block): each
 * writes one call of its kernel in kernels/cb_grad.c, which runs the kind
 * whole. Only float operands are compiled (labels and argmax positions:
 * int32 or int64); the kernels return -1 for a label or position out of
 * range, which the bundle reports as a failed run.
 */
#include "backends/c/cgen_ops.h"
#include "passes/dropoutmask.h"
#include "support/util.h"

#include <inttypes.h>
#include <stdio.h>

/* Whether every operand of in but those in the bit set ints (integer
 * operands, checked for 4 or 8 byte elements) holds float; false after
 * reporting. */
static bool grad_operands_ok(struct cg *g, struct ir_instr *in, unsigned ints)
{
	for (unsigned i = 0; i < in->nops; i++) {
		struct ir_value *v = in->ops[i].val;
		if ((ints >> i) & 1u ? !cg_int_es(v) : !cg_is_float(v)) {
			cg_unsupported(g, in, "only float gradients (with int32 or int64 labels) are compiled");
			return false;
		}
	}
	return true;
}

/* For an instruction of float operands only: operand op's shape as outer
 * x len x inner around the axis in attribute axis; false after reporting
 * other operands. */
static bool float_around_axis(struct cg *g, struct ir_instr *in, unsigned op, enum attr_name axis, uint64_t *outer,
			      uint64_t *len, uint64_t *inner)
{
	if (!grad_operands_ok(g, in, 0))
		return false;
	cg_split_axis(in->ops[op].val->type, (unsigned)ir_int(in, axis), outer, len, inner);
	return true;
}

/* The address of result r of in as a float pointer in buf, or "0" when
 * nothing reads it later (the kernel then skips computing it). */
static const char *live_result(struct cg *g, struct ir_instr *in, unsigned r, char *buf, size_t size)
{
	struct ir_value *v = in->ops[r].val;
	return cg_read_later(g, in, v) ? cg_ptr(g, v, "float", buf, size) : "0";
}

/* fullyconnectedgrad(dX, dW, dB, X, W, G), matmulgrad and
 * batchmatmulgrad(dA, dB, A, B, G): one call of cb_linear_grad_f32, the
 * bias gradient only where the row says so (CG_LINEAR_BIAS), the others
 * only where something reads them. */
void cg_emit_linear_grad(struct cg *g, struct ir_instr *in, const struct cg_emit_row *row)
{
	if (!grad_operands_ok(g, in, 0))
		return;
	bool bias = row->param == CG_LINEAR_BIAS;
	unsigned o = bias ? 3 : 2; /* the first operand */
	const struct type *xt = in->ops[o].val->type, *wt = in->ops[o + 1].val->type;
	unsigned r = xt->rank == 3 ? 1 : 0;
	char b[6][96];
	os_printf(g->body,
		  "\tcb_linear_grad_f32(%s, %s, %s, %s, %s, %s, %" PRIu64 ", %" PRIu64 ", %" PRIu64 ", %" PRIu64 ");\n",
		  PTR(in->ops[o].val, "float", b[0]), PTR(in->ops[o + 1].val, "float", b[1]),
		  PTR(in->ops[o + 2].val, "float", b[2]), live_result(g, in, 0, b[3], sizeof b[3]),
		  live_result(g, in, 1, b[4], sizeof b[4]), bias ? PTR(in->ops[2].val, "float", b[5]) : "0",
		  r ? xt->dims[0] : (uint64_t)1, xt->dims[r], xt->dims[r + 1], wt->dims[r + 1]);
}

/* convolutiongrad(dX, dF, dB, X, F, G) {kernels, strides, pads, group,
 * dilation}. One group and no dilation along W: the filter and bias
 * gradients by cb_conv_dfilter_f32 (no patch matrix), the input gradient,
 * where something reads it, as a transposed convolution on the packed
 * path (stride 1, cg_emit_conv_input_grad_packed). Otherwise
 * cb_conv_grad_f32 (unrolled patches) computes all three. */
void cg_emit_conv_grad(struct cg *g, struct ir_instr *in, const struct cg_emit_row *row)
{
	(void)row;
	if (!grad_operands_ok(g, in, 0))
		return;
	const struct type *xt = in->ops[3].val->type, *ft = in->ops[4].val->type, *gt = in->ops[5].val->type;
	unsigned id = cg_window_table(g, in, xt, gt), n;
	const int64_t *k = ir_ints(in, AN_kernels, &n), *s = ir_ints(in, AN_strides, &n), *p = ir_ints(in, AN_pads, &n);
	const int64_t *dl = ir_ints(in, AN_dilation, &n);
	char b[6][96];
	if (ir_int(in, AN_group) == 1 && dl[1] == 1 && g->gemm == CBACKEND_GEMM_BUILTIN &&
	    (!cg_read_later(g, in, in->ops[0].val) ||
	     cg_emit_conv_input_grad_packed(g, in->ops[0].val, in->ops[5].val, in->ops[4].val, k, s, p, dl))) {
		/* the padded input, G with whole column blocks where oc is not,
		 * the sums: window rows rounded up to tiles of 12 */
		uint64_t oc = ft->dims[0], ocp = cg_whole_blocks(oc), l = (uint64_t)k[1] * xt->dims[3];
		cg_need_scratch(g, cg_padded_floats(xt, gt, k, s, p, dl) + (oc == ocp ? 0 : type_numel(gt) / oc * ocp) +
					(uint64_t)k[0] * (l + 11) / 12 * 12 * ocp);
		os_printf(g->body, "\tcb_conv_dfilter_f32(ti%u, %" PRIu64 ", %s, %s, %s, %s, (float *)(A + %" PRIu64 "));\n",
			  id, ft->dims[0], PTR(in->ops[3].val, "float", b[0]), PTR(in->ops[5].val, "float", b[1]),
			  PTR(in->ops[1].val, "float", b[2]), PTR(in->ops[2].val, "float", b[3]), g->scratch_off);
		return;
	}
	uint64_t pix = gt->dims[1] * gt->dims[2], taps = type_numel(ft) / ft->dims[0];
	cg_need_scratch(g, 2 * pix * taps + taps * ft->dims[0]);
	os_printf(g->body,
		  "\tcb_conv_grad_f32(ti%u, %" PRIu64 ", %" PRIu64 ", %s, %s, %s, %s, %s, %s, (float *)(A + %" PRIu64
		  "));\n",
		  id, ft->dims[0], ft->dims[3], PTR(in->ops[3].val, "float", b[0]), PTR(in->ops[4].val, "float", b[1]),
		  PTR(in->ops[5].val, "float", b[2]), live_result(g, in, 0, b[3], sizeof b[3]),
		  PTR(in->ops[1].val, "float", b[4]), PTR(in->ops[2].val, "float", b[5]), g->scratch_off);
}

/* maxpoolgrad(dX, Argmax, G) */
void cg_emit_maxpool_grad(struct cg *g, struct ir_instr *in, const struct cg_emit_row *row)
{
	(void)row;
	if (!grad_operands_ok(g, in, 1u << 1))
		return;
	char b[3][96];
	os_printf(g->body, "\tif (cb_maxpool_grad_f32(%s, %d, %s, %s, %" PRIu64 ", %" PRIu64 "))\n\t\treturn -1;\n",
		  PTR(in->ops[1].val, "void", b[0]), cg_int_es(in->ops[1].val), PTR(in->ops[2].val, "float", b[1]),
		  PTR(in->ops[0].val, "float", b[2]), type_numel(in->ops[0].val->type),
		  type_numel(in->ops[2].val->type));
}

/* avgpoolgrad(dX, G) {kernels, strides, pads, count_include_pads} */
void cg_emit_avgpool_grad(struct cg *g, struct ir_instr *in, const struct cg_emit_row *row)
{
	(void)row;
	if (!grad_operands_ok(g, in, 0))
		return;
	unsigned id = cg_window_table(g, in, in->ops[0].val->type, in->ops[1].val->type);
	char b[2][96];
	os_printf(g->body, "\tcb_avgpool_grad_f32(ti%u, %s, %s);\n", id, PTR(in->ops[1].val, "float", b[0]),
		  PTR(in->ops[0].val, "float", b[1]));
}

/* softmaxgrad(dX, Y, Labels) and, row param CG_GRAD_CE,
 * crossentropylossgrad(dP, P, Labels, CEGrad): a kernel that returns -1
 * for a label out of range. */
void cg_emit_label_grad(struct cg *g, struct ir_instr *in, const struct cg_emit_row *row)
{
	if (!grad_operands_ok(g, in, 1u << 2))
		return;
	bool ce = row->param == CG_GRAD_CE;
	const struct type *pt = in->ops[1].val->type;
	char b[4][96], cg[100];
	snprintf(cg, sizeof cg, "%s, ", ce ? PTR(in->ops[3].val, "float", b[3]) : "");
	os_printf(g->body,
		  "\tif (%s(%s, %s, %d, %s%s, %" PRIu64 ", %" PRIu64 "))\n\t\treturn -1;\n",
		  ce ? "cb_xent_grad_f32" : "cb_softmax_grad_f32", PTR(in->ops[1].val, "float", b[0]),
		  PTR(in->ops[2].val, "void", b[1]), cg_int_es(in->ops[2].val), ce ? cg : "",
		  PTR(in->ops[0].val, "float", b[2]), pt->dims[0], pt->dims[1]);
}

/* batchnormalizationgrad(dX, dScale, dBias, X, Scale, Mean, Var, G)
 * {channel_idx, epsilon} */
void cg_emit_bn_grad(struct cg *g, struct ir_instr *in, const struct cg_emit_row *row)
{
	(void)row;
	uint64_t outer, c, inner;
	if (!float_around_axis(g, in, 3, AN_channel_idx, &outer, &c, &inner))
		return;
	char b[8][96], e[40];
	os_printf(g->body,
		  "\tcb_bn_grad_f32(%s, %s, %s, %s, %s, %s, %s, %s, %" PRIu64 ", %" PRIu64 ", %" PRIu64 ", %s);\n",
		  PTR(in->ops[3].val, "float", b[0]), PTR(in->ops[4].val, "float", b[1]),
		  PTR(in->ops[5].val, "float", b[2]), PTR(in->ops[6].val, "float", b[3]),
		  PTR(in->ops[7].val, "float", b[4]), PTR(in->ops[0].val, "float", b[5]),
		  PTR(in->ops[1].val, "float", b[6]), PTR(in->ops[2].val, "float", b[7]), outer, c, inner,
		  cg_flit(e, ir_float(in, AN_epsilon)));
}

/* localresponsenormalizationgrad(dX, X, G) {half_window_size, alpha, beta,
 * k} */
void cg_emit_lrn_grad(struct cg *g, struct ir_instr *in, const struct cg_emit_row *row)
{
	(void)row;
	if (!grad_operands_ok(g, in, 0))
		return;
	const struct type *t = in->ops[1].val->type;
	char b[3][96], f1[40], f2[40], f3[40];
	os_printf(g->body, "\tcb_lrn_grad_f32(%s, %s, %s, %" PRIu64 ", %" PRIu64 ", %" PRId64 ", %s, %s, %s);\n",
		  PTR(in->ops[1].val, "float", b[0]), PTR(in->ops[2].val, "float", b[1]),
		  PTR(in->ops[0].val, "float", b[2]), t->dims[0] * t->dims[1] * t->dims[2], t->dims[3],
		  ir_int(in, AN_half_window_size), cg_flit(f1, ir_float(in, AN_alpha)),
		  cg_flit(f2, ir_float(in, AN_beta)), cg_flit(f3, ir_float(in, AN_k)));
}

/* dropoutmask(Mask, Step) {ratio, seed}: the threshold and the kept value
 * are computed here as the lowering rule computes them. */
void cg_emit_dropout_mask(struct cg *g, struct ir_instr *in, const struct cg_emit_row *row)
{
	(void)row;
	struct ir_value *m = in->ops[0].val, *s = in->ops[1].val;
	if (!cg_is_float(m) || cg_int_es(s) != 8) {
		cg_unsupported(g, in, "only float masks with an int64 step are compiled");
		return;
	}
	double r = ir_float(in, AN_ratio);
	char b[2][96], keep[40];
	os_printf(g->body, "\tcb_dropout_mask_f32(%s, %" PRIu64 ", %s, %" PRIu64 "u, %" PRId64 ", %s);\n",
		  PTR(m, "float", b[0]), type_numel(m->type), PTR(s, "int64_t", b[1]), (uint64_t)ir_int(in, AN_seed),
		  dropout_threshold(r), cg_flit(keep, 1.0 / (1.0 - r)));
}

/* The copy that follows sgdmomentum in and moves its result back into its
 * weight (copy @out Weight, @in Dest: how IR generation writes an updated
 * placeholder), when the update can write the weight itself instead:
 * nothing after the copy reads Dest, and neither the gradient nor the
 * velocity overlaps the weight (the kernel reads w[i] before it writes
 * dst[i], so dst may be w); else NULL. */
static struct ir_instr *sgd_copy_back(struct cg *g, struct ir_instr *in)
{
	struct ir_value *dst = in->ops[0].val, *w = in->ops[2].val;
	struct ir_instr *q = cg_next_real(in);
	if (!q || q->kind != IK_copy || !cg_same(g, q->ops[0].val, w) || !cg_same(g, q->ops[1].val, dst) ||
	    cg_read_later(g, q, dst) || cg_overlap(g, in->ops[1].val, w) || cg_overlap(g, in->ops[3].val, w))
		return NULL;
	return q;
}

/* sgdmomentum(Dest, Gradient, Weight, Velocity) {l1_decay, l2_decay,
 * learning_rate, momentum, batch_size}; updating the weight in place when
 * the next instruction only copies Dest into it (sgd_copy_back: the copy
 * is not emitted, which saves a pass over the weight, 12.8 MB per step for
 * the CNN's fully-connected layer) */
void cg_emit_sgd_momentum(struct cg *g, struct ir_instr *in, const struct cg_emit_row *row)
{
	(void)row;
	if (!grad_operands_ok(g, in, 0))
		return;
	struct ir_instr *back = sgd_copy_back(g, in);
	if (back)
		ptrmap_put(&g->fused, back, back);
	char b[4][96], f[5][40];
	os_printf(g->body, "\tcb_sgd_momentum_f32(%s, %s, %s, %s, %" PRIu64 ", %s, %s, %s, %s, %s);\n",
		  PTR(in->ops[back ? 2 : 0].val, "float", b[0]), PTR(in->ops[1].val, "float", b[1]),
		  PTR(in->ops[2].val, "float", b[2]), PTR(in->ops[3].val, "float", b[3]),
		  type_numel(in->ops[0].val->type), cg_flit(f[0], 1.0 / (double)ir_int(in, AN_batch_size)),
		  cg_flit(f[1], ir_float(in, AN_l1_decay)), cg_flit(f[2], ir_float(in, AN_l2_decay)),
		  cg_flit(f[3], ir_float(in, AN_momentum)), cg_flit(f[4], ir_float(in, AN_learning_rate)));
}

/* adaptiveavgpoolgrad(dX, G) */
void cg_emit_adaptive_avgpool_grad(struct cg *g, struct ir_instr *in, const struct cg_emit_row *row)
{
	(void)row;
	if (!grad_operands_ok(g, in, 0))
		return;
	const uint64_t *xd = in->ops[0].val->type->dims, *gd = in->ops[1].val->type->dims;
	char b[2][96];
	os_printf(g->body,
		  "\tcb_adaptive_avgpool_grad_f32(%s, %s, %" PRIu64 ", %" PRIu64 ", %" PRIu64 ", %" PRIu64 ", %" PRIu64
		  ", %" PRIu64 ");\n",
		  PTR(in->ops[1].val, "float", b[0]), PTR(in->ops[0].val, "float", b[1]), xd[0], xd[1], xd[2], xd[3],
		  gd[1], gd[2]);
}

/* logsoftmaxgrad(dX, Y, G) {axis} */
void cg_emit_logsoftmax_grad(struct cg *g, struct ir_instr *in, const struct cg_emit_row *row)
{
	(void)row;
	uint64_t outer, len, inner;
	if (!float_around_axis(g, in, 1, AN_axis, &outer, &len, &inner))
		return;
	char b[3][96];
	os_printf(g->body, "\tcb_logsoftmax_grad_f32(%s, %s, %s, %" PRIu64 ", %" PRIu64 ", %" PRIu64 ");\n",
		  PTR(in->ops[1].val, "float", b[0]), PTR(in->ops[2].val, "float", b[1]),
		  PTR(in->ops[0].val, "float", b[2]), outer, len, inner);
}
