/* typerules_check.c - the checks shared by the type rules: message
 * formatting (operand names as the table names them, types, producers),
 * saturating int64 shape arithmetic, and the element-class, shape, rank,
 * attribute and axis checks. Contracts are in typerules_check.h.
 */
#include "graph/typerules_check.h"
#include "support/io.h"

#include <ctype.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* A check of a type rule: true when cond holds, else false after reporting
 * the message (fmt and its arguments, evaluated only then) on op. */
#define TRC_CHECK(op, cond, ...) ((cond) || (top_err((op), __VA_ARGS__), false))

/* "ComputationInfo" -> "computation info"; all-capital names ("LHS", "CE")
 * stay as they are. */
const char *trc_pretty_name(const char *name, char *buf)
{
	bool caps = true;
	for (const char *p = name; *p; p++)
		if (islower((unsigned char)*p))
			caps = false;
	size_t o = 0;
	for (const char *p = name; *p && o + 3 < STRBUF; p++) {
		if (!caps && p != name && isupper((unsigned char)*p))
			buf[o++] = ' ';
		buf[o++] = caps ? *p : (char)tolower((unsigned char)*p);
	}
	buf[o] = 0;
	return buf;
}

/* The name of operand i; the repeated operand of a variadic kind is
 * "inputs[k]". */
const char *trc_op_name(const struct typed_op *op, unsigned i, char *buf)
{
	const struct node_desc *d = node_desc(op->kind);
	if (d->variadic && i + 1 >= d->nops) {
		char base[STRBUF];
		trc_pretty_name(d->op_names[d->nops - 1], base);
		snprintf(buf, STRBUF, "%.200s[%u]", base, i + 1 - d->nops);
		return buf;
	}
	return trc_pretty_name(d->op_names[i], buf);
}

/* The text of w (buf: STRBUF bytes, used unless w is a literal). */
const char *trc_what_str(struct what w, char *buf)
{
	switch (w.kind) {
	case WHAT_OP: return trc_op_name(w.op, w.i, buf);
	case WHAT_RES: return trc_pretty_name(node_desc(w.op->kind)->res_names[w.i], buf);
	case WHAT_LIT: break;
	}
	return w.lit;
}

/* The printed name of operand i's producer: "@w", "%conv". */
const char *trc_def_name(const struct typed_op *op, unsigned i, char *buf)
{
	const struct typed_operand *d = &op->ops[i];
	struct ostream o;
	ostream_mem(&o);
	if (d->def_kind == NK_Placeholder || d->def_kind == NK_Constant)
		print_global_name(&o, d->def_name);
	else if (d->def_name)
		print_local_name(&o, d->def_name);
	snprintf(buf, STRBUF, "%s", ostream_cstr(&o));
	ostream_abort(&o);
	return buf;
}

/* The element type of t as printed: "float", "qi8[0.5:-3]". */
const char *trc_elem_str(const struct type *t, char *buf)
{
	type_str(t, buf, STRBUF);
	char *lt = strrchr(buf, '<');
	if (lt)
		*lt = 0;
	return buf;
}

/* a + b, saturated at the int64 range */
int64_t trc_sat_add(int64_t a, int64_t b)
{
	if (b > 0 && a > INT64_MAX - b)
		return INT64_MAX;
	if (b < 0 && a < INT64_MIN - b)
		return INT64_MIN;
	return a + b;
}

/* a * b, saturated at the int64 range */
int64_t trc_sat_mul(int64_t a, int64_t b)
{
	if (a == 0 || b == 0)
		return 0;
	bool neg = (a < 0) != (b < 0);
	uint64_t ua = a < 0 ? 0 - (uint64_t)a : (uint64_t)a;
	uint64_t ub = b < 0 ? 0 - (uint64_t)b : (uint64_t)b;
	if (ua > (uint64_t)INT64_MAX / ub)
		return neg ? INT64_MIN : INT64_MAX;
	return a * b;
}

/* dimension i of t as an int64 (saturated) */
int64_t trc_dimv(const struct type *t, unsigned i)
{
	return t->dims[i] > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)t->dims[i];
}

/* element count of t, saturated */
int64_t trc_numel(const struct type *t)
{
	int64_t c = 1;
	for (unsigned i = 0; i < t->rank; i++)
		c = trc_sat_mul(c, trc_dimv(t, i));
	return c;
}

/* the dimensions of t as an expected shape */
struct shape trc_shape_of(const struct type *t)
{
	struct shape s;
	memset(&s, 0, sizeof s);
	s.rank = t->rank;
	for (unsigned i = 0; i < t->rank; i++)
		s.d[i] = trc_dimv(t, i);
	return s;
}

/* s as "<2 x 3>" (buf: STRBUF bytes) */
const char *trc_shape_str(const struct shape *s, char *buf)
{
	size_t o = 0;
	o += (size_t)snprintf(buf + o, STRBUF - o, "<");
	for (unsigned i = 0; i < s->rank && o < STRBUF; i++)
		o += (size_t)snprintf(buf + o, STRBUF - o, "%s%" PRId64, i ? " x " : "", s->d[i]);
	if (o < STRBUF)
		snprintf(buf + o, STRBUF - o, ">");
	return buf;
}

/* t has exactly shape s (no negative or saturated dimension matches) */
bool trc_shape_matches(const struct type *t, const struct shape *s)
{
	if (t->rank != s->rank)
		return false;
	for (unsigned i = 0; i < s->rank; i++)
		if (s->d[i] < 0 || (uint64_t)s->d[i] != t->dims[i])
			return false;
	return true;
}

/* the text of an element class set (one of the sets named above) */
const char *trc_class_desc(unsigned set)
{
	switch (set) {
	case CF: return "floating-point (float, float16 or bfloat16)";
	case CQ: return "quantized (qi8, qui8, qi16 or qi32)";
	case CB: return "bool";
	case C_IDX: return "an index type (index32, index64, i32 or i64)";
	case C_FQ: return "floating-point or quantized";
	case C_NUM: return "numeric (not bool)";
	default: unreachable("element class set without a description");
	}
}

/* t (called what) has an element kind of one of the classes in set */
bool trc_want_class(struct typed_op *op, struct what what, const struct type *t,
		    unsigned set)
{
	return TRC_CHECK(op, set & (1u << elem_class((enum elem_kind)t->elem)),
			 "%s must be %s, got %s", WHS(what), trc_class_desc(set), TYS(t));
}

/* operand i has an element kind of one of the classes in set */
bool trc_op_class(struct typed_op *op, unsigned i, unsigned set)
{
	return trc_want_class(op, OPW(op, i), top_optype(op, i), set);
}

/* result r has an element kind of one of the classes in set */
bool trc_res_class(struct typed_op *op, unsigned r, unsigned set)
{
	return trc_want_class(op, RESW(op, r), op->res[r], set);
}

/* t has exactly ref's element type (kind, scale and offset) */
bool trc_want_elem(struct typed_op *op, struct what what, const struct type *t,
		   struct what refname, const struct type *ref)
{
	return TRC_CHECK(op, type_same_elem(t, ref),
			 "%s element type %s differs from %s element type %s", WHS(what), ELS(t), WHS(refname),
			 ELS(ref));
}

/* t has ref's element kind (quantization parameters may differ) */
bool trc_want_kind(struct typed_op *op, struct what what, const struct type *t,
		   struct what refname, const struct type *ref)
{
	return TRC_CHECK(op, t->elem == ref->elem,
			 "%s element kind %s differs from %s element kind %s", WHS(what),
			 elem_name((enum elem_kind)t->elem), WHS(refname), elem_name((enum elem_kind)ref->elem));
}

/* t has ref's shape */
bool trc_want_same_shape(struct typed_op *op, struct what what, const struct type *t,
			 struct what refname, const struct type *ref)
{
	return TRC_CHECK(op, type_same_shape(t, ref),
			 "%s %s does not have the shape of %s %s", WHS(what), TYS(t), WHS(refname), TYS(ref));
}

/* t (called what) has the expected shape s */
bool trc_want_shape(struct typed_op *op, struct what what, const struct type *t,
		    const struct shape *s)
{
	return TRC_CHECK(op, trc_shape_matches(t, s), "%s is %s but its shape should be %s", WHS(what), TYS(t), SHS(s));
}

/* result r has the expected shape s */
bool trc_res_shape(struct typed_op *op, unsigned r, const struct shape *s)
{
	return trc_want_shape(op, RESW(op, r), op->res[r], s);
}

/* result r has operand i's type (shape and exact element type) */
bool trc_res_same_type(struct typed_op *op, unsigned r, unsigned i)
{
	const struct type *t = op->res[r], *ref = top_optype(op, i);
	return TRC_CHECK(op, type_same_shape(t, ref) && type_same_elem(t, ref),
			 "%s is %s but must have the type of %s, %s", RESN(op, r), TYS(t), OPN(op, i), TYS(ref));
}

/* result r has operand i's shape and element kind */
bool trc_res_same_shape_kind(struct typed_op *op, unsigned r, unsigned i)
{
	bool ok = trc_want_kind(op, RESW(op, r), op->res[r], OPW(op, i), top_optype(op, i));
	return trc_want_same_shape(op, RESW(op, r), op->res[r], OPW(op, i), top_optype(op, i)) && ok;
}

/* t has rank `rank`; form describes the expected layout ("N x H x W x C") */
bool trc_want_rank(struct typed_op *op, struct what what, const struct type *t,
		   unsigned rank, const char *form)
{
	return TRC_CHECK(op, t->rank == rank, "%s must be %u-D (%s), got %s", WHS(what), rank, form, TYS(t));
}

/* operand i has rank `rank` (form as for trc_want_rank) */
bool trc_op_rank(struct typed_op *op, unsigned i, unsigned rank, const char *form)
{
	return trc_want_rank(op, OPW(op, i), top_optype(op, i), rank, form);
}

/* the bound lo in words: "positive" (1), "non-negative" (0), else "in range" */
const char *trc_lower_bound_desc(int64_t lo)
{
	return lo == 1 ? "positive" : lo == 0 ? "non-negative" : "in range";
}

/* INTS attribute `name` of value val with exactly len values (len 0: any
 * number), each >= lo; NULL after reporting. */
const int64_t *trc_ints_attr(struct typed_op *op, const char *name, const union attr_val *val, unsigned len,
			     int64_t lo)
{
	unsigned cnt = val->ints.n;
	const int64_t *a = val->ints.v;
	if (len && cnt != len) {
		top_err(op, "%s must have %u values, got %u", name, len, cnt);
		return NULL;
	}
	bool ok = true;
	for (unsigned i = 0; i < cnt; i++)
		if (a[i] < lo) {
			top_err(op, "%s[%u] must be %s, got %" PRId64, name, i, trc_lower_bound_desc(lo), a[i]);
			ok = false;
		}
	return ok ? a : NULL;
}

/* INT attribute `name`, of value x, >= lo */
bool trc_int_attr_min(struct typed_op *op, const char *name, int64_t x, int64_t lo)
{
	return TRC_CHECK(op, x >= lo, "%s must be %s, got %" PRId64, name, trc_lower_bound_desc(lo), x);
}

/* FLOAT attribute `name`, of value x, >= 0 (and not NaN) */
bool trc_float_attr_nonneg(struct typed_op *op, const char *name, double x)
{
	return TRC_CHECK(op, x >= 0, "%s must be non-negative, got %g", name, x);
}

/* axis value `a` (attribute `name`) indexes a dimension of t (called what) */
bool trc_axis_ok(struct typed_op *op, const char *name, int64_t a, struct what what,
		 const struct type *t)
{
	if (a >= 0 && a < (int64_t)t->rank)
		return true;
	if (t->rank == 0)
		top_err(op, "%s %" PRId64 " is out of range: %s %s is a scalar", name, a, WHS(what), TYS(t));
	else
		top_err(op, "%s %" PRId64 " is out of range [0, %u) for %s %s", name, a, t->rank, WHS(what), TYS(t));
	return false;
}

/* INT attribute `name`, of value a, is an axis of operand i */
bool trc_axis_attr(struct typed_op *op, const char *name, int64_t a, unsigned i)
{
	return trc_axis_ok(op, name, a, OPW(op, i), top_optype(op, i));
}

/* The axes attribute of a reduction and its gradient (AN_axes): at least
 * one axis, each an axis of t (called what), none twice; marks them in
 * drop (t's rank, false on entry). Reports every problem. */
bool trc_axes_attr(struct typed_op *op, struct what what, const struct type *t, bool *drop)
{
	unsigned cnt;
	const int64_t *axes = top_ints(op, AN_axes, &cnt);
	if (cnt == 0) {
		top_err(op, "axes must name at least one axis");
		return false;
	}
	bool ok = true;
	for (unsigned i = 0; i < cnt; i++) {
		if (!trc_axis_ok(op, "axis", axes[i], what, t)) {
			ok = false;
		} else if (drop[axes[i]]) {
			top_err(op, "axis %" PRId64 " appears twice in axes", axes[i]);
			ok = false;
		} else {
			drop[axes[i]] = true;
		}
	}
	return ok;
}

/* Elementwise kinds: every operand and result has operand 0's shape. */
bool trc_ew_shapes(struct typed_op *op)
{
	bool ok = true;
	for (unsigned i = 1; i < op->nops; i++)
		ok &= trc_want_same_shape(op, OPW(op, i), top_optype(op, i), OPW(op, 0), top_optype(op, 0));
	for (unsigned r = 0; r < op->nres; r++)
		ok &= trc_want_same_shape(op, RESW(op, r), op->res[r], OPW(op, 0), top_optype(op, 0));
	return ok;
}

/* Element kinds of a linear layer (operand 0 the input, `bias` the bias
 * operand or -1, result 0): floating-point operands and result all of the
 * input's kind; or quantized input, other operands and result (any
 * parameters), with a quantized or floating-point bias. */
void trc_linear_elems(struct typed_op *op, int bias)
{
	const struct type *in = top_optype(op, 0);
	if (!trc_op_class(op, 0, C_FQ))
		return;
	bool q = elem_is_quantized((enum elem_kind)in->elem);
	for (unsigned i = 1; i < op->nops; i++) {
		if (q)
			trc_op_class(op, i, (int)i == bias ? C_FQ : CQ);
		else
			trc_want_kind(op, OPW(op, i), top_optype(op, i), OPW(op, 0), in);
	}
	if (q)
		trc_res_class(op, 0, CQ);
	else
		trc_want_kind(op, RESW(op, 0), top_type(op), OPW(op, 0), in);
}
