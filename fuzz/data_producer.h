/*
 * Splits a fuzz input in two: parameters are taken from the front, tensor data
 * from the back, so that a mutation of the parameter bytes does not shift every
 * data value and a mutation of the data does not change the shape. When either
 * end runs dry the producer keeps going deterministically (zeros for
 * parameters, a generator seeded from the whole input for data), so short
 * inputs still describe large tensors and every input is a valid case.
 */
#ifndef RMSNORM_FUZZ_DATA_PRODUCER_H
#define RMSNORM_FUZZ_DATA_PRODUCER_H

#include <stddef.h>
#include <stdint.h>

#include "tests/rng.h"

typedef struct fz_producer {
    const uint8_t *data;
    size_t front; /* next parameter byte */
    size_t back;  /* one past the next data byte (data is read downwards) */
    rmst_rng rng; /* the tests' splitmix64, for data past the end of the input */
} fz_producer;

static inline void fz_init(fz_producer *p, const uint8_t *data, size_t size)
{
    uint64_t h = 0x9e3779b97f4a7c15u ^ (uint64_t)size;
    for (size_t i = 0; i < size; i++)
        h = (h ^ data[i]) * 0x100000001b3u;
    p->data = data;
    p->front = 0;
    p->back = size;
    p->rng.s = h;
}

static inline uint64_t fz_rng_next(fz_producer *p)
{
    return rmst_rng_next(&p->rng);
}

/* One parameter byte from the front; 0 once the parameters are used up. */
static inline uint8_t fz_param_byte(fz_producer *p)
{
    if (p->front < p->back)
        return p->data[p->front++];
    return 0;
}

/* An integer in [lo, hi] from the front (little-endian, as few bytes as the
 * range needs; the modulo bias does not matter for fuzzing). */
static inline uint64_t fz_param_range(fz_producer *p, uint64_t lo, uint64_t hi)
{
    uint64_t span = hi - lo;
    uint64_t v = 0;
    for (uint64_t s = span; s != 0; s >>= 8)
        v = (v << 8) | fz_param_byte(p);
    if (span == UINT64_MAX)
        return v;
    return lo + v % (span + 1u);
}

static inline int fz_param_bool(fz_producer *p)
{
    return (fz_param_byte(p) & 1u) != 0u;
}

/* Picks one of n (n >= 1) choices. */
static inline size_t fz_param_pick(fz_producer *p, size_t n)
{
    return (size_t)fz_param_range(p, 0, (uint64_t)n - 1u);
}

/* One data byte from the back; generated once the data bytes are used up. */
static inline uint8_t fz_data_byte(fz_producer *p)
{
    if (p->back > p->front)
        return p->data[--p->back];
    return (uint8_t)(fz_rng_next(p) >> 56);
}

static inline uint32_t fz_data_u32(fz_producer *p)
{
    uint32_t v = 0;
    for (int i = 0; i < 4; i++)
        v = (v << 8) | fz_data_byte(p);
    return v;
}

/* Uniform in [-1, 1) from 24 generated bits: the bulk of "ordinary" data. */
static inline float fz_data_unit(fz_producer *p)
{
    uint32_t u = fz_data_u32(p) >> 8;
    return (float)u * 0x1p-23f - 1.0f;
}

#endif /* RMSNORM_FUZZ_DATA_PRODUCER_H */
