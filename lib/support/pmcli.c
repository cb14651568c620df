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

void pm_cli_report(const struct pm *pm, const struct pm_cli *c)
{
	if (c->time_passes)
		pm_print_timing(pm, stderr);
	if (c->stats)
		pm_print_stats(pm, stderr);
}

int pm_cli_main(const struct cl_tool *tool, int argc, char **argv, const struct pm_cli *c,
		const struct pm_registry *reg, int (*run)(void *opts, struct diag *d), void *opts)
{
	struct diag d;
	diag_init(&d, tool->name);
	int status;
	enum cl_result r = cl_parse(tool, argc, argv, &d);
	if (r != CL_OK)
		status = r == CL_EXIT ? 0 : 1;
	else if (c->list_passes) {
		pm_print_list(reg, stdout);
		status = 0;
	} else
		status = run(opts, &d);
	cl_free(tool);
	diag_free(&d);
	return status;
}
