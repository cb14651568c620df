/* driver.c - glow-dot's driver: detects the IR of the input, parses and
 * verifies it, writes dot text or renders it through Graphviz, with the
 * stage times of -time and a progress line on a terminal (the behaviour is
 * described in tools/glow-dot/glow-dot.c).
 */
#define _POSIX_C_SOURCE 200809L /* clock_gettime, isatty */
#include "dot/driver.h"
#include "dot/dot.h"
#include "graph/graph.h"
#ifdef GLOW_DOT_HAVE_IR
#include "ir/ir.h"
#endif
#include "support/io.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

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

/* ------------------------------------------------------------------ */
/* Stage times (-time) and the progress line                            */

enum stage { ST_READ, ST_BUILD, ST_LAYOUT, ST_RENDER, ST_WRITE, ST_COUNT };
static const char *const stage_names[ST_COUNT] = {"read", "build graph", "layout", "render", "write"};

struct stages {
	double secs[ST_COUNT];
	int cur;      /* running stage, -1: none */
	double since; /* when it began */
	bool time;    /* -time: report at the end */
	bool progress; /* stderr is a terminal: a status line while laying out */
	bool line;    /* a status line is on the screen */
};

static double now_seconds(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Ends the running stage (if any) and begins `next` (-1: none). */
static void stage_begin(struct stages *st, int next)
{
	double t = now_seconds();
	if (st->cur >= 0)
		st->secs[st->cur] += t - st->since;
	st->cur = next;
	st->since = t;
	if (st->line) { /* the status line is erased, not left among diagnostics */
		fputs("\r\033[K", stderr);
		st->line = false;
	}
}

/* Graphviz gives no progress from inside its layout, so the line says what
 * is being laid out and stays until the next stage begins; it is written
 * only when stderr is a terminal, and only for graphs big enough to take a
 * noticeable time. */
#define PROGRESS_MIN_NODES 200u
static void render_stage(void *ctx, enum dot_stage s, size_t nodes, size_t edges)
{
	struct stages *st = ctx;
	static const int map[] = {[DOT_STAGE_LAYOUT] = ST_LAYOUT, [DOT_STAGE_RENDER] = ST_RENDER,
				  [DOT_STAGE_WRITE] = ST_WRITE};
	stage_begin(st, map[s]);
	if (st->progress && s == DOT_STAGE_LAYOUT && nodes >= PROGRESS_MIN_NODES) {
		fprintf(stderr, "glow-dot: laying out %zu nodes and %zu edges...", nodes, edges);
		fflush(stderr);
		st->line = true;
	} else if (st->progress && s == DOT_STAGE_RENDER && nodes >= PROGRESS_MIN_NODES) {
		fprintf(stderr, "glow-dot: rendering %zu nodes...", nodes);
		fflush(stderr);
		st->line = true;
	}
}

static void report_times(const struct stages *st)
{
	double total = 0;
	fputs("glow-dot: stage times (seconds):\n", stderr);
	for (int i = 0; i < ST_COUNT; i++) {
		fprintf(stderr, "  %9.4f  %s\n", st->secs[i], stage_names[i]);
		total += st->secs[i];
	}
	fprintf(stderr, "  %9.4f  total\n", total);
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

int dot_tool_run(void *opts, struct diag *d)
{
	struct dot_tool_options *o = opts;
	const char *in = o->input.n ? o->input.v[0] : "-";
	int fmt = dot_format_lookup(o->format);
	if (fmt < 0) {
		diag_error(d, LOC_NONE, "-T: unknown output format '%s' (expected dot, svg, png or pdf)", o->format);
		return 1;
	}
	if (o->focus && o->subgraph) {
		diag_error(d, LOC_NONE, "-focus and -subgraph are two spellings of one option; give one");
		return 1;
	}
	const char *focus = o->focus ? o->focus : o->subgraph;
	if (o->depth != DOT_DEPTH_UNSET && !focus) {
		diag_error(d, LOC_NONE, "-depth needs -focus (or -subgraph)");
		return 1;
	}
	if (o->range && focus) {
		diag_error(d, LOC_NONE, "-range and -focus each choose the part to draw; give one");
		return 1;
	}
	/* png and pdf bytes on a terminal are garbage at best and can change its
	 * settings; they are written to files and pipes only */
	if ((fmt == DOT_FMT_PNG || fmt == DOT_FMT_PDF) && strcmp(o->output, "-") == 0 && isatty(STDOUT_FILENO)) {
		diag_error(d, LOC_NONE, "-T %s: not writing binary output to a terminal; use -o FILE or redirect "
			   "standard output", o->format);
		return 1;
	}
	struct dot_options opt = {0};
	opt.max_label_len = o->max_label_len;
	opt.no_attrs = o->no_attrs;
	opt.subgraph = focus;
	opt.range = o->range;
	opt.depth = o->depth == DOT_DEPTH_UNSET ? DOT_DEPTH_DEFAULT : o->depth;
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
	struct stages st = {.cur = -1, .time = o->time, .progress = isatty(STDERR_FILENO) != 0};
	struct dot_render_hooks hooks = {render_stage, &st};
	stage_begin(&st, ST_READ);
	int rc = read_input(in, &buf, &len, d);
	if (rc == 0) {
		stage_begin(&st, ST_BUILD);
		rc = write_dot_text(in, buf, len, &opt, &text, d);
	}
	if (rc == 0) {
		struct ostream out;
		if (ostream_open(&out, o->output, d) == 0) {
			if (fmt == DOT_FMT_DOT) {
				stage_begin(&st, ST_WRITE);
				os_write(&out, text.buf, text.len);
			} else {
				rc = dot_render(text.buf, text.len, (enum dot_format)fmt, &out, d, &hooks);
			}
			if (rc == 0)
				status = ostream_commit(&out, d) ? 1 : 0;
			else
				ostream_abort(&out);
		}
	}
	stage_begin(&st, -1);
	if (st.time && status == 0)
		report_times(&st);
	ostream_abort(&text);
	free(buf);
	free(hl);
	free(hl_buf);
	free(func_name);
	return status;
}
