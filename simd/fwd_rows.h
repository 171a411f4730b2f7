/*
 * The AVX-512 forward over a range of rows, written once and instantiated per
 * (activation dtype, weight kind, bf16 conversion) by simd/forward.c and
 * simd/forward_bf16.c; everything else is a loop-invariant runtime flag.
 *
 * Design (measured on a 2-core Zen 4 VM, docs/perf/cpu.md):
 *  - One pass over x per row from memory: sweep 1 reads x (and the residual)
 *    for the sum of squares; the y/q sweep re-reads the row from L1/L2 (a
 *    4096-element f32 row is 16 KiB) while prefetching the next row, so DRAM
 *    sees x once and y once. Rows larger than L2 simply re-read from memory.
 *  - The sum order depends on cols only (simd/rowsum.h); stores may start with
 *    a short unaligned head so that non-temporal stores are aligned, which is
 *    why no sum is ever formed in a sweep that stores.
 *  - Non-temporal stores only when the call moves more than about the L3
 *    (RMSI_SIMD_NT_MIN): hot small calls keep their outputs in cache.
 *  - h_out is written in its own sweep, ordered against the y sweep so that an
 *    output aliasing an input (h_out == x or residual, y == x or residual) is
 *    only overwritten after its last read; later sweeps recompute h from x +
 *    residual (bit-identical) unless h was stored with plain stores.
 */
#ifndef RMSNORM_SIMD_FWD_ROWS_H
#define RMSNORM_SIMD_FWD_ROWS_H

#include "ref/formats.h"
#include "simd/rowsum.h"
#include "simd/simd.h"
#include "simd/vec.h"

/* Weight kind of an instantiation: none, or the weight's dtype. */
#define RMSI_W_NONE (-1)

typedef struct rmsi_fwd_ctx {
    const char *x, *res, *w;
    char *h, *y;
    uint8_t *q;
    size_t xs, rs, hs, ys, qs; /* row strides in bytes */
    int64_t rows, cols, rows4;
    float off, eps, ub, fmax;
    float *rstd, *scale;
    rmsnorm_quant quant;
    rmsnorm_dtype qt;
    int pow2, llama;
    int nt;      /* y written with non-temporal stores */
    int h_first; /* h_out sweep before the y sweep */
    int h_read;  /* sweeps after h_out's read h back from it */
    int h_nt;    /* h_out written with non-temporal stores */
} rmsi_fwd_ctx;

/* The bf16 instantiations that use VCVTNEPS2BF16 (simd/forward_bf16.c, the
 * only forward file built with -mavx512bf16); wk is RMSI_W_NONE or a dtype. */
rmsi_range_fn rmsi_fwd_bf16hw_pick(int wk);

/* One row's pointers. hx/hr are where h comes from after sweep 1. */
typedef struct rmsi_fwd_row {
    const char *hx, *hr;
    char *y;
    uint8_t *q;
    const char *nx, *nr; /* next row, prefetched during the y sweep; NULL: none */
} rmsi_fwd_row;

/* The per-element constants of v, copied out of the context into locals so
 * that the compiler keeps them in registers: through the context it must
 * reload them after every store (a store through y could alias it). */
typedef struct rmsi_fwd_k {
    const char *w;
    __m512 off;
    int llama;
} rmsi_fwd_k;

/* v of 16 lanes at column j (full != 0: no mask). */
RMSI_INLINE __m512 rmsi_fwd_v(const rmsi_fwd_k *c, const rmsi_fwd_row *w, int64_t j, __mmask16 m,
                              int full, __m512 rs, rmsnorm_dtype t, int wk, int hw)
{
    const __m512 h = full ? rmsi_h_full(w->hx, w->hr, j, t) : rmsi_h_mask(w->hx, w->hr, j, t, m);
    __m512 n = _mm512_mul_ps(h, rs);
    if (c->llama)
        n = rmsi_vround(n, t, hw);
    if (wk == RMSI_W_NONE)
        return n;
    const rmsnorm_dtype wt = (rmsnorm_dtype)wk;
    const char *wp = c->w + (size_t)j * rmsi_vsize(wt);
    const __m512 wv = full ? rmsi_vload(wp, wt) : rmsi_vload_m(wp, wt, m);
    return _mm512_mul_ps(n, _mm512_add_ps(wv, c->off));
}

/* y and/or q for columns [j0, j1); q = fp8(v / qscale). */
RMSI_INLINE void rmsi_fwd_store(const rmsi_fwd_ctx *c, const rmsi_fwd_row *w, int64_t j0, int64_t j1,
                                __m512 rs, float qscale, int nt, rmsnorm_dtype t, int wk, int hw)
{
    const rmsi_fwd_k k = { c->w, _mm512_set1_ps(c->off), c->llama };
    const size_t sz = rmsi_vsize(t);
    const __m512 qs = _mm512_set1_ps(qscale);
    const rmsi_fp8v f = rmsi_fp8v_of(c->qt);
    int64_t j = j0;

    for (; j + RMSI_VL <= j1; j += RMSI_VL) {
        if (w->nx != NULL) {
            _mm_prefetch(w->nx + (size_t)j * sz, _MM_HINT_T0);
            if (w->nr != NULL)
                _mm_prefetch(w->nr + (size_t)j * sz, _MM_HINT_T0);
        }
        const __m512 v = rmsi_fwd_v(&k, w, j, 0, 1, rs, t, wk, hw);
        if (w->y != NULL)
            rmsi_vstore(w->y + (size_t)j * sz, v, t, hw, nt);
        if (w->q != NULL)
            _mm_storeu_si128((__m128i *)(w->q + j), rmsi_fp8_encode(_mm512_div_ps(v, qs), &f));
    }
    if (j < j1) {
        const __mmask16 m = rmsi_vmask(j1 - j);
        const __m512 v = rmsi_fwd_v(&k, w, j, m, 0, rs, t, wk, hw);
        if (w->y != NULL)
            rmsi_vstore_m(w->y + (size_t)j * sz, v, t, hw, m);
        if (w->q != NULL)
            _mm_mask_storeu_epi8(w->q + j, m, rmsi_fp8_encode(_mm512_div_ps(v, qs), &f));
    }
}

/* The y/q sweep of a row, split at y's 64-byte boundary when streaming. */
RMSI_INLINE void rmsi_fwd_store_row(const rmsi_fwd_ctx *c, const rmsi_fwd_row *w, __m512 rs,
                                    float qscale, rmsnorm_dtype t, int wk, int hw)
{
    if (c->nt && w->y != NULL) {
        const int64_t head = rmsi_align_head(w->y, rmsi_vsize(t), c->cols);
        rmsi_fwd_store(c, w, 0, head, rs, qscale, 0, t, wk, hw);
        rmsi_fwd_store(c, w, head, c->cols, rs, qscale, 1, t, wk, hw);
    } else {
        rmsi_fwd_store(c, w, 0, c->cols, rs, qscale, 0, t, wk, hw);
    }
}

/* max |v| over the row, NaN ignored (VMAXPS returns its second operand when
 * the first is NaN, which is fmaxf's rule here). */
RMSI_INLINE float rmsi_fwd_amax(const rmsi_fwd_ctx *c, const rmsi_fwd_row *w, __m512 rs,
                                rmsnorm_dtype t, int wk, int hw)
{
    const rmsi_fwd_k k = { c->w, _mm512_set1_ps(c->off), c->llama };
    __m512 am = _mm512_setzero_ps();
    int64_t j = 0;

    for (; j + RMSI_VL <= c->cols; j += RMSI_VL)
        am = _mm512_max_ps(_mm512_abs_ps(rmsi_fwd_v(&k, w, j, 0, 1, rs, t, wk, hw)), am);
    if (j < c->cols) {
        const __mmask16 m = rmsi_vmask(c->cols - j);
        const __m512 v = rmsi_fwd_v(&k, w, j, m, 0, rs, t, wk, hw);
        am = _mm512_mask_max_ps(am, m, _mm512_abs_ps(v), am);
    }
    return rmsi_hmax(am);
}

/* PER_BLOCK_128 (cols % 128 == 0, checked by the dispatch layer): a block's
 * eight vectors of v stay in registers between its amax and its stores. */
RMSI_INLINE void rmsi_fwd_block_row(const rmsi_fwd_ctx *c, const rmsi_fwd_row *w, int64_t r,
                                    __m512 rs, rmsnorm_dtype t, int wk, int hw)
{
    const rmsi_fwd_k k = { c->w, _mm512_set1_ps(c->off), c->llama };
    const size_t sz = rmsi_vsize(t);
    const rmsi_fp8v f = rmsi_fp8v_of(c->qt);
    int64_t b;
    int i;

    for (b = 0; b + 128 <= c->cols; b += 128) {
        __m512 v[8];
        __m512 am = _mm512_setzero_ps();
        for (i = 0; i < 8; i++) {
            v[i] = rmsi_fwd_v(&k, w, b + (int64_t)16 * i, 0, 1, rs, t, wk, hw);
            am = _mm512_max_ps(_mm512_abs_ps(v[i]), am);
        }
        const float s = rmsi_dynamic_scale(rmsi_hmax(am), 0.0f, c->fmax, c->pow2);
        c->scale[(size_t)(b / 128) * (size_t)c->rows4 + (size_t)r] = s;
        const __m512 qs = _mm512_set1_ps(s);
        for (i = 0; i < 8; i++) {
            const int64_t j = b + (int64_t)16 * i;
            if (w->y != NULL)
                rmsi_vstore(w->y + (size_t)j * sz, v[i], t, hw, 0);
            _mm_storeu_si128((__m128i *)(w->q + j), rmsi_fp8_encode(_mm512_div_ps(v[i], qs), &f));
        }
    }
}

/* Stores h = x (+ residual) to hout for the whole row. */
RMSI_INLINE void rmsi_fwd_store_h(const rmsi_fwd_ctx *c, const char *x, const char *r, char *hout,
                                  rmsnorm_dtype t, int hw)
{
    const size_t sz = rmsi_vsize(t);
    const int64_t head = c->h_nt ? rmsi_align_head(hout, sz, c->cols) : 0;
    int64_t j = 0;

    for (; j + RMSI_VL <= head; j += RMSI_VL)
        rmsi_vstore(hout + (size_t)j * sz, rmsi_h_full(x, r, j, t), t, hw, 0);
    if (j < head) {
        const __mmask16 m = rmsi_vmask(head - j);
        rmsi_vstore_m(hout + (size_t)j * sz, rmsi_h_mask(x, r, j, t, m), t, hw, m);
        j = head;
    }
    if (c->h_nt) {
        for (; j + RMSI_VL <= c->cols; j += RMSI_VL)
            rmsi_vstore(hout + (size_t)j * sz, rmsi_h_full(x, r, j, t), t, hw, 1);
    } else {
        for (; j + RMSI_VL <= c->cols; j += RMSI_VL)
            rmsi_vstore(hout + (size_t)j * sz, rmsi_h_full(x, r, j, t), t, hw, 0);
    }
    if (j < c->cols) {
        const __mmask16 m = rmsi_vmask(c->cols - j);
        rmsi_vstore_m(hout + (size_t)j * sz, rmsi_h_mask(x, r, j, t, m), t, hw, m);
    }
}

RMSI_INLINE void rmsi_fwd_rows(const rmsi_fwd_ctx *c, int64_t r0, int64_t r1, rmsnorm_dtype t,
                               int wk, int hw)
{
    int64_t r;

    for (r = r0; r < r1; r++) {
        const char *xr = c->x + (size_t)r * c->xs;
        const char *rr = c->res != NULL ? c->res + (size_t)r * c->rs : NULL;
        char *hr = c->h != NULL ? c->h + (size_t)r * c->hs : NULL;
        rmsi_fwd_row w;

        w.hx = xr;
        w.hr = rr;
        w.y = c->y != NULL ? c->y + (size_t)r * c->ys : NULL;
        w.q = c->q != NULL ? c->q + (size_t)r * c->qs : NULL;
        w.nx = r + 1 < r1 ? xr + c->xs : NULL;
        w.nr = (r + 1 < r1 && rr != NULL) ? rr + c->rs : NULL;

        const float rstd = rmsi_simd_rstd(rmsi_row_sumsq(xr, rr, c->cols, t), c->cols, c->eps);
        const __m512 rs = _mm512_set1_ps(rstd);
        if (c->rstd != NULL)
            c->rstd[r] = rstd;
        if (hr != NULL && c->h_first) {
            rmsi_fwd_store_h(c, xr, rr, hr, t, hw);
            if (c->h_read) {
                w.hx = hr;
                w.hr = NULL;
            }
        }
        switch (c->quant) {
        case RMSNORM_QUANT_PER_TENSOR:
            rmsi_fwd_store_row(c, &w, rs, c->scale[0], t, wk, hw);
            break;
        case RMSNORM_QUANT_PER_TOKEN: {
            const float am = rmsi_fwd_amax(c, &w, rs, t, wk, hw);
            const float s = rmsi_dynamic_scale(am, c->ub, c->fmax, c->pow2);
            c->scale[r] = s;
            rmsi_fwd_store_row(c, &w, rs, s, t, wk, hw);
            break;
        }
        case RMSNORM_QUANT_PER_BLOCK_128:
            rmsi_fwd_block_row(c, &w, r, rs, t, wk, hw);
            break;
        case RMSNORM_QUANT_NONE:
        default:
            rmsi_fwd_store_row(c, &w, rs, 1.0f, t, wk, hw);
            break;
        }
        if (hr != NULL && !c->h_first)
            rmsi_fwd_store_h(c, xr, rr, hr, t, hw);
    }
    if (c->nt || c->h_nt)
        _mm_sfence(); /* streaming stores visible before the caller (or the region's end) reads */
}

#endif /* RMSNORM_SIMD_FWD_ROWS_H */
