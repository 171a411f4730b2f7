/*
 * The AVX-512 forward of a call with fewer rows than threads whose rows are
 * wide (rmsi_simd_wide): each row's columns are split over the threads by
 * segment (simd/rowsum.h), since a split by rows would leave threads idle
 * (one row of 2^20 bf16 ran on one thread of two before session 40).
 *
 * Phases, every thread through each before any starts the next
 * (rmsi_simd_run_phases); a thread's items are whole segments, each over
 * every row of the call:
 *  0. each segment's sum of h_j^2 into the call's scratch (c->segv), and
 *     its h_out (a second sweep over the segment, from L1/L2), so that the
 *     later phases read h once instead of x and the residual;
 *  1. per row, by the thread of segment 0: the row's sum folded from the
 *     segment sums (rmsi_seg_total: the bits of rmsi_row_sumsq, so of one
 *     thread), rstd; a phase of its own because the tiny-sum rule of
 *     rmsi_row_sumsq_bf16_put may read the whole row again (h_out then, all
 *     of it stored by phase 0);
 *  2. each segment's y and q, as rmsi_fwd_rows stores a row, through a copy
 *     of the context shifted to the segment's columns; PER_TOKEN: the
 *     segment's max |v| only;
 *  3. PER_TOKEN: the row's scale from the segment maxima (a max: any order
 *     gives the same bits), then y and q.
 * Outputs aliasing inputs stay safe: a segment's stores touch only its own
 * columns, after its own reads of them; h_out over x or the residual is read
 * back as h, which has the bits x + residual would give.
 */
#ifndef RMSNORM_SIMD_FWD_WIDE_H
#define RMSNORM_SIMD_FWD_WIDE_H

#include "simd/fwd_rows.h"

/* Phases of a wide forward (above). */
static inline int rmsi_fwd_wide_phases(const rmsi_fwd_ctx *c)
{
    return c->quant == RMSNORM_QUANT_PER_TOKEN ? 4 : 3;
}

/* c narrowed to columns [j0, j1): every row pointer moved by j0, and the
 * PER_BLOCK_128 scales by j0 / 128 columns of their layout (j0 is a multiple
 * of 128). rows, strides, rstd and the row scales stay the call's. */
RMSI_INLINE void rmsi_fwd_sub(const rmsi_fwd_ctx *c, int64_t j0, int64_t j1, rmsnorm_dtype t, int wk,
                              rmsi_fwd_ctx *d)
{
    const size_t o = (size_t)j0 * rmsi_vsize(t);

    *d = *c;
    d->x = c->x + o;
    d->res = c->res != NULL ? c->res + o : NULL;
    d->h = c->h != NULL ? c->h + o : NULL;
    d->y = c->y != NULL ? c->y + o : NULL;
    d->q = c->q != NULL ? c->q + j0 : NULL;
    d->w = wk != RMSI_W_NONE ? c->w + (size_t)j0 * rmsi_vsize((rmsnorm_dtype)wk) : NULL;
    d->cols = j1 - j0;
    if (c->quant == RMSNORM_QUANT_PER_BLOCK_128 && c->scale != NULL)
        d->scale = c->scale + (size_t)(j0 / 128) * (size_t)c->rows4;
}

/* Row r's rstd from its segment sums (phase 1). */
RMSI_INLINE float rmsi_fwd_wide_rstd(const rmsi_fwd_ctx *c, int64_t r, rmsnorm_dtype t, int hw)
{
    const char *hr = c->h != NULL ? c->h + (size_t)r * c->hs : NULL;
    const char *xr = hr != NULL ? hr : c->x + (size_t)r * c->xs;
    const char *rr = hr == NULL && c->res != NULL ? c->res + (size_t)r * c->rs : NULL;
    const float ss = rmsi_sumsq_of_segs(c->segv + (size_t)r * (size_t)(c->nseg + 1), xr, rr, c->cols, t, hw);

    return rmsi_simd_rstd(ss, c->cols, c->eps);
}

/* Segment s of row r in phases 2 and 3; d: c narrowed to the segment. */
RMSI_INLINE void rmsi_fwd_wide_out(const rmsi_fwd_ctx *c, const rmsi_fwd_ctx *d, int phase, int64_t r,
                                   int64_t s, rmsnorm_dtype t, int wk, int hw, int simple)
{
    const int per_token = !simple && c->quant == RMSNORM_QUANT_PER_TOKEN;
    const size_t slots = (size_t)(c->nseg + 1);
    const __m512 rs = _mm512_set1_ps(c->rsv[r]);
    float qscale = 1.0f;
    rmsi_fwd_row w;
    char *hr;

    rmsi_fwd_row_at(d, r, 0, NULL, simple, &w, &hr);
    if (hr != NULL) { /* stored in phase 0 */
        w.hx = hr;
        w.hr = NULL;
    }
    if (per_token && phase == 2) {
        c->amx[(size_t)r * slots + (size_t)s] = rmsi_fwd_amax(d, &w, rs, t, wk, hw);
        return;
    }
    if (per_token) {
        const float *am = c->amx + (size_t)r * slots;
        float m = am[0];
        int64_t k;
        for (k = 1; k < c->nseg; k++)
            m = am[k] > m ? am[k] : m; /* no NaN: rmsi_fwd_amax drops them */
        qscale = rmsi_dynamic_scale(m, c->ub, c->fmax, c->pow2);
        if (s == 0)
            c->scale[r] = qscale;
    }
    rmsi_fwd_out(d, &w, r, rs, qscale, t, wk, hw, simple);
}

/* Phase `phase` of the segments [s0, s1), every row. */
RMSI_INLINE void rmsi_fwd_wide(const rmsi_fwd_ctx *c, int phase, int64_t s0, int64_t s1,
                               rmsnorm_dtype t, int wk, int hw, int simple)
{
    const int64_t seg = rmsi_seg_cols(c->cols);
    const int last = rmsi_fwd_wide_phases(c) - 1;
    int64_t s, r;

    for (s = s0; s < s1; s++) {
        const int64_t j0 = s * seg;
        const int64_t j1 = c->cols - j0 > seg ? j0 + seg : c->cols;
        rmsi_fwd_ctx d;
        rmsi_fwd_sub(c, j0, j1, t, wk, &d);
        for (r = 0; r < c->rows; r++) {
            if (phase == 0) {
                const char *xr = c->x + (size_t)r * c->xs;
                const char *rr = c->res != NULL ? c->res + (size_t)r * c->rs : NULL;
                rmsi_sumsq_seg_at(xr, rr, c->cols, s, t, hw, c->segv + (size_t)r * (size_t)(c->nseg + 1));
                if (c->h != NULL)
                    rmsi_fwd_store_h(&d, d.x + (size_t)r * d.xs, d.res + (size_t)r * d.rs,
                                     d.h + (size_t)r * d.hs, t, hw);
            } else if (phase == 1) {
                if (s != 0)
                    break;
                c->rsv[r] = rmsi_fwd_wide_rstd(c, r, t, hw);
                if (c->rstd != NULL)
                    c->rstd[r] = c->rsv[r];
            } else if (phase <= last) {
                rmsi_fwd_wide_out(c, &d, phase, r, s, t, wk, hw, simple);
            }
        }
    }
    if (c->nt || c->h_nt)
        _mm_sfence(); /* before the barrier: later phases and the caller read them */
}

#endif /* RMSNORM_SIMD_FWD_WIDE_H */
