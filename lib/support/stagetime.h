/* stagetime.h - -time: the wall time of each stage of a tool's run (read,
 * parse, verify, passes, write), reported on stderr in the layout of
 * -time-passes:
 *
 *   ===---------------------------------------------------------------===
 *                      ... Stage timing report ...
 *   ===---------------------------------------------------------------===
 *     Total Execution Time: 0.0123 seconds (0.0123 wall clock)
 *
 *      ---Wall Time---  --- Stage ---
 *      0.0012 ( 9.8%)  read
 *      ...
 *
 * Stages in the order they first ran; a stage that runs again (the
 * verifier before and after the passes) adds to its row.
 *
 *   struct stage_timer t;
 *   stage_timer_init(&t, o->time);  // off: every call does nothing
 *   ... read the input ...
 *   stage_timer_mark(&t, "read");    // the time since the last mark
 *   ...
 *   stage_timer_report(&t, stderr);
 */
#ifndef GLOW_SUPPORT_STAGETIME_H
#define GLOW_SUPPORT_STAGETIME_H

#include <stdbool.h>
#include <stdio.h>

#define STAGE_TIMER_MAX 8

struct stage_timer {
	bool on;
	double last;
	unsigned n;
	const char *names[STAGE_TIMER_MAX]; /* not copied: string literals */
	double secs[STAGE_TIMER_MAX];
};

void stage_timer_init(struct stage_timer *t, bool on);
/* Charges the time since the previous mark (or init) to stage. */
void stage_timer_mark(struct stage_timer *t, const char *stage);
/* Restarts the clock without charging anything (time spent on no stage). */
void stage_timer_skip(struct stage_timer *t);
/* The table, when on and some stage ran. */
void stage_timer_report(const struct stage_timer *t, FILE *out);

#endif
