/* cgen_ops.h - the operator emitters' shared helpers and the emitters
 * the dispatch (cg_emit_instr, cgen_emit.c) calls by the rows of
 * Emitters.def; private to backends/c. An emitter writes its kernel call
 * into g->body and its tables into g->decls, or reports through
 * cg_unsupported. */
#ifndef GLOW_BACKENDS_C_CGEN_OPS_H
#define GLOW_BACKENDS_C_CGEN_OPS_H

#include "backends/c/cgen.h"

#include <stdbool.h>
#include <stdint.h>

/* The C expression of value v's address as a T pointer, in buf (an array). */
#define PTR(v, t, buf) cg_ptr(g, (v), (t), (buf), sizeof(buf))

/* ---- the emitter table (Emitters.def, cgen_emit.c) ---- */

struct cg_emit_row;
/* An emitter: the code of instruction in, given its kind's row. */
typedef void cg_emit_fn(struct cg *g, struct ir_instr *in, const struct cg_emit_row *r);

/* One row of Emitters.def. */
struct cg_emit_row {
	cg_emit_fn *fn;  /* NULL: no row (elementwise, EW.def); NO_EMIT: cg_emit_none */
	int param;       /* the emitter's per-kind parameter */
	unsigned flags;  /* CG_STORED, CG_HALF */
	const char *why; /* NO_EMIT: why the kind is not compiled */
};

/* Row flag: the kind copies stored elements, quantized ones too (and
 * float16 and bfloat16 ones). */
#define CG_STORED 1u
/* Row flag: the emitter compiles float16 and bfloat16 elements too. */
#define CG_HALF 2u

/* The rows of Emitters.def indexed by instruction kind: the EMIT and
 * NO_EMIT rows, or with quantized the QEMIT rows (a kind without one has
 * fn NULL); cgen_rows.c. */
const struct cg_emit_row *cg_emit_rows(bool quantized);

/* The per-kind parameters of the rows. The reduction operators are the
 * op codes of the kernels cb_reduce_f32 and cb_reduce_i
 * (kernels/cb_misc.c, kernels/cb_ref.c), written into the bundle. */
enum cg_reduce_op { CG_REDUCE_ADD = 0, CG_REDUCE_MEAN = 1, CG_REDUCE_MAX = 2, CG_REDUCE_MIN = 3, CG_REDUCE_PROD = 4 };
enum cg_pool_op { CG_POOL_MAX, CG_POOL_AVG, CG_POOL_ADAPTIVE };
/* the data-movement kinds' copies (cgen_move.c) */
enum cg_move_op {
	CG_MOVE_TRANSPOSE,
	CG_MOVE_EXTRACT,
	CG_MOVE_INSERT,
	CG_MOVE_TILE,
	CG_MOVE_BROADCAST,
	CG_MOVE_FLIP,
	CG_MOVE_TO_DEPTH,
	CG_MOVE_TO_SPACE,
	CG_MOVE_PAD,
};
/* the movement gradients' copies (cgen_grad2.c) */
enum cg_grad_move_op { CG_GRAD_RESHAPE, CG_GRAD_TRANSPOSE, CG_GRAD_CONCAT, CG_GRAD_SLICE };
enum {
	CG_LINEAR_BIAS = 1,      /* fullyconnected: the product has a bias operand */
	CG_CONV_ADD_RELU = 1,    /* c_convaddrelu: the convolution adds operand 4 and rectifies */
	CG_SOFTMAX_LOG = 1,      /* logsoftmax */
	CG_ARG_MIN = 1,          /* argmin */
	CG_SCATTER_ELEMENTS = 1, /* scatterelements (0: scatternd) */
	CG_RESIZE_BILINEAR = 1,  /* resizebilinear (0: nearest) */
	CG_GRAD_CE = 1,          /* crossentropylossgrad (0: softmaxgrad; cgen_grad.c) */
};

/* The emitters, one prototype per row (a function named twice is
 * declared twice, which C allows). */
#define EMIT(kind, emitter, param, flags) cg_emit_fn emitter;
#define QEMIT(kind, emitter, param) cg_emit_fn emitter;
#include "backends/c/Emitters.def"
/* the emitter of NO_EMIT rows: reports the row's reason */
cg_emit_fn cg_emit_none;

/* cgen_tables.c */

/* Whether v holds float (32-bit) elements. */
bool cg_is_float(const struct ir_value *v);
/* The constant weight v is (the whole of it, not a view), or NULL. */
struct ir_weight *cg_const_weight(struct ir_value *v);
/* outer x d x inner around axis of t */
void cg_split_axis(const struct type *t, unsigned axis, uint64_t *outer, uint64_t *d, uint64_t *inner);
/* Element strides of a row-major shape (st: t->rank entries). */
void cg_strides_of(const struct type *t, int64_t *st);
/* Emits a static int64 table "tbN" and returns N. */
unsigned cg_i64_table(struct cg *g, const int64_t *v, unsigned n);
/* Emits a static int table "tiN" and returns N. */
unsigned cg_int_table(struct cg *g, const int64_t *v, unsigned n);
/* dims of t as an int64 table; returns its number. */
unsigned cg_dims_table(struct cg *g, const struct type *t);
/* The byte size of v's integer or index elements (4 or 8), 0 otherwise. */
int cg_int_es(const struct ir_value *v);

/* cgen_move.c */

/* cb_copy_nd of the elements dims (rank) from src + soff (element strides
 * ss) to dst + doff (strides ds), dimensions of 1 dropped and contiguous
 * neighbours merged. */
void cg_emit_copy_nd(struct cg *g, struct ir_value *dst, int64_t doff, const int64_t *ds, struct ir_value *src,
		     int64_t soff, const int64_t *ss, const int64_t *dims, unsigned rank);

/* cgen_grad.c: a one-channel convolution with a live filter; false: not
 * taken */
bool cg_emit_conv_one_channel(struct cg *g, struct ir_instr *in, struct ir_value *out, int act, double lo, double hi);
/* cgen_window.c: the kernels' scratch of at least n floats; the window
 * table of a convolution(grad) or avgpoolgrad in (input xt, output or output
 * gradient gt; its number tiN); the floats of cb_pad_images; oc rounded up
 * to whole blocks of 32 columns */
void cg_need_scratch(struct cg *g, uint64_t n);
unsigned cg_window_table(struct cg *g, struct ir_instr *in, const struct type *xt, const struct type *gt);
uint64_t cg_padded_floats(const struct type *xt, const struct type *gt, const int64_t *k, const int64_t *s,
			 const int64_t *p, const int64_t *dl);
uint64_t cg_whole_blocks(uint64_t oc);

/* cgen_conv.c */

/* a stride-1 transposed convolution on the packed path; false: not taken */
bool cg_emit_convtranspose_packed(struct cg *g, struct ir_instr *in);
bool cg_emit_conv_input_grad_packed(struct cg *g, struct ir_value *dx, struct ir_value *gy, struct ir_value *fil,
				    const int64_t *k, const int64_t *s, const int64_t *p, const int64_t *dl);
/* a transpose of weights read by the next matrix product: skipped, true */
bool cg_emit_transpose_into_product(struct cg *g, struct ir_instr *in);

#endif
