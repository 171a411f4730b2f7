/*
 * The vendor header: the only file of gpu/common/ that names a GPU vendor.
 * Kernels are written once against these names and built twice: by nvcc for
 * CUDA today, by clang -x hip for AMD (issue 9) through the second branch,
 * which is renames plus warp shims in the manner of ggml's vendors/hip.h.
 *
 * Rules for kernel code: the warp size is RMSI_WARP (a compile-time constant of
 * the target, 32 or 64), never a literal; cross-lane traffic goes through
 * rmsi_shfl_xor; 16-bit conversions go through rmsi_f16_* so that the NaN
 * payloads match ref/formats.h on both vendors.
 */
#ifndef RMSNORM_GPU_VENDOR_H
#define RMSNORM_GPU_VENDOR_H

#include <stdint.h>

#if defined(__HIP__) || defined(__HIPCC__) || defined(RMSI_VENDOR_HIP)
/* ---- AMD (HIP) ---------------------------------------------------------- */
#if defined(RMSI_HIP_MINIMAL)
/* `ninja hip-check`: clang -nogpuinc, no ROCm; names and signatures as ROCm's. */
#include "gpu/hip/hip_minimal.h"
#else
#include <hip/hip_runtime.h>
#include <hip/hip_fp16.h>
#endif
#define RMSI_VENDOR_NAME "hip"
/* gfx9 (CDNA: gfx942, gfx950) runs wave64; RDNA would be 32 but is not a target. */
#define RMSI_WARP 64
typedef hipStream_t rmsi_stream_t;
typedef hipError_t rmsi_error_t;
#define RMSI_SUCCESS hipSuccess
#define rmsi_get_last_error hipGetLastError
#define rmsi_memset_async hipMemsetAsync
#define rmsi_occupancy hipOccupancyMaxActiveBlocksPerMultiprocessor
/* The AMD ladder never asks for more than the 64 KB of LDS a work-group
 * gets without opting in. */
template <typename K>
static inline hipError_t rmsi_func_max_smem(K, size_t bytes)
{
    return bytes <= 65536u ? hipSuccess : hipErrorInvalidValue;
}

__device__ __forceinline__ float rmsi_shfl_xor(float v, int mask, int width)
{
    return __shfl_xor(v, mask, width);
}
__device__ __forceinline__ uint16_t rmsi_f16_from_f32_hw(float f)
{
    return __half_as_ushort(__float2half_rn(f));
}
__device__ __forceinline__ float rmsi_f16_to_f32_hw(uint16_t h)
{
    return __half2float(__ushort_as_half(h));
}
/* A kernel's register cap (the occupancy knob of the register-cached
 * kernels) is an NVIDIA number: AMD's register file and waves differ, so HIP
 * gets only the CTA size bound. */
#define RMSI_KERNEL_REGS(maxt, regs) __launch_bounds__(maxt)
/* Plain accesses: the cache hints of the CUDA branch have no settled HIP
 * spelling for 16-byte vectors. */
__device__ __forceinline__ uint4 rmsi_ld_stream(const uint4 *p) { return *p; }
__device__ __forceinline__ void rmsi_st_stream(uint4 *p, uint4 v) { *p = v; }
__device__ __forceinline__ uint4 rmsi_ld_const(const uint4 *p) { return *p; }
/* cp.async has no HIP counterpart here: the pipelined kernels are CUDA's. */
#define RMSI_HAVE_CP_ASYNC 0
/* No OCP fp8 conversion instruction is assumed on gfx942: the portable
 * encoder in device_math.h is used for every format. */
#define RMSI_HAVE_HW_FP8 0

#else
/* ---- NVIDIA (CUDA) ------------------------------------------------------ */
#include <cuda_runtime.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>
#define RMSI_VENDOR_NAME "cuda"
#define RMSI_WARP 32
typedef cudaStream_t rmsi_stream_t;
typedef cudaError_t rmsi_error_t;
#define RMSI_SUCCESS cudaSuccess
#define rmsi_get_last_error cudaGetLastError
#define rmsi_memset_async cudaMemsetAsync
#define rmsi_occupancy cudaOccupancyMaxActiveBlocksPerMultiprocessor
/* Opt a kernel into more than 48 KB of dynamic shared memory. */
template <typename K>
static inline cudaError_t rmsi_func_max_smem(K k, size_t bytes)
{
    return cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)bytes);
}

__device__ __forceinline__ float rmsi_shfl_xor(float v, int mask, int width)
{
    return __shfl_xor_sync(0xffffffffu, v, mask, width);
}
__device__ __forceinline__ uint16_t rmsi_f16_from_f32_hw(float f)
{
    return __half_as_ushort(__float2half_rn(f));
}
__device__ __forceinline__ float rmsi_f16_to_f32_hw(uint16_t h)
{
    return __half2float(__ushort_as_half(h));
}
/* Registers per thread, capped exactly (__maxnreg__, which nvcc does not
 * take together with __launch_bounds__): 65536 / regs threads stay resident
 * per SM. maxt, the largest CTA, is for HIP's bound. */
#define RMSI_KERNEL_REGS(maxt, regs) __maxnreg__(regs)
/* ld.global.cs / st.global.cs: data touched once (evict first), and the
 * read-only path for the weight row every CTA of an SM shares. */
__device__ __forceinline__ uint4 rmsi_ld_stream(const uint4 *p) { return __ldcs(p); }
__device__ __forceinline__ void rmsi_st_stream(uint4 *p, uint4 v) { __stcs(p, v); }
__device__ __forceinline__ uint4 rmsi_ld_const(const uint4 *p) { return __ldg(p); }
/* cp.async.cg (sm_80+, every target of the fat binary): 16 bytes global ->
 * shared, through L2 only, no register holds them in flight. */
#define RMSI_HAVE_CP_ASYNC 1
__device__ __forceinline__ void rmsi_cp_async16(void *smem, const void *gmem)
{
    const unsigned s = (unsigned)__cvta_generic_to_shared(smem);
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(s), "l"(gmem) : "memory");
}
__device__ __forceinline__ void rmsi_cp_async_commit(void)
{
    asm volatile("cp.async.commit_group;\n" ::: "memory");
}
/* Wait until at most n of this thread's groups are pending (n uniform, 0..3). */
__device__ __forceinline__ void rmsi_cp_async_wait_all_but(int n)
{
    switch (n) {
    case 0: asm volatile("cp.async.wait_group 0;\n" ::: "memory"); break;
    case 1: asm volatile("cp.async.wait_group 1;\n" ::: "memory"); break;
    case 2: asm volatile("cp.async.wait_group 2;\n" ::: "memory"); break;
    default: asm volatile("cp.async.wait_group 3;\n" ::: "memory"); break;
    }
}
/* cvt.rn.satfinite.{e4m3,e5m2}x2.f32 (sm_89+; emulated by the header below
 * that): round to nearest even, saturating to the finite max, infinities too,
 * which is ref/formats.h's rule; NaN is handled by the caller so the sign
 * survives as the reference keeps it. */
#define RMSI_HAVE_HW_FP8 1
__device__ __forceinline__ uint8_t rmsi_hw_fp8_e4m3(float v)
{
    return (uint8_t)__nv_cvt_float_to_fp8(v, __NV_SATFINITE, __NV_E4M3);
}
__device__ __forceinline__ uint8_t rmsi_hw_fp8_e5m2(float v)
{
    return (uint8_t)__nv_cvt_float_to_fp8(v, __NV_SATFINITE, __NV_E5M2);
}
#endif

/* Largest CTA the kernels are built for; reductions size shared memory by it. */
#define RMSI_MAX_THREADS 1024
#define RMSI_MAX_WARPS (RMSI_MAX_THREADS / RMSI_WARP)

#endif /* RMSNORM_GPU_VENDOR_H */
