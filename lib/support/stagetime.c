/* stagetime.c - see stagetime.h. */
#define _POSIX_C_SOURCE 200809L
#include "stagetime.h"

#include <string.h>
#include <time.h>

static double now_seconds(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

void stage_timer_init(struct stage_timer *t, bool on)
{
	memset(t, 0, sizeof(*t));
	t->on = on;
	if (on)
		t->last = now_seconds();
}

void stage_timer_mark(struct stage_timer *t, const char *stage)
{
	if (!t->on)
		return;
	double now = now_seconds();
	unsigned i = 0;
	while (i < t->n && strcmp(t->names[i], stage) != 0)
		i++;
	if (i == t->n) {
		if (t->n == STAGE_TIMER_MAX)
			return; /* a tool with more stages than rows: a bug, not an error */
		t->names[t->n++] = stage;
	}
	t->secs[i] += now - t->last;
	t->last = now;
}

void stage_timer_skip(struct stage_timer *t)
{
	if (t->on)
		t->last = now_seconds();
}

void stage_timer_report(const struct stage_timer *t, FILE *out)
{
	if (!t->on || !t->n)
		return;
	double total = 0;
	for (unsigned i = 0; i < t->n; i++)
		total += t->secs[i];
	/* the banner of -time-passes (passmgr.c), so the two reports read alike */
	static const char rule[] =
		"===-------------------------------------------------------------------------===\n";
	static const char title[] = "... Stage timing report ...";
	fputs(rule, out);
	fprintf(out, "%*s%s\n", (80 - (int)strlen(title)) / 2, "", title);
	fputs(rule, out);
	fprintf(out, "  Total Execution Time: %.4f seconds (%.4f wall clock)\n\n", total, total);
	fputs("   ---Wall Time---  --- Stage ---\n", out);
	for (unsigned i = 0; i < t->n; i++)
		fprintf(out, "  %7.4f (%5.1f%%)  %s\n", t->secs[i], total > 0 ? 100.0 * t->secs[i] / total : 0.0,
			t->names[i]);
	fprintf(out, "  %7.4f (100.0%%)  Total\n\n", total);
}
