/* ocl-prebuild - builds the device programs of instruction IR files for
 * the OpenCL backend in one process, so that later `glow-run
 * -backend=opencl` runs of the same files find them in the program cache
 * ($GLOW_OPENCL_CACHE, ocl_diskcache.c) instead of building them.
 *
 *   ocl-prebuild PROG.gir ...     every function of every file; status 1
 *                                 if any failed (diagnostics on stderr)
 *   ocl-prebuild -serve           one file name per line on standard input,
 *                                 one answer line per file on standard
 *                                 output ("ok" or "error", then the
 *                                 seconds of processor time the file
 *                                 took), until end of input
 *
 * Why: PoCL reads its kernel library (about 10 MB of LLVM bitcode) into
 * every process that builds a program, some 0.9 s of processor time, while
 * a small program of a conformance case builds in about 0.1 s. The
 * conformance harness of test/opencl/conformance (oclformat.py) keeps one
 * server per lit worker and sends it each case's program before the
 * case's glow-run, which then loads the binary. The program is made by the
 * backend's own compile (the same memory plan and generators as glow-run's
 * default options), so its source, and so its cache entry, is the one
 * glow-run looks up. A failure here decides nothing: glow-run builds the
 * program itself and reports what is wrong.
 *
 * A developer's tool (in bin/ beside the tools for lit), not installed. */
#define _POSIX_C_SOURCE 200809L
#include "backends/c/cbackend.h"
#include "backends/opencl/ocl.h"
#include "runner/runner.h"
#include "support/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

/* Builds the programs of every function of file `path`; 0 on success. */
static int prebuild(const struct backend *be, const char *path)
{
	struct diag d;
	diag_init(&d, "ocl-prebuild");
	struct stages st;
	stages_init(&st, false);
	struct type_ctx types;
	char *buf = NULL;
	struct ir_module *m = NULL;
	int rc = 1;
	if (runner_read_program(path, &types, &buf, &m, &st, &d) == 0) {
		if (m) {
			rc = 0;
			for (size_t i = 0; i < m->nfuncs && !rc; i++) {
				struct backend_compiled *c = runner_compile(be, m->funcs[i], false, CBACKEND_GEMM_BUILTIN, CBACKEND_WINO_AUTO,
									     &st, &d);
				if (c)
					be->destroy(c);
				else
					rc = 1;
			}
			ir_module_destroy(m);
		}
		type_ctx_free(&types);
		free(buf);
	}
	/* nothing in use now: the built programs need not stay in memory */
	ocl_program_cache_clear();
	diag_free(&d);
	return rc;
}

/* Seconds of processor time (user and system) of this process and of the
 * children it waited for (PoCL runs the linker as one) so far. */
static double cpu_seconds(void)
{
	double s = 0;
	static const int who[2] = {RUSAGE_SELF, RUSAGE_CHILDREN};
	for (int i = 0; i < 2; i++) {
		struct rusage u;
		if (getrusage(who[i], &u) == 0)
			s += (double)(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
			     1e-6 * (double)(u.ru_utime.tv_usec + u.ru_stime.tv_usec);
	}
	return s;
}

int main(int argc, char **argv)
{
	if (argc < 2 || strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "-help") == 0) {
		fprintf(argc < 2 ? stderr : stdout, "usage: ocl-prebuild PROG.gir ...\n       ocl-prebuild -serve\n");
		return argc < 2 ? 1 : 0;
	}
	const struct backend *be = backend_find("opencl");
	if (!be) {
		fprintf(stderr, "ocl-prebuild: the OpenCL backend is not part of this build\n");
		return 1;
	}
	if (strcmp(argv[1], "-serve") != 0) {
		int rc = 0;
		for (int i = 1; i < argc; i++)
			rc |= prebuild(be, argv[i]);
		return rc;
	}
	if (argc != 2) {
		fprintf(stderr, "ocl-prebuild: -serve takes no file names (they come on standard input)\n");
		return 1;
	}
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;
	while ((n = getline(&line, &cap, stdin)) > 0) {
		if (line[n - 1] == '\n')
			line[--n] = 0;
		if (!n)
			continue;
		double t = cpu_seconds();
		const char *answer = prebuild(be, line) ? "error" : "ok";
		if (printf("%s %.3f\n", answer, cpu_seconds() - t) < 0 || fflush(stdout) != 0)
			break;
	}
	free(line);
	return 0;
}
