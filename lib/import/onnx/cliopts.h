/* cliopts.h - glow-import's importer options from their command-line
 * spellings (cliopts.c): -dim NAME=N, -freeze-input NAME=FILE,
 * -input-shape NAME=AxBx... and -example-input NAME=FILE become a struct
 * onnx_import_opts and the memory it points into.
 *
 * Library code: reports through struct diag, never exits.
 */
#ifndef GLOW_IMPORT_ONNX_CLIOPTS_H
#define GLOW_IMPORT_ONNX_CLIOPTS_H

#include "import/onnx/onnx.h"
#include "import/onnx/tensorio.h"
#include "support/cl.h"
#include "support/diag.h"

/* The options as given: lists of NAME=VALUE strings. */
struct onnx_cli_lists {
	const struct cl_list *dims, *freeze, *shapes, *examples;
	bool opset_check;
	bool keep_qdq;
};

/* The options read: io, and the arrays it points into (owned). */
struct onnx_cli_opts {
	struct onnx_import_opts io;
	struct onnx_dim_binding *dims;
	struct onnx_frozen_input *frozen;
	struct tio_tensor *ftensors; /* the data of frozen[i] */
	struct onnx_input_shape *shapes;
};

/* Reads the options of l into c: the shapes and example inputs (each bad
 * one reported), then the dimension bindings, then, when those are good,
 * the frozen inputs' tensor files. Returns 0, or -1 after reporting; c is
 * to be freed with onnx_cli_opts_free either way. */
int onnx_cli_opts_read(struct onnx_cli_opts *c, const struct onnx_cli_lists *l, struct diag *d);

/* Frees what onnx_cli_opts_read allocated. */
void onnx_cli_opts_free(struct onnx_cli_opts *c);

#endif
