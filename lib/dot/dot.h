/* dot.h - Graphviz views of both IR levels (the glowdot library).
 *
 * The library writes dot text itself, deterministically and independently of
 * the installed Graphviz: the same IR and options give the same bytes. Only
 * rendering to svg/png/pdf goes through Graphviz's libgvc/libcgraph, in
 * process (dot_render).
 *
 * Graph IR (dot_write_graph): one dot node per IR node, labelled with its
 * kind, name, non-default attributes and result types; storage drawn apart
 * (placeholders as houses, constants as 3-d boxes with their type, never
 * their data); operand edges labelled with the operand name from Nodes.def;
 * one cluster per function when several are drawn; writes of side-effecting
 * nodes into placeholders drawn as red edges into the placeholder.
 *
 * Instruction IR (dot_write_ir): the program order top to bottom, one dot
 * node per instruction listing its operands, allocs and views standing for
 * their buffers (lifetimes and, when recorded, planned offset and size),
 * weights beside their readers, and data edges from each write to the reads
 * of its bytes; built so that dot's layout stays fast on big programs.
 *
 * Labels: every string that reaches the dot text goes through one escaper
 * (dot_label), so any name is safe; -max-label-len truncates label lines.
 */
#ifndef GLOW_DOT_DOT_H
#define GLOW_DOT_DOT_H

#include "support/diag.h"

#include <stdbool.h>
#include <stddef.h>

struct ostream;
struct module;

/* What to draw and how. Zero-initialised: everything, full labels. */
struct dot_options {
	unsigned max_label_len;        /* longest label line in characters; 0: no limit */
	bool no_attrs;                 /* leave attributes (and initializers) out of labels */
	const char *const *highlight;  /* kind names to highlight (checked against the IR's table) */
	size_t nhighlight;
	const char *func;              /* draw only this function (name without '@'); NULL: all */
	const char *subgraph;          /* -focus: a value ("%x", "@w", or "x"); NULL: all */
	unsigned depth;                /* with subgraph: edges away from the value to keep */
	const char *range;             /* "FIRST:LAST" positions or names, either may be empty; NULL: all */
};

/* Which IR a text holds. */
enum dot_ir { DOT_IR_UNKNOWN, DOT_IR_GRAPH, DOT_IR_INSTR };

/* By the file suffix (.glow, .gir) when path has one, else by the first
 * keyword after comments and blank lines: `function`, `memory`, `declare`,
 * `program`
 * mean the instruction IR; `module`, `placeholder`, `constant`, `func` the
 * graph IR. */
enum dot_ir dot_detect_ir(const char *path, const char *buf, size_t len);

/* Splits a value reference (-focus, -func): sigil ('%' or '@') and the name, unquoting
 * `"..."` names with the IR escapes. Returns a malloc'd name or NULL if the
 * text is not a value reference. */
char *dot_parse_value_ref(const char *text, char *sigil);

/* Output formats. */
enum dot_format { DOT_FMT_DOT, DOT_FMT_SVG, DOT_FMT_PNG, DOT_FMT_PDF };
/* -1 if unknown */
int dot_format_lookup(const char *s);

/* Writes the graph IR module as dot text. Reports bad options (unknown
 * function, unknown -focus value, bad -range, unknown highlight kind) to d
 * and returns -1 before writing anything; 0 on success. */
int dot_write_graph(struct ostream *o, struct module *m, const struct dot_options *opt, struct diag *d);

/* Writes the instruction IR module as dot text; same contract as
 * dot_write_graph (highlight names are instruction kinds). */
struct ir_module;
int dot_write_ir(struct ostream *o, struct ir_module *m, const struct dot_options *opt, struct diag *d);

/* The stages dot_render goes through, announced to a caller's hook as each
 * one begins (for -time and a progress line): the layout of the parsed dot
 * text, the rendering, the write of the result to the stream. */
enum dot_stage { DOT_STAGE_LAYOUT, DOT_STAGE_RENDER, DOT_STAGE_WRITE };
struct dot_render_hooks {
	/* nodes and edges of the graph Graphviz read */
	void (*stage)(void *ctx, enum dot_stage stage, size_t nodes, size_t edges);
	void *ctx;
};

/* Lays out dot text (len bytes) with Graphviz's dot layout in process and
 * writes the rendering in fmt (not DOT_FMT_DOT) to o. A png larger than 12
 * megapixels (or 30000 pixels a side) is drawn at a smaller scale, with a
 * note to d. hooks may be NULL. Returns 0, or -1 after reporting to d
 * (nothing has been written then). */
int dot_render(const char *text, size_t len, enum dot_format fmt, struct ostream *o, struct diag *d,
	       const struct dot_render_hooks *hooks);

#endif
