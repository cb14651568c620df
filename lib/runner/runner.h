/* runner.h - running instruction IR programs for the tools: compiling a
 * function on a backend with the stage timing every tool reports, and the
 * drivers of glow-run (run.c) and glow-diff (diff.c), whose mains are an
 * option table and one call.
 *
 * Library code: reports through struct diag, never exits; a driver returns
 * the tool's exit status.
 */
#ifndef GLOW_RUNNER_RUNNER_H
#define GLOW_RUNNER_RUNNER_H

#include "backends/registry.h"
#include "ir/ir.h"
#include "support/cl.h"
#include "support/diag.h"
#include "tensor/stages.h"
#include "tensor/tensor.h"

#include <stdbool.h>
#include <stdint.h>

/* ---- backends (exec.c) ---- */

/* The tools that run programs offer every backend (backend_names(0)): each
 * runs the same program with the same input and output options, so any
 * check written for one runs on all.
 *
 * Compiles f on be: with the C backend, its bundle options (gemm:
 * CBACKEND_GEMM_*, winograd: CBACKEND_WINO_*) and the stages "code
 * generation" and "C compile"; then marks "load" (C) or "plan". NULL after
 * reporting. */
struct backend_compiled *runner_compile(const struct backend *be, struct ir_func *f, bool ignore_plan, int gemm,
					int winograd, struct stages *st, struct diag *d);

/* Reads the program in ("-": standard input) and parses it into types
 * (initialized here), marking the stage "read"; a module read from a file
 * finds its relative weight files beside it. Returns -1 after reporting a
 * file it cannot read (nothing to free); else 0, with *m the module or
 * NULL after reporting, and the caller frees *buf and types. */
int runner_read_program(const char *in, struct type_ctx *types, char **buf, struct ir_module **m, struct stages *st,
			struct diag *d);

/* ---- files (exec.c) ---- */

/* name as a file name: every byte but letters, digits, '_', '.' and '-'
 * becomes '_' (malloc'd) */
char *runner_file_base(const char *name);
/* "DIR/BASE.EXT" (malloc'd; ext with its dot, or "") */
char *runner_path(const char *dir, const char *base, const char *ext);
/* Creates directory dir (its last level) unless it exists; -1 after
 * reporting. */
int runner_make_dir(const char *dir, struct diag *d);
/* Writes the tensor (type ty) to path as -output-format says (0: .pb
 * named name, 1: .npy), whole or not at all; -1 after reporting. */
int runner_write_tensor(int format, const char *path, const char *name, const struct type *ty, const void *data,
			struct diag *d);

/* ---- glow-run (run.c) ---- */

struct run_options {
	const char *func;
	struct cl_list inputs, expected, positional;
	const char *output, *output_dir, *expected_dir;
	int format; /* 0 pb, 1 npy */
	int backend; /* index in backend_names(0) */
	int gemm;    /* CBACKEND_GEMM_* (-gemm=, the C backend only) */
	int winograd; /* CBACKEND_WINO_* (-winograd=, the C backend only) */
	bool print, print_full, print_signature, ignore_plan, time;
	struct tensor_tol tol;
	const char *profile; /* -profile=FILE: profile the run (profile.c) */
	/* the training run (train.h): data sets NAME=FILE, numbers as given */
	struct cl_list train_data, test_data;
	const char *epochs, *batch, *seed, *limit, *loss, *scores;
	bool no_shuffle;
	const char *threads; /* -threads=N, NULL: the default (threads.c) */
};

/* What glow-run's inference and training runs hold of their program:
 * the stage timer, the parsed module (NULL after reporting) and what it
 * lives in. */
struct runner_program {
	struct stages st;
	struct type_ctx types;
	char *buf;
	struct ir_module *m;
};
/* Starts the stage timer (-time) and reads o's program (its positional
 * argument, else standard input) as runner_read_program; -1 after
 * reporting an unreadable file (nothing to close), else 0: close p. */
int runner_program_open(struct runner_program *p, const struct run_options *o, struct diag *d);
/* Reports the stages (-time) and frees the module and what it lives in. */
void runner_program_close(struct runner_program *p);
/* -output-dir: creates o's directory and returns the extension of the
 * files written into it (-output-format: ".pb" or ".npy"); NULL after
 * reporting. */
const char *runner_output_dir(const struct run_options *o, struct diag *d);

/* glow-run -profile: runs f on be over the -input sets of o and writes or
 * accumulates the quantization profile o->profile (profile.c describes
 * it); returns the exit status. */
int runner_profile(const struct run_options *o, const struct backend *be, struct ir_func *f, struct stages *st,
		   struct diag *d);

/* -threads=N (1 .. RUNNER_MAX_THREADS) of the interpreter and the C
 * backend (NULL: leave the default, every core); -1 after reporting a bad
 * value (threads.c). */
#define RUNNER_MAX_THREADS 256
int runner_set_threads(const char *value, struct diag *d);

/* glow-run on the parsed options opts, a struct run_options
 * (tools/glow-run/glow-run.c describes them); returns the exit status.
 * The signature is cl_main's. */
int runner_glow_run(void *opts, struct diag *d);

/* ---- glow-diff (diff.c) ---- */

struct diff_options {
	const char *passes;
	int olevel;
	int mode;
	bool fp16, bf16, randomize;
	const char *keep_float;
	const char *seed_s, *runs_s;
	uint64_t seed;
	unsigned runs;
	struct tensor_tol tol;
	const char *output; /* -o: the report */
	bool time;
	int backend;                    /* index in backend_names(0) */
	const struct backend *after_be; /* the pipeline's side runs here */
	struct cl_list input;
};

/* glow-diff on the parsed options opts, a struct diff_options
 * (tools/glow-diff/glow-diff.c describes them); returns the exit status.
 * The signature is cl_main's. */
int runner_glow_diff(void *opts, struct diag *d);

#endif
