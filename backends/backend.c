/* backend.c - what every backend shares: the input/output rule of an IR
 * function (backend.h states it), the element kinds of a node for
 * is_op_supported, and the struct backend members that backends answer
 * alike. The registry by name is registry.c (library glowbackends).
 */
#include "backends/backend.h"
#include "backends/interpreter/interp.h"
#include "support/hashmap.h"
#include "support/util.h"

#include <inttypes.h>
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
	/* an upload's device buffer stands for its placeholder (backend.h) */
	ir_for_each_instr(f, in) {
		if (in->kind != IK_copytodevice)
			continue;
		struct ir_value *dev = ir_value_root(in->ops[0].val, NULL), *host = ir_value_root(in->ops[1].val, NULL);
		void *s = dev && host && in->ops[0].val == dev && in->ops[1].val == host
				  ? u64map_get(&slot, (uint64_t)(uintptr_t)host)
				  : NULL;
		if (s && !u64map_get(&slot, (uint64_t)(uintptr_t)dev))
			u64map_put(&slot, (uint64_t)(uintptr_t)dev, s);
	}
	/* first use decides: read first (without initializer) -> input */
	bool *touched = xcalloc(cnt + 1, 1);
	ir_for_each_instr(f, in) {
		if (in->kind == IK_tensorview || in->kind == IK_alloc || in->kind == IK_copytodevice ||
		    in->kind == IK_devicewait || in->kind == IK_dealloc)
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

int backend_placeholders_init(struct backend_placeholders *p, struct ir_func *f, struct diag *d)
{
	p->w = xcalloc(f->nweights + 1, sizeof *p->w);
	p->init = xcalloc(f->nweights + 1, sizeof *p->init);
	p->is_input = xcalloc(f->nweights + 1, sizeof *p->is_input);
	p->n = 0;
	size_t nio;
	struct backend_io *io = backend_func_io(f, &nio);
	int rc = 0;
	/* backend_func_io lists the placeholders in the same order */
	for (size_t j = 0; j < nio && !rc; j++) {
		struct ir_weight *w = io[j].w;
		size_t i = p->n++;
		p->w[i] = w;
		p->is_input[i] = io[j].is_input;
		if (w->init == IR_INIT_NONE)
			continue;
		uint64_t n = type_bytes(w->v.type);
		p->init[i] = n < SIZE_MAX ? malloc((size_t)n + 1) : NULL;
		glow_big_pages(p->init[i], (size_t)n);
		if (!p->init[i])
			diag_error(d, w->v.loc, "cannot allocate the initial value of %%%s: %" PRIu64 " bytes", w->v.name,
				   n);
		if (!p->init[i] || interp_weight_init(f->mod, w, p->init[i], d))
			rc = -1;
	}
	free(io);
	return rc;
}

int backend_placeholder_fill(const struct backend_placeholders *p, size_t i, struct ir_func *f,
			     const struct backend_binding *binds, size_t nbinds, void *a, struct diag *d)
{
	struct ir_weight *w = p->w[i];
	const void *bound = NULL;
	for (size_t j = 0; j < nbinds && p->is_input[i]; j++)
		if (binds[j].w == w)
			bound = binds[j].data;
	size_t bytes = (size_t)type_bytes(w->v.type);
	if (bound)
		memcpy(a, bound, bytes);
	else if (p->init[i])
		memcpy(a, p->init[i], bytes);
	else if (interp_weight_init(f->mod, w, a, d))
		return -1;
	return 0;
}

void backend_placeholders_free(struct backend_placeholders *p)
{
	for (size_t i = 0; i < p->n; i++)
		free(p->init[i]);
	free(p->w);
	free(p->init);
	free(p->is_input);
	memset(p, 0, sizeof *p);
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
	/* control flow (If, Loop, Fn and Call: issue 18): no backend executes
	 * regions or calls yet, so the pipeline inlines, unrolls or selects them
	 * (inline, loop-unroll, if-to-select); a backend that executes them
	 * answers for itself */
	if (node_desc(n->kind)->nregions || n->kind == NK_Call)
		return false;
	return backend_node_supported_with_blocks(b, n);
}

bool backend_node_supported_with_blocks(const struct backend *b, const struct node *n)
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
