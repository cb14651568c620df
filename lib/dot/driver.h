/* driver.h - glow-dot's driver (driver.c). Library code: reports through
 * struct diag, never exits. */
#ifndef GLOW_DOT_DRIVER_H
#define GLOW_DOT_DRIVER_H

#include "support/cl.h"
#include "support/diag.h"

#include <limits.h>
#include <stdbool.h>

struct dot_tool_options {
	const char *output;
	const char *format;
	const char *func;
	const char *subgraph;
	const char *focus;
	const char *range;
	unsigned depth;
	bool time;
	unsigned max_label_len;
	bool no_attrs;
	struct cl_list highlight;
	struct cl_list input;
};

/* -depth not given (then DOT_DEPTH_DEFAULT with -focus) */
#define DOT_DEPTH_UNSET UINT_MAX
#define DOT_DEPTH_DEFAULT 1u

/* glow-dot on the parsed options opts, a struct dot_tool_options
 * (tools/glow-dot/glow-dot.c describes them); returns the exit status.
 * The signature is cl_main's. */
int dot_tool_run(void *opts, struct diag *d);

#endif
