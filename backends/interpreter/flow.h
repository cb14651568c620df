/* flow.h - structured control flow in the interpreter (k_flow.c): the
 * block instructions (if, else, loop, end: docs/InstrIR.md, "Blocks") are
 * steps of the compiled program like any other; the run loop asks
 * interp_flow_next where to go after one instead of running a kernel.
 * Blocks run on the calling thread; the kernels inside split as always.
 */
#ifndef GLOW_BACKENDS_INTERPRETER_FLOW_H
#define GLOW_BACKENDS_INTERPRETER_FLOW_H

#include "backends/interpreter/interp.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* What a block instruction's step knows. */
struct interp_flow_step {
	size_t jump;   /* if: its else + 1 or end + 1 (condition false); else: its end + 1;
			* loop: its end + 1 (done); end: its loop, SIZE_MAX for an if's */
	bool is_loop;
	/* a loop while it runs: the iteration, the trip count read on entry,
	 * the condition and iteration number buffers */
	int64_t count, trip;
	const uint8_t *cond;
	int64_t *iter;
};

/* Per step of the program, and the open blocks while it is built. */
struct interp_flow {
	struct interp_flow_step *at;
	size_t *open;
	size_t nopen, nsteps;
};

/* Room for a program of at most nsteps steps. */
void interp_flow_init(struct interp_flow *fl, size_t nsteps);
/* Records step number `step` (steps added in program order), instruction in. */
void interp_flow_add(struct interp_flow *fl, size_t step, const struct ir_instr *in);
/* The step after block instruction `in` at step `step`, whose operands
 * are ops (their data read and written as the instruction says). */
size_t interp_flow_next(struct interp_flow *fl, size_t step, const struct ir_instr *in,
			const struct interp_arg *ops);
void interp_flow_free(struct interp_flow *fl);

#endif
