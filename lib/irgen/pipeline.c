/* pipeline.c - the IRGen stages as passes of the shared pass manager, so
 * glow-irgen has glow-opt's -print-after-all, -verify-each and -time-passes.
 *
 *   schedule  (schedule.c)  reorders the selected graph functions
 *   irgen     (irgen.c)     builds the instruction IR module
 *   default = schedule,irgen
 *
 * The IR the engine sees is a struct irgen_state; its print and verify
 * hooks show the graph module before irgen has run and the instruction IR
 * module after.
 */
#include "graph/forms.h"
#include "irgen/irgen.h"
#include "support/io.h"
#include "support/util.h"

#include <stdlib.h>
#include <string.h>

void irgen_state_init(struct irgen_state *s, struct module *gm, struct diag *d)
{
	memset(s, 0, sizeof(*s));
	s->gm = gm;
	s->diag = d;
	s->schedule = IRGEN_SCHED_MEMORY;
}

void irgen_state_free(struct irgen_state *s)
{
	ir_module_destroy(s->im);
	s->im = NULL;
	free(s->stats);
	s->stats = NULL;
	s->nstats = s->capstats = 0;
}

static bool selected(const struct irgen_state *s, const struct func *f)
{
	return !s->only_func || strcmp(s->only_func, f->name) == 0;
}

int irgen_check_selection(struct irgen_state *s)
{
	if (s->only_func && !module_find_func(s->gm, s->only_func)) {
		diag_error(s->diag, LOC_NONE, "no function @%s in the module", s->only_func);
		return -1;
	}
	return 0;
}

static bool run_schedule(void *ir, struct pm_ctx *ctx)
{
	struct irgen_state *s = ir;
	for (size_t i = 0; i < s->gm->nfuncs; i++) {
		struct func *f = s->gm->funcs[i];
		if (!selected(s, f))
			continue;
		enum irgen_schedule how = s->schedule;
		/* ANF's order is semantic: the recorded one, the list's, is kept
		 * (graph/forms.h) */
		if (module_form(s->gm) == FORM_ANF && !s->reorder_anf)
			how = IRGEN_SCHED_TOPO;
		struct irgen_sched_stats st = irgen_schedule_func(f, how);
		s->stats = xgrow(s->stats, &s->capstats, s->nstats + 1, sizeof(*s->stats));
		s->stats[s->nstats++] = st;
		pm_stat_add(ctx, "Number of nodes scheduled", st.nodes);
	}
	return true;
}

static bool run_irgen(void *ir, struct pm_ctx *ctx)
{
	struct irgen_state *s = ir;
	if (!s->im) {
		s->im = ir_module_create(s->gm->types);
		ir_module_set_base_dir(s->im, s->output_path);
	}
	for (size_t i = 0; i < s->gm->nfuncs; i++) {
		struct func *f = s->gm->funcs[i];
		if (!selected(s, f))
			continue;
		struct ir_func *irf = irgen_func(s->im, f, ctx->diag);
		if (!irf)
			return true;
		pm_stat_add(ctx, "Number of instructions generated", irf->ninstrs);
	}
	return true;
}

static const struct pm_pass passes[] = {
	{"schedule", "Order each function's nodes for low peak memory (or topologically)", 0, run_schedule},
	{"irgen", "Generate the instruction IR of each function", 0, run_irgen},
};

static const struct pm_pipeline pipelines[] = {
	{"default", 0, "schedule,irgen", "Schedule, then generate instructions"},
};

static int verify_state(void *ir, struct diag *d)
{
	struct irgen_state *s = ir;
	return s->im ? ir_module_verify(s->im, d) : module_verify(s->gm, d);
}

static void print_state(void *ir, struct ostream *o)
{
	struct irgen_state *s = ir;
	if (s->im)
		ir_module_print(o, s->im);
	else
		module_print(o, s->gm);
}

const struct pm_registry irgen_pass_registry = {
	passes, GLOW_ARRAY_SIZE(passes), pipelines, GLOW_ARRAY_SIZE(pipelines), NULL, 0, verify_state, print_state,
	NULL,   0,                       NULL,      0, /* no pass options or conditions */
};
