/* cbackend_run.c - the C backend behind struct backend: compile generates
 * the bundle into a fresh temporary directory, builds it as a shared object
 * with the system C compiler and loads it; run resets the mutable region
 * (as the interpreter does: initial values, zeros), copies bound inputs to
 * their offsets, calls NAME_run and copies outputs back.
 *
 * The compiler is $GLOW_CC (default cc) with $GLOW_CFLAGS (default
 * "-O3 -march=native"), run by /bin/sh in a process group of its own; the
 * directory is removed by destroy and on every error path unless
 * $GLOW_CBACKEND_KEEP is set (its path is then printed as a note), and by
 * support/cleanup.h when a signal stops the process (the compiler is
 * stopped first). With $GLOW_CBACKEND_CACHE set, a bundle compiled before
 * with the same command and sources is copied from that cache instead of
 * compiled again (cbcache.c). The regions are allocated before the bundle is written,
 * so a memory plan too large for the machine costs no compile. The
 * caller's backend_options carry the generator's settings (specific: a
 * struct cbackend_options); with -gemm=openblas the object is linked with
 * -lopenblas. The supported node kinds are the ones the emitter table
 * (Emitters.def) compiles; lowering is the interpreter's, which runs the
 * same instruction IR.
 */
#define _POSIX_C_SOURCE 200809L
#include "backends/c/cbcache.h"
#include "backends/c/cgen.h"
#include "backends/interpreter/interp.h"
#include "support/cleanup.h"
#include "support/util.h"

#include <dlfcn.h>
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
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

/* the function table of a training bundle (NAME.h) */
struct cb_function {
	const char *name;
	cb_run_fn entry;
	const char *use;
};
typedef void (*cb_init_fn)(const uint8_t *, uint8_t *);
typedef int (*cb_threads_fn)(int);

/* cbackend_set_threads: the thread count of the bundles compiled from now
 * on (0: the bundle's default, every core of the process) */
static int cb_threads;

void cbackend_set_threads(int n)
{
	cb_threads = n > 0 ? n : 0;
}

struct backend_compiled {
	char *dir;
	int dir_handle;     /* support/cleanup.h handle of dir */
	char **files;       /* the files written into dir (registered too) */
	int *handles;
	size_t nfiles;
	void *so;
	cb_run_fn run;
	cb_init_fn init;
	cb_threads_fn set_threads; /* stops the workers (1) before dlclose */
	const struct cb_function *functions; /* a training bundle's entry points, else NULL */
	const struct cb_placeholder *ph;
	uint8_t *region[3]; /* constants, mutable, activations (64-byte aligned) */
	size_t size[3];
};

static bool keep_dir(void)
{
	return getenv("GLOW_CBACKEND_KEEP") != NULL;
}

static void cb_destroy(struct backend_compiled *c)
{
	if (!c)
		return;
	if (c->set_threads)
		c->set_threads(1);
	if (c->so)
		dlclose(c->so);
	for (int i = 0; i < 3; i++)
		free(c->region[i]);
	if (c->dir && !keep_dir())
		cg_remove_dir(c->dir);
	/* forgotten only now: until the directory is gone, a signal must
	 * still remove it */
	for (size_t i = 0; i < c->nfiles; i++) {
		cleanup_remove(c->handles[i]);
		free(c->files[i]);
	}
	if (c->dir)
		cleanup_remove(c->dir_handle);
	free(c->files);
	free(c->handles);
	free(c->dir);
	free(c);
}

/* A zeroed region of n bytes (at least 64, a multiple of 64), 64-byte
 * aligned, or NULL when it cannot be had. */
static uint8_t *aligned_region(uint64_t n)
{
	if (n > SIZE_MAX - 128)
		return NULL;
	size_t sz = (size_t)(n + 64) / 64 * 64;
	uint8_t *p = aligned_alloc(64, sz);
	if (p) {
		glow_big_pages(p, sz);
		memset(p, 0, sz);
	}
	return p;
}

static double now_seconds(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* ---- the C compiler as a child process ---- */

/* While the compiler runs, the stopping signals first stop it (its whole
 * process group: the driver and the assembler or linker it started), then
 * go on to the handler that was there before (support/cleanup.h's, which
 * removes the bundle directory, or the default action). */
static const int cc_signals[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};
static struct sigaction cc_saved[GLOW_ARRAY_SIZE(cc_signals)];
static bool cc_hooked[GLOW_ARRAY_SIZE(cc_signals)];
static volatile sig_atomic_t cc_child;

static void cc_on_signal(int sig)
{
	pid_t child = (pid_t)cc_child;
	if (child > 0) {
		kill(-child, SIGKILL);
		waitpid(child, NULL, 0);
		/* the driver's own children (assembler, linker) are not ours to
		 * wait for: give them a moment to die, so none writes into the
		 * directory after it is removed (bounded: a zombie nobody reaps
		 * stays in the group) */
		for (int i = 0; i < 100 && kill(-child, 0) == 0; i++) {
			struct timespec ts = {0, 10000000};
			nanosleep(&ts, NULL);
		}
	}
	for (size_t i = 0; i < GLOW_ARRAY_SIZE(cc_signals); i++)
		if (cc_signals[i] == sig)
			sigaction(sig, &cc_saved[i], NULL);
	/* blocked until this handler returns, then delivered to the saved one */
	raise(sig);
}

static void cc_hook(bool on)
{
	for (size_t i = 0; i < GLOW_ARRAY_SIZE(cc_signals); i++) {
		if (!on) {
			if (cc_hooked[i])
				sigaction(cc_signals[i], &cc_saved[i], NULL);
			cc_hooked[i] = false;
			continue;
		}
		struct sigaction sa;
		memset(&sa, 0, sizeof sa);
		sa.sa_handler = cc_on_signal;
		sigfillset(&sa.sa_mask);
		if (sigaction(cc_signals[i], NULL, &cc_saved[i]) != 0 || cc_saved[i].sa_handler == SIG_IGN)
			continue; /* ignored from the start (nohup): so is it here */
		cc_hooked[i] = sigaction(cc_signals[i], &sa, NULL) == 0;
	}
}

/* Runs cmd with /bin/sh (the compiler and flags come from the environment
 * as shell words) in a process group of its own; on a terminal, stderr
 * shows the seconds so far once the build takes longer than half a second.
 * Returns the wait status, or -1 after reporting. */
static int run_compiler(const char *cmd, const char *what, struct diag *d)
{
	FILE *err = d->out ? d->out : stderr;
	bool tty = isatty(fileno(err));
	fflush(NULL); /* nothing buffered is written twice by the child */
	cc_hook(true);
	/* blocked from before the fork until cc_child is set, so the handler
	 * always knows the compiler it must stop */
	sigset_t block, old;
	sigemptyset(&block);
	for (size_t i = 0; i < GLOW_ARRAY_SIZE(cc_signals); i++)
		sigaddset(&block, cc_signals[i]);
	sigprocmask(SIG_BLOCK, &block, &old);
	pid_t pid = fork();
	if (pid < 0) {
		sigprocmask(SIG_SETMASK, &old, NULL);
		cc_hook(false);
		diag_error(d, LOC_NONE, "cannot start the C compiler: %s", strerror(errno));
		return -1;
	}
	if (pid == 0) {
		setpgid(0, 0);
		for (size_t i = 0; i < GLOW_ARRAY_SIZE(cc_signals); i++)
			if (cc_hooked[i])
				signal(cc_signals[i], SIG_DFL);
		sigprocmask(SIG_SETMASK, &old, NULL);
		execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
		_exit(127);
	}
	setpgid(pid, pid); /* also here: the handler may kill the group before the child ran */
	cc_child = pid;
	sigprocmask(SIG_SETMASK, &old, NULL);
	double t0 = now_seconds();
	bool shown = false;
	int status = -1;
	for (;;) {
		pid_t r = waitpid(pid, &status, tty ? WNOHANG : 0);
		if (r == pid)
			break;
		if (r < 0 && errno != EINTR) {
			diag_error(d, LOC_NONE, "waiting for the C compiler: %s", strerror(errno));
			status = -1;
			break;
		}
		double t = now_seconds() - t0;
		if (tty && t >= 0.5) {
			fprintf(err, "\r%s: compiling %s... %.1f s", d->prog, what, t);
			fflush(err);
			shown = true;
		}
		if (tty) {
			struct timespec ts = {0, 100000000};
			nanosleep(&ts, NULL);
		}
	}
	cc_child = 0;
	cc_hook(false);
	if (shown) {
		fputs("\r\033[K", err); /* the progress line goes away */
		fflush(err);
	}
	return status;
}

static struct backend_compiled *cb_build(struct cbackend_bundle *bundle, const struct cbackend_options *s, int gemm,
					 struct ir_func *f, double t0, struct diag *d);

static struct backend_compiled *cb_compile(const struct backend *b, struct ir_func *f,
					   const struct backend_options *o, struct diag *d)
{
	(void)b;
	struct cbackend_options co = {"prog", false, false, CBACKEND_GEMM_BUILTIN, CBACKEND_WINO_AUTO, NULL, NULL};
	const struct cbackend_options *s = o ? o->specific : NULL;
	if (s) {
		co.gemm = s->gemm;
		co.winograd = s->winograd;
	}
	double t0 = now_seconds();
	struct cbackend_bundle bundle;
	if (cbackend_generate(f, &co, &bundle, d) != 0)
		return NULL;
	return cb_build(&bundle, s, co.gemm, f, t0, d);
}

/* Builds and loads bundle (generated from f, or with f's training step)
 * since t0: the regions, the directory and its files, the compile (or the
 * cache), the entry points; frees the bundle. NULL after reporting. */
static struct backend_compiled *cb_build(struct cbackend_bundle *bundle_p, const struct cbackend_options *s, int gemm,
					 struct ir_func *f, double t0, struct diag *d)
{
	struct cbackend_bundle bundle = *bundle_p;
	struct backend_compiled *c = xcalloc(1, sizeof *c);
	/* the regions first: a plan too large for this machine is reported
	 * before anything is written or compiled */
	c->size[0] = bundle.weights_size;
	uint64_t sizes[3] = {bundle.weights_size, bundle.mutable_size, bundle.activations_size};
	for (int k = 0; k < 3; k++) {
		c->region[k] = aligned_region(sizes[k]);
		if (!c->region[k]) {
			uint64_t total = sizes[0];
			total = total > UINT64_MAX - sizes[1] ? UINT64_MAX : total + sizes[1];
			total = total > UINT64_MAX - sizes[2] ? UINT64_MAX : total + sizes[2];
			diag_error(d, f->plan.present ? f->plan.loc : f->loc,
				   "cannot allocate the memory plan of @%s: %s%" PRIu64 " bytes (constants %" PRIu64
				   ", mutable %" PRIu64 ", activations %" PRIu64 ")",
				   f->name, total == UINT64_MAX ? "over " : "", total, sizes[0], sizes[1], sizes[2]);
			goto fail;
		}
	}
	memcpy(c->region[0], bundle.weights, bundle.weights_size);
	const char *tmp = getenv("TMPDIR");
	if (!tmp || !*tmp)
		tmp = "/tmp";
	size_t n = strlen(tmp) + 32;
	c->dir = xmalloc(n);
	snprintf(c->dir, n, "%s/glow-c-XXXXXX", tmp);
	if (!mkdtemp(c->dir)) {
		diag_error(d, LOC_NONE, "cannot create a temporary directory '%s': %s", c->dir, strerror(errno));
		free(c->dir);
		c->dir = NULL;
		goto fail;
	}
	c->dir_handle = cleanup_add_dir(c->dir);
	/* the weights are in region 0 already: their file (hundreds of
	 * megabytes for the large networks) is written only into a directory
	 * that stays (GLOW_CBACKEND_KEEP), to make the bundle whole there */
	if (cbackend_write_bundle(&bundle, c->dir, !keep_dir(), &c->files, &c->handles, &c->nfiles, d) != 0)
		goto fail;
	size_t pn = strlen(c->dir) + 16;
	char *so = xmalloc(pn);
	snprintf(so, pn, "%s/prog.so", c->dir);
	/* registered before the compiler makes it */
	c->files = xrealloc(c->files, (c->nfiles + 1) * sizeof *c->files);
	c->handles = xrealloc(c->handles, (c->nfiles + 1) * sizeof *c->handles);
	c->files[c->nfiles] = so;
	c->handles[c->nfiles++] = cleanup_add_file(so);
	double t1 = now_seconds();
	if (s && s->gen_seconds)
		*s->gen_seconds += t1 - t0;
	const char *cc = getenv("GLOW_CC"), *cflags = getenv("GLOW_CFLAGS");
	cc = cc ? cc : "cc";
	cflags = cflags ? cflags : "-O3 -march=native";
	const char *blas = gemm == CBACKEND_GEMM_OPENBLAS ? " -lopenblas" : "";
	size_t cn = strlen(c->dir) * 2 + 256 + strlen(cc) + strlen(cflags);
	char *cmd = xmalloc(cn);
	/* the cache key: the command without the bundle's directory */
	snprintf(cmd, cn, "%s %s -std=c11 -pthread -shared -fPIC%s -lm", cc, cflags, blas);
	char *entry = cbcache_path(cmd, bundle.c_src, bundle.h_src);
	snprintf(cmd, cn, "%s %s -std=c11 -pthread -shared -fPIC -o '%s/prog.so' '%s/prog.c'%s -lm", cc, cflags, c->dir,
		 c->dir, blas);
	char what[256];
	snprintf(what, sizeof what, "the C bundle of @%s", f->name);
	int rc = 0;
	bool cached = cbcache_fetch(entry, so);
	if (!cached)
		rc = run_compiler(cmd, what, d);
	free(cmd);
	if (s && s->cc_seconds)
		*s->cc_seconds += now_seconds() - t1;
	if (rc == -1) {
		free(entry);
		goto fail;
	}
	if (!cached && WIFEXITED(rc) && WEXITSTATUS(rc) == 0)
		cbcache_store(entry, so);
	free(entry);
	if (!WIFEXITED(rc) || WEXITSTATUS(rc) != 0) {
		if (WIFEXITED(rc))
			diag_error(d, LOC_NONE, "the C compiler failed on the bundle of @%s (exit status %d)", f->name,
				   WEXITSTATUS(rc));
		else
			diag_error(d, LOC_NONE, "the C compiler was stopped by signal %d on the bundle of @%s",
				   WIFSIGNALED(rc) ? WTERMSIG(rc) : 0, f->name);
		goto fail;
	}
	c->so = dlopen(so, RTLD_NOW | RTLD_LOCAL);
	if (!c->so) {
		diag_error(d, LOC_NONE, "cannot load the compiled bundle: %s", dlerror());
		goto fail;
	}
	/* object pointers from dlsym become function pointers through memcpy
	 * (ISO C has no conversion between the two) */
	void *r = dlsym(c->so, "prog_run"), *i = dlsym(c->so, "prog_init_mutable");
	void *th = dlsym(c->so, "prog_set_threads");
	c->ph = dlsym(c->so, "prog_placeholders");
	if (!r || !i || !th || !c->ph) {
		diag_error(d, LOC_NONE, "the compiled bundle lacks its entry points");
		goto fail;
	}
	c->functions = dlsym(c->so, "prog_functions"); /* a training bundle's */
	memcpy(&c->run, &r, sizeof r);
	memcpy(&c->init, &i, sizeof i);
	memcpy(&c->set_threads, &th, sizeof th);
	c->set_threads(cb_threads);
	{
		void *ms = dlsym(c->so, "prog_mutable_size"), *as = dlsym(c->so, "prog_activations_size");
		if (!ms || !as) {
			diag_error(d, LOC_NONE, "the compiled bundle lacks its region sizes");
			goto fail;
		}
		c->size[1] = *(const size_t *)ms;
		c->size[2] = *(const size_t *)as;
		if (c->size[1] != bundle.mutable_size || c->size[2] != bundle.activations_size) {
			diag_error(d, LOC_NONE, "the compiled bundle's region sizes are not the generated ones");
			goto fail;
		}
	}
	if (keep_dir())
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

struct backend_compiled *cbackend_compile_training(struct ir_func *const *fs, size_t n, size_t step, size_t eval,
						    const struct cbackend_options *o, struct diag *d)
{
	struct cbackend_options co = {"prog", false, false, CBACKEND_GEMM_BUILTIN, CBACKEND_WINO_AUTO, NULL, NULL};
	if (o) {
		co.gemm = o->gemm;
		co.winograd = o->winograd;
	}
	double t0 = now_seconds();
	struct cbackend_bundle bundle;
	if (cbackend_generate_training(fs, n, step, eval, &co, &bundle, d) != 0)
		return NULL;
	struct backend_compiled *c = cb_build(&bundle, o, co.gemm, fs[step], t0, d);
	if (c && !c->functions) {
		diag_error(d, LOC_NONE, "the compiled training bundle lacks its function table");
		cb_destroy(c);
		return NULL;
	}
	if (c)
		c->init(c->region[0], c->region[1]);
	return c;
}

uint8_t *cbackend_placeholder(struct backend_compiled *c, const char *name)
{
	for (const struct cb_placeholder *p = c->ph; p->name; p++)
		if (strcmp(p->name, name) == 0)
			return c->region[1] + p->offset;
	return NULL;
}

int cbackend_run_function(struct backend_compiled *c, size_t k, struct diag *d)
{
	if (c->functions[k].entry(c->region[0], c->region[1], c->region[2]) != 0) {
		diag_error(d, LOC_NONE, "the compiled program @%s failed: an index out of range", c->functions[k].name);
		return -1;
	}
	return 0;
}

/* With quantized operands or results a bundle compiles the kinds with
 * integer kernels (QEMIT rows: the arithmetic of docs/Quantization.md, bit
 * for bit the interpreter's), the conversions and the kinds that copy
 * stored integers (CG_STORED rows); the quantize pass leaves the others
 * float on -backend=c. */
static bool cb_is_op_supported(const struct backend *b, unsigned kind, const enum elem_kind *elems, unsigned n)
{
	(void)b;
	bool q = false, h = false;
	for (unsigned i = 0; i < n; i++) {
		q |= elem_is_quantized(elems[i]) != 0;
		h |= elems[i] == EK_FLOAT16 || elems[i] == EK_BFLOAT16;
	}
	return cg_compiles_node_kind(kind, q, h);
}

/* The largest FullyConnectedGrad weight (elements) the C backend runs
 * whole: above it the lowered form's products on the packed GEMM kernels
 * are faster (the Fashion-MNIST CNN's 3136 x 1024 layer: its step 1.23x
 * faster lowered), below it the whole kernel is (the MLP's 784 x 100: 1.77x
 * faster whole, fewer passes over small operands). */
#define CB_FC_GRAD_WHOLE_MAX (1u << 20)

/* Whether the C backend lowers gradient node n by choice although it runs
 * its kind whole: a ConvolutionGrad the whole kernel does not run on its
 * fast path (cgen_grad.c: the filter gradient without a patch matrix and
 * the input gradient on the packed kernels need one group, no dilation
 * along W and stride 1; otherwise the unrolled-patch kernel runs, 0.74x
 * the lowered form's speed), FullyConnectedGrad with a large weight
 * (above). */
static bool cb_lower_by_choice(const struct node *n)
{
	if (n->kind == NK_ConvolutionGrad) {
		unsigned len;
		const int64_t *s = node_ints(n, AN_strides, &len), *d = node_ints(n, AN_dilation, &len);
		return node_int(n, AN_group) != 1 || d[1] != 1 || s[0] != 1 || s[1] != 1;
	}
	return n->kind == NK_FullyConnectedGrad && type_numel(op_type(n, 1)) > CB_FC_GRAD_WHOLE_MAX;
}

static bool cb_should_lower(const struct backend *b, const struct node *n)
{
	(void)b;
	return cb_lower_by_choice(n) || interp_backend.should_lower(&interp_backend, n);
}

/* The interpreter's hook (the kinds both run), then the C backend's own
 * nodes (cbnodes.c), then the batch split (cbsplit.c). */
static int cb_post_lowering(const struct backend *b, struct func *f, struct diag *d)
{
	(void)b;
	int r = interp_backend.transform_post_lowering ? interp_backend.transform_post_lowering(&interp_backend, f, d)
						       : 0;
	if (r < 0)
		return r;
	int own = cbackend_post_lowering(f);
	return cbackend_batch_split(f) || own || r;
}

/* -O0..-O3: the rows of Pipelines.def */
const struct backend cbackend_backend = {
	"c", cb_is_op_supported, backend_node_supported_with_blocks, cb_should_lower, cb_post_lowering, cb_compile, cb_run, cb_destroy,
	{
#define C_PIPELINE(level, name, contents, desc) [level] = name,
#include "backends/c/Pipelines.def"
	},
};
