/* onnx.h - the ONNX importer: an ONNX ModelProto (protobuf bytes) becomes a
 * graph IR module with one function.
 *
 * Initializers become constants, graph inputs placeholders, graph outputs
 * Saves into placeholders named exactly as the ONNX outputs. ONNX value names
 * are kept as node names. Shape computations whose values are known at import
 * are folded; symbolic dimensions must be bound through the options. Every
 * problem in the model (each unsupported operator with its nodes, each
 * untranslatable node) is reported before the import fails.
 */
#ifndef GLOW_IMPORT_ONNX_ONNX_H
#define GLOW_IMPORT_ONNX_ONNX_H

#include "graph/graph.h"
#include "support/io.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A binding of a symbolic dimension (ONNX dim_param) to a size. */
struct onnx_dim_binding {
	const char *name;
	int64_t value;
};

/* A graph input bound to a known value (glow-import -freeze-input): it
 * becomes a known tensor instead of a placeholder, so shape and parameter
 * inputs (Reshape's shape, Resize's scales, Slice's starts, ...) fold at
 * import. data holds numel * element-size bytes, little-endian in the ONNX
 * element packing; dtype is an ONNX TensorProto.DataType code. The value's
 * type must match the input's declared element type and every dimension it
 * declares as a number. */
struct onnx_frozen_input {
	const char *name;
	int dtype;
	unsigned rank;
	uint64_t dims[GLOW_MAX_RANK];
	const uint8_t *data;
};

/* A graph input's whole shape from the user: glow-import -input-shape
 * NAME=AxBxC (dtype -1), or -example-input NAME=FILE (the shape and element
 * type of the tensor in FILE; its values are not used). It sets the input's
 * unknown and symbolic dimensions; its rank and every dimension the model
 * declares as a number (or binds through -dim) must agree. opt names the
 * option in diagnostics. */
struct onnx_input_shape {
	const char *name;
	const char *opt;
	int dtype;
	unsigned rank;
	uint64_t dims[GLOW_MAX_RANK];
};

struct onnx_import_opts {
	const struct onnx_dim_binding *dims;
	size_t ndims;
	/* Operators whose opset version is newer than the importer knows are
	 * errors (default: a warning, translated with the newest known rules). */
	bool opset_check;
	/* Graph inputs bound to known values; a name that is not a graph input
	 * is an error. */
	const struct onnx_frozen_input *frozen;
	size_t nfrozen;
	/* Whole input shapes; a name that is not a graph input, or an input
	 * given twice (here or also frozen), is an error. */
	const struct onnx_input_shape *shapes;
	size_t nshapes;
	/* Keep a QDQ model's float operators between their Dequantize and
	 * Quantize nodes (default: fold them into quantized nodes, fold-qdq). */
	bool keep_qdq;
	/* The most bytes of constants the import may compute rather than read
	 * from the model (folded values, sampling tables); past it the import
	 * stops with an error. 0: the default, 256 MiB. */
	uint64_t max_generated_bytes;
};

/* Imports the model in buf[0..len). filename names the model in diagnostics
 * and is the base of relative external-data paths. Returns NULL after
 * reporting every problem to d. */
struct module *onnx_import(struct type_ctx *types, const uint8_t *buf, size_t len, const char *filename,
			   const struct onnx_import_opts *opts, struct diag *d);

/* Prints every graph input of the model in buf[0..len) that is not an
 * initializer, one line each: "NAME TYPE [D0, D1, ...]" with symbolic
 * dimensions by their symbol and unknown ones as '?' ("(no shape)" when
 * the input declares none). Returns 0, or -1 after reporting to d
 * (inputs.c). */
int onnx_print_inputs(struct ostream *out, const uint8_t *buf, size_t len, const char *filename, struct diag *d);

/* One line per supported operator: "Name since-until", in table order. */
void onnx_list_ops(FILE *out);

#endif
