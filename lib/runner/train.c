/* train.c - glow-run's training run (train.h; docs/Training.md describes
 * the options and the flow).
 *
 * Both functions are compiled once on the chosen backend and called per
 * batch (on the C backend as one training bundle, backends/c/cgen_train.c,
 * whose mutable region holds the slots): the step @F_grad with the batch's examples gathered from the
 * training set, @F with the held-out set's. The placeholders the step reads
 * and writes (the trainable weights and their velocities: "state") live in
 * one buffer each, bound to both functions, so a step's updates are the
 * next step's weights and the evaluation sees the weights of the epoch.
 * Nothing is written to files between steps.
 *
 * Determinism: the shuffle and the initial weights come from splitmix64
 * (support/rng.h) seeded by -seed, and each backend computes a step the
 * same way every time, so one seed gives bitwise the same weights.
 */
#define _POSIX_C_SOURCE 200809L
#include "runner/train.h"
#include "backends/c/cbackend.h"
#include "dataset/dataset.h"
#include "import/onnx/tensorio.h"
#include "support/io.h"
#include "support/rng.h"
#include "support/util.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* One placeholder of a function and what feeds it. */
struct tslot {
	struct backend_io io;
	void *data;            /* the bound buffer (state: shared, owned by the step's slot) */
	bool owned;            /* data is freed with this slot */
	struct dataset *ds;    /* fed from this data set per batch, or NULL */
	bool state;            /* read and written by the step: a trained weight or a velocity */
};

struct tfunc {
	struct ir_func *f;
	struct tslot *slots;
	size_t n;
	struct backend_compiled *c;
	struct backend_binding *binds;
};

struct train {
	struct run_options *o;
	struct diag *d;
	const struct backend *be;
	struct tfunc step, eval;
	struct dataset *train_ds, *test_ds; /* -train-data / -test-data, in order */
	size_t ntrain, ntest;
	uint64_t epochs, batch, seed, limit;
	uint64_t train_count, test_count;
	struct tslot *loss, *scores, *labels;
	/* on the C backend: the training bundle of the step and its model,
	 * whose mutable region holds every slot's data (NULL elsewhere) */
	struct backend_compiled *tb;
};

bool runner_train_requested(const struct run_options *o)
{
	return o->epochs || o->train_data.n || o->test_data.n;
}

/* A positive decimal integer option (or `def` when not given); -1 after
 * reporting. */
static int parse_count(const char *opt, const char *s, uint64_t def, bool zero_ok, uint64_t *out, struct diag *d)
{
	if (!s) {
		*out = def;
		return 0;
	}
	char *end;
	errno = 0;
	unsigned long long v = s[0] >= '0' && s[0] <= '9' ? strtoull(s, &end, 10) : 0;
	if (s[0] < '0' || s[0] > '9' || *end || errno || (!zero_ok && v == 0)) {
		diag_error(d, LOC_NONE, "-%s takes a %s integer, got '%s'", opt, zero_ok ? "non-negative" : "positive", s);
		return -1;
	}
	*out = v;
	return 0;
}

static struct tslot *find(struct tfunc *tf, const char *name)
{
	for (size_t i = 0; i < tf->n; i++)
		if (strcmp(tf->slots[i].io.w->v.name, name) == 0)
			return &tf->slots[i];
	return NULL;
}

static void tfunc_init(struct tfunc *tf, struct ir_func *f)
{
	tf->f = f;
	struct backend_io *io = backend_func_io(f, &tf->n);
	tf->slots = xcalloc(tf->n + 1, sizeof *tf->slots);
	for (size_t i = 0; i < tf->n; i++)
		tf->slots[i].io = io[i];
	free(io);
}

static void tfunc_free(struct tfunc *tf, const struct backend *be)
{
	if (tf->c)
		be->destroy(tf->c);
	for (size_t i = 0; i < tf->n; i++)
		if (tf->slots[i].owned)
			free(tf->slots[i].data);
	free(tf->slots);
	free(tf->binds);
}

/* Splits "NAME=FILE" at the last '='; the name malloc'd, or NULL. */
static char *split_arg(const char *arg, const char **file)
{
	const char *eq = strrchr(arg, '=');
	if (!eq || eq == arg || !eq[1])
		return NULL;
	*file = eq + 1;
	return xstrndup(arg, (size_t)(eq - arg));
}

static struct ir_func *find_func(struct ir_module *m, const char *name, struct diag *d)
{
	struct ir_func *f = ir_module_find_func(m, name[0] == '@' ? name + 1 : name);
	if (!f)
		diag_error(d, LOC_NONE, "no function named '@%s'", name[0] == '@' ? name + 1 : name);
	return f;
}

/* The training step: -func, or the one function whose name ends in _grad. */
static struct ir_func *pick_step(struct ir_module *m, const char *name, struct diag *d)
{
	if (name)
		return find_func(m, name, d);
	struct ir_func *found = NULL;
	size_t n = 0;
	for (size_t i = 0; i < m->nfuncs; i++) {
		size_t l = strlen(m->funcs[i]->name);
		if (l > 5 && strcmp(m->funcs[i]->name + l - 5, "_grad") == 0)
			found = m->funcs[i], n++;
	}
	if (n == 1)
		return found;
	if (n)
		diag_error(d, LOC_NONE, "the module has %zu training steps (functions @..._grad); choose one with -func=@name",
			   n);
	else
		diag_error(d, LOC_NONE, "the module has no training step (a function @..._grad made by glow-opt "
					"-passes=differentiate); name it with -func=@name");
	return NULL;
}

/* Loads the data sets of list (NAME=FILE each) into *out, binding them to
 * placeholders of tf; checks that they agree on the number of examples.
 * what: "-train-data" or "-test-data". */
static int load_sets(struct train *t, const struct cl_list *list, const char *what, struct tfunc *tf,
		     struct dataset **out, size_t *nout, uint64_t *count)
{
	*out = xcalloc(list->n + 1, sizeof **out);
	*nout = 0;
	int errs = 0;
	for (size_t i = 0; i < list->n; i++) {
		const char *file;
		char *name = split_arg(list->v[i], &file);
		struct tslot *s = name ? find(tf, name) : NULL;
		bool ok = false;
		if (!name)
			diag_error(t->d, LOC_NONE, "%s takes NAME=FILE, got '%s'", what, list->v[i]);
		else if (!s)
			diag_error(t->d, LOC_NONE, "%s: no placeholder named '%s' in function @%s", what, name, tf->f->name);
		else if (s->ds)
			diag_error(t->d, LOC_NONE, "%s: placeholder '%s' is given twice", what, name);
		else if (!s->io.is_input || s->io.is_output)
			diag_error(t->d, LOC_NONE, "%s: '%s' is not a data input of @%s (%s)", what, name, tf->f->name,
				   s->io.is_input ? "the function updates it" : "the function writes it");
		else if (dataset_load(file, &(*out)[*nout], t->d) == 0) {
			struct dataset *ds = &(*out)[(*nout)++];
			if (dataset_check(ds, name, s->io.w->v.type, t->d) == 0)
				s->ds = ds, ok = true;
		}
		errs += !ok;
		free(name);
	}
	if (errs)
		return -1;
	for (size_t i = 1; i < *nout; i++)
		if ((*out)[i].count != (*out)[0].count) {
			diag_error(t->d, LOC_NONE, "%s: '%s' has %" PRIu64 " examples but '%s' has %" PRIu64, what,
				   (*out)[0].name, (*out)[0].count, (*out)[i].name, (*out)[i].count);
			return -1;
		}
	*count = *nout ? (*out)[0].count : 0;
	if (t->limit && *count > t->limit)
		*count = t->limit;
	return 0;
}

/* He-style uniform initial values (cbackend_init_fan_in: the rule a
 * training bundle's NAME_init_weights follows too): +-sqrt(6 / fan_in),
 * where fan_in is dims[0] for a matrix (FullyConnected's K x M weights)
 * and the product of dims[1..] for a filter (O x kH x kW x I). Rank 0 and
 * 1 (biases) and the velocities start at zero. Each placeholder has its
 * own stream. */
static void init_state(struct train *t, struct tslot *s, size_t index)
{
	const struct type *ty = s->io.w->v.type;
	uint64_t fan_in = cbackend_init_fan_in(ty, s->io.w->v.name);
	if (!fan_in)
		return; /* tensor_alloc zeroed it */
	double limit = sqrt(6.0 / (double)fan_in);
	uint64_t rs = CBACKEND_INIT_SEED(t->seed, index);
	float *p = s->data;
	for (uint64_t i = 0, n = type_numel(ty); i < n; i++)
		p[i] = (float)((2.0 * rng_unit(&rs) - 1.0) * limit);
}

/* Reads -input FILE into slot s (its type checked). */
static int read_initial(struct train *t, struct tslot *s, const char *file)
{
	struct tio_tensor tt;
	if (tio_read(file, &tt, t->d))
		return -1;
	char msg[512];
	const char *bad = tio_mismatch(&tt, s->io.w->v.type, msg, sizeof msg);
	if (bad) {
		diag_error(t->d, LOC_NONE, "input '%s': %s: %s", s->io.w->v.name, file, bad);
		tio_free(&tt);
		return -1;
	}
	memcpy(s->data, tt.data, (size_t)type_bytes(s->io.w->v.type));
	tio_free(&tt);
	return 0;
}

/* Allocates slot s's own buffer, zeroed; -1 after reporting. */
static int alloc_slot(struct train *t, struct tslot *s)
{
	char what[300];
	snprintf(what, sizeof what, "placeholder '%s'", s->io.w->v.name);
	s->data = tensor_alloc(type_bytes(s->io.w->v.type), what, t->d);
	s->owned = s->data != NULL;
	return s->data ? 0 : -1;
}

/* Allocates every slot's buffer: data and outputs scratch, state from
 * -input or initialized. The eval function's state shares the step's
 * buffers. */
static int bind_slots(struct train *t)
{
	struct tfunc *st = &t->step, *ev = &t->eval;
	int errs = 0;
	for (size_t i = 0; i < st->n; i++) {
		struct tslot *s = &st->slots[i];
		s->state = s->io.is_input && s->io.is_output;
		if (alloc_slot(t, s))
			return -1;
	}
	for (size_t i = 0; ev->f && i < ev->n; i++) {
		struct tslot *s = &ev->slots[i], *same = find(st, s->io.w->v.name);
		if (same && same->state) {
			s->data = same->data;
			s->state = true;
			continue;
		}
		if (alloc_slot(t, s))
			return -1;
	}
	/* -input: initial weights, or the value of another input of both */
	bool *given = xcalloc(st->n + ev->n + 1, 1);
	for (size_t i = 0; i < t->o->inputs.n; i++) {
		const char *file;
		char *name = split_arg(t->o->inputs.v[i], &file);
		struct tslot *s = name ? find(st, name) : NULL, *e = name && ev->f ? find(ev, name) : NULL;
		if (!name)
			diag_error(t->d, LOC_NONE, "-input takes NAME=FILE, got '%s'", t->o->inputs.v[i]);
		else if (!s && !e)
			diag_error(t->d, LOC_NONE, "no placeholder named '%s' in function @%s", name, st->f->name);
		else if ((s && s->ds) || (e && e->ds))
			diag_error(t->d, LOC_NONE, "'%s' is fed from a data set; -input cannot also bind it", name);
		else if ((s && !s->io.is_input) || (e && !e->io.is_input && !e->state))
			diag_error(t->d, LOC_NONE, "'%s' is not an input", name);
		else if ((s && given[s - st->slots]) || (!s && given[st->n + (size_t)(e - ev->slots)]))
			diag_error(t->d, LOC_NONE, "input '%s' is given twice", name);
		else {
			struct tslot *to = s ? s : e;
			given[s ? (size_t)(s - st->slots) : st->n + (size_t)(e - ev->slots)] = true;
			if (read_initial(t, to, file) == 0) {
				/* a plain input of both functions: the eval copy too */
				if (s && e && !e->state)
					memcpy(e->data, s->data, (size_t)type_bytes(s->io.w->v.type));
				free(name);
				continue;
			}
		}
		errs++;
		free(name);
	}
	for (size_t i = 0; i < st->n && !errs; i++) {
		struct tslot *s = &st->slots[i];
		if (s->state && !given[i])
			init_state(t, s, i);
		else if (s->io.is_input && !s->ds && !given[i]) {
			diag_error(t->d, LOC_NONE,
				   "input '%s' of @%s is neither fed by -train-data nor trained; bind it with -input %s=FILE",
				   s->io.w->v.name, st->f->name, s->io.w->v.name);
			errs++;
		}
	}
	for (size_t i = 0; ev->f && i < ev->n && !errs; i++) {
		struct tslot *s = &ev->slots[i], *same = find(st, s->io.w->v.name);
		if (s->io.is_input && !s->ds && !s->state && !given[st->n + i] && !(same && given[same - st->slots])) {
			diag_error(t->d, LOC_NONE,
				   "input '%s' of @%s is neither fed by -test-data nor trained; bind it with -input %s=FILE",
				   s->io.w->v.name, ev->f->name, s->io.w->v.name);
			errs++;
		}
	}
	free(given);
	return errs ? -1 : 0;
}

/* The output of tf named by opt, or the only one that `fits`; what names
 * it in messages. */
static struct tslot *pick_output(struct train *t, struct tfunc *tf, const char *opt, const char *optname,
				 bool (*fits)(const struct train *, const struct tslot *), const char *what)
{
	if (opt) {
		struct tslot *s = find(tf, opt);
		if (!s || !s->io.is_output || s->state) {
			diag_error(t->d, LOC_NONE, "-%s=%s: @%s has no such output", optname, opt, tf->f->name);
			return NULL;
		}
		if (!fits(t, s)) {
			char ts[160];
			diag_error(t->d, LOC_NONE, "-%s=%s: the output's type %s is not %s", optname, opt,
				   type_str(s->io.w->v.type, ts, sizeof ts), what);
			return NULL;
		}
		return s;
	}
	struct tslot *found = NULL;
	size_t n = 0;
	for (size_t i = 0; i < tf->n; i++)
		if (tf->slots[i].io.is_output && !tf->slots[i].state && fits(t, &tf->slots[i]))
			found = &tf->slots[i], n++;
	if (n == 1)
		return found;
	if (n)
		diag_error(t->d, LOC_NONE, "@%s writes several outputs that are %s; choose one with -%s=NAME", tf->f->name,
			   what, optname);
	else
		diag_error(t->d, LOC_NONE, "@%s writes no output that is %s; Save it to a placeholder in the model",
			   tf->f->name, what);
	return NULL;
}

/* the loss: one float (the batch's summed loss) */
static bool fits_loss(const struct train *t, const struct tslot *s)
{
	(void)t;
	return s->io.w->v.type->elem == EK_FLOAT && type_numel(s->io.w->v.type) == 1;
}

/* the scores: float [batch, classes] */
static bool fits_scores(const struct train *t, const struct tslot *s)
{
	const struct type *ty = s->io.w->v.type;
	return ty->elem == EK_FLOAT && ty->rank == 2 && ty->dims[0] == t->batch && ty->dims[1] > 1;
}

/* The leading dimension shared by the data placeholders of tf; 0 after
 * reporting a disagreement. */
static uint64_t batch_of(struct train *t, struct tfunc *tf)
{
	uint64_t b = 0;
	const char *first = NULL;
	for (size_t i = 0; i < tf->n; i++) {
		const struct tslot *s = &tf->slots[i];
		if (!s->ds)
			continue;
		if (first && s->io.w->v.type->dims[0] != b) {
			diag_error(t->d, LOC_NONE, "data placeholders '%s' and '%s' of @%s have different batch sizes", first,
				   s->io.w->v.name, tf->f->name);
			return 0;
		}
		b = s->io.w->v.type->dims[0], first = s->io.w->v.name;
	}
	return b;
}

/* The first count labels of ds are in [0, classes). */
static int label_range(struct train *t, const struct dataset *ds, uint64_t count, uint64_t classes)
{
	for (uint64_t i = 0; i < count; i++) {
		double v = dataset_value(ds, i, 0);
		if (v < 0 || v >= (double)classes) {
			diag_error(t->d, LOC_NONE, "%s: label %.0f of example %" PRIu64 " is not in [0, %" PRIu64 ")",
				   ds->name, v, i, classes);
			return -1;
		}
	}
	return 0;
}

/* The test labels (an integer data set of one value per example) are in
 * [0, classes). */
static int check_labels(struct train *t)
{
	for (size_t i = 0; i < t->eval.n; i++) {
		struct tslot *s = &t->eval.slots[i];
		const struct type *ty = s->io.w->v.type;
		if (s->ds && (elem_is_integer((enum elem_kind)ty->elem)) && ty->rank == 1) {
			if (t->labels) {
				diag_error(t->d, LOC_NONE, "-test-data: two label sets ('%s' and '%s'); the accuracy needs one",
					   t->labels->io.w->v.name, s->io.w->v.name);
				return -1;
			}
			t->labels = s;
		}
	}
	if (!t->labels) {
		diag_error(t->d, LOC_NONE, "-test-data: no label set (an integer placeholder of shape [batch]) to "
					   "measure the accuracy against");
		return -1;
	}
	return label_range(t, t->labels->ds, t->test_count, t->scores->io.w->v.type->dims[1]);
}

/* The training labels are in [0, classes) when the step saves scores of
 * [batch, classes] to tell (its copy of @F's outputs): a label out of range
 * is reported with its file before training, not as a run-time error of
 * the loss in the middle of an epoch. */
static int check_train_labels(struct train *t)
{
	const struct tslot *sc = NULL;
	size_t n = 0;
	for (size_t i = 0; i < t->step.n; i++)
		if (t->step.slots[i].io.is_output && !t->step.slots[i].state && fits_scores(t, &t->step.slots[i]))
			sc = &t->step.slots[i], n++;
	if (n != 1)
		return 0;
	for (size_t i = 0; i < t->step.n; i++) {
		const struct tslot *s = &t->step.slots[i];
		if (s->ds && elem_is_integer((enum elem_kind)s->io.w->v.type->elem) && s->io.w->v.type->rank == 1 &&
		    label_range(t, s->ds, t->train_count, sc->io.w->v.type->dims[1]))
			return -1;
	}
	return 0;
}

static int compile(struct train *t, struct tfunc *tf, struct stages *st)
{
	tf->c = runner_compile(t->be, tf->f, t->o->ignore_plan, t->o->gemm, t->o->winograd, st, t->d);
	if (!tf->c)
		return -1;
	tf->binds = xcalloc(tf->n + 1, sizeof *tf->binds);
	for (size_t i = 0; i < tf->n; i++)
		tf->binds[i] = (struct backend_binding){tf->slots[i].io.w, tf->slots[i].data};
	return 0;
}

/* On the C backend, with the step's model @F in the module: one training
 * bundle of both (cbackend_compile_training, the code a user's bundle
 * runs), every slot moved into its mutable region, so that a step updates
 * the weights in place and nothing is copied per batch. 1 when built, 0
 * when the functions are compiled one by one (another backend, no @F), -1
 * after reporting. */
static int compile_bundle(struct train *t, struct ir_module *m, struct stages *st)
{
	size_t l = strlen(t->step.f->name);
	char *base = l > 5 && strcmp(t->step.f->name + l - 5, "_grad") == 0 ? xstrndup(t->step.f->name, l - 5) : NULL;
	struct ir_func *model = base ? ir_module_find_func(m, base) : NULL;
	free(base);
	if (strcmp(t->be->name, "c") != 0 || !model)
		return 0;
	double gen = 0, cc = 0;
	struct cbackend_options co = {"prog", false, false, t->o->gemm, t->o->winograd, &gen, &cc};
	struct ir_func *fs[2] = {t->step.f, model};
	t->tb = cbackend_compile_training(fs, 2, 0, 1, &co, t->d);
	stages_add(st, "code generation", gen);
	stages_add(st, "C compile", cc);
	stages_mark(st, "load");
	if (!t->tb)
		return -1;
	struct tfunc *tfs[2] = {&t->step, &t->eval};
	for (size_t k = 0; k < 2; k++)
		for (size_t i = 0; i < tfs[k]->n; i++) {
			struct tslot *s = &tfs[k]->slots[i];
			uint8_t *p = cbackend_placeholder(t->tb, s->io.w->v.name);
			if (!p)
				unreachable("a placeholder outside its training bundle");
			if (s->owned) /* the eval's state shares the step's, moved already */
				memcpy(p, s->data, (size_t)type_bytes(s->io.w->v.type)), free(s->data);
			s->data = p;
			s->owned = false;
		}
	return 1;
}

/* Runs the step (k = 0) or the evaluation (k = 1) on their bound slots. */
static int run_func(struct train *t, size_t k)
{
	struct tfunc *tf = k ? &t->eval : &t->step;
	return t->tb ? cbackend_run_function(t->tb, k, t->d) : t->be->run(tf->c, tf->binds, tf->n, t->d);
}

/* Gathers examples idx[0..n) of every data set of tf into its buffers. */
static void gather(struct tfunc *tf, const uint64_t *idx, size_t n)
{
	for (size_t i = 0; i < tf->n; i++)
		if (tf->slots[i].ds)
			dataset_gather(tf->slots[i].ds, tf->slots[i].io.w->v.type, idx, n, tf->slots[i].data);
}

/* Runs @F over the held-out set in batches (the last one padded with
 * zeros, its padding not counted); *correct receives the examples whose
 * argmax of the scores is the label. */
static int evaluate(struct train *t, uint64_t *correct)
{
	uint64_t b = t->batch, *idx = xmalloc(b * sizeof *idx);
	const float *sc = t->scores->data;
	uint64_t classes = t->scores->io.w->v.type->dims[1];
	*correct = 0;
	int rc = 0;
	for (uint64_t start = 0; start < t->test_count && rc == 0; start += b) {
		size_t n = (size_t)(t->test_count - start < b ? t->test_count - start : b);
		for (size_t i = 0; i < n; i++)
			idx[i] = start + i;
		gather(&t->eval, idx, n);
		rc = run_func(t, 1);
		for (size_t i = 0; i < n && rc == 0; i++) {
			const float *row = sc + i * classes;
			uint64_t best = 0;
			for (uint64_t k = 1; k < classes; k++)
				if (row[k] > row[best])
					best = k;
			*correct += (double)best == dataset_value(t->labels->ds, idx[i], 0);
		}
	}
	free(idx);
	return rc;
}

/* One epoch of steps; *loss receives the mean loss per example. */
static int run_epoch(struct train *t, uint64_t epoch, uint64_t *perm, uint64_t *rs, double *loss)
{
	uint64_t n = t->train_count, b = t->batch, nb = n / b;
	if (!t->o->no_shuffle)
		for (uint64_t i = n - 1; i > 0; i--) {
			uint64_t j = rng_next(rs) % (i + 1), x = perm[i];
			perm[i] = perm[j], perm[j] = x;
		}
	bool tty = isatty(fileno(stderr));
	uint64_t every = nb / 100 ? nb / 100 : 1;
	double sum = 0;
	for (uint64_t k = 0; k < nb; k++) {
		gather(&t->step, perm + k * b, (size_t)b);
		if (run_func(t, 0))
			return -1;
		float l = *(const float *)t->loss->data;
		if (!isfinite(l)) {
			diag_error(t->d, LOC_NONE,
				   "epoch %" PRIu64 ", batch %" PRIu64 ": the loss is not finite (the training diverged: a "
				   "smaller learning rate?)",
				   epoch, k + 1);
			return -1;
		}
		sum += l;
		if (tty && (k + 1) % every == 0) {
			fprintf(stderr, "\repoch %" PRIu64 "/%" PRIu64 ": %3" PRIu64 "%% (%" PRIu64 "/%" PRIu64
					" batches), loss %.4f",
				epoch, t->epochs, (k + 1) * 100 / nb, k + 1, nb, sum / ((double)(k + 1) * (double)b));
			fflush(stderr);
		}
	}
	if (tty)
		fprintf(stderr, "\r%60s\r", "");
	*loss = sum / ((double)nb * (double)b);
	return 0;
}

/* The processor time of this process: a training run is single-threaded,
 * so images per processor second are images per second of one core, also
 * on a machine shared with other work. */
static double cpu_seconds(void)
{
	struct timespec ts;
	if (clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts) != 0)
		return 0;
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* -output-dir: every state placeholder as DIR/NAME.npy (or .pb). */
static int write_state(struct train *t)
{
	const char *dir = t->o->output_dir, *ext = runner_output_dir(t->o, t->d);
	if (!ext)
		return -1;
	int errs = 0;
	for (size_t i = 0; i < t->step.n; i++) {
		const struct tslot *s = &t->step.slots[i];
		if (!s->state)
			continue;
		const char *name = s->io.w->v.name;
		char *base = runner_file_base(name), *path = runner_path(dir, base, ext);
		errs += runner_write_tensor(t->o->format, path, name, s->io.w->v.type, s->data, t->d) != 0;
		free(path);
		free(base);
	}
	return errs ? -1 : 0;
}

/* The options that make no sense in a training run. */
static int check_options(struct train *t)
{
	struct run_options *o = t->o;
	const char *bad = o->output ? "-o" : o->print ? "-print" : o->print_signature ? "-print-signature"
		: o->expected.n ? "-expected" : o->expected_dir ? "-expected-dir" : NULL;
	if (bad) {
		diag_error(t->d, LOC_NONE, "%s cannot be combined with a training run (-epochs); -output-dir writes the "
					   "trained weights", bad);
		return -1;
	}
	if (!o->epochs || !o->train_data.n) {
		diag_error(t->d, LOC_NONE, "a training run needs %s", !o->epochs ? "-epochs=N" : "-train-data NAME=FILE");
		return -1;
	}
	if (parse_count("epochs", o->epochs, 0, false, &t->epochs, t->d) ||
	    parse_count("batch", o->batch, 0, false, &t->batch, t->d) ||
	    parse_count("seed", o->seed, 1, true, &t->seed, t->d) ||
	    parse_count("limit", o->limit, 0, false, &t->limit, t->d))
		return -1;
	if (!(t->be = backend_select(0, o->backend, NULL, t->d)))
		return -1;
	if ((o->gemm != CBACKEND_GEMM_BUILTIN || o->winograd != CBACKEND_WINO_AUTO) && strcmp(t->be->name, "c") != 0) {
		diag_error(t->d, LOC_NONE, "-%s applies to the C backend only (give -backend=c)",
			   o->gemm != CBACKEND_GEMM_BUILTIN ? "gemm" : "winograd");
		return -1;
	}
	return 0;
}

/* Everything after the module is read: functions, data, bindings,
 * compilation, the epochs, the weights written. */
static int train_module(struct train *t, struct ir_module *m, struct stages *st)
{
	struct ir_func *f = pick_step(m, t->o->func, t->d);
	if (!f)
		return -1;
	tfunc_init(&t->step, f);
	if (t->o->test_data.n) {
		size_t l = strlen(f->name);
		char *base = l > 5 && strcmp(f->name + l - 5, "_grad") == 0 ? xstrndup(f->name, l - 5) : NULL;
		struct ir_func *e = base ? ir_module_find_func(m, base) : NULL;
		if (!e)
			diag_error(t->d, LOC_NONE, "-test-data: no function @%s to evaluate (the training step's name "
						   "without _grad)", base ? base : f->name);
		free(base);
		if (!e)
			return -1;
		tfunc_init(&t->eval, e);
	}
	if (load_sets(t, &t->o->train_data, "-train-data", &t->step, &t->train_ds, &t->ntrain, &t->train_count))
		return -1;
	if (t->eval.f &&
	    load_sets(t, &t->o->test_data, "-test-data", &t->eval, &t->test_ds, &t->ntest, &t->test_count))
		return -1;
	stages_mark(st, "read data");
	uint64_t b = batch_of(t, &t->step);
	if (!b || (t->eval.f && batch_of(t, &t->eval) == 0))
		return -1;
	if (t->eval.f && batch_of(t, &t->eval) != b) {
		diag_error(t->d, LOC_NONE, "@%s's batch is %" PRIu64 " but @%s's is %" PRIu64, f->name, b, t->eval.f->name,
			   batch_of(t, &t->eval));
		return -1;
	}
	if (t->batch && t->batch != b) {
		diag_error(t->d, LOC_NONE,
			   "-batch=%" PRIu64 ": the training step's batch is %" PRIu64
			   " (the leading dimension of its data placeholders; glow-opt -batch-size and the model fix it)",
			   t->batch, b);
		return -1;
	}
	t->batch = b;
	if (t->train_count < b) {
		diag_error(t->d, LOC_NONE, "the training set has %" PRIu64 " example%s, fewer than one batch of %" PRIu64,
			   t->train_count, t->train_count == 1 ? "" : "s", b);
		return -1;
	}
	if (bind_slots(t))
		return -1;
	t->loss = pick_output(t, &t->step, t->o->loss, "loss", fits_loss, "a float loss of one element");
	if (!t->loss || check_train_labels(t))
		return -1;
	if (t->eval.f) {
		t->scores = pick_output(t, &t->eval, t->o->scores, "scores", fits_scores,
					"float scores of shape [batch, classes]");
		if (!t->scores || check_labels(t))
			return -1;
	}
	int bundled = compile_bundle(t, m, st);
	if (bundled < 0 || (!bundled && (compile(t, &t->step, st) || (t->eval.f && compile(t, &t->eval, st)))))
		return -1;
	uint64_t *perm = xmalloc(t->train_count * sizeof *perm);
	for (uint64_t i = 0; i < t->train_count; i++)
		perm[i] = i;
	uint64_t rs = t->seed ^ 0x2545f4914f6cdd1dULL;
	int rc = 0;
	for (uint64_t e = 1; e <= t->epochs && rc == 0; e++) {
		double t0 = stages_now(), c0 = cpu_seconds(), loss;
		rc = run_epoch(t, e, perm, &rs, &loss);
		double secs = stages_now() - t0, cpu = cpu_seconds() - c0;
		uint64_t imgs = t->train_count / b * b, correct = 0;
		if (rc == 0 && t->eval.f)
			rc = evaluate(t, &correct);
		if (rc)
			break;
		printf("epoch %" PRIu64 "/%" PRIu64 ": loss %.6f", e, t->epochs, loss);
		if (t->eval.f)
			printf(", accuracy %.2f%% (%" PRIu64 "/%" PRIu64 ")", 100.0 * (double)correct / (double)t->test_count,
			       correct, t->test_count);
		printf(", %.2f s, cpu %.2f s, %.0f images/s\n", secs, cpu, cpu > 0 ? (double)imgs / cpu : 0.0);
		fflush(stdout);
	}
	free(perm);
	stages_mark(st, "train");
	if (rc == 0 && t->o->output_dir)
		rc = write_state(t);
	stages_mark(st, "write");
	return rc;
}

int runner_glow_train(struct run_options *o, struct diag *d)
{
	struct train t = {0};
	t.o = o;
	t.d = d;
	if (check_options(&t))
		return 1;
	struct runner_program p;
	if (runner_program_open(&p, o, d))
		return 1;
	struct ir_module *m = p.m;
	int status = m && train_module(&t, m, &p.st) == 0 ? 0 : 1;
	if (t.tb)
		t.be->destroy(t.tb);
	tfunc_free(&t.step, t.be);
	tfunc_free(&t.eval, t.be);
	for (size_t i = 0; i < t.ntrain; i++)
		dataset_free(&t.train_ds[i]);
	for (size_t i = 0; i < t.ntest; i++)
		dataset_free(&t.test_ds[i]);
	free(t.train_ds);
	free(t.test_ds);
	runner_program_close(&p);
	return status;
}
