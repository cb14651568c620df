/* memplan.h - the static memory allocator of the instruction IR.
 *
 * Three regions per function: constant weights, mutable weights and
 * activations. Every offset and every region size is a multiple of
 * MEMPLAN_ALIGN. Weights are laid out in declaration order in their region.
 * Activations (allocs) share one arena: two allocs may overlap only if their
 * lifetimes (from the alloc to the dealloc; a view lives inside its root's)
 * do not intersect. Several placement strategies run and the smallest arena
 * wins (ties: the first in the list); a deterministic local search then
 * tries to improve on it while it is above the lower bound. Last, allocs
 * move within the arena so that each thread's share of a buffer falls on
 * memory the same thread's share wrote last (memplan.c, "thread
 * affinity"); the arena does not grow.
 *
 * The lower bound of an arena for this schedule is the largest total of live
 * activation bytes (each rounded up to MEMPLAN_ALIGN) at any program point:
 * no placement can do better.
 */
#ifndef GLOW_IROPT_MEMPLAN_H
#define GLOW_IROPT_MEMPLAN_H

#include "ir/ir.h"

#include <stdbool.h>
#include <stdint.h>

#define MEMPLAN_ALIGN 64

struct memplan_result {
	uint64_t constant_size, mutable_size, arena, lower_bound;
	const char *strategy; /* the winning placement; NULL if not computed here */
};

/* Computes the plan of f and records it in f (f->plan, every weight's and
 * alloc's offset). Returns true if the recorded plan changed. res may be
 * NULL. */
bool memplan_func(struct ir_func *f, struct memplan_result *res);

/* The lower bound of f's activation arena (see above). */
uint64_t memplan_lower_bound(struct ir_func *f);

/* Prints f's recorded plan: one line per weight and alloc (name, region,
 * offset, size in bytes), then the region sizes, the arena, the lower bound
 * and their ratio (3 decimals). Prints that there is none if f has no plan. */
struct ostream;
void memplan_print(struct ostream *o, struct ir_func *f);

#endif
