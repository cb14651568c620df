/* ocl_table.c - OclKernels.def as data: the rows indexed by instruction
 * kind and by node kind, the lookups the generator and the graph side
 * share, and the table's checks (docs/OpenCL.md).
 *
 * Build time: a row names an instruction kind (IK_kind) and its generator
 * and support test, which must exist; a kind listed twice is an
 * initializer given twice (-Woverride-init, an error); an OCL_NODE row
 * names an instruction kind that has a row. First use (ocl_row_of,
 * ocl_node_elems): ocl_table_check compares the rows with Instrs.def and
 * EW.def, which the compiler cannot, and stops with an internal error
 * naming the row.
 */
#include "backends/opencl/ocl.h"
#include "backends/opencl/ocl_gen_red.h"
#include "ir/ew.h"
#include "support/util.h"

#include <stdio.h>

/* ---- the rows ---- */

const struct ocl_row ocl_rows[IK_COUNT] = {
#define OCL(K, GEN, SUP, FLAGS, ARG, EL) [IK_##K] = {GEN, SUP, FLAGS, ARG, OCL_EL_##EL},
#define OCL_NODE(N, K, EL)
#include "backends/opencl/OclKernels.def"
#undef OCL
#undef OCL_NODE
};

const struct ocl_node_row ocl_node_rows[NK_COUNT] = {
#define OCL(K, GEN, SUP, FLAGS, ARG, EL)
#define OCL_NODE(N, K, EL) [NK_##N] = {IK_##K, OCL_EL_##EL},
#include "backends/opencl/OclKernels.def"
#undef OCL
#undef OCL_NODE
};

/* one enumerator per row, so that an OCL_NODE row naming a kind without
 * one does not compile */
enum {
#define OCL(K, GEN, SUP, FLAGS, ARG, EL) OCL_ROW_##K,
#define OCL_NODE(N, K, EL)
#include "backends/opencl/OclKernels.def"
#undef OCL
#undef OCL_NODE
	OCL_NROWS
};
#define OCL(K, GEN, SUP, FLAGS, ARG, EL)
#define OCL_NODE(N, K, EL) _Static_assert(OCL_ROW_##K < OCL_NROWS, "OclKernels.def: OCL_NODE(" #N ") needs a row of " #K);
#include "backends/opencl/OclKernels.def"
#undef OCL
#undef OCL_NODE

/* the row of every elementwise kind OpenCL C states */
static const struct ocl_row ew_row_all = {ocl_gen_ew, ocl_sup_ew, 0, 0, OCL_EL_EW};

/* ---- the check ---- */

/* One problem of row `name` into o. */
static unsigned problem(struct ostream *o, const char *name, const char *what)
{
	os_printf(o, "OclKernels.def row %s: %s\n", name, what);
	return 1;
}

/* The problems of instruction kind k's row r. */
static unsigned check_row(unsigned k, const struct ocl_row *r, struct ostream *o)
{
	const struct instr_desc *d = instr_desc(k);
	const char *name = instr_kind_name(k);
	unsigned n = 0;
	if (!r->gen || !r->supports)
		n += problem(o, name, r->gen ? "no support test" : "no generator");
	if (r->flags & (OCL_F_FUSE_RELU | OCL_F_RELU | OCL_F_FUSE_ADD) && (d->nops == 0 || d->op_quals[0] != IQ_OUT))
		n += problem(o, name, "a relu or add flag on a kind whose operand 0 is not @out");
	if ((r->flags & OCL_F_FUSE_RELU) && (r->flags & OCL_F_RELU))
		n += problem(o, name, "both OCL_F_FUSE_RELU and OCL_F_RELU");
	if ((r->flags & OCL_F_ZEROS) && d->nops < 3)
		n += problem(o, name, "OCL_F_ZEROS on a kind without operand 2 (the filter)");
	if (d->graph_kind < 0 && r->elems != OCL_EL_NONE)
		n += problem(o, name, "Elems for a kind whose Graph column in Instrs.def names no node");
	if (d->graph_kind >= 0 && r->elems == OCL_EL_NONE)
		n += problem(o, name, "Elems NONE for a kind whose Graph column in Instrs.def names a node");
	if (ocl_ew_kind_ok(k))
		n += problem(o, name, "a row for a kind that EW.def states (ocl_gen_ew compiles it)");
	return n;
}

unsigned ocl_table_check(const struct ocl_row *rows, const struct ocl_node_row *nodes, struct ostream *o)
{
	instr_desc_init();
	unsigned n = 0;
	/* the node kind each row's Graph column names: one Elems each */
	enum ocl_elems by_node[NK_COUNT] = {OCL_EL_NONE};
	for (unsigned k = 0; k < IK_COUNT; k++) {
		const struct ocl_row *r = &rows[k];
		if (!r->gen && !r->supports && !r->flags && !r->arg && r->elems == OCL_EL_NONE)
			continue; /* no row */
		n += check_row(k, r, o);
		int nk = instr_desc(k)->graph_kind;
		if (nk < 0 || r->elems == OCL_EL_NONE)
			continue;
		if (by_node[nk] != OCL_EL_NONE && by_node[nk] != r->elems)
			n += problem(o, instr_kind_name(k), "Elems differ from another row of the same graph node");
		by_node[nk] = r->elems;
	}
	for (unsigned nk = 0; nk < NK_COUNT; nk++) {
		const struct ocl_node_row *nr = &nodes[nk];
		if (nr->elems == OCL_EL_NONE)
			continue;
		char name[96];
		snprintf(name, sizeof name, "OCL_NODE(%s)", node_kind_name(nk));
		if (nr->kind >= IK_COUNT || !rows[nr->kind].gen)
			n += problem(o, name, "names an instruction kind without a row");
		if (by_node[nk] != OCL_EL_NONE)
			n += problem(o, name, "a node kind that a row's Graph column names already");
		if (nk == NK_Placeholder || nk == NK_Constant)
			n += problem(o, name, "a storage node kind");
	}
	return n;
}

/* ---- lookups ---- */

/* by node kind: the Elems of the rows, then of the elementwise kinds */
static enum ocl_elems node_elems[NK_COUNT];
static unsigned node_ew_kind[NK_COUNT]; /* OCL_EL_EW: the instruction kind */
static bool table_ready;

/* Checks the table (an internal error naming its first problem) and fills
 * node_elems, once. */
static void table_init(void)
{
	if (table_ready)
		return;
	struct ostream o;
	ostream_mem(&o);
	if (ocl_table_check(ocl_rows, ocl_node_rows, &o)) {
		static char msg[512];
		snprintf(msg, sizeof msg, "%s", ostream_cstr(&o));
		unreachable(msg);
	}
	ostream_abort(&o);
	for (unsigned nk = 0; nk < NK_COUNT; nk++)
		node_elems[nk] = ocl_node_rows[nk].elems;
	for (unsigned k = 0; k < IK_COUNT; k++) {
		int nk = instr_desc(k)->graph_kind;
		if (nk >= 0 && ocl_rows[k].elems != OCL_EL_NONE)
			node_elems[nk] = ocl_rows[k].elems;
	}
	/* an elementwise node kind: as its first instruction kind that
	 * OpenCL C states, where no row names the node */
	for (unsigned k = 0; k < IK_COUNT; k++) {
		int nk = instr_desc(k)->graph_kind;
		if (nk < 0 || node_elems[nk] != OCL_EL_NONE || !(instr_desc(k)->flags & IF_EW) || !ocl_ew_kind_ok(k))
			continue;
		node_elems[nk] = OCL_EL_EW;
		node_ew_kind[nk] = k;
	}
	table_ready = true;
}

const struct ocl_row *ocl_row_of(unsigned kind)
{
	table_init();
	if (kind >= IK_COUNT)
		return NULL;
	if (ocl_rows[kind].gen)
		return &ocl_rows[kind];
	return ocl_ew_kind_ok(kind) ? &ew_row_all : NULL;
}

enum ocl_elems ocl_node_elems(unsigned kind)
{
	table_init();
	return kind < NK_COUNT ? node_elems[kind] : OCL_EL_NONE;
}

unsigned ocl_node_ew_kind(unsigned nk)
{
	table_init();
	return nk < NK_COUNT && node_elems[nk] == OCL_EL_EW ? node_ew_kind[nk] : IK_COUNT;
}

bool ocl_gen_supports(const struct ir_instr *in)
{
	const struct ocl_row *r = ocl_row_of(in->kind);
	return r && r->supports(in);
}
