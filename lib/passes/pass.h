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
