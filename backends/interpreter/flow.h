/* flow.h - structured control flow in the interpreter (k_flow.c): the
 * block instructions (if, else, loop, end: docs/InstrIR.md, "Blocks") are
 * steps of the compiled program like any other; the run loop asks
 * interp_flow_next where to go after one instead of running a kernel.
 * Blocks run on the calling thread; the kernels inside split as always.
 */
#ifndef GLOW_BACKENDS_INTERPRETER_FLOW_H
#define GLOW_BACKENDS_INTERPRETER_FLOW_H

#include "backends/interpreter/interp.h"

#include <stddef.h>
#include <stdint.h>

/* Per step of the program: where each block instruction goes, and the
 * state of each loop while it runs. */
struct interp_flow {
	size_t *jump;        /* if: its else + 1 or end + 1 (condition false); else: its end + 1;
			      * loop: its end + 1 (done); end: its loop, SIZE_MAX for an if's */
	uint8_t *is_loop;    /* the step is a loop */
	int64_t *count;      /* loop: the iteration running */
	int64_t *trip;       /* loop: its trip count, read on entry */
	uint8_t **cond;      /* loop: its condition buffer */
	int64_t **iter;      /* loop: its iteration number buffer */
	size_t *open;        /* while building: the steps of the open blocks */
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
