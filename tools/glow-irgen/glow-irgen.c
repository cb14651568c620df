/* glow-irgen - from the graph IR to the instruction IR: reads a .glow module,
 * schedules each function and generates its instructions.
 *
 *   glow-irgen [options] [input.glow|-] [-o out.gir]
 *
 * The stages are passes of lib/irgen (schedule, irgen) run by the shared
 * pass manager, so -print-after-all, -verify-each and -time-passes work as
 * in glow-opt. The output is verified and written whole or not at all.
 * Exit status 0 on success, 1 after a diagnostic.
 */
#include "graph/toolrun.h"
#include "irgen/irgen.h"
#include "support/cl.h"
#include "support/pmcli.h"
#include "support/io.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

struct irgen_options {
	const char *output;
	int schedule; /* enum irgen_schedule */
	const char *func;
	bool schedule_stats;
	bool reorder_anf;
	bool time; /* -time: the seconds of each stage */
	struct pm_cli pm;
	struct cl_list input;
};

static void print_schedule_stats(const struct irgen_state *s, FILE *out)
{
	for (size_t i = 0; i < s->nstats; i++) {
		const struct irgen_sched_stats *st = &s->stats[i];
		fprintf(out, "schedule @%s: %" PRIu64 " nodes, peak live bytes: topo %" PRIu64 ", %s %" PRIu64
			" (%s order)\n",
			st->func, st->nodes, st->topo_peak, s->schedule == IRGEN_SCHED_TOPO ? "topo" : "memory",
			st->chosen_peak, irgen_order_name(st->chosen));
	}
}

/* graph_tool_write's printer: the generated IR module arg. */
static int print_ir(struct ostream *out, void *arg, struct diag *d)
{
	(void)d;
	ir_module_print(out, arg);
	return 0;
}

/* Reads, schedules, generates, verifies and writes; returns the exit status. */
static int run(void *opts, struct diag *d)
{
	struct irgen_options *o = opts;
	const char *in = o->input.n ? o->input.v[0] : "-";
	struct pm pm;
	pm_init(&pm, &irgen_pass_registry, d, NULL);
	int bad = pm_add_text(&pm, "default");
	if (pm_cli_setup(&pm, &o->pm, bad))
		return 1;
	struct graph_tool_run r;
	if (graph_tool_read(&r, in, o->time, true, d)) {
		pm_free(&pm);
		return 1;
	}
	struct module *m = r.m;
	int status = 1;
	struct irgen_state s;
	irgen_state_init(&s, m, d);
	s.schedule = (enum irgen_schedule)o->schedule;
	s.reorder_anf = o->reorder_anf;
	s.output_path = o->output;
	if (o->func)
		s.only_func = o->func[0] == '@' ? o->func + 1 : o->func;
	if (m && irgen_check_selection(&s) == 0) {
		int prc = pm_run(&pm, &s);
		stage_timer_mark(&r.st, "passes");
		if (prc == 0 && s.im) {
			bool invalid = ir_module_verify(s.im, d) != 0;
			status = graph_tool_write(&r, invalid, "IRGen", o->output, print_ir, s.im, d);
		}
	}
	if (o->schedule_stats)
		print_schedule_stats(&s, stderr);
	/* the IR module goes before the graph module it was generated from */
	irgen_state_free(&s);
	return graph_tool_finish(&r, &pm, &o->pm, status);
}

int main(int argc, char **argv)
{
	struct irgen_options o = {0};
	o.output = "-";
	const struct cl_opt opts[] = {
		CL_OUTPUT_OPT(&o.output),
		{"schedule", CL_ENUM, &o.schedule, NULL,
		 "Node order: low peak memory (default) or the topological order of the input", 0, "memory|topo"},
		{"reorder-anf", CL_FLAG, &o.reorder_anf, NULL,
		 "Schedule a module in ANF like any other, not in its recorded evaluation order", 0, NULL},
		{"func", CL_STRING, &o.func, "@name", "Generate only this function (default: every function)", 0,
		 NULL},
		{"print-schedule-stats", CL_FLAG, &o.schedule_stats, NULL,
		 "Report the peak live activation bytes of the topological and the chosen order", 0, NULL},
		PM_CLI_VERIFY_OPT(&o.pm),
		PM_CLI_OPTS(&o.pm, "IR"),
		PM_CLI_TIME_OPT(&o.time),
	};
	const struct cl_tool tool =
		CL_TOOL1("glow-irgen", "glow instruction IR generator", "[options] [input.glow|-]", opts, &o.input);
	return pm_cli_main(&tool, argc, argv, &o.pm, &irgen_pass_registry, run, &o);
}
