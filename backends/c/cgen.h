/* cgen.h - the C backend's code generator, shared by its files:
 * cgen.c (the bundle: regions, weights, header, the run function, the
 * driver), cgen_emit.c (the dispatch over the emitter table, Emitters.def,
 * and what else is derived from it), cgen_ops.c, cgen_conv.c and
 * cgen_move.c (the emitters), cgen_ew.c (fused elementwise loops),
 * cgen_util.c (the places of buffers, the blob, literals: what every
 * emitter shares), cgen_rows.c (the table's rows as data, at the bottom),
 * bundledir.c (a bundle directory replaced atomically) and cbackend_run.c
 * (the backend behind struct backend). Calls go one way: the bundle and
 * the backend to the dispatch, the dispatch to the emitters, the emitters
 * to the helpers, and everything to the rows; never back
 * (utils/file-circles.py checks it).
 *
 * Addresses. Every buffer operand is a byte offset into one of the three
 * regions, which the run function names C (constants), W (mutable weights)
 * and A (activations). A constant weight is copied into C as it is (raw)
 * the first time an instruction reads it so; an instruction that wants a
 * kernel's layout (packed filters, folded normalizations) adds its own copy.
 */
#ifndef GLOW_BACKENDS_C_CGEN_H
#define GLOW_BACKENDS_C_CGEN_H

#include "backends/c/cbackend.h"
#include "support/hashmap.h"
#include "support/io.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* the kernel sources, one line per string, NULL-terminated (generated) */
extern const char *const cb_kernel_text[];
/* the cblas_sgemm kernels (kernels/cb_blas.c), appended with -gemm=openblas */
extern const char *const cb_blas_text[];
/* the driver source (kernels/cb_driver.c), likewise */
extern const char *const cb_driver_text[];
/* the training bundle's driver (kernels/cb_train_driver.c), after cb_driver.c */
extern const char *const cb_train_driver_text[];

/* blob alignment of every constant */
#define CG_ALIGN 64
/* the kernels' panel width (CB_NR in kernels/cb_base.h) */
#define CG_NR 32

struct cg {
	struct ir_func *f;
	struct diag *d;
	int gemm;              /* CBACKEND_GEMM_* */
	int winograd;          /* CBACKEND_WINO_* */
	struct ostream *body;  /* statements of the run function */
	struct ostream *decls; /* file-scope declarations (argument structs, tables) */
	uint8_t *blob;         /* the constants region */
	size_t blob_len, blob_cap;
	struct u64map raw;     /* constant weight -> blob offset + 1 */
	struct u64map plan;    /* weight or alloc -> offset + 1 when f has no plan */
	struct u64map fused;   /* instructions emitted as part of an earlier one */
	struct u64map periodic; /* constant weight -> blob offset + 1 of its repeating last-dimension row,
				 * or a value with bit 63 set for one that does not repeat */
	uint64_t mutable_size, activations_size;
	uint64_t scratch_off;   /* the kernels' scratch: after the planned activations */
	uint64_t scratch_bytes; /* the most any kernel needs */
	uint64_t pack_bytes;    /* filters packed at run time (cgen_conv.c): after the scratch, CB_PACK_OFF */
	unsigned uniq;         /* counter for generated names */
	unsigned nprof;        /* instructions emitted (profiling slots) */
	int errors;
	/* a training bundle (cgen_train.c): every function's mutable weights
	 * at one offset each (weight -> offset + 1), and the function's name
	 * before each profiling label; NULL in a bundle of one function */
	struct u64map *shared_mut;
	const char *prof_prefix;
};

/* A buffer's place: its root and byte range. */
struct cg_place {
	struct ir_value *root;
	uint64_t off, len;
	int region; /* 'C', 'W' or 'A' */
};

/* ---- cgen_util.c ---- */

/* Where value v lives; for constants raw (copied into the blob on first use). */
int cg_place(struct cg *g, struct ir_value *v, struct cg_place *p);
/* Writes "((const T *)(C + off))" (or "(T *)(W + off)") for v into buf. */
const char *cg_ptr(struct cg *g, struct ir_value *v, const char *ctype, char *buf, size_t size);
/* Whether two buffers share any byte; same: exactly the same bytes. */
bool cg_overlap(struct cg *g, struct ir_value *a, struct ir_value *b);
bool cg_same(struct cg *g, struct ir_value *a, struct ir_value *b);

/* The raw bytes of a constant weight (malloc'd, type_bytes), NULL after
 * reporting. */
uint8_t *cg_weight_data(struct cg *g, struct ir_weight *w);
/* Appends n bytes (NULL: zeros) to the blob at an aligned offset; returns it. */
size_t cg_blob_add(struct cg *g, const void *p, size_t n);

/* The C type of element kind k ("float", "int64_t", ...), NULL if the
 * backend computes nothing in it. */
const char *cg_ctype(unsigned elem);

/* A float literal of C for v ("2.0f", "-INFINITY", "NAN") in buf (at
 * least 40 bytes); returns buf. */
const char *cg_flit(char *buf, double v);

/* Reports that in cannot be compiled; cgen_rows.c. */
void cg_unsupported(struct cg *g, const struct ir_instr *in, const char *why);

/* Emits one instruction (and whatever it fuses) with its kind's emitter
 * (Emitters.def); cgen_emit.c. */
void cg_emit_instr(struct cg *g, struct ir_instr *in);
/* Whether the code generator compiles graph node kind nk (with quantized
 * operands or results when quantized, with float16 or bfloat16 ones when
 * half): every instruction it becomes has an emitter that takes those
 * element kinds (Emitters.def's flags, QEMIT rows), or is elementwise;
 * cgen_emit.c. */
bool cg_compiles_node_kind(unsigned nk, bool quantized, bool half);
/* Checks that every instruction kind has an emitter (Emitters.def) or is
 * elementwise (EW.def); a kind with neither, or with both an EMIT row and
 * an EW.def expression, is an internal error naming it. Run before the
 * first bundle is generated and the first support question answered;
 * idempotent. */
void cg_emit_check(void);
/* Whether kind is handled by the elementwise emitter for in's types;
 * emits in and the elementwise instructions that fuse with it; cgen_ew.c. */
bool cg_ew_supported(const struct ir_instr *in);
void cg_emit_ew(struct cg *g, struct ir_instr *in);
/* Whether instruction kind k is bookkeeping that emits no code and
 * touches no memory (alloc, dealloc, tensorview, touch: the
 * cg_emit_nothing rows of Emitters.def); cgen_rows.c. */
bool cg_emits_nothing(unsigned k);
/* The next instruction after in that emits code (not alloc, dealloc,
 * tensorview or touch); cgen_util.c. */
struct ir_instr *cg_next_real(struct ir_instr *in);
/* Whether the bytes of v are read by any instruction after `after` (until
 * they are deallocated; not at all when they were deallocated before
 * `after`, back to their alloc); weights always count as read. */
bool cg_read_later(struct cg *g, struct ir_instr *after, struct ir_value *v);
/* Whether the result out of in (out: the last result of the instructions
 * fused after it, ending with last) can be written straight into the
 * concatenation that an inserttensor along the channels (the last
 * dimension of rank 4) copies it into later: nothing between touches the
 * concatenation except other inserts into it, nothing reads out there or
 * later, and the concatenation overlaps neither in's input src nor the
 * fused operand res (or NULL). Then marks the insert fused, sets *big to
 * the concatenation, *off to the channel offset and *stride to its
 * channels (elements between pixels). cgen_conv.c. */
bool cg_into_concat(struct cg *g, struct ir_instr *in, struct ir_instr *last, struct ir_value *out,
		    struct ir_value *src, struct ir_value *res, struct ir_value **big, int64_t *off, int64_t *stride);

/* ---- the bundle's parts (cgen.c), shared by the training bundle (cgen_train.c) ---- */

/* Sets up g for function f: the streams, the maps, the regions of its
 * memory plan (or a plan without reuse) and the scratch after them. */
void cg_begin(struct cg *g, struct ir_func *f, const struct cbackend_options *o, struct diag *d);
/* Emits every instruction of g->f into g->body, each wrapped in the
 * profiling macros (slots numbered from g->nprof on). */
void cg_emit_body(struct cg *g);
/* The offset of the filters packed at run time: after the scratch. */
uint64_t cg_pack_off(const struct cg *g);
/* Frees what cg_begin and the emitters allocated (the blob included). */
void cg_end(struct cg *g);
/* The planned offset of a mutable weight or an alloc (a training bundle's
 * shared layout for weights, else f's plan or the fallback one);
 * cgen_util.c. */
uint64_t cg_plan_offset(struct cg *g, struct ir_value *root);
/* NAME.c up to the program: the comment naming `what`, the thread
 * prologue, the kernels the bundle needs (cg_write_kernels, given texts:
 * the program's declarations and statements, NULL-terminated) and the
 * profiling macros (g->nprof slots). */
void cg_write_top(const struct cg *g, struct ostream *c, const char *name, const char *what,
		  const char *const *texts);
/* The kernel files (cb_kernel_text) a bundle carries: the first ones
 * always, each later one when texts (NULL-terminated), the lines of
 * extra_lines (NULL-terminated, or NULL) or a file already carried names
 * what it declares; in their order, each after its marker line;
 * cgen_units.c. */
void cg_write_kernels(struct ostream *c, const char *const *texts, const char *const *extra_lines);
/* The top of NAME.c, before any header: threads, scratch and pack offsets. */
void cg_write_thread_prologue(const struct cg *g, struct ostream *c, const char *name);
/* The thread API's declaration and its comment, in NAME.h. */
void cg_write_thread_decl(struct ostream *h, const char *name);
/* The function `entry` running g->body over the three regions. */
void cg_write_entry(struct cg *g, struct ostream *c, const char *entry);
/* The constants region as the C array NAME_constants. */
void cg_write_blob_array(struct ostream *c, const char *name, const uint8_t *p, size_t n);
/* In NAME.h: the region sizes, the offset and size of each placeholder
 * of io, the placeholder struct and table, the region sizes as objects. */
void cg_write_placeholder_decls(struct cg *g, struct ostream *h, const char *name, const struct backend_io *io,
				size_t nio);
/* In NAME.c: the placeholder table of io and NAME_init_mutable (zeros,
 * then the initial values of io's initialized weights, from the blob). */
void cg_write_tables(struct cg *g, struct ostream *c, const char *name, const struct backend_io *io, size_t nio);
/* NAME_main.c: a comment, `defines`, the bundle's prefix, then the
 * driver's text tables (a NULL-terminated list) in order; malloc'd. */
char *cg_main_src(const char *name, int gemm, bool embedded, const char *const *const *driver, const char *defines);
/* Moves the sources, g's blob, its region sizes and *name into b. */
void cg_take_bundle(struct cg *g, struct cbackend_bundle *b, char **name, struct ostream *c, struct ostream *h);
/* An identifier from s (malloc'd): [A-Za-z0-9_], not starting with a digit. */
char *cg_ident(const char *s);
/* s as a C string literal; s inside a comment (no comment end, no line break). */
void cg_put_cstr(struct ostream *o, const char *s);
void cg_put_comment(struct ostream *o, const char *s);

/* Removes directory dir and the files in it (one level: the bundle
 * directories hold no subdirectories); bundledir.c. */
void cg_remove_dir(const char *dir);


#endif
