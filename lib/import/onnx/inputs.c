/* inputs.c - glow-import -print-inputs: a model's graph inputs as the
 * model declares them, so a user knows which symbols to bind (-dim) and
 * which shapes to give (-input-shape) before importing it.
 */
#include "import/onnx/internal.h"

#include <string.h>

/* "NAME TYPE [D0, D1, ...]" for one graph input. */
static void print_input(struct ostream *o, const Onnx__ValueInfoProto *vi)
{
	const Onnx__TypeProto *tp = vi->type;
	os_printf(o, "%s ", vi->name ? vi->name : "");
	if (!tp) {
		os_puts(o, "(no type)\n");
		return;
	}
	switch (tp->value_case) {
	case ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE: break;
	case ONNX__TYPE_PROTO__VALUE_SEQUENCE_TYPE: os_puts(o, "sequence\n"); return;
	case ONNX__TYPE_PROTO__VALUE_MAP_TYPE: os_puts(o, "map\n"); return;
	case ONNX__TYPE_PROTO__VALUE_OPTIONAL_TYPE: os_puts(o, "optional\n"); return;
	default: os_puts(o, "(not a tensor)\n"); return;
	}
	const Onnx__TypeProto__Tensor *tt = tp->tensor_type;
	os_puts(o, tt->has_elem_type ? imp_dt_name(tt->elem_type) : "undefined");
	if (!tt->shape) {
		os_puts(o, " (no shape)\n");
		return;
	}
	os_puts(o, " [");
	for (size_t i = 0; i < tt->shape->n_dim; i++) {
		const Onnx__TensorShapeProto__Dimension *dm = tt->shape->dim[i];
		if (i)
			os_puts(o, ", ");
		if (dm->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE)
			os_i64(o, dm->dim_value);
		else if (dm->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM && dm->dim_param &&
			 *dm->dim_param)
			os_puts(o, dm->dim_param);
		else
			os_puts(o, "?");
	}
	os_puts(o, "]\n");
}

int onnx_print_inputs(struct ostream *out, const uint8_t *buf, size_t len, const char *filename, struct diag *d)
{
	/* protobuf messages are limited to 2 GiB, as in onnx_import */
	Onnx__ModelProto *mp = len <= (size_t)INT32_MAX ? onnx__model_proto__unpack(NULL, len, buf) : NULL;
	if (!mp || !mp->graph) {
		diag_error(d, LOC_NONE, "%s: %s", filename, mp ? "the model has no graph" : "invalid ONNX protobuf");
		if (mp)
			onnx__model_proto__free_unpacked(mp, NULL);
		return -1;
	}
	const Onnx__GraphProto *g = mp->graph;
	for (size_t i = 0; i < g->n_input; i++) {
		const char *name = g->input[i]->name ? g->input[i]->name : "";
		bool init = false;
		/* an initializer listed as an input (IR version 3) has its value */
		for (size_t k = 0; k < g->n_initializer && !init; k++)
			init = g->initializer[k]->name && strcmp(g->initializer[k]->name, name) == 0;
		if (!init)
			print_input(out, g->input[i]);
	}
	onnx__model_proto__free_unpacked(mp, NULL);
	return 0;
}
