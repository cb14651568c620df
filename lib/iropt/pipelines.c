/* pipelines.c - the IR pass registry and the named pipelines.
 *
 * The pipelines below are the whole optimization story of glow-llc, readable
 * in one place. Each is a comma-separated list of pass names (IRPasses.def)
 * and other pipeline names; IROPT_FIXED_POINT on a pipeline repeats it
 * until no pass in it changes anything.
 *
 *   lifetimes  tighten every activation's lifetime (allocs late, deallocs
 *              early) so the other passes see who is born and who dies where
 *   cleanup    local rewrites and dead code
 *   optimize   the default order: sink first (share-buffers wants outputs
 *              born at their producer), share, clean up what sharing
 *              exposed, tighten lifetimes again, drop what is left dead
 *   c-O0..c-O3 the C backend's own pipelines (struct backend's
 *              ir_pipelines), defined with that backend in
 *              backends/c/Pipelines.def and named here, so that every
 *              tool knows them by name
 *
 * The registry rows are generated from IRPasses.def. Each pass gets a small
 * adapter of the engine's type (void *ir = struct ir_module *) that runs it
 * on every function and drops the recorded memory plan of a function it
 * changed, unless the pass is the one that records plans.
 */
#include "iropt/iropt.h"
#include "support/io.h"

/*   name        flags               contents                                   description */
static const struct pm_pipeline pipelines[] = {
	{"lifetimes", 0, "sink-alloc,hoist-dealloc", "Allocs right before their first use, deallocs right after the last"},
	{"cleanup", 0, "peephole,dse,delete-dead-allocs", "Local rewrites, dead stores, dead allocs and views"},
	{"optimize", 0, "lifetimes,peephole,dse,share-buffers,cleanup,lifetimes,make-weights-const",
	 "The default order of the IR passes"},
	{"optimize-fp", IROPT_FIXED_POINT, "optimize", "Optimize until nothing changes"},
	{"O0", 0, "", "No optimization, no memory plan"},
	{"O1", 0, "cleanup,lifetimes,plan-memory", "Cleanup, tight lifetimes and the memory plan"},
	{"O2", 0, "optimize,plan-memory", "Default: buffer sharing and copy elimination, then the memory plan"},
	{"O3", 0, "optimize-fp,plan-memory", "O2's passes until nothing changes, then the memory plan"},
#define C_PIPELINE(level, name, contents, desc) {name, 0, contents, desc},
#include "backends/c/Pipelines.def"
	/* the OpenCL backend's (backends/opencl): placeholders through device
	 * buffers with explicit copies, then the plan covers those buffers */
	{"ocl-O0", 0, "device-copies", "The OpenCL backend's O0: device copies only, no memory plan"},
	{"ocl-O1", 0, "cleanup,device-copies,lifetimes,plan-memory", "The OpenCL backend's O1: O1 with device copies"},
	{"ocl-O2", 0, "optimize,device-copies,lifetimes,plan-memory",
	 "The OpenCL backend's default: O2's passes, device copies, the plan"},
	{"ocl-O3", 0, "optimize-fp,device-copies,lifetimes,plan-memory",
	 "The OpenCL backend's O3: O3's passes, device copies, the plan"},
};

static struct iropt_ctx *ctx_of(struct pm_ctx *pm)
{
	struct iropt_ctx *ctx = pm->user;
	ctx->pm = pm;
	return ctx;
}

#define IR_PASS(name, run, flags, desc)                                        \
	static bool run##_adapter(void *ir, struct pm_ctx *pm)                 \
	{                                                                      \
		struct ir_module *m = ir;                                      \
		struct iropt_ctx *ctx = ctx_of(pm);                            \
		bool changed = false;                                          \
		for (size_t i = 0; i < m->nfuncs; i++) {                       \
			bool c = run(m->funcs[i], ctx);                        \
			if (c && !((flags) & IROPT_KEEPS_PLAN))                \
				iropt_drop_plan(m->funcs[i]);                  \
			changed |= c;                                          \
		}                                                              \
		return changed;                                                \
	}
#include "iropt/IRPasses.def"
#undef IR_PASS

static const struct pm_pass passes[] = {
#define IR_PASS(name, run, flags, desc) {name, desc, flags, run##_adapter},
#include "iropt/IRPasses.def"
#undef IR_PASS
};

static const struct pm_flag_name flag_names[] = {
	{IROPT_KEEPS_PLAN, "records-plan"},
};

static int verify_module(void *ir, struct diag *d) { return ir_module_verify(ir, d); }

static void print_module(void *ir, struct ostream *o) { ir_module_print(o, ir); }

const struct pm_registry ir_pass_registry = {
	passes,     GLOW_ARRAY_SIZE(passes),     pipelines,     GLOW_ARRAY_SIZE(pipelines),
	flag_names, GLOW_ARRAY_SIZE(flag_names), verify_module, print_module,
	NULL,       0,                           NULL,          0, /* no pass options or conditions yet */
};
