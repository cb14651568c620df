/* backend.h - the interface every backend implements (docs/Backends.md).
 *
 * A backend is a struct of function pointers. The graph side asks it which
 * nodes it supports and which it wants lowered, and lets it rewrite a
 * function after lowering; the instruction side hands it one IR function to
 * compile into an opaque compiled function, which runs on bindings of the
 * function's inputs and outputs. An interpreter compiles by preparing
 * buffers; a code-generating backend compiles to a shared object or a bundle
 * and runs by loading it.
 *
 * Inputs and outputs of an IR function (the graph's placeholders) follow one
 * rule, computed by backend_func_io:
 *   - every mutable weight is a placeholder; constant weights never are;
 *   - a mutable weight without initializer that the program reads before
 *     it writes it (its first use, through any tensorview, is @in or @inout)
 *     is an input: it must be bound;
 *   - a mutable weight the program writes (@out or @inout, through any
 *     view) is an output;
 *   - a mutable weight without initializer that the program neither reads
 *     nor writes is an input too: it belongs to the signature (a model
 *     input whose value does not matter, only its shape) and is bound;
 *   - a weight may be both (a training weight updated in place);
 *   - device copies (docs/OpenCL.md) do not change it: an upload
 *     `copytodevice @out %w.dev, @in %w` is not a use of w, and the uses of
 *     its device buffer %w.dev count as uses of w (so a placeholder written
 *     first inside a block, which the device-copies pass uploads because
 *     the block may not run, stays an output only).
 *
 * Library code: reports through struct diag, never exits.
 */
#ifndef GLOW_BACKENDS_BACKEND_H
#define GLOW_BACKENDS_BACKEND_H

#include "graph/graph.h"
#include "ir/ir.h"
#include "support/diag.h"
#include "support/types.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* One placeholder of an IR function. */
struct backend_io {
	struct ir_weight *w;
	bool is_input;  /* must be bound before running */
	bool is_output; /* written by the program */
};

/* The placeholders of f in declaration order (every mutable weight);
 * *n receives the count. The array is malloc'd: free it. */
struct backend_io *backend_func_io(struct ir_func *f, size_t *n);

/* A tensor bound to a placeholder: the weight it binds and its data,
 * type_bytes(w->v.type) bytes owned by the caller. Before run, an input's
 * data holds its value; after run, an output's data holds the result. */
struct backend_binding {
	struct ir_weight *w;
	void *data;
};

/* The placeholders of a compiled function and what a run starts each from:
 * its binding where it is an input and bound, else the snapshot of its
 * initializer taken at compile time, else its initializer (zeros without
 * one) evaluated. */
struct backend_placeholders {
	struct ir_weight **w;
	uint8_t **init; /* the snapshots, NULL where w has no initializer */
	bool *is_input;
	size_t n;
};

/* Collects f's placeholders (every mutable weight, in declaration order)
 * into p and snapshots their initializers. Returns 0, or -1 after
 * reporting; either way backend_placeholders_free releases p. */
int backend_placeholders_init(struct backend_placeholders *p, struct ir_func *f, struct diag *d);
/* Writes the value placeholder i of p starts a run of f with into a
 * (type_bytes of its type). Returns 0, or -1 after reporting. */
int backend_placeholder_fill(const struct backend_placeholders *p, size_t i, struct ir_func *f,
			     const struct backend_binding *binds, size_t nbinds, void *a, struct diag *d);
void backend_placeholders_free(struct backend_placeholders *p);

/* What compile produced; each backend defines it. */
struct backend_compiled;

struct backend_options {
	/* run with an own allocation even when the function records a memory
	 * plan */
	bool ignore_plan;
	/* the backend's own settings, or NULL for its defaults (the C backend:
	 * a const struct cbackend_options *, of which compile takes the matrix
	 * product and Winograd choices) */
	const void *specific;
};

struct backend {
	const char *name;
	/* Whether the backend executes graph node kind `kind` whose operand and
	 * result element kinds are elems[0..nelems) (results first, then
	 * operands, in table order). */
	bool (*is_op_supported)(const struct backend *b, unsigned kind, const enum elem_kind *elems, unsigned nelems);
	/* Whether the backend supports node n as it stands. */
	bool (*is_node_supported)(const struct backend *b, const struct node *n);
	/* Whether n should be lowered to simpler nodes before IRGen. */
	bool (*should_lower)(const struct backend *b, const struct node *n);
	/* A hook run after lowering; returns whether it changed f, or -1 after
	 * reporting an error. */
	int (*transform_post_lowering)(const struct backend *b, struct func *f, struct diag *d);
	/* Compiles f (verified). Returns NULL after reporting why. */
	struct backend_compiled *(*compile)(const struct backend *b, struct ir_func *f,
					    const struct backend_options *o, struct diag *d);
	/* Runs c once. binds covers every input (others are optional: an
	 * unbound output is computed and dropped). Returns 0, or -1 after
	 * reporting. */
	int (*run)(struct backend_compiled *c, const struct backend_binding *binds, size_t nbinds, struct diag *d);
	void (*destroy)(struct backend_compiled *c);
	/* The backend's own instruction IR pipelines for -O0 .. -O3 (names in
	 * lib/iropt/pipelines.c, which glow-llc runs for the backend instead of
	 * O0 .. O3), NULL entries: the generic ones. */
	const char *ir_pipelines[4];
};

/* Every backend of this build by name ("interpreter", "c"); NULL if unknown.
 * Defined in registry.c: link the glowbackends library to use it. */
const struct backend *backend_find(const char *name);

/* The element kinds of node n in is_op_supported order (results, then
 * operands); returns the count (at most cap). */
unsigned backend_node_elems(const struct node *n, enum elem_kind *elems, unsigned cap);

/* is_node_supported for a backend whose answer depends only on the node's
 * kind and element kinds: b->is_op_supported of n's kind and
 * backend_node_elems; false for a kind with regions (If, Loop), whose
 * execution a backend must answer for itself. */
bool backend_node_supported_by_kind(const struct backend *b, const struct node *n);
/* The same for a backend that executes If and Loop as blocks
 * (docs/InstrIR.md, "Blocks": the interpreter, the C backend): its
 * is_op_supported answers for those kinds too (issue 18, part cfi). */
bool backend_node_supported_with_blocks(const struct backend *b, const struct node *n);

/* should_lower for a backend that lowers nothing by choice: false (the
 * lower stage still lowers what the backend does not support). */
bool backend_lower_nothing(const struct backend *b, const struct node *n);

#endif
