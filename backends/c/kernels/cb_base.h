/* cb_base.h - what every kernel of a C bundle shares.
 *
 * The kernels are ordinary C files: they compile on their own (a build
 * target checks them with the project's warnings) and the code generator
 * copies them, minus their local #include lines, into each bundle. They are
 * static functions: a bundle calls them with literal shapes, so the C
 * compiler propagates the constants into them (inlining or cloning).
 *
 * Vectors. Under GCC or Clang the kernels use the vector extension with
 * CB_VL floats per vector: 16 where the target has AVX-512, 8 with AVX, 4
 * otherwise (SSE, NEON, or the compiler's own lowering). Other compilers
 * (or CB_NO_VECTOR) get plain loops. The layout of packed weights does not
 * depend on CB_VL: panels are always CB_NR (32) floats wide.
 */
#ifndef CB_BASE_H
#define CB_BASE_H

#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* width of a packed weight panel, in floats (the code generator agrees) */
#define CB_NR 32

#if defined(__GNUC__) && !defined(CB_NO_VECTOR)
#if defined(__AVX512F__)
#define CB_VL 16
#elif defined(__AVX__)
#define CB_VL 8
#else
#define CB_VL 4
#endif
#define CB_HAVE_VEC 1
/* a vector of CB_VL floats, loadable from any float address */
typedef float cb_vf __attribute__((vector_size(CB_VL * 4), aligned(4)));
/* acc + a * b as one fused multiply-add where the target has one: ISO C
 * modes (-std=c11) do not contract a * b + c on their own */
#if defined(__AVX512F__)
#include <immintrin.h>
#define CB_FMA(acc, a, b) ((cb_vf)_mm512_fmadd_ps((a), (b), (acc)))
#define CB_SPLAT(x) ((cb_vf)_mm512_set1_ps(x))
#elif defined(__AVX__) && defined(__FMA__)
#include <immintrin.h>
#define CB_FMA(acc, a, b) ((cb_vf)_mm256_fmadd_ps((a), (b), (acc)))
#define CB_SPLAT(x) ((cb_vf)_mm256_set1_ps(x))
#else
#define CB_FMA(acc, a, b) ((acc) + (a) * (b))
#endif
typedef int32_t cb_vi __attribute__((vector_size(CB_VL * 4), aligned(4)));
/* max(x, 0) lane by lane (NaN becomes 0, as x > 0 ? x : 0) */
static inline cb_vf cb_vrelu(cb_vf x) { return (cb_vf)((x > 0.0f) & (cb_vi)x); }
#ifndef CB_SPLAT
#if CB_VL == 8
#define CB_SPLAT(x) ((cb_vf){(x), (x), (x), (x), (x), (x), (x), (x)})
#else
#define CB_SPLAT(x) ((cb_vf){(x), (x), (x), (x)})
#endif
#endif
#define CB_RESTRICT __restrict__
#else
#define CB_VL 4
#define CB_HAVE_VEC 0
#define CB_RESTRICT restrict
#endif

/* A kernel: a static function a bundle may leave unused. */
#if defined(__GNUC__)
#define CB_KERNEL static __attribute__((unused))
#else
#define CB_KERNEL static
#endif

/* activations fused into a kernel's epilogue */
enum { CB_ACT_NONE = 0, CB_ACT_RELU = 1, CB_ACT_CLIP = 2 };

static inline float cb_act(float v, int act, float lo, float hi)
{
	if (act == CB_ACT_RELU)
		return v > 0.0f ? v : 0.0f;
	if (act == CB_ACT_CLIP)
		return v < lo ? lo : v > hi ? hi : v;
	return v;
}

/* float to integer as the interpreter converts: truncation toward zero,
 * saturated, NaN to 0 */
static inline int64_t cb_f2i64(double v)
{
	if (v != v)
		return 0;
	if (v <= -9223372036854775808.0)
		return INT64_MIN;
	if (v >= 9223372036854774784.0)
		return INT64_MAX;
	return (int64_t)v;
}
static inline int32_t cb_f2i32(double v)
{
	if (v != v)
		return 0;
	return v <= -2147483648.0 ? INT32_MIN : v >= 2147483647.0 ? INT32_MAX : (int32_t)v;
}
static inline float cb_sigmoid(float x)
{
	if (x >= 0.0f)
		return 1.0f / (1.0f + expf(-x));
	float e = expf(x);
	return e / (1.0f + e);
}

static inline size_t cb_min_sz(size_t a, size_t b) { return a < b ? a : b; }

#endif
