/* cgen_ops.h - the operator emitters' shared helpers and the family
 * emitters the dispatch (cg_emit_instr, cgen_ops.c) calls; private to
 * backends/c. An emitter writes its kernel call into g->body and its tables
 * into g->decls, or reports through cg_unsupported. */
#ifndef GLOW_BACKENDS_C_CGEN_OPS_H
#define GLOW_BACKENDS_C_CGEN_OPS_H

#include "backends/c/cgen.h"

#include <stdbool.h>
#include <stdint.h>

/* The C expression of value v's address as a T pointer, in buf (an array). */
#define PTR(v, t, buf) cg_ptr(g, (v), (t), (buf), sizeof(buf))

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

/* cgen_conv.c */

/* Convolution (direct, packed or Winograd; with fused add/relu/clip). */
void cg_emit_conv(struct cg *g, struct ir_instr *in);
/* a stride-1 transposed convolution on the packed path; false: not taken */
bool cg_emit_convtranspose_packed(struct cg *g, struct ir_instr *in);
/* a transpose of weights read by the next matrix product: skipped, true */
bool cg_emit_transpose_into_product(struct cg *g, struct ir_instr *in);
/* Dest[n x m] = Src[n x k] * Weights[k x m] (+ bias), packed when the
 * weights are constant. */
void cg_emit_linear(struct cg *g, struct ir_instr *in, struct ir_value *dst, struct ir_value *lhs,
		    struct ir_value *rhs, struct ir_value *bias);
/* Gemm (alpha * A' * B' + beta * C) with its transposes. */
void cg_emit_gemm(struct cg *g, struct ir_instr *in);

/* cgen_move.c */

/* A data-movement kind (any element kind): strided copies. */
void cg_emit_move(struct cg *g, struct ir_instr *in);

#endif
