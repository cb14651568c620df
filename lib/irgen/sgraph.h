/* sgraph.h - the scheduling view of one graph function, shared by the
 * scheduler (schedule.c) and IRGen (irgen.c). Internal to lib/irgen.
 *
 * A region (an If's or a Loop's block, graph/region.h) has a view of its
 * own: the values of enclosing scopes it uses are external, numbered with
 * the storage, and its parameters (RegionArg) are stored nowhere here
 * (SV_NONE: IRGen gives them the owner's buffers).
 *
 * Nodes are numbered in the stable topological order of the function (the
 * order the printer uses: the list order wherever it is valid); that order
 * is the program's meaning for side effects and placeholder accesses.
 * Results are numbered too ("values"). Dependencies are kept in one CSR
 * array: for node i, deps[dep_begin[i] .. dep_begin[i] + ndata[i]) are the
 * producers of its operands (deduplicated, storage and predicates left
 * out), the rest up to dep_begin[i+1] are ordering dependencies:
 *   - every side-effecting node (NF_SIDE) after the previous one;
 *   - a read of a placeholder after the last earlier write of it;
 *   - a write of a placeholder after every read since the previous write.
 * Every dependency points to a lower number, so the graph is acyclic and
 * any order that respects it computes what the text says.
 *
 * A plan (struct sg_plan) fixes, for one evaluation order, how each value is
 * stored: in an activation of its own (SV_ALLOC), as a view of another
 * buffer (SV_VIEW, Reshape), straight in a placeholder's weight (SV_DIRECT,
 * a result whose only use is a Save into that placeholder, when nothing
 * touches the placeholder between the producer and the Save) or nowhere
 * (SV_NONE, an unused MaxPool argmax); and when each activation dies. Its
 * peak is the largest sum of live activation bytes at any instruction, the
 * figure IRGen's allocs and deallocs produce.
 */
#ifndef GLOW_IRGEN_SGRAPH_H
#define GLOW_IRGEN_SGRAPH_H

#include "graph/graph.h"
#include "support/arena.h"
#include "support/hashmap.h"

#include <stdbool.h>
#include <stdint.h>

enum sv_kind { SV_ALLOC, SV_VIEW, SV_DIRECT, SV_NONE };

struct sgraph {
	struct func *f;
	struct arena arena;
	uint32_t n;
	struct node **nodes;    /* by number: the stable topological order */
	struct u64map idx;      /* node -> number + 1 */
	/* dependencies (CSR) */
	uint32_t *dep_begin;    /* n + 1 */
	uint32_t *ndata;
	uint32_t *deps;
	/* operand slots (CSR, predicates left out): a node's operands, then,
	 * for a node with regions (If, Loop), every value its regions use
	 * from outside them (its captures: the regions run where the node
	 * does, so they are its operands for ordering and lifetimes); each
	 * slot a value number, or -(storage number) - 1 */
	uint32_t *op_begin;     /* n + 1 */
	int64_t *opv;
	struct node **slot_def; /* the slot's producer */
	uint8_t *slot_res;      /* ... and its result */
	uint64_t *scratch;      /* per node: TopK's working buffer, bytes */
	/* values */
	uint32_t nvals;
	uint32_t *val_begin;    /* n + 1 */
	uint32_t *val_node;
	uint64_t *val_bytes;
	uint32_t *val_nuses;    /* operand slots that use it */
	uint32_t *val_user;     /* the user when val_nuses == 1 */
	uint8_t *val_static;    /* SV_ALLOC, SV_VIEW or SV_NONE (orders do not change it) */
	/* storage used by the function, and, for a region, the values of
	 * enclosing scopes it uses (external values: storage numbers too) */
	uint32_t nstorage;
	struct node **storage;
	uint8_t *storage_res;   /* the result of an external value */
	struct u64map sidx;     /* sg_ext_key(storage or external node, result) -> number + 1 */
	bool *written;          /* a placeholder some node of f writes */
	uint32_t *touch_begin;  /* nstorage + 1: nodes with the storage as an operand */
	uint32_t *touch;        /* their numbers, ascending */
};

struct sg_plan {
	uint32_t *pos;    /* node -> position in the order */
	uint8_t *kind;    /* value -> enum sv_kind */
	int64_t *root;    /* value -> the SV_ALLOC value it lives in, -1: a weight or nothing */
	uint32_t *last;   /* SV_ALLOC value -> position of its last use (its producer's if unused) */
	uint64_t peak;
};

/* Builds the view of f. Never fails on verified input. */
void sg_build(struct sgraph *g, struct func *f);
void sg_free(struct sgraph *g);

/* The key of sidx: a producer and one of its results. */
static inline uint64_t sg_ext_key(const struct node *n, unsigned res) { return ((uint64_t)(uintptr_t)n << 8) | res; }

/* The number of a node of f (which must be one). */
uint32_t sg_index(const struct sgraph *g, const struct node *n);
/* The operand value of operand slot i of node number k (see opv). */
static inline int64_t sg_op(const struct sgraph *g, uint32_t k, unsigned i) { return g->opv[g->op_begin[k] + i]; }
static inline bool sg_is_storage(int64_t v) { return v < 0; }
static inline uint32_t sg_storage_of(int64_t v) { return (uint32_t)(-(v + 1)); }

/* Storage decisions, lifetimes and the peak for an order (node numbers, all
 * of them once, respecting the dependencies). p's arrays come from g's
 * arena. */
void sg_plan(struct sgraph *g, const uint32_t *order, struct sg_plan *p);

/* a + b, saturating */
static inline uint64_t sg_add(uint64_t a, uint64_t b) { return a + b < a ? UINT64_MAX : a + b; }

#endif
