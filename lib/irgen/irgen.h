/* irgen.h - from the graph IR to the instruction IR: the scheduler and IRGen.
 *
 * Two stages, each a pass of the shared pass manager (lib/support/passmgr.h)
 * over a struct irgen_state:
 *
 *   schedule  reorders the node list of every selected graph function into
 *             the evaluation order IRGen will follow: the memory-aware order
 *             (generalized Sethi-Ullman, see schedule.c) or the stable
 *             topological order of the text (-schedule=topo). Side effects
 *             keep their relative order and every read or write of a
 *             placeholder stays on its side of every write of it.
 *   irgen     turns every selected function into an instruction IR function
 *             of the same name, following the list order: weights for the
 *             storage it uses, an alloc before each activation's producer,
 *             the instructions of each node, a dealloc after the last use
 *             (irgen.c).
 *
 * The print and verify hooks of the registry show the graph module until the
 * irgen pass has run, the instruction IR module afterwards.
 */
#ifndef GLOW_IRGEN_IRGEN_H
#define GLOW_IRGEN_IRGEN_H

#include "graph/graph.h"
#include "ir/ir.h"
#include "support/passmgr.h"

#include <stdbool.h>
#include <stdint.h>

enum irgen_schedule { IRGEN_SCHED_MEMORY, IRGEN_SCHED_TOPO };

/* The orders the memory scheduler tries (schedule.c); it keeps the one with
 * the smallest peak, the first of them on a tie. */
enum irgen_order { IRGEN_ORDER_SU, IRGEN_ORDER_NEED, IRGEN_ORDER_TOPO, IRGEN_ORDER_COUNT };
const char *irgen_order_name(unsigned order);

/* What the scheduler found for one function. */
struct irgen_sched_stats {
	const char *func;
	uint64_t nodes;
	uint64_t topo_peak;   /* peak live activation bytes of the topological order */
	uint64_t chosen_peak; /* ... of the order the schedule pass kept */
	unsigned chosen;      /* enum irgen_order */
};

struct irgen_state {
	struct module *gm;       /* the input (its function lists get reordered) */
	struct ir_module *im;    /* NULL until the irgen pass has run */
	struct diag *diag;
	enum irgen_schedule schedule;
	bool reorder_anf;        /* schedule a module in ANF freely too (-reorder-anf) */
	const char *only_func;   /* NULL: every function */
	const char *output_path; /* where the .gir goes ("-" or NULL: stdout); relative weight files follow it */
	/* -print-schedule-stats: one entry per scheduled function */
	struct irgen_sched_stats *stats;
	size_t nstats, capstats;
};

void irgen_state_init(struct irgen_state *s, struct module *gm, struct diag *d);
/* Frees the statistics and the instruction IR module, not the graph module. */
void irgen_state_free(struct irgen_state *s);

/* The selected functions: only_func, or all of them. Reports an unknown
 * name and returns -1. */
int irgen_check_selection(struct irgen_state *s);

/* The schedule pass on one function: reorders f's node list. Returns the
 * statistics (peaks of the topological and the kept order). */
struct irgen_sched_stats irgen_schedule_func(struct func *f, enum irgen_schedule how);

/* The irgen pass on one function: appends an instruction IR function of the
 * same name to im, following f's list order (a valid evaluation order is
 * assumed; otherwise the stable topological order is used). Reports to d and
 * returns NULL on failure (a weight file that cannot be located). */
struct ir_func *irgen_func(struct ir_module *im, struct func *f, struct diag *d);

/* The registry: passes "schedule" and "irgen", pipeline "default" (both).
 * The IR handed to the engine is a struct irgen_state. */
extern const struct pm_registry irgen_pass_registry;

#endif
