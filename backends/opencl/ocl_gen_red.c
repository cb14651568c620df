/* ocl_gen_red.c - the OpenCL backend's reductions (docs/OpenCL.md):
 * batchedreduce{add,mean,prod,max,min}, argmax and argmin (the "red"
 * section of kernels/ocl_kernels.cl) and batchmatmul (the "gemm" section,
 * batched). The flip that argmax's and argmin's select_last_index needs
 * is ocl_gen_index.c's.
 *
 * A reduction is specialized on its shapes: the source's dimensions of
 * extent 1 are dropped and neighbouring dimensions that are both kept or
 * both reduced are merged, so the index arithmetic OBASE(o) (the first
 * source element of output o) and ROFF(r) (the offset of the r-th element
 * reduced into it) is a few constant divisions, none for the common case
 * of one contiguous run of reduced dimensions. A work-item per output
 * loops over its elements where the reduced extent is small or the outputs
 * many; where it is large and the outputs few, a work-group of LS
 * work-items shares each output (red_group).
 *
 * Results are the interpreter's (backends/interpreter/k_reduce.c): integers
 * (int32, int64, index32, index64) accumulate in 64 bits and wrap to the
 * destination's width, bit-exact; float sums and products accumulate in
 * float (the interpreter: double, rounded once), so they agree within its
 * tolerances; max and min let NaN win; the empty reduction gives the
 * identity (sum 0, product 1, max the lowest value of the kind, min the
 * highest, mean NaN); argmax and argmin give the first index of the best
 * value, NaN losing to any number (0 where every value is NaN or the axis
 * is empty).
 */
#include "backends/opencl/ocl_gen_red.h"
#include "support/util.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

/* The OpenCL C type of a reduction's element kind ek, NULL if the kernels
 * do not reduce it. */
static const char *red_ctype(unsigned ek)
{
	switch (ek) {
	case EK_FLOAT: return "float";
	case EK_I32: case EK_INDEX32: return "int";
	case EK_I64: case EK_INDEX64: return "long";
	default: return NULL;
	}
}

/* Whether ek is an index result kind of argmax and argmin. */
static bool arg_result(unsigned ek) { return ek != EK_FLOAT && red_ctype(ek); }

bool ocl_red_elems_ok(enum ocl_elems el, const enum elem_kind *elems, unsigned nelems)
{
	if (nelems != 2)
		return false;
	if (el == OCL_EL_ARG)
		return arg_result(elems[0]) && red_ctype(elems[1]);
	return el == OCL_EL_REDUCE && elems[0] == elems[1] && red_ctype(elems[0]);
}

bool ocl_sup_reduce(const struct ir_instr *in)
{
	enum elem_kind e[2] = {(enum elem_kind)in->ops[0].val->type->elem, (enum elem_kind)in->ops[1].val->type->elem};
	return ocl_red_elems_ok(OCL_EL_REDUCE, e, 2);
}

bool ocl_sup_argred(const struct ir_instr *in)
{
	enum elem_kind e[2] = {(enum elem_kind)in->ops[0].val->type->elem, (enum elem_kind)in->ops[1].val->type->elem};
	return ocl_red_elems_ok(OCL_EL_ARG, e, 2);
}

bool ocl_sup_bmm(const struct ir_instr *in)
{
	if (ocl_is_qlinear(in))
		return ocl_sup_qgemm(in);
	for (unsigned i = 0; i < 3; i++)
		if (in->ops[i].val->type->elem != EK_FLOAT || in->ops[i].val->type->rank != 3)
			return false;
	return true;
}

/* ---- index arithmetic ---- */

/* The source's dimensions as runs: extent, source stride (in elements),
 * reduced or kept; outermost first. */
struct red_runs {
	uint64_t ext[GLOW_MAX_RANK], stride[GLOW_MAX_RANK];
	bool red[GLOW_MAX_RANK];
	unsigned n;
};

/* t's dimensions of extent > 1 merged into runs by drop[] (reduced). */
static void runs_of(const struct type *t, const bool *drop, struct red_runs *rr)
{
	uint64_t stride = 1, st[GLOW_MAX_RANK];
	for (unsigned i = t->rank; i-- > 0;) {
		st[i] = stride;
		stride *= t->dims[i];
	}
	rr->n = 0;
	for (unsigned i = 0; i < t->rank; i++) {
		if (t->dims[i] == 1)
			continue;
		if (rr->n && rr->red[rr->n - 1] == drop[i]) {
			/* row-major: contiguous with the run before (only dimensions
			 * of extent 1, skipped, may lie between) */
			rr->ext[rr->n - 1] *= t->dims[i];
			rr->stride[rr->n - 1] = st[i];
			continue;
		}
		rr->ext[rr->n] = t->dims[i];
		rr->stride[rr->n] = st[i];
		rr->red[rr->n++] = drop[i];
	}
}

/* Into buf (cap bytes): the source offset of index `var` (an output's or a
 * reduced element's, mixed radix over the runs whose red is `red`) as an
 * OpenCL C expression. */
static void offset_expr(const struct red_runs *rr, bool red, const char *var, char *buf, size_t cap)
{
	size_t len = 0;
	uint64_t below = 1; /* product of the extents of the runs inside */
	buf[0] = 0;
	for (unsigned i = rr->n; i-- > 0;) {
		if (rr->red[i] != red)
			continue;
		bool outermost = true;
		for (unsigned j = 0; j < i; j++)
			outermost &= rr->red[j] != red;
		char q[64], c[128], m[32] = "";
		if (below == 1)
			snprintf(q, sizeof q, "(%s)", var);
		else
			snprintf(q, sizeof q, "((%s) / %" PRIu64 "UL)", var, below);
		if (outermost)
			snprintf(c, sizeof c, "%s", q);
		else
			snprintf(c, sizeof c, "(%s %% %" PRIu64 "UL)", q, rr->ext[i]);
		if (rr->stride[i] != 1)
			snprintf(m, sizeof m, " * %" PRIu64 "UL", rr->stride[i]);
		len += (size_t)snprintf(buf + len, cap - len, "%s%s%s", len ? " + " : "", c, m);
		if (len >= cap)
			unreachable("OpenCL reduction index too long");
		below *= rr->ext[i];
	}
	if (!len)
		snprintf(buf, cap, "0UL");
}

/* Work-items per output: 1 (a loop per output) unless the reduced extent
 * r is large and the outputs few, then a power of two giving each
 * work-item at least 8 elements, up to 256 on a GPU and 16 on a CPU
 * device (where PoCL vectorizes across them). */
static size_t red_group(const struct ocl_gen *g, uint64_t nout, uint64_t r)
{
	if (r < 128 || nout == 0 || nout > (g->gpu ? 4096u : 64u))
		return 1;
	size_t ls = 1, cap = g->gpu ? 256 : 16;
	while (ls < cap && ls * 16 <= r)
		ls *= 2;
	return ls;
}

/* The kernel of a reduction of `in`'s operand 1 into operand 0 over
 * drop[]: the index macros, the launch, the section; the caller has
 * defined the accumulation (ARG and its macros). */
static void gen_reduction(struct ocl_gen *g, const struct ir_instr *in, struct ocl_launch *l, const bool *drop)
{
	const struct type *st = in->ops[1].val->type, *dt = in->ops[0].val->type;
	struct red_runs rr;
	runs_of(st, drop, &rr);
	uint64_t nout = type_numel(dt), r = 1;
	for (unsigned i = 0; i < st->rank; i++)
		if (drop[i])
			r *= st->dims[i];
	size_t ls = red_group(g, nout, r);
	char e[1024];
	ocl_src_define(g, "NOUT", "%" PRIu64 "UL", nout);
	ocl_src_define(g, "R", "%" PRIu64 "UL", r);
	ocl_src_define(g, "LS", "%zu", ls);
	offset_expr(&rr, false, "o", e, sizeof e);
	ocl_src_define(g, "OBASE(o)", "(%s)", e);
	offset_expr(&rr, true, "r", e, sizeof e);
	ocl_src_define(g, "ROFF(r)", "(%s)", e);
	ocl_src_ptr(g, "PD", red_ctype(dt->elem), in, 0);
	ocl_src_ptr(g, "PS", red_ctype(st->elem), in, 1);
	ocl_src_section(g, "red");
	if (ls > 1)
		ocl_launch_2d(l, ls, 1, ls, (size_t)nout);
	else
		ocl_launch_1d(l, g->gpu ? 256 : 32, nout);
}

/* ---- the generators ---- */

/* The lowest (max) or highest value of integer element kind ek, as an
 * OpenCL C long. */
static const char *int_bound(unsigned ek, bool lowest)
{
	bool wide = elem_size((enum elem_kind)ek) == 8;
	if (lowest)
		return wide ? "(-9223372036854775807L - 1L)" : "(-2147483647L - 1L)";
	return wide ? "9223372036854775807L" : "2147483647L";
}

void ocl_gen_reduce(struct ocl_gen *g, const struct ir_instr *in, unsigned arg, bool relu)
{
	(void)relu;
	const struct type *dt = in->ops[0].val->type;
	bool fl = dt->elem == EK_FLOAT, wide = elem_size((enum elem_kind)dt->elem) == 8;
	struct ocl_launch *l = ocl_src_begin(g, in);
	ocl_src_define(g, "ARG", "0");
	ocl_src_define(g, "ACC", "%s", fl ? "float" : "long");
	const char *ident = fl ? "0.0f" : "0L", *join = fl ? "((a) + (v))" : "as_long(as_ulong(a) + as_ulong(v))";
	switch (arg) {
	case OCL_RED_PROD:
		ident = fl ? "1.0f" : "1L";
		join = fl ? "((a) * (v))" : "as_long(as_ulong(a) * as_ulong(v))";
		break;
	case OCL_RED_MAX:
	case OCL_RED_MIN: {
		bool mx = arg == OCL_RED_MAX;
		ident = fl ? (mx ? "(-INFINITY)" : "INFINITY") : int_bound(dt->elem, mx);
		join = fl ? (mx ? "(isnan(a) || isnan(v) ? NAN : (v) > (a) ? (v) : (a))"
				: "(isnan(a) || isnan(v) ? NAN : (v) < (a) ? (v) : (a))")
			  : (mx ? "((v) > (a) ? (v) : (a))" : "((v) < (a) ? (v) : (a))");
		break;
	}
	default: break;
	}
	ocl_src_define(g, "IDENT", "%s", ident);
	ocl_src_define(g, "JOIN(a, v)", "%s", join);
	/* a mean divides once (the empty mean: 0 / 0, NaN); int32 wraps */
	ocl_src_define(g, "FINAL(a)", "%s",
		       arg == OCL_RED_MEAN ? "((a) / (float)R)" : fl || wide ? "(a)" : "as_int((uint)as_ulong(a))");
	bool drop[GLOW_MAX_RANK] = {false};
	unsigned na;
	const int64_t *axes = ir_ints(in, AN_axes, &na);
	for (unsigned i = 0; i < na; i++)
		drop[axes[i]] = true;
	gen_reduction(g, in, l, drop);
}

void ocl_gen_argred(struct ocl_gen *g, const struct ir_instr *in, unsigned arg, bool relu)
{
	(void)relu;
	const struct type *st = in->ops[1].val->type;
	bool fl = st->elem == EK_FLOAT, mx = arg == OCL_RED_ARGMAX;
	struct ocl_launch *l = ocl_src_begin(g, in);
	ocl_src_define(g, "ARG", "1");
	ocl_src_define(g, "VT", "%s", red_ctype(st->elem));
	/* before the first value: NaN (which any value beats), or the worst
	 * integer at index LONG_MAX (which an equal value beats by index) */
	ocl_src_define(g, "IDENT", "%s", fl ? "NAN" : int_bound(st->elem, mx));
	const char *cmp = mx ? ">" : "<";
	if (fl)
		ocl_src_define(g, "BETTER(v, i, bv, bi)",
			       "(isnan(bv) ? (!isnan(v) || (i) < (bi)) : (!isnan(v) && ((v) %s (bv) || ((v) == (bv) && "
			       "(i) < (bi)))))",
			       cmp);
	else
		ocl_src_define(g, "BETTER(v, i, bv, bi)", "((v) %s (bv) || ((v) == (bv) && (i) < (bi)))", cmp);
	bool drop[GLOW_MAX_RANK] = {false};
	drop[ir_int(in, AN_axis)] = true;
	gen_reduction(g, in, l, drop);
}

/* batchmatmul (Dest B x M x N, LHS B x M x K, RHS B x K x N) as the gemm
 * section on the B M rows of LHS and Dest: RB (the rows of a work-item)
 * divides M, so a work-item's rows are of one batch, and BIDX finds RHS's
 * matrix of that batch from the work-item's first row i0. */
void ocl_gen_bmm(struct ocl_gen *g, const struct ir_instr *in, unsigned arg, bool relu)
{
	(void)arg;
	if (ocl_is_qlinear(in)) {
		ocl_gen_qgemm(g, in, relu);
		return;
	}
	const struct type *dt = in->ops[0].val->type, *at = in->ops[1].val->type;
	uint64_t B = dt->dims[0], M = dt->dims[1], N = dt->dims[2], K = at->dims[2];
	unsigned rb = M % 4 == 0 ? 4 : M % 3 == 0 ? 3 : M % 2 == 0 ? 2 : 1;
	struct ocl_launch *l = ocl_src_begin(g, in);
	OCL_SRC_INTS(g, {"M", (int64_t)(B * M)}, {"MB", (int64_t)M}, {"N", (int64_t)N}, {"K", (int64_t)K},
		     {"RB", rb});
	ocl_src_define(g, "ALPHA", "1.0f");
	ocl_src_ptr(g, "PD", "float", in, 0);
	ocl_src_ptr(g, "PA", "float", in, 1);
	ocl_src_ptr(g, "PB", "float", in, 2);
	ocl_src_define(g, "AIDX(i, k)", "((size_t)(i) * K + (k))");
	ocl_src_define(g, "BIDX(k, j)", "((size_t)(i0 / MB) * (K * N) + (size_t)(k) * N + (j))");
	ocl_src_act(g, relu, false);
	ocl_src_section(g, "gemm");
	size_t l0 = 1;
	while (l0 < N && l0 < (g->gpu ? 64u : 32u))
		l0 *= 2;
	uint64_t rows = (B * M + rb - 1) / rb;
	ocl_launch_2d(l, l0, 1, (size_t)(N ? N : 1), (size_t)(rows ? rows : 1));
}
