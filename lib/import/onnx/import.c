/* import.c - the importer's driver: unpacks the ModelProto, checks every
 * node's operator against the op table (dispatch.c) and reports all
 * unsupported ones at once, creates placeholders for the graph inputs,
 * translates the nodes in order (dispatch.c), saves the graph outputs into
 * placeholders named as the ONNX outputs, and verifies. The translators'
 * per-node context is nodectx.c.
 */
#include "import/onnx/internal.h"
#include "passes/fold-qdq.h"
#include "support/io.h"
#include "support/suggest.h"
#include "support/textparse.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Protobuf messages are limited to 2 GiB; larger inputs are not ONNX files. */
#define ONNX_MAX_BYTES ((size_t)INT32_MAX)

int64_t imp_bound_dim(struct importer *im, const char *param, bool *ok)
{
	for (size_t i = 0; i < im->opts->ndims; i++)
		if (strcmp(im->opts->dims[i].name, param) == 0)
			return im->opts->dims[i].value;
	*ok = false;
	return 0;
}

static const struct onnx_frozen_input *frozen_input(struct importer *im, const char *name)
{
	for (size_t i = 0; i < im->opts->nfrozen; i++)
		if (strcmp(im->opts->frozen[i].name, name) == 0)
			return &im->opts->frozen[i];
	return NULL;
}

static const struct onnx_input_shape *input_shape(struct importer *im, const char *name)
{
	for (size_t i = 0; i < im->opts->nshapes; i++)
		if (strcmp(im->opts->shapes[i].name, name) == 0)
			return &im->opts->shapes[i];
	return NULL;
}

/* Graph input vi bound to the known value fz: checked against the declared
 * element type and numeric dimensions, then a known tensor (it replaces an
 * initializer of the same name). */
static int add_frozen(struct importer *im, const Onnx__ValueInfoProto *vi, const struct onnx_frozen_input *fz)
{
	const char *name = vi->name;
	const Onnx__TypeProto *tp = vi->type;
	const Onnx__TypeProto__Tensor *tt =
		tp && tp->value_case == ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE ? tp->tensor_type : NULL;
	if (!tt)
		return imp_op_err(im, "-freeze-input %s: the graph input is not a tensor", name);
	if (tt->has_elem_type && tt->elem_type != fz->dtype)
		return imp_op_err(im, "-freeze-input %s: the value is %s but the graph input is %s", name,
			      imp_dt_name(fz->dtype), imp_dt_name(tt->elem_type));
	if (imp_dt_size(fz->dtype) == 0)
		return imp_op_err(im, "-freeze-input %s: element type %s is not supported", name, imp_dt_name(fz->dtype));
	if (tt->shape) {
		bool ok = tt->shape->n_dim == fz->rank;
		for (unsigned i = 0; ok && i < fz->rank; i++) {
			const Onnx__TensorShapeProto__Dimension *dm = tt->shape->dim[i];
			ok = dm->value_case != ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE ||
			     (dm->dim_value >= 0 && (uint64_t)dm->dim_value == fz->dims[i]);
		}
		if (!ok)
			return imp_op_err(im, "-freeze-input %s: the value's shape does not match the graph input's", name);
	}
	struct tensor *t = imp_bind(im, name);
	t->dtype = fz->dtype;
	t->rank = fz->rank;
	memcpy(t->dims, fz->dims, sizeof t->dims);
	size_t bytes = (size_t)imp_t_numel(t) * imp_dt_size(fz->dtype);
	uint8_t *raw = arena_alloc(&im->scratch, bytes + 1);
	memcpy(raw, fz->data, bytes);
	t->raw = raw;
	t->known = true;
	return 0;
}

static int add_placeholder(struct importer *im, const char *name, int dtype, const uint64_t *dims, unsigned rank);

/* Graph input name (declared as tt) with the whole shape us from the user:
 * us sets its unknown and symbolic dimensions; its rank, element type
 * (from -example-input), the numeric dimensions and the symbols bound by
 * -dim must agree with it. */
static int add_shaped(struct importer *im, const char *name, const Onnx__TypeProto__Tensor *tt,
		      const struct onnx_input_shape *us)
{
	int dtype = tt->has_elem_type ? tt->elem_type : DT_UNDEF;
	if (us->dtype >= 0 && us->dtype != dtype)
		return imp_op_err(im, "%s %s: the tensor is %s but the graph input is %s", us->opt, name, imp_dt_name(us->dtype),
			      imp_dt_name(dtype));
	if (tt->shape && tt->shape->n_dim != us->rank)
		return imp_op_err(im, "%s %s: %u dimensions, but the graph input has rank %zu", us->opt, name, us->rank,
			      tt->shape->n_dim);
	int bad = 0;
	for (unsigned i = 0; tt->shape && i < us->rank; i++) {
		const Onnx__TensorShapeProto__Dimension *dm = tt->shape->dim[i];
		bool ok = true;
		if (dm->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE) {
			if (dm->dim_value < 0 || (uint64_t)dm->dim_value != us->dims[i])
				bad = imp_op_err(im, "%s %s: dimension %u is %llu, but the model declares %lld", us->opt, name, i,
					     (unsigned long long)us->dims[i], (long long)dm->dim_value);
		} else if (dm->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM && dm->dim_param &&
			   *dm->dim_param) {
			int64_t v = imp_bound_dim(im, dm->dim_param, &ok);
			if (ok && (uint64_t)v != us->dims[i])
				bad = imp_op_err(im, "%s %s: dimension %u is %llu, but -dim binds its symbol '%s' to %lld", us->opt,
					     name, i, (unsigned long long)us->dims[i], dm->dim_param, (long long)v);
		}
	}
	if (bad)
		return -1;
	return add_placeholder(im, name, dtype, us->dims, us->rank);
}

/* A placeholder for each graph input that is not an initializer; a frozen
 * input (opts->frozen) is a known tensor instead. */
static int add_input(struct importer *im, const Onnx__ValueInfoProto *vi)
{
	const char *name = vi->name ? vi->name : "";
	if (!*name)
		return imp_op_err(im, "graph input without a name");
	const struct onnx_frozen_input *fz = frozen_input(im, name);
	if (fz)
		return add_frozen(im, vi, fz);
	if (imp_t_lookup(im, name))
		return 0; /* an initializer: a constant, not a placeholder */
	const Onnx__TypeProto *tp = vi->type;
	if (!tp || tp->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE || !tp->tensor_type)
		return imp_op_err(im, "graph input \"%s\" is not a tensor", name);
	const Onnx__TypeProto__Tensor *tt = tp->tensor_type;
	int dtype = tt->has_elem_type ? tt->elem_type : DT_UNDEF;
	if (imp_dt_elem(dtype) < 0 && dtype != DT_UINT8 && dtype != DT_INT8)
		return imp_op_err(im, "graph input \"%s\" has element type %s, which the graph IR does not support", name,
			      imp_dt_name(dtype));
	const struct onnx_input_shape *us = input_shape(im, name);
	if (us)
		return add_shaped(im, name, tt, us);
	if (!tt->shape)
		return imp_op_err(im, "graph input \"%s\" has no shape (use -input-shape %s=AxBx...)", name, name);
	if (tt->shape->n_dim > GLOW_MAX_RANK)
		return imp_op_err(im, "graph input \"%s\" has rank %zu (at most %d)", name, tt->shape->n_dim,
			      GLOW_MAX_RANK);
	uint64_t dims[GLOW_MAX_RANK];
	unsigned rank = (unsigned)tt->shape->n_dim;
	int bad = 0;
	for (unsigned i = 0; i < rank; i++) {
		const Onnx__TensorShapeProto__Dimension *dm = tt->shape->dim[i];
		int64_t v = -1;
		if (dm->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE) {
			v = dm->dim_value;
		} else if (dm->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM &&
			   dm->dim_param && *dm->dim_param) {
			bool ok = true;
			v = imp_bound_dim(im, dm->dim_param, &ok);
			if (!ok) {
				bad = imp_op_err(im,
					     "dimension %u of graph input \"%s\" is the symbol '%s', which is not bound "
					     "(use -dim %s=N)",
					     i, name, dm->dim_param, dm->dim_param);
				continue;
			}
		} else {
			bad = imp_op_err(im, "dimension %u of graph input \"%s\" is unknown (use -input-shape %s=AxBx...)",
				     i, name, name);
			continue;
		}
		if (v < 0)
			bad = imp_op_err(im, "dimension %u of graph input \"%s\" is negative", i, name);
		dims[i] = (uint64_t)v;
	}
	if (bad)
		return -1;
	return add_placeholder(im, name, dtype, dims, rank);
}

/* The placeholder of graph input name, bound as its tensor. */
static int add_placeholder(struct importer *im, const char *name, int dtype, const uint64_t *dims, unsigned rank)
{
	const struct type *t = imp_input_type(im, dtype, dims, rank);
	if (!t)
		return -1;
	struct placeholder *p = module_add_placeholder(im->m, name, t, LOC_NONE);
	if (!p)
		return imp_op_err(im, "graph input \"%s\" is declared twice", name);
	struct tensor *tn = imp_bind(im, name);
	tn->dtype = dtype;
	tn->rank = rank;
	memcpy(tn->dims, dims, rank * sizeof *dims);
	tn->v = node_val(&p->n, 0);
	return 0;
}

/* Saves graph output vi into a placeholder named exactly as it. */
static void add_output(struct importer *im, const Onnx__ValueInfoProto *vi)
{
	const char *name = vi->name ? vi->name : "";
	struct tensor *t = *name ? imp_t_lookup(im, name) : NULL;
	if (!t) {
		imp_op_err(im, "graph output \"%s\" is not computed by any node", name);
		return;
	}
	if (t->poisoned)
		return;
	struct value v = imp_tval(im, t);
	if (!v.node)
		return;
	const char *pname = name;
	if (module_find_global(im->m, name)) {
		pname = module_fresh_name(im->m, name);
		diag_warning(im->d, LOC_NONE, "%s: the name of graph output \"%s\" is taken by a graph input; saved into @%s",
			     im->filename, name, pname);
	}
	struct placeholder *p = module_add_placeholder(im->m, pname, val_type(v), LOC_NONE);
	struct value ops[2] = {v, node_val(&p->n, 0)};
	node_create(im->f, NK_Save, NULL, ops, 2, NULL, NULL, LOC_NONE);
}

/* The names read by the nodes and outputs of the subgraphs of n's
 * attributes (and theirs): a value of an enclosing graph may be read only
 * there. */
static void count_sub_uses(struct importer *im, const onnx_node *n, unsigned depth)
{
	for (size_t a = 0; a < n->n_attribute && depth < 64; a++) {
		const Onnx__AttributeProto *at = n->attribute[a];
		for (size_t j = 0; j < at->n_graphs + (at->g != NULL); j++) {
			const Onnx__GraphProto *g = j < at->n_graphs ? at->graphs[j] : at->g;
			for (size_t i = 0; i < g->n_node; i++) {
				for (size_t k = 0; k < g->node[i]->n_input; k++) {
					const char *s = g->node[i]->input[k];
					if (s && *s)
						strmap_put(&im->uses, s, strlen(s), (void *)1);
				}
				count_sub_uses(im, g->node[i], depth + 1);
			}
			for (size_t i = 0; i < g->n_output; i++) {
				const char *s = g->output[i]->name;
				if (s && *s)
					strmap_put(&im->uses, s, strlen(s), (void *)1);
			}
		}
	}
}

static void count_uses(struct importer *im, const Onnx__GraphProto *g)
{
	for (size_t i = 0; i < g->n_node; i++) {
		for (size_t k = 0; k < g->node[i]->n_input; k++) {
			const char *s = g->node[i]->input[k];
			if (s && *s)
				strmap_put(&im->uses, s, strlen(s), (void *)1);
		}
		count_sub_uses(im, g->node[i], 0);
	}
	for (size_t i = 0; i < g->n_output; i++) {
		const char *s = g->output[i]->name;
		if (s && *s) {
			strmap_put(&im->uses, s, strlen(s), (void *)1);
			strmap_put(&im->outputs, s, strlen(s), (void *)1);
		}
	}
}

/* Reports a name opt gives that is not a graph input of g (with the
 * closest input name as a suggestion); returns whether it is one. */
static bool known_input(struct importer *im, const Onnx__GraphProto *g, const char *opt, const char *name)
{
	struct suggest sg;
	suggest_init(&sg, name, strlen(name));
	for (size_t j = 0; j < g->n_input; j++) {
		const char *in = g->input[j]->name;
		if (!in)
			continue;
		if (strcmp(in, name) == 0)
			return true;
		suggest_offer(&sg, in, strlen(in));
	}
	if (sg.best)
		imp_op_err(im, "%s %s: the model has no graph input of that name; did you mean '%.*s'?", opt, name,
		       (int)sg.best_len, sg.best);
	else
		imp_op_err(im, "%s %s: the model has no graph input of that name", opt, name);
	return false;
}

/* The names of -freeze-input, -input-shape and -example-input must be graph
 * inputs, each given by one of them once. */
static void check_input_names(struct importer *im, const Onnx__GraphProto *g)
{
	const struct onnx_import_opts *o = im->opts;
	for (size_t i = 0; i < o->nfrozen; i++) {
		if (!known_input(im, g, "-freeze-input", o->frozen[i].name))
			continue;
		for (size_t k = 0; k < i; k++)
			if (strcmp(o->frozen[k].name, o->frozen[i].name) == 0)
				imp_op_err(im, "-freeze-input %s: the input is frozen twice", o->frozen[i].name);
	}
	for (size_t i = 0; i < o->nshapes; i++) {
		const struct onnx_input_shape *us = &o->shapes[i];
		if (!known_input(im, g, us->opt, us->name))
			continue;
		for (size_t k = 0; k < i; k++)
			if (strcmp(o->shapes[k].name, us->name) == 0)
				imp_op_err(im, "%s %s: the input's shape is already given by %s", us->opt, us->name,
				       o->shapes[k].opt);
		if (frozen_input(im, us->name))
			imp_op_err(im, "%s %s: the input is frozen (-freeze-input), its shape is the value's", us->opt,
			       us->name);
	}
}

static void import_graph(struct importer *im, const Onnx__GraphProto *g)
{
	if (imp_check_ops(im, g))
		return;
	im->graph = g;
	count_uses(im, g);
	for (size_t i = 0; i < g->n_initializer; i++) {
		const Onnx__TensorProto *p = g->initializer[i];
		if (!p->name || !*p->name) {
			imp_op_err(im, "initializer %zu has no name", i);
			continue;
		}
		struct tensor *t = imp_t_from_proto(im, p, p->name);
		if (t)
			strmap_put(&im->tensors, t->name, strlen(t->name), t);
	}
	for (size_t i = 0; i < g->n_input; i++)
		add_input(im, g->input[i]);
	check_input_names(im, g);
	if (im->errors)
		return;
	for (size_t i = 0; i < g->n_node && !im->d->stopped && !im->generated_over; i++)
		imp_translate(im, g->node[i]);
	im->node = NULL;
	for (size_t i = 0; i < g->n_output; i++)
		add_output(im, g->output[i]);
}

/* After a model that does not unpack: when the file is the text of either
 * IR, a note at its first keyword says which tool reads it. */
static void hint_text_ir(struct diag *d, const char *filename, const uint8_t *buf, size_t len)
{
	size_t at;
	enum tp_level l = tp_sniff_level((const char *)buf, len, &at);
	if (l != TP_LEVEL_GRAPH && l != TP_LEVEL_INSTR)
		return;
	uint32_t file = diag_add_source(d, filename, (const char *)buf, len);
	diag_note(d, loc_make(file, (uint32_t)at), "%s", tp_level_hint(l));
}

struct module *onnx_import(struct type_ctx *types, const uint8_t *buf, size_t len, const char *filename,
			   const struct onnx_import_opts *opts, struct diag *d)
{
	if (len > ONNX_MAX_BYTES) {
		diag_error(d, LOC_NONE, "%s: file too large for an ONNX protobuf", filename);
		return NULL;
	}
	Onnx__ModelProto *mp = onnx__model_proto__unpack(NULL, len, buf);
	if (!mp || !mp->graph) {
		diag_error(d, LOC_NONE, "%s: %s", filename, mp ? "the model has no graph" : "invalid ONNX protobuf");
		hint_text_ir(d, filename, buf, len);
		if (mp)
			onnx__model_proto__free_unpacked(mp, NULL);
		return NULL;
	}
	struct importer im = {.tc = types,
			      .d = d,
			      .filename = filename,
			      .opts = opts,
			      .opset = -1,
			      .check_ops = imp_check_ops,
			      .translate = imp_translate};
	for (size_t i = 0; i < mp->n_opset_import; i++)
		if (imp_default_domain(mp->opset_import[i]->domain) && mp->opset_import[i]->has_version)
			im.opset = mp->opset_import[i]->version;
	im.opsets = mp->opset_import;
	im.nopsets = mp->n_opset_import;
	if (im.opset < 0) {
		im.opset = 1;
		bool used = false;
		for (size_t i = 0; i < mp->graph->n_node; i++)
			used |= imp_default_domain(mp->graph->node[i]->domain);
		if (used)
			diag_warning(d, LOC_NONE, "%s: no opset for the default domain; assuming opset 1", filename);
	}
	arena_init(&im.scratch);
	strmap_init(&im.tensors);
	strmap_init(&im.uses);
	strmap_init(&im.outputs);
	u64map_init(&im.nhwc);
	const char *gname = mp->graph->name && *mp->graph->name ? mp->graph->name : NULL;
	im.m = module_create(types, gname);
	module_set_base_dir(im.m, filename);
	im.base_dir = im.m->base_dir;
	im.f = func_create(im.m, "main", LOC_NONE);

	import_graph(&im, mp->graph);
	if (im.generated_over && !im.errors) {
		/* the error was reported inside a speculative translation that
		 * was then discarded (ops_control_unroll.c), but the import
		 * stopped on it */
		imp_op_err(&im, "the constants computed at import (folded values, sampling tables) exceed %llu bytes",
			   (unsigned long long)imp_generated_max(&im));
	}
	if (!im.errors && !opts->keep_qdq) {
		struct fold_qdq_stats st = {0, 0, 0};
		fold_qdq_func(im.f, NULL, &st);
	}
	if (!im.errors && module_verify(im.m, d))
		im.errors++;

	u64map_free(&im.nhwc);
	strmap_free(&im.outputs);
	strmap_free(&im.uses);
	strmap_free(&im.tensors);
	arena_free(&im.scratch);
	onnx__model_proto__free_unpacked(mp, NULL);
	if (im.errors) {
		module_destroy(im.m);
		return NULL;
	}
	return im.m;
}
