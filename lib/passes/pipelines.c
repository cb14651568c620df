/* pipelines.c - the graph pass registry and the named pipelines.
 *
 * The pipelines below are the whole optimization story of glow-opt, readable
 * in one place. Each is a comma-separated list of pass names (Passes.def)
 * and other pipeline names; PASS_FIXED_POINT on a pipeline repeats it until
 * no pass in it changes anything.
 *
 * The registry rows are generated from Passes.def. Each pass gets a small
 * adapter of the engine's type (void *ir = struct module *) that sets up the
 * pass context and, for function passes, runs the pass on every function.
 */
#include "passes/pass.h"
#include "passes/regions.h"
#include "support/io.h"

/*   name  flags             contents       description */
static const struct pm_pipeline pipelines[] = {
	{"O0", 0,                "control-flow", "No optimization (control flow the backend does not execute is still unrolled or selected)"},
	/* control flow (issue 18): Ifs with a known condition fold; Ifs and Loops
	 * the backend does not execute become Selects and unrolled bodies (O2
	 * unrolls first and selects after optimize, whose constant folding
	 * makes the conditions of unrolled bodies constant for fold-if) */
	{"control-flow", 0,
	 "inline,fold-if,loop-unroll{unsupported-only=true},if-to-select{unsupported-only=true}",
	 "Control flow: inline Calls, fold known Ifs; unroll Loops and select Ifs the backend does not execute"},
	{"O1", 0,                "control-flow,dce,cse,dce", "Cleanup: dead code and common subexpressions"},
	{"simplify", PASS_FIXED_POINT,
	 "eliminate-noop,optimize-splat,optimize-arithmetic,dce",
	 "Local simplification until nothing changes: no-ops, splats, algebraic identities"},
	{"layout", PASS_FIXED_POINT,
	 "sink-transposes,transpose-constants,fold-shape-chains,eliminate-noop,dce",
	 "Layout: sink and cancel Transposes, fold weight Transposes, fold shape chains"},
	{"fold", 0,
	 "fold-tile-add,fold-fc,fold-softmax,fold-clip,fold-leaky-relu,fold-layernorm,dce",
	 "Raise lowered patterns back to high-level nodes"},
	{"optimize", 0,
	 "dce,eliminate-dropout,simplify,layout,constant-fold,"
	 "merge-pad,reduce-mean-to-avgpool,eliminate-concat-slice,"
	 "fold-batchnorm,lower-batchnorm,layout,fold-conv-affine,shuffle-depthwise,simplify,"
	 "cse,dce",
	 "The graph optimizations"},
	{"cleanup", 0,           "simplify,constant-fold,cse,dce",
	 "Simplification, constant folding and cleanup after lowering and after the backend's hook"},
	/* Glow's flow: fold, optimize, lower (per the backend), optimize,
	 * the backend's post-lowering hook, optimize, check support. */
	{"O2", 0,
	 "inline,fold-if,loop-unroll{unsupported-only=true},fold,optimize,control-flow,lower,cleanup,post-lowering,"
	 "cleanup,"
	 "check-supported",
	 "Default optimization"},
	{"O3", PASS_FIXED_POINT, "O2",          "Aggressive optimization: O2 until nothing changes"},
	/* glow-opt -convert-to-fp16 / -convert-to-bf16 append these */
	{"fp16", 0, "convert-to-fp16,optimize-conversions,dce", "Float computations in float16, then cancel conversions"},
	{"bf16", 0, "convert-to-bf16,optimize-conversions,dce", "Float computations in bfloat16, then cancel conversions"},
	/* glow-opt -precision=profile / -precision=quantize append these */
	{"precision-profile", 0, "quantization-profile", "Instrument every float value for a profiling run"},
	{"precision-quantize", 0, "quantize,dce,fold-quantization,dce", "Quantize from a profile, then fold the borders"},
};

static struct pass_ctx *ctx_of(struct pm_ctx *pm)
{
	struct pass_ctx *ctx = pm->user;
	ctx->pm = pm;
	return ctx;
}

/* A function pass runs on every function and, where there are any, on
 * every control-flow region (passes/regions.c); a function with a
 * signature goes through pass_run_scopes too, which keeps its parameters
 * first and its Yield last. */
#define GRAPH_PASS_ADAPT_FUNC(run)                                             \
	static bool run##_adapter(void *ir, struct pm_ctx *pm)                 \
	{                                                                      \
		struct module *m = ir;                                         \
		struct pass_ctx *ctx = ctx_of(pm);                             \
		bool changed = false;                                          \
		for (size_t i = 0; i < m->nfuncs; i++)                         \
			changed |= m->nowners || m->funcs[i]->has_sig                  \
					   ? pass_run_scopes(m->funcs[i], run, ctx)           \
					      : run(m->funcs[i], ctx);         \
		return changed;                                                \
	}
#define GRAPH_PASS_ADAPT_MODULE(run)                                           \
	static bool run##_adapter(void *ir, struct pm_ctx *pm) { return run((struct module *)ir, ctx_of(pm)); }
#define GRAPH_PASS(name, scope, run, flags, desc) GRAPH_PASS_ADAPT_##scope(run)
#include "passes/Passes.def"
#undef GRAPH_PASS

static const struct pm_pass passes[] = {
#define GRAPH_PASS(name, scope, run, flags, desc) {#name, desc, flags, run##_adapter},
#include "passes/Passes.def"
#undef GRAPH_PASS
};

static const struct pm_flag_name flag_names[] = {
	{PASS_INFER_ONLY, "infer-only"},
};

static const struct pm_option options[] = {
#define GRAPH_PASS_OPTION(id, pass, name, type, def, range, desc) {#pass, #name, PM_OPT_##type, def, range, desc},
#define GRAPH_PASS(name, scope, run, flags, desc)
#include "passes/Passes.def"
#undef GRAPH_PASS
	{"", "", PM_OPT_INT, "0", NULL, ""}, /* keeps the array non-empty; pass "" matches none */
};

static int verify_module(void *ir, struct diag *d) { return module_verify(ir, d); }

static void print_module(void *ir, struct ostream *o) { module_print(o, ir); }

const struct pm_registry graph_pass_registry = {
	passes,     GLOW_ARRAY_SIZE(passes),     pipelines,     GLOW_ARRAY_SIZE(pipelines),
	flag_names, GLOW_ARRAY_SIZE(flag_names), verify_module, print_module,
	options,    POPT_COUNT,                  graph_pass_conds, GRAPH_PASS_NCONDS,
};
