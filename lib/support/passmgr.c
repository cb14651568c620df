/* passmgr.c - the IR-independent pass manager (see passmgr.h).
 *
 * Pipeline text is compiled into a tree of struct pm_entry: a named pipeline
 * becomes a list entry holding its own entries, so "O2" inside "-passes=" and
 * "O1" inside the O2 row nest the same way. Names are resolved at compile
 * time; nesting deeper than PM_MAX_DEPTH means a pipeline includes itself.
 *
 * Running is a walk of that tree. Each entry returns -1 (stop: an error was
 * reported), 0 (no change) or 1 (changed); fixed-point entries loop while
 * they return 1, up to max_iterations, and warn if they never settle.
 */
#define _POSIX_C_SOURCE 200809L
#include "passmgr.h"
#include "io.h"
#include "pmopts.h"
#include "suggest.h"
#include "util.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { PM_MAX_DEPTH = 16, PM_DEFAULT_ITERATIONS = 10 };

void pm_init(struct pm *pm, const struct pm_registry *reg, struct diag *d, void *user)
{
	memset(pm, 0, sizeof(*pm));
	pm->reg = reg;
	pm->diag = d;
	pm->user = user;
	pm->max_iterations = PM_DEFAULT_ITERATIONS;
	pm->err = stderr;
	pm->root.name = "";
	size_t n = reg->npasses ? reg->npasses : 1;
	pm->print_before = xcalloc(n, sizeof(bool));
	pm->print_after = xcalloc(n, sizeof(bool));
	pm->seconds = xcalloc(n, sizeof(double));
	pm->runs = xcalloc(n, sizeof(unsigned));
	/* every option belongs to a pass of the registry: a table bug otherwise */
	for (size_t i = 0; i < reg->noptions; i++)
		if (!pm_find_pass(reg, reg->options[i].pass, strlen(reg->options[i].pass)))
			unreachable("option of an unknown pass in registry");
	pm_opts_init_defaults(pm);
	/* names must be unique across passes and pipelines: a table bug otherwise */
	for (size_t i = 0; i < reg->npasses; i++)
		for (size_t j = 0; j < i; j++)
			if (strcmp(reg->passes[i].name, reg->passes[j].name) == 0)
				unreachable("duplicate pass name in registry");
	for (size_t i = 0; i < reg->npipelines; i++)
		if (pm_find_pass(reg, reg->pipelines[i].name, strlen(reg->pipelines[i].name)))
			unreachable("pipeline named like a pass");
}

static void entry_free(struct pm_entry *e)
{
	for (size_t i = 0; i < e->nkids; i++)
		entry_free(&e->kids[i]);
	pm_opts_entry_free(e);
	free(e->kids);
	e->kids = NULL;
	e->nkids = e->capkids = 0;
}

void pm_free(struct pm *pm)
{
	entry_free(&pm->root);
	free(pm->print_before);
	free(pm->print_after);
	free(pm->seconds);
	free(pm->runs);
	pm_opts_free_defaults(pm);
	vec_free(&pm->stats);
}

const struct pm_pass *pm_find_pass(const struct pm_registry *reg, const char *name, size_t len)
{
	for (size_t i = 0; i < reg->npasses; i++)
		if (strlen(reg->passes[i].name) == len && memcmp(reg->passes[i].name, name, len) == 0)
			return &reg->passes[i];
	return NULL;
}

const struct pm_pipeline *pm_find_pipeline(const struct pm_registry *reg, const char *name, size_t len)
{
	for (size_t i = 0; i < reg->npipelines; i++)
		if (strlen(reg->pipelines[i].name) == len && memcmp(reg->pipelines[i].name, name, len) == 0)
			return &reg->pipelines[i];
	return NULL;
}

/* ---- compiling pipeline text ---- */

/* Calls fn on each comma-separated, blank-trimmed item of text; a comma
 * inside braces (a pass's options) does not separate items. Reports an
 * empty item and unbalanced braces; returns 0, or the first non-zero result
 * of fn. */
static int for_each_item(struct pm *pm, const char *text, int (*fn)(struct pm *, void *, const char *, size_t),
			 void *arg)
{
	const char *p = text;
	if (!*p)
		return 0;
	for (;;) {
		const char *e = p;
		int depth = 0;
		for (; *e && (depth || *e != ','); e++) {
			if (*e == '{')
				depth++;
			else if (*e == '}' && --depth < 0)
				break;
		}
		if (depth) {
			diag_error(pm->diag, LOC_NONE, "%s brace in pipeline '%s'", depth > 0 ? "unclosed" : "unmatched",
				   text);
			return -1;
		}
		const char *b = p, *t = e;
		while (b < t && (*b == ' ' || *b == '\t'))
			b++;
		while (t > b && (t[-1] == ' ' || t[-1] == '\t'))
			t--;
		if (b == t) {
			diag_error(pm->diag, LOC_NONE, "empty pass name in '%s'", text);
			return -1;
		}
		int r = fn(pm, arg, b, (size_t)(t - b));
		if (r)
			return r;
		if (!*e)
			return 0;
		p = e + 1;
	}
}

struct compile_arg {
	struct pm_entry *into;
	unsigned depth;
	struct pm_text text; /* file 0 inside named pipelines: no locations */
};

static int compile_item(struct pm *pm, void *arg, const char *name, size_t len);

/* Reports an unknown pass name with the closest pass (or, where pipelines
 * are allowed, pipeline) name as a did-you-mean. */
static void unknown_pass(struct pm *pm, const char *name, size_t len, bool pipelines)
{
	struct suggest s;
	suggest_init(&s, name, len);
	for (size_t i = 0; i < pm->reg->npasses; i++)
		suggest_offer(&s, pm->reg->passes[i].name, strlen(pm->reg->passes[i].name));
	for (size_t i = 0; pipelines && i < pm->reg->npipelines; i++)
		suggest_offer(&s, pm->reg->pipelines[i].name, strlen(pm->reg->pipelines[i].name));
	if (s.best)
		diag_error(pm->diag, LOC_NONE, "unknown pass '%.*s'; did you mean '%.*s'?", (int)len, name,
			   (int)s.best_len, s.best);
	else
		diag_error(pm->diag, LOC_NONE, "unknown pass '%.*s' (see -list-passes)", (int)len, name);
}

static struct pm_entry *entry_push(struct pm_entry *list)
{
	list->kids = xgrow(list->kids, &list->capkids, list->nkids + 1, sizeof(*list->kids));
	struct pm_entry *e = &list->kids[list->nkids++];
	memset(e, 0, sizeof(*e));
	return e;
}

/* An item is a name, optionally followed by the pass's options in braces:
 * "constant-fold{max-bytes=4096}". */
static int compile_item(struct pm *pm, void *arg, const char *name, size_t len)
{
	struct compile_arg *ca = arg;
	const char *brace = memchr(name, '{', len);
	const char *opts = NULL;
	size_t optlen = 0;
	if (brace) {
		if (name[len - 1] != '}') {
			diag_error(pm->diag, ca->text.file ? loc_make(ca->text.file, (uint32_t)(brace - ca->text.base)) : LOC_NONE,
				   "text after the options of '%.*s'", (int)(brace - name), name);
			return -1;
		}
		opts = brace + 1;
		optlen = (size_t)(name + len - 1 - opts);
		len = (size_t)(brace - name);
		while (len && (name[len - 1] == ' ' || name[len - 1] == '\t'))
			len--;
	}
	const struct pm_pass *p = pm_find_pass(pm->reg, name, len);
	if (p) {
		struct pm_entry *e = entry_push(ca->into);
		e->pass = p;
		e->name = p->name;
		e->flags = p->flags;
		return pm_opts_parse(pm, &ca->text, e, opts, optlen);
	}
	const struct pm_pipeline *pl = pm_find_pipeline(pm->reg, name, len);
	if (!pl) {
		unknown_pass(pm, name, len, true);
		return -1;
	}
	if (opts) {
		diag_error(pm->diag, ca->text.file ? loc_make(ca->text.file, (uint32_t)(brace - ca->text.base)) : LOC_NONE,
			   "pipeline '%s' takes no options (give them to its passes)", pl->name);
		return -1;
	}
	if (ca->depth >= PM_MAX_DEPTH) {
		diag_error(pm->diag, LOC_NONE, "pipeline '%s' nests too deeply (does it include itself?)", pl->name);
		return -1;
	}
	struct pm_entry *e = entry_push(ca->into);
	e->name = pl->name;
	e->flags = pl->flags;
	/* e may move when a sibling is pushed later, but not while its own kids are compiled */
	struct compile_arg sub = {e, ca->depth + 1, {pl->contents, 0}};
	return for_each_item(pm, pl->contents, compile_item, &sub);
}

int pm_add_text_named(struct pm *pm, const char *text, const char *source)
{
	struct compile_arg ca = {&pm->root, 0, {text, 0}};
	/* options are reported at their column: the text becomes a source */
	if (source && strchr(text, '{'))
		ca.text.file = diag_add_source(pm->diag, source, text, strlen(text));
	return for_each_item(pm, text, compile_item, &ca) ? -1 : 0;
}

int pm_add_text(struct pm *pm, const char *text) { return pm_add_text_named(pm, text, "<pipeline>"); }

static int mark_item(struct pm *pm, void *arg, const char *name, size_t len)
{
	bool *marks = arg;
	const struct pm_pass *p = pm_find_pass(pm->reg, name, len);
	if (!p) {
		unknown_pass(pm, name, len, false);
		return -1;
	}
	marks[p - pm->reg->passes] = true;
	return 0;
}

int pm_add_print_before(struct pm *pm, const char *list)
{
	return for_each_item(pm, list, mark_item, pm->print_before) ? -1 : 0;
}

int pm_add_print_after(struct pm *pm, const char *list)
{
	return for_each_item(pm, list, mark_item, pm->print_after) ? -1 : 0;
}

/* ---- running ---- */

static double now_seconds(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void dump(struct pm *pm, void *ir, const char *when, const char *pass)
{
	struct ostream o;
	ostream_mem(&o);
	os_printf(&o, "// *** IR Dump %s %s ***\n", when, pass);
	pm->reg->print(ir, &o);
	const char *s = ostream_cstr(&o);
	fputs(s, pm->err);
	fflush(pm->err);
	ostream_abort(&o);
}

static void debug_line(struct pm *pm, unsigned depth, const char *fmt, const char *name)
{
	if (!pm->debug)
		return;
	fprintf(pm->err, "%*s", (int)(2 * depth), "");
	fprintf(pm->err, fmt, name);
	fputc('\n', pm->err);
}

/* Checks the pre- (post false) or postconditions p declares; snaps holds
 * the snapshots taken before the pass. Returns -1 after reporting a
 * violation, naming the pass. */
static int check_conds(struct pm *pm, const struct pm_pass *p, void *ir, bool post, void **snaps)
{
	const struct pm_registry *reg = pm->reg;
	for (size_t c = 0; c < reg->nconds; c++) {
		const struct pm_cond *k = &reg->conds[c];
		if (!(p->flags & k->flag) || k->post != post)
			continue;
		if (k->check(ir, pm->user, snaps ? snaps[c] : NULL, pm->diag)) {
			diag_error(pm->diag, LOC_NONE, "%s of pass '%s' violated: %s",
				   post ? "postcondition" : "precondition", p->name, k->name);
			return -1;
		}
	}
	return 0;
}

static void free_snaps(const struct pm_registry *reg, void **snaps)
{
	for (size_t c = 0; c < reg->nconds; c++)
		if (snaps[c])
			reg->conds[c].snapshot_free(snaps[c]);
	free(snaps);
}

/* One run of one pass: conditions, dumps, timing, error check,
 * verification. */
static int run_pass(struct pm *pm, const struct pm_entry *en, void *ir, unsigned depth)
{
	const struct pm_pass *p = en->pass;
	size_t idx = (size_t)(p - pm->reg->passes);
	if (check_conds(pm, p, ir, false, NULL))
		return -1;
	void **snaps = NULL;
	if (pm->reg->nconds) {
		snaps = xcalloc(pm->reg->nconds, sizeof(void *));
		for (size_t c = 0; c < pm->reg->nconds; c++)
			if ((p->flags & pm->reg->conds[c].flag) && pm->reg->conds[c].post && pm->reg->conds[c].snapshot)
				snaps[c] = pm->reg->conds[c].snapshot(ir, pm->user);
	}
	if (pm->print_before_all || pm->print_before[idx])
		dump(pm, ir, "Before", p->name);
	debug_line(pm, depth, "Running pass: %s", p->name);
	struct pm_ctx ctx = {pm, pm->diag, pm->user, p, en};
	int errors = pm->diag->nerrors;
	double t0 = now_seconds();
	bool changed = p->run(ir, &ctx);
	pm->seconds[idx] += now_seconds() - t0;
	pm->runs[idx]++;
	if (pm->diag->nerrors > errors) {
		diag_error(pm->diag, LOC_NONE, "pass '%s' failed", p->name);
		if (snaps)
			free_snaps(pm->reg, snaps);
		return -1;
	}
	int post = check_conds(pm, p, ir, true, snaps);
	if (snaps)
		free_snaps(pm->reg, snaps);
	if (post)
		return -1;
	if (pm->print_after_all || pm->print_after[idx])
		dump(pm, ir, "After", p->name);
	if (pm->verify_each) {
		debug_line(pm, depth, "Verifying after pass: %s", p->name);
		if (pm->reg->verify(ir, pm->diag)) {
			diag_error(pm->diag, LOC_NONE, "verifier failed after pass '%s'", p->name);
			return -1;
		}
	}
	return changed ? 1 : 0;
}

static int run_entry(struct pm *pm, const struct pm_entry *e, void *ir, unsigned depth);

static int run_once(struct pm *pm, const struct pm_entry *e, void *ir, unsigned depth)
{
	if (e->pass)
		return run_pass(pm, e, ir, depth);
	int changed = 0;
	for (size_t i = 0; i < e->nkids; i++) {
		int r = run_entry(pm, &e->kids[i], ir, depth + 1);
		if (r < 0)
			return -1;
		changed |= r;
	}
	return changed;
}

static int run_entry(struct pm *pm, const struct pm_entry *e, void *ir, unsigned depth)
{
	if (e->pass && (e->pass->flags & pm->skip_flags)) {
		debug_line(pm, depth, "Skipping pass: %s", e->pass->name);
		return 0;
	}
	if (!e->pass && *e->name)
		debug_line(pm, depth, "Running pipeline: %s", e->name);
	if (!(e->flags & PM_FIXED_POINT))
		return run_once(pm, e, ir, depth);
	int changed = 0;
	for (unsigned it = 0; it < pm->max_iterations; it++) {
		int r = run_once(pm, e, ir, depth);
		if (r <= 0)
			return r < 0 ? -1 : changed;
		changed = 1;
	}
	diag_warning(pm->diag, LOC_NONE, "%s '%s' did not reach a fixed point after %u iterations",
		     e->pass ? "pass" : "pipeline", e->name, pm->max_iterations);
	return changed;
}

int pm_run(struct pm *pm, void *ir)
{
	if (pm->debug && pm->root.nkids)
		fputs("Running pipeline\n", pm->err);
	return run_once(pm, &pm->root, ir, 0) < 0 ? -1 : 0;
}

/* ---- statistics ---- */

void pm_stat_add(struct pm_ctx *ctx, const char *desc, uint64_t n)
{
	struct pm *pm = ctx->pm;
	for (size_t i = 0; i < pm->stats.len; i++) {
		struct pm_stat *s = &pm->stats.data[i];
		if (s->group == ctx->pass->name && strcmp(s->desc, desc) == 0) {
			s->value += n;
			return;
		}
	}
	struct pm_stat s = {ctx->pass->name, desc, n};
	vec_push(&pm->stats, s);
}

static const char *const pm_rule =
	"===-------------------------------------------------------------------------===\n";

/* The banner of a report: a rule, the title centred in 80 columns, a rule. */
static void banner(FILE *out, const char *title)
{
	int pad = (80 - (int)strlen(title)) / 2;
	fputs(pm_rule, out);
	fprintf(out, "%*s%s\n", pad > 0 ? pad : 0, "", title);
	fputs(pm_rule, out);
}

static int stat_cmp(const void *a, const void *b)
{
	const struct pm_stat *x = a, *y = b;
	int c = strcmp(x->group, y->group);
	return c ? c : strcmp(x->desc, y->desc);
}

void pm_print_stats(const struct pm *pm, FILE *out)
{
	size_t n = 0;
	struct pm_stat *v = xmalloc((pm->stats.len + 1) * sizeof(*v));
	int vw = 3, gw = 0;
	for (size_t i = 0; i < pm->stats.len; i++) {
		if (!pm->stats.data[i].value)
			continue;
		v[n] = pm->stats.data[i];
		char b[32];
		int w = snprintf(b, sizeof b, "%llu", (unsigned long long)v[n].value);
		if (w > vw)
			vw = w;
		if ((int)strlen(v[n].group) > gw)
			gw = (int)strlen(v[n].group);
		n++;
	}
	if (n) {
		qsort(v, n, sizeof(*v), stat_cmp);
		banner(out, "... Statistics Collected ...");
		fputc('\n', out);
		for (size_t i = 0; i < n; i++)
			fprintf(out, "%*llu %-*s - %s\n", vw, (unsigned long long)v[i].value, gw, v[i].group,
				v[i].desc);
		fputc('\n', out);
	}
	free(v);
}

/* ---- timing ---- */

struct timing_row {
	const char *name;
	double secs;
};

static int timing_cmp(const void *a, const void *b)
{
	const struct timing_row *x = a, *y = b;
	if (x->secs != y->secs)
		return x->secs < y->secs ? 1 : -1;
	return strcmp(x->name, y->name);
}

void pm_print_timing(const struct pm *pm, FILE *out)
{
	size_t n = 0;
	double total = 0;
	struct timing_row *rows = xmalloc((pm->reg->npasses + 1) * sizeof(*rows));
	for (size_t i = 0; i < pm->reg->npasses; i++) {
		if (!pm->runs[i])
			continue;
		rows[n].name = pm->reg->passes[i].name;
		rows[n].secs = pm->seconds[i];
		total += pm->seconds[i];
		n++;
	}
	if (n) {
		qsort(rows, n, sizeof(*rows), timing_cmp);
		banner(out, "... Pass execution timing report ...");
		fprintf(out, "  Total Execution Time: %.4f seconds (%.4f wall clock)\n\n", total, total);
		fputs("   ---Wall Time---  --- Name ---\n", out);
		for (size_t i = 0; i < n; i++)
			fprintf(out, "  %7.4f (%5.1f%%)  %s\n", rows[i].secs,
				total > 0 ? 100.0 * rows[i].secs / total : 0.0, rows[i].name);
		fprintf(out, "  %7.4f (100.0%%)  Total\n\n", total);
	}
	free(rows);
}

/* ---- listing ---- */

void pm_print_list(const struct pm_registry *reg, FILE *out)
{
	int w = 0;
	for (size_t i = 0; i < reg->npasses; i++)
		if ((int)strlen(reg->passes[i].name) > w)
			w = (int)strlen(reg->passes[i].name);
	for (size_t i = 0; i < reg->npipelines; i++)
		if ((int)strlen(reg->pipelines[i].name) > w)
			w = (int)strlen(reg->pipelines[i].name);
	fputs("Passes:\n", out);
	for (size_t i = 0; i < reg->npasses; i++) {
		const struct pm_pass *p = &reg->passes[i];
		fprintf(out, "  %-*s - %s", w, p->name, p->desc);
		if (p->flags & PM_FIXED_POINT)
			fputs(" [fixed-point]", out);
		for (size_t f = 0; f < reg->nflag_names; f++)
			if (p->flags & reg->flag_names[f].flag)
				fprintf(out, " [%s]", reg->flag_names[f].name);
		fputc('\n', out);
		pm_opts_print_list(reg, p, out);
	}
	int cw = 0;
	for (size_t i = 0; i < reg->npipelines; i++)
		if ((int)strlen(reg->pipelines[i].contents) > cw)
			cw = (int)strlen(reg->pipelines[i].contents);
	if (cw < 6)
		cw = 6;
	fputs("Pipelines:\n", out);
	for (size_t i = 0; i < reg->npipelines; i++) {
		const struct pm_pipeline *p = &reg->pipelines[i];
		fprintf(out, "  %-*s = %-*s - %s%s\n", w, p->name, cw, *p->contents ? p->contents : "(none)", p->desc,
			p->flags & PM_FIXED_POINT ? " [fixed-point]" : "");
	}
}
