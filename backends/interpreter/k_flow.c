/* k_flow.c - structured control flow in the interpreter (flow.h) and the
 * kernels of slices at a run-time index (insertslice, extractslice).
 *
 * Blocks: `if` goes on into its first block when its condition is true,
 * else past its `else` (or `end`); reaching an `else` means the first block
 * ran, so it skips to past the `end`. `loop` reads the trip count once,
 * then each time the loop is to run (on entry and at its `end`) checks
 * iteration < trip and the condition, writes the iteration number and goes
 * on into the body, or leaves past the `end`. The steps to go to are found
 * once, when the program is compiled.
 */
#include "backends/interpreter/flow.h"
#include "backends/interpreter/kern.h"

#include <inttypes.h>
#include <stdlib.h>

void interp_flow_init(struct interp_flow *fl, size_t nsteps)
{
	fl->at = xcalloc(nsteps + 1, sizeof *fl->at);
	fl->open = xcalloc(nsteps + 1, sizeof *fl->open);
	fl->nopen = 0;
	fl->nsteps = nsteps;
}

void interp_flow_add(struct interp_flow *fl, size_t step, const struct ir_instr *in)
{
	unsigned flags = instr_desc(in->kind)->flags;
	if (flags & IF_BLOCK_OPEN) {
		fl->at[step].jump = SIZE_MAX; /* until its end is seen */
		fl->at[step].is_loop = in->kind == IK_loop;
		fl->open[fl->nopen++] = step;
	} else if ((flags & (IF_BLOCK_ELSE | IF_BLOCK_END)) && fl->nopen) {
		/* the verifier has checked the nesting */
		size_t o = fl->open[fl->nopen - 1];
		fl->at[o].jump = step + 1; /* an if whose condition is false, a loop that is done */
		if (flags & IF_BLOCK_ELSE) {
			fl->open[fl->nopen - 1] = step;
		} else {
			fl->nopen--;
			fl->at[step].jump = fl->at[o].is_loop ? o : SIZE_MAX;
		}
	}
}

/* Whether loop l runs another iteration; if so writes its number. */
static bool loop_again(struct interp_flow_step *l)
{
	if (l->count >= l->trip || !*l->cond)
		return false;
	*l->iter = l->count;
	return true;
}

size_t interp_flow_next(struct interp_flow *fl, size_t step, const struct ir_instr *in,
			const struct interp_arg *ops)
{
	struct interp_flow_step *s = &fl->at[step];
	switch (in->kind) {
	case IK_if: return *(const uint8_t *)ops[0].p ? step + 1 : s->jump;
	case IK_else: return s->jump; /* the first block ran: past the end */
	case IK_loop:
		s->trip = *(const int64_t *)ops[0].p;
		s->cond = ops[1].p;
		s->iter = ops[2].p;
		s->count = 0;
		return loop_again(s) ? step + 1 : s->jump;
	default: { /* end: of a loop, the next iteration or out; of an if, on */
		if (s->jump == SIZE_MAX)
			return step + 1;
		struct interp_flow_step *l = &fl->at[s->jump];
		l->count++;
		return loop_again(l) ? s->jump + 1 : step + 1;
	}
	}
}

void interp_flow_free(struct interp_flow *fl)
{
	free(fl->at);
	free(fl->open);
	fl->at = NULL;
	fl->open = NULL;
}

/* The block instructions are the run loop's (interp_flow_next): reached as
 * a kernel only by a caller of interp_exec outside a program. */
int kern_block(const struct kargs *k)
{
	return kerror(k, "%s is a block instruction: it runs only as part of a program", instr_kind_name(k->kind));
}

/* insertslice(@inout Dest, @in Src, @in Index): Dest[Index] = Src;
 * extractslice(@out Dest, @in Src, @in Index): Dest = Src[Index]; slices
 * of the leading axis, the index read now. */
int kern_slice_at(const struct kargs *k)
{
	bool insert = k->kind == IK_insertslice;
	const struct interp_arg *whole = &k->op[insert ? 0 : 1], *part = &k->op[insert ? 1 : 0];
	int64_t i = *(const int64_t *)k->op[2].p;
	uint64_t n = whole->t->dims[0];
	if (i < 0 || (uint64_t)i >= n)
		return kerror(k, "index %" PRId64 " is outside the leading axis (0 to %" PRIu64 ")", i, n - 1);
	size_t bytes = (size_t)type_bytes(part->t);
	uint8_t *slot = (uint8_t *)whole->p + (size_t)i * bytes;
	if (insert)
		memmove(slot, part->p, bytes);
	else
		memmove(part->p, slot, bytes);
	return 0;
}
