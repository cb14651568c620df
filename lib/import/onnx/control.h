/* control.h - what the files of ONNX control flow share (ops_control.c:
 * the regions; ops_control_unroll.c: the import-time unrolling that
 * remains for Loop bodies that need the iteration's values at import,
 * opset 8's batch, and trying a region first; control_slice.c: Slices of
 * run-time starts in Loop bodies; control_body.c below them all). */
#ifndef GLOW_IMPORT_ONNX_CONTROL_H
#define GLOW_IMPORT_ONNX_CONTROL_H

#include "import/onnx/internal.h"
#include "support/vec.h"

#include <stdio.h>

/* A tensor of dtype over value v (NULL when v is none). */
struct tensor *cf_t_of_value(struct importer *im, const char *name, int dtype, struct value v);
/* "float [2, 3]", for messages (in scratch). */
const char *cf_t_desc(struct importer *im, const struct tensor *t);
/* One element type and shape. */
bool cf_same_shape(const struct tensor *a, const struct tensor *b);
/* The value of a known bool or integer tensor of one element. */
bool cf_known_flag(struct importer *im, struct tensor *t, bool *v);
/* Translates subgraph g (attribute aname of the current node) once in a
 * new scope with its inputs bound to ins[0..nin); outs[0..g->n_output)
 * receive its outputs. 0; -1 after reporting; 1 when an output depends on
 * a value that failed earlier. */
int cf_run_body(struct importer *im, const char *aname, const Onnx__GraphProto *g, struct tensor *const *ins,
		size_t nin, long iter, struct tensor **outs);
/* Binds every output of the current node to a poisoned tensor; 0. */
int cf_poison_all(struct importer *im, const onnx_node *n);

/* x[..., pos, ...] along axis, the axis removed. NULL after reporting. */
struct tensor *cf_take(struct importer *im, struct tensor *x, unsigned axis, uint64_t pos, const char *name);
typedef VEC(struct tensor **) step_list;
/* Output `name` stacking output k of every step (steps[i][base + k])
 * along a new axis, step order reversed when rev. NULL after reporting. */
struct tensor *cf_stack_steps(struct importer *im, step_list *steps, size_t base, unsigned k, unsigned axis, bool rev,
			      const char *name);
/* Loop n (body g, N carried values, K scan outputs) unrolled at import:
 * the trip count and every condition must be known there. 0, -1 after
 * reporting, or cf_poison_all's. */
int cf_loop_unrolled(struct importer *im, const onnx_node *n, const Onnx__GraphProto *g, unsigned N, size_t K);

/* Reports go to a memory stream while the importer tries something it may
 * take back (cf_spec_begin); cf_spec_end keeps them (the try stands) or
 * drops them with the errors they counted. */
struct cf_speculation {
	FILE *out, *mem;
	char *buf;
	size_t len;
	int nerrors, nwarnings, stopped, errors;
	uint64_t unrolled;
};
void cf_spec_begin(struct importer *im, struct cf_speculation *sp);
void cf_spec_end(struct importer *im, struct cf_speculation *sp, bool keep);

#endif
