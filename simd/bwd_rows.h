/*
 * The AVX-512 backward over a range of rows, instantiated per (dtype, weight
 * kind, bf16 conversion) by simd/backward.c and simd/backward_bf16.c.
 *
 * Per row: (sweep 0, only when rstd is not given: sum of squares of x, the
 * forward's order, so a recomputed rstd has the forward's bits), sweep 1: sum
 * of g * n; sweep 2: dx, and dy * m added into the chunk's dweight partial row.
 * Both sweeps read dy and x from L1/L2 and prefetch half of the next row each
 * (rmsi_bwd_row_run), so DRAM sees dy, x and dresidual once and dx once
 * (the 2-reads-1-write probe's shape). The partial row (cols floats) stays in
 * L1/L2 across the chunk's rows. The simple bf16 even/odd calls run sweep 2
 * of row r and sweep 1 of row r + 1 as one sweep (rmsi_bwd_rows_fused_eo),
 * with the partial's full blocks in even/odd form (rmsi_bwd_ctx.eo_part);
 * the other simple calls do the same in the ordered form (rmsi_bwd_rows_pipe,
 * session 41: hot f16 rows 7-13% faster, f32 4-10%; streamed since session
 * 60, when dx rows need no alignment head), plainly stored fp32 rows of 2048
 * columns or more two rows a sweep (rmsi_bwd_rows_pipe2, session 42: one
 * pass of the partial and the weights for two rows). The pipelined sweeps
 * prefetch a short way ahead of the row they read from memory
 * (rmsi_bwd_pf_step).
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
    int far_pf; /* rmsi_bwd_pf_step's far prefetch too (rmsi_avx512_bwd_far_pf, streamed calls) */
    int eo_part; /* rmsi_bwd_rows_fused_eo keeps full partial blocks in even/odd form */
    /* a wide call's scratch (simd/bwd_wide.h), else NULL: per row, nseg + 1
     * slots of segment sums of x^2 (segv) and of g * n (dotv); rsv: rstd;
     * a tiled call's (simd/bwd_tiles.h): rsv, and cmv, (sum of g * n) / cols */
    __m512 *segv, *dotv;
    float *rsv, *cmv;
    int64_t nseg;
    int64_t nchunks; /* dweight chunks (0: no dweight) */
    int64_t tiles;   /* a tiled call's tiles a chunk (its threads), else 0 */
} rmsi_bwd_ctx;

rmsi_kern rmsi_bwd_bf16hw_pick(int wk, int simple, int one);

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
    int one; /* even/odd loads: one load a vector (rmsi_bf16_load_eo1) */
} rmsi_bwd_k;

/* weff = w + off of the 16 columns at j (wk != RMSI_W_NONE). */
RMSI_INLINE __m512 rmsi_bwd_wo(const rmsi_bwd_k *k, int64_t j, __mmask16 m, int full, int wk)
{
    const rmsnorm_dtype wt = (rmsnorm_dtype)wk;
    const char *wp = k->w + (size_t)j * rmsi_vsize(wt);
    return _mm512_add_ps(full ? rmsi_vload(wp, wt) : rmsi_vload_m(wp, wt, m), k->off);
}

/* g = dy * weff and n = x * rstd of 16 lanes at column j, with weff given (wo;
 * unused without weights): the two-row sweep loads it once for four rows. */
RMSI_INLINE void rmsi_bwd_gn_wo(const rmsi_bwd_row *w, int64_t j, __mmask16 m, int full, __m512 rs,
                                rmsnorm_dtype t, int wk, __m512 wo, __m512 *dy, __m512 *g, __m512 *n)
{
    const size_t sz = rmsi_vsize(t);
    const char *dyp = w->dy + (size_t)j * sz;
    const char *xp = w->x + (size_t)j * sz;

    *dy = full ? rmsi_vload(dyp, t) : rmsi_vload_m(dyp, t, m);
    *n = _mm512_mul_ps(full ? rmsi_vload(xp, t) : rmsi_vload_m(xp, t, m), rs);
    *g = wk == RMSI_W_NONE ? *dy : _mm512_mul_ps(*dy, wo);
}

/* g = dy * weff and n = x * rstd of 16 lanes at column j. */
RMSI_INLINE void rmsi_bwd_gn(const rmsi_bwd_k *c, const rmsi_bwd_row *w, int64_t j, __mmask16 m,
                             int full, __m512 rs, rmsnorm_dtype t, int wk, __m512 *dy, __m512 *g,
                             __m512 *n)
{
    const __m512 wo = wk == RMSI_W_NONE ? _mm512_setzero_ps() : rmsi_bwd_wo(c, j, m, full, wk);
    rmsi_bwd_gn_wo(w, j, m, full, rs, t, wk, wo, dy, g, n);
}

/* Segment [j, j1) of the row's full 64s of the sum of g_j * n_j, in the
 * order of rmsi_row_sumsq_ps_seg. */
RMSI_INLINE __m512 rmsi_bwd_dot_seg(const rmsi_bwd_k *k, const rmsi_bwd_row *w, int64_t j, int64_t j1,
                                    __m512 rs, rmsnorm_dtype t, int wk)
{
    __m512 tot = _mm512_setzero_ps();
    __m512 dy, g, n;
    const size_t sz = rmsi_vsize(t);

    while (j < j1) {
        const int64_t end = (j1 - j > RMSI_SUM_BLOCK) ? j + RMSI_SUM_BLOCK : j1;
        /* four named accumulators: an array indexed in a loop stayed in memory */
        __m512 a0 = _mm512_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
        for (; j < end; j += 64) {
            if (w->nx != NULL) { /* first half of the next row: see rmsi_bwd_row_run */
                size_t o;
                for (o = 0; o < 32u * sz; o += 64u) {
                    _mm_prefetch(w->nx + (size_t)j * sz / 2u + o, _MM_HINT_T1);
                    _mm_prefetch(w->ndy + (size_t)j * sz / 2u + o, _MM_HINT_T1);
                }
            }
            rmsi_bwd_gn(k, w, j, 0, 1, rs, t, wk, &dy, &g, &n);
            a0 = _mm512_fmadd_ps(g, n, a0);
            rmsi_bwd_gn(k, w, j + 16, 0, 1, rs, t, wk, &dy, &g, &n);
            a1 = _mm512_fmadd_ps(g, n, a1);
            rmsi_bwd_gn(k, w, j + 32, 0, 1, rs, t, wk, &dy, &g, &n);
            a2 = _mm512_fmadd_ps(g, n, a2);
            rmsi_bwd_gn(k, w, j + 48, 0, 1, rs, t, wk, &dy, &g, &n);
            a3 = _mm512_fmadd_ps(g, n, a3);
        }
        tot = _mm512_add_ps(tot, _mm512_add_ps(_mm512_add_ps(a0, a1), _mm512_add_ps(a2, a3)));
    }
    return tot;
}

/* The tail [j, cols) past the row's last full 64. */
RMSI_INLINE __m512 rmsi_bwd_dot_tail(const rmsi_bwd_k *k, const rmsi_bwd_row *w, int64_t j, int64_t cols,
                                     __m512 rs, rmsnorm_dtype t, int wk)
{
    __m512 a4 = _mm512_setzero_ps();
    __m512 dy, g, n;

    for (; j + RMSI_VL <= cols; j += RMSI_VL) {
        rmsi_bwd_gn(k, w, j, 0, 1, rs, t, wk, &dy, &g, &n);
        a4 = _mm512_fmadd_ps(g, n, a4);
    }
    if (j < cols) {
        rmsi_bwd_gn(k, w, j, rmsi_vmask(cols - j), 0, rs, t, wk, &dy, &g, &n);
        a4 = _mm512_fmadd_ps(g, n, a4);
    }
    return a4;
}

/* Sum over the row of g_j * n_j, in the order of rmsi_row_sumsq. */
RMSI_INLINE float rmsi_bwd_dot(const rmsi_bwd_ctx *c, const rmsi_bwd_row *w, __m512 rs,
                               rmsnorm_dtype t, int wk)
{
    const rmsi_bwd_k k = { c->w, _mm512_set1_ps(c->off), c->llama, 0 };
    const int64_t c64 = c->cols & ~(int64_t)63;
    const int64_t seg = rmsi_seg_cols(c->cols);
    __m512 tot = _mm512_setzero_ps();
    int64_t j;

    for (j = 0; j < c64; j += seg) {
        const int64_t e = c64 - j > seg ? j + seg : c64;
        tot = rmsi_seg_fold(tot, rmsi_bwd_dot_seg(&k, w, j, e, rs, t, wk), j == 0);
    }
    return rmsi_hsum(_mm512_add_ps(tot, rmsi_bwd_dot_tail(&k, w, c64, c->cols, rs, t, wk)));
}

/* dx and the dweight partial for 16 lanes at column j. */
RMSI_INLINE void rmsi_bwd_out(const rmsi_bwd_k *c, const rmsi_bwd_row *w, int64_t j, __mmask16 m,
                              int full, int nt, __m512 rs, __m512 cm, rmsnorm_dtype t, int wk,
                              int hw, int simple)
{
    const size_t sz = rmsi_vsize(t);
    __m512 dy, g, n;

    rmsi_bwd_gn(c, w, j, m, full, rs, t, wk, &dy, &g, &n);
    __m512 d = _mm512_mul_ps(rs, _mm512_sub_ps(g, _mm512_mul_ps(n, cm)));
    if (!simple && w->dres != NULL) {
        const char *dp = w->dres + (size_t)j * sz;
        d = _mm512_add_ps(d, full ? rmsi_vload(dp, t) : rmsi_vload_m(dp, t, m));
    }
    if (w->part != NULL) {
        const __m512 mm = (!simple && c->llama) ? rmsi_vround(n, t, hw) : n;
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
                                    int wk, int hw, int simple)
{
    const rmsi_bwd_k k = { c->w, _mm512_set1_ps(c->off), c->llama, 0 };
    const size_t sz = rmsi_vsize(t);
    int64_t j = j0;

    if (w->nx != NULL) {
        for (; j + RMSI_VL <= j1; j += RMSI_VL) {
            const size_t o = (size_t)c->cols * sz / 2u + (size_t)j * sz / 2u;
            _mm_prefetch(w->nx + o, _MM_HINT_T1);
            _mm_prefetch(w->ndy + o, _MM_HINT_T1);
            rmsi_bwd_out(&k, w, j, 0, 1, nt, rs, cm, t, wk, hw, simple);
        }
    } else {
        for (; j + RMSI_VL <= j1; j += RMSI_VL)
            rmsi_bwd_out(&k, w, j, 0, 1, nt, rs, cm, t, wk, hw, simple);
    }
    if (j < j1)
        rmsi_bwd_out(&k, w, j, rmsi_vmask(j1 - j), 0, 0, rs, cm, t, wk, hw, simple);
}

/*
 * bf16 in even/odd form (rmsi_bf16_eo), for the simple calls (no dresidual,
 * no LLAMA), whatever their weight: 32 columns per step, half the vector
 * operations of the ordered widening, which made the bf16 backward
 * compute-bound. The dot sums in that lane order (fixed by cols); dx and the
 * dweight products are elementwise, the products put back in column order
 * (two VPERMT2PS) so that the partial rows keep their layout. An fp32 weight
 * is split into the same form by two VPERMT2PS (rmsi_f32_load_eo); until
 * session 65 it kept those calls in the ordered form, 5-10% slower cold on
 * the Zen 5 (docs/perf/cpu.md).
 */
typedef struct rmsi_eo {
    __m512 e, o;
} rmsi_eo;

/* 1 when a call's rows take the even/odd form: every dot of the call, its
 * rows', a wide call's segments' and a tiled call's, sums in one order. */
static inline int rmsi_bwd_eo(rmsnorm_dtype t, int simple)
{
    return simple && t == RMSNORM_BF16;
}

/* weff = w + off of the 32 columns at j (m: the lanes read); wk: bf16 or fp32. */
RMSI_INLINE rmsi_eo rmsi_bwd_weff_eo(const rmsi_bwd_k *c, int64_t j, rmsi_mask32 m, int full, int wk)
{
    rmsi_eo wv;
    rmsi_w_load_eo(c->w, wk, j, m, full, &wv.e, &wv.o);
    wv.e = _mm512_add_ps(wv.e, c->off);
    wv.o = _mm512_add_ps(wv.o, c->off);
    return wv;
}

/* wf: weff of these columns when the caller has it, else NULL. */
RMSI_INLINE void rmsi_bwd_gn_eo(const rmsi_bwd_k *c, const rmsi_bwd_row *w, int64_t j, rmsi_mask32 m,
                                int full, __m512 rs, int wk, const rmsi_eo *wf, rmsi_eo *dy,
                                rmsi_eo *g, rmsi_eo *n)
{
    if (c->one) {
        rmsi_bf16_load_eo1(w->dy + (size_t)j * 2u, m, full, &dy->e, &dy->o);
        rmsi_bf16_load_eo1(w->x + (size_t)j * 2u, m, full, &n->e, &n->o);
    } else {
        rmsi_bf16_load_eo(w->dy + (size_t)j * 2u, m, full, &dy->e, &dy->o);
        rmsi_bf16_load_eo(w->x + (size_t)j * 2u, m, full, &n->e, &n->o);
    }
    n->e = _mm512_mul_ps(n->e, rs);
    n->o = _mm512_mul_ps(n->o, rs);
    if (wk == RMSI_W_NONE) {
        *g = *dy;
    } else {
        const rmsi_eo wv = wf != NULL ? *wf : rmsi_bwd_weff_eo(c, j, m, full, wk);
        g->e = _mm512_mul_ps(dy->e, wv.e);
        g->o = _mm512_mul_ps(dy->o, wv.o);
    }
}

/* Segment [j, j1) of the row's full 64s of the sum of g_j * n_j in even/odd
 * lanes (fixed by cols). */
RMSI_INLINE __m512 rmsi_bwd_dot_eo_seg(const rmsi_bwd_k *k, const rmsi_bwd_row *w, int64_t j, int64_t j1,
                                       __m512 rs, int wk)
{
    __m512 tot = _mm512_setzero_ps();
    rmsi_eo dy, g, n;

    while (j < j1) {
        const int64_t end = (j1 - j > RMSI_SUM_BLOCK) ? j + RMSI_SUM_BLOCK : j1;
        __m512 a0 = _mm512_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
        for (; j < end; j += 64) {
            if (w->nx != NULL) { /* first half of the next row: see rmsi_bwd_row_run */
                _mm_prefetch(w->nx + (size_t)j, _MM_HINT_T0);
                _mm_prefetch(w->ndy + (size_t)j, _MM_HINT_T0);
            }
            rmsi_bwd_gn_eo(k, w, j, 0, 1, rs, wk, NULL, &dy, &g, &n);
            a0 = _mm512_fmadd_ps(g.e, n.e, a0);
            a1 = _mm512_fmadd_ps(g.o, n.o, a1);
            rmsi_bwd_gn_eo(k, w, j + 32, 0, 1, rs, wk, NULL, &dy, &g, &n);
            a2 = _mm512_fmadd_ps(g.e, n.e, a2);
            a3 = _mm512_fmadd_ps(g.o, n.o, a3);
        }
        tot = _mm512_add_ps(tot, _mm512_add_ps(_mm512_add_ps(a0, a1), _mm512_add_ps(a2, a3)));
    }
    return tot;
}

/* The tail [j, cols) past the row's last full 64, 32 at a time. */
RMSI_INLINE __m512 rmsi_bwd_dot_eo_tail(const rmsi_bwd_k *k, const rmsi_bwd_row *w, int64_t j,
                                        int64_t cols, __m512 rs, int wk)
{
    __m512 a4 = _mm512_setzero_ps();
    rmsi_eo dy, g, n;

    for (; j < cols; j += 32) {
        const int64_t left = cols - j;
        rmsi_bwd_gn_eo(k, w, j, rmsi_vmask32(left < 32 ? left : 32), 0, rs, wk, NULL, &dy, &g, &n);
        a4 = _mm512_fmadd_ps(g.e, n.e, a4);
        a4 = _mm512_fmadd_ps(g.o, n.o, a4);
    }
    return a4;
}

/* Sum of g_j * n_j: rmsi_row_sumsq_bf16's blocks and segments. */
RMSI_INLINE float rmsi_bwd_dot_eo(const rmsi_bwd_ctx *c, const rmsi_bwd_row *w, __m512 rs, int wk,
                                  int one)
{
    const rmsi_bwd_k k = { c->w, _mm512_set1_ps(c->off), 0, one };
    const int64_t c64 = c->cols & ~(int64_t)63;
    const int64_t seg = rmsi_seg_cols(c->cols);
    __m512 tot = _mm512_setzero_ps();
    int64_t j;

    for (j = 0; j < c64; j += seg) {
        const int64_t e = c64 - j > seg ? j + seg : c64;
        tot = rmsi_seg_fold(tot, rmsi_bwd_dot_eo_seg(&k, w, j, e, rs, wk), j == 0);
    }
    return rmsi_hsum(_mm512_add_ps(tot, rmsi_bwd_dot_eo_tail(&k, w, c64, c->cols, rs, wk)));
}

/* The dweight partial of 16 columns in column order (m: the lanes). */
RMSI_INLINE void rmsi_bwd_part16(float *pp, __m512 p, __mmask16 m, int full, int first)
{
    __m512 acc = _mm512_setzero_ps();

    if (!first)
        acc = full ? _mm512_loadu_ps(pp) : _mm512_maskz_loadu_ps(m, pp);
    acc = _mm512_add_ps(acc, p);
    if (full)
        _mm512_storeu_ps(pp, acc);
    else
        _mm512_mask_storeu_ps(pp, m, acc);
}

/* dx and the dweight partial of the 32 columns at j. eo_part: the partial
 * holds a full block in even/odd form (rmsi_bwd_ctx), so its products need
 * no permute back to column order; they are added as in column order (no
 * fma), so dw has the same bits whichever layout a call used. A short last
 * block is always in column order. */
RMSI_INLINE void rmsi_bwd_out_eo(const rmsi_bwd_k *c, const rmsi_bwd_row *w, int64_t j,
                                 rmsi_mask32 m, int full, int nt, __m512 rs, __m512 cm, int wk,
                                 int hw, const rmsi_eo *wf, int eo_part)
{
    rmsi_eo dy, g, n;
    char *dxp = w->dx + (size_t)j * 2u;

    rmsi_bwd_gn_eo(c, w, j, m, full, rs, wk, wf, &dy, &g, &n);
    const __m512 de = _mm512_mul_ps(rs, _mm512_fnmadd_ps(n.e, cm, g.e));
    const __m512 dod = _mm512_mul_ps(rs, _mm512_fnmadd_ps(n.o, cm, g.o));
    if (w->part != NULL && full && eo_part) {
        rmsi_bwd_part16(w->part + j, _mm512_mul_ps(dy.e, n.e), 0, 1, w->first);
        rmsi_bwd_part16(w->part + j + 16, _mm512_mul_ps(dy.o, n.o), 0, 1, w->first);
    } else if (w->part != NULL) {
        __m512 lo, hi;
        rmsi_eo_interleave(_mm512_mul_ps(dy.e, n.e), _mm512_mul_ps(dy.o, n.o), &lo, &hi);
        if (full) {
            rmsi_bwd_part16(w->part + j, lo, 0, 1, w->first);
            rmsi_bwd_part16(w->part + j + 16, hi, 0, 1, w->first);
        } else {
            const __mmask16 mlo = (__mmask16)(m & 0xffffu);
            const __mmask16 mhi = (__mmask16)(m >> 16);
            rmsi_bwd_part16(w->part + j, lo, mlo, 0, w->first);
            if (mhi != 0)
                rmsi_bwd_part16(w->part + j + 16, hi, mhi, 0, w->first);
        }
    }
    const __m512i d = rmsi_bf16_pack_eo(de, dod, hw);
    if (!full)
        _mm512_mask_storeu_epi16(dxp, m, d);
    else if (nt)
        _mm512_stream_si512((void *)dxp, d);
    else
        _mm512_storeu_si512(dxp, d);
}

RMSI_INLINE void rmsi_bwd_out_range_eo(const rmsi_bwd_ctx *c, const rmsi_bwd_row *w, int64_t j0,
                                       int64_t j1, int nt, __m512 rs, __m512 cm, int wk, int hw,
                                       int eo_part, int one)
{
    const rmsi_bwd_k k = { c->w, _mm512_set1_ps(c->off), 0, one };
    int64_t j = j0;

    if (w->nx != NULL) {
        for (; j + 32 <= j1; j += 32) {
            const size_t o = (size_t)c->cols + (size_t)j; /* second half, bytes */
            _mm_prefetch(w->nx + o, _MM_HINT_T0);
            _mm_prefetch(w->ndy + o, _MM_HINT_T0);
            rmsi_bwd_out_eo(&k, w, j, 0, 1, nt, rs, cm, wk, hw, NULL, eo_part);
        }
    } else {
        for (; j + 32 <= j1; j += 32)
            rmsi_bwd_out_eo(&k, w, j, 0, 1, nt, rs, cm, wk, hw, NULL, eo_part);
    }
    if (j < j1)
        rmsi_bwd_out_eo(&k, w, j, rmsi_vmask32(j1 - j), 0, 0, rs, cm, wk, hw, NULL, eo_part);
}

/* Columns [j0, j1) of the dx sweep. */
RMSI_INLINE void rmsi_bwd_range(const rmsi_bwd_ctx *c, const rmsi_bwd_row *w, int64_t j0, int64_t j1,
                                int nt, __m512 rs, __m512 cm, rmsnorm_dtype t, int wk, int hw,
                                int simple)
{
    /* even/odd rows come here only when dx streams to rows off 64 bytes
     * (rmsi_bwd_fused_ok), whose inputs are likely off too: one load a
     * vector (rmsi_bf16_load_eo1), as in rmsi_bwd_row_run's dot */
    if (rmsi_bwd_eo(t, simple))
        rmsi_bwd_out_range_eo(c, w, j0, j1, nt, rs, cm, wk, hw, 0, 1);
    else
        rmsi_bwd_out_range(c, w, j0, j1, nt, rs, cm, t, wk, hw, simple);
}

/* Row r's rstd: given, or from x as the forward computes it. */
RMSI_INLINE float rmsi_bwd_rstd_of(const rmsi_bwd_ctx *c, int64_t r, const char *x, rmsnorm_dtype t, int hw)
{
    return c->rstd != NULL ? c->rstd[r]
                           : rmsi_simd_rstd(rmsi_row_sumsq(x, NULL, c->cols, t, hw), c->cols, c->eps);
}

/* Row r's rstd (returned) and (sum of g * n) / cols (*cmean) over the whole
 * row: the two-sweep row's, which a row split over threads
 * (simd/bwd_tiles.h) takes too. */
RMSI_INLINE float rmsi_bwd_row_coefs(const rmsi_bwd_ctx *c, int64_t r, const rmsi_bwd_row *w, rmsnorm_dtype t,
                                     int wk, int hw, int simple, float *cmean)
{
    const int eo = rmsi_bwd_eo(t, simple);
    const float rstd = rmsi_bwd_rstd_of(c, r, w->x, t, hw);
    const __m512 rs = _mm512_set1_ps(rstd);
    const float dot = eo ? rmsi_bwd_dot_eo(c, w, rs, wk, 1) : rmsi_bwd_dot(c, w, rs, t, wk);

    *cmean = dot / (float)c->cols;
    return rstd;
}

/* The dx sweep of columns [j0, j1) of a row; streamed calls store from the
 * span's first 64-byte boundary of dx on, the head before it plainly. */
RMSI_INLINE void rmsi_bwd_span(const rmsi_bwd_ctx *c, const rmsi_bwd_row *w, int64_t j0, int64_t j1, __m512 rs,
                               __m512 cm, rmsnorm_dtype t, int wk, int hw, int simple)
{
    if (c->nt) {
        const size_t sz = rmsi_vsize(t);
        const int64_t head = rmsi_align_head(w->dx + (size_t)j0 * sz, sz, j1 - j0);
        rmsi_bwd_range(c, w, j0, j0 + head, 0, rs, cm, t, wk, hw, simple);
        rmsi_bwd_range(c, w, j0 + head, j1, 1, rs, cm, t, wk, hw, simple);
    } else {
        rmsi_bwd_range(c, w, j0, j1, 0, rs, cm, t, wk, hw, simple);
    }
}

/* One row. The next row of x and dy is prefetched in two halves, the first
 * during the dot sweep and the second during the dx sweep, so that requests
 * to memory go out at an even pace over the whole row instead of only while
 * dx is written (the dot sweep itself reads from the cache). In the ordered
 * form into L2 (PREFETCHT1): an f32 row of x, dy, the weights and the
 * partial is 64 KB at 4096 columns, twice the L1, and a next row pulled into
 * L1 evicted the current one between its two sweeps (T0 -> T1: 16-24%
 * faster at 16384x4096 and 8192x8192 f32 on two threads, docs/perf/cpu.md
 * session 8). */
RMSI_INLINE void rmsi_bwd_row_run(const rmsi_bwd_ctx *c, int64_t r, const rmsi_bwd_row *w,
                                  rmsnorm_dtype t, int wk, int hw, int simple)
{
    float cmean;
    const float rstd = rmsi_bwd_row_coefs(c, r, w, t, wk, hw, simple, &cmean);

    rmsi_bwd_span(c, w, 0, c->cols, _mm512_set1_ps(rstd), _mm512_set1_ps(cmean), t, wk, hw, simple);
}

/* Rows [r0, r1) with partial row part (NULL: no dweight). */
RMSI_INLINE void rmsi_bwd_rows(const rmsi_bwd_ctx *c, int64_t r0, int64_t r1, float *part,
                               rmsnorm_dtype t, int wk, int hw, int simple)
{
    int64_t r;

    for (r = r0; r < r1; r++) {
        rmsi_bwd_row w;
        w.dy = c->dy + (size_t)r * c->dys;
        w.x = c->x + (size_t)r * c->xs;
        w.dres = (!simple && c->dres != NULL) ? c->dres + (size_t)r * c->drs : NULL;
        w.dx = c->dx + (size_t)r * c->dxs;
        w.part = part;
        w.first = r == r0;
        w.ndy = r + 1 < r1 ? w.dy + c->dys : NULL;
        w.nx = r + 1 < r1 ? w.x + c->xs : NULL;
        rmsi_bwd_row_run(c, r, &w, t, wk, hw, simple);
    }
}

/* x and dy of the 64 columns at j of the row at pfx / pfdy into L2, and of
 * the row after it when xs (its x stride; dys, dy's) is not 0. */
RMSI_INLINE void rmsi_bwd_prefetch64(const char *pfx, const char *pfdy, size_t xs, size_t dys, int64_t j,
                                     size_t sz)
{
    size_t o;

    for (o = 0; o < 64u * sz; o += 64u) {
        _mm_prefetch(pfx + (size_t)j * sz + o, _MM_HINT_T1);
        _mm_prefetch(pfdy + (size_t)j * sz + o, _MM_HINT_T1);
        if (xs != 0u) {
            _mm_prefetch(pfx + xs + (size_t)j * sz + o, _MM_HINT_T1);
            _mm_prefetch(pfdy + dys + (size_t)j * sz + o, _MM_HINT_T1);
        }
    }
}

/*
 * The pipelined sweeps' prefetch (row a's dx with row b's dot): b's own lines
 * RMSI_BWD_PF_NEAR bytes ahead of its loads, into L1, running on into the
 * row after b near b's end. Session 60 (CPU model 167, docs/perf/cpu.md),
 * cold 16384x4096 and 8192x8192 on two threads, ratio to the 2r1w_nt probe:
 * bf16 0.83-0.88 against 0.72-0.77 with the row after b prefetched one row
 * ahead into L2 (session 5's choice, for the two-sweep rows of that time).
 * 768 to 4096 bytes ahead read alike; 128-256 bytes gained little, and
 * PREFETCHT1 about half as much as T0.
 */
#define RMSI_BWD_PF_NEAR ((size_t)1024)

/*
 * And, where rmsi_avx512_bwd_far_pf is set (AMD family 26 on), the line
 * RMSI_BWD_PF_FAR bytes ahead into L2 (PREFETCHT1) as well. Session 65, the
 * Zen 5 VM, cold bf16 16384x4096 and 8192x8192: one thread 15.3-15.7 ms ->
 * 12.5-12.6, two threads 8.2-8.9 -> 7.0-7.7 (0.70-0.73 of the 2r1w_nt
 * probe -> 0.83-0.90); f16 0.85-0.87 at two threads, f32 level. Without
 * it one core there read about half of what the probe reads, with one
 * thread or two, and whether the memory gave 60 GB/s or 110: the near
 * prefetch alone left the L1's misses waiting on DRAM. On the Xeon VM of
 * session 63 the same far prefetch lost 7-15%, so it is off elsewhere; and
 * off for calls that are not streamed, whose rows sit in the caches (hot
 * 64x32768 bf16 lost 10-17%, 8x65536 about 3%, here).
 */
#define RMSI_BWD_PF_FAR ((size_t)4096)

/* The line at byte q of row b's x and dy, or past b's rb bytes, of the row
 * after it (nx, ndy; NULL: none): into L1, or into L2 when l2 (the far
 * prefetch; a compile-time constant at each call). */
RMSI_INLINE void rmsi_bwd_pf_line(const rmsi_bwd_row *b, const char *nx, const char *ndy, size_t rb,
                                  size_t q, int l2)
{
    const char *px = b->x + q, *pdy = b->dy + q;

    if (q >= rb) {
        if (nx == NULL)
            return;
        px = nx + (q - rb);
        pdy = ndy + (q - rb);
    }
    if (l2) {
        _mm_prefetch(px, _MM_HINT_T1);
        _mm_prefetch(pdy, _MM_HINT_T1);
    } else {
        _mm_prefetch(px, _MM_HINT_T0);
        _mm_prefetch(pdy, _MM_HINT_T0);
    }
}

/* The prefetch of one 64-column step at j of row b (sz bytes an element; nx,
 * ndy: the row after b, NULL: none). Calls that are not streamed fit the L3
 * and keep the row after b one row ahead into L2: its near prefetch made
 * cached bf16 512x4096 (hot in the L3) 19% slower. Not rows of more than
 * one sum segment (session 61, this VM only): one row ahead is over 32 KiB
 * for each of x and dy there (256 KiB in fp32 rows of 65536), and with rows
 * a and b, the partial and the weights it overfilled L2 (hot f32 8x65536:
 * 336 us in two sweeps, 431-452 pipelined, 314-318 with the near prefetch). */
RMSI_INLINE void rmsi_bwd_pf_step(const rmsi_bwd_ctx *c, const rmsi_bwd_row *b, const char *nx,
                                  const char *ndy, int64_t j, size_t sz)
{
    size_t o;

    if (!c->nt && c->cols <= RMSI_SEG_MIN) {
        if (nx != NULL)
            rmsi_bwd_prefetch64(nx, ndy, 0, 0, j, sz);
        return;
    }
    const size_t rb = (size_t)c->cols * sz;
    for (o = 0; o < 64u * sz; o += 64u)
        rmsi_bwd_pf_line(b, nx, ndy, rb, (size_t)j * sz + RMSI_BWD_PF_NEAR + o, 0);
    if (!c->far_pf)
        return;
    for (o = 0; o < 64u * sz; o += 64u)
        rmsi_bwd_pf_line(b, nx, ndy, rb, (size_t)j * sz + RMSI_BWD_PF_FAR + o, 1);
}

/*
 * Row a's dx sweep (and its dweight products) with row b = a + 1's dot sweep
 * fused in, 64 columns per step: b comes from memory while a is read back
 * from L1/L2, and the weight is widened once for both. Returns b's sum of
 * g * n in rmsi_bwd_dot_eo's order; a's dx and products are rmsi_bwd_out_eo's,
 * so no bit changes. dx rows must need no alignment head for the
 * non-temporal stores. pfx, pfdy: row a + 2 (NULL: none), for
 * rmsi_bwd_pf_step. wt: w + weight_offset widened in even/odd form
 * (rmsi_wtab_eo), or NULL.
 */
RMSI_INLINE float rmsi_bwd_fused_eo(const rmsi_bwd_ctx *c, const rmsi_bwd_row *a,
                                    const rmsi_bwd_row *b, __m512 rsa, __m512 cma, __m512 rsb,
                                    const char *pfx, const char *pfdy, int wk, int hw,
                                    const float *wt, int one)
{
    const rmsi_bwd_k k = { c->w, _mm512_set1_ps(c->off), 0, one };
    __m512 tot = _mm512_setzero_ps(), sv = tot;
    __m512 a4 = _mm512_setzero_ps();
    rmsi_eo dy, g, n, wf0, wf1;
    const int64_t c64 = c->cols & ~(int64_t)63;
    const int64_t seg = rmsi_seg_cols(c->cols);
    int64_t snext = seg; /* where the current segment ends */
    int64_t j = 0;

    while (j < c64) {
        const int64_t end = (c64 - j > RMSI_SUM_BLOCK) ? j + RMSI_SUM_BLOCK : c64;
        __m512 a0 = _mm512_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
        for (; j < end; j += 64) {
            rmsi_bwd_pf_step(c, b, pfx, pfdy, j, 2u);
            if (wk != RMSI_W_NONE && wt != NULL) {
                wf0.e = _mm512_load_ps(wt + j);
                wf0.o = _mm512_load_ps(wt + j + 16);
                wf1.e = _mm512_load_ps(wt + j + 32);
                wf1.o = _mm512_load_ps(wt + j + 48);
            } else if (wk != RMSI_W_NONE) {
                wf0 = rmsi_bwd_weff_eo(&k, j, 0, 1, wk);
                wf1 = rmsi_bwd_weff_eo(&k, j + 32, 0, 1, wk);
            }
            rmsi_bwd_gn_eo(&k, b, j, 0, 1, rsb, wk, &wf0, &dy, &g, &n);
            a0 = _mm512_fmadd_ps(g.e, n.e, a0);
            a1 = _mm512_fmadd_ps(g.o, n.o, a1);
            rmsi_bwd_gn_eo(&k, b, j + 32, 0, 1, rsb, wk, &wf1, &dy, &g, &n);
            a2 = _mm512_fmadd_ps(g.e, n.e, a2);
            a3 = _mm512_fmadd_ps(g.o, n.o, a3);
            rmsi_bwd_out_eo(&k, a, j, 0, 1, c->nt, rsa, cma, wk, hw, &wf0, c->eo_part);
            rmsi_bwd_out_eo(&k, a, j + 32, 0, 1, c->nt, rsa, cma, wk, hw, &wf1, c->eo_part);
        }
        /* blocks never cross a segment (both multiples of RMSI_SUM_BLOCK):
         * rmsi_bwd_dot_eo's fold */
        sv = _mm512_add_ps(sv, _mm512_add_ps(_mm512_add_ps(a0, a1), _mm512_add_ps(a2, a3)));
        if (j == snext || j == c64) {
            tot = rmsi_seg_fold(tot, sv, j <= seg);
            sv = _mm512_setzero_ps();
            snext += seg;
        }
    }
    for (; j < c->cols; j += 32) {
        const int64_t left = c->cols - j;
        const rmsi_mask32 m = rmsi_vmask32(left < 32 ? left : 32);
        if (wk != RMSI_W_NONE)
            wf0 = rmsi_bwd_weff_eo(&k, j, m, 0, wk);
        rmsi_bwd_gn_eo(&k, b, j, m, 0, rsb, wk, &wf0, &dy, &g, &n);
        a4 = _mm512_fmadd_ps(g.e, n.e, a4);
        a4 = _mm512_fmadd_ps(g.o, n.o, a4);
        if (left >= 32)
            rmsi_bwd_out_eo(&k, a, j, 0, 1, c->nt, rsa, cma, wk, hw, &wf0, c->eo_part);
        else
            rmsi_bwd_out_eo(&k, a, j, m, 0, 0, rsa, cma, wk, hw, &wf0, c->eo_part);
    }
    return rmsi_hsum(_mm512_add_ps(tot, a4));
}

/* Row r's pointers and its chunk's partial row (first: r starts the chunk);
 * no prefetch pointers. */
RMSI_INLINE void rmsi_bwd_row_at(const rmsi_bwd_ctx *c, int64_t r, rmsi_bwd_row *w)
{
    w->dy = c->dy + (size_t)r * c->dys;
    w->x = c->x + (size_t)r * c->xs;
    w->dres = NULL;
    w->dx = c->dx + (size_t)r * c->dxs;
    w->part = c->ws == NULL ? NULL : c->ws + (size_t)(r / c->chunk_rows) * (size_t)c->cols;
    w->first = r % c->chunk_rows == 0;
    w->ndy = NULL;
    w->nx = NULL;
}

/* Row a's dx sweep (dx and its dweight products, rmsi_bwd_out's) with row
 * b's dot sweep (rmsi_bwd_dot's blocks, accumulators, segments and order)
 * alongside, 64 columns a step; returns b's sum of g * n. pfx, pfdy: the row
 * after b (NULL: none), for rmsi_bwd_pf_step. For the simple calls of the
 * ordered form (f32, f16, bf16 with an f32 weight); streamed dx rows must
 * need no alignment head. Session 60, cold f32 16384x4096 and 8192x8192 on
 * two threads: 0.89-0.97 of the 2r1w_nt probe, against 0.85-0.92 for two
 * sweeps a row (rmsi_bwd_row_run). Session 61 took rows of several segments
 * (over 16384 columns) too: cold f32 2048x32768 0.55 -> 0.87-0.90, where
 * two sweeps of a 128 KiB row had gone to L2 and back. */
RMSI_INLINE float rmsi_bwd_pipe(const rmsi_bwd_ctx *c, const rmsi_bwd_row *a, const rmsi_bwd_row *b,
                                __m512 rsa, __m512 cma, __m512 rsb, const char *pfx, const char *pfdy,
                                rmsnorm_dtype t, int wk, int hw)
{
    const rmsi_bwd_k k = { c->w, _mm512_set1_ps(c->off), 0, 0 };
    const size_t sz = rmsi_vsize(t);
    const int64_t c64 = c->cols & ~(int64_t)63;
    const int64_t seg = rmsi_seg_cols(c->cols);
    int64_t snext = seg; /* where the current segment ends */
    __m512 tot = _mm512_setzero_ps(), sv = tot, a4 = tot;
    __m512 dy, g, n;
    int64_t j = 0;

    while (j < c64) {
        const int64_t end = (c64 - j > RMSI_SUM_BLOCK) ? j + RMSI_SUM_BLOCK : c64;
        __m512 a0 = _mm512_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
        for (; j < end; j += 64) {
            rmsi_bwd_pf_step(c, b, pfx, pfdy, j, sz);
            rmsi_bwd_gn(&k, b, j, 0, 1, rsb, t, wk, &dy, &g, &n);
            a0 = _mm512_fmadd_ps(g, n, a0);
            rmsi_bwd_out(&k, a, j, 0, 1, c->nt, rsa, cma, t, wk, hw, 1);
            rmsi_bwd_gn(&k, b, j + 16, 0, 1, rsb, t, wk, &dy, &g, &n);
            a1 = _mm512_fmadd_ps(g, n, a1);
            rmsi_bwd_out(&k, a, j + 16, 0, 1, c->nt, rsa, cma, t, wk, hw, 1);
            rmsi_bwd_gn(&k, b, j + 32, 0, 1, rsb, t, wk, &dy, &g, &n);
            a2 = _mm512_fmadd_ps(g, n, a2);
            rmsi_bwd_out(&k, a, j + 32, 0, 1, c->nt, rsa, cma, t, wk, hw, 1);
            rmsi_bwd_gn(&k, b, j + 48, 0, 1, rsb, t, wk, &dy, &g, &n);
            a3 = _mm512_fmadd_ps(g, n, a3);
            rmsi_bwd_out(&k, a, j + 48, 0, 1, c->nt, rsa, cma, t, wk, hw, 1);
        }
        /* rmsi_bwd_dot's fold, as in rmsi_bwd_fused_eo */
        sv = _mm512_add_ps(sv, _mm512_add_ps(_mm512_add_ps(a0, a1), _mm512_add_ps(a2, a3)));
        if (j == snext || j == c64) {
            tot = rmsi_seg_fold(tot, sv, j <= seg);
            sv = _mm512_setzero_ps();
            snext += seg;
        }
    }
    for (; j + RMSI_VL <= c->cols; j += RMSI_VL) {
        rmsi_bwd_gn(&k, b, j, 0, 1, rsb, t, wk, &dy, &g, &n);
        a4 = _mm512_fmadd_ps(g, n, a4);
        rmsi_bwd_out(&k, a, j, 0, 1, c->nt, rsa, cma, t, wk, hw, 1);
    }
    if (j < c->cols) {
        const __mmask16 m = rmsi_vmask(c->cols - j);
        rmsi_bwd_gn(&k, b, j, m, 0, rsb, t, wk, &dy, &g, &n);
        a4 = _mm512_fmadd_ps(g, n, a4);
        rmsi_bwd_out(&k, a, j, m, 0, 0, rsa, cma, t, wk, hw, 1);
    }
    return rmsi_hsum(_mm512_add_ps(tot, a4));
}

/* rmsi_bwd_out of two rows of one chunk (a[1] right after a[0]) for the 16
 * columns at j of a simple call: the weights loaded once and the partial read
 * and written once, ((part + p0) + p1), the order of two rmsi_bwd_out. */
RMSI_INLINE void rmsi_bwd_out2(const rmsi_bwd_row *a, int64_t j, __mmask16 m, int full,
                               const __m512 *rs, const __m512 *cm, rmsnorm_dtype t, int wk, int hw, __m512 wo)
{
    const size_t o = (size_t)j * rmsi_vsize(t);
    __m512 dy0, g0, n0, dy1, g1, n1;

    rmsi_bwd_gn_wo(&a[0], j, m, full, rs[0], t, wk, wo, &dy0, &g0, &n0);
    rmsi_bwd_gn_wo(&a[1], j, m, full, rs[1], t, wk, wo, &dy1, &g1, &n1);
    const __m512 d0 = _mm512_mul_ps(rs[0], _mm512_sub_ps(g0, _mm512_mul_ps(n0, cm[0])));
    const __m512 d1 = _mm512_mul_ps(rs[1], _mm512_sub_ps(g1, _mm512_mul_ps(n1, cm[1])));
    if (a[0].part != NULL) {
        float *pp = a[0].part + j;
        __m512 acc = _mm512_setzero_ps();
        if (!a[0].first)
            acc = full ? _mm512_loadu_ps(pp) : _mm512_maskz_loadu_ps(m, pp);
        acc = _mm512_add_ps(_mm512_add_ps(acc, _mm512_mul_ps(dy0, n0)), _mm512_mul_ps(dy1, n1));
        if (full)
            _mm512_storeu_ps(pp, acc);
        else
            _mm512_mask_storeu_ps(pp, m, acc);
    }
    if (full) {
        rmsi_vstore(a[0].dx + o, d0, t, hw, 0);
        rmsi_vstore(a[1].dx + o, d1, t, hw, 0);
    } else {
        rmsi_vstore_m(a[0].dx + o, d0, t, hw, m);
        rmsi_vstore_m(a[1].dx + o, d1, t, hw, m);
    }
}

/* One 16-column step of rmsi_bwd_pipe2: rows a's dx and partial, and with nb
 * == 2 rows b's g * n into acc0 and acc1. */
RMSI_INLINE void rmsi_bwd_step2(const rmsi_bwd_k *k, const rmsi_bwd_row *a, const rmsi_bwd_row *b, int nb,
                                int64_t j, __mmask16 m, int full, const __m512 *rsa, const __m512 *cma,
                                const __m512 *rsb, rmsnorm_dtype t, int wk, int hw, __m512 *acc0, __m512 *acc1)
{
    const __m512 wo = wk == RMSI_W_NONE ? _mm512_setzero_ps() : rmsi_bwd_wo(k, j, m, full, wk);
    __m512 dy, g, n;

    if (nb == 2) {
        rmsi_bwd_gn_wo(&b[0], j, m, full, rsb[0], t, wk, wo, &dy, &g, &n);
        *acc0 = _mm512_fmadd_ps(g, n, *acc0);
        rmsi_bwd_gn_wo(&b[1], j, m, full, rsb[1], t, wk, wo, &dy, &g, &n);
        *acc1 = _mm512_fmadd_ps(g, n, *acc1);
    }
    rmsi_bwd_out2(a, j, m, full, rsa, cma, t, wk, hw, wo);
}

/* Rows a[0], a[1]'s dx sweep (one chunk's rows, or no dweight) with rows b[0],
 * b[1]'s dot sweeps alongside (nb == 2; nb == 0: none), 64 columns a step:
 * the weights are read once for four rows and the partial once for two.
 * Each row's dot has rmsi_bwd_dot's blocks, accumulators and order (rows of
 * one segment), stored in dots[0..1]. pfx, pfdy: the two rows after b,
 * prefetched into L2 (NULL: none). */
RMSI_INLINE void rmsi_bwd_pipe2(const rmsi_bwd_ctx *c, const rmsi_bwd_row *a, const rmsi_bwd_row *b, int nb,
                                const __m512 *rsa, const __m512 *cma, const __m512 *rsb, const char *pfx,
                                const char *pfdy, rmsnorm_dtype t, int wk, int hw, float *dots)
{
    const rmsi_bwd_k k = { c->w, _mm512_set1_ps(c->off), 0, 0 };
    const size_t sz = rmsi_vsize(t);
    const int64_t c64 = c->cols & ~(int64_t)63;
    __m512 tot0 = _mm512_setzero_ps(), tot1 = tot0, t40 = tot0, t41 = tot0;
    int64_t j = 0;

    while (j < c64) {
        const int64_t end = (c64 - j > RMSI_SUM_BLOCK) ? j + RMSI_SUM_BLOCK : c64;
        __m512 p0 = _mm512_setzero_ps(), p1 = p0, p2 = p0, p3 = p0;
        __m512 q0 = p0, q1 = p0, q2 = p0, q3 = p0;
        for (; j < end; j += 64) {
            if (pfx != NULL)
                rmsi_bwd_prefetch64(pfx, pfdy, c->xs, c->dys, j, sz);
            rmsi_bwd_step2(&k, a, b, nb, j, 0, 1, rsa, cma, rsb, t, wk, hw, &p0, &q0);
            rmsi_bwd_step2(&k, a, b, nb, j + 16, 0, 1, rsa, cma, rsb, t, wk, hw, &p1, &q1);
            rmsi_bwd_step2(&k, a, b, nb, j + 32, 0, 1, rsa, cma, rsb, t, wk, hw, &p2, &q2);
            rmsi_bwd_step2(&k, a, b, nb, j + 48, 0, 1, rsa, cma, rsb, t, wk, hw, &p3, &q3);
        }
        tot0 = _mm512_add_ps(tot0, _mm512_add_ps(_mm512_add_ps(p0, p1), _mm512_add_ps(p2, p3)));
        tot1 = _mm512_add_ps(tot1, _mm512_add_ps(_mm512_add_ps(q0, q1), _mm512_add_ps(q2, q3)));
    }
    for (; j + RMSI_VL <= c->cols; j += RMSI_VL)
        rmsi_bwd_step2(&k, a, b, nb, j, 0, 1, rsa, cma, rsb, t, wk, hw, &t40, &t41);
    if (j < c->cols)
        rmsi_bwd_step2(&k, a, b, nb, j, rmsi_vmask(c->cols - j), 0, rsa, cma, rsb, t, wk, hw, &t40, &t41);
    if (nb == 2) {
        dots[0] = rmsi_hsum(_mm512_add_ps(tot0, t40));
        dots[1] = rmsi_hsum(_mm512_add_ps(tot1, t41));
    }
}

/* 1 unless dx is streamed to rows that do not start on 64 bytes: the
 * pipelined sweeps have no alignment head. */
static inline int rmsi_bwd_dx_head_free(const rmsi_bwd_ctx *c)
{
    return !c->nt || ((uintptr_t)c->dx % 64u == 0u && c->dxs % 64u == 0u);
}

/* 1 when rmsi_bwd_rows_pipe may take a simple call's rows (the ordered
 * form). */
static inline int rmsi_bwd_pipe_ok(const rmsi_bwd_ctx *c)
{
    return rmsi_bwd_dx_head_free(c);
}

/* Rows [r0, r1) of a simple ordered-form call: row r's dx sweep with row
 * r + 1's dot (rmsi_bwd_pipe), row r0's dot a sweep of its own, rows across
 * dweight chunks each adding into its own chunk's partial, as the bf16
 * even/odd rows do (rmsi_bwd_rows_fused_eo). A recomputed rstd keeps its
 * own sweep. */
RMSI_INLINE void rmsi_bwd_rows_pipe(const rmsi_bwd_ctx *c, int64_t r0, int64_t r1, rmsnorm_dtype t, int wk,
                                    int hw)
{
    rmsi_bwd_row a, b;
    int64_t r;

    rmsi_bwd_row_at(c, r0, &a);
    __m512 rsa = _mm512_set1_ps(rmsi_bwd_rstd_of(c, r0, a.x, t, hw));
    __m512 cma = _mm512_set1_ps(rmsi_bwd_dot(c, &a, rsa, t, wk) / (float)c->cols);
    for (r = r0; r + 1 < r1; r++) {
        rmsi_bwd_row_at(c, r + 1, &b);
        const int pf = r + 2 < r1;
        const char *pfx = pf ? b.x + c->xs : NULL;
        const char *pfdy = pf ? b.dy + c->dys : NULL;
        const __m512 rsb = _mm512_set1_ps(rmsi_bwd_rstd_of(c, r + 1, b.x, t, hw));
        const float dot = rmsi_bwd_pipe(c, &a, &b, rsa, cma, rsb, pfx, pfdy, t, wk, hw);
        a = b;
        rsa = rsb;
        cma = _mm512_set1_ps(dot / (float)c->cols);
    }
    rmsi_bwd_out_range(c, &a, 0, c->cols, 0, rsa, cma, t, wk, hw, 1);
}

/* fp32 rows from this many columns go in pairs (rmsi_bwd_rows_pipe2). Hot,
 * one thread, 32 rows with dweight (docs/perf/cpu.md, session 42): 1024
 * columns 18% slower in pairs (a row's x, dy and partial stay in L1 either
 * way), 2048 level, 3072-8192 6-17% faster; f16 rows 3-5% slower at
 * 1024-8192 (their conversions, not L2, bound them): they stay single.
 * Streamed calls stay single too: the pairs' prefetch (rows after b, one
 * row ahead into L2) is the one rmsi_bwd_pf_step replaced. So do rows of
 * more than one sum segment: rmsi_bwd_pipe2 sums its dots as one. */
#define RMSI_BWD_PAIR_COLS 2048

static inline int rmsi_bwd_pairs_ok(const rmsi_bwd_ctx *c, rmsnorm_dtype t)
{
    return t == RMSNORM_F32 && c->cols >= RMSI_BWD_PAIR_COLS && c->cols <= RMSI_SEG_MIN && !c->nt;
}

/* 2 when rows r and r + 1 may go as a pair (both before r1, one chunk's
 * partial or none), else 1. */
static inline int rmsi_bwd_pair_n(const rmsi_bwd_ctx *c, int64_t r, int64_t r1)
{
    return r + 1 < r1 && (c->ws == NULL || (r + 1) % c->chunk_rows != 0) ? 2 : 1;
}

/* rmsi_bwd_rows_pipe in groups of two rows where rmsi_bwd_pair_n allows, else
 * one: group g's dx sweep with group g + 1's dots (rmsi_bwd_pipe2 for two
 * and two, rmsi_bwd_pipe for one and one; a change of group size takes a
 * dx sweep and dot sweeps of their own). Session 42: a hot fp32 row of 4096
 * moves its 16 KiB partial in and out of L2 once for two rows, and the
 * weights once for four. */
RMSI_INLINE void rmsi_bwd_rows_pipe2(const rmsi_bwd_ctx *c, int64_t r0, int64_t r1, rmsnorm_dtype t, int wk,
                                     int hw)
{
    rmsi_bwd_row a[2], b[2];
    __m512 rsa[2], cma[2], rsb[2];
    float dots[2];
    int na = rmsi_bwd_pair_n(c, r0, r1), nb, i;
    int64_t r;

    for (i = 0; i < na; i++) {
        rmsi_bwd_row_at(c, r0 + i, &a[i]);
        rsa[i] = _mm512_set1_ps(rmsi_bwd_rstd_of(c, r0 + i, a[i].x, t, hw));
        cma[i] = _mm512_set1_ps(rmsi_bwd_dot(c, &a[i], rsa[i], t, wk) / (float)c->cols);
    }
    for (r = r0 + na; r < r1; r += nb) {
        nb = rmsi_bwd_pair_n(c, r, r1);
        for (i = 0; i < nb; i++) {
            rmsi_bwd_row_at(c, r + i, &b[i]);
            rsb[i] = _mm512_set1_ps(rmsi_bwd_rstd_of(c, r + i, b[i].x, t, hw));
        }
        const int pf = r + nb + 1 < r1;
        const char *pfx = pf ? b[nb - 1].x + c->xs : NULL;
        const char *pfdy = pf ? b[nb - 1].dy + c->dys : NULL;
        if (na == 2 && nb == 2) {
            rmsi_bwd_pipe2(c, a, b, 2, rsa, cma, rsb, pfx, pfdy, t, wk, hw, dots);
        } else if (na == 1 && nb == 1) {
            dots[0] = rmsi_bwd_pipe(c, &a[0], &b[0], rsa[0], cma[0], rsb[0], pfx, pfdy, t, wk, hw);
        } else {
            if (na == 2)
                rmsi_bwd_pipe2(c, a, b, 0, rsa, cma, rsb, NULL, NULL, t, wk, hw, dots);
            else
                rmsi_bwd_out_range(c, &a[0], 0, c->cols, 0, rsa[0], cma[0], t, wk, hw, 1);
            for (i = 0; i < nb; i++)
                dots[i] = rmsi_bwd_dot(c, &b[i], rsb[i], t, wk);
        }
        for (i = 0; i < nb; i++) {
            a[i] = b[i];
            rsa[i] = rsb[i];
            cma[i] = _mm512_set1_ps(dots[i] / (float)c->cols);
        }
        na = nb;
    }
    if (na == 2)
        rmsi_bwd_pipe2(c, a, b, 0, rsa, cma, rsb, NULL, NULL, t, wk, hw, dots);
    else
        rmsi_bwd_out_range(c, &a[0], 0, c->cols, 0, rsa[0], cma[0], t, wk, hw, 1);
}

/*
 * The even/odd rows [r0, r1), software-pipelined: each sweep writes row r's
 * dx while it sums row r + 1's dot, so one sweep per row instead of two, and
 * memory sees one sequential read stream with the dx writes alongside, as
 * in the 2-reads-1-write probe. Row r0's dot is a sweep of its own. Rows may
 * cross dweight chunks (a thread's chunks are contiguous): each row adds into
 * its own chunk's partial, in row order, as rmsi_bwd_rows does.
 */
RMSI_INLINE void rmsi_bwd_rows_fused_eo(const rmsi_bwd_ctx *c, int64_t r0, int64_t r1, int wk,
                                        int hw, int one)
{
    _Alignas(64) float tab[RMSI_FWD_WT_COLS];
    const float *wt = NULL;
    rmsi_bwd_row a, b;
    int64_t r;

    /* w + weight_offset widened once, as the forward's hot sweeps do: four
     * vector operations less per 32 columns of each row */
    if (wk != RMSI_W_NONE && !c->nt && r1 - r0 >= RMSI_FWD_WT_ROWS && c->cols <= RMSI_FWD_WT_COLS)
        wt = rmsi_wtab_eo(c->w, wk, c->off, c->cols, tab);
    rmsi_bwd_row_at(c, r0, &a);
    __m512 rsa = _mm512_set1_ps(rmsi_bwd_rstd_of(c, r0, a.x, RMSNORM_BF16, hw));
    __m512 cma = _mm512_set1_ps(rmsi_bwd_dot_eo(c, &a, rsa, wk, one) / (float)c->cols);
    for (r = r0; r + 1 < r1; r++) {
        rmsi_bwd_row_at(c, r + 1, &b);
        const int pf = r + 2 < r1;
        const char *pfx = pf ? b.x + c->xs : NULL;
        const char *pfdy = pf ? b.dy + c->dys : NULL;
        const __m512 rsb = _mm512_set1_ps(rmsi_bwd_rstd_of(c, r + 1, b.x, RMSNORM_BF16, hw));
        const float dot = wt != NULL ? rmsi_bwd_fused_eo(c, &a, &b, rsa, cma, rsb, pfx, pfdy, wk, hw, wt, one)
                                     : rmsi_bwd_fused_eo(c, &a, &b, rsa, cma, rsb, pfx, pfdy, wk, hw, NULL, one);
        a = b;
        rsa = rsb;
        cma = _mm512_set1_ps(dot / (float)c->cols);
    }
    rmsi_bwd_out_range_eo(c, &a, 0, c->cols, c->nt, rsa, cma, wk, hw, c->eo_part, one);
}

/* 1 when a call's rows run through rmsi_bwd_rows_fused_eo: the simple bf16
 * calls, unless dx is streamed to rows that do not start on 64 bytes. */
static inline int rmsi_bwd_fused_ok(const rmsi_bwd_ctx *c, rmsnorm_dtype t, int simple)
{
    return rmsi_bwd_eo(t, simple) && rmsi_bwd_dx_head_free(c);
}

/* Items are rows (no dweight) or dweight chunks. simple != 0 (compile-time):
 * no dresidual and no ROUND_LLAMA. one: the fused sweep loads each vector
 * once (rmsi_bf16_load_eo1; picked for rows off a cache line). */
RMSI_INLINE void rmsi_bwd_items(const rmsi_bwd_ctx *c, int64_t i0, int64_t i1, rmsnorm_dtype t,
                                int wk, int hw, int simple, int one)
{
    const int fused = rmsi_bwd_fused_ok(c, t, simple);
    if (fused || (simple && rmsi_bwd_pipe_ok(c))) {
        /* the items' rows, chunk after chunk: rmsi_bwd_row_at finds each
         * row's partial */
        const int64_t r0 = c->ws == NULL ? i0 : i0 * c->chunk_rows;
        const int64_t e1 = c->ws == NULL ? i1 : i1 * c->chunk_rows;
        const int64_t r1 = e1 < c->rows ? e1 : c->rows;
        if (r0 < r1 && fused)
            rmsi_bwd_rows_fused_eo(c, r0, r1, wk, hw, one);
        else if (r0 < r1 && rmsi_bwd_pairs_ok(c, t))
            rmsi_bwd_rows_pipe2(c, r0, r1, t, wk, hw);
        else if (r0 < r1)
            rmsi_bwd_rows_pipe(c, r0, r1, t, wk, hw);
    } else if (c->ws == NULL) {
        rmsi_bwd_rows(c, i0, i1, NULL, t, wk, hw, simple);
    } else {
        int64_t k;
        for (k = i0; k < i1; k++) {
            const int64_t r0 = k * c->chunk_rows;
            const int64_t r1 = c->rows - r0 > c->chunk_rows ? r0 + c->chunk_rows : c->rows;
            rmsi_bwd_rows(c, r0, r1, c->ws + (size_t)k * (size_t)c->cols, t, wk, hw, simple);
        }
    }
    if (c->nt)
        _mm_sfence();
}

#endif /* RMSNORM_SIMD_BWD_ROWS_H */
