/* profile.c - glow-run -profile=FILE: runs a program instrumented by
 * glow-opt -precision=profile over one input set or a calibration set and
 * writes (or accumulates into) the quantization profile
 * (docs/Quantization.md).
 *
 * Inputs: every -input NAME=FILE of one name is one example of that input,
 * in order; a single .npy or .pb of one more leading dimension than the
 * placeholder is a batch, one example per leading index. Every input must
 * have the same number of examples; the program runs once per example.
 *
 * The histogram and range placeholders of the QuantizationProfile
 * instructions are bound here (they are not -input's): zeros at first, or
 * the entries of FILE when it exists, so a second run accumulates (the
 * kernel re-bins the old counts when the range grows: each old bin's count
 * moves to the new bin holding its centre). FILE must then profile values
 * of this program with the same bin count; any other entry is an error at
 * its line. The profile is written whole or not at all; the program's own
 * outputs are not printed in this mode.
 */
#define _POSIX_C_SOURCE 200809L
#include "runner/runner.h"
#include "import/onnx/tensorio.h"
#include "quant/quant.h"
#include "support/util.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* One QuantizationProfile instruction's buffers. */
struct rp_value {
	const char *name;
	int64_t output;
	struct ir_weight *hist, *info;
	size_t nbins;
};

/* One input placeholder and its examples. */
struct rp_input {
	struct ir_weight *w;
	uint8_t **ex; /* nex example buffers (batch: views into one buffer) */
	size_t nex;
	uint8_t *batch; /* the batch's data, or NULL */
};

struct rp {
	struct diag *d;
	struct rp_value *vals;
	size_t nvals;
	struct rp_input *ins;
	size_t nins;
};

static struct ir_weight *rp_weight(struct ir_value *v)
{
	struct ir_value *root = ir_value_root(v, NULL);
	return root && root->vkind == IV_WEIGHT ? (struct ir_weight *)(void *)root : NULL;
}

static bool rp_is_buffer(const struct rp *p, const struct ir_weight *w)
{
	for (size_t i = 0; i < p->nvals; i++)
		if (p->vals[i].hist == w || p->vals[i].info == w)
			return true;
	return false;
}

/* The profiled values of f, in program order; -1 after reporting a
 * function with none. */
static int rp_collect(struct rp *p, struct ir_func *f)
{
	size_t cap = 0;
	int ni = instr_attr_slot(IK_quantizationprofile, AN_profiled_node_name);
	int oi = instr_attr_slot(IK_quantizationprofile, AN_profiled_output);
	ir_for_each_instr(f, in) {
		if (in->kind != IK_quantizationprofile)
			continue;
		struct ir_weight *h = rp_weight(in->ops[1].val), *i = rp_weight(in->ops[2].val);
		if (!h || !i || h->is_const || i->is_const) {
			diag_error(p->d, in->v.loc, "a profile's histogram and range must be placeholders");
			return -1;
		}
		p->vals = xgrow(p->vals, &cap, p->nvals + 1, sizeof *p->vals);
		struct rp_value *v = &p->vals[p->nvals++];
		v->name = in->attrs[ni].s;
		v->output = in->attrs[oi].i;
		v->hist = h;
		v->info = i;
		v->nbins = (size_t)type_numel(h->v.type);
	}
	if (!p->nvals) {
		diag_error(p->d, LOC_NONE, "-profile: @%s has no QuantizationProfile (instrument it with glow-opt -precision=profile)",
			   f->name);
		return -1;
	}
	return 0;
}

/* Reads one -input file for w: an example, or a batch of examples. */
static int rp_read(struct rp *p, struct rp_input *in, const char *file)
{
	struct tio_tensor t;
	if (tio_read(file, &t, p->d))
		return -1;
	const struct type *ty = in->w->v.type;
	size_t bytes = (size_t)type_bytes(ty);
	char msg[512];
	const char *bad = tio_mismatch(&t, ty, msg, sizeof msg);
	bool batch = false;
	if (bad && t.rank == (unsigned)ty->rank + 1u && t.dtype == tio_dtype_of((enum elem_kind)ty->elem) &&
	    memcmp(t.dims + 1, ty->dims, ty->rank * sizeof *ty->dims) == 0 && t.dims[0] > 0)
		batch = true;
	else if (bad) {
		diag_error(p->d, LOC_NONE, "input '%s': %s: %s", in->w->v.name, file, bad);
		tio_free(&t);
		return -1;
	}
	if ((batch && in->nex) || in->batch) {
		diag_error(p->d, LOC_NONE, "input '%s': %s %s: a batch file must be the input's only file", in->w->v.name,
			   file, in->batch ? "follows a batch file" : "is a batch but other files came first");
		tio_free(&t);
		return -1;
	}
	size_t n = batch ? (size_t)t.dims[0] : 1;
	in->ex = xrealloc(in->ex, (in->nex + n) * sizeof *in->ex);
	if (batch) {
		in->batch = t.data;
		for (size_t k = 0; k < n; k++)
			in->ex[in->nex++] = in->batch + k * bytes;
	} else
		in->ex[in->nex++] = t.data;
	t.data = NULL;
	tio_free(&t);
	return 0;
}

/* Groups the -input bindings by placeholder; -1 after reporting. */
static int rp_inputs(struct rp *p, struct ir_func *f, const struct cl_list *inputs)
{
	size_t nio;
	struct backend_io *io = backend_func_io(f, &nio);
	p->ins = xcalloc(nio + 1, sizeof *p->ins);
	for (size_t i = 0; i < nio; i++)
		if (io[i].is_input && !rp_is_buffer(p, io[i].w))
			p->ins[p->nins++].w = io[i].w;
	free(io);
	int errs = 0;
	for (size_t i = 0; i < inputs->n && !errs; i++) {
		const char *arg = inputs->v[i], *eq = strrchr(arg, '=');
		if (!eq || eq == arg || !eq[1]) {
			diag_error(p->d, LOC_NONE, "-input takes NAME=FILE, got '%s'", arg);
			errs++;
			break;
		}
		size_t len = (size_t)(eq - arg);
		struct rp_input *in = NULL;
		for (size_t k = 0; k < p->nins && !in; k++)
			if (strlen(p->ins[k].w->v.name) == len && memcmp(p->ins[k].w->v.name, arg, len) == 0)
				in = &p->ins[k];
		if (!in) {
			diag_error(p->d, LOC_NONE, "no input placeholder named '%.*s' in function @%s", (int)len, arg,
				   f->name);
			errs++;
		} else
			errs += rp_read(p, in, eq + 1) != 0;
	}
	for (size_t k = 0; k < p->nins && !errs; k++) {
		if (!p->ins[k].nex) {
			diag_error(p->d, LOC_NONE, "no value for input '%s' (use -input %s=FILE)", p->ins[k].w->v.name,
				   p->ins[k].w->v.name);
			errs++;
		} else if (p->ins[k].nex != p->ins[0].nex) {
			diag_error(p->d, LOC_NONE, "input '%s' has %zu examples but '%s' has %zu: a calibration set gives every input the same number",
				   p->ins[k].w->v.name, p->ins[k].nex, p->ins[0].w->v.name, p->ins[0].nex);
			errs++;
		}
	}
	return errs ? -1 : 0;
}

/* Seeds the buffers from an existing profile at path; -1 after reporting a
 * mismatch at the entry. */
static int rp_seed(struct rp *p, const char *path, float **hist, float **info)
{
	struct stat st;
	if (stat(path, &st) != 0)
		return 0; /* a new profile */
	struct qprofile prof;
	if (qprofile_read(&prof, path, p->d))
		return -1;
	int rc = 0;
	for (size_t i = 0; i < prof.n && !rc; i++) {
		const struct qp_entry *e = &prof.v[i];
		size_t k = 0;
		while (k < p->nvals && !(p->vals[k].output == e->output && strcmp(p->vals[k].name, e->name) == 0))
			k++;
		if (k == p->nvals) {
			diag_error(p->d, e->loc, "the profile names value \"%s\" result %lld, which the program does not profile",
				   e->name, (long long)e->output);
			rc = -1;
		} else if (e->nbins != p->vals[k].nbins) {
			diag_error(p->d, e->loc, "value \"%s\" has a histogram of %zu bins, but the program's has %zu", e->name,
				   e->nbins, p->vals[k].nbins);
			rc = -1;
		} else {
			memcpy(hist[k], e->hist, e->nbins * sizeof(float));
			info[k][0] = e->min;
			info[k][1] = e->max;
		}
	}
	qprofile_free(&prof);
	return rc;
}

int runner_profile(const struct run_options *o, const struct backend *be, struct ir_func *f, struct stages *st,
		   struct diag *d)
{
	struct rp p = {d, NULL, 0, NULL, 0};
	struct backend_compiled *c = NULL;
	float **hist = NULL, **info = NULL;
	struct backend_binding *binds = NULL;
	void **outs = NULL;
	size_t nio = 0;
	struct backend_io *io = NULL;
	int status = 1;
	if (o->output || o->output_dir || o->expected.n || o->expected_dir || o->print) {
		diag_error(d, LOC_NONE, "-profile writes the profile only: it cannot be combined with -o, -output-dir, "
					"-print or -expected");
		return 1;
	}
	if (rp_collect(&p, f) || rp_inputs(&p, f, &o->inputs))
		goto out;
	hist = xcalloc(p.nvals + 1, sizeof *hist);
	info = xcalloc(p.nvals + 1, sizeof *info);
	for (size_t k = 0; k < p.nvals; k++) {
		hist[k] = xcalloc(p.vals[k].nbins + 1, sizeof(float));
		info[k] = xcalloc(2, sizeof(float));
	}
	if (rp_seed(&p, o->profile, hist, info))
		goto out;
	stages_mark(st, "read inputs");
	c = runner_compile(be, f, o->ignore_plan, o->gemm, o->winograd, st, d);
	if (!c)
		goto out;
	io = backend_func_io(f, &nio);
	binds = xcalloc(nio + 1, sizeof *binds);
	outs = xcalloc(nio + 1, sizeof *outs);
	for (size_t ex = 0; ex < p.ins[0].nex || (p.nins == 0 && ex == 0); ex++) {
		size_t nb = 0;
		for (size_t i = 0; i < nio; i++) {
			struct ir_weight *w = io[i].w;
			void *data = NULL;
			for (size_t k = 0; k < p.nvals && !data; k++)
				data = w == p.vals[k].hist ? (void *)hist[k] : w == p.vals[k].info ? (void *)info[k] : NULL;
			for (size_t k = 0; k < p.nins && !data; k++)
				if (w == p.ins[k].w)
					data = p.ins[k].ex[ex];
			if (!data && io[i].is_output) {
				if (!outs[i]) {
					outs[i] = tensor_alloc(type_bytes(w->v.type), "output", d);
					if (!outs[i])
						goto out;
				}
				data = outs[i];
			}
			if (data) {
				binds[nb].w = w;
				binds[nb].data = data;
				nb++;
			}
		}
		if (be->run(c, binds, nb, d))
			goto out;
		if (p.nins == 0)
			break;
	}
	stages_mark(st, "run");
	struct qprofile prof;
	qprofile_init(&prof);
	for (size_t k = 0; k < p.nvals; k++)
		qprofile_add(&prof, p.vals[k].name, p.vals[k].output, info[k][0], info[k][1], hist[k], p.vals[k].nbins);
	status = qprofile_write(&prof, o->profile, d) ? 1 : 0;
	qprofile_free(&prof);
	stages_mark(st, "write");
out:
	if (c)
		be->destroy(c);
	for (size_t k = 0; k < p.nvals && hist; k++) {
		free(hist[k]);
		free(info[k]);
	}
	free(hist);
	free(info);
	for (size_t i = 0; i < nio && outs; i++)
		free(outs[i]);
	free(outs);
	free(binds);
	free(io);
	for (size_t k = 0; k < p.nins; k++) {
		if (p.ins[k].batch)
			free(p.ins[k].batch);
		else
			for (size_t e = 0; e < p.ins[k].nex; e++)
				free(p.ins[k].ex[e]);
		free(p.ins[k].ex);
	}
	free(p.ins);
	free(p.vals);
	return status;
}
