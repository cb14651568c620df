/* ir.c - instruction IR modules, functions, weights and the builder.
 *
 * A function's name table maps every weight and named instruction to its
 * value; builder calls claim a name with one hash (find or insert). A
 * reader may defer the table (ir_func_defer_names) and fill it only when a
 * builder call needs it. An instruction is one arena block: the struct, its
 * operands, its attributes and, when the reader names it, its name.
 */
#define _POSIX_C_SOURCE 200809L
#include "graph/attr_access.h"
#include "ir/ir.h"
#include "support/dlist.h"
#include "support/io.h"
#include "support/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- modules and functions ---- */

struct ir_module *ir_module_create(struct type_ctx *types)
{
	instr_desc_init();
	struct ir_module *m = xcalloc(1, sizeof(*m));
	arena_init(&m->arena);
	strmap_init(&m->func_names);
	m->types = types;
	return m;
}

void ir_module_destroy(struct ir_module *m)
{
	if (!m)
		return;
	for (size_t i = 0; i < m->nfuncs; i++)
		strmap_free(&m->funcs[i]->names);
	strmap_free(&m->func_names);
	free(m->funcs);
	free(m->base_dir);
	arena_free(&m->arena);
	free(m);
}

struct init_spec ir_weight_init_spec(const struct ir_weight *w) { return INIT_SPEC_OF(w, w->init); }

void ir_module_set_base_dir(struct ir_module *m, const char *path)
{
	free(m->base_dir);
	m->base_dir = path_dir(path);
}

struct ir_func *ir_module_find_func(struct ir_module *m, const char *name)
{
	return strmap_get(&m->func_names, name);
}

struct ir_func *ir_func_create(struct ir_module *m, const char *name, struct loc loc)
{
	if (ir_module_find_func(m, name))
		return NULL;
	struct ir_func *f = arena_new(&m->arena, struct ir_func);
	f->mod = m;
	f->name = arena_strdup(&m->arena, name);
	f->loc = loc;
	strmap_init(&f->names);
	m->funcs = xgrow(m->funcs, &m->capfuncs, m->nfuncs + 1, sizeof(*m->funcs));
	m->funcs[m->nfuncs++] = f;
	strmap_put(&m->func_names, f->name, strlen(f->name), f);
	return f;
}

struct ir_value *ir_func_find(struct ir_func *f, const char *name, size_t len)
{
	ir_func_index_names(f);
	return strmap_getn(&f->names, name, len);
}

static bool name_taken(const void *ctx, const char *s, size_t len)
{
	const struct ir_func *f = ctx;
	return strmap_getn(&f->names, s, len) != NULL;
}

const char *ir_fresh_name(struct ir_func *f, const char *base)
{
	ir_func_index_names(f);
	return name_fresh(&f->mod->arena, base, &f->uniq, name_taken, f);
}

static void name_put(struct ir_func *f, struct ir_value *v)
{
	ir_func_index_names(f);
	if (v->name)
		strmap_put(&f->names, v->name, strlen(v->name), v);
}

void ir_func_defer_names(struct ir_func *f)
{
	glow_assert(f->names.len == 0);
	f->names_deferred = true;
}

void ir_func_index_names(struct ir_func *f)
{
	if (!f->names_deferred)
		return;
	f->names_deferred = false;
	strmap_reserve(&f->names, f->nweights + f->ninstrs);
	ir_for_each_weight(f, w)
		name_put(f, &w->v);
	ir_for_each_instr(f, in)
		name_put(f, &in->v);
}

/* Claims `name` for a new definition with one hash: its copy in the arena,
 * or NULL if the name is taken. *slot is then the value slot to fill. */
static const char *name_claim(struct ir_func *f, const char *name, void ***slot)
{
	ir_func_index_names(f);
	int inserted;
	void **s = strmap_slot(&f->names, name, strlen(name), &inserted);
	if (*s)
		return NULL;
	char *copy = arena_strdup(&f->mod->arena, name);
	if (inserted)
		strmap_rekey(s, copy);
	*slot = s;
	return copy;
}

/* ---- weights ---- */

static struct ir_weight *weight_new(struct ir_func *f, const char *name, const struct type *t, bool is_const,
				    struct loc loc)
{
	struct ir_weight *w = arena_new(&f->mod->arena, struct ir_weight);
	w->v.name = name;
	w->v.type = t;
	w->v.loc = loc;
	w->v.vkind = IV_WEIGHT;
	w->is_const = is_const;
	w->init = IR_INIT_NONE;
	w->offset = -1;
	DLIST_APPEND(f->wfirst, f->wlast, w);
	f->nweights++;
	return w;
}

struct ir_weight *ir_weight_create(struct ir_func *f, const char *name, const struct type *t, bool is_const,
				   struct loc loc)
{
	if (!name) {
		struct ir_weight *w = weight_new(f, ir_fresh_name(f, "w"), t, is_const, loc);
		name_put(f, &w->v);
		return w;
	}
	void **slot;
	const char *stable = name_claim(f, name, &slot);
	if (!stable)
		return NULL;
	struct ir_weight *w = weight_new(f, stable, t, is_const, loc);
	*slot = &w->v;
	return w;
}

struct ir_weight *ir_weight_create_named(struct ir_func *f, const char *name, size_t len, const struct type *t,
					 bool is_const, struct loc loc)
{
	glow_assert(f->names_deferred);
	return weight_new(f, arena_strndup(&f->mod->arena, name, len), t, is_const, loc);
}

void ir_weight_set_splat(struct ir_weight *w, double fv, int64_t iv)
{
	w->init = INIT_SPLAT;
	w->splat_f = fv;
	w->splat_i = iv;
}

void ir_weight_set_zero(struct ir_weight *w) { w->init = INIT_ZERO; }

void ir_weight_set_xavier(struct ir_weight *w, double fan_in, uint64_t seed)
{
	w->init = INIT_XAVIER;
	w->fan_in = fan_in;
	w->seed = seed;
}

void ir_weight_set_file(struct ir_module *m, struct ir_weight *w, const char *path, uint64_t offset)
{
	w->init = INIT_FILE;
	w->file = arena_strdup(&m->arena, path);
	w->file_offset = offset;
}

void ir_weight_set_data(struct ir_module *m, struct ir_weight *w, const void *data)
{
	w->init = INIT_DENSE;
	w->data = arena_memdup(&m->arena, data, (size_t)type_bytes(w->v.type));
}

/* ---- attributes ---- */

int instr_attr_slot(unsigned kind, enum attr_name an) { return attr_desc_slot(instr_desc(kind)->attrs, an); }

/* The slot of attribute an of an instruction kind (attr_slot_checked). */
static unsigned attr_lookup(unsigned kind, enum attr_name an)
{
	return attr_slot_checked(instr_desc(kind)->attrs, an, "instruction", instr_kind_name, kind);
}

ATTR_ACCESSORS(ir, struct ir_instr, struct ir_module, attr_lookup)

/* ---- instructions ---- */

static void list_insert(struct ir_func *f, struct ir_instr *in, struct ir_instr *before)
{
	DLIST_INSERT(f->first, f->last, in, before);
}

static void list_remove(struct ir_func *f, struct ir_instr *in)
{
	DLIST_REMOVE(f->first, f->last, in);
}

_Static_assert(_Alignof(struct ir_instr) <= 8 && _Alignof(union attr_val) <= 8,
	       "instruction blocks come from arena_alloc8");

static size_t instr_attrs_offset(unsigned nops)
{
	size_t head = sizeof(struct ir_instr) + nops * sizeof(struct ir_operand);
	return (head + _Alignof(union attr_val) - 1) & ~(size_t)(_Alignof(union attr_val) - 1);
}

/* where the name bytes of a block from instr_new start */
static size_t instr_name_offset(unsigned kind, unsigned nops)
{
	return instr_attrs_offset(nops) + instr_desc(kind)->nattrs * sizeof(union attr_val);
}

/* A new instruction, unnamed and unlinked. The instruction, its operands,
 * its attributes and name_bytes more (for its name) are one arena block,
 * 8-byte aligned (a million instructions save 8 MB over 16). */
static struct ir_instr *instr_new(struct ir_func *f, unsigned kind, const struct type *type,
				  struct ir_value *const *ops, unsigned nops, size_t name_bytes, struct loc loc)
{
	const struct instr_desc *d = instr_desc(kind);
	glow_assert(kind < IK_COUNT && nops == d->nops);
	glow_assert(!(d->flags & IF_TYPED) == !type);
	size_t head = instr_attrs_offset(nops);
	char *block = arena_alloc8(&f->mod->arena, instr_name_offset(kind, nops) + name_bytes);
	struct ir_instr *in = (struct ir_instr *)(void *)block;
	memset(in, 0, sizeof(*in));
	in->kind = (uint16_t)kind;
	in->nops = (uint8_t)nops;
	in->offset = -1;
	in->v.type = type;
	in->v.loc = loc;
	in->v.vkind = kind == IK_alloc ? IV_ALLOC : kind == IK_tensorview ? IV_VIEW : IV_INSTR;
	if (d->nattrs) {
		in->attrs = (union attr_val *)(void *)(block + head);
		attr_rows_defaults(instr_desc(kind)->attrs, instr_desc(kind)->nattrs, in->attrs, NULL);
	}
	for (unsigned i = 0; i < nops; i++) {
		glow_assert(ops[i] && ir_value_is_buffer(ops[i]));
		in->ops[i].val = ops[i];
		in->ops[i].qual = (uint8_t)ir_qual_written(d->op_quals[i]);
	}
	return in;
}

struct ir_instr *ir_instr_create(struct ir_func *f, unsigned kind, const char *name, const struct type *type,
				 struct ir_value *const *ops, unsigned nops, struct ir_instr *before, struct loc loc)
{
	struct ir_instr *in = instr_new(f, kind, type, ops, nops, 0, loc);
	void **slot;
	if (name && (in->v.name = name_claim(f, name, &slot)) != NULL) {
		*slot = &in->v;
	} else if (name || (instr_desc(kind)->flags & IF_TYPED)) {
		in->v.name = ir_fresh_name(f, name ? name : instr_desc(kind)->name);
		name_put(f, &in->v);
	}
	list_insert(f, in, before);
	f->ninstrs++;
	return in;
}

struct ir_instr *ir_instr_create_named(struct ir_func *f, unsigned kind, const char *name, size_t len,
				       const struct type *type, struct ir_value *const *ops, unsigned nops,
				       struct loc loc)
{
	glow_assert(f->names_deferred);
	struct ir_instr *in = instr_new(f, kind, type, ops, nops, len + 1, loc);
	char *copy = (char *)in + instr_name_offset(kind, nops);
	memcpy(copy, name, len);
	copy[len] = 0;
	in->v.name = copy;
	list_insert(f, in, NULL);
	f->ninstrs++;
	return in;
}

struct ir_instr *ir_alloc(struct ir_func *f, const char *name, const struct type *t, struct ir_instr *before,
			  struct loc loc)
{
	return ir_instr_create(f, IK_alloc, name, t, NULL, 0, before, loc);
}

struct ir_instr *ir_dealloc(struct ir_func *f, struct ir_instr *alloc, struct ir_instr *before, struct loc loc)
{
	struct ir_value *op = &alloc->v;
	return ir_instr_create(f, IK_dealloc, NULL, NULL, &op, 1, before, loc);
}

struct ir_instr *ir_tensorview(struct ir_func *f, const char *name, const struct type *t, struct ir_value *src,
			       const int64_t *offsets, unsigned noffsets, struct ir_instr *before, struct loc loc)
{
	struct ir_instr *in = ir_instr_create(f, IK_tensorview, name, t, &src, 1, before, loc);
	ir_set_ints(f->mod, in, AN_offsets, offsets, noffsets);
	return in;
}

void ir_set_operand(struct ir_instr *in, unsigned i, struct ir_value *v)
{
	glow_assert(i < in->nops && v && ir_value_is_buffer(v));
	in->ops[i].val = v;
}

void ir_instr_erase(struct ir_func *f, struct ir_instr *in)
{
	list_remove(f, in);
	if (!f->names_deferred && in->v.name && strmap_get(&f->names, in->v.name) == &in->v)
		strmap_del(&f->names, in->v.name, strlen(in->v.name));
	f->ninstrs--;
	in->bits |= IR_ERASED;
}

void ir_instr_move_before(struct ir_func *f, struct ir_instr *in, struct ir_instr *before)
{
	if (in == before)
		return;
	list_remove(f, in);
	list_insert(f, in, before);
}

/* ---- views ---- */

/* Linear element offset of a view in its source (row-major strides of the
 * source's shape). */
static uint64_t view_elem_offset(const struct ir_instr *view)
{
	const struct type *st = view->ops[0].val->type;
	const union attr_val *a = &view->attrs[0];
	uint64_t off = 0, stride = 1;
	for (unsigned i = st->rank; i-- > 0;) {
		if (i < a->ints.n)
			off += (uint64_t)a->ints.v[i] * stride;
		stride *= st->dims[i];
	}
	return off;
}

struct ir_value *ir_value_root(struct ir_value *v, uint64_t *byte_offset)
{
	uint64_t off = 0;
	for (unsigned depth = 0; v && depth < 1u << 20; depth++) {
		if (v->vkind == IV_WEIGHT || v->vkind == IV_ALLOC) {
			if (byte_offset)
				*byte_offset = off;
			return v;
		}
		if (v->vkind != IV_VIEW)
			return NULL;
		struct ir_instr *view = ir_as_instr(v);
		struct ir_value *src = view->ops[0].val;
		off += view_elem_offset(view) * elem_size((enum elem_kind)src->type->elem);
		v = src;
	}
	return NULL;
}
