/* cb_thread.h - the thread pool of a C bundle (and of the interpreter,
 * backends/interpreter/ipool.c, which includes this file).
 *
 * One pool per bundle (static, like every kernel): the calling thread plus
 * n - 1 persistent POSIX worker threads. A kernel splits one operator into
 * parts that write disjoint outputs and calls cb_par; each part is run by
 * some thread with that thread's scratch (the caller's own scratch, or a
 * worker's, CB_SCRATCH_BYTES each, allocated when the pool starts). No part
 * ever combines another part's sums, and the arithmetic of an output
 * element does not depend on which part computes it, so results are
 * bitwise identical for every thread count.
 *
 * Each thread has its own run of parts, the same from one job to the next
 * (thread k of n: parts from nparts * k / n up to nparts * (k + 1) / n,
 * rounded up, so the caller always has one of its own): split
 * alike, consecutive operators then give a thread the pixels it wrote
 * itself, still in its cache (the other core's cache may be on another
 * chiplet; a shared counter handed part 0 to whichever thread came first).
 * A thread that has run its own parts takes those not yet taken from the
 * others' runs (each run's parts are taken from its own counter, whoever
 * is free takes the next),
 * so a thread the system preempts does not hold the others back: the
 * caller waits only for parts that were taken and are still running,
 * never for a worker that has not woken up yet (on a machine with more
 * runnable threads than cores the caller then runs every part itself).
 * Workers spin for CB_SPIN_US microseconds after a job, then sleep on a
 * condition variable; the caller likewise waits CB_WAIT_US for the last
 * part before it sleeps.
 *
 * A job is posted in two steps of the generation counter gen: odd while
 * the caller writes the job (after every worker still inside the previous
 * one has left: `active`), even when it is ready. A worker enters a job by
 * counting itself in `active` and then reading gen again: unchanged and
 * even, the job it read is the one it runs (sequentially consistent
 * atomics: either the worker sees the odd gen or the caller sees the
 * worker in `active`).
 *
 * The pool serves one run at a time: a run that finds it busy (another
 * thread running the bundle concurrently) runs its parts itself, so
 * concurrent runs stay correct, each single-threaded.
 *
 * CB_SINGLE_THREAD (set by the generated file from -D<NAME>_SINGLE_THREAD,
 * and automatically for compilers without C11 atomics or targets that are
 * neither Unix nor Apple): no threads library, cb_par runs every part on
 * the caller.
 */
#ifndef CB_THREAD_H
#define CB_THREAD_H

#include "cb_base.h"

#if !defined(CB_SINGLE_THREAD) && (defined(__STDC_NO_ATOMICS__) || !(defined(__unix__) || defined(__APPLE__)))
#define CB_SINGLE_THREAD 1
#endif

/* the bytes of kernel scratch each worker gets (the generated file defines
 * the bundle's largest need before the kernels) */
#ifndef CB_SCRATCH_BYTES
#define CB_SCRATCH_BYTES 0
#endif

/* A job's part: ctx is the job, part its index, scratch the running
 * thread's scratch. */
typedef void (*cb_job_fn)(const void *ctx, int part, float *scratch);

/* The least work (multiply-adds or values moved) worth a part of its own:
 * waking a worker costs a few microseconds, about this much work. Smaller
 * operators stay on the calling thread. */
#define CB_PAR_MIN_WORK 32768.0

/* at most this many threads (a larger request is clamped) */
#define CB_MAX_THREADS 256

#ifndef CB_SINGLE_THREAD
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <sched.h>
#include <time.h>
#include <unistd.h>

/* How long a waiting thread spins before it sleeps, in microseconds
 * (timed with the monotonic clock, not counted in pause instructions,
 * whose cost differs tenfold between processors): a worker after a job
 * (the gap between two split operators of a network: an operator left on
 * one thread runs in between) and the caller waiting for the last parts.
 * Waking a sleeping thread costs a system call on one side and the wake-up
 * latency on the other (tens of microseconds in a virtual machine), paid
 * twice per operator when the threads sleep between operators. */
#ifndef CB_SPIN_US
#define CB_SPIN_US 1000
#endif
#ifndef CB_WAIT_US
#define CB_WAIT_US 2000
#endif
/* pause instructions between two looks at the clock */
#define CB_SPIN 4000
#define CB_SPIN_STEP 64

struct cb_pool {
	int n; /* threads, the caller included */
	pthread_t th[CB_MAX_THREADS];
	void *mem[CB_MAX_THREADS];      /* each worker's scratch allocation */
	float *scratch[CB_MAX_THREADS]; /* ... aligned to 64 bytes */
	pthread_mutex_t mu;
	pthread_cond_t wake, done;
	/* the current job, written while gen is odd */
	cb_job_fn fn;
	const void *ctx;
	int nparts;
	/* the next part to take of each thread's run (one cache line each) */
	struct {
		atomic_int next;
		char pad[64 - sizeof(atomic_int)];
	} run[CB_MAX_THREADS];
	atomic_int finished; /* parts done */
	atomic_int active;   /* workers inside the current job */
	atomic_int waiting;  /* the caller sleeps on done */
	atomic_int busy;     /* a run owns the pool */
	atomic_int stop;     /* workers leave */
	atomic_int started;  /* the thread count was set (or defaulted) */
	atomic_uint gen;     /* job generation: odd while a job is written */
	unsigned gen0;       /* gen when the workers were started */
};

static struct cb_pool cb_pool_g = {.n = 1, .mu = PTHREAD_MUTEX_INITIALIZER,
				   .wake = PTHREAD_COND_INITIALIZER, .done = PTHREAD_COND_INITIALIZER};

CB_INLINE void cb_relax(void)
{
#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
	__builtin_ia32_pause();
#elif defined(__GNUC__) && defined(__aarch64__)
	__asm__ __volatile__("yield");
#endif
}

/* The first part of thread r's run of nparts among n threads (rounded up,
 * so that with fewer parts than threads the caller, thread 0, has one). */
CB_INLINE int cb_run_first(int nparts, int r, int n) { return (int)(((long)nparts * r + n - 1) / n); }

/* Runs parts of the current job until none is left: thread id's own run
 * first, then what is left of the others'; the thread that finishes the
 * last part wakes a sleeping caller. */
static void cb_pool_work(struct cb_pool *p, float *scratch, int id)
{
	const int n = p->n, nparts = p->nparts;
	for (int k = 0; k < n; k++) {
		const int r = (id + k) % n, end = cb_run_first(nparts, r + 1, n);
		for (int i; atomic_load(&p->run[r].next) < end && (i = atomic_fetch_add(&p->run[r].next, 1)) < end;) {
			p->fn(p->ctx, i, scratch);
			if (atomic_fetch_add(&p->finished, 1) + 1 == nparts && atomic_load(&p->waiting)) {
				pthread_mutex_lock(&p->mu);
				pthread_cond_signal(&p->done);
				pthread_mutex_unlock(&p->mu);
			}
		}
	}
}

/* A new, ready job (gen even and not seen) or stop. */
CB_INLINE int cb_pool_posted(struct cb_pool *p, unsigned seen, unsigned *g)
{
	*g = atomic_load(&p->gen);
	return (*g != seen && !(*g & 1u)) || atomic_load(&p->stop);
}

/* The time in microseconds (C11's timespec_get: the kernels compile as
 * plain C11, without POSIX's monotonic clock; cb_spin_until ends a spin
 * when the clock steps back). */
static double cb_now_us(void)
{
	struct timespec ts;
	if (timespec_get(&ts, TIME_UTC) != TIME_UTC)
		return 0.0;
	return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec * 1e-3;
}

/* Spins until done(p, arg) or us microseconds have passed; returns done. */
static int cb_spin_until(int (*done)(struct cb_pool *, void *), struct cb_pool *p, void *arg, double us)
{
	double end = 0.0;
	for (int s = 0;; s++) {
		if (done(p, arg))
			return 1;
		if (s % CB_SPIN_STEP == 0) {
			double t = cb_now_us();
			if (s == 0)
				end = t + us;
			else if (t >= end || t < end - us) /* past the end, or stepped back */
				return done(p, arg);
		}
		cb_relax();
	}
}

struct cb_seen {
	unsigned seen, g;
};

static int cb_spin_posted(struct cb_pool *p, void *arg)
{
	struct cb_seen *w = arg;
	return cb_pool_posted(p, w->seen, &w->g);
}

static int cb_spin_finished(struct cb_pool *p, void *arg)
{
	return atomic_load(&p->finished) >= *(const int *)arg;
}

static void *cb_pool_worker(void *arg)
{
	struct cb_pool *p = &cb_pool_g;
	const int id = (int)(intptr_t)arg;
	/* not the current gen: a job may already have been posted before this
	 * thread first runs */
	unsigned seen = p->gen0;
	for (;;) {
		struct cb_seen w = {seen, 0};
		unsigned g;
		if (cb_spin_until(cb_spin_posted, p, &w, CB_SPIN_US)) {
			g = w.g;
		} else {
			pthread_mutex_lock(&p->mu);
			while (!cb_pool_posted(p, seen, &g))
				pthread_cond_wait(&p->wake, &p->mu);
			pthread_mutex_unlock(&p->mu);
		}
		if (atomic_load(&p->stop))
			return NULL;
		atomic_fetch_add(&p->active, 1);
		if (atomic_load(&p->gen) == g) /* still the job of gen g */
			cb_pool_work(p, p->scratch[id], id);
		atomic_fetch_sub(&p->active, 1);
		seen = g;
	}
}

/* The cores this process may run on (sched_getaffinity where there is
 * one, as onnxruntime counts them), at least 1. */
static int cb_cores(void)
{
#if defined(__linux__) && defined(CPU_COUNT)
	cpu_set_t set;
	if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0)
		return CPU_COUNT(&set);
#endif
#if defined(_SC_NPROCESSORS_ONLN)
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	if (n > 0)
		return n > CB_MAX_THREADS ? CB_MAX_THREADS : (int)n;
#endif
	return 1;
}

/* Stops and joins the workers, frees their scratch. */
static void cb_pool_stop(struct cb_pool *p)
{
	pthread_mutex_lock(&p->mu);
	atomic_store(&p->stop, 1);
	atomic_fetch_add(&p->gen, 2);
	pthread_cond_broadcast(&p->wake);
	pthread_mutex_unlock(&p->mu);
	for (int i = 1; i < p->n; i++) {
		pthread_join(p->th[i], NULL);
		free(p->mem[i]);
	}
	p->n = 1;
	atomic_store(&p->stop, 0);
}

/* Sets the thread count to n (<= 0: cb_cores()), restarting the workers.
 * Returns the count in effect: fewer when a thread or its scratch cannot
 * be had. Not while a job runs. */
CB_KERNEL int cb_pool_set(int n)
{
	struct cb_pool *p = &cb_pool_g;
	if (n <= 0)
		n = cb_cores();
	if (n > CB_MAX_THREADS)
		n = CB_MAX_THREADS;
	cb_pool_stop(p);
	p->gen0 = atomic_load(&p->gen);
	for (int i = 1; i < n; i++) {
		p->mem[i] = NULL;
		p->scratch[i] = NULL;
		if (CB_SCRATCH_BYTES) {
			if (!(p->mem[i] = malloc((size_t)CB_SCRATCH_BYTES + 64)))
				break;
			p->scratch[i] = (float *)(void *)((char *)p->mem[i] + (64 - (uintptr_t)p->mem[i] % 64) % 64);
		}
		if (pthread_create(&p->th[i], NULL, cb_pool_worker, (void *)(intptr_t)i) != 0) {
			free(p->mem[i]);
			break;
		}
		p->n = i + 1;
	}
	atomic_store(&p->started, 1);
	return p->n;
}

static void cb_pool_default(void) { cb_pool_set(0); }

/* The thread count; the first use without a cb_pool_set starts the
 * default (every core of the process). */
CB_KERNEL int cb_pool_threads(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;
	if (!atomic_load(&cb_pool_g.started))
		pthread_once(&once, cb_pool_default);
	return cb_pool_g.n;
}

/* Runs parts 0 .. nparts-1 of fn(ctx, part, scratch) on the pool (the
 * caller takes parts too, with its own scratch) and returns when all are
 * done. */
CB_KERNEL void cb_par(cb_job_fn fn, const void *ctx, int nparts, float *scratch)
{
	struct cb_pool *p = &cb_pool_g;
	if (nparts <= 1 || cb_pool_threads() <= 1 || atomic_exchange(&p->busy, 1)) {
		for (int i = 0; i < nparts; i++)
			fn(ctx, i, scratch);
		return;
	}
	/* close the previous job: a worker that enters it from now on backs
	 * off; wait for those inside (they find no part left) */
	atomic_fetch_add(&p->gen, 1);
	for (int s = 0; atomic_load(&p->active) > 0; s++)
		if (s < CB_SPIN)
			cb_relax();
		else
			sched_yield(); /* a worker preempted inside: let it leave */
	p->fn = fn;
	p->ctx = ctx;
	p->nparts = nparts;
	atomic_store(&p->finished, 0);
	for (int r = 0; r < p->n; r++)
		atomic_store(&p->run[r].next, cb_run_first(nparts, r, p->n));
	pthread_mutex_lock(&p->mu);
	atomic_fetch_add(&p->gen, 1);
	pthread_cond_broadcast(&p->wake);
	pthread_mutex_unlock(&p->mu);
	cb_pool_work(p, scratch, 0);
	if (!cb_spin_until(cb_spin_finished, p, &nparts, CB_WAIT_US)) {
		pthread_mutex_lock(&p->mu);
		atomic_store(&p->waiting, 1);
		while (atomic_load(&p->finished) < nparts)
			pthread_cond_wait(&p->done, &p->mu);
		atomic_store(&p->waiting, 0);
		pthread_mutex_unlock(&p->mu);
	}
	atomic_store(&p->busy, 0);
}

#else /* CB_SINGLE_THREAD */

CB_KERNEL int cb_pool_set(int n)
{
	(void)n;
	return 1;
}
CB_KERNEL int cb_pool_threads(void) { return 1; }
CB_KERNEL void cb_par(cb_job_fn fn, const void *ctx, int nparts, float *scratch)
{
	for (int i = 0; i < nparts; i++)
		fn(ctx, i, scratch);
}

#endif

/* The regions of a run and a part count: the context of the generated
 * functions that run a part of an instruction (the elementwise loops). */
struct cb_regions {
	const uint8_t *C;
	uint8_t *W, *A;
	int nparts;
};

/* How many parts an operator of `work` multiply-adds (or values) is split
 * into: one per thread, fewer when a part would do less than
 * CB_PAR_MIN_WORK, at most `units` (its indivisible pieces). */
CB_INLINE int cb_par_parts(double work, size_t units)
{
	int t = cb_pool_threads();
	double w = work / CB_PAR_MIN_WORK;
	if (w < (double)t)
		t = w < 1.0 ? 1 : (int)w;
	if ((size_t)t > units)
		t = units ? (int)units : 1;
	return t;
}

/* The first of `units` pieces that part i of nparts takes (part i runs
 * cb_par_first(i) .. cb_par_first(i + 1) - 1): contiguous, balanced. */
CB_INLINE size_t cb_par_first(int i, int nparts, size_t units)
{
	return units * (size_t)i / (size_t)nparts;
}

/* A loop over `units` independent pieces (output rows, say) split among the
 * threads: part i runs fn(ctx, first, end) on its contiguous range
 * [cb_par_first(i), cb_par_first(i + 1)). */
typedef void (*cb_range_fn)(const void *ctx, size_t first, size_t end);
struct cb_range_job {
	cb_range_fn fn;
	const void *ctx;
	size_t units;
	int nparts;
};

CB_KERNEL void cb_range_part(const void *job, int i, float *scratch)
{
	const struct cb_range_job *j = job;
	(void)scratch;
	j->fn(j->ctx, cb_par_first(i, j->nparts, j->units), cb_par_first(i + 1, j->nparts, j->units));
}

/* Runs fn over [0, units), in parts when the loop's `work` is worth it
 * (cb_par_parts). */
CB_INLINE void cb_par_ranges(cb_range_fn fn, const void *ctx, size_t units, double work)
{
	struct cb_range_job j = {fn, ctx, units, cb_par_parts(work, units)};
	cb_par(cb_range_part, &j, j.nparts, NULL);
}

#endif
