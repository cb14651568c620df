/* cbcache.c - the compiled-bundle cache of the C backend's run path.
 *
 * Compiling a bundle with the system compiler costs seconds (the kernels
 * are embedded in every bundle and built at -O3), running it
 * milliseconds; a test suite, a glow-diff sweep or a tuning loop compiles
 * the same bundle again and again. With $GLOW_CBACKEND_CACHE naming a
 * directory, a compiled shared object is kept there under a key made of
 * everything that decides its bytes: the compile command (compiler,
 * flags, libraries) and the text of NAME.c and NAME.h. A later compile
 * with the same key copies the object instead of running the compiler.
 *
 * The key is 128 bits: two 64-bit FNV-1a hashes with different offset
 * bases, over lengths and contents, so an accidental collision is out of
 * reach. Entries are written to a temporary file in the directory and
 * renamed into place, so concurrent processes (lit runs tests in
 * parallel) see an entry whole or not at all. The cache only saves time:
 * when the directory cannot be read or written, the bundle is compiled
 * as without it, and nothing is said. Entries are never removed; the
 * directory is the user's to clear. A cache is for one machine: bundles
 * built with -march=native are not for other processors.
 */
#define _POSIX_C_SOURCE 200809L
#include "backends/c/cbcache.h"
#include "support/cleanup.h"
#include "support/util.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct cbc_hash {
	uint64_t a, b;
};

static void cbc_mix(struct cbc_hash *h, const void *p, size_t n)
{
	const unsigned char *s = p;
	for (size_t i = 0; i < n; i++) {
		h->a = (h->a ^ s[i]) * 0x100000001b3ull;
		h->b = (h->b ^ s[i]) * 0x100000001b3ull;
	}
}

/* mixes a string with its length first, so "ab"+"c" and "a"+"bc" differ */
static void cbc_mix_str(struct cbc_hash *h, const char *s)
{
	uint64_t n = s ? (uint64_t)strlen(s) + 1 : 0;
	cbc_mix(h, &n, sizeof n);
	if (s)
		cbc_mix(h, s, (size_t)n - 1);
}

char *cbcache_path(const char *cmd, const char *c_src, const char *h_src)
{
	const char *dir = getenv("GLOW_CBACKEND_CACHE");
	if (!dir || !*dir)
		return NULL;
	struct cbc_hash h = {0xcbf29ce484222325ull, 0x84222325cbf29ce4ull};
	cbc_mix_str(&h, cmd);
	cbc_mix_str(&h, c_src);
	cbc_mix_str(&h, h_src);
	size_t n = strlen(dir) + 48;
	char *p = xmalloc(n);
	snprintf(p, n, "%s/%016" PRIx64 "%016" PRIx64 ".so", dir, h.a, h.b);
	return p;
}

/* Copies file from to file to (created with mode 0600 or truncated).
 * Returns 0, or -1 with nothing promised about to. */
static int cbc_copy(const char *from, const char *to, int extra_flags)
{
	int in = open(from, O_RDONLY);
	if (in < 0)
		return -1;
	int out = open(to, O_WRONLY | O_CREAT | O_TRUNC | extra_flags, 0600);
	if (out < 0) {
		close(in);
		return -1;
	}
	char buf[1 << 16];
	int rc = 0;
	for (;;) {
		ssize_t r = read(in, buf, sizeof buf);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			rc = r < 0 ? -1 : 0;
			break;
		}
		for (ssize_t off = 0; off < r;) {
			ssize_t w = write(out, buf + off, (size_t)(r - off));
			if (w < 0 && errno == EINTR)
				continue;
			if (w <= 0) {
				rc = -1;
				break;
			}
			off += w;
		}
		if (rc)
			break;
	}
	close(in);
	if (close(out) != 0)
		rc = -1;
	return rc;
}

bool cbcache_fetch(const char *entry, const char *so)
{
	if (!entry || access(entry, R_OK) != 0)
		return false;
	if (cbc_copy(entry, so, 0) == 0)
		return true;
	unlink(so);
	return false;
}

void cbcache_store(const char *entry, const char *so)
{
	if (!entry)
		return;
	const char *dir = getenv("GLOW_CBACKEND_CACHE");
	/* the directory itself: one level is made, as `mkdir` would */
	if (mkdir(dir, 0700) != 0 && errno != EEXIST)
		return;
	size_t n = strlen(entry) + 16;
	char *tmp = xmalloc(n);
	snprintf(tmp, n, "%s.%ld.tmp", entry, (long)getpid());
	/* a signal between open and rename removes the partial entry */
	int handle = cleanup_add_file(tmp);
	if (cbc_copy(so, tmp, O_EXCL) != 0 || rename(tmp, entry) != 0)
		unlink(tmp);
	cleanup_remove(handle);
	free(tmp);
}
