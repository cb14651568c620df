/* interp.h - the interpreter backend and its kernels.
 *
 * interp_backend implements struct backend: compile checks every
 * instruction and places every buffer (at the recorded offsets of the three
 * regions constant / mutable / activations when the function has a memory
 * plan, else in its own allocations) and resolves each operand to an
 * address once; run binds inputs, executes the program in order and copies
 * outputs back.
 *
 * The kernels are usable on their own, on raw buffers: interp_exec runs one
 * instruction kind given its operands (type + data, in Instrs.def order)
 * and its attributes (in table order, which is also the graph node's
 * order). A constant folder evaluates a graph node K by calling the
 * instruction of the same name with the node's result buffers as the
 * written operands and its operands as the read ones.
 */
#ifndef GLOW_BACKENDS_INTERPRETER_INTERP_H
#define GLOW_BACKENDS_INTERPRETER_INTERP_H

#include "backends/backend.h"
#include "ir/ir.h"

#include <stdbool.h>
#include <stddef.h>

extern const struct backend interp_backend;

/* An operand of a kernel: its type and its data (type_bytes(t) bytes). */
struct interp_arg {
	const struct type *t;
	void *p;
};

/* Runs instruction kind `kind` on ops[0 .. instr_desc(kind)->nops) with
 * attrs (instr_desc(kind)->nattrs values). The operand types must satisfy
 * the kind's type rule. Returns 0; -1 after writing a message to err (a
 * run-time error such as an index out of range; what was written is
 * unspecified); 1 if the kind is not executable (nothing written). */
int interp_exec(unsigned kind, const struct interp_arg *ops, const union attr_val *attrs, char *err,
		size_t errsize);

/* Sets the number of threads the kernels split large instructions among
 * (n <= 0: the cores available to the process, also the default before
 * any call); returns the count in effect. Results are bitwise the same
 * for every count. Not while an instruction runs. */
int interp_set_threads(int n);

/* Whether interp_exec handles kind with operands of these types. */
bool interp_supports(unsigned kind, const struct type *const *types, unsigned ntypes);

/* Fills out (type_bytes of w's type) with w's initializer: zeros when it
 * has none (quantized kinds: their offset). Relative files are found in the
 * module's base directory. Returns 0, or -1 after reporting. */
int interp_weight_init(struct ir_module *m, const struct ir_weight *w, void *out, struct diag *d);

#endif
