/*
 * The bf16 backward instantiations that convert with AVX512-BF16
 * (VCVTNEPS2BF16). This file alone (with forward_bf16.c) is built with
 * -mavx512bf16; its functions run only when cpu_x86.c found the extension.
 */
#ifndef RMSNORM_SIMD_FILE
#define RMSNORM_SIMD_FILE 1
#endif

#include "internal.h"
#include "simd/bwd_rows.h"

#ifndef __AVX512BF16__
#error "simd/backward_bf16.c must be built with -mavx512bf16 (simd/simd.ninja)"
#endif

#define BWD_HW(name, wk, simple, one)                                           \
    static void name(const void *c, int64_t i0, int64_t i1)                     \
    {                                                                           \
        rmsi_bwd_items((const rmsi_bwd_ctx *)c, i0, i1, RMSNORM_BF16, wk, 1, simple, one); \
    }

BWD_HW(bwd_bf16hw_none, RMSI_W_NONE, 0, 0)
BWD_HW(bwd_bf16hw_f32, RMSNORM_F32, 0, 0)
BWD_HW(bwd_bf16hw_bf16, RMSNORM_BF16, 0, 0)
BWD_HW(bwd_bf16hw_none_s, RMSI_W_NONE, 1, 0)
BWD_HW(bwd_bf16hw_f32_s, RMSNORM_F32, 1, 0)
BWD_HW(bwd_bf16hw_bf16_s, RMSNORM_BF16, 1, 0)
BWD_HW(bwd_bf16hw_none_s1, RMSI_W_NONE, 1, 1)
BWD_HW(bwd_bf16hw_bf16_s1, RMSNORM_BF16, 1, 1)

/* one: rows off a cache line (simd/backward.c) */
rmsi_range_fn rmsi_bwd_bf16hw_pick(int wk, int simple, int one)
{
    switch (wk) {
    case RMSI_W_NONE: return simple ? (one ? bwd_bf16hw_none_s1 : bwd_bf16hw_none_s) : bwd_bf16hw_none;
    case RMSNORM_F32: return simple ? bwd_bf16hw_f32_s : bwd_bf16hw_f32;
    case RMSNORM_BF16:
    default: return simple ? (one ? bwd_bf16hw_bf16_s1 : bwd_bf16hw_bf16_s) : bwd_bf16hw_bf16;
    }
}
