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
 * misses); all of them are clear again on return.
 *
 * Regions (graph/region.h) are checked where their owner is, in the
 * owner's list position: the nodes of the enclosing scopes done by then are
 * exactly the values a region may use, so scope is the same bit. A region's
 * own list must be in evaluation order (no late operands): a producer that
 * is not done is out of scope. Its nodes lose NODE_VDONE when the region
 * has been checked, so nothing after it sees them. */
#include "graph/graph.h"
#include "graph/initializer.h"
#include "graph/region.h"
#include "graph/typerules.h"
#include "support/io.h"
#include "support/util.h"
#include "support/vec.h"

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
 * *late when an operand's producer comes later in the list (region false:
 * in a region that is an error, the producer being out of scope). */
static int verify_structure(struct verifier *v, struct node *n, bool *late, bool region)
{
	const struct node_desc *d = node_desc(n->kind);
	int bad = 0;
	if (d->flags & NF_STORAGE) {
		verr(v, n, "storage kind inside a function");
		return 1;
	}
	if (!node_desc_ops_ok(d, n->nops)) {
		verr(v, n, "expected %s%u operands, got %u", d->variadic ? "at least " : "", node_desc_min_ops(d),
		     n->nops);
		bad = 1;
	}
	if (!node_desc_res_ok(d, n->nres)) {
		verr(v, n, "expected %s%u results, got %u", d->res_variadic ? "at least " : "", d->nres, n->nres);
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
		} else if (region && !(def->bits & NODE_VDONE)) {
			verr(v, n, "operand %u: %%%s is not in scope here (not defined before this node in its region or "
				   "before the region's owner in an enclosing scope)", i, def->name ? def->name : "");
			bad = 1;
		} else if (!(def->bits & (NODE_VOWN | NODE_VDONE))) {
			verr(v, n, "operand %u refers to a node of another function, or of a region out of scope", i);
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

static void verify_regions(struct verifier *v, struct node *n);
static void verify_call(struct verifier *v, struct func *scope, struct node *n);

/* Where RegionArg and Yield may stand, and what a block may hold (a
 * region or a module function with a signature): its parameters first,
 * one Yield last, nothing with side effects. */
static int verify_placement(struct verifier *v, struct func *f, struct node *n)
{
	bool region = func_is_region(f), block = func_is_block(f);
	if (n->kind == NK_RegionArg && (!block || (n->prev && n->prev->kind != NK_RegionArg))) {
		verr(v, n, "%s", !block ? "is outside a region" : region ? "a region's parameters must come first"
									 : "a function's parameters must come first");
		return 1;
	}
	if (n->kind == NK_Yield && (!block || n->next)) {
		verr(v, n, "%s", !block ? "is outside a region" : region ? "must be the last node of its region"
									 : "must be the last node of its function");
		return 1;
	}
	if (block && (node_desc(n->kind)->flags & NF_SIDE)) {
		if (region)
			verr(v, n, "has side effects and cannot be in a region (%s of %%%s)", f->name, f->owner->name);
		else
			verr(v, n, "has side effects and cannot be in @%s, a function with a signature (it is called)",
			     f->name);
		return 1;
	}
	if (block && !n->next && n->kind != NK_Yield) {
		if (region)
			verr(v, f->owner, "region '%s' does not end with a Yield", f->name);
		else
			verr(v, n, "ends function @%s, which has a signature: its last node must be a Yield of its results",
			     f->name);
		return 1;
	}
	return 0;
}

/* A module function's signature against the Yield that ends it. */
static void verify_sig(struct verifier *v, struct func *f)
{
	struct node *y = region_yield(f);
	char b1[128], b2[128];
	if (!f->first) {
		diag_error(v->d, f->loc, "function @%s has a signature but no body: it needs a Yield of its results",
			   f->name);
		v->errors++;
		return;
	}
	if (!y)
		return; /* verify_placement reported it */
	if (y->nops != f->nsig_res) {
		verr(v, y, "yields %u value%s, function @%s returns %u", y->nops, y->nops == 1 ? "" : "s", f->name,
		     f->nsig_res);
		return;
	}
	for (unsigned k = 0; k < y->nops; k++)
		if (op_type(y, k) != f->sig_res[k])
			verr(v, y, "value %u is %s, but function @%s returns %s", k, type_str(op_type(y, k), b1, sizeof b1),
			     f->name, type_str(f->sig_res[k], b2, sizeof b2));
}

/* The checks of one function or region; storage is marked NODE_VGLOBAL. */
static int verify_func(struct verifier *v, struct func *f)
{
	size_t cap = f->nnodes ? f->nnodes : 1, len = 0;
	struct node **checked = xmalloc(cap * sizeof(*checked));
	bool owned = false, region = func_is_region(f);
	int structural = 0;
	bool late = false;
	if (region && !f->first)
		verr(v, f->owner, "region '%s' is empty: it needs a Yield", f->name);
	func_for_each(f, n) {
		if (!owned && !region && has_pending_operand(n)) {
			func_for_each(f, m) m->bits |= NODE_VOWN;
			owned = true;
		}
		int bad = verify_structure(v, n, &late, region) | verify_placement(v, f, n);
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
		if (node_num_regions(n))
			verify_regions(v, n);
		else if (n->kind == NK_Call)
			verify_call(v, f, n);
	}
	if (!structural && late)
		find_cycle(v, f);
	if (func_has_sig(f))
		verify_sig(v, f);
	for (size_t i = 0; i < len; i++)
		checked[i]->bits &= (uint8_t)~(NODE_VOWN | NODE_VDONE | NODE_VGREY);
	free(checked);
	return v->errors;
}

/* Types of a region's parameters against want[0..n), named `what`. */
static void check_params(struct verifier *v, struct node *owner, struct func *r, const struct type *const *want,
			 unsigned n, const char *const *what)
{
	unsigned np = region_num_params(r);
	char b1[128], b2[128];
	if (np != n) {
		verr(v, owner, "region '%s' has %u parameter%s, expected %u", r->name, np, np == 1 ? "" : "s", n);
		return;
	}
	for (unsigned i = 0; i < n; i++) {
		const struct type *t = node_type(region_param(r, i));
		if (t != want[i])
			verr(v, owner, "parameter %u (%s) of region '%s' is %s, expected %s", i, what[i < 2 ? i : 2],
			     r->name, type_str(t, b1, sizeof b1), type_str(want[i], b2, sizeof b2));
	}
}

/* Fn: its results are its body's yields, and its value is only a Call's
 * callee. */
static void verify_fn(struct verifier *v, struct node *n)
{
	struct node *y = region_yield(node_region(n, 0));
	char b1[128], b2[128];
	if (y && y->nops != n->nres)
		verr(v, n, "body yields %u value%s, the function has %u result%s", y->nops, y->nops == 1 ? "" : "s",
		     n->nres, n->nres == 1 ? "" : "s");
	else
		for (unsigned k = 0; y && k < n->nres; k++)
			if (op_type(y, k) != n->types[k])
				verr(v, n, "result %u is %s but the body yields %s", k, type_str(n->types[k], b1, sizeof b1),
				     type_str(op_type(y, k), b2, sizeof b2));
	for (const struct use *u = n->uses; u; u = u->next)
		if (use_user(u)->kind != NK_Call || u->idx != 0 || u->res != 0 || node_str(use_user(u), AN_callee)) {
			verr(v, n, "is used by %s as operand %u: a function is used only as a Call's callee (operand 0, "
				   "result 0)", node_kind_name(use_user(u)->kind), u->idx);
			break;
		}
}

/* Call: the callee is a Fn (operand 0) or a module function with a
 * signature (the callee attribute), the args have its parameters' types,
 * the results its results'. */
static void verify_call(struct verifier *v, struct func *scope, struct node *n)
{
	const char *callee = node_str(n, AN_callee);
	unsigned a0;
	struct func *body = call_target(scope->mod, n, &a0);
	char b1[128], b2[128], fname[96];
	if (!body) {
		struct func *named = callee ? module_find_func(scope->mod, callee) : NULL;
		if (callee && !named)
			verr(v, n, "calls @%s, which is not a function of the module", callee);
		else if (callee)
			verr(v, n, "calls @%s, which has no signature: only a function declared with parameters and "
				   "results can be called", callee);
		else if (!n->nops)
			verr(v, n, "has no callee: Call(%%fn, args...) or Call(@function, args...)");
		else
			verr(v, n, "callee %c%s is a %s, not a function (Fn)", node_is_storage(n->ops[0].def) ? '@' : '%',
			     n->ops[0].def->name ? n->ops[0].def->name : "", node_kind_name(n->ops[0].def->kind));
		return;
	}
	if (callee)
		snprintf(fname, sizeof fname, "@%s", callee);
	else
		snprintf(fname, sizeof fname, "%%%s", n->ops[0].def->name);
	const struct type *const *res = callee ? body->sig_res : (const struct type *const *)n->ops[0].def->types;
	unsigned nres = callee ? body->nsig_res : n->ops[0].def->nres;
	unsigned np = region_num_params(body), na = n->nops - a0;
	if (np != na)
		verr(v, n, "passes %u argument%s to %s, which takes %u", na, na == 1 ? "" : "s", fname, np);
	for (unsigned i = 0; i < na && i < np; i++)
		if (op_type(n, a0 + i) != node_type(region_param(body, i)))
			verr(v, n, "argument %u is %s, but parameter %u of %s is %s", i,
			     type_str(op_type(n, a0 + i), b1, sizeof b1), i, fname,
			     type_str(node_type(region_param(body, i)), b2, sizeof b2));
	if (n->nres != nres) {
		verr(v, n, "has %u result%s, but %s returns %u", n->nres, n->nres == 1 ? "" : "s", fname, nres);
		return;
	}
	for (unsigned k = 0; k < n->nres; k++)
		if (n->types[k] != res[k])
			verr(v, n, "result %u is %s, but %s returns %s", k, type_str(n->types[k], b1, sizeof b1), fname,
			     type_str(res[k], b2, sizeof b2));
}

/* The type the scan value t stacks to over trip iterations. */
static const struct type *stacked(struct module *m, const struct type *t, int64_t trip)
{
	uint64_t dims[GLOW_MAX_RANK];
	if (t->rank >= GLOW_MAX_RANK)
		return NULL;
	dims[0] = (uint64_t)trip;
	memcpy(dims + 1, t->dims, t->rank * sizeof(dims[0]));
	if (elem_is_quantized((enum elem_kind)t->elem))
		return type_get_q(m->types, (enum elem_kind)t->elem, dims, t->rank + 1u, t->scale, t->offset);
	return type_get(m->types, (enum elem_kind)t->elem, dims, t->rank + 1u);
}

/* If: its regions take no parameters and yield its results' types. Loop:
 * the body takes (i64<> iteration, bool<> condition, carried values of the
 * inits' types) and yields (bool<> condition, the carried values, the scan
 * values); each scan result is its value's type stacked on a leading axis
 * of the scan length (loop_scan_length: scan_length, or the constant trip
 * count). The regions' own nodes are checked first. */
static void verify_regions(struct verifier *v, struct node *n)
{
	struct module *m = NULL;
	for (unsigned i = 0; i < node_num_regions(n); i++) {
		struct func *r = node_region(n, i);
		if (r->owner != n) {
			verr(v, n, "region %u does not name this node as its owner", i);
			return;
		}
		m = r->mod;
	}
	/* the owner's results are not in scope inside its own regions */
	n->bits &= (uint8_t)~NODE_VDONE;
	for (unsigned i = 0; i < node_num_regions(n); i++)
		verify_func(v, node_region(n, i));
	n->bits |= NODE_VDONE;
	char b1[128], b2[128];
	if (n->kind == NK_Fn) {
		verify_fn(v, n);
		return;
	}
	if (n->kind == NK_If) {
		for (unsigned i = 0; i < 2; i++) {
			struct func *r = node_region(n, i);
			struct node *y = region_yield(r);
			check_params(v, n, r, NULL, 0, NULL);
			if (!y)
				continue;
			if (y->nops != n->nres) {
				verr(v, n, "region '%s' yields %u value%s, the If has %u result%s", r->name, y->nops,
				     y->nops == 1 ? "" : "s", n->nres, n->nres == 1 ? "" : "s");
				continue;
			}
			for (unsigned k = 0; k < y->nops; k++)
				if (op_type(y, k) != n->types[k])
					verr(v, n, "result %u is %s but region '%s' yields %s", k,
					     type_str(n->types[k], b1, sizeof b1), r->name,
					     type_str(op_type(y, k), b2, sizeof b2));
		}
		return;
	}
	/* Loop */
	struct func *body = node_region(n, 0);
	unsigned nc = loop_num_carried(n), ns = n->nres >= nc ? n->nres - nc : 0;
	const struct type **want = xmalloc((nc + 2) * sizeof(*want));
	uint64_t none[1];
	want[0] = type_get(m->types, EK_I64, none, 0);
	want[1] = type_get(m->types, EK_BOOL, none, 0);
	for (unsigned k = 0; k < nc; k++)
		want[2 + k] = op_type(n, 2 + k);
	static const char *const what[] = {"the iteration number", "the condition", "a carried value"};
	check_params(v, n, body, want, nc + 2, what);
	struct node *y = region_yield(body);
	if (y && y->nops != 1 + nc + ns) {
		verr(v, n, "body yields %u value%s, expected %u (the condition, %u carried, %u scan)", y->nops,
		     y->nops == 1 ? "" : "s", 1 + nc + ns, nc, ns);
	} else if (y) {
		if (op_type(y, 0) != want[1])
			verr(v, n, "body yields %s as the condition, expected bool<>", type_str(op_type(y, 0), b1, sizeof b1));
		for (unsigned k = 0; k < nc; k++)
			if (op_type(y, 1 + k) != want[2 + k])
				verr(v, n, "carried value %u is %s but the body yields %s", k,
				     type_str(want[2 + k], b1, sizeof b1), type_str(op_type(y, 1 + k), b2, sizeof b2));
		int64_t len = node_int(n, AN_scan_length), trip = loop_scan_length(n);
		if (len < -1)
			verr(v, n, "scan_length is %lld: it is -1 (the constant trip count) or a length of at least 0",
			     (long long)len);
		else if (len >= 0 && !ns)
			verr(v, n, "has scan_length %lld but no scan outputs", (long long)len);
		else if (ns && trip < 0)
			verr(v, n, "has %u scan output%s: its trip count must be a constant, or scan_length given", ns,
			     ns == 1 ? "" : "s");
		else
			for (unsigned j = 0; j < ns; j++) {
				const struct type *t = stacked(m, op_type(y, 1 + nc + j), trip);
				if (t != n->types[nc + j])
					verr(v, n, "scan output %u is %s, expected %s (the body's value stacked %lld times)",
					     j, type_str(n->types[nc + j], b1, sizeof b1),
					     t ? type_str(t, b2, sizeof b2) : "a tensor of higher rank", (long long)trip);
			}
	}
	free(want);
}

/* ---- recursion among module functions ---- */

/* The Calls of module functions in one function (regions included). */
struct call_edges {
	struct module *m;
	VEC(struct node *) calls;
};

static void collect_call(struct func *scope, struct node *n, void *arg)
{
	(void)scope;
	struct call_edges *e = arg;
	if (n->kind == NK_Call && node_str(n, AN_callee))
		vec_push(&e->calls, n);
}

static size_t func_index(const struct module *m, const struct func *f)
{
	for (size_t i = 0; i < m->nfuncs; i++)
		if (m->funcs[i] == f)
			return i;
	return m->nfuncs;
}

struct recursion {
	struct verifier *v;
	struct module *m;
	struct call_edges *edges; /* by function index */
	unsigned char *state;     /* 0 unvisited, 1 on the path, 2 done */
	size_t *path, depth;
};

/* Depth-first from function i; reports each Call that closes a cycle,
 * with the chain of functions. */
static void visit_calls(struct recursion *r, size_t i)
{
	r->state[i] = 1;
	r->path[r->depth++] = i;
	for (size_t k = 0; k < r->edges[i].calls.len; k++) {
		struct node *c = r->edges[i].calls.data[k];
		size_t j = func_index(r->m, module_find_func(r->m, node_str(c, AN_callee)));
		if (j == r->m->nfuncs || r->state[j] == 2)
			continue;
		if (r->state[j] == 0) {
			visit_calls(r, j);
			continue;
		}
		char chain[400];
		size_t len = 0, from = 0;
		while (r->path[from] != j)
			from++;
		for (size_t q = from; q < r->depth && len < sizeof chain; q++)
			len += (size_t)snprintf(chain + len, sizeof chain - len, "@%s calls ", r->m->funcs[r->path[q]]->name);
		if (len < sizeof chain)
			snprintf(chain + len, sizeof chain - len, "@%s", r->m->funcs[j]->name);
		verr(r->v, c, "recursive call of @%s (%s): a function cannot call itself, directly or through others",
		     r->m->funcs[j]->name, chain);
	}
	r->depth--;
	r->state[i] = 2;
}

static void verify_recursion(struct verifier *v, struct module *m)
{
	struct call_edges *edges = xcalloc(m->nfuncs ? m->nfuncs : 1, sizeof(*edges));
	bool any = false;
	for (size_t i = 0; i < m->nfuncs; i++) {
		edges[i].m = m;
		func_walk_pre(m->funcs[i], collect_call, &edges[i]);
		any |= edges[i].calls.len != 0;
	}
	if (any) {
		struct recursion r = {v, m, edges, xcalloc(m->nfuncs, 1), xmalloc(m->nfuncs * sizeof(size_t)), 0};
		for (size_t i = 0; i < m->nfuncs; i++)
			if (!r.state[i])
				visit_calls(&r, i);
		free(r.state);
		free(r.path);
	}
	for (size_t i = 0; i < m->nfuncs; i++)
		vec_free(&edges[i].calls);
	free(edges);
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
	if (!errors) {
		struct verifier rv = {d, 0};
		verify_recursion(&rv, m);
		errors += rv.errors;
	}
	return errors;
}
