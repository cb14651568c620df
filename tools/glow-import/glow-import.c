/* glow-import - ONNX model -> graph IR text.
 *
 *   glow-import model.onnx|- [-o out.glow] [-dim NAME=N ...]
 *               [-freeze-input NAME=FILE ...] [-opset-check]
 *               [-input-shape NAME=AxBx... ...] [-example-input NAME=FILE ...]
 *   glow-import -print-inputs model.onnx
 *
 * Reads the ModelProto (from standard input for "-", which must not be a
 * terminal), imports it (lib/import/onnx) and prints the module
 * canonically. -freeze-input binds a graph input to the tensor in FILE
 * (.npy or TensorProto .pb): the input is a known value, not a placeholder,
 * so the shape and parameter computations that read it fold at import.
 * -input-shape and -example-input give a graph input's whole shape (the
 * latter from a tensor file, whose values are not used), for dimensions the
 * model leaves unknown or symbolic. -print-inputs lists the graph inputs
 * with their declared types and shapes. Every unsupported operator and every untranslatable node is
 * reported before exiting with status 1; the output file is written whole or
 * not at all.
 */
#include "graph/graph.h"
#include "import/onnx/cliopts.h"
#include "support/cl.h"
#include "support/io.h"
#include "support/stagetime.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct options {
	const char *output;
	struct cl_list dims;
	struct cl_list freeze;
	struct cl_list shapes;
	struct cl_list examples;
	struct cl_list input;
	bool opset_check;
	bool keep_qdq;
	bool list_ops;
	bool time; /* -time: the seconds of each stage */
	bool print_inputs;
};

/* glow-import -print-inputs: the model's graph inputs, to standard output or
 * -o. */
static int print_inputs(struct options *o, const char *path, struct diag *d)
{
	char *buf = NULL;
	size_t len = 0;
	int status = 1;
	if (read_input(path, &buf, &len, d) == 0) {
		struct ostream out;
		const char *name = strcmp(path, "-") == 0 ? "<stdin>" : path;
		if (ostream_open(&out, o->output, d) == 0) {
			if (onnx_print_inputs(&out, (const uint8_t *)buf, len, name, d) == 0)
				status = ostream_commit(&out, d) ? 1 : 0;
			else
				ostream_abort(&out);
		}
	}
	free(buf);
	return status;
}

static int run(void *opts, struct diag *d)
{
	struct options *o = opts;
	d->max_errors = 100; /* every unsupported operator of a model, at once */
	if (o->list_ops) {
		onnx_list_ops(stdout);
		return 0;
	}
	if (o->input.n == 0) {
		diag_error(d, LOC_NONE, "no input file (see --help)");
		return 1;
	}
	const char *path = o->input.v[0];
	bool from_stdin = strcmp(path, "-") == 0;
	/* a model is binary: typing one is never meant, and waiting for EOF on
	 * a terminal looks like a hang */
	if (from_stdin && isatty(STDIN_FILENO)) {
		diag_error(d, LOC_NONE, "standard input is a terminal: give a model file or pipe one in");
		return 1;
	}
	if (o->print_inputs)
		return print_inputs(o, path, d);
	int status = 1;
	char *buf = NULL;
	size_t len = 0;
	struct type_ctx types;
	type_ctx_init(&types);
	struct stage_timer st;
	stage_timer_init(&st, o->time);
	struct onnx_cli_lists lists = {&o->dims, &o->freeze, &o->shapes, &o->examples, o->opset_check, o->keep_qdq};
	struct onnx_cli_opts io;
	if (onnx_cli_opts_read(&io, &lists, d) == 0 && read_input(path, &buf, &len, d) == 0) {
		stage_timer_mark(&st, "read");
		const char *name = from_stdin ? "<stdin>" : path;
		/* an empty protobuf is a valid, empty ModelProto: say what is wrong */
		struct module *m = NULL;
		if (len == 0)
			diag_error(d, LOC_NONE, "%s: empty input, expected an ONNX model", name);
		else
			m = onnx_import(&types, (const uint8_t *)buf, len, name, &io.io, d);
		/* the protobuf's parse, the translation and the verifier of the
		 * result are one call */
		stage_timer_mark(&st, "import");
		if (m) {
			struct ostream out;
			if (ostream_open(&out, o->output, d) == 0) {
				module_print(&out, m);
				status = ostream_commit(&out, d) ? 1 : 0;
			}
			stage_timer_mark(&st, "write");
			module_destroy(m);
		}
	}
	stage_timer_report(&st, stderr);
	free(buf);
	onnx_cli_opts_free(&io);
	type_ctx_free(&types);
	return status;
}

int main(int argc, char **argv)
{
	struct options o = {0};
	o.output = "-";
	const struct cl_opt opts[] = {
		CL_OUTPUT_OPT(&o.output),
		{"dim", CL_LIST, &o.dims, "NAME=N", "Bind the symbolic dimension NAME of the graph inputs to N", 0,
		 NULL},
		{"freeze-input", CL_LIST, &o.freeze, "NAME=FILE",
		 "Bind graph input NAME to the tensor in FILE (.npy or TensorProto .pb): a known value, not a "
		 "placeholder, so the shapes and parameters computed from it (Reshape shape, Resize scales or sizes, "
		 "Slice starts, reduction axes, Range, Pad pads, TopK k, Tile repeats, Expand shape, ...) fold at "
		 "import; repeatable",
		 0, NULL},
		{"input-shape", CL_LIST, &o.shapes, "NAME=AxBx...",
		 "The whole shape of graph input NAME (e.g. data=1x3x224x224), for dimensions the model leaves "
		 "unknown or symbolic; its rank and the dimensions the model declares must agree; repeatable",
		 0, NULL},
		{"example-input", CL_LIST, &o.examples, "NAME=FILE",
		 "Take the shape (not the value) of graph input NAME from the tensor in FILE (.npy or TensorProto "
		 ".pb), like -input-shape; repeatable",
		 0, NULL},
		{"print-inputs", CL_FLAG, &o.print_inputs, NULL,
		 "List the model's graph inputs with their declared element types and shapes (symbols by name, "
		 "unknown dimensions as ?) and exit",
		 0, NULL},
		{"opset-check", CL_FLAG, &o.opset_check, NULL,
		 "Refuse operators whose opset is newer than the importer knows (default: warn)", 0, NULL},
		{"keep-qdq", CL_FLAG, &o.keep_qdq, NULL,
		 "Keep a QDQ model's float operators between DequantizeLinear and QuantizeLinear (default: quantized "
		 "nodes, as the fold-qdq pass makes them)",
		 0, NULL},
		{"list-ops", CL_FLAG, &o.list_ops, NULL, "List the supported operators and opset ranges", 0, NULL},
		{"time", CL_FLAG, &o.time, NULL,
		 "Report the wall time of each stage (read, import, write) on stderr", 0, NULL},
	};
	const struct cl_tool tool =
		CL_TOOL1("glow-import", "ONNX model to graph IR", "[options] model.onnx|-", opts, &o.input);
	return cl_main(&tool, argc, argv, run, &o);
}
