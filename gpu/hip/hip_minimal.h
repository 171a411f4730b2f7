/*
 * The smallest HIP surface the shared kernels (gpu/common/) need, written on
 * clang's AMDGPU builtins so that `ninja hip-check` compiles them for gfx942
 * and gfx950 with `clang++ -x hip -nogpuinc -nogpulib`: no ROCm install, no
 * device libraries. gpu/common/vendor.h includes it instead of
 * <hip/hip_runtime.h> when RMSI_HIP_MINIMAL is defined; `ninja hip` on a ROCm
 * machine uses the real headers and never sees this file.
 *
 * Two rules keep the ISA the gate measures close to a ROCm build:
 *  - every name here has the meaning and signature it has in ROCm 6
 *    (hip_runtime_api.h, amd_device_functions.h, amd_warp_functions.h), so
 *    a kernel that compiles here compiles there, and the host-side
 *    declarations link against the real libamdhip64 (hip-check links them);
 *  - device code is what ROCm's headers reduce to on gfx9: the same builtins
 *    for work-item ids, barriers and fences, IEEE-rounded f32 division and
 *    square root (LLVM expands fdiv and llvm.sqrt.f32 to correctly rounded
 *    sequences on AMDGPU when no !fpmath relaxes them).
 *
 * Not here on purpose: math beyond what the kernels call (no ocml), device
 * malloc/printf, textures, cooperative groups. A kernel that needs more fails
 * to compile in hip-check, which is the signal to add it here (and to check
 * that ROCm has it under the same name).
 */
#ifndef RMSNORM_GPU_HIP_MINIMAL_H
#define RMSNORM_GPU_HIP_MINIMAL_H

#if !defined(__HIP__)
#error "hip_minimal.h is for clang -x hip"
#endif
#if defined(__HIP_DEVICE_COMPILE__) && !defined(__GFX9__)
/* RMSI_WARP is 64 for HIP (vendor.h): CDNA (gfx9) only; RDNA is wave32. */
#error "hip_minimal.h: only gfx9 (CDNA, wave64) targets are supported"
#endif

#include <stddef.h>
#include <stdint.h>

/* ---- attributes ----------------------------------------------------------- */
#define __host__ __attribute__((host))
#define __device__ __attribute__((device))
#define __global__ __attribute__((global))
#define __shared__ __attribute__((shared))
#define __constant__ __attribute__((constant))
#define __forceinline__ inline __attribute__((always_inline))
#define __noinline__ __attribute__((noinline))
#ifndef __restrict__
#define __restrict__ __restrict
#endif
/* As ROCm: the second argument is the minimum waves per EU (not, as in CUDA,
 * blocks per multiprocessor). */
#define RMSI_HIP_LB1(max) __attribute__((amdgpu_flat_work_group_size(1, max)))
#define RMSI_HIP_LB2(max, minw) \
    __attribute__((amdgpu_flat_work_group_size(1, max), amdgpu_waves_per_eu(minw)))
#define RMSI_HIP_LB_PICK(_1, _2, name, ...) name
#define __launch_bounds__(...) RMSI_HIP_LB_PICK(__VA_ARGS__, RMSI_HIP_LB2, RMSI_HIP_LB1, 0)(__VA_ARGS__)

/* ---- vector types (layout and alignment as ROCm's HIP_vector_type) -------- */
struct __attribute__((aligned(16))) uint4 {
    unsigned int x, y, z, w;
};
struct __attribute__((aligned(8))) uint2 {
    unsigned int x, y;
};
struct __attribute__((aligned(16))) float4 {
    float x, y, z, w;
};
struct __attribute__((aligned(8))) float2 {
    float x, y;
};
static __host__ __device__ __forceinline__ uint4 make_uint4(unsigned int x, unsigned int y,
                                                            unsigned int z, unsigned int w)
{
    uint4 r = {x, y, z, w};
    return r;
}
static __host__ __device__ __forceinline__ uint2 make_uint2(unsigned int x, unsigned int y)
{
    uint2 r = {x, y};
    return r;
}
static __host__ __device__ __forceinline__ float4 make_float4(float x, float y, float z, float w)
{
    float4 r = {x, y, z, w};
    return r;
}
static __host__ __device__ __forceinline__ float2 make_float2(float x, float y)
{
    float2 r = {x, y};
    return r;
}

struct dim3 {
    uint32_t x, y, z;
    __host__ __device__ constexpr dim3(uint32_t x_ = 1, uint32_t y_ = 1, uint32_t z_ = 1)
        : x(x_), y(y_), z(z_)
    {
    }
};

/* ---- work-item geometry --------------------------------------------------- */
/* threadIdx.x etc. as properties, the way clang's and ROCm's headers make them:
 * each read is one builtin, so unused coordinates cost nothing. gridDim comes
 * from the dispatch packet's grid size (work-items) over the work-group size,
 * which is what hipLaunchKernel wrote there (grid = gridDim * blockDim). */
#define RMSI_HIP_COORD(name, x_, y_, z_)                                              \
    struct name {                                                                 \
        __declspec(property(get = get_x)) unsigned int x;                         \
        __declspec(property(get = get_y)) unsigned int y;                         \
        __declspec(property(get = get_z)) unsigned int z;                         \
        static __device__ __forceinline__ unsigned int get_x() { return x_; }     \
        static __device__ __forceinline__ unsigned int get_y() { return y_; }     \
        static __device__ __forceinline__ unsigned int get_z() { return z_; }     \
    }

RMSI_HIP_COORD(rmsi_hip_thread_idx, __builtin_amdgcn_workitem_id_x(), __builtin_amdgcn_workitem_id_y(),
               __builtin_amdgcn_workitem_id_z());
RMSI_HIP_COORD(rmsi_hip_block_idx, __builtin_amdgcn_workgroup_id_x(), __builtin_amdgcn_workgroup_id_y(),
               __builtin_amdgcn_workgroup_id_z());
RMSI_HIP_COORD(rmsi_hip_block_dim, __builtin_amdgcn_workgroup_size_x(), __builtin_amdgcn_workgroup_size_y(),
               __builtin_amdgcn_workgroup_size_z());
RMSI_HIP_COORD(rmsi_hip_grid_dim,
               (__builtin_amdgcn_grid_size_x() + __builtin_amdgcn_workgroup_size_x() - 1u) /
                   __builtin_amdgcn_workgroup_size_x(),
               (__builtin_amdgcn_grid_size_y() + __builtin_amdgcn_workgroup_size_y() - 1u) /
                   __builtin_amdgcn_workgroup_size_y(),
               (__builtin_amdgcn_grid_size_z() + __builtin_amdgcn_workgroup_size_z() - 1u) /
                   __builtin_amdgcn_workgroup_size_z());
#undef RMSI_HIP_COORD

extern const __device__ rmsi_hip_thread_idx threadIdx;
extern const __device__ rmsi_hip_block_idx blockIdx;
extern const __device__ rmsi_hip_block_dim blockDim;
extern const __device__ rmsi_hip_grid_dim gridDim;

#define warpSize 64

/* ---- synchronisation ------------------------------------------------------ */
static __device__ __forceinline__ void __syncthreads(void)
{
    __builtin_amdgcn_fence(__ATOMIC_RELEASE, "workgroup");
    __builtin_amdgcn_s_barrier();
    __builtin_amdgcn_fence(__ATOMIC_ACQUIRE, "workgroup");
}
static __device__ __forceinline__ void __threadfence_block(void)
{
    __builtin_amdgcn_fence(__ATOMIC_SEQ_CST, "workgroup");
}
static __device__ __forceinline__ void __threadfence(void)
{
    __builtin_amdgcn_fence(__ATOMIC_SEQ_CST, "agent");
}

/* ---- lanes and shuffles (amd_warp_functions.h semantics) ------------------ */
static __device__ __forceinline__ unsigned int __lane_id(void)
{
    return __builtin_amdgcn_mbcnt_hi(~0u, __builtin_amdgcn_mbcnt_lo(~0u, 0u));
}
static __device__ __forceinline__ int __shfl_xor(int var, int lane_mask, int width = warpSize)
{
    const int self = (int)__lane_id();
    int index = self ^ lane_mask;
    index = index >= ((self + width) & ~(width - 1)) ? self : index;
    return __builtin_amdgcn_ds_bpermute(index << 2, var);
}
static __device__ __forceinline__ unsigned int __shfl_xor(unsigned int var, int lane_mask,
                                                          int width = warpSize)
{
    return (unsigned int)__shfl_xor((int)var, lane_mask, width);
}
static __device__ __forceinline__ float __shfl_xor(float var, int lane_mask, int width = warpSize)
{
    return __builtin_bit_cast(float, __shfl_xor(__builtin_bit_cast(int, var), lane_mask, width));
}
static __device__ __forceinline__ int __shfl(int var, int src_lane, int width = warpSize)
{
    const int self = (int)__lane_id();
    const int index = src_lane + (self & ~(width - 1));
    return __builtin_amdgcn_ds_bpermute(index << 2, var);
}
static __device__ __forceinline__ float __shfl(float var, int src_lane, int width = warpSize)
{
    return __builtin_bit_cast(float, __shfl(__builtin_bit_cast(int, var), src_lane, width));
}

/* ---- bit casts and IEEE-rounded arithmetic -------------------------------- */
static __device__ __forceinline__ float __uint_as_float(unsigned int u)
{
    return __builtin_bit_cast(float, u);
}
static __device__ __forceinline__ unsigned int __float_as_uint(float f)
{
    return __builtin_bit_cast(unsigned int, f);
}
static __device__ __forceinline__ float __int_as_float(int i)
{
    return __builtin_bit_cast(float, i);
}
static __device__ __forceinline__ int __float_as_int(float f)
{
    return __builtin_bit_cast(int, f);
}
/* The _rn operations are the ones the numerical contract pins: contraction is
 * off inside them, so the optimiser cannot fuse a neighbouring multiply into
 * this add (HIP compiles with -ffp-contract=fast-honor-pragmas by default). */
static __device__ __forceinline__ float __fadd_rn(float a, float b)
{
#pragma clang fp contract(off)
    return a + b;
}
static __device__ __forceinline__ float __fmul_rn(float a, float b)
{
#pragma clang fp contract(off)
    return a * b;
}
static __device__ __forceinline__ float __fdiv_rn(float a, float b)
{
#pragma clang fp contract(off)
    return a / b;
}
static __device__ __forceinline__ float __fsqrt_rn(float a)
{
    return __builtin_sqrtf(a);
}

/* ---- the libm subset the kernels call (device overloads, as ocml's) ------- */
static __device__ __forceinline__ float fabsf(float x) { return __builtin_fabsf(x); }
static __device__ __forceinline__ float fmaxf(float a, float b) { return __builtin_fmaxf(a, b); }
static __device__ __forceinline__ float fminf(float a, float b) { return __builtin_fminf(a, b); }
static __device__ __forceinline__ float rintf(float x) { return __builtin_rintf(x); }
static __device__ __forceinline__ float sqrtf(float x) { return __builtin_sqrtf(x); }
#ifndef isfinite
static __device__ __forceinline__ bool isfinite(float x) { return __builtin_isfinite(x); }
#endif
#ifndef isnan
static __device__ __forceinline__ bool isnan(float x) { return __builtin_isnan(x); }
#endif
static __device__ __forceinline__ int min(int a, int b) { return a < b ? a : b; }
static __device__ __forceinline__ int max(int a, int b) { return a > b ? a : b; }
static __device__ __forceinline__ int64_t min(int64_t a, int64_t b) { return a < b ? a : b; }
static __device__ __forceinline__ int64_t max(int64_t a, int64_t b) { return a > b ? a : b; }

/* ---- fp16 (the storage type only; conversions are v_cvt_f16_f32 /
 * v_cvt_f32_f16, round to nearest even, f16 denormals kept as on gfx9) ------ */
typedef _Float16 __half;
static __device__ __forceinline__ __half __float2half_rn(float f) { return (__half)f; }
static __device__ __forceinline__ float __half2float(__half h) { return (float)h; }
static __device__ __forceinline__ unsigned short __half_as_ushort(__half h)
{
    return __builtin_bit_cast(unsigned short, h);
}
static __device__ __forceinline__ __half __ushort_as_half(unsigned short u)
{
    return __builtin_bit_cast(__half, u);
}

/* ---- host runtime: declarations only, ROCm 6 signatures, C linkage -------- */
typedef struct ihipStream_t *hipStream_t;
typedef enum hipError_t {
    hipSuccess = 0,
    hipErrorInvalidValue = 1,
    hipErrorOutOfMemory = 2,
    hipErrorInvalidConfiguration = 9,
    hipErrorNoDevice = 100,
    hipErrorInvalidDeviceFunction = 98,
    hipErrorLaunchFailure = 719,
    hipErrorUnknown = 999
} hipError_t;
typedef enum hipFuncAttribute {
    hipFuncAttributeMaxDynamicSharedMemorySize = 8,
    hipFuncAttributePreferredSharedMemoryCarveout = 9,
    hipFuncAttributeMax
} hipFuncAttribute;

extern "C" {
/* The <<<>>> launch: clang lowers it to these (-fhip-new-launch-api). */
hipError_t __hipPushCallConfiguration(dim3 grid, dim3 block, size_t shared_mem, hipStream_t stream);
hipError_t __hipPopCallConfiguration(dim3 *grid, dim3 *block, size_t *shared_mem, hipStream_t *stream);
hipError_t hipLaunchKernel(const void *function, dim3 grid, dim3 block, void **args,
                           size_t shared_mem, hipStream_t stream);
hipError_t hipGetLastError(void);
hipError_t hipGetDevice(int *device);
hipError_t hipPeekAtLastError(void);
hipError_t hipMemsetAsync(void *dst, int value, size_t bytes, hipStream_t stream);
hipError_t hipFuncSetAttribute(const void *func, hipFuncAttribute attr, int value);
hipError_t hipOccupancyMaxActiveBlocksPerMultiprocessor(int *blocks, const void *f, int block_size,
                                                        size_t dyn_shared);
}

template <class F>
static inline hipError_t hipOccupancyMaxActiveBlocksPerMultiprocessor(int *blocks, F f, int block_size,
                                                                      size_t dyn_shared)
{
    return hipOccupancyMaxActiveBlocksPerMultiprocessor(blocks, reinterpret_cast<const void *>(f),
                                                        block_size, dyn_shared);
}
template <class F>
static inline hipError_t hipFuncSetAttribute(F f, hipFuncAttribute attr, int value)
{
    return hipFuncSetAttribute(reinterpret_cast<const void *>(f), attr, value);
}

#endif /* RMSNORM_GPU_HIP_MINIMAL_H */
