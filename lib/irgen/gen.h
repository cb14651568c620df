/* gen.h - the state of IRGen for one function or region, shared by
 * irgen.c (the function, node by node) and irgen_flow.c (If and Loop as
 * blocks). Internal to lib/irgen.
 */
#ifndef GLOW_IRGEN_GEN_H
#define GLOW_IRGEN_GEN_H

#include "irgen/irgen.h"
#include "irgen/sgraph.h"

struct gen;
/* What a region's Yield (node k of G's region) becomes: its owner's. */
typedef void irgen_yield_fn(struct gen *G, uint32_t k, void *arg);

struct gen {
	struct ir_module *im;
	struct ir_func *irf;
	struct func *f;            /* the function, or a region */
	struct diag *d;
	struct sgraph g;
	struct sg_plan p;
	struct ir_value **buf;     /* per value */
	struct ir_weight **w;      /* per storage (the function's generator) */
	struct ir_value **ext;     /* per storage number: the weight, or a region's value of an enclosing scope */
	int ikind[NK_COUNT];       /* node kind -> instruction kind of the same name, -1 */
	char *name;                /* scratch for composed names */
	size_t namecap;
	/* a region's generator: the scope around it, its parameters' buffers
	 * (region_param order) and what its Yield does */
	struct gen *parent;
	struct ir_value *const *params;
	irgen_yield_fn *yield;
	void *yield_arg;
};

/* base + "." + suffix (suffix lower-cased), in G's scratch buffer */
const char *irgen_compose(struct gen *G, const char *base, const char *suffix);
/* The buffer of operand slot i (a node operand, or a capture) of node k,
 * and of its result r. */
struct ir_value *irgen_opbuf(struct gen *G, uint32_t k, unsigned i);
struct ir_value *irgen_resbuf(struct gen *G, uint32_t k, unsigned r);
/* An instruction of kind with operands a (and b when not NULL), appended. */
struct ir_instr *irgen_emit(struct gen *G, unsigned kind, const char *name, struct ir_value *a, struct ir_value *b,
			   struct loc loc);
/* Generates region r of the node P is generating, appended where P is:
 * its parameters get params' buffers, its Yield calls yield(arg). */
void irgen_region(struct gen *P, struct func *r, struct ir_value *const *params, irgen_yield_fn *yield, void *arg);

/* The generators of If and Loop (irgen_flow.c). irgen.c reaches them
 * through this table, not by name: generating a region generates its
 * nodes (irgen_region, irgen.c), which may be If and Loop again, and the
 * table keeps that recursion from being a circle of files. */
typedef void irgen_node_fn(struct gen *G, uint32_t k);
struct irgen_flow_gens {
	irgen_node_fn *gen_if, *gen_loop;
};
extern const struct irgen_flow_gens irgen_flow_gens;

#endif
