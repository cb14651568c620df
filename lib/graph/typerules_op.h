/* typerules_op.h - the typed operation: what a type rule sees of the thing
 * it checks. Both IR levels fill one: the graph verifier from a node
 * (lib/graph/verify.c), the instruction verifier from an instruction and
 * its operands' buffers (lib/ir/rules.c, mapped through Instrs.def's Graph
 * column). The type rules named in Nodes.def (typerules*.c) read only this
 * view, so one rule checks both levels and neither level's storage layout
 * leaks into the other.
 *
 * The view is plain data the caller owns (usually on its stack): kind,
 * operand and result types, the attribute values in the kind's table order
 * (the same union attr_val array both IRs store), a name and location for
 * messages, and where the rule's problems go.
 *
 * Attributes are read by their AttrNames.def enumerator, as everywhere:
 * top_int(op, AN_axis), top_float, top_ints, top_floats, top_str,
 * top_enum.
 */
#ifndef GLOW_GRAPH_TYPERULES_OP_H
#define GLOW_GRAPH_TYPERULES_OP_H

#include "graph/graph.h"
#include "support/diag.h"
#include "support/types.h"

#include <stdbool.h>
#include <stdint.h>

/* An operand: its type and, for messages and the rules that ask what
 * produces it (Save's output must be a placeholder), its producer. */
struct typed_operand {
	const struct type *type;
	const char *def_name; /* the producer's name without sigil, NULL if none */
	unsigned def_kind;    /* the producer's enum node_kind; the instruction IR's
			       * buffers are storage and count as NK_Placeholder */
};

struct typed_op {
	unsigned kind;                     /* enum node_kind: the row that names operands, results, attributes */
	const char *name;                  /* printed %name in messages; NULL: none */
	struct loc loc;                    /* where problems are reported */
	unsigned nops, nres;               /* nops may exceed the row's count for a variadic kind */
	const struct typed_operand *ops;   /* nops operands */
	const struct type *const *res;     /* nres result types */
	const union attr_val *attrs;       /* node_desc(kind)->nattrs values, in table order */
	struct diag *d;                    /* where problems go */
	int errors;                        /* problems reported so far */
};

/* The type of operand i. */
static inline const struct type *top_optype(const struct typed_op *op, unsigned i) { return op->ops[i].type; }
/* The type of result 0. */
static inline const struct type *top_type(const struct typed_op *op) { return op->res[0]; }
/* The producer of operand i is a placeholder. */
static inline bool top_op_is_placeholder(const struct typed_op *op, unsigned i)
{
	return op->ops[i].def_kind == NK_Placeholder;
}

/* Reports a problem of op: "Kind %name: message" at op->loc; counts it. */
void top_err(struct typed_op *op, const char *fmt, ...) GLOW_PRINTF(2, 3);

/* Reports msg at loc as "subject name: msg" (subject alone when name is
 * NULL; the name printed @name when global, else %name): the one form of
 * every verifier message about a node, an instruction or a weight. */
void top_report(struct diag *d, struct loc loc, const char *subject, const char *name, bool global,
		const char *msg);

/* The value of the attribute called name; an unknown name is an internal
 * error naming the kind. Read through the accessors below. */
const union attr_val *top_attr(const struct typed_op *op, enum attr_name an);

static inline int64_t top_int(const struct typed_op *op, enum attr_name an) { return top_attr(op, an)->i; }
static inline double top_float(const struct typed_op *op, enum attr_name an) { return top_attr(op, an)->f; }
static inline const char *top_str(const struct typed_op *op, enum attr_name an) { return top_attr(op, an)->s; }
static inline const int64_t *top_ints(const struct typed_op *op, enum attr_name an, unsigned *len)
{
	const union attr_val *a = top_attr(op, an);
	*len = a->ints.n;
	return a->ints.v;
}
static inline const double *top_floats(const struct typed_op *op, enum attr_name an, unsigned *len)
{
	const union attr_val *a = top_attr(op, an);
	*len = a->floats.n;
	return a->floats.v;
}
/* An enum attribute's value as its name ("reflect"), "?" when out of range.
 * The text lives in a static buffer until the next call. */
const char *top_enum(const struct typed_op *op, enum attr_name an);

#endif
