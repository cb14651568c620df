/* bundledir.c - a directory of C bundles replaced as one change (see
 * cbackend_write_dir in cbackend.h).
 *
 * Why a whole directory: a bundle is several files that only work
 * together (the header's offsets, the code, the weights). Replacing them
 * one by one would leave, after a failed write (a full disk, a file-size
 * limit, a signal), a new header beside old weights, which compiles and
 * silently computes garbage.
 */
#define _GNU_SOURCE /* renameat2 and RENAME_EXCHANGE (glibc 2.28) */
#include "backends/c/cgen.h"
#include "support/cleanup.h"
#include "support/util.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

void cg_remove_dir(const char *dir)
{
	DIR *dd = opendir(dir);
	if (dd) {
		for (struct dirent *e; (e = readdir(dd));) {
			if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
				continue;
			size_t n = strlen(dir) + strlen(e->d_name) + 2;
			char *p = xmalloc(n);
			snprintf(p, n, "%s/%s", dir, e->d_name);
			unlink(p);
			free(p);
		}
		closedir(dd);
	}
	rmdir(dir);
}

static double now_seconds(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static char *path_join(const char *dir, const char *name)
{
	size_t n = strlen(dir) + strlen(name) + 2;
	char *p = xmalloc(n);
	snprintf(p, n, "%s/%s", dir, name);
	return p;
}

/* The files written so far into the temporary directory (registered). */
struct written {
	char **files;
	int *handles;
	size_t n;
};

/* Whether entry `name` is one of the files a bundle called bname consists
 * of (written or not this time: a NAME_main.c of an earlier -emit-main
 * must not outlive its bundle). */
static bool bundle_file(const char *bname, const char *name)
{
	static const char *const suffixes[] = {".h", ".c", ".weights.bin", "_main.c"};
	size_t l = strlen(bname);
	if (strncmp(name, bname, l) != 0)
		return false;
	for (size_t i = 0; i < GLOW_ARRAY_SIZE(suffixes); i++)
		if (!strcmp(name + l, suffixes[i]))
			return true;
	return false;
}

static bool written_has(const struct written *w, const char *tmpdir, const char *name)
{
	size_t l = strlen(tmpdir);
	for (size_t i = 0; i < w->n; i++)
		if (strncmp(w->files[i], tmpdir, l) == 0 && w->files[i][l] == '/' && !strcmp(w->files[i] + l + 1, name))
			return true;
	return false;
}

/* The entries of the old directory moved into the new one (renamed, not
 * linked), to move back if the swap does not happen. */
struct moved {
	char **from, **to;
	size_t n;
};

/* Carries the entries of the old directory that the new bundles do not
 * replace over into tmp, so that the swap keeps them: regular files as
 * hard links (the old directory stays whole until the swap), anything
 * else (a subdirectory, a symbolic link) renamed, which undo_moves
 * reverses. */
static int carry_over(const char *dir, const char *tmp, const struct cbackend_bundle *bs, size_t nb,
		      struct written *w, struct moved *mv, struct diag *d)
{
	DIR *dd = opendir(dir);
	if (!dd) {
		diag_error(d, LOC_NONE, "cannot read directory '%s': %s", dir, strerror(errno));
		return -1;
	}
	int rc = 0;
	for (struct dirent *e; rc == 0 && (e = readdir(dd));) {
		bool ours = written_has(w, tmp, e->d_name);
		for (size_t i = 0; i < nb && !ours; i++)
			ours = bundle_file(bs[i].name, e->d_name);
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..") || ours)
			continue;
		char *from = path_join(dir, e->d_name), *to = path_join(tmp, e->d_name);
		struct stat st;
		if (lstat(from, &st) == 0 && S_ISREG(st.st_mode)) {
			w->files = xrealloc(w->files, (w->n + 1) * sizeof *w->files);
			w->handles = xrealloc(w->handles, (w->n + 1) * sizeof *w->handles);
			w->handles[w->n] = cleanup_add_file(to);
			w->files[w->n++] = to;
			if (link(from, to) != 0) {
				diag_error(d, LOC_NONE, "cannot keep '%s' in the new bundle directory: %s", from,
					   strerror(errno));
				rc = -1;
			}
			free(from);
		} else if (rename(from, to) == 0) {
			mv->from = xrealloc(mv->from, (mv->n + 1) * sizeof *mv->from);
			mv->to = xrealloc(mv->to, (mv->n + 1) * sizeof *mv->to);
			mv->from[mv->n] = from;
			mv->to[mv->n++] = to;
		} else {
			diag_error(d, LOC_NONE, "cannot keep '%s' in the new bundle directory: %s", from,
				   strerror(errno));
			free(from);
			free(to);
			rc = -1;
		}
	}
	closedir(dd);
	return rc;
}

static void undo_moves(struct moved *mv, bool undo)
{
	for (size_t i = mv->n; i-- > 0;) {
		if (undo)
			rename(mv->to[i], mv->from[i]);
		free(mv->from[i]);
		free(mv->to[i]);
	}
	free(mv->from);
	free(mv->to);
}

/* Puts directory tmp in the place of the existing directory base (dir as
 * given, for messages, without trailing slashes); on success the old
 * contents are at *old (to remove; malloc'd, may equal tmp). Returns 0, or
 * -1 after reporting with dir unchanged. (Without the exchange, a signal
 * between the two renames leaves the old bundle at DIR.old-XXXXXX, not
 * removed: it is the user's last good one.) */
static int swap_in(const char *tmp, const char *dir, const char *base, char **old, struct diag *d)
{
#ifdef RENAME_EXCHANGE
	if (renameat2(AT_FDCWD, tmp, AT_FDCWD, base, RENAME_EXCHANGE) == 0) {
		*old = xstrdup(tmp);
		return 0;
	}
	if (errno != EINVAL && errno != ENOSYS && errno != ENOTSUP) {
		diag_error(d, LOC_NONE, "cannot replace directory '%s': %s", dir, strerror(errno));
		return -1;
	}
#endif
	/* no exchange here: the old one aside (over an empty directory made for
	 * the purpose), the new one in, the old one back if that fails */
	size_t n = strlen(base) + 16;
	char *aside = xmalloc(n);
	snprintf(aside, n, "%s.old-XXXXXX", base);
	if (!mkdtemp(aside)) {
		diag_error(d, LOC_NONE, "cannot create a directory beside '%s': %s", dir, strerror(errno));
		free(aside);
		return -1;
	}
	int h = cleanup_add_dir(aside);
	if (rename(base, aside) != 0) {
		diag_error(d, LOC_NONE, "cannot replace directory '%s': %s", dir, strerror(errno));
		rmdir(aside);
		cleanup_remove(h);
		free(aside);
		return -1;
	}
	cleanup_remove(h); /* now the old bundle: not to be removed by a signal */
	if (rename(tmp, base) != 0) {
		diag_error(d, LOC_NONE, "cannot replace directory '%s': %s", dir, strerror(errno));
		rename(aside, base);
		free(aside);
		return -1;
	}
	*old = aside;
	return 0;
}

/* Whether directory dir is the working directory or one above it: the
 * swap would move the directory the process (and the shell that started
 * it) stands in, and "." and ".." cannot be renamed at all. */
static bool holds_cwd(const char *dir)
{
	char *real = realpath(dir, NULL), *cwd = getcwd(NULL, 0);
	bool r = false;
	if (real && cwd) {
		size_t l = strlen(real);
		r = strcmp(real, "/") == 0 || (strncmp(cwd, real, l) == 0 && (cwd[l] == 0 || cwd[l] == '/'));
	}
	free(real);
	free(cwd);
	return r;
}

int cbackend_write_dir(struct ir_func *const *fs, size_t n, const char *dir_arg, const struct cbackend_options *o,
		       struct diag *d)
{
	/* a symbolic link to the bundle directory: the directory it names is
	 * replaced, the link stays (swapping the link itself would leave the
	 * old bundle where the link pointed, and removing "the old one" through
	 * the link would empty the target) */
	struct stat lst;
	char *resolved = NULL;
	if (lstat(dir_arg, &lst) == 0 && S_ISLNK(lst.st_mode))
		resolved = realpath(dir_arg, NULL);
	const char *dir = resolved ? resolved : dir_arg;
	/* everything generated before anything is written */
	double t0 = now_seconds();
	struct cbackend_bundle *bs = xcalloc(n + 1, sizeof *bs);
	/* a module with a training step is one bundle of all its functions */
	size_t step = 0, eval = 0;
	int training = cbackend_find_training(fs, n, &step, &eval, d);
	const size_t nfs = n;
	int rc = training < 0 ? -1 : 0;
	if (training == 1) {
		n = 1;
		rc = cbackend_generate_training(fs, nfs, step, eval, o, &bs[0], d);
	}
	for (size_t i = 0; i < n && rc == 0 && training == 0; i++)
		rc = cbackend_generate(fs[i], o, &bs[i], d);
	if (o && o->gen_seconds)
		*o->gen_seconds += now_seconds() - t0;
	struct stat st;
	bool exists = rc == 0 && stat(dir, &st) == 0;
	if (exists && !S_ISDIR(st.st_mode)) {
		diag_error(d, LOC_NONE, "'%s' exists and is not a directory", dir);
		rc = -1;
	} else if (exists && holds_cwd(dir)) {
		diag_error(d, LOC_NONE,
			   "the bundle directory '%s' is the working directory or above it; a bundle directory is "
			   "replaced as a whole, so name one below it (for example -o bundle)",
			   dir_arg);
		rc = -1;
	}
	/* the temporary directory beside dir (same file system, so rename
	 * works), named after it without trailing slashes */
	char *base = xstrdup(dir), *tmp = NULL, *old = NULL;
	for (size_t l = strlen(base); l > 1 && base[l - 1] == '/'; l--)
		base[l - 1] = 0;
	struct written w = {NULL, NULL, 0};
	int tmp_handle = -1;
	if (rc == 0) {
		size_t tn = strlen(base) + 16;
		tmp = xmalloc(tn);
		snprintf(tmp, tn, "%s.tmp-XXXXXX", base);
		if (!mkdtemp(tmp)) {
			diag_error(d, LOC_NONE, "cannot create a directory beside '%s': %s", dir, strerror(errno));
			free(tmp);
			tmp = NULL;
			rc = -1;
		} else {
			tmp_handle = cleanup_add_dir(tmp);
		}
	}
	for (size_t i = 0; i < n && rc == 0; i++)
		rc = cbackend_write_bundle(&bs[i], tmp, o && o->embed_weights, &w.files, &w.handles, &w.n, d);
	struct moved mv = {NULL, NULL, 0};
	if (rc == 0 && exists)
		rc = carry_over(dir, tmp, bs, n, &w, &mv, d);
	if (rc == 0 && exists)
		rc = swap_in(tmp, dir, base, &old, d);
	else if (rc == 0 && rename(tmp, base) != 0) {
		diag_error(d, LOC_NONE, "cannot create directory '%s': %s", dir, strerror(errno));
		rc = -1;
	}
	if (rc == 0 && !exists) {
		/* mkdtemp made it 0700; a directory made by mkdir would not be */
		mode_t mask = umask(0);
		umask(mask);
		chmod(dir, 0777 & ~mask);
	}
	if (rc == 0 && exists) {
		/* mkdtemp's 0700 gives way to the old directory's mode */
		chmod(dir, st.st_mode & 07777);
	}
	undo_moves(&mv, rc != 0);
	if (old)
		cg_remove_dir(old); /* the old bundle */
	else if (rc != 0 && tmp)
		cg_remove_dir(tmp); /* the new one, half written */
	for (size_t i = 0; i < w.n; i++) {
		cleanup_remove(w.handles[i]);
		free(w.files[i]);
	}
	cleanup_remove(tmp_handle);
	free(w.files);
	free(w.handles);
	free(old);
	free(tmp);
	free(base);
	free(resolved);
	for (size_t i = 0; i < n; i++)
		cbackend_bundle_free(&bs[i]);
	free(bs);
	return rc;
}
