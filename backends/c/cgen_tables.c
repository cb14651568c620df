/* cgen_tables.c - small helpers of the operator emitters: element-kind
 * tests, constant weights, axis splits and strides of a shape, and the
 * static int64/int tables a kernel call reads its shapes from. */
#include "backends/c/cgen.h"
#include "backends/c/cgen_ops.h"
#include "support/util.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

bool cg_is_float(const struct ir_value *v) { return v->type->elem == EK_FLOAT; }

/* The constant weight v is (the whole of it, not a view), or NULL. */
struct ir_weight *cg_const_weight(struct ir_value *v)
{
	struct ir_weight *w = ir_as_weight(v);
	return w && w->is_const ? w : NULL;
}

/* outer x d x inner around axis of t */
void cg_split_axis(const struct type *t, unsigned axis, uint64_t *outer, uint64_t *d, uint64_t *inner)
{
	*outer = *inner = 1;
	*d = axis < t->rank ? t->dims[axis] : 1;
	for (unsigned i = 0; i < t->rank; i++) {
		if (i < axis)
			*outer *= t->dims[i];
		else if (i > axis)
			*inner *= t->dims[i];
	}
}

/* Element strides of a row-major shape. */
void cg_strides_of(const struct type *t, int64_t *st)
{
	int64_t s = 1;
	for (unsigned i = t->rank; i-- > 0;) {
		st[i] = s;
		s *= (int64_t)t->dims[i];
	}
}

/* Emits a static int64 table and returns its number. */
unsigned cg_i64_table(struct cg *g, const int64_t *v, unsigned n)
{
	unsigned id = g->uniq++;
	os_printf(g->decls, "static const int64_t tb%u[] = {", id);
	for (unsigned i = 0; i < n; i++)
		os_printf(g->decls, "%s%" PRId64, i ? ", " : "", v[i]);
	os_printf(g->decls, "%s};\n", n ? "" : "0");
	return id;
}

/* Emits a static int table and returns its number. */
unsigned cg_int_table(struct cg *g, const int64_t *v, unsigned n)
{
	unsigned id = g->uniq++;
	os_printf(g->decls, "static const int ti%u[] = {", id);
	for (unsigned i = 0; i < n; i++)
		os_printf(g->decls, "%s%" PRId64, i ? ", " : "", v[i]);
	os_printf(g->decls, "};\n");
	return id;
}

/* dims of t as an int64 table */
unsigned cg_dims_table(struct cg *g, const struct type *t)
{
	int64_t d[GLOW_MAX_RANK];
	for (unsigned i = 0; i < t->rank; i++)
		d[i] = (int64_t)t->dims[i];
	return cg_i64_table(g, d, t->rank);
}

int cg_int_es(const struct ir_value *v)
{
	enum elem_kind k = (enum elem_kind)v->type->elem;
	return k == EK_I64 || k == EK_INDEX64 ? 8 : k == EK_I32 || k == EK_INDEX32 ? 4 : 0;
}
