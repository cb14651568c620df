/* cgen.c - the C bundle of one instruction IR function: the constants blob,
 * the placement of every buffer, NAME.h, NAME.c (kernels + NAME_run) and
 * the files on disk.
 *
 * Regions. The mutable-weights and activations regions are the function's
 * recorded memory plan; without a plan, every mutable weight and every
 * alloc gets its own aligned slot (correct, with no reuse). The constants
 * region is built here: each constant weight that some instruction reads as
 * it is gets its bytes copied in, and filters and fully-connected weights
 * get their packed forms instead (cgen_ops.c). Mutable weights with an
 * initializer keep their initial bytes in the blob too, and
 * NAME_init_mutable copies them into place.
 *
 * Instructions are emitted in program order as calls of the kernels
 * (the files of backends/c/kernels, embedded into NAME.c) with literal shapes, or as fused
 * elementwise loops; alloc, dealloc and tensorview emit nothing.
 */
#define _POSIX_C_SOURCE 200809L
#include "backends/c/cgen.h"
#include "support/cleanup.h"
#include "support/util.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ */
/* The bundle                                                          */

/* An identifier from s: [A-Za-z0-9_], not starting with a digit. */
char *cg_ident(const char *s)
{
	size_t n = strlen(s);
	char *p = xmalloc(n + 2), *q = p;
	if (!n || (s[0] >= '0' && s[0] <= '9'))
		*q++ = '_';
	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
		*q++ = ok ? c : '_';
	}
	*q = 0;
	return p;
}

/* A C string literal of s. */
void cg_put_cstr(struct ostream *o, const char *s)
{
	os_putc(o, '"');
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '"' || c == '\\')
			os_printf(o, "\\%c", c);
		else if (c < 32 || c > 126)
			os_printf(o, "\\%03o", c);
		else
			os_putc(o, (char)c);
	}
	os_putc(o, '"');
}

/* s inside a comment: no comment end, no line break */
void cg_put_comment(struct ostream *o, const char *s)
{
	for (; *s; s++) {
		unsigned char ch = (unsigned char)*s;
		if (ch == '*' && s[1] == '/')
			os_puts(o, "* ");
		else if (ch < 32 || ch == 127)
			os_putc(o, '?');
		else
			os_putc(o, (char)ch);
	}
}

/* The top of NAME.c, before any header: the bundle's threads (NAME_SINGLE_THREAD: none,
 * CB_SINGLE_THREAD for the kernels; else POSIX threads and sched_getaffinity,
 * which -std=c11 hides without _GNU_SOURCE) and the scratch each worker thread
 * gets (kernels/cb_thread.h). */
void cg_write_thread_prologue(const struct cg *g, struct ostream *c, const char *name)
{
	os_printf(c, "#if defined(%s_SINGLE_THREAD) && !defined(CB_SINGLE_THREAD)\n#define CB_SINGLE_THREAD 1\n#endif\n",
		  name);
	os_puts(c, "#if !defined(CB_SINGLE_THREAD) && !defined(_GNU_SOURCE)\n#define _GNU_SOURCE 1\n#endif\n");
	os_printf(c, "#define CB_SCRATCH_BYTES %" PRIu64 "u\n", g->scratch_bytes);
	os_printf(c, "#define CB_PACK_OFF %" PRIu64 "u\n", cg_pack_off(g));
}

/* The thread API in the header (docs/CBackend.md, "Threads"). */
void cg_write_thread_decl(struct ostream *h, const char *name)
{
	os_printf(h, "/* Threads. %s_run splits large operators among a pool of persistent\n"
		     " * threads (the caller and n - 1 workers; results are bitwise the same for\n"
		     " * every count). Sets n (0 or less: the cores available to the process,\n"
		     " * the default when no call was made before the first run; 1: no worker\n"
		     " * threads, the workers of a larger count stopped) and returns the count in\n"
		     " * effect (fewer when threads cannot be started; always 1 in a bundle\n"
		     " * compiled with -D%s_SINGLE_THREAD, which needs no threads library).\n"
		     " * Not while a run of this bundle is in progress. Runs that overlap in\n"
		     " * time (other activation regions) are correct: a run that finds the pool\n"
		     " * busy runs on its own thread alone. */\n",
		  name, name);
	os_printf(h, "int %s_set_threads(int n);\n", name);
}

void cg_write_placeholder_decls(struct cg *g, struct ostream *h, const char *name, const struct backend_io *io,
				size_t nio)
{
	os_printf(h, "#define %s_CONSTANT_SIZE %zuu\n", name, g->blob_len);
	os_printf(h, "#define %s_MUTABLE_SIZE %" PRIu64 "u\n", name, g->mutable_size);
	os_printf(h, "#define %s_ACTIVATIONS_SIZE %" PRIu64 "u\n", name, g->activations_size);
	os_printf(h, "#define %s_ALIGNMENT %du\n", name, CG_ALIGN);
	os_printf(h, "#define %s_WEIGHTS_FILE \"%s.weights.bin\"\n\n", name, name);
	os_puts(h, "/* Placeholders: offset in the mutable region, element type, shape. */\n");
	for (size_t i = 0; i < nio; i++) {
		const struct type *t = io[i].w->v.type;
		char *id = cg_ident(io[i].w->v.name);
		char tb[256];
		type_str(t, tb, sizeof tb);
		os_puts(h, "/* %");
		cg_put_comment(h, io[i].w->v.name);
		os_printf(h, ": %s%s%s */\n", tb, io[i].is_input ? ", input" : "", io[i].is_output ? ", output" : "");
		os_printf(h, "#define %s_%s_OFFSET %" PRIu64 "u\n", name, id, cg_plan_offset(g, &io[i].w->v));
		os_printf(h, "#define %s_%s_SIZE %" PRIu64 "u\n", name, id, type_bytes(t));
		free(id);
	}
	os_printf(h, "\nstruct %s_placeholder {\n"
		     "\tconst char *name;\n"
		     "\tconst char *elem;    /* \"float\", \"i64\", ... */\n"
		     "\tsize_t offset, size; /* bytes, in the mutable region */\n"
		     "\tint is_input, is_output;\n"
		     "\tunsigned rank;\n"
		     "\tconst uint64_t *dims;\n"
		     "};\n",
		  name);
	os_printf(h, "#define %s_NUM_PLACEHOLDERS %zuu\n", name, nio);
	os_printf(h, "extern const struct %s_placeholder %s_placeholders[%s_NUM_PLACEHOLDERS + 1];\n\n", name, name, name);
	os_printf(h, "/* the region sizes as objects (for loaders) */\n");
	os_printf(h, "extern const size_t %s_mutable_size, %s_activations_size;\n", name, name);
}

/* The header. */
static void write_header(struct cg *g, struct ostream *h, const char *name, const struct backend_io *io, size_t nio,
			 bool embedded)
{
	char up[256];
	snprintf(up, sizeof up, "%s", name);
	for (char *c = up; *c; c++)
		if (*c >= 'a' && *c <= 'z')
			*c = (char)(*c - 'a' + 'A');
	os_printf(h, "/* %s.h - generated by the glow C backend from function @%s.\n", name, g->f->name);
	os_puts(h, " *\n"
		   " * Three regions, each aligned to the alignment below: the constants\n"
		   " * (the weights file or the embedded array, read only), the mutable\n"
		   " * weights (inputs and outputs live there, at the offsets below) and the\n"
		   " * activations (scratch). The caller allocates them; running allocates\n"
		   " * nothing. Call the init function once per mutable region before the\n"
		   " * first run (it zeroes it and copies initial values).\n");
	if (g->gemm == CBACKEND_GEMM_OPENBLAS)
		os_puts(h, " *\n"
			   " * Generated with -gemm=openblas: the matrix products call cblas_sgemm\n"
			   " * (<cblas.h>), so the bundle must be linked with -lopenblas -lm\n"
			   " * (OPENBLAS_NUM_THREADS sets the library's threads).\n");
	os_puts(h, " */\n");
	os_printf(h, "#ifndef %s_BUNDLE_H\n#define %s_BUNDLE_H\n\n#include <stddef.h>\n#include <stdint.h>\n\n", up, up);
	cg_write_placeholder_decls(g, h, name, io, nio);
	os_printf(h, "/* Runs the program; returns 0, or -1 on a run-time error (an index out of range). */\n");
	os_printf(h, "int %s_run(const uint8_t *constants, uint8_t *mutable_weights, uint8_t *activations);\n", name);
	cg_write_thread_decl(h, name);
	os_printf(h, "/* Zeroes the mutable region and copies initial values from the constants. */\n");
	os_printf(h, "void %s_init_mutable(const uint8_t *constants, uint8_t *mutable_weights);\n", name);
	if (embedded)
		os_printf(h, "/* The constants region. */\nextern const uint8_t %s_constants[%s_CONSTANT_SIZE + 1];\n",
			  name, name);
	os_puts(h, "\n#endif\n");
}

void cg_write_tables(struct cg *g, struct ostream *c, const char *name, const struct backend_io *io, size_t nio)
{
	for (size_t i = 0; i < nio; i++) {
		const struct type *t = io[i].w->v.type;
		os_printf(c, "static const uint64_t %s_dims%zu[] = {", name, i);
		for (unsigned k = 0; k < t->rank; k++)
			os_printf(c, "%s%" PRIu64 "u", k ? ", " : "", t->dims[k]);
		os_printf(c, "%s};\n", t->rank ? "" : "0");
	}
	os_printf(c, "const struct %s_placeholder %s_placeholders[%zu] = {\n", name, name, nio + 1);
	for (size_t i = 0; i < nio; i++) {
		const struct type *t = io[i].w->v.type;
		os_puts(c, "\t{");
		cg_put_cstr(c, io[i].w->v.name);
		os_printf(c, ", \"%s\", %" PRIu64 "u, %" PRIu64 "u, %d, %d, %u, %s_dims%zu},\n",
			  elem_name((enum elem_kind)t->elem), cg_plan_offset(g, &io[i].w->v), type_bytes(t),
			  io[i].is_input, io[i].is_output, t->rank, name, i);
	}
	os_puts(c, "\t{0, 0, 0, 0, 0, 0, 0, 0},\n};\n\n");
	os_printf(c, "void %s_init_mutable(const uint8_t *constants, uint8_t *mutable_weights)\n{\n", name);
	os_printf(c, "\tmemset(mutable_weights, 0, %" PRIu64 "u);\n", g->mutable_size);
	os_puts(c, "\t(void)constants;\n");
	for (size_t i = 0; i < nio; i++) {
		struct ir_weight *w = io[i].w;
		bool q = elem_is_quantized((enum elem_kind)w->v.type->elem);
		if (w->init == IR_INIT_NONE && !q)
			continue;
		uint8_t *p = cg_weight_data(g, w);
		if (!p)
			continue;
		size_t n = (size_t)type_bytes(w->v.type);
		size_t off = cg_blob_add(g, p, n);
		free(p);
		os_printf(c, "\tmemcpy(mutable_weights + %" PRIu64 ", constants + %zu, %zu);\n",
			  cg_plan_offset(g, &w->v), off, n);
	}
	os_puts(c, "}\n\n");
}

void cg_write_blob_array(struct ostream *c, const char *name, const uint8_t *p, size_t n)
{
	os_printf(c, "/* the constants region */\n");
	os_printf(c, "#if defined(__GNUC__)\n__attribute__((aligned(64)))\n#endif\n");
	os_printf(c, "const uint8_t %s_constants[%zu] = {", name, n + 1);
	for (size_t i = 0; i < n; i++)
		os_printf(c, "%s%u,", i % 24 ? "" : "\n", p[i]);
	os_puts(c, "0\n};\n\n");
}

/* Applies fn (init or free) to each of g's maps. */
static void cg_maps(struct cg *g, void (*fn)(struct u64map *))
{
	struct u64map *maps[] = {&g->raw, &g->plan, &g->fused, &g->periodic};
	for (size_t i = 0; i < GLOW_ARRAY_SIZE(maps); i++)
		fn(maps[i]);
}

/* Without a recorded plan: every mutable weight and alloc its own slot. */
static void fallback_plan(struct cg *g)
{
	uint64_t m = 0, a = 0;
	ir_for_each_weight(g->f, w) {
		if (w->is_const)
			continue;
		u64map_put(&g->plan, (uint64_t)(uintptr_t)w, (void *)(uintptr_t)(m + 1));
		m = (m + type_bytes(w->v.type) + CG_ALIGN - 1) / CG_ALIGN * CG_ALIGN;
	}
	ir_for_each_instr(g->f, in) {
		if (in->kind != IK_alloc)
			continue;
		u64map_put(&g->plan, (uint64_t)(uintptr_t)in, (void *)(uintptr_t)(a + 1));
		a = (a + type_bytes(in->v.type) + CG_ALIGN - 1) / CG_ALIGN * CG_ALIGN;
	}
	g->mutable_size = m;
	g->activations_size = a;
}

void cg_begin(struct cg *g, struct ir_func *f, const struct cbackend_options *o, struct diag *d)
{
	memset(g, 0, sizeof *g);
	g->f = f;
	g->d = d;
	g->gemm = o ? o->gemm : CBACKEND_GEMM_BUILTIN;
	g->winograd = o ? o->winograd : CBACKEND_WINO_AUTO;
	g->body = xcalloc(1, sizeof *g->body);
	g->decls = xcalloc(1, sizeof *g->decls);
	ostream_mem(g->body);
	ostream_mem(g->decls);
	cg_maps(g, u64map_init);
	/* The constants blob holds the weights, many repacked (panels padded
	 * to CG_NR, Winograd's transformed filters) and some twice: reserved
	 * at twice the weights' bytes up front, so that a large model's blob
	 * is not copied by every doubling of the reallocations (VGG-19's
	 * 731 MB: a quarter of glow-llc's time). Untouched pages of the
	 * reservation cost nothing; without it (over 16 GiB of weights, or
	 * none to be had) the blob grows as needed and reports what it cannot
	 * allocate, as before. */
	uint64_t est = 1u << 20;
	ir_for_each_weight(f, w) if (w->is_const || w->init != IR_INIT_NONE) {
		uint64_t b = type_bytes(w->v.type);
		est = b < (UINT64_C(1) << 34) && est < (UINT64_C(1) << 34) ? est + b + CG_ALIGN : UINT64_MAX;
	}
	if (est <= (UINT64_C(1) << 34) && est <= SIZE_MAX / 2 && (g->blob = malloc((size_t)(2 * est))))
		g->blob_cap = (size_t)(2 * est);
	if (f->plan.present) {
		g->mutable_size = f->plan.mutable_size;
		g->activations_size = f->plan.activations_size;
		if (f->plan.alignment % 4 != 0)
			diag_warning(d, f->plan.loc, "the memory plan's alignment %" PRIu64
				     " is not a multiple of 4; the C backend assumes aligned elements",
				     f->plan.alignment);
	} else {
		fallback_plan(g);
	}
	g->scratch_off = (g->activations_size + CG_ALIGN - 1) / CG_ALIGN * CG_ALIGN;
}

void cg_emit_body(struct cg *g)
{
	struct ostream *body = g->body;
	ir_for_each_instr(g->f, in) {
		if (ptrmap_get(&g->fused, in))
			continue;
		if (instr_is_block(in->kind)) { /* braces, not a statement to time (cgen_flow.c) */
			cg_emit_instr(g, in);
			continue;
		}
		size_t before = body->len;
		cg_emit_instr(g, in);
		if (body->len != before) {
			/* wrap what was emitted in the profiling macros */
			char *stmt = xmalloc(body->len - before + 1);
			memcpy(stmt, body->buf + before, body->len - before);
			stmt[body->len - before] = 0;
			body->len = before;
			os_printf(body, "\tCB_PROF_BEGIN(%u);\n%s\tCB_PROF_END(%u, ", g->nprof, stmt, g->nprof);
			char label[256];
			snprintf(label, sizeof label, "%s%s%s %s", g->prof_prefix ? g->prof_prefix : "",
				 g->prof_prefix ? ": " : "", instr_kind_name(in->kind), in->v.name ? in->v.name : "");
			cg_put_cstr(body, label);
			os_puts(body, ");\n");
			g->nprof++;
			free(stmt);
		}
		if (g->d->stopped)
			break;
	}
}

uint64_t cg_pack_off(const struct cg *g)
{
	return g->scratch_off + (g->scratch_bytes + CG_ALIGN - 1) / CG_ALIGN * CG_ALIGN;
}

void cg_end(struct cg *g)
{
	if (g->body)
		ostream_abort(g->body);
	if (g->decls)
		ostream_abort(g->decls);
	free(g->body);
	free(g->decls);
	free(g->blob);
	cg_maps(g, u64map_free);
	memset(g, 0, sizeof *g);
}

void cg_write_top(const struct cg *g, struct ostream *c, const char *name, const char *what,
		  const char *const *texts)
{
	if (g->gemm == CBACKEND_GEMM_OPENBLAS)
		os_printf(c, "/* %s.c - generated by the glow C backend from %s. Plain C11;\n"
			      " * matrix products call cblas_sgemm: link with -lopenblas (and -lm). */\n",
			  name, what);
	else
		os_printf(c, "/* %s.c - generated by the glow C backend from %s. Plain C11\n"
			      " * (libm only); vector paths are chosen by the preprocessor. */\n",
			  name, what);
	cg_write_thread_prologue(g, c, name);
	os_printf(c, "#include \"%s.h\"\n\n", name);
	cg_write_kernels(c, texts, g->gemm == CBACKEND_GEMM_OPENBLAS ? cb_blas_text : NULL);
	for (size_t i = 0; g->gemm == CBACKEND_GEMM_OPENBLAS && cb_blas_text[i]; i++) {
		os_puts(c, cb_blas_text[i]);
		os_putc(c, '\n');
	}
	os_puts(c, "\n/* ---- the program ---- */\n\n");
	os_printf(c, "#ifdef CB_PROFILE\n"
		      "/* -DCB_PROFILE: processor time per instruction (not reentrant),\n"
		      " * printed by %s_profile_print */\n"
		      "#include <stdio.h>\n#include <time.h>\n"
		      "static double cb_prof_ms[%u];\nstatic const char *cb_prof_name[%u];\n"
		      "#if defined(CB_PROFILE_WALL) && !defined(CB_SINGLE_THREAD)\n"
		      "/* -DCB_PROFILE_WALL: wall time instead (what a split operator gains) */\n"
		      "static double cb_prof_now(void)\n{\n\tstruct timespec ts;\n"
		      "\tclock_gettime(CLOCK_MONOTONIC, &ts);\n\treturn (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;\n}\n"
		      "#else\n"
		      "static double cb_prof_now(void) { return (double)clock() * 1e3 / CLOCKS_PER_SEC; }\n"
		      "#endif\n"
		      "#define CB_PROF_BEGIN(i) double cb_t##i = cb_prof_now()\n"
		      "#define CB_PROF_END(i, s) (cb_prof_ms[i] += cb_prof_now() - cb_t##i, cb_prof_name[i] = (s))\n"
		      "void %s_profile_print(int runs);\n"
		      "void %s_profile_print(int runs)\n{\n\tfor (unsigned i = 0; i < %uu; i++)\n"
		      "\t\tif (cb_prof_name[i])\n\t\t\tprintf(\"%%9.3f ms  %%s\\n\", cb_prof_ms[i] / runs, cb_prof_name[i]);\n}\n"
		      "#else\n#define CB_PROF_BEGIN(i) ((void)0)\n#define CB_PROF_END(i, s) ((void)0)\n#endif\n\n",
		  name, g->nprof + 1, g->nprof + 1, name, name, g->nprof);
}

void cg_write_entry(struct cg *g, struct ostream *c, const char *entry)
{
	os_printf(c, "int %s(const uint8_t *constants, uint8_t *mutable_weights, uint8_t *activations)\n{\n", entry);
	os_puts(c, "\tconst uint8_t *C = constants;\n\tuint8_t *W = mutable_weights;\n"
		    "\tuint8_t *A = activations;\n\t(void)C;\n\t(void)W;\n\t(void)A;\n");
	os_puts(c, ostream_cstr(g->body));
	os_puts(c, "\treturn 0;\n}\n");
}

char *cg_main_src(const char *name, int gemm, bool embedded, const char *const *const *driver, const char *defines)
{
	struct ostream mn;
	ostream_mem(&mn);
	os_printf(&mn, "/* %s_main.c - generated by the glow C backend: a driver for bundle %s.\n"
		       " * Build: cc -std=c11 -O3 -pthread %s_main.c %s.c %s\n"
		       " * (-D%s_SINGLE_THREAD: no threads, no -pthread) */\n"
		       "%s#define CB_NAME(x) %s_##x\n#define CB_EMBEDDED %d\n#include \"%s.h\"\n",
		  name, name, name, name, gemm == CBACKEND_GEMM_OPENBLAS ? "-lopenblas -lm" : "-lm", name, defines, name,
		  embedded ? 1 : 0, name);
	for (size_t k = 0; driver[k]; k++)
		for (size_t i = 0; driver[k][i]; i++) {
			os_puts(&mn, driver[k][i]);
			os_putc(&mn, '\n');
		}
	char *src = xstrdup(ostream_cstr(&mn));
	ostream_abort(&mn);
	return src;
}

void cg_take_bundle(struct cg *g, struct cbackend_bundle *b, char **name, struct ostream *c, struct ostream *h)
{
	b->c_src = xstrdup(ostream_cstr(c));
	b->h_src = xstrdup(ostream_cstr(h));
	b->weights = g->blob ? g->blob : xmalloc(1);
	b->weights_size = g->blob_len;
	b->mutable_size = g->mutable_size;
	b->activations_size = g->activations_size;
	g->blob = NULL;
	b->name = *name;
	*name = NULL;
}

int cbackend_generate(struct ir_func *f, const struct cbackend_options *o, struct cbackend_bundle *b,
		      struct diag *d)
{
	cg_emit_check(); /* a kind without semantics stops here, before any code */
	memset(b, 0, sizeof *b);
	struct cg g;
	cg_begin(&g, f, o, d);
	cg_emit_body(&g);
	if (g.scratch_bytes)
		g.activations_size = g.scratch_off + g.scratch_bytes;
	if (g.pack_bytes) /* cgen_conv.c's run-time packed filters follow the scratch */
		g.activations_size = cg_pack_off(&g) + g.pack_bytes;
	char *name = cg_ident(o && o->name ? o->name : f->name);
	size_t nio = 0;
	struct backend_io *io = backend_func_io(f, &nio);
	struct ostream c, h;
	ostream_mem(&c);
	ostream_mem(&h);
	if (!g.errors) {
		char what[300];
		snprintf(what, sizeof what, "function @%s", f->name);
		const char *texts[] = {ostream_cstr(g.decls), ostream_cstr(g.body), NULL};
		cg_write_top(&g, &c, name, what, texts);
		cg_write_tables(&g, &c, name, io, nio);
		os_printf(&c, "const size_t %s_mutable_size = %" PRIu64 "u, %s_activations_size = %" PRIu64 "u;\n\n",
			  name, g.mutable_size, name, g.activations_size);
		os_puts(&c, ostream_cstr(g.decls));
		os_printf(&c, "int %s_set_threads(int n)\n{\n\treturn cb_pool_set(n);\n}\n\n", name);
		char entry[300];
		snprintf(entry, sizeof entry, "%s_run", name);
		cg_write_entry(&g, &c, entry);
		if (o && o->embed_weights)
			cg_write_blob_array(&c, name, g.blob, g.blob_len);
		write_header(&g, &h, name, io, nio, o && o->embed_weights);
		if (o && o->emit_main) {
			const char *const *const drv[] = {cb_driver_text, NULL};
			b->main_src = cg_main_src(name, g.gemm, o->embed_weights, drv, "");
		}
		cg_take_bundle(&g, b, &name, &c, &h);
	}
	ostream_abort(&c);
	ostream_abort(&h);
	free(io);
	free(name);
	int errors = g.errors;
	cg_end(&g);
	return errors ? -1 : 0;
}

void cbackend_bundle_free(struct cbackend_bundle *b)
{
	free(b->name);
	free(b->c_src);
	free(b->h_src);
	free(b->main_src);
	free(b->weights);
	memset(b, 0, sizeof *b);
}

int cbackend_write_bundle(const struct cbackend_bundle *b, const char *dir, bool embed_weights, char ***files,
			  int **handles, size_t *nfiles, struct diag *d)
{
	struct {
		const char *suffix;
		const void *p;
		size_t n;
	} parts[] = {
		{".h", b->h_src, strlen(b->h_src)},
		{".c", b->c_src, strlen(b->c_src)},
		{".weights.bin", embed_weights ? NULL : b->weights, b->weights_size},
		{"_main.c", b->main_src, b->main_src ? strlen(b->main_src) : 0},
	};
	for (size_t i = 0; i < GLOW_ARRAY_SIZE(parts); i++) {
		if (!parts[i].p)
			continue;
		size_t len = strlen(dir) + strlen(b->name) + strlen(parts[i].suffix) + 2;
		char *path = xmalloc(len);
		snprintf(path, len, "%s/%s%s", dir, b->name, parts[i].suffix);
		if (files) {
			/* registered before the stream renames its temporary file
			 * into place, so no moment leaves the file unprotected */
			*files = xrealloc(*files, (*nfiles + 1) * sizeof **files);
			*handles = xrealloc(*handles, (*nfiles + 1) * sizeof **handles);
			(*files)[*nfiles] = path;
			(*handles)[(*nfiles)++] = cleanup_add_file(path);
		}
		struct ostream o;
		int rc = ostream_open(&o, path, d);
		if (rc == 0) {
			os_write(&o, parts[i].p, parts[i].n);
			rc = ostream_commit(&o, d);
		}
		if (!files)
			free(path);
		if (rc)
			return -1;
	}
	return 0;
}

int cbackend_emit_bundle(struct ir_func *f, const char *dir, const struct cbackend_options *o, struct diag *d)
{
	struct cbackend_bundle b;
	if (cbackend_generate(f, o, &b, d) != 0)
		return -1;
	int rc = cbackend_write_bundle(&b, dir, o && o->embed_weights, NULL, NULL, NULL, d);
	cbackend_bundle_free(&b);
	return rc;
}
