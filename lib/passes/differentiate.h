/* differentiate.h - the automatic differentiation engine of the
 * differentiate pass (differentiate.c, with the helpers of diff-build.c),
 * shared by its rule files
 * (Gradients.def) and by the ONNX importer's Gradient operator
 * (lib/import/onnx/ops_train.c) through differentiate_values().
 */
#ifndef GLOW_PASSES_DIFFERENTIATE_H
#define GLOW_PASSES_DIFFERENTIATE_H

#include "passes/pass.h"
#include "support/hashmap.h"

/* Appends to f the adjoints of the values xs[0..nx) with respect to y,
 * seeded with seed (a value of y's type: the adjoint of y, ones for the
 * gradient of the sum of y): out[i] is the adjoint of xs[i], a zero Splat
 * of its type when y does not depend on it (or it is not floating point).
 * Only the nodes of f before the call are differentiated, with the rules
 * of the differentiate pass (inference semantics: Dropout is the identity,
 * BatchNormalization uses its Mean and Var operands). Returns NULL, or
 * the first node on the way from xs to y whose kind has no gradient rule
 * (the caller reports it; out is then not set and the nodes appended so
 * far are left for dce). */
const struct node *differentiate_values(struct func *f, struct value y, struct value seed, const struct value *xs,
					unsigned nx, struct value *out);

/* ---- for the rule files ---- */

struct dctx {
	struct module *m;
	struct func *g; /* where the nodes go: @F_grad (or f of differentiate_values) */
	struct diag *d;
	const struct train_config *cfg;
	bool train;          /* -mode=train: BatchNormalization with batch statistics */
	struct u64map clone; /* node of @F -> its copy in @F_grad */
	struct u64map needs; /* node of g -> non-NULL when it depends on a source */
	struct u64map adj;   /* (node, result) key -> struct value * holding its adjoint */
	struct u64map done;  /* nodes whose adjoint a fused rule already propagated */
	struct u64map srcs;  /* the sources when explicit (differentiate_values); else trainable placeholders */
	bool explicit_srcs;
	const struct func *f; /* @F */
	struct node *step;    /* @F_grad's dropout step counter, once a Dropout needs it */
	struct node *tail;    /* where section 3's Saves of running statistics go: NULL, the end */
	struct value *bn_save; /* pairs (new value, placeholder) of running statistics to Save */
	unsigned nbn_save, bn_cap;
};

/* ---- diff-build.c ---- */

/* Whether n is a trainable placeholder; whether it is a source: one of
 * differentiate_values's explicit ones, else a trainable placeholder. */
bool dg_is_trainable(const struct node *n);
bool dg_is_source(const struct dctx *c, const struct node *n);
/* Whether v carries an adjoint: a float value that is or depends on a
 * source. */
bool dg_wants_grad(struct dctx *c, struct value v);
/* The adjoint of v so far, NULL if none. */
struct value *dg_get_adj(struct dctx *c, struct value v);
/* Adds g to the adjoint of v (when v wants one). */
void dg_add_adj(struct dctx *c, struct value v, struct value g);

/* Adds g to the adjoint of n's operand 0 and returns true: the last step
 * of a rule for a kind with one differentiable operand. */
bool dg_to_input(struct dctx *c, const struct node *n, struct value g);

/* Node builders: at the end of c->g, named "<base>.<sfx>" ("<base>.grad"
 * without _s), at base's location. */
struct node *dg_mk_s(struct dctx *c, unsigned kind, const struct value *ops, unsigned nops,
		     const struct type *const *types, const struct node *base, const char *sfx);
struct node *dg_mk(struct dctx *c, unsigned kind, const struct value *ops, unsigned nops,
		   const struct type *const *types, const struct node *base);
struct value dg_mk1_s(struct dctx *c, unsigned kind, const struct value *ops, unsigned nops, const struct type *t,
		      const struct node *base, const char *sfx);
struct value dg_mk1(struct dctx *c, unsigned kind, const struct value *ops, unsigned nops, const struct type *t,
		    const struct node *base);
struct value dg_mk_bin_s(struct dctx *c, unsigned kind, struct value a, struct value b, const struct node *base,
			 const char *sfx);
struct value dg_mk_bin(struct dctx *c, unsigned kind, struct value a, struct value b, const struct node *base);
struct value dg_mk_splat_s(struct dctx *c, const struct type *t, double x, const struct node *base,
			   const char *sfx);
struct value dg_mk_splat(struct dctx *c, const struct type *t, double x, const struct node *base);
/* k(a, b) for a comparison k: a bool tensor of a's shape. */
struct value dg_mk_cmp(struct dctx *c, unsigned k, struct value a, struct value b, const struct node *base);
struct value dg_mk_select(struct dctx *c, struct value cond, struct value x, struct value y,
			  const struct node *base);
struct value dg_mk_transpose(struct dctx *c, struct value v, const int64_t *shuffle, const struct node *base);
/* The sum of v over axis, kept as a 1 and broadcast back to v's shape. */
struct value dg_sum_axis(struct dctx *c, struct value v, unsigned axis, const struct node *base);

/* The gradient rules, one per row of Gradients.def (diff-linear.c,
 * diff-ew.c, diff-shape.c, diff-rules.c); the table's comment gives their
 * contract. */
typedef bool (*dg_rule)(struct dctx *c, struct node *n, struct value gy);
#define GRAD(K, rule) bool rule(struct dctx *c, struct node *n, struct value gy);
#include "passes/Gradients.def"
#undef GRAD

/* The copy in @F_grad of a BatchNormalization n with -mode=train (operands
 * o, already mapped): normalized with the batch's statistics; the running
 * statistics' updates are queued for section 3. */
struct node *dg_bn_train_forward(struct dctx *c, const struct node *n, const struct value *o);

#endif
