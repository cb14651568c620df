/* rules.c - type rules of the instruction IR.
 *
 * Most kinds obey the type rule of the graph node kind they come from
 * (Instrs.def, Graph column): ir_rule_graph presents the instruction to that
 * rule as a typed operation (graph/typerules_op.h) whose results are the
 * instruction's written operands and whose operands are its read operands,
 * so both IR levels check types with one rule. Its messages name operands
 * as the graph rule does ("input", "result", "filter"). The rules here
 * cover what only instructions have: views, copies, scratch buffers.
 */
#include "ir/rules.h"
#include "graph/typerules.h"
#include "support/io.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* "subject %name: message" through top_report, so instructions, weights and
 * graph nodes are reported alike; 640 bytes of message, as before. */
void ir_vreport(struct ir_verifier *v, struct loc loc, const char *subject, const char *name, const char *fmt,
		va_list ap)
{
	char msg[640];
	vsnprintf(msg, sizeof msg, fmt, ap);
	top_report(v->d, loc, subject, name, false, msg);
	v->errors++;
}

/* An error of the instruction: "kind %name: message". */
const char *ir_vname(const struct ir_value *val, char *buf, size_t size)
{
	struct ostream o;
	ostream_mem(&o);
	ir_print_local(&o, val->name ? val->name : "?");
	snprintf(buf, size, "%s", ostream_cstr(&o));
	ostream_abort(&o);
	return buf;
}

void ir_verr(struct ir_verifier *v, const struct ir_instr *in, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	ir_vreport(v, in->v.loc, instr_kind_name(in->kind), in->v.name, fmt, ap);
	va_end(ap);
}

void ir_rule_none(struct ir_verifier *v, const struct ir_instr *in)
{
	(void)v;
	(void)in;
}

/* The types of the graph rule's results: the instruction's operands that
 * Instrs.def maps to them, or index64 shaped like the first result where the
 * row has "_" (a result the instruction does not have). */
static void graph_results(struct ir_verifier *v, const struct ir_instr *in, const struct type **res)
{
	const struct instr_desc *d = instr_desc(in->kind);
	for (unsigned r = 0; r < d->graph_nres; r++) {
		int i = d->graph_res[r];
		if (i >= 0) {
			res[r] = ir_op_type(in, (unsigned)i);
		} else {
			const struct type *first = res[0];
			res[r] = type_get(v->f->mod->types, EK_INDEX64, first->dims, first->rank);
		}
	}
	/* maxpoolwithargmax also takes the legacy argmax layout: the result
	 * shape x 2, one (h, w) pair per maximum. The graph rule sees the
	 * flattened layout's shape. */
	if (in->kind == IK_maxpoolwithargmax) {
		const struct type *dst = ir_op_type(in, 0), *am = ir_op_type(in, 2);
		if (am->rank == dst->rank + 1u && am->dims[dst->rank] == 2 &&
		    memcmp(am->dims, dst->dims, dst->rank * sizeof(uint64_t)) == 0)
			res[1] = type_with_dims(v->f->mod->types, am, dst->dims, dst->rank);
	}
}

void ir_rule_graph(struct ir_verifier *v, const struct ir_instr *in)
{
	const struct instr_desc *d = instr_desc(in->kind);
	if (d->graph_kind < 0)
		return;
	const struct type *res[IR_MAX_OPS];
	struct typed_operand ops[IR_MAX_OPS];
	graph_results(v, in, res);
	/* an operand is a buffer: storage, which the rules know as a placeholder */
	for (unsigned j = 0; j < d->graph_nops; j++) {
		const struct ir_value *val = in->ops[d->graph_ops[j]].val;
		ops[j] = (struct typed_operand){val->type, val->name, NK_Placeholder};
	}
	struct typed_op op = {(unsigned)d->graph_kind, in->v.name, in->v.loc, d->graph_nops, d->graph_nres, ops, res,
			      in->attrs, v->d, 0};
	node_desc(op.kind)->rule(&op);
	v->errors += op.errors;
}

/* tensorview(Src) {offsets} : T -- offsets has one value per dimension of
 * Src, each in [0, dim]; the view starts at the element those offsets
 * address (row-major) and covers numel(T) consecutive elements, which must
 * lie inside Src; T has Src's element type. */
void ir_rule_tensorview(struct ir_verifier *v, const struct ir_instr *in)
{
	const struct type *src = ir_op_type(in, 0), *t = in->v.type;
	char a[160], b[160];
	if (!type_same_elem(t, src))
		ir_verr(v, in, "view %s does not have the element type of %s", type_str(t, a, sizeof a),
			type_str(src, b, sizeof b));
	unsigned n;
	const int64_t *off = ir_ints(in, AN_offsets, &n);
	if (n != src->rank) {
		ir_verr(v, in, "offsets has %u values but the viewed buffer %s has rank %u", n,
			type_str(src, a, sizeof a), src->rank);
		return;
	}
	uint64_t start = 0, stride = 1;
	for (unsigned i = src->rank; i-- > 0;) {
		if (off[i] < 0 || (uint64_t)off[i] > src->dims[i]) {
			ir_verr(v, in, "offsets[%u] = %" PRId64 " is outside dimension %u of %s", i, off[i], i,
				type_str(src, a, sizeof a));
			return;
		}
		start += (uint64_t)off[i] * stride;
		stride *= src->dims[i];
	}
	uint64_t total = type_numel(src), len = type_numel(t);
	if (start > total || len > total - start)
		ir_verr(v, in, "view %s at element %" PRIu64 " does not fit in %s (%" PRIu64 " elements)",
			type_str(t, a, sizeof a), start, type_str(src, b, sizeof b), total);
}

/* Reports unless operands i (called what_i) and j (what_j) have one type. */
static void same_type(struct ir_verifier *v, const struct ir_instr *in, unsigned i, const char *what_i, unsigned j,
		      const char *what_j)
{
	const struct type *x = ir_op_type(in, i), *y = ir_op_type(in, j);
	char a[160], b[160];
	if (x != y)
		ir_verr(v, in, "%s %s does not have the type of %s %s", what_i, type_str(x, a, sizeof a), what_j,
			type_str(y, b, sizeof b));
}

/* copy(Dest T, Src T) */
void ir_rule_copy(struct ir_verifier *v, const struct ir_instr *in) { same_type(v, in, 0, "destination", 1, "source"); }

/* sgdmomentum: Velocity has the type of Weight (issue 13, part A). */
void ir_rule_velocity(struct ir_verifier *v, const struct ir_instr *in) { same_type(v, in, 3, "velocity", 2, "weight"); }

/* topk: the scratch buffer holds one row of Src and an index64 per element
 * of that row: D * (element size + 8) bytes, D = the last dimension. */
void ir_rule_topk(struct ir_verifier *v, const struct ir_instr *in)
{
	const struct type *src = ir_op_type(in, 2), *s = ir_op_type(in, 3);
	if (src->rank == 0)
		return; /* the graph rule reported it */
	uint64_t row = src->dims[src->rank - 1u];
	uint64_t need = row * (elem_size((enum elem_kind)src->elem) + 8);
	char a[160];
	if (type_bytes(s) < need)
		ir_verr(v, in, "scratch %s has %" PRIu64 " bytes; %" PRIu64 " needed", type_str(s, a, sizeof a),
			type_bytes(s), need);
}

/* ---- blocks and slices at a run-time index (issue 18, part cfi) ---- */

/* Reports unless operand i is a scalar (rank 0) of element kind ek. */
static void scalar_of(struct ir_verifier *v, const struct ir_instr *in, unsigned i, enum elem_kind ek)
{
	const struct type *t = ir_op_type(in, i);
	char a[160];
	if (t->rank != 0 || t->elem != ek)
		ir_verr(v, in, "%s %s must be a scalar %s<>", instr_desc(in->kind)->op_names[i], type_str(t, a, sizeof a),
			elem_name(ek));
}

/* if(Cond bool<>) */
void ir_rule_if(struct ir_verifier *v, const struct ir_instr *in) { scalar_of(v, in, 0, EK_BOOL); }

/* loop(Trip i64<>, Cond bool<>, Iter i64<>) */
void ir_rule_loop(struct ir_verifier *v, const struct ir_instr *in)
{
	scalar_of(v, in, 0, EK_I64);
	scalar_of(v, in, 1, EK_BOOL);
	scalar_of(v, in, 2, EK_I64);
}

/* insertslice(Dest T<N x D...>, Src T<D...>, Index i64<>) and
 * extractslice(Dest T<D...>, Src T<N x D...>, Index i64<>): the slice has
 * the whole buffer's element type and its shape without the leading axis. */
void ir_rule_slice_at(struct ir_verifier *v, const struct ir_instr *in)
{
	unsigned whole = in->kind == IK_insertslice ? 0 : 1, part = 1 - whole;
	const struct type *w = ir_op_type(in, whole), *s = ir_op_type(in, part);
	char a[160], b[160];
	scalar_of(v, in, 2, EK_I64);
	if (w->rank == 0) {
		ir_verr(v, in, "%s %s has no leading axis to index", instr_desc(in->kind)->op_names[whole],
			type_str(w, a, sizeof a));
		return;
	}
	if (!type_same_elem(w, s) || s->rank + 1u != w->rank ||
	    memcmp(s->dims, w->dims + 1, s->rank * sizeof(uint64_t)) != 0)
		ir_verr(v, in, "%s %s is not a slice of %s %s along its leading axis",
			instr_desc(in->kind)->op_names[part], type_str(s, a, sizeof a),
			instr_desc(in->kind)->op_names[whole], type_str(w, b, sizeof b));
}
