/* registry.c - the one registry of the backends, by name (backend_find in
 * backend.h, the -backend= values in registry.h). It lives in its own
 * library, glowbackends, because it references every backend: tools that
 * select a backend by name (glow-opt, glow-llc, glow-run, glow-diff,
 * glow-gradcheck -backend=) link it; the backends do not.
 */
#include "backends/registry.h"
#include "backends/c/cbackend.h"
#include "backends/interpreter/interp.h"
#ifdef GLOW_HAVE_OPENCL
#include "backends/opencl/ocl.h"
#endif

#include <string.h>

/* One row per backend of the project, in -backend= order; be is NULL where
 * this build lacks the backend. */
static const struct backend_row {
	const char *name;
	const struct backend *be;
	unsigned flags; /* BACKEND_* */
} rows[] = {
	{"interpreter", &interp_backend, BACKEND_HOST},
	{"c", &cbackend_backend, BACKEND_HOST},
#ifdef GLOW_HAVE_OPENCL
	{"opencl", &ocl_backend, 0},
#else
	{"opencl", NULL, 0},
#endif
};

const struct backend *backend_find(const char *name)
{
	for (size_t i = 0; i < GLOW_ARRAY_SIZE(rows); i++)
		if (rows[i].be && strcmp(rows[i].name, name) == 0)
			return rows[i].be;
	return NULL;
}

/* The row of index i among the rows that have every flag of `flags`;
 * NULL past the end. */
static const struct backend_row *nth_row(unsigned flags, int i)
{
	for (size_t r = 0; r < GLOW_ARRAY_SIZE(rows); r++)
		if ((rows[r].flags & flags) == flags && i-- == 0)
			return &rows[r];
	return NULL;
}

const char *backend_names(unsigned flags)
{
	/* built once per flag set; the tools ask while they build their
	 * option tables, before any thread starts */
	static char lists[BACKEND_HOST << 1][64];
	glow_assert(flags < GLOW_ARRAY_SIZE(lists));
	char *s = lists[flags];
	if (!*s) {
		const struct backend_row *row;
		for (int i = 0; (row = nth_row(flags, i)); i++) {
			glow_assert(strlen(s) + strlen(row->name) + 2 <= sizeof lists[0]);
			if (i)
				strcat(s, "|");
			strcat(s, row->name);
		}
	}
	return s;
}

const char *backend_name(unsigned flags, int i)
{
	const struct backend_row *row = nth_row(flags, i);
	glow_assert(row);
	return row->name;
}

const struct backend *backend_select(unsigned flags, int i, const char *tool, struct diag *d)
{
	const struct backend_row *row = nth_row(flags, i);
	glow_assert(row);
	if (!row->be) {
		if (tool)
			diag_error(d, LOC_NONE, "backend '%s' is not linked into %s", row->name, tool);
		else
			diag_error(d, LOC_NONE, "backend '%s' is not part of this build", row->name);
	}
	return row->be;
}
