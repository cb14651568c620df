/* constfold.c - constant folding: a pure node whose operands are all
 * constants is evaluated with the interpreter's kernels and its results
 * become constants.
 *
 * Operands count as constant when they are Constant storage or Splat nodes
 * (a Splat is a constant generator). A node is folded when:
 *   - its kind is pure (NF_PURE in Nodes.def): Save and QuantizationProfile
 *     write memory and are never folded; a standalone Splat is left alone
 *     (it is already as small as a constant can be);
 *   - it has no predicate;
 *   - its used results hold at most max-bytes bytes together (the pass
 *     option constant-fold{max-bytes=N}, by default 16 MiB), a
 *     bound on the memory and time one fold may take; larger nodes stay;
 *   - the kernel runs without a run-time error (a Gather index out of range
 *     stays in the graph, to fail where the program runs).
 *
 * Evaluation: the node runs as the instruction IRGen would emit for it,
 * through interp_exec on raw buffers (backends/interpreter/interp.h): the
 * instruction of the same name with operands mapped by the Graph column of
 * Instrs.def; MaxPool as maxpoolwithargmax (both results); Slice as
 * extracttensor; Reshape as a copy of the bytes; Concat and InsertTensor as
 * inserttensor into the result; TopK with its scratch buffer. The results
 * are therefore bit-identical to what the interpreter computes at run time.
 *
 * Splats stay small. When every operand is uniform (a Splat node, a splat
 * or zero constant, or a dense constant whose elements are all the same
 * bits) and the kind is elementwise, the kernel runs on one element and
 * the result is a splat constant; data movement kinds of one uniform
 * operand (Reshape, Transpose, Broadcast, Tile, Slice, Flip, SpaceToDepth,
 * DepthToSpace, ResizeNearest) and Concat of equal splats give a splat of
 * the same element without running anything. Otherwise a dense result
 * whose elements all have the same bits is still stored as a splat
 * constant (NaN results stay dense, so every bit survives).
 *
 * If and Loop are left to fold-if and loop-unroll; the nodes inside their
 * regions fold like any (the pass runs on each region).
 *
 * Results get new constants of exactly the result types, named after the
 * node; unused results get none. The folded node is erased; dce removes
 * constants nothing uses any more.
 *
 * Requires: a verified function. Preserves: validity, result types, and
 * every value bit for bit.
 */
#include "backends/interpreter/interp.h"
#include "passes/kindfacts.h"
#include "passes/pass.h"
#include "passes/passutil.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The largest total size of the results of one folded node. */

/* One operand or result buffer of a fold. */
struct cf_buf {
	const struct type *t;
	uint8_t *p;
	bool owned; /* p was allocated here */
};

/* Where operand i of instruction id comes from under the Graph column of
 * Instrs.def: *r the node result it writes, *j the node operand it reads
 * (-1 each when neither; the last match wins, as a slot is named once).
 * The one mapping both evaluators below (one element, full buffers) use. */
static void cf_slot(const struct instr_desc *id, unsigned i, int *r, int *j)
{
	*r = *j = -1;
	for (unsigned x = 0; x < id->graph_nres; x++)
		if (id->graph_res[x] == (int)i)
			*r = (int)x;
	for (unsigned x = 0; x < id->graph_nops; x++)
		if (id->graph_ops[x] == (int)i)
			*j = (int)x;
}

/* Node kind -> instruction kind of the same name in lower case (-1: none),
 * filled once per pass run. */
struct cf_kinds {
	int ik[NK_COUNT];
	uint64_t max_bytes; /* constant-fold{max-bytes=} */
};

static void cf_map_kinds(struct cf_kinds *k)
{
	for (unsigned i = 0; i < NK_COUNT; i++) {
		/* a backend-specific kind (BACKEND.Kind) runs on its backend only */
		int ik = strchr(node_kind_name(i), '.') ? -1 : instr_kind_named_like(i);
		k->ik[i] = ik >= 0 && instr_desc((unsigned)ik)->graph_kind == (int)i ? ik : -1;
	}
	k->ik[NK_MaxPool] = IK_maxpoolwithargmax;
	k->ik[NK_Slice] = IK_extracttensor;
}

/* Whether v is a constant operand: Constant storage or a Splat node. */
static bool cf_is_const(const struct node *n)
{
	return n->kind == NK_Constant || (n->kind == NK_Splat && !node_has_pred(n));
}

/* Runs a Splat of type t with value x into p (type_bytes(t) bytes). */
static void cf_run_splat(const struct type *t, double x, void *p)
{
	union attr_val a[1];
	a[0].f = x;
	struct interp_arg op = {t, p};
	int rc = interp_exec(IK_splat, &op, a, NULL, 0);
	glow_assert(rc == 0);
}

/* Stores the integer v as the one element of kind k at out (quantized
 * kinds: the stored integer), wrapping to the kind's width. */
static void cf_store_int(enum elem_kind k, uint8_t *out, int64_t v)
{
	switch (elem_size(k)) {
	case 1: out[0] = k == EK_BOOL ? v != 0 : (uint8_t)v; break;
	case 2: { int16_t x = (int16_t)v; memcpy(out, &x, 2); break; }
	case 4: { int32_t x = (int32_t)v; memcpy(out, &x, 4); break; }
	default: memcpy(out, &v, 8); break;
	}
}

/* The inverse of cf_store_int: the stored integer, sign-extended (qui8
 * and bool zero-extended). */
static int64_t cf_load_int(enum elem_kind k, const uint8_t *p)
{
	switch (elem_size(k)) {
	case 1: return k == EK_QUI8 || k == EK_BOOL ? (int64_t)p[0] : (int64_t)(int8_t)p[0];
	case 2: { int16_t x; memcpy(&x, p, 2); return x; }
	case 4: { int32_t x; memcpy(&x, p, 4); return x; }
	default: { int64_t x; memcpy(&x, p, 8); return x; }
	}
}

/* If the value of node d (a constant operand) is uniform, writes its one
 * element (of d's element kind) to out and returns true. Splat and zero
 * constants follow the materialization rule of graph/constant.c without
 * materializing; dense payloads are scanned. */
static bool cf_uniform(struct module *m, struct node *d, uint64_t *out)
{
	const struct type *t = node_type(d);
	enum elem_kind k = (enum elem_kind)t->elem;
	size_t es = elem_size(k);
	uint64_t n = type_numel(t);
	uint8_t *o = (uint8_t *)out;
	if (n == 0)
		return false;
	*out = 0;
	if (d->kind == NK_Splat) {
		uint64_t one = 1;
		cf_run_splat(type_with_dims(m->types, t, &one, 1), node_float(d, AN_value), out);
		return true;
	}
	struct constant *c = as_constant(d);
	if (c->init == INIT_SPLAT) {
		if (elem_is_float(k))
			pu_store(t, o, 0, c->splat_f);
		else
			cf_store_int(k, o, c->splat_i);
		return true;
	}
	if (c->init == INIT_ZERO) {
		/* the real value 0: a quantized kind stores its offset */
		if (elem_is_quantized(k))
			cf_store_int(k, o, t->offset);
		return true;
	}
	if (!c->data)
		return false; /* xavier or file, not read yet: not uniform in general */
	const uint8_t *p = c->data;
	for (uint64_t i = 1; i < n; i++)
		if (memcmp(p, p + i * es, es) != 0)
			return false;
	memcpy(o, p, es);
	return true;
}

/* A new constant of type t holding data, a splat when every element has the
 * same bits (and is not a NaN). */
static struct constant *cf_make_constant(struct module *m, const struct type *t, const uint8_t *data,
					 bool uniform, const char *base)
{
	enum elem_kind k = (enum elem_kind)t->elem;
	size_t es = elem_size(k);
	uint64_t n = type_numel(t);
	if (!uniform && n > 0) {
		uniform = true;
		for (uint64_t i = 1; i < n && uniform; i++)
			uniform = memcmp(data, data + i * es, es) == 0;
	}
	if (uniform && n > 0 && !(elem_is_float(k) && isnan(pu_load(t, data, 0)))) {
		struct constant *c = module_add_constant(m, module_fresh_name(m, base), t, LOC_NONE);
		glow_assert(c);
		c->init = INIT_SPLAT;
		if (elem_is_float(k))
			c->splat_f = pu_load(t, data, 0);
		else
			c->splat_i = cf_load_int(k, data);
		return c;
	}
	if (uniform && n > 0) {
		/* a NaN splat: dense, every bit kept */
		uint8_t *full = xmalloc((size_t)type_bytes(t));
		for (uint64_t i = 0; i < n; i++)
			memcpy(full + i * es, data, es);
		struct constant *c = pu_new_constant(m, t, full, base);
		free(full);
		return c;
	}
	return pu_new_constant(m, t, data, base);
}

/* Folding of a node whose operands are all uniform. Writes one element per
 * result into res[r] (element size of the result) and returns 1; 0 when
 * this shortcut does not apply; -1 on a kernel error. */
static int cf_fold_uniform(struct module *m, struct node *n, const struct cf_kinds *ks, uint64_t *ops,
			   uint64_t *res)
{
	const struct node_desc *nd = node_desc(n->kind);
	if (n->nops == 0 || n->nres != 1)
		return 0;
	if (pk_has(n->kind, PK_UNIFORM_MOVES) && n->nops == 1 && type_same_elem(op_type(n, 0), node_type(n))) {
		res[0] = ops[0];
		return 1;
	}
	if (n->kind == NK_Concat) {
		for (unsigned i = 1; i < n->nops; i++)
			if (ops[0] != ops[i])
				return 0;
		res[0] = ops[0];
		return 1;
	}
	if (!(nd->flags & NF_EW) || ks->ik[n->kind] < 0)
		return 0;
	/* the kernel on one element: every operand and the result as <1> */
	const struct instr_desc *id = instr_desc((unsigned)ks->ik[n->kind]);
	struct interp_arg args[IR_MAX_OPS];
	uint64_t one = 1;
	for (unsigned i = 0; i < id->nops; i++) {
		int r, j;
		cf_slot(id, i, &r, &j);
		if (r >= 0) {
			args[i].t = type_with_dims(m->types, n->types[r], &one, 1);
			args[i].p = &res[r];
		} else if (j >= 0) {
			args[i].t = type_with_dims(m->types, op_type(n, (unsigned)j), &one, 1);
			args[i].p = &ops[j];
		} else {
			return 0;
		}
	}
	return interp_exec((unsigned)ks->ik[n->kind], args, n->attrs, NULL, 0) == 0 ? 1 : -1;
}

/* Runs node n on full buffers: ops[i] are its operands, res[r] its results
 * (zeroed). Returns 0, or nonzero when the node cannot be evaluated (no
 * kernel, or a run-time error). */
static int cf_eval(struct module *m, struct node *n, const struct cf_kinds *ks, struct cf_buf *ops,
		   struct cf_buf *res)
{
	switch (n->kind) {
	case NK_Reshape:
		memcpy(res[0].p, ops[0].p, (size_t)type_bytes(res[0].t));
		return 0;
	case NK_Concat:
	case NK_InsertTensor: {
		unsigned rank = res[0].t->rank;
		struct interp_arg a[2] = {{res[0].t, res[0].p}, {NULL, NULL}};
		if (n->kind == NK_InsertTensor) {
			memcpy(res[0].p, ops[0].p, (size_t)type_bytes(res[0].t));
			a[1].t = ops[1].t;
			a[1].p = ops[1].p;
			return interp_exec(IK_inserttensor, a, n->attrs, NULL, 0);
		}
		int64_t start[GLOW_MAX_RANK] = {0};
		int64_t dim = node_int(n, AN_dim);
		union attr_val at[3];
		at[0].ints.v = start;
		at[0].ints.n = rank;
		at[1].i = 1;
		at[2].i = 0;
		for (unsigned i = 0; i < n->nops; i++) {
			a[1].t = ops[i].t;
			a[1].p = ops[i].p;
			int rc = interp_exec(IK_inserttensor, a, at, NULL, 0);
			if (rc)
				return rc;
			start[dim] += (int64_t)ops[i].t->dims[dim];
		}
		return 0;
	}
	default: break;
	}
	int ik = ks->ik[n->kind];
	if (ik < 0)
		return 1;
	const struct instr_desc *id = instr_desc((unsigned)ik);
	struct interp_arg args[IR_MAX_OPS];
	uint8_t *scratch = NULL;
	for (unsigned i = 0; i < id->nops; i++) {
		int r, j;
		cf_slot(id, i, &r, &j);
		if (r >= 0) {
			args[i].t = res[r].t;
			args[i].p = res[r].p;
		} else if (j >= 0) {
			args[i].t = ops[j].t;
			args[i].p = ops[j].p;
		} else if (id->op_quals[i] == IQ_SCRATCH && !scratch && n->kind == NK_TopK) {
			/* one row of the input and an index64 per element of it */
			const struct type *src = ops[0].t;
			uint64_t es = elem_size((enum elem_kind)src->elem);
			uint64_t row = src->rank ? src->dims[src->rank - 1] : 1;
			uint64_t cnt = row * (es + 8) / es + 1;
			args[i].t = type_with_dims(m->types, src, &cnt, 1);
			scratch = xcalloc((size_t)(cnt * es), 1);
			args[i].p = scratch;
		} else {
			free(scratch);
			return 1;
		}
	}
	int rc = interp_exec((unsigned)ik, args, n->attrs, NULL, 0);
	free(scratch);
	return rc;
}

/* Replaces result r of n by constant c (if it has uses). */
static void cf_replace(struct node *n, unsigned r, struct constant *c)
{
	value_replace_all_uses(node_val(n, r), node_val(&c->n, 0));
}

/* Folds n if it qualifies; returns true if it did. Sets *err after an
 * unreadable weight was reported. */
static bool cf_fold(struct func *f, struct node *n, const struct cf_kinds *ks, struct diag *d, bool *err)
{
	struct module *m = f->mod;
	const struct node_desc *nd = node_desc(n->kind);
	if (!(nd->flags & NF_PURE) || n->kind == NK_Splat || node_has_pred(n) || n->nres == 0 ||
	    n->nops > IR_MAX_OPS || nd->nregions)
		return false;
	for (unsigned i = 0; i < n->nops; i++)
		if (!cf_is_const(n->ops[i].def))
			return false;
	uint64_t bytes = 0;
	bool used = false;
	for (unsigned r = 0; r < n->nres; r++) {
		if (node_num_uses(n, (int)r) == 0)
			continue;
		used = true;
		bytes += type_bytes(n->types[r]);
	}
	if (!used)
		return false;

	/* the uniform shortcut: constant work whatever the size */
	uint64_t uops[IR_MAX_OPS], ures[IR_MAX_OPS] = {0};
	bool all_uniform = n->nres == 1;
	for (unsigned i = 0; i < n->nops && all_uniform; i++)
		all_uniform = cf_uniform(m, n->ops[i].def, &uops[i]);
	if (all_uniform) {
		int rc = cf_fold_uniform(m, n, ks, uops, ures);
		if (rc < 0)
			return false;
		if (rc > 0) {
			cf_replace(n, 0, cf_make_constant(m, node_type(n), (const uint8_t *)&ures[0], true, n->name));
			node_erase(f, n);
			return true;
		}
	}
	if (bytes > ks->max_bytes)
		return false;

	/* the full evaluation */
	struct cf_buf ops[IR_MAX_OPS], res[IR_MAX_OPS];
	memset(ops, 0, sizeof ops);
	memset(res, 0, sizeof res);
	bool ok = true;
	for (unsigned i = 0; i < n->nops && ok; i++) {
		struct node *def = n->ops[i].def;
		ops[i].t = node_type(def);
		if (def->kind == NK_Splat) {
			ops[i].p = xmalloc((size_t)type_bytes(ops[i].t) + 1);
			ops[i].owned = true;
			cf_run_splat(ops[i].t, node_float(def, AN_value), ops[i].p);
		} else {
			const uint8_t *p = constant_data(m, as_constant(def), d);
			if (!p) {
				*err = true;
				ok = false;
				break;
			}
			/* read-only operand: the kernels never write @in buffers */
			ops[i].p = (uint8_t *)(uintptr_t)p;
		}
	}
	for (unsigned r = 0; r < n->nres && ok; r++) {
		res[r].t = n->types[r];
		res[r].p = xcalloc((size_t)type_bytes(res[r].t) + 1, 1);
		res[r].owned = true;
	}
	bool folded = false;
	if (ok && cf_eval(m, n, ks, ops, res) == 0) {
		for (unsigned r = 0; r < n->nres; r++)
			if (node_num_uses(n, (int)r))
				cf_replace(n, r, cf_make_constant(m, res[r].t, res[r].p, false, n->name));
		node_erase(f, n);
		folded = true;
	}
	for (unsigned i = 0; i < IR_MAX_OPS; i++) {
		if (ops[i].owned)
			free(ops[i].p);
		if (res[i].owned)
			free(res[i].p);
	}
	return folded;
}

bool constant_fold_run(struct func *f, struct pass_ctx *ctx)
{
	struct cf_kinds ks;
	cf_map_kinds(&ks);
	ks.max_bytes = (uint64_t)pass_opt_int(ctx, POPT_CF_MAX_BYTES);
	uint64_t folded = 0;
	bool err = false;
	/* list order is an evaluation order: a folded node's users come later
	 * and see its constants, so chains fold in one sweep */
	func_for_each_safe(f, n, next) {
		if (cf_fold(f, n, &ks, ctx->diag, &err))
			folded++;
		if (err)
			break;
	}
	pass_stat(ctx, "Number of nodes folded into constants", folded);
	return folded != 0;
}
