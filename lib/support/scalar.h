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

/* ---- float8 (ONNX's FLOAT8E4M3FN, E4M3FNUZ, E5M2, E5M2FNUZ) ----
 *
 * A format is its mantissa bits m, exponent bias, largest finite code and
 * special values (SC_F8_*): E4M3FN (m 3, bias 7, max 448 = 0x7e, NaN
 * S.1111.111, no infinity), E4M3FNUZ (m 3, bias 8, max 240 = 0x7f, NaN 0x80
 * alone, no infinity and no negative zero), E5M2 (m 2, bias 15, max 57344 =
 * 0x7b, IEEE infinities 0x7c and NaNs above), E5M2FNUZ (m 2, bias 16, max
 * 57344 = 0x7f, NaN 0x80 alone). Subnormals everywhere (exponent field 0).
 *
 * From float, per ONNX's Cast (opset 19): round to nearest even; NaN is the
 * format's NaN (E4M3FN and E5M2 keep the sign: 0x7f | s); a rounded
 * magnitude above the largest finite value and an infinity saturate to
 * +-max when `sat`, else give infinity (E5M2) or NaN (the others); a zero
 * result of the FNUZ formats is +0 (they have no -0). Two quirks of ONNX's
 * reference conversion (onnx.numpy_helper, onnxruntime's float8.h) are
 * kept, so results match theirs bit for bit: E4M3FN maps [480, 496), whose
 * truncation is the NaN code, to 448 also without saturation; E5M2 without
 * saturation gives NaN (0x7f | s), not infinity, for a finite value below
 * 65536 that rounds past 57344. */
enum { SC_F8_E4M3FN, SC_F8_E4M3FNUZ, SC_F8_E5M2, SC_F8_E5M2FNUZ };

/* the mantissa bits, bias and largest finite code of format f */
SC_INLINE unsigned sc_f8_mbits(int f) { return f <= SC_F8_E4M3FNUZ ? 3u : 2u; }
SC_INLINE int sc_f8_bias(int f) { return f == SC_F8_E4M3FN ? 7 : f == SC_F8_E4M3FNUZ ? 8 : f == SC_F8_E5M2 ? 15 : 16; }
SC_INLINE uint32_t sc_f8_maxcode(int f) { return f == SC_F8_E4M3FN ? 0x7eu : f == SC_F8_E5M2 ? 0x7bu : 0x7fu; }
SC_INLINE int sc_f8_uz(int f) { return f == SC_F8_E4M3FNUZ || f == SC_F8_E5M2FNUZ; }

SC_INLINE float sc_f82f(uint8_t b, int f)
{
	unsigned m = sc_f8_mbits(f);
	uint32_t s = (uint32_t)(b & 0x80u) << 24, e = (b & 0x7fu) >> m, mant = b & ((1u << m) - 1);
	if (sc_f8_uz(f) ? b == 0x80u : f == SC_F8_E4M3FN ? (b & 0x7fu) == 0x7fu : e == 0x1fu && mant)
		return sc_bitsf(0x7fc00000u | s);
	if (f == SC_F8_E5M2 && e == 0x1fu)
		return sc_bitsf(0x7f800000u | s);
	int bias = sc_f8_bias(f);
	if (e == 0) /* mant * 2^(1 - bias - m), exact in float */
		return sc_bitsf(s) + (s ? -1.0f : 1.0f) * (float)mant *
					     sc_bitsf((uint32_t)(127 + 1 - bias - (int)m) << 23);
	return sc_bitsf(s | (uint32_t)((int)e - bias + 127) << 23 | mant << (23 - m));
}

SC_INLINE uint8_t sc_f2f8(float v, int f, int sat)
{
	uint32_t x = sc_fbits(v), s = (x >> 24) & 0x80u, ex = (x >> 23) & 0xffu, fm = x & 0x7fffffu;
	int uz = sc_f8_uz(f);
	uint32_t maxcode = sc_f8_maxcode(f);
	uint8_t nan = (uint8_t)(uz ? 0x80u : 0x7fu | s);
	uint8_t over = (uint8_t)(sat ? maxcode | s : f == SC_F8_E5M2 ? 0x7cu | s : nan);
	if (ex == 0xff)
		return fm ? nan : over;
	/* |v| = sig * 2^e2 exactly */
	uint32_t sig = ex ? fm | 0x800000u : fm;
	int e2 = ex ? (int)ex - 150 : -149;
	if (!sig)
		return (uint8_t)(uz ? 0 : s);
	if (f == SC_F8_E4M3FN && (x & 0x7fffffffu) >= 0x43f00000u && (x & 0x7fffffffu) < 0x43f80000u)
		return (uint8_t)(0x7eu | s); /* [480, 496) */
	int top = 31, m = (int)sc_f8_mbits(f), emin = 1 - sc_f8_bias(f);
	while (!(sig >> top))
		top--;
	/* the quantum: 2^(exponent - m), the exponent at least emin */
	int lg = e2 + top, qe = (lg > emin ? lg : emin) - m, sh = qe - e2;
	uint32_t r;
	if (sh <= 0)
		r = sig << -sh; /* cannot happen for float inputs: kept exact */
	else if (sh > 31)
		r = 0;
	else {
		uint32_t rem = sig & ((1u << sh) - 1), half = 1u << (sh - 1);
		r = sig >> sh;
		if (rem > half || (rem == half && (r & 1u)))
			r++;
	}
	if (!r)
		return (uint8_t)(uz ? 0 : s);
	if (r >> (m + 1)) { /* the rounding carried into the next binade */
		r >>= 1;
		qe++;
	}
	/* normal: biased exponent qe + m - emin + 1; subnormal: field 0 */
	uint32_t code = r >> m ? (uint32_t)(qe + m - emin + 1) << m | (r & ((1u << m) - 1)) : r;
	if (code > maxcode) /* E5M2's quirk: below 65536, NaN */
		return f == SC_F8_E5M2 && !sat && (x & 0x7fffffffu) < 0x47800000u ? (uint8_t)(0x7fu | s) : over;
	return (uint8_t)(code | s);
}

/* 4-bit integers (ONNX's INT4 and UINT4), held one per byte, from a real
 * value as onnxruntime's Cast gives them: rounded half away from zero and
 * wrapped to the low 4 bits (sign-extended for int4); NaN, infinities and
 * magnitudes past 2^63 give 0. (QuantizeLinear saturates instead: the
 * importer clips before converting.) */
SC_INLINE int8_t sc_f2i4(double v, int is_signed)
{
	if (!(v > -9.2e18 && v < 9.2e18))
		return 0;
	int64_t r = (int64_t)(v < 0 ? v - 0.5 : v + 0.5); /* exact for float inputs */
	int b = (int)((uint64_t)r & 0xfu);
	return (int8_t)(is_signed && b >= 8 ? b - 16 : b);
}

/* ---- float4e2m1 and float8e8m0 (ONNX's FLOAT4E2M1, FLOAT8E8M0) ----
 *
 * FLOAT4E2M1 (OCP MX): sign bit 3, two exponent bits (bias 1), one
 * mantissa bit, held one per byte in the low nibble; the magnitudes 0,
 * 0.5, 1, 1.5, 2, 3, 4 and 6, no infinity and no NaN. From float, per
 * ONNX's Cast (opset 23): round to nearest even; beyond +-6 and the
 * infinities saturate to +-6; NaN gives +6; -0 stays -0. */
SC_INLINE float sc_f42f(uint8_t b)
{
	uint32_t e = (b >> 1) & 3u, m = b & 1u;
	float v = e ? (float)(2u + m) * (float)(1u << e) * 0.25f : (float)m * 0.5f;
	return b & 8u ? -v : v;
}

/* q >= 0 (below 2^52) rounded to the nearest integer, ties to even */
SC_INLINE double sc_rne(double q)
{
	double f = (double)(int64_t)q, d = q - f;
	return d > 0.5 || (d == 0.5 && ((int64_t)f & 1)) ? f + 1 : f;
}

SC_INLINE uint8_t sc_f2f4(float v)
{
	uint32_t x = sc_fbits(v), s = (x >> 28) & 8u;
	if ((x & 0x7fffffffu) > 0x7f800000u)
		return 7u; /* NaN: +6 */
	float a = sc_bitsf(x & 0x7fffffffu);
	if (a >= 6.0f)
		return (uint8_t)(s | 7u);
	/* the quantum is 0.5 below 2, 1 in [2, 4), 2 in [4, 6]: the rounded
	 * multiple keeps the parity of the code it lands on */
	double q = a < 2.0f ? sc_rne((double)a * 2) : a < 4.0f ? sc_rne((double)a) : sc_rne((double)a / 2);
	uint32_t code = a < 2.0f ? (uint32_t)q : a < 4.0f ? (uint32_t)q + 2u : (uint32_t)q + 4u;
	return (uint8_t)(s | code);
}

/* FLOAT8E8M0 (OCP MX scales): eight exponent bits (bias 127), no sign and
 * no mantissa: code c is 2^(c - 127) for c in 0..254 (0 is 2^-127), 0xff
 * is NaN; no zero and no infinity. From float, per ONNX's Cast (opset 24)
 * with `saturate` and `round_mode` (SC_E8M0_*: up, the default, rounds a
 * value between two powers of two to the larger, down to the smaller,
 * nearest to the nearer, ties to the larger) as onnxruntime converts: NaN
 * gives NaN; a value above 2^127 (and +infinity) gives 2^127 when
 * saturating, else NaN; a value below 2^-127 (zero, negative values and
 * -infinity included: the format has no sign) gives 2^-127 when
 * saturating, else NaN. */
enum { SC_E8M0_UP, SC_E8M0_DOWN, SC_E8M0_NEAREST };

SC_INLINE float sc_e8m02f(uint8_t b)
{
	if (b == 0xffu)
		return sc_bitsf(0x7fc00000u);
	return sc_bitsf(b ? (uint32_t)b << 23 : 0x00400000u);
}

SC_INLINE uint8_t sc_f2e8m0(float v, int sat, int mode)
{
	uint32_t x = sc_fbits(v);
	if ((x & 0x7fffffffu) > 0x7f800000u)
		return 0xffu;
	if (x >> 31 || x < 0x00400000u) /* below 2^-127, or negative */
		return (uint8_t)(sat ? 0x00u : 0xffu);
	if (x > 0x7f000000u) /* above 2^127 */
		return (uint8_t)(sat ? 0xfeu : 0xffu);
	/* v = 2^(code - 127) * (1 + frac / 2^23): a float subnormal in
	 * [2^-127, 2^-126) is code 0 with its mantissa's lower 22 bits */
	uint32_t e = x >> 23, m = x & 0x7fffffu, frac = e ? m : (m - 0x400000u) << 1;
	int up = mode == SC_E8M0_UP ? frac != 0 : mode == SC_E8M0_NEAREST ? frac >= 0x400000u : 0;
	return (uint8_t)(e + (uint32_t)up); /* at most 254: 2^127 has no fraction */
}

#endif
