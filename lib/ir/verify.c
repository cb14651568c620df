/* verify.c - the instruction IR verifier.
 *
 * Per function, in one walk over the program:
 *   - structure: operand counts, operands that are buffers of this function,
 *     qualifiers as the kind's table row says;
 *   - lifetimes: every activation used between its alloc and its dealloc,
 *     each alloc deallocated exactly once, views defined before use;
 *   - no write (@out, @inout) to a constant weight, directly or through a
 *     view;
 *   - aliasing: a written operand may share memory with another operand only
 *     if the pair is in-place in the table, and then exactly;
 *   - the type rule (the graph kind's, then the instruction's own).
 *   - blocks: nesting, scope, alloc and dealloc in one block
 *     (verify_blocks.c);
 * Then the weights' initializers and, when one is recorded, the memory plan:
 * offsets aligned, buffers inside their region, weights of one region
 * disjoint, simultaneously live activations disjoint.
 * A valid function costs no name lookups: the verifier marks the function's
 * weights, and its instructions as it walks them (mark fields, cleared at
 * the end), so "is an operand a buffer of this function" is a bit test (see
 * is_member); each alloc's and view's lifetime state is in the same field.
 * Two walks over the program: the checks, then the allocs never
 * deallocated (clearing the marks). */
#include "ir/ir.h"
#include "ir/rules.h"
#include "support/io.h"
#include "support/vec.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A walk that does little per instruction waits on memory for each `next`:
 * instructions are allocated in program order, mostly one after the other
 * in the arena, so the ones a few hundred bytes ahead come soon. A hint. */
static inline void prefetch_ahead(const struct ir_instr *in)
{
#if defined(__GNUC__)
	__builtin_prefetch((const char *)in + 1024);
#else
	(void)in;
#endif
}

/* mark of an instruction: ST_MEMBER | lifetime state (| an alloc's or
 * view's block number, verify_blocks.c); of a weight: ST_MEMBER */
enum { ST_UNSEEN = 0, ST_LIVE = 1, ST_DEAD = 2, ST_STATE = IR_VERIFY_STATE, ST_MEMBER = IR_VERIFY_MEMBER };

/* val is a buffer of the function being verified. Weights are marked
 * before the walk, instructions as the walk reaches them, so in a valid
 * function every operand is marked; an unmarked one (defined later, or
 * elsewhere) is looked up by name, which only errors pay for. */
static bool is_member(struct ir_verifier *v, const struct ir_value *val)
{
	if (val->vkind == IV_WEIGHT) {
		if (((const struct ir_weight *)(const void *)val)->mark == ST_MEMBER)
			return true;
	} else {
		const struct ir_instr *def = (const struct ir_instr *)(const void *)val;
		if (def->bits & IR_ERASED)
			return false;
		if (def->mark & ST_MEMBER)
			return true;
	}
	return ir_func_find(v->f, val->name, strlen(val->name)) == val;
}

static void werr(struct ir_verifier *v, const struct ir_weight *w, const char *fmt, ...) GLOW_PRINTF(3, 4);
static void werr(struct ir_verifier *v, const struct ir_weight *w, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	ir_vreport(v, w->v.loc, "weight", w->v.name, fmt, ap);
	va_end(ap);
}

static void verify_weight(struct ir_verifier *v, const struct ir_weight *w)
{
	if (w->init == IR_INIT_NONE) {
		if (w->is_const)
			werr(v, w, "a constant weight needs an initializer");
		return;
	}
	struct init_spec spec = INIT_SPEC_OF(w, w->init);
	char msgs[INIT_PROBLEMS_MAX][INIT_PROBLEM_LEN];
	for (unsigned i = 0, np = init_verify(&spec, w->v.type, msgs); i < np; i++)
		werr(v, w, "%s", msgs[i]);
}

/* Structure of one instruction; returns 0 if its operands may be examined. */
static int verify_structure(struct ir_verifier *v, const struct ir_instr *in)
{
	if (in->kind >= IK_COUNT) {
		ir_verr(v, in, "bad instruction kind");
		return 1;
	}
	const struct instr_desc *d = instr_desc(in->kind);
	if (in->nops != d->nops) {
		ir_verr(v, in, "expected %u operands, got %u", d->nops, in->nops);
		return 1;
	}
	if (!(d->flags & IF_TYPED) != !in->v.type) {
		ir_verr(v, in, "%s", in->v.type ? "has a type but defines no buffer" : "has no type");
		return 1;
	}
	int bad = 0;
	for (unsigned i = 0; i < in->nops; i++) {
		struct ir_value *val = in->ops[i].val;
		if (!val || !ir_value_is_buffer(val) || !val->name || !is_member(v, val)) {
			ir_verr(v, in, "operand %u (%s) is not a buffer of this function", i, d->op_names[i]);
			bad = 1;
			continue;
		}
		unsigned want = ir_qual_written(d->op_quals[i]);
		if (in->ops[i].qual != want) {
			char b[128];
			ir_verr(v, in, "operand %u (%s) %s must be @%s, not @%s", i, d->op_names[i],
				ir_vname(val, b, sizeof b), ir_qual_name(want), ir_qual_name(in->ops[i].qual));
		}
	}
	return bad;
}

static bool writes(unsigned q) { return q == IQ_OUT || q == IQ_INOUT || q == IQ_SCRATCH; }

/* Lifetimes, constant weights; updates the alloc/view states. */
static void verify_uses(struct ir_verifier *v, struct ir_instr *in)
{
	const struct instr_desc *d = instr_desc(in->kind);
	char b[128], c[128];
	for (unsigned i = 0; i < in->nops; i++) {
		struct ir_value *val = in->ops[i].val;
		struct ir_instr *vi = ir_as_instr(val);
		if (vi && vi->kind == IK_tensorview && (vi->mark & ST_STATE) != ST_LIVE) {
			ir_verr(v, in, "uses view %s before its definition", ir_vname(val, b, sizeof b));
			continue;
		}
		struct ir_value *root = ir_value_root(val, NULL);
		if (!root)
			continue;
		struct ir_instr *ra = ir_as_instr(root);
		if (ra) {
			if (in->kind == IK_dealloc)
				continue; /* checked below */
			if ((ra->mark & ST_STATE) == ST_UNSEEN)
				ir_verr(v, in, "uses %s before its alloc", ir_vname(root, b, sizeof b));
			else if ((ra->mark & ST_STATE) == ST_DEAD)
				ir_verr(v, in, "uses %s after its dealloc", ir_vname(root, b, sizeof b));
		} else if (ir_as_weight(root)->is_const && writes(d->op_quals[i])) {
			if (root == val)
				ir_verr(v, in, "writes to constant weight %s", ir_vname(root, b, sizeof b));
			else
				ir_verr(v, in, "writes to constant weight %s through view %s", ir_vname(root, b, sizeof b),
					ir_vname(val, c, sizeof c));
		}
	}
	if (in->kind == IK_alloc || in->kind == IK_tensorview) {
		in->mark = (in->mark & ~(uint32_t)ST_STATE) | ST_LIVE;
	} else if (in->kind == IK_dealloc) {
		struct ir_value *val = in->ops[0].val;
		struct ir_instr *a = ir_as_instr(val);
		if (!a || a->kind != IK_alloc) {
			ir_verr(v, in, "%s is not an alloc", ir_vname(val, b, sizeof b));
			return;
		}
		if ((a->mark & ST_STATE) == ST_UNSEEN)
			ir_verr(v, in, "deallocates %s before its alloc", ir_vname(val, b, sizeof b));
		else if ((a->mark & ST_STATE) == ST_DEAD)
			ir_verr(v, in, "deallocates %s a second time", ir_vname(val, b, sizeof b));
		a->mark = (a->mark & ~(uint32_t)ST_STATE) | ST_DEAD;
	}
}

/* Aliasing between a written operand and any other operand. */
static void verify_aliasing(struct ir_verifier *v, const struct ir_instr *in)
{
	const struct instr_desc *d = instr_desc(in->kind);
	if (in->kind == IK_dealloc || in->kind == IK_tensorview)
		return;
	for (unsigned i = 0; i < in->nops; i++) {
		if (!writes(d->op_quals[i]))
			continue;
		uint64_t oi, oj;
		struct ir_value *ri = ir_value_root(in->ops[i].val, &oi);
		uint64_t li = type_bytes(in->ops[i].val->type);
		for (unsigned j = 0; j < in->nops; j++) {
			if (j == i || (j < i && writes(d->op_quals[j])))
				continue;
			struct ir_value *rj = ir_value_root(in->ops[j].val, &oj);
			uint64_t lj = type_bytes(in->ops[j].val->type);
			if (!ri || ri != rj || li == 0 || lj == 0 || oi >= oj + lj || oj >= oi + li)
				continue;
			char b[128];
			if (!instr_inplace_ok(in->kind, i, j))
				ir_verr(v, in, "operands %s and %s share memory of %s, but %s cannot work in place",
					d->op_names[i], d->op_names[j], ir_vname(ri, b, sizeof b), d->name);
			else if (oi != oj || li != lj)
				ir_verr(v, in, "in-place operands %s and %s overlap only partly in %s", d->op_names[i],
					d->op_names[j], ir_vname(ri, b, sizeof b));
		}
	}
}

/* ---- the memory plan ---- */

static int cmp_weight_offset(const void *a, const void *b)
{
	const struct ir_weight *x = *(const struct ir_weight *const *)a, *y = *(const struct ir_weight *const *)b;
	return x->offset < y->offset ? -1 : x->offset > y->offset;
}

/* offset is aligned and [offset, offset + bytes) lies in a region of `size` */
static bool plan_place_ok(const struct ir_plan *p, int64_t offset, uint64_t bytes, uint64_t size, const char **why)
{
	if (p->alignment && (uint64_t)offset % p->alignment) {
		*why = "is not aligned";
		return false;
	}
	if ((uint64_t)offset > size || bytes > size - (uint64_t)offset) {
		*why = "does not fit in its region";
		return false;
	}
	return true;
}

/* planned: some alloc has an offset (the walk over the program saw it) */
static void verify_plan(struct ir_verifier *v, struct ir_func *f, bool planned)
{
	const struct ir_plan *p = &f->plan;
	if (!p->present) {
		ir_for_each_weight(f, w)
			if (w->offset >= 0)
				werr(v, w, "has a memory offset but the function has no memory plan");
		if (!planned)
			return;
		ir_for_each_instr(f, in)
			if (in->kind == IK_alloc && in->offset >= 0)
				ir_verr(v, in, "has a memory offset but the function has no memory plan");
		return;
	}
	bool align_ok = p->alignment && !(p->alignment & (p->alignment - 1));
	if (!align_ok) {
		diag_error(v->d, p->loc, "memory plan of @%s: alignment %" PRIu64 " is not a power of two", f->name,
			   p->alignment);
		v->errors++;
	}
	struct ir_plan q = *p;
	if (!align_ok)
		q.alignment = 0;
	/* weights: placed, disjoint within each region */
	VEC(struct ir_weight *) ws = {0};
	ir_for_each_weight(f, w) {
		const char *why;
		uint64_t bytes = type_bytes(w->v.type);
		if (w->offset < 0) {
			werr(v, w, "has no offset in the memory plan");
			continue;
		}
		if (!plan_place_ok(&q, w->offset, bytes, w->is_const ? p->constant_size : p->mutable_size, &why)) {
			werr(v, w, "offset %" PRId64 " (%" PRIu64 " bytes) %s (%s region of %" PRIu64 " bytes, alignment %" PRIu64 ")",
			     w->offset, bytes, why, w->is_const ? "constant" : "mutable",
			     w->is_const ? p->constant_size : p->mutable_size, p->alignment);
			continue;
		}
		if (bytes)
			vec_push(&ws, w);
	}
	if (ws.len)
		qsort(ws.data, ws.len, sizeof(*ws.data), cmp_weight_offset);
	for (int cls = 0; cls < 2; cls++) {
		const struct ir_weight *prev = NULL;
		for (size_t i = 0; i < ws.len; i++) {
			const struct ir_weight *w = ws.data[i];
			if (w->is_const != (cls == 1))
				continue;
			if (prev && (uint64_t)prev->offset + type_bytes(prev->v.type) > (uint64_t)w->offset) {
				char b[128];
				werr(v, w, "overlaps weight %s in the %s region", ir_vname(&prev->v, b, sizeof b),
				     cls ? "constant" : "mutable");
			}
			if (!prev || (uint64_t)w->offset + type_bytes(w->v.type) >
					     (uint64_t)prev->offset + type_bytes(prev->v.type))
				prev = w;
		}
	}
	vec_free(&ws);
	/* activations: placed, disjoint while live */
	VEC(struct ir_instr *) live = {0};
	ir_for_each_instr(f, in) {
		if (in->kind == IK_alloc) {
			const char *why;
			uint64_t bytes = type_bytes(in->v.type);
			if (in->offset < 0) {
				ir_verr(v, in, "has no offset in the memory plan");
				continue;
			}
			if (!plan_place_ok(&q, in->offset, bytes, p->activations_size, &why)) {
				ir_verr(v, in, "offset %" PRId64 " (%" PRIu64 " bytes) %s (activations region of %" PRIu64
					" bytes, alignment %" PRIu64 ")", in->offset, bytes, why, p->activations_size,
					p->alignment);
				continue;
			}
			for (size_t i = 0; bytes && i < live.len; i++) {
				const struct ir_instr *o = live.data[i];
				uint64_t ob = type_bytes(o->v.type);
				if ((uint64_t)in->offset < (uint64_t)o->offset + ob &&
				    (uint64_t)o->offset < (uint64_t)in->offset + bytes) {
					char b[128];
					ir_verr(v, in, "overlaps %s, which is live, in the activations region",
						ir_vname(&o->v, b, sizeof b));
				}
			}
			if (bytes)
				vec_push(&live, in);
		} else if (in->kind == IK_dealloc && in->nops == 1) {
			for (size_t i = 0; i < live.len; i++)
				if (&live.data[i]->v == in->ops[0].val) {
					live.data[i] = vec_last(&live);
					live.len--;
					break;
				}
		}
	}
	vec_free(&live);
}

int ir_func_verify(struct ir_func *f, struct diag *d)
{
	struct ir_verifier v = {d, f, 0};
	ir_for_each_weight(f, w) {
		verify_weight(&v, w);
		w->mark = ST_MEMBER;
	}
	bool structural = false;
	struct ir_block_check bc;
	ir_verify_blocks_init(&bc);
	ir_for_each_instr(f, in) {
		in->mark = ST_MEMBER | ST_UNSEEN;
		if (verify_structure(&v, in)) {
			structural = true;
			continue;
		}
		verify_uses(&v, in);
		ir_verify_blocks_step(&v, &bc, in, ST_LIVE);
		verify_aliasing(&v, in);
		ir_rule_graph(&v, in);
		instr_desc(in->kind)->rule(&v, in);
	}
	ir_verify_blocks_finish(&v, &bc);
	bool planned = false; /* an alloc has an offset */
	ir_for_each_instr(f, in) {
		prefetch_ahead(in);
		if (in->kind == IK_alloc) {
			if ((in->mark & ST_STATE) == ST_LIVE)
				ir_verr(&v, in, "is never deallocated");
			planned |= in->offset >= 0;
		}
		in->mark = 0;
	}
	ir_for_each_weight(f, w)
		w->mark = 0;
	if (!structural)
		verify_plan(&v, f, planned);
	return v.errors;
}

int ir_module_verify(struct ir_module *m, struct diag *d)
{
	int errors = 0;
	for (size_t i = 0; i < m->nfuncs; i++)
		errors += ir_func_verify(m->funcs[i], d);
	return errors;
}
