/* dropoutmask.h - the arithmetic of DropoutMask, shared by its lowering
 * rule (lower-train.c, which documents it) and the interpreter's kernel
 * (backends/interpreter/k_grad.c); the C backend writes the same steps into
 * its bundles (backends/c/kernels/cb_grad.c). Header only, so the
 * interpreter needs no link to the passes.
 */
#ifndef GLOW_PASSES_DROPOUTMASK_H
#define GLOW_PASSES_DROPOUTMASK_H

#include <math.h>
#include <stdint.h>

/* 2^31 - 1, a prime: every value below stays under 2^62 when squared and
 * added to, so 64-bit arithmetic never wraps */
#define DROPOUT_MASK_PRIME 2147483647u

/* A 64-bit mix of x (the finalizer of a well-known splittable generator:
 * xor-shifts and two odd multipliers), so neighbouring indices and seeds
 * give unrelated keys. */
static inline uint64_t dropout_mix64(uint64_t x)
{
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9u;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebu;
	return x ^ (x >> 31);
}

/* K[i] of element i under seed: mix64(mix64(seed + g) + i) mod M, g an
 * odd constant so seed 0 is no fixed point. */
static inline int64_t dropout_key(uint64_t seed, uint64_t i)
{
	return (int64_t)(dropout_mix64(dropout_mix64(seed + 0x9e3779b97f4a7c15u) + i) % DROPOUT_MASK_PRIME);
}

/* The threshold a hash must stay below for the element to be kept:
 * round((1 - ratio) * M). */
static inline int64_t dropout_threshold(double ratio)
{
	return (int64_t)floor((1 - ratio) * (double)DROPOUT_MASK_PRIME + 0.5);
}

/* t of step s: (s mod M) * 48271 mod M, the modulus taking the sign of
 * the divisor as the Mod node does on integers. */
static inline int64_t dropout_step_term(int64_t s)
{
	const int64_t m = DROPOUT_MASK_PRIME;
	int64_t r = s % m;
	if (r < 0)
		r += m;
	return r * 48271 % m;
}

/* Whether element of key k is kept at step term t: h = (k + t) mod M, then
 * twice h = (h * h + k) mod M, kept when h < thr. */
static inline int dropout_keep(int64_t k, int64_t t, int64_t thr)
{
	const int64_t m = DROPOUT_MASK_PRIME;
	int64_t h = (k + t) % m;
	h = (h * h + k) % m;
	h = (h * h + k) % m;
	return h < thr;
}

#endif
