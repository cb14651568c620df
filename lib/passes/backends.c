/* backends.c - the registry of backends the graph optimizer can target
 * (backends.h). Only tools that link the backend libraries reference it.
 */
#include "passes/backends.h"
#include "backends/backend.h"
#include "backends/c/cbackend.h"
#include "backends/interpreter/interp.h"

#include <string.h>

const struct backend *passes_backend_find(const char *name)
{
	static const struct backend *const all[] = {&interp_backend, &cbackend_backend};
	for (size_t i = 0; i < GLOW_ARRAY_SIZE(all); i++)
		if (strcmp(all[i]->name, name) == 0)
			return all[i];
	return NULL;
}
