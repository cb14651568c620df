/* run.c - glow-run's driver: binds -input files to the function's input
 * placeholders, runs it on the chosen backend, and prints, writes or
 * compares its outputs (the behaviour is described in
 * tools/glow-run/glow-run.c).
 */
#define _POSIX_C_SOURCE 200809L
#include "runner/runner.h"
#include "runner/train.h"
#include "backends/c/cbackend.h"
#include "import/onnx/tensorio.h"
#include "support/io.h"
#include "support/util.h"

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* One placeholder and its buffer. */
struct slot {
	struct backend_io io;
	void *data;
	bool bound;
	bool tried; /* named by an -input that failed */
};

struct run {
	struct run_options *o;
	struct diag *d;
	struct ir_func *f;
	struct slot *slots;
	size_t nslots;
};

static struct slot *find_slot(struct run *r, const char *name)
{
	for (size_t i = 0; i < r->nslots; i++)
		if (strcmp(r->slots[i].io.w->v.name, name) == 0)
			return &r->slots[i];
	return NULL;
}

/* Splits "NAME=FILE" (at the last '=' so names may not contain one, files
 * may not either); returns the name (malloc'd) or NULL. */
static char *split_binding(const char *arg, const char **file)
{
	const char *eq = strrchr(arg, '=');
	if (!eq || eq == arg || !eq[1])
		return NULL;
	*file = eq + 1;
	return xstrndup(arg, (size_t)(eq - arg));
}

/* Reads FILE for placeholder s (checking its type) into a fresh buffer. */
static void *read_for(struct run *r, const struct slot *s, const char *what, const char *file)
{
	struct tio_tensor t;
	if (tio_read(file, &t, r->d))
		return NULL;
	char msg[512];
	const char *bad = tio_mismatch(&t, s->io.w->v.type, msg, sizeof msg);
	if (bad) {
		diag_error(r->d, LOC_NONE, "%s '%s': %s: %s", what, s->io.w->v.name, file, bad);
		tio_free(&t);
		return NULL;
	}
	void *p = t.data;
	t.data = NULL;
	tio_free(&t);
	return p;
}

static int bind_inputs(struct run *r)
{
	int errs = 0;
	for (size_t i = 0; i < r->o->inputs.n; i++) {
		const char *arg = r->o->inputs.v[i], *file;
		char *name = split_binding(arg, &file);
		if (!name) {
			diag_error(r->d, LOC_NONE, "-input takes NAME=FILE, got '%s'", arg);
			errs++;
			continue;
		}
		struct slot *s = find_slot(r, name);
		if (!s) {
			struct ir_value *v = ir_func_find(r->f, name, strlen(name));
			if (v && v->vkind == IV_WEIGHT)
				diag_error(r->d, LOC_NONE, "'%s' is a constant weight, not an input", name);
			else
				diag_error(r->d, LOC_NONE, "no placeholder named '%s' in function @%s", name, r->f->name);
			errs++;
		} else if (!s->io.is_input) {
			diag_error(r->d, LOC_NONE, "'%s' is not an input (%s)", name,
				   s->io.w->init != IR_INIT_NONE ? "it has an initializer"
								 : "the program writes it before reading it");
			errs++;
		} else if (s->bound) {
			diag_error(r->d, LOC_NONE, "input '%s' is given twice", name);
			errs++;
		} else {
			void *p = read_for(r, s, "input", file);
			if (!p) {
				s->tried = true;
				errs++;
			} else {
				s->data = p;
				s->bound = true;
			}
		}
		free(name);
	}
	for (size_t i = 0; i < r->nslots; i++) {
		struct slot *s = &r->slots[i];
		if (s->io.is_input && !s->bound && !s->tried) {
			diag_error(r->d, LOC_NONE, "no value for input '%s' (use -input %s=FILE)", s->io.w->v.name,
				   s->io.w->v.name);
			errs++;
		}
	}
	return errs ? -1 : 0;
}

/* ---- printing ---- */

/* Every output as text (tensor_print) to path ("-": stdout), whole or not
 * at all. 0, or -1 after reporting. */
static int print_outputs(struct run *r, const char *path)
{
	struct ostream os;
	if (ostream_open(&os, path, r->d))
		return -1;
	for (size_t i = 0; i < r->nslots; i++)
		if (r->slots[i].io.is_output)
			tensor_print(&os, r->slots[i].io.w->v.name, r->slots[i].io.w->v.type, r->slots[i].data,
				     r->o->print_full);
	return ostream_commit(&os, r->d) ? -1 : 0;
}

/* ---- files ---- */

static int write_outputs(struct run *r)
{
	const char *dir = r->o->output_dir, *ext = runner_output_dir(r->o, r->d);
	if (!ext)
		return -1;
	int errs = 0;
	for (size_t i = 0; i < r->nslots; i++) {
		struct slot *s = &r->slots[i];
		if (!s->io.is_output)
			continue;
		char *base = runner_file_base(s->io.w->v.name);
		bool clash = false;
		for (size_t j = 0; j < i && !clash; j++) {
			if (!r->slots[j].io.is_output)
				continue;
			char *other = runner_file_base(r->slots[j].io.w->v.name);
			if (strcmp(other, base) == 0) {
				diag_error(r->d, LOC_NONE, "outputs '%s' and '%s' both map to file '%s%s'",
					   r->slots[j].io.w->v.name, s->io.w->v.name, base, ext);
				clash = true;
			}
			free(other);
		}
		if (!clash) {
			char *path = runner_path(dir, base, ext);
			errs += runner_write_tensor(r->o->format, path, s->io.w->v.name, s->io.w->v.type, s->data, r->d) != 0;
			free(path);
		} else {
			errs++;
		}
		free(base);
	}
	return errs ? -1 : 0;
}

static bool file_exists(const char *p)
{
	struct stat st;
	return stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

/* The expected file of output `name` in dir (malloc'd), or NULL. */
static char *find_expected(struct run *r, const char *dir, const char *name)
{
	char *base = runner_file_base(name);
	char *p = runner_path(dir, base, ".pb");
	if (!file_exists(p)) {
		free(p);
		p = runner_path(dir, base, ".npy");
	}
	free(base);
	if (file_exists(p))
		return p;
	free(p);
	/* ONNX test data: a .pb whose TensorProto carries the name */
	DIR *dd = opendir(dir);
	if (!dd)
		return NULL;
	char **names = NULL;
	size_t n = 0, cap = 0;
	for (struct dirent *e; (e = readdir(dd));) {
		size_t l = strlen(e->d_name);
		if (l > 3 && strcmp(e->d_name + l - 3, ".pb") == 0) {
			names = xgrow(names, &cap, n + 1, sizeof *names);
			names[n++] = xstrdup(e->d_name);
		}
	}
	closedir(dd);
	char *found = NULL;
	for (size_t i = 0; i < n; i++) {
		char *path = runner_path(dir, names[i], "");
		struct diag quiet;
		diag_init(&quiet, "glow-run");
		quiet.out = NULL;
		struct tio_tensor t;
		FILE *null = fopen("/dev/null", "w");
		quiet.out = null ? null : stderr;
		if (!found && tio_read(path, &t, &quiet) == 0) {
			if (t.name && strcmp(t.name, name) == 0)
				found = path, path = NULL;
			tio_free(&t);
		}
		if (null)
			fclose(null);
		diag_free(&quiet);
		free(path);
		free(names[i]);
	}
	free(names);
	(void)r;
	return found;
}

/* ---- comparison ---- */

/* Compares output s with the file; returns 0 if it matches, 1 if not (after
 * reporting the worst element), -1 on error. */
static int compare(struct run *r, const struct slot *s, const char *file)
{
	const struct type *t = s->io.w->v.type;
	void *exp = read_for(r, s, "expected value of output", file);
	if (!exp)
		return -1;
	struct tensor_cmp c;
	tensor_compare(t, s->data, exp, &r->o->tol, &c);
	const char *name = s->io.w->v.name;
	if (!c.bad) {
		printf("output '%s': ok (%" PRIu64 " elements)\n", name, c.n);
		fflush(stdout);
		free(exp);
		return 0;
	}
	char ix[160], gs[64], xs[64], errs[64];
	tensor_index_str(t, c.worst, ix, sizeof ix);
	tensor_elem_str(t, s->data, c.worst, gs, sizeof gs);
	tensor_elem_str(t, exp, c.worst, xs, sizeof xs);
	if (c.exact)
		snprintf(errs, sizeof errs, "exact match required");
	else {
		char eb[48];
		format_double(eb, sizeof eb, c.worst_err);
		snprintf(errs, sizeof errs, "error %s", eb);
	}
	printf("output '%s': %" PRIu64 " of %" PRIu64 " elements differ; worst at %s: got %s, expected %s, %s\n",
	       name, c.bad, c.n, ix, gs, xs, errs);
	fflush(stdout);
	free(exp);
	return 1;
}

static int check_expected(struct run *r)
{
	int errs = 0, mism = 0;
	bool *done = xcalloc(r->nslots + 1, 1);
	for (size_t i = 0; i < r->o->expected.n; i++) {
		const char *arg = r->o->expected.v[i], *file;
		char *name = split_binding(arg, &file);
		struct slot *s = name ? find_slot(r, name) : NULL;
		if (!name)
			diag_error(r->d, LOC_NONE, "-expected takes NAME=FILE, got '%s'", arg);
		else if (!s || !s->io.is_output)
			diag_error(r->d, LOC_NONE, "no output named '%s' in function @%s", name, r->f->name);
		if (!s || !s->io.is_output) {
			errs++;
			free(name);
			continue;
		}
		done[s - r->slots] = true;
		int rc = compare(r, s, file);
		errs += rc < 0;
		mism += rc > 0;
		free(name);
	}
	if (r->o->expected_dir)
		for (size_t i = 0; i < r->nslots; i++) {
			struct slot *s = &r->slots[i];
			if (!s->io.is_output || done[i])
				continue;
			char *file = find_expected(r, r->o->expected_dir, s->io.w->v.name);
			if (!file) {
				diag_error(r->d, LOC_NONE, "no expected value for output '%s' in '%s'", s->io.w->v.name,
					   r->o->expected_dir);
				errs++;
				continue;
			}
			int rc = compare(r, s, file);
			errs += rc < 0;
			mism += rc > 0;
			free(file);
		}
	free(done);
	if (mism)
		diag_error(r->d, LOC_NONE, "%d output%s do%s not match the expected values", mism, mism == 1 ? "" : "s",
			   mism == 1 ? "es" : "");
	return errs || mism ? -1 : 0;
}

static struct ir_func *pick_func(struct ir_module *m, const char *name, struct diag *d)
{
	if (name) {
		if (name[0] == '@')
			name++;
		struct ir_func *f = ir_module_find_func(m, name);
		if (!f)
			diag_error(d, LOC_NONE, "no function named '@%s'", name);
		return f;
	}
	if (m->nfuncs == 1)
		return m->funcs[0];
	if (m->nfuncs == 0)
		diag_error(d, LOC_NONE, "the module has no function");
	else
		diag_error(d, LOC_NONE, "the module has %zu functions; choose one with -func=@name", m->nfuncs);
	return NULL;
}

/* Ends in suffix. */
static bool ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), k = strlen(suffix);
	return n >= k && strcmp(s + n - k, suffix) == 0;
}

/* -o FILE: the text of -print, or with FILE.npy / FILE.pb the program's one
 * output as a tensor file. 0, or -1 after reporting. */
static int write_o(struct run *r)
{
	const char *path = r->o->output;
	bool npy = ends_with(path, ".npy"), pb = ends_with(path, ".pb");
	if (npy || pb) {
		const struct slot *one = NULL;
		size_t n = 0;
		for (size_t i = 0; i < r->nslots; i++)
			if (r->slots[i].io.is_output)
				one = &r->slots[i], n++;
		if (n != 1) {
			diag_error(r->d, LOC_NONE,
				   "-o %s writes one tensor, but @%s has %zu outputs (use -output-dir for several)", path,
				   r->f->name, n);
			return -1;
		}
		return npy ? tio_write_npy(path, one->io.w->v.type, one->data, r->d)
			   : tio_write_pb(path, one->io.w->v.name, one->io.w->v.type, one->data, r->d);
	}
	return print_outputs(r, path);
}

int runner_glow_run(void *opts, struct diag *d)
{
	struct run_options *o = opts;
	if (o->print_full)
		o->print = true;
	if (tensor_tol_parse(&o->tol, d) || runner_set_threads(o->threads, d))
		return 1;
	if (runner_train_requested(o))
		return runner_glow_train(o, d);
	struct runner_program p;
	if (runner_program_open(&p, o, d))
		return 1;
	struct ir_module *m = p.m;
	int status = 1;
	struct run r = {o, d, NULL, NULL, 0};
	struct backend_compiled *c = NULL;
	const struct backend *be = NULL;
	struct backend_binding *binds = NULL;
	if (!m || !(be = backend_select(0, o->backend, NULL, d)))
		goto out;
	if (o->gemm != CBACKEND_GEMM_BUILTIN && strcmp(be->name, "c") != 0) {
		diag_error(d, LOC_NONE, "-gemm applies to the C backend only (give -backend=c)");
		goto out;
	}
	if (o->winograd != CBACKEND_WINO_AUTO && strcmp(be->name, "c") != 0) {
		diag_error(d, LOC_NONE, "-winograd applies to the C backend only (give -backend=c)");
		goto out;
	}
	if (o->output && o->output_dir) {
		diag_error(d, LOC_NONE, "-o and -output-dir cannot be combined (-o writes one file)");
		goto out;
	}
	r.f = pick_func(m, o->func, d);
	if (!r.f)
		goto out;
	if (o->print_signature) {
		/* the signature is this run's only result: -o FILE takes it */
		struct ostream os;
		if (ostream_open(&os, o->output ? o->output : "-", d) == 0) {
			tensor_print_signature(&os, r.f);
			status = ostream_commit(&os, d) ? 1 : 0;
		}
		goto out;
	}
	if (o->profile) { /* a profiling run: profile.c */
		status = runner_profile(o, be, r.f, &p.st, d);
		goto out;
	}
	size_t nio;
	struct backend_io *io = backend_func_io(r.f, &nio);
	r.slots = xcalloc(nio + 1, sizeof *r.slots);
	r.nslots = nio;
	for (size_t i = 0; i < nio; i++)
		r.slots[i].io = io[i];
	free(io);
	if (bind_inputs(&r))
		goto out;
	stages_mark(&p.st, "read inputs");
	c = runner_compile(be, r.f, o->ignore_plan, o->gemm, o->winograd, &p.st, d);
	if (!c)
		goto out;
	binds = xcalloc(r.nslots + 1, sizeof *binds);
	size_t nb = 0;
	for (size_t i = 0; i < r.nslots; i++) {
		struct slot *s = &r.slots[i];
		if (!s->bound && !s->io.is_output)
			continue;
		if (!s->data) {
			/* the output's size is the program's: too large is bad input */
			char what[300];
			snprintf(what, sizeof what, "output '%s'", s->io.w->v.name);
			s->data = tensor_alloc(type_bytes(s->io.w->v.type), what, d);
			if (!s->data)
				goto out;
		}
		binds[nb].w = s->io.w;
		binds[nb].data = s->data;
		nb++;
	}
	int rrc = be->run(c, binds, nb, d);
	stages_mark(&p.st, "run");
	if (rrc)
		goto out;
	bool any = o->print || o->output || o->output_dir || o->expected.n || o->expected_dir;
	if ((o->print && !o->output) || !any) {
		if (print_outputs(&r, "-"))
			goto out;
	}
	fflush(stdout);
	status = 0;
	if (o->output && write_o(&r))
		status = 1;
	if (o->output_dir && write_outputs(&r))
		status = 1;
	stages_mark(&p.st, "write");
	if (o->expected.n || o->expected_dir) {
		if (check_expected(&r))
			status = 1;
		stages_mark(&p.st, "compare");
	}
	fflush(stdout);
out:
	if (c)
		be->destroy(c);
	free(binds);
	for (size_t i = 0; i < r.nslots; i++)
		free(r.slots[i].data);
	free(r.slots);
	runner_program_close(&p);
	return status;
}
