/* pmcli.h - the command-line options every pass-running tool shares and
 * what they do to a struct pm: -verify-each, -print-before=, -print-after=,
 * -print-before-all, -print-after-all, -time-passes, -stats, -list-passes,
 * -debug-pass-manager. A tool embeds a struct pm_cli in its options, puts
 * PM_CLI_VERIFY_OPT and PM_CLI_OPTS rows into its cl_opt table (separately,
 * so a tool may list its own options between them), calls pm_cli_setup
 * after pm_init and pm_cli_report after the run; pm_cli_main is the rest of
 * its main. */
#ifndef GLOW_SUPPORT_PMCLI_H
#define GLOW_SUPPORT_PMCLI_H

#include "support/cl.h"
#include "support/passmgr.h"

#include <stdbool.h>

struct pm_cli {
	struct cl_list print_before, print_after;
	bool verify_each, print_before_all, print_after_all;
	bool time_passes, stats, list_passes, debug_pm;
};

#define PM_CLI_VERIFY_OPT(c) \
	{"verify-each", CL_FLAG, &(c)->verify_each, NULL, "Run the verifier after every pass", 0, NULL}

/* The -passes= and -O0 to -O3 rows of the tools whose pipeline the user
 * picks (glow-opt, glow-llc): passes is a const char *, olevel the int
 * each -On sets to n; hN, "" or " (...)", follows "Run the On pipeline" in
 * its help to say what the level does in that tool. */
#define PM_CLI_PIPELINE_OPTS(passes, olevel, h0, h1, h2, h3)                                                 \
	{"passes", CL_STRING, (passes), "pass,...", "Passes and pipelines to run, in order", 0, NULL},         \
	{"O0", CL_SET, (olevel), NULL, "Run the O0 pipeline" h0, 0, NULL},                                      \
	{"O1", CL_SET, (olevel), NULL, "Run the O1 pipeline" h1, 1, NULL},                                      \
	{"O2", CL_SET, (olevel), NULL, "Run the O2 pipeline" h2, 2, NULL},                                      \
	{"O3", CL_SET, (olevel), NULL, "Run the O3 pipeline" h3, 3, NULL}

/* The -time row of glow-opt and glow-irgen, whose runs time the same
 * stages. */
#define PM_CLI_TIME_OPT(dest)                                                                                  \
	{"time", CL_FLAG, (dest), NULL, "Report the wall time of each stage (read, parse, verify, passes, write) on stderr", \
	 0, NULL}

/* what: how help texts name the IR ("module", "IR") */
#define PM_CLI_OPTS(c, what)                                                                                  \
	{"print-before", CL_LIST, &(c)->print_before, "pass,...", "Print the " what " before these passes", 0,  \
	 NULL},                                                                                                 \
	{"print-after", CL_LIST, &(c)->print_after, "pass,...", "Print the " what " after these passes", 0,     \
	 NULL},                                                                                                 \
	{"print-before-all", CL_FLAG, &(c)->print_before_all, NULL, "Print the " what " before every pass", 0, \
	 NULL},                                                                                                 \
	{"print-after-all", CL_FLAG, &(c)->print_after_all, NULL, "Print the " what " after every pass", 0,    \
	 NULL},                                                                                                 \
	{"time-passes", CL_FLAG, &(c)->time_passes, NULL, "Report the wall time of each pass", 0, NULL},        \
	{"stats", CL_FLAG, &(c)->stats, NULL, "Report the counters of each pass", 0, NULL},                      \
	{"list-passes", CL_FLAG, &(c)->list_passes, NULL, "List the passes and pipelines, then exit", 0, NULL}, \
	{"debug-pass-manager", CL_FLAG, &(c)->debug_pm, NULL, "Trace each pass and pipeline as it runs", 0, NULL}

/* Sets the verification, dump and trace switches of pm and adds the
 * -print-before/-print-after lists; returns nonzero after reporting an
 * unknown pass name. */
int pm_cli_apply(struct pm *pm, const struct pm_cli *c);
/* A tool's pass manager made ready: applies c (pm_cli_apply) after the
 * pipeline was added, bad telling whether that reported an error; after
 * either error frees pm and returns nonzero (the tool exits 1). */
int pm_cli_setup(struct pm *pm, const struct pm_cli *c, int bad);
/* -time-passes and -stats: the tables, on stderr. */
void pm_cli_report(const struct pm *pm, const struct pm_cli *c);

/* The main of a pass-running tool once its option table is built: parses
 * argv against tool (its diagnostics named after the tool), lists reg's
 * passes and pipelines for -list-passes, else calls run(opts, d); returns
 * the exit status (0 after --help or --version). */
int pm_cli_main(const struct cl_tool *tool, int argc, char **argv, const struct pm_cli *c,
		const struct pm_registry *reg, int (*run)(void *opts, struct diag *d), void *opts);

#endif
