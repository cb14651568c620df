/* glow-opt - the graph optimizer: reads a .glow module, verifies it, runs a
 * pipeline of graph passes and prints the result.
 *
 *   glow-opt [options] [input.glow|-] [-o out.glow]
 *
 * The passes and pipelines come from lib/passes (Passes.def, pipelines.c);
 * the engine from lib/support/passmgr.h. The output is written whole or not
 * at all. Exit status 0 on success, 1 after a diagnostic.
 */
#include "backends/registry.h"
#include "graph/forms.h"
#include "graph/toolrun.h"
#include "passes/pass.h"
#include "passes/passcli.h"
#include "passes/quantcli.h"
#include "passes/target.h"
#include "support/cl.h"
#include "support/pmcli.h"
#include "support/io.h"

#include <stdlib.h>
#include <string.h>

struct opt_options {
	const char *output;
	const char *passes;
	int olevel; /* -1: no -O given */
	int mode;   /* enum pass_mode */
	int backend;
	bool disable_verify;
	bool time; /* -time: the seconds of each stage */
	struct pm_cli pm;
	struct cl_list unsupported;
	bool fp16, bf16;        /* append the fp16 / bf16 pipeline */
	const char *keep_float; /* kinds they leave in float */
	struct cl_list input;
	/* the training configuration of the differentiate pass */
	const char *learning_rate, *momentum, *weight_decay;
	unsigned batch_size;
	struct quant_cli quant; /* -precision=, -profile=, -quant-* */
	int print_form; /* -1: the form the module records; else enum graph_form - 1 */
};

/* What print_module writes: the module into output, in print_form (-1: the
 * form it records). */
struct print_args {
	struct module *m;
	const char *output;
	int print_form;
};

/* graph_tool_write's printer: the module, its relative weight files as
 * seen from the output; nonzero after reporting one that cannot be found. */
static int print_module(struct ostream *out, void *arg, struct diag *d)
{
	struct print_args *a = arg;
	if (module_rebase_files(a->m, a->output, d))
		return 1;
	if (a->print_form >= 0)
		module_convert_form(a->m, (enum graph_form)(a->print_form + 1));
	module_print(out, a->m);
	return 0;
}

/* Reads, verifies, optimizes and writes the module; returns the exit status.
 * Dumps, traces and reports go to stderr. */
static int run(void *opts, struct diag *d)
{
	struct opt_options *o = opts;
	const char *in = o->input.n ? o->input.v[0] : "-";
	if (pass_cli_check_pipeline(o->passes, o->olevel, o->fp16, o->bf16, d))
		return 1;
	struct pass_ctx ctx = {d, (enum pass_mode)o->mode, o->backend >= 0 ? backend_name(0, o->backend) : NULL, NULL,
			       NULL, o->keep_float, NULL, NULL};
	struct train_config train = train_config_default;
	if (pass_cli_real("learning-rate", o->learning_rate, 0, 1e30, true, &train.learning_rate, d) ||
	    pass_cli_real("momentum", o->momentum, 0, 1, false, &train.momentum, d) ||
	    pass_cli_real("weight-decay", o->weight_decay, 0, 1e30, false, &train.weight_decay, d))
		return 1;
	if (o->batch_size == 0) {
		diag_error(d, LOC_NONE, "-batch-size: must be at least 1");
		return 1;
	}
	train.batch_size = o->batch_size;
	ctx.train = &train;
	if (quant_cli_check(&o->quant, d))
		return 1;
	ctx.quant = &o->quant.opts;
	bool unsupported[NK_COUNT] = {false};
	struct pass_target target = {NULL, "interpreter", NULL, false};
	/* the pass context keeps the backend's name and struct: the lower
	 * stage, the post-lowering hook and check-supported ask it */
	if (ctx.backend) {
		target.name = ctx.backend;
		if (!(target.backend = backend_select(0, o->backend, "glow-opt", d)))
			return 1;
	}
	/* both lists are checked before any work (the fp16 pass checks
	 * -keep-float again when it runs, without the suggestion) */
	int bad_kinds = pass_cli_kinds("backend-unsupported", &o->unsupported, unsupported, d);
	if (o->keep_float)
		bad_kinds |= pass_cli_kind_list("keep-float", o->keep_float, NULL, d);
	if (bad_kinds)
		return 1;
	if (o->unsupported.n)
		target.unsupported = unsupported;
	/* a precision step after the pipeline sees generic kinds only */
	target.no_backend_nodes = quant_cli_pipeline(&o->quant) || o->fp16 || o->bf16;
	ctx.target = &target;
	struct pm pm;
	pm_init(&pm, &graph_pass_registry, d, &ctx);
	if (ctx.mode == PASS_MODE_TRAIN)
		pm.skip_flags |= PASS_INFER_ONLY;
	int bad = pass_cli_pipeline_precision(&pm, o->passes, o->olevel, o->fp16, o->bf16,
					      quant_cli_pipeline(&o->quant));
	if (pm_cli_setup(&pm, &o->pm, bad))
		return 1;
	if (quant_cli_check_pipeline(&o->quant, &pm, d)) {
		pm_free(&pm);
		return 1;
	}

	struct graph_tool_run r;
	if (graph_tool_read(&r, in, o->time, !o->disable_verify, d)) {
		pm_free(&pm);
		return 1;
	}
	struct module *m = r.m;
	struct print_args pr = {m, o->output, o->print_form};
	int status = 1;
	if (m) {
		int prc = pm_run(&pm, m);
		stage_timer_mark(&r.st, "passes");
		if (prc == 0) {
			/* the input was verified as it was read: again only if a pass ran */
			bool ran = false;
			for (size_t i = 0; i < pm.reg->npasses; i++)
				ran |= pm.runs[i] != 0;
			bool invalid = !o->disable_verify && ran && module_verify(m, d);
			status = graph_tool_write(&r, invalid, "optimization", o->output, print_module, &pr, d);
		}
	}
	return graph_tool_finish(&r, &pm, &o->pm, status);
}

int main(int argc, char **argv)
{
	struct opt_options o = {0};
	o.output = "-";
	o.olevel = -1;
	o.backend = -1;
	o.batch_size = 1;
	quant_cli_init(&o.quant);
	o.print_form = -1;
	const struct cl_opt opts[] = {
		CL_OUTPUT_OPT(&o.output),
		PM_CLI_PIPELINE_OPTS(&o.passes, &o.olevel, " (no optimization)", "", "", ""),
		{"mode", CL_ENUM, &o.mode, NULL, "Compile for inference or training (infer-only passes skipped)", 0,
		 "infer|train"},
		{"backend", CL_ENUM, &o.backend, NULL, "Target backend the passes may tailor the graph to", 0,
		 backend_names(0)},
		{"backend-unsupported", CL_LIST, &o.unsupported, "Kind,...",
		 "Treat these node kinds as unsupported by the backend (the lower stage lowers them, "
		 "check-supported reports the rest)", 0, NULL},
		{"convert-to-fp16", CL_FLAG, &o.fp16, NULL,
		 "After the pipeline, convert float computations to float16 (the fp16 pipeline)", 0, NULL},
		{"convert-to-bf16", CL_FLAG, &o.bf16, NULL,
		 "After the pipeline, convert float computations to bfloat16 (the bf16 pipeline)", 0, NULL},
		{"keep-float", CL_STRING, &o.keep_float, "Kind,...",
		 "Node kinds -convert-to-fp16/-convert-to-bf16 and quantize leave in float (default of "
		 "quantize{keep-float=})", 0, NULL},
		{"learning-rate", CL_STRING, &o.learning_rate, "x",
		 "differentiate: the SGD learning rate (default 0.01)", 0, NULL},
		{"momentum", CL_STRING, &o.momentum, "x",
		 "differentiate: the SGD momentum in [0, 1) (default 0: no velocity placeholder)", 0, NULL},
		{"weight-decay", CL_STRING, &o.weight_decay, "x", "differentiate: the L2 weight decay (default 0)", 0,
		 NULL},
		{"batch-size", CL_UINT, &o.batch_size, "n",
		 "differentiate: gradients are divided by it, the mean over a batch of n (default 1)", 0, NULL},
		QUANT_CLI_OPTS(&o.quant),
		{"print-form", CL_ENUM, &o.print_form, NULL,
		 "Print in this text form, recorded as the module's form (default: the form it records, else every "
		 "value named)", 0, "anf|gnf|bbnf"},
		PM_CLI_VERIFY_OPT(&o.pm),
		{"disable-verify", CL_FLAG, &o.disable_verify, NULL, "Do not verify the input and the output", 0,
		 NULL},
		PM_CLI_OPTS(&o.pm, "module"),
		PM_CLI_TIME_OPT(&o.time),
	};
	const struct cl_tool tool =
		CL_TOOL1("glow-opt", "glow graph optimizer", "[options] [input.glow|-]", opts, &o.input);
	return pm_cli_main(&tool, argc, argv, &o.pm, &graph_pass_registry, run, &o);
}
