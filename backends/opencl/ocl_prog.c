/* ocl_prog.c - the whole OpenCL program of one function (docs/OpenCL.md):
 * the preamble, then per computing instruction the generator its row of
 * OclKernels.def names (ocl_row_of), with an add of another buffer that
 * follows a kind flagged OCL_F_FUSE_ADD (a residual block's end), and then
 * an in-place relu that follows a kind flagged OCL_F_FUSE_RELU (or that
 * add), folded into that kind's store: ResNet-50 then has no kernel for
 * its 16 residual adds and their relus.
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

/* Whether value v is (a view of) buffer root. */
static bool in_root(struct ir_value *v, const struct ir_value *root) { return ir_value_root(v, NULL) == root; }

/* The add after `in` (a convolution) that adds another buffer to in's
 * whole result, when in's kernel can do it in its store: the add's result
 * is not in's input (which the kernel still reads), the residual is the
 * result or apart from it, and the add writes in place over in's result
 * or nothing reads that result after the add (its next mention is its
 * dealloc), so it need not be stored. NULL otherwise; *res_op gets the
 * residual's operand. */
static const struct ir_instr *add_follows(const struct ir_instr *in, unsigned *res_op)
{
	const struct ir_instr *a = next_computing(in);
	struct ir_value *c = in->ops[0].val;
	if (!a || a->kind != IK_add || ir_value_root(c, NULL) != c || ir_as_weight(c) || c->type->elem != EK_FLOAT)
		return NULL; /* a quantized add is not the float store's */
	unsigned r = a->ops[1].val == c ? 2 : a->ops[2].val == c ? 1 : 0;
	struct ir_value *d = a->ops[0].val, *res = r ? a->ops[r].val : NULL;
	if (!r || res == c || res->type != c->type || d->type != c->type ||
	    in_root(d, ir_value_root(in->ops[1].val, NULL)) || (res != d && in_root(res, ir_value_root(d, NULL))))
		return NULL;
	for (const struct ir_instr *q = a->next; q && d != c; q = q->next) {
		if (q->kind == IK_dealloc && in_root(q->ops[0].val, c))
			break;
		/* oclf: past a block bracket before c's dealloc, a read of c
		 * earlier in the text may run after the add (the next iteration
		 * of a loop around both): c is stored */
		if (instr_is_block(q->kind))
			return NULL;
		for (unsigned i = 0; i < q->nops; i++)
			if (in_root(q->ops[i].val, c))
				return NULL;
	}
	*res_op = r;
	return a;
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
	for (const struct ir_instr *in = g->f->first; in; in = in->next) {
		if (in == g->fused || in == g->fused_add)
			continue;
		const struct ir_instr *run_end = ocl_gen_ew_run(g, in);
		if (run_end) { /* in to run_end in one kernel */
			in = run_end;
			continue;
		}
		const struct ocl_row *r = ocl_row_of(in->kind);
		if (!r)
			unreachable("OpenCL: an instruction compile did not check");
		bool relu = (r->flags & OCL_F_RELU) != 0;
		g->res_add = (r->flags & OCL_F_FUSE_ADD) ? add_follows(in, &g->res_op) : NULL;
		if (r->flags & OCL_F_FUSE_ADD)
			g->fused_add = g->res_add;
		if (r->flags & OCL_F_FUSE_RELU) {
			/* the relu of the add's result where the add is folded in */
			const struct ir_instr *last = g->res_add ? g->res_add : in;
			relu = relu_follows(last);
			g->fused = relu ? next_computing(last) : NULL;
		}
		r->gen(g, in, r->arg, relu);
		g->res_add = NULL;
	}
	return 0;
}
