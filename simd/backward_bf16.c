/*
 * The bf16 backward instantiations that convert with AVX512-BF16
 * (VCVTNEPS2BF16). This file alone (with forward_bf16.c) is built with
 * -mavx512bf16; its functions run only when cpu_x86.c found the extension.
 */
#ifndef RMSNORM_SIMD_FILE
#define RMSNORM_SIMD_FILE 1
#endif

#include "internal.h"
#include "simd/bwd_tiles.h"

#ifndef __AVX512BF16__
#error "simd/backward_bf16.c must be built with -mavx512bf16 (simd/simd.ninja)"
#endif

#define BWD_HW(name, wk, simple, one)                                           \
    static void name(const void *c, int64_t i0, int64_t i1)                     \
    {                                                                           \
        rmsi_bwd_items((const rmsi_bwd_ctx *)c, i0, i1, RMSNORM_BF16, wk, 1, simple, one); \
    }
#define BWD_HW_W(name, wk, simple)                                              \
    static void name##_w(const void *c, int p, int64_t s0, int64_t s1)          \
    {                                                                           \
        rmsi_bwd_phase((const rmsi_bwd_ctx *)c, p, s0, s1, RMSNORM_BF16, wk, 1, simple); \
    }

BWD_HW(bwd_bf16hw_none, RMSI_W_NONE, 0, 0)
BWD_HW(bwd_bf16hw_f32, RMSNORM_F32, 0, 0)
BWD_HW(bwd_bf16hw_bf16, RMSNORM_BF16, 0, 0)
BWD_HW(bwd_bf16hw_none_s, RMSI_W_NONE, 1, 0)
BWD_HW(bwd_bf16hw_f32_s, RMSNORM_F32, 1, 0)
BWD_HW(bwd_bf16hw_bf16_s, RMSNORM_BF16, 1, 0)
BWD_HW(bwd_bf16hw_none_s1, RMSI_W_NONE, 1, 1)
BWD_HW(bwd_bf16hw_f32_s1, RMSNORM_F32, 1, 1)
BWD_HW(bwd_bf16hw_bf16_s1, RMSNORM_BF16, 1, 1)
BWD_HW_W(bwd_bf16hw_none, RMSI_W_NONE, 0)
BWD_HW_W(bwd_bf16hw_f32, RMSNORM_F32, 0)
BWD_HW_W(bwd_bf16hw_bf16, RMSNORM_BF16, 0)
BWD_HW_W(bwd_bf16hw_none_s, RMSI_W_NONE, 1)
BWD_HW_W(bwd_bf16hw_f32_s, RMSNORM_F32, 1)
BWD_HW_W(bwd_bf16hw_bf16_s, RMSNORM_BF16, 1)

/* one: rows off a cache line (simd/backward.c); the wide sweeps have one
 * form for both */
#define BWD_HW_PICK(a)                                                          \
    (simple ? (rmsi_kern){ one ? a##_s1 : a##_s, a##_s_w } : (rmsi_kern){ a, a##_w })

rmsi_kern rmsi_bwd_bf16hw_pick(int wk, int simple, int one)
{
    switch (wk) {
    case RMSI_W_NONE: return BWD_HW_PICK(bwd_bf16hw_none);
    case RMSNORM_F32: return BWD_HW_PICK(bwd_bf16hw_f32);
    case RMSNORM_BF16:
    default: return BWD_HW_PICK(bwd_bf16hw_bf16);
    }
}
