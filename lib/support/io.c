#define _POSIX_C_SOURCE 200809L
#define _DEFAULT_SOURCE /* madvise, MAP_ANONYMOUS */
#include "io.h"
#include "cleanup.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

enum { OS_BUF = 1 << 20, PAD = 16 };

int read_input(const char *path, char **bufp, size_t *lenp, struct diag *d)
{
	int is_stdin = !path || strcmp(path, "-") == 0;
	FILE *f = is_stdin ? stdin : fopen(path, "rb");
	if (!f) {
		diag_error(d, LOC_NONE, "cannot open '%s': %s", path, strerror(errno));
		return -1;
	}
	size_t cap = 1 << 16, len = 0;
	struct stat st;
	if (!is_stdin && fstat(fileno(f), &st) == 0 && S_ISREG(st.st_mode))
		cap = (size_t)st.st_size + 1;
	char *buf = xmalloc(cap + PAD);
	for (;;) {
		if (len == cap) {
			if (cap > SIZE_MAX / 2 - PAD)
				unreachable("input too large");
			cap *= 2;
			buf = xrealloc(buf, cap + PAD);
		}
		size_t n = fread(buf + len, 1, cap - len, f);
		len += n;
		if (n == 0)
			break;
	}
	int bad = ferror(f);
	if (!is_stdin)
		fclose(f);
	if (bad) {
		diag_error(d, LOC_NONE, "cannot read '%s'", is_stdin ? "<stdin>" : path);
		free(buf);
		return -1;
	}
	if (len > UINT32_MAX - PAD) {
		diag_error(d, LOC_NONE, "'%s' is too large (4 GiB limit)", is_stdin ? "<stdin>" : path);
		free(buf);
		return -1;
	}
	memset(buf + len, 0, PAD);
	*bufp = buf;
	*lenp = len;
	return 0;
}

int input_open(struct input *in, const char *path, struct diag *d)
{
	memset(in, 0, sizeof(*in));
	if (path && strcmp(path, "-") != 0) {
		int fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0) {
			diag_error(d, LOC_NONE, "cannot open '%s': %s", path, strerror(errno));
			return -1;
		}
		struct stat st;
		long pg = sysconf(_SC_PAGESIZE);
		if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0 && pg > 0 &&
		    (uint64_t)st.st_size <= UINT32_MAX - PAD) {
			size_t len = (size_t)st.st_size, page = (size_t)pg;
			size_t maplen = (len + PAD + page - 1) / page * page;
			/* zero pages for the whole range, the file over their start:
			 * the bytes after the end of the file are zeros either way */
			void *base = mmap(NULL, maplen, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
			if (base != MAP_FAILED) {
				if (mmap(base, len, PROT_READ, MAP_PRIVATE | MAP_FIXED, fd, 0) != MAP_FAILED) {
					close(fd);
					in->buf = base;
					in->len = len;
					in->map = base;
					in->maplen = maplen;
					return 0;
				}
				munmap(base, maplen);
			}
		}
		close(fd);
	}
	char *buf;
	size_t len;
	if (read_input(path, &buf, &len, d))
		return -1;
	in->buf = buf;
	in->len = len;
	return 0;
}

void input_close(struct input *in)
{
	if (in->map)
		munmap(in->map, in->maplen);
	else
		free((char *)(uintptr_t)in->buf);
	memset(in, 0, sizeof(*in));
}

void input_drop(const struct input *in, size_t from, size_t to)
{
	if (!in->map || to <= from)
		return;
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	size_t a = from / page * page, b = to / page * page;
	if (b > a)
		madvise((char *)in->map + a, b - a, MADV_DONTNEED);
}

/* Test hook, for the regression tests of signals arriving while a tool
 * writes (test/tools/signals-*.test), which cannot otherwise stop a tool at
 * that moment: GLOW_TEST_RAISE_WHILE_WRITING=N raises signal N right after
 * the first bytes have gone into a temporary output file. Read once per
 * stream; unset (always, outside those tests), it costs one getenv per
 * output file. */
static int test_signal(void)
{
	const char *e = getenv("GLOW_TEST_RAISE_WHILE_WRITING");
	return e ? atoi(e) : 0;
}

int ostream_open(struct ostream *o, const char *path, struct diag *d)
{
	memset(o, 0, sizeof(*o));
	o->cap = OS_BUF;
	o->buf = xmalloc(o->cap);
	/* a write past the file-size limit (ulimit -f) fails with EFBIG and is
	 * reported, rather than killing the tool: also for standard output
	 * redirected to a file, which registers no temporary file */
	signal(SIGXFSZ, SIG_IGN);
	if (!path || strcmp(path, "-") == 0) {
		o->f = stdout;
		return 0;
	}
	/* Devices, pipes and other non-regular targets (/dev/null, /dev/stdout,
	 * a FIFO) are written in place: a rename would replace them. */
	struct stat st;
	if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
		o->f = fopen(path, "wb");
		if (!o->f) {
			diag_error(d, LOC_NONE, "cannot open '%s': %s", path, strerror(errno));
			free(o->buf);
			memset(o, 0, sizeof(*o));
			return -1;
		}
		o->direct = 1;
		return 0;
	}
	size_t n = strlen(path);
	o->path = xstrdup(path);
	o->tmp = xmalloc(n + 16);
	memcpy(o->tmp, path, n);
	memcpy(o->tmp + n, ".tmp-XXXXXX", 12);
	int fd = mkstemp(o->tmp);
	if (fd < 0) {
		diag_error(d, LOC_NONE, "cannot create '%s': %s", path, strerror(errno));
		free(o->buf);
		free(o->path);
		free(o->tmp);
		memset(o, 0, sizeof(*o));
		return -1;
	}
	o->cleanup = cleanup_add_file(o->tmp);
	o->raise = test_signal();
	fchmod(fd, 0644);
	o->f = fdopen(fd, "wb");
	if (!o->f)
		unreachable("fdopen failed");
	return 0;
}

void ostream_mem(struct ostream *o)
{
	memset(o, 0, sizeof(*o));
	o->to_mem = 1;
	o->cap = 4096;
	o->buf = xmalloc(o->cap);
}

/* The test hook's signal, once the temporary file holds a part of the
 * output. */
static void raise_now(struct ostream *o)
{
	int sig = o->raise;
	o->raise = 0;
	fflush(o->f);
	raise(sig);
}

void os_flush(struct ostream *o)
{
	if (o->to_mem || !o->f || !o->len)
		return;
	if (fwrite(o->buf, 1, o->len, o->f) != o->len)
		o->err = errno ? errno : EIO;
	o->len = 0;
	if (GLOW_UNLIKELY(o->raise))
		raise_now(o);
}

void os_write(struct ostream *o, const void *p, size_t n)
{
	if (o->to_mem) {
		o->buf = xgrow(o->buf, &o->cap, o->len + n + 1, 1);
	} else if (o->len + n > o->cap) {
		os_flush(o);
		if (n > o->cap) {
			if (o->f && fwrite(p, 1, n, o->f) != n)
				o->err = errno ? errno : EIO;
			if (GLOW_UNLIKELY(o->raise))
				raise_now(o);
			return;
		}
	}
	memcpy(o->buf + o->len, p, n);
	o->len += n;
}

void os_puts(struct ostream *o, const char *s) { os_write(o, s, strlen(s)); }

void os_printf(struct ostream *o, const char *fmt, ...)
{
	char small[256];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(small, sizeof small, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if ((size_t)n < sizeof small) {
		os_write(o, small, (size_t)n);
		return;
	}
	char *big = xmalloc((size_t)n + 1);
	va_start(ap, fmt);
	vsnprintf(big, (size_t)n + 1, fmt, ap);
	va_end(ap);
	os_write(o, big, (size_t)n);
	free(big);
}

void os_u64(struct ostream *o, uint64_t v)
{
	char b[24];
	int i = 24;
	do {
		b[--i] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	os_write(o, b + i, (size_t)(24 - i));
}

void os_i64(struct ostream *o, int64_t v)
{
	if (v < 0) {
		os_putc(o, '-');
		os_u64(o, (uint64_t)0 - (uint64_t)v);
	} else
		os_u64(o, (uint64_t)v);
}

char *path_dir(const char *path)
{
	if (!path || strcmp(path, "-") == 0)
		return NULL;
	const char *slash = strrchr(path, '/');
	return slash ? xstrndup(path, (size_t)(slash - path + 1)) : NULL;
}

/* dir + name, dir NULL standing for "" (the working directory) */
static char *path_join(const char *dir, const char *name)
{
	size_t a = dir ? strlen(dir) : 0, b = strlen(name);
	char *p = xmalloc(a + b + 1);
	if (a)
		memcpy(p, dir, a);
	memcpy(p + a, name, b + 1);
	return p;
}

char *path_rebase(const char *file, const char *from_dir, const char *to_dir)
{
	if (file[0] == '/' || (!from_dir && !to_dir) || (from_dir && to_dir && strcmp(from_dir, to_dir) == 0))
		return xstrdup(file);
	char from_real[PATH_MAX], to_real[PATH_MAX], file_real[PATH_MAX];
	char *joined = path_join(from_dir, file);
	bool ok = realpath(joined, file_real) && realpath(from_dir ? from_dir : ".", from_real) &&
		  realpath(to_dir ? to_dir : ".", to_real);
	free(joined);
	if (!ok)
		return NULL;
	/* the same directory spelt two ways ("./" and "", "a/../b/" and "b/"):
	 * keep the text as written */
	if (strcmp(from_real, to_real) == 0)
		return xstrdup(file);
	/* the longest common run of whole components, then one ".." per
	 * component of to_real left over */
	size_t common = 0;
	for (size_t i = 0;; i++) {
		char a = to_real[i], b = file_real[i];
		if ((a == '/' || a == 0) && b == '/')
			common = i;
		if (a == 0 || a != b)
			break;
	}
	size_t ups = 0;
	for (const char *c = to_real + common; *c; c++)
		ups += *c == '/';
	/* to_real "/" (the root) has common 0 and no component left */
	if (strcmp(to_real, "/") == 0)
		ups = 0;
	const char *rest = file_real + common + 1;
	char *out = xmalloc(3 * ups + strlen(rest) + 1), *o = out;
	for (size_t i = 0; i < ups; i++, o += 3)
		memcpy(o, "../", 3);
	strcpy(o, rest);
	return out;
}

static int special(char *buf, size_t size, double v)
{
	if (isnan(v))
		return snprintf(buf, size, "nan");
	if (isinf(v))
		return snprintf(buf, size, v < 0 ? "-inf" : "inf");
	return -1;
}

/* Rewrites an exponent form whose exponent is in [-5, 15] as a plain decimal
 * with the same significant digits (100.0 rather than 1e+02). */
static int plain_form(char *buf, size_t size, int n, int prec)
{
	char *e = strchr(buf, 'e');
	if (!e)
		return n;
	int exp = atoi(e + 1);
	if (exp < -5 || exp > 15)
		return n;
	double v = strtod(buf, NULL);
	int decimals = prec - 1 - exp;
	if (decimals < 0)
		decimals = 0;
	char tmp[64];
	int m = snprintf(tmp, sizeof tmp, "%.*f", decimals, v);
	if (m <= 0 || (size_t)m >= size || strtod(tmp, NULL) != v)
		return n;
	memcpy(buf, tmp, (size_t)m + 1);
	return m;
}

/* Makes sure the text reads as a floating-point literal (has '.', 'e', or is special). */
static int ensure_point(char *buf, size_t size, int n)
{
	if (strpbrk(buf, ".eEn") || (size_t)n + 2 >= size)
		return n;
	buf[n++] = '.';
	buf[n++] = '0';
	buf[n] = 0;
	return n;
}

/* Whether the text in buf reads back as v (as a float when single). */
static bool reads_back(const char *buf, double v, bool single)
{
	return single ? strtof(buf, NULL) == (float)v : strtod(buf, NULL) == v;
}

/* format_float (single) and format_double: the fewest significant digits
 * that read back as v, in plain form where plain_form allows it and the
 * plain form reads back too (for a double plain_form checks that itself,
 * for a float the float must be checked). */
static int format_shortest(char *buf, size_t size, double v, bool single)
{
	int n = special(buf, size, v);
	if (n >= 0)
		return n;
	int prec, max_prec = single ? 9 : 17;
	for (prec = 1; prec <= max_prec; prec++) {
		n = snprintf(buf, size, "%.*g", prec, v);
		if (reads_back(buf, v, single))
			break;
	}
	if (strchr(buf, 'e')) {
		char keep[48];
		memcpy(keep, buf, (size_t)n + 1);
		int m = plain_form(buf, size, n, prec);
		if (!reads_back(buf, v, single)) {
			memcpy(buf, keep, (size_t)n + 1);
			m = n;
		}
		n = m;
	}
	return ensure_point(buf, size, n);
}

int format_float(char *buf, size_t size, float v) { return format_shortest(buf, size, v, true); }

int format_double(char *buf, size_t size, double v) { return format_shortest(buf, size, v, false); }

void os_float(struct ostream *o, float v)
{
	char b[48];
	int n = format_float(b, sizeof b, v);
	os_write(o, b, (size_t)n);
}

void os_double(struct ostream *o, double v)
{
	char b[48];
	int n = format_double(b, sizeof b, v);
	os_write(o, b, (size_t)n);
}

static const char hexdig[] = "0123456789abcdef";

void os_hex(struct ostream *o, const void *p, size_t n)
{
	static uint16_t pairs[256];
	static int init;
	if (!init) {
		for (int i = 0; i < 256; i++) {
			char two[2] = {hexdig[i >> 4], hexdig[i & 15]};
			memcpy(&pairs[i], two, 2);
		}
		init = 1;
	}
	const uint8_t *s = p;
	while (n) {
		if (o->to_mem)
			o->buf = xgrow(o->buf, &o->cap, o->len + 2 * n + 1, 1);
		else if (o->cap - o->len < 2)
			os_flush(o);
		size_t room = (o->cap - o->len) / 2, k = n < room ? n : room;
		char *d = o->buf + o->len;
		for (size_t i = 0; i < k; i++)
			memcpy(d + 2 * i, &pairs[s[i]], 2);
		o->len += 2 * k;
		s += k;
		n -= k;
	}
}

/* The body of a list writer: "[a, b, c]" with PUT(o, element) writing one
 * element. A macro, not a function taking PUT, so that each writer calls its
 * element writer directly (lists of weights are long). */
#define OS_LIST(o, v, n, PUT)                              \
	do {                                               \
		os_putc(o, '[');                           \
		for (size_t i_ = 0; i_ < (n); i_++) {      \
			if (i_)                            \
				os_write(o, ", ", 2);      \
			PUT(o, (v)[i_]);                   \
		}                                          \
		os_putc(o, ']');                           \
	} while (0)

void os_i64_list(struct ostream *o, const int64_t *v, size_t n) { OS_LIST(o, v, n, os_i64); }

void os_double_list(struct ostream *o, const double *v, size_t n) { OS_LIST(o, v, n, os_double); }

/* Runs of plain bytes are written at once. */
void os_quoted(struct ostream *o, const char *s, size_t len)
{
	os_putc(o, '"');
	size_t run = 0;
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];
		if (c >= 0x20 && c != 0x7f && c != '"' && c != '\\')
			continue;
		os_write(o, s + run, i - run);
		run = i + 1;
		char esc[4] = {'\\', 0, 0, 0};
		size_t n = 2;
		switch (c) {
		case '"': esc[1] = '"'; break;
		case '\\': esc[1] = '\\'; break;
		case '\n': esc[1] = 'n'; break;
		case '\t': esc[1] = 't'; break;
		default:
			esc[1] = hexdig[c >> 4];
			esc[2] = hexdig[c & 15];
			n = 3;
			break;
		}
		os_write(o, esc, n);
	}
	os_write(o, s + run, len - run);
	os_putc(o, '"');
}

const char *ostream_cstr(struct ostream *o)
{
	o->buf = xgrow(o->buf, &o->cap, o->len + 1, 1);
	o->buf[o->len] = 0;
	return o->buf;
}

int ostream_commit(struct ostream *o, struct diag *d)
{
	int rc = 0;
	if (o->to_mem) {
		ostream_cstr(o);
		return 0;
	}
	os_flush(o);
	if (o->f && fflush(o->f) != 0)
		o->err = errno ? errno : EIO;
	if (o->tmp) {
		if (fclose(o->f) != 0 && !o->err)
			o->err = errno ? errno : EIO;
		o->f = NULL;
		if (o->err) {
			diag_error(d, LOC_NONE, "cannot write '%s': %s", o->path, strerror(o->err));
			unlink(o->tmp);
			rc = -1;
		} else if (rename(o->tmp, o->path) != 0) {
			diag_error(d, LOC_NONE, "cannot write '%s': %s", o->path, strerror(errno));
			unlink(o->tmp);
			rc = -1;
		}
	} else {
		if (o->direct && fclose(o->f) != 0 && !o->err)
			o->err = errno ? errno : EIO;
		if (o->err) {
			diag_error(d, LOC_NONE, "cannot write output: %s", strerror(o->err));
			rc = -1;
		}
	}
	if (o->tmp)
		cleanup_remove(o->cleanup);
	free(o->buf);
	free(o->path);
	free(o->tmp);
	memset(o, 0, sizeof(*o));
	return rc;
}

void ostream_abort(struct ostream *o)
{
	if (o->direct && o->f)
		fclose(o->f);
	if (o->tmp) {
		if (o->f)
			fclose(o->f);
		unlink(o->tmp);
		cleanup_remove(o->cleanup);
	}
	free(o->buf);
	free(o->path);
	free(o->tmp);
	memset(o, 0, sizeof(*o));
}
