/* glow-llc - the instruction IR tool: reads a .gir module, verifies it and
 * prints it in canonical form.
 *
 *   glow-llc [options] [input.gir|-] [-o out.gir]
 *
 * IR passes, the memory planner and code generation plug in here as they
 * are written. The output is written whole or not at all. Exit status 0 on
 * success, 1 after a diagnostic.
 */
#include "ir/ir.h"
#include "support/cl.h"
#include "support/io.h"

#include <stdlib.h>
#include <string.h>

struct llc_options {
	const char *output;
	bool disable_verify;
	struct cl_list input;
};

/* Reads, verifies and writes the module; returns the exit status. */
static int run(struct llc_options *o, struct diag *d)
{
	const char *in = o->input.n ? o->input.v[0] : "-";
	char *buf = NULL;
	size_t len = 0;
	if (read_input(in, &buf, &len, d))
		return 1;
	struct type_ctx types;
	type_ctx_init(&types);
	const char *name = strcmp(in, "-") == 0 ? "<stdin>" : in;
	struct ir_module *m = ir_module_parse(&types, buf, len, name, d, !o->disable_verify);
	int status = 1;
	if (m) {
		struct ostream out;
		if (ostream_open(&out, o->output, d) == 0) {
			ir_module_print(&out, m);
			status = ostream_commit(&out, d) ? 1 : 0;
		}
	}
	ir_module_destroy(m);
	type_ctx_free(&types);
	free(buf);
	return status;
}

int main(int argc, char **argv)
{
	struct llc_options o = {0};
	o.output = "-";
	const struct cl_opt opts[] = {
		{"o", CL_STRING, &o.output, "filename", "Output file ('-' for standard output, the default)", 0, NULL},
		{"disable-verify", CL_FLAG, &o.disable_verify, NULL, "Do not verify the input", 0, NULL},
	};
	const struct cl_tool tool = {
		"glow-llc", "glow instruction IR compiler", "[options] [input.gir|-]", opts, GLOW_ARRAY_SIZE(opts),
		&o.input, 1,
	};
	struct diag d;
	diag_init(&d, "glow-llc");
	int status;
	enum cl_result r = cl_parse(&tool, argc, argv, &d);
	if (r != CL_OK)
		status = r == CL_EXIT ? 0 : 1;
	else
		status = run(&o, &d);
	cl_free(&tool);
	diag_free(&d);
	return status;
}
