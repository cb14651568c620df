/* regions.h - graph passes and control-flow regions (graph/region.h;
 * docs/Passes.md, "Control flow"). */
#ifndef GLOW_PASSES_REGIONS_H
#define GLOW_PASSES_REGIONS_H

#include "passes/pass.h"

/* Runs the function pass run on f, then on each region of f's nodes, outer
 * scopes first, then restores the order the verifier wants in each
 * (func_fix_order); returns whether any run changed something. */
bool pass_run_scopes(struct func *f, bool (*run)(struct func *, struct pass_ctx *), struct pass_ctx *ctx);

/* Calls fn(f, n, arg) for each node n of kind in f (only those the target
 * does not execute when only_unsupported), in rounds until a round changes
 * nothing (fn returns whether it rewrote n: a node moved out of a region
 * may be of kind too); returns how many fn rewrote. */
uint64_t pass_rewrite_kind(struct func *f, unsigned kind, bool only_unsupported, struct pass_ctx *ctx,
			   bool (*fn)(struct func *f, struct node *n, void *arg), void *arg);

/* The module has a node with regions in some function. */
bool module_has_regions(const struct module *m);

/* Moves the nodes of region r, but its parameters and Yield, into scope
 * `to` right before `before`; returns r's Yield. The caller replaces the
 * parameters' uses first and erases the owner after. */
struct node *region_inline(struct func *r, struct func *to, struct node *before);

/* Where values go when nodes are copied: a node to its copy (result r to
 * result r) or a one-result node (a region's parameter) to a value. */
struct clone_map {
	struct u64map map; /* node -> struct value * (in the module arena) */
	struct module *m;
};
void clone_map_init(struct clone_map *cm, struct module *m);
void clone_map_free(struct clone_map *cm);
void clone_map_set(struct clone_map *cm, const struct node *from, struct value to);
/* v under the map: v itself when its node is not mapped (an outer value). */
struct value clone_map_value(const struct clone_map *cm, struct value v);

/* Copies n into scope `to` right before `before` (NULL: at the end), its
 * operands mapped by cm, its regions copied whole (their nodes mapped too);
 * the copy's name is derived from n's. Maps n to the copy. */
struct node *node_clone_deep(struct func *to, const struct node *n, struct node *before, struct clone_map *cm);

#endif
