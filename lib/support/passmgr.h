/* passmgr.h - a pass manager that does not know which IR it runs on.
 *
 * A client (the graph optimizer, the instruction-IR optimizer) describes its
 * passes and named pipelines in a struct pm_registry: every pass is a name, a
 * description, flags and a run function over an opaque IR pointer; a pipeline
 * is a name, flags and a comma-separated list of pass or pipeline names, so
 * pipelines nest. The registry also supplies the IR's verifier and printer.
 *
 * The engine turns pipeline text ("dce,cse,O1") into a tree of entries and
 * runs it: it repeats entries flagged PM_FIXED_POINT until nothing changes
 * (at most max_iterations times), skips passes whose flags intersect
 * skip_flags, times every pass, collects the statistics passes bump, prints
 * the IR before/after chosen passes and verifies after every pass when asked.
 * Everything is reported through struct diag; nothing here exits.
 *
 * A pass returns whether it changed the IR. A pass that reports an error to
 * the diag stops the run.
 *
 * Passes take typed options from the pipeline text ("pass{name=value}",
 * declared in the registry's option table, parsed when the text is
 * compiled) and declare pre- and postconditions through their flags (the
 * registry's condition table); the engine checks those around every run.
 */
#ifndef GLOW_SUPPORT_PASSMGR_H
#define GLOW_SUPPORT_PASSMGR_H

#include "diag.h"
#include "vec.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

enum pm_flags {
	PM_FIXED_POINT = 1u << 0, /* repeat until the entry reports no change */
	PM_CLIENT_FLAG0 = 1u << 8, /* the first bit clients may use for their own flags */
};

struct pm_ctx;
struct ostream;

/* ---- pass options (pmopts.c) ----
 * A pass option is a row of the registry's option table: the pass it
 * belongs to, its name, its type, its default as text and, for numbers, a
 * range. Pipeline text gives values in braces after the pass name, MLIR's
 * spelling: "constant-fold{max-bytes=1024},differentiate{lr=0.1 momentum=0.9}"
 * (space-separated; a list is comma-separated). The engine parses and checks
 * them when the pipeline is compiled, so a pass reads a typed value
 * (pm_opt_int, ...) and never scans text. */
enum pm_opt_type { PM_OPT_INT, PM_OPT_FLOAT, PM_OPT_BOOL, PM_OPT_STRING, PM_OPT_LIST };

struct pm_option {
	const char *pass;  /* the pass's name */
	const char *name;  /* "max-bytes" */
	enum pm_opt_type type;
	const char *def;   /* the default as it would be written ("" for an empty string or list) */
	const char *range; /* numbers: "[lo,hi]", "(lo,hi)", ... ("inf" allowed); NULL: any */
	const char *desc;
};

struct pm_optlist {
	const char *const *v;
	size_t n;
};

union pm_optval {
	int64_t i;
	double f;
	bool b;
	const char *s;
	struct pm_optlist l;
};

/* ---- pre- and post-conditions ----
 * A condition is a client flag that a pass's flags may carry ("requires
 * GNF", "preserves the schedule"). The engine checks a precondition before
 * the pass runs and a postcondition after it (check, transform, check),
 * beside -verify-each, and names the pass when one is violated. */
struct pm_cond {
	unsigned flag;    /* the pass flag that declares it */
	const char *name; /* how -list-passes and messages say it: "requires GNF" */
	bool post;        /* checked after the pass (else before) */
	/* state taken before the pass for a postcondition to compare with; NULL: none */
	void *(*snapshot)(void *ir, void *user);
	void (*snapshot_free)(void *snap);
	/* Reports to d why the IR does not satisfy the condition; returns the
	 * number of errors. */
	int (*check)(void *ir, void *user, void *snap, struct diag *d);
};

/* Runs a pass over the IR; returns true if it changed anything. */
typedef bool (*pm_run_fn)(void *ir, struct pm_ctx *ctx);

struct pm_pass {
	const char *name; /* options (pm_option rows) and conditions (flags) are the registry's */
	const char *desc;
	unsigned flags;
	pm_run_fn run;
};

struct pm_pipeline {
	const char *name;
	unsigned flags;        /* PM_FIXED_POINT: repeat the whole list until no change */
	const char *contents;  /* "a,b,c": pass or pipeline names; "" for none */
	const char *desc;
};

/* A client flag and how -list-passes shows it. */
struct pm_flag_name {
	unsigned flag;
	const char *name;
};

struct pm_registry {
	const struct pm_pass *passes;
	size_t npasses;
	const struct pm_pipeline *pipelines;
	size_t npipelines;
	const struct pm_flag_name *flag_names;
	size_t nflag_names;
	/* Checks the IR, reports to d, returns the number of errors. */
	int (*verify)(void *ir, struct diag *d);
	/* Prints the IR in its text form. */
	void (*print)(void *ir, struct ostream *o);
	/* pass options by pass, and the conditions pass flags may declare */
	const struct pm_option *options;
	size_t noptions;
	const struct pm_cond *conds;
	size_t nconds;
};

/* One node of a compiled pipeline: a pass, or a list of entries. */
struct pm_entry {
	const struct pm_pass *pass;   /* NULL for a list */
	const char *name;             /* pipeline name (lists), pass name (passes) */
	unsigned flags;
	struct pm_entry *kids;
	size_t nkids, capkids;
	/* passes: values of the registry's options, by option index (only the
	 * pass's own are meaningful), and which were given in the text; NULL
	 * when the registry has no options */
	union pm_optval *opts;
	bool *given;
	char *optmem; /* the strings and lists of opts */
};

struct pm_stat {
	const char *group; /* the pass that bumped it */
	const char *desc;
	uint64_t value;
};

struct pm {
	const struct pm_registry *reg;
	struct diag *diag;
	void *user;             /* handed to every pass as ctx->user */

	/* options (set after pm_init, before pm_run) */
	unsigned skip_flags;    /* passes with any of these flags do not run */
	unsigned max_iterations;/* fixed-point cap; default 10 */
	bool verify_each;
	bool print_before_all, print_after_all;
	bool debug;             /* one line per pass run and per verification, to err */
	FILE *err;              /* dumps, debug lines and reports; default stderr */

	/* state */
	struct pm_entry root;   /* the pipeline to run (a list) */
	bool *print_before;     /* by pass index */
	bool *print_after;
	union pm_optval *opt_defaults; /* by option index: the table's defaults */
	char **opt_default_mem; /* their strings and lists */
	double *seconds;        /* wall time by pass index */
	unsigned *runs;         /* runs by pass index */
	VEC(struct pm_stat) stats;
};

/* What a running pass sees. */
struct pm_ctx {
	struct pm *pm;
	struct diag *diag;
	void *user;
	const struct pm_pass *pass;
	const struct pm_entry *entry; /* the pass's entry: its option values */
};

void pm_init(struct pm *pm, const struct pm_registry *reg, struct diag *d, void *user);
void pm_free(struct pm *pm);

/* Looks up a pass or a pipeline by name; NULL if none. */
const struct pm_pass *pm_find_pass(const struct pm_registry *reg, const char *name, size_t len);
const struct pm_pipeline *pm_find_pipeline(const struct pm_registry *reg, const char *name, size_t len);

/* Appends the entries of pipeline text ("a,b,c": pass and pipeline names) to
 * the pipeline to run. Reports unknown names; returns 0 on success. */
int pm_add_text(struct pm *pm, const char *text);
/* pm_add_text whose option diagnostics point into text as the source
 * named source ("-passes"). */
int pm_add_text_named(struct pm *pm, const char *text, const char *source);
/* Marks passes named in a comma-separated list for dumps before/after they
 * run. Reports unknown names; returns 0 on success. */
int pm_add_print_before(struct pm *pm, const char *list);
int pm_add_print_after(struct pm *pm, const char *list);

/* The option index of pass.name in the registry, -1 if none. */
int pm_find_option(const struct pm_registry *reg, const char *pass, const char *name);

/* The value of option idx of the running pass (the pipeline's, else the
 * default). The type must be the option's (checked). A tool whose own
 * options are a pass option's default passes them beside (glow-opt's
 * training configuration: pass_ctx.train) and the pass uses pm_opt_given
 * to let the text win. */
int64_t pm_opt_int(const struct pm_ctx *ctx, int idx);
double pm_opt_float(const struct pm_ctx *ctx, int idx);
bool pm_opt_bool(const struct pm_ctx *ctx, int idx);
const char *pm_opt_string(const struct pm_ctx *ctx, int idx);
struct pm_optlist pm_opt_list(const struct pm_ctx *ctx, int idx);
/* Whether the pipeline text gave option idx of the running pass. */
bool pm_opt_given(const struct pm_ctx *ctx, int idx);

/* Runs the pipeline over ir. Returns 0, or -1 after reporting a failure (a
 * pass reported an error, or the verifier failed after a pass). */
int pm_run(struct pm *pm, void *ir);

/* Adds n to the counter desc of the running pass. */
void pm_stat_add(struct pm_ctx *ctx, const char *desc, uint64_t n);

/* LLVM-style reports to out: wall time per pass (-time-passes) and the
 * counters passes bumped (-stats). Nothing is printed when there is nothing
 * to report. */
void pm_print_timing(const struct pm *pm, FILE *out);
void pm_print_stats(const struct pm *pm, FILE *out);

/* Every pass with its description and flags, then every pipeline. */
void pm_print_list(const struct pm_registry *reg, FILE *out);

#endif
