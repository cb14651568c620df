/* dot_impl.h - helpers shared by the graph IR and instruction IR writers
 * (not part of the library's interface). */
#ifndef GLOW_DOT_DOT_IMPL_H
#define GLOW_DOT_DOT_IMPL_H

#include "dot/dot.h"
#include "support/io.h"

#include <stdbool.h>
#include <stddef.h>

/* Writes raw label text as one dot string: `"..."`. Lines of raw are
 * separated by '\n' and become dot's centred line breaks; each line longer
 * than max_line characters (UTF-8 code points; 0: no limit) keeps its first
 * max_line characters followed by "...". Escapes: `"` and `\` are
 * backslashed, `&` becomes `&amp;` (Graphviz decodes entities in labels),
 * control bytes and bytes that are not valid UTF-8 are shown as `\XX` (two
 * hex digits). Whatever raw holds, the result is one valid dot string. */
void dot_quote(struct ostream *o, const char *raw, size_t len, unsigned max_line);
void dot_quote_cstr(struct ostream *o, const char *raw, unsigned max_line);

/* A label under construction: raw text in a memory stream. */
struct dot_label {
	struct ostream text;
	bool started;
};
void dot_label_init(struct dot_label *l);
/* starts a new line (the first call starts the first line) */
struct ostream *dot_label_line(struct dot_label *l);
/* writes ` label="..."` (quoted as dot_quote) and frees the label */
void dot_label_emit(struct ostream *o, struct dot_label *l, unsigned max_line);
/* the same with another attribute name (`headlabel`) */
void dot_label_emit_as(struct ostream *o, const char *attr, struct dot_label *l, unsigned max_line);

/* Graph attributes that keep the layout of a big graph IR drawing (nnodes
 * dot nodes) to seconds: above DOT_BIG_NODES nodes the x-coordinate network
 * simplex, which dominates dot's time there, is cut to a fifth of the node
 * count in iterations (`nslimit`); ranks and the order within ranks are
 * unchanged, nodes are only less well centred over their neighbours (the
 * drawing gets wider). Writes nothing for smaller drawings. (The graph IR
 * view also moves its edge labels to the edges' heads there, and the
 * instruction IR view bounds its edge spans.) */
#define DOT_BIG_NODES 600u
void dot_layout_limits(struct ostream *o, size_t nnodes);

/* One end of -range=FIRST:LAST: left out (open), a position, or a name. */
struct dot_range_end {
	bool open;
	bool is_pos;
	unsigned long pos;
	char *name; /* malloc'd, without sigil and unquoted */
};
/* Splits text at the ':' outside a quoted name and reads both ends: digits
 * are a position, `%name`, `%"quoted"` or a bare name a name. Reports a text
 * that is not a range to d and returns -1 (nothing to free then). */
int dot_parse_range(const char *text, struct dot_range_end *first, struct dot_range_end *last, struct diag *d);
void dot_range_end_free(struct dot_range_end *e);

/* A function as -range sees it: n items (nodes or instructions) in
 * program order, called `item` in messages ("node"), and lookup, which
 * returns the position of the item named name in ctx, or -1 after writing
 * the name as the IR spells it to nm and a hint (" (did you mean ...)") to
 * hint. */
struct dot_range_view {
	const char *item;
	const char *func;
	size_t n;
	long (*lookup)(void *ctx, const char *name, struct ostream *hint, struct ostream *nm);
	void *ctx;
};
/* Reads -range text against v into positions lo <= hi; -1 after reporting
 * a text that is not a range, an empty function, an end that names no
 * item or a range whose ends are out of order. */
int dot_range_resolve(const char *text, const struct dot_range_view *v, long *lo, long *hi, struct diag *d);

/* Appends "; did you mean 'BEST'?" to hint when sg found a close name,
 * spelt by put (the IR's printer of a local or a global name). */
struct suggest;
void dot_put_suggestion(struct ostream *hint, const struct suggest *sg, void (*put)(struct ostream *, const char *));

/* Whether the -focus value text named exactly one value (hits of them);
 * else reports none (with hint, and " in the selected function" where
 * in_selected) or too many. Frees hint, a memory stream, either way. */
bool dot_focus_found(const char *text, unsigned hits, bool in_selected, struct ostream *hint, struct diag *d);

/* Parses a -focus value: `%name`, `@name` (quoted names as in the IR) or a
 * bare name, for which *sigil is set to 0. Returns a malloc'd name or NULL
 * if the text is no name. */
char *dot_parse_focus(const char *text, char *sigil);

/* 1 if kind is one of opt's highlight names */
bool dot_is_highlighted(const struct dot_options *opt, const char *kind);

/* Writes a node's drawing attributes: `shape=S, style="ST", fillcolor="F"`
 * (style and fill may be NULL). A highlighted node is filled gold and drawn
 * bold; the -focus centre gets a thick red outline. */
void dot_node_style(struct ostream *o, const char *shape, const char *style, const char *fill, bool highlight,
		    bool center);

/* 1 if an attribute value equals its default (then labels leave it out,
 * as the printers do). */
struct attr_desc;
union attr_val;
bool dot_attr_is_default(const struct attr_desc *a, const union attr_val *v);
/* `name = value` in the IR's attribute syntax */
void dot_put_attr(struct ostream *o, const struct attr_desc *a, const union attr_val *v);
/* "dense", "splat", "zero", "xavier", "file" for an enum init_kind */
const char *dot_init_name(int k);

#endif
