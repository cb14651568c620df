/* rules.h - the verifier context and the type rules named in Instrs.def. */
#ifndef GLOW_IR_RULES_H
#define GLOW_IR_RULES_H

#include "ir/ir.h"

#include <stdarg.h>

struct ir_verifier {
	struct diag *d;
	struct ir_func *f;
	int errors;
};

/* Reports an error at loc as "subject %name: message" (graph/typerules_op.h's
 * top_report; no name when name is NULL) and counts it. */
void ir_vreport(struct ir_verifier *v, struct loc loc, const char *subject, const char *name, const char *fmt,
		va_list ap) GLOW_PRINTF(5, 0);
/* Reports an error at the instruction, prefixed with its kind and name. */
void ir_verr(struct ir_verifier *v, const struct ir_instr *in, const char *fmt, ...) GLOW_PRINTF(3, 4);

void ir_rule_none(struct ir_verifier *v, const struct ir_instr *in);
/* Runs the graph node kind's type rule on the instruction (Instrs.def). */
void ir_rule_graph(struct ir_verifier *v, const struct ir_instr *in);
#define INSTR(K, O, A, F, P, G, R) void R(struct ir_verifier *v, const struct ir_instr *in);
#include "ir/Instrs.def"
#undef INSTR

#endif
