/* target.h - what the graph passes ask of the target backend.
 *
 * glow-opt -backend=NAME makes the pipeline consult that backend's
 * should_lower, is_node_supported and transform_post_lowering
 * (backends/backend.h). The passes reach the backend only through the
 * struct pass_target in their context, never through a backend library, so
 * lib/passes does not link any backend; the tool resolves the name
 * (backend_find, backends/backend.h) and fills the context.
 *
 * Without a backend (a pass_target with backend NULL, or no pass_target at
 * all) the answers are the interpreter's: every node kind is supported and
 * none is lowered, so the default pipeline changes no node into simpler
 * ones unless it is asked to (lower-all).
 *
 * `unsupported` marks node kinds the target must treat as unsupported on
 * top of the backend's own answers (glow-opt -backend-unsupported=): the
 * lower stage lowers such nodes when it can, and check-supported reports
 * the ones left.
 */
#ifndef GLOW_PASSES_TARGET_H
#define GLOW_PASSES_TARGET_H

#include "graph/graph.h"

#include <stdbool.h>

struct backend;
struct pass_ctx;

struct pass_target {
	const struct backend *backend; /* NULL: the interpreter's answers */
	const char *name;              /* for messages: the backend's name */
	const bool *unsupported;       /* NK_COUNT flags, or NULL */
	/* the backend's post-lowering hook is not run, so the function keeps
	 * generic kinds only: set where a precision step (quantize,
	 * convert-to-fp16/bf16) follows the pipeline, whose rules know the
	 * generic kinds and no backend's own (C.ConvAddRelu has no quantized
	 * or float16 form) */
	bool no_backend_nodes;
};

/* The name of the target for messages ("interpreter" without a backend). */
const char *target_name(const struct pass_ctx *ctx);
/* Whether the target executes n as it stands. */
bool target_supports(const struct pass_ctx *ctx, const struct node *n);
/* Whether the target executes a node of kind with these element kinds,
 * results first, then operands (is_op_supported's order; glow-opt
 * -backend-unsupported too): what a pass asks before it changes a node's
 * types (quantize, convert-to-fp16). No target: the interpreter, yes. */
bool target_supports_elems(const struct pass_ctx *ctx, unsigned kind, const enum elem_kind *elems, unsigned n);
/* Whether the lower stage should lower n: the backend asks for it, or it
 * does not execute n. */
bool target_wants_lowered(const struct pass_ctx *ctx, const struct node *n);
/* Runs the backend's transform_post_lowering on f: 1 changed, 0 not, -1
 * after an error was reported. No backend, or no_backend_nodes: 0. */
int target_post_lowering(const struct pass_ctx *ctx, struct func *f);

#endif
