/* cgen_quant.h - what the quantized emitters (cgen_quant.c: products;
 * cgen_quant_ew.c: pooling and elementwise kinds; cgen_quant_util.c: the
 * helpers both call) share; private to backends/c. The emitters themselves are declared from their QEMIT rows
 * (cgen_ops.h). */
#ifndef GLOW_BACKENDS_C_CGEN_QUANT_H
#define GLOW_BACKENDS_C_CGEN_QUANT_H

#include "backends/c/cgen.h"

#include <stdbool.h>
#include <stdint.h>

/* output channels per packed 8-bit weight panel (CB_QNR in
 * kernels/cb_qconv.c) */
#define CG_QNR 32
/* int64 slots of channel constants per panel (CB_QCH: corr, corr and zw
 * as int32, mult, shift, half) */
#define CG_QCH (5 * CG_QNR)

/* The QEMIT rows' parameters. */
enum {
	CQ_CHANNELWISE = 1, /* per-channel filter parameters (attributes) */
	CQ_NOBIAS = 2,      /* matmul */
	CQ_BATCH = 4,       /* batchmatmul */
};
/* the operators of cg_emit_qbinary (CB_QADD ... in kernels/cb_qmisc.c) */
enum { CQ_ADD, CQ_SUB, CQ_MAX, CQ_MIN, CQ_MUL };
/* cg_emit_qpool's max pooling with an argmax (beside enum cg_pool_op) */
enum { CQ_POOL_ARGMAX = 3 };
/* cg_emit_qunary: relu, clip, sigmoid, tanh */
enum { CQ_RELU, CQ_CLIP, CQ_SIGMOID, CQ_TANH, CQ_RESCALE };

/* ---- cgen_quant_util.c ---- */

/* The kernels' element kind code of a quantized type (0 qi8, 1 qui8,
 * 2 qi16, 3 qi32), -1 for any other. */
int cq_kind(const struct type *t);
/* The stored range of quantized type t. */
void cq_limits(const struct type *t, int64_t *lo, int64_t *hi);
/* Whether the first nops operands of in are quantized; reports otherwise. */
bool cq_all_quantized(struct cg *g, struct ir_instr *in, unsigned nops);
/* The requantization multiplier and shift of a positive ratio
 * (quant_multiplier), as int64. */
void cq_mult(double ratio, int64_t *mult, int64_t *shift);

/* What runs in the epilogue of product in: when the instruction after it
 * is add, sub, max or min of 8-bit operands, one of them exactly in's
 * result, and/or then unary kinds computed by a byte table (relu, clip,
 * sigmoid, tanh, rescalequantized between 8-bit types) each reading the
 * previous result, none of whose intermediate results is read later:
 * marks them fused, sets *dst to where the kernel writes (the last
 * result, or in's own result when the last one overlaps in's operands:
 * then *copy_to is the last result, to be copied from *dst after the
 * kernel; else NULL), *last to the last fused instruction, *res to the
 * binary kind's other operand (or NULL), narrows the product's stored
 * range [*plo, *phi] when a table that only clamps follows it directly
 * (then fused without a table), and returns the kernel's post
 * argument (a struct cb_qpost compound literal, in buf, n bytes); else
 * *dst = in's result, *last = in, *res = NULL and "0" (cgen_quant_ew.c). */
const char *cq_fuse_post(struct cg *g, struct ir_instr *in, struct ir_value **dst, struct ir_value **copy_to,
			 struct ir_instr **last, struct ir_value **res, int64_t *plo, int64_t *phi, char *buf,
			 size_t n);

#endif
