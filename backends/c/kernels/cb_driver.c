/* cb_driver.c - the driver of a bundle (NAME_main.c): loads the constants,
 * binds inputs from .npy or ONNX TensorProto .pb files, runs, writes each
 * output as OUTPUT_DIR/<name>.npy, optionally prints outputs and times runs.
 *
 *   NAME_main [-weights FILE] [-input NAME=FILE]... [FILE...]
 *             [-output-dir DIR] [-print] [-runs N] [-warmup N] [-threads N]
 *
 * -threads N (1 to 256) sets the bundle's thread count (NAME_set_threads);
 * without it the bundle uses every core available to the process.
 * Positional files bind the inputs in declaration order. With -runs N the
 * program runs N times after the warm-up and prints the median and minimum
 * wall time and the median processor time (clock) in milliseconds. The
 * generated file defines CB_NAME(x) (the bundle's prefix), CB_EMBEDDED and
 * includes the bundle header first. Standard C11 only (timespec_get for
 * timing). A training bundle's driver is this file's helpers (with
 * CB_TRAIN_DRIVER defined: no main) followed by cb_train_driver.c.
 */
#ifdef CB_DRIVER_CHECK
/* a stand-in bundle so that the driver compiles on its own */
#include <stddef.h>
#include <stdint.h>
#define CB_NAME(x) chk_##x
#define CB_EMBEDDED 0
struct chk_placeholder {
	const char *name, *elem;
	size_t offset, size;
	int is_input, is_output;
	unsigned rank;
	const uint64_t *dims;
};
#define chk_CONSTANT_SIZE 0u
#define chk_MUTABLE_SIZE 4u
#define chk_ACTIVATIONS_SIZE 0u
#define chk_ALIGNMENT 64u
#define chk_WEIGHTS_FILE "chk.weights.bin"
static const uint64_t chk_dims0[] = {1};
const struct chk_placeholder chk_placeholders[2] = {{"x", "float", 0, 4, 1, 1, 1, chk_dims0}, {0, 0, 0, 0, 0, 0, 0, 0}};
int chk_run(const uint8_t *constants, uint8_t *mutable_weights, uint8_t *activations);
void chk_init_mutable(const uint8_t *constants, uint8_t *mutable_weights);
int chk_run(const uint8_t *constants, uint8_t *mutable_weights, uint8_t *activations)
{
	(void)constants;
	(void)mutable_weights;
	(void)activations;
	return 0;
}
void chk_init_mutable(const uint8_t *constants, uint8_t *mutable_weights)
{
	(void)constants;
	(void)mutable_weights;
}
int chk_set_threads(int n);
int chk_set_threads(int n) { return n; }
#endif

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define CB_PH CB_NAME(placeholders)
#define CB_MAXPH 4096
#ifdef CB_PROFILE
void CB_NAME(profile_print)(int runs);
#endif

/* reads a whole file; NULL on failure */
static unsigned char *drv_slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	size_t cap = 1 << 16, n = 0;
	unsigned char *p = malloc(cap);
	while (p) {
		size_t r = fread(p + n, 1, cap - n, f);
		n += r;
		if (n < cap)
			break;
		unsigned char *q = realloc(p, cap * 2);
		if (!q) {
			free(p);
			p = NULL;
			break;
		}
		p = q;
		cap *= 2;
	}
	fclose(f);
	*len = n;
	return p;
}

/* element size and .npy descr of an element kind (glow-run's conventions:
 * quantized kinds as their stored integers, bfloat16 as '<u2') */
static const struct drv_kind {
	const char *elem, *descr;
	size_t size;
} drv_kinds[] = {
	{"float", "<f4", 4}, {"float16", "<f2", 2}, {"bfloat16", "<u2", 2}, {"qi8", "|i1", 1},
	{"qui8", "|u1", 1}, {"qi16", "<i2", 2}, {"qi32", "<i4", 4}, {"i32", "<i4", 4},
	{"i64", "<i8", 8}, {"index32", "<i4", 4}, {"index64", "<i8", 8}, {"bool", "|b1", 1},
};

static const struct drv_kind *drv_kind(const char *elem)
{
	for (size_t i = 0; i < sizeof drv_kinds / sizeof drv_kinds[0]; i++)
		if (!strcmp(drv_kinds[i].elem, elem))
			return &drv_kinds[i];
	return &drv_kinds[0];
}

static size_t drv_elem_size(const char *elem) { return drv_kind(elem)->size; }
static const char *drv_descr(const char *elem) { return drv_kind(elem)->descr; }

/* .npy: the data after the header, checked against the placeholder's
 * size and element descr. */
static int drv_load_npy(const unsigned char *p, size_t n, const struct CB_NAME(placeholder) *ph, unsigned char *out)
{
	if (n < 10 || memcmp(p, "\x93NUMPY", 6) != 0)
		return -1;
	size_t hl = p[8] | (size_t)p[9] << 8, off = 10;
	if (p[6] >= 2) {
		if (n < 12)
			return -1;
		hl = p[8] | (size_t)p[9] << 8 | (size_t)p[10] << 16 | (size_t)p[11] << 24;
		off = 12;
	}
	if (off + hl > n)
		return -1;
	char hdr[1024];
	size_t hn = hl < sizeof hdr - 1 ? hl : sizeof hdr - 1;
	memcpy(hdr, p + off, hn);
	hdr[hn] = 0;
	if (strstr(hdr, "True") && strstr(hdr, "fortran_order': True"))
		return -1;
	if (!strstr(hdr, drv_descr(ph->elem)))
		return -1;
	if (n - off - hl != ph->size)
		return -1;
	memcpy(out, p + off + hl, ph->size);
	return 0;
}

static int drv_varint(const unsigned char *p, size_t n, size_t *i, uint64_t *v)
{
	*v = 0;
	for (int s = 0; s < 64 && *i < n; s += 7) {
		unsigned char b = p[(*i)++];
		*v |= (uint64_t)(b & 0x7f) << s;
		if (!(b & 0x80))
			return 0;
	}
	return -1;
}

/* ONNX TensorProto: raw_data (9) or float_data (4), int32_data (5),
 * int64_data (7), packed or not, converted to the placeholder's kind. */
static int drv_load_pb(const unsigned char *p, size_t n, const struct CB_NAME(placeholder) *ph, unsigned char *out)
{
	size_t es = drv_elem_size(ph->elem), cnt = ph->size / es, got = 0, i = 0;
	int is_float = !strcmp(ph->elem, "float");
	while (i < n) {
		uint64_t key, v;
		if (drv_varint(p, n, &i, &key))
			return -1;
		unsigned f = (unsigned)(key >> 3), wt = (unsigned)(key & 7);
		if (wt == 0) {
			if (drv_varint(p, n, &i, &v))
				return -1;
			if ((f == 5 || f == 7) && got < cnt) {
				if (is_float) {
					float x = f == 7 ? (float)(int64_t)v : (float)(int32_t)v;
					memcpy(out + got * 4, &x, 4);
				} else {
					int64_t x = (int64_t)v;
					memcpy(out + got * es, &x, es);
				}
				got++;
			}
		} else if (wt == 2) {
			if (drv_varint(p, n, &i, &v) || v > n - i)
				return -1;
			const unsigned char *q = p + i;
			size_t len = (size_t)v;
			i += len;
			if (f == 9) {
				if (len != ph->size)
					return -1;
				memcpy(out, q, len);
				got = cnt;
			} else if (f == 4 && is_float) {
				for (size_t k = 0; k + 4 <= len && got < cnt; k += 4)
					memcpy(out + 4 * got++, q + k, 4);
			} else if (f == 5 || f == 7) {
				size_t j = 0;
				while (j < len && got < cnt) {
					uint64_t x;
					if (drv_varint(q, len, &j, &x))
						return -1;
					if (is_float) {
						float fx = f == 7 ? (float)(int64_t)x : (float)(int32_t)x;
						memcpy(out + got * 4, &fx, 4);
					} else {
						int64_t ix = f == 7 ? (int64_t)x : (int64_t)(int32_t)x;
						memcpy(out + got * es, &ix, es);
					}
					got++;
				}
			}
		} else if (wt == 5) {
			if (f == 4 && is_float && i + 4 <= n && got < cnt)
				memcpy(out + 4 * got++, p + i, 4);
			i += 4;
		} else if (wt == 1) {
			i += 8;
		} else {
			return -1;
		}
	}
	return got == cnt ? 0 : -1;
}

static int drv_bind(const struct CB_NAME(placeholder) *ph, const char *path, unsigned char *out)
{
	size_t n;
	unsigned char *p = drv_slurp(path, &n);
	if (!p) {
		fprintf(stderr, "error: cannot read '%s'\n", path);
		return -1;
	}
	size_t pl = strlen(path);
	int rc = pl > 3 && !strcmp(path + pl - 3, ".pb") ? drv_load_pb(p, n, ph, out) : drv_load_npy(p, n, ph, out);
	free(p);
	if (rc)
		fprintf(stderr, "error: '%s' does not hold a %s tensor of %zu bytes for input '%s'\n", path, ph->elem,
			ph->size, ph->name);
	return rc;
}

static int drv_write_npy(const char *dir, const struct CB_NAME(placeholder) *ph, const unsigned char *data)
{
	char path[4096], shape[512] = "", name[256];
	size_t k = 0;
	for (const char *c = ph->name; *c && k + 1 < sizeof name; c++)
		name[k++] = (*c == '/' || *c == '\\') ? '_' : *c;
	name[k] = 0;
	snprintf(path, sizeof path, "%s/%s.npy", dir, name);
	for (unsigned i = 0; i < ph->rank; i++) {
		size_t l = strlen(shape);
		snprintf(shape + l, sizeof shape - l, "%llu%s", (unsigned long long)ph->dims[i],
			 ph->rank == 1 ? "," : i + 1 < ph->rank ? ", " : "");
	}
	char hdr[1024];
	int hn = snprintf(hdr, sizeof hdr, "{'descr': '%s', 'fortran_order': False, 'shape': (%s), }",
			  drv_descr(ph->elem), shape);
	int total = 10 + hn + 1, pad = (64 - total % 64) % 64;
	FILE *f = fopen(path, "wb");
	if (!f) {
		fprintf(stderr, "error: cannot write '%s'\n", path);
		return -1;
	}
	unsigned hl = (unsigned)(hn + pad + 1);
	unsigned char pre[10] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, (unsigned char)(hl & 255), (unsigned char)(hl >> 8)};
	fwrite(pre, 1, 10, f);
	fwrite(hdr, 1, (size_t)hn, f);
	for (int i = 0; i < pad; i++)
		fputc(' ', f);
	fputc('\n', f);
	fwrite(data, 1, ph->size, f);
	return fclose(f) == 0 ? 0 : -1;
}

#ifndef CB_TRAIN_DRIVER /* a training bundle's driver (cb_train_driver.c) has its own main */
static void drv_print(const struct CB_NAME(placeholder) *ph, const unsigned char *data)
{
	size_t es = drv_elem_size(ph->elem), n = ph->size / es;
	printf("%s:", ph->name);
	for (size_t i = 0; i < n; i++) {
		if (!strcmp(ph->elem, "float")) {
			float x;
			memcpy(&x, data + 4 * i, 4);
			printf(" %.9g", x);
		} else if (es == 8) {
			long long x;
			memcpy(&x, data + 8 * i, 8);
			printf(" %lld", x);
		} else if (es == 4) {
			int32_t x;
			memcpy(&x, data + 4 * i, 4);
			printf(" %ld", (long)x);
		} else {
			printf(" %u", data[i]);
		}
	}
	printf("\n");
}

#endif

static double drv_now_ms(void)
{
	struct timespec ts;
	timespec_get(&ts, TIME_UTC);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

#ifndef CB_TRAIN_DRIVER
static int drv_cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}
#endif

#if !CB_EMBEDDED
/* Reads the file at path, which must hold exactly n bytes, straight into
 * dst (the constants region: no second copy of the weights in memory);
 * 0, or -1 when it cannot be read or its size differs. */
static int drv_read_exact(const char *path, unsigned char *dst, size_t n)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return -1;
	size_t r = fread(dst, 1, n, f);
	unsigned char extra;
	int ok = r == n && fread(&extra, 1, 1, f) == 0 && !ferror(f);
	fclose(f);
	return ok ? 0 : -1;
}
#endif

/* The constants region: the embedded array, or the weights file (-weights,
 * else the bundle's NAME.weights.bin), which must hold exactly its bytes;
 * 0, or -1 after reporting. */
static int drv_constants(unsigned char *consts, const char *weights)
{
#if CB_EMBEDDED
	(void)weights;
	memcpy(consts, CB_NAME(constants), CB_NAME(CONSTANT_SIZE));
#else
	if (drv_read_exact(weights ? weights : CB_NAME(WEIGHTS_FILE), consts, CB_NAME(CONSTANT_SIZE))) {
		fprintf(stderr, "error: cannot read %zu bytes of weights from '%s'\n", (size_t)CB_NAME(CONSTANT_SIZE),
			weights ? weights : CB_NAME(WEIGHTS_FILE));
		return -1;
	}
#endif
	return 0;
}

/* a region aligned to 64 bytes from malloc (C11 aligned_alloc is not
 * everywhere) */
static unsigned char *drv_region(size_t n, void **base)
{
	*base = calloc(n + 64, 1);
	if (!*base)
		return NULL;
	uintptr_t a = ((uintptr_t)*base + 63) & ~(uintptr_t)63;
	return (unsigned char *)a;
}

#ifndef CB_TRAIN_DRIVER
int main(int argc, char **argv)
{
	const char *weights = NULL, *outdir = NULL;
	int print = 0, runs = 0, warmup = 3, threads = 0;
	const char *bind[CB_MAXPH] = {0};
	size_t nph = 0, npos = 0;
	while (CB_PH[nph].name)
		nph++;
	for (int a = 1; a < argc; a++) {
		if (!strcmp(argv[a], "-weights") && a + 1 < argc) {
			weights = argv[++a];
		} else if (!strcmp(argv[a], "-output-dir") && a + 1 < argc) {
			outdir = argv[++a];
		} else if (!strcmp(argv[a], "-print")) {
			print = 1;
		} else if (!strcmp(argv[a], "-runs") && a + 1 < argc) {
			runs = atoi(argv[++a]);
		} else if (!strcmp(argv[a], "-warmup") && a + 1 < argc) {
			warmup = atoi(argv[++a]);
		} else if (!strcmp(argv[a], "-threads") && a + 1 < argc) {
			const char *v = argv[++a];
			char *end;
			long n = strtol(v, &end, 10);
			if (!*v || *end || n < 1 || n > 256) {
				fprintf(stderr, "error: -threads takes a number from 1 to 256, not '%s'\n", v);
				return 1;
			}
			threads = (int)n;
		} else if (!strcmp(argv[a], "-input") && a + 1 < argc) {
			const char *s = argv[++a], *eq = strrchr(s, '=');
			size_t i = 0;
			for (; eq && i < nph; i++)
				if (strlen(CB_PH[i].name) == (size_t)(eq - s) && !strncmp(CB_PH[i].name, s, (size_t)(eq - s)))
					break;
			if (!eq || i == nph || i >= CB_MAXPH) {
				fprintf(stderr, "error: -input %s: no such placeholder\n", s);
				return 1;
			}
			bind[i] = eq + 1;
		} else if (argv[a][0] == '-' && argv[a][1]) {
			fprintf(stderr, "usage: %s [-weights FILE] [-input NAME=FILE]... [FILE...] [-output-dir DIR] "
					"[-print] [-runs N] [-warmup N] [-threads N]\n",
				argv[0]);
			return 1;
		} else {
			while (npos < nph && !CB_PH[npos].is_input)
				npos++;
			if (npos == nph || npos >= CB_MAXPH) {
				fprintf(stderr, "error: more input files than inputs\n");
				return 1;
			}
			bind[npos++] = argv[a];
		}
	}
	/* every exit after the regions are made frees them (done:), so that a
	 * bundle built with LeakSanitizer reports no leak on an error */
	int rc = 1;
	void *cbase, *mbase, *abase;
	unsigned char *consts = drv_region(CB_NAME(CONSTANT_SIZE) + 1, &cbase);
	unsigned char *mut = drv_region(CB_NAME(MUTABLE_SIZE) + 1, &mbase);
	unsigned char *act = drv_region(CB_NAME(ACTIVATIONS_SIZE) + 1, &abase);
	if (!consts || !mut || !act) {
		fprintf(stderr, "error: out of memory\n");
		goto done;
	}
	if (drv_constants(consts, weights))
		goto done;
	if (threads)
		CB_NAME(set_threads)(threads);
	CB_NAME(init_mutable)(consts, mut);
	for (size_t i = 0; i < nph && i < CB_MAXPH; i++) {
		if (!CB_PH[i].is_input)
			continue;
		if (!bind[i]) {
			fprintf(stderr, "error: input '%s' is not bound\n", CB_PH[i].name);
			goto done;
		}
		if (drv_bind(&CB_PH[i], bind[i], mut + CB_PH[i].offset))
			goto done;
	}
	if (runs > 0) {
		double *t = malloc(sizeof(double) * 2 * (size_t)runs);
		if (!t) {
			fprintf(stderr, "error: out of memory\n");
			goto done;
		}
		for (int r = 0; r < warmup; r++)
			CB_NAME(run)(consts, mut, act);
		for (int r = 0; r < runs; r++) {
			double t0 = drv_now_ms();
			clock_t c0 = clock();
			CB_NAME(run)(consts, mut, act);
			t[runs + r] = (double)(clock() - c0) * 1e3 / CLOCKS_PER_SEC;
			t[r] = drv_now_ms() - t0;
		}
		qsort(t, (size_t)runs, sizeof *t, drv_cmp);
		qsort(t + runs, (size_t)runs, sizeof *t, drv_cmp);
		printf("median_ms %.3f min_ms %.3f cpu_median_ms %.3f runs %d\n", t[runs / 2], t[0], t[runs + runs / 2],
		       runs);
#ifdef CB_PROFILE
		CB_NAME(profile_print)(runs + warmup);
#endif
		free(t);
	} else if (CB_NAME(run)(consts, mut, act) != 0) {
		fprintf(stderr, "error: run failed (an index out of range)\n");
		goto done;
	}
	for (size_t i = 0; i < nph; i++) {
		if (!CB_PH[i].is_output)
			continue;
		if (print)
			drv_print(&CB_PH[i], mut + CB_PH[i].offset);
		if (outdir && drv_write_npy(outdir, &CB_PH[i], mut + CB_PH[i].offset))
			goto done;
	}
	rc = 0;
done:
	free(cbase);
	free(mbase);
	free(abase);
	return rc;
}
#endif
