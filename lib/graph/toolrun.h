/* toolrun.h - the frame of the tools that read a .glow module and run
 * passes on it (glow-opt, glow-irgen): the input read, parsed and verified
 * with each step timed for -time (support/stagetime.h), and the end of the
 * run (the -time-passes/-stats and -time reports, then everything freed).
 *
 *   struct graph_tool_run r;
 *   if (graph_tool_read(&r, path, o->time, verify, d)) {
 *           pm_free(&pm);
 *           return 1;
 *   }
 *   ... r.m (NULL after a diagnostic): passes, stage_timer_mark(&r.st, ...) ...
 *   status = graph_tool_write(&r, verify_result(...), "...", o->output, print, arg, d);
 *   return graph_tool_finish(&r, &pm, &o->pm, status);
 */
#ifndef GLOW_GRAPH_TOOLRUN_H
#define GLOW_GRAPH_TOOLRUN_H

#include "graph/graph.h"
#include "support/io.h"
#include "support/pmcli.h"
#include "support/stagetime.h"

#include <stdbool.h>

struct graph_tool_run {
	struct stage_timer st;
	struct input input; /* mapped: the reader lets go of its pages behind it */
	struct type_ctx types;
	struct module *m; /* NULL after a diagnostic */
};

/* Starts r's stage timer (on: -time), then reads path ("-": standard input,
 * named <stdin> in diagnostics), parses it and, when verify, verifies the
 * module, charging the steps to the stages read, parse and verify; a module
 * that is kept resolves its relative weight files from path's directory.
 * Returns -1 when the input cannot be read (reported; nothing to free), else
 * 0 with r->m the module or NULL after diagnostics: graph_tool_finish ends
 * the run either way. */
int graph_tool_read(struct graph_tool_run *r, const char *path, bool time, bool verify, struct diag *d);

/* The output of a run whose result was just verified (invalid: the
 * verifier failed and reported), charging the verifier to the stage verify:
 * "verifier failed after AFTER", else path written whole by print, which
 * returns nonzero after reporting (the output is then discarded), charged to
 * the stage write. Returns the exit status. */
int graph_tool_write(struct graph_tool_run *r, bool invalid, const char *after, const char *path,
		     int (*print)(struct ostream *out, void *arg, struct diag *d), void *arg, struct diag *d);

/* The end of the run: the pass manager's reports (pm_cli_report of c) and
 * the stage report, on stderr in that order; then frees the module, the
 * types, the input and pm. Returns status, the run's exit status. */
int graph_tool_finish(struct graph_tool_run *r, struct pm *pm, const struct pm_cli *c, int status);

#endif
