/* kern.h - what the kernel files of the interpreter share: element access
 * by kind, the argument bundle of one kernel call, and every kernel of the
 * tables (Kernels.def, lib/ir/EW.def).
 *
 * Element access. ld_f reads the real value of element i (quantized kinds
 * dequantize: scale * (q - offset)); st_f stores a real value (float16 and
 * bfloat16 round to nearest even; float8 rounds to nearest even and
 * saturates, the 4-bit integers round half away from zero and wrap
 * (support/scalar.h, ONNX's Cast); quantized kinds quantize with round half
 * to even and saturate; integers truncate toward zero and saturate, NaN
 * becomes 0; bool is v != 0). ld_i / st_i move integers exactly (quantized
 * kinds: the stored integer; st_i to an integer kind wraps to its width).
 * Kernels on integer and index kinds use ld_i/st_i so i64 stays exact; on
 * float and quantized kinds they compute in double and store once.
 */
#ifndef GLOW_BACKENDS_INTERPRETER_KERN_H
#define GLOW_BACKENDS_INTERPRETER_KERN_H

#include "backends/interpreter/interp.h"
#include "support/fp16.h"
#include "support/scalar.h"
#include "support/util.h"

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

/* One kernel call: the operands in table order, the attributes in table
 * order, and room for a run-time error message (an index out of range). */
struct kargs {
	unsigned kind;
	const struct interp_arg *op;
	const union attr_val *a;
	char *err;
	size_t errsize;
};

/* attribute an (AttrNames.def) of the kernel's kind (an internal bug if
 * the kind has none) */
static inline const union attr_val *kattr(const struct kargs *k, enum attr_name an)
{
	int i = instr_attr_slot(k->kind, an);
	if (i < 0)
		unreachable("kernel asks for an attribute its kind does not have");
	return &k->a[i];
}
#define KI(k, name) (kattr((k), (name))->i)
#define KF(k, name) (kattr((k), (name))->f)
#define KINTS(k, name) (kattr((k), (name))->ints.v)
#define KNINTS(k, name) (kattr((k), (name))->ints.n)
#define KFLOATS(k, name) (kattr((k), (name))->floats.v)
#define KNFLOATS(k, name) (kattr((k), (name))->floats.n)

static inline enum elem_kind ekind(const struct type *t) { return (enum elem_kind)t->elem; }

static inline enum elem_class eclass(const struct type *t) { return elem_class(ekind(t)); }
/* integer-exact kinds: integers, indices, bool */
static inline bool is_int_kind(const struct type *t)
{
	enum elem_class c = eclass(t);
	return c == EC_I || c == EC_X || c == EC_B;
}

static inline int64_t sat_to_i64(double v, double lo, double hi)
{
	if (v != v)
		return 0;
	if (v <= lo)
		return (int64_t)lo;
	if (v >= hi)
		return (int64_t)hi;
	return (int64_t)v;
}

static inline double ld_f(const struct type *t, const void *p, size_t i)
{
	switch (ekind(t)) {
	case EK_FLOAT: return ((const float *)p)[i];
	case EK_FLOAT16: return half_to_float(((const uint16_t *)p)[i]);
	case EK_BFLOAT16: return bf16_to_float(((const uint16_t *)p)[i]);
	case EK_QI8: return (double)t->scale * ((double)((const int8_t *)p)[i] - t->offset);
	case EK_QUI8: return (double)t->scale * ((double)((const uint8_t *)p)[i] - t->offset);
	case EK_QI16: return (double)t->scale * ((double)((const int16_t *)p)[i] - t->offset);
	case EK_QI32: return (double)t->scale * ((double)((const int32_t *)p)[i] - t->offset);
	case EK_I32: case EK_INDEX32: return ((const int32_t *)p)[i];
	case EK_I64: case EK_INDEX64: return (double)((const int64_t *)p)[i];
	case EK_BOOL: return ((const uint8_t *)p)[i] != 0;
	case EK_F8E4M3FN: case EK_F8E4M3FNUZ: case EK_F8E5M2: case EK_F8E5M2FNUZ:
		return sc_f82f(((const uint8_t *)p)[i], elem_f8_format(ekind(t)));
	case EK_I4: return ((const int8_t *)p)[i];
	case EK_U4: return ((const uint8_t *)p)[i];
	case EK_F4E2M1: return sc_f42f(((const uint8_t *)p)[i]);
	case EK_F8E8M0: return sc_e8m02f(((const uint8_t *)p)[i]);
	default: unreachable("bad element kind");
	}
}

/* round(v / scale) + offset, rounding half to even, saturated to [lo, hi];
 * NaN quantizes to the offset (real 0) */
static inline int64_t quantize(const struct type *t, double v, double lo, double hi)
{
	double r = nearbyint(v / t->scale);
	if (r != r)
		r = 0;
	r += t->offset;
	return r <= lo ? (int64_t)lo : r >= hi ? (int64_t)hi : (int64_t)r;
}

static inline void st_f(const struct type *t, void *p, size_t i, double v)
{
	switch (ekind(t)) {
	case EK_FLOAT: ((float *)p)[i] = (float)v; break;
	case EK_FLOAT16: ((uint16_t *)p)[i] = float_to_half((float)v); break;
	case EK_BFLOAT16: ((uint16_t *)p)[i] = float_to_bf16((float)v); break;
	case EK_QI8: ((int8_t *)p)[i] = (int8_t)quantize(t, v, -128, 127); break;
	case EK_QUI8: ((uint8_t *)p)[i] = (uint8_t)quantize(t, v, 0, 255); break;
	case EK_QI16: ((int16_t *)p)[i] = (int16_t)quantize(t, v, -32768, 32767); break;
	case EK_QI32:
		((int32_t *)p)[i] = (int32_t)quantize(t, v, -2147483648.0, 2147483647.0);
		break;
	case EK_I32: case EK_INDEX32: ((int32_t *)p)[i] = (int32_t)sat_to_i64(v, -2147483648.0, 2147483647.0); break;
	case EK_I64: case EK_INDEX64:
		((int64_t *)p)[i] = sat_to_i64(v, -9223372036854775808.0, 9223372036854774784.0);
		break;
	case EK_BOOL: ((uint8_t *)p)[i] = v != 0; break;
	case EK_F8E4M3FN: case EK_F8E4M3FNUZ: case EK_F8E5M2: case EK_F8E5M2FNUZ:
		((uint8_t *)p)[i] = sc_f2f8((float)v, elem_f8_format(ekind(t)), 1);
		break;
	case EK_I4: ((int8_t *)p)[i] = sc_f2i4(v, 1); break;
	case EK_U4: ((uint8_t *)p)[i] = (uint8_t)sc_f2i4(v, 0); break;
	case EK_F4E2M1: ((uint8_t *)p)[i] = sc_f2f4((float)v); break;
	case EK_F8E8M0: ((uint8_t *)p)[i] = sc_f2e8m0((float)v, 1, SC_E8M0_UP); break;
	default: unreachable("bad element kind");
	}
}

static inline int64_t ld_i(const struct type *t, const void *p, size_t i)
{
	switch (ekind(t)) {
	case EK_QI8: return ((const int8_t *)p)[i];
	case EK_QUI8: return ((const uint8_t *)p)[i];
	case EK_QI16: return ((const int16_t *)p)[i];
	case EK_QI32: case EK_I32: case EK_INDEX32: return ((const int32_t *)p)[i];
	case EK_I64: case EK_INDEX64: return ((const int64_t *)p)[i];
	case EK_BOOL: return ((const uint8_t *)p)[i] != 0;
	default: return sat_to_i64(ld_f(t, p, i), -9223372036854775808.0, 9223372036854774784.0);
	}
}

static inline void st_i(const struct type *t, void *p, size_t i, int64_t v)
{
	switch (ekind(t)) {
	case EK_QI8: ((int8_t *)p)[i] = (int8_t)v; break;
	case EK_QUI8: ((uint8_t *)p)[i] = (uint8_t)v; break;
	case EK_QI16: ((int16_t *)p)[i] = (int16_t)v; break;
	case EK_QI32: case EK_I32: case EK_INDEX32: ((int32_t *)p)[i] = (int32_t)(uint32_t)(uint64_t)v; break;
	case EK_I64: case EK_INDEX64: ((int64_t *)p)[i] = v; break;
	case EK_BOOL: ((uint8_t *)p)[i] = v != 0; break;
	default: st_f(t, p, i, (double)v); break;
	}
}

/* copies element si of src to element di of dst (same element kind) */
static inline void cp_elem(void *dst, size_t di, const void *src, size_t si, size_t es)
{
	switch (es) {
	case 1: ((uint8_t *)dst)[di] = ((const uint8_t *)src)[si]; break;
	case 2: ((uint16_t *)dst)[di] = ((const uint16_t *)src)[si]; break;
	case 4: ((uint32_t *)dst)[di] = ((const uint32_t *)src)[si]; break;
	default: ((uint64_t *)dst)[di] = ((const uint64_t *)src)[si]; break;
	}
}

static inline size_t numel(const struct type *t) { return (size_t)type_numel(t); }
static inline size_t esize(const struct type *t) { return elem_size(ekind(t)); }

/* An index value of an index operand, negative counted from the end (as
 * in ONNX); -1 if still out of [0, len). */
static inline int64_t kfix_index(int64_t v, uint64_t len)
{
	if (v < 0)
		v += (int64_t)len;
	return v >= 0 && (uint64_t)v < len ? v : -1;
}

/* Row-major strides of t in elements. */
static inline void strides_of(const struct type *t, size_t *st)
{
	size_t s = 1;
	for (unsigned i = t->rank; i-- > 0;) {
		st[i] = s;
		s *= (size_t)t->dims[i];
	}
}

/* Splits t at axis into outer x len x inner. */
static inline void ksplit_axis(const struct type *t, unsigned axis, size_t *outer, size_t *len, size_t *inner)
{
	*outer = *inner = 1;
	for (unsigned i = 0; i < axis; i++)
		*outer *= (size_t)t->dims[i];
	*len = (size_t)t->dims[axis];
	for (unsigned i = axis + 1; i < t->rank; i++)
		*inner *= (size_t)t->dims[i];
}

/* Operands widened to float (the data itself for float): free with
 * kfree_wide. */
float *kwiden(const struct interp_arg *a);
void kfree_wide(const struct interp_arg *a, float *w);
/* Stores a float array into a (any float or quantized kind). */
void knarrow(const struct interp_arg *a, const float *v);
/* A float buffer for the result of a (the data itself for float). */
float *kresult_buf(const struct interp_arg *a);
/* Narrows and frees a buffer from kresult_buf. */
void kresult_done(const struct interp_arg *a, float *v);

/* Reports a run-time error of the kernel; returns -1. */
int kerror(const struct kargs *k, const char *fmt, ...) GLOW_PRINTF(2, 3);

/* C[M x N] (ldc) = (accumulate ? C : 0) + A[M x K] (lda) * B[K x N] (ldb),
 * packed and register-blocked. */
void kgemm(size_t M, size_t N, size_t K, const float *A, size_t lda, const float *B, size_t ldb, float *C,
	   size_t ldc, bool accumulate);

/* Threads (ipool.c). kpar runs fn(ctx, 0 .. nparts-1) on the pool of
 * interp_set_threads (the caller takes parts too) and returns when all are
 * done; parts must write disjoint outputs. kpar_parts: how many parts an
 * instruction of `work` multiply-adds or values gets (one per thread, fewer
 * for small work, at most units); kpar_first(i): the first unit of part i
 * (contiguous, balanced). */
void kpar(void (*fn)(const void *ctx, int part), const void *ctx, int nparts);
int kpar_parts(double work, size_t units);
size_t kpar_first(int i, int nparts, size_t units);
/* kpar_ranges: fn(ctx, first, end) over [0, units) in contiguous ranges,
 * as many as `elems` elements of the interpreter's element access are
 * worth (each part at least KPAR_MIN_ELEMS of them, ipool.c);
 * kpar_threads: the thread count. */
int kpar_threads(void);
void kpar_ranges(void (*fn)(const void *ctx, size_t first, size_t end), const void *ctx, size_t units, double elems);

/* A kernel: runs k->kind on k->op with k->a; returns 0, or -1 after
 * kerror. */
typedef int kern_fn(const struct kargs *k);

/* Every kernel of Kernels.def and of lib/ir/EW.def (compiled by k_ew.c as
 * kern_ew_<kind>, an EW_SPECIAL family as kern_ew_<family>). */
#define KERNEL(kind, fn) kern_fn fn;
#define QKERNEL(kind, fn, float_ok) kern_fn fn;
#include "backends/interpreter/Kernels.def"
#define EW1(kind, result, params, real, int) kern_fn kern_ew_##kind;
#define EW2(kind, result, params, real, int) kern_fn kern_ew_##kind;
#define EW_SPECIAL(kind, family) kern_fn kern_ew_##family;
#include "ir/EW.def"

#endif
