/* ocl_gen.c - the OpenCL backend's generators (docs/OpenCL.md).
 *
 * The program is the preamble of kernels/ocl_kernels.cl, then one kernel
 * per computing instruction in program order, each a section of that file
 * after #defines that fix its shapes, attributes and operand places (so
 * the device compiler sees constants and unrolls and vectorizes what it
 * can), and #undefs of the same names after it. Work-group sizes are chosen
 * per kernel: along the contiguous dimension of the result, 32 work-items
 * on a CPU device (PoCL vectorizes across them) and 64 on a GPU. The GPU
 * kernel set (g->gpu) computes convolutions of one group and matrix
 * products with the tiled igemm kernel (ocl_gen_igemm.c).
 *
 * The generators are named by OclKernels.def's rows and called by the
 * program driver (ocl_prog.c), which also decides the relu fusion: a kind
 * flagged OCL_F_FUSE_RELU gets relu true when an in-place relu of its
 * result follows, and applies it in its own store. They write through
 * ocl_src.c and read no table.
 *
 * Constant operands that a kernel reads across work-items with a large
 * stride are repacked at compile time into region R3 (ocl_pack): a
 * convolution filter OC x KH x KW x ICG into [KH][KW][ICG][OC], the
 * transposed B of a gemm into K x N.
 */
#include "backends/interpreter/kern.h"
#include "backends/opencl/ocl.h"
#include "support/util.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

/* The vector type of width vw and its loads and stores. */
static void define_vector(struct ocl_gen *g, unsigned vw)
{
	ocl_src_define(g, "VW", "%u", vw);
	ocl_src_define(g, "VT", "float%u", vw);
	ocl_src_define(g, "VLOAD", "vload%u", vw);
	ocl_src_define(g, "VSTORE", "vstore%u", vw);
}

/* A one-dimensional launch of n work-items. */
static void launch_1d(struct ocl_gen *g, struct ocl_launch *l, uint64_t n) { ocl_launch_1d(l, g->gpu ? 256 : 32, n); }

/* The smallest power of two >= n, at most cap. */
static size_t pow2_upto(uint64_t n, size_t cap)
{
	size_t p = 1;
	while (p < n && p < cap)
		p *= 2;
	return p;
}

static bool is_float(const struct ir_value *v) { return v->type->elem == EK_FLOAT; }

/* ---- support tests (OclKernels.def's Supports column) ---- */

bool ocl_sup_any(const struct ir_instr *in)
{
	(void)in;
	return true;
}

bool ocl_sup_float(const struct ir_instr *in)
{
	for (unsigned i = 0; i < in->nops; i++)
		if (!is_float(in->ops[i].val))
			return false;
	return true;
}

/* Whether operand i has rank r. */
static bool rank_is(const struct ir_instr *in, unsigned i, unsigned r) { return in->ops[i].val->type->rank == r; }

bool ocl_sup_conv(const struct ir_instr *in)
{
	if (in->kind == IK_convolution && ocl_is_qlinear(in))
		return ocl_sup_qconv(in);
	return ocl_sup_float(in) && rank_is(in, 1, 4) && rank_is(in, 2, 4);
}

bool ocl_sup_image(const struct ir_instr *in) { return ocl_sup_float(in) && rank_is(in, 1, 4); }

bool ocl_sup_gemm(const struct ir_instr *in)
{
	if (in->kind != IK_gemm && ocl_is_qlinear(in))
		return ocl_sup_qgemm(in);
	return ocl_sup_float(in) && rank_is(in, 0, 2) && rank_is(in, 1, 2) && rank_is(in, 2, 2);
}

/* The bookkeeping kinds' generator: no kernel. */
void ocl_gen_nothing(struct ocl_gen *g, const struct ir_instr *in, unsigned arg, bool relu)
{
	(void)g;
	(void)in;
	(void)arg;
	(void)relu;
}

/* ---- convolution, pooling ---- */

/* A constant weight operand: the weight, else NULL. */
static const struct ir_weight *const_weight(const struct ir_instr *in, unsigned i)
{
	uint64_t off = 0;
	struct ir_value *root = ir_value_root(in->ops[i].val, &off);
	struct ir_weight *w = root ? ir_as_weight(root) : NULL;
	return w && w->is_const && off == 0 && root == in->ops[i].val ? w : NULL;
}

/* Records a repacking of constant weight w into R3; returns its offset. */
static uint64_t add_pack(struct ocl_gen *g, const struct ir_weight *w, unsigned kind, uint64_t a, uint64_t b,
			 uint64_t c, uint64_t d)
{
	g->pack = xrealloc(g->pack, (g->npack + 1) * sizeof *g->pack);
	struct ocl_pack *p = &g->pack[g->npack++];
	p->w = w;
	p->kind = kind;
	p->a = a, p->b = b, p->c = c, p->d = d;
	p->offset = g->r3_size;
	g->r3_size += ocl_round_up((size_t)type_bytes(w->v.type), 64);
	return p->offset;
}

/* Pixels per work-item along a row of OW: from 4 to 8 (fewer for a
 * narrower row), the one that wastes the fewest, the larger on a tie. */
static unsigned pick_px(uint64_t ow)
{
	if (ow <= 8)
		return (unsigned)ow;
	unsigned best = 8;
	uint64_t waste = (ow + 7) / 8 * 8 - ow;
	for (unsigned px = 7; px >= 4; px--) {
		uint64_t w = (ow + px - 1) / px * px - ow;
		if (w < waste)
			best = px, waste = w;
	}
	return best;
}

/* The vector width of the CPU convolution: the widest of 16, 8, 4 that
 * divides the channels of a group (or every channel of a depthwise
 * convolution); 0 if none does. */
static unsigned pick_vw(uint64_t oc, uint64_t ocg, bool depthwise)
{
	static const unsigned w[] = {16, 8, 4};
	for (unsigned i = 0; i < 3; i++)
		if (oc % w[i] == 0 && (depthwise || ocg % w[i] == 0))
			return w[i];
	return 0;
}

void ocl_gen_conv(struct ocl_gen *g, const struct ir_instr *in, unsigned arg, bool relu)
{
	(void)arg;
	if (ocl_is_qlinear(in)) {
		ocl_gen_qconv(g, in, relu);
		return;
	}
	const struct type *dt = in->ops[0].val->type, *st = in->ops[1].val->type, *ft = in->ops[2].val->type;
	unsigned nk, ns, np, nd;
	const int64_t *k = ir_ints(in, AN_kernels, &nk), *s = ir_ints(in, AN_strides, &ns), *pd = ir_ints(in, AN_pads, &np),
		      *dl = ir_ints(in, AN_dilation, &nd);
	int64_t group = ir_int(in, AN_group);
	uint64_t N = st->dims[0], H = st->dims[1], W = st->dims[2], C = st->dims[3];
	uint64_t OH = dt->dims[1], OW = dt->dims[2], OC = dt->dims[3], ICG = ft->dims[3];
	uint64_t OCG = OC / (uint64_t)group;
	bool depthwise = ICG == 1 && OCG == 1 && C == OC;
	const struct ir_weight *fw = const_weight(in, 2);
	/* CPU devices: the vector kernel where the filter is repacked */
	unsigned vw = !g->gpu && fw ? pick_vw(OC, OCG, depthwise) : 0;
	/* two vectors of channels per work-item where a group has them: each
	 * input value is then loaded once for twice the multiply-adds */
	unsigned vb = vw && !depthwise && OCG % (2 * vw) == 0 ? 2 : 1;
	unsigned px = g->gpu ? (OW >= 4 ? 4 : (unsigned)OW) : pick_px(OW);
	uint64_t owb = (OW + px - 1) / px, rows = N * OH * owb;
	/* GPU kernels: one group with a repacked filter as the tiled igemm */
	struct ocl_igemm ig = {N * OH * OW, OC, N, H, W, C, OH, OW, (uint64_t)k[0], (uint64_t)k[1],
			       (uint64_t)s[0], (uint64_t)s[1], (uint64_t)dl[0], (uint64_t)dl[1], (uint64_t)pd[0],
			       (uint64_t)pd[1], true, true};
	if (g->gpu && fw && group == 1 && ocl_igemm_fits(&ig)) {
		uint64_t off = add_pack(g, fw, OCL_PACK_FILTER, OC, (uint64_t)(k[0] * k[1]), ICG, 0);
		ocl_gen_igemm(g, in, &ig, off, relu);
		return;
	}
	struct ocl_launch *l = ocl_src_begin(g, in);
	OCL_SRC_INTS(g, {"H", (int64_t)H}, {"W", (int64_t)W}, {"C", (int64_t)C}, {"OH", (int64_t)OH},
		     {"OW", (int64_t)OW}, {"OC", (int64_t)OC}, {"KH", k[0]}, {"KW", k[1]}, {"SH", s[0]}, {"SW", s[1]},
		     {"DH", dl[0]}, {"DW", dl[1]}, {"PT", pd[0]}, {"PL", pd[1]}, {"ICG", (int64_t)ICG},
		     {"OCG", (int64_t)OCG}, {"PX", px}, {"OWB", (int64_t)owb}, {"ROWS", (int64_t)rows});
	ocl_src_out(g, in);
	ocl_src_ptr(g, "PS", "float", in, 1);
	ocl_src_ptr(g, "PBIAS", "float", in, 3);
	if (fw) {
		uint64_t off = add_pack(g, fw, OCL_PACK_FILTER, OC, (uint64_t)(k[0] * k[1]), ICG, 0);
		ocl_src_define(g, "PF", "((__global const float *)(R3 + %" PRIu64 "))", off);
		ocl_src_define(g, "WIDX(ky, kx, ic)", "((((ky) * KW + (kx)) * ICG + (ic)) * OC + oc)");
	} else {
		ocl_src_ptr(g, "PF", "float", in, 2);
		ocl_src_define(g, "WIDX(ky, kx, ic)", "(((oc * KH + (ky)) * KW + (kx)) * ICG + (ic))");
	}
	if (vw) {
		define_vector(g, vw);
		ocl_src_define(g, "DEPTHWISE", "%d", depthwise);
		ocl_src_define(g, "VB", "%u", vb);
		ocl_src_define(g, "PZERO", "((__global const float *)R3)");
		ocl_src_act(g, relu, true);
		ocl_src_section(g, "convv");
		size_t l1 = rows >= 8 ? 8 : (size_t)rows;
		ocl_launch_2d(l, 1, l1, (size_t)(OC / (vw * vb)), (size_t)rows);
		return;
	}
	ocl_src_act(g, relu, false);
	ocl_src_section(g, "conv");
	size_t l0 = pow2_upto(OC, g->gpu ? 64 : 32);
	size_t l1 = g->gpu ? (l0 >= 64 ? 2 : 128 / l0) : 1;
	ocl_launch_2d(l, l0, l1, (size_t)OC, (size_t)rows);
}

void ocl_gen_pool(struct ocl_gen *g, const struct ir_instr *in, unsigned arg, bool relu)
{
	const struct type *dt = in->ops[0].val->type, *st = in->ops[1].val->type;
	unsigned nk, ns, np;
	const int64_t *k = ir_ints(in, AN_kernels, &nk), *s = ir_ints(in, AN_strides, &ns), *pd = ir_ints(in, AN_pads, &np);
	bool is_max = arg == OCL_POOL_MAX;
	struct ocl_launch *l = ocl_src_begin(g, in);
	OCL_SRC_INTS(g, {"H", (int64_t)st->dims[1]}, {"W", (int64_t)st->dims[2]}, {"C", (int64_t)st->dims[3]},
		     {"OH", (int64_t)dt->dims[1]}, {"OW", (int64_t)dt->dims[2]}, {"KH", k[0]}, {"KW", k[1]}, {"SH", s[0]},
		     {"SW", s[1]}, {"PT", pd[0]}, {"PL", pd[1]});
	ocl_src_define(g, "TOTAL", "%" PRIu64 "UL", type_numel(dt));
	ocl_src_define(g, "IS_MAX", "%d", is_max);
	ocl_src_define(g, "INCL", "%d", is_max ? 0 : (int)ir_int(in, AN_count_include_pads));
	ocl_src_ptr(g, "PD", "float", in, 0);
	ocl_src_ptr(g, "PS", "float", in, 1);
	unsigned vw = g->gpu ? 0 : pick_vw(st->dims[3], st->dims[3], false);
	if (vw) {
		uint64_t npix = dt->dims[0] * dt->dims[1] * dt->dims[2];
		ocl_src_define(g, "NPIX", "%" PRIu64 "UL", npix);
		define_vector(g, vw);
		ocl_src_act(g, relu, true);
		ocl_src_section(g, "poolv");
		size_t l1 = npix >= 8 ? 8 : (size_t)npix;
		ocl_launch_2d(l, 1, l1, (size_t)(st->dims[3] / vw), (size_t)npix);
		return;
	}
	ocl_src_act(g, relu, false);
	ocl_src_section(g, "pool");
	launch_1d(g, l, type_numel(dt));
}

/* ---- matrix products ---- */

/* fullyconnected (Src N x K, Weights K x M, Bias M), matmul (LHS N x K, RHS
 * K x M) and gemm (alpha A' B' + beta C) as the gemm section. */
void ocl_gen_gemm(struct ocl_gen *g, const struct ir_instr *in, unsigned arg, bool relu)
{
	if (in->kind != IK_gemm && ocl_is_qlinear(in)) {
		ocl_gen_qgemm(g, in, relu);
		return;
	}
	const struct type *dt = in->ops[0].val->type, *at = in->ops[1].val->type;
	bool ta = false, tb = false;
	double alpha = 1, beta = 1;
	if (arg & OCL_MM_ATTRS) {
		ta = ir_int(in, AN_trans_a) != 0;
		tb = ir_int(in, AN_trans_b) != 0;
		alpha = ir_float(in, AN_alpha);
		beta = ir_float(in, AN_beta);
	}
	uint64_t M = dt->dims[0], N = dt->dims[1], K = at->dims[ta ? 0 : 1];
	/* GPU kernels: a fully connected layer (a bias of N) or a matrix
	 * product, both A (M x K) times B (K x N), as the tiled igemm */
	bool fc_bias = (arg & OCL_MM_IGEMM_BIAS) && in->ops[3].val->type->rank == 1 &&
		       in->ops[3].val->type->dims[0] == N;
	struct ocl_igemm ig = {M, N, M, 1, 1, K, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, fc_bias, false};
	if (g->gpu && (fc_bias || (arg & OCL_MM_IGEMM)) && ocl_igemm_fits(&ig)) {
		ocl_gen_igemm(g, in, &ig, 0, relu);
		return;
	}
	struct ocl_launch *l = ocl_src_begin(g, in);
	ocl_src_define(g, "M", "%" PRIu64, M);
	ocl_src_define(g, "N", "%" PRIu64, N);
	ocl_src_define(g, "K", "%" PRIu64, K);
	ocl_src_define(g, "RB", "%d", M >= 4 ? 4 : (int)M);
	ocl_src_define(g, "ALPHA", "((float)%.9g)", alpha);
	ocl_src_define(g, "BETA", "((float)%.9g)", beta);
	ocl_src_ptr(g, "PD", "float", in, 0);
	ocl_src_ptr(g, "PA", "float", in, 1);
	ocl_src_define(g, "AIDX(i, k)", ta ? "((size_t)(k) * M + (i))" : "((size_t)(i) * K + (k))");
	const struct ir_weight *bw = tb ? const_weight(in, 2) : NULL;
	if (bw) { /* B is N x K: repacked K x N */
		uint64_t off = add_pack(g, bw, OCL_PACK_TRANSPOSE, N, K, 0, 0);
		ocl_src_define(g, "PB", "((__global const float *)(R3 + %" PRIu64 "))", off);
		ocl_src_define(g, "BIDX(k, j)", "((size_t)(k) * N + (j))");
	} else {
		ocl_src_ptr(g, "PB", "float", in, 2);
		ocl_src_define(g, "BIDX(k, j)", tb ? "((size_t)(j) * K + (k))" : "((size_t)(k) * N + (j))");
	}
	if (arg & OCL_MM_ADD_C) {
		const struct type *ct = in->ops[3].val->type;
		uint64_t cr = ct->rank >= 2 ? ct->dims[0] : 1, cc = ct->rank >= 1 ? ct->dims[ct->rank - 1] : 1;
		ocl_src_ptr(g, "PC", "float", in, 3);
		ocl_src_define(g, "CIDX(i, j)", "((size_t)%s * %" PRIu64 " + %s)", cr == 1 ? "0" : "(i)", cc,
			       cc == 1 ? "0" : "(j)");
	}
	ocl_src_act(g, relu, false);
	ocl_src_section(g, "gemm");
	size_t l0 = pow2_upto(N, g->gpu ? 64 : 32);
	size_t rows = (size_t)((M + 3) / 4);
	ocl_launch_2d(l, l0, 1, (size_t)N, rows ? rows : 1);
}

/* ---- the rest ---- */

void ocl_gen_softmax(struct ocl_gen *g, const struct ir_instr *in, unsigned arg, bool relu)
{
	(void)arg;
	(void)relu;
	const struct type *st = in->ops[1].val->type;
	unsigned axis = (unsigned)ir_int(in, AN_axis);
	uint64_t outer = 1, inner = 1;
	for (unsigned i = 0; i < axis; i++)
		outer *= st->dims[i];
	for (unsigned i = axis + 1; i < st->rank; i++)
		inner *= st->dims[i];
	struct ocl_launch *l = ocl_src_begin(g, in);
	ocl_src_define(g, "OUTER", "%" PRIu64 "UL", outer);
	ocl_src_define(g, "INNER", "%" PRIu64 "UL", inner);
	ocl_src_define(g, "LEN", "%" PRIu64 "UL", st->dims[axis]);
	ocl_src_ptr(g, "PD", "float", in, 0);
	ocl_src_ptr(g, "PS", "float", in, 1);
	ocl_src_section(g, "softmax");
	launch_1d(g, l, outer * inner);
}

void ocl_gen_lrn(struct ocl_gen *g, const struct ir_instr *in, unsigned arg, bool relu)
{
	(void)arg;
	(void)relu;
	const struct type *st = in->ops[1].val->type;
	struct ocl_launch *l = ocl_src_begin(g, in);
	ocl_src_define(g, "N", "%" PRIu64 "UL", type_numel(st));
	ocl_src_define(g, "C", "%" PRIu64, st->dims[3]);
	ocl_src_define(g, "HW", "%" PRId64, ir_int(in, AN_half_window_size));
	ocl_src_define(g, "LALPHA", "((float)%.9g)", ir_float(in, AN_alpha));
	ocl_src_define(g, "LBETA", "((float)%.9g)", ir_float(in, AN_beta));
	ocl_src_define(g, "LK", "((float)%.9g)", ir_float(in, AN_k));
	ocl_src_ptr(g, "PD", "float", in, 0);
	ocl_src_ptr(g, "PS", "float", in, 1);
	ocl_src_section(g, "lrn");
	launch_1d(g, l, type_numel(st));
}

bool ocl_sup_splat(const struct ir_instr *in) { return ocl_utype(in->ops[0].val->type) != NULL; }

/* The value is stored once on the host by the interpreter's st_f (so every
 * element kind rounds, saturates or wraps as there) and the kernel writes
 * its bits. */
void ocl_gen_splat(struct ocl_gen *g, const struct ir_instr *in, unsigned arg, bool relu)
{
	(void)arg;
	(void)relu;
	const struct type *t = in->ops[0].val->type;
	uint64_t bits = 0; /* the element in its low bytes: hosts and devices are little-endian */
	st_f(t, &bits, 0, ir_float(in, AN_value));
	struct ocl_launch *l = ocl_src_begin(g, in);
	uint64_t n = type_numel(t);
	const char *T = ocl_utype(t);
	ocl_src_define(g, "N", "%" PRIu64 "UL", n);
	ocl_src_define(g, "VALUE", "((%s)%" PRIu64 "UL)", T, bits);
	ocl_src_ptr(g, "PD", T, in, 0);
	ocl_src_section(g, "splat");
	launch_1d(g, l, n);
}

void ocl_gen_batchedadd(struct ocl_gen *g, const struct ir_instr *in, unsigned arg, bool relu)
{
	(void)arg;
	struct ocl_launch *l = ocl_src_begin(g, in);
	uint64_t n = type_numel(in->ops[0].val->type);
	ocl_src_define(g, "N", "%" PRIu64 "UL", n);
	ocl_src_define(g, "SLICE", "%" PRIu64 "UL", type_numel(in->ops[2].val->type));
	ocl_src_ptr(g, "PD", "float", in, 0);
	ocl_src_ptr(g, "PA", "float", in, 1);
	ocl_src_ptr(g, "PB", "float", in, 2);
	ocl_src_act(g, relu, false);
	ocl_src_section(g, "batchedadd");
	launch_1d(g, l, n);
}
