/*
 * AVX-512 backward: argument unpacking, the choice of instantiation, the
 * dweight chunks and their fixed-order reduction. The row kernel is
 * simd/bwd_rows.h.
 *
 * dweight: rows are cut into chunks of max(16, ceil(rows / 64)) rows (at most
 * 64 chunks); chunk k sums its rows, in row order, into workspace row k; then
 * dw[j] = ((part0[j] + part1[j]) + part2[j]) + ... in chunk order. Which thread
 * runs a chunk never changes a bit, so dw is identical across runs and thread
 * counts. Threads take contiguous ranges of chunks (rows without dweight),
 * or, in a call of fewer rows than threads, of column segments
 * (simd/bwd_wide.h), or, when whole chunks would leave threads idle, of
 * (chunk, column tile) parts (simd/bwd_tiles.h). When every thread has as
 * many rows, the reduction's column blocks follow the chunks in the same
 * OpenMP region, split over its threads (rmsi_simd_run_then).
 * The simple bf16 calls' fused sweep keeps a partial's full 32-column blocks
 * in even/odd form (rmsi_bwd_ctx.eo_part); the reduction, or one pass when
 * the partial is dw itself, stores them back in column order.
 */
#ifndef RMSNORM_SIMD_FILE
#define RMSNORM_SIMD_FILE 1
#endif

#include "internal.h"
#include "simd/bwd_tiles.h"
#include "simd/simd.h"

/* Each (dtype, weight) pair in the general form and the simple one
 * (rmsi_bwd_items: no dresidual, no ROUND_LLAMA), each over chunks or rows
 * and over a phased call (simd/bwd_tiles.h: wide or tiled); bf16's simple
 * form also with one load a vector (_s1, for rows off a cache line). */
#define BWD_INST(name, t, wk)                                                   \
    static void name(const void *c, int64_t i0, int64_t i1)                     \
    {                                                                           \
        rmsi_bwd_items((const rmsi_bwd_ctx *)c, i0, i1, t, wk, 0, 0, 0);        \
    }                                                                           \
    static void name##_s(const void *c, int64_t i0, int64_t i1)                 \
    {                                                                           \
        rmsi_bwd_items((const rmsi_bwd_ctx *)c, i0, i1, t, wk, 0, 1, 0);        \
    }                                                                           \
    static void name##_w(const void *c, int p, int64_t s0, int64_t s1)          \
    {                                                                           \
        rmsi_bwd_phase((const rmsi_bwd_ctx *)c, p, s0, s1, t, wk, 0, 0);        \
    }                                                                           \
    static void name##_s_w(const void *c, int p, int64_t s0, int64_t s1)        \
    {                                                                           \
        rmsi_bwd_phase((const rmsi_bwd_ctx *)c, p, s0, s1, t, wk, 0, 1);        \
    }
#define BWD_INST1(name, wk)                                                     \
    static void name##_s1(const void *c, int64_t i0, int64_t i1)                \
    {                                                                           \
        rmsi_bwd_items((const rmsi_bwd_ctx *)c, i0, i1, RMSNORM_BF16, wk, 0, 1, 1); \
    }

BWD_INST(bwd_f32_none, RMSNORM_F32, RMSI_W_NONE)
BWD_INST(bwd_f32_f32, RMSNORM_F32, RMSNORM_F32)
BWD_INST(bwd_f16_none, RMSNORM_F16, RMSI_W_NONE)
BWD_INST(bwd_f16_f32, RMSNORM_F16, RMSNORM_F32)
BWD_INST(bwd_f16_f16, RMSNORM_F16, RMSNORM_F16)
BWD_INST(bwd_bf16_none, RMSNORM_BF16, RMSI_W_NONE)
BWD_INST(bwd_bf16_f32, RMSNORM_BF16, RMSNORM_F32)
BWD_INST(bwd_bf16_bf16, RMSNORM_BF16, RMSNORM_BF16)
BWD_INST1(bwd_bf16_none, RMSI_W_NONE)
BWD_INST1(bwd_bf16_f32, RMSNORM_F32)
BWD_INST1(bwd_bf16_bf16, RMSNORM_BF16)

#define BWD_PICK(a) (simple ? (rmsi_kern){ a##_s, a##_s_w } : (rmsi_kern){ a, a##_w })
#define BWD_PICK1(a)                                                            \
    (simple ? (rmsi_kern){ one ? a##_s1 : a##_s, a##_s_w } : (rmsi_kern){ a, a##_w })

static rmsi_kern pick(rmsnorm_dtype t, const void *w, rmsnorm_dtype wt, int simple, int one)
{
    const int wk = w == NULL ? RMSI_W_NONE : (int)wt;

    switch (t) {
    case RMSNORM_F32:
        return wk == RMSI_W_NONE ? BWD_PICK(bwd_f32_none) : BWD_PICK(bwd_f32_f32);
    case RMSNORM_F16:
        return wk == RMSI_W_NONE   ? BWD_PICK(bwd_f16_none)
               : wk == RMSNORM_F32 ? BWD_PICK(bwd_f16_f32)
                                   : BWD_PICK(bwd_f16_f16);
    case RMSNORM_BF16:
        if (rmsi_avx512_has_bf16)
            return rmsi_bwd_bf16hw_pick(wk, simple, one);
        return wk == RMSI_W_NONE   ? BWD_PICK1(bwd_bf16_none)
               : wk == RMSNORM_F32 ? BWD_PICK1(bwd_bf16_f32)
                                   : BWD_PICK1(bwd_bf16_bf16);
    default:
        return (rmsi_kern){ NULL, NULL };
    }
}

int64_t rmsi_avx512_dw_chunks(int64_t rows, int64_t *chunk_rows)
{
    int64_t cr = (rows + 63) / 64;

    if (cr < 16)
        cr = 16;
    *chunk_rows = cr;
    return rows == 0 ? 0 : (rows + cr - 1) / cr;
}

rmsnorm_status rmsi_avx512_backward_workspace_size(int64_t rows, int64_t cols, size_t *bytes)
{
    int64_t cr;
    const int64_t n = rmsi_avx512_dw_chunks(rows, &cr);

    if (RMSI_NEVER(bytes == NULL))
        return RMSNORM_ERR_NULL_POINTER;
    if (n > 0 && (uint64_t)cols > SIZE_MAX / sizeof(float) / (uint64_t)n)
        return RMSNORM_ERR_BAD_SHAPE;
    *bytes = (size_t)n * (size_t)cols * sizeof(float);
    return RMSNORM_OK;
}

/* dw over columns [b0 * RED_COLS, b1 * RED_COLS): the in-order chunk sum. */
#define RED_COLS 1024

typedef struct red_ctx {
    const float *ws;
    float *dw;
    int64_t cols, nchunks;
    int eo; /* full 32-column blocks of the partials in even/odd form */
} red_ctx;

/* Two sums of 16 partial columns stored in column order: as they are, or as
 * the even and odd halves of a 32-column block. */
static void store_pair(float *dw, __m512 a, __m512 b, int eo)
{
    if (eo)
        rmsi_eo_interleave(a, b, &a, &b);
    _mm512_storeu_ps(dw, a);
    _mm512_storeu_ps(dw + 16, b);
}

static void reduce_cols(const void *vc, int64_t b0, int64_t b1)
{
    const red_ctx *c = (const red_ctx *)vc;
    const int64_t j1 = b1 * RED_COLS < c->cols ? b1 * RED_COLS : c->cols;
    const size_t cs = (size_t)c->cols;
    int64_t j = b0 * RED_COLS, k;

    /* 64 columns per step: four independent add chains and no masks (masked
     * stores and one dependent chain made this 28% of a one-row bf16 call) */
    for (; j + (int64_t)4 * RMSI_VL <= j1; j += (int64_t)4 * RMSI_VL) {
        __m512 s0 = _mm512_setzero_ps(), s1 = s0, s2 = s0, s3 = s0;
        for (k = 0; k < c->nchunks; k++) {
            const float *p = c->ws + (size_t)k * cs + j;
            s0 = _mm512_add_ps(s0, _mm512_loadu_ps(p));
            s1 = _mm512_add_ps(s1, _mm512_loadu_ps(p + 16));
            s2 = _mm512_add_ps(s2, _mm512_loadu_ps(p + 32));
            s3 = _mm512_add_ps(s3, _mm512_loadu_ps(p + 48));
        }
        store_pair(c->dw + j, s0, s1, c->eo);
        store_pair(c->dw + j + 32, s2, s3, c->eo);
    }
    /* j is a multiple of 32 here: one more full block, then the short last
     * block (column order) */
    if (j + (int64_t)2 * RMSI_VL <= j1) {
        __m512 s0 = _mm512_setzero_ps(), s1 = s0;
        for (k = 0; k < c->nchunks; k++) {
            const float *p = c->ws + (size_t)k * cs + j;
            s0 = _mm512_add_ps(s0, _mm512_loadu_ps(p));
            s1 = _mm512_add_ps(s1, _mm512_loadu_ps(p + 16));
        }
        store_pair(c->dw + j, s0, s1, c->eo);
        j += (int64_t)2 * RMSI_VL;
    }
    for (; j < j1; j += RMSI_VL) {
        const __mmask16 m = j1 - j >= RMSI_VL ? (__mmask16)0xffff : rmsi_vmask(j1 - j);
        __m512 s = _mm512_setzero_ps();
        for (k = 0; k < c->nchunks; k++)
            s = _mm512_add_ps(s, _mm512_maskz_loadu_ps(m, c->ws + (size_t)k * cs + j));
        _mm512_mask_storeu_ps(c->dw + j, m, s);
    }
}

/* One chunk whose partial is dw itself: its full blocks back in column order. */
static void eo_to_cols(float *dw, int64_t cols)
{
    int64_t j;

    for (j = 0; j + (int64_t)2 * RMSI_VL <= cols; j += (int64_t)2 * RMSI_VL)
        store_pair(dw + j, _mm512_loadu_ps(dw + j), _mm512_loadu_ps(dw + j + 16), 1);
}

/* A wide call (simd/bwd_wide.h), with its scratch in a frame of its own: 16
 * KiB that the other calls do not carry. */
static __attribute__((noinline)) void run_wide(rmsi_bwd_ctx *c, rmsi_phase_fn fn)
{
    _Alignas(64) __m512 segv[RMSI_WIDE_SLOTS];
    _Alignas(64) __m512 dotv[RMSI_WIDE_SLOTS];
    float rsv[RMSI_WIDE_SLOTS];

    c->segv = segv;
    c->dotv = dotv;
    c->rsv = rsv;
    rmsi_simd_run_phases(c->nseg, RMSI_BWD_WIDE_PHASES, fn, c);
    c->segv = NULL;
    c->dotv = NULL;
    c->rsv = NULL;
}

/* A tiled call (simd/bwd_tiles.h), with its per-row scratch in a frame of
 * its own (8 KiB). */
static __attribute__((noinline)) void run_tiled(rmsi_bwd_ctx *c, rmsi_phase_fn fn)
{
    float rsv[RMSI_BWD_TILED_ROWS];
    float cmv[RMSI_BWD_TILED_ROWS];

    c->rsv = rsv;
    c->cmv = cmv;
    rmsi_simd_run_phases(c->nchunks * c->tiles, RMSI_BWD_TILED_PHASES, fn, c);
    c->rsv = NULL;
    c->cmv = NULL;
}

static size_t stride_bytes(const rmsnorm_matrix *m)
{
    return m->data == NULL ? 0u : (size_t)m->row_stride * rmsi_vsize_dt(m->dtype);
}

rmsnorm_status rmsi_avx512_backward(const rmsnorm_backward_args *a, void *stream)
{
    rmsi_bwd_ctx c;
    const rmsnorm_dtype t = a->x.dtype;
    const int64_t rows = a->x.rows;
    const int64_t cols = a->x.cols;
    const int simple = a->dresidual.data == NULL && (a->flags & RMSNORM_ROUND_LLAMA) == 0u;
    /* dy or x rows off a cache line: the fused bf16 sweep loads each vector
     * once (rmsi_bf16_load_eo1) */
    const int one = (((uintptr_t)a->x.data | (uintptr_t)a->dy.data | (uintptr_t)stride_bytes(&a->x) |
                      (uintptr_t)stride_bytes(&a->dy)) & 63u) != 0u;
    const rmsi_kern fn = pick(t, a->weight, a->weight_dtype, simple, one);
    const int want_dw = a->dweight != NULL;
    const int64_t nseg = rmsi_seg_count(cols);
    int64_t nchunks = 0;

    (void)stream;
    if (RMSI_NEVER(fn.rows == NULL || fn.wide == NULL))
        return RMSNORM_ERR_BAD_DTYPE;
    if (rows == 0) {
        if (want_dw) {
            int64_t j;
            for (j = 0; j < cols; j++)
                a->dweight[j] = 0.0f;
        }
        return RMSNORM_OK;
    }

    c.dy = (const char *)a->dy.data;
    c.x = (const char *)a->x.data;
    c.w = (const char *)a->weight;
    c.dres = (const char *)a->dresidual.data;
    c.dx = (char *)a->dx.data;
    c.dys = stride_bytes(&a->dy);
    c.xs = stride_bytes(&a->x);
    c.dxs = stride_bytes(&a->dx);
    c.drs = stride_bytes(&a->dresidual);
    c.rstd = a->rstd;
    c.rows = rows;
    c.cols = cols;
    c.eps = a->eps;
    c.off = a->weight != NULL ? a->weight_offset : 0.0f;
    c.llama = (a->flags & RMSNORM_ROUND_LLAMA) != 0u;
    c.ws = NULL;
    c.dw = a->dweight;
    c.chunk_rows = rows;
    if (want_dw) {
        nchunks = rmsi_avx512_dw_chunks(rows, &c.chunk_rows);
        /* One chunk (rows <= 16): its partial row is dw itself. The reduction
         * would only add it to +0, which changes no bit: a partial starts as
         * +0 + p, and an fp32 sum that starts at +0 is never -0. This saves a
         * pass over cols, a fifth of a hot one-row call. */
        c.ws = nchunks == 1 ? a->dweight : (float *)a->workspace;
        if (RMSI_NEVER(c.ws == NULL))
            return RMSNORM_ERR_WORKSPACE_TOO_SMALL;
    }
    const size_t streams = 3u + (c.dres != NULL);
    const size_t bytes = (size_t)rows * (size_t)cols * streams * rmsi_vsize_dt(t);
    c.nt = bytes >= RMSI_SIMD_NT_MIN;
    c.far_pf = rmsi_avx512_bwd_far_pf && c.nt; /* hot wide rows lost 3-17% with it */
    c.segv = NULL;
    c.dotv = NULL;
    c.rsv = NULL;
    c.cmv = NULL;
    c.nseg = nseg;
    c.nchunks = nchunks;
    c.tiles = 0;
    const int wide = rmsi_simd_wide(rows, cols, nseg, RMSI_SIMD_PARALLEL_MIN);
    const int par = rmsi_simd_parallel(rows, cols);
    if (want_dw && !wide && par && rows <= RMSI_BWD_TILED_ROWS)
        c.tiles = rmsi_simd_uneven(rows, c.chunk_rows, bytes / streams * (streams - 1u));
    /* The fused even/odd sweep's partials in even/odd form (16 even columns of
     * a full 32-column block, then its 16 odd ones): each row's products are
     * added with no permutes back to column order. The reduction restores the
     * order for free; one chunk, whose partial is dw, takes a pass of its
     * own, which pays from 4 rows (docs/perf/cpu.md). The wide and tiled
     * sweeps keep the partials in column order. */
    c.eo_part = want_dw && !wide && c.tiles == 0 && (nchunks > 1 || rows >= 4) &&
                rmsi_bwd_fused_ok(&c, t, simple);

    red_ctx rc;
    rc.ws = c.ws;
    rc.dw = a->dweight;
    rc.cols = cols;
    rc.nchunks = nchunks;
    rc.eo = c.eo_part;
    const int64_t nred = (cols + RED_COLS - 1) / RED_COLS;
    const int reduce = want_dw && nchunks > 1;
    if (reduce && !wide && c.tiles == 0 && rows % c.chunk_rows == 0 && rmsi_simd_even(nchunks)) {
        /* as many rows a thread. Otherwise the thread that the others wait
         * for, with the most rows, would also own again the lines of its
         * partial that another thread read (20x4096 bf16: 19 -> 20.5 us);
         * one thread reduces after the region, as before. */
        rmsi_simd_run_then(nchunks, fn.rows, &c, nred, reduce_cols, &rc, par);
    } else {
        if (wide)
            run_wide(&c, fn.wide);
        else if (c.tiles > 0)
            run_tiled(&c, fn.wide);
        else
            rmsi_simd_run(want_dw ? nchunks : rows, par, fn.rows, &c);
        if (reduce)
            rmsi_simd_run(nred, rmsi_simd_parallel(nchunks, cols), reduce_cols, &rc);
    }
    if (c.eo_part && nchunks == 1)
        eo_to_cols(a->dweight, cols);
    return RMSNORM_OK;
}
