#include "fp16.h"

#include <string.h>

static uint32_t f2u(float f) { uint32_t u; memcpy(&u, &f, 4); return u; }
static float u2f(uint32_t u) { float f; memcpy(&f, &u, 4); return f; }

uint16_t float_to_half(float f)
{
	uint32_t x = f2u(f);
	uint32_t sign = (x >> 16) & 0x8000u;
	uint32_t exp = (x >> 23) & 0xffu;
	uint32_t man = x & 0x7fffffu;
	if (exp == 0xff) /* inf or nan (keep a quiet nan) */
		return (uint16_t)(sign | 0x7c00u | (man ? 0x200u | (man >> 13) : 0));
	int e = (int)exp - 127 + 15;
	if (e >= 0x1f)
		return (uint16_t)(sign | 0x7c00u);
	if (e <= 0) {
		if (e < -10)
			return (uint16_t)sign;
		man |= 0x800000u;
		unsigned shift = (unsigned)(14 - e);
		uint32_t half = man >> shift;
		uint32_t rem = man & ((1u << shift) - 1), mid = 1u << (shift - 1);
		if (rem > mid || (rem == mid && (half & 1)))
			half++;
		return (uint16_t)(sign | half);
	}
	uint32_t half = sign | ((uint32_t)e << 10) | (man >> 13);
	uint32_t rem = man & 0x1fffu;
	if (rem > 0x1000u || (rem == 0x1000u && (half & 1)))
		half++; /* may carry into the exponent, up to inf: correct */
	return (uint16_t)half;
}

float half_to_float(uint16_t h)
{
	uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
	uint32_t exp = (h >> 10) & 0x1fu;
	uint32_t man = h & 0x3ffu;
	if (exp == 0) {
		if (man == 0)
			return u2f(sign);
		/* subnormal: normalise */
		int e = -1;
		do {
			e++;
			man <<= 1;
		} while (!(man & 0x400u));
		return u2f(sign | ((uint32_t)(127 - 15 - e) << 23) | ((man & 0x3ffu) << 13));
	}
	if (exp == 0x1f)
		return u2f(sign | 0x7f800000u | (man << 13));
	return u2f(sign | ((exp + 127 - 15) << 23) | (man << 13));
}

uint16_t float_to_bf16(float f)
{
	uint32_t x = f2u(f);
	if ((x & 0x7fffffffu) > 0x7f800000u)
		return (uint16_t)((x >> 16) | 0x40u); /* quiet nan */
	uint32_t lsb = (x >> 16) & 1u;
	x += 0x7fffu + lsb;
	return (uint16_t)(x >> 16);
}

float bf16_to_float(uint16_t b) { return u2f((uint32_t)b << 16); }
