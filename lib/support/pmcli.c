/* pmcli.c - the pass-manager options the tools share (pmcli.h). */
#include "support/pmcli.h"

#include <stdio.h>

int pm_cli_apply(struct pm *pm, const struct pm_cli *c)
{
	pm->verify_each = c->verify_each;
	pm->print_before_all = c->print_before_all;
	pm->print_after_all = c->print_after_all;
	pm->debug = c->debug_pm;
	int bad = 0;
	for (size_t i = 0; i < c->print_before.n; i++)
		bad |= pm_add_print_before(pm, c->print_before.v[i]);
	for (size_t i = 0; i < c->print_after.n; i++)
		bad |= pm_add_print_after(pm, c->print_after.v[i]);
	return bad;
}

/* c is applied even after a bad pipeline, so that its own unknown pass
 * names are reported in the same run. */
int pm_cli_setup(struct pm *pm, const struct pm_cli *c, int bad)
{
	bad |= pm_cli_apply(pm, c);
	if (bad)
		pm_free(pm);
	return bad;
}

void pm_cli_report(const struct pm *pm, const struct pm_cli *c)
{
	if (c->time_passes)
		pm_print_timing(pm, stderr);
	if (c->stats)
		pm_print_stats(pm, stderr);
}

/* pm_cli_main's run: -list-passes, else the tool's own run. */
struct pm_cli_run {
	const struct pm_cli *c;
	const struct pm_registry *reg;
	int (*run)(void *opts, struct diag *d);
	void *opts;
};

static int pm_cli_run(void *ctx, struct diag *d)
{
	struct pm_cli_run *r = ctx;
	if (!r->c->list_passes)
		return r->run(r->opts, d);
	pm_print_list(r->reg, stdout);
	return 0;
}

int pm_cli_main(const struct cl_tool *tool, int argc, char **argv, const struct pm_cli *c,
		const struct pm_registry *reg, int (*run)(void *opts, struct diag *d), void *opts)
{
	struct pm_cli_run r = {c, reg, run, opts};
	return cl_main(tool, argc, argv, pm_cli_run, &r);
}
