/* ocl_prog.c - the whole OpenCL program of one function (docs/OpenCL.md):
 * the preamble, then per computing instruction the generator its row of
 * OclKernels.def names (ocl_row_of), with an in-place relu that follows a
 * kind flagged OCL_F_FUSE_RELU folded into that kind's store.
 *
 * The dispatch lives here, apart from the generators, so that the table
 * (ocl_table.c, which names the generators) and the generators (which do
 * not read the table) form no circle.
 */
#include "backends/opencl/ocl.h"
#include "support/util.h"

/* The next instruction after `in` that computes (not alloc, dealloc,
 * tensorview), NULL at the end. */
static const struct ir_instr *next_computing(const struct ir_instr *in)
{
	for (in = in->next; in; in = in->next)
		if (in->kind != IK_alloc && in->kind != IK_dealloc && in->kind != IK_tensorview)
			return in;
	return NULL;
}

/* Whether the instruction after `in` is an in-place relu of its result. */
static bool relu_follows(const struct ir_instr *in)
{
	const struct ir_instr *n = next_computing(in);
	return n && n->kind == IK_relu && n->ops[0].val == in->ops[0].val && n->ops[1].val == in->ops[0].val;
}

int ocl_prog_generate(struct ocl_gen *g, struct diag *d)
{
	(void)d;
	/* R3 starts with zeros for the padding of the CPU convolution: as
	 * many floats as the largest convolution has input channels per group */
	uint64_t zeros = 0;
	ir_for_each_instr(g->f, in) {
		const struct ocl_row *r = ocl_row_of(in->kind);
		const struct type *ft = r && (r->flags & OCL_F_ZEROS) ? in->ops[2].val->type : NULL;
		if (ft && ft->rank == 4 && ft->dims[3] > zeros)
			zeros = ft->dims[3];
	}
	g->r3_size = ocl_round_up((size_t)(zeros * 4), 64);
	ocl_src_section(g, "preamble");
	ir_for_each_instr(g->f, in) {
		if (in == g->fused)
			continue;
		const struct ocl_row *r = ocl_row_of(in->kind);
		if (!r)
			unreachable("OpenCL: an instruction compile did not check");
		bool relu = (r->flags & OCL_F_RELU) != 0;
		if (r->flags & OCL_F_FUSE_RELU) {
			relu = relu_follows(in);
			g->fused = relu ? next_computing(in) : NULL;
		}
		r->gen(g, in, r->arg, relu);
	}
	return 0;
}
