/*
 * Bit-exact conversions between fp32 and the storage formats, and the fp8
 * scale rule. Portable C11, header-only (static inline) so the reference, the
 * SIMD fallbacks, the tests and the fuzzers share one definition; the fp8 ones
 * are checked exhaustively by fuzz/fuzz_fp8.c against an independent model.
 *
 * Rounding is round-to-nearest-even everywhere. fp16/bf16 overflow to
 * infinity (IEEE); fp8 saturates to the format's finite max (infinities too)
 * and keeps NaN as NaN, as inference engines' saturating casts do.
 */
#ifndef RMSNORM_REF_FORMATS_H
#define RMSNORM_REF_FORMATS_H

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "rmsnorm.h"

static inline uint32_t rmsi_f32_bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

static inline float rmsi_bits_f32(uint32_t u)
{
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

static inline float rmsi_f16_to_f32(uint16_t h)
{
    uint32_t sign = ((uint32_t)h & 0x8000u) << 16;
    uint32_t e = ((uint32_t)h >> 10) & 0x1fu;
    uint32_t m = (uint32_t)h & 0x3ffu;
    if (e == 0u) {
        /* zero or subnormal: m * 2^-24 is exact in fp32 */
        float v = (float)m * 0x1p-24f;
        return sign ? -v : v;
    }
    if (e == 31u)
        return rmsi_bits_f32(sign | 0x7f800000u | (m << 13));
    return rmsi_bits_f32(sign | ((e + 112u) << 23) | (m << 13));
}

static inline uint16_t rmsi_f32_to_f16(float f)
{
    uint32_t x = rmsi_f32_bits(f);
    uint32_t sign = (x >> 16) & 0x8000u;
    uint32_t ax = x & 0x7fffffffu;
    if (ax > 0x7f800000u) /* NaN: keep it quiet and keep the top payload bits */
        return (uint16_t)(sign | 0x7e00u | ((ax >> 13) & 0x3ffu));
    if (ax >= 0x477ff000u) /* >= 65520 rounds (ties-to-even) past 65504: infinity */
        return (uint16_t)(sign | 0x7c00u);
    if (ax < 0x38800000u) { /* below 2^-14: fp16 subnormal or zero */
        if (ax <= 0x33000000u) /* <= 2^-25: the tie at 2^-25 goes to even (zero) */
            return (uint16_t)sign;
        uint32_t e = ax >> 23;
        uint32_t m = (ax & 0x7fffffu) | 0x800000u;
        uint32_t shift = 126u - e; /* 14..24 */
        uint32_t q = m >> shift;
        uint32_t rem = m & ((1u << shift) - 1u);
        uint32_t half = 1u << (shift - 1u);
        if (rem > half || (rem == half && (q & 1u)))
            q++;
        return (uint16_t)(sign | q);
    }
    uint32_t r = ax - 0x38000000u; /* rebias 127 -> 15 */
    uint32_t q = r >> 13;
    uint32_t rem = r & 0x1fffu;
    if (rem > 0x1000u || (rem == 0x1000u && (q & 1u)))
        q++; /* a carry into the exponent is the right result */
    return (uint16_t)(sign | q);
}

static inline float rmsi_bf16_to_f32(uint16_t b)
{
    return rmsi_bits_f32((uint32_t)b << 16);
}

static inline uint16_t rmsi_f32_to_bf16(float f)
{
    uint32_t x = rmsi_f32_bits(f);
    if ((x & 0x7fffffffu) > 0x7f800000u)
        return (uint16_t)((x >> 16) | 0x40u); /* quiet NaN, sign kept */
    x += 0x7fffu + ((x >> 16) & 1u);
    return (uint16_t)(x >> 16);
}

/* fp8 format parameters. */
typedef struct rmsi_fp8_format {
    int mbits;        /* mantissa bits */
    int bias;         /* exponent bias */
    float max;        /* largest finite value */
    uint8_t max_code; /* its magnitude code */
    uint8_t nan_code; /* magnitude code of the NaN we produce (sign added unless fnuz) */
    int fnuz;         /* 1: single NaN 0x80, no negative zero */
} rmsi_fp8_format;

static inline rmsi_fp8_format rmsi_fp8_format_of(rmsnorm_dtype t)
{
    rmsi_fp8_format f;
    switch (t) {
    case RMSNORM_F8_E5M2:
        f.mbits = 2; f.bias = 15; f.max = 57344.0f; f.max_code = 0x7b; f.nan_code = 0x7e; f.fnuz = 0;
        break;
    case RMSNORM_F8_E4M3FNUZ:
        f.mbits = 3; f.bias = 8; f.max = 240.0f; f.max_code = 0x7f; f.nan_code = 0x80; f.fnuz = 1;
        break;
    case RMSNORM_F8_E4M3:
    default:
        f.mbits = 3; f.bias = 7; f.max = 448.0f; f.max_code = 0x7e; f.nan_code = 0x7f; f.fnuz = 0;
        break;
    }
    return f;
}

static inline float rmsi_fp8_max(rmsnorm_dtype t)
{
    return rmsi_fp8_format_of(t).max;
}

/* fp32 -> fp8, round to nearest even, saturating to +-max, NaN -> NaN. */
static inline uint8_t rmsi_f32_to_fp8(float v, rmsnorm_dtype t)
{
    rmsi_fp8_format f = rmsi_fp8_format_of(t);
    uint32_t sign = (rmsi_f32_bits(v) >> 24) & 0x80u;
    float a = fabsf(v);
    uint32_t code;
    if (isnan(v))
        return f.fnuz ? (uint8_t)0x80u : (uint8_t)(sign | f.nan_code);
    if (a >= f.max) {
        code = f.max_code;
    } else {
        int e2 = 0;
        (void)frexpf(a, &e2);
        int E = e2 - 1; /* floor(log2(a)) for a > 0 */
        const int emin = 1 - f.bias;
        if (a == 0.0f || E < emin)
            E = emin;
        float quantum = ldexpf(1.0f, E - f.mbits);
        uint32_t k = (uint32_t)nearbyintf(a / quantum); /* exact scaling by 2^n, then RNE */
        uint32_t one = 1u << f.mbits;
        if (k < one) {
            code = k; /* subnormal (only reachable at E == emin) or zero */
        } else {
            if (k >= 2u * one) { /* rounded up into the next binade */
                k >>= 1;
                E++;
            }
            code = ((uint32_t)(E + f.bias) << f.mbits) | (k - one);
            if (code > f.max_code)
                code = f.max_code;
        }
    }
    if (f.fnuz && code == 0u)
        return 0u; /* no negative zero */
    return (uint8_t)(sign | code);
}

/* fp8 -> fp32, exact. */
static inline float rmsi_fp8_to_f32(uint8_t c, rmsnorm_dtype t)
{
    rmsi_fp8_format f = rmsi_fp8_format_of(t);
    uint32_t mag = c & 0x7fu;
    int neg = (c & 0x80u) != 0u;
    uint32_t e = mag >> f.mbits;
    uint32_t m = mag & ((1u << f.mbits) - 1u);
    if (f.fnuz) {
        if (c == 0x80u)
            return NAN;
    } else if (t == RMSNORM_F8_E5M2) {
        if (e == 31u)
            return m ? NAN : (neg ? -INFINITY : INFINITY);
    } else if (mag == 0x7fu) {
        return NAN;
    }
    float val;
    if (e == 0u)
        val = ldexpf((float)m, 1 - f.bias - f.mbits);
    else
        val = ldexpf((float)(m | (1u << f.mbits)), (int)e - f.bias - f.mbits);
    return neg ? -val : val;
}

static inline int rmsi_is_fp8(rmsnorm_dtype t)
{
    return t == RMSNORM_F8_E4M3 || t == RMSNORM_F8_E5M2 || t == RMSNORM_F8_E4M3FNUZ;
}

/* Element access by dtype for 16/32-bit activations (ref and test code). */
static inline float rmsi_load(const void *base, rmsnorm_dtype t, size_t i)
{
    switch (t) {
    case RMSNORM_F16: return rmsi_f16_to_f32(((const uint16_t *)base)[i]);
    case RMSNORM_BF16: return rmsi_bf16_to_f32(((const uint16_t *)base)[i]);
    case RMSNORM_F32:
    default: return ((const float *)base)[i];
    }
}

static inline void rmsi_store(void *base, rmsnorm_dtype t, size_t i, float v)
{
    switch (t) {
    case RMSNORM_F16: ((uint16_t *)base)[i] = rmsi_f32_to_f16(v); break;
    case RMSNORM_BF16: ((uint16_t *)base)[i] = rmsi_f32_to_bf16(v); break;
    case RMSNORM_F32:
    default: ((float *)base)[i] = v; break;
    }
}

/* v rounded to dtype t and widened back to fp32. */
static inline float rmsi_round_to(float v, rmsnorm_dtype t)
{
    switch (t) {
    case RMSNORM_F16: return rmsi_f16_to_f32(rmsi_f32_to_f16(v));
    case RMSNORM_BF16: return rmsi_bf16_to_f32(rmsi_f32_to_bf16(v));
    case RMSNORM_F32:
    default: return v;
    }
}

/* The dynamic scale rule shared by per-token and per-block quantisation:
 *   s = max(min(amax, ub) / fmax, 1 / (fmax * 512))    (ub <= 0: no clamp)
 * and with RMSNORM_SCALE_POW2, s rounded up to a power of two. amax ignores
 * NaN (fmaxf semantics) so one NaN element does not poison the whole scale. */
static inline float rmsi_dynamic_scale(float amax, float ub, float fmax, int pow2)
{
    float a = (ub > 0.0f && amax > ub) ? ub : amax;
    float s = a / fmax;
    float lo = 1.0f / (fmax * 512.0f);
    if (!(s >= lo)) /* also catches NaN amax (an all-NaN block) */
        s = lo;
    if (pow2 && isfinite(s)) {
        int e2 = 0;
        float fr = frexpf(s, &e2); /* s = fr * 2^e2, fr in [0.5, 1) */
        if (fr != 0.5f)
            s = ldexpf(1.0f, e2);
    }
    return s;
}

#endif /* RMSNORM_REF_FORMATS_H */
