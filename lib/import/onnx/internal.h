/* internal.h - shared state and helpers of the ONNX importer's files.
 *
 * The importer walks the graph's nodes in order. Every ONNX value name maps
 * to a struct tensor: its ONNX element type and shape, the graph value that
 * computes it (materialized lazily: initializers and folded values become
 * constants only when a node needs them), and, when known at import, its
 * contents (little-endian bytes in the ONNX element packing, or a splat).
 * Translators (one per row of the op table, ops.def) read their inputs
 * through imp_in_*()/imp_tval(), build nodes with the imp_b_*() helpers and
 * bind their outputs with imp_set_out*(). A translator that fails reports
 * through imp_op_err() and returns -1; its outputs are poisoned and nodes
 * reading them are skipped silently, so every independent problem is
 * reported in one run.
 *
 * Every name this header declares is the importer's own and starts with
 * imp_ (onnx_ and tio_ are the importer's public interface), so no file
 * of the library sees a bare helper name.
 */
#ifndef GLOW_IMPORT_ONNX_INTERNAL_H
#define GLOW_IMPORT_ONNX_INTERNAL_H

#include "graph/graph.h"
#include "import/onnx/onnx.h"
#include "onnx/onnx.pb-c.h"
#include "support/util.h"

#include <stdbool.h>
#include <stdint.h>

typedef Onnx__NodeProto onnx_node;

/* ONNX element types (TensorProto.DataType) */
enum {
	DT_UNDEF = 0, DT_FLOAT = 1, DT_UINT8 = 2, DT_INT8 = 3, DT_UINT16 = 4, DT_INT16 = 5, DT_INT32 = 6,
	DT_INT64 = 7, DT_STRING = 8, DT_BOOL = 9, DT_FLOAT16 = 10, DT_DOUBLE = 11, DT_UINT32 = 12,
	DT_UINT64 = 13, DT_COMPLEX64 = 14, DT_COMPLEX128 = 15, DT_BFLOAT16 = 16,
	/* float8/int4 (issue 15): held unpacked, one element per byte */
	DT_FLOAT8E4M3FN = 17, DT_FLOAT8E4M3FNUZ = 18, DT_FLOAT8E5M2 = 19, DT_FLOAT8E5M2FNUZ = 20, DT_UINT4 = 21,
	DT_INT4 = 22, DT_FLOAT4E2M1 = 23, DT_FLOAT8E8M0 = 24
};

/* (tensor.c) the float8 types, float8e8m0 included; the types packed two
 * per byte (int4, uint4, float4e2m1); the types only Cast, CastLike,
 * QuantizeLinear and DequantizeLinear read (the two groups) */
bool imp_dt_is_f8(int dtype);
bool imp_dt_is_4bit(int dtype);
bool imp_dt_is_narrow(int dtype);

/* Folding limit: known values with more elements stay graph constants. */
#define ONNX_FOLD_MAX 65536u

/* The default budget for the constants an import computes rather than
 * reads: folded values and the tables of Resize, GridSample, Col2Im and the
 * like, together (struct onnx_import_opts.max_generated_bytes). Each is
 * limited on its own (ONNX_FOLD_MAX, TABLE_MAX); this bounds their sum, so
 * that a model of a few hundred bytes cannot make a module of gigabytes. */
#define ONNX_GENERATED_MAX ((uint64_t)256 << 20)

/* A per-axis quantized tensor known at import: integers q (uint8 or int8),
 * n scales and zero points (zp NULL: zeros) along axis. */
struct imp_qaxis {
	struct tensor *q;
	const double *scale;
	const int64_t *zp;
	uint64_t n;
	unsigned axis;
};

struct tensor {
	const char *name;
	int dtype;
	unsigned rank;
	uint64_t dims[GLOW_MAX_RANK];
	struct value v;       /* the graph value; v.node NULL until materialized */
	bool known;           /* contents known at import */
	bool splat;           /* known: every element is splat_f / splat_i */
	bool poisoned;        /* its producer failed */
	bool generated;       /* raw was computed here (a fold, a table), not read from the model */
	/* the float result of a per-axis DequantizeLinear of known integers
	 * (ops_quant.c; known values when folded, else its graph form): those
	 * integers and parameters, NULL else */
	const struct imp_qaxis *qaxis;
	double splat_f;
	int64_t splat_i;
	const uint8_t *raw;   /* known and not splat: numel * imp_dt_size(dtype) bytes */
	int64_t *ivals;       /* cached wide forms (scratch arena) */
	double *fvals;
};

/* The names a subgraph (If's branches, Loop's and Scan's body) binds: its
 * initializers, inputs and node outputs, shadowing those of the enclosing
 * scopes. Lookups walk the chain outward to the main graph's tensors. One
 * scope lives for one translation of the subgraph (one unrolled iteration),
 * on the translator's stack (ops_control.c). */
struct scope {
	struct strmap tensors;   /* name -> struct tensor */
	struct scope *parent;    /* NULL: the main graph (importer.tensors) */
	const onnx_node *owner;  /* the node whose attribute holds the subgraph */
	const char *attr;        /* that attribute's name */
	long iter;               /* unrolled iteration, -1 if none */
};

struct importer {
	struct module *m;
	struct func *f;
	struct type_ctx *tc;
	struct diag *d;
	const char *filename;
	const char *base_dir;   /* of the model file, for external data */
	const struct onnx_import_opts *opts;
	int64_t opset;          /* of the default domain */
	struct arena scratch;   /* tensors, known data; freed after import */
	struct strmap tensors;  /* ONNX name -> struct tensor */
	struct strmap uses;     /* names read by a node or a graph output */
	struct strmap outputs;  /* graph output names */
	struct u64map nhwc;     /* node pointer -> struct tensor cache of NCHW->NHWC transposes */
	const onnx_node *node;  /* being translated */
	const struct op_row *row; /* its row, while its translator runs */
	int errors;
	/* bytes of the dense constants built from generated tensors so far
	 * (imp_t_const), and whether they passed the budget: then the import
	 * stops at the next node (ONNX_GENERATED_MAX) */
	uint64_t generated_bytes;
	bool generated_over;
	struct scope *inner;    /* innermost subgraph being translated, NULL in the main graph */
	uint64_t unrolled;      /* subgraph nodes translated so far (limited, ops_control.c) */
	Onnx__OperatorSetIdProto **opsets; /* the model's opset_import, for imp_domain_opset() */
	const Onnx__GraphProto *graph; /* the main graph, for looking at a value's readers */
	size_t nopsets;
	/* imp_check_ops and imp_translate (dispatch.c), set by import.c: the
	 * translators of subgraph operators (ops_control.c) call back the
	 * dispatch through these, so the dispatch table's file and theirs do
	 * not depend on each other */
	int (*check_ops)(struct importer *im, const Onnx__GraphProto *g);
	void (*translate)(struct importer *im, const onnx_node *n);
};

/* ---- the base every file calls (report.c) ---- */
/* The node's name in messages: its name, else its first output's. */
const char *imp_node_label(const onnx_node *n);
/* Reports an error about the current node (or the model); returns -1. */
int imp_op_err(struct importer *im, const char *fmt, ...) GLOW_PRINTF(2, 3);
void imp_op_warn(struct importer *im, const char *fmt, ...) GLOW_PRINTF(2, 3);
/* Whether bytes more of computed constants fit the import's budget
 * (ONNX_GENERATED_MAX or the option): false after reporting. For a
 * translator to call before it computes large tables; imp_t_const counts
 * what is actually added. */
bool imp_generated_fits(struct importer *im, uint64_t bytes);
/* That budget: the option's, else ONNX_GENERATED_MAX. */
uint64_t imp_generated_max(const struct importer *im);
/* the type elem<dims>; NULL after reporting a rank or size the graph IR
 * cannot hold */
const struct type *imp_ty(struct importer *im, int elem, const uint64_t *dims, unsigned rank);
/* "base.suffix" in scratch: the name of a value derived from base */
const char *imp_dname(struct importer *im, const char *base, const char *suffix);
/* f as the shortest double that rounds to the same float (0.02f: 0.02) */
double imp_f32_short(float f);
/* NULL, "" and "ai.onnx" name the default domain. */
bool imp_default_domain(const char *dom);

/* ---- element types (tensor.c) ---- */
size_t imp_dt_size(int dtype);        /* bytes per element, 0 if unsupported for data */
const char *imp_dt_name(int dtype);
bool imp_dt_is_float(int dtype);
bool imp_dt_is_int(int dtype);        /* integers and bool */
int imp_dt_elem(int dtype);           /* graph element kind, -1 if none */
int imp_dt_of_elem(int elem);         /* ONNX type of a graph element kind */
/* The quantized kind that holds ONNX integers of dtype where the graph IR
 * has no plain kind: uint8 qui8, int8 qi8, int32 qi32 (a "raw" integer is
 * that kind with scale 1 and offset 0); -1 for other types (ops_quant.c). */
int imp_dt_qelem(int dtype);
/* The type of a graph input of dtype: imp_ty's, or for uint8 and int8
 * the raw quantized kind (ops_quant.c retypes it at its first use by a
 * quantized operator); NULL after reporting. */
const struct type *imp_input_type(struct importer *im, int dtype, const uint64_t *dims, unsigned rank);

/* ---- tensors (tensor.c) ---- */
uint64_t imp_t_numel(const struct tensor *t);
/* Gather's result shape (data's dimensions with axis replaced by idx's)
 * into dims; its rank (data->rank + idx->rank - 1 <= GLOW_MAX_RANK: the
 * caller checks) */
unsigned imp_gather_dims(const struct tensor *data, const struct tensor *idx, unsigned axis, uint64_t *dims);
struct tensor *imp_t_lookup(struct importer *im, const char *name);
struct tensor *imp_t_new(struct importer *im, const char *name, int dtype, unsigned rank, const uint64_t *dims);
/* Known tensors from wide values (converted to dtype). */
struct tensor *imp_t_from_ints(struct importer *im, const char *name, int dtype, unsigned rank, const uint64_t *dims,
			   const int64_t *v);
struct tensor *imp_t_from_floats(struct importer *im, const char *name, int dtype, unsigned rank,
			     const uint64_t *dims, const double *v);
/* Reads a TensorProto (raw, typed fields or external data); NULL after reporting. */
struct tensor *imp_t_from_proto(struct importer *im, const Onnx__TensorProto *p, const char *name);
/* Wide views of known contents (NULL if not known or too large to fold). */
const int64_t *imp_t_ints(struct importer *im, struct tensor *t);
const double *imp_t_floats(struct importer *im, struct tensor *t);
/* The graph value of t, creating a constant for known contents; reports
 * and returns a NULL node for unsupported element types. */
/* The absent value (node NULL): what a translation returns for an operand
 * not given or a node it could not build. */
static const struct value no_value = {NULL, 0};

struct value imp_tval(struct importer *im, struct tensor *t);
/* A new constant of type `type` (of t's shape and byte size) holding t's
 * known contents, named as t (or after it when the name is taken). */
struct value imp_t_const(struct importer *im, const struct tensor *t, const struct type *type);
const struct type *imp_t_type(struct importer *im, const struct tensor *t); /* NULL: unsupported elem */

/* ---- node context (nodectx.c) ---- */
/* A new tensor bound to name in the innermost scope. */
struct tensor *imp_bind(struct importer *im, const char *name);
unsigned imp_n_in(const onnx_node *n);  /* inputs, not counting trailing empty names */
struct tensor *imp_in_opt(struct importer *im, unsigned i);  /* NULL if absent */
struct tensor *imp_in_req(struct importer *im, unsigned i);  /* reports if absent */
/* graph value of input i, NULL node after reporting */
struct value imp_in_val(struct importer *im, unsigned i);
/* input i of an operator defined on floating point only: its value and
 * type; -1 if absent (reported) or not floating point (reported here) */
int imp_in_float(struct importer *im, unsigned i, struct value *x, const struct type **t);
/* The start of an operator defined on floating point only whose input 0 is
 * the tensor it works on: that input's value and type (imp_in_float) and
 * the name of output 0. */
struct imp_float_op {
	struct value x;
	const struct type *t;
	const char *name;
};
/* Fills f; -1 after a diagnostic (as imp_in_float). */
int imp_float_op_start(struct importer *im, struct imp_float_op *f);
/* x is floating point of an element kind the graph IR has; reports
 * otherwise (the tensor-input form of imp_in_float). */
bool imp_float_input(struct importer *im, const struct tensor *x);
bool imp_out_used(struct importer *im, unsigned i);
const char *imp_out_name(struct importer *im, unsigned i);
/* Binds output i to a graph value (or a tensor). */
int imp_set_out(struct importer *im, unsigned i, struct value v);
int imp_set_out_t(struct importer *im, unsigned i, struct tensor *t);

/* attributes */
const Onnx__AttributeProto *imp_attr(const onnx_node *n, const char *name);
int64_t imp_attr_i(const onnx_node *n, const char *name, int64_t def);
/* float attributes as the shortest double that rounds to the same float, so
 * 0.02f prints as 0.02 */
double imp_attr_f(const onnx_node *n, const char *name, float def);
/* NUL-terminated copy in scratch, def if absent */
const char *imp_attr_s(struct importer *im, const onnx_node *n, const char *name, const char *def);
/* number of ints, -1 if absent */
long imp_attr_ints(const onnx_node *n, const char *name, const int64_t **v);
long imp_attr_floats(const onnx_node *n, const char *name, const float **v);
/* a negative axis counts from the end; reports out-of-range axes */
int imp_norm_axis(struct importer *im, int64_t axis, unsigned rank, unsigned *out);
/* The "axes" attribute as distinct normalized axes in ax[0..*nax) (every
 * axis of the rank, in order, if absent); reports more entries than the
 * rank, an empty list unless allow_empty, and a repeated axis. 0 or -1. */
int imp_attr_axes(struct importer *im, const onnx_node *n, unsigned rank, bool allow_empty, unsigned *ax,
		  unsigned *nax);
/* Input 0 and its "axis" attribute (default def) normalized to its rank;
 * NULL after reporting an absent input or an axis out of range. */
struct tensor *imp_in_axis(struct importer *im, const onnx_node *n, int64_t def, unsigned *axis);
/* known int64 contents of input i (NULL after reporting: "must be known") */
const int64_t *imp_in_ints(struct importer *im, unsigned i, uint64_t *count);
/* Input 0 in *x and the known int64 contents of input 1 (Expand's shape,
 * Tile's repeats, ...): NULL after reporting either missing (both are
 * looked at, so both are reported). */
const int64_t *imp_in_x_ints(struct importer *im, struct tensor **x, uint64_t *count);

/* ---- building (build.c) ---- */
struct value imp_b_node(struct importer *im, unsigned kind, const char *name, const struct value *ops, unsigned nops,
		    const struct type *t);
/* a kind b on values of one type, no broadcasting (the comparisons give
 * bool); a NULL node if either is */
struct value imp_b_binary(struct importer *im, unsigned kind, struct value a, struct value b, const char *name);
/* a splat constant f shaped like v; v itself if its node is NULL */
struct value imp_b_splat_like(struct importer *im, struct value v, double f, const char *name);
struct value imp_b_unary(struct importer *im, unsigned kind, const char *name, struct value x);
struct value imp_b_transpose(struct importer *im, struct value x, const unsigned *perm, const char *name);
struct value imp_b_reshape(struct importer *im, struct value x, const uint64_t *dims, unsigned rank,
		       const char *name);
/* numpy broadcast of x to dims (x's rank <= rank); x itself if same shape */
struct value imp_b_broadcast(struct importer *im, struct value x, const uint64_t *dims, unsigned rank,
			 const char *name);
struct value imp_b_convert(struct importer *im, struct value x, int elem, const char *name);
/* Concat of the n values vs (of one type but for axis) along axis; a NULL
 * node if one is, or after reporting a too large result. */
struct value imp_b_concat(struct importer *im, const struct value *vs, unsigned n, unsigned axis, const char *name);
struct value imp_b_splat_const(struct importer *im, const char *name, const struct type *t, double f);
/* NCHW <-> NHWC for rank-4 values (cached for NCHW->NHWC) */
struct value imp_b_to_nhwc(struct importer *im, struct value x, const char *name);
struct value imp_b_to_nchw(struct importer *im, struct value x, const char *name);
/* numpy broadcast shape of a and b; reports if incompatible */
int imp_bcast_shape(struct importer *im, const struct type *a, const struct type *b, uint64_t *dims, unsigned *rank);

/* ---- translators ---- */
/* Pooling and convolution windows (window.c), 2-D and 3-D alike, per
 * spatial axis of in elements, window extent ek (dilated) and stride s.
 * imp_window_same: the total padding SAME_UPPER (upper) or SAME_LOWER puts
 * around, split into *pb before and *pe after. imp_window_out: the output
 * size with *pb and *pe padding, floor division unless ceil_mode, which
 * grows *pe so that floor division gives the same size; -1 after reporting
 * a window larger than the padded input. */
void imp_window_same(int64_t in, int64_t ek, int64_t s, bool upper, int64_t *pb, int64_t *pe);
int64_t imp_window_out(struct importer *im, int64_t in, int64_t ek, int64_t s, bool ceil_mode, int64_t pb,
		       int64_t *pe);
/* Conv and ConvTranspose, 2-D and 3-D: the input *x (floating point) and
 * the weights *w of its rank; -1 after reporting. */
int imp_conv_inputs(struct importer *im, struct tensor **x, struct tensor **w);
/* Spatial parameters of a 1-D or 2-D window, always as 2-D (a 1-D window has
 * width 1); window.c, for ops_conv.c and the quantized convolutions. */
struct imp_window {
	unsigned nsp;          /* spatial dims in the ONNX input: 1 or 2 */
	int64_t k[2], s[2], d[2];
	int64_t pads[4];       /* top, left, bottom, right */
	uint64_t in[2], out[2];
};
/* The attribute name (ints) of n as a pair in v (nsp entries, each at
 * least 1, or 0 where def is 0), def where absent; -1 after reporting. */
int imp_win_read_pair(struct importer *im, const onnx_node *n, const char *name, unsigned nsp, int64_t *v,
		      int64_t def);
/* Reads kernel, strides, dilations and pads (with auto_pad) of n on the
 * rank-3 or rank-4 input x and computes the output size into *w; kdef:
 * the kernel shape where n has none (NULL: required); transposed: the
 * ConvTranspose formulas, else ceil_mode is read; -1 after reporting. */
int imp_win_params(struct importer *im, const onnx_node *n, const struct tensor *x, const int64_t *kdef,
		   struct imp_window *w, bool transposed);
/* x (N, C, L) -> (N, C, L, 1) for 1-D windows; a rank-4 x as it is. */
struct value imp_win_as_4d(struct importer *im, struct value x, const char *name);
/* The NHWC result r of an operator as the NCHW value name (of rank 3 for
 * 1-D windows, nsp 1). */
struct value imp_win_nchw_val(struct importer *im, struct value r, unsigned nsp, const char *name);
/* The window's kernels, strides and pads on node nd (dilation too when dil). */
void imp_win_set_attrs(struct importer *im, struct node *nd, const struct imp_window *w, bool dil);
/* The NHWC convolution node of kind on values xv (NCHW), wv (OIHW) and bv
 * (OC), with n's group checked against x and w, whose result has
 * rproto's element type; a NULL node after reporting. */
struct value imp_win_conv_node(struct importer *im, const onnx_node *n, const struct tensor *x,
			       const struct tensor *w, const struct imp_window *win, struct value xv, struct value wv,
			       struct value bv, unsigned kind, const struct type *rproto);
typedef int (*op_fn)(struct importer *im, const onnx_node *n);
struct op_row {
	const char *op;
	int since, until; /* opset versions (of domain) whose semantics the translator knows */
	op_fn fn;
	const char *domain; /* "" for the default domain */
	unsigned kind;      /* ONNX_OP_KIND's node kind, else NK_COUNT */
};
/* The row of op in domain (NULL, "" and "ai.onnx" are the default domain);
 * op_lookup: in the default domain. NULL if the table lacks it. */
const struct op_row *imp_op_lookup_domain(const char *domain, const char *op);
const struct op_row *imp_op_lookup(const char *op);
/* The newest opset the importer knows the operator versions of
 * (versions.c). */
#define ONNX_KNOWN_OPSET 24
/* The newest version of default-domain operator op in (until, opset], 0 if
 * none; *change and *change_version: the first of those versions that
 * changed the semantics and what it changed (NULL and 0 if they only add
 * element types) (versions.c). */
int imp_op_newer(const char *op, int until, int64_t opset, const char **change, int *change_version);
/* ---- the model's declarations (import.c) ---- */
/* The size -dim binds symbolic dimension param to; *ok false (and 0)
 * when -dim does not bind it. */
int64_t imp_bound_dim(struct importer *im, const char *param, bool *ok);

/* ---- the op table and translation (dispatch.c) ---- */
/* Reports every operator of g (not of its subgraphs) that the table lacks;
 * returns their number. */
int imp_check_ops(struct importer *im, const Onnx__GraphProto *g);
/* Translates node n in the current scope; on failure its outputs are
 * poisoned. Leaves im->node at n. */
void imp_translate(struct importer *im, const onnx_node *n);
/* The opset version the model imports for domain (the default domain's is
 * im->opset); -1 if the model imports none. */
int64_t imp_domain_opset(const struct importer *im, const char *domain);
/* Constant folding of known inputs (fold.c): 1 folded, 0 not foldable, -1 error */
int imp_fold_node(struct importer *im, const onnx_node *n);
/* Known-value data movement (fold.c); NULL if t is not known or too large.
 * Splats stay splats. */
bool imp_all_known(struct importer *im);  /* every present input of the node is known */
struct tensor *imp_t_view(struct importer *im, struct tensor *t, const char *name, unsigned rank,
		      const uint64_t *dims); /* same contents, new shape */
struct tensor *imp_k_permute(struct importer *im, struct tensor *t, const unsigned *perm, const char *name);
struct tensor *imp_k_concat(struct importer *im, struct tensor **ts, unsigned n, unsigned axis, const char *name);
/* out[i] = t[start + i * step] per dimension */
struct tensor *imp_k_slice(struct importer *im, struct tensor *t, const int64_t *start, const int64_t *step,
		       const uint64_t *odims, const char *name);
struct tensor *imp_k_gather(struct importer *im, struct tensor *data, struct tensor *idx, unsigned axis,
			const char *name);
struct tensor *imp_k_broadcast(struct importer *im, struct tensor *t, const uint64_t *dims, unsigned rank,
			   const char *name);
struct tensor *imp_k_cast(struct importer *im, struct tensor *t, int dtype, const char *name);
struct tensor *imp_k_splat(struct importer *im, const char *name, int dtype, unsigned rank, const uint64_t *dims,
		       double f, int64_t i);

/* Windows beyond the 2-D kinds (ops_3d.c), dispatched to by ops_conv.c:
 * 3-D Conv and ConvTranspose, 3-D or dilated pools, MaxPool's Indices
 * output (bound as output 1 from the MaxPool kind's NHWC Argmax). */
int imp_op_conv_3d(struct importer *im, const onnx_node *n);
int imp_op_conv_transpose_3d(struct importer *im, const onnx_node *n);
int imp_op_pool_nd(struct importer *im, const onnx_node *n, bool max);
int imp_maxpool_indices(struct importer *im, struct value argmax, const struct tensor *x, unsigned nsp);

/* The translations the quantized operators share with their float
 * forms (for ops_quant.c). imp_conv_q: Conv's 1-D or 2-D window (attributes of
 * n, shapes of x and w) on the values xv (NCHW) and wv (OIHW) of any
 * element types, bias bv of OC elements, as a node of kind whose result
 * has rproto's element type; returns the NCHW result named name and the
 * NHWC node in *core (for the caller's attributes), a NULL node after
 * reporting (window.c). imp_matmul: ONNX MatMul of a and b (numpy
 * broadcasting), the result of rproto's element type, named name
 * (build.c). */
struct value imp_conv_q(struct importer *im, const onnx_node *n, const struct tensor *x, const struct tensor *w,
			struct value xv, struct value wv, struct value bv, unsigned kind, const struct type *rproto,
			const char *name, struct node **core);
struct value imp_matmul(struct importer *im, struct value a, struct value b, const struct type *rproto,
			const char *name);
/* A reduction of x (BatchedReduceAdd, ...Min, ...) over every dimension:
 * a rank-0 value; a rank-0 x is returned as is (ops_more.c). */
struct value imp_reduce_all(struct importer *im, unsigned kind, struct value x, const char *name);
/* The stored integers of quantized value v as float (exact), named name. */
struct value imp_q_integers(struct importer *im, struct value v, const char *name);
/* ONNX's integer arithmetic kind (Add, Sub, Mul, Div, Mod) on uint8 or
 * int8 values a and b of one type, wrapping as ONNX does; NULL node after
 * reporting. */
struct value imp_int8_binary(struct importer *im, unsigned kind, struct value a, struct value b, const char *name);
/* A Conv of a QDQ model whose weights w are a per-axis DequantizeLinear of
 * known integers (w->qaxis, axis 0), whose input x is a Dequantize and whose
 * only reader is a per-tensor QuantizeLinear with known parameters (or a
 * Relu read only by one whose type holds no negative value): output 0 as
 * the Dequantize of a ChannelwiseQuantizedConvolution with that
 * QuantizeLinear's type (which fold-qdq then joins). Returns 1 when it
 * translated n (*rc its result), 0 when the pattern does not apply. */
int imp_qdq_channelwise_conv(struct importer *im, const onnx_node *n, struct tensor *x, struct tensor *w, int *rc);
/* The same for a Gemm built as FullyConnected of a (a Dequantize) and
 * weights w (per-axis on its output axis: 0 when trb, else 1): a
 * ChannelwiseQuantizedFullyConnected. */
int imp_qdq_channelwise_fc(struct importer *im, struct value a, struct tensor *w, bool trb, int *rc);
/* Cast (and CastLike) to dtype `to` where it or the input is uint8 or
 * int8 (imp_op_cast calls it). */
int imp_cast_int8(struct importer *im, int to);
/* float8/int4 (issue 15, ops_f8.c): x converted to element kind elem,
 * float8 targets with ONNX Cast's saturate (false: overflow to infinity or
 * NaN); Cast and CastLike where the input or `to` is a float8 or 4-bit
 * type; QuantizeLinear (to dtype) and DequantizeLinear where the data is
 * such a type or the node is blocked (imp_q_narrow says which). */
/* ---- quantized values (qvalue.c) ---- */
/* The float arithmetic of a binary kind: x, and c broadcast to x's shape. */
struct value imp_q_fbin(struct importer *im, unsigned kind, struct value x, struct value c, const char *name);
/* Whether t holds raw integers: scale 1, offset 0. */
bool imp_q_is_raw(const struct type *t);
/* A float scalar constant f named name. */
struct value imp_q_fconst(struct importer *im, const char *name, double f);
/* Value v (quantized) as type qt with the same stored integers. */
struct value imp_q_reinterpret(struct importer *im, struct value v, const struct type *qt, const char *name);
struct value imp_convert_sat(struct importer *im, struct value x, int elem, bool sat, const char *name);
int imp_cast_narrow(struct importer *im, int to);
bool imp_q_narrow(int dtype, const onnx_node *n);
/* The float path also takes parameters that no quantized type holds: a
 * float8e8m0 scale, or arithmetic (arith_dtype: QuantizeLinear's
 * precision, DequantizeLinear's output type) in another type than float. */
bool imp_q_float_path(int scale_dtype, int arith_dtype);
/* QuantizeLinear's division type (precision, opset 23) and
 * DequantizeLinear's output type (output_dtype, opset 23, or the scale's):
 * ONNX types; -1 after reporting. */
int imp_q_precision(struct importer *im);
int imp_dq_out_dtype(struct importer *im, const struct tensor *s);
int imp_quantize_narrow(struct importer *im, int dtype);
int imp_dequantize_narrow(struct importer *im);
/* Reports and returns true when node n reads input t of a float8 or 4-bit
 * type and is not one of the operators that translate them. */
bool imp_narrow_refused(struct importer *im, const onnx_node *n, const struct tensor *t);

/* Training-mode paths of BatchNormalization (opset 14 training_mode = 1:
 * batch statistics and running-statistics outputs) and Dropout (ratio known
 * to be 0: identity, all-true mask; else refused as random) (ops_train.c). */
int imp_batchnorm_training(struct importer *im, const onnx_node *n, struct tensor *x);
int imp_dropout_training(struct importer *im, const onnx_node *n, struct tensor *x);

/* Tables the importer builds from declared shapes (sampling positions,
 * index lists) are limited to TABLE_MAX entries, as Resize's are: a model
 * may declare any dimension, and a table of its size is allocated at
 * import and written into the module as weights. table_fits: a * b <=
 * TABLE_MAX without overflow. */
#define TABLE_MAX ((uint64_t)1 << 20)
static inline bool table_fits(uint64_t a, uint64_t b)
{
	return a <= TABLE_MAX && b <= TABLE_MAX && a * b <= TABLE_MAX;
}

/* ScatterND (nd) or ScatterElements with reduction max or min, indices
 * known at import (ops_scatter.c). */
int imp_scatter_minmax(struct importer *im, const onnx_node *n, bool nd, bool is_max);

/* Slice (opset 10+) whose starts or ends are known only at run time, of a
 * width known at import (control_slice.c; imp_op_slice's). */
int imp_op_slice_runtime(struct importer *im, const onnx_node *n);

#define ONNX_OP(name, since, until, fn) int fn(struct importer *im, const onnx_node *n);
#define ONNX_OP_DOMAIN(domain, name, since, until, fn) int fn(struct importer *im, const onnx_node *n);
#include "import/onnx/ops.def"
#undef ONNX_OP
#undef ONNX_OP_KIND
#undef ONNX_OP_DOMAIN

#endif
