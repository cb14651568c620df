/* ocl_gen_index.c - the OpenCL backend's indexing kernels (docs/OpenCL.md):
 * gather, gatherelements, gathernd, scatterelements and scatternd, whose
 * index values are read at run time, and the kernels that map every
 * destination element to a source element by its coordinates: pad,
 * broadcast, spacetodepth, depthtospace, flip, resizenearest and
 * resizebilinear.
 *
 * Like ocl_gen_move.c's, these kernels are generated whole: one work-item
 * per element written (the scatters: per line of elements that only it
 * writes), its coordinates taken from its index by constant divisions.
 * Elements move bit for bit as unsigned integers of their size; the
 * scatters' add and mul compute as the interpreter does (float, wrapping
 * int32 and int64, bool as or and and), resizebilinear interpolates float.
 *
 * Index values may be negative (counted from the end, as in ONNX). One
 * still out of range is the interpreter's run-time error, with its words:
 * a work-item that reads one stores nothing and records its position in
 * the instruction's check record in R3 (an atomic maximum of 0xffffffff
 * minus the position, so the record keeps the first position in Indices'
 * order, the one the interpreter reports); a one-work-item kernel after it
 * copies that index's value beside it, and after the run the host reports
 * the first instruction in program order whose record is set
 * (ocl_checks_read). The scatters update in Indices' order, so duplicate
 * indices give the interpreter's result: the last write wins, and the
 * reductions add or multiply in that order.
 *
 * Resize maps output coordinate o of a dimension to input coordinate
 * o / scale (asymmetric, as the interpreter): the host computes the
 * mapping in double, as the interpreter does, and the kernel reads it from
 * constant tables, so nearest picks the same elements.
 */
#include "backends/interpreter/kern.h"
#include "backends/opencl/ocl.h"
#include "support/util.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

/* ---- what the kernels share ---- */

/* Row-major element strides of t. */
static void row_strides(const struct type *t, uint64_t *st)
{
	uint64_t acc = 1;
	for (unsigned d = t->rank; d-- > 0;) {
		st[d] = acc;
		acc *= t->dims[d];
	}
}

/* The product of dims [lo, hi) of t. */
static uint64_t dims_prod(const struct type *t, unsigned lo, unsigned hi)
{
	uint64_t p = 1;
	for (unsigned d = lo; d < hi; d++)
		p *= t->dims[d];
	return p;
}

/* Appends "const size_t <p>K = (<var> / D) % dims[K];" for dims [lo, hi)
 * of t, the coordinates of row-major index var over those dimensions. */
static void coords(struct ostream *o, const char *var, const char *p, const struct type *t, unsigned lo, unsigned hi)
{
	uint64_t div = 1;
	for (unsigned d = hi; d-- > lo;) {
		os_printf(o, "\tconst size_t %s%u = (%s / %" PRIu64 "UL)", p, d, var, div);
		if (d > lo)
			os_printf(o, " %% %" PRIu64 "UL", t->dims[d]);
		os_puts(o, ";\n");
		div *= t->dims[d];
	}
}

/* The kernel's header after its #defines: one work-item per index i < n. */
static void khead(struct ocl_gen *g, const struct ocl_launch *l, uint64_t n)
{
	os_printf(&g->src, "__kernel void %s(ARGS)\n{\n\tconst size_t i = get_global_id(0);\n", l->name);
	os_printf(&g->src, "\tif (i >= %" PRIu64 "UL)\n\t\treturn;\n", n);
}

/* Ends the kernel (#undefs its names) and launches n work-items. */
static void kend(struct ocl_gen *g, struct ocl_launch *l, uint64_t n)
{
	os_puts(&g->src, "}\n");
	ocl_src_section(g, "none");
	ocl_launch_1d(l, g->gpu ? 256 : 32, n);
}

/* The OpenCL type of an index element kind (int32 or int64), NULL for
 * another kind. */
static const char *index_ctype(unsigned k)
{
	return k == EK_I32 || k == EK_INDEX32 ? "int" : k == EK_I64 || k == EK_INDEX64 ? "long" : NULL;
}

/* ---- run-time index checks ---- */

/* A new check record of `in` in R3 (ocl.h's struct ocl_check). */
static struct ocl_check *check_new(struct ocl_gen *g, const struct ir_instr *in)
{
	g->check = xrealloc(g->check, (g->ncheck + 1) * sizeof *g->check);
	struct ocl_check *c = &g->check[g->ncheck++];
	memset(c, 0, sizeof *c);
	c->in = in;
	c->offset = g->r3_size;
	g->r3_size += 64;
	return c;
}

/* #define FLAG(q): records position q of Indices as out of range. */
static void define_flag(struct ocl_gen *g, const struct ocl_check *c)
{
	ocl_src_define(g, "FLAG(q)", "atomic_max((volatile __global uint *)(R3 + %" PRIu64 "UL), 0xffffffffu - (uint)(q))",
		       c->offset);
}

/* Appends the reading of index value v at position q of PI, made
 * non-negative for a dimension of len; one out of range is flagged and the
 * work-item does `bad` (return or continue). */
static void fix_index(struct ostream *o, const char *v, const char *q, uint64_t len, const char *bad)
{
	os_printf(o, "\tlong %s = (long)PI[%s];\n\tif (%s < 0)\n\t\t%s += %" PRIu64 "L;\n", v, q, v, v, len);
	os_printf(o, "\tif (%s < 0 || %s >= %" PRIu64 "L) {\n\t\tFLAG(%s);\n\t\t%s\n\t}\n", v, v, len, q, bad);
}

/* The kernel after in's: the value of the index at the recorded position
 * beside the record (operand ix is Indices). */
static void check_report(struct ocl_gen *g, const struct ir_instr *in, const struct ocl_check *c, unsigned ix)
{
	struct ocl_launch *l = ocl_src_begin(g, in);
	ocl_src_ptr(g, "PI", index_ctype(in->ops[ix].val->type->elem), in, ix);
	os_printf(&g->src, "__kernel void %s(ARGS)\n{\n\tconst __global uint *k = (const __global uint *)(R3 + %" PRIu64
		       "UL);\n", l->name, c->offset);
	os_printf(&g->src, "\tif (get_global_id(0) == 0 && k[0] != 0)\n\t\t*(__global long *)(R3 + %" PRIu64
		       "UL) = (long)PI[0xffffffffu - k[0]];\n}\n", c->offset + 8);
	ocl_src_section(g, "none");
	ocl_launch_1d(l, 1, 1);
}

int ocl_checks_read(const struct ocl_gen *g, cl_command_queue q, cl_mem r3, struct diag *d)
{
	if (!g->ncheck)
		return 0;
	uint8_t *rec = xcalloc(g->ncheck, 16);
	cl_int err = CL_SUCCESS;
	for (size_t i = 0; i < g->ncheck && err == CL_SUCCESS; i++)
		err = clEnqueueReadBuffer(q, r3, CL_FALSE, (size_t)g->check[i].offset, 16, rec + 16 * i, 0, NULL, NULL);
	if (err == CL_SUCCESS)
		err = clFinish(q);
	int rc = 0;
	if (err != CL_SUCCESS) {
		diag_error(d, LOC_NONE, "OpenCL: cannot read the index checks of @%s: %s", g->f->name, ocl_err_name(err));
		rc = -1;
	}
	for (size_t i = 0; i < g->ncheck && !rc; i++) {
		const struct ocl_check *c = &g->check[i];
		uint32_t key;
		int64_t raw;
		memcpy(&key, rec + 16 * i, 4);
		memcpy(&raw, rec + 16 * i + 8, 8);
		if (!key)
			continue;
		const char *kind = instr_kind_name(c->in->kind);
		if (c->nd) {
			unsigned dim = c->b + (unsigned)((0xffffffffu - key) % c->m);
			diag_error(d, c->in->v.loc, "%s: %s index %lld is out of range for dimension %u of size %llu", kind,
				   kind, (long long)raw, dim, (unsigned long long)c->dims->dims[dim]);
		} else {
			diag_error(d, c->in->v.loc, "%s: %s index %lld is out of range [-%llu, %llu)", kind, kind,
				   (long long)raw, (unsigned long long)c->len, (unsigned long long)c->len);
		}
		rc = -1;
	}
	/* a failed run leaves records set: cleared for the next run */
	static const uint8_t zero[16];
	for (size_t i = 0; i < g->ncheck && rc && err == CL_SUCCESS; i++)
		err = clEnqueueWriteBuffer(q, r3, CL_TRUE, (size_t)g->check[i].offset, 16, zero, 0, NULL, NULL);
	free(rec);
	return rc;
}

/* ---- gathers and scatters ---- */

bool ocl_sup_index(const struct ir_instr *in)
{
	const struct type *dt = in->ops[0].val->type, *it = in->ops[2].val->type;
	if (!ocl_utype(dt) || !ocl_utype(in->ops[1].val->type) || !index_ctype(it->elem) ||
	    type_numel(it) >= 0xffffffffu || (in->kind == IK_gathernd || in->kind == IK_scatternd ? it->rank == 0 : 0))
		return false;
	if (in->kind == IK_scatterelements || in->kind == IK_scatternd)
		return ocl_numeric_elem(dt->elem) && ocl_numeric_elem(it->elem) && in->ops[3].val->type->elem == dt->elem;
	return true;
}

/* An index kernel begun: PD (Dest), `other` (operand op: Data or
 * Updates), both of OpenCL type T, PI (Indices) and FLAG defined. */
static struct ocl_launch *index_begin(struct ocl_gen *g, const struct ir_instr *in, const struct ocl_check *c,
				      const char *T, const char *other, unsigned op)
{
	struct ocl_launch *l = ocl_src_begin(g, in);
	ocl_src_ptr(g, "PD", T, in, 0);
	ocl_src_ptr(g, other, T, in, op);
	ocl_src_ptr(g, "PI", index_ctype(in->ops[2].val->type->elem), in, 2);
	define_flag(g, c);
	return l;
}

/* A gather's kernel begun: Dest and Data moved as unsigned integers. */
static struct ocl_launch *gather_begin(struct ocl_gen *g, const struct ir_instr *in, const struct ocl_check *c)
{
	return index_begin(g, in, c, ocl_utype(in->ops[0].val->type), "PS", 1);
}

/* gather(Dest, Data, Indices) {axis}: Dest[o, q, in] = Data[o, Indices[q],
 * in]; with no element to write, a kernel over Indices that checks them. */
static void gen_gather(struct ocl_gen *g, const struct ir_instr *in, struct ocl_check *c)
{
	const struct type *dt = in->ops[0].val->type, *st = in->ops[1].val->type, *it = in->ops[2].val->type;
	unsigned axis = (unsigned)ir_int(in, AN_axis);
	uint64_t inner = dims_prod(st, axis + 1, st->rank), ni = type_numel(it), n = type_numel(dt);
	c->len = st->dims[axis];
	struct ocl_launch *l = gather_begin(g, in, c);
	struct ostream *o = &g->src;
	if (n == 0) {
		khead(g, l, ni);
		fix_index(o, "v", "i", c->len, "return;");
		kend(g, l, ni);
		return;
	}
	khead(g, l, n);
	os_printf(o, "\tconst size_t t = i / %" PRIu64 "UL, q = t %% %" PRIu64 "UL, o = t / %" PRIu64 "UL;\n", inner, ni,
		  ni);
	fix_index(o, "v", "q", c->len, "return;");
	os_printf(o, "\tPD[i] = PS[(o * %" PRIu64 "UL + (size_t)v) * %" PRIu64 "UL + i %% %" PRIu64 "UL];\n", c->len,
		  inner, inner);
	kend(g, l, n);
}

/* gatherelements(Dest, Data, Indices) {axis}: Dest[c] = Data[c with
 * coordinate axis Indices[c]]. */
static void gen_gatherelements(struct ocl_gen *g, const struct ir_instr *in, struct ocl_check *c)
{
	const struct type *st = in->ops[1].val->type, *it = in->ops[2].val->type;
	unsigned axis = (unsigned)ir_int(in, AN_axis);
	uint64_t sst[GLOW_MAX_RANK], n = type_numel(it);
	row_strides(st, sst);
	c->len = st->dims[axis];
	struct ocl_launch *l = gather_begin(g, in, c);
	struct ostream *o = &g->src;
	khead(g, l, n);
	coords(o, "i", "c", it, 0, it->rank);
	fix_index(o, "v", "i", c->len, "return;");
	os_puts(o, "\tPD[i] = PS[0");
	for (unsigned d = 0; d < it->rank; d++)
		if (d == axis)
			os_printf(o, " + (size_t)v * %" PRIu64 "UL", sst[d]);
		else
			os_printf(o, " + c%u * %" PRIu64 "UL", d, sst[d]);
	os_puts(o, "];\n");
	kend(g, l, n);
}

/* Appends the offset `off` into Data (strides sst) of index row t of m
 * values addressing dimensions b.. of dt; a bad index does `bad`. */
static void nd_offset(struct ostream *o, const struct type *dt, const uint64_t *sst, unsigned b, unsigned m,
		      const char *bad)
{
	for (unsigned j = 0; j < m; j++) {
		char v[16], q[48];
		snprintf(v, sizeof v, "v%u", j);
		snprintf(q, sizeof q, "t * %uUL + %uUL", m, j);
		os_puts(o, "\t{\n");
		fix_index(o, v, q, dt->dims[b + j], bad);
		os_printf(o, "\toff += (size_t)%s * %" PRIu64 "UL;\n\t}\n", v, sst[b + j]);
	}
}

/* gathernd(Dest, Data, Indices) {batch_dims b}: index row t (m values) of
 * batch t / per_batch picks the chunk at Data[batch, v0, .., vm-1]. */
static void gen_gathernd(struct ocl_gen *g, const struct ir_instr *in, struct ocl_check *c)
{
	const struct type *st = in->ops[1].val->type, *it = in->ops[2].val->type;
	unsigned b = (unsigned)ir_int(in, AN_batch_dims), m = (unsigned)it->dims[it->rank - 1];
	uint64_t sst[GLOW_MAX_RANK], chunk = dims_prod(st, b + m, st->rank), batch = dims_prod(st, 0, b);
	uint64_t tuples = m ? type_numel(it) / m : 0, per_batch = batch ? tuples / batch : 0;
	uint64_t n = tuples * (chunk ? chunk : 1);
	row_strides(st, sst);
	c->nd = true;
	c->m = m;
	c->b = b;
	c->dims = st;
	struct ocl_launch *l = gather_begin(g, in, c);
	struct ostream *o = &g->src;
	khead(g, l, n);
	uint64_t ch = chunk ? chunk : 1;
	os_printf(o, "\tconst size_t t = i / %" PRIu64 "UL;\n\tsize_t off = 0;\n", ch);
	if (b && per_batch)
		os_printf(o, "\toff = t / %" PRIu64 "UL * %" PRIu64 "UL;\n", per_batch, sst[b - 1]);
	nd_offset(o, st, sst, b, m, "return;");
	if (chunk)
		os_printf(o, "\tPD[i] = PS[off + i %% %" PRIu64 "UL];\n", chunk);
	kend(g, l, n);
}

/* "#define COMBINE(d, u)": d = u, or d combined with u by the reduction
 * (1 add, 2 mul) on t's element kind, as the interpreter's combine (the
 * pointers: float for a float reduction, else unsigned integers). */
static void define_combine(struct ocl_gen *g, const struct type *t, int64_t red)
{
	const char *op = red == 1 ? "+" : "*";
	if (red == 0)
		ocl_src_define(g, "COMBINE(d, u)", "((d) = (u))");
	else if (t->elem == EK_BOOL)
		ocl_src_define(g, "COMBINE(d, u)", "((d) = (uchar)(((d) %s (u)) != 0))", op);
	else /* float; integers wrap: computed unsigned */
		ocl_src_define(g, "COMBINE(d, u)", "((d) = (d) %s (u))", op);
}

/* A scatter's start: Data copied into Dest (unless they are one buffer),
 * its kernel begun with PD, PU (Updates; float where a reduction adds or
 * multiplies float, else moved as unsigned integers), PI, FLAG and
 * COMBINE defined. */
static struct ocl_launch *scatter_begin(struct ocl_gen *g, const struct ir_instr *in, const struct ocl_check *c)
{
	struct ocl_place pd = ocl_operand_place(g, in, 0), ps = ocl_operand_place(g, in, 1);
	if (pd.region != ps.region || pd.offset != ps.offset)
		ocl_gen_move(g, in, OCL_MOVE_COPY, false);
	const struct type *dt = in->ops[0].val->type;
	int64_t red = ir_int(in, AN_reduction);
	struct ocl_launch *l =
		index_begin(g, in, c, red && dt->elem == EK_FLOAT ? "float" : ocl_utype(dt), "PU", 3);
	define_combine(g, dt, red);
	return l;
}

/* scatterelements(Dest, Data, Indices, Updates) {axis, reduction}: a
 * work-item per line of Indices along axis (the lines of Dest it writes
 * are its own), the line's updates in order. */
static void gen_scatterelements(struct ocl_gen *g, const struct ir_instr *in, struct ocl_check *c)
{
	const struct type *dt = in->ops[0].val->type, *it = in->ops[2].val->type;
	unsigned axis = (unsigned)ir_int(in, AN_axis), r = it->rank;
	uint64_t dst[GLOW_MAX_RANK];
	row_strides(dt, dst);
	uint64_t iinner = dims_prod(it, axis + 1, r), ilen = it->dims[axis], n = dims_prod(it, 0, axis) * iinner;
	c->len = dt->dims[axis];
	struct ocl_launch *l = scatter_begin(g, in, c);
	struct ostream *o = &g->src;
	khead(g, l, n);
	os_printf(o, "\tconst size_t io = i / %" PRIu64 "UL, ii = i %% %" PRIu64 "UL;\n", iinner, iinner);
	coords(o, "io", "c", it, 0, axis);
	coords(o, "ii", "c", it, axis + 1, r);
	os_puts(o, "\tconst size_t base = 0");
	for (unsigned d = 0; d < r; d++)
		if (d != axis)
			os_printf(o, " + c%u * %" PRIu64 "UL", d, dst[d]);
	os_printf(o, ";\n\tfor (size_t a = 0; a < %" PRIu64 "UL; a++) {\n", ilen);
	os_printf(o, "\tconst size_t q = io * %" PRIu64 "UL + a * %" PRIu64 "UL + ii;\n", ilen * iinner, iinner);
	fix_index(o, "v", "q", c->len, "continue;");
	os_printf(o, "\tCOMBINE(PD[base + (size_t)v * %" PRIu64 "UL], PU[q]);\n\t}\n", dst[axis]);
	kend(g, l, n);
}

/* scatternd(Dest, Data, Indices, Updates) {reduction}: a work-item per
 * element of a chunk, the index rows in order. */
static void gen_scatternd(struct ocl_gen *g, const struct ir_instr *in, struct ocl_check *c)
{
	const struct type *dt = in->ops[0].val->type, *it = in->ops[2].val->type;
	unsigned m = (unsigned)it->dims[it->rank - 1];
	uint64_t dst[GLOW_MAX_RANK], chunk = dims_prod(dt, m, dt->rank), rows = m ? type_numel(it) / m : 0;
	row_strides(dt, dst);
	c->nd = true;
	c->m = m;
	c->dims = dt;
	struct ocl_launch *l = scatter_begin(g, in, c);
	struct ostream *o = &g->src;
	uint64_t n = chunk ? chunk : 1;
	khead(g, l, n);
	os_printf(o, "\tfor (size_t t = 0; t < %" PRIu64 "UL; t++) {\n\tsize_t off = 0;\n", rows);
	nd_offset(o, dt, dst, 0, m, "continue;");
	if (chunk)
		os_printf(o, "\tCOMBINE(PD[off + i], PU[t * %" PRIu64 "UL + i]);\n", chunk);
	os_puts(o, "\t}\n");
	kend(g, l, n);
}

void ocl_gen_index(struct ocl_gen *g, const struct ir_instr *in, unsigned arg, bool relu)
{
	static void (*const gen[OCL_IX_COUNT])(struct ocl_gen *, const struct ir_instr *, struct ocl_check *) = {
		[OCL_IX_GATHER] = gen_gather,
		[OCL_IX_GATHERELEMENTS] = gen_gatherelements,
		[OCL_IX_GATHERND] = gen_gathernd,
		[OCL_IX_SCATTERELEMENTS] = gen_scatterelements,
		[OCL_IX_SCATTERND] = gen_scatternd,
	};
	glow_assert(arg < OCL_IX_COUNT && !relu); /* OclKernels.def's index rows */
	struct ocl_check *c = check_new(g, in);
	size_t ci = g->ncheck - 1;
	gen[arg](g, in, c);
	check_report(g, in, &g->check[ci], 2);
}

/* ---- kernels that map each destination element to a source element ---- */

bool ocl_sup_map(const struct ir_instr *in)
{
	const struct type *dt = in->ops[0].val->type, *st = in->ops[1].val->type;
	if (!ocl_utype(dt) || st->elem != dt->elem)
		return false;
	if (in->kind == IK_spacetodepth || in->kind == IK_depthtospace)
		return dt->rank == 4 && st->rank == 4;
	return in->kind != IK_resizebilinear || dt->elem == EK_FLOAT;
}

/* pad {mode constant|reflect|edge, pads [b_0 .. b_r-1, e_0 .. e_r-1]}:
 * per padded dimension the source coordinate, or the value. */
static void body_pad(struct ocl_gen *g, const struct ir_instr *in)
{
	const struct type *st = in->ops[1].val->type;
	unsigned np;
	const int64_t *p = ir_ints(in, AN_pads, &np);
	int64_t mode = ir_int(in, AN_mode);
	uint64_t sst[GLOW_MAX_RANK];
	row_strides(st, sst);
	struct ostream *o = &g->src;
	os_puts(o, "\tsize_t s = 0;\n");
	for (unsigned d = 0; d < st->rank; d++) {
		int64_t len = (int64_t)st->dims[d], period = 2 * (len - 1);
		os_printf(o, "\t{\n\tlong x = (long)c%u - %" PRId64 "L;\n", d, p[d]);
		if (p[d] > 0 || p[st->rank + d] > 0) {
			os_printf(o, "\tif (x < 0 || x >= %" PRId64 "L) {\n", len);
			if (mode == 0)
				os_puts(o, "\t\tPD[i] = VALUE;\n\t\treturn;\n");
			else if (mode == 1 && len == 1)
				os_puts(o, "\t\tx = 0;\n");
			else if (mode == 1) /* reflect: -1 -> 1, len -> len - 2 */
				os_printf(o, "\t\tx = ((x %% %" PRId64 "L) + %" PRId64 "L) %% %" PRId64 "L;\n\t\tif (x >= %" PRId64
					  "L)\n\t\t\tx = %" PRId64 "L - x;\n", period, period, period, len, period);
			else
				os_printf(o, "\t\tx = x < 0 ? 0 : %" PRId64 "L;\n", len - 1);
			os_puts(o, "\t}\n");
		}
		os_printf(o, "\ts += (size_t)x * %" PRIu64 "UL;\n\t}\n", sst[d]);
	}
	os_puts(o, "\tPD[i] = PS[s];\n");
}

/* broadcast {axis}: source dimension k is destination dimension axis + k,
 * repeated where it is 1; flip {axis}: the source coordinate along axis
 * reversed. Either is a sum of strided coordinates. */
static void body_strided(struct ocl_gen *g, const struct ir_instr *in)
{
	const struct type *st = in->ops[1].val->type;
	unsigned axis = (unsigned)ir_int(in, AN_axis);
	bool flip = in->kind == IK_flip;
	uint64_t sst[GLOW_MAX_RANK];
	row_strides(st, sst);
	os_puts(&g->src, "\tPD[i] = PS[0");
	for (unsigned k = 0; k < st->rank; k++) {
		if (flip && k == axis)
			os_printf(&g->src, " + (%" PRIu64 "UL - c%u) * %" PRIu64 "UL", st->dims[k] - 1, k, sst[k]);
		else if (flip || st->dims[k] != 1)
			os_printf(&g->src, " + c%u * %" PRIu64 "UL", flip ? k : axis + k, sst[k]);
	}
	os_puts(&g->src, "];\n");
}

/* spacetodepth {block_size b}: Dest[n][y][x][(bh*b + bw)*C + c] =
 * Src[n][y*b + bh][x*b + bw][c]. */
static void body_spacetodepth(struct ocl_gen *g, const struct ir_instr *in)
{
	const struct type *st = in->ops[1].val->type;
	uint64_t b = (uint64_t)ir_int(in, AN_block_size), H = st->dims[1], W = st->dims[2], C = st->dims[3];
	os_printf(&g->src, "\tconst size_t bh = c3 / %" PRIu64 "UL / %" PRIu64 "UL, bw = c3 / %" PRIu64 "UL %% %" PRIu64
		       "UL;\n", C, b, C, b);
	os_printf(&g->src, "\tPD[i] = PS[((c0 * %" PRIu64 "UL + c1 * %" PRIu64 "UL + bh) * %" PRIu64 "UL + c2 * %" PRIu64
		       "UL + bw) * %" PRIu64 "UL + c3 %% %" PRIu64 "UL];\n", H, b, W, b, C, C);
}

/* depthtospace {block_size b, mode dcr|crd}: Dest[n][y][x][c] =
 * Src[n][y/b][x/b][ch], ch = (bh*b + bw)*C + c (dcr) or c*b*b + bh*b + bw
 * (crd), bh = y % b, bw = x % b. */
static void body_depthtospace(struct ocl_gen *g, const struct ir_instr *in)
{
	const struct type *dt = in->ops[0].val->type, *st = in->ops[1].val->type;
	uint64_t b = (uint64_t)ir_int(in, AN_block_size), C = dt->dims[3];
	struct ostream *o = &g->src;
	os_printf(o, "\tconst size_t bh = c1 %% %" PRIu64 "UL, bw = c2 %% %" PRIu64 "UL;\n", b, b);
	if (ir_int(in, AN_mode) == 1)
		os_printf(o, "\tconst size_t ch = c3 * %" PRIu64 "UL + bh * %" PRIu64 "UL + bw;\n", b * b, b);
	else
		os_printf(o, "\tconst size_t ch = (bh * %" PRIu64 "UL + bw) * %" PRIu64 "UL + c3;\n", b, C);
	os_printf(o, "\tPD[i] = PS[((c0 * %" PRIu64 "UL + c1 / %" PRIu64 "UL) * %" PRIu64 "UL + c2 / %" PRIu64 "UL) * %" PRIu64
		  "UL + ch];\n", st->dims[1], b, st->dims[2], b, st->dims[3]);
}

/* A constant table of the kernel: "__constant T <kernel>_<what><d>[]". */
static void table_start(struct ocl_gen *g, const struct ocl_launch *l, const char *T, char what, unsigned d)
{
	os_printf(&g->src, "__constant %s %s_%c%u[] = {", T, l->name, what, d);
}

/* The resize tables of dimension d, as the interpreter maps output
 * coordinate o: x = o / scale, lo = floor(x) (at most len - 1), hi = lo + 1
 * (at most len - 1), fr = x - lo (at least 0); lo alone unless interp.
 * Returns false (no table) where lo is o everywhere and not interp. */
static bool resize_tables(struct ocl_gen *g, const struct ocl_launch *l, const struct ir_instr *in, unsigned d,
			  bool interp)
{
	const struct type *dt = in->ops[0].val->type, *st = in->ops[1].val->type;
	unsigned ns;
	const double *sc = ir_floats(in, AN_scale, &ns);
	uint64_t out = dt->dims[d], len = st->dims[d];
	bool identity = !interp && out <= len;
	for (uint64_t o = 0; o < out && identity; o++)
		identity = (uint64_t)floor((double)o / sc[d]) == o;
	if (identity)
		return false;
	for (unsigned t = 0; t < (interp ? 3u : 1u); t++) {
		table_start(g, l, t == 2 ? "float" : "uint", "lhf"[t], d);
		for (uint64_t o = 0; o < out; o++) {
			double x = (double)o / sc[d];
			uint64_t f = (uint64_t)floor(x);
			if (f >= len)
				f = len - 1;
			double fr = x - (double)f;
			if (t == 0)
				os_printf(&g->src, "%" PRIu64 "u,", f);
			else if (t == 1)
				os_printf(&g->src, "%" PRIu64 "u,", f + 1 < len ? f + 1 : f);
			else
				os_printf(&g->src, "%af,", (double)(float)(fr < 0 ? 0 : fr));
		}
		os_puts(&g->src, "};\n");
	}
	return true;
}

/* resizenearest and resizebilinear {scale}: the tables, then the body
 * (after the kernel's header: split in two by the caller). */
struct resize {
	bool table[GLOW_MAX_RANK], interp[GLOW_MAX_RANK];
};

static void resize_prepare(struct ocl_gen *g, const struct ocl_launch *l, const struct ir_instr *in,
			   struct resize *rs)
{
	const struct type *dt = in->ops[0].val->type, *st = in->ops[1].val->type;
	for (unsigned d = 0; d < dt->rank; d++) {
		rs->interp[d] = in->kind == IK_resizebilinear && dt->dims[d] != st->dims[d];
		rs->table[d] = resize_tables(g, l, in, d, rs->interp[d]);
	}
}

/* The source offset of corner `corner` (a bit per interpolated dimension:
 * hi where set) into o. */
static void resize_offset(struct ostream *o, const struct ocl_launch *l, const struct type *st,
			  const struct resize *rs, unsigned corner)
{
	uint64_t sst[GLOW_MAX_RANK];
	row_strides(st, sst);
	os_puts(o, "0");
	for (unsigned d = 0, c = 0; d < st->rank; d++) {
		char what = 'l';
		if (rs->interp[d])
			what = corner >> c++ & 1 ? 'h' : 'l';
		if (rs->table[d])
			os_printf(o, " + (size_t)%s_%c%u[c%u] * %" PRIu64 "UL", l->name, what, d, d, sst[d]);
		else
			os_printf(o, " + c%u * %" PRIu64 "UL", d, sst[d]);
	}
}

static void body_resize(struct ocl_gen *g, const struct ocl_launch *l, const struct ir_instr *in,
			const struct resize *rs)
{
	const struct type *st = in->ops[1].val->type;
	struct ostream *o = &g->src;
	unsigned ni = 0, dims[GLOW_MAX_RANK];
	for (unsigned d = 0; d < st->rank; d++)
		if (rs->interp[d])
			dims[ni++] = d;
	if (ni == 0) {
		os_puts(o, "\tPD[i] = PS[");
		resize_offset(o, l, st, rs, 0);
		os_puts(o, "];\n");
		return;
	}
	os_puts(o, "\tfloat acc = 0.0f;\n");
	for (unsigned corner = 0; corner < 1u << ni; corner++) {
		os_puts(o, "\t{\n\tconst float w = 1.0f");
		for (unsigned c = 0; c < ni; c++)
			os_printf(o, corner >> c & 1 ? " * %s_f%u[c%u]" : " * (1.0f - %s_f%u[c%u])", l->name, dims[c],
				  dims[c]);
		os_puts(o, ";\n\tif (w != 0.0f)\n\t\tacc += w * PS[");
		resize_offset(o, l, st, rs, corner);
		os_puts(o, "];\n\t}\n");
	}
	os_puts(o, "\tPD[i] = acc;\n");
}

void ocl_gen_map(struct ocl_gen *g, const struct ir_instr *in, unsigned arg, bool relu)
{
	glow_assert(arg < OCL_MAP_COUNT && !relu); /* OclKernels.def's map rows */
	const struct type *dt = in->ops[0].val->type;
	uint64_t n = type_numel(dt);
	const char *T = arg == OCL_MAP_RESIZEBILINEAR ? "float" : ocl_utype(dt);
	struct ocl_launch *l = ocl_src_begin(g, in);
	ocl_src_ptr(g, "PD", T, in, 0);
	ocl_src_ptr(g, "PS", T, in, 1);
	if (arg == OCL_MAP_PAD && ir_int(in, AN_mode) == 0) {
		/* the value stored as the interpreter stores it (ocl_gen_splat) */
		uint64_t bits = 0;
		st_f(dt, &bits, 0, ir_float(in, AN_value));
		ocl_src_define(g, "VALUE", "((%s)%" PRIu64 "UL)", T, bits);
	}
	if (n == 0) { /* nothing to write (and no table to fill) */
		khead(g, l, n);
		kend(g, l, n);
		return;
	}
	struct resize rs;
	if (arg == OCL_MAP_RESIZENEAREST || arg == OCL_MAP_RESIZEBILINEAR)
		resize_prepare(g, l, in, &rs);
	khead(g, l, n);
	coords(&g->src, "i", "c", dt, 0, dt->rank);
	switch (arg) {
	case OCL_MAP_PAD: body_pad(g, in); break;
	case OCL_MAP_BROADCAST: body_strided(g, in); break;
	case OCL_MAP_SPACETODEPTH: body_spacetodepth(g, in); break;
	case OCL_MAP_DEPTHTOSPACE: body_depthtospace(g, in); break;
	case OCL_MAP_FLIP: body_strided(g, in); break;
	default: body_resize(g, l, in, &rs); break;
	}
	kend(g, l, n);
}
