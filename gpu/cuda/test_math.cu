/*
 * The quantiser's in-range division (gpu/common/device_math.h,
 * rmsi_d_div_inrange) against __fdiv_rn over every operand it is given, on the
 * device: every non-negative fp32 (+inf included) as the amax of a dynamic
 * scale, for the three fp8 maxima, with and without SCALE_POW2, and every
 * fp32 a dynamic scale can be (the smallest floor to 2^121, and +inf) as the
 * s of 1 / s.
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

} /* namespace */

int main(void)
{
    static const char *names[7] = { "scale e4m3", "scale e4m3 pow2", "scale e5m2", "scale e5m2 pow2",
                                     "scale e4m3fnuz", "scale e4m3fnuz pow2", "1 / s" };
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess || n < 1) {
        printf("test_math: no CUDA device, skipped\n");
        return 77;
    }
    result init[7], out[7];
    for (int i = 0; i < 7; i++) {
        init[i].bad = 0;
        init[i].first = 0xffffffffu;
    }
    result *d = nullptr;
    if (cudaMalloc(&d, sizeof init) != cudaSuccess || cudaMemcpy(d, init, sizeof init, cudaMemcpyHostToDevice))
        return 1;
    const uint32_t chunk = 1u << 28;
    for (uint64_t base = 0; base <= 0x7f800000u; base += chunk)
        check<<<chunk / 256, 256>>>((uint32_t)base, d);
    cudaError_t e = cudaMemcpy(out, d, sizeof out, cudaMemcpyDeviceToHost);
    (void)cudaFree(d);
    if (e != cudaSuccess) {
        printf("test_math: %s\n", cudaGetErrorString(e));
        return 1;
    }
    int fail = 0;
    for (int i = 0; i < 7; i++) {
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
    printf("test_math: %s (every operand 0 .. +inf, bit for bit against __fdiv_rn)\n", fail ? "FAILED" : "passed");
    return fail;
}
