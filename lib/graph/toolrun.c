/* toolrun.c - see toolrun.h. */
#include "graph/toolrun.h"

#include <string.h>

int graph_tool_read(struct graph_tool_run *r, const char *path, bool time, bool verify, struct diag *d)
{
	stage_timer_init(&r->st, time);
	r->m = NULL;
	if (input_open(&r->input, path, d))
		return -1;
	stage_timer_mark(&r->st, "read");
	type_ctx_init(&r->types);
	const char *name = strcmp(path, "-") == 0 ? "<stdin>" : path;
	struct module *m = module_parse_input(&r->types, &r->input, name, d, false);
	stage_timer_mark(&r->st, "parse");
	if (m && verify && module_verify(m, d)) {
		module_destroy(m);
		m = NULL;
	}
	stage_timer_mark(&r->st, "verify");
	if (m)
		module_set_base_dir(m, path);
	r->m = m;
	return 0;
}

int graph_tool_write(struct graph_tool_run *r, bool invalid, const char *after, const char *path,
		     int (*print)(struct ostream *out, void *arg, struct diag *d), void *arg, struct diag *d)
{
	stage_timer_mark(&r->st, "verify");
	if (invalid) {
		diag_error(d, LOC_NONE, "verifier failed after %s", after);
		return 1;
	}
	int status = 1;
	struct ostream out;
	if (ostream_open(&out, path, d) == 0) {
		if (print(&out, arg, d) == 0)
			status = ostream_commit(&out, d) ? 1 : 0;
		else
			ostream_abort(&out);
	}
	stage_timer_mark(&r->st, "write");
	return status;
}

int graph_tool_finish(struct graph_tool_run *r, struct pm *pm, const struct pm_cli *c, int status)
{
	pm_cli_report(pm, c);
	stage_timer_report(&r->st, stderr);
	module_destroy(r->m);
	type_ctx_free(&r->types);
	input_close(&r->input);
	pm_free(pm);
	return status;
}
