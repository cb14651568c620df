/* diff.c - glow-diff's driver: parses the module twice, runs the pipeline
 * on one copy, generates, compiles and runs both on the same seeded random
 * inputs, and reports every output's comparison (the behaviour is described
 * in tools/glow-diff/glow-diff.c).
 */
#include "runner/runner.h"
#include "backends/c/cbackend.h"
#include "backends/interpreter/interp.h"
#include "irgen/irgen.h"
#include "iropt/iropt.h"
#include "passes/pass.h"
#include "passes/passcli.h"
#include "passes/target.h"
#include "support/fp16.h"
#include "support/hashmap.h"
#include "support/io.h"
#include "support/rng.h"
#include "support/util.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- random numbers ---- */

/* The generator state of a named tensor: seed, run and name together. */
static uint64_t stream(uint64_t seed, uint64_t run, const char *name)
{
	uint64_t s = seed * 0x9e3779b97f4a7c15ULL ^ (run + 1) * 0xd1b54a32d192ed03ULL;
	s ^= hash_bytes(name, strlen(name));
	rng_next(&s);
	return s;
}

/* ---- -randomize-constants ---- */

static void randomize_constants(struct module *m, uint64_t seed)
{
	module_for_each_global(m, g) {
		struct constant *c = as_constant(g);
		if (!c || (c->init != INIT_SPLAT && c->init != INIT_ZERO))
			continue;
		const struct type *t = node_type(g);
		if (!elem_is_float((enum elem_kind)t->elem) || type_numel(t) == 0)
			continue;
		uint64_t n = type_numel(t), s = stream(seed, ~(uint64_t)0, g->name);
		double v = c->init == INIT_SPLAT ? c->splat_f : 0.0;
		/* written in place (the fully-connected weights of VGG-19 are
		 * 400 MB), float32 directly: the same values as tensor_set_real */
		uint8_t *p = constant_alloc_data(m, c);
		float *pf = t->elem == EK_FLOAT ? (float *)p : NULL;
		if (t->rank >= 2) {
			double fan_in = (double)(n / t->dims[0]);
			double r = sqrt(3.0 / (fan_in > 0 ? fan_in : 1.0));
			for (uint64_t i = 0; i < n; i++) {
				double x = (2.0 * rng_unit(&s) - 1.0) * r;
				if (pf)
					pf[i] = (float)x;
				else
					tensor_set_real(t, p, i, x);
			}
		} else {
			for (uint64_t i = 0; i < n; i++)
				tensor_set_real(t, p, i, v != 0 ? v * (0.5 + rng_unit(&s)) : (2.0 * rng_unit(&s) - 1.0) * 0.1);
		}
	}
}

/* ---- inputs ---- */

/* The exclusive upper bound of valid values for integer placeholder name,
 * from its uses in the graph module (4 when none bounds it). */
static uint64_t index_bound(struct module *m, const char *name)
{
	struct node *g = module_find_global(m, name);
	uint64_t b = 0;
	if (!g)
		return 4;
	for (struct use *u = g->uses; u; u = u->next) {
		struct node *user = use_user(u);
		uint64_t x = 0;
		if (user->kind == NK_Gather && u->idx == 1) {
			const struct type *dt = op_type(user, 0);
			int64_t axis = node_int(user, AN_axis);
			if (axis >= 0 && (unsigned)axis < dt->rank)
				x = dt->dims[axis];
		} else if (user->kind == NK_GatherND && u->idx == 1) {
			const struct type *dt = op_type(user, 0);
			for (unsigned i = 0; i < dt->rank; i++)
				if (!x || dt->dims[i] < x)
					x = dt->dims[i];
		} else if (user->kind == NK_CrossEntropyLoss && u->idx == 1) {
			const struct type *pt = op_type(user, 0);
			x = pt->rank ? pt->dims[pt->rank - 1] : 1;
		}
		if (x && (!b || x < b))
			b = x;
	}
	return b ? b : 4;
}

/* Fills an input buffer of type t for placeholder name, run `run`. */
static void fill_input(struct module *m, const struct type *t, const char *name, uint64_t seed, unsigned run,
		       uint8_t *p)
{
	enum elem_kind k = (enum elem_kind)t->elem;
	uint64_t n = type_numel(t), s = stream(seed, run, name);
	size_t es = elem_size(k);
	if (elem_is_float(k)) {
		for (uint64_t i = 0; i < n; i++)
			tensor_set_real(t, p, i, 2.0 * rng_unit(&s) - 1.0);
		return;
	}
	uint64_t bound = k == EK_BOOL ? 2 : elem_is_quantized(k) ? 0 : index_bound(m, name);
	for (uint64_t i = 0; i < n; i++) {
		uint64_t r = rng_next(&s);
		int64_t v = bound ? (int64_t)(r % bound) : (int64_t)r;
		switch (es) {
		case 1: p[i] = (uint8_t)v; break;
		case 2: { int16_t x = (int16_t)v; memcpy(p + i * 2, &x, 2); break; }
		case 4: { int32_t x = (int32_t)v; memcpy(p + i * 4, &x, 4); break; }
		default: memcpy(p + i * 8, &v, 8); break;
		}
	}
}

/* ---- comparison ---- */

/* Compares output `name` (a: original, b: transformed); writes one line to
 * rep; returns true if it matches. */
static bool compare(const struct diff_options *o, struct ostream *rep, const char *fname, unsigned run,
		    const char *name, const struct type *t, const uint8_t *a, const uint8_t *b)
{
	struct tensor_cmp c;
	tensor_compare(t, b, a, &o->tol, &c);
	char ix[160] = "-";
	if (c.have)
		tensor_index_str(t, c.worst, ix, sizeof ix);
	os_printf(rep, "@%s run %u output '%s': ", fname, run, name);
	if (c.exact) {
		if (!c.bad)
			os_printf(rep, "ok (%" PRIu64 " elements, exact)\n", c.n);
		else
			os_printf(rep, "MISMATCH: %" PRIu64 " of %" PRIu64 " elements differ; first at %s\n", c.bad,
				  c.n, ix);
		return c.bad == 0;
	}
	char es1[48] = "0", va[48] = "-", vb[48] = "-";
	if (c.have) {
		format_double(es1, sizeof es1, c.worst_err);
		format_double(va, sizeof va, tensor_real(t, a, c.worst));
		format_double(vb, sizeof vb, tensor_real(t, b, c.worst));
	}
	if (!c.bad && !c.have)
		os_printf(rep, "ok (%" PRIu64 " elements, identical)\n", c.n);
	else if (!c.bad)
		os_printf(rep, "ok (%" PRIu64 " elements, worst error %s at %s)\n", c.n, es1, ix);
	else
		os_printf(rep,
			  "MISMATCH: %" PRIu64 " of %" PRIu64 " elements differ; worst at %s: before %s, after %s, "
			  "error %s\n",
			  c.bad, c.n, ix, va, vb, es1);
	return c.bad == 0;
}

/* ---- running ---- */

/* One side: the compiled function and its placeholders. */
struct side {
	const struct backend *be;
	struct ir_func *f;
	struct backend_compiled *c;
	struct backend_io *io;
	size_t nio;
	uint8_t **data;
};

static int side_open(struct side *s, struct ir_func *f, const struct backend *be, struct stages *st,
		     struct diag *d)
{
	memset(s, 0, sizeof *s);
	s->be = be;
	s->f = f;
	s->io = backend_func_io(f, &s->nio);
	s->data = xcalloc(s->nio + 1, sizeof *s->data);
	for (size_t i = 0; i < s->nio; i++) {
		/* sizes are the program's: too large is bad input, not a crash */
		char what[300];
		snprintf(what, sizeof what, "placeholder '%s' of @%s", s->io[i].w->v.name, f->name);
		s->data[i] = tensor_alloc(type_bytes(s->io[i].w->v.type) + 8, what, d);
		if (!s->data[i])
			return -1;
	}
	s->c = runner_compile(be, f, true, CBACKEND_GEMM_BUILTIN, CBACKEND_WINO_AUTO, st, d);
	return s->c ? 0 : -1;
}

static void side_close(struct side *s)
{
	if (s->c)
		s->be->destroy(s->c);
	for (size_t i = 0; i < s->nio && s->data; i++)
		free(s->data[i]);
	free(s->data);
	free(s->io);
}

/* Fills the inputs of run `run` and executes; 0 or -1 after reporting. */
static int side_run(struct side *s, struct module *gm, const struct diff_options *o, unsigned run, struct diag *d)
{
	struct backend_binding *b = xcalloc(s->nio + 1, sizeof *b);
	size_t nb = 0;
	for (size_t i = 0; i < s->nio; i++) {
		if (!s->io[i].is_input && !s->io[i].is_output)
			continue;
		if (s->io[i].is_input)
			fill_input(gm, s->io[i].w->v.type, s->io[i].w->v.name, o->seed, run, s->data[i]);
		b[nb].w = s->io[i].w;
		b[nb].data = s->data[i];
		nb++;
	}
	int rc = s->be->run(s->c, b, nb, d);
	free(b);
	return rc;
}

/* Runs be's own -O2 instruction IR pipeline, if it has one, on m (the
 * functions generated so far); 0, or -1 after reporting. */
static int backend_ir_pipeline(const struct backend *be, struct ir_module *m, struct diag *d)

{
	if (!be->ir_pipelines[2])
		return 0;
	struct iropt_ctx ctx = {d, NULL};
	struct pm pm;
	pm_init(&pm, &ir_pass_registry, d, &ctx);
	int rc = pm_add_text(&pm, be->ir_pipelines[2]) || pm_run(&pm, m) || ir_module_verify(m, d) ? -1 : 0;
	pm_free(&pm);
	return rc;
}

/* Generates, compiles and runs every function of a (original) and its
 * namesake in b; returns the number of mismatching outputs, or -1. */
static int diff_modules(const struct diff_options *o, struct module *a, struct module *b, const char *in,
			struct ostream *rep, struct stages *st, struct diag *d)
{
	struct ir_module *ia = ir_module_create(a->types), *ib = ir_module_create(b->types);
	ir_module_set_base_dir(ia, in);
	ir_module_set_base_dir(ib, in);
	int mism = 0;
	for (size_t fi = 0; fi < a->nfuncs && mism >= 0; fi++) {
		struct func *fa = a->funcs[fi], *fb = module_find_func(b, fa->name);
		if (!fb) {
			diag_error(d, LOC_NONE, "function @%s is gone after the pipeline", fa->name);
			mism = -1;
			break;
		}
		struct ir_func *xa = irgen_func(ia, fa, d), *xb = xa ? irgen_func(ib, fb, d) : NULL;
		stages_mark(st, "irgen");
		int prc = xb ? backend_ir_pipeline(o->after_be, ib, d) : -1;
		stages_mark(st, "IR passes");
		if (prc) {
			mism = -1;
			break;
		}
		struct side sa, sb;
		int ok = side_open(&sa, xa, &interp_backend, st, d);
		ok |= side_open(&sb, xb, o->after_be, st, d);
		for (unsigned r = 0; r < o->runs && ok == 0; r++) {
			int rrc = side_run(&sa, a, o, r, d) || side_run(&sb, b, o, r, d);
			stages_mark(st, "run");
			if (rrc) {
				ok = -1;
				break;
			}
			for (size_t i = 0; i < sa.nio; i++) {
				if (!sa.io[i].is_output)
					continue;
				const struct ir_weight *wa = sa.io[i].w;
				size_t j = 0;
				while (j < sb.nio && strcmp(sb.io[j].w->v.name, wa->v.name) != 0)
					j++;
				if (j == sb.nio || !sb.io[j].is_output || sb.io[j].w->v.type != wa->v.type) {
					os_printf(rep, "@%s run %u output '%s': MISMATCH: not written after the pipeline\n",
						  fa->name, r, wa->v.name);
					mism++;
					continue;
				}
				if (!compare(o, rep, fa->name, r, wa->v.name, wa->v.type, sa.data[i], sb.data[j]))
					mism++;
			}
			stages_mark(st, "compare");
		}
		side_close(&sa);
		side_close(&sb);
		if (ok)
			mism = -1;
	}
	ir_module_destroy(ia);
	ir_module_destroy(ib);
	return mism;
}

static int parse_num(struct diag *d, const char *opt, const char *s, double *out, bool integer)
{
	if (!s)
		return 0;
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	if (end == s || *end || errno || !(v >= 0) || isinf(v) || (integer && v != floor(v))) {
		diag_error(d, LOC_NONE, "-%s takes a non-negative %s, got '%s'", opt, integer ? "integer" : "number", s);
		return -1;
	}
	*out = v;
	return 0;
}

int runner_glow_diff(void *opts, struct diag *d)
{
	struct diff_options *o = opts;
	double seed = 1, runs = 1;
	if (tensor_tol_parse(&o->tol, d) || parse_num(d, "seed", o->seed_s, &seed, true) ||
	    parse_num(d, "runs", o->runs_s, &runs, true))
		return 1;
	if (runs < 1 || runs > 1000) {
		diag_error(d, LOC_NONE, "-runs takes a number from 1 to 1000, got '%s'", o->runs_s);
		return 1;
	}
	o->seed = (uint64_t)seed;
	o->runs = (unsigned)runs;
	if (pass_cli_check_pipeline(o->passes, o->olevel, o->fp16, o->bf16, d))
		return 1;
	if (!o->passes && o->olevel < 0 && !o->fp16 && !o->bf16) {
		diag_error(d, LOC_NONE, "no pipeline to check: give -passes=, -O<level> or -convert-to-fp16");
		return 1;
	}
	const char *in = o->input.n ? o->input.v[0] : "-";
	struct pass_ctx ctx;
	memset(&ctx, 0, sizeof ctx);
	ctx.diag = d;
	ctx.mode = (enum pass_mode)o->mode;
	ctx.keep_float = o->keep_float;
	struct pass_target target = {NULL, "interpreter", NULL, false};
	o->after_be = &interp_backend;
	if (o->backend > 0) {
		ctx.backend = target.name = backend_name(0, o->backend);
		if (!(target.backend = o->after_be = backend_select(0, o->backend, "glow-diff", d)))
			return 1;
		/* -convert-to-fp16/bf16 after the pipeline sees generic kinds only */
		target.no_backend_nodes = o->fp16 || o->bf16;
		ctx.target = &target;
	}
	struct pm pm;
	pm_init(&pm, &graph_pass_registry, d, &ctx);
	if (ctx.mode == PASS_MODE_TRAIN)
		pm.skip_flags |= PASS_INFER_ONLY;
	int bad = pass_cli_pipeline(&pm, o->passes, o->olevel, o->fp16, o->bf16);
	char *buf = NULL;
	size_t len = 0;
	if (bad || read_input(in, &buf, &len, d)) {
		pm_free(&pm);
		return 1;
	}
	struct stages st;
	stages_init(&st, o->time);
	struct type_ctx types;
	type_ctx_init(&types);
	const char *name = strcmp(in, "-") == 0 ? "<stdin>" : in;
	struct module *a = module_parse(&types, buf, len, name, d, true);
	struct module *b = a ? module_parse(&types, buf, len, name, d, false) : NULL;
	stages_mark(&st, "read");
	int status = 1;
	if (b) {
		module_set_base_dir(a, in);
		module_set_base_dir(b, in);
		if (o->randomize) {
			randomize_constants(a, o->seed);
			randomize_constants(b, o->seed);
		}
		int prc = pm_run(&pm, b) || module_verify(b, d);
		stages_mark(&st, "passes");
		/* the report is the result: written whole to -o (or stdout) after
		 * a mismatch too, not at all after an error */
		struct ostream rep;
		if (prc == 0 && ostream_open(&rep, o->output, d) == 0) {
			int mism = diff_modules(o, a, b, strcmp(in, "-") == 0 ? NULL : in, &rep, &st, d);
			if (mism < 0)
				ostream_abort(&rep);
			else if (ostream_commit(&rep, d))
				mism = -1;
			stages_mark(&st, "write");
			if (mism > 0)
				diag_error(d, LOC_NONE, "%d output%s differ%s after the pipeline", mism, mism == 1 ? "" : "s",
					   mism == 1 ? "s" : "");
			else if (mism == 0)
				status = 0;
		}
	}
	stages_report(&st, "glow-diff");
	module_destroy(b);
	module_destroy(a);
	type_ctx_free(&types);
	free(buf);
	pm_free(&pm);
	return status;
}
