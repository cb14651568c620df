/* forms.c - the passes to-anf, to-gnf and to-bbnf (docs/GraphIR.md, "Text
 * forms"; RAF's ToANormalForm, ToGraphNormalForm, ToBasicBlockNormalForm).
 *
 * The forms are spellings of one graph plus, for ANF, an evaluation order.
 * to-anf makes the canonical order of the forms (graph/forms.h:
 * forms_order) the function's list order, which is what ANF's bindings
 * show and what glow-irgen keeps for a module in ANF; on a module already
 * in ANF it keeps the order it has. to-gnf only records the form: GNF has
 * no order beyond that of side effects, which every list keeps. to-bbnf
 * goes through to-gnf, as RAF's does; with one block per function its
 * blocks are the function bodies.
 */
#include "graph/forms.h"
#include "passes/pass.h"

bool to_anf_run(struct module *m, struct pass_ctx *ctx)
{
	(void)ctx;
	return module_convert_form(m, FORM_ANF);
}

bool to_gnf_run(struct module *m, struct pass_ctx *ctx)
{
	(void)ctx;
	return module_convert_form(m, FORM_GNF);
}

/* RAF's ToBasicBlockNormalForm starts from GNF */
bool to_bbnf_run(struct module *m, struct pass_ctx *ctx)
{
	bool changed = to_gnf_run(m, ctx);
	return module_convert_form(m, FORM_BBNF) || changed;
}
