/* registry.h - the backends by name for the tools (registry.c, library
 * glowbackends): the -backend= values of every tool, and the backend a
 * value selects. registry.c is the only list of backends; a tool names
 * none.
 *
 * The list has every backend of the project, also one this build lacks
 * (OpenCL without its headers): -backend= accepts it and --help shows it
 * in every build, and selecting it reports that it is missing.
 */
#ifndef GLOW_BACKENDS_REGISTRY_H
#define GLOW_BACKENDS_REGISTRY_H

#include "backends/backend.h"
#include "support/diag.h"

/* Row flags: what a tool may ask of the backends it offers. */
enum {
	/* computes in this process's memory, no device copies: glow-gradcheck
	 * offers only these */
	BACKEND_HOST = 1u << 0,
};

/* The names of the backends that have every flag of `flags`, in registry
 * order, as a CL_ENUM value list ("interpreter|c|opencl"). */
const char *backend_names(unsigned flags);

/* The name of CL_ENUM index i of backend_names(flags). */
const char *backend_name(unsigned flags, int i);

/* The backend of CL_ENUM index i of backend_names(flags); NULL after
 * reporting that this build lacks it ("is not linked into TOOL", or "is not
 * part of this build" where tool is NULL). */
const struct backend *backend_select(unsigned flags, int i, const char *tool, struct diag *d);

#endif
