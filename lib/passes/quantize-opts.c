/* quantize-opts.c - the quantize pass's options (Passes.def rows QZ_*):
 * the tool's configuration (pass_ctx.quant: glow-opt's -profile and -quant-*
 * flags, and ctx->keep_float) is the default of each option, a value
 * written in the pipeline text (quantize{schema=symmetric ...}) wins, as
 * differentiate's options do with the training configuration.
 *
 * The enumerated options are STRING rows (the pass manager has no enum
 * type): their values are checked here, when the pass starts, against the
 * same spellings glow-opt's flags take (quantize.h), with a suggestion for
 * a near miss.
 */
#include "passes/quantize.h"
#include "backends/backend.h"
#include "passes/pass.h"
#include "passes/passcli.h"
#include "passes/target.h"
#include "support/cl.h"
#include "support/suggest.h"

#include <string.h>

/* Option id's value as an index of names; *out unchanged when the text
 * does not give it. False after reporting a value not in names. */
static bool qo_enum(const struct pass_ctx *ctx, enum pass_option id, const char *opt, const char *names, int *out)
{
	if (!pass_opt_given(ctx, id))
		return true;
	const char *v = pass_opt_string(ctx, id);
	int k = cl_enum_index(names, v);
	if (k >= 0) {
		*out = k;
		return true;
	}
	struct suggest sg;
	suggest_init(&sg, v, strlen(v));
	for (const char *c = names;;) {
		size_t n = strcspn(c, "|");
		suggest_offer(&sg, c, n);
		if (!c[n])
			break;
		c += n + 1;
	}
	if (sg.best)
		diag_error(ctx->diag, LOC_NONE, "quantize{%s=%s}: not one of %s; did you mean '%.*s'?", opt, v, names,
			   (int)sg.best_len, sg.best);
	else
		diag_error(ctx->diag, LOC_NONE, "quantize{%s=%s}: not one of %s", opt, v, names);
	return false;
}

bool quant_pass_options(const struct pass_ctx *ctx, struct quant_options *o, bool *keep)
{
	*o = ctx->quant ? *ctx->quant : quant_options_default;
	if (pass_opt_given(ctx, POPT_QZ_PROFILE))
		o->profile = pass_opt_string(ctx, POPT_QZ_PROFILE);
	int prec = o->precision == EK_QI16, schema = (int)o->schema, calib = (int)o->calibration;
	if (!qo_enum(ctx, POPT_QZ_PRECISION, "precision", QUANT_PRECISION_NAMES, &prec) ||
	    !qo_enum(ctx, POPT_QZ_SCHEMA, "schema", QUANT_SCHEMA_NAMES, &schema) ||
	    !qo_enum(ctx, POPT_QZ_CALIBRATION, "calibration", QUANT_CALIBRATION_NAMES, &calib))
		return false;
	o->precision = prec ? EK_QI16 : EK_QI8;
	o->schema = (enum quant_schema)schema;
	o->calibration = (enum quant_calib)calib;
	if (pass_opt_given(ctx, POPT_QZ_PER_CHANNEL))
		o->per_channel = pass_opt_bool(ctx, POPT_QZ_PER_CHANNEL);
	if (!o->profile || !*o->profile) {
		diag_error(ctx->diag, LOC_NONE,
			   "the quantize pass needs a profile: -profile=FILE or quantize{profile=FILE} (written by glow-run "
			   "-profile)");
		return false;
	}
	memset(keep, 0, NK_COUNT * sizeof *keep);
	if (pass_opt_given(ctx, POPT_QZ_KEEP_FLOAT)) {
		struct pm_optlist l = pass_opt_list(ctx, POPT_QZ_KEEP_FLOAT);
		int bad = 0;
		for (size_t i = 0; i < l.n; i++)
			bad |= pass_kind_list("quantize{keep-float=...}", l.v[i], keep, ctx->diag);
		return !bad;
	}
	return !ctx->keep_float || !pass_cli_kind_list("keep-float", ctx->keep_float, keep, ctx->diag);
}
