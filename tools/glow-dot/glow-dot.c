/* glow-dot - Graphviz views of either IR level.
 *
 *   glow-dot [options] [input.glow|input.gir|-] [-o out] [-T dot|svg|png|pdf]
 *   -range=FIRST:LAST, -focus=NAME -depth=N   draw part of the program
 *   -time                                     stage seconds on stderr
 *
 * Detects the IR from the file suffix (.glow, .gir) or, for standard input
 * and other names, from the first keyword of the text; parses and verifies
 * it; writes dot text (lib/dot) and, for -T svg/png/pdf, renders that text in
 * process through Graphviz's libgvc. The output is written whole or not at
 * all. Exit status 0 on success, 1 after a diagnostic.
 */
#include "dot/driver.h"
#include "support/cl.h"
#include "support/util.h"

int main(int argc, char **argv)
{
	struct dot_tool_options o = {0};
	o.output = "-";
	o.format = "dot";
	o.depth = DOT_DEPTH_UNSET;
	const struct cl_opt opts[] = {
		CL_OUTPUT_OPT(&o.output),
		{"T", CL_STRING, &o.format, "dot|svg|png|pdf", "Output format (default dot: the dot text itself)", 0,
		 NULL},
		{"func", CL_STRING, &o.func, "@name", "Draw only this function", 0, NULL},
		{"max-label-len", CL_UINT, &o.max_label_len, "N",
		 "Cut node label lines after N characters (0: no limit)", 0, NULL},
		{"no-attrs", CL_FLAG, &o.no_attrs, NULL, "Leave attributes and initializers out of the labels", 0,
		 NULL},
		{"highlight", CL_LIST, &o.highlight, "Kind,...", "Highlight the nodes or instructions of these kinds",
		 0, NULL},
		{"focus", CL_STRING, &o.focus, "name",
		 "Draw only the neighbourhood of a value, buffer or instruction (%name, @name or name)", 0, NULL},
		{"subgraph", CL_STRING, &o.subgraph, "%value", "The same as -focus", 0, NULL},
		{"depth", CL_UINT, &o.depth, "N", "With -focus: how many steps away from the value (default 1)", 0,
		 NULL},
		{"range", CL_STRING, &o.range, "FIRST:LAST",
		 "Draw only these instructions (graph IR: nodes), by position or name; either end may be left out",
		 0, NULL},
		{"time", CL_FLAG, &o.time, NULL,
		 "Report the seconds of each stage (read, build graph, layout, render, write) on stderr", 0, NULL},
	};
	const struct cl_tool tool =
		CL_TOOL1("glow-dot", "Graphviz views of the graph IR and the instruction IR",
			 "[options] [input.glow|input.gir|-]", opts, &o.input);
	return cl_main(&tool, argc, argv, dot_tool_run, &o);
}
