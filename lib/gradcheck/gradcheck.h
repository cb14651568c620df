/* gradcheck.h - glow-gradcheck's driver (gradcheck.c): the differentiate
 * pass's gradients against central finite differences of the loss.
 * Library code: reports through struct diag, never exits. */
#ifndef GLOW_GRADCHECK_GRADCHECK_H
#define GLOW_GRADCHECK_GRADCHECK_H

#include "backends/registry.h"
#include "support/cl.h"
#include "support/diag.h"

#include <stdbool.h>

/* -mode= values: differentiate's mode */
#define GRADCHECK_MODES "train|infer"

struct gc_options {
	const char *func, *seed_s, *step_s, *tol_s;
	int olevel; /* 0 or 2 */
	int backend; /* index in backend_names(BACKEND_HOST) */
	int mode; /* 0 train, 1 infer (GRADCHECK_MODES) */
	bool lower_grads; /* -lower-grads: every gradient and training kind into forward kinds */
	struct cl_list input;
};

/* glow-gradcheck on the parsed options opts, a struct gc_options
 * (tools/glow-gradcheck/glow-gradcheck.c describes them); returns the exit
 * status. The signature is cl_main's. */
int gradcheck_run(void *opts, struct diag *d);

#endif
