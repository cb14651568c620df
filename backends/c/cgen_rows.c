/* cgen_rows.c - the rows of Emitters.def as data, at the bottom of the C
 * backend's files: the table indexed by instruction kind and its quantized
 * forms (cg_emit_rows), what a row without code does (cg_emit_nothing,
 * cg_emit_none) and the error every emitter reports (cg_unsupported).
 * The helpers (cgen_util.c) ask it which kinds emit nothing and the
 * dispatch (cgen_emit.c) which emitter a kind has, so it calls neither.
 */
#include "backends/c/cgen.h"
#include "backends/c/cgen_ops.h"
#include "backends/c/cgen_quant.h"

/* indexed by instruction kind; a row given twice is an initializer
 * overridden, which -Werror (-Woverride-init of -Wextra) does not let
 * compile */
static const struct cg_emit_row rows[IK_COUNT] = {
#define EMIT(kind, emitter, param, flags) [IK_##kind] = {emitter, param, flags, NULL},
#define NO_EMIT(kind, why) [IK_##kind] = {cg_emit_none, 0, 0, why},
#include "backends/c/Emitters.def"
};

/* the quantized forms (QEMIT rows), indexed likewise */
static const struct cg_emit_row qrows[IK_COUNT] = {
#define QEMIT(kind, emitter, param) [IK_##kind] = {emitter, param, 0, NULL},
#include "backends/c/Emitters.def"
};

const struct cg_emit_row *cg_emit_rows(bool quantized)
{
	return quantized ? qrows : rows;
}

bool cg_emits_nothing(unsigned k)
{
	return rows[k].fn == cg_emit_nothing;
}

/* The emitter of NO_EMIT rows: the row's reason. */
void cg_emit_none(struct cg *g, struct ir_instr *in, const struct cg_emit_row *row)
{
	cg_unsupported(g, in, row->why);
}

/* The kinds that run nothing: buffers and views are the plan's. */
void cg_emit_nothing(struct cg *g, struct ir_instr *in, const struct cg_emit_row *row)
{
	(void)g;
	(void)in;
	(void)row;
}

void cg_unsupported(struct cg *g, const struct ir_instr *in, const char *why)
{
	diag_error(g->d, in->v.loc, "the C backend cannot compile %s%s%s: %s", instr_kind_name(in->kind),
		   in->v.name ? " %" : "", in->v.name ? in->v.name : "", why);
	g->errors++;
}
