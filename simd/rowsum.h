/*
 * Row helpers shared by the AVX-512 forward and backward: the residual-add
 * load of h and the fixed-order blocked sums. Kernel files only.
 *
 * Summation order (the backend's own, docs/numerics.md step 2): element j of a
 * row goes to lane j % 16 of one of four accumulators, by (j / 16) % 4, over
 * blocks of 1024 elements; each block's four accumulators are folded as
 * (a0 + a1) + (a2 + a3) into a running vector total; elements past the last
 * whole 64 go to a fifth accumulator added last; the 16 lanes are folded by
 * halving. The order depends only on cols (never on pointer alignment or the
 * thread count), so the forward and a backward that recomputes rstd get the
 * same bits. Each lane sums at most 16 terms per block and cols / 1024 block
 * totals, so the relative error stays near 1e-6 for the row lengths used in
 * practice, an order of magnitude under the 1e-5 bound.
 */
#ifndef RMSNORM_SIMD_ROWSUM_H
#define RMSNORM_SIMD_ROWSUM_H

#include <math.h>

#include "simd/vec.h"

#define RMSI_SUM_BLOCK 1024

/* h of 16 elements at column j: x, or round_T(x + residual). */
RMSI_INLINE __m512 rmsi_h_full(const char *x, const char *r, int64_t j, rmsnorm_dtype t)
{
    const size_t sz = rmsi_vsize(t);
    __m512 h = rmsi_vload(x + (size_t)j * sz, t);
    if (r != NULL)
        h = rmsi_vround(_mm512_add_ps(h, rmsi_vload(r + (size_t)j * sz, t)), t, 0);
    return h;
}

RMSI_INLINE __m512 rmsi_h_mask(const char *x, const char *r, int64_t j, rmsnorm_dtype t, __mmask16 m)
{
    const size_t sz = rmsi_vsize(t);
    __m512 h = rmsi_vload_m(x + (size_t)j * sz, t, m);
    if (r != NULL)
        h = rmsi_vround(_mm512_add_ps(h, rmsi_vload_m(r + (size_t)j * sz, t, m)), t, 0);
    return h;
}

/* Sum over the row of h_j^2 in the order above. */
RMSI_INLINE float rmsi_row_sumsq(const char *x, const char *r, int64_t cols, rmsnorm_dtype t)
{
    __m512 tot = _mm512_setzero_ps();
    __m512 a4 = _mm512_setzero_ps();
    const int64_t c64 = cols & ~(int64_t)63;
    int64_t j = 0;

    while (j < c64) {
        const int64_t end = (c64 - j > RMSI_SUM_BLOCK) ? j + RMSI_SUM_BLOCK : c64;
        __m512 a0 = _mm512_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
        for (; j < end; j += 64) {
            const __m512 h0 = rmsi_h_full(x, r, j, t);
            const __m512 h1 = rmsi_h_full(x, r, j + 16, t);
            const __m512 h2 = rmsi_h_full(x, r, j + 32, t);
            const __m512 h3 = rmsi_h_full(x, r, j + 48, t);
            a0 = _mm512_fmadd_ps(h0, h0, a0);
            a1 = _mm512_fmadd_ps(h1, h1, a1);
            a2 = _mm512_fmadd_ps(h2, h2, a2);
            a3 = _mm512_fmadd_ps(h3, h3, a3);
        }
        tot = _mm512_add_ps(tot, _mm512_add_ps(_mm512_add_ps(a0, a1), _mm512_add_ps(a2, a3)));
    }
    for (; j + 16 <= cols; j += 16) {
        const __m512 h = rmsi_h_full(x, r, j, t);
        a4 = _mm512_fmadd_ps(h, h, a4);
    }
    if (j < cols) {
        const __m512 h = rmsi_h_mask(x, r, j, t, rmsi_vmask(cols - j));
        a4 = _mm512_fmadd_ps(h, h, a4);
    }
    return rmsi_hsum(_mm512_add_ps(tot, a4));
}

/* 1 / sqrt(ss / cols + eps), one fp32 operation per step, as the reference. */
static inline float rmsi_simd_rstd(float ss, int64_t cols, float eps)
{
    const float mean = ss / (float)cols;
    const float var = mean + eps;
    return 1.0f / sqrtf(var);
}

/* Elements from p to the next 64-byte boundary (0 when aligned), at most cols. */
static inline int64_t rmsi_align_head(const void *p, size_t elem, int64_t cols)
{
    const size_t mis = (size_t)((uintptr_t)p & 63u);
    const int64_t head = mis == 0u ? 0 : (int64_t)((64u - mis) / elem);
    return head < cols ? head : cols;
}

#endif /* RMSNORM_SIMD_ROWSUM_H */
