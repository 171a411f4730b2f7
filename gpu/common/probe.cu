/*
 * Bandwidth probes for the roofline the benchmark measures: copy (1 read +
 * 1 write), pure write, and dst = a + b (2 reads + 1 write), with plain or
 * streaming (evict-first) stores. 16-byte accesses, each CTA streaming
 * contiguous chunks (chunk c of a CTA is c * gridDim.x + blockIdx.x): the
 * CTAs resident at any moment cover a contiguous window of the buffer, as
 * PyTorch's elementwise kernels and the norm kernels' row grids do. The first
 * version was a persistent grid-stride loop whose four accesses per thread
 * were a grid apart; it reached 4.39 TB/s pure write where fill_ reached 4.68
 * on the same H200, and so understated the roofline (docs/perf/h200.md).
 * CUDA: 256 threads, one access each (4 KB chunks). bench/hbm_sweep.cu
 * (session 24, H200, 1 GiB buffers) ranked it the fastest of every pattern
 * it tried for each probe: copy 4274 GB/s against 4106 for the 512 x 4 of
 * sessions 2-23 (and 4246 for cudaMemcpyAsync), write 4665 against 4644,
 * 2 reads + 1 write 4397 against 4345. HIP keeps 512 threads x 4 (not
 * measured on an AMD GPU).
 */
#include "gpu/common/vendor.h"
#include "gpu/common/kernel_args.h"

namespace {

#if RMSI_WARP == 64
#define RMSI_PROBE_T 512
#define RMSI_PROBE_U 4
#else
#define RMSI_PROBE_T 256
#define RMSI_PROBE_U 1
#endif
#define RMSI_PROBE_CHUNK (RMSI_PROBE_T * RMSI_PROBE_U) /* 16-byte vectors */

__global__ void __launch_bounds__(RMSI_PROBE_T) rmsi_probe16(int kind, int nt, uint4 *dst, const uint4 *a,
                                                            const uint4 *b, int64_t n)
{
    for (int64_t c = blockIdx.x; c * RMSI_PROBE_CHUNK < n; c += gridDim.x) {
        const int64_t i = c * RMSI_PROBE_CHUNK + threadIdx.x;
        if (i + (RMSI_PROBE_U - 1) * RMSI_PROBE_T < n) {
            uint4 v[RMSI_PROBE_U];
            if (kind == 1) {
#pragma unroll
                for (int u = 0; u < RMSI_PROBE_U; u++)
                    v[u] = make_uint4((uint32_t)i, 1u, 2u, 3u);
            } else {
#pragma unroll
                for (int u = 0; u < RMSI_PROBE_U; u++)
                    v[u] = a[i + u * RMSI_PROBE_T];
                if (kind == 2) {
#pragma unroll
                    for (int u = 0; u < RMSI_PROBE_U; u++) {
                        uint4 w = b[i + u * RMSI_PROBE_T];
                        v[u].x += w.x;
                        v[u].y += w.y;
                        v[u].z += w.z;
                        v[u].w += w.w;
                    }
                }
            }
#pragma unroll
            for (int u = 0; u < RMSI_PROBE_U; u++)
                rmsi_st16(dst + i + u * RMSI_PROBE_T, v[u], nt);
            continue;
        }
        for (int64_t j = i; j < n; j += RMSI_PROBE_T) { /* the last, partial chunk */
            uint4 v = kind == 1 ? make_uint4((uint32_t)j, 1u, 2u, 3u) : a[j];
            if (kind == 2) {
                uint4 w = b[j];
                v.x += w.x;
                v.y += w.y;
                v.z += w.z;
                v.w += w.w;
            }
            rmsi_st16(dst + j, v, nt);
        }
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
    const int64_t chunks = (int64_t)(bytes / 16 + RMSI_PROBE_CHUNK - 1) / RMSI_PROBE_CHUNK;
    if (bytes == 0)
        return 0;
    if ((mis & 15u) == 0u) {
        rmsi_probe16<<<dim3((unsigned)(chunks < (1 << 30) ? chunks : (1 << 30))), dim3(RMSI_PROBE_T), 0,
                       (rmsi_stream_t)stream>>>(
            kind, nt, (uint4 *)dst, (const uint4 *)a, (const uint4 *)b, (int64_t)(bytes / 16));
    } else {
        rmsi_probe1<<<dim3((unsigned)grid), dim3(512), 0, (rmsi_stream_t)stream>>>(
            kind, (uint8_t *)dst, (const uint8_t *)a, (const uint8_t *)b, (int64_t)bytes);
    }
    return rmsi_get_last_error() == RMSI_SUCCESS ? 0 : -1;
}
