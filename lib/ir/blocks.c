/* blocks.c - walking the structured blocks of a program (ir.h, "blocks").
 *
 * Blocks are not a tree of lists but brackets in the one instruction list:
 * an opening instruction (if, loop), an optional `else`, and an `end`. These
 * helpers match them by counting the depth along the list; they cost the
 * length of the block they cross.
 */
#include "ir/ir.h"

struct ir_instr *ir_block_end(const struct ir_instr *open)
{
	unsigned depth = 0;
	for (struct ir_instr *in = open->next; in; in = in->next) {
		unsigned fl = instr_desc(in->kind)->flags;
		if (fl & IF_BLOCK_OPEN) {
			depth++;
		} else if (fl & IF_BLOCK_END) {
			if (depth == 0)
				return in;
			depth--;
		}
	}
	return NULL;
}

struct ir_instr *ir_block_opener(const struct ir_instr *mark)
{
	unsigned depth = 0;
	for (struct ir_instr *in = mark->prev; in; in = in->prev) {
		unsigned fl = instr_desc(in->kind)->flags;
		if (fl & IF_BLOCK_END) {
			depth++;
		} else if (fl & IF_BLOCK_OPEN) {
			if (depth == 0)
				return in;
			depth--;
		}
	}
	return NULL;
}

bool ir_func_has_blocks(const struct ir_func *f)
{
	ir_for_each_instr(f, in)
		if (instr_is_block(in->kind))
			return true;
	return false;
}
