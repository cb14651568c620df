/* backends.h - the backends glow-opt can target, by name.
 *
 * backend.h's backend_find knows the backends of its own library; this
 * registry is the graph optimizer's: every backend the tool links, so
 * -backend=NAME resolves to its struct backend. A tool that uses it links
 * the backend libraries (tools/CMakeLists.txt does for glow-opt).
 */
#ifndef GLOW_PASSES_BACKENDS_H
#define GLOW_PASSES_BACKENDS_H

struct backend;

/* The backend called name ("interpreter", "c"), or NULL if none. */
const struct backend *passes_backend_find(const char *name);

#endif
