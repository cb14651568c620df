/* typerules_control.c - the type rules of the control-flow kinds (issue
 * 18; docs/GraphIR.md, "Control flow"). A rule sees the operation only
 * (typerules_op.h), not its regions: what involves the regions (yields,
 * parameters, scan shapes) is the verifier's (verify.c: verify_regions). */
#include "graph/typerules.h"
#include "graph/typerules_check.h"

/* Operand i is a scalar of element kind ek (rank 0). */
static bool want_scalar(struct typed_op *op, unsigned i, enum elem_kind ek)
{
	const struct type *t = top_optype(op, i);
	char n[64];
	if (t->elem == ek && t->rank == 0)
		return true;
	top_err(op, "%s must be %s<>, got %s", trc_op_name(op, i, n), elem_name(ek), TYS(t));
	return false;
}

/* If(Cond bool<>) -> its branches' yields (verify_regions). */
void tr_if(struct typed_op *op) { want_scalar(op, 0, EK_BOOL); }

/* Loop(Trip i64<>, Cond bool<>, Init*) -> the carried values (the inits'
 * types), then the scan outputs (verify_regions). */
void tr_loop(struct typed_op *op)
{
	want_scalar(op, 0, EK_I64);
	want_scalar(op, 1, EK_BOOL);
	unsigned nc = op->nops - 2;
	if (op->nres < nc) {
		top_err(op, "has %u carried value%s but %u result%s", nc, nc == 1 ? "" : "s", op->nres,
			op->nres == 1 ? "" : "s");
		return;
	}
	for (unsigned k = 0; k < nc; k++)
		if (op->res[k] != top_optype(op, 2 + k)) {
			char n[64];
			top_err(op, "result %u is %s but %s is %s", k, TYS(op->res[k]), trc_op_name(op, 2 + k, n),
				TYS(top_optype(op, 2 + k)));
		}
}

/* RegionArg: a region's parameter, typed by its result alone. */
void tr_region_arg(struct typed_op *op) { (void)op; }

/* Yield(Values...): the region's results, checked against the owner. */
void tr_yield(struct typed_op *op) { (void)op; }

/* Fn: a function literal; its results are its body's yields (verify.c). */
void tr_fn(struct typed_op *op) { (void)op; }

/* Call(Callee, Args*): checked against the callee's body (verify.c). */
void tr_call(struct typed_op *op) { (void)op; }
