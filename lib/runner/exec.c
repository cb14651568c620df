/* exec.c - what the tools that run programs share: compiling a function on
 * a backend with its stage timing. */
#include "runner/runner.h"
#include "backends/c/cbackend.h"

#include <string.h>

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
