/* attr_access.h - the attribute accessors of both IRs, written once.
 *
 * A node (graph.h) and an instruction (ir.h) hold their attribute values
 * the same way: attrs, one union attr_val per row of their kind's
 * descriptor list, in table order. ATTR_ACCESSORS defines the typed getters
 * and setters over such an object (node_int, ir_set_ints, ...); each IR
 * instantiates it once, with its own slot lookup. Only graph.c and
 * lib/ir/ir.c include this.
 */
#ifndef GLOW_GRAPH_ATTR_ACCESS_H
#define GLOW_GRAPH_ATTR_ACCESS_H

#include "graph/graph.h"
#include "support/arena.h"
#include "support/util.h"

/* The internal bug of asking an object whose kind (an owner, "node" or
 * "instruction", of kind kind_name) has no attribute an for it (graph.c). */
GLOW_NORETURN void attr_missing(const char *owner, const char *kind_name, enum attr_name an);

/* The slot of attribute an among rows, the attributes of kind kind of an
 * owner's IR; one without it is a bug of the caller (the tables say which
 * kinds have which attributes), reported with kind_name(kind). */
static inline unsigned attr_slot_checked(const struct attr_desc *rows, enum attr_name an, const char *owner,
					 const char *(*kind_name)(unsigned), unsigned kind)
{
	int i = attr_desc_slot(rows, an);
	if (i < 0)
		attr_missing(owner, kind_name(kind), an);
	return (unsigned)i;
}

/* The getter and setter of a list attribute (FIELD ints or floats of union
 * attr_val, elements of type T) for ATTR_ACCESSORS. */
#define ATTR_LIST_ACCESSORS(PFX, OBJ, MOD, LOOKUP, FIELD, T)                                                     \
	const T *PFX##_##FIELD(const OBJ *o, enum attr_name an, unsigned *len)                                     \
	{                                                                                                          \
		const union attr_val *av = &o->attrs[LOOKUP(o->kind, an)];                                         \
		*len = av->FIELD.n;                                                                                \
		return av->FIELD.v;                                                                                \
	}                                                                                                          \
	void PFX##_set_##FIELD(MOD *m, OBJ *o, enum attr_name an, const T *v, unsigned len)                        \
	{                                                                                                          \
		union attr_val *av = &o->attrs[LOOKUP(o->kind, an)];                                               \
		av->FIELD.v = arena_memdup(&m->arena, v, len * sizeof(*v));                                        \
		av->FIELD.n = len;                                                                                 \
	}

/* Defines PFX_int, PFX_float, PFX_ints, PFX_floats and PFX_str, and the
 * setters PFX_set_int, PFX_set_float, PFX_set_ints, PFX_set_floats and
 * PFX_set_str, over objects of type OBJ (fields kind and attrs) in modules
 * of type MOD (field arena, which holds copied lists and strings). LOOKUP
 * (kind, an) is the slot of an among the kind's attributes and does not
 * return for a kind without it. A macro: the two IRs' objects are
 * different types with the same fields, and the accessors stay direct calls
 * (passes read attributes in their inner loops). Lists are copied, also
 * empty ones, so a list's pointer is never NULL once set. */
#define ATTR_ACCESSORS(PFX, OBJ, MOD, LOOKUP)                                                                    \
	int64_t PFX##_int(const OBJ *o, enum attr_name an) { return o->attrs[LOOKUP(o->kind, an)].i; }             \
	double PFX##_float(const OBJ *o, enum attr_name an) { return o->attrs[LOOKUP(o->kind, an)].f; }            \
	const char *PFX##_str(const OBJ *o, enum attr_name an) { return o->attrs[LOOKUP(o->kind, an)].s; }         \
	void PFX##_set_int(MOD *m, OBJ *o, enum attr_name an, int64_t v)                                           \
	{                                                                                                          \
		(void)m;                                                                                           \
		o->attrs[LOOKUP(o->kind, an)].i = v;                                                               \
	}                                                                                                          \
	void PFX##_set_float(MOD *m, OBJ *o, enum attr_name an, double v)                                          \
	{                                                                                                          \
		(void)m;                                                                                           \
		o->attrs[LOOKUP(o->kind, an)].f = v;                                                               \
	}                                                                                                          \
	void PFX##_set_str(MOD *m, OBJ *o, enum attr_name an, const char *s)                                       \
	{                                                                                                          \
		o->attrs[LOOKUP(o->kind, an)].s = arena_strdup(&m->arena, s);                                      \
	}                                                                                                          \
	ATTR_LIST_ACCESSORS(PFX, OBJ, MOD, LOOKUP, ints, int64_t)                                                  \
	ATTR_LIST_ACCESSORS(PFX, OBJ, MOD, LOOKUP, floats, double)

#endif
