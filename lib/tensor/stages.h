/* stages.h - `-time` of the tools that compile and run programs: the wall
 * seconds of each stage (read, passes, plan, code generation, C compile,
 * run, write, ...), reported on stderr at the end as
 *
 *   TOOL: time: STAGE  SECONDS s
 *
 * one line per stage in the order they ran (a stage entered twice adds
 * up), then "TOOL: time: total SECONDS s". A disabled timer records
 * nothing, so the tools call it unconditionally.
 */
#ifndef GLOW_TENSOR_STAGES_H
#define GLOW_TENSOR_STAGES_H

#include <stdbool.h>

#define STAGES_MAX 16

struct stages {
	bool on;
	double start, last; /* monotonic seconds: the timer's start, the last mark */
	unsigned n;
	struct {
		const char *name; /* a literal */
		double seconds;
	} v[STAGES_MAX];
};

/* monotonic seconds */
double stages_now(void);
void stages_init(struct stages *s, bool on);
/* The time since the last mark (or init) belongs to stage `name`. */
void stages_mark(struct stages *s, const char *name);
/* Adds seconds measured elsewhere (a backend's C compile) to stage `name`
 * and takes them off the next mark's stage, which contained them. */
void stages_add(struct stages *s, const char *name, double seconds);
/* Moves seconds of stage `from` to stage `to` (a part measured inside it:
 * the memory plan within the pass pipeline). */
void stages_split(struct stages *s, const char *from, const char *to, double seconds);
/* The report, on stderr (nothing when off). */
void stages_report(const struct stages *s, const char *tool);

#endif
