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

/* rmsi_l2_policy's hints (a plain load everywhere on HIP). */
enum { RMSI_L2_NORMAL = 0, RMSI_L2_LAST = 1, RMSI_L2_FIRST = 2 };
enum { RMSI_L1_NORMAL = 0, RMSI_L1_LAST = 1, RMSI_L1_FIRST = 2 };

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
/* Loads stay plain (no settled HIP spelling of a streaming 16-byte load);
 * streaming stores are nontemporal, word by word. */
__device__ __forceinline__ uint4 rmsi_ld_stream(const uint4 *p) { return *p; }
__device__ __forceinline__ void rmsi_st_stream(uint4 *p, uint4 v)
{
    __builtin_nontemporal_store(v.x, &p->x);
    __builtin_nontemporal_store(v.y, &p->y);
    __builtin_nontemporal_store(v.z, &p->z);
    __builtin_nontemporal_store(v.w, &p->w);
}
__device__ __forceinline__ uint4 rmsi_ld_const(const uint4 *p) { return *p; }
/* No L2 eviction-priority policies here (the CUDA branch says what they are
 * for): plain loads. */
__device__ __forceinline__ uint64_t rmsi_l2_policy(int hint) { return (uint64_t)hint; }
__device__ __forceinline__ uint4 rmsi_ld_policy(const uint4 *p, uint64_t pol)
{
    (void)pol;
    return *p;
}
__device__ __forceinline__ uint4 rmsi_ld_policy_l1(const uint4 *p, uint64_t pol, int l1)
{
    (void)l1;
    return rmsi_ld_policy(p, pol);
}
__device__ __forceinline__ void rmsi_st_l1_last(uint4 *p, uint4 v) { *p = v; }
__device__ __forceinline__ void rmsi_st_scale(float *p, float v) { *p = v; }
/* No asynchronous global -> LDS copy is used on AMD: a plain copy keeps the
 * staged backward compiling (the HIP ladder never selects it). */
__device__ __forceinline__ void rmsi_cp_async16(uint4 *smem, const uint4 *g) { *smem = *g; }
__device__ __forceinline__ void rmsi_cp_async_commit() {}
__device__ __forceinline__ void rmsi_cp_async_wait_all() {}
__device__ __forceinline__ void rmsi_cp_async_wait_but1() {}
/* No OCP fp8 conversion instruction is assumed on gfx942: the portable
 * encoder in device_math.h is used for every format. */
#define RMSI_HAVE_HW_FP8 0
#define RMSI_HAVE_HW_FP8X4 0
#define RMSI_HAVE_RCP_APPROX 0
#define RMSI_QUANT_BLOCK_BATCHED 0 /* forward.cu */
/* Pairs of 16-bit values are rounded in software (device_math.h). */
#define RMSI_HAVE_HW_PACK2 0
/* The backward reads weff from registers (no shared-memory row): see
 * rmsi_bwd_reg_smem in kernel_args.h. */
#define RMSI_BWD_WSM 0
/* No lean backward kernel (rmsi_config.lean): the register cap is not a
 * launch bound here, so it would be the same code. */
#define RMSI_HAVE_LEAN 0
/* fp8 forward kernels load their weights after the row's reduction: with
 * the row (as on CUDA) would cost gfx942 one or two waves of occupancy at
 * 1-2 vectors (docs/perf/amd-isa.md), unmeasured on AMD hardware. */
#define RMSI_FP8_WEIGHTS_WITH_ROW 0
#define rmsi_smem_optin(k, bytes) hipFuncSetAttribute(k, hipFuncAttributeMaxDynamicSharedMemorySize, (int)(bytes))
#define rmsi_get_device hipGetDevice

/* No programmatic dependent launch on AMD: every kernel is a plain <<<>>>
 * launch and the device-side hooks are empty (see the CUDA branch). */
__device__ __forceinline__ void rmsi_pdl_enter() {}
__device__ __forceinline__ void rmsi_pdl_wait() {}
__device__ __forceinline__ int rmsi_tid_x() { return (int)threadIdx.x; }
__device__ __forceinline__ int rmsi_ntid_x() { return (int)blockDim.x; }
__device__ __forceinline__ int rmsi_ntid_y() { return (int)blockDim.y; }
__device__ __forceinline__ int rmsi_tid_y() { return (int)threadIdx.y; }
__device__ __forceinline__ int rmsi_ctaid_x() { return (int)blockIdx.x; }
/* No thread block clusters: the ladder keeps cl = 1, and these are never
 * reached with more than one CTA a cluster. */
#define RMSI_HAVE_CLUSTER 0
__device__ __forceinline__ unsigned rmsi_cluster_rank() { return 0u; }
__device__ __forceinline__ void rmsi_cluster_sync() {}
template <typename P>
__device__ __forceinline__ P *rmsi_cluster_map(P *p, unsigned rank)
{
    (void)rank;
    return p;
}
/* ... nor their shared-memory messages (never called: cl = 1). */
__device__ __forceinline__ unsigned rmsi_smem_addr(const void *p) { return (unsigned)(uintptr_t)p; }
__device__ __forceinline__ unsigned rmsi_dsm_addr(unsigned a, unsigned rank)
{
    (void)rank;
    return a;
}
__device__ __forceinline__ void rmsi_mbar_init(unsigned a, unsigned count) { (void)a, (void)count; }
__device__ __forceinline__ void rmsi_cluster_arrive_relaxed() {}
__device__ __forceinline__ void rmsi_cluster_wait() {}
__device__ __forceinline__ void rmsi_mbar_expect(unsigned a, unsigned bytes) { (void)a, (void)bytes; }
__device__ __forceinline__ void rmsi_mbar_wait(unsigned a, unsigned parity) { (void)a, (void)parity; }
__device__ __forceinline__ void rmsi_st_async16(unsigned ra, float4 v, unsigned rbar) { (void)ra, (void)v, (void)rbar; }
__device__ __forceinline__ void rmsi_syncwarp() {}
/* Alignment of the backward's dynamic shared memory (the CUDA branch says why). */
#define RMSI_DSMEM_ALIGN 16
/* No L2 line discard here (the CUDA branch says what it is for). */
#define RMSI_HAVE_L2_DISCARD 0
__device__ __forceinline__ void rmsi_l2_discard128(const void *p) { (void)p; }
template <typename... K, typename... A>
static inline rmsi_error_t rmsi_launch_kc(void (*k)(K...), dim3 g, dim3 b, size_t smem, rmsi_stream_t st, int pdl,
                                          int cl, A... args)
{
    (void)pdl;
    if (cl != 1)
        return hipErrorInvalidValue;
    k<<<g, b, smem, st>>>(args...);
    return hipGetLastError();
}

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

__device__ __forceinline__ float rmsi_shfl_xor(float v, int mask, int width)
{
    return __shfl_xor_sync(0xffffffffu, v, mask, width);
}
/* MUFU.RCP: within an ulp of 1 / b for normal b (the seed that
 * rmsi_d_div_inrange refines). */
#define RMSI_HAVE_RCP_APPROX 1
#define RMSI_QUANT_BLOCK_BATCHED 1 /* forward.cu */
__device__ __forceinline__ float rmsi_rcp_approx(float b)
{
    float y;
    asm("rcp.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(b));
    return y;
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
/* L2 eviction priorities (sm_80+) for data read twice: a policy made once a
 * kernel (hint RMSI_L2_LAST: keep, for a first pass whose bytes a later pass
 * re-reads; RMSI_L2_FIRST: evict first, for that last read; RMSI_L2_NORMAL:
 * the default), then loads that carry it. */
__device__ __forceinline__ uint64_t rmsi_l2_policy(int hint)
{
    uint64_t p;
    if (hint == RMSI_L2_LAST)
        asm volatile("createpolicy.fractional.L2::evict_last.b64 %0, 1.0;" : "=l"(p));
    else if (hint == RMSI_L2_FIRST)
        asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(p));
    else
        asm volatile("createpolicy.fractional.L2::evict_normal.b64 %0, 1.0;" : "=l"(p));
    return p;
}
__device__ __forceinline__ uint4 rmsi_ld_policy(const uint4 *p, uint64_t pol)
{
    uint4 v;
    asm volatile("ld.global.L2::cache_hint.v4.u32 {%0, %1, %2, %3}, [%4], %5;"
                 : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
                 : "l"(p), "l"(pol)
                 : "memory");
    return v;
}
/* The same with an L1 eviction priority (l1 a constant: RMSI_L1_LAST keeps
 * the line in L1 for a second pass of the same CTA, RMSI_L1_FIRST drops it
 * first on that pass's read; RMSI_L1_NORMAL: rmsi_ld_policy). */
__device__ __forceinline__ uint4 rmsi_ld_policy_l1(const uint4 *p, uint64_t pol, int l1)
{
    uint4 v;
    if (l1 == RMSI_L1_LAST)
        asm volatile("ld.global.L1::evict_last.L2::cache_hint.v4.u32 {%0, %1, %2, %3}, [%4], %5;"
                     : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
                     : "l"(p), "l"(pol)
                     : "memory");
    else if (l1 == RMSI_L1_FIRST)
        asm volatile("ld.global.L1::evict_first.L2::cache_hint.v4.u32 {%0, %1, %2, %3}, [%4], %5;"
                     : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
                     : "l"(p), "l"(pol)
                     : "memory");
    else
        v = rmsi_ld_policy(p, pol);
    return v;
}
/* A store whose line a later pass of the same CTA re-reads from L1. */
__device__ __forceinline__ void rmsi_st_l1_last(uint4 *p, uint4 v)
{
    asm volatile("st.global.L1::evict_last.v4.u32 [%0], {%1, %2, %3, %4};" ::"l"(p), "r"(v.x), "r"(v.y), "r"(v.z),
                 "r"(v.w)
                 : "memory");
}
/* A 1x128 block fp8 scale, kept in the L2 at evict-last. The scales are
 * column-major ([cols/128][rows]), so one 32-byte sector holds one block
 * column's scales of 8 consecutive rows, which 8 CTAs store 4 bytes at a
 * time, microseconds apart; a sector the L2 lets go before all 8 have
 * arrived goes back to memory in part, and again later. On an H100 (S45,
 * docs/perf/h200.md), add + block fp8 with y at 32768x8192 took 828.7 us
 * with plain stores, 818.1 with none, 821.7 stored row-major (whole
 * sectors, a layout the ABI does not have) and 823.7 through this store;
 * rmsnorm-bench, old / new: 824.7 -> 818.9, block fp8 with y 501.6 -> 492.9. */
__device__ __forceinline__ void rmsi_st_scale(float *p, float v)
{
    const uint64_t pol = rmsi_l2_policy(RMSI_L2_LAST);
    asm volatile("st.global.L2::cache_hint.f32 [%0], %1, %2;" ::"l"(p), "f"(v), "l"(pol) : "memory");
}
/* cp.async.cg (sm_80+): a 16-byte global -> shared copy that completes in the
 * background (L2 only, as the row is read once); commit closes a group,
 * wait_all waits for this thread's groups, wait_but1 for all but the newest. */
__device__ __forceinline__ void rmsi_cp_async16(uint4 *smem, const uint4 *g)
{
    const unsigned s = (unsigned)__cvta_generic_to_shared(smem);
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(s), "l"(g) : "memory");
}
__device__ __forceinline__ void rmsi_cp_async_commit() { asm volatile("cp.async.commit_group;" ::: "memory"); }
__device__ __forceinline__ void rmsi_cp_async_wait_all() { asm volatile("cp.async.wait_group 0;" ::: "memory"); }
__device__ __forceinline__ void rmsi_cp_async_wait_but1() { asm volatile("cp.async.wait_group 1;" ::: "memory"); }
/* cvt.rn.{bf16x2,f16x2}.f32 (sm_80+): two fp32 values rounded to nearest
 * even into one word (lo in the low half), one instruction where the exact
 * software rounding takes about seven per element. Finite values and
 * infinities round as ref/formats.h does; a NaN becomes the canonical NaN, so
 * the caller redoes a vector holding a NaN in software (device_math.h). */
#define RMSI_HAVE_HW_PACK2 1
/* The backward stages the fp32 weff row in shared memory once per CTA. */
#define RMSI_BWD_WSM 1
/* The lean backward kernel (rmsi_config.lean: 64 registers, docs/gpu.md). */
#define RMSI_HAVE_LEAN 1
/* fp8 forward kernels at 1-2 vectors load their weights with the row
 * (forward.cu; S7-2/S7-3 on the H200). */
#define RMSI_FP8_WEIGHTS_WITH_ROW 1
#define rmsi_smem_optin(k, bytes) cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)(bytes))
#define rmsi_get_device cudaGetDevice
__device__ __forceinline__ uint32_t rmsi_bf16x2_hw(float lo, float hi)
{
    uint32_t r;
    asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo));
    return r;
}
__device__ __forceinline__ uint32_t rmsi_f16x2_hw(float lo, float hi)
{
    uint32_t r;
    asm("cvt.rn.f16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo));
    return r;
}
/* fma.rn.{bf16x2,f16x2} (sm_80+) of a pair of weights times 1 plus +0:
 * x * 1 is exact and x + 0 is x, but for -0, which becomes +0, and a NaN,
 * which stays a NaN: the bits of the FADD of each widened value with 0.0f
 * but for the NaN's payload. Subnormals are kept (no .ftz). */
__device__ __forceinline__ uint32_t rmsi_bf16x2_add0(uint32_t a)
{
    uint32_t r;
    asm("fma.rn.bf16x2 %0, %1, %2, %3;" : "=r"(r) : "r"(a), "r"(0x3f803f80u), "r"(0u));
    return r;
}
__device__ __forceinline__ uint32_t rmsi_f16x2_add0(uint32_t a)
{
    uint32_t r;
    asm("fma.rn.f16x2 %0, %1, %2, %3;" : "=r"(r) : "r"(a), "r"(0x3c003c00u), "r"(0u));
    return r;
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
/* Four values into one word of codes, a in the low byte: two pair
 * conversions (one F2FP each: the instruction the single conversions above
 * issue with 0.0f as the second operand, so each byte is what they give) put
 * straight into the word's halves. NaN as above: the caller keeps NaN out.
 * Below sm_89 the header emulates the conversion in software, one element at
 * a time, so pairing gains nothing there and the per-element path stays. */
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 890
#define RMSI_HAVE_HW_FP8X4 0
#else
#define RMSI_HAVE_HW_FP8X4 1
template <bool E5M2>
__device__ __forceinline__ uint32_t rmsi_hw_fp8x4(float a, float b, float c, float d)
{
    uint32_t w;
    if constexpr (E5M2)
        asm("{.reg .b16 lo, hi;\n\tcvt.rn.satfinite.e5m2x2.f32 lo, %2, %1;\n\t"
            "cvt.rn.satfinite.e5m2x2.f32 hi, %4, %3;\n\tmov.b32 %0, {lo, hi};}"
            : "=r"(w) : "f"(a), "f"(b), "f"(c), "f"(d));
    else
        asm("{.reg .b16 lo, hi;\n\tcvt.rn.satfinite.e4m3x2.f32 lo, %2, %1;\n\t"
            "cvt.rn.satfinite.e4m3x2.f32 hi, %4, %3;\n\tmov.b32 %0, {lo, hi};}"
            : "=r"(w) : "f"(a), "f"(b), "f"(c), "f"(d));
    return w;
}
#endif
/* Programmatic dependent launch (sm_90+): a kernel launched with pdl = 1 may
 * be scheduled while the kernel before it on the stream drains, so its launch
 * latency hides behind that kernel's tail (a small row's call is mostly
 * latency). Every kernel calls rmsi_pdl_enter or rmsi_pdl_wait first:
 * griddepcontrol.wait blocks until the previous grid has completed and its
 * memory is visible, so nothing is read or written before the stream order
 * says so. rmsi_pdl_enter (the forward kernels) then triggers the next PDL
 * kernel's launch at once; rmsi_pdl_wait (the backward's) leaves the trigger
 * to the grid's exit, as FlashInfer's kernels place it: with the early
 * trigger the backward was 1-4% slower at four of five cells measured and
 * equal at the fifth (S16-4, 1024x4096 13.68 -> 14.12 us, 4096x4096 32.29
 * -> 32.95), the forward 1-7% faster at small cells (32x4096 2.26 ->
 * 2.10, 256x2048 2.52 -> 2.37) though not at 4096x512 (3.99 -> 4.13). A
 * no-op where not launched with the attribute and on sm_80 code. */
__device__ __forceinline__ void rmsi_pdl_wait()
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}
__device__ __forceinline__ void rmsi_pdl_enter()
{
    rmsi_pdl_wait();
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}
/* The thread index and CTA shape as opaque (volatile) reads, which the
 * compiler re-reads where used instead of keeping values derived from them
 * live across a loop. */
#define RMSI_SREG_READ(name, reg)                                \
    __device__ __forceinline__ int name()                        \
    {                                                            \
        int v;                                                   \
        asm volatile("mov.u32 %0, %%" reg ";" : "=r"(v));        \
        return v;                                                \
    }
RMSI_SREG_READ(rmsi_tid_x, "tid.x")
RMSI_SREG_READ(rmsi_tid_y, "tid.y")
RMSI_SREG_READ(rmsi_ntid_x, "ntid.x")
RMSI_SREG_READ(rmsi_ntid_y, "ntid.y")
RMSI_SREG_READ(rmsi_ctaid_x, "ctaid.x")
#undef RMSI_SREG_READ
/* Thread block clusters (sm_90+): the CTAs of a cluster run at once on one
 * GPC and can read each other's shared memory. rmsi_cluster_sync is the
 * cluster-wide barrier, release / acquire, so shared-memory stores before it
 * are visible to the other CTAs' loads after it; rmsi_cluster_map gives the
 * generic address of the same shared variable in CTA `rank` of the cluster.
 * Compiled to nothing below sm_90, where the host never launches a cluster
 * (rmsi_shape.cluster). */
#define RMSI_HAVE_CLUSTER 1
__device__ __forceinline__ unsigned rmsi_cluster_rank()
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    unsigned r;
    asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(r));
    return r;
#else
    return 0u;
#endif
}
__device__ __forceinline__ void rmsi_cluster_sync()
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("barrier.cluster.arrive.release.aligned;\n\tbarrier.cluster.wait.acquire.aligned;" ::: "memory");
#endif
}
template <typename P>
__device__ __forceinline__ P *rmsi_cluster_map(P *p, unsigned rank)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    uint64_t a;
    asm volatile("mapa.u64 %0, %1, %2;" : "=l"(a) : "l"(p), "r"(rank));
    return reinterpret_cast<P *>(a);
#else
    (void)rank;
    return p;
#endif
}
/* Shared-memory messages between the CTAs of a cluster (sm_90+), for where
 * rmsi_cluster_sync is too strong: its release is MEMBAR.ALL.GPU in SASS,
 * which waits for every global store the thread still has in flight (the
 * dx stores of its last rows: 2 us of the 4096x4096 backward's critical
 * path, S17-5). An mbarrier in a CTA's shared memory counts arrivals and
 * bytes; st.async writes 16 bytes into another CTA's shared memory and counts
 * them on that CTA's mbarrier, so the receiver reads them after its wait
 * with no fence on either side. Addresses are shared-window addresses:
 * rmsi_smem_addr of this CTA's variable, rmsi_dsm_addr of the same variable
 * in CTA `rank`. rmsi_mbar_init's fence and a cluster arrive (relaxed: it
 * orders nothing else) publish the barriers; a CTA touches another's only
 * after rmsi_cluster_wait. */
__device__ __forceinline__ unsigned rmsi_smem_addr(const void *p) { return (unsigned)__cvta_generic_to_shared(p); }
__device__ __forceinline__ unsigned rmsi_dsm_addr(unsigned a, unsigned rank)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    unsigned r;
    asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(r) : "r"(a), "r"(rank));
    return r;
#else
    (void)rank;
    return a;
#endif
}
__device__ __forceinline__ void rmsi_mbar_init(unsigned a, unsigned count)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n\tfence.mbarrier_init.release.cluster;" ::"r"(a),
                 "r"(count)
                 : "memory");
#else
    (void)a, (void)count;
#endif
}
__device__ __forceinline__ void rmsi_cluster_arrive_relaxed()
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("barrier.cluster.arrive.relaxed.aligned;" ::: "memory");
#endif
}
__device__ __forceinline__ void rmsi_cluster_wait()
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("barrier.cluster.wait.aligned;" ::: "memory");
#endif
}
/* One arrival on this CTA's barrier that also expects `bytes` of st.async. */
__device__ __forceinline__ void rmsi_mbar_expect(unsigned a, unsigned bytes)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("mbarrier.arrive.expect_tx.relaxed.cta.shared::cta.b64 _, [%0], %1;" ::"r"(a), "r"(bytes)
                 : "memory");
#else
    (void)a, (void)bytes;
#endif
}
/* Wait until phase `parity` of this CTA's barrier completes. */
__device__ __forceinline__ void rmsi_mbar_wait(unsigned a, unsigned parity)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    unsigned done = 0;
    while (!done)
        asm volatile("{\n\t.reg .pred p;\n\tmbarrier.try_wait.parity.acquire.cluster.shared::cta.b64 p, [%1], %2;\n\t"
                     "selp.u32 %0, 1, 0, p;\n\t}"
                     : "=r"(done)
                     : "r"(a), "r"(parity)
                     : "memory");
#else
    (void)a, (void)parity;
#endif
}
/* The backward's dynamic shared memory is read and written 16 bytes a
 * thread, 512 contiguous bytes a warp: 4 shared-memory wavefronts from a
 * 128-byte boundary, 5 from elsewhere (S18-1..S18-3, docs/perf/h200.md). */
#define RMSI_DSMEM_ALIGN 128
/* The warp's lanes' shared-memory accesses before it precede those after. */
__device__ __forceinline__ void rmsi_syncwarp() { __syncwarp(); }
/* Drops the 128-byte L2 line at p (128-byte aligned) without writing it back
 * to memory (sm_80+). For scratch that is dead once read: the backward's dw
 * partial rows would otherwise be written back to HBM when a later kernel's
 * stream evicts them, bytes that no one reads again. */
#define RMSI_HAVE_L2_DISCARD 1
__device__ __forceinline__ void rmsi_l2_discard128(const void *p)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm volatile("discard.global.L2 [%0], 128;" ::"l"(p) : "memory");
#else
    (void)p;
#endif
}
/* 16 bytes into another CTA's shared memory (ra), counted on its barrier rbar. */
__device__ __forceinline__ void rmsi_st_async16(unsigned ra, float4 v, unsigned rbar)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("st.async.shared::cluster.mbarrier::complete_tx::bytes.v4.b32 [%0], {%1, %2, %3, %4}, [%5];" ::"r"(ra),
                 "r"(__float_as_uint(v.x)), "r"(__float_as_uint(v.y)), "r"(__float_as_uint(v.z)),
                 "r"(__float_as_uint(v.w)), "r"(rbar)
                 : "memory");
#else
    (void)ra, (void)v, (void)rbar;
#endif
}
/* cl > 1: launched as clusters of cl CTAs along x (g.x a multiple of cl). */
template <typename... K, typename... A>
static inline rmsi_error_t rmsi_launch_kc(void (*k)(K...), dim3 g, dim3 b, size_t smem, rmsi_stream_t st, int pdl,
                                          int cl, A... args)
{
    cudaLaunchConfig_t cfg = {};
    cudaLaunchAttribute at[2];
    unsigned n = 0;
    if (pdl) {
        at[n].id = cudaLaunchAttributeProgrammaticStreamSerialization;
        at[n].val.programmaticStreamSerializationAllowed = 1;
        n++;
    }
    if (cl > 1) {
        at[n].id = cudaLaunchAttributeClusterDimension;
        at[n].val.clusterDim.x = (unsigned)cl;
        at[n].val.clusterDim.y = 1;
        at[n].val.clusterDim.z = 1;
        n++;
    }
    cfg.gridDim = g;
    cfg.blockDim = b;
    cfg.dynamicSmemBytes = smem;
    cfg.stream = st;
    cfg.attrs = at;
    cfg.numAttrs = n;
    const cudaError_t e = cudaLaunchKernelEx(&cfg, k, args...);
    if (e != cudaSuccess)
        (void)cudaGetLastError(); /* reported by the return value; not left pending */
    return e;
}
#endif

template <typename... K, typename... A>
static inline rmsi_error_t rmsi_launch_k(void (*k)(K...), dim3 g, dim3 b, size_t smem, rmsi_stream_t st, int pdl,
                                         A... args)
{
    return rmsi_launch_kc(k, g, b, smem, st, pdl, 1, args...);
}

/* A 16-byte store, streaming (evict first / nontemporal) when asked. */
__device__ __forceinline__ void rmsi_st16(uint4 *p, uint4 v, int streaming)
{
    if (streaming)
        rmsi_st_stream(p, v);
    else
        *p = v;
}

/* Largest CTA the kernels are built for; reductions size shared memory by it. */
#define RMSI_MAX_THREADS 1024
#define RMSI_MAX_WARPS (RMSI_MAX_THREADS / RMSI_WARP)
/* Largest cluster a forward row is split over (rmsi_config.cl; the portable
 * cluster size). */
#define RMSI_MAX_CLUSTER 8

#endif /* RMSNORM_GPU_VENDOR_H */
