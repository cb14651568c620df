/* ocl_diskcache.c - built OpenCL programs kept on disk between processes,
 * keyed by the hash of the program's source and of the device.
 *
 * The directory is $GLOW_OPENCL_CACHE (set but empty: no disk cache), else
 * $XDG_CACHE_HOME/glow-opencl, else $HOME/.cache/glow-opencl; with neither
 * variable set there is none. A file is the device's binary of one program
 * (clGetProgramInfo CL_PROGRAM_BINARIES), named by the 64-bit FNV-1a hashes
 * of the source and of the device's name and driver version, and the
 * source's length. The cache is best effort: a file that cannot be written
 * is skipped, and one the device does not take back (another driver
 * release, a damaged file) is ignored and the source is built instead.
 * Files are written to a temporary name and renamed into place, so a
 * reader never sees half a file.
 */
#define _POSIX_C_SOURCE 200809L
#include "backends/opencl/ocl.h"
#include "support/util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static uint64_t fnv1a_more(uint64_t h, const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
	return h;
}

/* The cache file of a program, malloc'd; NULL when there is no cache
 * directory (or it cannot be made). */
static char *cache_path(struct ocl_device *dev, uint64_t src_hash, size_t len)
{
	const char *env = getenv("GLOW_OPENCL_CACHE"), *base = NULL, *sub = "";
	if (env) {
		if (!*env)
			return NULL;
		base = env;
	} else if ((base = getenv("XDG_CACHE_HOME")) && *base) {
		sub = "/glow-opencl";
	} else if ((base = getenv("HOME")) && *base) {
		sub = "/.cache/glow-opencl";
	} else {
		return NULL;
	}
	char ver[256] = "";
	clGetDeviceInfo(dev->id, CL_DRIVER_VERSION, sizeof ver - 1, ver, NULL);
	uint64_t dh = fnv1a_more(14695981039346656037ull, dev->name, strlen(dev->name));
	dh = fnv1a_more(dh, ver, strlen(ver));
	size_t n = strlen(base) + strlen(sub) + 80;
	char *dir = xmalloc(n), *path = xmalloc(n);
	snprintf(dir, n, "%s%s", base, sub);
	/* the directory and, for the defaults, its parent */
	for (char *s = dir + 1; *s; s++)
		if (*s == '/') {
			*s = 0;
			if (mkdir(dir, 0777) != 0 && errno != EEXIST) {
				free(dir);
				free(path);
				return NULL;
			}
			*s = '/';
		}
	if (mkdir(dir, 0777) != 0 && errno != EEXIST) {
		free(dir);
		free(path);
		return NULL;
	}
	snprintf(path, n, "%s/%016llx-%016llx-%zu.bin", dir, (unsigned long long)src_hash, (unsigned long long)dh,
		 len);
	free(dir);
	return path;
}

cl_program ocl_disk_load(struct ocl_device *dev, uint64_t src_hash, size_t len)
{
	char *path = cache_path(dev, src_hash, len);
	FILE *f = path ? fopen(path, "rb") : NULL;
	free(path);
	if (!f)
		return NULL;
	unsigned char *bin = NULL;
	size_t n = 0, cap = 0;
	for (;;) {
		if (n == cap) {
			cap = cap ? 2 * cap : 1 << 16;
			bin = xrealloc(bin, cap);
		}
		size_t r = fread(bin + n, 1, cap - n, f);
		if (!r)
			break;
		n += r;
	}
	fclose(f);
	cl_program p = NULL;
	if (n) {
		const unsigned char *b = bin;
		cl_int st, err;
		p = clCreateProgramWithBinary(dev->ctx, 1, &dev->id, &n, &b, &st, &err);
		if (p && (err != CL_SUCCESS || st != CL_SUCCESS ||
			  clBuildProgram(p, 1, &dev->id, "-cl-std=CL1.2", NULL, NULL) != CL_SUCCESS)) {
			clReleaseProgram(p);
			p = NULL;
		}
	}
	free(bin);
	return p;
}

void ocl_disk_store(struct ocl_device *dev, cl_program p, uint64_t src_hash, size_t len)
{
	size_t n = 0;
	if (clGetProgramInfo(p, CL_PROGRAM_BINARY_SIZES, sizeof n, &n, NULL) != CL_SUCCESS || !n)
		return;
	char *path = cache_path(dev, src_hash, len);
	if (!path)
		return;
	unsigned char *bin = xmalloc(n);
	size_t tn = strlen(path) + 32;
	char *tmp = xmalloc(tn);
	snprintf(tmp, tn, "%s.tmp%ld", path, (long)getpid());
	FILE *f = NULL;
	if (clGetProgramInfo(p, CL_PROGRAM_BINARIES, sizeof bin, &bin, NULL) == CL_SUCCESS &&
	    (f = fopen(tmp, "wb")) != NULL) {
		bool ok = fwrite(bin, 1, n, f) == n;
		ok = fclose(f) == 0 && ok;
		if (!ok || rename(tmp, path) != 0)
			remove(tmp);
	}
	free(tmp);
	free(bin);
	free(path);
}
