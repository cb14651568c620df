/* lowered.h - the lowered-info map: for a value that lowering made to
 * stand for an output of a node of the graph the user wrote, that output
 * (its node's name and result index). docs/GraphIR.md ("The lowered-info
 * map") gives its text spelling, docs/Quantization.md its use: a profile
 * gathered on a lowered graph names the values of the graph the user wrote.
 *
 * The map belongs to the module and is keyed by node (result 0 of the node:
 * the nodes lowering makes have one result), so it survives renames; a node
 * erased takes its entry with it, and a pass that replaces a node by a new
 * one does not carry the entry over (only lowering records one). Entries
 * live in the module's arena.
 */
#ifndef GLOW_GRAPH_LOWERED_H
#define GLOW_GRAPH_LOWERED_H

#include "graph/graph.h"

#include <stdbool.h>

/* One entry: result 0 of node stands for result `res` of the user's node
 * called `name`. */
struct lowered_entry {
	const struct node *node;
	const char *name; /* in the module's arena */
	unsigned res;
};

/* Records that result 0 of n stands for result res of the node called
 * name (copied), replacing an earlier entry of n. */
void lowered_set(struct module *m, const struct node *n, const char *name, unsigned res);
/* The entry of n, or NULL. */
const struct lowered_entry *lowered_get(const struct module *m, const struct node *n);
/* The output of the user's graph value v stands for: the map's entry when v
 * is result 0 of a node that has one, else v itself (its node's name, which
 * may be NULL, and result index). */
void lowered_origin(const struct module *m, struct value v, const char **name, unsigned *res);
/* Calls fn on every entry of a node that is not erased, in no particular
 * order; stops at the first nonzero return and returns it. */
int lowered_for_each(const struct module *m, int (*fn)(void *arg, const struct lowered_entry *e), void *arg);

#endif
