/* region.h - control-flow regions of the graph IR (docs/GraphIR.md,
 * "Control flow").
 *
 * A region is a struct func that a node owns: If owns two (0 = then, 1 =
 * else), Loop one (0 = body), a function literal Fn one (0 = body: its
 * parameters, any number, and a Yield of its results). f->owner is the owning node, f->parent the
 * function or region around it; a region is not listed in the module's
 * funcs. Its nodes begin with its parameters, nodes of kind RegionArg with
 * one result each (If's regions have none; Loop's body has the iteration
 * number int64<>, the condition bool<> and one per carried value), and end
 * with one Yield, whose operands are the region's results (If: the If's
 * results; Loop: the next condition, the next carried values, then the
 * scan values of the iteration).
 *
 * Scope is lexical: a node of a region may use storage, the nodes before
 * it in its region, and the nodes of the enclosing scopes defined before
 * the owner (the verifier checks it). Names are unique in a module
 * function together with all its regions (one name table, the root's).
 *
 * The owner's region pointers live in the node's block right after its
 * operand slots (graph.c: node_new), so they cost nothing for other kinds.
 */
#ifndef GLOW_GRAPH_REGION_H
#define GLOW_GRAPH_REGION_H

#include "graph/graph.h"

#include <stdbool.h>

/* The number of regions n owns (0 for kinds without regions). */
unsigned node_num_regions(const struct node *n);
/* Region i of n (If: 0 = then, 1 = else; Loop: 0 = body). */
struct func *node_region(const struct node *n, unsigned i);
/* The number of parameters of region r (its leading RegionArg nodes). */
unsigned region_num_params(const struct func *r);
/* Parameter i of region r (a RegionArg node), NULL if it has fewer. */
struct node *region_param(const struct func *r, unsigned i);
/* The Yield that ends region r, NULL if it has none yet (being built). */
struct node *region_yield(const struct func *r);

/* ---- helpers beyond the contract ---- */

/* The number of regions a node of the kind owns, and the text name of
 * region i ("then", "else", "body"; NULL past the last). */
unsigned region_count_of_kind(unsigned kind);
const char *region_name(unsigned kind, unsigned i);
/* f is a region (owned by a node). */
static inline bool func_is_region(const struct func *f) { return f->owner != NULL; }
/* f is a module function with a signature (graph.h: struct func): only
 * Calls invoke it, it is no entry point. */
static inline bool func_has_sig(const struct func *f) { return f->owner == NULL && f->has_sig; }
/* f's nodes begin with parameters and end with a Yield: a region, or a
 * module function with a signature. */
static inline bool func_is_block(const struct func *f) { return f->owner != NULL || f->has_sig; }
/* Gives module function f the signature: its existing leading RegionArg
 * nodes are the parameters, res[0..nres) the result types (copied). */
void func_set_sig(struct func *f, const struct type *const *res, unsigned nres);
/* The function a Call of m calls: the body of its Fn (operand 0) or the
 * module function with a signature its callee attribute names; NULL when
 * there is none (the verifier reports it). *arg0: the index of the first
 * argument (1 with a Fn, else 0). */
struct func *call_target(struct module *m, const struct node *call, unsigned *arg0);
/* outer is inner or a scope around it. */
bool func_encloses(const struct func *outer, const struct func *inner);
/* Appends a parameter of type t after r's existing ones (before any other
 * node of r); name NULL or taken: a fresh one. */
struct node *region_add_param(struct func *r, const char *name, const struct type *t, struct loc loc);
/* Ends r with Yield(vals[0..n)) (replacing a previous Yield). */
struct node *region_set_yield(struct func *r, const struct value *vals, unsigned n, struct loc loc);

/* Loop(Trip, Cond, Init*): the number of carried values and of scan
 * outputs (results after the carried ones). */
static inline unsigned loop_num_carried(const struct node *loop) { return loop->nops - 2; }
static inline unsigned loop_num_scans(const struct node *loop) { return loop->nres - (loop->nops - 2); }
/* The value of a one-element bool or integer (i32, i64) Constant with
 * its payload in memory, or of a Splat of such a type: false when def is
 * none of these. */
bool node_const_scalar(const struct node *def, int64_t *v);
/* The Loop's trip count when its Trip operand is a constant, else -1;
 * INT64_MAX means no bound (docs/GraphIR.md). */
int64_t loop_const_trip(const struct node *loop);
/* The leading dimension of the Loop's scan outputs: its scan_length
 * attribute when given (>= 0; the trip count is then any, and running
 * more iterations than that is a run-time error), else its constant trip
 * count, else -1 (no static length: the verifier's error when the Loop
 * has scan outputs). */
int64_t loop_scan_length(const struct node *loop);

/* A node with regions has no side effects (regions hold none, the verifier
 * checks) and a region is walked by its owner's users: these visit every
 * node of f and of its regions, inner regions first (post order: a
 * region's nodes before their owner), or outer first (pre order). */
void func_walk_post(struct func *f, void (*fn)(struct func *scope, struct node *n, void *arg), void *arg);
void func_walk_pre(struct func *f, void (*fn)(struct func *scope, struct node *n, void *arg), void *arg);

/* The nodes of f and of its regions, nested ones included. */
size_t func_count_nodes(const struct func *f);

/* Restores the order the verifier wants after a pass that appended nodes:
 * f's list and its regions' become a stable topological order (list order
 * wherever valid) in which a node with regions comes after the outer values
 * its regions use, a block's parameters first and its Yield last. Does
 * nothing to a function without regions or signature. */
void func_fix_order(struct func *f);

#endif
