/* ir_dot.c - the instruction IR as dot text.
 *
 * A function is drawn so that dot lays out programs of thousands of
 * instructions in seconds (docs/glow-dot.md has the measurements):
 *
 *   - instructions f<F>_i<K>, K the position in the program, labelled
 *     "K: kind", the name (if any), the non-default attributes and one line
 *     per operand ("@in Src %buf"); a grey chain of heavy edges between
 *     consecutive instructions keeps the program order top to bottom;
 *   - buffers are the alloc and tensorview nodes that define them (type,
 *     `live A..D` or the viewed buffer and offset, the planned place);
 *     weights f<F>_w<K> are nodes of their own (mutable ones as houses,
 *     constant ones as 3-d boxes, initializer kind but never the data);
 *   - data edges from the instruction that last wrote some bytes to each
 *     reader of them (emit_data_edges), from a weight to its readers, into
 *     a weight from its writers; none has a label and none joins two nodes
 *     of one rank;
 *   - with a recorded memory plan, the regions' sizes in the function's
 *     label and each weight's and allocation's offset and size in bytes.
 *
 * Several functions: one cluster each. The graph walked by -focus (and
 * -subgraph) is the bipartite graph of instructions and the buffers they
 * define or use (struct id_node with ROLE_BUF for allocs and views): it
 * keeps what is within opt->depth steps, and an instruction is drawn when it
 * or the buffer it defines is kept. -range keeps instructions by position.
 * The chain then links the drawn instructions in program order.
 *
 * All ids are positional and all text goes through dot_quote, so the output
 * is a function of the IR and the options only.
 */
#include "dot/dot_impl.h"
#include "ir/ir.h"
#include "support/hashmap.h"
#include "support/suggest.h"
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
	const struct id_node *center; /* the -focus value's node */
	bool long_ok;                 /* draw data edges of any span */
	unsigned cut;                 /* data edges left out for their span */
};

/* Data edges longer than LONG_SPAN program positions are drawn only when at
 * most LONG_OK_INSTRS instructions are drawn (see emit_data_edges). Every
 * rank an edge crosses is a node more for dot's network simplex: DenseNet-121
 * (1410 instructions) has 57 edges of 20 to 24 positions among 2937, and
 * they alone took its x-coordinate pass from 0.2 to 1.4 seconds. */
#define LONG_SPAN 16u
#define LONG_OK_INSTRS 400u

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
 * adjacency lists -focus walks. */
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

/* "did you mean" among the names of the selected functions' weights and
 * instructions (instructions only when instrs_only). */
static void suggest_name(struct id *g, const char *name, bool instrs_only, struct ostream *hint)
{
	struct suggest sg;
	suggest_init(&sg, name, strlen(name));
	for (size_t fi = 0; fi < g->m->nfuncs; fi++) {
		if (!g->func_sel[fi])
			continue;
		if (!instrs_only)
			ir_for_each_weight(g->m->funcs[fi], w)
				suggest_offer(&sg, w->v.name, strlen(w->v.name));
		ir_for_each_instr(g->m->funcs[fi], in)
			if (in->v.name)
				suggest_offer(&sg, in->v.name, strlen(in->v.name));
	}
	dot_put_suggestion(hint, &sg, ir_print_local);
}

static struct id_node *find_center(struct id *g, struct diag *d)
{
	const char *text = g->opt->subgraph;
	char sigil;
	char *name = dot_parse_focus(text, &sigil);
	if (!name || sigil == '@') {
		diag_error(d, LOC_NONE, "-focus: '%s' is not a value of the instruction IR (expected %%name or name)",
			   text);
		free(name);
		return NULL;
	}
	struct id_node *found = NULL;
	unsigned hits = 0;
	for (size_t fi = 0; fi < g->m->nfuncs; fi++) {
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
	struct ostream hint;
	ostream_mem(&hint);
	if (hits == 0)
		suggest_name(g, name, false, &hint);
	free(name);
	return dot_focus_found(text, hits, g->opt->func != NULL, &hint, d) ? found : NULL;
}

/* The drawing and the function -range reads (dot_range_view's ctx). */
struct id_range {
	struct id *g;
	struct ir_func *f;
};

/* dot_range_view's lookup: the program position of instruction name. */
static long range_lookup(void *ctx, const char *name, struct ostream *hint, struct ostream *nm)
{
	struct id_range *r = ctx;
	struct ir_value *v = ir_func_find(r->f, name, strlen(name));
	struct id_node *n = v ? ptrmap_get(&r->g->instrs, v) : NULL;
	if (n)
		return (long)n->ord;
	if (v)
		os_puts(hint, " (that is a weight)");
	else
		suggest_name(r->g, name, true, hint);
	ir_print_local(nm, name);
	return -1;
}

/* Keeps the instructions of -range, the buffers they define and the
 * weights they use. */
static int select_range(struct id *g, struct diag *d)
{
	if (g->nsel != 1) {
		diag_error(d, LOC_NONE, "-range: the module has %u functions; choose one with -func", g->nsel);
		return -1;
	}
	struct ir_func *f = NULL;
	for (size_t fi = 0; fi < g->m->nfuncs; fi++)
		if (g->func_sel[fi])
			f = g->m->funcs[fi];
	struct id_range r = {g, f};
	struct dot_range_view v = {"instruction", f->name, f->ninstrs, range_lookup, &r};
	long lo, hi;
	if (dot_range_resolve(g->opt->range, &v, &lo, &hi, d))
		return -1;
	for (size_t i = 0; i < g->nnodes; i++) {
		struct id_node *e = &g->nodes[i];
		if (e->role != ROLE_INSTR || (long)e->ord < lo || (long)e->ord > hi)
			continue;
		e->keep = true;
		for (unsigned k = e->adj_begin; k < e->adj_end; k++) {
			struct id_node *x = &g->nodes[g->adj[k]];
			if (x->role == ROLE_WEIGHT || (x->role == ROLE_BUF && x == e + 1))
				x->keep = true;
		}
	}
	return 0;
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
	if (opt->range)
		return select_range(g, d);
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

/* The buffer an alloc or tensorview defines, as lines of its instruction's
 * label: type, then the lifetime and planned place (alloc) or the buffer and
 * byte offset it looks into (tensorview). */
static void put_buffer_lines(struct id *g, struct id_node *e, struct dot_label *l)
{
	struct ir_instr *in = e->in;
	struct id_node *b = e + 1; /* collected right after its instruction */
	type_print(dot_label_line(l), in->v.type);
	if (in->v.vkind == IV_VIEW) {
		uint64_t off = 0;
		struct ir_value *root = ir_value_root(&in->v, &off);
		if (root) {
			struct ostream *t = dot_label_line(l);
			os_puts(t, "in ");
			ir_print_local(t, root->name);
			os_puts(t, " at +");
			os_u64(t, off);
		}
		return;
	}
	struct ostream *t = dot_label_line(l);
	os_printf(t, "live %u..", e->ord);
	if (b->dealloc >= 0)
		os_printf(t, "%d", b->dealloc);
	else
		os_puts(t, "end");
	if (g->m->funcs[e->fi]->plan.present && in->offset >= 0)
		put_plan(dot_label_line(l), in->offset, in->v.type);
}

static void emit_instr(struct id *g, struct id_node *e, const char *ind)
{
	struct ir_instr *in = e->in;
	const struct instr_desc *dd = instr_desc(in->kind);
	struct ostream *o = g->o;
	bool typed = (dd->flags & IF_TYPED) != 0;
	struct dot_label l;
	dot_label_init(&l);
	os_printf(dot_label_line(&l), "%u: %s", e->ord, dd->name);
	if (in->v.name)
		ir_print_local(dot_label_line(&l), in->v.name);
	if (typed)
		put_buffer_lines(g, e, &l);
	if (!g->opt->no_attrs)
		for (unsigned i = 0; i < dd->nattrs; i++)
			if (!dot_attr_is_default(&dd->attrs[i], &in->attrs[i]))
				dot_put_attr(dot_label_line(&l), &dd->attrs[i], &in->attrs[i]);
	/* operands as label lines: the buffer names carry the data flow when an
	 * edge is not drawn (outside -range/-focus, or a cut long edge) */
	for (unsigned j = 0; j < in->nops && in->kind != IK_tensorview; j++) {
		struct ostream *t = dot_label_line(&l);
		if (in->kind != IK_dealloc)
			os_printf(t, "@%s %s ", ir_qual_name(in->ops[j].qual), j < dd->nops ? dd->op_names[j] : "?");
		if (in->ops[j].val->name)
			ir_print_local(t, in->ops[j].val->name);
		else
			os_puts(t, "?");
	}
	os_printf(o, "%s  ", ind);
	put_id(o, e);
	os_puts(o, " [");
	dot_label_emit(o, &l, g->opt->max_label_len);
	bool hl = dot_is_highlighted(g->opt, dd->name);
	bool center = e == g->center || (typed && e + 1 == g->center);
	if (in->kind == IK_alloc)
		dot_node_style(o, "box", "rounded,filled", "#e3f4dc", hl, center);
	else if (in->kind == IK_tensorview)
		dot_node_style(o, "box", "rounded,dashed", NULL, hl, center);
	else if (in->kind == IK_dealloc)
		dot_node_style(o, "box", "rounded,dashed", NULL, hl, center);
	else
		dot_node_style(o, "box", "rounded", NULL, hl, center);
	os_puts(o, "];\n");
}

/* ------------------------------------------------------------------ */
/* Data-flow edges                                                      */

/* The drawing joins the instruction that last wrote some bytes to each
 * instruction that reads them: alloc and tensorview nodes stand for their
 * buffers, so there are no edges into buffers that point back up the
 * program. Writes and reads through views are byte ranges of the view's
 * root (the alloc or weight), so writes into slices of a concatenation
 * buffer all reach its readers. Every such edge points down the program,
 * none is labelled and none joins two nodes of one rank: the layout has no
 * flat edges at all (see render.c for why that matters with Graphviz 2.42).
 *
 * When more than LONG_OK_INSTRS instructions are drawn, edges that span
 * more than LONG_SPAN program positions are left out: the reader's operand
 * line still names the buffer, and the layout of programs of thousands of
 * instructions stays within seconds (see docs/glow-dot.md). */

struct writer {
	unsigned node;        /* instruction node */
	uint64_t lo, hi;      /* bytes of the root written */
};

struct wlist {
	struct writer *v;
	size_t n, cap;
};

/* The root buffer node of v (weight or alloc) and the byte range of v. */
static struct id_node *root_range(struct id *g, struct ir_value *v, uint64_t *lo, uint64_t *hi)
{
	uint64_t off = 0;
	struct ir_value *root = ir_value_root(v, &off);
	if (!root || !v->type)
		return NULL;
	*lo = off;
	*hi = off + type_bytes(v->type);
	return buffer_of(g, root);
}

/* Writes `src -> dst` once per pair for this instruction: seen holds the
 * other ends already joined to it (sources of its reads, and the weights it
 * writes offset by g->nnodes). */
static void data_edge(struct id *g, struct id_node *src, struct id_node *dst, const char *attrs, unsigned *seen,
		      size_t *nseen)
{
	unsigned s = dst->role == ROLE_WEIGHT ? (unsigned)(g->nnodes + (size_t)(dst - g->nodes))
					      : (unsigned)(src - g->nodes);
	for (size_t i = 0; i < *nseen; i++)
		if (seen[i] == s)
			return;
	seen[(*nseen)++] = s;
	if (!src->keep || !dst->keep)
		return;
	if (src->role == ROLE_INSTR && dst->role == ROLE_INSTR && dst->ord - src->ord > LONG_SPAN && !g->long_ok) {
		g->cut++;
		return;
	}
	os_puts(g->o, "  ");
	put_id(g->o, src);
	os_puts(g->o, " -> ");
	put_id(g->o, dst);
	os_puts(g->o, attrs);
}

static void emit_data_edges(struct id *g, size_t begin, size_t end)
{
	struct wlist *wl = xcalloc(end - begin + 1, sizeof(*wl)); /* per root node */
	unsigned *seen = xmalloc(2 * (end - begin + 1) * sizeof(*seen)); /* distinct other ends of one instruction */
	for (size_t i = begin; i < end; i++) {
		struct id_node *e = &g->nodes[i];
		if (e->role != ROLE_INSTR)
			continue;
		struct ir_instr *in = e->in;
		if (in->kind == IK_tensorview || in->kind == IK_alloc)
			continue; /* aliasing and allocation move no data */
		size_t nseen = 0;
		for (unsigned j = 0; j < in->nops; j++) {
			uint64_t lo, hi;
			struct id_node *r = root_range(g, in->ops[j].val, &lo, &hi);
			if (!r)
				continue;
			struct wlist *w = &wl[r - g->nodes - begin];
			if (in->kind == IK_dealloc) {
				w->n = 0;
				continue;
			}
			if (in->ops[j].qual == IQ_OUT)
				continue;
			bool any = false;
			for (size_t k = 0; k < w->n; k++)
				if (w->v[k].lo < hi && lo < w->v[k].hi) {
					data_edge(g, &g->nodes[w->v[k].node], e, ";\n", seen, &nseen);
					any = true;
				}
			if (!any && r->role == ROLE_WEIGHT)
				data_edge(g, r, e, " [color=\"#808080\"];\n", seen, &nseen);
			else if (!any)
				data_edge(g, r - 1, e, " [style=dashed, color=\"#2e8b2e\"];\n", seen, &nseen);
		}
		for (unsigned j = 0; j < in->nops; j++) {
			uint64_t lo, hi;
			struct id_node *r = root_range(g, in->ops[j].val, &lo, &hi);
			if (!r || in->kind == IK_dealloc || in->ops[j].qual == IQ_IN)
				continue;
			struct wlist *w = &wl[r - g->nodes - begin];
			size_t n = 0;
			for (size_t k = 0; k < w->n; k++)
				if (!(lo <= w->v[k].lo && w->v[k].hi <= hi))
					w->v[n++] = w->v[k]; /* still visible outside this write */
			w->n = n;
			if (!w->v && r->role == ROLE_BUF) /* the buffer's first write */
				data_edge(g, r - 1, e, " [style=dashed, color=\"#2e8b2e\"];\n", seen, &nseen);
			if (w->n == w->cap)
				w->v = xgrow(w->v, &w->cap, w->n + 1, sizeof(*w->v));
			w->v[w->n++] = (struct writer){(unsigned)i, lo, hi};
			/* a result leaves the program here; an @inout weight is also
			 * read above, and the edge back must not make a cycle */
			if (r->role == ROLE_WEIGHT)
				data_edge(g, e, r,
					  in->ops[j].qual == IQ_INOUT
						  ? " [color=\"#8a2be2\", style=bold, constraint=false];\n"
						  : " [color=\"#1f5fbf\", style=bold];\n",
					  seen, &nseen);
		}
	}
	for (size_t i = 0; i < end - begin; i++)
		free(wl[i].v);
	free(wl);
	free(seen);
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

/* An instruction is drawn when it or the buffer it defines was selected. */
static void mark_drawn(struct id *g, size_t begin, size_t end)
{
	for (size_t i = begin; i < end; i++) {
		struct id_node *e = &g->nodes[i];
		if (e->role == ROLE_BUF && e->keep)
			g->nodes[i - 1].keep = true;
	}
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
	for (size_t i = begin; i < end; i++) {
		struct id_node *e = &g->nodes[i];
		if (!e->keep)
			continue;
		if (e->role == ROLE_WEIGHT)
			emit_weight(g, e, ind);
		else if (e->role == ROLE_INSTR)
			emit_instr(g, e, ind);
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
	emit_data_edges(g, begin, end);
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
	size_t drawn = 0;
	mark_drawn(&g, 0, g.nnodes);
	for (size_t i = 0; i < g.nnodes; i++) {
		drawn += g.nodes[i].keep && g.nodes[i].role == ROLE_INSTR;
	}
	g.long_ok = drawn <= LONG_OK_INSTRS;
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
	if (g.cut)
		diag_note(d, LOC_NONE,
			  "%u data edges spanning more than %u instructions are left out of this drawing of %zu "
			  "instructions (their operand lines name the buffers); -range or -focus draws them",
			  g.cut, LONG_SPAN, drawn);
	id_free(&g);
	return 0;
}
