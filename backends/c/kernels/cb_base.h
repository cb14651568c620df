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
 * with SSE2, NEON or AltiVec. AArch64 (where NEON is always present) also
 * gets NEON intrinsics for the fused multiply-add and, in cb_conv.c, its
 * own micro-kernel (CB_NEON). The choice is made by the preprocessor from
 * the compiler's target macros, never at run time. Targets without a
 * vector unit (armhf's default -mfpu, riscv64 without V), other
 * compilers and CB_NO_VECTOR get plain loops. The layout of packed weights does not
 * depend on CB_VL: panels are always CB_NR (32) floats wide.
 */
#ifndef CB_BASE_H
#define CB_BASE_H

#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* sc_* (lib/support/scalar.h): the bit conversions (half, bfloat16) and
 * integer helpers the interpreter uses too; a bundle has that file's text
 * before this one */
#include "support/scalar.h"

/* A kernel or helper: a static function a bundle may leave unused. */
#if defined(__GNUC__)
#define CB_KERNEL static __attribute__((unused))
#define CB_INLINE static inline __attribute__((unused))
#else
#define CB_KERNEL static
#define CB_INLINE static inline
#endif

/* a helper whose constant arguments must reach its body (loop bounds that
 * decide which accumulators stay in registers) */
#if defined(__GNUC__)
#define CB_ALWAYS_INLINE __attribute__((always_inline)) inline
#else
#define CB_ALWAYS_INLINE inline
#endif

/* Element j of an index tensor (int64 with idx64, else int32) as an index
 * into an axis of length d, negative counting from the end; -1 when out of
 * range (gather and its gradient). */
CB_INLINE int64_t cb_axis_index(const void *ind, size_t j, int idx64, size_t d)
{
	int64_t k = idx64 ? ((const int64_t *)ind)[j] : ((const int32_t *)ind)[j];
	if (k < 0)
		k += (int64_t)d;
	return k >= 0 && (uint64_t)k < d ? k : -1;
}

/* width of a packed weight panel, in floats (the code generator agrees) */
#define CB_NR 32

#if defined(__GNUC__) && !defined(CB_NO_VECTOR) &&                                                    \
	(defined(__AVX512F__) || defined(__AVX__) || defined(__SSE2__) || defined(__ARM_NEON) ||       \
	 defined(__aarch64__) || defined(__ALTIVEC__))
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
 * modes (-std=c11) do not contract a * b + c on their own. On x86 the
 * compiler's own builtins, the ones its <immintrin.h> wraps (GCC and Clang
 * name them alike): that header alone is about half the compile time of a
 * small bundle, and only the quantized kernels (cb_qconv.c), which a bundle
 * gets when it has quantized instructions, need it. A compiler without
 * the builtins gets the header. */
#if defined(__has_builtin)
#if __has_builtin(__builtin_ia32_vfmaddps512_mask) && __has_builtin(__builtin_ia32_vfmaddps256) &&       \
	__has_builtin(__builtin_ia32_vfmaddps)
#define CB_X86_FMA_BUILTINS 1
#endif
#endif
#if defined(__AVX512F__) && defined(CB_X86_FMA_BUILTINS)
/* _mm512_fmadd_ps: rounding mode 4 is _MM_FROUND_CUR_DIRECTION */
#define CB_FMA(acc, a, b) ((cb_vf)__builtin_ia32_vfmaddps512_mask((a), (b), (acc), (unsigned short)-1, 4))
#elif defined(__AVX512F__)
#include <immintrin.h>
#define CB_FMA(acc, a, b) ((cb_vf)_mm512_fmadd_ps((a), (b), (acc)))
#elif defined(__AVX__) && defined(__FMA__) && defined(CB_X86_FMA_BUILTINS)
#define CB_FMA(acc, a, b) ((cb_vf)__builtin_ia32_vfmaddps256((a), (b), (acc)))
#elif defined(__AVX__) && defined(__FMA__)
#include <immintrin.h>
#define CB_FMA(acc, a, b) ((cb_vf)_mm256_fmadd_ps((a), (b), (acc)))
#elif defined(__aarch64__) && defined(__ARM_NEON)
/* AArch64: NEON is part of the base architecture, so every aarch64 target
 * has it; fmla fuses like the x86 FMA paths, so the sums round the same */
#include <arm_neon.h>
#define CB_NEON 1
#define CB_FMA(acc, a, b) ((cb_vf)vfmaq_f32((float32x4_t)(acc), (float32x4_t)(a), (float32x4_t)(b)))
#define CB_SPLAT(x) ((cb_vf)vdupq_n_f32(x))
#else
#define CB_FMA(acc, a, b) ((acc) + (a) * (b))
#endif
typedef int32_t cb_vi __attribute__((vector_size(CB_VL * 4), aligned(4)));
/* max(x, 0) lane by lane (NaN becomes 0, as x > 0 ? x : 0) */
CB_INLINE cb_vf cb_vrelu(cb_vf x) { return (cb_vf)((x > 0.0f) & (cb_vi)x); }
/* A half vector of CB_VH = CB_VL / 2 floats where CB_VL is 16 or 8
 * (cb_vh; CB_FMAH its fused multiply-add where the target has one): the
 * last 8 channels of 136 in a depthwise convolution (cb_dwconv.c), the
 * last 8 columns of a weight panel (cb_conv.c, CB_HV). Each lane's fused
 * product is the same as in a whole vector. */
#if CB_VL >= 8
#define CB_VH (CB_VL / 2)
typedef float cb_vh __attribute__((vector_size(CB_VH * 4), aligned(4)));
typedef int32_t cb_vhi __attribute__((vector_size(CB_VH * 4), aligned(4)));
#if CB_VL == 16 && defined(__FMA__) && defined(CB_X86_FMA_BUILTINS)
#define CB_FMAH(acc, a, b) ((cb_vh)__builtin_ia32_vfmaddps256((a), (b), (acc)))
#elif CB_VL == 8 && defined(__FMA__) && defined(CB_X86_FMA_BUILTINS)
#define CB_FMAH(acc, a, b) ((cb_vh)__builtin_ia32_vfmaddps((a), (b), (acc)))
#elif CB_VL == 16 && defined(__FMA__)
#define CB_FMAH(acc, a, b) ((cb_vh)_mm256_fmadd_ps((__m256)(a), (__m256)(b), (__m256)(acc)))
#elif CB_VL == 8 && defined(__FMA__)
#define CB_FMAH(acc, a, b) ((cb_vh)_mm_fmadd_ps((__m128)(a), (__m128)(b), (__m128)(acc)))
#else
#define CB_FMAH(acc, a, b) ((acc) + (a) * (b))
#endif
CB_INLINE cb_vh cb_vhrelu(cb_vh x) { return (cb_vh)((x > 0.0f) & (cb_vhi)x); }
#endif
/* CB_HV: weight panels whose last columns fill half an AVX-512 vector
 * run a 256-bit FMA there (cb_conv.c): a core that runs a 512-bit FMA as
 * two 256-bit halves (AMD Zen 4) does it in half the time; elsewhere it
 * costs what a whole one does. */
#if CB_VL == 16 && defined(__FMA__)
#define CB_HV 1
#else
#define CB_HV 0
#endif
#ifndef CB_SPLAT
/* x in every lane (a broadcast) */
CB_INLINE cb_vf cb_splat(float x)
{
#if CB_VL == 16
	return (cb_vf){x, x, x, x, x, x, x, x, x, x, x, x, x, x, x, x};
#elif CB_VL == 8
	return (cb_vf){x, x, x, x, x, x, x, x};
#else
	return (cb_vf){x, x, x, x};
#endif
}
#define CB_SPLAT(x) cb_splat(x)
#endif
#define CB_RESTRICT __restrict__
#else
#define CB_VL 4
#define CB_HAVE_VEC 0
#define CB_RESTRICT restrict
#endif


/* a hint to fetch the cache line at p into L2, not L1: it is used a panel
 * later (no effect where unsupported) */
#if defined(__GNUC__)
#define CB_PREFETCH(p) __builtin_prefetch((p), 0, 2)
#else
#define CB_PREFETCH(p) ((void)(p))
#endif

/* The shape of one convolution or fully-connected layer (literal in the
 * bundle), for every matrix-product kernel. */
struct cb_conv_args {
	int n, h, w, c;     /* input image; c = channels per group */
	int oh, ow, oc;     /* output; oc = channels per group */
	int kh, kw, sh, sw; /* window and strides */
	int pt, pl, dh, dw; /* top/left pads, dilations */
	int groups;
	int act;            /* CB_ACT_* */
	float lo, hi;       /* CB_ACT_CLIP bounds */
	int mc;             /* rows per cache block (a multiple of CB_MR) */
	int ostride;        /* floats between output pixels (0: groups * oc), e.g.
			     * when writing into a concatenation */
	int wino;           /* 2 or 4: a 3x3 convolution computed as Winograd
			     * F(wino x wino, 3 x 3) (cb_wino_f32); 0: directly */
};

/* activations fused into a kernel's epilogue */
enum { CB_ACT_NONE = 0, CB_ACT_RELU = 1, CB_ACT_CLIP = 2 };

CB_INLINE float cb_act(float v, int act, float lo, float hi)
{
	if (act == CB_ACT_RELU)
		return v > 0.0f ? v : 0.0f;
	if (act == CB_ACT_CLIP)
		return v < lo ? lo : v > hi ? hi : v;
	return v;
}

/* float to int32 as the interpreter converts: truncation toward zero,
 * saturated, NaN to 0 (int64: sc_f2i64) */
CB_INLINE int32_t cb_f2i32(double v)
{
	if (v != v)
		return 0;
	return v <= -2147483648.0 ? INT32_MIN : v >= 2147483647.0 ? INT32_MAX : (int32_t)v;
}
CB_INLINE float cb_sigmoid(float x)
{
	if (x >= 0.0f)
		return 1.0f / (1.0f + expf(-x));
	float e = expf(x);
	return e / (1.0f + e);
}

/* quantization: round(v) + offset (v already divided by the scale),
 * rounding half to even, saturated to [lo, hi]; NaN gives the offset */
CB_INLINE int64_t cb_quant(double v, double offset, double lo, double hi)
{
	double r = nearbyint(v);
	if (r != r)
		r = 0;
	r += offset;
	return r <= lo ? (int64_t)lo : r >= hi ? (int64_t)hi : (int64_t)r;
}

/* remainder with the sign of the divisor (ONNX Mod, fmod = 0) */
CB_INLINE float cb_fmodf_floor(float a, float b)
{
	double r = fmod((double)a, (double)b);
	return (float)(r != 0 && (r < 0) != (b < 0) ? r + b : r);
}
CB_INLINE size_t cb_min_sz(size_t a, size_t b) { return a < b ? a : b; }

#endif
