/* graph_dot.c - the graph IR as dot text.
 *
 * Shape of the output (everything in module order, so it is deterministic):
 *
 *   digraph glow {
 *     label="module @m"; labelloc=t;             (when the module has a name)
 *     node [fontsize=10]; edge [fontsize=9];
 *     g0 [label="placeholder\n@in\nfloat<4>", shape=invhouse, ...];   storage
 *     subgraph cluster_f0 { label="func @f"; ...  f0_0 [...]; }       one per function
 *     g0 -> f0_0 [label="Input"];                                     operands
 *     f0_3 -> g1 [label="Output", color="#c00000", style=bold];       writes
 *   }
 *
 * Dot node ids are positional (g<storage index>, f<function index>_<node
 * index>), so names never appear outside quoted labels. Clusters are drawn
 * only when more than one function is drawn; storage stays outside them
 * because all functions share it.
 *
 * Everything about a kind comes from Nodes.def through node_desc(): the kind
 * name, operand names for edge labels (variadic operands get an index),
 * result names when a node has several results, attribute names, kinds and
 * defaults (only attributes that differ from their default are shown, as in
 * the printer). A side-effecting kind (NF_SIDE) writes its placeholder
 * operands after the first (Save's Output): those edges are drawn from the
 * node into the placeholder, in red.
 *
 * Control-flow regions (graph/region.h) are clusters inside their
 * function's, labelled "then of %r", placed right after their owner: the
 * nodes are listed in pre order (a node, then its regions' nodes), each
 * with the region it is in.
 *
 * -focus (-subgraph): a breadth-first search from the value along operand
 * and use edges in both directions, up to opt->depth edges; -range: the
 * function's nodes at those positions and the storage they use. Only the
 * chosen nodes and the edges between them are drawn.
 */
#include "dot/dot_impl.h"
#include "graph/graph.h"
#include "graph/region.h"
#include "support/hashmap.h"
#include "support/suggest.h"
#include "support/util.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#define STORAGE_FUNC UINT_MAX

struct gd_node {
	struct node *n;
	unsigned fi;  /* index in the module's functions, or STORAGE_FUNC */
	unsigned ord; /* index among the storage, or in its function */
	int dist;     /* -focus: edges from the centre, -1 if not reached */
	bool keep;
	const struct func *scope; /* the region the node is in; NULL: its function's top level */
};

struct gd {
	struct module *m;
	const struct dot_options *opt;
	struct ostream *o;
	struct gd_node *nodes;
	size_t nnodes;
	struct u64map map; /* struct node * -> struct gd_node * */
	bool *func_sel;    /* per module function */
	bool head_labels;  /* operand names as headlabel (big drawings) */
	unsigned nsel;
	struct node *center;
};

static struct gd_node *gd_lookup(struct gd *g, const struct node *n)
{
	return ptrmap_get(&g->map, n);
}

/* ------------------------------------------------------------------ */
/* Labels                                                               */

static void emit_storage(struct gd *g, struct gd_node *e)
{
	struct node *n = e->n;
	struct ostream *o = g->o;
	struct dot_label l;
	dot_label_init(&l);
	bool is_ph = n->kind == NK_Placeholder;
	os_puts(dot_label_line(&l), is_ph ? "placeholder" : "constant");
	print_global_name(dot_label_line(&l), n->name);
	type_print(dot_label_line(&l), node_type(n));
	if (!g->opt->no_attrs) {
		if (is_ph) {
			struct placeholder *p = as_placeholder(n);
			if (p->trainable || p->is_static) {
				struct ostream *t = dot_label_line(&l);
				os_puts(t, p->trainable ? "trainable" : "");
				os_puts(t, p->trainable && p->is_static ? " " : "");
				os_puts(t, p->is_static ? "static" : "");
			}
		} else {
			os_puts(dot_label_line(&l), dot_init_name(as_constant(n)->init));
		}
	}
	os_printf(o, "  g%u [", e->ord);
	dot_label_emit(o, &l, g->opt->max_label_len);
	bool hl = dot_is_highlighted(g->opt, node_kind_name(n->kind));
	if (is_ph)
		dot_node_style(o, "invhouse", "filled", "#d6e9ff", hl, n == g->center);
	else
		dot_node_style(o, "box3d", "filled", "#e6e6e6", hl, n == g->center);
	os_puts(o, "];\n");
}

static void emit_compute(struct gd *g, struct gd_node *e, const char *indent)
{
	struct node *n = e->n;
	struct ostream *o = g->o;
	const struct node_desc *nd = node_desc(n->kind);
	struct dot_label l;
	dot_label_init(&l);
	os_puts(dot_label_line(&l), nd->name);
	if (n->nres)
		print_local_name(dot_label_line(&l), n->name);
	if (!g->opt->no_attrs)
		for (unsigned i = 0; i < nd->nattrs; i++)
			if (!dot_attr_is_default(&nd->attrs[i], &n->attrs[i]))
				dot_put_attr(dot_label_line(&l), &nd->attrs[i], &n->attrs[i]);
	for (unsigned r = 0; r < n->nres; r++) {
		struct ostream *t = dot_label_line(&l);
		if (n->nres > 1 && nd->res_variadic && r + 1 >= nd->nres)
			os_printf(t, "#%u %s[%u]: ", r, nd->res_names[nd->nres - 1], r + 1 - nd->nres);
		else if (n->nres > 1)
			os_printf(t, "#%u %s: ", r, r < nd->nres ? nd->res_names[r] : "");
		type_print(t, n->types[r]);
	}
	os_printf(o, "%s  f%u_%u [", indent, e->fi, e->ord);
	dot_label_emit(o, &l, g->opt->max_label_len);
	bool hl = dot_is_highlighted(g->opt, nd->name);
	if (nd->flags & NF_SIDE)
		dot_node_style(o, "box", "rounded,filled", "#ffe2c6", hl, n == g->center);
	else
		dot_node_style(o, "box", "rounded", NULL, hl, n == g->center);
	os_puts(o, "];\n");
}

static void put_id(struct ostream *o, const struct gd_node *e)
{
	if (e->fi == STORAGE_FUNC)
		os_printf(o, "g%u", e->ord);
	else
		os_printf(o, "f%u_%u", e->fi, e->ord);
}

/* The edges into a drawn node: one per operand whose producer is drawn. */
static void emit_edges(struct gd *g, struct gd_node *user)
{
	struct node *n = user->n;
	struct ostream *o = g->o;
	const struct node_desc *nd = node_desc(n->kind);
	unsigned nops = n->nops + (node_has_pred(n) ? 1 : 0);
	for (unsigned i = 0; i < nops; i++) {
		struct node *def = n->ops[i].def;
		struct gd_node *src = gd_lookup(g, def);
		if (!src || !src->keep)
			continue;
		struct dot_label l;
		dot_label_init(&l);
		struct ostream *t = dot_label_line(&l);
		bool pred = i == n->nops;
		if (pred)
			os_puts(t, "predicate");
		else if (n->kind == NK_Call && !node_str(n, AN_callee) && i == 0)
			os_puts(t, "Callee"); /* a Fn's call: the function literal, then the arguments */
		else if (n->kind == NK_Call && !node_str(n, AN_callee))
			os_printf(t, "Args[%u]", i - 1);
		else if (nd->variadic && i + 1 >= nd->nops)
			os_printf(t, "%s[%u]", nd->op_names[nd->nops - 1], i + 1 - nd->nops);
		else if (i < nd->nops)
			os_puts(t, nd->op_names[i]);
		else
			os_printf(t, "#%u", i);
		if (def->nres > 1)
			os_printf(t, " (#%u)", n->ops[i].res);
		bool write = !pred && (nd->flags & NF_SIDE) && i > 0 && def->kind == NK_Placeholder;
		os_puts(o, "  ");
		put_id(o, write ? user : src);
		os_puts(o, " -> ");
		put_id(o, write ? src : user);
		os_puts(o, " [");
		dot_label_emit_as(o, g->head_labels ? "headlabel" : "label", &l, 0);
		if (write)
			os_puts(o, ", color=\"#c00000\", fontcolor=\"#c00000\", style=bold");
		else if (pred)
			os_puts(o, ", style=dashed");
		os_puts(o, "];\n");
	}
}

/* ------------------------------------------------------------------ */
/* Selection                                                            */

/* Breadth-first from the centre over operand and use edges, both ways. */
static void select_neighbourhood(struct gd *g, struct gd_node *c, unsigned depth)
{
	struct gd_node **queue = xmalloc(g->nnodes * sizeof(*queue));
	size_t head = 0, tail = 0;
	c->dist = 0;
	queue[tail++] = c;
	while (head < tail) {
		struct gd_node *e = queue[head++];
		e->keep = true;
		if ((unsigned)e->dist >= depth)
			continue;
		struct node *n = e->n;
		unsigned nops = n->nops + (node_has_pred(n) ? 1 : 0);
		for (unsigned i = 0; i < nops; i++) {
			struct gd_node *x = gd_lookup(g, n->ops[i].def);
			if (x && x->dist < 0) {
				x->dist = e->dist + 1;
				queue[tail++] = x;
			}
		}
		for (struct use *u = n->uses; u; u = u->next) {
			struct gd_node *x = gd_lookup(g, use_user(u));
			if (x && x->dist < 0) {
				x->dist = e->dist + 1;
				queue[tail++] = x;
			}
		}
	}
	free(queue);
}

/* "; did you mean 'X'?" into hint: the closest name among the drawn
 * functions' nodes (locals) and, unless locals_only, the storage. */
static void suggest_name(struct gd *g, const char *name, bool locals_only, struct ostream *hint)
{
	struct suggest sg;
	suggest_init(&sg, name, strlen(name));
	const struct node *best_global = NULL;
	for (size_t fi = 0; fi < g->m->nfuncs; fi++)
		if (g->func_sel[fi])
			func_for_each(g->m->funcs[fi], n)
				if (n->name)
					suggest_offer(&sg, n->name, strlen(n->name));
	const char *best_local = sg.best;
	if (!locals_only)
		module_for_each_global(g->m, n)
		{
			suggest_offer(&sg, n->name, strlen(n->name));
			if (sg.best != best_local && sg.best == n->name)
				best_global = n;
		}
	dot_put_suggestion(hint, &sg, best_global && sg.best == best_global->name ? print_global_name : print_local_name);
}

/* Finds the -focus value among the drawn functions and the storage: %name
 * a node of a function, @name storage, a bare name either (a local first). */
static struct gd_node *find_center(struct gd *g, struct diag *d)
{
	const char *text = g->opt->subgraph;
	char sigil;
	char *name = dot_parse_focus(text, &sigil);
	if (!name) {
		diag_error(d, LOC_NONE, "-focus: '%s' is not a value (expected %%name, @name or name)", text);
		return NULL;
	}
	struct node *found = NULL;
	unsigned hits = 0;
	if (sigil != '@') {
		for (size_t fi = 0; fi < g->m->nfuncs; fi++) {
			if (!g->func_sel[fi])
				continue;
			struct node *n = func_find(g->m->funcs[fi], name);
			if (n) {
				found = n;
				hits++;
			}
		}
	}
	if (sigil == '@' || (sigil == 0 && hits == 0)) {
		found = module_find_global(g->m, name);
		hits = found != NULL;
	}
	struct ostream hint;
	ostream_mem(&hint);
	if (hits == 0)
		suggest_name(g, name, sigil == '%', &hint);
	free(name);
	return dot_focus_found(text, hits, g->opt->func && sigil != '@', &hint, d) ? gd_lookup(g, found) : NULL;
}

/* The drawing and the function -range reads (dot_range_view's ctx). */
struct gd_range {
	struct gd *g;
	struct func *f;
};

/* dot_range_view's lookup: the index in function order of node name. */
static long range_lookup(void *ctx, const char *name, struct ostream *hint, struct ostream *nm)
{
	struct gd_range *r = ctx;
	struct node *n = func_find(r->f, name);
	if (n)
		return (long)gd_lookup(r->g, n)->ord;
	suggest_name(r->g, name, true, hint);
	print_local_name(nm, name);
	return -1;
}

/* Keeps the nodes of -range (positions in function order) and the storage
 * they use. */
static int select_range(struct gd *g, struct diag *d)
{
	if (g->nsel != 1) {
		diag_error(d, LOC_NONE, "-range: the module has %u functions; choose one with -func", g->nsel);
		return -1;
	}
	size_t fi = 0;
	while (!g->func_sel[fi])
		fi++;
	struct func *f = g->m->funcs[fi];
	size_t nnodes = 0;
	func_for_each(f, n)
		nnodes++;
	struct gd_range r = {g, f};
	struct dot_range_view v = {"node", f->name, nnodes, range_lookup, &r};
	long lo, hi;
	if (dot_range_resolve(g->opt->range, &v, &lo, &hi, d))
		return -1;
	for (size_t i = 0; i < g->nnodes; i++) {
		struct gd_node *e = &g->nodes[i];
		if (e->fi != fi || (long)e->ord < lo || (long)e->ord > hi)
			continue;
		e->keep = true;
		unsigned nops = e->n->nops + (node_has_pred(e->n) ? 1 : 0);
		for (unsigned k = 0; k < nops; k++) {
			struct gd_node *s = gd_lookup(g, e->n->ops[k].def);
			if (s && s->fi == STORAGE_FUNC)
				s->keep = true;
		}
	}
	return 0;
}

/* Lists the nodes of f, each followed by its regions' (pre order). */
static void scope_add(struct gd *g, struct func *f, unsigned fi, unsigned *ord)
{
	func_for_each(f, n) {
		struct gd_node *e = &g->nodes[g->nnodes++];
		*e = (struct gd_node){n, fi, (*ord)++, -1, false, func_is_region(f) ? f : NULL};
		ptrmap_put(&g->map, n, e);
		for (unsigned i = 0, nr = node_num_regions(n); i < nr; i++)
			scope_add(g, node_region(n, i), fi, ord);
	}
}

/* Closes region clusters until the innermost open one encloses scope
 * (NULL: none stays open), then opens those from there down to scope;
 * open[0..*nopen) are the open regions, outer first. */
static void move_to_scope(struct gd *g, const struct func **open, unsigned *nopen, const struct func *scope,
			  unsigned *ncl, unsigned base)
{
	while (*nopen && !(scope && func_encloses(open[*nopen - 1], scope))) {
		(*nopen)--;
		for (unsigned k = 0; k < base + *nopen; k++)
			os_puts(g->o, "  ");
		os_puts(g->o, "  }\n");
	}
	const struct func *chain[64];
	unsigned nc = 0;
	for (const struct func *s = scope; s && (!*nopen || s != open[*nopen - 1]) && nc < 64; s = s->parent)
		if (func_is_region(s))
			chain[nc++] = s;
	while (nc--) {
		const struct func *r = chain[nc];
		struct dot_label l;
		dot_label_init(&l);
		struct ostream *t = dot_label_line(&l);
		os_printf(t, "%s of ", r->name);
		print_local_name(t, r->owner->name);
		struct ostream *o = g->o;
		for (unsigned k = 0; k < base + *nopen; k++)
			os_puts(o, "  ");
		os_printf(o, "  subgraph cluster_r%u {\n", (*ncl)++);
		for (unsigned k = 0; k <= base + *nopen; k++)
			os_puts(o, "  ");
		os_puts(o, "  ");
		dot_label_emit(o, &l, 0);
		os_puts(o, "; style=dashed; color=\"#4060a0\";\n");
		open[(*nopen)++] = r;
	}
}

static int gd_setup(struct gd *g, struct diag *d)
{
	const struct dot_options *opt = g->opt;
	struct module *m = g->m;
	int errors = 0;
	for (size_t i = 0; i < opt->nhighlight; i++)
		if (node_kind_lookup(opt->highlight[i], strlen(opt->highlight[i])) < 0) {
			diag_error(d, LOC_NONE, "-highlight: unknown node kind '%s'", opt->highlight[i]);
			errors++;
		}
	g->func_sel = xcalloc(m->nfuncs + 1, sizeof(bool));
	if (opt->func) {
		struct func *f = module_find_func(m, opt->func);
		if (!f) {
			diag_error(d, LOC_NONE, "-func: no function '@%s' in the module", opt->func);
			return -1;
		}
		for (size_t fi = 0; fi < m->nfuncs; fi++)
			if (m->funcs[fi] == f)
				g->func_sel[fi] = true;
	} else {
		for (size_t fi = 0; fi < m->nfuncs; fi++)
			g->func_sel[fi] = true;
	}
	if (errors)
		return -1;

	size_t total = 0;
	module_for_each_global(m, n)
		total++;
	for (size_t fi = 0; fi < m->nfuncs; fi++) {
		if (!g->func_sel[fi])
			continue;
		g->nsel++;
		total += func_count_nodes(m->funcs[fi]);
	}
	g->nodes = xcalloc(total + 1, sizeof(*g->nodes));
	u64map_init(&g->map);
	unsigned ord = 0;
	module_for_each_global(m, n)
	{
		struct gd_node *e = &g->nodes[g->nnodes++];
		*e = (struct gd_node){n, STORAGE_FUNC, ord++, -1, false, NULL};
		ptrmap_put(&g->map, n, e);
	}
	for (size_t fi = 0; fi < m->nfuncs; fi++) {
		if (!g->func_sel[fi])
			continue;
		ord = 0;
		scope_add(g, m->funcs[fi], (unsigned)fi, &ord);
	}

	if (opt->range)
		return select_range(g, d);
	if (opt->subgraph) {
		struct gd_node *c = find_center(g, d);
		if (!c)
			return -1;
		g->center = c->n;
		select_neighbourhood(g, c, opt->depth);
		return 0;
	}
	for (size_t i = 0; i < g->nnodes; i++) {
		struct gd_node *e = &g->nodes[i];
		if (e->fi != STORAGE_FUNC) {
			e->keep = true;
			unsigned nops = e->n->nops + (node_has_pred(e->n) ? 1 : 0);
			for (unsigned k = 0; k < nops; k++) {
				struct gd_node *s = gd_lookup(g, e->n->ops[k].def);
				if (s)
					s->keep = true;
			}
		} else if (!opt->func) {
			e->keep = true; /* the whole module: unused storage too */
		}
	}
	return 0;
}

static void gd_free(struct gd *g)
{
	free(g->nodes);
	free(g->func_sel);
	if (g->nodes)
		u64map_free(&g->map);
}

/* ------------------------------------------------------------------ */
/* The writer                                                           */

int dot_write_graph(struct ostream *o, struct module *m, const struct dot_options *opt, struct diag *d)
{
	node_desc_init();
	struct gd g = {0};
	g.m = m;
	g.opt = opt;
	g.o = o;
	if (gd_setup(&g, d) < 0) {
		gd_free(&g);
		return -1;
	}

	os_puts(o, "digraph glow {\n");
	if (m->name) {
		struct dot_label l;
		dot_label_init(&l);
		struct ostream *t = dot_label_line(&l);
		os_puts(t, "module ");
		print_global_name(t, m->name);
		os_puts(o, "  ");
		dot_label_emit(o, &l, 0);
		os_puts(o, ";\n  labelloc=t;\n");
	}
	size_t drawn = 0;
	for (size_t k = 0; k < g.nnodes; k++)
		drawn += g.nodes[k].keep;
	dot_layout_limits(o, drawn);
	/* An edge label is a node of dot's own in the middle of the edge, and any
	 * label doubles the ranks: DenseNet-121's 2311 labels made 12435 nodes
	 * for the x-coordinate pass instead of 6189 (2.4 s against 1.2 s in
	 * all). A head label is placed after the layout and costs it nothing. */
	g.head_labels = drawn > DOT_BIG_NODES;
	os_puts(o, "  node [fontsize=10];\n  edge [fontsize=9];\n");

	size_t i = 0;
	for (; i < g.nnodes && g.nodes[i].fi == STORAGE_FUNC; i++)
		if (g.nodes[i].keep)
			emit_storage(&g, &g.nodes[i]);

	bool clusters = g.nsel > 1;
	unsigned ncl = 0;
	while (i < g.nnodes) {
		unsigned fi = g.nodes[i].fi;
		size_t end = i;
		bool any = false;
		while (end < g.nnodes && g.nodes[end].fi == fi)
			any |= g.nodes[end++].keep;
		if (clusters && any) {
			struct dot_label l;
			dot_label_init(&l);
			struct ostream *t = dot_label_line(&l);
			os_puts(t, "func ");
			print_global_name(t, m->funcs[fi]->name);
			os_printf(o, "  subgraph cluster_f%u {\n    ", fi);
			dot_label_emit(o, &l, 0);
			os_puts(o, ";\n    style=rounded;\n    color=\"#808080\";\n");
		}
		const struct func *open[64];
		unsigned nopen = 0, base = clusters && any ? 1 : 0;
		static const char spaces[] = "                                                                ";
		for (; i < end; i++)
			if (g.nodes[i].keep) {
				move_to_scope(&g, open, &nopen, g.nodes[i].scope, &ncl, base);
				unsigned depth = 2 * (base + nopen) < sizeof spaces - 1 ? 2 * (base + nopen) : 0;
				emit_compute(&g, &g.nodes[i], spaces + sizeof spaces - 1 - depth);
			}
		move_to_scope(&g, open, &nopen, NULL, &ncl, base);
		if (clusters && any)
			os_puts(o, "  }\n");
	}

	for (i = 0; i < g.nnodes; i++)
		if (g.nodes[i].keep && g.nodes[i].fi != STORAGE_FUNC)
			emit_edges(&g, &g.nodes[i]);
	os_puts(o, "}\n");
	gd_free(&g);
	return 0;
}
