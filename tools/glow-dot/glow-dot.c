/* glow-dot - Graphviz views of either IR level.
 *
 *   glow-dot [options] [input.glow|input.gir|-] [-o out] [-T dot|svg|png|pdf]
 *
 * Detects the IR from the file suffix (.glow, .gir) or, for standard input
 * and other names, from the first keyword of the text; parses and verifies
 * it; writes dot text (lib/dot) and, for -T svg/png/pdf, renders that text in
 * process through Graphviz's libgvc. The output is written whole or not at
 * all. Exit status 0 on success, 1 after a diagnostic.
 */
#include "dot/dot.h"
#include "graph/graph.h"
#ifdef GLOW_DOT_HAVE_IR
#include "ir/ir.h"
#endif
#include "support/cl.h"
#include "support/io.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

struct dot_tool_options {
	const char *output;
	const char *format;
	const char *func;
	const char *subgraph;
	unsigned depth;
	unsigned max_label_len;
	bool no_attrs;
	struct cl_list highlight;
	struct cl_list input;
};

#define DEPTH_UNSET UINT_MAX
#define DEPTH_DEFAULT 1u

/* Splits every -highlight value at commas into one array of kind names
 * (pointing into a copy the caller frees). Empty names are skipped. */
static char *split_highlight(const struct cl_list *l, const char ***names, size_t *n)
{
	size_t total = 0, count = 0;
	for (size_t i = 0; i < l->n; i++)
		total += strlen(l->v[i]) + 1;
	char *buf = xmalloc(total + 1);
	const char **v = xmalloc((total + 1) * sizeof(*v));
	char *p = buf;
	for (size_t i = 0; i < l->n; i++) {
		size_t k = strlen(l->v[i]);
		memcpy(p, l->v[i], k + 1);
		for (char *s = p; s <= p + k;) {
			char *e = strchr(s, ',');
			if (!e)
				e = p + k;
			*e = 0;
			if (*s)
				v[count++] = s;
			s = e + 1;
		}
		p += k + 1;
	}
	*names = v;
	*n = count;
	return buf;
}

/* The dot text of the input, in a memory stream; -1 after a diagnostic. */
static int write_dot_text(const char *in, const char *buf, size_t len, const struct dot_options *opt,
			  struct ostream *text, struct diag *d)
{
	const char *name = strcmp(in, "-") == 0 ? "<stdin>" : in;
	enum dot_ir ir = dot_detect_ir(in, buf, len);
	struct type_ctx types;
	type_ctx_init(&types);
	int rc = -1;
	if (ir == DOT_IR_INSTR) {
#ifdef GLOW_DOT_HAVE_IR
		struct ir_module *m = ir_module_parse(&types, buf, len, name, d, true);
		if (m) {
			rc = dot_write_ir(text, m, opt, d);
			ir_module_destroy(m);
		}
#else
		diag_error(d, LOC_NONE, "%s: this build has no instruction IR library", name);
#endif
	} else {
		struct module *m = module_parse(&types, buf, len, name, d, true);
		if (m) {
			rc = dot_write_graph(text, m, opt, d);
			module_destroy(m);
		}
	}
	type_ctx_free(&types);
	return rc;
}

static int run(struct dot_tool_options *o, struct diag *d)
{
	const char *in = o->input.n ? o->input.v[0] : "-";
	int fmt = dot_format_lookup(o->format);
	if (fmt < 0) {
		diag_error(d, LOC_NONE, "-T: unknown output format '%s' (expected dot, svg, png or pdf)", o->format);
		return 1;
	}
	if (o->depth != DEPTH_UNSET && !o->subgraph) {
		diag_error(d, LOC_NONE, "-depth needs -subgraph");
		return 1;
	}
	struct dot_options opt = {0};
	opt.max_label_len = o->max_label_len;
	opt.no_attrs = o->no_attrs;
	opt.subgraph = o->subgraph;
	opt.depth = o->depth == DEPTH_UNSET ? DEPTH_DEFAULT : o->depth;
	char *func_name = NULL;
	if (o->func) {
		char sigil = '@';
		if (o->func[0] == '@')
			func_name = dot_parse_value_ref(o->func, &sigil);
		else if (o->func[0] != '%')
			func_name = xstrdup(o->func);
		if (!func_name || sigil != '@' || !func_name[0]) {
			diag_error(d, LOC_NONE, "-func: '%s' is not a function name (expected @name)", o->func);
			free(func_name);
			return 1;
		}
		opt.func = func_name;
	}
	const char **hl = NULL;
	char *hl_buf = split_highlight(&o->highlight, &hl, &opt.nhighlight);
	opt.highlight = hl;

	int status = 1;
	char *buf = NULL;
	size_t len = 0;
	struct ostream text;
	ostream_mem(&text);
	if (read_input(in, &buf, &len, d) == 0 && write_dot_text(in, buf, len, &opt, &text, d) == 0) {
		struct ostream out;
		if (ostream_open(&out, o->output, d) == 0) {
			int rc = 0;
			if (fmt == DOT_FMT_DOT)
				os_write(&out, text.buf, text.len);
			else
				rc = dot_render(text.buf, text.len, (enum dot_format)fmt, &out, d);
			if (rc == 0)
				status = ostream_commit(&out, d) ? 1 : 0;
			else
				ostream_abort(&out);
		}
	}
	ostream_abort(&text);
	free(buf);
	free(hl);
	free(hl_buf);
	free(func_name);
	return status;
}

int main(int argc, char **argv)
{
	struct dot_tool_options o = {0};
	o.output = "-";
	o.format = "dot";
	o.depth = DEPTH_UNSET;
	const struct cl_opt opts[] = {
		{"o", CL_STRING, &o.output, "filename", "Output file ('-' for standard output, the default)", 0, NULL},
		{"T", CL_STRING, &o.format, "dot|svg|png|pdf", "Output format (default dot: the dot text itself)", 0,
		 NULL},
		{"func", CL_STRING, &o.func, "@name", "Draw only this function", 0, NULL},
		{"max-label-len", CL_UINT, &o.max_label_len, "N",
		 "Cut node label lines after N characters (0: no limit)", 0, NULL},
		{"no-attrs", CL_FLAG, &o.no_attrs, NULL, "Leave attributes and initializers out of the labels", 0,
		 NULL},
		{"highlight", CL_LIST, &o.highlight, "Kind,...", "Highlight the nodes or instructions of these kinds",
		 0, NULL},
		{"subgraph", CL_STRING, &o.subgraph, "%value",
		 "Draw only the neighbourhood of a value (%name or @name)", 0, NULL},
		{"depth", CL_UINT, &o.depth, "N", "With -subgraph: how many edges away from the value (default 1)", 0,
		 NULL},
	};
	const struct cl_tool tool = {
		"glow-dot", "Graphviz views of the graph IR and the instruction IR",
		"[options] [input.glow|input.gir|-]", opts, GLOW_ARRAY_SIZE(opts), &o.input, 1,
	};
	struct diag d;
	diag_init(&d, "glow-dot");
	int status;
	enum cl_result r = cl_parse(&tool, argc, argv, &d);
	if (r != CL_OK)
		status = r == CL_EXIT ? 0 : 1;
	else
		status = run(&o, &d);
	cl_free(&tool);
	diag_free(&d);
	return status;
}
