/* verify_blocks.c - the verifier's checks of structured blocks
 * (docs/InstrIR.md, "Blocks"), called by verify.c for each instruction in
 * program order:
 *   - blocks well nested: an `else` only directly in an if's first block
 *     and at most once, an `end` only where a block is open, every block
 *     closed at the end of the program;
 *   - scope: an alloc or a view is used only while the block that defines
 *     it is open (a value defined in a block is invisible after it, and in
 *     an if's other block);
 *   - an alloc and its dealloc in the same block.
 * Each block gets a number when it opens (0: the program itself); an alloc
 * or view records its block's number in the high bits of its mark field,
 * above verify.c's state bits (ir_verify_blocks_shift). */
#include "ir/rules.h"
#include "support/util.h"

#include <stdio.h>
#include <string.h>

void ir_verify_blocks_init(struct ir_block_check *bc)
{
	memset(bc, 0, sizeof *bc);
	vec_push(&bc->open, 1); /* block 0: the program */
	vec_push(&bc->ids, 0);
	vec_push(&bc->openers, NULL);
	vec_push(&bc->has_else, 0);
}

/* The block number an alloc or view was defined in (its mark's high bits). */
static uint32_t def_block(const struct ir_instr *def) { return def->mark >> IR_VERIFY_BLOCK_SHIFT; }

/* Opens a new block (an opening instruction, or the second block of an if). */
static void open_block(struct ir_block_check *bc)
{
	uint32_t id = (uint32_t)bc->open.len;
	vec_push(&bc->open, 1);
	vec_last(&bc->ids) = id;
}

void ir_verify_blocks_step(struct ir_verifier *v, struct ir_block_check *bc, struct ir_instr *in, unsigned live)
{
	char b[128];
	uint32_t cur = vec_last(&bc->ids);
	for (unsigned i = 0; i < in->nops; i++) {
		struct ir_instr *def = ir_as_instr(in->ops[i].val);
		if (!def || (def->mark & IR_VERIFY_STATE) != live || !(def->mark & IR_VERIFY_MEMBER))
			continue;
		if (!bc->open.data[def_block(def)])
			ir_verr(v, in, "uses %s outside the block that defines it", ir_vname(&def->v, b, sizeof b));
	}
	if (in->kind == IK_dealloc && in->nops == 1) {
		struct ir_instr *a = ir_as_instr(in->ops[0].val);
		if (a && a->kind == IK_alloc && (a->mark & IR_VERIFY_MEMBER) && (a->mark & IR_VERIFY_STATE) &&
		    def_block(a) != cur)
			ir_verr(v, in, "deallocates %s in another block than its alloc", ir_vname(&a->v, b, sizeof b));
	}
	if (in->kind == IK_alloc || in->kind == IK_tensorview) {
		in->mark |= cur << IR_VERIFY_BLOCK_SHIFT;
		return;
	}
	unsigned fl = instr_desc(in->kind)->flags;
	if (fl & IF_BLOCK_OPEN) {
		vec_push(&bc->ids, 0);
		vec_push(&bc->openers, in);
		vec_push(&bc->has_else, 0);
		open_block(bc);
	} else if (fl & IF_BLOCK_ELSE) {
		const struct ir_instr *op = vec_last(&bc->openers);
		if (!op || op->kind != IK_if)
			ir_verr(v, in, "else outside the first block of an if");
		else if (vec_last(&bc->has_else))
			ir_verr(v, in, "second else in one if");
		else {
			bc->open.data[cur] = 0;
			vec_last(&bc->has_else) = 1;
			open_block(bc);
		}
	} else if (fl & IF_BLOCK_END) {
		if (bc->ids.len <= 1) {
			ir_verr(v, in, "end without an open block");
			return;
		}
		bc->open.data[cur] = 0;
		bc->ids.len--;
		bc->openers.len--;
		bc->has_else.len--;
	}
}

void ir_verify_blocks_finish(struct ir_verifier *v, struct ir_block_check *bc)
{
	for (size_t i = bc->openers.len; i-- > 1;)
		ir_verr(v, bc->openers.data[i], "block is never closed (no end)");
	vec_free(&bc->open);
	vec_free(&bc->ids);
	vec_free(&bc->openers);
	vec_free(&bc->has_else);
}
