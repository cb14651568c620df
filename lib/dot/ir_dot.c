/* ir_dot.c - the instruction IR as dot text.
 *
 * A function is drawn as a bipartite graph of instructions and buffers:
 *
 *   - instructions f<F>_i<K>, K the position in the program, labelled
 *     "K: kind", the name (if any) and the non-default attributes; a grey
 *     chain of heavy edges between consecutive instructions keeps the
 *     program order top to bottom;
 *   - buffers: weights f<F>_w<K> inside a "declare" cluster (mutable ones
 *     as houses, constant ones as 3-d boxes, initializer kind but never the
 *     data), allocations and tensorviews f<F>_b<K>, each placed on the rank
 *     of the instruction that defines it;
 *   - one edge per operand, labelled with its qualifier and the operand
 *     name from Instrs.def: @in from the buffer into the instruction, @out
 *     from the instruction into the buffer, @inout both ways; edges from an
 *     instruction into a buffer do not constrain the layout (they often
 *     point back up), so the ranks follow the program and the reads; alloc and
 *     dealloc are drawn as dashed green/red lifetime edges, and every
 *     allocation's label says `live A..D` (program positions of its alloc
 *     and dealloc);
 *   - with a recorded memory plan, the regions' sizes in the function's
 *     label and each weight's and allocation's offset and size in bytes.
 *
 * Several functions: one cluster each. -subgraph walks instruction/buffer
 * edges in both directions (the program-order chain does not count) and
 * keeps what is within opt->depth edges; the chain then links the kept
 * instructions in program order.
 *
 * All ids are positional and all text goes through dot_quote, so the output
 * is a function of the IR and the options only.
 */
#include "dot/dot_impl.h"
#include "ir/ir.h"
#include "support/hashmap.h"
#include "support/util.h"

#include <stdlib.h>
#include <string.h>

enum id_role { ROLE_INSTR, ROLE_WEIGHT, ROLE_BUF };

struct id_node {
	enum id_role role;
	unsigned fi;  /* function index in the module */
	unsigned ord; /* program position / weight index / buffer index */
	struct ir_instr *in;  /* ROLE_INSTR, ROLE_BUF (its defining instruction) */
	struct ir_weight *w;  /* ROLE_WEIGHT */
	int dealloc;          /* ROLE_BUF: program position of the dealloc, -1 if none */
	int dist;
	bool keep;
	unsigned adj_begin, adj_end; /* into id.adj */
};

struct id_edge {
	unsigned instr, buf;
};

struct id {
	struct ir_module *m;
	const struct dot_options *opt;
	struct ostream *o;
	struct id_node *nodes;
	size_t nnodes;
	struct u64map instrs;  /* struct ir_instr * -> node */
	struct u64map buffers; /* struct ir_value * (weight, alloc, view) -> node */
	struct id_edge *edges;
	size_t nedges, capedges;
	unsigned *adj;         /* node indices, grouped per node */
	bool *func_sel;
	unsigned nsel;
	const struct id_node *center; /* the -subgraph value's node */
};

static struct id_node *buffer_of(struct id *g, const struct ir_value *v) { return ptrmap_get(&g->buffers, v); }

static void put_id(struct ostream *o, const struct id_node *e)
{
	static const char role_ch[] = {[ROLE_INSTR] = 'i', [ROLE_WEIGHT] = 'w', [ROLE_BUF] = 'b'};
	os_printf(o, "f%u_%c%u", e->fi, role_ch[e->role], e->ord);
}

/* ------------------------------------------------------------------ */
/* Collection                                                           */

static void add_edge(struct id *g, struct id_node *instr, struct id_node *buf)
{
	if (g->nedges == g->capedges)
		g->edges = xgrow(g->edges, &g->capedges, g->nedges + 1, sizeof(*g->edges));
	g->edges[g->nedges++] = (struct id_edge){(unsigned)(instr - g->nodes), (unsigned)(buf - g->nodes)};
}

/* Nodes of the selected functions, their instruction-buffer edges and the
 * adjacency lists -subgraph walks. */
static void collect(struct id *g)
{
	struct ir_module *m = g->m;
	size_t total = 0;
	for (size_t fi = 0; fi < m->nfuncs; fi++) {
		if (!g->func_sel[fi])
			continue;
		ir_for_each_weight(m->funcs[fi], w)
			total++;
		ir_for_each_instr(m->funcs[fi], in)
			total += (instr_desc(in->kind)->flags & IF_TYPED) ? 2 : 1;
	}
	g->nodes = xcalloc(total + 1, sizeof(*g->nodes));
	u64map_init(&g->instrs);
	u64map_init(&g->buffers);
	for (size_t fi = 0; fi < m->nfuncs; fi++) {
		if (!g->func_sel[fi])
			continue;
		struct ir_func *f = m->funcs[fi];
		unsigned k = 0;
		ir_for_each_weight(f, w)
		{
			struct id_node *e = &g->nodes[g->nnodes++];
			*e = (struct id_node){ROLE_WEIGHT, (unsigned)fi, k++, NULL, w, -1, -1, false, 0, 0};
			ptrmap_put(&g->buffers, &w->v, e);
		}
		unsigned pos = 0, nbuf = 0;
		ir_for_each_instr(f, in)
		{
			struct id_node *e = &g->nodes[g->nnodes++];
			*e = (struct id_node){ROLE_INSTR, (unsigned)fi, pos, in, NULL, -1, -1, false, 0, 0};
			ptrmap_put(&g->instrs, in, e);
			if (instr_desc(in->kind)->flags & IF_TYPED) {
				struct id_node *b = &g->nodes[g->nnodes++];
				*b = (struct id_node){ROLE_BUF, (unsigned)fi, nbuf++, in, NULL, -1, -1, false, 0, 0};
				ptrmap_put(&g->buffers, &in->v, b);
				add_edge(g, e, b);
			}
			for (unsigned j = 0; j < in->nops; j++) {
				struct id_node *b = buffer_of(g, in->ops[j].val);
				if (!b)
					continue;
				add_edge(g, e, b);
				if (in->kind == IK_dealloc && b->role == ROLE_BUF)
					b->dealloc = (int)pos;
			}
			pos++;
		}
	}
	/* adjacency: count, prefix sums, fill */
	unsigned *deg = xcalloc(g->nnodes + 1, sizeof(unsigned));
	for (size_t i = 0; i < g->nedges; i++)
		deg[g->edges[i].instr]++, deg[g->edges[i].buf]++;
	unsigned at = 0;
	for (size_t i = 0; i < g->nnodes; i++) {
		g->nodes[i].adj_begin = g->nodes[i].adj_end = at;
		at += deg[i];
	}
	g->adj = xmalloc((at + 1) * sizeof(unsigned));
	for (size_t i = 0; i < g->nedges; i++) {
		struct id_edge *x = &g->edges[i];
		g->adj[g->nodes[x->instr].adj_end++] = x->buf;
		g->adj[g->nodes[x->buf].adj_end++] = x->instr;
	}
	free(deg);
}

static void select_neighbourhood(struct id *g, struct id_node *c, unsigned depth)
{
	unsigned *queue = xmalloc((g->nnodes + 1) * sizeof(*queue));
	size_t head = 0, tail = 0;
	c->dist = 0;
	queue[tail++] = (unsigned)(c - g->nodes);
	while (head < tail) {
		struct id_node *e = &g->nodes[queue[head++]];
		e->keep = true;
		if ((unsigned)e->dist >= depth)
			continue;
		for (unsigned a = e->adj_begin; a < e->adj_end; a++) {
			struct id_node *x = &g->nodes[g->adj[a]];
			if (x->dist < 0) {
				x->dist = e->dist + 1;
				queue[tail++] = g->adj[a];
			}
		}
	}
	free(queue);
}

static struct id_node *find_center(struct id *g, struct diag *d)
{
	const char *text = g->opt->subgraph;
	char sigil;
	char *name = dot_parse_value_ref(text, &sigil);
	if (!name) {
		diag_error(d, LOC_NONE, "-subgraph: '%s' is not a value (expected %%name)", text);
		return NULL;
	}
	struct id_node *found = NULL;
	unsigned hits = 0;
	for (size_t fi = 0; sigil == '%' && fi < g->m->nfuncs; fi++) {
		if (!g->func_sel[fi])
			continue;
		struct ir_value *v = ir_func_find(g->m->funcs[fi], name, strlen(name));
		if (!v)
			continue;
		struct id_node *e = ir_value_is_buffer(v) ? buffer_of(g, v) : ptrmap_get(&g->instrs, v);
		if (e) {
			found = e;
			hits++;
		}
	}
	free(name);
	if (hits == 0) {
		diag_error(d, LOC_NONE, "-subgraph: no value '%s'%s", text,
			   g->opt->func ? " in the selected function" : "");
		return NULL;
	}
	if (hits > 1) {
		diag_error(d, LOC_NONE, "-subgraph: '%s' names a value in %u functions; choose one with -func", text,
			   hits);
		return NULL;
	}
	return found;
}

static int setup(struct id *g, struct diag *d)
{
	const struct dot_options *opt = g->opt;
	struct ir_module *m = g->m;
	int errors = 0;
	instr_desc_init();
	for (size_t i = 0; i < opt->nhighlight; i++)
		if (instr_kind_lookup(opt->highlight[i], strlen(opt->highlight[i])) < 0) {
			diag_error(d, LOC_NONE, "-highlight: unknown instruction kind '%s'", opt->highlight[i]);
			errors++;
		}
	g->func_sel = xcalloc(m->nfuncs + 1, sizeof(bool));
	struct ir_func *only = NULL;
	if (opt->func) {
		only = ir_module_find_func(m, opt->func);
		if (!only) {
			diag_error(d, LOC_NONE, "-func: no function '@%s' in the module", opt->func);
			return -1;
		}
	}
	for (size_t fi = 0; fi < m->nfuncs; fi++)
		if (!only || m->funcs[fi] == only) {
			g->func_sel[fi] = true;
			g->nsel++;
		}
	if (errors)
		return -1;
	collect(g);
	if (opt->subgraph) {
		struct id_node *c = find_center(g, d);
		if (!c)
			return -1;
		g->center = c;
		select_neighbourhood(g, c, opt->depth);
	} else {
		for (size_t i = 0; i < g->nnodes; i++)
			g->nodes[i].keep = true;
	}
	return 0;
}

static void id_free(struct id *g)
{
	if (g->nodes) {
		u64map_free(&g->instrs);
		u64map_free(&g->buffers);
	}
	free(g->nodes);
	free(g->edges);
	free(g->adj);
	free(g->func_sel);
}

/* ------------------------------------------------------------------ */
/* Nodes                                                                */

static void put_plan(struct ostream *t, int64_t offset, const struct type *ty)
{
	os_puts(t, "offset ");
	os_i64(t, offset);
	os_puts(t, ", size ");
	os_u64(t, type_bytes(ty));
}

static void emit_weight(struct id *g, struct id_node *e, const char *ind)
{
	struct ir_weight *w = e->w;
	struct ostream *o = g->o;
	struct dot_label l;
	dot_label_init(&l);
	os_puts(dot_label_line(&l), w->is_const ? "weight constant" : "weight mutable");
	ir_print_local(dot_label_line(&l), w->v.name);
	type_print(dot_label_line(&l), w->v.type);
	if (!g->opt->no_attrs && w->init != IR_INIT_NONE)
		os_puts(dot_label_line(&l), dot_init_name(w->init));
	if (g->m->funcs[e->fi]->plan.present && w->offset >= 0)
		put_plan(dot_label_line(&l), w->offset, w->v.type);
	os_printf(o, "%s  ", ind);
	put_id(o, e);
	os_puts(o, " [");
	dot_label_emit(o, &l, g->opt->max_label_len);
	if (w->is_const)
		dot_node_style(o, "box3d", "filled", "#e6e6e6", false, e == g->center);
	else
		dot_node_style(o, "invhouse", "filled", "#d6e9ff", false, e == g->center);
	os_puts(o, "];\n");
}

static void emit_buffer(struct id *g, struct id_node *e, const char *ind)
{
	struct ir_instr *in = e->in;
	struct ostream *o = g->o;
	struct dot_label l;
	dot_label_init(&l);
	bool view = in->v.vkind == IV_VIEW;
	struct ostream *t = dot_label_line(&l);
	if (view)
		os_puts(t, "view ");
	ir_print_local(t, in->v.name);
	type_print(dot_label_line(&l), in->v.type);
	if (view) {
		uint64_t off = 0;
		struct ir_value *root = ir_value_root(&in->v, &off);
		if (root) {
			t = dot_label_line(&l);
			os_puts(t, "in ");
			ir_print_local(t, root->name);
			os_puts(t, " at +");
			os_u64(t, off);
		}
	} else {
		t = dot_label_line(&l);
		os_printf(t, "live %u..", g->nodes[e - g->nodes - 1].ord);
		if (e->dealloc >= 0)
			os_printf(t, "%d", e->dealloc);
		else
			os_puts(t, "end");
		if (g->m->funcs[e->fi]->plan.present && in->offset >= 0)
			put_plan(dot_label_line(&l), in->offset, in->v.type);
	}
	os_printf(o, "%s  ", ind);
	put_id(o, e);
	os_puts(o, " [");
	dot_label_emit(o, &l, g->opt->max_label_len);
	dot_node_style(o, "box", view ? "dashed" : "filled", view ? NULL : "#e3f4dc", false, e == g->center);
	os_puts(o, "];\n");
}

static void emit_instr(struct id *g, struct id_node *e, const char *ind)
{
	struct ir_instr *in = e->in;
	const struct instr_desc *dd = instr_desc(in->kind);
	struct ostream *o = g->o;
	struct dot_label l;
	dot_label_init(&l);
	os_printf(dot_label_line(&l), "%u: %s", e->ord, dd->name);
	if (in->v.name)
		ir_print_local(dot_label_line(&l), in->v.name);
	if (!g->opt->no_attrs)
		for (unsigned i = 0; i < dd->nattrs; i++)
			if (!dot_attr_is_default(&dd->attrs[i], &in->attrs[i]))
				dot_put_attr(dot_label_line(&l), &dd->attrs[i], &in->attrs[i]);
	os_printf(o, "%s  ", ind);
	put_id(o, e);
	os_puts(o, " [");
	dot_label_emit(o, &l, g->opt->max_label_len);
	bool hl = dot_is_highlighted(g->opt, dd->name);
	if (in->kind == IK_alloc || in->kind == IK_dealloc)
		dot_node_style(o, "box", "rounded,dashed", NULL, hl, e == g->center);
	else
		dot_node_style(o, "box", "rounded", NULL, hl, e == g->center);
	os_puts(o, "];\n");
}

/* ------------------------------------------------------------------ */
/* Edges                                                                */

static void emit_operand_edges(struct id *g, struct id_node *e)
{
	struct ir_instr *in = e->in;
	const struct instr_desc *dd = instr_desc(in->kind);
	struct ostream *o = g->o;
	if (dd->flags & IF_TYPED) {
		struct id_node *b = e + 1; /* collected right after its instruction */
		if (b->keep) {
			os_puts(o, "  ");
			put_id(o, e);
			os_puts(o, " -> ");
			put_id(o, b);
			if (in->kind == IK_alloc)
				os_puts(o, " [label=\"alloc\", style=dashed, color=\"#2e8b2e\", fontcolor=\"#2e8b2e\"];\n");
			else
				os_puts(o, " [label=\"view\", style=dashed];\n");
		}
	}
	for (unsigned j = 0; j < in->nops; j++) {
		struct id_node *b = buffer_of(g, in->ops[j].val);
		if (!b || !b->keep)
			continue;
		unsigned q = in->ops[j].qual;
		os_puts(o, "  ");
		if (in->kind == IK_dealloc) {
			put_id(o, e);
			os_puts(o, " -> ");
			put_id(o, b);
			os_puts(o, " [label=\"dealloc\", style=dashed, color=\"#c00000\", fontcolor=\"#c00000\", "
				   "constraint=false];\n");
			continue;
		}
		put_id(o, q == IQ_IN ? b : e);
		os_puts(o, " -> ");
		put_id(o, q == IQ_IN ? e : b);
		struct dot_label l;
		dot_label_init(&l);
		os_printf(dot_label_line(&l), "@%s %s", ir_qual_name(q), j < dd->nops ? dd->op_names[j] : "?");
		os_puts(o, " [");
		dot_label_emit(o, &l, 0);
		if (q == IQ_OUT)
			os_puts(o, ", color=\"#1f5fbf\", fontcolor=\"#1f5fbf\", constraint=false");
		else if (q == IQ_INOUT)
			os_puts(o, ", dir=both, color=\"#8a2be2\", fontcolor=\"#8a2be2\", constraint=false");
		os_puts(o, "];\n");
	}
}

/* ------------------------------------------------------------------ */
/* The writer                                                           */

static void emit_func_label(struct id *g, struct ir_func *f, const char *prefix)
{
	struct ostream *o = g->o;
	struct dot_label l;
	dot_label_init(&l);
	struct ostream *t = dot_label_line(&l);
	os_puts(t, "function ");
	print_global_name(t, f->name);
	if (f->plan.present) {
		t = dot_label_line(&l);
		os_printf(t, "memory plan: constant %llu, mutable %llu, activations %llu, alignment %llu",
			  (unsigned long long)f->plan.constant_size, (unsigned long long)f->plan.mutable_size,
			  (unsigned long long)f->plan.activations_size, (unsigned long long)f->plan.alignment);
	}
	os_puts(o, prefix);
	dot_label_emit(o, &l, 0);
	os_puts(o, ";\n");
}

static void emit_func(struct id *g, size_t begin, size_t end, bool cluster)
{
	struct ostream *o = g->o;
	unsigned fi = g->nodes[begin].fi;
	struct ir_func *f = g->m->funcs[fi];
	const char *ind = cluster ? "  " : "";
	if (cluster) {
		os_printf(o, "  subgraph cluster_f%u {\n", fi);
		emit_func_label(g, f, "    ");
		os_puts(o, "    style=rounded;\n    color=\"#808080\";\n");
	}
	bool any_weight = false;
	for (size_t i = begin; i < end; i++)
		any_weight |= g->nodes[i].role == ROLE_WEIGHT && g->nodes[i].keep;
	if (any_weight) {
		os_printf(o, "%s  subgraph cluster_f%u_declare {\n%s    label=\"declare\";\n%s    color=\"#a0a0a0\";\n",
			  ind, fi, ind, ind);
		for (size_t i = begin; i < end; i++)
			if (g->nodes[i].role == ROLE_WEIGHT && g->nodes[i].keep)
				emit_weight(g, &g->nodes[i], cluster ? "    " : "  ");
		os_printf(o, "%s  }\n", ind);
	}
	for (size_t i = begin; i < end; i++) {
		struct id_node *e = &g->nodes[i];
		if (!e->keep)
			continue;
		if (e->role == ROLE_INSTR)
			emit_instr(g, e, ind);
		else if (e->role == ROLE_BUF)
			emit_buffer(g, e, ind);
	}
	/* each kept buffer on the rank of its kept defining instruction */
	for (size_t i = begin; i < end; i++) {
		struct id_node *e = &g->nodes[i];
		if (e->role == ROLE_BUF && e->keep && g->nodes[i - 1].keep) {
			os_printf(o, "%s  { rank=same; ", ind);
			put_id(o, &g->nodes[i - 1]);
			os_puts(o, "; ");
			put_id(o, e);
			os_puts(o, "; }\n");
		}
	}
	if (cluster)
		os_puts(o, "  }\n");

	/* the program order */
	struct id_node *prev = NULL;
	for (size_t i = begin; i < end; i++) {
		struct id_node *e = &g->nodes[i];
		if (e->role != ROLE_INSTR || !e->keep)
			continue;
		if (prev) {
			os_puts(o, "  ");
			put_id(o, prev);
			os_puts(o, " -> ");
			put_id(o, e);
			os_puts(o, " [color=\"#b0b0b0\", weight=100];\n");
		}
		prev = e;
	}
	for (size_t i = begin; i < end; i++)
		if (g->nodes[i].role == ROLE_INSTR && g->nodes[i].keep)
			emit_operand_edges(g, &g->nodes[i]);
}

int dot_write_ir(struct ostream *o, struct ir_module *m, const struct dot_options *opt, struct diag *d)
{
	struct id g = {0};
	g.m = m;
	g.opt = opt;
	g.o = o;
	if (setup(&g, d) < 0) {
		id_free(&g);
		return -1;
	}
	os_puts(o, "digraph glow {\n");
	bool clusters = g.nsel > 1;
	if (!clusters)
		for (size_t fi = 0; fi < m->nfuncs; fi++)
			if (g.func_sel[fi]) {
				emit_func_label(&g, m->funcs[fi], "  ");
				os_puts(o, "  labelloc=t;\n");
			}
	os_puts(o, "  node [fontsize=10];\n  edge [fontsize=9];\n");
	for (size_t i = 0; i < g.nnodes;) {
		size_t end = i;
		bool any = false;
		while (end < g.nnodes && g.nodes[end].fi == g.nodes[i].fi)
			any |= g.nodes[end++].keep;
		if (any)
			emit_func(&g, i, end, clusters);
		i = end;
	}
	os_puts(o, "}\n");
	id_free(&g);
	return 0;
}
