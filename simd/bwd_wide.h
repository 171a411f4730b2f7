/*
 * The AVX-512 backward of a call with fewer rows than threads whose rows are
 * wide (rmsi_simd_wide): each row's columns are split over the threads by
 * segment (simd/rowsum.h), as simd/fwd_wide.h does for the forward.
 *
 * Phases, every thread through each before any starts the next; a thread's
 * items are whole segments, each over every row of the call:
 *  0. (rstd not given) each segment's sum of x^2 (c->segv);
 *  1. every segment: its row's rstd, given or folded from the segment sums
 *     (rmsi_sumsq_of_segs: one thread's bits; every thread folds the same
 *     values, and segment 0's keeps it in c->rsv), then the segment's sum of
 *     g * n (c->dotv) in the order of rmsi_bwd_dot or rmsi_bwd_dot_eo;
 *  2. every segment, rows in order: c = (sum of g * n) / cols folded from
 *     the segment sums, dx of the segment's columns and its products into
 *     the row's dweight partial, so that each partial column still adds its
 *     rows in row order, in one thread. The partials stay in column order
 *     (no eo_part), so the reduction is the call's usual one.
 * dx may alias x or dy: it is stored in phase 2 only, a segment's columns by
 * the thread that alone reads them then.
 */
#ifndef RMSNORM_SIMD_BWD_WIDE_H
#define RMSNORM_SIMD_BWD_WIDE_H

#include "simd/bwd_rows.h"

#define RMSI_BWD_WIDE_PHASES 3

/* Phase 1 of segment s of row r (w: the row, whole). */
RMSI_INLINE void rmsi_bwd_wide_dot(const rmsi_bwd_ctx *c, const rmsi_bwd_row *w, int64_t r, int64_t s,
                                   rmsnorm_dtype t, int wk, int hw, int simple)
{
    const int eo = rmsi_bwd_eo(t, simple);
    const rmsi_bwd_k k = { c->w, _mm512_set1_ps(c->off), c->llama, 1 };
    const size_t slots = (size_t)(c->nseg + 1);
    const int64_t seg = rmsi_seg_cols(c->cols);
    const int64_t c64 = c->cols & ~(int64_t)63;
    const int64_t e = rmsi_seg_end(s, seg, c64);
    __m512 *dv = c->dotv + (size_t)r * slots;
    float rstd;

    if (c->rstd != NULL)
        rstd = c->rstd[r];
    else
        rstd = rmsi_simd_rstd(rmsi_sumsq_of_segs(c->segv + (size_t)r * slots, w->x, NULL, c->cols, t, hw),
                              c->cols, c->eps);
    if (s == 0)
        c->rsv[r] = rstd;
    const __m512 rs = _mm512_set1_ps(rstd);
    if (eo) {
        dv[s] = rmsi_bwd_dot_eo_seg(&k, w, s * seg, e, rs, wk);
        if (s == c->nseg - 1)
            dv[c->nseg] = rmsi_bwd_dot_eo_tail(&k, w, c64, c->cols, rs, wk);
    } else {
        dv[s] = rmsi_bwd_dot_seg(&k, w, s * seg, e, rs, t, wk);
        if (s == c->nseg - 1)
            dv[c->nseg] = rmsi_bwd_dot_tail(&k, w, c64, c->cols, rs, t, wk);
    }
}

/* Phase 2 of columns [j0, j1) of row r. */
RMSI_INLINE void rmsi_bwd_wide_dx(const rmsi_bwd_ctx *c, const rmsi_bwd_row *w, int64_t r, int64_t j0,
                                  int64_t j1, rmsnorm_dtype t, int wk, int hw, int simple)
{
    const int64_t seg = rmsi_seg_cols(c->cols);
    const float dot = rmsi_seg_total(c->dotv + (size_t)r * (size_t)(c->nseg + 1), c->nseg, seg,
                                     c->cols & ~(int64_t)63);

    rmsi_bwd_span(c, w, j0, j1, _mm512_set1_ps(c->rsv[r]), _mm512_set1_ps(dot / (float)c->cols), t, wk, hw,
                  simple);
}

/* Phase `phase` of the segments [s0, s1), every row. */
RMSI_INLINE void rmsi_bwd_wide(const rmsi_bwd_ctx *c, int phase, int64_t s0, int64_t s1,
                               rmsnorm_dtype t, int wk, int hw, int simple)
{
    const int64_t seg = rmsi_seg_cols(c->cols);
    int64_t s, r;

    if (phase == 0 && c->rstd != NULL)
        return;
    for (s = s0; s < s1; s++) {
        const int64_t j0 = s * seg;
        const int64_t j1 = c->cols - j0 > seg ? j0 + seg : c->cols;
        for (r = 0; r < c->rows; r++) {
            rmsi_bwd_row w;
            rmsi_bwd_row_at(c, r, &w);
            w.dres = (!simple && c->dres != NULL) ? c->dres + (size_t)r * c->drs : NULL;
            if (phase == 0)
                rmsi_sumsq_seg_at(w.x, NULL, c->cols, s, t, hw, c->segv + (size_t)r * (size_t)(c->nseg + 1));
            else if (phase == 1)
                rmsi_bwd_wide_dot(c, &w, r, s, t, wk, hw, simple);
            else
                rmsi_bwd_wide_dx(c, &w, r, j0, j1, t, wk, hw, simple);
        }
    }
    if (phase == 2 && c->nt)
        _mm_sfence(); /* before the barrier: the caller reads dx */
}

#endif /* RMSNORM_SIMD_BWD_WIDE_H */
