/* cgen_flow.c - the C backend's structured control flow
 * (docs/InstrIR.md, "Blocks"; docs/CBackend.md): an if block becomes C's
 * `if (cond) { ... } else { ... }`, a loop
 *
 *     { int64_t cb_tripN = *trip;
 *       for (int64_t cb_kN = 0; cb_kN < cb_tripN && *cond; cb_kN++) {
 *         *iter = cb_kN; ... } }
 *
 * (the trip count read once, the condition before every iteration), with
 * the block's instructions emitted in between as anywhere else. The run
 * function stays one C function; blocks run on the calling thread and the
 * kernels inside split among threads as always. insertslice and
 * extractslice copy one slice of the leading axis at an index read at run
 * time; an index outside the axis makes the run function return 1 (the
 * caller's "index out of range").
 */
#include "backends/c/cgen.h"
#include "backends/c/cgen_ops.h"

#include <inttypes.h>

/* The brackets of blocks (Emitters.def: if, else, loop, end): C braces;
 * a loop's end closes its for and the scope of its trip count. */
void cg_emit_block(struct cg *g, struct ir_instr *in, const struct cg_emit_row *row)
{
	(void)row;
	char a[160], b[160], c[160];
	switch (in->kind) {
	case IK_if:
		os_printf(g->body, "\tif (*%s) {\n", cg_ptr(g, in->ops[0].val, "uint8_t", a, sizeof a));
		break;
	case IK_else: os_puts(g->body, "\t} else {\n"); break;
	case IK_loop: {
		unsigned n = g->uniq++;
		os_printf(g->body,
			  "\t{ /* loop */\n\tint64_t cb_trip%u = *%s;\n"
			  "\tfor (int64_t cb_k%u = 0; cb_k%u < cb_trip%u && *%s; cb_k%u++) {\n\t*%s = cb_k%u;\n",
			  n, cg_ptr(g, in->ops[0].val, "int64_t", a, sizeof a), n, n, n,
			  cg_ptr(g, in->ops[1].val, "uint8_t", b, sizeof b), n,
			  cg_ptr(g, in->ops[2].val, "int64_t", c, sizeof c), n);
		break;
	}
	default: { /* end */
		const struct ir_instr *open = ir_block_opener(in);
		if (open && open->kind == IK_loop) {
			os_puts(g->body, "\t}\n\t} /* loop */\n");
		} else {
			os_puts(g->body, "\t}\n");
		}
		break;
	}
	}
}

/* insertslice and extractslice: the index read, checked against the
 * leading axis (else the run function returns 1), one memmove. */
void cg_emit_slice_at(struct cg *g, struct ir_instr *in, const struct cg_emit_row *row)
{
	(void)row;
	bool insert = in->kind == IK_insertslice;
	struct ir_value *whole = in->ops[insert ? 0 : 1].val, *part = in->ops[insert ? 1 : 0].val;
	char w[160], p[160], x[160];
	uint64_t bytes = type_bytes(part->type), n = whole->type->dims[0];
	unsigned k = g->uniq++;
	cg_ptr(g, whole, "uint8_t", w, sizeof w);
	cg_ptr(g, part, "uint8_t", p, sizeof p);
	os_printf(g->body, "\t{\n\tint64_t cb_i%u = *%s;\n\tif (cb_i%u < 0 || cb_i%u >= %" PRIu64 ")\n\t\treturn 1;\n", k,
		  cg_ptr(g, in->ops[2].val, "int64_t", x, sizeof x), k, k, n);
	if (insert)
		os_printf(g->body, "\tmemmove(%s + (size_t)cb_i%u * %" PRIu64 "u, %s, %" PRIu64 "u);\n\t}\n", w, k, bytes, p,
			  bytes);
	else
		os_printf(g->body, "\tmemmove(%s, %s + (size_t)cb_i%u * %" PRIu64 "u, %" PRIu64 "u);\n\t}\n", p, w, k, bytes,
			  bytes);
}
