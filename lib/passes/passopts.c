/* passopts.c - typed access to the graph passes' options (pass.h) and the
 * training configuration differentiate builds from them.
 *
 * The values were parsed and checked when the pipeline was compiled
 * (lib/support/pmopts.c); these are lookups by index, no text is read.
 */
#include "graph/forms.h"
#include "passes/pass.h"

#include <string.h>

int64_t pass_opt_int(const struct pass_ctx *ctx, enum pass_option id) { return pm_opt_int(ctx->pm, (int)id); }
double pass_opt_float(const struct pass_ctx *ctx, enum pass_option id) { return pm_opt_float(ctx->pm, (int)id); }
bool pass_opt_bool(const struct pass_ctx *ctx, enum pass_option id) { return pm_opt_bool(ctx->pm, (int)id); }
const char *pass_opt_string(const struct pass_ctx *ctx, enum pass_option id)
{
	return pm_opt_string(ctx->pm, (int)id);
}
struct pm_optlist pass_opt_list(const struct pass_ctx *ctx, enum pass_option id)
{
	return pm_opt_list(ctx->pm, (int)id);
}
bool pass_opt_given(const struct pass_ctx *ctx, enum pass_option id) { return pm_opt_given(ctx->pm, (int)id); }

/* The tool-wide configuration is the default of each option: a value in
 * the pipeline text overrides it, an absent one leaves it. */
struct train_config pass_train_config(const struct pass_ctx *ctx)
{
	struct train_config c = ctx->train ? *ctx->train : train_config_default;
	if (pass_opt_given(ctx, POPT_DIFF_LR))
		c.learning_rate = pass_opt_float(ctx, POPT_DIFF_LR);
	if (pass_opt_given(ctx, POPT_DIFF_MOMENTUM))
		c.momentum = pass_opt_float(ctx, POPT_DIFF_MOMENTUM);
	if (pass_opt_given(ctx, POPT_DIFF_WEIGHT_DECAY))
		c.weight_decay = pass_opt_float(ctx, POPT_DIFF_WEIGHT_DECAY);
	if (pass_opt_given(ctx, POPT_DIFF_BATCH_SIZE))
		c.batch_size = (unsigned)pass_opt_int(ctx, POPT_DIFF_BATCH_SIZE);
	return c;
}

bool pass_diff_selects(const struct pass_ctx *ctx, const char *name)
{
	if (!pass_opt_given(ctx, POPT_DIFF_FUNCS))
		return true;
	struct pm_optlist l = pass_opt_list(ctx, POPT_DIFF_FUNCS);
	for (size_t i = 0; i < l.n; i++)
		if (strcmp(l.v[i], name) == 0 || (l.v[i][0] == '@' && strcmp(l.v[i] + 1, name) == 0))
			return true;
	return false;
}

int pass_diff_check_funcs(struct module *m, const struct pass_ctx *ctx)
{
	if (!pass_opt_given(ctx, POPT_DIFF_FUNCS))
		return 0;
	struct pm_optlist l = pass_opt_list(ctx, POPT_DIFF_FUNCS);
	int bad = 0;
	for (size_t i = 0; i < l.n; i++) {
		const char *name = l.v[i][0] == '@' ? l.v[i] + 1 : l.v[i];
		if (!module_find_func(m, name)) {
			diag_error(ctx->diag, LOC_NONE, "differentiate{funcs=...}: the module has no function @%s", name);
			bad = 1;
		}
	}
	return bad;
}

void pass_record_train_config(struct module *m, const struct pass_ctx *ctx)
{
	if (!pass_opt_bool(ctx, POPT_DIFF_RECORD))
		return;
	struct train_config c = pass_train_config(ctx);
	module_set_attr_float(m, "train_lr", c.learning_rate);
	module_set_attr_float(m, "train_momentum", c.momentum);
	module_set_attr_float(m, "train_weight_decay", c.weight_decay);
	module_set_attr_int(m, "train_batch_size", c.batch_size);
}
