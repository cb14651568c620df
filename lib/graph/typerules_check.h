/* typerules_check.h - the checks, message formatting and saturating shape
 * arithmetic shared by the type rules (typerules*.c); private to lib/graph.
 *
 * Every check reports through top_err() and returns false on failure, so a
 * rule can stop where the remaining checks would only repeat the problem.
 * Message helpers format into a SCRATCH buffer that lives until the end of
 * the enclosing block: one per formatted argument of a message. Arithmetic
 * on dimensions and attribute values saturates at the int64 range (see
 * typerules.c).
 */
#ifndef GLOW_GRAPH_TYPERULES_CHECK_H
#define GLOW_GRAPH_TYPERULES_CHECK_H

#include "graph/typerules.h"
#include "graph/typerules_op.h"

#include <stdbool.h>
#include <stdint.h>

/* ------------------------------------------------------------------ */
/* Formatting for messages                                             */

#define STRBUF 256
/* A scratch buffer living until the end of the enclosing block: one per
 * formatted argument of a message. */
#define SCRATCH ((char[STRBUF]){0})

#define OPN(op, i) trc_op_name((op), (i), SCRATCH)
#define RESN(op, r) trc_pretty_name(node_desc((op)->kind)->res_names[r], SCRATCH)

/* What a shared check talks about, formatted only when it reports: the
 * checks run on every node of every verified function, their messages
 * rarely, and trc_pretty_name is most of the cost of a check that passes. */
struct what {
	const struct typed_op *op; /* WHAT_OP, WHAT_RES */
	const char *lit;      /* WHAT_LIT */
	unsigned i;           /* operand or result index */
	enum { WHAT_LIT, WHAT_OP, WHAT_RES } kind;
};

static inline struct what what_op(const struct typed_op *op, unsigned i)
{
	struct what w = {op, NULL, i, WHAT_OP};
	return w;
}

static inline struct what what_res(const struct typed_op *op, unsigned r)
{
	struct what w = {op, NULL, r, WHAT_RES};
	return w;
}

static inline struct what what_lit(const char *s)
{
	struct what w = {NULL, s, 0, WHAT_LIT};
	return w;
}

/* Operand i, result r or a literal name, for the shared checks below. */
#define OPW(op, i) what_op((op), (i))
#define RESW(op, r) what_res((op), (r))
#define LITW(s) what_lit(s)
/* The text of a struct what, in a message. */
#define WHS(w) trc_what_str((w), SCRATCH)
#define TYS(t) type_str((t), SCRATCH, STRBUF)

#define DEFN(op, i) trc_def_name((op), (i), SCRATCH)

#define ELS(t) trc_elem_str((t), SCRATCH)

/* ------------------------------------------------------------------ */
/* Saturating int64 arithmetic and shapes                              */

/* An expected shape; dimensions may be negative or saturated while being
 * computed (they then match no type). */
struct shape {
	unsigned rank;
	int64_t d[GLOW_MAX_RANK];
};

#define SHS(s) trc_shape_str((s), SCRATCH)

/* ------------------------------------------------------------------ */
/* Checks shared by the rules; each reports and returns false on failure */

/* Element classes (enum elem_class) as bit sets. */
enum {
	CF = 1 << EC_F,
	CQ = 1 << EC_Q,
	CI = 1 << EC_I,
	CX = 1 << EC_X,
	CB = 1 << EC_B,
	CS = 1 << EC_S, /* float8, i4, u4: conversions only */
	C_FQ = CF | CQ,
	C_IDX = CI | CX,
	C_NUM = CF | CQ | CI | CX,
};

/* ------------------------------------------------------------------ */
/* The shared functions (typerules_check.c)                            */

/* "ComputationInfo" -> "computation info"; all-capital names ("LHS", "CE")
 * stay as they are. */
const char *trc_pretty_name(const char *name, char *buf);

/* The name of operand i; the repeated operand of a variadic kind is
 * "inputs[k]". */
const char *trc_op_name(const struct typed_op *op, unsigned i, char *buf);

/* The text of w (buf: STRBUF bytes, used unless w is a literal). */
const char *trc_what_str(struct what w, char *buf);

/* The printed name of operand i's producer: "@w", "%conv". */
const char *trc_def_name(const struct typed_op *op, unsigned i, char *buf);

/* The element type of t as printed: "float", "qi8[0.5:-3]". */
const char *trc_elem_str(const struct type *t, char *buf);

/* a + b, saturated at the int64 range */
int64_t trc_sat_add(int64_t a, int64_t b);

/* a * b, saturated at the int64 range */
int64_t trc_sat_mul(int64_t a, int64_t b);

/* dimension i of t as an int64 (saturated) */
int64_t trc_dimv(const struct type *t, unsigned i);

/* element count of t, saturated */
int64_t trc_numel(const struct type *t);

/* the dimensions of t as an expected shape */
struct shape trc_shape_of(const struct type *t);

/* s as "<2 x 3>" (buf: STRBUF bytes) */
const char *trc_shape_str(const struct shape *s, char *buf);

/* t has exactly shape s (no negative or saturated dimension matches) */
bool trc_shape_matches(const struct type *t, const struct shape *s);

/* the text of an element class set (one of the sets named above) */
const char *trc_class_desc(unsigned set);

/* t (called what) has an element kind of one of the classes in set */
bool trc_want_class(struct typed_op *op, struct what what, const struct type *t,
		    unsigned set);

/* operand i has an element kind of one of the classes in set */
bool trc_op_class(struct typed_op *op, unsigned i, unsigned set);

/* result r has an element kind of one of the classes in set */
bool trc_res_class(struct typed_op *op, unsigned r, unsigned set);

/* t has exactly ref's element type (kind, scale and offset) */
bool trc_want_elem(struct typed_op *op, struct what what, const struct type *t,
		   struct what refname, const struct type *ref);

/* t has ref's element kind (quantization parameters may differ) */
bool trc_want_kind(struct typed_op *op, struct what what, const struct type *t,
		   struct what refname, const struct type *ref);

/* t has ref's shape */
bool trc_want_same_shape(struct typed_op *op, struct what what, const struct type *t,
			 struct what refname, const struct type *ref);

/* t (called what) has the expected shape s */
bool trc_want_shape(struct typed_op *op, struct what what, const struct type *t,
		    const struct shape *s);

/* result r has the expected shape s */
bool trc_res_shape(struct typed_op *op, unsigned r, const struct shape *s);

/* result r has operand i's type (shape and exact element type) */
bool trc_res_same_type(struct typed_op *op, unsigned r, unsigned i);

/* result r has operand i's shape and element kind */
bool trc_res_same_shape_kind(struct typed_op *op, unsigned r, unsigned i);

/* t has rank `rank`; form describes the expected layout ("N x H x W x C") */
bool trc_want_rank(struct typed_op *op, struct what what, const struct type *t,
		   unsigned rank, const char *form);

/* operand i has rank `rank` (form as for trc_want_rank) */
bool trc_op_rank(struct typed_op *op, unsigned i, unsigned rank, const char *form);

/* the bound lo in words: "positive" (1), "non-negative" (0), else "in range" */
const char *trc_lower_bound_desc(int64_t lo);

/* The attribute checks take the value read at the call site with the
 * literal form, top_int(op, AN_count), and the name for their messages:
 * trc_int_attr_min(op, "count", top_int(op, AN_count), 1). */

/* INTS attribute `name` of value val with exactly len values (len 0: any
 * number), each >= lo; NULL after reporting. */
const int64_t *trc_ints_attr(struct typed_op *op, const char *name, const union attr_val *val, unsigned len,
			     int64_t lo);

/* INT attribute `name`, of value x, >= lo */
bool trc_int_attr_min(struct typed_op *op, const char *name, int64_t x, int64_t lo);

/* FLOAT attribute `name`, of value x, >= 0 (and not NaN) */
bool trc_float_attr_nonneg(struct typed_op *op, const char *name, double x);

/* axis value `a` (attribute `name`) indexes a dimension of t (called what) */
bool trc_axis_ok(struct typed_op *op, const char *name, int64_t a, struct what what,
		 const struct type *t);

/* INT attribute `name`, of value a, is an axis of operand i */
bool trc_axis_attr(struct typed_op *op, const char *name, int64_t a, unsigned i);

/* The axes attribute (AN_axes) of a reduction or its gradient: non-empty,
 * unique axes of t (called what), marked in drop (t's rank, all false on
 * entry); false after reporting every problem. */
bool trc_axes_attr(struct typed_op *op, struct what what, const struct type *t, bool *drop);

/* Elementwise kinds: every operand and result has operand 0's shape. */
bool trc_ew_shapes(struct typed_op *op);

/* Element kinds of a linear layer (operand 0 the input, `bias` the bias
 * operand or -1, result 0): floating-point operands and result all of the
 * input's kind; or quantized input, other operands and result (any
 * parameters), with a quantized or floating-point bias. */
void trc_linear_elems(struct typed_op *op, int bias);

#endif
