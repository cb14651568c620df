/* iropt.h - the instruction IR optimizer: pass interface and the analyses
 * the passes share.
 *
 * An IR pass is a row of IRPasses.def plus its run function (one file per
 * pass in lib/iropt/). It runs on one function, receives a struct
 * iropt_ctx and returns whether it changed anything. The shared pass manager
 * (lib/support/passmgr.h) does the rest: pipelines, fixed points, timing,
 * dumps, verification. A pass that changes a function drops its recorded
 * memory plan (the adapter in pipelines.c does it), so only plan-memory,
 * run last, leaves a plan behind.
 *
 * Buffers and aliasing, as every pass sees them: the root of an operand is
 * the weight or alloc it lives in (ir_value_root); a view keeps its root
 * alive and writing a view writes its root. An instruction "uses" an alloc
 * when one of its operands has that alloc as root; tensorview instructions
 * count as uses (the root must be live where a view is defined), the alloc
 * itself and its dealloc do not.
 */
#ifndef GLOW_IROPT_IROPT_H
#define GLOW_IROPT_IROPT_H

#include "ir/ir.h"
#include "support/passmgr.h"

#include <stdbool.h>
#include <stdint.h>

enum iropt_flags {
	IROPT_FIXED_POINT = PM_FIXED_POINT,
	IROPT_KEEPS_PLAN = PM_CLIENT_FLAG0, /* the pass computes the plan: it is not dropped after it */
};

struct iropt_ctx {
	struct diag *diag;
	struct pm_ctx *pm; /* the run in progress (set before each pass runs) */
};

/* Adds n to the counter desc ("Number of buffers shared") of the running pass. */
static inline void iropt_stat(struct iropt_ctx *ctx, const char *desc, uint64_t n)
{
	if (n && ctx->pm)
		pm_stat_add(ctx->pm, desc, n);
}

/* Prototypes of every pass. */
#define IR_PASS(name, run, flags, desc) bool run(struct ir_func *f, struct iropt_ctx *ctx);
#include "iropt/IRPasses.def"
#undef IR_PASS

/* The registry of IR passes and pipelines (-O0..-O3), with the IR verifier
 * and printer. Passes run with pm->user pointing at a struct iropt_ctx and
 * the IR being a struct ir_module. */
extern const struct pm_registry ir_pass_registry;

/* ---- shared analyses (analysis.c) ---- */

/* A table qualifier reads or writes the buffer (scratch counts as both). */
static inline bool iropt_qual_reads(unsigned q) { return q == IQ_IN || q == IQ_INOUT || q == IQ_SCRATCH; }
static inline bool iropt_qual_writes(unsigned q) { return q == IQ_OUT || q == IQ_INOUT || q == IQ_SCRATCH; }

/* The table qualifier of operand i (scratch distinguished from @out). */
static inline unsigned iropt_op_qual(const struct ir_instr *in, unsigned i) { return instr_desc(in->kind)->op_quals[i]; }

/* The alloc an operand lives in, NULL if it lives in a weight. */
struct ir_instr *iropt_alloc_root(struct ir_value *v);

/* Whether some operand of `in` lives in buffer b (an alloc's or a weight's
 * value): its root (ir_value_root, views followed) is b. For an alloc a,
 * iropt_names(in, &a->v) is "some operand's iropt_alloc_root is a". */
bool iropt_names(const struct ir_instr *in, const struct ir_value *b);

/* Per function: instruction positions and, for every alloc, its first and
 * last use and its dealloc. A use in a block nested in the alloc's block
 * is a use from the block's opening instruction to its end, and an
 * operand of an opening instruction is used until its end: first and last
 * are instructions of the alloc's block. Positions are 1-based program order; 0 means
 * none. Built by iropt_uses_build, which numbers the instructions in their
 * mark field; iropt_uses_free clears the marks. */
struct iropt_uses {
	size_t n;
	struct ir_instr **at;       /* [1..n]: the instruction at a position */
	uint32_t *first, *last;     /* by position of an alloc */
	struct ir_instr **dealloc;  /* by position of an alloc */
};
void iropt_uses_build(struct iropt_uses *u, struct ir_func *f);
void iropt_uses_free(struct iropt_uses *u, struct ir_func *f);
static inline uint32_t iropt_pos(const struct ir_instr *in) { return in->mark; }

/* Replaces every operand naming `from` by `to` in the instructions from
 * `start` (NULL: the first) up to but excluding `stop` (NULL: the end).
 * Returns the number of operands changed. */
unsigned iropt_replace_uses(struct ir_func *f, struct ir_value *from, struct ir_value *to, struct ir_instr *start,
			    struct ir_instr *stop);

/* ---- blocks (blocks.c) ---- */

/* Whether any instruction from `open` to `end` (a block's opening
 * instruction and its end, both included) has an operand living in b
 * (iropt_names). */
bool iropt_block_names(const struct ir_instr *open, const struct ir_instr *end, const struct ir_value *b);
/* Whether any instruction from `open` to `end` names value v itself. */
bool iropt_block_names_value(const struct ir_instr *open, const struct ir_instr *end, const struct ir_value *v);

/* Drops the recorded memory plan of f (region sizes and every offset). */
void iropt_drop_plan(struct ir_func *f);

#endif
