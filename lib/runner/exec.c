/* exec.c - what the tools that run programs share: reading the program,
 * compiling a function on a backend with its stage timing. */
#include "runner/runner.h"
#include "backends/c/cbackend.h"
#include "support/io.h"

#include <string.h>

int runner_read_program(const char *in, struct type_ctx *types, char **buf, struct ir_module **m, struct stages *st,
			struct diag *d)
{
	size_t len = 0;
	*buf = NULL;
	*m = NULL;
	if (read_input(in, buf, &len, d))
		return -1;
	type_ctx_init(types);
	*m = ir_module_parse(types, *buf, len, strcmp(in, "-") == 0 ? "<stdin>" : in, d, true);
	stages_mark(st, "read");
	/* relative weight files are found beside the program */
	if (*m && strcmp(in, "-") != 0)
		ir_module_set_base_dir(*m, in);
	return 0;
}

struct backend_compiled *runner_compile(const struct backend *be, struct ir_func *f, bool ignore_plan, int gemm,
					int winograd, struct stages *st, struct diag *d)
{
	double gen = 0, cc = 0;
	struct cbackend_options co = {"prog", false, false, gemm, winograd, &gen, &cc};
	bool is_c = strcmp(be->name, "c") == 0;
	struct backend_options bo = {ignore_plan, is_c ? &co : NULL};
	struct backend_compiled *c = be->compile(be, f, &bo, d);
	if (is_c) {
		stages_add(st, "code generation", gen);
		stages_add(st, "C compile", cc);
	}
	stages_mark(st, is_c ? "load" : "plan");
	return c;
}
