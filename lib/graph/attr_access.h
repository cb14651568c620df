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
	const int64_t *PFX##_ints(const OBJ *o, enum attr_name an, unsigned *len)                                  \
	{                                                                                                          \
		const union attr_val *av = &o->attrs[LOOKUP(o->kind, an)];                                         \
		*len = av->ints.n;                                                                                 \
		return av->ints.v;                                                                                 \
	}                                                                                                          \
	const double *PFX##_floats(const OBJ *o, enum attr_name an, unsigned *len)                                 \
	{                                                                                                          \
		const union attr_val *av = &o->attrs[LOOKUP(o->kind, an)];                                         \
		*len = av->floats.n;                                                                               \
		return av->floats.v;                                                                               \
	}                                                                                                          \
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
	void PFX##_set_ints(MOD *m, OBJ *o, enum attr_name an, const int64_t *v, unsigned len)                     \
	{                                                                                                          \
		union attr_val *av = &o->attrs[LOOKUP(o->kind, an)];                                               \
		av->ints.v = arena_memdup(&m->arena, v, len * sizeof(*v));                                         \
		av->ints.n = len;                                                                                  \
	}                                                                                                          \
	void PFX##_set_floats(MOD *m, OBJ *o, enum attr_name an, const double *v, unsigned len)                    \
	{                                                                                                          \
		union attr_val *av = &o->attrs[LOOKUP(o->kind, an)];                                               \
		av->floats.v = arena_memdup(&m->arena, v, len * sizeof(*v));                                       \
		av->floats.n = len;                                                                                \
	}                                                                                                          \
	void PFX##_set_str(MOD *m, OBJ *o, enum attr_name an, const char *s)                                       \
	{                                                                                                          \
		o->attrs[LOOKUP(o->kind, an)].s = arena_strdup(&m->arena, s);                                      \
	}

#endif
