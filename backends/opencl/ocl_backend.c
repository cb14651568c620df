/* ocl_backend.c - the OpenCL backend behind struct backend
 * (backends/backend.h; docs/OpenCL.md).
 *
 * Graph side: the node kinds whose instructions the generator compiles, as
 * OclKernels.def's rows state them (ocl_node_elems), on float data
 * (elementwise kinds: on float, int32, int64 or bool operands, where the
 * EW.def column they select is one OpenCL C can state: ocl_gen_ew.c);
 * nothing is lowered by choice, so the lower stage lowers exactly what is
 * unsupported and check-supported reports the rest.
 *
 * Compile: places every buffer (the recorded memory plan's offsets, else an
 * own placement without sharing), generates the program (ocl_gen.c),
 * builds it once (ocl_runtime.c's cache), creates one kernel per launch
 * with its arguments set, and uploads the constant region R0 and the
 * repacked constants R3 once. Mutable weights (placeholders) live in host
 * memory: a program that went through the device-copies pass moves them
 * with explicit copies; any other program computes on them directly, and
 * run then uploads them all before the kernels and reads them back after.
 *
 * Run: kernels go to the compute queue in program order (arguments set at
 * compile time, no events unless profiled, a flush every few kernels, one
 * wait per run); a copytodevice
 * or copyfromdevice goes to the copy queue after a marker of the kernels
 * before it (the memory it touches may be reused), and a devicewait makes
 * the compute queue wait for that copy, so copies overlap whatever
 * computation does not need them. The host images of the placeholders are
 * pinned memory where the device gives it. $GLOW_OPENCL_KERNELS=gpu|cpu
 * picks the kernel set on any device (default: the device's kind).
 * $GLOW_OPENCL_PROFILE=N runs the program N times and reports, as a note,
 * the median wall and processor time, and from one more, profiled run the
 * time in kernels and in device copies and how much of the copy time
 * overlapped a kernel (profiling events).
 */
#define _POSIX_C_SOURCE 200809L
#include "backends/interpreter/interp.h"
#include "backends/opencl/ocl.h"
#include "backends/opencl/ocl_gen_red.h"
#include "graph/region.h"
#include "support/util.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum step_kind { ST_KERNEL, ST_TO_DEVICE, ST_FROM_DEVICE, ST_WAIT, ST_IF, ST_ELSE, ST_LOOP, ST_END };

struct step {
	uint8_t kind;
	cl_kernel k;            /* ST_KERNEL */
	const struct ocl_launch *l;
	uint64_t dev_off, host_off, bytes; /* copies: R2 offset, R1 (host image) offset */
	size_t copy;            /* ST_WAIT: the step of the copy it completes */
	const struct ir_instr *in;
	/* blocks (oclf): where control goes (ST_IF: past its else or end when
	 * the condition is false; ST_ELSE, ST_LOOP: past the end; ST_END: its
	 * loop's step, SIZE_MAX for an if's end), the places of the condition,
	 * trip count and iteration number, whether a loop's body writes its
	 * condition (read again before every iteration, else once), and a
	 * loop's state while it runs */
	size_t jump;
	struct ocl_place cond, trip, iter;
	bool cond_written;
	bool go;
	int64_t ntrip, count;
};

struct backend_compiled {
	struct ir_func *f;
	struct ocl_device *dev;
	struct ocl_gen g;
	cl_mem r[4];
	uint64_t size[4];
	uint8_t *mhost;         /* the mutable weights' host images (R1 layout) */
	cl_mem pinned;          /* the buffer mhost maps, NULL if mhost is malloc'd */
	size_t mhost_bytes;
	struct step *steps;
	size_t nsteps;
	struct backend_placeholders ph;
	size_t *open, nopen;    /* make_steps: the open blocks' steps (oclf) */
};

static void ocl_destroy(struct backend_compiled *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->nsteps; i++)
		if (c->steps[i].k)
			clReleaseKernel(c->steps[i].k);
	for (unsigned i = 0; i < 4; i++)
		if (c->r[i])
			clReleaseMemObject(c->r[i]);
	ostream_abort(&c->g.src);
	struct ir_func *f = c->f;
	ir_for_each_weight(f, w) free(ptrmap_get(&c->g.place, w));
	ir_for_each_instr(f, in) if (in->kind == IK_alloc) free(ptrmap_get(&c->g.place, in));
	u64map_free(&c->g.place);
	free(c->g.launch);
	free(c->g.pack);
	free(c->g.check);
	if (c->pinned) {
		clEnqueueUnmapMemObject(c->dev->compute, c->pinned, c->mhost, 0, NULL, NULL);
		clFinish(c->dev->compute);
		clReleaseMemObject(c->pinned);
	} else
		free(c->mhost);
	free(c->steps);
	free(c->open);
	free(c->g.scheck);
	backend_placeholders_free(&c->ph);
	free(c);
}

static void set_place(struct backend_compiled *c, struct ir_value *v, unsigned region, uint64_t off)
{
	struct ocl_place *p = xmalloc(sizeof *p);
	p->region = region;
	p->offset = off;
	ptrmap_put(&c->g.place, v, p);
}

/* The memory plan's offsets, or an own placement (64-byte aligned, no
 * sharing) without one. */
static void place(struct backend_compiled *c, const struct backend_options *o)
{
	struct ir_func *f = c->f;
	bool plan = f->plan.present && !(o && o->ignore_plan);
	uint64_t next[3] = {0, 0, 0};
	ir_for_each_weight(f, w) {
		unsigned r = w->is_const ? 0 : 1;
		uint64_t off = plan ? (uint64_t)w->offset : next[r];
		set_place(c, &w->v, r, off);
		uint64_t end = off + ocl_round_up((size_t)type_bytes(w->v.type), 64);
		if (end > next[r])
			next[r] = end;
	}
	ir_for_each_instr(f, in) {
		if (in->kind != IK_alloc)
			continue;
		uint64_t off = plan ? (uint64_t)in->offset : next[2];
		set_place(c, &in->v, 2, off);
		uint64_t end = off + ocl_round_up((size_t)type_bytes(in->v.type), 64);
		if (end > next[2])
			next[2] = end;
	}
	for (unsigned i = 0; i < 3; i++)
		c->size[i] = next[i];
	if (plan) {
		c->size[0] = c->size[0] > f->plan.constant_size ? c->size[0] : f->plan.constant_size;
		c->size[1] = c->size[1] > f->plan.mutable_size ? c->size[1] : f->plan.mutable_size;
		c->size[2] = c->size[2] > f->plan.activations_size ? c->size[2] : f->plan.activations_size;
	}
}

static cl_mem make_buffer(struct backend_compiled *c, uint64_t size, const char *what, struct diag *d)
{
	cl_int err;
	cl_mem m = clCreateBuffer(c->dev->ctx, CL_MEM_READ_WRITE, (size_t)(size ? size : 64), NULL, &err);
	if (!m)
		diag_error(d, LOC_NONE, "cannot allocate the %s region of @%s on '%s': %" PRIu64 " bytes (%s)", what,
			   c->f->name, c->dev->name, size, ocl_err_name(err));
	return m;
}

/* Repacks constant p->w (its host image src) into dst. */
static void repack(const struct ocl_pack *p, const float *src, float *dst)
{
	if (p->kind == OCL_PACK_FILTER) { /* OC x (KH KW) x ICG -> (KH KW) x ICG x OC */
		uint64_t oc = p->a, kk = p->b, icg = p->c;
		for (uint64_t o = 0; o < oc; o++)
			for (uint64_t k = 0; k < kk; k++)
				for (uint64_t i = 0; i < icg; i++)
					dst[(k * icg + i) * oc + o] = src[(o * kk + k) * icg + i];
	} else { /* N x K -> K x N */
		uint64_t n = p->a, kk = p->b;
		for (uint64_t j = 0; j < n; j++)
			for (uint64_t k = 0; k < kk; k++)
				dst[k * n + j] = src[j * kk + k];
	}
}

/* Uploads R0 (every constant weight) and R3 (the repacked ones). */
static int upload_constants(struct backend_compiled *c, struct diag *d)
{
	uint8_t *host = xcalloc(1, (size_t)c->size[0] + 64);
	uint8_t *packed = xcalloc(1, (size_t)c->g.r3_size + 64);
	int rc = 0;
	ir_for_each_weight(c->f, w) {
		if (!w->is_const)
			continue;
		const struct ocl_place *p = ptrmap_get(&c->g.place, w);
		if (interp_weight_init(c->f->mod, w, host + p->offset, d)) {
			rc = -1;
			break;
		}
	}
	for (size_t i = 0; i < c->g.npack && !rc; i++) {
		const struct ocl_pack *p = &c->g.pack[i];
		const struct ocl_place *wp = ptrmap_get(&c->g.place, p->w);
		repack(p, (const float *)(void *)(host + wp->offset), (float *)(void *)(packed + p->offset));
	}
	cl_int err = CL_SUCCESS;
	if (!rc && c->size[0])
		err = clEnqueueWriteBuffer(c->dev->compute, c->r[0], CL_TRUE, 0, (size_t)c->size[0], host, 0, NULL, NULL);
	if (!rc && err == CL_SUCCESS && c->g.r3_size)
		err = clEnqueueWriteBuffer(c->dev->compute, c->r[3], CL_TRUE, 0, (size_t)c->g.r3_size, packed, 0, NULL,
					   NULL);
	if (err != CL_SUCCESS) {
		diag_error(d, LOC_NONE, "cannot upload the constants of @%s: %s", c->f->name, ocl_err_name(err));
		rc = -1;
	}
	free(host);
	free(packed);
	return rc;
}

/* The placeholders' host images (R1's layout) and what each run starts
 * them from. Returns 0, or -1 after reporting. */
static int init_mutable(struct backend_compiled *c, struct diag *d)
{
	struct ir_func *f = c->f;
	/* the host images in pinned (page-locked) memory where the device
	 * gives it: a GPU then copies them by DMA straight from there, where a
	 * malloc'd image is first copied into a staging buffer by the driver */
	cl_int err;
	c->mhost_bytes = (size_t)c->size[1] + 64;
	c->pinned = clCreateBuffer(c->dev->ctx, CL_MEM_READ_WRITE | CL_MEM_ALLOC_HOST_PTR, c->mhost_bytes, NULL, &err);
	if (c->pinned)
		c->mhost = clEnqueueMapBuffer(c->dev->compute, c->pinned, CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, 0,
					      c->mhost_bytes, 0, NULL, NULL, &err);
	if (c->mhost)
		memset(c->mhost, 0, c->mhost_bytes);
	else {
		if (c->pinned)
			clReleaseMemObject(c->pinned);
		c->pinned = NULL;
		c->mhost = xcalloc(1, c->mhost_bytes);
	}
	return backend_placeholders_init(&c->ph, f, d);
}

/* Whether some instruction of the block that `open` opens (nested blocks
 * included) writes buffer `root`. */
static bool block_writes(const struct ir_instr *open, const struct ir_value *root)
{
	unsigned depth = 0;
	for (const struct ir_instr *p = open->next; p; p = p->next) {
		unsigned fl = instr_desc(p->kind)->flags;
		if (fl & IF_BLOCK_OPEN)
			depth++;
		else if ((fl & IF_BLOCK_END) && depth-- == 0)
			return false;
		const struct instr_desc *d = instr_desc(p->kind);
		for (unsigned i = 0; i < p->nops && i < d->nops; i++)
			if (d->op_quals[i] != IQ_IN && ir_value_root(p->ops[i].val, NULL) == root)
				return true;
	}
	return false;
}

/* The step of block bracket `in` (oclf): its jumps are found as the
 * brackets come, the verifier having checked their nesting; the buffers a
 * bracket reads or writes are placed, and a placeholder among them (a
 * program without device copies) makes the run upload the placeholders
 * and read them back. Returns 0, or -1 on a bracket without its opening
 * one (an unverified program). */
static int add_block_step(struct backend_compiled *c, const struct ir_instr *in)
{
	struct step *s = &c->steps[c->nsteps];
	size_t at = c->nsteps++;
	s->jump = SIZE_MAX;
	switch (in->kind) {
	case IK_if: s->kind = ST_IF; break;
	case IK_loop: s->kind = ST_LOOP; break;
	case IK_else: s->kind = ST_ELSE; break;
	default: s->kind = ST_END; break;
	}
	for (unsigned i = 0; i < in->nops; i++) {
		struct ocl_place p = ocl_operand_place(&c->g, in, i);
		if (p.region == 1)
			c->g.direct_mutable = true;
		if (i == 0)
			*(in->kind == IK_if ? &s->cond : &s->trip) = p;
		else if (i == 1)
			s->cond = p;
		else
			s->iter = p;
	}
	if (s->kind == ST_LOOP)
		s->cond_written = block_writes(in, ir_value_root(in->ops[1].val, NULL));
	if (s->kind == ST_IF || s->kind == ST_LOOP) {
		c->open[c->nopen++] = at;
		return 0;
	}
	if (!c->nopen)
		return -1;
	struct step *o = &c->steps[c->open[c->nopen - 1]];
	o->jump = at + 1; /* the if's false condition, the loop's end */
	if (s->kind == ST_ELSE) {
		c->open[c->nopen - 1] = at;
	} else {
		c->nopen--;
		s->jump = o->kind == ST_LOOP ? c->open[c->nopen] : SIZE_MAX;
	}
	return 0;
}

/* The steps in program order: a kernel per launch, the copies and waits. */
static int make_steps(struct backend_compiled *c, cl_program prog, struct diag *d)
{
	struct ocl_gen *g = &c->g;
	c->steps = xcalloc(g->nlaunch + c->f->ninstrs + 1, sizeof *c->steps);
	c->open = xcalloc(c->f->ninstrs + 1, sizeof *c->open);
	c->nopen = 0;
	size_t li = 0;
	ir_for_each_instr(c->f, in) {
		struct step *s = &c->steps[c->nsteps];
		s->in = in;
		if (li < g->nlaunch && g->launch[li].in == in) {
			/* one step per launch: some instructions have several
			 * kernels (ocl_gen_index.c's scatters and checks) */
			for (; li < g->nlaunch && g->launch[li].in == in; s = &c->steps[++c->nsteps]) {
				cl_int err;
				s->in = in;
				s->kind = ST_KERNEL;
				s->l = &g->launch[li++];
				s->k = clCreateKernel(prog, s->l->name, &err);
				if (!s->k) {
					diag_error(d, in->v.loc, "OpenCL kernel %s: %s", s->l->name, ocl_err_name(err));
					return -1;
				}
				for (unsigned a = 0; a < 4; a++)
					clSetKernelArg(s->k, a, sizeof(cl_mem), &c->r[a]);
			}
		} else if (in->kind == IK_copytodevice || in->kind == IK_copyfromdevice) {
			bool to = in->kind == IK_copytodevice;
			struct ocl_place dp = ocl_operand_place(g, in, to ? 0 : 1), hp = ocl_operand_place(g, in, to ? 1 : 0);
			s->kind = to ? ST_TO_DEVICE : ST_FROM_DEVICE;
			s->dev_off = dp.offset;
			s->host_off = hp.offset;
			s->bytes = type_bytes(in->ops[0].val->type);
			c->nsteps++;
		} else if (instr_is_block(in->kind)) {
			if (add_block_step(c, in)) {
				diag_error(d, in->v.loc, "%s without the bracket that opens its block",
					   instr_kind_name(in->kind));
				return -1;
			}
		} else if (in->kind == IK_devicewait) {
			s->kind = ST_WAIT;
			s->copy = SIZE_MAX;
			for (size_t j = c->nsteps; j-- > 0;) {
				const struct step *p = &c->steps[j];
				if ((p->kind == ST_TO_DEVICE && p->in->ops[0].val == in->ops[0].val) ||
				    (p->kind == ST_FROM_DEVICE && p->in->ops[1].val == in->ops[0].val)) {
					s->copy = j;
					break;
				}
			}
			if (s->copy == SIZE_MAX)
				unreachable("devicewait without a copy after verification");
			c->nsteps++;
		}
	}
	return 0;
}

static struct backend_compiled *ocl_compile(const struct backend *b, struct ir_func *f,
					    const struct backend_options *o, struct diag *d)
{
	(void)b;
	bool ok = true;
	ir_for_each_instr(f, in) {
		if (!ocl_gen_supports(in)) {
			diag_error(d, in->v.loc, "the OpenCL backend does not support %s on these operand types",
				   instr_kind_name(in->kind));
			ok = false;
		}
	}
	if (!ok)
		return NULL;
	struct ocl_device *dev = ocl_device_get(d);
	if (!dev)
		return NULL;
	/* which kernels: a GPU device's, else the CPU ones; $GLOW_OPENCL_KERNELS
	 * picks either on any device (so the GPU kernels are tested on PoCL) */
	bool gpu = dev->is_gpu;
	const char *ks = getenv("GLOW_OPENCL_KERNELS");
	if (ks && *ks && strcmp(ks, "auto") != 0) {
		if (strcmp(ks, "gpu") != 0 && strcmp(ks, "cpu") != 0) {
			diag_error(d, LOC_NONE, "GLOW_OPENCL_KERNELS=%s: expected gpu, cpu or auto", ks);
			return NULL;
		}
		gpu = strcmp(ks, "gpu") == 0;
	}
	struct backend_compiled *c = xcalloc(1, sizeof *c);
	c->f = f;
	c->dev = dev;
	c->g.f = f;
	c->g.gpu = gpu;
	u64map_init(&c->g.place);
	ostream_mem(&c->g.src);
	place(c, o);
	ocl_prog_generate(&c->g, d);
	const char *src = ostream_cstr(&c->g.src);
	if (getenv("GLOW_OPENCL_DUMP"))
		fputs(src, stderr);
	cl_program prog = ocl_program_get(dev, src, c->g.src.len, d);
	c->size[3] = c->g.r3_size;
	static const char *const what[4] = {"constant", "mutable", "activations", "repacked constant"};
	for (unsigned i = 0; i < 4 && prog; i++)
		if (!(c->r[i] = make_buffer(c, c->size[i], what[i], d)))
			prog = NULL;
	if (!prog || make_steps(c, prog, d) || upload_constants(c, d) || init_mutable(c, d)) {
		ocl_destroy(c);
		return NULL;
	}
	return c;
}

/* ---- run ---- */

static double clock_s(clockid_t id)
{
	struct timespec t;
	clock_gettime(id, &t);
	return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* What profiling measured in one run (nanoseconds). */
struct prof {
	double kernels, copies, overlap;
};

static void ev_times(cl_event e, cl_ulong *s, cl_ulong *t)
{
	*s = *t = 0;
	clGetEventProfilingInfo(e, CL_PROFILING_COMMAND_START, sizeof *s, s, NULL);
	clGetEventProfilingInfo(e, CL_PROFILING_COMMAND_END, sizeof *t, t, NULL);
}

/* Kernel time, copy time, and the part of the copy time during which a
 * kernel ran (kernels of the in-order compute queue do not overlap each
 * other). */
static void profile(cl_event *ev, const struct step *steps, size_t n, struct prof *p)
{
	memset(p, 0, sizeof *p);
	for (size_t i = 0; i < n; i++) {
		if (!ev[i] || steps[i].kind == ST_WAIT)
			continue;
		cl_ulong s, e;
		ev_times(ev[i], &s, &e);
		if (steps[i].kind == ST_KERNEL) {
			p->kernels += (double)(e - s);
			continue;
		}
		p->copies += (double)(e - s);
		for (size_t j = 0; j < n; j++) {
			if (!ev[j] || steps[j].kind != ST_KERNEL)
				continue;
			cl_ulong ks, ke;
			ev_times(ev[j], &ks, &ke);
			cl_ulong lo = ks > s ? ks : s, hi = ke < e ? ke : e;
			if (hi > lo)
				p->overlap += (double)(hi - lo);
		}
	}
}

/* A scalar of `bytes` bytes at place p, read when the kernels before it
 * are done (a blocking read on the in-order compute queue). */
static cl_int read_scalar(struct backend_compiled *c, struct ocl_place p, size_t bytes, void *out)
{
	return clEnqueueReadBuffer(c->dev->compute, c->r[p.region], CL_TRUE, (size_t)p.offset, bytes, out, 0, NULL, NULL);
}

/* Loop step l's iteration number written to the device before the body's
 * kernels: a fill of the value (OpenCL copies the pattern when the fill is
 * enqueued, so the host need not wait), a blocking write where the place
 * is not aligned to it. */
static cl_int write_iter(struct backend_compiled *c, const struct step *l)
{
	cl_long k = (cl_long)l->count;
	if (l->iter.offset % sizeof k == 0)
		return clEnqueueFillBuffer(c->dev->compute, c->r[l->iter.region], &k, sizeof k, (size_t)l->iter.offset,
					   sizeof k, 0, NULL, NULL);
	return clEnqueueWriteBuffer(c->dev->compute, c->r[l->iter.region], CL_TRUE, (size_t)l->iter.offset, sizeof k,
				    &k, 0, NULL, NULL);
}

/* Whether loop step l runs another iteration (its condition read again
 * when the body writes it); if so writes the iteration number. */
static cl_int loop_again(struct backend_compiled *c, struct step *l, bool first, bool *again)
{
	cl_int err = CL_SUCCESS;
	*again = false;
	if (l->count >= l->ntrip)
		return CL_SUCCESS;
	if (first || l->cond_written) {
		cl_uchar b = 0;
		err = read_scalar(c, l->cond, 1, &b);
		l->go = b != 0;
	}
	if (err == CL_SUCCESS && l->go) {
		*again = true;
		err = write_iter(c, l);
	}
	return err;
}

/* Enqueues the steps and waits once for both queues. Kernels get events
 * only when kernel_events (profiling); copies always (their waits need
 * them). The compute queue is flushed after the first kernels and then
 * every few, so that a driver that submits lazily starts the device while
 * the rest are being enqueued. Blocks (oclf) are driven here: an if reads
 * its condition and a loop its trip count from the device when they are
 * reached, a loop its condition before its first iteration and, where
 * the body writes it, before every other; a step run again (in a loop)
 * replaces its earlier event. */
static int enqueue_all(struct backend_compiled *c, cl_event *ev, bool kernel_events, struct diag *d)
{
	struct ocl_device *dev = c->dev;
	cl_int err = CL_SUCCESS;
	cl_event marker = NULL;
	bool kernels_since_marker = true;
	size_t nkernels = 0;
	for (size_t i = 0; i < c->nsteps && err == CL_SUCCESS;) {
		struct step *s = &c->steps[i];
		size_t next = i + 1;
		if (ev[i] && s->kind != ST_WAIT) {
			clReleaseEvent(ev[i]);
			ev[i] = NULL;
		}
		switch (s->kind) {
		case ST_KERNEL:
			err = clEnqueueNDRangeKernel(dev->compute, s->k, s->l->dims, NULL, s->l->global, s->l->local, 0,
						     NULL, kernel_events ? &ev[i] : NULL);
			kernels_since_marker = true;
			if (err == CL_SUCCESS && (++nkernels == 2 || nkernels % 16 == 0))
				err = clFlush(dev->compute);
			break;
		case ST_TO_DEVICE:
		case ST_FROM_DEVICE:
			if (kernels_since_marker) {
				if (marker)
					clReleaseEvent(marker);
				marker = NULL;
				err = clEnqueueMarkerWithWaitList(dev->compute, 0, NULL, &marker);
				kernels_since_marker = false;
				if (err != CL_SUCCESS)
					break;
			}
			if (s->kind == ST_TO_DEVICE)
				err = clEnqueueWriteBuffer(dev->copy, c->r[2], CL_FALSE, (size_t)s->dev_off, (size_t)s->bytes,
							   c->mhost + s->host_off, 1, &marker, &ev[i]);
			else
				err = clEnqueueReadBuffer(dev->copy, c->r[2], CL_FALSE, (size_t)s->dev_off, (size_t)s->bytes,
							  c->mhost + s->host_off, 1, &marker, &ev[i]);
			clFlush(dev->copy);
			break;
		case ST_WAIT:
			err = clEnqueueBarrierWithWaitList(dev->compute, 1, &ev[s->copy], NULL);
			if (err == CL_SUCCESS)
				err = clFlush(dev->compute);
			break;
		case ST_IF: {
			cl_uchar b = 0;
			err = read_scalar(c, s->cond, 1, &b);
			if (!b)
				next = s->jump;
			break;
		}
		case ST_ELSE: next = s->jump; break; /* the first block ran */
		case ST_LOOP: {
			cl_long t = 0;
			bool again = false;
			err = read_scalar(c, s->trip, sizeof t, &t);
			s->ntrip = (int64_t)t;
			s->count = 0;
			if (err == CL_SUCCESS)
				err = loop_again(c, s, true, &again);
			if (!again)
				next = s->jump;
			break;
		}
		case ST_END:
			if (s->jump != SIZE_MAX) { /* a loop's: its next iteration, or on */
				struct step *l = &c->steps[s->jump];
				bool again = false;
				l->count++;
				err = loop_again(c, l, false, &again);
				if (again)
					next = s->jump + 1;
			}
			break;
		default: break;
		}
		if (err != CL_SUCCESS)
			diag_error(d, s->in->v.loc, "OpenCL: cannot enqueue %s: %s", instr_kind_name(s->in->kind),
				   ocl_err_name(err));
		i = next;
	}
	if (err == CL_SUCCESS)
		err = clFinish(dev->compute);
	if (err == CL_SUCCESS)
		err = clFinish(dev->copy);
	else
		clFinish(dev->copy);
	if (marker)
		clReleaseEvent(marker);
	if (err != CL_SUCCESS) {
		diag_error(d, LOC_NONE, "OpenCL: running @%s failed on '%s': %s", c->f->name, dev->name,
			   ocl_err_name(err));
		return -1;
	}
	return 0;
}

/* A program that computes on placeholders directly (no device copies):
 * all of them uploaded into R1 before the kernels (up) or read back after
 * them. Returns 0, or -1 after reporting. */
static int sync_mutable(struct backend_compiled *c, bool up, struct diag *d)
{
	if (!c->g.direct_mutable || !c->size[1])
		return 0;
	cl_command_queue q = c->dev->compute;
	cl_int err = up ? clEnqueueWriteBuffer(q, c->r[1], CL_TRUE, 0, (size_t)c->size[1], c->mhost, 0, NULL, NULL)
			: clEnqueueReadBuffer(q, c->r[1], CL_TRUE, 0, (size_t)c->size[1], c->mhost, 0, NULL, NULL);
	if (err != CL_SUCCESS) {
		diag_error(d, LOC_NONE, "OpenCL: cannot %s the placeholders of @%s: %s", up ? "upload" : "read back",
			   c->f->name, ocl_err_name(err));
		return -1;
	}
	return 0;
}

/* One run: the placeholders into their host images, the steps, the
 * results back into the bindings. ev (one per step) keeps the events for
 * the caller to read and release; kernel_events asks for the kernels'. */
static int run_once(struct backend_compiled *c, const struct backend_binding *binds, size_t nbinds, cl_event *ev,
		    bool kernel_events, struct diag *d)
{
	for (size_t i = 0; i < c->ph.n; i++) {
		const struct ocl_place *pl = ptrmap_get(&c->g.place, c->ph.w[i]);
		if (backend_placeholder_fill(&c->ph, i, c->f, binds, nbinds, c->mhost + pl->offset, d))
			return -1;
	}
	if (sync_mutable(c, true, d) || enqueue_all(c, ev, kernel_events, d) || sync_mutable(c, false, d) ||
	    ocl_checks_read(&c->g, c->dev->compute, c->r[3], d) ||
	    ocl_flow_checks_read(&c->g, c->dev->compute, c->r[3], d))
		return -1;
	for (size_t j = 0; j < nbinds; j++)
		if (!binds[j].w->is_const) {
			const struct ocl_place *pl = ptrmap_get(&c->g.place, binds[j].w);
			memcpy(binds[j].data, c->mhost + pl->offset, (size_t)type_bytes(binds[j].w->v.type));
		}
	return 0;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* One run_once, timed (wall and processor seconds into *wall, *cpu), and
 * when p is given the profile of its events, read after the clock stopped. */
static int timed_run(struct backend_compiled *c, const struct backend_binding *binds, size_t nbinds, double *wall,
		     double *cpu, struct prof *p, struct diag *d)
{
	cl_event *ev = xcalloc(c->nsteps + 1, sizeof *ev);
	double t0 = clock_s(CLOCK_MONOTONIC), c0 = clock_s(CLOCK_PROCESS_CPUTIME_ID);
	int rc = run_once(c, binds, nbinds, ev, p != NULL, d);
	*wall = clock_s(CLOCK_MONOTONIC) - t0;
	*cpu = clock_s(CLOCK_PROCESS_CPUTIME_ID) - c0;
	if (!rc && p)
		profile(ev, c->steps, c->nsteps, p);
	for (size_t i = 0; i < c->nsteps; i++)
		if (ev[i])
			clReleaseEvent(ev[i]);
	free(ev);
	return rc;
}

/* Runs the program; with $GLOW_OPENCL_PROFILE=N (N > 1) N times, the first
 * paying for the driver's lazy work, the wall-time median of the other
 * N - 1, which run as they do unprofiled (no kernel events), and then once
 * more with an event per kernel for the time in kernels and in copies. */
static int ocl_run(struct backend_compiled *c, const struct backend_binding *binds, size_t nbinds, struct diag *d)
{
	const char *pe = getenv("GLOW_OPENCL_PROFILE");
	long runs = pe ? strtol(pe, NULL, 10) : 1;
	bool prof = c->dev->profiling;
	if (!prof || runs < 1)
		runs = 1;
	if (runs > 10000)
		runs = 10000;
	double *wall = xcalloc((size_t)runs, sizeof *wall), *cpu = xcalloc((size_t)runs, sizeof *cpu);
	struct prof p = {0, 0, 0};
	int rc = 0;
	for (long r = 0; r < runs && !rc; r++)
		rc = timed_run(c, binds, nbinds, &wall[r], &cpu[r], prof && runs == 1 ? &p : NULL, d);
	if (!rc && prof && runs > 1) {
		double w, t;
		rc = timed_run(c, binds, nbinds, &w, &t, &p, d);
	}
	if (!rc && prof) {
		long n = runs > 1 ? runs - 1 : 1;
		qsort(wall + (runs > 1), (size_t)n, sizeof *wall, cmp_double);
		qsort(cpu + (runs > 1), (size_t)n, sizeof *cpu, cmp_double);
		double med = wall[(runs > 1) + n / 2], cmed = cpu[(runs > 1) + n / 2];
		diag_note(d, LOC_NONE,
			  "opencl: @%s on '%s' (%u compute units at %u MHz): %ld run%s, first %.3f ms, median %.3f ms "
			  "(processor time %.3f ms); per run: kernels %.3f ms, device copies %.3f ms, copy time "
			  "overlapped by kernels %.3f ms (%.0f%%)",
			  c->f->name, c->dev->name, c->dev->compute_units, c->dev->clock_mhz, runs, runs == 1 ? "" : "s",
			  wall[0] * 1e3, med * 1e3, cmed * 1e3, p.kernels * 1e-6, p.copies * 1e-6, p.overlap * 1e-6,
			  p.copies > 0 ? 100.0 * p.overlap / p.copies : 0.0);
	}
	free(wall);
	free(cpu);
	return rc;
}

/* ---- the graph side ---- */

/* The node kinds of OclKernels.def's rows (ocl_node_elems) on the element
 * kinds their Elems column admits. */
static bool ocl_is_op_supported(const struct backend *b, unsigned kind, const enum elem_kind *elems,
				unsigned nelems)
{
	(void)b;
	enum ocl_elems el = ocl_node_elems(kind);
	if (el == OCL_EL_NONE)
		return false;
	if (el == OCL_EL_ANY)
		return true; /* data movement: elements of any kind, moved bit for bit */
	if (el == OCL_EL_EW)
		return ocl_ew_elems_ok(ocl_node_ew_kind(kind), elems, nelems);
	if (el == OCL_EL_REDUCE || el == OCL_EL_ARG)
		return ocl_red_elems_ok(el, elems, nelems); /* ocl2: reductions */
	if (el == OCL_EL_TOPK)
		return ocl_topk_elems_ok(elems, nelems); /* oclk: topk */

	if (el == OCL_EL_FLOAT_QLINEAR && nelems && elem_is_quantized(elems[0]))
		return ocl_qlinear_elems_ok(elems, nelems); /* ocl_gen_quant.c */
	if (el == OCL_EL_CONVERT) /* oclt: convertto, quantize, dequantize */
		return nelems == 2 && ocl_convert_elems_ok(elems[0], elems[1]);
	if (el == OCL_EL_NUMERIC) {
		for (unsigned i = 0; i < nelems; i++)
			if (!ocl_numeric_elem(elems[i]))
				return false;
		return true;
	}
	for (unsigned i = 0; i < nelems; i++) {
		if (elems[i] == EK_FLOAT)
			continue;
		if (el == OCL_EL_FLOAT_ARGMAX && i == 1 &&
		    (elems[i] == EK_INDEX64 || elems[i] == EK_INDEX32 || elems[i] == EK_I64 || elems[i] == EK_I32))
			continue; /* the argmax result (oclk: maxpoolwithargmax where it is used) */
		return false;
	}
	return true;
}

/* After lowering: Relu(Convolution(x, w, b)) on float, the convolution used
 * by the relu only, becomes one OpenCL.ConvBiasRelu node (Nodes.def), which
 * the generator compiles into one kernel that rectifies as it stores.
 * Returns whether f changed. */
static int ocl_post_lowering(const struct backend *b, struct func *f, struct diag *d)
{
	(void)b;
	(void)d;
	int changed = 0;
	func_for_each_safe(f, n, tmp) {
		if (n->kind != NK_Relu || n->types[0]->elem != EK_FLOAT)
			continue;
		struct node *conv = op_val(n, 0).node;
		if (!conv || conv->kind != NK_Convolution || node_num_uses(conv, 0) != 1)
			continue;
		struct value ops[3];
		for (unsigned i = 0; i < 3; i++)
			ops[i] = op_val(conv, i);
		struct node *fused = node_create1(f, NK_OpenCL_ConvBiasRelu, NULL, ops, 3, n->types[0], n, conv->loc);
		const struct node_desc *cd = node_desc(NK_Convolution);
		for (unsigned i = 0; i < cd->nattrs; i++)
			fused->attrs[i] = conv->attrs[i]; /* the same attributes in the same order */
		if (tmp == conv)
			tmp = conv->next;
		node_replace(f, n, fused);
		node_erase(f, conv);
		changed = 1;
	}
	return changed;
}

/* A node the backend executes: its kind on its element kinds
 * (is_op_supported), and for an If or a Loop (oclf: kept as blocks) every
 * node of its regions, nested ones included, so that the pipeline
 * unrolls or selects what it can of a block the backend could not compile
 * and check-supported reports the rest. */
static bool ocl_node_supported(const struct backend *b, const struct node *n)
{
	if (!backend_node_supported_with_blocks(b, n))
		return false;
	for (unsigned r = 0; r < node_desc(n->kind)->nregions; r++) {
		struct func *body = node_region(n, r);
		func_for_each(body, m) if (!ocl_node_supported(b, m)) return false;
	}
	return true;
}

/* Nothing is lowered by choice (backend_lower_nothing): the lower stage
 * lowers what is not supported. */
const struct backend ocl_backend = {
	"opencl",	   ocl_is_op_supported, ocl_node_supported, backend_lower_nothing,
	ocl_post_lowering, ocl_compile,		ocl_run,			ocl_destroy,
	{"ocl-O0", "ocl-O1", "ocl-O2", "ocl-O3"},
};
