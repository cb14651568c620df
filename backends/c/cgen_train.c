/* cgen_train.c - the training bundle (docs/CBackend.md, "Training
 * bundles"): every function of a module that holds a training step @F_grad
 * and its model @F, in one NAME.c over one mutable-weights region, so that
 * the step's updates are the weights the next step and @F read.
 *
 * Layout. The functions' own memory plans place their placeholders
 * independently; here every placeholder gets one offset (by name, in the
 * order step, @F, the other functions, 64-byte aligned), which
 * cg_plan_offset returns through struct cg's shared_mut for every
 * function's weight. Activations are each function's plan; the region is
 * the largest of them, and the kernels' scratch and the run-time packed
 * filters (CB_PACK_OFF, one macro for the file) follow it at one offset for
 * all. The constants blob is shared: each function adds its constants.
 *
 * Entry points: NAME_train_step (@F_grad), NAME_run (@F), NAME_<G> for any
 * other function @G, and NAME_functions listing them with the use each
 * makes of each placeholder. NAME_init_weights puts glow-run's initial
 * values into the trained placeholders (cbackend_init_fan_in).
 */
#define _POSIX_C_SOURCE 200809L
#include "backends/c/cgen.h"
#include "support/util.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

uint64_t cbackend_init_fan_in(const struct type *t, const char *name)
{
	size_t nl = strlen(name);
	bool velocity = nl > 9 && strcmp(name + nl - 9, "_velocity") == 0;
	if (velocity || t->rank < 2 || t->elem != EK_FLOAT)
		return 0;
	uint64_t fan_in = t->dims[0];
	if (t->rank > 2) {
		fan_in = 1;
		for (unsigned i = 1; i < t->rank; i++)
			fan_in *= t->dims[i];
	}
	return fan_in ? fan_in : 1;
}

/* Whether f's name is base + "_grad". */
static bool is_step_of(const struct ir_func *f, const char *base)
{
	size_t l = strlen(base);
	return strncmp(f->name, base, l) == 0 && strcmp(f->name + l, "_grad") == 0;
}

int cbackend_find_training(struct ir_func *const *fs, size_t n, size_t *step, size_t *eval, struct diag *d)
{
	size_t found = 0;
	for (size_t i = 0; i < n; i++)
		for (size_t j = 0; j < n; j++)
			if (is_step_of(fs[i], fs[j]->name)) {
				if (found++ == 0)
					*step = i, *eval = j;
				else if (found == 2)
					diag_error(d, fs[i]->loc,
						   "the module holds several training steps (@%s and @%s); a training bundle "
						   "holds one: compile each pair alone (glow-irgen -func)",
						   fs[*step]->name, fs[i]->name);
			}
	return found > 1 ? -1 : found == 1;
}

/* The placeholders of every function, once each, and each function's use
 * of them. */
struct tb_layout {
	struct backend_io *ph; /* representative weight (the first declaration), union of the flags */
	size_t *first;         /* the function of that declaration */
	size_t n;
	char **use;            /* per function (bundle order): one of "iou-" per placeholder, NUL-terminated */
	struct u64map off;     /* every function's mutable weight -> offset + 1 */
	uint64_t size;
};

static size_t find_ph(const struct tb_layout *l, const char *name)
{
	for (size_t i = 0; i < l->n; i++)
		if (strcmp(l->ph[i].w->v.name, name) == 0)
			return i;
	return l->n;
}

/* Builds l over the functions fs (in bundle order); -1 after reporting a
 * placeholder whose type differs between two functions. */
static int layout(struct tb_layout *l, struct ir_func *const *fs, size_t nf, struct diag *d)
{
	memset(l, 0, sizeof *l);
	u64map_init(&l->off);
	l->use = xcalloc(nf + 1, sizeof *l->use);
	struct backend_io **io = xcalloc(nf + 1, sizeof *io);
	size_t *nio = xcalloc(nf + 1, sizeof *nio), cap = 0, fcap = 0;
	int rc = 0;
	for (size_t k = 0; k < nf; k++) {
		io[k] = backend_func_io(fs[k], &nio[k]);
		for (size_t i = 0; i < nio[k]; i++) {
			struct ir_weight *w = io[k][i].w;
			size_t j = find_ph(l, w->v.name);
			if (j == l->n) {
				l->ph = xgrow(l->ph, &cap, l->n + 1, sizeof *l->ph);
				l->first = xgrow(l->first, &fcap, l->n + 1, sizeof *l->first);
				l->first[l->n] = k;
				l->ph[l->n++] = (struct backend_io){w, false, false};
				l->size = (l->size + CG_ALIGN - 1) / CG_ALIGN * CG_ALIGN;
				ptrmap_put(&l->off, w, (void *)(uintptr_t)(l->size + 1));
				l->size += type_bytes(w->v.type);
			} else if (!type_same_shape(l->ph[j].w->v.type, w->v.type) || !type_same_elem(l->ph[j].w->v.type, w->v.type)) {
				char a[160], b[160];
				diag_error(d, w->v.loc, "placeholder %%%s is %s in @%s but %s in @%s; the functions of a training "
							"bundle share it", w->v.name, type_str(w->v.type, a, sizeof a), fs[k]->name,
					   type_str(l->ph[j].w->v.type, b, sizeof b), fs[l->first[j]]->name);
				rc = -1;
			}
			ptrmap_put(&l->off, w, ptrmap_get(&l->off, l->ph[j].w));
			l->ph[j].is_input |= io[k][i].is_input;
			l->ph[j].is_output |= io[k][i].is_output;
		}
	}
	for (size_t k = 0; k < nf; k++) {
		l->use[k] = xmalloc(l->n + 1);
		memset(l->use[k], '-', l->n);
		l->use[k][l->n] = 0;
		for (size_t i = 0; i < nio[k]; i++) {
			const struct backend_io *p = &io[k][i];
			l->use[k][find_ph(l, p->w->v.name)] = p->is_input && p->is_output ? 'u' : p->is_input ? 'i'
											  : p->is_output ? 'o' : '-';
		}
		free(io[k]);
	}
	free(io);
	free(nio);
	l->size = (l->size + CG_ALIGN - 1) / CG_ALIGN * CG_ALIGN;
	return rc;
}

static void layout_free(struct tb_layout *l, size_t nf)
{
	for (size_t k = 0; k < nf; k++)
		free(l->use[k]);
	free(l->use);
	free(l->ph);
	free(l->first);
	u64map_free(&l->off);
}

/* The names the bundle defines itself, which no function's entry may take. */
static const char *const reserved[] = {
	"run", "train_step", "init_mutable", "init_weights", "set_threads", "placeholders", "functions",
	"mutable_size", "activations_size", "constants", "profile_print", "placeholder", "function",
	"CONSTANT_SIZE", "MUTABLE_SIZE", "ACTIVATIONS_SIZE", "ALIGNMENT", "WEIGHTS_FILE", "NUM_PLACEHOLDERS",
	"NUM_FUNCTIONS",
};

/* The entry point names (malloc'd) of the functions in bundle order:
 * NAME_train_step, NAME_run, NAME_<G>; -1 after reporting a function whose
 * entry would clash with the bundle's own names or another entry. */
static int entry_names(struct ir_func *const *fs, size_t nf, const char *name, char **out, struct diag *d)
{
	int rc = 0;
	for (size_t k = 0; k < nf; k++) {
		char *id = cg_ident(fs[k]->name);
		const char *suffix = k == 0 ? "train_step" : k == 1 ? "run" : id;
		size_t n = strlen(name) + strlen(suffix) + 2;
		out[k] = xmalloc(n);
		snprintf(out[k], n, "%s_%s", name, suffix);
		for (size_t r = 0; k > 1 && r < GLOW_ARRAY_SIZE(reserved); r++)
			if (strcmp(id, reserved[r]) == 0) {
				diag_error(d, fs[k]->loc, "function @%s's entry point %s would clash with the training bundle's "
							  "own %s; rename the function",
					   fs[k]->name, out[k], out[k]);
				rc = -1;
			}
		for (size_t j = 0; j < k && rc == 0; j++)
			if (strcmp(out[j], out[k]) == 0) {
				diag_error(d, fs[k]->loc, "functions @%s and @%s would both have the entry point %s; rename one",
					   fs[j]->name, fs[k]->name, out[k]);
				rc = -1;
			}
		free(id);
	}
	return rc;
}

/* NAME_init_weights: glow-run's initial values of the placeholders the step
 * updates (cbackend_init_fan_in; the streams of splitmix64, seeded per
 * placeholder by its position among the step's placeholders, which are the
 * first of the table). Products and sums in separate statements, so that
 * no compiler contracts them into other roundings than glow-run's. */
static void write_init_weights(struct ostream *c, const char *name, const struct tb_layout *l)
{
	os_puts(c, "static void cb_init_uniform(float *p, uint64_t n, double limit, uint64_t s)\n{\n"
		   "\tfor (uint64_t i = 0; i < n; i++) {\n"
		   "\t\tuint64_t z = (s += 0x9e3779b97f4a7c15ULL);\n"
		   "\t\tz = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;\n"
		   "\t\tz = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;\n"
		   "\t\tz ^= z >> 31;\n"
		   "\t\tdouble u = (double)(z >> 11) * (1.0 / 9007199254740992.0);\n"
		   "\t\tu = 2.0 * u;\n\t\tu = u - 1.0;\n\t\tu = u * limit;\n"
		   "\t\tp[i] = (float)u;\n\t}\n}\n\n");
	os_printf(c, "void %s_init_weights(uint8_t *mutable_weights, uint64_t seed)\n{\n\t(void)mutable_weights;\n"
		     "\t(void)seed;\n",
		  name);
	for (size_t i = 0; i < l->n; i++) {
		if (l->use[0][i] != 'u')
			continue;
		const struct ir_weight *w = l->ph[i].w;
		uint64_t off = (uint64_t)(uintptr_t)ptrmap_get(&l->off, w) - 1, fan = cbackend_init_fan_in(w->v.type, w->v.name);
		if (fan)
			os_printf(c, "\tcb_init_uniform((float *)(mutable_weights + %" PRIu64 "), %" PRIu64
				     "u, sqrt(6.0 / (double)%" PRIu64 "), seed ^ (0xd1b54a32d192ed03ULL * %zuu));\n",
				  off, type_numel(w->v.type), fan, i + 1);
		else
			os_printf(c, "\tmemset(mutable_weights + %" PRIu64 ", 0, %" PRIu64 "u);\n", off, type_bytes(w->v.type));
	}
	os_puts(c, "}\n\n");
}

/* The training bundle's header: the common declarations, the functions'
 * table and entry points, the initializations. */
static void write_header(struct cg *g, struct ostream *h, const char *name, struct ir_func *const *fs, size_t nf,
			 const struct tb_layout *l, char *const *entries, bool embedded)
{
	char *up = xstrdup(name);
	for (char *c = up; *c; c++)
		if (*c >= 'a' && *c <= 'z')
			*c = (char)(*c - 'a' + 'A');
	os_printf(h, "/* %s.h - generated by the glow C backend: the training bundle of @%s and its\n"
		     " * training step @%s", name, fs[1]->name, fs[0]->name);
	for (size_t k = 2; k < nf; k++)
		os_printf(h, ", with @%s", fs[k]->name);
	os_puts(h, ".\n *\n"
		   " * One constants region (the weights file or the embedded array, read\n"
		   " * only), one mutable-weights region shared by every entry point (the\n"
		   " * data, the trained weights, their velocities and the outputs, at the\n"
		   " * offsets below) and one activations region (scratch, for one entry at a\n"
		   " * time). The caller allocates them; running allocates nothing. Call\n"
		   " * init_mutable once, then init_weights (or write the weights), then\n"
		   " * train_step per batch: the step updates the weights in place, and run\n"
		   " * evaluates the model with them.\n");
	if (g->gemm == CBACKEND_GEMM_OPENBLAS)
		os_puts(h, " *\n * Generated with -gemm=openblas: link with -lopenblas -lm.\n");
	os_printf(h, " */\n#ifndef %s_BUNDLE_H\n#define %s_BUNDLE_H\n\n#include <stddef.h>\n#include <stdint.h>\n\n", up, up);
	cg_write_placeholder_decls(g, h, name, l->ph, l->n);
	os_printf(h, "\n/* The entry points, each over the three regions; each returns 0, or -1 on\n"
		     " * a run-time error (an index out of range). use: one character per\n"
		     " * placeholder of %s_placeholders, 'i' read, 'o' written, 'u' read and\n"
		     " * written (updated in place), '-' not used. %s_functions[0] is the\n"
		     " * training step, [1] the model it was made from. */\n"
		     "struct %s_function {\n\tconst char *name; /* the function of the module */\n"
		     "\tint (*entry)(const uint8_t *constants, uint8_t *mutable_weights, uint8_t *activations);\n"
		     "\tconst char *use;\n};\n#define %s_NUM_FUNCTIONS %zuu\n"
		     "extern const struct %s_function %s_functions[%s_NUM_FUNCTIONS + 1];\n",
		  name, name, name, name, nf, name, name, name);
	for (size_t k = 0; k < nf; k++) {
		os_printf(h, "/* @%s%s */\n", fs[k]->name,
			  k == 0 ? ": one SGD step on the batch in the data placeholders"
			  : k == 1 ? ": the model and its loss (evaluation)" : "");
		os_printf(h, "int %s(const uint8_t *constants, uint8_t *mutable_weights, uint8_t *activations);\n",
			  entries[k]);
	}
	cg_write_thread_decl(h, name);
	os_printf(h, "/* Zeroes the mutable region and copies initial values from the constants. */\n"
		     "void %s_init_mutable(const uint8_t *constants, uint8_t *mutable_weights);\n"
		     "/* glow-run's initial values of the placeholders the step updates, from\n"
		     " * seed: He-style uniform values in +-sqrt(6 / fan_in) for float weights\n"
		     " * of rank 2 or more, zeros for biases and velocities (docs/Training.md) */\n"
		     "void %s_init_weights(uint8_t *mutable_weights, uint64_t seed);\n",
		  name, name);
	if (embedded)
		os_printf(h, "/* The constants region. */\nextern const uint8_t %s_constants[%s_CONSTANT_SIZE + 1];\n",
			  name, name);
	os_puts(h, "\n#endif\n");
	free(up);
}

/* Emits the bodies of every function into g[0..nf), which share the blob,
 * the generated names and the profiling slots (passed from one to the
 * next: g[nf - 1] ends up with them), the mutable layout and one scratch
 * offset. Returns the number of errors. */
static int emit_all(struct cg *g, struct ir_func *const *fs, size_t nf, struct tb_layout *l,
		    const struct cbackend_options *o, struct diag *d)
{
	uint64_t scratch_off = 0;
	for (size_t k = 0; k < nf; k++) {
		cg_begin(&g[k], fs[k], o, d);
		g[k].shared_mut = &l->off;
		g[k].prof_prefix = fs[k]->name;
		if (g[k].scratch_off > scratch_off)
			scratch_off = g[k].scratch_off;
	}
	int errors = 0;
	for (size_t k = 0; k < nf; k++) {
		g[k].scratch_off = scratch_off;
		if (k) {
			free(g[k].blob); /* cg_begin's reservation: the blob is the first's */
			g[k].blob = g[k - 1].blob, g[k].blob_len = g[k - 1].blob_len, g[k].blob_cap = g[k - 1].blob_cap;
			g[k].uniq = g[k - 1].uniq, g[k].nprof = g[k - 1].nprof;
			g[k - 1].blob = NULL;
		}
		cg_emit_body(&g[k]);
		errors += g[k].errors;
		if (d->stopped)
			break;
	}
	struct cg *last = &g[nf - 1];
	for (size_t k = 0; k + 1 < nf; k++) {
		last->scratch_bytes = g[k].scratch_bytes > last->scratch_bytes ? g[k].scratch_bytes : last->scratch_bytes;
		last->pack_bytes = g[k].pack_bytes > last->pack_bytes ? g[k].pack_bytes : last->pack_bytes;
	}
	last->mutable_size = l->size;
	last->activations_size = scratch_off;
	if (last->scratch_bytes)
		last->activations_size = scratch_off + last->scratch_bytes;
	if (last->pack_bytes)
		last->activations_size = cg_pack_off(last) + last->pack_bytes;
	return errors;
}

int cbackend_generate_training(struct ir_func *const *funcs, size_t nf, size_t step, size_t eval,
			       const struct cbackend_options *o, struct cbackend_bundle *b, struct diag *d)
{
	cg_emit_check();
	memset(b, 0, sizeof *b);
	/* bundle order: the step, its model, the others as in the module */
	struct ir_func **fs = xcalloc(nf + 1, sizeof *fs);
	fs[0] = funcs[step], fs[1] = funcs[eval];
	for (size_t i = 0, k = 2; i < nf; i++)
		if (i != step && i != eval)
			fs[k++] = funcs[i];
	char *name = cg_ident(o && o->name ? o->name : fs[1]->name);
	char **entries = xcalloc(nf + 1, sizeof *entries);
	struct tb_layout l;
	struct cg *g = xcalloc(nf + 1, sizeof *g);
	int bad = layout(&l, fs, nf, d) | entry_names(fs, nf, name, entries, d);
	int errors = bad ? 1 : emit_all(g, fs, nf, &l, o, d);
	if (!errors) {
		struct cg *last = &g[nf - 1];
		struct ostream c, h;
		ostream_mem(&c);
		ostream_mem(&h);
		char what[300];
		snprintf(what, sizeof what, "training step @%s and @%s", fs[0]->name, fs[1]->name);
		const char **texts = xcalloc(2 * nf + 1, sizeof *texts);
		for (size_t k = 0; k < nf; k++) {
			texts[2 * k] = ostream_cstr(g[k].decls);
			texts[2 * k + 1] = ostream_cstr(g[k].body);
		}
		cg_write_top(last, &c, name, what, texts);
		free(texts);
		cg_write_tables(last, &c, name, l.ph, l.n);
		write_init_weights(&c, name, &l);
		os_printf(&c, "const size_t %s_mutable_size = %" PRIu64 "u, %s_activations_size = %" PRIu64 "u;\n\n",
			  name, last->mutable_size, name, last->activations_size);
		for (size_t k = 0; k < nf; k++)
			os_puts(&c, ostream_cstr(g[k].decls));
		os_printf(&c, "int %s_set_threads(int n)\n{\n\treturn cb_pool_set(n);\n}\n\n", name);
		for (size_t k = 0; k < nf; k++)
			cg_write_entry(&g[k], &c, entries[k]);
		os_printf(&c, "\nconst struct %s_function %s_functions[%zu] = {\n", name, name, nf + 1);
		for (size_t k = 0; k < nf; k++) {
			os_puts(&c, "\t{");
			cg_put_cstr(&c, fs[k]->name);
			os_printf(&c, ", %s, \"%s\"},\n", entries[k], l.use[k]);
		}
		os_puts(&c, "\t{0, 0, 0},\n};\n\n");
		if (o && o->embed_weights)
			cg_write_blob_array(&c, name, last->blob, last->blob_len);
		write_header(last, &h, name, fs, nf, &l, entries, o && o->embed_weights);
		if (o && o->emit_main) {
			const char *const *const drv[] = {cb_driver_text, cb_train_driver_text, NULL};
			b->main_src = cg_main_src(name, last->gemm, o->embed_weights, drv, "#define CB_TRAIN_DRIVER 1\n");
		}
		cg_take_bundle(last, b, &name, &c, &h);
		ostream_abort(&c);
		ostream_abort(&h);
	}
	for (size_t k = 0; k < nf; k++) {
		cg_end(&g[k]);
		free(entries[k]);
	}
	layout_free(&l, nf);
	free(g);
	free(entries);
	free(name);
	free(fs);
	return errors ? -1 : 0;
}
