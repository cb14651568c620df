/* stages.c - see stages.h. */
#define _POSIX_C_SOURCE 200809L
#include "tensor/stages.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

double stages_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

void stages_init(struct stages *s, bool on)
{
	memset(s, 0, sizeof *s);
	s->on = on;
	s->start = s->last = stages_now();
}

static void add(struct stages *s, const char *name, double seconds)
{
	for (unsigned i = 0; i < s->n; i++)
		if (strcmp(s->v[i].name, name) == 0) {
			s->v[i].seconds += seconds;
			return;
		}
	if (s->n == STAGES_MAX)
		return;
	s->v[s->n].name = name;
	s->v[s->n++].seconds = seconds;
}

void stages_mark(struct stages *s, const char *name)
{
	if (!s->on)
		return;
	double now = stages_now();
	add(s, name, now - s->last);
	s->last = now;
}

void stages_add(struct stages *s, const char *name, double seconds)
{
	if (!s->on)
		return;
	add(s, name, seconds);
	s->last += seconds;
}

void stages_split(struct stages *s, const char *from, const char *to, double seconds)
{
	if (!s->on || seconds <= 0)
		return;
	add(s, from, -seconds);
	add(s, to, seconds);
}

void stages_report(const struct stages *s, const char *tool)
{
	if (!s->on)
		return;
	for (unsigned i = 0; i < s->n; i++)
		fprintf(stderr, "%s: time: %-16s %9.4f s\n", tool, s->v[i].name, s->v[i].seconds);
	fprintf(stderr, "%s: time: %-16s %9.4f s\n", tool, "total", s->last - s->start);
	fflush(stderr);
}
