/*
 * The bf16 forward instantiations that convert with AVX512-BF16
 * (VCVTNEPS2BF16). This file alone is built with -mavx512bf16, and its
 * functions run only when cpu_x86.c found the extension.
 */
#ifndef RMSNORM_SIMD_FILE
#define RMSNORM_SIMD_FILE 1
#endif

#include "internal.h"
#include "simd/fwd_wide.h"

#ifndef __AVX512BF16__
#error "simd/forward_bf16.c must be built with -mavx512bf16 (simd/simd.ninja)"
#endif

#define FWD_HW(name, wk, simple)                                                \
    static void name(const void *c, int64_t r0, int64_t r1)                     \
    {                                                                           \
        rmsi_fwd_rows((const rmsi_fwd_ctx *)c, r0, r1, RMSNORM_BF16, wk, 1, simple); \
    }                                                                           \
    static void name##_w(const void *c, int p, int64_t s0, int64_t s1)          \
    {                                                                           \
        rmsi_fwd_wide((const rmsi_fwd_ctx *)c, p, s0, s1, RMSNORM_BF16, wk, 1, simple); \
    }

FWD_HW(fwd_bf16hw_none, RMSI_W_NONE, 0)
FWD_HW(fwd_bf16hw_f32, RMSNORM_F32, 0)
FWD_HW(fwd_bf16hw_bf16, RMSNORM_BF16, 0)
FWD_HW(fwd_bf16hw_none_s, RMSI_W_NONE, 1)
FWD_HW(fwd_bf16hw_f32_s, RMSNORM_F32, 1)
FWD_HW(fwd_bf16hw_bf16_s, RMSNORM_BF16, 1)

#define FWD_HW_PICK(a) (simple ? (rmsi_kern){ a##_s, a##_s_w } : (rmsi_kern){ a, a##_w })

rmsi_kern rmsi_fwd_bf16hw_pick(int wk, int simple)
{
    switch (wk) {
    case RMSI_W_NONE: return FWD_HW_PICK(fwd_bf16hw_none);
    case RMSNORM_F32: return FWD_HW_PICK(fwd_bf16hw_f32);
    case RMSNORM_BF16:
    default: return FWD_HW_PICK(fwd_bf16hw_bf16);
    }
}
