/*
 * The AVX-512 backward of a call whose dweight chunks would leave threads
 * idle (rmsi_bwd_ctx.tiles): fewer chunks than threads, or chunks that
 * split unevenly over them (rmsi_simd_uneven says when). A chunk's rows
 * must add their products into each partial column in row order, so a
 * thread that owns a chunk owns all its rows: 16 rows of 8192 ran on one
 * thread of two before, as fast as on one thread alone. Here each chunk's
 * columns are cut into one tile per thread instead, and the threads share
 * out (chunk, tile) parts.
 *
 * Phases (rmsi_simd_run_phases over nchunks * tiles parts; each thread has
 * nchunks of them, so both phases split evenly):
 *  0. the parts' share of the rows, whole rows: rstd into c->rsv and
 *     (sum of g * n) / cols into c->cmv (rmsi_bwd_row_coefs);
 *  1. part p, chunk p / tiles, columns of tile p % tiles: dx and the
 *     products into the chunk's partial, the chunk's rows in order.
 * Every bit is the two-sweep row's (rmsi_bwd_row_run): the same dot over
 * the whole row, the same elementwise dx, the same partial adds in the same
 * row order; the partials stay in column order (no eo_part).
 * A thread's phase-0 rows are mostly rows of the chunks of its phase-1
 * parts, so part of phase 1 reads what the same core read in phase 0.
 * Phase 1 reads x and dy again: from a thread's L2 when they fit it, else
 * from further out, which still paid wherever one thread would otherwise
 * have taken twice its share (rmsi_simd_uneven): streamed 16x262144 bf16
 * and 16x131072 f32 on two threads 30-45% faster (docs/perf/cpu.md,
 * session 62). Streamed calls store dx non-temporally from each tile row's
 * first 64-byte boundary (rmsi_bwd_span).
 * dx may alias x or dy: phase 0 only reads; in phase 1 a tile's columns of
 * a row are read and then stored by the one thread that owns the tile.
 */
#ifndef RMSNORM_SIMD_BWD_TILES_H
#define RMSNORM_SIMD_BWD_TILES_H

#include "simd/bwd_wide.h"

#define RMSI_BWD_TILED_PHASES 2

/* Most rows a tiled call keeps rsv and cmv for on the stack (8 KiB): chunks
 * are 16 rows up to 1024 rows, so this covers every call with fewer than 64
 * chunks. */
#define RMSI_BWD_TILED_ROWS 1024

/* The first column of tile t of n (64-column steps; tile n starts at cols). */
static inline int64_t rmsi_bwd_tile_col(int64_t t, int64_t n, int64_t cols)
{
    return t >= n ? cols : (t * cols / n) & ~(int64_t)63;
}

RMSI_INLINE void rmsi_bwd_tiled(const rmsi_bwd_ctx *c, int phase, int64_t i0, int64_t i1,
                                rmsnorm_dtype t, int wk, int hw, int simple)
{
    const int64_t np = c->nchunks * c->tiles;
    rmsi_bwd_row w;
    int64_t p, r;

    if (phase == 0) {
        for (r = i0 * c->rows / np; r < i1 * c->rows / np; r++) {
            rmsi_bwd_row_at(c, r, &w);
            c->rsv[r] = rmsi_bwd_row_coefs(c, r, &w, t, wk, hw, simple, &c->cmv[r]);
        }
        return;
    }
    for (p = i0; p < i1; p++) {
        const int64_t k = p / c->tiles;
        const int64_t j0 = rmsi_bwd_tile_col(p % c->tiles, c->tiles, c->cols);
        const int64_t j1 = rmsi_bwd_tile_col(p % c->tiles + 1, c->tiles, c->cols);
        const int64_t r1 = c->rows - k * c->chunk_rows > c->chunk_rows ? (k + 1) * c->chunk_rows : c->rows;
        for (r = k * c->chunk_rows; j0 < j1 && r < r1; r++) {
            rmsi_bwd_row_at(c, r, &w);
            w.dres = (!simple && c->dres != NULL) ? c->dres + (size_t)r * c->drs : NULL;
            rmsi_bwd_span(c, &w, j0, j1, _mm512_set1_ps(c->rsv[r]), _mm512_set1_ps(c->cmv[r]), t, wk, hw, simple);
        }
    }
    if (c->nt)
        _mm_sfence(); /* before the region ends: the caller reads dx */
}

/* A phased call's phase: tiled (c->tiles) or wide. */
RMSI_INLINE void rmsi_bwd_phase(const rmsi_bwd_ctx *c, int phase, int64_t i0, int64_t i1,
                                rmsnorm_dtype t, int wk, int hw, int simple)
{
    if (c->tiles > 0)
        rmsi_bwd_tiled(c, phase, i0, i1, t, wk, hw, simple);
    else
        rmsi_bwd_wide(c, phase, i0, i1, t, wk, hw, simple);
}

#endif /* RMSNORM_SIMD_BWD_TILES_H */
