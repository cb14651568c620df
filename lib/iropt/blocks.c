/* blocks.c - what the IR passes share about structured blocks
 * (docs/InstrIR.md, "Blocks"; the helpers of ir.h find their brackets).
 *
 * The passes move instructions only within a block: a pass walking from an
 * instruction to another at the same level treats a nested block (its
 * opening instruction to its end) as one instruction, which names a buffer
 * when anything inside it does.
 */
#include "iropt/iropt.h"

bool iropt_block_names(const struct ir_instr *open, const struct ir_instr *end, const struct ir_value *b)
{
	for (const struct ir_instr *in = open; in; in = in->next) {
		if (iropt_names(in, b))
			return true;
		if (in == end)
			break;
	}
	return false;
}

bool iropt_block_names_value(const struct ir_instr *open, const struct ir_instr *end, const struct ir_value *v)
{
	for (const struct ir_instr *in = open; in; in = in->next) {
		for (unsigned i = 0; i < in->nops; i++)
			if (in->ops[i].val == v)
				return true;
		if (in == end)
			break;
	}
	return false;
}
