/* nodectx.c - the per-node context the translators use (internal.h):
 * the node's inputs, outputs and attributes, in the current scope (struct
 * scope: a subgraph translated by ops_control.c). */
#include "import/onnx/internal.h"
#include "support/io.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- node context ---- */

unsigned imp_n_in(const onnx_node *n)
{
	size_t k = n->n_input;
	while (k > 0 && (!n->input[k - 1] || !*n->input[k - 1]))
		k--;
	return (unsigned)k;
}

struct tensor *imp_in_opt(struct importer *im, unsigned i)
{
	const onnx_node *n = im->node;
	if (i >= n->n_input || !n->input[i] || !*n->input[i])
		return NULL;
	return imp_t_lookup(im, n->input[i]);
}

struct tensor *imp_in_req(struct importer *im, unsigned i)
{
	struct tensor *t = imp_in_opt(im, i);
	if (!t)
		imp_op_err(im, "input %u is required", i);
	return t;
}

struct value imp_in_val(struct importer *im, unsigned i)
{
	struct tensor *t = imp_in_req(im, i);
	struct value none = {NULL, 0};
	return t ? imp_tval(im, t) : none;
}

int imp_in_float(struct importer *im, unsigned i, struct value *x, const struct type **t)
{
	*x = imp_in_val(im, i);
	if (!x->node)
		return -1;
	*t = val_type(*x);
	if (!elem_is_float((enum elem_kind)(*t)->elem))
		return imp_op_err(im, "input must be floating point");
	return 0;
}

int imp_float_op_start(struct importer *im, struct imp_float_op *f)
{
	f->name = imp_out_name(im, 0);
	return imp_in_float(im, 0, &f->x, &f->t);
}

const char *imp_out_name(struct importer *im, unsigned i)
{
	const onnx_node *n = im->node;
	return i < n->n_output && n->output[i] ? n->output[i] : "";
}

bool imp_float_input(struct importer *im, const struct tensor *x)
{
	if (!imp_dt_is_float(x->dtype) || imp_dt_elem(x->dtype) < 0) {
		imp_op_err(im, "input must be floating point, not %s", imp_dt_name(x->dtype));
		return false;
	}
	return true;
}

/* The uses map counts references by later nodes and graph outputs; an output
 * nobody reads need not be computed. */
bool imp_out_used(struct importer *im, unsigned i)
{
	const char *s = imp_out_name(im, i);
	return *s && strmap_get(&im->uses, s) != NULL;
}

struct tensor *imp_bind(struct importer *im, const char *name)
{
	struct tensor *t = arena_new(&im->scratch, struct tensor);
	t->name = name;
	strmap_put(im->inner ? &im->inner->tensors : &im->tensors, name, strlen(name), t);
	return t;
}

int imp_set_out(struct importer *im, unsigned i, struct value v)
{
	if (!v.node)
		return -1;
	const char *name = imp_out_name(im, i);
	if (!*name)
		return 0;
	const struct type *ty_ = val_type(v);
	struct tensor *t = imp_bind(im, name);
	t->dtype = imp_dt_of_elem(ty_->elem);
	t->rank = ty_->rank;
	memcpy(t->dims, ty_->dims, sizeof t->dims);
	t->v = v;
	return 0;
}

int imp_set_out_t(struct importer *im, unsigned i, struct tensor *src)
{
	if (!src)
		return -1;
	const char *name = imp_out_name(im, i);
	if (!*name)
		return 0;
	struct tensor *t = imp_bind(im, name);
	const char *keep = t->name;
	*t = *src;
	t->name = keep;
	return 0;
}

/* ---- attributes ---- */

const Onnx__AttributeProto *imp_attr(const onnx_node *n, const char *name)
{
	for (size_t i = 0; i < n->n_attribute; i++)
		if (n->attribute[i]->name && strcmp(n->attribute[i]->name, name) == 0)
			return n->attribute[i];
	return NULL;
}

int64_t imp_attr_i(const onnx_node *n, const char *name, int64_t def)
{
	const Onnx__AttributeProto *a = imp_attr(n, name);
	return a && a->has_i ? a->i : def;
}

double imp_attr_f(const onnx_node *n, const char *name, float def)
{
	const Onnx__AttributeProto *a = imp_attr(n, name);
	if (a && a->has_f)
		return imp_f32_short(a->f);
	if (a && a->has_i) /* some exporters write integral floats as ints */
		return (double)a->i;
	return imp_f32_short(def);
}

const char *imp_attr_s(struct importer *im, const onnx_node *n, const char *name, const char *def)
{
	const Onnx__AttributeProto *a = imp_attr(n, name);
	if (!a || !a->has_s)
		return def;
	return arena_strndup(&im->scratch, (const char *)a->s.data, a->s.len);
}

long imp_attr_ints(const onnx_node *n, const char *name, const int64_t **v)
{
	const Onnx__AttributeProto *a = imp_attr(n, name);
	*v = NULL;
	if (!a)
		return -1;
	*v = a->ints;
	return (long)a->n_ints;
}

long imp_attr_floats(const onnx_node *n, const char *name, const float **v)
{
	const Onnx__AttributeProto *a = imp_attr(n, name);
	*v = NULL;
	if (!a)
		return -1;
	*v = a->floats;
	return (long)a->n_floats;
}

int imp_norm_axis(struct importer *im, int64_t axis, unsigned rank, unsigned *out)
{
	int64_t a = axis < 0 ? axis + (int64_t)rank : axis;
	if (a < 0 || a >= (int64_t)rank)
		return imp_op_err(im, "axis %lld is out of range for rank %u", (long long)axis, rank);
	*out = (unsigned)a;
	return 0;
}

/* Resize and CenterCropPad share the axes attribute's checks;
 * only whether an empty list is allowed differs. */
int imp_attr_axes(struct importer *im, const onnx_node *n, unsigned rank, bool allow_empty, unsigned *ax,
		  unsigned *nax)
{
	const int64_t *av;
	long ac = imp_attr_ints(n, "axes", &av);
	if (ac < 0) {
		*nax = rank;
		for (unsigned k = 0; k < rank; k++)
			ax[k] = k;
		return 0;
	}
	if ((ac == 0 && !allow_empty) || ac > (long)rank)
		return imp_op_err(im, "axes has %ld entries for rank %u", ac, rank);
	*nax = (unsigned)ac;
	for (unsigned k = 0; k < *nax; k++) {
		if (imp_norm_axis(im, av[k], rank, &ax[k]))
			return -1;
		for (unsigned j = 0; j < k; j++)
			if (ax[j] == ax[k])
				return imp_op_err(im, "axis %u is repeated in axes", ax[k]);
	}
	return 0;
}

struct tensor *imp_in_axis(struct importer *im, const onnx_node *n, int64_t def, unsigned *axis)
{
	struct tensor *x = imp_in_req(im, 0);
	if (!x || imp_norm_axis(im, imp_attr_i(n, "axis", def), x->rank, axis))
		return NULL;
	return x;
}

const int64_t *imp_in_ints(struct importer *im, unsigned i, uint64_t *count)
{
	struct tensor *t = imp_in_req(im, i);
	if (!t)
		return NULL;
	const int64_t *v = imp_t_ints(im, t);
	if (!v || !imp_dt_is_int(t->dtype)) {
		imp_op_err(im, "input %u (\"%s\") must be an integer tensor known at import time", i, t->name);
		return NULL;
	}
	*count = imp_t_numel(t);
	return v;
}

const int64_t *imp_in_x_ints(struct importer *im, struct tensor **x, uint64_t *count)
{
	*x = imp_in_req(im, 0);
	const int64_t *v = imp_in_ints(im, 1, count);
	return *x ? v : NULL;
}
