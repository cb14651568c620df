/* lowering.h - the lowering rules behind the lower and lower-all passes.
 *
 * A rule replaces one high-level node by linear-algebra, data-movement and
 * elementwise nodes that compute the same function (docs/Passes.md lists
 * each rule and where its rounding differs). Rules live in lower-*.c by
 * family; lowering.c holds the driver and the node-building helpers they
 * share. Every new node is inserted before the node it replaces and takes
 * that node's location, so diagnostics about it still point at the source
 * line it came from.
 *
 * Lowering.def has one row per kind with a rule: its rule function, which
 * nodes of the kind it applies to and its -stats line.
 *
 * A rule returns true if it replaced n (n is then erased), false if n is
 * outside what it handles (a predicate, a quantized kind, negative pads,
 * ...); it never fails. Nodes a rule creates may be lowered in turn (Swish
 * makes a Sigmoid, Broadcast a Tile, ...): the driver sweeps the function
 * again until a sweep lowers nothing.
 */
#ifndef GLOW_PASSES_LOWERING_H
#define GLOW_PASSES_LOWERING_H

#include "passes/pass.h"

#include <stdbool.h>
#include <stdint.h>

/* Lowers the nodes of f that want(ctx, n) selects; returns whether it
 * changed f. Counters go to ctx (-stats). */
bool lower_function(struct func *f, struct pass_ctx *ctx, bool (*want)(const struct pass_ctx *, const struct node *));

/* Whether a rule exists for n's kind and could apply to n as it stands. */
bool lower_has_rule(const struct node *n);

/* n is of a gradient or training kind (LW_GRAD in Lowering.def). */
bool lower_is_grad(const struct node *n);

/* n is of a gradient or training kind that no instruction runs (Instrs.def
 * has no kind of its name, so IRGen could not build it): the lower stage
 * lowers it whatever the backend's should_lower says. One with an
 * instruction is lowered like any other kind, when the backend asks. */
bool lower_grad_needed(const struct node *n);

/* Lowers every node of f of a gradient or training kind (LW_GRAD rows)
 * into forward kinds, whatever the backend says (glow-gradcheck
 * -lower-grads); returns whether it changed f. */
bool lower_grads(struct func *f, struct pass_ctx *ctx);

/* ---- the rules (Lowering.def), in lower-*.c by family ---- */

/* Which nodes of a kind have a rule, and what the driver checks before
 * calling it (Lowering.def's When and Guard columns). */
enum lower_when { LW_FLOAT, LW_UNQUANTIZED, LW_GROUPED, LW_GRAD };
enum lower_guard { LG_ANY, LG_SAME_TYPE, LG_SAME_ELEM };

#define LOWER(K, rule, when, guard, stat) bool rule(struct func *f, struct node *n);
#include "passes/Lowering.def"
#undef LOWER

/* ---- helpers for the rules (lowering.c) ---- */

/* "<n's name, cut>.<suffix>" in buf (64 bytes). */
const char *lw_name(char *buf, const struct node *n, const char *suffix);
/* A node of kind k with operands ops and result type t before n, at n's
 * location. */
struct node *lw_node(struct func *f, unsigned k, const struct value *ops, unsigned nops, const struct type *t,
		     struct node *n, const char *suffix);
/* An elementwise node k(a) or k(a, b) of a's type before n. */
struct value lw_un(struct func *f, unsigned k, struct value a, struct node *n, const char *suffix);
struct value lw_bin(struct func *f, unsigned k, struct value a, struct value b, struct node *n, const char *suffix);
/* A Splat of x with v's type (or type t) before n. */
struct value lw_splat(struct func *f, const struct type *t, double x, struct node *n, const char *suffix);
/* k(a, Splat x) with a's type; the Splat is named "<n>.k", or
 * "<n>.<suffix>.k" when that is taken (a rule's further constants). */
struct value lw_bin_splat(struct func *f, unsigned k, struct value a, double x, struct node *n, const char *suffix);
/* A reduction k of v over the axes marked in drop (rank of v). */
struct value lw_reduce(struct func *f, unsigned k, struct value v, const bool *drop, struct node *n,
		       const char *suffix);
/* The reduced value r (v's shape without the axes in drop) broadcast back
 * to type t: a Reshape that puts the dropped axes back as 1s, then a
 * Broadcast. */
struct value lw_expand(struct func *f, struct value r, const struct type *t, const bool *drop, struct node *n,
		       const char *suffix);
/* v broadcast to type t with v's dims aligned at axis. */
struct value lw_broadcast(struct func *f, struct value v, const struct type *t, unsigned axis, struct node *n,
			  const char *suffix);
/* Replaces n by v and erases n. */
void lw_replace(struct func *f, struct node *n, struct value v);

#endif
