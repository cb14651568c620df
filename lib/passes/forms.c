/* forms.c - the passes to-anf, to-gnf and to-bbnf (docs/GraphIR.md, "Text
 * forms"; RAF's ToANormalForm, ToGraphNormalForm, ToBasicBlockNormalForm).
 *
 * The forms are spellings of one graph plus, for ANF, an evaluation order.
 * to-anf makes the canonical order of the forms (graph/forms.h:
 * forms_order) the function's list order, which is what ANF's bindings
 * show and what glow-irgen keeps for a module in ANF. to-gnf only records
 * the form: GNF has no order beyond that of side effects, which every list
 * keeps. to-bbnf goes through to-gnf, as RAF's does; with one block per
 * function its blocks are the function bodies.
 */
#include "graph/forms.h"
#include "passes/pass.h"

static bool set_form(struct module *m, enum graph_form form)
{
	if (module_form(m) == form)
		return false;
	module_set_form(m, form);
	return true;
}

bool to_anf_run(struct module *m, struct pass_ctx *ctx)
{
	(void)ctx;
	bool changed = false;
	for (size_t i = 0; i < m->nfuncs; i++)
		changed |= forms_apply_order(m->funcs[i]);
	return set_form(m, FORM_ANF) || changed;
}

bool to_gnf_run(struct module *m, struct pass_ctx *ctx)
{
	(void)ctx;
	return set_form(m, FORM_GNF);
}

bool to_bbnf_run(struct module *m, struct pass_ctx *ctx)
{
	bool changed = to_gnf_run(m, ctx);
	return set_form(m, FORM_BBNF) || changed;
}
