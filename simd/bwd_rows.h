/*
 * The AVX-512 backward over a range of rows, instantiated per (dtype, weight
 * kind, bf16 conversion) by simd/backward.c and simd/backward_bf16.c.
 *
 * Per row: (sweep 0, only when rstd is not given: sum of squares of x, the
 * forward's order, so a recomputed rstd has the forward's bits), sweep 1: sum
 * of g * n; sweep 2: dx, and dy * m added into the chunk's dweight partial row.
 * Sweep 1 reads dy and x from memory, sweep 2 re-reads them from L1/L2 while
 * prefetching the next row, so DRAM sees dy, x and dresidual once and dx once
 * (the 2-reads-1-write probe's shape). The partial row (cols floats) stays in
 * L1/L2 across the chunk's rows.
 */
#ifndef RMSNORM_SIMD_BWD_ROWS_H
#define RMSNORM_SIMD_BWD_ROWS_H

#include "simd/fwd_rows.h"
#include "simd/rowsum.h"
#include "simd/simd.h"
#include "simd/vec.h"

typedef struct rmsi_bwd_ctx {
    const char *dy, *x, *w, *dres;
    char *dx;
    float *ws;  /* dweight partial rows, chunk k at ws + k * cols; NULL: no dweight */
    float *dw;
    size_t dys, xs, dxs, drs; /* row strides in bytes */
    const float *rstd;
    int64_t rows, cols, chunk_rows;
    float eps, off;
    int llama;
    int nt; /* dx written with non-temporal stores */
} rmsi_bwd_ctx;

rmsi_range_fn rmsi_bwd_bf16hw_pick(int wk);

typedef struct rmsi_bwd_row {
    const char *dy, *x, *dres;
    char *dx;
    float *part;         /* NULL: no dweight */
    int first;           /* first row of its chunk: the partial starts from 0 */
    const char *ndy, *nx; /* next row, prefetched in sweep 2; NULL: none */
} rmsi_bwd_row;

/* Per-element constants held in locals (see rmsi_fwd_k). */
typedef struct rmsi_bwd_k {
    const char *w;
    __m512 off;
    int llama;
} rmsi_bwd_k;

/* g = dy * weff and n = x * rstd of 16 lanes at column j. */
RMSI_INLINE void rmsi_bwd_gn(const rmsi_bwd_k *c, const rmsi_bwd_row *w, int64_t j, __mmask16 m,
                             int full, __m512 rs, rmsnorm_dtype t, int wk, __m512 *dy, __m512 *g,
                             __m512 *n)
{
    const size_t sz = rmsi_vsize(t);
    const char *dyp = w->dy + (size_t)j * sz;
    const char *xp = w->x + (size_t)j * sz;

    *dy = full ? rmsi_vload(dyp, t) : rmsi_vload_m(dyp, t, m);
    *n = _mm512_mul_ps(full ? rmsi_vload(xp, t) : rmsi_vload_m(xp, t, m), rs);
    if (wk == RMSI_W_NONE) {
        *g = *dy;
    } else {
        const rmsnorm_dtype wt = (rmsnorm_dtype)wk;
        const char *wp = c->w + (size_t)j * rmsi_vsize(wt);
        const __m512 wv = full ? rmsi_vload(wp, wt) : rmsi_vload_m(wp, wt, m);
        *g = _mm512_mul_ps(*dy, _mm512_add_ps(wv, c->off));
    }
}

/* Sum over the row of g_j * n_j, in the order of rmsi_row_sumsq. */
RMSI_INLINE float rmsi_bwd_dot(const rmsi_bwd_ctx *c, const rmsi_bwd_row *w, __m512 rs,
                               rmsnorm_dtype t, int wk)
{
    const rmsi_bwd_k k = { c->w, _mm512_set1_ps(c->off), c->llama };
    __m512 tot = _mm512_setzero_ps();
    __m512 a4 = _mm512_setzero_ps();
    __m512 dy, g, n;
    const int64_t c64 = c->cols & ~(int64_t)63;
    int64_t j = 0;

    while (j < c64) {
        const int64_t end = (c64 - j > RMSI_SUM_BLOCK) ? j + RMSI_SUM_BLOCK : c64;
        /* four named accumulators: an array indexed in a loop stayed in memory */
        __m512 a0 = _mm512_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
        for (; j < end; j += 64) {
            rmsi_bwd_gn(&k, w, j, 0, 1, rs, t, wk, &dy, &g, &n);
            a0 = _mm512_fmadd_ps(g, n, a0);
            rmsi_bwd_gn(&k, w, j + 16, 0, 1, rs, t, wk, &dy, &g, &n);
            a1 = _mm512_fmadd_ps(g, n, a1);
            rmsi_bwd_gn(&k, w, j + 32, 0, 1, rs, t, wk, &dy, &g, &n);
            a2 = _mm512_fmadd_ps(g, n, a2);
            rmsi_bwd_gn(&k, w, j + 48, 0, 1, rs, t, wk, &dy, &g, &n);
            a3 = _mm512_fmadd_ps(g, n, a3);
        }
        tot = _mm512_add_ps(tot, _mm512_add_ps(_mm512_add_ps(a0, a1), _mm512_add_ps(a2, a3)));
    }
    for (; j + RMSI_VL <= c->cols; j += RMSI_VL) {
        rmsi_bwd_gn(&k, w, j, 0, 1, rs, t, wk, &dy, &g, &n);
        a4 = _mm512_fmadd_ps(g, n, a4);
    }
    if (j < c->cols) {
        rmsi_bwd_gn(&k, w, j, rmsi_vmask(c->cols - j), 0, rs, t, wk, &dy, &g, &n);
        a4 = _mm512_fmadd_ps(g, n, a4);
    }
    return rmsi_hsum(_mm512_add_ps(tot, a4));
}

/* dx and the dweight partial for 16 lanes at column j. */
RMSI_INLINE void rmsi_bwd_out(const rmsi_bwd_k *c, const rmsi_bwd_row *w, int64_t j, __mmask16 m,
                              int full, int nt, __m512 rs, __m512 cm, rmsnorm_dtype t, int wk,
                              int hw)
{
    const size_t sz = rmsi_vsize(t);
    __m512 dy, g, n;

    rmsi_bwd_gn(c, w, j, m, full, rs, t, wk, &dy, &g, &n);
    __m512 d = _mm512_mul_ps(rs, _mm512_sub_ps(g, _mm512_mul_ps(n, cm)));
    if (w->dres != NULL) {
        const char *dp = w->dres + (size_t)j * sz;
        d = _mm512_add_ps(d, full ? rmsi_vload(dp, t) : rmsi_vload_m(dp, t, m));
    }
    if (w->part != NULL) {
        const __m512 mm = c->llama ? rmsi_vround(n, t, hw) : n;
        const __m512 p = _mm512_mul_ps(dy, mm);
        float *pp = w->part + j;
        __m512 acc = _mm512_setzero_ps();
        if (!w->first)
            acc = full ? _mm512_loadu_ps(pp) : _mm512_maskz_loadu_ps(m, pp);
        acc = _mm512_add_ps(acc, p);
        if (full)
            _mm512_storeu_ps(pp, acc);
        else
            _mm512_mask_storeu_ps(pp, m, acc);
    }
    if (full)
        rmsi_vstore(w->dx + (size_t)j * sz, d, t, hw, nt);
    else
        rmsi_vstore_m(w->dx + (size_t)j * sz, d, t, hw, m);
}

RMSI_INLINE void rmsi_bwd_out_range(const rmsi_bwd_ctx *c, const rmsi_bwd_row *w, int64_t j0,
                                    int64_t j1, int nt, __m512 rs, __m512 cm, rmsnorm_dtype t,
                                    int wk, int hw)
{
    const rmsi_bwd_k k = { c->w, _mm512_set1_ps(c->off), c->llama };
    const size_t sz = rmsi_vsize(t);
    int64_t j = j0;

    for (; j + RMSI_VL <= j1; j += RMSI_VL) {
        if (w->nx != NULL) {
            _mm_prefetch(w->nx + (size_t)j * sz, _MM_HINT_T0);
            _mm_prefetch(w->ndy + (size_t)j * sz, _MM_HINT_T0);
        }
        rmsi_bwd_out(&k, w, j, 0, 1, nt, rs, cm, t, wk, hw);
    }
    if (j < j1)
        rmsi_bwd_out(&k, w, j, rmsi_vmask(j1 - j), 0, 0, rs, cm, t, wk, hw);
}

RMSI_INLINE void rmsi_bwd_row_run(const rmsi_bwd_ctx *c, int64_t r, const rmsi_bwd_row *w,
                                  rmsnorm_dtype t, int wk, int hw)
{
    const float rstd = c->rstd != NULL
                           ? c->rstd[r]
                           : rmsi_simd_rstd(rmsi_row_sumsq(w->x, NULL, c->cols, t), c->cols, c->eps);
    const __m512 rs = _mm512_set1_ps(rstd);
    const float cmean = rmsi_bwd_dot(c, w, rs, t, wk) / (float)c->cols;
    const __m512 cm = _mm512_set1_ps(cmean);

    if (c->nt) {
        const int64_t head = rmsi_align_head(w->dx, rmsi_vsize(t), c->cols);
        rmsi_bwd_out_range(c, w, 0, head, 0, rs, cm, t, wk, hw);
        rmsi_bwd_out_range(c, w, head, c->cols, 1, rs, cm, t, wk, hw);
    } else {
        rmsi_bwd_out_range(c, w, 0, c->cols, 0, rs, cm, t, wk, hw);
    }
}

/* Rows [r0, r1) with partial row part (NULL: no dweight). */
RMSI_INLINE void rmsi_bwd_rows(const rmsi_bwd_ctx *c, int64_t r0, int64_t r1, float *part,
                               rmsnorm_dtype t, int wk, int hw)
{
    int64_t r;

    for (r = r0; r < r1; r++) {
        rmsi_bwd_row w;
        w.dy = c->dy + (size_t)r * c->dys;
        w.x = c->x + (size_t)r * c->xs;
        w.dres = c->dres != NULL ? c->dres + (size_t)r * c->drs : NULL;
        w.dx = c->dx + (size_t)r * c->dxs;
        w.part = part;
        w.first = r == r0;
        w.ndy = r + 1 < r1 ? w.dy + c->dys : NULL;
        w.nx = r + 1 < r1 ? w.x + c->xs : NULL;
        rmsi_bwd_row_run(c, r, &w, t, wk, hw);
    }
}

/* Items are rows (no dweight) or dweight chunks. */
RMSI_INLINE void rmsi_bwd_items(const rmsi_bwd_ctx *c, int64_t i0, int64_t i1, rmsnorm_dtype t,
                                int wk, int hw)
{
    if (c->ws == NULL) {
        rmsi_bwd_rows(c, i0, i1, NULL, t, wk, hw);
    } else {
        int64_t k;
        for (k = i0; k < i1; k++) {
            const int64_t r0 = k * c->chunk_rows;
            const int64_t r1 = c->rows - r0 > c->chunk_rows ? r0 + c->chunk_rows : c->rows;
            rmsi_bwd_rows(c, r0, r1, c->ws + (size_t)k * (size_t)c->cols, t, wk, hw);
        }
    }
    if (c->nt)
        _mm_sfence();
}

#endif /* RMSNORM_SIMD_BWD_ROWS_H */
