/* threads.c - glow-run's -threads=N: the thread count of the interpreter
 * and of the C bundles compiled in process. */
#include "runner/runner.h"
#include "backends/c/cbackend.h"
#include "backends/interpreter/interp.h"

#include <stdlib.h>

int runner_set_threads(const char *value, struct diag *d)
{
	if (!value)
		return 0; /* the default: every core of the process */
	char *end;
	long n = strtol(value, &end, 10);
	if (!*value || *end || *value == ' ' || *value == '+' || n < 1 || n > RUNNER_MAX_THREADS) {
		diag_error(d, LOC_NONE, "-threads takes a number from 1 to %d, not '%s'", RUNNER_MAX_THREADS, value);
		return -1;
	}
	interp_set_threads((int)n);
	cbackend_set_threads((int)n);
	return 0;
}
