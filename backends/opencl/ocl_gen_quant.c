/* ocl_gen_quant.c - the OpenCL backend's quantized linear kinds
 * (docs/OpenCL.md, "Quantized convolutions and products"): convolution
 * (grouped, strided, dilated, padded), fullyconnected, matmul and
 * batchmatmul whose result and operands are quantized, with the
 * interpreter's integer arithmetic (backends/interpreter/k_quant.c,
 * docs/Quantization.md "Arithmetic") so that every stored integer is the
 * interpreter's: the exact sum of centred products in 64 bits, the bias in
 * accumulator units, requantization by the multiplier and shift of
 * lib/quant/quant.h, the result's offset, saturation. ONNX's ConvInteger,
 * MatMulInteger, QLinearConv and QLinearMatMul import as these.
 *
 * What is compiled: 8- and 16-bit operands (qi8, qui8, qi16), a result of
 * those or qi32, one scale and offset per operand (the per-channel kinds
 * are other instruction kinds, not compiled), a quantized bias or none (a
 * float bias is rounded into accumulator units in double, which OpenCL C
 * does not promise: refused), and every type's scale positive and normal.
 * The multipliers are computed on the host, by quant_multiplier.
 */
#include "backends/opencl/ocl.h"
#include "quant/quant.h"
#include "support/util.h"

#include <inttypes.h>
#include <math.h>

static bool q_operand(unsigned k) { return k == EK_QI8 || k == EK_QUI8 || k == EK_QI16; }
static bool q_result(unsigned k) { return q_operand(k) || k == EK_QI32; }

bool ocl_qlinear_elems_ok(const enum elem_kind *elems, unsigned nelems)
{
	if (nelems < 3 || nelems > 4 || !q_result(elems[0]) || !q_operand(elems[1]) || !q_operand(elems[2]))
		return false;
	return nelems == 3 || elem_is_quantized(elems[3]);
}

static bool q_type_ok(const struct type *t) { return isnormal(t->scale) && t->scale > 0; }

/* Whether `in` (dest, the two operands, the bias where nbias) is the
 * quantized form the kernels compute. */
static bool q_sup(const struct ir_instr *in, unsigned ranks, bool bias)
{
	enum elem_kind e[4];
	unsigned n = bias ? 4 : 3;
	if (in->nops != n)
		return false;
	for (unsigned i = 0; i < n; i++) {
		const struct type *t = in->ops[i].val->type;
		e[i] = (enum elem_kind)t->elem;
		if (!q_type_ok(t) || (i < 3 && t->rank != ranks))
			return false;
	}
	return ocl_qlinear_elems_ok(e, n);
}

bool ocl_is_qlinear(const struct ir_instr *in) { return elem_is_quantized(in->ops[0].val->type->elem); }

bool ocl_sup_qconv(const struct ir_instr *in) { return q_sup(in, 4, true); }

bool ocl_sup_qgemm(const struct ir_instr *in)
{
	if (in->kind == IK_batchmatmul)
		return q_sup(in, 3, false);
	return q_sup(in, 2, in->kind == IK_fullyconnected) &&
	       (in->kind != IK_fullyconnected ||
		(in->ops[3].val->type->rank == 1 && in->ops[3].val->type->dims[0] == in->ops[0].val->type->dims[1]));
}

/* the requantization helpers, once per program (their guard keeps a
 * second copy out of the compilation, this flag out of the text) */
static void q_helpers(struct ocl_gen *g)
{
	if (!g->q_helpers)
		ocl_src_section(g, "qhelpers");
	g->q_helpers = true;
}

/* The #defines both templates share: offsets, the bias conversion, the
 * requantization, the store (result kind, offset, range, QRELU). */
static void q_common(struct ocl_gen *g, const struct ir_instr *in, bool bias, bool relu)
{
	const struct type *d = in->ops[0].val->type, *x = in->ops[1].val->type, *w = in->ops[2].val->type;
	double acc_scale = (double)x->scale * (double)w->scale;
	int32_t mult;
	int shift;
	quant_multiplier(acc_scale / (double)d->scale, &mult, &shift);
	ocl_src_define(g, "XO", "%" PRId32, x->offset);
	ocl_src_define(g, "WO", "%" PRId32, w->offset);
	ocl_src_define(g, "MULT", "%" PRId32 "L", mult);
	ocl_src_define(g, "SHIFT", "%d", shift);
	if (bias) {
		const struct type *b = in->ops[3].val->type;
		ocl_src_ptr(g, "PBIAS", ocl_elem_ctype(b->elem), in, 3);
		ocl_src_define(g, "BO", "%" PRId32 "L", b->offset);
		/* k_quant.c's qk_bias1: a bias of scale sx*sw rounded to float
		 * adds as it is, another is requantized into that scale */
		if (b->scale == (float)acc_scale) {
			ocl_src_define(g, "BIAS(c)", "(c)");
		} else {
			int32_t bm;
			int bs;
			quant_multiplier((double)b->scale / acc_scale, &bm, &bs);
			ocl_src_define(g, "BIAS(c)", "ocl_q_requant((c), %" PRId32 "L, %d)", bm, bs);
		}
	}
	int64_t lo, hi;
	ocl_quant_range(d->elem, &lo, &hi);
	ocl_src_define(g, "DO", "%" PRId32 "L", d->offset);
	ocl_src_define(g, "QLO", "(%" PRId64 "L)", lo);
	ocl_src_define(g, "QHI", "%" PRId64 "L", hi);
	ocl_src_define(g, "DT", "%s", ocl_elem_ctype(d->elem));
	/* a relu folded in (in place: the same type in and out), applied to
	 * the stored integer as the interpreter's relu applies it */
	ocl_src_define(g, "QRELU", "%d", relu ? 1 : 0);
}

void ocl_gen_qconv(struct ocl_gen *g, const struct ir_instr *in, bool relu)
{
	const struct type *dt = in->ops[0].val->type, *st = in->ops[1].val->type, *ft = in->ops[2].val->type;
	unsigned nk, ns, np, nd;
	const int64_t *k = ir_ints(in, AN_kernels, &nk), *s = ir_ints(in, AN_strides, &ns), *pd = ir_ints(in, AN_pads, &np),
		      *dl = ir_ints(in, AN_dilation, &nd);
	int64_t group = ir_int(in, AN_group);
	uint64_t total = type_numel(dt);
	q_helpers(g);
	struct ocl_launch *l = ocl_src_begin(g, in);
	OCL_SRC_INTS(g, {"H", (int64_t)st->dims[1]}, {"W", (int64_t)st->dims[2]}, {"C", (int64_t)st->dims[3]},
		     {"OH", (int64_t)dt->dims[1]}, {"OW", (int64_t)dt->dims[2]}, {"OC", (int64_t)dt->dims[3]},
		     {"KH", k[0]}, {"KW", k[1]}, {"SH", s[0]}, {"SW", s[1]}, {"DH", dl[0]}, {"DW", dl[1]},
		     {"PT", pd[0]}, {"PL", pd[1]}, {"ICG", (int64_t)ft->dims[3]},
		     {"OCG", (int64_t)dt->dims[3] / group});
	ocl_src_define(g, "TOTAL", "%" PRIu64 "UL", total);
	ocl_src_ptr(g, "PD", ocl_elem_ctype(dt->elem), in, 0);
	ocl_src_ptr(g, "PS", ocl_elem_ctype(st->elem), in, 1);
	ocl_src_ptr(g, "PF", ocl_elem_ctype(ft->elem), in, 2);
	q_common(g, in, true, relu);
	ocl_src_section(g, "qconv");
	ocl_launch_1d(l, g->gpu ? 256 : 32, total);
}

void ocl_gen_qgemm(struct ocl_gen *g, const struct ir_instr *in, bool relu)
{
	const struct type *dt = in->ops[0].val->type, *at = in->ops[1].val->type, *bt = in->ops[2].val->type;
	bool batched = in->kind == IK_batchmatmul;
	uint64_t B = batched ? dt->dims[0] : 1, M = dt->dims[batched], N = dt->dims[batched + 1];
	uint64_t K = at->dims[batched + 1];
	q_helpers(g);
	struct ocl_launch *l = ocl_src_begin(g, in);
	ocl_src_define(g, "M", "%" PRIu64 "UL", M);
	ocl_src_define(g, "BM", "%" PRIu64 "UL", B * M);
	ocl_src_define(g, "N", "%" PRIu64 "UL", N);
	ocl_src_define(g, "K", "%" PRIu64 "UL", K);
	ocl_src_define(g, "BSTRIDE", "%" PRIu64 "UL", batched ? bt->dims[1] * bt->dims[2] : 0);
	ocl_src_define(g, "AT", "%s", ocl_elem_ctype(at->elem));
	ocl_src_define(g, "BT", "%s", ocl_elem_ctype(bt->elem));
	ocl_src_ptr(g, "PD", ocl_elem_ctype(dt->elem), in, 0);
	ocl_src_ptr(g, "PA", ocl_elem_ctype(at->elem), in, 1);
	ocl_src_ptr(g, "PB", ocl_elem_ctype(bt->elem), in, 2);
	q_common(g, in, in->kind == IK_fullyconnected, relu);
	ocl_src_section(g, "qgemm");
	size_t l0 = 1;
	while (l0 < N && l0 < (g->gpu ? 64u : 32u))
		l0 *= 2;
	uint64_t rows = B * M;
	ocl_launch_2d(l, l0, 1, (size_t)(N ? N : 1), (size_t)(rows ? rows : 1));
}
