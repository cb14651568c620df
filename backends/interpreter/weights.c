/* weights.c - the contents of a weight from its initializer.
 *
 * The same values the graph IR gives a constant with the same initializer:
 * both go through init_materialize (lib/graph/initializer.h), which holds
 * the semantics (splat, zero, xavier, file, dense) once.
 */
#include "backends/interpreter/kern.h"
#include "graph/initializer.h"

int interp_weight_init(struct ir_module *m, const struct ir_weight *w, void *out, struct diag *d)
{
	struct init_spec s = ir_weight_init_spec(w); /* IR_INIT_NONE: zeros */
	return init_materialize(&s, w->v.type, m->base_dir, w->v.loc, out, d);
}
