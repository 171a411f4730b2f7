/* A small deterministic generator (splitmix64) so every case's data is a
 * function of its seed alone, on every machine. */
#ifndef RMST_RNG_H
#define RMST_RNG_H

#include <stdint.h>

typedef struct rmst_rng {
    uint64_t s;
} rmst_rng;

static inline uint64_t rmst_rng_next(rmst_rng *r)
{
    uint64_t z = (r->s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* Uniform in [-1, 1), 53 random bits. */
static inline double rmst_rng_sym(rmst_rng *r)
{
    return (double)(rmst_rng_next(r) >> 11) * 0x1p-52 - 1.0;
}

/* Uniform in [0, 1). */
static inline double rmst_rng_unit(rmst_rng *r)
{
    return (double)(rmst_rng_next(r) >> 11) * 0x1p-53;
}

#endif /* RMST_RNG_H */
