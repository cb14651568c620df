/* transposeconst.c - fold Transposes and Reshapes of Constants into constants.
 *
 * Transpose(@c) becomes a new constant holding @c's elements in the
 * transposed order; Reshape(@c) a constant of the new type with the same
 * bytes. Splat and zero constants stay splat and zero (no payload is made),
 * so model weights given as splats keep their small text form. The old
 * constant stays while anything else uses it (dce removes it otherwise).
 *
 * This is how the filter Transposes the ONNX importer puts in front of every
 * Convolution (OIHW -> OHWI) disappear, and how the constant operands that
 * sink-transposes moves into a new layout get their data.
 *
 * Inference only (PASS_INFER_ONLY): it creates new weights, and a training
 * run must keep updating the ones it was given. Data movement only: exact.
 *
 * Requires: a verified function. Constants that cannot be read (a missing
 * weight file) are reported through the diag and stop the pipeline.
 */
#include "passes/pass.h"
#include "passes/passutil.h"

#include <stdlib.h>
#include <string.h>

/* A new constant of type t with c's initializer: splat and zero carry over,
 * anything else gets data (possibly permuted by s). NULL after an error. */
static struct constant *fold(struct module *m, struct constant *c, const struct type *t, const int64_t *s,
			     struct diag *d, const char *base)
{
	if (c->init == INIT_SPLAT || c->init == INIT_ZERO) {
		struct constant *nc = module_add_constant(m, module_fresh_name(m, base), t, LOC_NONE);
		glow_assert(nc);
		nc->init = c->init;
		nc->splat_f = c->splat_f;
		nc->splat_i = c->splat_i;
		return nc;
	}
	const uint8_t *data = pu_constant_data(m, c, d);
	if (!data)
		return NULL;
	if (!s)
		return pu_new_constant(m, t, data, base);
	uint8_t *out = xmalloc(type_bytes(t) ? type_bytes(t) : 1);
	pu_transpose_data(c->n.types[0], data, s, out);
	struct constant *nc = pu_new_constant(m, t, out, base);
	free(out);
	return nc;
}

bool transpose_constants_run(struct func *f, struct pass_ctx *ctx)
{
	struct module *m = f->mod;
	uint64_t transposes = 0, reshapes = 0;
	func_for_each_safe(f, n, next) {
		if ((n->kind != NK_Transpose && n->kind != NK_Reshape) || node_has_pred(n))
			continue;
		struct constant *c = as_constant(n->ops[0].def);
		if (!c)
			continue;
		const int64_t *s = NULL;
		if (n->kind == NK_Transpose) {
			unsigned r;
			s = node_ints(n, AN_shuffle, &r);
		}
		/* the new constant is named after the node it replaces */
		struct constant *nc = fold(m, c, node_type(n), s, ctx->diag, n->name);
		if (!nc)
			return transposes || reshapes;
		/* next may be a user of n; erasing n itself leaves next valid */
		pu_replace(f, n, node_val(&nc->n, 0));
		if (s)
			transposes++;
		else
			reshapes++;
	}
	pass_stat(ctx, "Number of Transposes of constants folded", transposes);
	pass_stat(ctx, "Number of Reshapes of constants folded", reshapes);
	return transposes || reshapes;
}
