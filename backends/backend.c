/* backend.c - what every backend shares: the input/output rule of an IR
 * function (backend.h states it), the element kinds of a node for
 * is_op_supported, and the struct backend members that backends answer
 * alike. The registry by name is registry.c (library glowbackends).
 */
#include "backends/backend.h"
#include "backends/interpreter/interp.h"
#include "support/hashmap.h"
#include "support/util.h"

#include <stdlib.h>
#include <string.h>

struct backend_io *backend_func_io(struct ir_func *f, size_t *n)
{
	size_t cnt = 0;
	ir_for_each_weight(f, w) cnt += !w->is_const;
	struct backend_io *io = xcalloc(cnt + 1, sizeof *io);
	struct u64map slot; /* weight -> its entry + 1 */
	u64map_init(&slot);
	size_t i = 0;
	ir_for_each_weight(f, w) {
		if (w->is_const)
			continue;
		io[i].w = w;
		u64map_put(&slot, (uint64_t)(uintptr_t)w, (void *)(uintptr_t)(i + 1));
		i++;
	}
	/* first use decides: read first (without initializer) -> input */
	bool *touched = xcalloc(cnt + 1, 1);
	ir_for_each_instr(f, in) {
		if (in->kind == IK_tensorview || in->kind == IK_alloc)
			continue;
		for (unsigned j = 0; j < in->nops; j++) {
			struct ir_value *root = ir_value_root(in->ops[j].val, NULL);
			void *s = root ? u64map_get(&slot, (uint64_t)(uintptr_t)root) : NULL;
			if (!s)
				continue;
			size_t k = (size_t)(uintptr_t)s - 1;
			unsigned q = in->ops[j].qual;
			if (!touched[k] && q != IQ_OUT && io[k].w->init == IR_INIT_NONE)
				io[k].is_input = true;
			if (q != IQ_IN)
				io[k].is_output = true;
		}
		/* after the whole instruction: an operand read and another
		 * written in one instruction still count as a read first */
		for (unsigned j = 0; j < in->nops; j++) {
			struct ir_value *root = ir_value_root(in->ops[j].val, NULL);
			void *s = root ? u64map_get(&slot, (uint64_t)(uintptr_t)root) : NULL;
			if (s)
				touched[(size_t)(uintptr_t)s - 1] = true;
		}
	}
	/* a placeholder the program never touches is still an input of its
	 * signature (an ONNX graph input read only for its shape) */
	for (size_t k = 0; k < cnt; k++)
		if (!touched[k] && io[k].w->init == IR_INIT_NONE)
			io[k].is_input = true;
	free(touched);
	u64map_free(&slot);
	*n = cnt;
	return io;
}

unsigned backend_node_elems(const struct node *n, enum elem_kind *elems, unsigned cap)
{
	unsigned c = 0;
	for (unsigned r = 0; r < n->nres && c < cap; r++)
		elems[c++] = (enum elem_kind)n->types[r]->elem;
	for (unsigned i = 0; i < n->nops && c < cap; i++)
		elems[c++] = (enum elem_kind)op_type(n, i)->elem;
	return c;
}

bool backend_node_supported_by_kind(const struct backend *b, const struct node *n)
{
	enum elem_kind e[2 * IR_MAX_OPS + 8];
	unsigned ne = backend_node_elems(n, e, GLOW_ARRAY_SIZE(e));
	return b->is_op_supported(b, n->kind, e, ne);
}

bool backend_lower_nothing(const struct backend *b, const struct node *n)
{
	(void)b;
	(void)n;
	return false;
}
