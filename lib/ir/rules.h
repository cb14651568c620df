/* rules.h - the verifier context and the type rules named in Instrs.def. */
#ifndef GLOW_IR_RULES_H
#define GLOW_IR_RULES_H

#include "ir/ir.h"

#include "support/vec.h"

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

/* "%name" of a value (quoted as the printer does) into buf, for messages. */
const char *ir_vname(const struct ir_value *val, char *buf, size_t size);

/* ---- blocks (verify_blocks.c) ---- */

/* verify.c's mark bits the block checks read: an instruction of the
 * function seen by the walk, and its lifetime state; the block number of
 * an alloc or view is stored from bit IR_VERIFY_BLOCK_SHIFT up. */
enum { IR_VERIFY_STATE = 3, IR_VERIFY_MEMBER = 4, IR_VERIFY_BLOCK_SHIFT = 3 };

/* The blocks open at the walk's position, innermost last. */
struct ir_block_check {
	VEC(uint8_t) open;                 /* by block number: still open */
	VEC(uint32_t) ids;                 /* per open level: its block's number */
	VEC(struct ir_instr *) openers;    /* per open level: its if or loop (NULL: the program) */
	VEC(uint8_t) has_else;             /* per open level: its else was seen */
};
void ir_verify_blocks_init(struct ir_block_check *bc);
/* The checks of instruction `in`, after verify.c's lifetime checks;
 * `live` is verify.c's state of an alloc or view between its definition
 * and its dealloc. */
void ir_verify_blocks_step(struct ir_verifier *v, struct ir_block_check *bc, struct ir_instr *in, unsigned live);
/* Reports the blocks still open and frees bc. */
void ir_verify_blocks_finish(struct ir_verifier *v, struct ir_block_check *bc);

void ir_rule_none(struct ir_verifier *v, const struct ir_instr *in);
/* Runs the graph node kind's type rule on the instruction (Instrs.def). */
void ir_rule_graph(struct ir_verifier *v, const struct ir_instr *in);
#define INSTR(K, O, A, F, P, G, R) void R(struct ir_verifier *v, const struct ir_instr *in);
#include "ir/Instrs.def"
#undef INSTR

#endif
