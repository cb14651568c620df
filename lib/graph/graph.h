/* graph.h - the graph IR: modules, functions, nodes, the builder.
 *
 * A module holds placeholders and constants (storage nodes, shared by all
 * functions) and functions. A function's nodes form a dataflow graph with use
 * lists; they are also kept on a list in a valid evaluation order (the printer
 * re-derives a stable topological order anyway, so passes may append).
 *
 * Every node has a kind (Nodes.def), a name unique in its scope (functions for
 * nodes, the module for storage), operands (struct use, each pointing at a
 * result of another node), result types (uniqued struct type pointers),
 * attribute values (one per row of its kind's ATTRS, in table order), an
 * optional predicate operand and a source location.
 *
 * Memory: everything lives in the module's arena and dies with it; erased
 * nodes are unlinked, not freed.
 */
#ifndef GLOW_GRAPH_GRAPH_H
#define GLOW_GRAPH_GRAPH_H

#include "support/arena.h"
#include "support/diag.h"
#include "support/hashmap.h"
#include "support/textparse.h"
#include "support/types.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ------------------------------------------------------------------ */
/* The node table                                                      */

enum node_kind {
#define NODE(K, O, R, A, F, T) NK_##K,
#include "graph/Nodes.def"
#undef NODE
	NK_COUNT
};

enum node_flags {
	NF_NONE = 0,
	NF_PURE = 1 << 0,
	NF_EW = 1 << 1,
	NF_SIDE = 1 << 2,
	NF_STORAGE = 1 << 3,
	NF_BATCH = 1 << 4,
};

enum attr_kind { AK_INT, AK_FLOAT, AK_BOOL, AK_INTS, AK_FLOATS, AK_ENUM, AK_STRING };

/* Attribute names as numbers (AttrNames.def): code reads an attribute by
 * its enumerator, so a misspelt name is a build error. */
enum attr_name {
#define ATTR_NAME(nm) AN_##nm,
#include "graph/AttrNames.def"
#undef ATTR_NAME
	AN_COUNT
};
/* the spelling of an enumerator ("group" for AN_group) */
const char *attr_name_str(enum attr_name an);

struct attr_desc {
	const char *name;
	enum attr_kind kind;
	bool required;
	const char *enum_values; /* AK_ENUM: "a|b|c" */
	int64_t def_i;           /* AK_INT, AK_BOOL, AK_ENUM (index) */
	double def_f;            /* AK_FLOAT */
	const int64_t *def_ints; /* AK_INTS */
	uint32_t def_n;
	enum attr_name an; /* name's enumerator; AN_COUNT ends a row list */
};

struct node;
/* A type rule checks one typed operation (graph/typerules_op.h): a node, or
 * an instruction seen as the node kind it comes from. */
struct typed_op;
typedef void (*type_rule_fn)(struct typed_op *op);

struct node_desc {
	const char *name;
	unsigned nops;          /* fixed operand count; variadic: the names' count */
	bool variadic;          /* last operand repeats (one or more; "*": zero or more) */
	bool variadic0;         /* the repeated operand may be absent ("Name*" in Nodes.def) */
	bool res_variadic;      /* the results repeat ("Results..."): nres is the minimum */
	unsigned nregions;      /* regions each node owns (graph/region.h) */
	unsigned nres;
	unsigned nattrs;
	const char *const *op_names;  /* nops (+1 if variadic: the repeated name) */
	const char *const *res_names; /* nres */
	const struct attr_desc *attrs;
	unsigned flags;
	type_rule_fn rule;
};

/* The table, indexed by enum node_kind (built from Nodes.def at start-up;
 * node_desc_init() is idempotent and called by module_create). */
extern const struct node_desc *node_descs;
void node_desc_init(void);
static inline const struct node_desc *node_desc(unsigned kind) { return &node_descs[kind]; }
/* The fewest operands a node of the kind takes. */
static inline unsigned node_desc_min_ops(const struct node_desc *d) { return d->nops - (d->variadic0 ? 1u : 0u); }
/* n operands are a valid count for the kind. */
static inline bool node_desc_ops_ok(const struct node_desc *d, unsigned n)
{
	return d->variadic ? n >= node_desc_min_ops(d) : n == d->nops;
}
/* n results are a valid count for the kind. */
static inline bool node_desc_res_ok(const struct node_desc *d, unsigned n)
{
	return d->res_variadic ? n >= d->nres : n == d->nres;
}
const char *node_kind_name(unsigned kind);
/* kind by name, -1 if unknown */
int node_kind_lookup(const char *s, size_t len);
/* attribute index of a kind by name, -1 if none (for readers of text;
 * code uses node_attr_slot) */
int node_attr_index(unsigned kind, const char *name);
/* attribute index of a kind by enumerator, -1 if the kind has none */
int node_attr_slot(unsigned kind, enum attr_name an);
/* index of an attribute among descriptors (ended by AN_COUNT), -1 if absent */
static inline int attr_desc_slot(const struct attr_desc *a, enum attr_name an)
{
	for (int i = 0; a && a[i].an != AN_COUNT; i++)
		if (a[i].an == an)
			return i;
	return -1;
}

/* The attribute rows of both tables (Nodes.def, Instrs.def; nodes.c): the
 * number of rows of a NULL-terminated list ar, and the index of the row
 * named [name, name + len) among its n rows, -1 if none. */
unsigned attr_rows_count(const struct attr_desc *ar);
int attr_rows_index(const struct attr_desc *ar, unsigned n, const char *name, size_t len);
/* Sets av[0..n) to the defaults of the rows ar (zero for required attributes);
 * default integer lists are copied into arena a, or shared when a is NULL
 * (attribute arrays are immutable once set). */
union attr_val;
void attr_rows_defaults(const struct attr_desc *ar, unsigned n, union attr_val *av, struct arena *a);

/* What a value of attribute kind k is, for messages: "an integer", "a
 * number", "true or false", "a list of integers", "a list of numbers", "an
 * enumerator", "a string". */
const char *attr_kind_desc(enum attr_kind k);

/* A name made from base ("t" when empty) that taken(ctx, name, len) says
 * is free: base itself, else base (less a previous ".N" suffix, cut to 200
 * bytes) with ".N" for the next N of *uniq; in arena a. Both IRs' fresh
 * names (graph.c). */
const char *name_fresh(struct arena *a, const char *base, unsigned *uniq,
		       bool (*taken)(const void *ctx, const char *s, size_t len), const void *ctx);

/* ------------------------------------------------------------------ */
/* Nodes                                                               */

union attr_val {
	int64_t i;  /* AK_INT, AK_BOOL (0/1), AK_ENUM (index) */
	double f;   /* AK_FLOAT */
	struct {
		int64_t *v;
		uint32_t n;
	} ints;
	struct {
		double *v;
		uint32_t n;
	} floats;
	const char *s; /* AK_STRING */
};

struct use {
	struct node *def; /* the producer */
	struct use *next; /* next use of any result of def */
	uint32_t res;     /* which result of def */
	uint32_t idx;     /* operand position in the user (== nops: the predicate) */
};

/* A result of a node: what an operand refers to. */
struct value {
	struct node *node;
	unsigned res;
};

enum node_bits {
	NODE_HAS_PRED = 1 << 0,
	NODE_ERASED = 1 << 1,
	NODE_MARK = 1 << 2, /* scratch bit for passes; clear it when done */
	/* scratch bits of the verifier (verify.c) and the
	 * printer (print.c); clear outside them */
	NODE_VOWN = 1 << 3,    /* on the function's list */
	NODE_VDONE = 1 << 4,   /* checked (in list order); printed */
	NODE_VGREY = 1 << 5,   /* on the cycle search's stack */
	NODE_VGLOBAL = 1 << 6, /* storage of the module */
	/* the builder made the name up (none was asked for, or the one asked
	 * for was taken): node_replace may hand the node another name */
	NODE_NAME_MADE = 1 << 7,
};

struct node {
	struct node *prev, *next; /* function order, or module storage order */
	const char *name;         /* without sigil; unique in scope; NULL for result-less nodes */
	struct use *uses;         /* uses of any result */
	union attr_val *attrs;    /* node_desc(kind)->nattrs */
	const struct type **types;/* nres result types */
	struct loc loc;
	uint16_t kind;
	uint8_t nres;
	uint8_t bits;
	uint32_t nops;            /* operands, not counting the predicate */
	struct use *ops;          /* nops (+1 with NODE_HAS_PRED), allocated right after the node; a
				   * kind with regions keeps its region pointers right after them
				   * (graph/region.h) */
};

/* The user of a use. node_new (graph.c) allocates a node's operand
 * slots right after it, so the user is found by address arithmetic: u is
 * slot u->idx, the slots start u->idx uses earlier, the node just before
 * them. This saves a user pointer in every operand slot (struct use would
 * grow from 24 to 32 bytes), and it is the only place that relies on the
 * layout: it holds for nodes made by the builder, which are the only nodes
 * with uses (the type rules read a typed operation, graph/typerules_op.h,
 * not nodes). */
static inline struct node *use_user(const struct use *u)
{
	return (struct node *)(void *)((char *)(void *)(u - u->idx) - sizeof(struct node));
}
_Static_assert(sizeof(struct node) % _Alignof(struct use) == 0, "operands follow the node");
static inline struct value node_val(struct node *n, unsigned res) { struct value v = {n, res}; return v; }
static inline struct value op_val(const struct node *n, unsigned i)
{
	struct value v = {n->ops[i].def, n->ops[i].res};
	return v;
}
static inline const struct type *val_type(struct value v) { return v.node->types[v.res]; }
static inline const struct type *node_type(const struct node *n) { return n->types[0]; }
static inline const struct type *op_type(const struct node *n, unsigned i)
{
	return n->ops[i].def->types[n->ops[i].res];
}
static inline bool node_has_pred(const struct node *n) { return n->bits & NODE_HAS_PRED; }
static inline struct node *node_pred(const struct node *n) { return node_has_pred(n) ? n->ops[n->nops].def : NULL; }
static inline bool node_is_storage(const struct node *n) { return n->kind == NK_Placeholder || n->kind == NK_Constant; }
/* number of uses of result res (-1: any result) */
unsigned node_num_uses(const struct node *n, int res);
static inline bool node_has_uses(const struct node *n) { return n->uses != NULL; }

/* Attribute access by enumerator (AttrNames.def); asking a kind for an
 * attribute it does not have is an internal bug. */
int64_t node_int(const struct node *n, enum attr_name an);
double node_float(const struct node *n, enum attr_name an);
const int64_t *node_ints(const struct node *n, enum attr_name an, unsigned *len);
const double *node_floats(const struct node *n, enum attr_name an, unsigned *len);
const char *node_str(const struct node *n, enum attr_name an);
const char *node_enum(const struct node *n, enum attr_name an); /* the enum's name */

/* ------------------------------------------------------------------ */
/* Storage                                                             */

struct placeholder {
	struct node n; /* kind NK_Placeholder, no operands */
	bool trainable;
	bool is_static;
};

/* enum init_kind: support/textparse.h (both text formats share it) */

struct constant {
	struct node n; /* kind NK_Constant, no operands */
	enum init_kind init;
	INIT_VALUE_FIELDS
	uint8_t *data;        /* the payload (type_bytes), NULL until materialized */
};

static inline struct placeholder *as_placeholder(struct node *n)
{
	return n->kind == NK_Placeholder ? (struct placeholder *)n : NULL;
}
static inline struct constant *as_constant(struct node *n)
{
	return n->kind == NK_Constant ? (struct constant *)n : NULL;
}

/* ------------------------------------------------------------------ */
/* Functions and modules                                               */

struct module;

/* A function's node names: open addressing with linear probing over node
 * pointers, 8 bytes a slot. Nodes are 8-byte aligned arena objects, so the
 * low 3 bits of a slot hold the top 3 bits of the name's hash_bytes (a probe
 * rarely follows a pointer to a name that does not match); 0 is empty. Grows
 * at 3/4 load; a hash is recomputed from the name only when rehashing. Use
 * func_find and the builder, not the slots. */
struct nametab {
	uintptr_t *slots;
	size_t cap, len;
};

/* A module function, or a region: the block of nodes an If or Loop owns
 * (graph/region.h). A region is not listed in the module's funcs; its
 * names live in its root function's table (names are unique in a
 * function and all its regions together), so names, uniq and the name
 * look-ups of a region are its root's. */
struct func {
	struct module *mod;
	const char *name;     /* a region: its name in the text ("then", "body") */
	struct loc loc;
	struct node *first, *last;
	size_t nnodes;
	struct nametab names; /* node name -> node (a region's stays empty) */
	unsigned uniq;        /* counter for fresh names (a region's: unused) */
	struct node *owner;   /* the node that owns the region; NULL for a module function */
	struct func *parent;  /* the function or region around the owner; NULL for a module function */
	/* A module function's signature (func @f(%a : T) -> R { ... }:
	 * graph/region.h, func_has_sig): its parameters are its leading
	 * RegionArg nodes and its results the operands of the Yield that ends
	 * it, of the types sig_res[0..nsig_res). has_sig false: an entry point
	 * (no parameters, no results: it reads and writes storage). */
	bool has_sig;
	unsigned nsig_res;
	const struct type **sig_res; /* in the module's arena */
};

struct module {
	const char *name; /* may be NULL (no module line) */
	struct arena arena;
	struct type_ctx *types; /* not owned */
	struct node *gfirst, *glast; /* placeholders and constants, in order */
	size_t nglobals;
	struct strmap gnames; /* storage name -> node */
	unsigned guniq;
	struct func **funcs;
	size_t nfuncs, capfuncs;
	char *base_dir; /* for relative external weight files; NULL: cwd */
	struct mattr *attrs; /* module attributes, sorted by key (graph/forms.h); in the arena */
	size_t nattrs, capattrs;
	struct lowered_map *lowered; /* the lowered-info map (graph/lowered.h); NULL: empty; in the arena */
	size_t nowners; /* nodes with regions ever created (graph/region.h): 0, no module function has regions */
};

struct module *module_create(struct type_ctx *types, const char *name);
void module_destroy(struct module *m);
struct func *module_find_func(struct module *m, const char *name);
struct node *module_find_global(struct module *m, const char *name);
void module_set_base_dir(struct module *m, const char *path_of_input);

/* The module function a region belongs to (f itself for a module function). */
static inline struct func *func_root(const struct func *f)
{
	while (f->parent)
		f = f->parent;
	return (struct func *)(uintptr_t)f;
}

/* Returns NULL if the name is taken. */
struct func *func_create(struct module *m, const char *name, struct loc loc);
struct node *func_find(struct func *f, const char *name);
/* func_find by (name, len) with its hash_bytes(name, len) computed by the
 * caller (the name need not be NUL-terminated; it must not contain NUL). */
struct node *func_find_hashed(const struct func *f, const char *name, size_t len, uint64_t hash);
/* Makes room for n more names without rehashing (a hint: readers call it
 * with an estimate before building a large function). */
void func_reserve_names(struct func *f, size_t n);
/* Starts loading the name slot of a hash the caller will look up soon. */
static inline void func_prefetch_name(const struct func *f, uint64_t hash)
{
#if defined(__GNUC__)
	if (f->names.cap)
		__builtin_prefetch(&f->names.slots[hash & (f->names.cap - 1)]);
#else
	(void)f;
	(void)hash;
#endif
}

/* ------------------------------------------------------------------ */
/* The builder: the one API through which the parser, the importer and     */
/* every pass create and change IR.                                         */

/* A name that is free in the function: base itself if free, else base.N
 * (a previous ".N" of base replaced, N from a per-function counter). base
 * may be NULL ("t"). Returns an arena string. */
const char *func_fresh_name(struct func *f, const char *base);
const char *module_fresh_name(struct module *m, const char *base);

/* Storage. Return NULL if the name is taken (name NULL: a fresh one). */
struct placeholder *module_add_placeholder(struct module *m, const char *name, const struct type *t,
					   struct loc loc);
struct constant *module_add_constant(struct module *m, const char *name, const struct type *t, struct loc loc);
/* Sets the payload of a constant to a copy of data (type_bytes bytes); the
 * initializer becomes INIT_DENSE. */
void constant_set_data(struct module *m, struct constant *c, const void *data);
/* Makes the payload of a constant fresh storage of type_bytes bytes, its
 * contents unspecified, for the caller to fill; the initializer becomes
 * INIT_DENSE. (constant_set_data without the copy, for large weights.) */
void *constant_alloc_data(struct module *m, struct constant *c);
/* The payload, materializing splat/zero/xavier/file initializers on first
 * use. Returns NULL after reporting to d (e.g. unreadable file). */
const uint8_t *constant_data(struct module *m, struct constant *c, struct diag *d);

/* Creates a node with the given operands (nops of them: for variadic kinds
 * any count >= the minimum) and result types, attributes at their defaults
 * (required ones zeroed: set them), inserted before `before` (NULL: at the
 * end). name NULL or taken: a fresh name derived from it (func_fresh_name),
 * marked NODE_NAME_MADE (see node_replace). Operand values must
 * belong to f or be storage of f's module. */
struct node *node_create(struct func *f, unsigned kind, const char *name, const struct value *ops, unsigned nops,
			 const struct type *const *types, struct node *before, struct loc loc);
/* node_create_pred at the end of f for a reader that has hashed the name:
 * name is (name, len), not necessarily NUL-terminated, hash its
 * hash_bytes(name, len); ignored (may be NULL) for result-less kinds.
 * Returns NULL, creating nothing, if the name is taken. */
struct node *node_create_named(struct func *f, unsigned kind, const char *name, size_t len, uint64_t hash,
			       const struct value *ops, unsigned nops, struct value pred,
			       const struct type *const *types, unsigned nres, struct loc loc);
/* Convenience for single-result kinds. */
struct node *node_create1(struct func *f, unsigned kind, const char *name, const struct value *ops, unsigned nops,
			  const struct type *type, struct node *before, struct loc loc);
/* node_create for any kind with nres result types: a kind whose results
 * repeat (If, Loop) takes any count from its minimum on; for the others nres
 * must be the kind's. A kind with regions gets them empty (graph/region.h). */
struct node *node_create_n(struct func *f, unsigned kind, const char *name, const struct value *ops, unsigned nops,
			   const struct type *const *types, unsigned nres, struct node *before, struct loc loc);

void node_set_int(struct module *m, struct node *n, enum attr_name an, int64_t v);
void node_set_float(struct module *m, struct node *n, enum attr_name an, double v);
void node_set_ints(struct module *m, struct node *n, enum attr_name an, const int64_t *v, unsigned len);
void node_set_floats(struct module *m, struct node *n, enum attr_name an, const double *v, unsigned len);
void node_set_str(struct module *m, struct node *n, enum attr_name an, const char *s);
/* copies all attributes of src (same kind) */
void node_copy_attrs(struct module *m, struct node *dst, const struct node *src);

/* Changes operand i (i == nops: the predicate) to v (maintains use lists). */
void node_set_operand(struct node *n, unsigned i, struct value v);
/* node_create with a predicate operand (pred.node NULL: none). */
struct node *node_create_pred(struct func *f, unsigned kind, const char *name, const struct value *ops,
			      unsigned nops, struct value pred, const struct type *const *types, struct node *before,
			      struct loc loc);
/* Every use of `from` becomes a use of `to` (types must agree). */
void value_replace_all_uses(struct value from, struct value to);
/* Every use of any result i of `from` becomes a use of result i of `to`. */
void node_replace_all_uses(struct node *from, struct node *to);
/* Unlinks a node with no uses from its function and drops its operands;
 * a node with regions first erases every node of its regions. */
void node_erase(struct func *f, struct node *n);
/* Replaces `from` by `to` (another node of f): every use of result i of
 * from becomes a use of result i of to (from->nres <= to->nres, types must
 * agree), then from is erased. A value keeps the name it had, so to takes
 * from's name when all of these hold:
 *   - both have a name (result-less nodes have none);
 *   - to's name is not one somebody chose for it: the builder made it up
 *     (NODE_NAME_MADE: node_create was given no name, or a taken one), or
 *     it is from's name followed by '.' and a suffix ("x.3" the builder
 *     derived, "x.mul" a pass derived for a helper, also when read back
 *     from text).
 * Otherwise to keeps its own name (two values that a pass found equal, each
 * named by the user: the one kept keeps its name). When to takes the name it
 * also takes from's NODE_NAME_MADE bit. */
void node_replace(struct func *f, struct node *from, struct node *to);
/* Renames n to name (copied). Returns false, changing nothing, if another
 * node of f has that name or n has no name (result-less kinds). A name given
 * this way counts as chosen: NODE_NAME_MADE is cleared. */
bool node_rename(struct func *f, struct node *n, const char *name);
/* Moves n from the function or region `from` into `to` (of the same
 * module function) right before `before` (NULL: to the end); its regions'
 * parent becomes `to`. Names stay (one table per module function). */
void node_move_scope(struct func *from, struct func *to, struct node *n, struct node *before);
/* Moves n right before `before` (NULL: to the end). */
void node_move_before(struct func *f, struct node *n, struct node *before);
/* Removes module function f (its nodes drop their uses of storage); f and
 * its nodes stay in the arena, unreachable. */
void module_erase_func(struct module *m, struct func *f);
/* Erases storage with no uses. */
void module_erase_global(struct module *m, struct node *n);
/* Renames storage n to name (copied); false, changing nothing, if another
 * placeholder or constant has that name. */
bool module_rename_global(struct module *m, struct node *n, const char *name);

/* Iteration */
#define func_for_each(f, n) for (struct node *n = (f)->first; n; n = n->next)
#define func_for_each_safe(f, n, tmp) for (struct node *n = (f)->first, *tmp = n ? n->next : NULL; n; n = tmp, tmp = n ? n->next : NULL)
#define module_for_each_global(m, n) for (struct node *n = (m)->gfirst; n; n = n->next)

/* ------------------------------------------------------------------ */
/* Verifier, printer, parser                                           */

/* Checks every function and storage node; reports all problems to d and
 * returns the number of errors. */
int module_verify(struct module *m, struct diag *d);
int func_verify(struct func *f, struct diag *d);

struct ostream;
/* Canonical text. Storage and functions in module order; nodes in a stable
 * topological order (list order wherever that is valid). */
void module_print(struct ostream *o, struct module *m);
/* Before m is written to out_path ("-": standard output): every relative
 * weight-file path is rewritten relative to the output's directory (the
 * working directory for standard output), where a reader of the output
 * resolves it, and m's base directory becomes that directory. Paths stay as
 * written when the directory does not change. Reports (at the constant) and
 * returns -1 when a weight file cannot be found. */
int module_rebase_files(struct module *m, const char *out_path, struct diag *d);
void func_print(struct ostream *o, struct func *f);
/* One node on one line, as in a function body (no indentation, no newline). */
void node_print(struct ostream *o, const struct node *n);
/* %name / @name with quoting when needed */
void print_local_name(struct ostream *o, const char *name);
void print_global_name(struct ostream *o, const char *name);
/* 1 if the name prints bare (no quotes) */
bool name_is_bare(const char *s, size_t len);

/* Parses a whole .glow text (buf must have at least 16 zero bytes after
 * len, see read_input). Registers the source with d. Returns NULL after
 * reporting errors. Runs the verifier unless verify is false. */
struct module *module_parse(struct type_ctx *types, const char *buf, size_t len, const char *filename,
			    struct diag *d, bool verify);
/* module_parse of an input from input_open (support/io.h) that also lets go
 * of the input's pages behind the reader as it goes (input_drop), so a
 * mapped file does not stay in memory beside the module built from it.
 * Diagnostics still quote source lines (the pages are read again). */
struct input;
/* The node kind a function may hold (not Placeholder or Constant) closest
 * to a misspelt kind name (support/suggest.h), NULL if none is close: the
 * reader's and glow-opt's "did you mean". */
const char *node_kind_suggest(const char *s, size_t len);
struct module *module_parse_input(struct type_ctx *types, const struct input *in, const char *filename,
				  struct diag *d, bool verify);

#endif
