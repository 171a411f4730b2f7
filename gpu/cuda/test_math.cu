/*
 * The quantiser's in-range division (gpu/common/device_math.h,
 * rmsi_d_div_inrange) against __fdiv_rn over every operand it is given, on the
 * device: every non-negative fp32 (+inf included) as the amax of a dynamic
 * scale, for the three fp8 maxima, with and without SCALE_POW2, and every
 * fp32 a dynamic scale can be (the smallest floor to 2^121, and +inf) as the
 * s of 1 / s.
 * And the claim of rmsi_pack16_prod and rmsi_round_prod (the lean forward's
 * h and y): an FMUL or FADD with a NaN operand gives the canonical NaN
 * 0x7fffffff, whatever the NaN's sign and payload and whatever the other
 * operand, so the pair conversions round and pack such a result to the bits
 * of the exact software rounding: every NaN of either sign times and plus 1,
 * -0.5, 0, +inf and a NaN, on both sides, packed, and rounded then packed;
 * and the E4M3 pair conversion (the quantiser's codes of v * (1 / s)) to the
 * exact encoder's code.
 * And rmsi_add0x2 (the block quantiser's weights where w_off is 0): every
 * 16-bit weight, bf16 and f16, in both halves of the pair, widened after the
 * pair instruction's + 0 against widened then FADDed with 0.0f: the same
 * bits, or a NaN both ways (whose products are the canonical NaN, above).
 * The results must be the same bits; a failure prints the first operand that
 * differs. 2^31 operands a domain, a few milliseconds on an H100.
 *
 * Exit status: 0 pass, 1 mismatch or CUDA error, 77 no GPU (skipped).
 */
#include <stdio.h>
#include <stdint.h>
#include <string.h>

#include "gpu/common/device_math.h"

namespace {

/* rmsi_d_dynamic_scale as it was with __fdiv_rn: the oracle. */
__device__ float scale_ref(float amax, float fmax, float lo, int pow2)
{
    float s = __fdiv_rn(amax, fmax);
    if (!(s >= lo))
        s = lo;
    if (pow2 && isfinite(s)) {
        uint32_t b = __float_as_uint(s);
        if ((b & 0x7fffffu) != 0u)
            s = __uint_as_float((b & 0x7f800000u) + 0x800000u);
    }
    return s;
}

struct result {
    unsigned long long bad;
    unsigned int first; /* lowest operand bits that differed */
};

__device__ void note(result *r, uint32_t u)
{
    atomicAdd(&r->bad, 1ull);
    atomicMin(&r->first, u);
}

/* r[0..5]: scale, fmax 448 / 57344 / 240, pow2 0 and 1; r[6]: 1 / s. */
__global__ void check(uint32_t base, result *r)
{
    const float fmaxes[3] = { 448.0f, 57344.0f, 240.0f };
    const uint32_t u = base + (uint32_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (u > 0x7f800000u)
        return;
    const float a = __uint_as_float(u);
#pragma unroll
    for (int f = 0; f < 3; f++) {
        const float lo = __fdiv_rn(1.0f, fmaxes[f] * 512.0f);
#pragma unroll
        for (int pow2 = 0; pow2 < 2; pow2++) {
            const float got = rmsi_d_dynamic_scale(a, 0.0f, fmaxes[f], lo, pow2);
            if (__float_as_uint(got) != __float_as_uint(scale_ref(a, fmaxes[f], lo, pow2)))
                note(&r[2 * f + pow2], u);
        }
    }
    /* s from the smallest floor of the three formats, 1 / (57344 * 512), to
     * FLT_MAX / 240 rounded up to a power of two (2^121), and +inf */
    if (a >= __fdiv_rn(1.0f, 57344.0f * 512.0f) && (a <= 0x1p121f || isinf(a)) &&
        __float_as_uint(rmsi_d_scale_recip(a)) != __float_as_uint(__fdiv_rn(1.0f, a)))
        note(&r[6], u);
}

/* A vector holding p, packed by rmsi_pack16_prod and by rmsi_pack16_soft,
 * and rounded by rmsi_round_prod and by rmsi_elem::round before those: the
 * same bits both ways. */
template <typename T>
__device__ bool same_packs(float p)
{
    float v[8] = { p, 1.5f, -2.0f, p, 0.0f, -0.0f, 3.0e38f, p };
    float w[8];
    for (int e = 0; e < 8; e++)
        w[e] = rmsi_elem<T>::round(v[e]);
    uint4 h = rmsi_pack16_prod<T>(v), s = rmsi_pack16_soft<T>(v);
    bool same = h.x == s.x && h.y == s.y && h.z == s.z && h.w == s.w;
    rmsi_round_prod<T, 8>(v);
    h = rmsi_pack16_prod<T>(v);
    s = rmsi_pack16_soft<T>(w);
    return same && h.x == s.x && h.y == s.y && h.z == s.z && h.w == s.w;
}

/* Four codes holding p, by the E4M3 pair instructions (rmsi_fp8_hw_pack
 * for FMUL results) and by the exact encoder: the same bytes. */
__device__ bool same_e4m3(float p)
{
#if !RMSI_HAVE_HW_FP8X4
    (void)p;
    return true; /* below sm_89: no pair conversion, no claim */
#else
    const float q[4] = { p, 1.5f, -2.0f, p };
    const uint32_t h = rmsi_hw_fp8x4<false>(q[0], q[1], q[2], q[3]);
    uint32_t s = 0u;
    for (int e = 0; e < 4; e++)
        s |= rmsi_fp8_encode(q[e], RMSI_FP8_E4M3) << (8 * e);
    return h == s;
#endif
}

/* r[7]: a NaN product or sum not 0x7fffffff; r[8], r[9]: a vector holding it
 * packed by rmsi_pack16_prod other than by rmsi_pack16_soft (bf16, f16);
 * r[10]: its E4M3 codes by the pair instructions other than exact.
 * u runs over the 2 * (2^23 - 1) NaN bit patterns; m is a kernel argument,
 * so nothing is folded at compile time. */
__global__ void check_nan(uint32_t base, float m, result *r)
{
    const uint32_t k = base + (uint32_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (k >= 2u * 0x7fffffu)
        return;
    const uint32_t u = ((k & 1u) << 31) | 0x7f800000u | (k / 2u + 1u);
    const float a = __uint_as_float(u);
    const float res[4] = { __fmul_rn(a, m), __fmul_rn(m, a), __fadd_rn(a, m), __fadd_rn(m, a) };
#pragma unroll
    for (int s = 0; s < 4; s++) {
        const float p = res[s];
        if (__float_as_uint(p) != 0x7fffffffu)
            note(&r[7], u);
        if (!same_packs<rmsi_bf16>(p))
            note(&r[8], u);
        if (!same_packs<rmsi_f16>(p))
            note(&r[9], u);
        if (!same_e4m3(p))
            note(&r[10], u);
    }
}

/* r[11], r[12]: a 16-bit weight u (bf16, f16) whose pair + 0 widens to
 * other bits than its FADD with 0.0f (both NaN counts as equal). */
template <typename T>
__device__ bool same_add0(uint32_t u)
{
#if RMSI_HAVE_HW_PACK2
    const uint32_t pair = u | ((u ^ 0x8000u) << 16); /* u and -u: both halves, both signs */
    const uint32_t z = rmsi_add0x2<T>(pair);
    const float got[2] = { rmsi_elem<T>::from_raw(z & 0xffffu), rmsi_elem<T>::from_raw(z >> 16) };
    const float want[2] = { __fadd_rn(rmsi_elem<T>::from_raw(pair & 0xffffu), 0.0f),
                            __fadd_rn(rmsi_elem<T>::from_raw(pair >> 16), 0.0f) };
    for (int k = 0; k < 2; k++)
        if (__float_as_uint(got[k]) != __float_as_uint(want[k]) && !(got[k] != got[k] && want[k] != want[k]))
            return false;
#else
    (void)u;
#endif
    return true;
}

__global__ void check_add0(result *r)
{
    const uint32_t u = (uint32_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (u > 0xffffu)
        return;
    if (!same_add0<rmsi_bf16>(u))
        note(&r[11], u);
    if (!same_add0<rmsi_f16>(u))
        note(&r[12], u);
}

} /* namespace */

int main(void)
{
    enum { NR = 13 };
    static const char *names[NR] = { "scale e4m3", "scale e4m3 pow2", "scale e5m2", "scale e5m2 pow2",
                                      "scale e4m3fnuz", "scale e4m3fnuz pow2", "1 / s",
                                      "NaN result", "NaN result bf16", "NaN result f16", "NaN result e4m3",
                                      "weight + 0 bf16", "weight + 0 f16" };
    static const float muls[5] = { 1.0f, -0.5f, 0.0f, __builtin_inff(), __builtin_nanf("") };
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess || n < 1) {
        printf("test_math: no CUDA device, skipped\n");
        return 77;
    }
    result init[NR], out[NR];
    for (int i = 0; i < NR; i++) {
        init[i].bad = 0;
        init[i].first = 0xffffffffu;
    }
    result *d = nullptr;
    if (cudaMalloc(&d, sizeof init) != cudaSuccess || cudaMemcpy(d, init, sizeof init, cudaMemcpyHostToDevice))
        return 1;
    const uint32_t chunk = 1u << 28;
    for (uint64_t base = 0; base <= 0x7f800000u; base += chunk)
        check<<<chunk / 256, 256>>>((uint32_t)base, d);
    for (int m = 0; m < 5; m++)
        check_nan<<<(2u * 0x7fffffu + 255u) / 256u, 256>>>(0u, muls[m], d);
    check_add0<<<65536 / 256, 256>>>(d);
    cudaError_t e = cudaMemcpy(out, d, sizeof out, cudaMemcpyDeviceToHost);
    (void)cudaFree(d);
    if (e != cudaSuccess) {
        printf("test_math: %s\n", cudaGetErrorString(e));
        return 1;
    }
    int fail = 0;
    for (int i = 0; i < NR; i++) {
        printf("%-20s %llu mismatches", names[i], out[i].bad);
        if (out[i].bad)
        {
            float f;
            memcpy(&f, &out[i].first, sizeof f);
            printf(", first at 0x%08x (%g)", out[i].first, (double)f);
        }
        printf("\n");
        fail |= out[i].bad != 0;
    }
    printf("test_math: %s (every operand 0 .. +inf, bit for bit against __fdiv_rn; every NaN product and sum; every 16-bit weight + 0)\n",
           fail ? "FAILED" : "passed");
    return fail;
}
