/* cgen_emit.c - what is derived from the C backend's table of emitters
 * (Emitters.def, whose rows are data in cgen_rows.c): the dispatch
 * cg_emit_instr (an index into the table), the start-up check that every instruction kind has semantics
 * here or in lib/ir/EW.def, and which graph node kinds the backend
 * compiles (cg_compiles_node_kind, behind its is_op_supported).
 */
#include "backends/c/cgen.h"
#include "backends/c/cgen_ops.h"
#include "ir/ew.h"
#include "support/util.h"

#include <stdio.h>

/* Whether an operand of in is quantized: its QEMIT row applies. */
static bool quantized_instr(const struct ir_instr *in)
{
	for (unsigned i = 0; i < in->nops; i++)
		if (elem_is_quantized((enum elem_kind)in->ops[i].val->type->elem))
			return true;
	return false;
}

/* The emitter of the kinds without a row: the elementwise ones (EW.def),
 * as a loop fused with the elementwise instructions after it. */
static void emit_elementwise(struct cg *g, struct ir_instr *in)
{
	if (cg_ew_supported(in)) {
		cg_emit_ew(g, in);
		return;
	}
	cg_unsupported(g, in, "kind or element kinds not supported");
}

void cg_emit_instr(struct cg *g, struct ir_instr *in)
{
	const struct cg_emit_row *rows = cg_emit_rows(false), *qrows = cg_emit_rows(true);
	const struct cg_emit_row *r = &rows[in->kind];
	if (qrows[in->kind].fn && quantized_instr(in))
		r = &qrows[in->kind];
	if (r->fn)
		r->fn(g, in, r);
	else
		emit_elementwise(g, in);
}

void cg_emit_check(void)
{
	static bool checked;
	if (checked)
		return;
	instr_desc_init(); /* ew_row reads the kinds' flags */
	const struct cg_emit_row *rows = cg_emit_rows(false);
	for (unsigned k = 0; k < IK_COUNT; k++) {
		const struct ew_row *ew = ew_row(k);
		const char *bug = NULL;
		if (!rows[k].fn && !ew)
			bug = "has no C emitter: give it a row in backends/c/Emitters.def";
		else if (rows[k].fn && ew && ew->family == EW_FAMILY_TABLE)
			bug = "has both an Emitters.def row and an EW.def expression";
		if (bug) {
			static char msg[160];
			snprintf(msg, sizeof msg, "instruction kind %s %s", instr_kind_name(k), bug);
			unreachable(msg);
		}
	}
	checked = true;
}

/* ---- which graph node kinds are compiled ---- */

/* The node kinds IRGen builds by hand (Instrs.def's head comment) and the
 * instruction each becomes, where no instruction names the kind in its
 * Graph column: a Save is a copy, a Reshape a view, a Concat inserts. */
static const struct {
	unsigned node, instr;
} by_hand[] = {
	{NK_Save, IK_copy},
	{NK_Reshape, IK_tensorview},
	{NK_Concat, IK_inserttensor},
	/* control flow (issue 18): blocks, a region's parameter is the
	 * owner's buffer, its Yield copies (lib/irgen/irgen_flow.c) */
	{NK_If, IK_if},
	{NK_Loop, IK_loop},
	{NK_RegionArg, IK_alloc},
	{NK_Yield, IK_copy},
};

/* Whether instruction kind k compiles, with quantized elements when q,
 * with float16 or bfloat16 ones when h. */
static bool instr_compiled(unsigned k, bool q, bool h)
{
	const struct cg_emit_row *rows = cg_emit_rows(false), *qrows = cg_emit_rows(true);
	const struct ew_row *ew = ew_row(k);
	if (q && qrows[k].fn && !h)
		return true;
	if (rows[k].fn)
		return rows[k].fn != cg_emit_none && (!q || (rows[k].flags & CG_STORED)) &&
		       (!h || (rows[k].flags & (CG_STORED | CG_HALF)));
	/* elementwise: any float kind; the conversions take quantized elements */
	return ew && (!q || ew->family == EW_FAMILY_convert);
}

bool cg_compiles_node_kind(unsigned nk, bool quantized, bool half)
{
	cg_emit_check();
	if (nk >= NK_COUNT)
		return false;
	for (size_t i = 0; i < GLOW_ARRAY_SIZE(by_hand); i++)
		if (by_hand[i].node == nk)
			return instr_compiled(by_hand[i].instr, quantized, half);
	/* every instruction that stands for the kind (MaxPool: maxpool and
	 * maxpoolwithargmax) compiles; a kind none stands for does not reach
	 * code generation (the storage kinds, the ones lowered before IRGen) */
	bool any = false;
	for (unsigned k = 0; k < IK_COUNT; k++) {
		if (instr_desc(k)->graph_kind != (int)nk)
			continue;
		if (!instr_compiled(k, quantized, half))
			return false;
		any = true;
	}
	return any;
}
