/* irgen_flow.c - IRGen of If and Loop (docs/glow-irgen.md, "Control
 * flow"): a node with regions becomes a block of the instruction IR
 * (docs/InstrIR.md, "Blocks") whose instructions are its region's,
 * generated as a function's are (irgen_region). The owner's results are
 * allocated before the block like any node's, and live across it:
 *
 *   %r = If(%c) then {...; Yield(%a)} else {...; Yield(%b)}
 *     -> if @in %c { ...; copy @out %r.res, @in %a } else { ...; copy ... }
 *
 *   %l = Loop(%trip, %go, %init) body(%i, %cond, %acc) {...; Yield(%g, %n, %s)}
 *     -> %l.cond = alloc bool<>      copy @out %l.cond, @in %go
 *        %l.iter = alloc i64<>       copy @out %l.res0, @in %init
 *        splat @out %l.res1 {value = 0}     (the scan output's rows not run are zero)
 *        loop @in %trip, @in %l.cond, @out %l.iter {
 *          ... (%i is %l.iter, %cond %l.cond, %acc %l.res0)
 *          insertslice @inout %l.res1, @in %s, @in %l.iter
 *          copy @out %l.cond, @in %g     copy @out %l.res0, @in %n
 *        }
 *
 * A Yield's carried values are assigned together: a value that is itself
 * one of the carried buffers (a swap) is copied through a temporary first;
 * scan values are stored before any carried value changes. Copies of a
 * buffer onto itself are left out.
 */
#include "graph/region.h"
#include "irgen/gen.h"
#include "support/util.h"

/* The owner being generated, for its Yields. */
struct owner {
	struct gen *G; /* the owner's scope */
	uint32_t k;    /* the owner's number there */
	struct ir_value *cond, *iter; /* a Loop's condition and iteration buffers */
};

/* copy @out dst, @in src unless they are one buffer */
static void copy_value(struct gen *G, struct ir_value *dst, struct ir_value *src, struct loc loc)
{
	if (dst != src)
		irgen_emit(G, IK_copy, NULL, dst, src, loc);
}

/* An If's Yield: its values into the If's results. */
static void if_yield(struct gen *R, uint32_t y, void *arg)
{
	struct owner *o = arg;
	const struct node *yn = R->g.nodes[y];
	for (unsigned r = 0; r < yn->nops; r++)
		copy_value(R, irgen_resbuf(o->G, o->k, r), irgen_opbuf(R, y, r), yn->loc);
}

/* If node k: its condition's block, each region generated inside its
 * half, its Yields copying into the If's results (allocated already). */
static void gen_if(struct gen *G, uint32_t k)
{
	const struct node *n = G->g.nodes[k];
	struct owner o = {G, k, NULL, NULL};
	struct ir_value *cond = irgen_opbuf(G, k, 0);
	ir_instr_create(G->irf, IK_if, n->name, NULL, &cond, 1, NULL, n->loc);
	irgen_region(G, node_region(n, 0), NULL, if_yield, &o);
	ir_instr_create(G->irf, IK_else, NULL, NULL, NULL, 0, NULL, n->loc);
	irgen_region(G, node_region(n, 1), NULL, if_yield, &o);
	ir_instr_create(G->irf, IK_end, NULL, NULL, NULL, 0, NULL, n->loc);
}

/* A Loop's Yield (next condition, next carried values, scan values): the
 * scan values into their row, then the condition and the carried values
 * as one parallel assignment. */
static void loop_yield(struct gen *R, uint32_t y, void *arg)
{
	struct owner *o = arg;
	const struct node *yn = R->g.nodes[y], *loop = o->G->g.nodes[o->k];
	unsigned nc = loop_num_carried(loop), ns = loop_num_scans(loop);
	for (unsigned s = 0; s < ns; s++) {
		struct ir_value *ops[3] = {irgen_resbuf(o->G, o->k, nc + s), irgen_opbuf(R, y, 1 + nc + s), o->iter};
		ir_instr_create(R->irf, IK_insertslice, NULL, NULL, ops, 3, NULL, yn->loc);
	}
	/* dst[0] the condition, dst[1 + j] carried value j */
	unsigned nd = 1 + nc;
	struct ir_value **dst = xcalloc(nd, sizeof *dst), **src = xcalloc(nd, sizeof *src);
	struct ir_instr **tmp = xcalloc(nd, sizeof *tmp);
	for (unsigned i = 0; i < nd; i++) {
		dst[i] = i ? irgen_resbuf(o->G, o->k, i - 1) : o->cond;
		src[i] = irgen_opbuf(R, y, i);
	}
	for (unsigned i = 0; i < nd; i++) {
		struct ir_value *root = ir_value_root(src[i], NULL);
		bool clobbered = false;
		for (unsigned j = 0; j < nd && src[i] != dst[i]; j++)
			clobbered |= j != i && root == ir_value_root(dst[j], NULL);
		if (!clobbered)
			continue;
		tmp[i] = ir_alloc(R->irf, irgen_compose(R, loop->name ? loop->name : "loop", "next"), src[i]->type, NULL,
				  yn->loc);
		irgen_emit(R, IK_copy, NULL, &tmp[i]->v, src[i], yn->loc);
	}
	for (unsigned i = 0; i < nd; i++)
		copy_value(R, dst[i], tmp[i] ? &tmp[i]->v : src[i], yn->loc);
	for (unsigned i = 0; i < nd; i++)
		if (tmp[i])
			ir_dealloc(R->irf, tmp[i], NULL, yn->loc);
	free(tmp);
	free(src);
	free(dst);
}

/* Loop node k: condition and iteration buffers, the carried values
 * initialized in the Loop's results, the scan outputs zeroed, then the
 * loop block with the body generated inside (see the head comment). */
static void gen_loop(struct gen *G, uint32_t k)
{
	const struct node *n = G->g.nodes[k];
	struct func *body = node_region(n, 0);
	unsigned nc = loop_num_carried(n), ns = loop_num_scans(n);
	const char *base = n->name ? n->name : "loop";
	struct ir_instr *cond = ir_alloc(G->irf, irgen_compose(G, base, "cond"), op_type(n, 1), NULL, n->loc);
	struct ir_instr *iter = ir_alloc(G->irf, irgen_compose(G, base, "iter"), node_type(region_param(body, 0)),
					 NULL, n->loc);
	copy_value(G, &cond->v, irgen_opbuf(G, k, 1), n->loc);
	for (unsigned j = 0; j < nc; j++)
		copy_value(G, irgen_resbuf(G, k, j), irgen_opbuf(G, k, 2 + j), n->loc);
	for (unsigned s = 0; s < ns; s++)
		ir_set_float(G->im, irgen_emit(G, IK_splat, NULL, irgen_resbuf(G, k, nc + s), NULL, n->loc), AN_value, 0);
	struct ir_value *ops[3] = {irgen_opbuf(G, k, 0), &cond->v, &iter->v};
	ir_instr_create(G->irf, IK_loop, n->name, NULL, ops, 3, NULL, n->loc);
	/* the body's parameters: the iteration number, the condition, the
	 * carried values (the Loop's results hold them) */
	struct ir_value **params = xcalloc(2 + nc, sizeof *params);
	params[0] = &iter->v;
	params[1] = &cond->v;
	for (unsigned j = 0; j < nc; j++)
		params[2 + j] = irgen_resbuf(G, k, j);
	struct owner o = {G, k, &cond->v, &iter->v};
	irgen_region(G, body, params, loop_yield, &o);
	free(params);
	ir_instr_create(G->irf, IK_end, NULL, NULL, NULL, 0, NULL, n->loc);
	ir_dealloc(G->irf, iter, NULL, n->loc);
	ir_dealloc(G->irf, cond, NULL, n->loc);
}

const struct irgen_flow_gens irgen_flow_gens = {gen_if, gen_loop};
