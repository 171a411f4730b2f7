/*
 * A C entry point to FlashInfer's header-only RMSNorm (flashinfer/norm.cuh),
 * so that bench/peers.py can time FlashInfer's CUDA kernel where the
 * flashinfer Python package (a 100 MB wheel that JIT-compiles on first use)
 * cannot be installed. FlashInfer itself is never committed: its headers
 * are unpacked into the git-ignored .peers/ and this file is built against
 * them (bench/peers_shim/build.sh). Only the two forward paths the grid
 * compares are exposed: RMSNorm and FusedAddRMSNorm, bf16 and fp16.
 */
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "flashinfer/norm.cuh"

namespace {

template <typename T>
int fi_norm(void *x, void *w, void *y, unsigned rows, unsigned cols, unsigned sx, unsigned sy, float eps, int pdl,
            void *stream)
{
    return (int)flashinfer::norm::RMSNorm<T>(static_cast<T *>(x), static_cast<T *>(w), static_cast<T *>(y), rows, cols,
                                             sx, sy, eps, pdl != 0, static_cast<cudaStream_t>(stream));
}

template <typename T>
int fi_add_norm(void *x, void *r, void *w, unsigned rows, unsigned cols, unsigned sx, unsigned sr, float eps, int pdl,
                void *stream)
{
    return (int)flashinfer::norm::FusedAddRMSNorm<T>(static_cast<T *>(x), static_cast<T *>(r), static_cast<T *>(w),
                                                     rows, cols, sx, sr, eps, pdl != 0,
                                                     static_cast<cudaStream_t>(stream));
}

} // namespace

/* dtype: 0 bf16, 1 fp16. Returns the cudaError_t. y = rmsnorm(x) * w. */
extern "C" int fi_rmsnorm(int dtype, void *x, void *w, void *y, unsigned rows, unsigned cols, unsigned sx,
                          unsigned sy, float eps, int pdl, void *stream)
{
    return dtype == 0 ? fi_norm<__nv_bfloat16>(x, w, y, rows, cols, sx, sy, eps, pdl, stream)
                      : fi_norm<__half>(x, w, y, rows, cols, sx, sy, eps, pdl, stream);
}

/* In place, as FlashInfer defines it: r = x + r, x = rmsnorm(r) * w. */
extern "C" int fi_fused_add_rmsnorm(int dtype, void *x, void *r, void *w, unsigned rows, unsigned cols, unsigned sx,
                                    unsigned sr, float eps, int pdl, void *stream)
{
    return dtype == 0 ? fi_add_norm<__nv_bfloat16>(x, r, w, rows, cols, sx, sr, eps, pdl, stream)
                      : fi_add_norm<__half>(x, r, w, rows, cols, sx, sr, eps, pdl, stream);
}
