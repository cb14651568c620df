/* ir.h - the instruction IR: modules, functions, weights, instructions, the
 * builder, verifier, printer and parser.
 *
 * A module holds functions. A function has a declare section of weights
 * (global memory regions, each constant or mutable, with an optional
 * initializer) and a program: an intrusive list of instructions in
 * execution order. There is no SSA: instructions read and write buffers.
 * Control flow is structured: an `if` or `loop` instruction opens a block
 * that a later `end` closes (an `else` splits an if's block in two), all in
 * the same list, so a walk that does not care about blocks sees every
 * instruction in text order (docs/InstrIR.md, "Blocks"). A buffer is a weight, an alloc (an activation whose
 * lifetime runs from the alloc to its dealloc; neither allocates memory) or a
 * tensorview (a typed window into another buffer, no copy). Operands point
 * at buffers (struct ir_value) and carry a qualifier: @in, @out, @inout.
 *
 * Instruction kinds come from Instrs.def; attributes reuse the graph IR's
 * attribute descriptors and values (struct attr_desc, union attr_val).
 *
 * A function may carry a recorded static memory plan: the sizes of its three
 * regions (constant weights, mutable weights, activations), their alignment,
 * and an offset for every weight and alloc. The verifier checks a plan when
 * one is present.
 *
 * Memory: everything lives in the module's arena and dies with it; erased
 * instructions are unlinked, not freed.
 */
#ifndef GLOW_IR_IR_H
#define GLOW_IR_IR_H

#include "graph/graph.h"
#include "graph/initializer.h"
#include "support/arena.h"
#include "support/diag.h"
#include "support/hashmap.h"
#include "support/types.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ------------------------------------------------------------------ */
/* The instruction table                                               */

enum instr_kind {
#define INSTR(K, O, A, F, P, G, R) IK_##K,
#include "ir/Instrs.def"
#undef INSTR
	IK_COUNT
};

/* Operand qualifiers. IQ_SCRATCH appears only in the table; a scratch
 * operand is written @out in the text. */
enum ir_qual { IQ_IN, IQ_OUT, IQ_INOUT, IQ_SCRATCH };

enum instr_flags {
	IF_EW = 1 << 0,    /* elementwise: every operand has the shape of operand 0 */
	IF_TYPED = 1 << 1, /* defines a buffer whose type follows the kind name */
	/* structured control flow (docs/InstrIR.md, "Blocks"): a kind that
	 * opens a block (if, loop), the `else` between an if's two blocks, and
	 * the `end` that closes the innermost open block */
	IF_BLOCK_OPEN = 1 << 2,
	IF_BLOCK_ELSE = 1 << 3,
	IF_BLOCK_END = 1 << 4,
	IF_BLOCK = IF_BLOCK_OPEN | IF_BLOCK_ELSE | IF_BLOCK_END,
};

struct ir_verifier;
struct ir_instr;
typedef void (*ir_rule_fn)(struct ir_verifier *v, const struct ir_instr *in);

#define IR_MAX_OPS 8
#define IR_MAX_INPLACE 4

struct instr_desc {
	const char *name;
	unsigned nops;
	const char *op_names[IR_MAX_OPS];
	uint8_t op_quals[IR_MAX_OPS]; /* enum ir_qual */
	unsigned nattrs;
	const struct attr_desc *attrs;
	unsigned flags;
	unsigned ninplace;
	uint8_t inplace[IR_MAX_INPLACE][2]; /* (written operand, read operand) */
	/* the graph node kind whose type rule applies (-1: none), and which
	 * operand stands for each of its results and operands (-1: "_") */
	int graph_kind;
	unsigned graph_nres, graph_nops;
	int8_t graph_res[IR_MAX_OPS], graph_ops[IR_MAX_OPS];
	ir_rule_fn rule;
};

/* The table, indexed by enum instr_kind (built from Instrs.def on first use;
 * instr_desc_init() is idempotent and called by ir_module_create). */
extern const struct instr_desc *instr_descs;
void instr_desc_init(void);
static inline const struct instr_desc *instr_desc(unsigned kind) { return &instr_descs[kind]; }
const char *instr_kind_name(unsigned kind);
/* kind by name, -1 if unknown */
int instr_kind_lookup(const char *s, size_t len);
/* The instruction kind named like node kind nk: its name in lower case, a
 * backend-specific BACKEND.Kind as backend_kind; -1 if there is none. */
int instr_kind_named_like(unsigned nk);
/* attribute index of a kind by name, -1 if none */
int instr_attr_index(unsigned kind, const char *name, size_t len);
/* attribute index of a kind by enumerator (AttrNames.def), -1 if none */
int instr_attr_slot(unsigned kind, enum attr_name an);
/* 1 if operand `out` may share its buffer with operand `in` */
bool instr_inplace_ok(unsigned kind, unsigned out, unsigned in);
/* "in", "out", "inout" (scratch: "out") */
const char *ir_qual_name(unsigned q);
/* Whether kind opens, splits or closes a block (IF_BLOCK). */
static inline bool instr_is_block(unsigned kind) { return (instr_descs[kind].flags & IF_BLOCK) != 0; }
/* the qualifier an operand must be written with */
static inline unsigned ir_qual_written(unsigned q) { return q == IQ_SCRATCH ? IQ_OUT : q; }

/* ------------------------------------------------------------------ */
/* Values: what operands point at                                      */

enum ir_value_kind {
	IV_WEIGHT, /* struct ir_weight */
	IV_ALLOC,  /* struct ir_instr of kind IK_alloc */
	IV_VIEW,   /* struct ir_instr of kind IK_tensorview */
	IV_INSTR,  /* any other instruction: not a buffer */
};

struct ir_value {
	const char *name;         /* without sigil; NULL for an unnamed instruction */
	const struct type *type;  /* buffers only */
	struct loc loc;
	uint8_t vkind;            /* enum ir_value_kind */
};

static inline bool ir_value_is_buffer(const struct ir_value *v) { return v->vkind != IV_INSTR; }

struct ir_operand {
	struct ir_value *val;
	uint8_t qual; /* enum ir_qual as written (never IQ_SCRATCH) */
};

enum ir_instr_bits {
	IR_ERASED = 1 << 0,
};

struct ir_instr {
	struct ir_value v;        /* first member */
	struct ir_instr *prev, *next;
	union attr_val *attrs;    /* instr_desc(kind)->nattrs, table order */
	int64_t offset;           /* alloc: planned offset in the activations region; -1: none */
	uint32_t mark;            /* scratch for passes and the verifier; leave 0 when done */
	uint16_t kind;
	uint8_t nops;
	uint8_t bits;
	struct ir_operand ops[];  /* nops */
};

enum ir_init { IR_INIT_NONE = -1 }; /* a weight without initializer: init == IR_INIT_NONE */

struct ir_weight {
	struct ir_value v;        /* first member */
	struct ir_weight *prev, *next;
	bool is_const;
	int init;                 /* enum init_kind (graph.h) or IR_INIT_NONE */
	INIT_VALUE_FIELDS
	uint8_t *data;            /* INIT_DENSE: type_bytes bytes in the arena */
	int64_t offset;           /* planned offset in its region; -1: none */
	uint32_t mark;
};

/* The initializer of a weight (init not IR_INIT_NONE), for init_print and
 * init_materialize (graph/initializer.h). */
struct init_spec ir_weight_init_spec(const struct ir_weight *w);

static inline struct ir_instr *ir_as_instr(struct ir_value *v)
{
	return v->vkind == IV_WEIGHT ? NULL : (struct ir_instr *)(void *)v;
}
static inline struct ir_weight *ir_as_weight(struct ir_value *v)
{
	return v->vkind == IV_WEIGHT ? (struct ir_weight *)(void *)v : NULL;
}
static inline const struct type *ir_op_type(const struct ir_instr *in, unsigned i) { return in->ops[i].val->type; }

/* ------------------------------------------------------------------ */
/* Functions and modules                                               */

/* The recorded static memory plan of a function. */
struct ir_plan {
	bool present;
	uint64_t constant_size, mutable_size, activations_size, alignment;
	struct loc loc;
};

struct ir_module;

struct ir_func {
	struct ir_module *mod;
	const char *name;
	struct loc loc;
	struct ir_weight *wfirst, *wlast;
	size_t nweights;
	struct ir_instr *first, *last;
	size_t ninstrs;
	struct strmap names; /* weight and instruction names -> struct ir_value */
	unsigned uniq;
	struct ir_plan plan;
	bool names_deferred; /* names not filled yet (ir_func_defer_names) */
};

struct ir_module {
	struct arena arena;
	struct type_ctx *types; /* not owned */
	struct ir_func **funcs;
	size_t nfuncs, capfuncs;
	char *base_dir; /* for relative external weight files; NULL: cwd */
	struct strmap func_names; /* function names -> struct ir_func */
};

struct ir_module *ir_module_create(struct type_ctx *types);
void ir_module_destroy(struct ir_module *m);
void ir_module_set_base_dir(struct ir_module *m, const char *path_of_input);
struct ir_func *ir_module_find_func(struct ir_module *m, const char *name);

/* Returns NULL if the name is taken. */
struct ir_func *ir_func_create(struct ir_module *m, const char *name, struct loc loc);
/* A weight or named instruction by name, NULL if none. */
struct ir_value *ir_func_find(struct ir_func *f, const char *name, size_t len);
/* A name free in f: base itself if free, else base.N (base NULL: "t"). */
const char *ir_fresh_name(struct ir_func *f, const char *base);
/* For readers that keep their own scope while they build a function and
 * check every name themselves: f's name table (names) is left empty and
 * filled from the weights and instructions on first use by a function of
 * this file that needs it, or by ir_func_index_names. Code that reads
 * f->names directly calls ir_func_index_names first. */
void ir_func_defer_names(struct ir_func *f);
void ir_func_index_names(struct ir_func *f);

/* ------------------------------------------------------------------ */
/* The builder: the one API through which the parser, IRGen and every    */
/* IR pass create and change instructions.                               */

/* A weight without initializer, appended to the declare section. Returns
 * NULL if the name is taken (name NULL: a fresh one). */
struct ir_weight *ir_weight_create(struct ir_func *f, const char *name, const struct type *t, bool is_const,
				   struct loc loc);
/* As ir_weight_create in a function whose names are deferred, named by a
 * copy of `name` (len bytes, need not be NUL-terminated), which the caller
 * has checked is free. */
struct ir_weight *ir_weight_create_named(struct ir_func *f, const char *name, size_t len, const struct type *t,
					 bool is_const, struct loc loc);
/* Initializers (replace any previous one). */
void ir_weight_set_splat(struct ir_weight *w, double f, int64_t i);
void ir_weight_set_zero(struct ir_weight *w);
void ir_weight_set_xavier(struct ir_weight *w, double fan_in, uint64_t seed);
void ir_weight_set_file(struct ir_module *m, struct ir_weight *w, const char *path, uint64_t offset);
/* a copy of type_bytes(type) bytes */
void ir_weight_set_data(struct ir_module *m, struct ir_weight *w, const void *data);

/* Creates an instruction with nops operands (must be the kind's count), each
 * qualified as the table says, attributes at their defaults (required ones
 * zeroed: set them), inserted before `before` (NULL: at the end). Buffer
 * kinds (IF_TYPED) need a type and get a fresh name if name is NULL or
 * taken; other kinds keep name NULL if given NULL (a taken name becomes a
 * fresh one). Operands must be buffers of f. */
struct ir_instr *ir_instr_create(struct ir_func *f, unsigned kind, const char *name, const struct type *type,
				 struct ir_value *const *ops, unsigned nops, struct ir_instr *before, struct loc loc);
/* As ir_instr_create at the end of f, in a function whose names are
 * deferred, named by a copy of `name` (len bytes, need not be
 * NUL-terminated), which the caller has checked is free. */
struct ir_instr *ir_instr_create_named(struct ir_func *f, unsigned kind, const char *name, size_t len,
				       const struct type *type, struct ir_value *const *ops, unsigned nops,
				       struct loc loc);
struct ir_instr *ir_alloc(struct ir_func *f, const char *name, const struct type *t, struct ir_instr *before,
			  struct loc loc);
struct ir_instr *ir_dealloc(struct ir_func *f, struct ir_instr *alloc, struct ir_instr *before, struct loc loc);
struct ir_instr *ir_tensorview(struct ir_func *f, const char *name, const struct type *t, struct ir_value *src,
			       const int64_t *offsets, unsigned noffsets, struct ir_instr *before, struct loc loc);

/* Attributes by name (unknown names are internal bugs). */
int64_t ir_int(const struct ir_instr *in, enum attr_name an);
double ir_float(const struct ir_instr *in, enum attr_name an);
const int64_t *ir_ints(const struct ir_instr *in, enum attr_name an, unsigned *len);
const double *ir_floats(const struct ir_instr *in, enum attr_name an, unsigned *len);
const char *ir_str(const struct ir_instr *in, enum attr_name an);
void ir_set_int(struct ir_module *m, struct ir_instr *in, enum attr_name an, int64_t v);
void ir_set_float(struct ir_module *m, struct ir_instr *in, enum attr_name an, double v);
void ir_set_ints(struct ir_module *m, struct ir_instr *in, enum attr_name an, const int64_t *v, unsigned len);
void ir_set_floats(struct ir_module *m, struct ir_instr *in, enum attr_name an, const double *v, unsigned len);
void ir_set_str(struct ir_module *m, struct ir_instr *in, enum attr_name an, const char *s);

void ir_set_operand(struct ir_instr *in, unsigned i, struct ir_value *v);
/* Unlinks an instruction (its name becomes free). */
void ir_instr_erase(struct ir_func *f, struct ir_instr *in);
/* Moves in right before `before` (NULL: to the end). */
void ir_instr_move_before(struct ir_func *f, struct ir_instr *in, struct ir_instr *before);

/* The buffer a value lives in (a weight or an alloc; NULL for a non-buffer
 * or a view chain that ends nowhere) and the byte offset of the value in it.
 * Views whose offsets are out of range give the offset as computed. */
struct ir_value *ir_value_root(struct ir_value *v, uint64_t *byte_offset);

/* ---- blocks (blocks.c) ---- */

/* The `end` matching an opening instruction (if, loop) or an `else`; NULL when the list is unbalanced (a function
 * the verifier has not accepted). */
struct ir_instr *ir_block_end(const struct ir_instr *open);
/* The opening instruction an `else` or `end` belongs to; NULL when
 * unbalanced. */
struct ir_instr *ir_block_opener(const struct ir_instr *mark);
/* Whether f has any block. */
bool ir_func_has_blocks(const struct ir_func *f);

#define ir_for_each_instr(f, in) for (struct ir_instr *in = (f)->first; in; in = in->next)
#define ir_for_each_instr_safe(f, in, tmp) \
	for (struct ir_instr *in = (f)->first, *tmp = in ? in->next : NULL; in; in = tmp, tmp = in ? in->next : NULL)
#define ir_for_each_weight(f, w) for (struct ir_weight *w = (f)->wfirst; w; w = w->next)

/* ------------------------------------------------------------------ */
/* Verifier, printer, parser                                           */

/* Checks every function: operand counts and qualifiers, each kind's type
 * rule, buffer lifetimes (alloc before use, no use after dealloc, one
 * dealloc per alloc), no writes to constant weights, aliasing only between
 * in-place operand pairs, tensorviews inside their buffer, and a recorded
 * memory plan. Reports all problems; returns the number of errors. */
int ir_module_verify(struct ir_module *m, struct diag *d);
int ir_func_verify(struct ir_func *f, struct diag *d);

/* Canonical text (docs/InstrIR.md); the rest as module_print and friends
 * (graph.h). */
struct ostream;
void ir_module_print(struct ostream *o, struct ir_module *m);
/* module_rebase_files (graph.h) of the instruction IR: the relative weight
 * files of every function, before m is written to out_path. */
int ir_module_rebase_files(struct ir_module *m, const char *out_path, struct diag *d);
void ir_func_print(struct ostream *o, struct ir_func *f);
/* One line, as in a section (no indentation, no newline). */
void ir_instr_print(struct ostream *o, const struct ir_instr *in);
void ir_weight_print(struct ostream *o, const struct ir_weight *w);
/* %name with quoting when needed */
void ir_print_local(struct ostream *o, const char *name);

/* module_parse and module_parse_input (graph.h) of .gir text: the same
 * contract, the same reader shell (support/textread.h). */
struct input;
struct ir_module *ir_module_parse(struct type_ctx *types, const char *buf, size_t len, const char *filename,
				  struct diag *d, bool verify);
struct ir_module *ir_module_parse_input(struct type_ctx *types, const struct input *in, const char *filename,
					struct diag *d, bool verify);

#endif
