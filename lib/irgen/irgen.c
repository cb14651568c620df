/* irgen.c - the irgen pass: one graph function -> one instruction IR
 * function of the same name (docs/glow-irgen.md).
 *
 * Requires: a verified function whose node list is an evaluation order
 * (the schedule pass leaves it so; otherwise the stable topological order
 * of the text is used). Produces a function the IR verifier accepts.
 *
 * Declare section: one weight per storage node the function uses, and per
 * placeholder no function uses (the module's signature), in module
 * order, named as the storage: placeholders become mutable weights without
 * initializer, constants constant weights with their initializer carried
 * over (dense bytes bit-exact, splat, zero, xavier with its seed, file with
 * its offset; a relative file path is rewritten when the output does not sit
 * beside the input).
 *
 * Program, node by node in list order (sgraph.h decides how each result is
 * stored, for this order):
 *   - an alloc right before the producer for every result stored in its
 *     own activation, named after the node: NAME.res for single-result
 *     kinds, NAME.<result name in lower case> otherwise (pool.result,
 *     pool.argmax, topk.values, topk.indices); TopK's working buffer is
 *     NAME.scratch, allocated and freed around it;
 *   - the node's instruction, named NAME: the kind of the same name in
 *     lower case, operands mapped by the Graph column of Instrs.def,
 *     attributes copied; Slice -> extracttensor; MaxPool -> maxpool, or
 *     maxpoolwithargmax when the Argmax result is used; SGD -> sgd, or
 *     sgdmomentum with momentum, whose velocity is the weight
 *     "<W>_velocity" (declared here when the function lacks it);
 *   - Reshape -> tensorview NAME of its input (zero offsets, no copy),
 *     unless the input is a placeholder the function writes: then the
 *     input is viewed (NAME.view) and copied into NAME.res (copy NAME), so
 *     later writes cannot show through;
 *   - Concat -> touch NAME of the result buffer, then one inserttensor per
 *     input at its offset along dim; InsertTensor -> copy NAME of Big into
 *     the result, then inserttensor of Small;
 *   - Save -> copy of the input into the placeholder's weight, or nothing
 *     when the producer already wrote its result straight into the weight
 *     (SV_DIRECT: the Save is the result's only use, the producer is not a
 *     view and does not read the placeholder, and nothing touches the
 *     placeholder between the two), or when the input is the weight itself;
 *   - predicates are dropped: the instruction IR has no predicate operand
 *     (GraphIR.md allows backends to ignore them);
 *   - a dealloc (unnamed) right after the last instruction that uses the
 *     activation, directly or through views; unused results right after
 *     their producer;
 *   - If and Loop -> blocks (irgen_flow.c), each region generated as a
 *     function is, in its list order, inside its block: a value of an
 *     enclosing scope it uses is that scope's buffer (the owner's plan
 *     keeps it live until the block ends), its parameters are the owner's
 *     buffers and its Yield writes the owner's results.
 */
#define _XOPEN_SOURCE 700
#include "graph/region.h"
#include "irgen/gen.h"
#include "support/io.h"
#include "support/util.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- names ---- */

/* (gen.h) */
const char *irgen_compose(struct gen *G, const char *base, const char *suffix)
{
	size_t bl = strlen(base), sl = strlen(suffix);
	G->name = xgrow(G->name, &G->namecap, bl + sl + 2, 1);
	memcpy(G->name, base, bl);
	G->name[bl] = '.';
	for (size_t i = 0; i < sl; i++) {
		char c = suffix[i];
		G->name[bl + 1 + i] = (char)(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
	}
	G->name[bl + 1 + sl] = '\0';
	return G->name;
}

static const char *result_name(struct gen *G, const struct node *n, unsigned r)
{
	const struct node_desc *nd = node_desc(n->kind);
	if (n->nres != nd->nres) { /* variadic results (If, Loop): res0, res1, ... */
		char suffix[24];
		snprintf(suffix, sizeof suffix, "res%u", r);
		return irgen_compose(G, n->name ? n->name : "t", suffix);
	}
	return irgen_compose(G, n->name ? n->name : "t", nd->nres == 1 ? "res" : nd->res_names[r]);
}

/* ---- weights ---- */

/* The path of a relative weight file as seen from the output's directory
 * (support/io.h path_rebase: unchanged when input and output share a
 * directory, else relative to the output's); malloc'd. */
static char *relocate(struct gen *G, const struct module *gm, const struct constant *c)
{
	char *r = path_rebase(c->file, gm->base_dir, G->im->base_dir);
	if (!r)
		diag_error(G->d, c->n.loc, "cannot locate weight file \"%s\" of constant @%s", c->file, c->n.name);
	return r;
}

static int make_weights(struct gen *G)
{
	struct module *gm = G->f->mod;
	G->w = arena_array(&G->g.arena, struct ir_weight *, G->g.nstorage ? G->g.nstorage : 1);
	module_for_each_global(gm, n) {
		void *v = u64map_get(&G->g.sidx, sg_ext_key(n, 0));
		if (!v) {
			/* A placeholder that no function reads or writes is still
			 * part of the module's signature (an ONNX graph input used
			 * only for its shape): declared, so callers bind it. */
			if (n->kind == NK_Placeholder && !node_has_uses(n)) {
				struct ir_weight *u = ir_weight_create(G->irf, n->name, node_type(n), false, n->loc);
				glow_assert(u != NULL);
			}
			continue;
		}
		uint32_t s = (uint32_t)((uintptr_t)v - 1);
		struct constant *c = as_constant(n);
		struct ir_weight *w = ir_weight_create(G->irf, n->name, node_type(n), c != NULL, n->loc);
		glow_assert(w != NULL);
		G->w[s] = w;
		if (!c)
			continue;
		switch (c->init) {
		case INIT_DENSE:
			if (type_bytes(node_type(n)) == 0) {
				w->init = INIT_DENSE;
			} else {
				const uint8_t *data = constant_data(gm, c, G->d);
				if (!data)
					return -1;
				ir_weight_set_data(G->im, w, data);
			}
			break;
		case INIT_SPLAT: ir_weight_set_splat(w, c->splat_f, c->splat_i); break;
		case INIT_ZERO: ir_weight_set_zero(w); break;
		case INIT_XAVIER: ir_weight_set_xavier(w, c->fan_in, c->seed); break;
		case INIT_FILE: {
			char *path = relocate(G, gm, c);
			if (!path)
				return -1;
			ir_weight_set_file(G->im, w, path, c->file_offset);
			free(path);
			break;
		}
		}
	}
	return 0;
}

/* ---- operands and attributes ---- */

struct ir_value *irgen_opbuf(struct gen *G, uint32_t k, unsigned i)
{
	int64_t ov = sg_op(&G->g, k, i);
	struct ir_value *b = sg_is_storage(ov) ? G->ext[sg_storage_of(ov)] : G->buf[ov];
	glow_assert(b != NULL);
	return b;
}

struct ir_value *irgen_resbuf(struct gen *G, uint32_t k, unsigned r)
{
	struct ir_value *b = G->buf[G->g.val_begin[k] + r];
	glow_assert(b != NULL);
	return b;
}

/* Attributes of n into in: the instruction's rows are the node's, in order. */
static void copy_attrs(struct gen *G, struct ir_instr *in, const struct node *n)
{
	const struct instr_desc *d = instr_desc(in->kind);
	const struct node_desc *nd = node_desc(n->kind);
	glow_assert(d->nattrs == nd->nattrs);
	for (unsigned i = 0; i < d->nattrs; i++) {
		const union attr_val *a = &n->attrs[i];
		enum attr_name name = d->attrs[i].an;
		switch (d->attrs[i].kind) {
		case AK_INT:
		case AK_BOOL:
		case AK_ENUM: in->attrs[i].i = a->i; break;
		case AK_FLOAT: in->attrs[i].f = a->f; break;
		case AK_INTS: ir_set_ints(G->im, in, name, a->ints.v, a->ints.n); break;
		case AK_FLOATS: ir_set_floats(G->im, in, name, a->floats.v, a->floats.n); break;
		case AK_STRING: ir_set_str(G->im, in, name, a->s ? a->s : ""); break;
		}
	}
}

struct ir_instr *irgen_emit(struct gen *G, unsigned kind, const char *name, struct ir_value *a, struct ir_value *b,
			   struct loc loc)
{
	struct ir_value *ops[2] = {a, b};
	return ir_instr_create(G->irf, kind, name, NULL, ops, b ? 2u : 1u, NULL, loc);
}

/* ---- node kinds ---- */

/* One instruction whose operands follow the Graph column of Instrs.def;
 * an operand that is neither a result nor an operand of the node is a
 * scratch buffer (TopK). */
static void gen_mapped(struct gen *G, uint32_t k, unsigned kind)
{
	const struct node *n = G->g.nodes[k];
	const struct instr_desc *d = instr_desc(kind);
	struct ir_value *ops[IR_MAX_OPS] = {0}; /* zeroed for gcc -O2, which cannot see the loop set each used slot */
	struct ir_instr *scratch = NULL;
	for (unsigned i = 0; i < d->nops; i++) {
		int r = -1, j = -1;
		for (unsigned x = 0; x < d->graph_nres; x++)
			if (d->graph_res[x] == (int)i)
				r = (int)x;
		for (unsigned x = 0; x < d->graph_nops; x++)
			if (d->graph_ops[x] == (int)i)
				j = (int)x;
		if (r >= 0) {
			ops[i] = irgen_resbuf(G, k, (unsigned)r);
		} else if (j >= 0) {
			ops[i] = irgen_opbuf(G, k, (unsigned)j);
		} else {
			glow_assert(d->op_quals[i] == IQ_SCRATCH && !scratch);
			/* scratch bytes in elements of the input's kind (element
			 * sizes divide 8, so the count is exact) */
			const struct type *src = op_type(n, 0);
			uint64_t es = elem_size((enum elem_kind)src->elem);
			uint64_t cnt = G->g.scratch[k] / es;
			const struct type *t = type_with_dims(G->im->types, src, &cnt, 1);
			scratch = ir_alloc(G->irf, irgen_compose(G, n->name, "scratch"), t, NULL, n->loc);
			ops[i] = &scratch->v;
		}
	}
	struct ir_instr *in = ir_instr_create(G->irf, kind, n->name, NULL, ops, d->nops, NULL, n->loc);
	copy_attrs(G, in, n);
	if (scratch)
		ir_dealloc(G->irf, scratch, NULL, n->loc);
}

static void gen_reshape(struct gen *G, uint32_t k)
{
	const struct node *n = G->g.nodes[k];
	uint32_t v = G->g.val_begin[k];
	struct ir_value *src = irgen_opbuf(G, k, 0);
	int64_t zeros[GLOW_MAX_RANK] = {0};
	if (G->p.kind[v] == SV_VIEW) {
		struct ir_instr *view = ir_tensorview(G->irf, n->name, node_type(n), src, zeros, src->type->rank,
						      NULL, n->loc);
		G->buf[v] = &view->v;
		return;
	}
	struct ir_instr *view = ir_tensorview(G->irf, irgen_compose(G, n->name, "view"), node_type(n), src, zeros,
					      src->type->rank, NULL, n->loc);
	irgen_emit(G, IK_copy, n->name, irgen_resbuf(G, k, 0), &view->v, n->loc);
}

static void gen_concat(struct gen *G, uint32_t k)
{
	const struct node *n = G->g.nodes[k];
	struct ir_value *dst = irgen_resbuf(G, k, 0);
	int64_t dim = node_int(n, AN_dim);
	unsigned rank = node_type(n)->rank;
	int64_t start[GLOW_MAX_RANK] = {0};
	irgen_emit(G, IK_touch, n->name, dst, NULL, n->loc);
	for (unsigned i = 0; i < n->nops; i++) {
		struct ir_instr *in = irgen_emit(G, IK_inserttensor, NULL, dst, irgen_opbuf(G, k, i), n->loc);
		ir_set_ints(G->im, in, AN_start, start, rank);
		start[dim] += (int64_t)op_type(n, i)->dims[dim];
	}
}

static void gen_insert(struct gen *G, uint32_t k)
{
	const struct node *n = G->g.nodes[k];
	struct ir_value *dst = irgen_resbuf(G, k, 0);
	irgen_emit(G, IK_copy, n->name, dst, irgen_opbuf(G, k, 0), n->loc);
	struct ir_instr *in = irgen_emit(G, IK_inserttensor, NULL, dst, irgen_opbuf(G, k, 1), n->loc);
	copy_attrs(G, in, n);
}

static void gen_save(struct gen *G, uint32_t k)
{
	const struct node *n = G->g.nodes[k];
	int64_t src = sg_op(&G->g, k, 0);
	if (!sg_is_storage(src) && G->p.kind[src] == SV_DIRECT)
		return; /* the producer wrote the weight */
	struct ir_value *s = irgen_opbuf(G, k, 0), *d = irgen_opbuf(G, k, 1);
	if (s != d)
		irgen_emit(G, IK_copy, NULL, d, s, n->loc);
}

/* Slice is the extracttensor instruction (the names differ). */
static void gen_slice(struct gen *G, uint32_t k)
{
	gen_mapped(G, k, IK_extracttensor);
}

/* MaxPool keeps its argmax only when something reads it */
static void gen_maxpool(struct gen *G, uint32_t k)
{
	gen_mapped(G, k, G->g.val_nuses[G->g.val_begin[k] + 1] ? IK_maxpoolwithargmax : IK_maxpool);
}

/* Whether v can be SGD's velocity of type t: a mutable weight of type t. */
static bool velocity_ok(struct ir_value *v, const struct type *t)
{
	return v->vkind == IV_WEIGHT && !ir_as_weight(v)->is_const && v->type == t;
}

/* SGD without momentum is the sgd instruction; with momentum it is
 * sgdmomentum, whose Velocity operand is the mutable weight
 * "<W>_velocity" (W the updated placeholder; else "<SGD's name>_velocity"),
 * the name the lowering rule gives its velocity placeholder
 * (lib/passes/lower-train.c), so a run carries the same state whole or
 * lowered. The weight is declared here unless the function already has it;
 * where the name is taken by something else (another type), the first
 * free "<name>.N" is declared, as the lowering rule's fresh name. */
static void gen_sgd(struct gen *G, uint32_t k)
{
	const struct node *n = G->g.nodes[k];
	if (node_float(n, AN_momentum) == 0) {
		gen_mapped(G, k, IK_sgd);
		return;
	}
	const struct node *w = op_val(n, 1).node;
	const struct type *t = node_type(n);
	char base[300], name[320];
	snprintf(base, sizeof base, "%.280s_velocity",
		 w->kind == NK_Placeholder ? w->name : n->name ? n->name : "sgd");
	snprintf(name, sizeof name, "%s", base);
	struct ir_value *vel = strmap_get(&G->irf->names, name);
	for (unsigned i = 1; vel && !velocity_ok(vel, t); i++) {
		snprintf(name, sizeof name, "%s.%u", base, i);
		vel = strmap_get(&G->irf->names, name);
	}
	if (!vel)
		vel = &ir_weight_create(G->irf, name, t, false, n->loc)->v;
	struct ir_value *ops[4] = {irgen_resbuf(G, k, 0), irgen_opbuf(G, k, 0), irgen_opbuf(G, k, 1), vel};
	struct ir_instr *in = ir_instr_create(G->irf, IK_sgdmomentum, n->name, NULL, ops, 4, NULL, n->loc);
	copy_attrs(G, in, n);
}

/* A region's parameter: its buffer is the owner's (gen_body). */
static void gen_param(struct gen *G, uint32_t k)
{
	(void)G;
	(void)k;
}

/* A region's Yield: what the owner does with the region's results. */
static void gen_yield(struct gen *G, uint32_t k) { G->yield(G, k, G->yield_arg); }

/* Builds node k's instructions. */
typedef void gen_fn(struct gen *G, uint32_t k);

/* The kinds built by hand, by node kind: every other kind becomes the
 * instruction of its own name (map_kinds), so only a kind whose
 * instructions differ from that gets a row here. */
static gen_fn *const hand_gen[NK_COUNT] = {
	[NK_Save] = gen_save,
	[NK_Reshape] = gen_reshape,
	[NK_Concat] = gen_concat,
	[NK_InsertTensor] = gen_insert,
	[NK_Slice] = gen_slice,
	[NK_MaxPool] = gen_maxpool,
	[NK_SGD] = gen_sgd,
	[NK_RegionArg] = gen_param,
	[NK_Yield] = gen_yield,
};

/* The generator by hand of node kind k (If and Loop: irgen_flow.c's),
 * NULL: k becomes the instruction of its own name. */
static gen_fn *hand_of(unsigned k)
{
	if (k == NK_If)
		return irgen_flow_gens.gen_if;
	if (k == NK_Loop)
		return irgen_flow_gens.gen_loop;
	return hand_gen[k];
}

/* Generates node k: its result buffers, then its instructions. */
static void gen_node(struct gen *G, uint32_t k)
{
	const struct node *n = G->g.nodes[k];
	/* result buffers */
	for (unsigned r = 0; r < n->nres; r++) {
		uint32_t v = G->g.val_begin[k] + r;
		switch (G->p.kind[v]) {
		case SV_ALLOC: {
			struct ir_instr *a = ir_alloc(G->irf, result_name(G, n, r), n->types[r], NULL, n->loc);
			G->buf[v] = &a->v;
			break;
		}
		case SV_DIRECT: {
			int64_t dst = sg_op(&G->g, G->g.val_user[v], 1);
			G->buf[v] = G->ext[sg_storage_of(dst)];
			break;
		}
		default: break; /* views are made by their node; SV_NONE has no buffer */
		}
	}
	gen_fn *hand = hand_of(n->kind);
	if (hand)
		hand(G, k);
	else {
		glow_assert(G->ikind[n->kind] >= 0);
		gen_mapped(G, k, (unsigned)G->ikind[n->kind]);
	}
}

/* node kind -> the instruction kind of the same name in lower case (a
 * backend-specific BACKEND.Kind: backend_kind) */
static void map_kinds(struct gen *G)
{
	for (unsigned k = 0; k < NK_COUNT; k++)
		G->ikind[k] = instr_kind_named_like(k);
}

/* Reports every node of f of a kind that has no instruction and that
 * gen_node does not build by hand (the training kinds without an
 * instruction, Dropout say, which glow-opt's lower stage turns into
 * forward kinds); the count. */
struct lowered_check {
	const struct gen *G;
	int bad;
};

static void check_node(struct func *scope, struct node *n, void *arg)
{
	(void)scope;
	struct lowered_check *c = arg;
	if (hand_of(n->kind) || c->G->ikind[n->kind] >= 0)
		return;
	if (n->kind == NK_Call || n->kind == NK_Fn) {
		/* issue 18: no backend executes calls */
		const char *callee = n->kind == NK_Call ? node_str(n, AN_callee) : NULL;
		diag_error(c->G->d, n->loc,
			   "%s %%%s%s%s: %s must be inlined before IRGen, no backend executes them (glow-opt "
			   "-passes=inline, or any -O level)",
			   node_kind_name(n->kind), n->name ? n->name : "", callee ? " of @" : "", callee ? callee : "",
			   n->kind == NK_Fn ? "function literals" : "calls");
		c->bad++;
		return;
	}
	diag_error(c->G->d, n->loc, "%s %%%s has no instruction: lower it first (glow-opt -O2 or -passes=lower)",
		   node_kind_name(n->kind), n->name ? n->name : "");
	c->bad++;
}

static int check_lowered(const struct gen *G, struct func *f)
{
	struct lowered_check c = {G, 0};
	func_walk_pre(f, check_node, &c);
	return c.bad;
}

/* Generates G->f (G->g built): the plan of its list order, a region's
 * parameters' buffers, then node by node with the deallocs of the
 * activations dying at each. */
static void gen_body(struct gen *G)
{
	uint32_t n = G->g.n;
	uint32_t *order = xmalloc((n ? n : 1) * sizeof(uint32_t));
	for (uint32_t t = 0; t < n; t++)
		order[t] = t; /* the numbering is the (stable) list order */
	sg_plan(&G->g, order, &G->p);
	free(order);
	G->buf = arena_array(&G->g.arena, struct ir_value *, G->g.nvals ? G->g.nvals : 1);
	if (G->params)
		for (unsigned i = 0; i < region_num_params(G->f); i++)
			G->buf[G->g.val_begin[sg_index(&G->g, region_param(G->f, i))]] = G->params[i];
	/* activations dying at each position, ascending */
	int64_t *head = xmalloc((n ? n : 1) * sizeof(int64_t));
	int64_t *next = xmalloc((G->g.nvals ? G->g.nvals : 1) * sizeof(int64_t));
	for (uint32_t t = 0; t < n; t++)
		head[t] = -1;
	for (uint32_t v = G->g.nvals; v-- > 0;) {
		if (G->p.kind[v] != SV_ALLOC)
			continue;
		next[v] = head[G->p.last[v]];
		head[G->p.last[v]] = v;
	}
	for (uint32_t t = 0; t < n; t++) {
		gen_node(G, t);
		for (int64_t v = head[t]; v >= 0; v = next[v])
			ir_dealloc(G->irf, ir_as_instr(G->buf[v]), NULL, G->g.nodes[t]->loc);
	}
	free(next);
	free(head);
}

/* The buffer of value (def, res) of a scope around P's region or P's own:
 * P's external value, or P's value. */
static struct ir_value *outer_buf(struct gen *P, const struct node *def, unsigned res)
{
	void *s = u64map_get(&P->g.sidx, sg_ext_key(def, res));
	if (s)
		return P->ext[(uintptr_t)s - 1];
	return P->buf[P->g.val_begin[sg_index(&P->g, def)] + res];
}

/* (gen.h) A generator of its own for the region, its externals resolved
 * in P's scope. */
void irgen_region(struct gen *P, struct func *r, struct ir_value *const *params, irgen_yield_fn *yield, void *arg)
{
	struct gen G = {.im = P->im, .irf = P->irf, .f = r, .d = P->d, .parent = P, .params = params,
			.yield = yield, .yield_arg = arg};
	memcpy(G.ikind, P->ikind, sizeof G.ikind);
	sg_build(&G.g, r);
	G.ext = arena_array(&G.g.arena, struct ir_value *, G.g.nstorage ? G.g.nstorage : 1);
	for (uint32_t s = 0; s < G.g.nstorage; s++)
		G.ext[s] = outer_buf(P, G.g.storage[s], G.g.storage_res[s]);
	gen_body(&G);
	free(G.name);
	sg_free(&G.g);
}

struct ir_func *irgen_func(struct ir_module *im, struct func *f, struct diag *d)
{
	if (func_has_sig(f)) {
		diag_error(d, f->loc,
			   "function @%s has a signature (parameters and results): it is only called and cannot be an "
			   "entry point; inline its calls and remove it (glow-opt -passes=inline, or "
			   "any -O level)",
			   f->name);
		return NULL;
	}
	struct ir_func *irf = ir_func_create(im, f->name, f->loc);
	if (!irf) {
		diag_error(d, f->loc, "function @%s is generated twice", f->name);
		return NULL;
	}
	struct gen G = {.im = im, .irf = irf, .f = f, .d = d};
	map_kinds(&G);
	if (check_lowered(&G, f))
		return NULL;
	sg_build(&G.g, f);
	int status = make_weights(&G);
	if (status == 0) {
		G.ext = arena_array(&G.g.arena, struct ir_value *, G.g.nstorage ? G.g.nstorage : 1);
		for (uint32_t s = 0; s < G.g.nstorage; s++)
			G.ext[s] = &G.w[s]->v;
		gen_body(&G);
	}
	free(G.name);
	sg_free(&G.g);
	return status == 0 ? irf : NULL;
}
