/* weightsconst.c - make-weights-const: a mutable weight that has an
 * initializer and that no instruction writes (directly or through a view)
 * becomes constant. Weights without an initializer are the function's
 * inputs (bound at run time) and stay mutable; so does any weight written
 * anywhere (outputs, training state).
 *
 * Requires: a verified function. Preserves: the program; the constant
 * region grows and the mutable one shrinks. Uses the weights' mark field
 * and clears it.
 */
#include "iropt/iropt.h"

bool iropt_make_weights_const(struct ir_func *f, struct iropt_ctx *ctx)
{
	ir_for_each_weight(f, w)
		w->mark = 0;
	ir_for_each_instr(f, in) {
		if (in->kind == IK_dealloc || in->kind == IK_tensorview)
			continue;
		for (unsigned i = 0; i < in->nops; i++) {
			if (!iropt_qual_writes(iropt_op_qual(in, i)))
				continue;
			struct ir_value *r = ir_value_root(in->ops[i].val, NULL);
			struct ir_weight *w = r ? ir_as_weight(r) : NULL;
			if (w)
				w->mark = 1;
		}
	}
	unsigned n = 0;
	ir_for_each_weight(f, w) {
		if (!w->is_const && w->init != IR_INIT_NONE && !w->mark) {
			w->is_const = true;
			n++;
		}
		w->mark = 0;
	}
	iropt_stat(ctx, "Number of weights made constant", n);
	return n > 0;
}
