/* scalar.h - scalar semantics shared by the interpreter, the compiler's
 * own conversions (fp16.c) and every C bundle: the bit-level conversions
 * between float, IEEE half and bfloat16, and the integer helpers that
 * lib/ir/EW.def's expressions call (EW_FN). One text serves all: the C
 * backend copies this file verbatim into each bundle (backends/CMakeLists.txt
 * embeds it before cb_base.h), so a bundle computes the same bits as the
 * interpreter by construction.
 *
 * Plain C11 with no include beyond the C library's, static inline functions
 * only (SC_INLINE: a bundle or a file may leave any of them unused).
 */
#ifndef GLOW_SUPPORT_SCALAR_H
#define GLOW_SUPPORT_SCALAR_H

#include <stdint.h>
#include <string.h>

/* In a bundle these functions sit in the .c file itself, where clang
 * reports an unused static inline function. */
#if defined(__GNUC__)
#define SC_INLINE static inline __attribute__((unused))
#else
#define SC_INLINE static inline
#endif

/* the bits of a float, and the float of bits */
SC_INLINE uint32_t sc_fbits(float f)
{
	uint32_t u;
	memcpy(&u, &f, 4);
	return u;
}
SC_INLINE float sc_bitsf(uint32_t u)
{
	float f;
	memcpy(&f, &u, 4);
	return f;
}

/* IEEE half and bfloat16 to and from float, rounding to nearest even; a
 * NaN stays a quiet NaN, overflow gives infinity */
SC_INLINE float sc_h2f(uint16_t h)
{
	uint32_t s = (uint32_t)(h & 0x8000u) << 16, e = (h >> 10) & 0x1fu, m = h & 0x3ffu;
	if (e == 0x1f)
		return sc_bitsf(s | 0x7f800000u | (m << 13));
	if (e == 0) /* zero or subnormal: m * 2^-24, exact in float */
		return m ? (s ? -1.0f : 1.0f) * (float)m * 5.9604644775390625e-8f : sc_bitsf(s);
	return sc_bitsf(s | ((e + 112) << 23) | (m << 13));
}
SC_INLINE uint16_t sc_f2h(float f)
{
	uint32_t x = sc_fbits(f), s = (x >> 16) & 0x8000u, e = (x >> 23) & 0xffu, m = x & 0x7fffffu;
	if (e == 0xff)
		return (uint16_t)(s | 0x7c00u | (m ? 0x200u | (m >> 13) : 0));
	int ex = (int)e - 112;
	if (ex >= 0x1f)
		return (uint16_t)(s | 0x7c00u);
	if (ex <= 0) {
		if (ex < -10)
			return (uint16_t)s;
		m |= 0x800000u;
		unsigned sh = (unsigned)(14 - ex);
		uint32_t h = m >> sh, rem = m & ((1u << sh) - 1), mid = 1u << (sh - 1);
		if (rem > mid || (rem == mid && (h & 1)))
			h++;
		return (uint16_t)(s | h);
	}
	/* the rounding may carry into the exponent, up to infinity: correct */
	uint32_t h = s | ((uint32_t)ex << 10) | (m >> 13), rem = m & 0x1fffu;
	if (rem > 0x1000u || (rem == 0x1000u && (h & 1)))
		h++;
	return (uint16_t)h;
}
SC_INLINE float sc_bf2f(uint16_t b) { return sc_bitsf((uint32_t)b << 16); }
SC_INLINE uint16_t sc_f2bf(float f)
{
	uint32_t x = sc_fbits(f);
	if ((x & 0x7fffffffu) > 0x7f800000u)
		return (uint16_t)((x >> 16) | 0x40u);
	return (uint16_t)((x + 0x7fffu + ((x >> 16) & 1u)) >> 16);
}

/* double to int64 as every conversion of the project truncates: toward
 * zero, saturated, NaN to 0 */
SC_INLINE int64_t sc_f2i64(double v)
{
	if (v != v)
		return 0;
	if (v <= -9223372036854775808.0)
		return INT64_MIN;
	if (v >= 9223372036854774784.0)
		return INT64_MAX;
	return (int64_t)v;
}

/* integer power, wrapping; negative exponents give 1/a^-b truncated */
SC_INLINE int64_t sc_ipow(int64_t a, int64_t b)
{
	if (b < 0)
		return a == 1 ? 1 : a == -1 ? (b % 2 ? -1 : 1) : 0;
	uint64_t r = 1, x = (uint64_t)a;
	for (uint64_t e = (uint64_t)b; e; e >>= 1, x *= x)
		if (e & 1)
			r *= x;
	return (int64_t)r;
}

/* remainder with the sign of the divisor; by 0 (and by -1) gives 0 */
SC_INLINE int64_t sc_imod(int64_t a, int64_t b)
{
	int64_t r = b == 0 || b == -1 ? 0 : a % b;
	return r != 0 && (r < 0) != (b < 0) ? (int64_t)((uint64_t)r + (uint64_t)b) : r;
}

/* logical shift of the low `width` bits of x; out-of-range shifts give 0 */
SC_INLINE uint64_t sc_shift(uint64_t x, int64_t sh, int width, int left)
{
	uint64_t mask = width == 64 ? UINT64_MAX : ((uint64_t)1 << width) - 1;
	x &= mask;
	return sh < 0 || sh >= width ? 0 : left ? (x << sh) & mask : x >> sh;
}

#endif
