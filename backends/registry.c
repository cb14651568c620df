/* registry.c - the one registry of the backends this build links, by name
 * (backend_find in backend.h). It lives in its own library, glowbackends,
 * because it references every backend: tools that select a backend by name
 * (glow-opt -backend=, glow-run -backend=) link it; the backends do not.
 */
#include "backends/backend.h"
#include "backends/c/cbackend.h"
#include "backends/interpreter/interp.h"
#ifdef GLOW_HAVE_OPENCL
#include "backends/opencl/ocl.h"
#endif

#include <string.h>

static const struct backend *const all_backends[] = {&interp_backend, &cbackend_backend,
#ifdef GLOW_HAVE_OPENCL
						     &ocl_backend,
#endif
};

const struct backend *backend_find(const char *name)
{
	for (size_t i = 0; i < GLOW_ARRAY_SIZE(all_backends); i++)
		if (strcmp(all_backends[i]->name, name) == 0)
			return all_backends[i];
	return NULL;
}
