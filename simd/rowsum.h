/*
 * Row helpers shared by the AVX-512 forward and backward: the residual-add
 * load of h and the fixed-order blocked sums. Kernel files only.
 *
 * Summation order (the backend's own, docs/numerics.md step 2): element j of a
 * row goes to lane j % 16 of one of four accumulators, by (j / 16) % 4, over
 * blocks of 1024 elements; each block's four accumulators are folded as
 * (a0 + a1) + (a2 + a3) into a running vector total of its segment (below);
 * the segment totals are folded in column order; elements past the last
 * whole 64 go to a fifth accumulator added last; the 16 lanes are folded by
 * halving (bf16 differs in which element goes to which lane and in the
 * order within a lane: rmsi_row_sumsq_bf16_pass). The order depends only on
 * cols (never on pointer alignment or the thread count), so the forward and
 * a backward that recomputes rstd get the same bits. Each lane sums at most
 * 16 terms per block and cols / 1024 block totals, so the relative error
 * stays near 1e-6 for the row lengths used in practice, an order of
 * magnitude under the 1e-5 bound.
 *
 * Segments (rmsi_seg_cols) are what let a call of a few wide rows split each
 * row's columns over threads (simd/wide.h) with one thread's bits: a thread
 * sums whole segments, and the segment totals fold the same whoever summed
 * them. A row of up to RMSI_SEG_MIN columns is one segment, so its order is
 * the one these files had before segments (session 40).
 */
#ifndef RMSNORM_SIMD_ROWSUM_H
#define RMSNORM_SIMD_ROWSUM_H

#include <math.h>

#include "simd/vec.h"

#define RMSI_SUM_BLOCK 1024

/* A segment is RMSI_SEG_MIN columns, or more when a row would have more than
 * RMSI_SEG_MAX of them (rows over 2^20 columns), so that simd/wide.h keeps a
 * row's segment totals in a fixed array. A multiple of RMSI_SUM_BLOCK: the
 * blocks of a segment are the blocks of the row. */
#define RMSI_SEG_MIN ((int64_t)16384)
#define RMSI_SEG_MAX ((int64_t)64)

static inline int64_t rmsi_seg_cols(int64_t cols)
{
    const int64_t per = cols / RMSI_SEG_MAX + (cols % RMSI_SEG_MAX != 0);
    const int64_t seg = (per / RMSI_SUM_BLOCK + (per % RMSI_SUM_BLOCK != 0)) * RMSI_SUM_BLOCK;
    return seg > RMSI_SEG_MIN ? seg : RMSI_SEG_MIN;
}

/* Segments of a row (at least 1, at most RMSI_SEG_MAX). */
static inline int64_t rmsi_seg_count(int64_t cols)
{
    const int64_t seg = rmsi_seg_cols(cols);
    return cols <= seg ? 1 : cols / seg + (cols % seg != 0);
}

/* The running total over the segments before this one, and this one's (first:
 * it is the row's first): the first is taken as it is, so a row of one
 * segment sums exactly as before segments existed. */
RMSI_INLINE __m512 rmsi_seg_fold(__m512 tot, __m512 v, int first)
{
    return first ? v : _mm512_add_ps(tot, v);
}

/* Columns [s * seg, e) of segment s of a row's full blocks, which end at
 * cfull; e <= s * seg when the segment has none (only its tail). */
static inline int64_t rmsi_seg_end(int64_t s, int64_t seg, int64_t cfull)
{
    const int64_t e = (s + 1) * seg;
    return e < cfull ? e : cfull;
}

/* A row's sum from its segment totals v[0 .. nseg) and its tail v[nseg]
 * (simd/wide.h, where other threads summed some of them): the fold of
 * rmsi_row_sumsq_*. cfull: where the row's full blocks end. */
RMSI_INLINE float rmsi_seg_total(const __m512 *v, int64_t nseg, int64_t seg, int64_t cfull)
{
    __m512 tot = _mm512_setzero_ps();
    int64_t s;

    for (s = 0; s < nseg && s * seg < cfull; s++)
        tot = rmsi_seg_fold(tot, v[s], s == 0);
    return rmsi_hsum(_mm512_add_ps(tot, v[nseg]));
}

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

/* h of 32 bf16 at column j (m: the lanes, when !full) as bf16 bits in
 * element order: x, or round(x + residual) through rmsi_bf16_pack_eo (exact,
 * and with AVX512-BF16 half the operations of the integer rounding). This is
 * also what h_out stores. */
RMSI_INLINE __m512i rmsi_h_bits_eo(const char *x, const char *r, int64_t j, rmsi_mask32 m, int full,
                                   int hw)
{
    const char *xp = x + (size_t)j * 2u;

    if (r == NULL)
        return full ? _mm512_loadu_si512(xp) : _mm512_maskz_loadu_epi16(m, xp);
    __m512 xe, xo, re, ro;
    rmsi_bf16_load_eo(xp, m, full, &xe, &xo);
    rmsi_bf16_load_eo(r + (size_t)j * 2u, m, full, &re, &ro);
    return rmsi_bf16_pack_eo(_mm512_add_ps(xe, re), _mm512_add_ps(xo, ro), hw);
}

/* The same h in even/odd form (rmsi_bf16_eo). */
RMSI_INLINE void rmsi_h_eo(const char *x, const char *r, int64_t j, rmsi_mask32 m, int full, int hw,
                           __m512 *e, __m512 *o)
{
    rmsi_bf16_eo(rmsi_h_bits_eo(x, r, j, m, full, hw), e, o);
}

/* The 32 h bits at column j to h_out (m: the lanes, when !full) and, when hb
 * is given, to the same columns of hb. */
RMSI_INLINE void rmsi_h_put(char *hout, char *hb, int64_t j, __m512i b, rmsi_mask32 m, int full,
                                int nt)
{
    char *hp = hout + (size_t)j * 2u;

    if (!full)
        _mm512_mask_storeu_epi16(hp, m, b);
    else if (nt)
        _mm512_stream_si512((void *)hp, b);
    else
        _mm512_storeu_si512(hp, b);
    if (hb != NULL && full)
        _mm512_store_si512((void *)(hb + (size_t)j * 2u), b);
    else if (hb != NULL)
        _mm512_mask_storeu_epi16(hb + (size_t)j * 2u, m, b);
}

/* a + the squares of 32 bf16 (bits b, element order), lane i taking elements
 * 2i + 1 then 2i: VDPBF16PS (AVX512-BF16) where hw, else the same two
 * roundings by FMA (a bf16 square is exact in fp32). They differ only where
 * VDPBF16PS flushes: a square under 2^-126 or a subnormal sum, which only a
 * row sum under 2^-64 can show (rmsi_row_sumsq_bf16_put then sums again
 * without it), so both give the same bits. */
RMSI_INLINE __m512 rmsi_sq_acc(__m512 a, __m512i b, int hw)
{
#ifdef __AVX512BF16__
    if (hw)
        return _mm512_dpbf16_ps(a, (__m512bh)b, (__m512bh)b);
#else
    (void)hw;
#endif
    __m512 e, o;
    rmsi_bf16_eo(b, &e, &o);
    return _mm512_fmadd_ps(e, e, _mm512_fmadd_ps(o, o, a));
}

/* bf16: the same blocks of 1024, but each 128 elements go as four vectors of
 * 32 (element j to lane (j % 32) / 2 of accumulator (j / 32) % 4, odd
 * element first: rmsi_sq_acc), and the tail 32 at a time (masked) into a4.
 * With hout, h is also stored to hout (and hb) as it goes (the fused add's
 * one sweep over x and r; streaming needs hout 64-byte aligned: no store
 * head here); one loop for both, so the sum has the same bits either way.
 * This is segment [j, j1) of the full 128s (rmsi_seg_cols). */
RMSI_INLINE __m512 rmsi_sumsq_bf16_seg(const char *x, const char *r, int64_t j, int64_t j1, int hw,
                                       char *hout, char *hb, int nt)
{
    __m512 tot = _mm512_setzero_ps();

    while (j < j1) {
        const int64_t end = (j1 - j > RMSI_SUM_BLOCK) ? j + RMSI_SUM_BLOCK : j1;
        __m512 a0 = _mm512_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
        for (; j < end; j += 128) {
            const __m512i b0 = rmsi_h_bits_eo(x, r, j, 0, 1, hw);
            const __m512i b1 = rmsi_h_bits_eo(x, r, j + 32, 0, 1, hw);
            const __m512i b2 = rmsi_h_bits_eo(x, r, j + 64, 0, 1, hw);
            const __m512i b3 = rmsi_h_bits_eo(x, r, j + 96, 0, 1, hw);
            if (hout != NULL) {
                rmsi_h_put(hout, hb, j, b0, 0, 1, nt);
                rmsi_h_put(hout, hb, j + 32, b1, 0, 1, nt);
                rmsi_h_put(hout, hb, j + 64, b2, 0, 1, nt);
                rmsi_h_put(hout, hb, j + 96, b3, 0, 1, nt);
            }
            a0 = rmsi_sq_acc(a0, b0, hw);
            a1 = rmsi_sq_acc(a1, b1, hw);
            a2 = rmsi_sq_acc(a2, b2, hw);
            a3 = rmsi_sq_acc(a3, b3, hw);
        }
        tot = _mm512_add_ps(tot, _mm512_add_ps(_mm512_add_ps(a0, a1), _mm512_add_ps(a2, a3)));
    }
    return tot;
}

/* The tail [j, cols) past the row's last full 128 (a4 above). */
RMSI_INLINE __m512 rmsi_sumsq_bf16_tail(const char *x, const char *r, int64_t j, int64_t cols, int hw,
                                        char *hout, char *hb, int nt)
{
    __m512 a4 = _mm512_setzero_ps();

    for (; j < cols; j += 32) {
        const int64_t n = cols - j;
        const rmsi_mask32 m = rmsi_vmask32(n < 32 ? n : 32);
        const __m512i b = rmsi_h_bits_eo(x, r, j, m, 0, hw);
        if (hout != NULL)
            rmsi_h_put(hout, hb, j, b, m, 0, nt);
        a4 = rmsi_sq_acc(a4, b, hw);
    }
    return a4;
}

/* The fold of the segments of the row's full 128s, which end at c128. */
RMSI_INLINE __m512 rmsi_sumsq_bf16_segs(const char *x, const char *r, int64_t c128, int64_t seg, int hw,
                                        char *hout, char *hb, int nt)
{
    __m512 tot = _mm512_setzero_ps();
    int64_t j;

    for (j = 0; j < c128; j += seg) {
        const int64_t e = c128 - j > seg ? j + seg : c128;
        tot = rmsi_seg_fold(tot, rmsi_sumsq_bf16_seg(x, r, j, e, hw, hout, hb, nt), j == 0);
    }
    return tot;
}

RMSI_INLINE float rmsi_row_sumsq_bf16_pass(const char *x, const char *r, int64_t cols, int hw, char *hout,
                                           char *hb, int nt)
{
    const int64_t c128 = cols & ~(int64_t)127;
    const int64_t seg = rmsi_seg_cols(cols);
    /* the plain forward's sum as a loop of its own, with no test of r or
     * hout in it (gcc kept a test of r in the segmented loop: a cold bf16
     * forward of rows off 64 bytes 5-10% slower, session 40) */
    const __m512 tot = r == NULL && hout == NULL ? rmsi_sumsq_bf16_segs(x, NULL, c128, seg, hw, NULL, NULL, 0)
                                                 : rmsi_sumsq_bf16_segs(x, r, c128, seg, hw, hout, hb, nt);
    return rmsi_hsum(_mm512_add_ps(tot, rmsi_sumsq_bf16_tail(x, r, c128, cols, hw, hout, hb, nt)));
}

/* A bf16 row's sum ss as VDPBF16PS formed it (hw), or when tiny or NaN the
 * FMA sum over h = x (+ r), whose subnormals VDPBF16PS would have flushed. */
RMSI_INLINE float rmsi_sumsq_bf16_fix(float ss, const char *x, const char *r, int64_t cols, int hw)
{
    if (hw && __builtin_expect(!(ss >= 0x1p-64f), 0))
        return rmsi_row_sumsq_bf16_pass(x, r, cols, 0, NULL, NULL, 0);
    return ss;
}

RMSI_INLINE float rmsi_row_sumsq_bf16_put(const char *x, const char *r, int64_t cols, int hw, char *hout,
                                          char *hb, int nt)
{
    const float ss = rmsi_row_sumsq_bf16_pass(x, r, cols, hw, hout, hb, nt);
    /* h from hout when stored there (it may have overwritten x or r) */
    return hout != NULL ? rmsi_sumsq_bf16_fix(ss, hout, NULL, cols, hw) : rmsi_sumsq_bf16_fix(ss, x, r, cols, hw);
}

RMSI_INLINE float rmsi_row_sumsq_bf16(const char *x, const char *r, int64_t cols, int hw)
{
    return rmsi_row_sumsq_bf16_put(x, r, cols, hw, NULL, NULL, 0);
}

/* f32 and f16: segment [j, j1) of the row's full 64s, in the order above;
 * with hout, h is also stored there as it goes (nt: streamed, hout 64-byte
 * aligned): the fused add's sum and h_out in one sweep, as the bf16 loop
 * does. */
RMSI_INLINE __m512 rmsi_sumsq_ps_seg(const char *x, const char *r, int64_t j, int64_t j1, rmsnorm_dtype t,
                                     char *hout, int nt)
{
    const size_t sz = rmsi_vsize(t);
    __m512 tot = _mm512_setzero_ps();

    while (j < j1) {
        const int64_t end = (j1 - j > RMSI_SUM_BLOCK) ? j + RMSI_SUM_BLOCK : j1;
        __m512 a0 = _mm512_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
        for (; j < end; j += 64) {
            const __m512 h0 = rmsi_h_full(x, r, j, t);
            const __m512 h1 = rmsi_h_full(x, r, j + 16, t);
            const __m512 h2 = rmsi_h_full(x, r, j + 32, t);
            const __m512 h3 = rmsi_h_full(x, r, j + 48, t);
            if (hout != NULL) {
                rmsi_vstore(hout + (size_t)j * sz, h0, t, 0, nt);
                rmsi_vstore(hout + (size_t)(j + 16) * sz, h1, t, 0, nt);
                rmsi_vstore(hout + (size_t)(j + 32) * sz, h2, t, 0, nt);
                rmsi_vstore(hout + (size_t)(j + 48) * sz, h3, t, 0, nt);
            }
            a0 = _mm512_fmadd_ps(h0, h0, a0);
            a1 = _mm512_fmadd_ps(h1, h1, a1);
            a2 = _mm512_fmadd_ps(h2, h2, a2);
            a3 = _mm512_fmadd_ps(h3, h3, a3);
        }
        tot = _mm512_add_ps(tot, _mm512_add_ps(_mm512_add_ps(a0, a1), _mm512_add_ps(a2, a3)));
    }
    return tot;
}

/* The tail [j, cols) past the row's last full 64 (h to hout when given;
 * nt: its full vectors streamed, as rmsi_sumsq_ps_seg's). */
RMSI_INLINE __m512 rmsi_sumsq_ps_tail(const char *x, const char *r, int64_t j, int64_t cols, rmsnorm_dtype t,
                                      char *hout, int nt)
{
    const size_t sz = rmsi_vsize(t);
    __m512 a4 = _mm512_setzero_ps();

    for (; j + 16 <= cols; j += 16) {
        const __m512 h = rmsi_h_full(x, r, j, t);
        if (hout != NULL)
            rmsi_vstore(hout + (size_t)j * sz, h, t, 0, nt);
        a4 = _mm512_fmadd_ps(h, h, a4);
    }
    if (j < cols) {
        const __mmask16 m = rmsi_vmask(cols - j);
        const __m512 h = rmsi_h_mask(x, r, j, t, m);
        if (hout != NULL)
            rmsi_vstore_m(hout + (size_t)j * sz, h, t, 0, m);
        a4 = _mm512_fmadd_ps(h, h, a4);
    }
    return a4;
}

RMSI_INLINE float rmsi_row_sumsq_ps_put(const char *x, const char *r, int64_t cols, rmsnorm_dtype t, char *hout,
                                        int nt)
{
    const int64_t c64 = cols & ~(int64_t)63;
    const int64_t seg = rmsi_seg_cols(cols);
    __m512 tot = _mm512_setzero_ps();
    int64_t j;

    for (j = 0; j < c64; j += seg) {
        const int64_t e = c64 - j > seg ? j + seg : c64;
        tot = rmsi_seg_fold(tot, rmsi_sumsq_ps_seg(x, r, j, e, t, hout, nt), j == 0);
    }
    return rmsi_hsum(_mm512_add_ps(tot, rmsi_sumsq_ps_tail(x, r, c64, cols, t, hout, nt)));
}

RMSI_INLINE float rmsi_row_sumsq_ps(const char *x, const char *r, int64_t cols, rmsnorm_dtype t)
{
    return rmsi_row_sumsq_ps_put(x, r, cols, t, NULL, 0);
}

/* Segment s of the sum of h_j^2 into v[s], and its tail into v[nseg] when s
 * is the last (simd/wide.h; the tiny-sum rule of rmsi_row_sumsq_bf16_put is
 * the caller's). */
RMSI_INLINE void rmsi_sumsq_seg_at(const char *x, const char *r, int64_t cols, int64_t s, rmsnorm_dtype t,
                                   int hw, __m512 *v)
{
    const int64_t seg = rmsi_seg_cols(cols);
    const int64_t nseg = rmsi_seg_count(cols);
    const int64_t cfull = cols & (t == RMSNORM_BF16 ? ~(int64_t)127 : ~(int64_t)63);

    if (t == RMSNORM_BF16) {
        v[s] = rmsi_sumsq_bf16_seg(x, r, s * seg, rmsi_seg_end(s, seg, cfull), hw, NULL, NULL, 0);
        if (s == nseg - 1)
            v[nseg] = rmsi_sumsq_bf16_tail(x, r, cfull, cols, hw, NULL, NULL, 0);
    } else {
        v[s] = rmsi_sumsq_ps_seg(x, r, s * seg, rmsi_seg_end(s, seg, cfull), t, NULL, 0);
        if (s == nseg - 1)
            v[nseg] = rmsi_sumsq_ps_tail(x, r, cfull, cols, t, NULL, 0);
    }
}

/* The row's sum of h_j^2 from v as rmsi_sumsq_seg_at filled it, with the
 * tiny-sum rule of rmsi_row_sumsq_bf16_put, which reads x and r again: no
 * thread may store over them before this. */
RMSI_INLINE float rmsi_sumsq_of_segs(const __m512 *v, const char *x, const char *r, int64_t cols,
                                     rmsnorm_dtype t, int hw)
{
    const int64_t cfull = cols & (t == RMSNORM_BF16 ? ~(int64_t)127 : ~(int64_t)63);
    const float ss = rmsi_seg_total(v, rmsi_seg_count(cols), rmsi_seg_cols(cols), cfull);

    return t == RMSNORM_BF16 ? rmsi_sumsq_bf16_fix(ss, x, r, cols, hw) : ss;
}

/* Sum over the row of h_j^2: the forward and a backward recomputing rstd both
 * call this, so they get the same bits. */
RMSI_INLINE float rmsi_row_sumsq(const char *x, const char *r, int64_t cols, rmsnorm_dtype t, int hw)
{
    return t == RMSNORM_BF16 ? rmsi_row_sumsq_bf16(x, r, cols, hw)
                             : rmsi_row_sumsq_ps(x, r, cols, t);
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
