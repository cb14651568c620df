/* blocks.c - walking the structured blocks of a program (ir.h, "blocks").
 *
 * Blocks are not a tree of lists but brackets in the one instruction list:
 * an opening instruction (if, loop), an optional `else`, and an `end`. These
 * helpers match them by counting the depth along the list; they cost the
 * length of the block they cross.
 */
#include "ir/ir.h"

/* The bracket matching `from`, walking forward to an end (or backward to
 * an opening instruction): brackets of the other direction on the way
 * open nested blocks. */
static struct ir_instr *match(const struct ir_instr *from, bool forward)
{
	unsigned depth = 0, want = forward ? IF_BLOCK_END : IF_BLOCK_OPEN, nest = forward ? IF_BLOCK_OPEN : IF_BLOCK_END;
	for (struct ir_instr *in = forward ? from->next : from->prev; in; in = forward ? in->next : in->prev) {
		unsigned fl = instr_desc(in->kind)->flags;
		if (fl & nest)
			depth++;
		else if ((fl & want) && depth-- == 0)
			return in;
	}
	return NULL;
}

struct ir_instr *ir_block_end(const struct ir_instr *open) { return match(open, true); }

struct ir_instr *ir_block_opener(const struct ir_instr *mark) { return match(mark, false); }

bool ir_func_has_blocks(const struct ir_func *f)
{
	ir_for_each_instr(f, in)
		if (instr_is_block(in->kind))
			return true;
	return false;
}
