/* rng.h - splitmix64, the seeded generator of the random data the tools make
 * (glow-diff's inputs and constants, glow-gradcheck's inputs): one 64-bit
 * state, a different stream for every seed, the same numbers on every host. */
#ifndef GLOW_SUPPORT_RNG_H
#define GLOW_SUPPORT_RNG_H

#include <stdint.h>

/* The next 64 random bits of state *s. */
static inline uint64_t rng_next(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* Uniform in [0, 1): the top 53 bits of rng_next. */
static inline double rng_unit(uint64_t *s) { return (double)(rng_next(s) >> 11) * (1.0 / 9007199254740992.0); }

#endif
