/* verify.c - the graph verifier: structure (operand counts, dangling and
 * cross-function uses, cycles, storage initializers), then each kind's type
 * rule from Nodes.def. Reports every problem; returns the error count. */
#include "graph/graph.h"
#include "graph/typerules.h"
#include "support/io.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void verr(struct verifier *v, const struct node *n, const char *fmt, ...)
{
	struct ostream o;
	ostream_mem(&o);
	os_puts(&o, node_kind_name(n->kind));
	if (node_is_storage(n)) {
		os_putc(&o, ' ');
		print_global_name(&o, n->name);
	} else if (n->name) {
		os_putc(&o, ' ');
		print_local_name(&o, n->name);
	}
	os_puts(&o, ": ");
	char msg[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	os_puts(&o, msg);
	diag_error(v->d, n->loc, "%s", ostream_cstr(&o));
	ostream_abort(&o);
	v->errors++;
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
	enum elem_kind k = (enum elem_kind)t->elem;
	switch (c->init) {
	case INIT_DENSE:
		if (!c->data && type_bytes(t) != 0)
			verr(v, n, "dense initializer has no data");
		break;
	case INIT_XAVIER:
		if (!elem_is_float(k))
			verr(v, n, "xavier initializer needs a floating-point element kind, not %s", elem_name(k));
		if (!(c->fan_in > 0))
			verr(v, n, "xavier fan-in must be positive");
		break;
	case INIT_SPLAT:
		if (k == EK_BOOL && c->splat_i != 0 && c->splat_i != 1)
			verr(v, n, "bool splat must be 0 or 1");
		break;
	case INIT_ZERO:
	case INIT_FILE: break;
	}
}

/* Structural checks of one node; returns 0 if the type rule may run. */
static int verify_structure(struct verifier *v, struct func *f, struct node *n)
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
			if (module_find_global(f->mod, def->name) != def) {
				verr(v, n, "operand %u refers to storage outside the module", i);
				bad = 1;
			}
		} else if (func_find(f, def->name) != def) {
			verr(v, n, "operand %u refers to a node of another function", i);
			bad = 1;
		} else if (n->ops[i].res >= def->nres) {
			verr(v, n, "operand %u uses result %u of a node with %u results", i, n->ops[i].res, def->nres);
			bad = 1;
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

/* Depth-first search for a cycle among function nodes (iterative). */
static int find_cycle(struct verifier *v, struct func *f)
{
	struct u64map state; /* node -> &grey (on the stack) or &black (done) */
	u64map_init(&state);
	static char grey, black;
	int cycles = 0;
	size_t cap = 0, sp = 0;
	struct frame { struct node *n; unsigned i; } *stack = NULL;
	func_for_each(f, root) {
		if (ptrmap_get(&state, root))
			continue;
		stack = xgrow(stack, &cap, sp + 1, sizeof(*stack));
		stack[sp++] = (struct frame){root, 0};
		ptrmap_put(&state, root, &grey);
		while (sp) {
			struct frame *fr = &stack[sp - 1];
			unsigned slots = fr->n->nops + (node_has_pred(fr->n) ? 1u : 0u);
			if (fr->i == slots) {
				ptrmap_put(&state, fr->n, &black);
				sp--;
				continue;
			}
			struct node *def = fr->n->ops[fr->i++].def;
			if (!def || node_is_storage(def))
				continue;
			void *s = ptrmap_get(&state, def);
			if (s == &grey) {
				if (!cycles)
					verr(v, def, "is part of a cycle");
				cycles++;
			} else if (!s) {
				stack = xgrow(stack, &cap, sp + 1, sizeof(*stack));
				stack[sp++] = (struct frame){def, 0};
				ptrmap_put(&state, def, &grey);
			}
		}
	}
	free(stack);
	u64map_free(&state);
	return cycles;
}

int func_verify(struct func *f, struct diag *d)
{
	struct verifier v = {d, f->mod, f, 0};
	int structural = 0;
	func_for_each(f, n) {
		if (verify_structure(&v, f, n)) {
			structural = 1;
			continue;
		}
		if (node_desc(n->kind)->rule)
			node_desc(n->kind)->rule(&v, n);
	}
	if (!structural)
		find_cycle(&v, f);
	return v.errors;
}

int module_verify(struct module *m, struct diag *d)
{
	struct verifier v = {d, m, NULL, 0};
	module_for_each_global(m, n)
		verify_storage(&v, n);
	int errors = v.errors;
	for (size_t i = 0; i < m->nfuncs; i++)
		errors += func_verify(m->funcs[i], d);
	return errors;
}
