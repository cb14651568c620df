/* ocl_runtime.c - the OpenCL device of the process and its programs.
 *
 * The device is opened once, on first use, through the ICD loader
 * (libOpenCL): the first GPU of any platform, else the first device of any
 * kind, or the N-th device of all platforms with $GLOW_OPENCL_DEVICE=N.
 * It gets two in-order queues, one for kernels and one for the device
 * copies, so copies run beside kernels (the IR's devicewait joins them).
 * $GLOW_OPENCL_PROFILE makes both queues record profiling times.
 *
 * Programs are built once per distinct source: the cache maps the source's
 * 64-bit FNV-1a hash (and the text, compared whole) to the built program,
 * so compiling the same function twice in a process builds once; between
 * processes the device's binaries are kept on disk (ocl_diskcache.c).
 */
#define _POSIX_C_SOURCE 200809L
#include "backends/opencl/ocl.h"
#include "support/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *ocl_err_name(cl_int e)
{
	switch (e) {
#define E(x) \
	case x: return #x;
		E(CL_DEVICE_NOT_FOUND)
		E(CL_DEVICE_NOT_AVAILABLE)
		E(CL_COMPILER_NOT_AVAILABLE)
		E(CL_MEM_OBJECT_ALLOCATION_FAILURE)
		E(CL_OUT_OF_RESOURCES)
		E(CL_OUT_OF_HOST_MEMORY)
		E(CL_BUILD_PROGRAM_FAILURE)
		E(CL_INVALID_VALUE)
		E(CL_INVALID_PLATFORM)
		E(CL_INVALID_DEVICE)
		E(CL_INVALID_CONTEXT)
		E(CL_INVALID_COMMAND_QUEUE)
		E(CL_INVALID_MEM_OBJECT)
		E(CL_INVALID_PROGRAM)
		E(CL_INVALID_PROGRAM_EXECUTABLE)
		E(CL_INVALID_KERNEL_NAME)
		E(CL_INVALID_KERNEL)
		E(CL_INVALID_ARG_INDEX)
		E(CL_INVALID_ARG_VALUE)
		E(CL_INVALID_KERNEL_ARGS)
		E(CL_INVALID_WORK_DIMENSION)
		E(CL_INVALID_WORK_GROUP_SIZE)
		E(CL_INVALID_WORK_ITEM_SIZE)
		E(CL_INVALID_GLOBAL_OFFSET)
		E(CL_INVALID_EVENT_WAIT_LIST)
		E(CL_INVALID_BUFFER_SIZE)
#undef E
	default: return "CL error";
	}
}

static struct ocl_device the_device;
static int device_state; /* 0 not tried, 1 open, -1 none */

/* Every device of every platform, in platform order; returns the count. */
static cl_uint all_devices(cl_device_id *out, cl_platform_id *plat, cl_uint cap)
{
	cl_platform_id ps[16];
	cl_uint np = 0, n = 0;
	if (clGetPlatformIDs(16, ps, &np) != CL_SUCCESS)
		return 0;
	for (cl_uint p = 0; p < np && p < 16; p++) {
		cl_uint nd = 0;
		if (clGetDeviceIDs(ps[p], CL_DEVICE_TYPE_ALL, cap - n, out + n, &nd) != CL_SUCCESS)
			continue;
		for (cl_uint i = 0; i < nd && n + i < cap; i++)
			plat[n + i] = ps[p];
		n += nd < cap - n ? nd : cap - n;
	}
	return n;
}

struct ocl_device *ocl_device_get(struct diag *d)
{
	if (device_state == 1)
		return &the_device;
	if (device_state == -1) {
		diag_error(d, LOC_NONE, "no OpenCL device");
		return NULL;
	}
	cl_device_id ids[64];
	cl_platform_id plats[64];
	cl_uint n = all_devices(ids, plats, 64);
	int pick = -1;
	const char *want = getenv("GLOW_OPENCL_DEVICE");
	if (want && *want) {
		char *end;
		long w = strtol(want, &end, 10);
		if (*end || w < 0 || w >= (long)n) {
			diag_error(d, LOC_NONE, "GLOW_OPENCL_DEVICE=%s: there are %u OpenCL devices", want, n);
			return NULL;
		}
		pick = (int)w;
	}
	for (cl_uint i = 0; i < n && pick < 0; i++) {
		cl_device_type t = 0;
		clGetDeviceInfo(ids[i], CL_DEVICE_TYPE, sizeof t, &t, NULL);
		if (t & CL_DEVICE_TYPE_GPU)
			pick = (int)i;
	}
	if (pick < 0 && n > 0)
		pick = 0;
	if (pick < 0) {
		device_state = -1;
		diag_error(d, LOC_NONE,
			   "no OpenCL device (no platform of the ICD loader has one; see OCL_ICD_VENDORS and "
			   "/etc/OpenCL/vendors)");
		return NULL;
	}
	struct ocl_device *dev = &the_device;
	dev->id = ids[pick];
	dev->platform = plats[pick];
	cl_device_type t = 0;
	clGetDeviceInfo(dev->id, CL_DEVICE_TYPE, sizeof t, &t, NULL);
	dev->is_gpu = (t & CL_DEVICE_TYPE_GPU) != 0;
	clGetDeviceInfo(dev->id, CL_DEVICE_NAME, sizeof dev->name - 1, dev->name, NULL);
	clGetDeviceInfo(dev->id, CL_DEVICE_MAX_COMPUTE_UNITS, sizeof dev->compute_units, &dev->compute_units, NULL);
	clGetDeviceInfo(dev->id, CL_DEVICE_MAX_CLOCK_FREQUENCY, sizeof dev->clock_mhz, &dev->clock_mhz, NULL);
	cl_int err;
	dev->ctx = clCreateContext(NULL, 1, &dev->id, NULL, NULL, &err);
	if (!dev->ctx) {
		diag_error(d, LOC_NONE, "cannot create an OpenCL context on '%s': %s", dev->name, ocl_err_name(err));
		device_state = -1;
		return NULL;
	}
	dev->profiling = getenv("GLOW_OPENCL_PROFILE") != NULL;
	cl_command_queue_properties qp = dev->profiling ? CL_QUEUE_PROFILING_ENABLE : 0;
	dev->compute = clCreateCommandQueue(dev->ctx, dev->id, qp, &err);
	dev->copy = dev->compute ? clCreateCommandQueue(dev->ctx, dev->id, qp, &err) : NULL;
	if (!dev->copy) {
		diag_error(d, LOC_NONE, "cannot create OpenCL queues on '%s': %s", dev->name, ocl_err_name(err));
		device_state = -1;
		return NULL;
	}
	device_state = 1;
	return dev;
}

/* ---- the program cache ---- */

struct cached_program {
	uint64_t hash;
	char *src;
	size_t len;
	cl_program prog;
};
static struct cached_program *cache;
static size_t ncache;

static uint64_t fnv1a(const char *s, size_t n)
{
	uint64_t h = 14695981039346656037ull;
	for (size_t i = 0; i < n; i++)
		h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
	return h;
}

void ocl_program_cache_clear(void)
{
	for (size_t i = 0; i < ncache; i++) {
		clReleaseProgram(cache[i].prog);
		free(cache[i].src);
	}
	free(cache);
	cache = NULL;
	ncache = 0;
}

cl_program ocl_program_get(struct ocl_device *dev, const char *src, size_t len, struct diag *d)
{
	uint64_t h = fnv1a(src, len);
	for (size_t i = 0; i < ncache; i++)
		if (cache[i].hash == h && cache[i].len == len && memcmp(cache[i].src, src, len) == 0)
			return cache[i].prog;
	cl_int err = CL_SUCCESS;
	cl_program p = ocl_disk_load(dev, h, len);
	bool from_disk = p != NULL;
	if (!p && !(p = clCreateProgramWithSource(dev->ctx, 1, &src, &len, &err))) {
		diag_error(d, LOC_NONE, "cannot create an OpenCL program: %s", ocl_err_name(err));
		return NULL;
	}
	if (!from_disk)
		err = clBuildProgram(p, 1, &dev->id, "-cl-std=CL1.2", NULL, NULL);
	if (err != CL_SUCCESS) {
		size_t n = 0;
		clGetProgramBuildInfo(p, dev->id, CL_PROGRAM_BUILD_LOG, 0, NULL, &n);
		char *log = xmalloc(n + 1);
		log[0] = 0;
		clGetProgramBuildInfo(p, dev->id, CL_PROGRAM_BUILD_LOG, n, log, NULL);
		log[n] = 0;
		diag_error(d, LOC_NONE, "the OpenCL compiler of '%s' rejected the generated program (%s):\n%.4000s",
			   dev->name, ocl_err_name(err), log);
		free(log);
		clReleaseProgram(p);
		return NULL;
	}
	if (!from_disk)
		ocl_disk_store(dev, p, h, len);
	cache = xrealloc(cache, (ncache + 1) * sizeof *cache);
	cache[ncache].hash = h;
	cache[ncache].src = xmalloc(len + 1);
	memcpy(cache[ncache].src, src, len);
	cache[ncache].len = len;
	cache[ncache].prog = p;
	ncache++;
	return p;
}
