/* interp.c - the interpreter backend: compile places buffers and resolves
 * operands, run executes the program.
 *
 * Placement. With a recorded memory plan, three regions are allocated
 * (constant, mutable, activations, each aligned to max(alignment, 64)) and
 * every weight and alloc sits at its recorded offset, so activations share
 * memory exactly as planned. Without one, every weight and every alloc gets
 * its own zeroed block. Either way a tensorview is its root buffer's
 * address plus the view's byte offset, so every operand of every
 * instruction is a fixed address, resolved once at compile time.
 *
 * Weights. Constant weights are filled at compile time. Mutable weights are
 * reset at the start of every run: an input to its binding, any other to
 * its initializer or to zeros (quantized kinds: their offset), by the
 * placeholders of backends/backend.c, as on OpenCL devices. Bindings of
 * outputs receive their values after the run.
 */
#define _POSIX_C_SOURCE 200809L
#include "backends/interpreter/flow.h"
#include "backends/interpreter/kern.h"
#include "support/hashmap.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

struct step {
	const struct ir_instr *in;
	struct interp_arg ops[IR_MAX_OPS];
};

struct backend_compiled {
	struct ir_func *f;
	uint8_t *regions[3];     /* with a plan: constant, mutable, activations */
	uint8_t **blocks;        /* without a plan: one per weight and alloc */
	size_t nblocks;
	struct u64map base;      /* weight or alloc -> its address + 1 (non-NULL) */
	struct step *steps;
	size_t nsteps;
	struct interp_flow flow; /* the steps' blocks (flow.h) */
	struct backend_placeholders ph; /* what each run starts the mutable weights from */
};

static uint8_t *addr_of(struct backend_compiled *c, const struct ir_value *root)
{
	void *p = u64map_get(&c->base, (uint64_t)(uintptr_t)root);
	return p ? (uint8_t *)p - 1 : NULL;
}

static void set_addr(struct backend_compiled *c, const struct ir_value *root, uint8_t *p)
{
	u64map_put(&c->base, (uint64_t)(uintptr_t)root, p + 1);
}

static void interp_destroy(struct backend_compiled *c)
{
	if (!c)
		return;
	for (unsigned i = 0; i < 3; i++)
		free(c->regions[i]);
	for (size_t i = 0; i < c->nblocks; i++)
		free(c->blocks[i]);
	free(c->blocks);
	u64map_free(&c->base);
	free(c->steps);
	interp_flow_free(&c->flow);
	backend_placeholders_free(&c->ph);
	free(c);
}

/* A zeroed region of size bytes aligned to max(align, 64), or NULL when
 * the allocation fails (or its rounded size does not fit a size_t). */
static uint8_t *region_alloc(uint64_t size, uint64_t align)
{
	if (align < 64)
		align = 64;
	if (size > SIZE_MAX - align)
		return NULL;
	size_t sz = (size_t)((size + align - 1) / align * align);
	if (!sz)
		sz = (size_t)align;
	uint8_t *p = aligned_alloc((size_t)align, sz);
	if (p) {
		glow_big_pages(p, sz);
		memset(p, 0, sz);
	}
	return p;
}

/* A zeroed block for one buffer of type t, or NULL after reporting: the
 * size comes from the program, so failing is the user's problem to hear
 * about, not a crash. */
static uint8_t *block_alloc(struct backend_compiled *c, const struct ir_value *v, struct diag *d)
{
	uint64_t n = type_bytes(v->type);
	uint8_t *p = n <= SIZE_MAX - 8 ? calloc((size_t)n + 8, 1) : NULL;
	glow_big_pages(p, (size_t)n);
	if (!p) {
		diag_error(d, v->loc, "cannot allocate buffer %%%s of @%s: %" PRIu64 " bytes", v->name ? v->name : "",
			   c->f->name, n);
		return NULL;
	}
	c->blocks = xrealloc(c->blocks, (c->nblocks + 1) * sizeof *c->blocks);
	c->blocks[c->nblocks++] = p;
	return p;
}

static int place(struct backend_compiled *c, const struct backend_options *o, struct diag *d)
{
	struct ir_func *f = c->f;
	const struct ir_plan *p = &f->plan;
	bool plan = p->present && !(o && o->ignore_plan);
	if (plan) {
		c->regions[0] = region_alloc(p->constant_size, p->alignment);
		c->regions[1] = c->regions[0] ? region_alloc(p->mutable_size, p->alignment) : NULL;
		c->regions[2] = c->regions[1] ? region_alloc(p->activations_size, p->alignment) : NULL;
		if (!c->regions[2]) {
			/* the total as the user compares it with the machine's
			 * memory; sizes are any 64-bit numbers, so saturate */
			uint64_t total = p->constant_size;
			total = total > UINT64_MAX - p->mutable_size ? UINT64_MAX : total + p->mutable_size;
			total = total > UINT64_MAX - p->activations_size ? UINT64_MAX : total + p->activations_size;
			diag_error(d, p->loc,
				   "cannot allocate the memory plan of @%s: %s%" PRIu64 " bytes (constants %" PRIu64
				   ", mutable %" PRIu64 ", activations %" PRIu64 ")",
				   f->name, total == UINT64_MAX ? "over " : "", total, p->constant_size,
				   p->mutable_size, p->activations_size);
			return -1;
		}
	}
	ir_for_each_weight(f, w) {
		uint8_t *a = plan ? c->regions[w->is_const ? 0 : 1] + w->offset : block_alloc(c, &w->v, d);
		if (!a)
			return -1;
		set_addr(c, &w->v, a);
	}
	ir_for_each_instr(f, in) {
		if (in->kind != IK_alloc)
			continue;
		uint8_t *a = plan ? c->regions[2] + in->offset : block_alloc(c, &in->v, d);
		if (!a)
			return -1;
		set_addr(c, &in->v, a);
	}
	return 0;
}

/* Fills the constant weights, then snapshots the placeholders' initializers
 * (backend.c, as every backend does): a constant that cannot be filled is
 * reported before a placeholder, in declaration order within each. */
static int init_weights(struct backend_compiled *c, struct diag *d)
{
	struct ir_func *f = c->f;
	ir_for_each_weight(f, w)
		if (w->is_const && interp_weight_init(f->mod, w, addr_of(c, &w->v), d))
			return -1;
	return backend_placeholders_init(&c->ph, f, d);
}

static struct backend_compiled *interp_compile(const struct backend *b, struct ir_func *f,
					       const struct backend_options *o, struct diag *d)
{
	(void)b;
	struct backend_compiled *c = xcalloc(1, sizeof *c);
	c->f = f;
	u64map_init(&c->base);
	bool ok = true;
	ir_for_each_instr(f, in) {
		const struct type *types[IR_MAX_OPS];
		for (unsigned i = 0; i < in->nops; i++)
			types[i] = in->ops[i].val->type;
		if (!interp_supports(in->kind, types, in->nops)) {
			diag_error(d, in->v.loc, "the interpreter does not support %s", instr_kind_name(in->kind));
			ok = false;
		}
	}
	if (!ok || place(c, o, d) || init_weights(c, d)) {
		interp_destroy(c);
		return NULL;
	}
	c->steps = xcalloc(f->ninstrs + 1, sizeof *c->steps);
	interp_flow_init(&c->flow, f->ninstrs);
	ir_for_each_instr(f, in) {
		if (in->kind == IK_alloc || in->kind == IK_dealloc || in->kind == IK_tensorview)
			continue;
		struct step *s = &c->steps[c->nsteps++];
		s->in = in;
		for (unsigned i = 0; i < in->nops; i++) {
			uint64_t off = 0;
			struct ir_value *root = ir_value_root(in->ops[i].val, &off);
			uint8_t *base = root ? addr_of(c, root) : NULL;
			if (!base)
				unreachable("operand without a buffer after verification");
			s->ops[i].t = in->ops[i].val->type;
			s->ops[i].p = base + off;
		}
		interp_flow_add(&c->flow, c->nsteps - 1, in);
	}
	return c;
}

static int interp_run(struct backend_compiled *c, const struct backend_binding *binds, size_t nbinds,
		      struct diag *d)
{
	for (size_t i = 0; i < c->ph.n; i++)
		if (backend_placeholder_fill(&c->ph, i, c->f, binds, nbinds, addr_of(c, &c->ph.w[i]->v), d))
			return -1;
	char err[256];
	for (size_t i = 0; i < c->nsteps; i++) {
		const struct step *s = &c->steps[i];
		while (instr_is_block(s->in->kind)) { /* blocks: flow.h */
			i = interp_flow_next(&c->flow, i, s->in, s->ops);
			if (i >= c->nsteps)
				break;
			s = &c->steps[i];
		}
		if (i >= c->nsteps)
			break;
		err[0] = 0;
		/* compile has checked that every kind has a kernel */
		if (interp_exec(s->in->kind, s->ops, s->in->attrs, err, sizeof err)) {
			diag_error(d, s->in->v.loc, "%s: %s", instr_kind_name(s->in->kind), err);
			return -1;
		}
	}
	for (size_t j = 0; j < nbinds; j++)
		if (!binds[j].w->is_const)
			memcpy(binds[j].data, addr_of(c, &binds[j].w->v), (size_t)type_bytes(binds[j].w->v.type));
	return 0;
}

/* ---- the graph side ---- */

static bool interp_is_op_supported(const struct backend *b, unsigned kind, const enum elem_kind *elems,
				   unsigned nelems)
{
	(void)b;
	(void)elems;
	(void)nelems;
	/* every node kind but the storage kinds reaches an instruction */
	return kind < NK_COUNT && kind != NK_Placeholder && kind != NK_Constant;
}

/* The interpreter executes every node kind directly: nothing is lowered. */
static bool interp_should_lower(const struct backend *b, const struct node *n)
{
	(void)b;
	(void)n;
	return false;
}

static int interp_post_lowering(const struct backend *b, struct func *f, struct diag *d)
{
	(void)b;
	(void)f;
	(void)d;
	return 0;
}

const struct backend interp_backend = {
	"interpreter",	      interp_is_op_supported, backend_node_supported_with_blocks, interp_should_lower,
	interp_post_lowering, interp_compile,	      interp_run,		interp_destroy,
	{NULL, NULL, NULL, NULL},
};
