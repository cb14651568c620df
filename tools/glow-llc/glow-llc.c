/* glow-llc - the instruction IR tool: reads a .gir module, verifies it, runs
 * a pipeline of IR passes (the last of which, from -O1 on, records the
 * static memory plan) and prints the result.
 *
 *   glow-llc [options] [input.gir|-] [-o out.gir]
 *
 * The passes and pipelines come from lib/iropt (IRPasses.def, pipelines.c);
 * the engine from lib/support/passmgr.h; the allocator from
 * lib/iropt/memplan.h. -print-memory-plan reports each function's plan on
 * stderr (computing one for a function the pipeline left without). The
 * output is written whole or not at all. Exit status 0 on success, 1 after a
 * diagnostic.
 *
 * -backend=c (or -emit=c) writes a C bundle per function into the directory
 * -o names instead (a module with a training step @F_grad: one training
 * bundle of all its functions) (backends/c, docs/CBackend.md); -gemm=openblas makes its
 * matrix products call OpenBLAS's cblas_sgemm. With -backend=c, -O0..-O3
 * run the C backend's own pipelines (c-O0..c-O3, struct backend's
 * ir_pipelines), and -emit=ir prints the program after them instead of
 * writing the bundle. The directory is replaced as a whole: a failed
 * write leaves the old bundle as it was (cbackend_write_dir).
 *
 * -print-signature lists every function's inputs and outputs with their
 * types and exits; -time reports each stage's seconds on stderr.
 */
#define _POSIX_C_SOURCE 200809L
#include "backends/c/cbackend.h"
#include "backends/registry.h"
#include "iropt/iropt.h"
#include "iropt/memplan.h"
#include "support/cl.h"
#include "support/pmcli.h"
#include "support/io.h"
#include "tensor/stages.h"
#include "tensor/tensor.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

struct llc_options {
	const char *output;
	const char *passes;
	int olevel; /* -1: no -O given */
	int emit;   /* index in EMIT_KINDS; -1: none given (the backend's output) */
	bool disable_verify, print_plan, print_signature, time;
	struct pm_cli pm;
	int backend;             /* index in backend_names(0) */
	bool embed_weights, emit_main;
	int gemm;                /* CBACKEND_GEMM_* */
	int winograd;            /* CBACKEND_WINO_* */
	const char *bundle_name;
	struct cl_list input;
};

/* -emit= values */
#define EMIT_KINDS "ir|c"

/* Writes a C bundle of every function into directory dir, replacing it
 * as a whole (cbackend_write_dir); returns the exit status. */
static int emit_c(struct llc_options *o, struct ir_module *m, struct stages *st, struct diag *d)
{
	const char *dir = o->output;
	if (!strcmp(dir, "-")) {
		diag_error(d, LOC_NONE, "the C backend writes a directory: give -o DIR");
		return 1;
	}
	size_t step, eval;
	int training = cbackend_find_training(m->funcs, m->nfuncs, &step, &eval, d);
	if (training < 0)
		return 1;
	if (o->bundle_name && m->nfuncs != 1 && !training) {
		diag_error(d, LOC_NONE, "-bundle-name needs a module of one function or with a training step, got %zu "
					"functions", m->nfuncs);
		return 1;
	}
	double gen = 0;
	struct cbackend_options co = {o->bundle_name, o->embed_weights, o->emit_main, o->gemm, o->winograd, &gen, NULL};
	int rc = cbackend_write_dir(m->funcs, m->nfuncs, dir, &co, d);
	stages_add(st, "code generation", gen);
	stages_mark(st, "write");
	return rc ? 1 : 0;
}

/* Every function's inputs and outputs, to path ("-": stdout). */
static int print_signatures(struct ir_module *m, const char *path, struct diag *d)
{
	struct ostream out;
	if (ostream_open(&out, path, d))
		return 1;
	for (size_t i = 0; i < m->nfuncs; i++)
		tensor_print_signature(&out, m->funcs[i]);
	return ostream_commit(&out, d) ? 1 : 0;
}

/* The plan report of every function, to stderr. */
static void print_plans(struct ir_module *m)
{
	struct ostream o;
	ostream_mem(&o);
	for (size_t i = 0; i < m->nfuncs; i++) {
		struct ir_func *f = m->funcs[i];
		if (!f->plan.present)
			memplan_func(f, NULL);
		memplan_print(&o, f);
	}
	fputs(ostream_cstr(&o), stderr);
	ostream_abort(&o);
}

/* Reads, verifies, optimizes and writes the module; returns the exit status.
 * Dumps, traces and reports go to stderr. */
static int run(void *opts, struct diag *d)
{
	struct llc_options *o = opts;
	const char *in = o->input.n ? o->input.v[0] : "-";
	/* the backend whose -O pipelines run: -emit=c's, else -backend='s */
	const bool is_c = o->emit == 1 || strcmp(backend_name(0, o->backend), "c") == 0;
	/* the C bundle: -emit=c, or -backend=c unless -emit=ir */
	const bool bundle = o->emit == 1 || (o->emit < 0 && is_c);
	if ((o->gemm != CBACKEND_GEMM_BUILTIN || o->winograd != CBACKEND_WINO_AUTO) && !is_c) {
		diag_error(d, LOC_NONE, "-%s applies to the C backend only (give -backend=c)",
			   o->gemm != CBACKEND_GEMM_BUILTIN ? "gemm" : "winograd");
		return 1;
	}
	if (o->passes && o->olevel >= 0) {
		diag_error(d, LOC_NONE, "-O%d and -passes= cannot be combined (write -passes=O%d,...)", o->olevel,
			   o->olevel);
		return 1;
	}
	struct iropt_ctx ctx = {d, NULL};
	struct pm pm;
	pm_init(&pm, &ir_pass_registry, d, &ctx);
	int bad = 0;
	if (o->passes)
		bad |= pm_add_text_named(&pm, o->passes, "-passes");
	else if (o->olevel >= 0) { /* the backend's own pipeline, else the generic one */
		const struct backend *be = o->emit == 1 ? &cbackend_backend : backend_select(0, o->backend, NULL, d);
		if (!be) {
			pm_free(&pm);
			return 1;
		}
		char name[16];
		snprintf(name, sizeof name, "O%d", o->olevel);
		bad |= pm_add_text(&pm, be->ir_pipelines[o->olevel] ? be->ir_pipelines[o->olevel] : name);
	}
	if (pm_cli_setup(&pm, &o->pm, bad))
		return 1;

	/* a mapped input whose pages the reader lets go of behind it */
	struct input input;
	if (input_open(&input, in, d)) {
		pm_free(&pm);
		return 1;
	}
	struct type_ctx types;
	type_ctx_init(&types);
	const char *name = strcmp(in, "-") == 0 ? "<stdin>" : in;
	struct stages st;
	stages_init(&st, o->time);
	struct ir_module *m = ir_module_parse_input(&types, &input, name, d, !o->disable_verify);
	stages_mark(&st, "read");
	int status = 1;
	if (m && o->print_signature) {
		/* the program as given: no pass runs */
		status = print_signatures(m, o->output, d);
	} else if (m) {
		ir_module_set_base_dir(m, in);
		int prc = pm_run(&pm, m);
		stages_mark(&st, "passes");
		/* the memory plan is a pass; -time shows it as its own stage */
		const struct pm_pass *plan = pm_find_pass(&ir_pass_registry, "plan-memory", strlen("plan-memory"));
		if (plan && pm.seconds)
			stages_split(&st, "passes", "plan", pm.seconds[plan - ir_pass_registry.passes]);
		if (prc == 0) {
			if (o->print_plan)
				print_plans(m);
			if (!o->disable_verify && ir_module_verify(m, d))
				diag_error(d, LOC_NONE, "verifier failed after optimization");
			else if (bundle)
				status = emit_c(o, m, &st, d);
			else {
				struct ostream out;
				/* relative weight files as seen from the output */
				if (ostream_open(&out, o->output, d) == 0) {
					if (ir_module_rebase_files(m, o->output, d) == 0) {
						ir_module_print(&out, m);
						status = ostream_commit(&out, d) ? 1 : 0;
					} else
						ostream_abort(&out);
				}
				stages_mark(&st, "write");
			}
		}
	}
	pm_cli_report(&pm, &o->pm);
	stages_report(&st, "glow-llc");
	ir_module_destroy(m);
	type_ctx_free(&types);
	input_close(&input);
	pm_free(&pm);
	return status;
}

int main(int argc, char **argv)
{
	struct llc_options o = {0};
	o.output = "-";
	o.olevel = -1;
	o.emit = -1;
	const struct cl_opt opts[] = {
		CL_OUTPUT_OPT(&o.output),
		PM_CLI_PIPELINE_OPTS(&o.passes, &o.olevel, " (no optimization, no memory plan)",
				     " (cleanup, lifetimes, memory plan)", " (buffer sharing, memory plan)",
				     " (O2's passes to a fixed point, memory plan)"),
		{"emit", CL_ENUM, &o.emit, NULL,
		 "What to write: the optimized IR with its memory plan (the default; with -backend=c, after the C "
		 "backend's pipeline), or a C bundle (the default with -backend=c)", 0, EMIT_KINDS},
		{"backend", CL_ENUM, &o.backend, NULL, "Target: interpreter (write IR), c (its own -O pipelines; a C bundle to -o DIR unless -emit=ir) or opencl (its own -O pipelines with device copies; writes IR)", 0,
		 backend_names(0)},
		{"embed-weights", CL_FLAG, &o.embed_weights, NULL, "C bundle: constants as a C array, no weights file", 0,
		 NULL},
		{"emit-main", CL_FLAG, &o.emit_main, NULL, "C bundle: also write NAME_main.c, a driver", 0, NULL},
		{"gemm", CL_ENUM, &o.gemm, NULL,
		 "C bundle: matrix products by its own kernels (builtin, the default) or OpenBLAS's cblas_sgemm "
		 "(openblas: link the bundle with -lopenblas)", 0, CBACKEND_GEMM_NAMES},
		{"winograd", CL_ENUM, &o.winograd, NULL,
		 "C bundle: 3x3 stride-1 convolutions as Winograd F(m x m, 3 x 3) where it is expected to win (auto), "
		 "never (off), or wherever eligible with m = 2 (f2) or m = 4 (f4)", 0, CBACKEND_WINO_NAMES},
		{"bundle-name", CL_STRING, &o.bundle_name, "name", "C bundle: the file and symbol prefix", 0, NULL},
		{"print-memory-plan", CL_FLAG, &o.print_plan, NULL,
		 "Report each buffer's region, offset and size, the arena and its lower bound (stderr)", 0, NULL},
		{"print-signature", CL_FLAG, &o.print_signature, NULL,
		 "List every function's inputs and outputs with their types (to -o, default stdout), then exit", 0, NULL},
		{"time", CL_FLAG, &o.time, NULL,
		 "Report the seconds of each stage (read, passes, code generation, write) on stderr", 0, NULL},
		PM_CLI_VERIFY_OPT(&o.pm),
		{"disable-verify", CL_FLAG, &o.disable_verify, NULL, "Do not verify the input and the output", 0,
		 NULL},
		PM_CLI_OPTS(&o.pm, "module"),
	};
	const struct cl_tool tool =
		CL_TOOL1("glow-llc", "glow instruction IR compiler", "[options] [input.gir|-]", opts, &o.input);
	return pm_cli_main(&tool, argc, argv, &o.pm, &ir_pass_registry, run, &o);
}
