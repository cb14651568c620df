/* pass.h - the graph pass interface.
 *
 * A graph pass is a row of Passes.def plus its run function (one file per
 * pass in lib/passes/). It runs on one function or on the whole module,
 * receives a struct pass_ctx and returns whether it changed anything. The
 * pass manager (lib/support/passmgr.h) does the rest: pipelines, fixed-point
 * iteration, timing, dumps, verification.
 *
 * A pass must leave the module valid for the verifier, report bad input
 * through ctx->diag (which stops the pipeline) and bump its counters with
 * pass_stat so -stats can show them.
 */
#ifndef GLOW_PASSES_PASS_H
#define GLOW_PASSES_PASS_H

#include "graph/graph.h"
#include "support/passmgr.h"

#include <stdbool.h>
#include <stdint.h>

enum pass_mode { PASS_MODE_INFER, PASS_MODE_TRAIN };

struct pass_target;
struct quant_options;

/* The training configuration the differentiate pass builds the SGD update
 * from (glow-opt -learning-rate= -momentum= -weight-decay= -batch-size=). */
struct train_config {
	double learning_rate; /* > 0 */
	double momentum;      /* in [0, 1): 0 needs no velocity placeholder */
	double weight_decay;  /* L2, >= 0 */
	unsigned batch_size;  /* >= 1: gradients are divided by it */
};
/* lr 0.01, no momentum, no weight decay, batch size 1 */
extern const struct train_config train_config_default;

enum pass_flags {
	PASS_FIXED_POINT = PM_FIXED_POINT,
	PASS_INFER_ONLY = PM_CLIENT_FLAG0, /* changes training semantics: not in -mode=train */
	/* conditions the pass manager checks around the pass (conditions.c);
	 * high bits, so that new plain flags can take the ones after INFER_ONLY */
	PASS_REQUIRES_LOWERED = PM_CLIENT_FLAG0 << 12,   /* nothing left the lower pass would lower */
	PASS_ENSURES_LOWERED = PM_CLIENT_FLAG0 << 13,    /* ... and so after it */
	PASS_PRESERVES_SCHEDULE = PM_CLIENT_FLAG0 << 14, /* surviving nodes keep their relative order */
	PASS_ENSURES_ANF = PM_CLIENT_FLAG0 << 15,        /* the module records form anf afterwards */
	PASS_ENSURES_GNF = PM_CLIENT_FLAG0 << 16,
	PASS_ENSURES_BBNF = PM_CLIENT_FLAG0 << 17,
	PASS_REQUIRES_INLINED = PM_CLIENT_FLAG0 << 18, /* no Call, Fn or function with a signature (call: issue 18) */
};

/* The options of the passes (Passes.def GRAPH_PASS_OPTION rows), by Id. */
enum pass_option {
#define GRAPH_PASS_OPTION(id, pass, name, type, def, range, desc) POPT_##id,
#define GRAPH_PASS(name, scope, run, flags, desc)
#include "passes/Passes.def"
#undef GRAPH_PASS
	POPT_COUNT
};

struct pass_ctx {
	struct diag *diag;
	enum pass_mode mode;
	const char *backend; /* the -backend= name, NULL if none was given */
	struct pm_ctx *pm;   /* the run in progress (set before each pass runs) */
	const struct pass_target *target; /* the backend's answers (target.h); NULL: the interpreter's */
	const char *keep_float; /* node kinds convert-to-fp16/bf16 leave in float ("Kind,..."); NULL: none */
	const struct train_config *train; /* differentiate's configuration; NULL: train_config_default */
	const struct quant_options *quant; /* quantize's options (passes/quantize.h); NULL: none given */
};

/* Adds n to the counter desc ("Number of nodes merged") of the running pass. */
static inline void pass_stat(struct pass_ctx *ctx, const char *desc, uint64_t n)
{
	if (n)
		pm_stat_add(ctx->pm, desc, n);
}

/* The value of option id of the running pass: given in the pipeline text
 * (pass{name=value}), else its default (passopts.c). */
int64_t pass_opt_int(const struct pass_ctx *ctx, enum pass_option id);
double pass_opt_float(const struct pass_ctx *ctx, enum pass_option id);
bool pass_opt_bool(const struct pass_ctx *ctx, enum pass_option id);
const char *pass_opt_string(const struct pass_ctx *ctx, enum pass_option id);
struct pm_optlist pass_opt_list(const struct pass_ctx *ctx, enum pass_option id);
bool pass_opt_given(const struct pass_ctx *ctx, enum pass_option id);

/* differentiate's configuration: the tool's (ctx->train, else
 * train_config_default) with the values its pipeline options give. */
struct train_config pass_train_config(const struct pass_ctx *ctx);
/* Whether differentiate{funcs=...} selects function name (every function
 * when the option is not given). */
bool pass_diff_selects(const struct pass_ctx *ctx, const char *name);
/* Reports each function differentiate{funcs=...} names that m lacks;
 * returns nonzero if there is one. */
int pass_diff_check_funcs(struct module *m, const struct pass_ctx *ctx);
/* differentiate{record=true}: the configuration as module attributes
 * train_lr, train_momentum, train_weight_decay, train_batch_size. */
void pass_record_train_config(struct module *m, const struct pass_ctx *ctx);

/* The conditions of pass_flags (conditions.c), for the registry. */
enum { GRAPH_PASS_NCONDS = 7 };
extern const struct pm_cond graph_pass_conds[GRAPH_PASS_NCONDS];

/* Prototypes of every pass. */
#define GRAPH_PASS_PROTO_FUNC(run) bool run(struct func *f, struct pass_ctx *ctx);
#define GRAPH_PASS_PROTO_MODULE(run) bool run(struct module *m, struct pass_ctx *ctx);
#define GRAPH_PASS(name, scope, run, flags, desc) GRAPH_PASS_PROTO_##scope(run)
#include "passes/Passes.def"
#undef GRAPH_PASS
#undef GRAPH_PASS_PROTO_FUNC
#undef GRAPH_PASS_PROTO_MODULE

/* The registry of graph passes and pipelines (-O0..-O3), with the graph
 * verifier and printer. Passes run with pm->user pointing at a struct
 * pass_ctx and the IR being a struct module. */
extern const struct pm_registry graph_pass_registry;

#endif
