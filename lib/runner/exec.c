/* exec.c - what the tools that run programs share: reading the program,
 * compiling a function on a backend with its stage timing, and the
 * tensor files they write. */
#include "runner/runner.h"
#include "backends/c/cbackend.h"
#include "import/onnx/tensorio.h"
#include "support/io.h"
#include "support/util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

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

int runner_program_open(struct runner_program *p, const struct run_options *o, struct diag *d)
{
	stages_init(&p->st, o->time);
	const char *in = o->positional.n ? o->positional.v[0] : "-";
	return runner_read_program(in, &p->types, &p->buf, &p->m, &p->st, d);
}

void runner_program_close(struct runner_program *p)
{
	stages_report(&p->st, "glow-run");
	ir_module_destroy(p->m);
	type_ctx_free(&p->types);
	free(p->buf);
}

const char *runner_output_dir(const struct run_options *o, struct diag *d)
{
	if (runner_make_dir(o->output_dir, d))
		return NULL;
	return o->format ? ".npy" : ".pb";
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

/* ---- files ---- */

char *runner_file_base(const char *name)
{
	char *s = xstrdup(name);
	for (char *p = s; *p; p++) {
		char c = *p;
		bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
			  c == '.' || c == '-';
		if (!ok)
			*p = '_';
	}
	return s;
}

char *runner_path(const char *dir, const char *base, const char *ext)
{
	size_t n = strlen(dir) + strlen(base) + strlen(ext) + 2;
	char *p = xmalloc(n);
	snprintf(p, n, "%s/%s%s", dir, base, ext);
	return p;
}

int runner_make_dir(const char *dir, struct diag *d)
{
	if (mkdir(dir, 0777) != 0 && errno != EEXIST) {
		diag_error(d, LOC_NONE, "cannot create directory '%s': %s", dir, strerror(errno));
		return -1;
	}
	return 0;
}

int runner_write_tensor(int format, const char *path, const char *name, const struct type *ty, const void *data,
			struct diag *d)
{
	return format ? tio_write_npy(path, ty, data, d) : tio_write_pb(path, name, ty, data, d);
}
