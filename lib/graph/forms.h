/* forms.h - module attributes and the three text forms of the graph IR
 * (docs/GraphIR.md, "Module attributes" and "Text forms").
 *
 * Module attributes are named values a module carries through the text
 * (`attributes {key = value, ...}`) and across passes: the form the module
 * is in, a training configuration, later the quantization map. Values are
 * integers, floats, booleans, strings and flat lists of those. They are
 * kept sorted by key, so the text is canonical whatever order passes set
 * them in, and live in the module's arena.
 *
 * The forms (after RAF's IR format): ANF binds every value with `let` in an
 * explicit evaluation order; GNF nests a value with one use in its user and
 * names the rest; BBNF is GNF inside each basic block with `let` bindings.
 * The module's form is its attribute "form" ("anf", "gnf", "bbnf"); absent,
 * the module prints in the default form (every value named, source names
 * kept).
 */
#ifndef GLOW_GRAPH_FORMS_H
#define GLOW_GRAPH_FORMS_H

#include "graph/graph.h"

#include <stdbool.h>
#include <stdint.h>

struct ostream;

enum mattr_kind { MA_INT, MA_FLOAT, MA_BOOL, MA_STRING, MA_LIST };

struct mattr_val {
	enum mattr_kind kind;
	int64_t i;   /* MA_INT, MA_BOOL (0 or 1) */
	double f;    /* MA_FLOAT */
	const char *s; /* MA_STRING */
	const struct mattr_val *items; /* MA_LIST: scalars only */
	uint32_t n;
};

struct mattr {
	const char *key;
	struct mattr_val v;
};

/* The attribute key of m, NULL if none. */
const struct mattr_val *module_attr(const struct module *m, const char *key);
/* Sets (or replaces) attribute key of m to a copy of v in m's arena. A list
 * must hold scalars only. */
void module_set_attr(struct module *m, const char *key, const struct mattr_val *v);
void module_set_attr_string(struct module *m, const char *key, const char *s);
void module_set_attr_int(struct module *m, const char *key, int64_t i);
void module_set_attr_float(struct module *m, const char *key, double f);
void module_set_attr_bool(struct module *m, const char *key, bool b);
/* Removes attribute key; false if m had none. */
bool module_erase_attr(struct module *m, const char *key);
/* The string value of key, NULL if absent or not a string. */
const char *module_attr_string(const struct module *m, const char *key);
/* `attributes {k = v, ...}` and a newline; nothing when m has none. */
void module_print_attrs(struct ostream *o, const struct module *m);

enum graph_form { FORM_DEFAULT, FORM_ANF, FORM_GNF, FORM_BBNF };

/* The form m records (its "form" attribute); FORM_DEFAULT when it records
 * none (or an unknown one, which the verifier reports). */
enum graph_form module_form(const struct module *m);
/* Records form f in m ("form" attribute; FORM_DEFAULT removes it). */
void module_set_form(struct module *m, enum graph_form f);
/* "anf", "gnf", "bbnf"; NULL for FORM_DEFAULT. */
const char *graph_form_name(enum graph_form f);
/* The form named (len bytes), or -1. */
int graph_form_lookup(const char *s, size_t len);

/* The printer's stable topological order of f's nodes (print.c): the list
 * order with producers pulled up where the list is not an evaluation order.
 * *order is malloc'd; returns the count. */
size_t print_order(struct func *f, struct node ***order);

/* The canonical evaluation order of f's nodes in the forms (print_forms.c):
 * the bound nodes in the printer's stable topological order, each preceded
 * by the values nested in it, operands left to right, depth first. Fills
 * order (f->nnodes entries, malloc'd) and, when nested is not NULL, marks
 * nested[i] for order[i] a value GNF nests in its user. Returns the count. */
size_t forms_order(struct func *f, struct node ***order, bool **nested);
/* Puts m in form (to-anf, to-gnf, to-bbnf, glow-opt -print-form): into
 * ANF from another form, every function's list becomes its forms_order
 * (the canonical evaluation order); a module already in ANF keeps its
 * order. Records the form; returns whether anything changed. */
bool module_convert_form(struct module *m, enum graph_form form);
/* The signature of f, if it has one (node_printer_sig), " {", a newline
 * and the body of f printed in form (not FORM_DEFAULT), with canonical names:
 * every node is named by its position in the order printed: the list's
 * stable topological order in ANF, forms_order in GNF and BBNF. */
void forms_print_body(struct ostream *o, struct func *f, enum graph_form form);

/* Nodes as expressions: Kind(operands) {attributes} : types, without the
 * name, each operand printed by use_fn (print.c), through a printer that
 * caches type texts across the nodes of a body. */
struct use;
struct node_printer;
struct node_printer *node_printer_new(struct ostream *o);
/* The nodes np prints are m's, named by position: their lowered-info map
 * entries (graph/lowered.h) print, all of them. */
void node_printer_set_module(struct node_printer *np, const struct module *m);
void node_printer_expr(struct node_printer *np, const struct node *n,
		       void (*use_fn)(void *, struct ostream *, const struct use *), void *arg);
/* After a node's expression: its regions (graph/region.h) as the default
 * form prints them, each region's body printed by body_fn at depth and its
 * parameters named by name_fn. */
void node_printer_regions(struct node_printer *np, const struct node *n, unsigned depth,
			  void (*body_fn)(void *arg, struct func *r, unsigned depth),
			  void (*name_fn)(void *arg, struct ostream *o, const struct node *param), void *arg);
/* The indentation of a line at region depth (0: a function's body). */
void node_printer_indent(struct node_printer *np, unsigned depth);
void node_printer_free(struct node_printer *np);
/* The default form's text of storage node n, and of function f's body
 * (print.c; module_print and func_print use them, print_module.c). */
void node_printer_storage(struct node_printer *np, struct node *n);
void node_printer_body(struct node_printer *np, struct func *f);
/* The signature of a module function that has one, "(%a : T, ...) -> R"
 * (nothing otherwise), its parameters named by name_fn (NULL: their names). */
void node_printer_sig(struct node_printer *np, struct func *f,
		      void (*name_fn)(void *arg, struct ostream *o, const struct node *param), void *arg);

/* The deepest nesting GNF prints: deeper chains of single-use values are
 * bound, so a long chain reads as a list, not a million parentheses. */
enum { FORMS_MAX_NEST = 4 };

#endif
