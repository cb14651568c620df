/* passutil.h - helpers shared by the graph rewriting passes.
 *
 * Small, pass-independent pieces that several passes need: recognising
 * splats (a value whose elements are all one number, whatever node makes
 * it), reading and writing tensor elements of any element kind as doubles,
 * permutations (Transpose shuffles), moving constant data and creating the
 * nodes and constants a rewrite needs with fresh names derived from the node
 * being replaced.
 *
 * Conventions: a shuffle s maps result dimension i to input dimension s[i]
 * (Transpose's rule in typerules.c). New nodes are inserted right before the
 * node they replace, so the function list stays a valid evaluation order.
 */
#ifndef GLOW_PASSES_PASSUTIL_H
#define GLOW_PASSES_PASSUTIL_H

#include "graph/graph.h"
#include "support/hashmap.h"

#include <stdbool.h>
#include <stdint.h>

/* ---- permutations ---- */

/* s[i] == i for every i < n */
bool pu_perm_is_identity(const int64_t *s, unsigned n);
/* inv[s[i]] = i */
void pu_perm_inverse(const int64_t *s, unsigned n, int64_t *inv);
/* Transpose(Transpose(x, inner), outer) == Transpose(x, out): out[i] = inner[outer[i]] */
void pu_perm_compose(const int64_t *inner, const int64_t *outer, unsigned n, int64_t *out);
/* The type of Transpose(t) with shuffle s. */
const struct type *pu_transposed_type(struct type_ctx *tc, const struct type *t, const int64_t *s);

/* ---- elements ---- */

/* Element i of data (of type t) as a double (quantized kinds: the stored integer). */
double pu_load(const struct type *t, const uint8_t *data, uint64_t i);
/* Stores v as element i (float kinds round to the kind; integer kinds truncate). */
void pu_store(const struct type *t, uint8_t *data, uint64_t i, double v);
/* v is exactly representable in element kind k (float kinds: round-trips; integer kinds: an integer in range). */
bool pu_representable(enum elem_kind k, double v);

/* ---- splats ---- */

/* If every element of v is the same number, stores it in *x and returns true.
 * Recognises Splat nodes, splat and zero constants, dense constants whose
 * elements are all equal (bitwise, so 0.0 and -0.0 differ) and Broadcast,
 * Reshape, Transpose and Tile of a splat. Quantized values are not splats
 * here (their stored integers would need the scale). */
bool pu_splat_of(struct module *m, struct value v, double *x);
/* v is a splat of exactly x (bitwise equal as doubles: 0.0 is not -0.0). */
bool pu_is_splat(struct module *m, struct value v, double x);

/* The stored integers quantized element kind k holds: [*qmin, *qmax]
 * (QUI8, QI16, QI32; any other kind: QI8's). */
void pu_quant_limits(enum elem_kind k, double *qmin, double *qmax);

/* The first n doubles of v are all equal (true when n < 2). */
bool pu_all_equal(const double *v, uint64_t n);

/* ---- creating IR ---- */

/* A Splat node of type t and value x before `before`. */
struct node *pu_new_splat(struct func *f, const struct type *t, double x, struct node *before, const char *base);
/* A Transpose of v with shuffle s before `before`. */
struct node *pu_new_transpose(struct func *f, struct value v, const int64_t *s, struct node *before,
			      const char *base);
/* A Reshape of v to t before `before`. */
struct node *pu_new_reshape(struct func *f, struct value v, const struct type *t, struct node *before,
			    const char *base);
/* A dense constant of type t holding a copy of data, named after base. */
struct constant *pu_new_constant(struct module *m, const struct type *t, const void *data, const char *base);
/* The constant a pass rewrites in place of constant old for one user: old
 * itself when that user is its only one, else a new constant of old's type
 * named after it. */
struct constant *pu_rewrite_target(struct module *m, struct constant *old);
/* Makes float constant c a splat of v rounded to float (dropping its data). */
void pu_make_splat(struct constant *c, double v);
/* The payload of constant c, or NULL (reported to d) when it cannot be read. */
const uint8_t *pu_constant_data(struct module *m, struct constant *c, struct diag *d);

/* Replaces every use of result 0 of n by v and erases n when it is then
 * unused; the caller guarantees the types agree. When n has one result and
 * v is result 0 of a node of f, this is node_replace(f, n, v.node), so v's
 * node takes n's name under node_replace's rule (a node a pass created
 * for n, named after it, ends up with n's name). */
void pu_replace(struct func *f, struct node *n, struct value v);

/* Replaces n by a new node of kind `kind` on ops: n's type, name and
 * location, placed before n (pu_replace's naming rule). Returns the new
 * node, so the caller can still set its attributes (they live in fixed
 * slots, so setting them after the replacement changes nothing). The shared
 * last step of the fold-* passes, which raise a pattern rooted at n into
 * one node. */
struct node *pu_replace_new(struct func *f, struct node *n, unsigned kind, const struct value *ops, unsigned nops);

struct pass_ctx;
/* The driver of a fold-* pass: calls fold(f, n) on every node of f of kind
 * k1 or k2 (give one kind twice when there is one), in list order, the next
 * node taken before the call so fold may erase n; adds the number of true
 * answers to the counter stat and returns whether there was any. */
bool pu_fold_each(struct func *f, struct pass_ctx *ctx, unsigned k1, unsigned k2,
		  bool (*fold)(struct func *, struct node *), const char *stat);

/* The walk of a precision pass (convert-to-fp16/bf16, quantize): for each
 * function f of m in order, with *per_func (the pass's map of f's converted
 * values) initialised for f and freed after it, calls rewrite(arg, f, n)
 * on every node n of f in list order (n may be erased). Stops at the first
 * false answer (an error the pass reported) and returns false; true when
 * every node was visited. */
bool pu_rewrite_funcs(struct module *m, struct u64map *per_func,
		      bool (*rewrite)(void *arg, struct func *f, struct node *n), void *arg);

/* Copies data of type t into out permuted by shuffle s (out has type
 * pu_transposed_type(t, s)). */
void pu_transpose_data(const struct type *t, const uint8_t *data, const int64_t *s, uint8_t *out);

/* The per-channel coefficients of a BatchNormalization n whose Scale, Bias,
 * Mean and Var are float constants: y = x * mul[c] + add[c] with
 * mul = scale / sqrt(var + epsilon) and add = bias - mean * mul, in double
 * (the interpreter's formula). Returns a malloc'd array of 2*C doubles (mul
 * then add), or NULL when an operand is not a readable float constant (an
 * unreadable weight file is reported to d). */
double *pu_batchnorm_coeffs(struct module *m, struct node *n, struct diag *d);

/* The driver of the BatchNormalization passes (fold-batchnorm,
 * lower-batchnorm): for every BatchNormalization n of f, in list order,
 * with no predicate, that want(n) accepts and whose coefficients
 * pu_batchnorm_coeffs reads, calls use(f, n, co, ch, arg) with those
 * coefficients (ch multipliers then ch addends; freed after the call).
 * n may be erased (the next node is taken first). Stops when reading
 * coefficients reported an error to d or when use returns false; an
 * operand that is not a float constant only skips n. */
void pu_each_batchnorm(struct func *f, bool (*want)(const struct node *n),
		       bool (*use)(struct func *f, struct node *n, const double *co, uint64_t ch, void *arg), void *arg,
		       struct diag *d);

/* The constant behind v (a Constant node), or NULL. */
static inline struct constant *pu_constant(struct value v) { return as_constant(v.node); }

/* For every entry (float constant -> converted twin) of twins whose float
 * constant no node reads any more: erases it and gives its name to the
 * twin, so the weight a model calls "w" is still "w" after a precision
 * pass (fp16/bf16 conversion, quantization) made a copy of another type. */
void pu_rename_const_twins(struct module *m, const struct u64map *twins);

#endif
