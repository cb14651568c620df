/* cbackend_run.c - the C backend behind struct backend: compile generates
 * the bundle into a fresh temporary directory, builds it as a shared object
 * with the system C compiler and loads it; run resets the mutable region
 * (as the interpreter does: initial values, zeros), copies bound inputs to
 * their offsets, calls NAME_run and copies outputs back.
 *
 * The compiler is $GLOW_CC (default cc) with $GLOW_CFLAGS (default
 * "-O3 -march=native"); the directory is removed by destroy unless
 * $GLOW_CBACKEND_KEEP is set (its path is then printed as a note). The
 * backend cbackend_openblas_backend generates with -gemm=openblas and
 * links the object with -lopenblas. The graph-side questions (supported
 * kinds, lowering) are the interpreter's: the two backends run the same
 * instruction IR.
 */
#define _POSIX_C_SOURCE 200809L
#include "backends/c/cbackend.h"
#include "backends/interpreter/interp.h"
#include "support/util.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* the placeholder table of a bundle (NAME.h) */
struct cb_placeholder {
	const char *name, *elem;
	size_t offset, size;
	int is_input, is_output;
	unsigned rank;
	const uint64_t *dims;
};

typedef int (*cb_run_fn)(const uint8_t *, uint8_t *, uint8_t *);
typedef void (*cb_init_fn)(const uint8_t *, uint8_t *);

struct backend_compiled {
	char *dir;
	void *so;
	cb_run_fn run;
	cb_init_fn init;
	const struct cb_placeholder *ph;
	uint8_t *region[3]; /* constants, mutable, activations (64-byte aligned) */
	size_t size[3];
};

static const char *const file_names[] = {"prog.c", "prog.h", "prog.weights.bin", "prog.so"};

static void cb_destroy(struct backend_compiled *c)
{
	if (!c)
		return;
	if (c->so)
		dlclose(c->so);
	for (int i = 0; i < 3; i++)
		free(c->region[i]);
	if (c->dir && !getenv("GLOW_CBACKEND_KEEP")) {
		for (size_t i = 0; i < GLOW_ARRAY_SIZE(file_names); i++) {
			size_t n = strlen(c->dir) + strlen(file_names[i]) + 2;
			char *p = xmalloc(n);
			snprintf(p, n, "%s/%s", c->dir, file_names[i]);
			remove(p);
			free(p);
		}
		rmdir(c->dir);
	}
	free(c->dir);
	free(c);
}

static uint8_t *aligned_region(size_t n)
{
	size_t sz = (n + 64) / 64 * 64;
	uint8_t *p = aligned_alloc(64, sz);
	if (!p)
		unreachable("out of memory");
	memset(p, 0, sz);
	return p;
}

static struct backend_compiled *cb_compile(const struct backend *b, struct ir_func *f,
					   const struct backend_options *o, struct diag *d)
{
	struct cbackend_options co = {"prog", false, false,
				      b == &cbackend_openblas_backend ? CBACKEND_GEMM_OPENBLAS : CBACKEND_GEMM_BUILTIN,
				      CBACKEND_WINO_AUTO};
	if (o && o->specific) {
		const struct cbackend_options *s = o->specific;
		co.gemm = s->gemm;
		co.winograd = s->winograd;
	}
	struct cbackend_bundle bundle;
	if (cbackend_generate(f, &co, &bundle, d) != 0)
		return NULL;
	struct backend_compiled *c = xcalloc(1, sizeof *c);
	const char *tmp = getenv("TMPDIR");
	size_t n = strlen(tmp ? tmp : "/tmp") + 32;
	c->dir = xmalloc(n);
	snprintf(c->dir, n, "%s/glow-c-XXXXXX", tmp ? tmp : "/tmp");
	if (!mkdtemp(c->dir)) {
		diag_error(d, LOC_NONE, "cannot create a temporary directory '%s'", c->dir);
		free(c->dir);
		c->dir = NULL;
		goto fail;
	}
	if (cbackend_emit_bundle(f, c->dir, &co, d) != 0)
		goto fail;
	const char *cc = getenv("GLOW_CC"), *cflags = getenv("GLOW_CFLAGS");
	size_t cn = strlen(c->dir) * 2 + 256 + (cc ? strlen(cc) : 0) + (cflags ? strlen(cflags) : 0);
	char *cmd = xmalloc(cn);
	snprintf(cmd, cn, "%s %s -std=c11 -shared -fPIC -o '%s/prog.so' '%s/prog.c'%s -lm", cc ? cc : "cc",
		 cflags ? cflags : "-O3 -march=native", c->dir, c->dir,
		 co.gemm == CBACKEND_GEMM_OPENBLAS ? " -lopenblas" : "");
	int rc = system(cmd);
	free(cmd);
	if (rc != 0) {
		diag_error(d, LOC_NONE, "the C compiler failed on the bundle in '%s' (status %d)", c->dir, rc);
		goto fail;
	}
	size_t pn = strlen(c->dir) + 16;
	char *so = xmalloc(pn);
	snprintf(so, pn, "%s/prog.so", c->dir);
	c->so = dlopen(so, RTLD_NOW | RTLD_LOCAL);
	free(so);
	if (!c->so) {
		diag_error(d, LOC_NONE, "cannot load the compiled bundle: %s", dlerror());
		goto fail;
	}
	/* object pointers from dlsym become function pointers through memcpy
	 * (ISO C has no conversion between the two) */
	void *r = dlsym(c->so, "prog_run"), *i = dlsym(c->so, "prog_init_mutable");
	c->ph = dlsym(c->so, "prog_placeholders");
	if (!r || !i || !c->ph) {
		diag_error(d, LOC_NONE, "the compiled bundle lacks its entry points");
		goto fail;
	}
	memcpy(&c->run, &r, sizeof r);
	memcpy(&c->init, &i, sizeof i);
	c->size[0] = bundle.weights_size;
	{
		void *ms = dlsym(c->so, "prog_mutable_size"), *as = dlsym(c->so, "prog_activations_size");
		if (!ms || !as) {
			diag_error(d, LOC_NONE, "the compiled bundle lacks its region sizes");
			goto fail;
		}
		c->size[1] = *(const size_t *)ms;
		c->size[2] = *(const size_t *)as;
	}
	for (int k = 0; k < 3; k++)
		c->region[k] = aligned_region(c->size[k]);
	memcpy(c->region[0], bundle.weights, bundle.weights_size);
	if (getenv("GLOW_CBACKEND_KEEP"))
		diag_note(d, LOC_NONE, "C bundle kept in '%s'", c->dir);
	cbackend_bundle_free(&bundle);
	return c;
fail:
	cbackend_bundle_free(&bundle);
	cb_destroy(c);
	return NULL;
}

static int cb_run(struct backend_compiled *c, const struct backend_binding *binds, size_t nbinds, struct diag *d)
{
	c->init(c->region[0], c->region[1]);
	for (const struct cb_placeholder *p = c->ph; p->name; p++) {
		const void *bound = NULL;
		for (size_t j = 0; j < nbinds; j++)
			if (strcmp(binds[j].w->v.name, p->name) == 0)
				bound = binds[j].data;
		if (bound)
			memcpy(c->region[1] + p->offset, bound, p->size);
		else if (p->is_input) {
			diag_error(d, LOC_NONE, "input '%s' is not bound", p->name);
			return -1;
		}
	}
	if (c->run(c->region[0], c->region[1], c->region[2]) != 0) {
		diag_error(d, LOC_NONE, "the compiled program failed: an index out of range");
		return -1;
	}
	for (size_t j = 0; j < nbinds; j++) {
		if (binds[j].w->is_const)
			continue;
		for (const struct cb_placeholder *p = c->ph; p->name; p++)
			if (strcmp(binds[j].w->v.name, p->name) == 0)
				memcpy(binds[j].data, c->region[1] + p->offset, p->size);
	}
	return 0;
}

static bool cb_is_op_supported(const struct backend *b, unsigned kind, const enum elem_kind *elems, unsigned n)
{
	(void)b;
	return interp_backend.is_op_supported(&interp_backend, kind, elems, n);
}

static bool cb_is_node_supported(const struct backend *b, const struct node *n)
{
	(void)b;
	return interp_backend.is_node_supported(&interp_backend, n);
}

static bool cb_should_lower(const struct backend *b, const struct node *n)
{
	(void)b;
	return interp_backend.should_lower(&interp_backend, n);
}

static int cb_post_lowering(const struct backend *b, struct func *f, struct diag *d)
{
	(void)b;
	return interp_backend.transform_post_lowering ? interp_backend.transform_post_lowering(&interp_backend, f, d)
						      : 0;
}

const struct backend cbackend_backend = {
	"c", cb_is_op_supported, cb_is_node_supported, cb_should_lower, cb_post_lowering, cb_compile, cb_run, cb_destroy,
	{"c-O0", "c-O1", "c-O2", "c-O3"},
};

/* the same, its matrix products through cblas_sgemm (-gemm=openblas) */
const struct backend cbackend_openblas_backend = {
	"c", cb_is_op_supported, cb_is_node_supported, cb_should_lower, cb_post_lowering, cb_compile, cb_run, cb_destroy,
	{"c-O0", "c-O1", "c-O2", "c-O3"},
};
