/* optimize.c - glow-opt in a page, written against the installed library
 * (docs/API.md walks through it): reads a graph IR module, verifies it, runs
 * a pipeline of graph passes over it and prints the result.
 *
 *   optimize PIPELINE FILE.glow      e.g. optimize O2 model.glow
 *
 * Build: cc optimize.c $(pkg-config --cflags --libs glow) -o optimize
 * Exit status 0 on success, 1 after a diagnostic.
 */
#include "graph/graph.h"
#include "passes/pass.h"
#include "support/diag.h"
#include "support/io.h"
#include "support/passmgr.h"
#include "support/types.h"

#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: optimize PIPELINE FILE.glow\n");
		return 1;
	}
	/* diagnostics: "file:line:col: error: ..." or "optimize: error: ..." */
	struct diag d;
	diag_init(&d, "optimize");
	/* types are uniqued in a context that outlives every module using them */
	struct type_ctx types;
	type_ctx_init(&types);

	/* the pipeline text is checked before the input is read; the passes see
	 * a pass_ctx (no backend: the interpreter's answers) */
	struct pass_ctx ctx = {&d, PASS_MODE_INFER, NULL, NULL, NULL, NULL, NULL, NULL};
	struct pm pm;
	pm_init(&pm, &graph_pass_registry, &d, &ctx);
	pm.verify_each = true;
	int status = 1;
	char *buf = NULL;
	size_t len;
	struct module *m = NULL;
	if (pm_add_text(&pm, argv[1]) == 0 && read_input(argv[2], &buf, &len, &d) == 0) {
		/* parses and verifies; NULL after reporting errors */
		m = module_parse(&types, buf, len, argv[2], &d, true);
		if (m && pm_run(&pm, m) == 0) {
			struct ostream out;
			if (ostream_open(&out, "-", &d) == 0) {
				module_print(&out, m);
				status = ostream_commit(&out, &d) ? 1 : 0;
			}
		}
	}
	module_destroy(m);
	pm_free(&pm);
	type_ctx_free(&types);
	/* the diag quotes source lines from buf, so it goes first */
	diag_free(&d);
	free(buf);
	return status;
}
