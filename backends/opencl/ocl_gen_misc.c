/* ocl_gen_misc.c - the OpenCL backend's transposed convolution, top-k,
 * cumulative sums and products, and max pooling with its argmax (oclk,
 * issue 19; docs/OpenCL.md, "Transposed convolution, top-k, cumulative
 * ops, argmax pooling"). Kernels: the sections convt, topk, cum and
 * poolarg of kernels/ocl_kernels.cl.
 *
 * Each computes what the interpreter computes (backends/interpreter's
 * k_conv.c and k_reduce.c), in the interpreter's order:
 *
 * - convtranspose: a work-item per output element gathers the input pixels
 *   whose taps reach it (no scattering, no atomics), in the order the
 *   interpreter adds them (input rows, then columns, ascending: the taps
 *   descending), each tap's dot product over the input channels of its
 *   group in double where the device has it (cl_khr_fp64; the products of
 *   two floats are exact in double) and rounded to float once, added to
 *   the bias in float: bit for bit the interpreter's on such a device;
 * - topk: a work-item per row selects the k best one after another, each
 *   the best of the elements after the previous one in the order "greater
 *   value first (NaN after every number), lower index first among equals",
 *   the order the interpreter's stable selection produces;
 * - cumsum, cumprod: a work-item per line along the axis, accumulating in
 *   the interpreter's order (reverse: from the end) in double where the
 *   device has it (floats; bit for bit then) and in wrapping 64-bit
 *   integers (int32, int64, index32, index64), stored as the interpreter's
 *   st_f and st_i store;
 * - maxpoolwithargmax: a work-item per output element: the first maximum
 *   of its window (NaN beats a number) and its flattened NHWC index in Src
 *   (the batch included); a window of padding only gives 0 and -1.
 */
#include "backends/opencl/ocl.h"
#include "backends/opencl/ocl_gen_red.h"
#include "support/util.h"

#include <inttypes.h>

/* The OpenCL C type of a value element kind of these kernels, NULL if none:
 * float, int32, int64, index32, index64. */
static const char *misc_ctype(unsigned ek)
{
	switch (ek) {
	case EK_FLOAT: return "float";
	case EK_I32: case EK_INDEX32: return "int";
	case EK_I64: case EK_INDEX64: return "long";
	default: return NULL;
	}
}

/* A one-dimensional launch of n work-items (32 a group on a CPU device,
 * where PoCL vectorizes across them; 64 on a GPU). */
static void launch(struct ocl_gen *g, struct ocl_launch *l, uint64_t n) { ocl_launch_1d(l, g->gpu ? 64 : 32, n); }

static bool float_rank(const struct ir_instr *in, unsigned i, unsigned rank)
{
	const struct type *t = in->ops[i].val->type;
	return t->elem == EK_FLOAT && t->rank == rank;
}

/* ---- the graph side ---- */

bool ocl_topk_elems_ok(const enum elem_kind *elems, unsigned nelems)
{
	/* Values, Indices, Input */
	return nelems == 3 && elems[0] == elems[2] && misc_ctype(elems[0]) && elems[1] != EK_FLOAT &&
	       misc_ctype(elems[1]);
}

/* ---- transposed convolution ---- */

bool ocl_sup_convt(const struct ir_instr *in)
{
	return float_rank(in, 0, 4) && float_rank(in, 1, 4) && float_rank(in, 2, 4) && float_rank(in, 3, 1);
}

void ocl_gen_convt(struct ocl_gen *g, const struct ir_instr *in, unsigned arg, bool relu)
{
	(void)arg;
	const struct type *dt = in->ops[0].val->type, *st = in->ops[1].val->type, *ft = in->ops[2].val->type;
	unsigned nk, ns, np, nd;
	const int64_t *k = ir_ints(in, AN_kernels, &nk), *s = ir_ints(in, AN_strides, &ns), *pd = ir_ints(in, AN_pads, &np),
		      *dl = ir_ints(in, AN_dilation, &nd);
	int64_t group = ir_int(in, AN_group);
	struct ocl_launch *l = ocl_src_begin(g, in);
	OCL_SRC_INTS(g, {"H", (int64_t)st->dims[1]}, {"W", (int64_t)st->dims[2]}, {"C", (int64_t)st->dims[3]},
		     {"OH", (int64_t)dt->dims[1]}, {"OW", (int64_t)dt->dims[2]}, {"OC", (int64_t)dt->dims[3]},
		     {"KH", k[0]}, {"KW", k[1]}, {"SH", s[0]}, {"SW", s[1]}, {"DH", dl[0]}, {"DW", dl[1]},
		     {"PT", pd[0]}, {"PL", pd[1]}, {"ICG", (int64_t)ft->dims[3]},
		     {"OCG", (int64_t)(dt->dims[3] / (uint64_t)group)});
	ocl_src_define(g, "TOTAL", "%" PRIu64 "UL", type_numel(dt));
	ocl_src_ptr(g, "PD", "float", in, 0);
	ocl_src_ptr(g, "PS", "float", in, 1);
	ocl_src_ptr(g, "PF", "float", in, 2);
	ocl_src_ptr(g, "PBIAS", "float", in, 3);
	ocl_src_act(g, relu, false);
	ocl_src_section(g, "convt");
	launch(g, l, type_numel(dt));
}

/* ---- top-k ---- */

bool ocl_sup_topk(const struct ir_instr *in)
{
	const struct type *vt = in->ops[0].val->type, *it = in->ops[1].val->type, *st = in->ops[2].val->type;
	enum elem_kind e[3] = {(enum elem_kind)vt->elem, (enum elem_kind)it->elem, (enum elem_kind)st->elem};
	return ocl_topk_elems_ok(e, 3) && st->rank >= 1 && st->dims[st->rank - 1] <= INT64_MAX;
}

void ocl_gen_topk(struct ocl_gen *g, const struct ir_instr *in, unsigned arg, bool relu)
{
	(void)arg;
	(void)relu;
	const struct type *st = in->ops[2].val->type;
	uint64_t len = st->dims[st->rank - 1], rows = len ? type_numel(st) / len : 0;
	const char *T = misc_ctype(st->elem);
	struct ocl_launch *l = ocl_src_begin(g, in);
	ocl_src_define(g, "ROWS", "%" PRIu64 "UL", rows);
	ocl_src_define(g, "LEN", "%" PRIu64 "L", len);
	ocl_src_define(g, "K", "%" PRId64 "L", ir_int(in, AN_k));
	ocl_src_define(g, "T", "%s", T);
	ocl_src_define(g, "IT", "%s", misc_ctype(in->ops[1].val->type->elem));
	/* a beats b (the interpreter's beats with max: a number beats NaN) */
	if (st->elem == EK_FLOAT)
		ocl_src_define(g, "BEATS(a, b)", "(isnan(b) ? !isnan(a) : (a) > (b))");
	else
		ocl_src_define(g, "BEATS(a, b)", "((a) > (b))");
	ocl_src_ptr(g, "PV", T, in, 0);
	ocl_src_ptr(g, "PI", misc_ctype(in->ops[1].val->type->elem), in, 1);
	ocl_src_ptr(g, "PS", T, in, 2);
	ocl_src_section(g, "topk");
	launch(g, l, rows);
}

/* ---- cumulative sums and products ---- */

bool ocl_sup_cum(const struct ir_instr *in)
{
	enum elem_kind e[2] = {(enum elem_kind)in->ops[0].val->type->elem, (enum elem_kind)in->ops[1].val->type->elem};
	int64_t axis = ir_int(in, AN_axis);
	return ocl_red_elems_ok(OCL_EL_REDUCE, e, 2) && axis >= 0 && axis < (int64_t)in->ops[1].val->type->rank;
}

void ocl_gen_cum(struct ocl_gen *g, const struct ir_instr *in, unsigned arg, bool relu)
{
	(void)relu;
	const struct type *st = in->ops[1].val->type;
	unsigned axis = (unsigned)ir_int(in, AN_axis);
	uint64_t outer = 1, inner = 1;
	for (unsigned i = 0; i < axis; i++)
		outer *= st->dims[i];
	for (unsigned i = axis + 1; i < st->rank; i++)
		inner *= st->dims[i];
	bool prod = arg == OCL_CUM_PROD, fl = st->elem == EK_FLOAT;
	const char *T = misc_ctype(st->elem);
	struct ocl_launch *l = ocl_src_begin(g, in);
	ocl_src_define(g, "LANES", "%" PRIu64 "UL", outer * inner);
	ocl_src_define(g, "INNER", "%" PRIu64 "UL", inner);
	ocl_src_define(g, "LEN", "%" PRIu64 "UL", st->dims[axis]);
	ocl_src_define(g, "EXCL", "%d", ir_int(in, AN_exclusive) != 0);
	ocl_src_define(g, "REV", "%d", ir_int(in, AN_reverse) != 0);
	ocl_src_define(g, "FLOATS", "%d", fl);
	ocl_src_define(g, "T", "%s", T);
	/* floats: OCLK_REAL (double where the device has it); integers:
	 * ulong, wrapping as the interpreter's uint64_t */
	ocl_src_define(g, "LOADA(x)", fl ? "((OCLK_REAL)(x))" : "((ulong)(long)(x))");
	ocl_src_define(g, "JOIN(a, b)", prod ? "((a) * (b))" : "((a) + (b))");
	ocl_src_define(g, "IDENT", "%d", prod ? 1 : 0);
	ocl_src_ptr(g, "PD", T, in, 0);
	ocl_src_ptr(g, "PS", T, in, 1);
	ocl_src_section(g, "cum");
	launch(g, l, outer * inner);
}

/* ---- max pooling with its argmax ---- */

bool ocl_sup_poolarg(const struct ir_instr *in)
{
	unsigned ak = in->ops[2].val->type->elem;
	return float_rank(in, 0, 4) && float_rank(in, 1, 4) && ak != EK_FLOAT && misc_ctype(ak);
}

void ocl_gen_poolarg(struct ocl_gen *g, const struct ir_instr *in, unsigned arg, bool relu)
{
	(void)arg;
	(void)relu;
	const struct type *dt = in->ops[0].val->type, *st = in->ops[1].val->type;
	unsigned nk, ns, np;
	const int64_t *k = ir_ints(in, AN_kernels, &nk), *s = ir_ints(in, AN_strides, &ns), *pd = ir_ints(in, AN_pads, &np);
	struct ocl_launch *l = ocl_src_begin(g, in);
	OCL_SRC_INTS(g, {"H", (int64_t)st->dims[1]}, {"W", (int64_t)st->dims[2]}, {"C", (int64_t)st->dims[3]},
		     {"OH", (int64_t)dt->dims[1]}, {"OW", (int64_t)dt->dims[2]}, {"KH", k[0]}, {"KW", k[1]},
		     {"SH", s[0]}, {"SW", s[1]}, {"PT", pd[0]}, {"PL", pd[1]});
	ocl_src_define(g, "TOTAL", "%" PRIu64 "UL", type_numel(dt));
	ocl_src_ptr(g, "PD", "float", in, 0);
	ocl_src_ptr(g, "PS", "float", in, 1);
	ocl_src_ptr(g, "PA", misc_ctype(in->ops[2].val->type->elem), in, 2);
	ocl_src_section(g, "poolarg");
	launch(g, l, type_numel(dt));
}
