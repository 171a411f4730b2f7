/*
 * Bandwidth probes for the roofline the benchmark measures: copy (1 read +
 * 1 write), pure write, and dst = a + b (2 reads + 1 write), with plain or
 * streaming (evict-first) stores. 16-byte accesses over a persistent grid with
 * four independent accesses in flight per thread, the shape the norm kernels
 * use, so the probe is what a well-formed streaming kernel can reach.
 */
#include "gpu/common/vendor.h"
#include "gpu/common/kernel_args.h"

namespace {

__global__ void __launch_bounds__(512) rmsi_probe16(int kind, int nt, uint4 *dst, const uint4 *a,
                                                   const uint4 *b, int64_t n)
{
    const int64_t stride = (int64_t)gridDim.x * blockDim.x;
    int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    for (; i + 3 * stride < n; i += 4 * stride) {
        uint4 v[4];
        if (kind == 1) {
#pragma unroll
            for (int u = 0; u < 4; u++)
                v[u] = make_uint4((uint32_t)i, 1u, 2u, 3u);
        } else {
#pragma unroll
            for (int u = 0; u < 4; u++)
                v[u] = a[i + u * stride];
            if (kind == 2) {
#pragma unroll
                for (int u = 0; u < 4; u++) {
                    uint4 w = b[i + u * stride];
                    v[u].x += w.x;
                    v[u].y += w.y;
                    v[u].z += w.z;
                    v[u].w += w.w;
                }
            }
        }
#pragma unroll
        for (int u = 0; u < 4; u++)
            rmsi_st16(dst + i + u * stride, v[u], nt);
    }
    for (; i < n; i += stride) {
        uint4 v = kind == 1 ? make_uint4((uint32_t)i, 1u, 2u, 3u) : a[i];
        if (kind == 2) {
            uint4 w = b[i];
            v.x += w.x;
            v.y += w.y;
            v.z += w.z;
            v.w += w.w;
        }
        rmsi_st16(dst + i, v, nt);
    }
}

__global__ void rmsi_probe1(int kind, uint8_t *dst, const uint8_t *a, const uint8_t *b, int64_t n)
{
    const int64_t stride = (int64_t)gridDim.x * blockDim.x;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
        dst[i] = kind == 1 ? (uint8_t)i : (uint8_t)(a[i] + (kind == 2 ? b[i] : 0u));
}

} /* namespace */

int rmsi_launch_probe(int kind, int nt, void *dst, const void *a, const void *b, size_t bytes,
                      int sms, void *stream)
{
    const uintptr_t mis = (uintptr_t)dst | (uintptr_t)a | (uintptr_t)b | (uintptr_t)bytes;
    const int64_t grid = (int64_t)(sms > 0 ? sms : 1) * 4;
    if (bytes == 0)
        return 0;
    if ((mis & 15u) == 0u) {
        rmsi_probe16<<<dim3((unsigned)grid), dim3(512), 0, (rmsi_stream_t)stream>>>(
            kind, nt, (uint4 *)dst, (const uint4 *)a, (const uint4 *)b, (int64_t)(bytes / 16));
    } else {
        rmsi_probe1<<<dim3((unsigned)grid), dim3(512), 0, (rmsi_stream_t)stream>>>(
            kind, (uint8_t *)dst, (const uint8_t *)a, (const uint8_t *)b, (int64_t)bytes);
    }
    return rmsi_get_last_error() == RMSI_SUCCESS ? 0 : -1;
}
