/* cb_train_driver.c - the driver of a training bundle (NAME_main.c: the
 * helpers of cb_driver.c, then this file): glow-run's training run
 * (docs/Training.md) as a program of its own.
 *
 *   NAME_main -epochs N -train-data NAME=FILE... [-test-data NAME=FILE...]
 *             [-seed S] [-no-shuffle] [-limit N] [-batch N] [-input NAME=FILE]...
 *             [-loss NAME] [-scores NAME] [-output-dir DIR] [-weights FILE]
 *             [-threads N]
 *
 * Data sets are uncompressed IDX files or .npy files (a gzip file is
 * rejected with the advice to gunzip it: the driver depends on nothing but
 * libc and libm). The shuffle (Fisher-Yates over splitmix64 seeded from
 * -seed), the initial weights (NAME_init_weights), the conversion of the
 * examples (unsigned bytes / 255 into float), the batches (the last partial
 * one dropped; the held-out set's last one padded with zeros) and the
 * printed lines are glow-run's, so a run gives bitwise the weights of
 * glow-run -backend=c with the same module, data, options and seed. The
 * step updates the weights in the bundle's mutable region in place.
 * On a terminal (Unix), stderr shows a progress line during each epoch.
 * Errors: "error: ..." or "FILE: error: ..." on stderr, exit status 1,
 * nothing written.
 */
#ifdef CB_DRIVER_CHECK
/* the helpers and a stand-in bundle, so that this file compiles on its own */
#define CB_TRAIN_DRIVER 1
#include "cb_driver.c"
struct chk_function {
	const char *name;
	int (*entry)(const uint8_t *constants, uint8_t *mutable_weights, uint8_t *activations);
	const char *use;
};
const struct chk_function chk_functions[3] = {{"train_grad", chk_run, "u"}, {"train", chk_run, "i"}, {0, 0, 0}};
void chk_init_weights(uint8_t *mutable_weights, uint64_t seed);
void chk_init_weights(uint8_t *mutable_weights, uint64_t seed)
{
	(void)mutable_weights;
	(void)seed;
}
#endif

#include <math.h>
#if defined(__unix__) || defined(__APPLE__)
#include <unistd.h>
/* whether stderr is a terminal: then a progress line is shown per epoch */
static int tr_tty(void) { return isatty(2); }
#else
static int tr_tty(void) { return 0; }
#endif

#define CB_FN CB_NAME(functions)

/* A data set: the file's bytes and where its elements are. */
enum { TD_U8, TD_I8, TD_I16, TD_I32, TD_I64, TD_F32, TD_F64 };
static const char *const td_names[] = {"unsigned byte", "signed byte", "16-bit integer", "32-bit integer",
				       "64-bit integer", "float", "double"};
static const unsigned td_bytes[] = {1, 1, 2, 4, 8, 4, 8};

struct td_set {
	const char *file;
	unsigned char *buf;       /* the whole file */
	const unsigned char *data; /* its first element */
	int elem, big;            /* TD_*; elements big-endian (IDX) */
	uint64_t count, per;      /* examples; elements per example */
	size_t ph;                /* the placeholder it feeds */
};

static int td_fail(const char *file, const char *msg)
{
	fprintf(stderr, "%s: error: %s\n", file, msg);
	return -1;
}

/* Element i of s as raw 64 bits of its kind, in host order. */
static uint64_t td_raw(const struct td_set *s, uint64_t i)
{
	unsigned n = td_bytes[s->elem];
	const unsigned char *p = s->data + i * n;
	uint64_t v = 0;
	for (unsigned k = 0; k < n; k++)
		v |= (uint64_t)p[s->big ? n - 1 - k : k] << (8 * k);
	return v;
}

static int64_t td_int(const struct td_set *s, uint64_t i)
{
	uint64_t v = td_raw(s, i);
	switch (s->elem) {
	case TD_U8: return (int64_t)v;
	case TD_I8: return (int8_t)v;
	case TD_I16: return (int16_t)v;
	case TD_I32: return (int32_t)v;
	default: return (int64_t)v;
	}
}

static double td_value(const struct td_set *s, uint64_t i)
{
	uint64_t v = td_raw(s, i);
	if (s->elem == TD_F32) {
		uint32_t u = (uint32_t)v;
		float f;
		memcpy(&f, &u, 4);
		return f;
	}
	if (s->elem == TD_F64) {
		double x;
		memcpy(&x, &v, 8);
		return x;
	}
	return (double)td_int(s, i);
}

/* dims[0..rank) of elements of size es at data, the bytes after the
 * header: count, per and the size checked against the n bytes there. */
static int td_shape(struct td_set *s, const uint64_t *dims, unsigned rank, size_t n, size_t off)
{
	char m[256];
	uint64_t per = 1;
	for (unsigned i = 1; i < rank; i++) {
		if (dims[i] && per > UINT64_MAX / dims[i])
			return td_fail(s->file, "the dimensions overflow: their product is beyond 64 bits");
		per *= dims[i];
	}
	if (!dims[0] || !per)
		return td_fail(s->file, "the data set holds no examples (a dimension is 0)");
	uint64_t es = td_bytes[s->elem];
	if (per > UINT64_MAX / dims[0] / es)
		return td_fail(s->file, "the dimensions overflow: their product is beyond 64 bits");
	if (dims[0] * per * es != (uint64_t)n) {
		snprintf(m, sizeof m, "the data at byte offset %zu has %zu bytes; the dimensions say %llu (%s)", off, n,
			 (unsigned long long)(dims[0] * per * es), (uint64_t)n < dims[0] * per * es ? "truncated" : "trailing bytes");
		return td_fail(s->file, m);
	}
	s->count = dims[0];
	s->per = per;
	return 0;
}

/* IDX: 0 0 type rank, big-endian 32-bit dimensions, big-endian elements. */
static int td_idx(struct td_set *s, size_t n)
{
	static const unsigned char types[] = {0x08, 0x09, 0x0b, 0x0c, 0, 0x0d, 0x0e};
	const unsigned char *p = s->buf;
	char m[160];
	if (n < 4)
		return td_fail(s->file, "truncated IDX header: the magic number needs 4 bytes");
	if (p[0] || p[1]) {
		snprintf(m, sizeof m, "not an IDX or .npy file: the first two bytes are 0x%02x 0x%02x", p[0], p[1]);
		return td_fail(s->file, m);
	}
	s->elem = -1;
	for (int k = 0; k < 7; k++)
		if (types[k] && types[k] == p[2])
			s->elem = k;
	if (s->elem < 0) {
		snprintf(m, sizeof m, "unknown IDX element type 0x%02x at byte offset 2", p[2]);
		return td_fail(s->file, m);
	}
	unsigned rank = p[3];
	if (rank < 1 || rank > 8) {
		snprintf(m, sizeof m, "IDX rank %u at byte offset 3 is not in [1, 8]", rank);
		return td_fail(s->file, m);
	}
	size_t hdr = 4 + 4 * (size_t)rank;
	if (n < hdr) {
		snprintf(m, sizeof m, "truncated IDX header: %zu bytes, %u dimensions need %zu", n, rank, hdr);
		return td_fail(s->file, m);
	}
	uint64_t dims[8];
	for (unsigned i = 0; i < rank; i++)
		dims[i] = (uint64_t)p[4 + 4 * i] << 24 | (uint64_t)p[5 + 4 * i] << 16 | (uint64_t)p[6 + 4 * i] << 8 |
			  p[7 + 4 * i];
	s->big = 1;
	s->data = p + hdr;
	return td_shape(s, dims, rank, n - hdr, hdr);
}

/* .npy (versions 1 to 3): little-endian or byte elements, C order. */
static int td_npy(struct td_set *s, size_t n)
{
	static const char *const descr[] = {"u1", "i1", "<i2", "<i4", "<i8", "<f4", "<f8"};
	const unsigned char *p = s->buf;
	size_t hl = p[8] | (size_t)p[9] << 8, off = 10;
	if (p[6] >= 2 && n >= 12)
		hl |= (size_t)p[10] << 16 | (size_t)p[11] << 24, off = 12;
	if (n < off || hl > n - off)
		return td_fail(s->file, "truncated .npy header");
	char h[1024];
	size_t hn = hl < sizeof h - 1 ? hl : sizeof h - 1;
	memcpy(h, p + off, hn);
	h[hn] = 0;
	const char *d = strstr(h, "'descr'"), *sh = strstr(h, "'shape'");
	if (!d || !sh || strstr(h, "'fortran_order': True"))
		return td_fail(s->file, "a .npy header without descr or shape, or in Fortran order");
	s->elem = -1;
	for (int k = 0; k < 7 && s->elem < 0; k++) {
		const char *q = strstr(d, descr[k]);
		if (q && q - d < 16 && (k > 1 || q[-1] == '|' || q[-1] == '<'))
			s->elem = k;
	}
	if (s->elem < 0)
		return td_fail(s->file, "the .npy element type is not one of u1, i1, <i2, <i4, <i8, <f4, <f8");
	uint64_t dims[8];
	unsigned rank = 0;
	const char *q = strchr(sh, '(');
	while (q && *q && *q != ')') {
		q++;
		while (*q == ' ' || *q == ',')
			q++;
		if (*q == ')')
			break;
		if (*q < '0' || *q > '9' || rank == 8)
			return td_fail(s->file, "a .npy shape that is not a tuple of at most 8 dimensions");
		dims[rank++] = strtoull(q, (char **)&q, 10);
	}
	if (!rank)
		return td_fail(s->file, "a data set needs a leading dimension of examples; this .npy is a scalar");
	s->big = 0;
	s->data = p + off + hl;
	return td_shape(s, dims, rank, n - off - hl, off + hl);
}

static int td_load(struct td_set *s, const char *file)
{
	size_t n;
	s->file = file;
	s->buf = drv_slurp(file, &n);
	if (!s->buf)
		return td_fail(file, "cannot read the file");
	if (n >= 2 && s->buf[0] == 0x1f && s->buf[1] == 0x8b)
		return td_fail(file, "a gzip file: the bundle's driver reads uncompressed IDX and .npy files "
				     "(gunzip it first)");
	if (n >= 10 && memcmp(s->buf, "\x93NUMPY", 6) == 0)
		return td_npy(s, n);
	return td_idx(s, n);
}

/* the placeholder's elements per example (all but the leading dimension) */
static uint64_t ph_per(const struct CB_NAME(placeholder) *ph)
{
	uint64_t per = 1;
	for (unsigned i = 1; i < ph->rank; i++)
		per *= ph->dims[i];
	return per;
}

static int ph_is_int(const struct CB_NAME(placeholder) *ph)
{
	return !strcmp(ph->elem, "i32") || !strcmp(ph->elem, "index32") || !strcmp(ph->elem, "i64") ||
	       !strcmp(ph->elem, "index64");
}

/* Whether s can feed placeholder ph (glow-run's rules, lib/dataset). */
static int td_check(const struct td_set *s, const struct CB_NAME(placeholder) *ph)
{
	char m[512];
	int to_int = ph_is_int(ph);
	if (!to_int && strcmp(ph->elem, "float")) {
		snprintf(m, sizeof m, "placeholder '%s' (%s) takes no data set: only float and integer kinds do", ph->name,
			 ph->elem);
		return td_fail(s->file, m);
	}
	if (ph->rank < 1 || ph_per(ph) != s->per) {
		snprintf(m, sizeof m, "an example has %llu elements; placeholder '%s' takes %llu per example",
			 (unsigned long long)s->per, ph->name, (unsigned long long)(ph->rank ? ph_per(ph) : 0));
		return td_fail(s->file, m);
	}
	if (to_int && (s->elem == TD_F32 || s->elem == TD_F64)) {
		snprintf(m, sizeof m, "%s data cannot feed integer placeholder '%s' (%s)", td_names[s->elem], ph->name,
			 ph->elem);
		return td_fail(s->file, m);
	}
	if (to_int && ph->size / ph->dims[0] == 4 * s->per && s->elem == TD_I64)
		for (uint64_t i = 0; i < s->count * s->per; i++)
			if (td_int(s, i) < INT32_MIN || td_int(s, i) > INT32_MAX) {
				snprintf(m, sizeof m, "value %lld of example %llu does not fit placeholder '%s' (%s)",
					 (long long)td_int(s, i), (unsigned long long)(i / s->per), ph->name, ph->elem);
				return td_fail(s->file, m);
			}
	return 0;
}

/* Examples idx[0..n) of s into ph's bytes at out, the rest zeroed. */
static void td_gather(const struct td_set *s, const struct CB_NAME(placeholder) *ph, const uint64_t *idx, size_t n,
		      unsigned char *out)
{
	memset(out, 0, ph->size);
	size_t es = ph->size / ph->dims[0] / s->per;
	for (size_t b = 0; b < n; b++) {
		uint64_t base = idx[b] * s->per;
		unsigned char *dst = out + b * s->per * es;
		for (uint64_t j = 0; j < s->per; j++) {
			if (!ph_is_int(ph)) {
				float f = s->elem == TD_U8 ? (float)s->data[base + j] / 255.0f : (float)td_value(s, base + j);
				memcpy(dst + 4 * j, &f, 4);
			} else if (es == 4) {
				int32_t x = (int32_t)td_int(s, base + j);
				memcpy(dst + 4 * j, &x, 4);
			} else {
				int64_t x = td_int(s, base + j);
				memcpy(dst + 8 * j, &x, 8);
			}
		}
	}
}

/* ---- the run ---- */

#define TR_MAXSETS 16

struct tr {
	unsigned char *consts, *mut, *act;
	struct td_set train[TR_MAXSETS], test[TR_MAXSETS];
	size_t ntrain, ntest;
	uint64_t train_count, test_count, batch, classes, epochs;
	size_t loss, scores, labels; /* placeholder indices; labels: index into test[] */
	int has_eval;
};

static size_t tr_nph(void)
{
	size_t n = 0;
	while (CB_PH[n].name)
		n++;
	return n;
}

static size_t tr_find(const char *name, size_t len)
{
	size_t i = 0;
	for (; CB_PH[i].name; i++)
		if (strlen(CB_PH[i].name) == len && !strncmp(CB_PH[i].name, name, len))
			break;
	return i;
}

/* A count option: a decimal integer (positive unless zero_ok). */
static int tr_count(const char *opt, const char *v, int zero_ok, uint64_t *out)
{
	char *end;
	unsigned long long x = v[0] >= '0' && v[0] <= '9' ? strtoull(v, &end, 10) : 0;
	if (v[0] < '0' || v[0] > '9' || *end || (!zero_ok && x == 0)) {
		fprintf(stderr, "error: -%s takes a %s integer, got '%s'\n", opt, zero_ok ? "non-negative" : "positive", v);
		return -1;
	}
	*out = x;
	return 0;
}

/* Loads the NAME=FILE data sets of list into sets, each bound to a data
 * input ('i') of function fn; they must agree on their counts. */
static int tr_sets(const char *what, const char *const *list, size_t n, size_t fn, struct td_set *sets,
		   uint64_t *count, uint64_t limit)
{
	for (size_t i = 0; i < n; i++) {
		const char *eq = strrchr(list[i], '=');
		size_t p = eq && eq != list[i] && eq[1] ? tr_find(list[i], (size_t)(eq - list[i])) : tr_nph();
		if (!eq || eq == list[i] || !eq[1]) {
			fprintf(stderr, "error: %s takes NAME=FILE, got '%s'\n", what, list[i]);
			return -1;
		}
		if (!CB_PH[p].name || CB_FN[fn].use[p] == '-') {
			fprintf(stderr, "error: %s: no placeholder named '%.*s' in function @%s\n", what,
				(int)(eq - list[i]), list[i], CB_FN[fn].name);
			return -1;
		}
		if (CB_FN[fn].use[p] != 'i') {
			fprintf(stderr, "error: %s: '%s' is not a data input of @%s (%s)\n", what, CB_PH[p].name,
				CB_FN[fn].name, CB_FN[fn].use[p] == 'u' ? "the function updates it" : "the function writes it");
			return -1;
		}
		for (size_t j = 0; j < i; j++)
			if (sets[j].ph == p) {
				fprintf(stderr, "error: %s: placeholder '%s' is given twice\n", what, CB_PH[p].name);
				return -1;
			}
		sets[i].ph = p;
		if (td_load(&sets[i], eq + 1) || td_check(&sets[i], &CB_PH[p]))
			return -1;
		if (i && sets[i].count != sets[0].count) {
			fprintf(stderr, "error: %s: '%s' has %llu examples but '%s' has %llu\n", what, sets[0].file,
				(unsigned long long)sets[0].count, sets[i].file, (unsigned long long)sets[i].count);
			return -1;
		}
	}
	*count = n ? sets[0].count : 0;
	if (limit && *count > limit)
		*count = limit;
	return 0;
}

/* The output of function fn named `name`, or its only one that fits
 * (loss: float of one element; scores: float [batch, classes > 1]). */
static int tr_fits(size_t p, int scores, uint64_t batch)
{
	const struct CB_NAME(placeholder) *ph = &CB_PH[p];
	if (strcmp(ph->elem, "float"))
		return 0;
	if (!scores)
		return ph->size == 4;
	return ph->rank == 2 && ph->dims[0] == batch && ph->dims[1] > 1;
}

static int tr_output(size_t fn, const char *name, const char *opt, int scores, uint64_t batch, size_t *out)
{
	const char *what = scores ? "float scores of shape [batch, classes]" : "a float loss of one element";
	size_t found = 0, n = 0;
	for (size_t p = 0; CB_PH[p].name; p++) {
		if (CB_FN[fn].use[p] != 'o' || (name && strcmp(name, CB_PH[p].name)))
			continue;
		if (name && !tr_fits(p, scores, batch)) {
			fprintf(stderr, "error: -%s=%s: the output is not %s\n", opt, name, what);
			return -1;
		}
		if (tr_fits(p, scores, batch))
			found = p, n++;
	}
	if (n == 1) {
		*out = found;
		return 0;
	}
	if (name)
		fprintf(stderr, "error: -%s=%s: @%s has no such output\n", opt, name, CB_FN[fn].name);
	else if (n)
		fprintf(stderr, "error: @%s writes several outputs that are %s; choose one with -%s=NAME\n", CB_FN[fn].name,
			what, opt);
	else
		fprintf(stderr, "error: @%s writes no output that is %s\n", CB_FN[fn].name, what);
	return -1;
}

/* Every label of the first count examples of s in [0, classes). */
static int tr_labels(const struct td_set *s, uint64_t count, uint64_t classes)
{
	for (uint64_t i = 0; i < count; i++)
		if (td_int(s, i) < 0 || (uint64_t)td_int(s, i) >= classes) {
			fprintf(stderr, "%s: error: label %lld of example %llu is not in [0, %llu)\n", s->file,
				(long long)td_int(s, i), (unsigned long long)i, (unsigned long long)classes);
			return -1;
		}
	return 0;
}

/* The batch: the leading dimension of every data placeholder. */
static int tr_batch(struct tr *t, const struct td_set *sets, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		uint64_t b = CB_PH[sets[i].ph].dims[0];
		if (t->batch && b != t->batch) {
			fprintf(stderr, "error: data placeholders have different batch sizes (%llu and %llu)\n",
				(unsigned long long)t->batch, (unsigned long long)b);
			return -1;
		}
		t->batch = b;
	}
	return 0;
}

/* Runs the model over the held-out set; the examples whose argmax of the
 * scores (the first on ties) is the label. */
static int tr_evaluate(struct tr *t, uint64_t *idx, uint64_t *correct)
{
	const float *sc = (const float *)(t->mut + CB_PH[t->scores].offset);
	const struct td_set *lab = &t->test[t->labels];
	*correct = 0;
	for (uint64_t start = 0; start < t->test_count; start += t->batch) {
		size_t n = (size_t)(t->test_count - start < t->batch ? t->test_count - start : t->batch);
		for (size_t i = 0; i < n; i++)
			idx[i] = start + i;
		for (size_t s = 0; s < t->ntest; s++)
			td_gather(&t->test[s], &CB_PH[t->test[s].ph], idx, n, t->mut + CB_PH[t->test[s].ph].offset);
		if (CB_FN[1].entry(t->consts, t->mut, t->act)) {
			fprintf(stderr, "error: @%s failed (an index out of range)\n", CB_FN[1].name);
			return -1;
		}
		for (size_t i = 0; i < n; i++) {
			const float *row = sc + i * t->classes;
			uint64_t best = 0;
			for (uint64_t k = 1; k < t->classes; k++)
				if (row[k] > row[best])
					best = k;
			*correct += (double)best == td_value(lab, idx[i]);
		}
	}
	return 0;
}

/* One epoch of steps over the shuffled order perm; the mean loss. */
static int tr_epoch(struct tr *t, uint64_t epoch, uint64_t *perm, uint64_t *rs, int shuffle, double *loss)
{
	uint64_t n = t->train_count, b = t->batch, nb = n / b;
	if (shuffle)
		for (uint64_t i = n - 1; i > 0; i--) {
			uint64_t z = (*rs += 0x9e3779b97f4a7c15ULL);
			z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
			z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
			z ^= z >> 31;
			uint64_t j = z % (i + 1), x = perm[i];
			perm[i] = perm[j], perm[j] = x;
		}
	const float *l = (const float *)(t->mut + CB_PH[t->loss].offset);
	double sum = 0;
	int tty = tr_tty();
	uint64_t every = nb / 100 ? nb / 100 : 1;
	for (uint64_t k = 0; k < nb; k++) {
		for (size_t s = 0; s < t->ntrain; s++)
			td_gather(&t->train[s], &CB_PH[t->train[s].ph], perm + k * b, (size_t)b, t->mut + CB_PH[t->train[s].ph].offset);
		if (CB_FN[0].entry(t->consts, t->mut, t->act)) {
			fprintf(stderr, "error: @%s failed (an index out of range)\n", CB_FN[0].name);
			return -1;
		}
		if (!isfinite(*l)) {
			fprintf(stderr, "error: epoch %llu, batch %llu: the loss is not finite (the training diverged: a "
					"smaller learning rate?)\n", (unsigned long long)epoch, (unsigned long long)(k + 1));
			return -1;
		}
		sum += *l;
		if (tty && (k + 1) % every == 0) {
			fprintf(stderr, "\repoch %llu/%llu: %3llu%% (%llu/%llu batches), loss %.4f", (unsigned long long)epoch,
				(unsigned long long)t->epochs, (unsigned long long)((k + 1) * 100 / nb), (unsigned long long)(k + 1), (unsigned long long)nb,
				sum / ((double)(k + 1) * (double)b));
			fflush(stderr);
		}
	}
	if (tty)
		fprintf(stderr, "\r%60s\r", "");
	*loss = sum / ((double)nb * (double)b);
	return 0;
}

static int tr_usage(const char *prog)
{
	fprintf(stderr, "usage: %s -epochs N -train-data NAME=FILE... [-test-data NAME=FILE...] [-seed S] "
			"[-no-shuffle] [-limit N] [-batch N] [-input NAME=FILE]... [-loss NAME] [-scores NAME] "
			"[-output-dir DIR] [-weights FILE] [-threads N]\n", prog);
	return 1;
}

/* Every input of function fn that no data set feeds, the step does not
 * train and -input does not give: an error. */
static int tr_unbound(size_t fn, const char *const *bind, const struct td_set *sets, size_t nsets, const char *opt)
{
	for (size_t p = 0; CB_PH[p].name; p++) {
		int fed = bind[p] != NULL || CB_FN[0].use[p] == 'u';
		for (size_t s = 0; s < nsets; s++)
			fed |= sets[s].ph == p;
		if (CB_FN[fn].use[p] == 'i' && !fed) {
			fprintf(stderr, "error: input '%s' of @%s is neither fed by %s nor trained; bind it with -input %s=FILE\n",
				CB_PH[p].name, CB_FN[fn].name, opt, CB_PH[p].name);
			return -1;
		}
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct tr t;
	memset(&t, 0, sizeof t);
	const char *train_list[TR_MAXSETS], *test_list[TR_MAXSETS], *bind[CB_MAXPH] = {0};
	const char *weights = NULL, *outdir = NULL, *loss = NULL, *scores = NULL;
	const char *epochs_s = NULL;
	uint64_t epochs = 0, seed = 1, limit = 0, batch = 0;
	int shuffle = 1, threads = 0;
	size_t nph = tr_nph();
	for (int a = 1; a < argc; a++) {
		const char *o = argv[a], *v = NULL, *eq = strchr(o, '=');
		size_t ol = eq ? (size_t)(eq - o) : strlen(o);
		static const char *const valued[] = {"-epochs", "-seed", "-limit", "-batch", "-threads", "-train-data",
						     "-test-data", "-input", "-loss", "-scores", "-output-dir", "-weights"};
		size_t known = 0;
		for (size_t k = 0; k < sizeof valued / sizeof valued[0]; k++)
			known |= ol == strlen(valued[k]) && !strncmp(o, valued[k], ol);
		if (!eq && !strcmp(o, "-no-shuffle")) {
			shuffle = 0;
			continue;
		}
		if (!known)
			return tr_usage(argv[0]);
		v = eq ? eq + 1 : a + 1 < argc ? argv[++a] : NULL;
		if (!v) {
			fprintf(stderr, "error: %s takes a value\n", o);
			return 1;
		}
#define TR_OPT(s) (ol == strlen(s) && !strncmp(o, s, ol))
		int bad = 0;
		if (TR_OPT("-epochs"))
			epochs_s = v, bad = tr_count("epochs", v, 0, &epochs);
		else if (TR_OPT("-seed"))
			bad = tr_count("seed", v, 1, &seed);
		else if (TR_OPT("-limit"))
			bad = tr_count("limit", v, 0, &limit);
		else if (TR_OPT("-batch"))
			bad = tr_count("batch", v, 0, &batch);
		else if (TR_OPT("-threads")) {
			uint64_t n = 0;
			if (tr_count("threads", v, 0, &n) || n > 256) {
				fprintf(stderr, "error: -threads takes a number from 1 to 256, not '%s'\n", v);
				return 1;
			}
			threads = (int)n;
		} else if (TR_OPT("-train-data") || TR_OPT("-test-data")) {
			size_t *n = TR_OPT("-train-data") ? &t.ntrain : &t.ntest;
			if (*n == TR_MAXSETS) {
				fprintf(stderr, "error: more than %d %s sets\n", TR_MAXSETS, o);
				return 1;
			}
			(TR_OPT("-train-data") ? train_list : test_list)[(*n)++] = v;
		} else if (TR_OPT("-input")) {
			const char *e = strrchr(v, '=');
			size_t p = e ? tr_find(v, (size_t)(e - v)) : nph;
			if (!e || p >= nph || p >= CB_MAXPH) {
				fprintf(stderr, "error: -input %s: no such placeholder\n", v);
				return 1;
			}
			if (bind[p]) {
				fprintf(stderr, "error: input '%s' is given twice\n", CB_PH[p].name);
				return 1;
			}
			bind[p] = e + 1;
		} else if (TR_OPT("-loss"))
			loss = v;
		else if (TR_OPT("-scores"))
			scores = v;
		else if (TR_OPT("-output-dir"))
			outdir = v;
		else if (TR_OPT("-weights"))
			weights = v;
		else
			return tr_usage(argv[0]);
#undef TR_OPT
		if (bad)
			return 1;
	}
	if (!epochs_s || !t.ntrain) {
		fprintf(stderr, "error: a training run needs %s\n", !epochs_s ? "-epochs N" : "-train-data NAME=FILE");
		return 1;
	}
	if (tr_sets("-train-data", train_list, t.ntrain, 0, t.train, &t.train_count, limit) ||
	    tr_sets("-test-data", test_list, t.ntest, 1, t.test, &t.test_count, limit))
		return 1;
	t.has_eval = t.ntest > 0;
	if (tr_batch(&t, t.train, t.ntrain) || tr_batch(&t, t.test, t.ntest))
		return 1;
	if (batch && batch != t.batch) {
		fprintf(stderr, "error: -batch=%llu: the training step's batch is %llu (the leading dimension of its data "
				"placeholders)\n", (unsigned long long)batch, (unsigned long long)t.batch);
		return 1;
	}
	if (t.train_count < t.batch) {
		fprintf(stderr, "error: the training set has %llu example%s, fewer than one batch of %llu\n",
			(unsigned long long)t.train_count, t.train_count == 1 ? "" : "s", (unsigned long long)t.batch);
		return 1;
	}
	for (size_t p = 0; p < nph && p < CB_MAXPH; p++) {
		int fed = 0;
		for (size_t s = 0; s < t.ntrain + t.ntest; s++)
			fed |= (s < t.ntrain ? t.train[s].ph : t.test[s - t.ntrain].ph) == p;
		if (bind[p] && fed) {
			fprintf(stderr, "error: '%s' is fed from a data set; -input cannot also bind it\n", CB_PH[p].name);
			return 1;
		}
		if (bind[p] && CB_FN[0].use[p] != 'u' && CB_FN[0].use[p] != 'i' && (!t.has_eval || CB_FN[1].use[p] != 'i')) {
			fprintf(stderr, "error: '%s' is not an input\n", CB_PH[p].name);
			return 1;
		}
	}
	if (tr_unbound(0, bind, t.train, t.ntrain, "-train-data") ||
	    (t.has_eval && tr_unbound(1, bind, t.test, t.ntest, "-test-data")))
		return 1;
	if (tr_output(0, loss, "loss", 0, t.batch, &t.loss))
		return 1;
	size_t step_scores = 0;
	int one_scores = 0;
	for (size_t p = 0; p < nph; p++)
		if (CB_FN[0].use[p] == 'o' && tr_fits(p, 1, t.batch))
			step_scores = p, one_scores++;
	for (size_t s = 0; one_scores == 1 && s < t.ntrain; s++)
		if (ph_is_int(&CB_PH[t.train[s].ph]) && CB_PH[t.train[s].ph].rank == 1 &&
		    tr_labels(&t.train[s], t.train_count, CB_PH[step_scores].dims[1]))
			return 1;
	if (t.has_eval) {
		if (tr_output(1, scores, "scores", 1, t.batch, &t.scores))
			return 1;
		t.classes = CB_PH[t.scores].dims[1];
		size_t nl = 0;
		for (size_t s = 0; s < t.ntest; s++)
			if (ph_is_int(&CB_PH[t.test[s].ph]) && CB_PH[t.test[s].ph].rank == 1)
				t.labels = s, nl++;
		if (nl != 1) {
			fprintf(stderr, "error: -test-data: %s label set (an integer placeholder of shape [batch]) to measure the "
					"accuracy against\n", nl ? "more than one" : "no");
			return 1;
		}
		if (tr_labels(&t.test[t.labels], t.test_count, t.classes))
			return 1;
	}
	void *cbase, *mbase, *abase;
	t.consts = drv_region(CB_NAME(CONSTANT_SIZE) + 1, &cbase);
	t.mut = drv_region(CB_NAME(MUTABLE_SIZE) + 1, &mbase);
	t.act = drv_region(CB_NAME(ACTIVATIONS_SIZE) + 1, &abase);
	uint64_t *perm = malloc(sizeof *perm * (size_t)(t.train_count + t.batch));
	if (!t.consts || !t.mut || !t.act || !perm) {
		fprintf(stderr, "error: out of memory\n");
		return 1;
	}
	if (drv_constants(t.consts, weights))
		return 1;
	if (threads)
		CB_NAME(set_threads)(threads);
	CB_NAME(init_mutable)(t.consts, t.mut);
	CB_NAME(init_weights)(t.mut, seed);
	for (size_t p = 0; p < nph && p < CB_MAXPH; p++)
		if (bind[p] && drv_bind(&CB_PH[p], bind[p], t.mut + CB_PH[p].offset))
			return 1;
	for (uint64_t i = 0; i < t.train_count; i++)
		perm[i] = i;
	uint64_t rs = seed ^ 0x2545f4914f6cdd1dULL;
	t.epochs = epochs;
	for (uint64_t e = 1; e <= epochs; e++) {
		double w0 = drv_now_ms(), lv;
		clock_t c0 = clock();
		if (tr_epoch(&t, e, perm, &rs, shuffle, &lv))
			return 1;
		double secs = (drv_now_ms() - w0) / 1e3, cpu = (double)(clock() - c0) / CLOCKS_PER_SEC;
		uint64_t imgs = t.train_count / t.batch * t.batch, correct = 0;
		if (t.has_eval && tr_evaluate(&t, perm + t.train_count, &correct))
			return 1;
		printf("epoch %llu/%llu: loss %.6f", (unsigned long long)e, (unsigned long long)epochs, lv);
		if (t.has_eval)
			printf(", accuracy %.2f%% (%llu/%llu)", 100.0 * (double)correct / (double)t.test_count,
			       (unsigned long long)correct, (unsigned long long)t.test_count);
		printf(", %.2f s, cpu %.2f s, %.0f images/s\n", secs, cpu, cpu > 0 ? (double)imgs / cpu : 0.0);
		fflush(stdout);
	}
#ifdef CB_PROFILE
	CB_NAME(profile_print)(1);
#endif
	for (size_t p = 0; outdir && p < nph; p++)
		if (CB_FN[0].use[p] == 'u' && drv_write_npy(outdir, &CB_PH[p], t.mut + CB_PH[p].offset))
			return 1;
	for (size_t s = 0; s < t.ntrain; s++)
		free(t.train[s].buf);
	for (size_t s = 0; s < t.ntest; s++)
		free(t.test[s].buf);
	free(perm);
	free(cbase);
	free(mbase);
	free(abase);
	return 0;
}
