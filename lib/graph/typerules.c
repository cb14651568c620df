/* typerules.c - the type rule of every node kind (named in Nodes.def).
 *
 * A rule runs after verify.c has checked the node's structure (operand and
 * result counts, live operands, the predicate), so every operand and result
 * has a type. It checks element kinds, shapes and attribute values and
 * reports each problem through verr(), naming the operand as the table names
 * it ("filter", "LHS", "inputs[1]") and giving the types involved; it keeps
 * going as long as the remaining checks still make sense.
 *
 * Element types. Data movement (Reshape, Transpose, Concat, Slice, Gather,
 * Tile, Pad, MaxPool, ...) copies stored values, so its result has exactly the
 * element type of its input, quantization parameters included (changing them
 * is RescaleQuantized's job). Computing ops keep the element kind, but a
 * quantized result may carry its own scale and offset. Linear layers take
 * float operands of one kind, or quantized input and weights with a quantized
 * or float bias.
 *
 * Arithmetic. Dimensions and attribute values may come from the builder
 * unchecked, so arithmetic on them saturates at the int64 range: no rule
 * overflows, and a saturated value never equals a real dimension.
 */
#include "graph/typerules.h"
#include "support/io.h"

#include <ctype.h>
#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* ------------------------------------------------------------------ */
/* Formatting for messages                                             */

#define STRBUF 256
/* A scratch buffer living until the end of the enclosing block: one per
 * formatted argument of a message. */
#define SCRATCH ((char[STRBUF]){0})

/* "ComputationInfo" -> "computation info"; all-capital names ("LHS", "CE")
 * stay as they are. */
static const char *pretty_name(const char *name, char *buf)
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
static const char *op_name(const struct node *n, unsigned i, char *buf)
{
	const struct node_desc *d = node_desc(n->kind);
	if (d->variadic && i + 1 >= d->nops) {
		char base[STRBUF];
		pretty_name(d->op_names[d->nops - 1], base);
		snprintf(buf, STRBUF, "%.200s[%u]", base, i + 1 - d->nops);
		return buf;
	}
	return pretty_name(d->op_names[i], buf);
}

#define OPN(n, i) op_name((n), (i), SCRATCH)
#define RESN(n, r) pretty_name(node_desc((n)->kind)->res_names[r], SCRATCH)

/* What a shared check talks about, formatted only when it reports: the
 * checks run on every node of every verified function, their messages
 * rarely, and pretty_name is most of the cost of a check that passes. */
struct what {
	const struct node *n; /* WHAT_OP, WHAT_RES */
	const char *lit;      /* WHAT_LIT */
	unsigned i;           /* operand or result index */
	enum { WHAT_LIT, WHAT_OP, WHAT_RES } kind;
};

static inline struct what what_op(const struct node *n, unsigned i)
{
	struct what w = {n, NULL, i, WHAT_OP};
	return w;
}

static inline struct what what_res(const struct node *n, unsigned r)
{
	struct what w = {n, NULL, r, WHAT_RES};
	return w;
}

static inline struct what what_lit(const char *s)
{
	struct what w = {NULL, s, 0, WHAT_LIT};
	return w;
}

/* The text of w (buf: STRBUF bytes, used unless w is a literal). */
static const char *what_str(struct what w, char *buf)
{
	switch (w.kind) {
	case WHAT_OP: return op_name(w.n, w.i, buf);
	case WHAT_RES: return pretty_name(node_desc(w.n->kind)->res_names[w.i], buf);
	case WHAT_LIT: break;
	}
	return w.lit;
}

/* Operand i, result r or a literal name, for the shared checks below. */
#define OPW(n, i) what_op((n), (i))
#define RESW(n, r) what_res((n), (r))
#define LITW(s) what_lit(s)
/* The text of a struct what, in a message. */
#define WHS(w) what_str((w), SCRATCH)
#define TYS(t) type_str((t), SCRATCH, STRBUF)

/* The printed name of operand i's producer: "@w", "%conv". */
static const char *def_name(const struct node *n, unsigned i, char *buf)
{
	const struct node *d = n->ops[i].def;
	struct ostream o;
	ostream_mem(&o);
	if (node_is_storage(d))
		print_global_name(&o, d->name);
	else if (d->name)
		print_local_name(&o, d->name);
	snprintf(buf, STRBUF, "%s", ostream_cstr(&o));
	ostream_abort(&o);
	return buf;
}
#define DEFN(n, i) def_name((n), (i), SCRATCH)

/* The element type of t as printed: "float", "qi8[0.5:-3]". */
static const char *elem_str(const struct type *t, char *buf)
{
	type_str(t, buf, STRBUF);
	char *lt = strrchr(buf, '<');
	if (lt)
		*lt = 0;
	return buf;
}
#define ELS(t) elem_str((t), SCRATCH)

/* ------------------------------------------------------------------ */
/* Saturating int64 arithmetic and shapes                              */

static int64_t sat_add(int64_t a, int64_t b)
{
	if (b > 0 && a > INT64_MAX - b)
		return INT64_MAX;
	if (b < 0 && a < INT64_MIN - b)
		return INT64_MIN;
	return a + b;
}

static int64_t sat_mul(int64_t a, int64_t b)
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
static int64_t dimv(const struct type *t, unsigned i)
{
	return t->dims[i] > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)t->dims[i];
}

/* element count of t, saturated */
static int64_t numel(const struct type *t)
{
	int64_t c = 1;
	for (unsigned i = 0; i < t->rank; i++)
		c = sat_mul(c, dimv(t, i));
	return c;
}

/* An expected shape; dimensions may be negative or saturated while being
 * computed (they then match no type). */
struct shape {
	unsigned rank;
	int64_t d[GLOW_MAX_RANK];
};

static struct shape shape_of(const struct type *t)
{
	struct shape s;
	memset(&s, 0, sizeof s);
	s.rank = t->rank;
	for (unsigned i = 0; i < t->rank; i++)
		s.d[i] = dimv(t, i);
	return s;
}

static const char *shape_str(const struct shape *s, char *buf)
{
	size_t o = 0;
	o += (size_t)snprintf(buf + o, STRBUF - o, "<");
	for (unsigned i = 0; i < s->rank && o < STRBUF; i++)
		o += (size_t)snprintf(buf + o, STRBUF - o, "%s%" PRId64, i ? " x " : "", s->d[i]);
	if (o < STRBUF)
		snprintf(buf + o, STRBUF - o, ">");
	return buf;
}
#define SHS(s) shape_str((s), SCRATCH)

static bool shape_matches(const struct type *t, const struct shape *s)
{
	if (t->rank != s->rank)
		return false;
	for (unsigned i = 0; i < s->rank; i++)
		if (s->d[i] < 0 || (uint64_t)s->d[i] != t->dims[i])
			return false;
	return true;
}

/* ------------------------------------------------------------------ */
/* Checks shared by the rules; each reports and returns false on failure */

/* Element classes (enum elem_class) as bit sets. */
enum {
	CF = 1 << EC_F,
	CQ = 1 << EC_Q,
	CI = 1 << EC_I,
	CX = 1 << EC_X,
	CB = 1 << EC_B,
	C_FQ = CF | CQ,
	C_IDX = CI | CX,
	C_NUM = CF | CQ | CI | CX,
};

static const char *class_desc(unsigned set)
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
static bool want_class(struct verifier *v, const struct node *n, struct what what, const struct type *t,
		       unsigned set)
{
	if (set & (1u << elem_class((enum elem_kind)t->elem)))
		return true;
	verr(v, n, "%s must be %s, got %s", WHS(what), class_desc(set), TYS(t));
	return false;
}

static bool op_class(struct verifier *v, const struct node *n, unsigned i, unsigned set)
{
	return want_class(v, n, OPW(n, i), op_type(n, i), set);
}

static bool res_class(struct verifier *v, const struct node *n, unsigned r, unsigned set)
{
	return want_class(v, n, RESW(n, r), n->types[r], set);
}

/* t has exactly ref's element type (kind, scale and offset) */
static bool want_elem(struct verifier *v, const struct node *n, struct what what, const struct type *t,
		      struct what refname, const struct type *ref)
{
	if (type_same_elem(t, ref))
		return true;
	verr(v, n, "%s element type %s differs from %s element type %s", WHS(what), ELS(t), WHS(refname), ELS(ref));
	return false;
}

/* t has ref's element kind (quantization parameters may differ) */
static bool want_kind(struct verifier *v, const struct node *n, struct what what, const struct type *t,
		      struct what refname, const struct type *ref)
{
	if (t->elem == ref->elem)
		return true;
	verr(v, n, "%s element kind %s differs from %s element kind %s", WHS(what), elem_name((enum elem_kind)t->elem),
	     WHS(refname), elem_name((enum elem_kind)ref->elem));
	return false;
}

/* t has ref's shape */
static bool want_same_shape(struct verifier *v, const struct node *n, struct what what, const struct type *t,
			    struct what refname, const struct type *ref)
{
	if (type_same_shape(t, ref))
		return true;
	verr(v, n, "%s %s does not have the shape of %s %s", WHS(what), TYS(t), WHS(refname), TYS(ref));
	return false;
}

/* t (called what) has the expected shape s */
static bool want_shape(struct verifier *v, const struct node *n, struct what what, const struct type *t,
		       const struct shape *s)
{
	if (shape_matches(t, s))
		return true;
	verr(v, n, "%s is %s but its shape should be %s", WHS(what), TYS(t), SHS(s));
	return false;
}

/* result r has the expected shape s */
static bool res_shape(struct verifier *v, const struct node *n, unsigned r, const struct shape *s)
{
	return want_shape(v, n, RESW(n, r), n->types[r], s);
}

/* result r has operand i's type (shape and exact element type) */
static bool res_same_type(struct verifier *v, const struct node *n, unsigned r, unsigned i)
{
	const struct type *t = n->types[r], *ref = op_type(n, i);
	if (type_same_shape(t, ref) && type_same_elem(t, ref))
		return true;
	verr(v, n, "%s is %s but must have the type of %s, %s", RESN(n, r), TYS(t), OPN(n, i), TYS(ref));
	return false;
}

/* result r has operand i's shape and element kind */
static bool res_same_shape_kind(struct verifier *v, const struct node *n, unsigned r, unsigned i)
{
	bool ok = want_kind(v, n, RESW(n, r), n->types[r], OPW(n, i), op_type(n, i));
	return want_same_shape(v, n, RESW(n, r), n->types[r], OPW(n, i), op_type(n, i)) && ok;
}

/* t has rank `rank`; form describes the expected layout ("N x H x W x C") */
static bool want_rank(struct verifier *v, const struct node *n, struct what what, const struct type *t,
		      unsigned rank, const char *form)
{
	if (t->rank == rank)
		return true;
	verr(v, n, "%s must be %u-D (%s), got %s", WHS(what), rank, form, TYS(t));
	return false;
}

static bool op_rank(struct verifier *v, const struct node *n, unsigned i, unsigned rank, const char *form)
{
	return want_rank(v, n, OPW(n, i), op_type(n, i), rank, form);
}

static const char *lower_bound_desc(int64_t lo)
{
	return lo == 1 ? "positive" : lo == 0 ? "non-negative" : "in range";
}

/* INTS attribute `name` with exactly len values (len 0: any number), each
 * >= lo; NULL after reporting. */
static const int64_t *ints_attr(struct verifier *v, const struct node *n, const char *name, unsigned len,
				int64_t lo)
{
	unsigned cnt;
	const int64_t *a = node_ints(n, name, &cnt);
	if (len && cnt != len) {
		verr(v, n, "%s must have %u values, got %u", name, len, cnt);
		return NULL;
	}
	bool ok = true;
	for (unsigned i = 0; i < cnt; i++)
		if (a[i] < lo) {
			verr(v, n, "%s[%u] must be %s, got %" PRId64, name, i, lower_bound_desc(lo), a[i]);
			ok = false;
		}
	return ok ? a : NULL;
}

/* INT attribute `name` >= lo */
static bool int_attr_min(struct verifier *v, const struct node *n, const char *name, int64_t lo)
{
	int64_t x = node_int(n, name);
	if (x >= lo)
		return true;
	verr(v, n, "%s must be %s, got %" PRId64, name, lower_bound_desc(lo), x);
	return false;
}

/* FLOAT attribute `name` >= 0 (and not NaN) */
static bool float_attr_nonneg(struct verifier *v, const struct node *n, const char *name)
{
	double x = node_float(n, name);
	if (x >= 0)
		return true;
	verr(v, n, "%s must be non-negative, got %g", name, x);
	return false;
}

/* axis value `a` (attribute `name`) indexes a dimension of t (called what) */
static bool axis_ok(struct verifier *v, const struct node *n, const char *name, int64_t a, struct what what,
		    const struct type *t)
{
	if (a >= 0 && a < (int64_t)t->rank)
		return true;
	if (t->rank == 0)
		verr(v, n, "%s %" PRId64 " is out of range: %s %s is a scalar", name, a, WHS(what), TYS(t));
	else
		verr(v, n, "%s %" PRId64 " is out of range [0, %u) for %s %s", name, a, t->rank, WHS(what), TYS(t));
	return false;
}

/* INT attribute `name` is an axis of operand i */
static bool axis_attr(struct verifier *v, const struct node *n, const char *name, unsigned i)
{
	return axis_ok(v, n, name, node_int(n, name), OPW(n, i), op_type(n, i));
}

/* Elementwise kinds: every operand and result has operand 0's shape. */
static bool ew_shapes(struct verifier *v, const struct node *n)
{
	bool ok = true;
	for (unsigned i = 1; i < n->nops; i++)
		ok &= want_same_shape(v, n, OPW(n, i), op_type(n, i), OPW(n, 0), op_type(n, 0));
	for (unsigned r = 0; r < n->nres; r++)
		ok &= want_same_shape(v, n, RESW(n, r), n->types[r], OPW(n, 0), op_type(n, 0));
	return ok;
}

/* Element kinds of a linear layer (operand 0 the input, `bias` the bias
 * operand or -1, result 0): floating-point operands and result all of the
 * input's kind; or quantized input, other operands and result (any
 * parameters), with a quantized or floating-point bias. */
static void linear_elems(struct verifier *v, const struct node *n, int bias)
{
	const struct type *in = op_type(n, 0);
	if (!op_class(v, n, 0, C_FQ))
		return;
	bool q = elem_is_quantized((enum elem_kind)in->elem);
	for (unsigned i = 1; i < n->nops; i++) {
		if (q)
			op_class(v, n, i, (int)i == bias ? C_FQ : CQ);
		else
			want_kind(v, n, OPW(n, i), op_type(n, i), OPW(n, 0), in);
	}
	if (q)
		res_class(v, n, 0, CQ);
	else
		want_kind(v, n, RESW(n, 0), node_type(n), OPW(n, 0), in);
}

/* ------------------------------------------------------------------ */
/* Storage and I/O                                                     */

/* Placeholder, Constant: no operands, one typed result; verify.c checks the
 * type and the initializer, and that storage stays out of functions. */
void tr_storage(struct verifier *v, const struct node *n)
{
	(void)v;
	(void)n;
}

/* Save(Input T, Output T): Output is a placeholder of Input's exact type. */
void tr_save(struct verifier *v, const struct node *n)
{
	const struct type *in = op_type(n, 0), *out = op_type(n, 1);
	if (!as_placeholder(n->ops[1].def)) {
		verr(v, n, "output %s must be a placeholder, not a %s", DEFN(n, 1),
		     node_kind_name(n->ops[1].def->kind));
		return;
	}
	if (!type_same_shape(in, out) || !type_same_elem(in, out))
		verr(v, n, "input %s does not have the type of output %s", TYS(in), TYS(out));
}

/* ------------------------------------------------------------------ */
/* Convolution and pooling (NHWC)                                      */

/* The sliding-window attributes of Convolution, ConvTranspose, MaxPool and
 * AvgPool: kernels [KH, KW] and strides [SH, SW] positive, pads [top, left,
 * bottom, right] non-negative, dilation [DH, DW] positive ([1, 1] for kinds
 * without it). */
struct window {
	const int64_t *k, *s, *p, *d;
};

static const int64_t no_dilation[2] = {1, 1};

static bool window_attrs(struct verifier *v, const struct node *n, struct window *w)
{
	w->k = ints_attr(v, n, "kernels", 2, 1);
	w->s = ints_attr(v, n, "strides", 2, 1);
	w->p = ints_attr(v, n, "pads", 4, 0);
	w->d = node_attr_index(n->kind, "dilation") >= 0 ? ints_attr(v, n, "dilation", 2, 1) : no_dilation;
	return w->k && w->s && w->p && w->d;
}

static const char *const spatial_name[2] = {"height", "width"};

/* Output extent of spatial dimension i (0: H, 1: W) of extent `in`:
 *   forward (conv, pool):  floor((in + pb + pe - d*(k-1) - 1) / s) + 1
 *   transposed:            (in - 1)*s + d*(k-1) + 1 - pb - pe
 * pb/pe are the pads before/after (top/bottom, left/right). Reports and
 * returns -1 when the window does not fit (forward) or the pads remove the
 * whole output (transposed). */
static int64_t window_out(struct verifier *v, const struct node *n, const struct window *w, unsigned i,
			  int64_t in, bool transposed)
{
	int64_t pads = sat_add(w->p[i], w->p[i + 2]);
	int64_t span = sat_add(sat_mul(w->d[i], w->k[i] - 1), 1);
	if (!transposed) {
		int64_t padded = sat_add(in, pads);
		if (span > padded) {
			verr(v, n, "kernel %s %" PRId64 " (dilation %" PRId64 ") exceeds the padded input %s %" PRId64,
			     spatial_name[i], w->k[i], w->d[i], spatial_name[i], padded);
			return -1;
		}
		return (padded - span) / w->s[i] + 1;
	}
	if (in < 1) {
		verr(v, n, "input %s is 0", spatial_name[i]);
		return -1;
	}
	int64_t full = sat_add(sat_mul(in - 1, w->s[i]), span);
	if (full <= pads) {
		verr(v, n, "pads %" PRId64 " + %" PRId64 " remove the whole output %s %" PRId64, w->p[i], w->p[i + 2],
		     spatial_name[i], full);
		return -1;
	}
	return full - pads;
}

/* Convolution(Input N x H x W x IC, Filter OC x KH x KW x IC/group, Bias OC)
 *   -> Result N x OH x OW x OC, [KH, KW] = kernels, group >= 1 divides IC and OC,
 *   OH = floor((H + pt + pb - DH*(KH-1) - 1) / SH) + 1, OW alike.
 * ConvTranspose: the same operands, with OH = (H-1)*SH + DH*(KH-1) + 1 - pt - pb. */
static void conv_rule(struct verifier *v, const struct node *n, bool transposed)
{
	const struct type *in = op_type(n, 0), *f = op_type(n, 1), *b = op_type(n, 2);
	linear_elems(v, n, 2);
	struct window w;
	bool attrs = window_attrs(v, n, &w);
	int64_t group = node_int(n, "group");
	if (group < 1) {
		verr(v, n, "group must be positive, got %" PRId64, group);
		attrs = false;
	}
	bool ranks = op_rank(v, n, 0, 4, "N x H x W x C");
	ranks &= op_rank(v, n, 1, 4, "OC x KH x KW x IC/group");
	ranks &= op_rank(v, n, 2, 1, "OC");
	if (!ranks)
		return;
	int64_t ic = dimv(in, 3), oc = dimv(f, 0);
	if (dimv(b, 0) != oc)
		verr(v, n, "bias has %" PRId64 " elements but filter %s has %" PRId64 " output channels", dimv(b, 0),
		     TYS(f), oc);
	if (!attrs)
		return;
	bool ok = true;
	if (dimv(f, 1) != w.k[0] || dimv(f, 2) != w.k[1]) {
		verr(v, n, "filter %s does not match kernels [%" PRId64 ", %" PRId64 "]", TYS(f), w.k[0], w.k[1]);
		ok = false;
	}
	if (ic % group) {
		verr(v, n, "group %" PRId64 " does not divide the %" PRId64 " input channels", group, ic);
		ok = false;
	} else if (dimv(f, 3) != ic / group) {
		verr(v, n,
		     "filter has %" PRId64 " input channels per group but input has %" PRId64 " / group %" PRId64,
		     dimv(f, 3), ic, group);
		ok = false;
	}
	if (oc % group) {
		verr(v, n, "group %" PRId64 " does not divide the %" PRId64 " output channels of filter %s", group, oc,
		     TYS(f));
		ok = false;
	}
	struct shape s = {4, {dimv(in, 0), 0, 0, oc}};
	for (unsigned i = 0; i < 2; i++) {
		s.d[1 + i] = window_out(v, n, &w, i, dimv(in, 1 + i), transposed);
		ok &= s.d[1 + i] >= 0;
	}
	if (ok)
		res_shape(v, n, 0, &s);
}

void tr_convolution(struct verifier *v, const struct node *n) { conv_rule(v, n, false); }

void tr_conv_transpose(struct verifier *v, const struct node *n) { conv_rule(v, n, true); }

/* Pooling of Input N x H x W x C (elements in `classes`) to N x OH x OW x C
 * with OH, OW as for Convolution (dilation 1). Result 0 keeps the input's
 * exact element type when `exact`, else its kind. Every result must have the
 * pooled shape; returns false if a check failed. */
static bool pool_rule(struct verifier *v, const struct node *n, unsigned classes, bool exact)
{
	const struct type *in = op_type(n, 0);
	bool ok = op_class(v, n, 0, classes);
	if (ok)
		ok = exact ? want_elem(v, n, RESW(n, 0), node_type(n), OPW(n, 0), in)
			   : want_kind(v, n, RESW(n, 0), node_type(n), OPW(n, 0), in);
	struct window w;
	bool attrs = window_attrs(v, n, &w);
	if (!op_rank(v, n, 0, 4, "N x H x W x C") || !attrs)
		return false;
	struct shape s = {4, {dimv(in, 0), 0, 0, dimv(in, 3)}};
	for (unsigned i = 0; i < 2; i++) {
		s.d[1 + i] = window_out(v, n, &w, i, dimv(in, 1 + i), false);
		if (s.d[1 + i] < 0)
			return false;
	}
	for (unsigned r = 0; r < n->nres; r++)
		ok &= res_shape(v, n, r, &s);
	return ok;
}

/* MaxPool(Input N x H x W x C) -> Result N x OH x OW x C (Input's element
 * type), Argmax N x OH x OW x C (an index type: the flattened NHWC position
 * of each maximum). */
void tr_maxpool(struct verifier *v, const struct node *n)
{
	pool_rule(v, n, C_NUM, true);
	res_class(v, n, 1, C_IDX);
}

/* AvgPool(Input N x H x W x C, float or quantized) -> N x OH x OW x C of
 * Input's element kind. */
void tr_avgpool(struct verifier *v, const struct node *n) { pool_rule(v, n, C_FQ, false); }

/* AdaptiveAvgPool(Input N x H x W x C, float or quantized) -> N x OH x OW x C
 * for any OH, OW >= 1 (the result type chooses them), Input's element kind. */
void tr_adaptive_avgpool(struct verifier *v, const struct node *n)
{
	const struct type *in = op_type(n, 0), *r = node_type(n);
	if (op_class(v, n, 0, C_FQ))
		want_kind(v, n, LITW("result"), r, LITW("input"), in);
	if (!op_rank(v, n, 0, 4, "N x H x W x C") || !want_rank(v, n, LITW("result"), r, 4, "N x OH x OW x C"))
		return;
	struct shape s = {4, {dimv(in, 0), dimv(r, 1), dimv(r, 2), dimv(in, 3)}};
	if (r->dims[1] == 0 || r->dims[2] == 0)
		verr(v, n, "result %s must have a positive height and width", TYS(r));
	else
		res_shape(v, n, 0, &s);
}

/* Pad(Input) {pads = [b_0 .. b_{r-1}, e_0 .. e_{r-1}]} -> Result with
 *   dim i = in_i + b_i + e_i >= 0 (negative pads crop), Input's element type.
 * reflect needs every pad <= in_i - 1; edge needs in_i >= 1 where it pads. */
void tr_pad(struct verifier *v, const struct node *n)
{
	const struct type *in = op_type(n, 0);
	want_elem(v, n, LITW("result"), node_type(n), LITW("input"), in);
	unsigned cnt;
	const int64_t *p = node_ints(n, "pads", &cnt);
	if (cnt != 2u * in->rank) {
		verr(v, n, "pads must have 2 x rank = %u values for input %s, got %u", 2u * in->rank, TYS(in), cnt);
		return;
	}
	const char *mode = node_enum(n, "mode");
	bool reflect = strcmp(mode, "reflect") == 0, edge = strcmp(mode, "edge") == 0;
	struct shape s = shape_of(in);
	bool ok = true;
	for (unsigned i = 0; i < in->rank; i++) {
		int64_t b = p[i], e = p[i + in->rank], d = dimv(in, i);
		s.d[i] = sat_add(sat_add(d, b), e);
		if (s.d[i] < 0) {
			verr(v, n, "pads %" PRId64 " and %" PRId64 " crop more than dimension %u (%" PRId64 ") of input %s",
			     b, e, i, d, TYS(in));
			ok = false;
		} else if (reflect && (b > d - 1 || e > d - 1)) {
			verr(v, n, "reflect pads %" PRId64 " and %" PRId64 " must be at most %" PRId64
			     " (dimension %u of input %s minus 1)", b, e, d - 1, i, TYS(in));
			ok = false;
		} else if (edge && d == 0 && (b > 0 || e > 0)) {
			verr(v, n, "edge padding of the empty dimension %u of input %s", i, TYS(in));
			ok = false;
		}
	}
	if (ok)
		res_shape(v, n, 0, &s);
}

/* ------------------------------------------------------------------ */
/* Linear algebra                                                      */

/* FullyConnected(Input N x K, Weights K x M, Bias M) -> N x M */
void tr_fully_connected(struct verifier *v, const struct node *n)
{
	const struct type *in = op_type(n, 0), *w = op_type(n, 1), *b = op_type(n, 2);
	linear_elems(v, n, 2);
	bool ok = op_rank(v, n, 0, 2, "N x K");
	ok &= op_rank(v, n, 1, 2, "K x M");
	ok &= op_rank(v, n, 2, 1, "M");
	if (!ok)
		return;
	if (in->dims[1] != w->dims[0]) {
		verr(v, n, "input %s has K = %" PRIu64 " but weights %s have K = %" PRIu64, TYS(in), in->dims[1],
		     TYS(w), w->dims[0]);
		ok = false;
	}
	if (b->dims[0] != w->dims[1]) {
		verr(v, n, "bias %s does not have the M = %" PRIu64 " columns of weights %s", TYS(b), w->dims[1],
		     TYS(w));
		ok = false;
	}
	struct shape s = {2, {dimv(in, 0), dimv(w, 1)}};
	if (ok)
		res_shape(v, n, 0, &s);
}

/* MatMul(LHS N x K, RHS K x M) -> N x M */
void tr_matmul(struct verifier *v, const struct node *n)
{
	const struct type *a = op_type(n, 0), *b = op_type(n, 1);
	linear_elems(v, n, -1);
	bool ranks = op_rank(v, n, 0, 2, "N x K");
	ranks &= op_rank(v, n, 1, 2, "K x M");
	if (!ranks)
		return;
	if (a->dims[1] != b->dims[0]) {
		verr(v, n, "LHS %s has K = %" PRIu64 " but RHS %s has K = %" PRIu64, TYS(a), a->dims[1], TYS(b),
		     b->dims[0]);
		return;
	}
	struct shape s = {2, {dimv(a, 0), dimv(b, 1)}};
	res_shape(v, n, 0, &s);
}

/* BatchMatMul(LHS B x N x K, RHS B x K x M) -> B x N x M */
void tr_batch_matmul(struct verifier *v, const struct node *n)
{
	const struct type *a = op_type(n, 0), *b = op_type(n, 1);
	linear_elems(v, n, -1);
	bool ranks = op_rank(v, n, 0, 3, "B x N x K");
	ranks &= op_rank(v, n, 1, 3, "B x K x M");
	if (!ranks)
		return;
	bool ok = true;
	if (a->dims[0] != b->dims[0]) {
		verr(v, n, "LHS %s and RHS %s have different batch sizes", TYS(a), TYS(b));
		ok = false;
	}
	if (a->dims[2] != b->dims[1]) {
		verr(v, n, "LHS %s has K = %" PRIu64 " but RHS %s has K = %" PRIu64, TYS(a), a->dims[2], TYS(b),
		     b->dims[1]);
		ok = false;
	}
	struct shape s = {3, {dimv(a, 0), dimv(a, 1), dimv(b, 2)}};
	if (ok)
		res_shape(v, n, 0, &s);
}

/* BatchedAdd(Batch B x d1 x .. x dn, Slice d1 x .. x dn) -> Batch's shape:
 * the slice is added to each of the B batch elements. Float/integer: one
 * element kind; quantized: slice and result quantized (any parameters). */
void tr_batched_add(struct verifier *v, const struct node *n)
{
	const struct type *b = op_type(n, 0), *sl = op_type(n, 1);
	if (op_class(v, n, 0, C_NUM)) {
		if (elem_is_quantized((enum elem_kind)b->elem)) {
			op_class(v, n, 1, CQ);
			res_class(v, n, 0, CQ);
		} else {
			want_kind(v, n, LITW("slice"), sl, LITW("batch"), b);
			want_kind(v, n, LITW("result"), node_type(n), LITW("batch"), b);
		}
	}
	if (b->rank == 0) {
		verr(v, n, "batch %s must have a batch dimension", TYS(b));
		return;
	}
	struct shape s = shape_of(b);
	struct shape want = {b->rank - 1u, {0}};
	memcpy(want.d, s.d + 1, (b->rank - 1u) * sizeof(int64_t));
	if (want_shape(v, n, LITW("slice"), sl, &want))
		res_shape(v, n, 0, &s);
}

/* BatchedReduce{Add,Mean,Max,Min,Prod}(Batch) {axes} -> Batch's shape
 * without the axes; axes non-empty, unique, in [0, rank). Mean takes float or
 * quantized, the others any numeric kind; the result keeps the kind. */
void tr_reduce(struct verifier *v, const struct node *n)
{
	const struct type *in = op_type(n, 0);
	if (op_class(v, n, 0, n->kind == NK_BatchedReduceMean ? C_FQ : C_NUM))
		want_kind(v, n, LITW("result"), node_type(n), LITW("batch"), in);
	unsigned cnt;
	const int64_t *axes = node_ints(n, "axes", &cnt);
	if (cnt == 0) {
		verr(v, n, "axes must name at least one axis");
		return;
	}
	bool drop[GLOW_MAX_RANK] = {false};
	bool ok = true;
	for (unsigned i = 0; i < cnt; i++) {
		if (!axis_ok(v, n, "axis", axes[i], LITW("batch"), in)) {
			ok = false;
		} else if (drop[axes[i]]) {
			verr(v, n, "axis %" PRId64 " appears twice in axes", axes[i]);
			ok = false;
		} else {
			drop[axes[i]] = true;
		}
	}
	if (!ok)
		return;
	struct shape s = {0, {0}};
	for (unsigned i = 0; i < in->rank; i++)
		if (!drop[i])
			s.d[s.rank++] = dimv(in, i);
	res_shape(v, n, 0, &s);
}

/* Gemm(A M x K (K x M if trans_a), B K x N (N x K if trans_b), C) -> M x N,
 * result = alpha * A' B' + beta * C with C broadcast to M x N: C is a scalar,
 * a vector of N or 1, or a matrix (M or 1) x (N or 1). */
void tr_gemm(struct verifier *v, const struct node *n)
{
	const struct type *a = op_type(n, 0), *b = op_type(n, 1), *c = op_type(n, 2);
	linear_elems(v, n, 2);
	bool ranks = op_rank(v, n, 0, 2, "M x K");
	ranks &= op_rank(v, n, 1, 2, "K x N");
	if (!ranks)
		return;
	bool ta = node_int(n, "trans_a"), tb = node_int(n, "trans_b");
	int64_t m = dimv(a, ta), ka = dimv(a, !ta), kb = dimv(b, tb), nn = dimv(b, !tb);
	bool ok = true;
	if (ka != kb) {
		verr(v, n, "A %s has K = %" PRId64 " (trans_a %s) but B %s has K = %" PRId64 " (trans_b %s)", TYS(a),
		     ka, ta ? "true" : "false", TYS(b), kb, tb ? "true" : "false");
		ok = false;
	}
	bool cok = c->rank == 0 || (c->rank == 1 && (dimv(c, 0) == nn || dimv(c, 0) == 1)) ||
		   (c->rank == 2 && (dimv(c, 0) == m || dimv(c, 0) == 1) && (dimv(c, 1) == nn || dimv(c, 1) == 1));
	if (!cok) {
		verr(v, n, "C %s does not broadcast to M x N = <%" PRId64 " x %" PRId64 ">", TYS(c), m, nn);
		ok = false;
	}
	struct shape s = {2, {m, nn}};
	if (ok)
		res_shape(v, n, 0, &s);
}

/* ------------------------------------------------------------------ */
/* Normalization                                                       */

/* Operand i is a 1-D vector of c elements of the input's float kind. */
static void channel_vector(struct verifier *v, const struct node *n, unsigned i, int64_t c, const char *cname)
{
	const struct type *t = op_type(n, i), *in = op_type(n, 0);
	if (elem_is_float((enum elem_kind)in->elem))
		want_kind(v, n, OPW(n, i), t, LITW("input"), in);
	else
		op_class(v, n, i, CF);
	if (t->rank != 1 || dimv(t, 0) != c)
		verr(v, n, "%s is %s but must be a vector of the %" PRId64 " %s of input %s", OPN(n, i), TYS(t), c,
		     cname, TYS(in));
}

/* BatchNormalization(Input, Scale C, Bias C, Mean C, Var C) -> Input's shape
 * and kind, C = Input dim channel_idx; Input float or quantized, the
 * statistics floating-point (Input's kind when it is float); epsilon >= 0,
 * momentum in [0, 1]. */
void tr_batchnorm(struct verifier *v, const struct node *n)
{
	const struct type *in = op_type(n, 0);
	if (op_class(v, n, 0, C_FQ))
		res_same_shape_kind(v, n, 0, 0);
	float_attr_nonneg(v, n, "epsilon");
	double mom = node_float(n, "momentum");
	if (!(mom >= 0 && mom <= 1))
		verr(v, n, "momentum must be in [0, 1], got %g", mom);
	if (!axis_attr(v, n, "channel_idx", 0))
		return;
	int64_t c = dimv(in, (unsigned)node_int(n, "channel_idx"));
	for (unsigned i = 1; i < 5; i++)
		channel_vector(v, n, i, c, "channels");
}

/* LayerNormalization(Input, Scale, Bias) {axis}: Input floating-point,
 * normalized over dims [axis, rank); Scale and Bias have shape Input dims
 * [axis:] and Input's kind; the result has Input's type; epsilon >= 0. */
void tr_layernorm(struct verifier *v, const struct node *n)
{
	const struct type *in = op_type(n, 0);
	if (op_class(v, n, 0, CF)) {
		res_same_type(v, n, 0, 0);
		want_kind(v, n, LITW("scale"), op_type(n, 1), LITW("input"), in);
		want_kind(v, n, LITW("bias"), op_type(n, 2), LITW("input"), in);
	}
	float_attr_nonneg(v, n, "epsilon");
	if (!axis_attr(v, n, "axis", 0))
		return;
	unsigned axis = (unsigned)node_int(n, "axis");
	struct shape s = {in->rank - axis, {0}};
	for (unsigned i = axis; i < in->rank; i++)
		s.d[i - axis] = dimv(in, i);
	want_shape(v, n, LITW("scale"), op_type(n, 1), &s);
	want_shape(v, n, LITW("bias"), op_type(n, 2), &s);
}

/* InstanceNormalization(Input, Scale C, Bias C): Input floating-point of rank
 * >= 3 (a batch, channels, spatial dims), C = Input dim channel_idx with
 * channel_idx in [1, rank); each (n, c) plane is normalized; the result has
 * Input's type; epsilon >= 0. */
void tr_instancenorm(struct verifier *v, const struct node *n)
{
	const struct type *in = op_type(n, 0);
	if (op_class(v, n, 0, CF))
		res_same_type(v, n, 0, 0);
	float_attr_nonneg(v, n, "epsilon");
	if (in->rank < 3) {
		verr(v, n, "input %s must have a batch, a channel and at least one spatial dimension", TYS(in));
		return;
	}
	int64_t ci = node_int(n, "channel_idx");
	if (ci < 1 || ci >= (int64_t)in->rank) {
		verr(v, n, "channel_idx %" PRId64 " is out of range [1, %u) for input %s", ci, in->rank, TYS(in));
		return;
	}
	int64_t c = dimv(in, (unsigned)ci);
	channel_vector(v, n, 1, c, "channels");
	channel_vector(v, n, 2, c, "channels");
}

/* LocalResponseNormalization(Input N x H x W x C, floating-point) -> Input's
 * type; each value is scaled by (k + alpha/size * sum of squares over the
 * size = 2*half_window_size + 1 neighbouring channels)^beta;
 * half_window_size >= 0, k > 0. */
void tr_lrn(struct verifier *v, const struct node *n)
{
	if (op_class(v, n, 0, CF))
		res_same_type(v, n, 0, 0);
	op_rank(v, n, 0, 4, "N x H x W x C");
	int_attr_min(v, n, "half_window_size", 0);
	double k = node_float(n, "k");
	if (!(k > 0))
		verr(v, n, "k must be positive, got %g", k);
}

/* ------------------------------------------------------------------ */
/* Elementwise                                                         */

/* Add, Sub, Mul, Div, Max, Min, Pow, Fmod, Mod, PRelu: operands and result of one
 * shape and one numeric element kind (quantized parameters may differ). */
void tr_arith(struct verifier *v, const struct node *n)
{
	ew_shapes(v, n);
	if (!op_class(v, n, 0, C_NUM))
		return;
	want_kind(v, n, OPW(n, 1), op_type(n, 1), OPW(n, 0), op_type(n, 0));
	want_kind(v, n, LITW("result"), node_type(n), OPW(n, 0), op_type(n, 0));
}

/* CmpEQ, CmpNEQ (any kind), CmpLT, CmpLTE (numeric): LHS and RHS of one shape
 * and kind -> bool of that shape. */
void tr_compare(struct verifier *v, const struct node *n)
{
	ew_shapes(v, n);
	bool ordered = n->kind == NK_CmpLT || n->kind == NK_CmpLTE;
	if (!ordered || op_class(v, n, 0, C_NUM))
		want_kind(v, n, LITW("RHS"), op_type(n, 1), LITW("LHS"), op_type(n, 0));
	res_class(v, n, 0, CB);
}

/* And, Or, Xor, Not: bool operands -> bool, one shape. */
void tr_logical(struct verifier *v, const struct node *n)
{
	ew_shapes(v, n);
	for (unsigned i = 0; i < n->nops; i++)
		op_class(v, n, i, CB);
	res_class(v, n, 0, CB);
}

/* BitShift(LHS, RHS) {direction}: operands and result of one shape and one
 * integer or index kind; each LHS element shifted left or right (logically,
 * as unsigned bits of its width) by the RHS element. */
void tr_bitshift(struct verifier *v, const struct node *n)
{
	ew_shapes(v, n);
	if (!op_class(v, n, 0, C_IDX))
		return;
	want_kind(v, n, OPW(n, 1), op_type(n, 1), OPW(n, 0), op_type(n, 0));
	want_kind(v, n, LITW("result"), node_type(n), OPW(n, 0), op_type(n, 0));
}

/* Neg, Abs, Sign, Relu, LeakyRelu: numeric Input -> Input's shape and kind. */
void tr_unary(struct verifier *v, const struct node *n)
{
	ew_shapes(v, n);
	if (op_class(v, n, 0, C_NUM))
		want_kind(v, n, LITW("result"), node_type(n), LITW("input"), op_type(n, 0));
}

/* Exp, Log, Sqrt, ..., Sigmoid, Tanh, Gelu, Elu: floating-point Input ->
 * Input's type. */
void tr_unary_float(struct verifier *v, const struct node *n)
{
	ew_shapes(v, n);
	if (op_class(v, n, 0, CF))
		want_kind(v, n, LITW("result"), node_type(n), LITW("input"), op_type(n, 0));
}

/* IsNaN, IsInf: floating-point Input -> bool of its shape. */
void tr_isnan(struct verifier *v, const struct node *n)
{
	ew_shapes(v, n);
	op_class(v, n, 0, CF);
	res_class(v, n, 0, CB);
}

/* Clip(Input) {min, max}: numeric Input -> Input's shape and kind, min <= max. */
void tr_clip(struct verifier *v, const struct node *n)
{
	tr_unary(v, n);
	double lo = node_float(n, "min"), hi = node_float(n, "max");
	if (!(lo <= hi))
		verr(v, n, "min %g must not exceed max %g", lo, hi);
}

/* Select(Cond bool, LHS T, RHS T) -> T, one shape: Cond ? LHS : RHS. */
void tr_select(struct verifier *v, const struct node *n)
{
	ew_shapes(v, n);
	op_class(v, n, 0, CB);
	want_elem(v, n, LITW("RHS"), op_type(n, 2), LITW("LHS"), op_type(n, 1));
	want_elem(v, n, LITW("result"), node_type(n), LITW("LHS"), op_type(n, 1));
}

/* ------------------------------------------------------------------ */
/* Softmax and losses                                                  */

/* SoftMax, LogSoftMax(Input) {axis}: float or quantized Input, normalized
 * along axis in [0, rank) -> Input's shape and kind. */
void tr_softmax(struct verifier *v, const struct node *n)
{
	if (op_class(v, n, 0, C_FQ))
		res_same_shape_kind(v, n, 0, 0);
	axis_attr(v, n, "axis", 0);
}

/* CrossEntropyLoss(P N x C floating-point, Labels N of an index type)
 *   -> CE <1> of P's kind: -sum_n log P[n, Labels[n]]. */
void tr_cross_entropy(struct verifier *v, const struct node *n)
{
	const struct type *p = op_type(n, 0), *l = op_type(n, 1);
	if (op_class(v, n, 0, CF))
		want_kind(v, n, LITW("CE"), node_type(n), LITW("P"), p);
	op_class(v, n, 1, C_IDX);
	struct shape one = {1, {1}};
	res_shape(v, n, 0, &one);
	bool ranks = op_rank(v, n, 0, 2, "N x C");
	ranks &= op_rank(v, n, 1, 1, "N");
	if (!ranks)
		return;
	if (l->dims[0] != p->dims[0])
		verr(v, n, "labels %s do not have one entry per row of P %s", TYS(l), TYS(p));
}

/* Regression(Input T, Expected T) -> T, T floating-point: the gradient
 * Input - Expected in training. */
void tr_regression(struct verifier *v, const struct node *n)
{
	const struct type *in = op_type(n, 0), *e = op_type(n, 1);
	if (!op_class(v, n, 0, CF))
		return;
	if (!type_same_shape(in, e) || !type_same_elem(in, e))
		verr(v, n, "expected %s does not have the type of input %s", TYS(e), TYS(in));
	res_same_type(v, n, 0, 0);
}

/* ------------------------------------------------------------------ */
/* Shape and data movement                                             */

/* Reshape(Input) -> Result with Input's element type and element count. */
void tr_reshape(struct verifier *v, const struct node *n)
{
	const struct type *in = op_type(n, 0), *r = node_type(n);
	want_elem(v, n, LITW("result"), r, LITW("input"), in);
	if (numel(in) != numel(r))
		verr(v, n, "result %s has %" PRId64 " elements but input %s has %" PRId64, TYS(r), numel(r), TYS(in),
		     numel(in));
}

/* Transpose(Input) {shuffle}: shuffle is a permutation of [0, rank);
 * result dim i = Input dim shuffle[i]; Input's element type. */
void tr_transpose(struct verifier *v, const struct node *n)
{
	const struct type *in = op_type(n, 0);
	want_elem(v, n, LITW("result"), node_type(n), LITW("input"), in);
	unsigned cnt;
	const int64_t *sh = node_ints(n, "shuffle", &cnt);
	if (cnt != in->rank) {
		verr(v, n, "shuffle has %u values but input %s has rank %u", cnt, TYS(in), in->rank);
		return;
	}
	bool seen[GLOW_MAX_RANK] = {false};
	struct shape s = {in->rank, {0}};
	for (unsigned i = 0; i < cnt; i++) {
		if (sh[i] < 0 || sh[i] >= (int64_t)in->rank || seen[sh[i]]) {
			verr(v, n, "shuffle is not a permutation of [0, %u): entry %u is %" PRId64, in->rank, i, sh[i]);
			return;
		}
		seen[sh[i]] = true;
		s.d[i] = dimv(in, (unsigned)sh[i]);
	}
	res_shape(v, n, 0, &s);
}

/* Concat(Inputs...) {dim}: inputs of one element type and rank, equal in every
 * dimension but dim -> that shape with dim = the sum over the inputs. */
void tr_concat(struct verifier *v, const struct node *n)
{
	const struct type *first = op_type(n, 0);
	bool ok = true;
	for (unsigned i = 1; i < n->nops; i++)
		ok &= want_elem(v, n, OPW(n, i), op_type(n, i), OPW(n, 0), first);
	want_elem(v, n, LITW("result"), node_type(n), OPW(n, 0), first);
	if (!axis_attr(v, n, "dim", 0))
		return;
	unsigned dim = (unsigned)node_int(n, "dim");
	struct shape s = shape_of(first);
	for (unsigned i = 1; i < n->nops; i++) {
		const struct type *t = op_type(n, i);
		bool same = t->rank == first->rank;
		for (unsigned j = 0; same && j < t->rank; j++)
			same = j == dim || t->dims[j] == first->dims[j];
		if (!same) {
			verr(v, n, "%s %s does not match %s %s in every dimension but %u", OPN(n, i), TYS(t), OPN(n, 0),
			     TYS(first), dim);
			ok = false;
		}
		s.d[dim] = sat_add(s.d[dim], dimv(t, dim));
	}
	if (ok)
		res_shape(v, n, 0, &s);
}

/* Slice(Input) {start}: start has one non-negative value per dimension and
 * start[i] + result dim i <= Input dim i; Result has Input's rank and element
 * type. */
void tr_slice(struct verifier *v, const struct node *n)
{
	const struct type *in = op_type(n, 0), *r = node_type(n);
	want_elem(v, n, LITW("result"), r, LITW("input"), in);
	if (r->rank != in->rank) {
		verr(v, n, "result %s does not have the rank of input %s", TYS(r), TYS(in));
		return;
	}
	const int64_t *st = ints_attr(v, n, "start", in->rank, 0);
	if (!st)
		return;
	for (unsigned i = 0; i < in->rank; i++)
		if (sat_add(st[i], dimv(r, i)) > dimv(in, i)) {
			verr(v, n, "start %" PRId64 " + result %s dimension %u exceeds input %s", st[i], TYS(r), i,
			     TYS(in));
			return;
		}
}

/* InsertTensor(Big, Small) {start, count, axis} -> Big's type: Small, repeated
 * count >= 1 times along axis, is written at offset start (one non-negative
 * value per dimension) of Big; Small has Big's rank and element type and
 * start[i] + Small dim i (times count along axis) <= Big dim i. */
void tr_insert_tensor(struct verifier *v, const struct node *n)
{
	const struct type *big = op_type(n, 0), *sm = op_type(n, 1);
	want_elem(v, n, LITW("small"), sm, LITW("big"), big);
	res_same_type(v, n, 0, 0);
	bool ok = int_attr_min(v, n, "count", 1);
	if (sm->rank != big->rank) {
		verr(v, n, "small %s does not have the rank of big %s", TYS(sm), TYS(big));
		return;
	}
	const int64_t *st = ints_attr(v, n, "start", big->rank, 0);
	if (!axis_attr(v, n, "axis", 0) || !st || !ok)
		return;
	unsigned axis = (unsigned)node_int(n, "axis");
	int64_t count = node_int(n, "count");
	for (unsigned i = 0; i < big->rank; i++) {
		int64_t ext = i == axis ? sat_mul(dimv(sm, i), count) : dimv(sm, i);
		if (sat_add(st[i], ext) > dimv(big, i)) {
			verr(v, n, "start %" PRId64 " + %" PRId64 " inserted in dimension %u exceeds big %s", st[i], ext,
			     i, TYS(big));
			return;
		}
	}
}

/* Gather(Data, Indices of an index type) {axis in [0, rank(Data))}
 *   -> Data dims[:axis] ++ Indices dims ++ Data dims[axis+1:], Data's element type. */
void tr_gather(struct verifier *v, const struct node *n)
{
	const struct type *d = op_type(n, 0), *ix = op_type(n, 1);
	want_elem(v, n, LITW("result"), node_type(n), LITW("data"), d);
	op_class(v, n, 1, C_IDX);
	if (!axis_attr(v, n, "axis", 0))
		return;
	unsigned axis = (unsigned)node_int(n, "axis");
	unsigned rank = d->rank - 1u + ix->rank;
	if (rank > GLOW_MAX_RANK) {
		verr(v, n, "result would have rank %u (more than %d)", rank, GLOW_MAX_RANK);
		return;
	}
	struct shape s = {0, {0}};
	for (unsigned i = 0; i < axis; i++)
		s.d[s.rank++] = dimv(d, i);
	for (unsigned i = 0; i < ix->rank; i++)
		s.d[s.rank++] = dimv(ix, i);
	for (unsigned i = axis + 1; i < d->rank; i++)
		s.d[s.rank++] = dimv(d, i);
	res_shape(v, n, 0, &s);
}

/* GatherND(Data rank r, Indices rank q of an index type) {batch_dims b}:
 *   0 <= b < min(q, r), the first b dims of Data and Indices agree, the index
 *   depth m = Indices dim q-1 is in [1, r - b];
 *   result = Indices dims[:q-1] ++ Data dims[b+m:], Data's element type. */
void tr_gather_nd(struct verifier *v, const struct node *n)
{
	const struct type *d = op_type(n, 0), *ix = op_type(n, 1);
	want_elem(v, n, LITW("result"), node_type(n), LITW("data"), d);
	op_class(v, n, 1, C_IDX);
	int64_t b = node_int(n, "batch_dims");
	int64_t lim = d->rank < ix->rank ? d->rank : ix->rank;
	if (b < 0 || b >= lim) {
		verr(v, n, "batch_dims %" PRId64 " must be in [0, %" PRId64 ") for data %s and indices %s", b, lim,
		     TYS(d), TYS(ix));
		return;
	}
	for (unsigned i = 0; i < (unsigned)b; i++)
		if (d->dims[i] != ix->dims[i]) {
			verr(v, n, "batch dimension %u of data %s and indices %s differs", i, TYS(d), TYS(ix));
			return;
		}
	int64_t m = dimv(ix, ix->rank - 1u);
	if (m < 1 || m > (int64_t)d->rank - b) {
		verr(v, n, "index depth %" PRId64 " (last dimension of indices %s) must be in [1, %" PRId64 "]", m,
		     TYS(ix), (int64_t)d->rank - b);
		return;
	}
	struct shape s = {0, {0}};
	for (unsigned i = 0; i + 1 < ix->rank; i++)
		s.d[s.rank++] = dimv(ix, i);
	for (unsigned i = (unsigned)(b + m); i < d->rank; i++)
		s.d[s.rank++] = dimv(d, i);
	res_shape(v, n, 0, &s);
}

/* Indices (operand i) has Data's rank and, in every dimension but axis, at
 * most Data's extent (each index tuple names an element of Data). */
static bool along_axis_indices(struct verifier *v, const struct node *n, unsigned i, unsigned axis)
{
	const struct type *d = op_type(n, 0), *ix = op_type(n, i);
	if (ix->rank != d->rank) {
		verr(v, n, "%s %s does not have the rank of data %s", OPN(n, i), TYS(ix), TYS(d));
		return false;
	}
	for (unsigned k = 0; k < d->rank; k++)
		if (k != axis && ix->dims[k] > d->dims[k]) {
			verr(v, n, "%s %s exceeds data %s in dimension %u", OPN(n, i), TYS(ix), TYS(d), k);
			return false;
		}
	return true;
}

/* GatherElements(Data, Indices of an index type) {axis in [0, rank(Data))}:
 *   Indices has Data's rank and at most Data's extent in every dimension
 *   but axis -> Indices' shape, Data's element type; result[i] =
 *   Data[i with dimension axis replaced by Indices[i]]. */
void tr_gather_elements(struct verifier *v, const struct node *n)
{
	want_elem(v, n, LITW("result"), node_type(n), LITW("data"), op_type(n, 0));
	op_class(v, n, 1, C_IDX);
	if (!axis_attr(v, n, "axis", 0) || !along_axis_indices(v, n, 1, (unsigned)node_int(n, "axis")))
		return;
	struct shape s = shape_of(op_type(n, 1));
	res_shape(v, n, 0, &s);
}

/* ScatterElements(Data, Indices of an index type, Updates) {axis, reduction}
 *   -> Data's type: Indices as for GatherElements, Updates of Indices' shape
 *   and Data's element type; Data with Updates[i] written (or added, or
 *   multiplied) at Indices' positions. */
void tr_scatter_elements(struct verifier *v, const struct node *n)
{
	res_same_type(v, n, 0, 0);
	want_elem(v, n, LITW("updates"), op_type(n, 2), LITW("data"), op_type(n, 0));
	op_class(v, n, 1, C_IDX);
	if (node_int(n, "reduction") != 0)
		op_class(v, n, 0, C_NUM);
	if (!axis_attr(v, n, "axis", 0) || !along_axis_indices(v, n, 1, (unsigned)node_int(n, "axis")))
		return;
	want_same_shape(v, n, LITW("updates"), op_type(n, 2), LITW("indices"), op_type(n, 1));
}

/* ScatterND(Data rank r, Indices rank q >= 1 of an index type, Updates)
 *   {reduction} -> Data's type: the index depth k = Indices dim q-1 is in
 *   [1, r]; Updates has shape Indices dims[:q-1] ++ Data dims[k:] and
 *   Data's element type. */
void tr_scatter_nd(struct verifier *v, const struct node *n)
{
	const struct type *d = op_type(n, 0), *ix = op_type(n, 1);
	res_same_type(v, n, 0, 0);
	want_elem(v, n, LITW("updates"), op_type(n, 2), LITW("data"), d);
	op_class(v, n, 1, C_IDX);
	if (node_int(n, "reduction") != 0)
		op_class(v, n, 0, C_NUM);
	if (ix->rank == 0) {
		verr(v, n, "indices %s must have at least one dimension", TYS(ix));
		return;
	}
	int64_t k = dimv(ix, ix->rank - 1u);
	if (k < 1 || k > (int64_t)d->rank) {
		verr(v, n, "index depth %" PRId64 " (last dimension of indices %s) must be in [1, %u]", k, TYS(ix),
		     d->rank);
		return;
	}
	unsigned rank = ix->rank - 1u + d->rank - (unsigned)k;
	if (rank > GLOW_MAX_RANK) {
		verr(v, n, "updates would have rank %u (more than %d)", rank, GLOW_MAX_RANK);
		return;
	}
	struct shape s = {0, {0}};
	for (unsigned i = 0; i + 1 < ix->rank; i++)
		s.d[s.rank++] = dimv(ix, i);
	for (unsigned i = (unsigned)k; i < d->rank; i++)
		s.d[s.rank++] = dimv(d, i);
	want_shape(v, n, LITW("updates"), op_type(n, 2), &s);
}

/* Tile(Input) {count >= 1, axis}: Input repeated count times along axis
 * (result dim axis = count * Input dim axis), Input's element type. */
void tr_tile(struct verifier *v, const struct node *n)
{
	const struct type *in = op_type(n, 0);
	want_elem(v, n, LITW("result"), node_type(n), LITW("input"), in);
	bool ok = int_attr_min(v, n, "count", 1);
	if (!axis_attr(v, n, "axis", 0) || !ok)
		return;
	unsigned axis = (unsigned)node_int(n, "axis");
	struct shape s = shape_of(in);
	s.d[axis] = sat_mul(s.d[axis], node_int(n, "count"));
	res_shape(v, n, 0, &s);
}

/* Broadcast(Input) {axis}: Input dims align with result dims [axis, axis +
 * rank(Input)) (numpy alignment is axis = rank(Result) - rank(Input)); each
 * aligned Input dim is 1 or equal to the result's; Input's element type. */
void tr_broadcast(struct verifier *v, const struct node *n)
{
	const struct type *in = op_type(n, 0), *r = node_type(n);
	want_elem(v, n, LITW("result"), r, LITW("input"), in);
	int64_t axis = node_int(n, "axis");
	if (axis < 0 || axis + in->rank > r->rank) {
		verr(v, n, "axis %" PRId64 " does not place input %s inside result %s (need 0 <= axis <= %d)", axis,
		     TYS(in), TYS(r), (int)r->rank - (int)in->rank);
		return;
	}
	for (unsigned i = 0; i < in->rank; i++)
		if (in->dims[i] != 1 && in->dims[i] != r->dims[axis + i]) {
			verr(v, n, "input %s dimension %u does not broadcast to result %s dimension %u", TYS(in), i,
			     TYS(r), (unsigned)axis + i);
			return;
		}
}

/* Block size b: positive. */
static int64_t block_size(struct verifier *v, const struct node *n)
{
	return int_attr_min(v, n, "block_size", 1) ? node_int(n, "block_size") : 0;
}

/* SpaceToDepth(Input N x H x W x C) {block_size b}: b divides H and W
 *   -> N x H/b x W/b x C*b*b, Input's element type. */
void tr_space_to_depth(struct verifier *v, const struct node *n)
{
	const struct type *in = op_type(n, 0);
	want_elem(v, n, LITW("result"), node_type(n), LITW("input"), in);
	int64_t b = block_size(v, n);
	if (!op_rank(v, n, 0, 4, "N x H x W x C") || !b)
		return;
	if (dimv(in, 1) % b || dimv(in, 2) % b) {
		verr(v, n, "block_size %" PRId64 " does not divide the height and width of input %s", b, TYS(in));
		return;
	}
	struct shape s = {4, {dimv(in, 0), dimv(in, 1) / b, dimv(in, 2) / b, sat_mul(dimv(in, 3), sat_mul(b, b))}};
	res_shape(v, n, 0, &s);
}

/* DepthToSpace(Input N x H x W x C) {block_size b, mode}: b*b divides C
 *   -> N x H*b x W*b x C/(b*b), Input's element type. */
void tr_depth_to_space(struct verifier *v, const struct node *n)
{
	const struct type *in = op_type(n, 0);
	want_elem(v, n, LITW("result"), node_type(n), LITW("input"), in);
	int64_t b = block_size(v, n);
	if (!op_rank(v, n, 0, 4, "N x H x W x C") || !b)
		return;
	int64_t bb = sat_mul(b, b);
	if (dimv(in, 3) % bb) {
		verr(v, n, "block_size %" PRId64 " squared does not divide the %" PRId64 " channels of input %s", b,
		     dimv(in, 3), TYS(in));
		return;
	}
	struct shape s = {4, {dimv(in, 0), sat_mul(dimv(in, 1), b), sat_mul(dimv(in, 2), b), dimv(in, 3) / bb}};
	res_shape(v, n, 0, &s);
}

/* ResizeNearest, ResizeBilinear(Input) {scale}: one positive finite scale per
 * dimension; result dim i = floor(Input dim i * scale[i]). Nearest copies
 * values (Input's element type), Bilinear interpolates (float or quantized,
 * Input's kind). */
void tr_resize(struct verifier *v, const struct node *n)
{
	const struct type *in = op_type(n, 0);
	if (n->kind == NK_ResizeNearest)
		want_elem(v, n, LITW("result"), node_type(n), LITW("input"), in);
	else if (op_class(v, n, 0, C_FQ))
		want_kind(v, n, LITW("result"), node_type(n), LITW("input"), in);
	unsigned cnt;
	const double *sc = node_floats(n, "scale", &cnt);
	if (cnt != in->rank) {
		verr(v, n, "scale has %u values but input %s has rank %u", cnt, TYS(in), in->rank);
		return;
	}
	struct shape s = {in->rank, {0}};
	for (unsigned i = 0; i < cnt; i++) {
		if (!(sc[i] > 0) || isinf(sc[i])) {
			verr(v, n, "scale[%u] must be positive and finite, got %g", i, sc[i]);
			return;
		}
		double d = floor((double)in->dims[i] * sc[i]);
		s.d[i] = d < 9.0e18 ? (int64_t)d : INT64_MAX;
	}
	res_shape(v, n, 0, &s);
}

/* Splat() {value} -> any type, every element = value; for integer and index
 * kinds value is an integer in the kind's range, for bool 0 or 1 (quantized
 * kinds take the real value, quantized with the result's parameters). */
void tr_splat(struct verifier *v, const struct node *n)
{
	const struct type *t = node_type(n);
	double x = node_float(n, "value");
	enum elem_kind k = (enum elem_kind)t->elem;
	if (k == EK_BOOL) {
		if (x != 0 && x != 1)
			verr(v, n, "value %g is not a bool (0 or 1) for result %s", x, TYS(t));
		return;
	}
	if (!elem_is_integer(k))
		return;
	bool wide = elem_size(k) == 8;
	double lo = wide ? -9223372036854775808.0 : -2147483648.0;
	double hi = wide ? 9223372036854775808.0 : 2147483648.0; /* exclusive */
	if (x != floor(x) || !(x >= lo && x < hi))
		verr(v, n, "value %g is not an integer representable in result %s", x, TYS(t));
}

/* Flip(Input) {axis in [0, rank)} -> Input's type, reversed along axis. */
void tr_flip(struct verifier *v, const struct node *n)
{
	res_same_type(v, n, 0, 0);
	axis_attr(v, n, "axis", 0);
}

/* ------------------------------------------------------------------ */
/* Selection                                                           */

/* ArgMax, ArgMin(Input numeric) {axis in [0, rank), keep_dims} -> an index
 * type of Input's shape with dim axis removed, or set to 1 when keep_dims. */
void tr_arg_reduce(struct verifier *v, const struct node *n)
{
	const struct type *in = op_type(n, 0);
	op_class(v, n, 0, C_NUM);
	res_class(v, n, 0, C_IDX);
	if (!axis_attr(v, n, "axis", 0))
		return;
	unsigned axis = (unsigned)node_int(n, "axis");
	struct shape s = shape_of(in);
	if (node_int(n, "keep_dims")) {
		s.d[axis] = 1;
	} else {
		memmove(s.d + axis, s.d + axis + 1, (in->rank - axis - 1u) * sizeof(int64_t));
		s.d[--s.rank] = 0;
	}
	res_shape(v, n, 0, &s);
}

/* TopK(Input ... x D, numeric) {k in [1, D]} -> Values ... x k (Input's element
 * type), Indices ... x k (an index type): the k largest along the last dim. */
void tr_topk(struct verifier *v, const struct node *n)
{
	const struct type *in = op_type(n, 0);
	if (op_class(v, n, 0, C_NUM))
		want_elem(v, n, LITW("values"), n->types[0], LITW("input"), in);
	res_class(v, n, 1, C_IDX);
	if (!int_attr_min(v, n, "k", 1))
		return;
	if (in->rank == 0) {
		verr(v, n, "input %s must have at least one dimension", TYS(in));
		return;
	}
	int64_t k = node_int(n, "k");
	struct shape s = shape_of(in);
	if (k > s.d[in->rank - 1u]) {
		verr(v, n, "k %" PRId64 " exceeds the last dimension of input %s", k, TYS(in));
		return;
	}
	s.d[in->rank - 1u] = k;
	res_shape(v, n, 0, &s);
	res_shape(v, n, 1, &s);
}

/* CumSum(Input numeric) {axis in [0, rank), exclusive, reverse} -> Input's
 * shape and kind. */
void tr_cumsum(struct verifier *v, const struct node *n)
{
	if (op_class(v, n, 0, C_NUM))
		res_same_shape_kind(v, n, 0, 0);
	axis_attr(v, n, "axis", 0);
}

/* ------------------------------------------------------------------ */
/* Conversion and quantization (elementwise: one shape)                */

/* ConvertTo(Input) -> Input's shape, any element kinds. */
void tr_convert(struct verifier *v, const struct node *n) { ew_shapes(v, n); }

/* Quantize(Input floating-point) -> quantized of Input's shape. */
void tr_quantize(struct verifier *v, const struct node *n)
{
	ew_shapes(v, n);
	op_class(v, n, 0, CF);
	res_class(v, n, 0, CQ);
}

/* Dequantize(Input quantized) -> floating-point of Input's shape. */
void tr_dequantize(struct verifier *v, const struct node *n)
{
	ew_shapes(v, n);
	op_class(v, n, 0, CQ);
	res_class(v, n, 0, CF);
}

/* RescaleQuantized(Input quantized) -> quantized of Input's shape (new
 * parameters and/or kind). */
void tr_rescale(struct verifier *v, const struct node *n)
{
	ew_shapes(v, n);
	op_class(v, n, 0, CQ);
	res_class(v, n, 0, CQ);
}

/* Operand i is a placeholder of type float<len> (len 0: any positive). */
static void profile_buffer(struct verifier *v, const struct node *n, unsigned i, uint64_t len)
{
	const struct type *t = op_type(n, i);
	if (!as_placeholder(n->ops[i].def)) {
		verr(v, n, "%s %s must be a placeholder, not a %s", OPN(n, i), DEFN(n, i),
		     node_kind_name(n->ops[i].def->kind));
		return;
	}
	if (t->elem != EK_FLOAT || t->rank != 1 || t->dims[0] == 0 || (len && t->dims[0] != len)) {
		if (len)
			verr(v, n, "%s must be float<%" PRIu64 ">, got %s", OPN(n, i), len, TYS(t));
		else
			verr(v, n, "%s must be a non-empty float vector, got %s", OPN(n, i), TYS(t));
	}
}

/* QuantizationProfile(Input floating-point, Histogram float<bins>,
 * ComputationInfo float<2> (min, max)): both buffers placeholders; the
 * profiled node name is not empty and profiled_output >= 0. */
void tr_quantization_profile(struct verifier *v, const struct node *n)
{
	op_class(v, n, 0, CF);
	profile_buffer(v, n, 1, 0);
	profile_buffer(v, n, 2, 2);
	const char *s = node_str(n, "profiled_node_name");
	if (!s || !*s)
		verr(v, n, "profiled_node_name must not be empty");
	int_attr_min(v, n, "profiled_output", 0);
}

/* ------------------------------------------------------------------ */
/* Training                                                            */

/* SGD(Gradient T, Weight T) -> UpdatedWeight T, T floating-point;
 * batch_size >= 1, l1_decay and l2_decay >= 0. */
void tr_sgd(struct verifier *v, const struct node *n)
{
	const struct type *g = op_type(n, 0), *w = op_type(n, 1);
	if (op_class(v, n, 1, CF)) {
		if (!type_same_shape(g, w) || !type_same_elem(g, w))
			verr(v, n, "gradient %s does not have the type of weight %s", TYS(g), TYS(w));
		res_same_type(v, n, 0, 1);
	}
	int_attr_min(v, n, "batch_size", 1);
	float_attr_nonneg(v, n, "l1_decay");
	float_attr_nonneg(v, n, "l2_decay");
}
