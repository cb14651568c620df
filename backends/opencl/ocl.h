/* ocl.h - the OpenCL backend (docs/OpenCL.md): its struct backend, and what
 * its files share.
 *
 * ocl_backend.c  the struct backend: graph-side questions, compile, run
 * ocl_runtime.c  the device: platform and device choice, context, queues,
 *                programs (built once per compiled function, cached in
 *                memory by source hash)
 * ocl_diskcache.c built programs on disk between processes
 * OclKernels.def the table: per instruction kind its generator, support
 *                test, relu fusion and graph-side element kinds
 * ocl_table.c    the table as data, indexed by kind, and its checks
 * ocl_prog.c     OpenCL C source for one IR function: one kernel per
 *                instruction, each by its row's generator
 * ocl_src.c      the program text the generators write through: a
 *                kernel's start, #defines, operand places, sections of
 *                kernels/ocl_kernels.cl, launch shapes
 * ocl_gen.c      the generators: the templates of kernels/ocl_kernels.cl
 *                specialized with the instruction's static shapes
 * ocl_gen_move.c the data-movement kernels (transpose, insert, extract),
 *                whose index arithmetic is generated per shape
 * ocl_gen_igemm.c the GPU kernels' tiled convolution and matrix product
 * ocl_gen_index.c gathers, scatters (their run-time index checks), pad,
 *                broadcast, space/depth, flip and resize kernels
 *
 * Memory. A compiled function owns four device buffers: R0 the constant
 * weights (uploaded once at compile time), R1 the mutable weights (used
 * only by a program that computes on placeholders directly), R2 the
 * activations (the memory plan's region, or an own placement) and R3 the
 * constant operands repacked for the kernels (convolution filters as
 * [KH][KW][IC/group][OC], transposed matrices). Every kernel takes the four
 * and finds its operands at offsets fixed in its source.
 *
 * Library code: reports through struct diag, never exits.
 */
#ifndef GLOW_BACKENDS_OPENCL_OCL_H
#define GLOW_BACKENDS_OPENCL_OCL_H

#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>

#include "backends/backend.h"
#include "ir/ir.h"
#include "support/io.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

extern const struct backend ocl_backend;

/* ---- the device (ocl_runtime.c) ---- */

struct ocl_device {
	cl_platform_id platform;
	cl_device_id id;
	cl_context ctx;
	cl_command_queue compute, copy; /* in order; profiling when asked */
	char name[256];
	bool is_gpu;
	bool profiling;
	cl_uint compute_units, clock_mhz;
};

/* The process's device, opened on first use: the first GPU of any
 * platform, else the first device; $GLOW_OPENCL_DEVICE=N picks the N-th
 * device of all platforms instead. Profiling queues when
 * $GLOW_OPENCL_PROFILE is set. NULL after reporting "no OpenCL device". */
struct ocl_device *ocl_device_get(struct diag *d);

/* A program of src built for the device, from the in-memory cache when the
 * same source was built before in this process. NULL after reporting the
 * build log. The program is owned by the cache. */
cl_program ocl_program_get(struct ocl_device *dev, const char *src, size_t len, struct diag *d);

/* Releases every program of the in-memory cache (none may be in use):
 * ocl-prebuild's server builds many programs in one process. */
void ocl_program_cache_clear(void);

/* ocl_diskcache.c: the program of a source (its hash and length) built
 * by an earlier process, NULL if none usable; and keeping a built one. */
cl_program ocl_disk_load(struct ocl_device *dev, uint64_t src_hash, size_t len);
void ocl_disk_store(struct ocl_device *dev, cl_program p, uint64_t src_hash, size_t len);

/* "CL_OUT_OF_RESOURCES" etc. */
const char *ocl_err_name(cl_int e);

/* ---- code generation (ocl_gen.c) ---- */

/* Where an operand lives: region (0..3) and byte offset. */
struct ocl_place {
	unsigned region;
	uint64_t offset;
};

/* One kernel launch of the compiled program. */
struct ocl_launch {
	const struct ir_instr *in;
	char name[16];
	size_t global[2], local[2];
	unsigned dims;
};

/* A constant operand the generator wants repacked into R3. */
struct ocl_pack {
	const struct ir_weight *w;
	uint64_t offset;      /* in R3 */
	unsigned kind;        /* OCL_PACK_* */
	uint64_t a, b, c, d;  /* the shape the repacking needs */
};
enum { OCL_PACK_FILTER, OCL_PACK_TRANSPOSE };

struct ocl_gen {
	struct ir_func *f;
	struct ostream src;       /* the program text */
	struct u64map place;      /* root buffer -> struct ocl_place * */
	struct ocl_launch *launch;
	size_t nlaunch, caplaunch;
	struct ocl_pack *pack;
	size_t npack;
	uint64_t r3_size;
	bool gpu;                 /* the GPU kernels ($GLOW_OPENCL_KERNELS) */
	bool direct_mutable;      /* some kernel uses a mutable weight itself */
	/* the once-per-program helper sections written so far (the "types"
	 * and "qhelpers" sections of kernels/ocl_kernels.cl) */
	bool types_helpers, q_helpers;
	const struct ir_instr *fused; /* an in-place relu folded into the previous kernel */
	const struct ir_instr *fused_add; /* an add folded into the previous kernel */
	/* while a kernel flagged OCL_F_FUSE_ADD is generated: the add it
	 * stores the result of (its operand res_op is the residual), or NULL */
	const struct ir_instr *res_add;
	unsigned res_op;
	/* the run-time index checks of the index kernels (ocl_gen_index.c),
	 * in program order */
	struct ocl_check *check;
	size_t ncheck;
	/* oclf (control flow): the run-time index checks of insertslice and
	 * extractslice (ocl_gen_flow.c), in program order */
	struct ocl_slice_check *scheck;
	size_t nscheck, capscheck;
};

/* ---- the table (OclKernels.def, ocl_table.c) ---- */

/* A generator appends the kernel of instruction `in` (ocl_src_begin, its
 * #defines, a section); `arg` is its row's Arg column, `relu` whether the
 * kernel rectifies what it stores. */
typedef void ocl_gen_fn(struct ocl_gen *g, const struct ir_instr *in, unsigned arg, bool relu);
/* Whether the generator handles `in` (operand element kinds and shapes). */
typedef bool ocl_supports_fn(const struct ir_instr *in);

/* Flags column of OclKernels.def. */
enum {
	OCL_F_FUSE_RELU = 1, /* a following in-place relu of the result is applied in the store */
	OCL_F_RELU = 2,      /* the kind itself rectifies its result */
	OCL_F_ZEROS = 4,     /* the CPU kernel reads padding from R3's zero block (operand 2's last dimension floats) */
	OCL_F_FUSE_ADD = 8,  /* a following add of another buffer to the result is applied in the store */
};

/* Elems column: the element kinds the graph side admits for a node kind. */
enum ocl_elems {
	OCL_EL_NONE,         /* no node kind (Instrs.def names none): unsupported */
	OCL_EL_FLOAT,        /* float everywhere */
	OCL_EL_FLOAT_ARGMAX, /* float; the second result may be an integer or index (an argmax) */
	OCL_EL_EW,           /* an elementwise kind: as ocl_ew_elems_ok says (float, int32, int64, bool) */
	OCL_EL_ANY,          /* any element kind, moved bit for bit */
	OCL_EL_NUMERIC,      /* float, int32, int64 or bool, in any mix (the scatters) */
	/* reductions (ocl2; ocl_gen_red.h's ocl_red_elems_ok) */
	OCL_EL_REDUCE,       /* result and source of one kind: float, int32, int64, index32, index64 */
	OCL_EL_ARG,          /* an integer or index result of such a source (argmax, argmin) */
	/* oclk: topk's Values and Input of one of the reductions' kinds,
	 * Indices an integer or index kind (ocl_topk_elems_ok) */
	OCL_EL_TOPK,

	/* element types (oclt; ocl_gen_types.c) */
	OCL_EL_CONVERT,      /* convertto, quantize, dequantize: the pairs ocl_convert_elems_ok admits */
	/* float everywhere, or the quantized linear form ocl_qlinear_elems_ok
	 * admits (ocl_gen_quant.c: convolution and the matrix products) */
	OCL_EL_FLOAT_QLINEAR,
};

/* One row of OclKernels.def (gen NULL: the kind has no row). */
struct ocl_row {
	ocl_gen_fn *gen;
	ocl_supports_fn *supports;
	unsigned flags; /* OCL_F_* */
	unsigned arg;
	enum ocl_elems elems;
};

/* A graph node kind that IRGen turns into instruction `kind` without
 * Instrs.def's Graph column naming it (OCL_NODE rows; kind 0 and elems
 * OCL_EL_NONE: no row). */
struct ocl_node_row {
	unsigned kind;
	enum ocl_elems elems;
};

/* The rows by instruction kind and by node kind, as OclKernels.def states
 * them (elementwise kinds have no row: ocl_row_of adds them). */
extern const struct ocl_row ocl_rows[IK_COUNT];
extern const struct ocl_node_row ocl_node_rows[NK_COUNT];

/* Instruction kind `kind`'s row: its OclKernels.def row, else the
 * elementwise row when EW.def's Real row of the kind is one OpenCL C
 * states, else NULL (the backend does not compile the kind). The first
 * call checks the table (ocl_table_check) and stops with an internal
 * error naming the row of any problem. */
const struct ocl_row *ocl_row_of(unsigned kind);
/* The element kinds the graph side admits for node kind `kind`
 * (OCL_EL_NONE: unsupported), from the same rows. */
enum ocl_elems ocl_node_elems(unsigned kind);
/* Checks rows (IK_COUNT of them) and nodes (NK_COUNT) for what the
 * compiler cannot: each problem a line "OclKernels.def row KIND: ..." into
 * o. Returns the number of problems. */
unsigned ocl_table_check(const struct ocl_row *rows, const struct ocl_node_row *nodes, struct ostream *o);

/* Whether elementwise instruction kind `kind` has a Real or Int column of
 * EW.def that OpenCL C states (no function it lacks; ocl_gen_ew.c). */
bool ocl_ew_kind_ok(unsigned kind);
/* Whether the elementwise kernel computes instruction kind `kind` on
 * element kinds elems[0..nelems) (Dest, then the operands): float operands
 * by the Real column, int32, int64 or bool ones by the Int column, all
 * operands of one kind and Dest of theirs (bool for a comparison), where
 * that column is one OpenCL C states. */
bool ocl_ew_elems_ok(unsigned kind, const enum elem_kind *elems, unsigned nelems);
/* A run of elementwise instructions, splats, selects, conversions and
 * broadcasts on
 * float, integer and bool elements from `first` on (only alloc, dealloc
 * and tensorview between them) as one kernel, where two or
 * more can be (ocl_gen_ew.c, "Runs"): returns the last instruction of the
 * run, which the caller continues after; NULL, having written nothing,
 * where `first` starts no such run. */
const struct ir_instr *ocl_gen_ew_run(struct ocl_gen *g, const struct ir_instr *first);
/* Whether element kind k is one the elementwise kernels and convertto
 * compute on: float, int32, int64 or bool. */
bool ocl_numeric_elem(unsigned k);
/* The elementwise instruction kind of graph node kind `nk` that the
 * graph side answers for (OCL_EL_EW), IK_COUNT if none. */
unsigned ocl_node_ew_kind(unsigned nk);
/* Whether the generator handles instruction `in` (shapes and kinds). */
bool ocl_gen_supports(const struct ir_instr *in);

/* ---- quantized convolutions and products (ocl_gen_quant.c) ---- */

/* Whether instruction `in` (a convolution or a matrix product) has a
 * quantized result: ocl_gen_qconv's or ocl_gen_qgemm's. */
bool ocl_is_qlinear(const struct ir_instr *in);
/* The graph side: a result of qi8, qui8, qi16 or qi32, the two operands of
 * qi8, qui8 or qi16, a bias (elems[3], where given) quantized. */
bool ocl_qlinear_elems_ok(const enum elem_kind *elems, unsigned nelems);
/* The support tests: those kinds, every scale positive and normal, the
 * ranks of the float forms; batchmatmul without a bias, fullyconnected
 * with one of N. */
bool ocl_sup_qconv(const struct ir_instr *in);
bool ocl_sup_qgemm(const struct ir_instr *in);
/* The kernels (relu: an in-place relu of the result folded in). */
void ocl_gen_qconv(struct ocl_gen *g, const struct ir_instr *in, bool relu);
void ocl_gen_qgemm(struct ocl_gen *g, const struct ir_instr *in, bool relu);

/* ---- the program (ocl_prog.c) ---- */

/* Appends the program's preamble and one kernel per computing instruction
 * (launches in program order); device copies and waits get no kernel.
 * Returns 0, or -1 after reporting. */
int ocl_prog_generate(struct ocl_gen *g, struct diag *d);

/* ---- the program text (ocl_src.c): what every generator writes through ---- */

/* The place of an operand (its root's place plus the view's offset). */
struct ocl_place ocl_operand_place(struct ocl_gen *g, const struct ir_instr *in, unsigned i);
/* Appends "#define NAME ((__global T *)(Rr + off))" for operand i. */
void ocl_src_ptr(struct ocl_gen *g, const char *name, const char *ctype, const struct ir_instr *in, unsigned i);
/* The float result pointer PD of `in`: its operand 0, or where a residual
 * add is folded into it (g->res_add) the add's result, and PRES its
 * residual. */
void ocl_src_out(struct ocl_gen *g, const struct ir_instr *in);
/* Starts a kernel for `in`: its launch record and "#define KNAME kN". */
struct ocl_launch *ocl_src_begin(struct ocl_gen *g, const struct ir_instr *in);
/* Appends a section of kernels/ocl_kernels.cl and #undefs every name
 * defined since ocl_src_begin. */
void ocl_src_section(struct ocl_gen *g, const char *section);
/* #undefs every name defined since ocl_src_begin: the end of a kernel
 * whose text the generator wrote itself (ocl_gen_ew_run). */
void ocl_src_end(struct ocl_gen *g);
void ocl_src_define(struct ocl_gen *g, const char *name, const char *fmt, ...) GLOW_PRINTF(3, 4);
/* A #define of an integer constant, for ocl_src_ints. */
struct ocl_int_def {
	const char *name;
	int64_t value;
};
/* "#define NAME VALUE" for each of defs[0..n). */
void ocl_src_ints(struct ocl_gen *g, const struct ocl_int_def *defs, size_t n);
#define OCL_SRC_INTS(g, ...)                                                                                            \
	ocl_src_ints((g), (const struct ocl_int_def[]){__VA_ARGS__},                                                  \
		     sizeof((const struct ocl_int_def[]){__VA_ARGS__}) / sizeof(struct ocl_int_def))
/* Launches of work-groups of ls (l0 x l1) work-items over n (n0 x n1), the
 * global sizes rounded up to whole groups (1d: at least one group). */
void ocl_launch_1d(struct ocl_launch *l, size_t ls, uint64_t n);
void ocl_launch_2d(struct ocl_launch *l, size_t l0, size_t l1, size_t n0, size_t n1);
/* "#define ACT(x)": x, or rectified where relu (with fmax where vector,
 * which also takes vectors). */
void ocl_src_act(struct ocl_gen *g, bool relu, bool vector);
/* rounds n up to a multiple of m */
static inline size_t ocl_round_up(size_t n, size_t m) { return (n + m - 1) / m * m; }

/* The generators OclKernels.def names (ocl_gen.c; ocl_gen_ew in
 * ocl_gen_ew.c): ocl_gen_pool's arg is OCL_POOL_MAX or 0 (average),
 * ocl_gen_gemm's OCL_MM_*. */
ocl_gen_fn ocl_gen_nothing, ocl_gen_ew, ocl_gen_conv, ocl_gen_pool, ocl_gen_gemm, ocl_gen_batchedadd, ocl_gen_softmax,
	ocl_gen_lrn, ocl_gen_splat;
/* Its support tests: any operands; float operands; an elementwise kind on
 * the element kinds ocl_ew_elems_ok admits; float, source and filter of
 * rank 4; float matrices (rank 2); float, operand 1 an image (rank 4,
 * NHWC); a splat of an element kind OpenCL has an unsigned type of the
 * size of. */
ocl_supports_fn ocl_sup_any, ocl_sup_float, ocl_sup_ew, ocl_sup_conv, ocl_sup_gemm, ocl_sup_image, ocl_sup_splat;
enum { OCL_POOL_MAX = 1 };
enum {
	OCL_MM_ATTRS = 1,      /* gemm's trans_a, trans_b, alpha, beta */
	OCL_MM_ADD_C = 2,      /* operand 3 is added (a bias or gemm's C) */
	OCL_MM_IGEMM = 4,      /* GPU kernels: the tiled igemm where it fits */
	OCL_MM_IGEMM_BIAS = 8, /* GPU kernels: the igemm where operand 3 is a bias of N */
};

/* ocl_gen_move.c: copy, transpose, inserttensor, extracttensor, on
 * elements of any size OpenCL has an unsigned type of; arg: OCL_MOVE_*. */
ocl_gen_fn ocl_gen_move;
ocl_supports_fn ocl_sup_move;
/* The unsigned OpenCL type of an element of t's size (uchar .. ulong),
 * NULL if none: the kernels that move elements bit for bit use it. */
const char *ocl_utype(const struct type *t);
/* select (Dest = Cond ? LHS : RHS, a bool Cond, elements of any such size
 * moved bit for bit), also in ocl_gen_move.c */
ocl_gen_fn ocl_gen_select;
ocl_supports_fn ocl_sup_select;
enum { OCL_MOVE_COPY, OCL_MOVE_TRANSPOSE, OCL_MOVE_EXTRACT, OCL_MOVE_INSERT, OCL_MOVE_BITCAST, OCL_MOVE_COUNT };

/* ocl_gen_igemm.c: a convolution of one group, fully connected layer or
 * matrix product as the tiled igemm kernel (GPU kernels). The shape: m
 * output rows (pixels) of oc channels, n images of h x w x c, the window
 * and its strides, dilations and top/left pads (a matrix product: 1x1
 * everything, c its reduction). PF is the repacked constant at pf_offset
 * in R3 when packed, else operand 2 ([KH][KW][C][OC] or K x OC). */
struct ocl_igemm {
	uint64_t m, oc, n, h, w, c, oh, ow, kh, kw, sh, sw, dh, dw, pt, pl;
	bool has_bias, packed;
};
bool ocl_igemm_fits(const struct ocl_igemm *s);
void ocl_gen_igemm(struct ocl_gen *g, const struct ir_instr *in, const struct ocl_igemm *s, uint64_t pf_offset,
		   bool relu);

/* ---- gather, scatter, pad, resize (ocl3): ocl_gen_index.c ---- */

/* An index kernel's run-time check of its index values: a 16-byte record
 * at `offset` in R3 (uint key: 0xffffffff minus the position in Indices of
 * the first index out of range, 0 if none; then at byte 8 that index's
 * value as long), and what the message needs: the length of the indexed
 * dimension (`len`), or where each index row of m values addresses
 * dimensions b.. of `dims` (the nd kinds). */
struct ocl_check {
	const struct ir_instr *in;
	uint64_t offset, len;
	const struct type *dims;
	unsigned m, b;
	bool nd;
};

/* The generators and support tests of gather, gatherelements, gathernd,
 * scatterelements, scatternd (OCL_IX_*), pad, broadcast, spacetodepth,
 * depthtospace, flip, resizenearest and resizebilinear (OCL_MAP_*). */
ocl_gen_fn ocl_gen_index, ocl_gen_map;
ocl_supports_fn ocl_sup_index, ocl_sup_map;
enum { OCL_IX_GATHER, OCL_IX_GATHERELEMENTS, OCL_IX_GATHERND, OCL_IX_SCATTERELEMENTS, OCL_IX_SCATTERND, OCL_IX_COUNT };
enum {
	OCL_MAP_PAD,
	OCL_MAP_BROADCAST,
	OCL_MAP_SPACETODEPTH,
	OCL_MAP_DEPTHTOSPACE,
	OCL_MAP_FLIP,
	OCL_MAP_RESIZENEAREST,
	OCL_MAP_RESIZEBILINEAR,
	OCL_MAP_COUNT
};
/* After a run of compiled function g on device queue q: reads the check
 * records (R3 is r3) and reports the first index out of range in program
 * order at its instruction, as the interpreter words it, then clears the
 * records. Returns 0, or -1 after reporting. */
int ocl_checks_read(const struct ocl_gen *g, cl_command_queue q, cl_mem r3, struct diag *d);

/* ---- structured control flow (oclf): ocl_gen_flow.c ---- */

/* The run-time check of an insertslice or extractslice: a 16-byte record
 * at `offset` in R3 (uint at byte 0: the failure's number in the run, 0 if
 * none; the first record's uint at byte 4: the counter the slice kernels
 * share; long at byte 8: the index) and the leading axis' length. */
struct ocl_slice_check {
	const struct ir_instr *in;
	uint64_t offset, len;
};
/* insertslice and extractslice: a work-item per element of the slice, the
 * index read on the device and checked. The block brackets (if, else,
 * loop, end) get no kernel: ocl_backend.c's run drives them. */
ocl_gen_fn ocl_gen_slice;
ocl_supports_fn ocl_sup_slice;
/* After a run: reads the slice checks' records and reports the first
 * failure (in the order they happened) at its instruction, as the
 * interpreter words it, then clears the records. 0, or -1 after
 * reporting. */
int ocl_flow_checks_read(const struct ocl_gen *g, cl_command_queue q, cl_mem r3, struct diag *d);

/* ---- oclk (issue 19): ocl_gen_misc.c ---- */

/* convtranspose (float, NHWC, any strides, pads, dilations, groups), topk
 * (float, int32, int64, index32, index64 values; the interpreter's order),
 * cumsum and cumprod (arg OCL_CUM_PROD; those kinds, any axis, exclusive,
 * reverse), maxpoolwithargmax (float; an integer or index argmax). */
ocl_gen_fn ocl_gen_convt, ocl_gen_topk, ocl_gen_cum, ocl_gen_poolarg;
ocl_supports_fn ocl_sup_convt, ocl_sup_topk, ocl_sup_cum, ocl_sup_poolarg;
enum { OCL_CUM_PROD = 1 };
/* The graph side of OCL_EL_TOPK: elems are Values, Indices, Input. */
bool ocl_topk_elems_ok(const enum elem_kind *elems, unsigned nelems);

/* ---- element types (oclt, issue 19): ocl_gen_types.c ---- */

/* The OpenCL C type an element of kind k is stored as (float, ushort for
 * float16 and bfloat16, char, uchar, short, int, long; qi32 as int, for
 * the quantized products and its conversion at scale 1), NULL for a kind
 * the kernels do not compute on. */
/* ocl_gen_types.c: CONV(x), the expression of convertto from s to d on
 * the source element x (its checks passed; it may call the "types"
 * helpers: ocl_types_helpers before the kernel). */
void ocl_convert_expr(struct ostream *o, const struct type *d, const struct type *s, int sat, int mode);
const char *ocl_elem_ctype(unsigned k);
/* Whether convertto (quantize, dequantize) from element kind s to d gives
 * the interpreter's bits when computed in float (the graph side; the
 * support test checks the quantized types' parameters too). */
bool ocl_convert_elems_ok(unsigned d, unsigned s);
/* Whether type t, if quantized, has parameters the kernels compute with
 * exactly: a positive normal scale, an offset of at most 2^16. */
bool ocl_quant_type_ok(const struct type *t);
/* The lowest and highest stored integer of quantized kind k (qi8, qui8,
 * qi16, qi32). */
void ocl_quant_range(unsigned k, int64_t *lo, int64_t *hi);
/* convertto, quantize and dequantize (rows of OclKernels.def). */
ocl_gen_fn ocl_gen_convert;
ocl_supports_fn ocl_sup_convert;
/* Appends the "types" section of kernels/ocl_kernels.cl (the conversion
 * helpers) unless the program has it: before ocl_src_begin. */
void ocl_types_helpers(struct ocl_gen *g);

#endif
