/*
 * AVX-512 forward: argument unpacking, the choice of instantiation, streaming
 * and threading. The row kernel is simd/fwd_rows.h.
 *
 * Threads: rows are split into one contiguous range per thread (each thread's
 * reads stay one sequential stream for the hardware prefetcher), and only when
 * the call has at least RMSI_SIMD_PARALLEL_MIN elements (16 rows of 4096):
 * an OpenMP region costs 1.3-3.5 us here, more than a few hot rows take on
 * one core, less than half of 16 (simd/simd.h). A call of fewer rows than
 * threads splits each row's columns instead (simd/fwd_wide.h): one row of
 * 2^20 bf16 took 0.5x the time of one thread (docs/perf/cpu.md, session 40).
 */
#ifndef RMSNORM_SIMD_FILE
#define RMSNORM_SIMD_FILE 1
#endif

#include "internal.h"
#include "simd/fwd_wide.h"
#include "simd/simd.h"

/* Each (dtype, weight) pair in two forms: the general one, and the simple one
 * (rmsi_fwd_rows) the common calls take: no quantisation, no LLAMA; each
 * over rows and over a wide call's segments (simd/fwd_wide.h). */
#define FWD_INST(name, t, wk)                                                   \
    static void name(const void *c, int64_t r0, int64_t r1)                     \
    {                                                                           \
        rmsi_fwd_rows((const rmsi_fwd_ctx *)c, r0, r1, t, wk, 0, 0);            \
    }                                                                           \
    static void name##_s(const void *c, int64_t r0, int64_t r1)                 \
    {                                                                           \
        rmsi_fwd_rows((const rmsi_fwd_ctx *)c, r0, r1, t, wk, 0, 1);            \
    }                                                                           \
    static void name##_w(const void *c, int p, int64_t s0, int64_t s1)          \
    {                                                                           \
        rmsi_fwd_wide((const rmsi_fwd_ctx *)c, p, s0, s1, t, wk, 0, 0);         \
    }                                                                           \
    static void name##_s_w(const void *c, int p, int64_t s0, int64_t s1)         \
    {                                                                           \
        rmsi_fwd_wide((const rmsi_fwd_ctx *)c, p, s0, s1, t, wk, 0, 1);         \
    }

FWD_INST(fwd_f32_none, RMSNORM_F32, RMSI_W_NONE)
FWD_INST(fwd_f32_f32, RMSNORM_F32, RMSNORM_F32)
FWD_INST(fwd_f16_none, RMSNORM_F16, RMSI_W_NONE)
FWD_INST(fwd_f16_f32, RMSNORM_F16, RMSNORM_F32)
FWD_INST(fwd_f16_f16, RMSNORM_F16, RMSNORM_F16)
FWD_INST(fwd_bf16_none, RMSNORM_BF16, RMSI_W_NONE)
FWD_INST(fwd_bf16_f32, RMSNORM_BF16, RMSNORM_F32)
FWD_INST(fwd_bf16_bf16, RMSNORM_BF16, RMSNORM_BF16)

#define FWD_PICK(a) (simple ? (rmsi_kern){ a##_s, a##_s_w } : (rmsi_kern){ a, a##_w })

static rmsi_kern pick(rmsnorm_dtype t, const void *w, rmsnorm_dtype wt, int simple)
{
    const int wk = w == NULL ? RMSI_W_NONE : (int)wt;
    const int bf16hw = rmsi_avx512_has_bf16;

    switch (t) {
    case RMSNORM_F32:
        return wk == RMSI_W_NONE ? FWD_PICK(fwd_f32_none) : FWD_PICK(fwd_f32_f32);
    case RMSNORM_F16:
        return wk == RMSI_W_NONE   ? FWD_PICK(fwd_f16_none)
               : wk == RMSNORM_F32 ? FWD_PICK(fwd_f16_f32)
                                   : FWD_PICK(fwd_f16_f16);
    case RMSNORM_BF16:
        if (bf16hw)
            return rmsi_fwd_bf16hw_pick(wk, simple);
        return wk == RMSI_W_NONE   ? FWD_PICK(fwd_bf16_none)
               : wk == RMSNORM_F32 ? FWD_PICK(fwd_bf16_f32)
                                   : FWD_PICK(fwd_bf16_bf16);
    default:
        return (rmsi_kern){ NULL, NULL };
    }
}

/* A wide call (simd/fwd_wide.h), with its scratch in a frame of its own: 9
 * KiB that the other calls do not carry. */
static __attribute__((noinline)) void run_wide(rmsi_fwd_ctx *c, rmsi_phase_fn fn)
{
    _Alignas(64) __m512 segv[RMSI_WIDE_SLOTS];
    float amx[RMSI_WIDE_SLOTS];
    float rsv[RMSI_WIDE_SLOTS];

    c->segv = segv;
    c->amx = amx;
    c->rsv = rsv;
    rmsi_simd_run_phases(c->nseg, rmsi_fwd_wide_phases(c), fn, c);
    c->segv = NULL;
    c->amx = NULL;
    c->rsv = NULL;
}

/* Row stride in bytes of a matrix (0 for an absent one). */
static size_t stride_bytes(const rmsnorm_matrix *m)
{
    return m->data == NULL ? 0u : (size_t)m->row_stride * rmsi_vsize_dt(m->dtype);
}

static int same(const void *a, const void *b)
{
    return a != NULL && a == b;
}

rmsnorm_status rmsi_avx512_forward(const rmsnorm_forward_args *a, void *stream)
{
    rmsi_fwd_ctx c;
    const rmsnorm_dtype t = a->x.dtype;
    const int64_t rows = a->x.rows;
    const int64_t cols = a->x.cols;
    const int has_q = a->quant_mode != RMSNORM_QUANT_NONE && a->q.data != NULL;
    const int simple = !has_q && a->y.data != NULL && (a->flags & RMSNORM_ROUND_LLAMA) == 0u;
    const rmsi_kern fn = pick(t, a->weight, a->weight_dtype, simple);
    const int64_t nseg = rmsi_seg_count(cols);

    (void)stream;
    if (RMSI_NEVER(fn.rows == NULL || fn.wide == NULL))
        return RMSNORM_ERR_BAD_DTYPE;
    if (rows == 0)
        return RMSNORM_OK;

    c.x = (const char *)a->x.data;
    c.res = (const char *)a->residual.data;
    c.w = (const char *)a->weight;
    c.h = c.res != NULL ? (char *)a->h_out.data : NULL;
    c.y = (char *)a->y.data;
    c.q = has_q ? (uint8_t *)a->q.data : NULL;
    c.xs = stride_bytes(&a->x);
    c.rs = stride_bytes(&a->residual);
    c.hs = c.h != NULL ? stride_bytes(&a->h_out) : 0u;
    c.ys = stride_bytes(&a->y);
    c.qs = has_q ? (size_t)a->q.row_stride : 0u;
    c.rows = rows;
    c.cols = cols;
    c.rows4 = (rows + 3) / 4 * 4;
    c.off = a->weight != NULL ? a->weight_offset : 0.0f;
    c.eps = a->eps;
    c.ub = a->scale_ub;
    c.fmax = has_q ? rmsi_fp8_max(a->q.dtype) : 1.0f;
    c.rstd = a->rstd;
    c.scale = a->scale;
    c.quant = has_q ? a->quant_mode : RMSNORM_QUANT_NONE;
    c.qt = has_q ? a->q.dtype : RMSNORM_F8_E4M3;
    c.pow2 = (a->flags & RMSNORM_SCALE_POW2) != 0u;
    c.llama = (a->flags & RMSNORM_ROUND_LLAMA) != 0u;

    /* Bytes the call moves: x, residual, h, y, q. */
    const size_t sz = rmsi_vsize_dt(t);
    const size_t streams = (c.res != NULL ? 2u : 1u) + (c.h != NULL) + (c.y != NULL);
    const size_t bytes = (size_t)rows * (size_t)cols * (streams * sz + (c.q != NULL ? 1u : 0u));
    const int big = bytes >= RMSI_SIMD_NT_MIN;
    const int h_alias = same(c.h, c.x) || same(c.h, c.res);
    const int y_alias = same(c.y, c.x) || same(c.y, c.res);

    c.nt = big && c.quant != RMSNORM_QUANT_PER_BLOCK_128;
    if (h_alias && y_alias) {
        /* h must be stored before y overwrites its inputs, and read back after */
        c.h_first = 1;
        c.h_read = 1;
        c.h_nt = 0;
    } else if (h_alias) {
        /* y's sweep recomputes h from x + residual before h overwrites them */
        c.h_first = 0;
        c.h_read = 0;
        c.h_nt = big;
    } else {
        c.h_first = 1;
        c.h_nt = big;
        c.h_read = !c.h_nt; /* a plain-stored h is in cache: one stream instead of two */
    }

    c.segv = NULL;
    c.amx = NULL;
    c.rsv = NULL;
    c.nseg = nseg;
    if (rmsi_simd_wide(rows, cols, nseg, RMSI_WIDE_FWD_MIN_BYTES / (int64_t)sz))
        run_wide(&c, fn.wide);
    else
        rmsi_simd_run(rows, rmsi_simd_parallel(rows, cols), fn.rows, &c);
    return RMSNORM_OK;
}
