/* ocl_gen_flow.c - the OpenCL backend's part of structured control flow
 * (docs/InstrIR.md, "Blocks"; docs/OpenCL.md, "Blocks"): the kernels of
 * insertslice and extractslice, which move one slice of the leading axis
 * at an index the device reads at run time, and their run-time index
 * check. The block brackets (if, else, loop, end) get no kernel: the host
 * drives them (ocl_backend.c), reading a condition or trip count from
 * device memory where it must and writing a loop's iteration number to
 * the device.
 *
 * A slice kernel has a work-item per element of the slice (moved bit for
 * bit as an unsigned integer of the element's size, or byte by byte where
 * OpenCL has no such type). Every work-item reads the index; when it is
 * outside the leading axis none writes, and work-item 0 notes the failure
 * in the instruction's 16-byte record in R3 (zero when the program is
 * loaded), unless the record is set already: at byte 0 the failure's
 * number in the run (one more than the counter the slice kernels share,
 * the first record's word at byte 4), at byte 8 the index. The kernels of
 * one queue run one after another, so the numbers order the failures as
 * they happened; the host reports the first (ocl_flow_checks_read), the
 * one the interpreter stops at, in its words.
 */
#include "backends/opencl/ocl.h"
#include "support/util.h"

#include <inttypes.h>
#include <string.h>

bool ocl_sup_slice(const struct ir_instr *in)
{
	/* the verifier checks the shapes (ir_rule_slice_at); any element kind
	 * moves, byte by byte where it has no unsigned type of its size */
	return in->ops[2].val->type->elem == EK_I64;
}

void ocl_gen_slice(struct ocl_gen *g, const struct ir_instr *in, unsigned arg, bool relu)
{
	(void)arg;
	(void)relu;
	bool insert = in->kind == IK_insertslice;
	unsigned wi = insert ? 0 : 1, pi = insert ? 1 : 0;
	const struct type *whole = in->ops[wi].val->type, *part = in->ops[pi].val->type;
	const char *T = ocl_utype(part);
	uint64_t n = T ? type_numel(part) : type_bytes(part);
	if (!T)
		T = "uchar";
	/* the record: the first slice kernel's also holds the shared counter */
	if (g->nscheck == g->capscheck) {
		g->capscheck = g->capscheck ? 2 * g->capscheck : 8;
		g->scheck = xrealloc(g->scheck, g->capscheck * sizeof *g->scheck);
	}
	struct ocl_slice_check *c = &g->scheck[g->nscheck++];
	c->in = in;
	c->offset = g->r3_size;
	c->len = whole->dims[0];
	g->r3_size += 64;
	struct ocl_launch *l = ocl_src_begin(g, in);
	ocl_src_ptr(g, "PW", T, in, wi);
	ocl_src_ptr(g, "PP", T, in, pi);
	ocl_src_ptr(g, "PX", "long", in, 2);
	ocl_src_define(g, "PREC", "((__global uint *)(R3 + %" PRIu64 "UL))", c->offset);
	ocl_src_define(g, "PCOUNT", "((__global uint *)(R3 + %" PRIu64 "UL))", g->scheck[0].offset + 4);
	os_printf(&g->src,
		  "__kernel void %s(ARGS)\n{\n\tconst size_t i = get_global_id(0);\n\tconst long x = *PX;\n"
		  "\tif (x < 0 || x >= %" PRIu64 "L) {\n"
		  "\t\tif (i == 0 && PREC[0] == 0) {\n\t\t\tconst uint k = PCOUNT[0] + 1;\n\t\t\tPCOUNT[0] = k;\n"
		  "\t\t\tPREC[0] = k;\n\t\t\t*(__global long *)(PREC + 2) = x;\n\t\t}\n\t\treturn;\n\t}\n"
		  "\tif (i >= %" PRIu64 "UL)\n\t\treturn;\n",
		  l->name, whole->dims[0], n);
	if (insert)
		os_printf(&g->src, "\tPW[(size_t)x * %" PRIu64 "UL + i] = PP[i];\n}\n", n);
	else
		os_printf(&g->src, "\tPP[i] = PW[(size_t)x * %" PRIu64 "UL + i];\n}\n", n);
	ocl_src_section(g, "none");
	ocl_launch_1d(l, g->gpu ? 256 : 32, n);
}

int ocl_flow_checks_read(const struct ocl_gen *g, cl_command_queue q, cl_mem r3, struct diag *d)
{
	if (!g->nscheck)
		return 0;
	uint8_t *rec = xcalloc(g->nscheck, 16);
	cl_int err = CL_SUCCESS;
	for (size_t i = 0; i < g->nscheck && err == CL_SUCCESS; i++)
		err = clEnqueueReadBuffer(q, r3, CL_FALSE, (size_t)g->scheck[i].offset, 16, rec + 16 * i, 0, NULL, NULL);
	if (err == CL_SUCCESS)
		err = clFinish(q);
	if (err != CL_SUCCESS) {
		diag_error(d, LOC_NONE, "OpenCL: cannot read the slice index checks of @%s: %s", g->f->name,
			   ocl_err_name(err));
		free(rec);
		return -1;
	}
	/* the failure numbered first: the one the interpreter stops at */
	size_t first = SIZE_MAX;
	uint32_t best = 0;
	for (size_t i = 0; i < g->nscheck; i++) {
		uint32_t k;
		memcpy(&k, rec + 16 * i, 4);
		if (k && (first == SIZE_MAX || k < best)) {
			first = i;
			best = k;
		}
	}
	if (first == SIZE_MAX) {
		free(rec);
		return 0;
	}
	const struct ocl_slice_check *c = &g->scheck[first];
	int64_t x;
	memcpy(&x, rec + 16 * first + 8, 8);
	diag_error(d, c->in->v.loc, "%s: index %" PRId64 " is outside the leading axis (0 to %" PRIu64 ")",
		   instr_kind_name(c->in->kind), x, c->len - 1);
	/* a failed run leaves records set: cleared (the counter with them)
	 * for the next run */
	static const uint8_t zero[16];
	for (size_t i = 0; i < g->nscheck && err == CL_SUCCESS; i++)
		err = clEnqueueWriteBuffer(q, r3, CL_TRUE, (size_t)g->scheck[i].offset, 16, zero, 0, NULL, NULL);
	free(rec);
	return -1;
}
