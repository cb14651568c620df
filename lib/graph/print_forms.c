/* print_forms.c - the canonical order of the forms and their printer
 * (forms.h; docs/GraphIR.md, "Text forms").
 *
 * Interchangeability. Reading a function in any form and printing it in
 * another must give the text the original prints in that form. GNF drops
 * the names of nested values, so no form can print a name the others lose:
 * every form names values by their position in one canonical order, and
 * that order and the nesting are functions of the dataflow graph and of the
 * order of the bound nodes only, both of which every form's text keeps:
 *
 *   1. T: the printer's stable topological order of the list (print.c).
 *   2. A value is nested (in GNF and BBNF) when it has one result, exactly
 *      one use, as an operand (not a predicate) of a node of the function,
 *      is pure (side effects such as Save keep their binding and their
 *      place), has no predicate, reads no storage a side effect of the
 *      function writes (SGD of a weight, the update of running statistics:
 *      their order against the write matters; a Call reads what the body
 *      it calls reads), and the expression it heads
 *      stays within FORMS_MAX_NEST levels. Decided bottom-up along T, so it
 *      depends on the graph alone.
 *   3. C: the bound nodes in T order, each preceded by the values nested in
 *      it, operands left to right, depth first (post-order). C is a
 *      topological order: a bound operand of a nested value precedes that
 *      value's root in T.
 *
 * The reader creates nodes in text order and nested operands before their
 * user, which is exactly C, so the list read back is C; T of it is C
 * again, and steps 2 and 3 give the same result.
 *
 * ANF records an order: a module in ANF prints in its list order (T), which
 * is the order its text gave, or C when it was converted into ANF
 * (module_convert_form). Converting out of ANF drops the order of pure
 * values (GNF has none), so an ANF text in another order than C comes back
 * from GNF in order C: the forms agree exactly on every text that one of
 * them printed.
 *
 * Regions (graph/region.h). Each region is a block with its own plan: its
 * values nest only in its own nodes, a value of an enclosing scope is
 * referred to (bound), never nested into a region, and a node with regions
 * is always bound (its regions follow its line). Positions count through
 * the whole function in text order: a node with regions, then its regions'
 * parameters and values, then the nodes after it (number_scope).
 */
#include "graph/forms.h"
#include "graph/lowered.h"
#include "graph/region.h"
#include "support/hashmap.h"
#include "support/io.h"
#include "support/util.h"
#include "support/vec.h"

#include <stdlib.h>
#include <string.h>

static size_t pos_of(const struct u64map *m, const struct node *n)
{
	return (size_t)(uintptr_t)ptrmap_get(m, n);
}

/* The storage f's side-effecting nodes take as operands (what they may
 * write), as a set. */
static void written_storage(struct func *f, struct u64map *w)
{
	func_for_each(f, n) {
		if (!(node_desc(n->kind)->flags & NF_SIDE))
			continue;
		for (unsigned i = 0; i < n->nops; i++)
			if (n->ops[i].def && node_is_storage(n->ops[i].def))
				ptrmap_put(w, n->ops[i].def, (void *)1);
	}
}

/* A function's dataflow by position in T, so that the rest of the work is
 * array look-ups: op[beg[i] + k] is the T position of operand slot k of
 * t[i] (predicate included), or -1 for storage and foreign values. */
struct plan {
	size_t n;
	struct node **t;
	size_t *beg;
	int64_t *op;
	bool *nested; /* by T position */
	size_t *corder; /* C as T positions */
};

/* Whether the body of function f (its regions and the functions its Calls
 * call included) reads storage in the set: a Call reads what its callee
 * reads. depth bounds the walk on a module the verifier has not seen (a
 * verified one has no recursion). */
static bool body_reads(struct module *m, struct func *f, const struct u64map *written, unsigned depth)
{
	if (depth > 16)
		return true;
	func_for_each(f, n) {
		for (unsigned k = 0; k < n->nops; k++)
			if (n->ops[k].def && node_is_storage(n->ops[k].def) && ptrmap_get(written, n->ops[k].def))
				return true;
		for (unsigned r = 0, nr = node_num_regions(n); r < nr; r++)
			if (body_reads(m, node_region(n, r), written, depth + 1))
				return true;
		unsigned a0;
		struct func *callee = n->kind == NK_Call ? call_target(m, n, &a0) : NULL;
		if (callee && body_reads(m, callee, written, depth + 1))
			return true;
	}
	return false;
}

/* Whether t[i] may be nested in its user, leaving its height aside.
 * Nesting moves a value's evaluation later, to just before the bound node
 * it is nested in; a node that reads storage some side effect of f writes
 * (a weight SGD reads and a Save updates, running statistics) must not move
 * past that write, so it keeps its binding and its place. */
static bool nestable(struct module *m, const struct plan *pl, size_t i, const struct u64map *tpos,
		     const struct u64map *written)
{
	const struct node *n = pl->t[i];
	const struct node_desc *d = node_desc(n->kind);
	if (n->nres != 1 || !(d->flags & NF_PURE) || (d->flags & NF_SIDE) || node_has_pred(n) || d->nregions)
		return false;
	const struct use *u = n->uses;
	if (!u || u->next)
		return false;
	for (unsigned k = 0; k < n->nops; k++) {
		const struct node *def = n->ops[k].def;
		if (def && node_is_storage(def) && ptrmap_get(written, def))
			return false;
	}
	/* a Call runs its callee's body where it stands */
	unsigned a0;
	struct func *callee = n->kind == NK_Call && written->len ? call_target(m, n, &a0) : NULL;
	if (callee && body_reads(m, callee, written, 0))
		return false;
	const struct node *user = use_user(u);
	return u->idx < user->nops && pos_of(tpos, user) != 0;
}

/* Appends the nested operands of t[i] (depth first) and i to C. The depth
 * is at most FORMS_MAX_NEST. */
static void emit_tree(const struct plan *pl, size_t i, size_t *len)
{
	for (size_t k = pl->beg[i]; k < pl->beg[i] + pl->t[i]->nops; k++)
		if (pl->op[k] >= 0 && pl->nested[pl->op[k]])
			emit_tree(pl, (size_t)pl->op[k], len);
	pl->corder[(*len)++] = i;
}

static void plan_build(struct func *f, struct plan *pl)
{
	size_t n = pl->n = print_order(f, &pl->t), cap = n ? n : 1;
	struct u64map tpos;
	u64map_init(&tpos);
	size_t slots = 0;
	for (size_t i = 0; i < n; i++) {
		ptrmap_put(&tpos, pl->t[i], (void *)(uintptr_t)(i + 1));
		slots += pl->t[i]->nops + (node_has_pred(pl->t[i]) ? 1u : 0u);
	}
	pl->beg = xmalloc((n + 1) * sizeof(*pl->beg));
	pl->op = xmalloc((slots ? slots : 1) * sizeof(*pl->op));
	size_t w = 0;
	for (size_t i = 0; i < n; i++) {
		const struct node *x = pl->t[i];
		pl->beg[i] = w;
		unsigned ns = x->nops + (node_has_pred(x) ? 1u : 0u);
		for (unsigned k = 0; k < ns; k++) {
			const struct node *def = x->ops[k].def;
			size_t p = def && !node_is_storage(def) ? pos_of(&tpos, def) : 0;
			pl->op[w++] = (int64_t)p - 1;
		}
	}
	pl->beg[n] = w;
	struct u64map written;
	u64map_init(&written);
	written_storage(f, &written);
	pl->nested = xcalloc(cap, sizeof(bool));
	unsigned char *height = xcalloc(cap, 1);
	for (size_t i = 0; i < n; i++) {
		unsigned h = 1;
		for (size_t k = pl->beg[i]; k < pl->beg[i] + pl->t[i]->nops; k++) {
			int64_t p = pl->op[k];
			if (p >= 0 && pl->nested[p] && height[p] + 1u > h)
				h = height[p] + 1u;
		}
		height[i] = (unsigned char)h;
		/* a node with a lowered-info entry is bound: the entry follows
		 * its statement (docs/GraphIR.md) */
		pl->nested[i] = h < FORMS_MAX_NEST && !lowered_get(f->mod, pl->t[i]) && nestable(f->mod, pl, i, &tpos, &written);
	}
	pl->corder = xmalloc(cap * sizeof(*pl->corder));
	size_t len = 0;
	for (size_t i = 0; i < n; i++)
		if (!pl->nested[i])
			emit_tree(pl, i, &len);
	glow_assert(len == n);
	free(height);
	u64map_free(&written);
	u64map_free(&tpos);
}

static void plan_free(struct plan *pl)
{
	free(pl->t);
	free(pl->beg);
	free(pl->op);
	free(pl->nested);
	free(pl->corder);
}

size_t forms_order(struct func *f, struct node ***order, bool **nested)
{
	struct plan pl;
	plan_build(f, &pl);
	size_t cap = pl.n ? pl.n : 1;
	struct node **out = xmalloc(cap * sizeof(*out));
	bool *onest = xcalloc(cap, sizeof(bool));
	for (size_t i = 0; i < pl.n; i++) {
		out[i] = pl.t[pl.corder[i]];
		onest[i] = pl.nested[pl.corder[i]];
	}
	size_t n = pl.n;
	plan_free(&pl);
	*order = out;
	if (nested)
		*nested = onest;
	else
		free(onest);
	return n;
}

static bool apply_order(struct func *f)
{
	struct node **order;
	size_t n = forms_order(f, &order, NULL);
	bool moved = false;
	for (size_t i = 0; i < n; i++)
		for (unsigned k = 0, nr = node_num_regions(order[i]); k < nr; k++)
			moved |= apply_order(node_region(order[i], k));
	struct node *at = f->first;
	for (size_t i = 0; i < n; i++) {
		if (order[i] == at) {
			at = at->next;
			continue;
		}
		node_move_before(f, order[i], at);
		moved = true;
	}
	free(order);
	return moved;
}

bool module_convert_form(struct module *m, enum graph_form form)
{
	enum graph_form from = module_form(m);
	if (from == form)
		return false;
	/* into ANF the order becomes explicit: the canonical one (from GNF,
	 * BBNF or an unrecorded form alike) */
	if (form == FORM_ANF)
		for (size_t i = 0; i < m->nfuncs; i++)
			apply_order(m->funcs[i]);
	module_set_form(m, form);
	return true;
}

/* ---- printing ---- */

/* The names of the values of a function and its regions: positions in
 * text order (number_scope), by node. */
struct fnames {
	struct u64map pos; /* node -> position + 1 */
	size_t next;
	enum graph_form form;
};

/* The order a scope prints in: T in ANF (the recorded order), C otherwise. */
static size_t scope_order(const struct plan *pl, size_t i, enum graph_form form)
{
	return form == FORM_ANF ? i : pl->corder[i];
}

/* Numbers f's values in the order printed and, right after each node with
 * regions, its regions' values (recursively). */
static void number_scope(struct func *f, struct fnames *nm)
{
	struct plan pl;
	plan_build(f, &pl);
	for (size_t i = 0; i < pl.n; i++) {
		struct node *n = pl.t[scope_order(&pl, i, nm->form)];
		ptrmap_put(&nm->pos, n, (void *)(uintptr_t)++nm->next);
		for (unsigned k = 0, nr = node_num_regions(n); k < nr; k++)
			number_scope(node_region(n, k), nm);
	}
	plan_free(&pl);
}

struct fprinter {
	const struct plan *pl;
	struct fnames *nm;
	const bool *nested;  /* by T position (none in ANF) */
	size_t cur;          /* T position of the node being printed */
	struct node_printer *np;
};

/* %position of a bound value (of this scope or an enclosing one). */
static void print_pos(struct ostream *o, const struct fnames *nm, const struct node *d)
{
	size_t p = (size_t)(uintptr_t)ptrmap_get(&nm->pos, d);
	if (!p) {
		/* dangling or foreign: the verifier rejects it; print its name */
		print_local_name(o, d->name);
		return;
	}
	os_putc(o, '%');
	os_u64(o, p - 1);
}

/* An operand of the node being printed: @global, a nested expression, or
 * %position (#result). */
static void print_ref(void *arg, struct ostream *o, const struct use *u)
{
	struct fprinter *fp = arg;
	const struct node *d = u->def;
	int64_t p = fp->pl->op[fp->pl->beg[fp->cur] + u->idx];
	if (d && node_is_storage(d)) {
		print_global_name(o, d->name);
		return;
	}
	if (!d) {
		print_local_name(o, NULL);
		return;
	}
	if (p >= 0 && fp->nested[p]) {
		size_t outer = fp->cur;
		fp->cur = (size_t)p;
		node_printer_expr(fp->np, d, print_ref, fp);
		fp->cur = outer;
		return;
	}
	print_pos(o, fp->nm, d);
	if (d->nres > 1 && d->kind != NK_Fn) { /* a function literal: its name alone */
		os_putc(o, '#');
		os_u64(o, u->res);
	}
}

static void print_scope(struct fnames *nm, struct node_printer *np, struct ostream *o, struct func *f,
			unsigned depth);

struct fregion {
	struct fnames *nm;
	struct node_printer *np;
	struct ostream *o;
};

static void region_body(void *arg, struct func *r, unsigned depth)
{
	struct fregion *fr = arg;
	print_scope(fr->nm, fr->np, fr->o, r, depth);
}

static void region_param_name(void *arg, struct ostream *o, const struct node *param)
{
	struct fregion *fr = arg;
	print_pos(o, fr->nm, param);
}

/* The statements of f (a function or a region) at depth: its bound values
 * (`let` in ANF and BBNF), its side effects and its Yield, each node with
 * regions followed by them; a region's parameters are in its header. */
static void print_scope(struct fnames *nm, struct node_printer *np, struct ostream *o, struct func *f,
			unsigned depth)
{
	struct plan pl;
	plan_build(f, &pl);
	size_t cap = pl.n ? pl.n : 1;
	bool *none = nm->form == FORM_ANF ? xcalloc(cap, sizeof(bool)) : NULL;
	struct fprinter fp = {&pl, nm, none ? none : pl.nested, 0, np};
	struct fregion fr = {nm, np, o};
	for (size_t i = 0; i < pl.n; i++) {
		size_t t = scope_order(&pl, i, nm->form);
		struct node *n = pl.t[t];
		if (fp.nested[t] || n->kind == NK_RegionArg)
			continue;
		node_printer_indent(np, depth);
		if (n->nres) {
			if (nm->form != FORM_GNF)
				os_write(o, "let ", 4);
			print_pos(o, nm, n);
			os_write(o, " = ", 3);
		}
		fp.cur = t;
		node_printer_expr(np, n, print_ref, &fp);
		node_printer_regions(np, n, depth, region_body, region_param_name, &fr);
		os_putc(o, '\n');
	}
	free(none);
	plan_free(&pl);
}

void forms_print_body(struct ostream *o, struct func *f, enum graph_form form)
{
	/* ANF prints T, the recorded order (module_convert_form made it C when
	 * the module came from another form), nothing nested; GNF and BBNF
	 * print C */
	struct fnames nm;
	u64map_init(&nm.pos);
	nm.next = 0;
	nm.form = form;
	number_scope(f, &nm);
	struct node_printer *np = node_printer_new(o);
	node_printer_set_module(np, f->mod);
	struct fregion fr = {&nm, np, o};
	node_printer_sig(np, f, region_param_name, &fr);
	os_write(o, " {\n", 3);
	print_scope(&nm, np, o, f, 0);
	node_printer_free(np);
	u64map_free(&nm.pos);
}
