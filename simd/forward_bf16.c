/*
 * The bf16 forward instantiations that convert with AVX512-BF16
 * (VCVTNEPS2BF16). This file alone is built with -mavx512bf16, and its
 * functions run only when cpu_x86.c found the extension.
 */
#ifndef RMSNORM_SIMD_FILE
#define RMSNORM_SIMD_FILE 1
#endif

#include "internal.h"
#include "simd/fwd_rows.h"

#ifndef __AVX512BF16__
#error "simd/forward_bf16.c must be built with -mavx512bf16 (simd/simd.ninja)"
#endif

static void fwd_bf16hw_none(const void *c, int64_t r0, int64_t r1)
{
    rmsi_fwd_rows((const rmsi_fwd_ctx *)c, r0, r1, RMSNORM_BF16, RMSI_W_NONE, 1);
}

static void fwd_bf16hw_f32(const void *c, int64_t r0, int64_t r1)
{
    rmsi_fwd_rows((const rmsi_fwd_ctx *)c, r0, r1, RMSNORM_BF16, RMSNORM_F32, 1);
}

static void fwd_bf16hw_bf16(const void *c, int64_t r0, int64_t r1)
{
    rmsi_fwd_rows((const rmsi_fwd_ctx *)c, r0, r1, RMSNORM_BF16, RMSNORM_BF16, 1);
}

rmsi_range_fn rmsi_fwd_bf16hw_pick(int wk)
{
    switch (wk) {
    case RMSI_W_NONE: return fwd_bf16hw_none;
    case RMSNORM_F32: return fwd_bf16hw_f32;
    case RMSNORM_BF16:
    default: return fwd_bf16hw_bf16;
    }
}
