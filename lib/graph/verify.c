/* verify.c - the graph verifier: structure (operand counts, dangling and
 * cross-function uses, cycles, storage initializers), then each kind's type
 * rule from Nodes.def, run on the node seen as a typed operation
 * (typerules_op.h). Reports every problem; returns the error count.
 *
 * Design: membership and order are bits, not name look-ups or maps. Nodes
 * are checked in list order and get NODE_VDONE when checked; an operand
 * whose producer is done is a node of this function defined earlier. That is
 * every operand of parsed text and of passes that keep the list in
 * evaluation order, and then the graph is acyclic without a search. Only
 * when some producer is not done yet (later in the list, or not in the
 * function at all) does the verifier mark the whole list NODE_VOWN to tell
 * the two apart, and only then may there be a cycle: an iterative
 * depth-first search finds it with its state in the same bits (NODE_VDONE
 * cleared: visited, NODE_VGREY: on the stack). Storage of the module is
 * marked NODE_VGLOBAL. The checked nodes are recorded in an array so the
 * bits are cleared without a second walk down the list (a chain of cache
 * misses); all of them are clear again on return. */
#include "graph/graph.h"
#include "graph/initializer.h"
#include "graph/typerules.h"
#include "support/io.h"
#include "support/util.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Where problems go and how many there were. */
struct verifier {
	struct diag *d;
	int errors;
};

/* Reports an error at the node's location, prefixed with its kind and name. */
static void verr(struct verifier *v, const struct node *n, const char *fmt, ...) GLOW_PRINTF(3, 4);
static void verr(struct verifier *v, const struct node *n, const char *fmt, ...)
{
	char msg[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	top_report(v->d, n->loc, node_kind_name(n->kind), n->name, node_is_storage(n), msg);
	v->errors++;
}

/* Runs n's type rule on n seen as a typed operation (typerules_op.h). The
 * operands are copied into a buffer on the stack, or on the heap for the
 * rare node with more of them (a wide Concat). */
static void run_rule(struct verifier *v, const struct node *n, type_rule_fn rule)
{
	struct typed_operand small[8];
	struct typed_operand *ops = n->nops <= GLOW_ARRAY_SIZE(small) ? small : xmalloc(n->nops * sizeof(*ops));
	for (unsigned i = 0; i < n->nops; i++) {
		const struct node *def = n->ops[i].def;
		ops[i] = (struct typed_operand){def->types[n->ops[i].res], def->name, def->kind};
	}
	struct typed_op op = {n->kind, n->name, n->loc, n->nops, n->nres, ops, n->types, n->attrs, v->d, 0};
	rule(&op);
	v->errors += op.errors;
	if (ops != small)
		free(ops);
}

static void verify_storage(struct verifier *v, struct node *n)
{
	const struct type *t = node_type(n);
	if (!t) {
		verr(v, n, "has no type");
		return;
	}
	struct constant *c = as_constant(n);
	if (!c)
		return;
	struct init_spec spec = constant_init_spec(c);
	char msgs[INIT_PROBLEMS_MAX][INIT_PROBLEM_LEN];
	for (unsigned i = 0, np = init_verify(&spec, t, msgs); i < np; i++)
		verr(v, n, "%s", msgs[i]);
}

/* Structural checks of one node; returns 0 if the type rule may run. Sets
 * *late when an operand's producer comes later in the list. */
static int verify_structure(struct verifier *v, struct node *n, bool *late)
{
	const struct node_desc *d = node_desc(n->kind);
	int bad = 0;
	if (d->flags & NF_STORAGE) {
		verr(v, n, "storage kind inside a function");
		return 1;
	}
	if (d->variadic ? n->nops < d->nops : n->nops != d->nops) {
		verr(v, n, "expected %s%u operands, got %u", d->variadic ? "at least " : "", d->nops, n->nops);
		bad = 1;
	}
	if (n->nres != d->nres) {
		verr(v, n, "expected %u results, got %u", d->nres, n->nres);
		return 1;
	}
	for (unsigned r = 0; r < n->nres; r++)
		if (!n->types[r]) {
			verr(v, n, "result %u has no type", r);
			bad = 1;
		}
	unsigned slots = n->nops + (node_has_pred(n) ? 1u : 0u);
	for (unsigned i = 0; i < slots; i++) {
		struct node *def = n->ops[i].def;
		if (!def || (def->bits & NODE_ERASED)) {
			verr(v, n, "operand %u refers to an erased node", i);
			bad = 1;
			continue;
		}
		if (node_is_storage(def)) {
			if (!(def->bits & NODE_VGLOBAL)) {
				verr(v, n, "operand %u refers to storage outside the module", i);
				bad = 1;
			}
		} else if (!(def->bits & (NODE_VOWN | NODE_VDONE))) {
			verr(v, n, "operand %u refers to a node of another function", i);
			bad = 1;
		} else if (n->ops[i].res >= def->nres) {
			verr(v, n, "operand %u uses result %u of a node with %u results", i, n->ops[i].res, def->nres);
			bad = 1;
		} else if (!(def->bits & NODE_VDONE)) {
			*late = true;
		}
	}
	if (!bad && node_has_pred(n)) {
		const struct type *pt = op_type(n, n->nops);
		if (pt->elem != EK_BOOL || pt->rank > 1) {
			char b[128];
			verr(v, n, "predicate must be bool<> or bool<N>, got %s", type_str(pt, b, sizeof b));
			bad = 1;
		}
	}
	return bad;
}

/* Depth-first search for a cycle among the function's nodes (iterative),
 * roots in list order. Runs after the structural checks passed, so every
 * node carries NODE_VDONE (unvisited) and every operand is owned. */
static int find_cycle(struct verifier *v, struct func *f)
{
	int cycles = 0;
	size_t cap = 0, sp = 0;
	struct frame { struct node *n; unsigned i; } *stack = NULL;
	func_for_each(f, root) {
		if (!(root->bits & NODE_VDONE))
			continue;
		stack = xgrow(stack, &cap, sp + 1, sizeof(*stack));
		stack[sp++] = (struct frame){root, 0};
		root->bits = (uint8_t)((root->bits & ~NODE_VDONE) | NODE_VGREY);
		while (sp) {
			struct frame *fr = &stack[sp - 1];
			unsigned slots = fr->n->nops + (node_has_pred(fr->n) ? 1u : 0u);
			if (fr->i == slots) {
				fr->n->bits &= (uint8_t)~NODE_VGREY;
				sp--;
				continue;
			}
			struct node *def = fr->n->ops[fr->i++].def;
			if (!def || node_is_storage(def))
				continue;
			if (def->bits & NODE_VGREY) {
				if (!cycles)
					verr(v, def, "is part of a cycle");
				cycles++;
			} else if (def->bits & NODE_VDONE) {
				stack = xgrow(stack, &cap, sp + 1, sizeof(*stack));
				stack[sp++] = (struct frame){def, 0};
				def->bits = (uint8_t)((def->bits & ~NODE_VDONE) | NODE_VGREY);
			}
		}
	}
	free(stack);
	return cycles;
}

static void mark_globals(struct module *m, bool on)
{
	module_for_each_global(m, n) {
		if (on)
			n->bits |= NODE_VGLOBAL;
		else
			n->bits &= (uint8_t)~NODE_VGLOBAL;
	}
}

/* An operand of n (not storage, not erased) whose producer is not done. */
static bool has_pending_operand(const struct node *n)
{
	unsigned slots = n->nops + (node_has_pred(n) ? 1u : 0u);
	for (unsigned i = 0; i < slots; i++) {
		const struct node *def = n->ops[i].def;
		if (def && !(def->bits & (NODE_VDONE | NODE_ERASED)) && !node_is_storage(def))
			return true;
	}
	return false;
}

/* The checks of one function; storage is marked NODE_VGLOBAL. */
static int verify_func(struct verifier *v, struct func *f)
{
	size_t cap = f->nnodes ? f->nnodes : 1, len = 0;
	struct node **checked = xmalloc(cap * sizeof(*checked));
	bool owned = false;
	int structural = 0;
	bool late = false;
	func_for_each(f, n) {
		if (!owned && has_pending_operand(n)) {
			func_for_each(f, m) m->bits |= NODE_VOWN;
			owned = true;
		}
		int bad = verify_structure(v, n, &late);
		n->bits |= NODE_VDONE;
		if (len == cap)
			checked = xgrow(checked, &cap, len + 1, sizeof(*checked));
		checked[len++] = n;
		if (bad) {
			structural = 1;
			continue;
		}
		if (node_desc(n->kind)->rule)
			run_rule(v, n, node_desc(n->kind)->rule);
	}
	if (!structural && late)
		find_cycle(v, f);
	for (size_t i = 0; i < len; i++)
		checked[i]->bits &= (uint8_t)~(NODE_VOWN | NODE_VDONE | NODE_VGREY);
	free(checked);
	return v->errors;
}

int func_verify(struct func *f, struct diag *d)
{
	struct verifier v = {d, 0};
	mark_globals(f->mod, true);
	verify_func(&v, f);
	mark_globals(f->mod, false);
	return v.errors;
}

int module_verify(struct module *m, struct diag *d)
{
	struct verifier v = {d, 0};
	module_for_each_global(m, n)
		verify_storage(&v, n);
	int errors = v.errors;
	mark_globals(m, true);
	for (size_t i = 0; i < m->nfuncs; i++) {
		struct verifier fv = {d, 0};
		errors += verify_func(&fv, m->funcs[i]);
	}
	mark_globals(m, false);
	return errors;
}
