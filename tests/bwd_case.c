#include "tests/bwd_case.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ref/formats.h"
#include "tests/backends.h"
#include "tests/data.h"
#include "tests/oracle.h"
#include "tests/rng.h"

static const int64_t k_cols[] = {1, 2, 7, 8, 63, 64, 65, 128, 1025, 1152, 4096, 5120, 70000};
/* 16: one dweight chunk of more than a few rows, whose partial is dw itself
 * (the avx512 even/odd partials are put back in order by a pass of their own) */
static const int64_t k_rows[] = {0, 1, 3, 16, 257};
static const rmsnorm_dtype k_dtypes[] = {RMSNORM_F32, RMSNORM_F16, RMSNORM_BF16};
static const double k_magnitudes[] = {1e-3, 1.0, 1e3};
static const int64_t k_pads[] = {3, 0, 1, 16};

#define N_COLS (sizeof k_cols / sizeof k_cols[0])
#define N_ROWS (sizeof k_rows / sizeof k_rows[0])
#define N_SHAPES (N_COLS * N_ROWS)
#define N_VARIANTS 8u

/* Every weight mode and offset, both flags, rstd given / recomputed, the
 * residual gradient, dx in place over dy, dweight on and off. */
typedef struct bwd_variant {
    rmst_w_mode w;
    float offset;
    uint32_t flags;
    int rstd_given, dres, in_place, dw;
    float eps;
} bwd_variant;

static const bwd_variant k_variants[N_VARIANTS] = {
    {RMST_W_NONE, 0.0f, RMSNORM_ROUND_ONCE, 0, 0, 0, 0, 1e-6f},
    {RMST_W_F32, 0.0f, RMSNORM_ROUND_ONCE, 1, 1, 0, 1, 1e-6f},
    {RMST_W_SAME, 1.0f, RMSNORM_ROUND_LLAMA, 0, 0, 1, 1, 1e-6f},
    {RMST_W_SAME, 0.0f, RMSNORM_ROUND_LLAMA, 1, 1, 1, 1, 1e-5f},
    {RMST_W_F32, 1.0f, RMSNORM_ROUND_LLAMA, 1, 0, 0, 0, 1e-6f},
    {RMST_W_F32, 0.0f, RMSNORM_ROUND_ONCE, 0, 1, 0, 1, 1e-5f},
    {RMST_W_SAME, 0.0f, RMSNORM_ROUND_ONCE, 0, 0, 0, 1, 1e-6f},
    {RMST_W_NONE, 0.0f, RMSNORM_ROUND_LLAMA, 1, 1, 1, 0, 1e-6f},
};

/* Calls large enough for the host backends to stream dx (avx512: 24 MiB or
 * more), which the matrix above never makes: rows on 64 bytes take the
 * pipelined sweeps (simd/bwd_rows.h), rows off them the two-sweep rows with
 * an alignment head. Session 60 moved the aligned ordered-form rows (f32,
 * f16, bf16 with an fp32 weight) onto the pipelined sweep, session 61 those
 * of more than 16384 columns too; nothing checked either against the oracle
 * before. */
static const rmst_bwd_case k_streamed[] = {
    /* t, rows, cols, stride, weight, offset, flags, rstd given, dres, dx in place, dw, eps, magnitude */
    {RMSNORM_F32, 1100, 4096, 4096, RMST_W_F32, 0.0f, RMSNORM_ROUND_ONCE, 0, 0, 0, 1, 1e-6f, 1.0, 0},
    {RMSNORM_F32, 700, 4096, 4099, RMST_W_SAME, 1.0f, RMSNORM_ROUND_ONCE, 1, 0, 0, 1, 1e-6f, 1e3, 0},
    {RMSNORM_F16, 1100, 4100, 4128, RMST_W_SAME, 1.0f, RMSNORM_ROUND_ONCE, 1, 0, 1, 1, 1e-5f, 1.0, 0},
    {RMSNORM_BF16, 1100, 4096, 4096, RMST_W_F32, 0.0f, RMSNORM_ROUND_ONCE, 0, 0, 0, 1, 1e-6f, 1e-3, 0},
    {RMSNORM_BF16, 1100, 4130, 4160, RMST_W_SAME, 0.0f, RMSNORM_ROUND_ONCE, 1, 0, 0, 1, 1e-6f, 1.0, 0},
    /* rows of several sum segments (session 61: the pipelined sweeps for
     * them), on 64 bytes and off them */
    {RMSNORM_F32, 210, 32800, 32800, RMST_W_F32, 0.0f, RMSNORM_ROUND_ONCE, 0, 0, 0, 1, 1e-6f, 1.0, 0},
    {RMSNORM_F16, 400, 33000, 33024, RMST_W_NONE, 0.0f, RMSNORM_ROUND_ONCE, 1, 0, 1, 1, 1e-5f, 1e3, 0},
    {RMSNORM_F32, 200, 33000, 33003, RMST_W_SAME, 1.0f, RMSNORM_ROUND_ONCE, 1, 0, 0, 1, 1e-6f, 1e-3, 0},
    /* one dweight chunk of wide rows, on 64 bytes and off them (avx512:
     * column tiles that stream dx, simd/bwd_tiles.h, session 62) */
    {RMSNORM_F32, 16, 131072, 131075, RMST_W_SAME, 1.0f, RMSNORM_ROUND_ONCE, 0, 1, 0, 1, 1e-6f, 1.0, 0},
    {RMSNORM_BF16, 8, 524288, 524288, RMST_W_SAME, 0.0f, RMSNORM_ROUND_ONCE, 1, 0, 1, 1, 1e-6f, 1e-3, 0},
};

/* Calls of several dweight chunks that two threads cannot share evenly
 * (16 + 16 + 4 or 8 rows): avx512 cuts the chunks' columns into tiles
 * (simd/bwd_tiles.h, session 62), then reduces the chunks; the matrix's
 * tiled calls (16 rows, 3 x 70000) are of one chunk, so nothing else
 * checked that reduction against the oracle. */
static const rmst_bwd_case k_tiled[] = {
    {RMSNORM_F32, 40, 4096, 4099, RMST_W_F32, 0.0f, RMSNORM_ROUND_ONCE, 0, 1, 0, 1, 1e-6f, 1.0, 0},
    {RMSNORM_BF16, 40, 2100, 2112, RMST_W_SAME, 1.0f, RMSNORM_ROUND_LLAMA, 1, 0, 1, 1, 1e-5f, 1e3, 0},
    {RMSNORM_F16, 36, 2048, 2048, RMST_W_SAME, 0.0f, RMSNORM_ROUND_ONCE, 0, 0, 0, 1, 1e-6f, 1e-3, 0},
    {RMSNORM_BF16, 36, 4096, 4096, RMST_W_SAME, 0.0f, RMSNORM_ROUND_ONCE, 1, 0, 0, 1, 1e-6f, 1.0, 0},
};

/* Simple calls (no residual gradient, ROUND_ONCE) with an fp32 weight, which
 * the matrix's fp32-weight variants never make (each has dresidual or LLAMA).
 * Since session 65 avx512 runs the bf16 ones in even/odd form, the weight
 * split by permutes: through its per-thread weight table (4 rows or more of
 * at most 4096 columns, not streamed), tails of every length, rows off 64
 * bytes, a wide call, a tiled one, one chunk whose partial is dw, no dw. */
static const rmst_bwd_case k_simple_f32w[] = {
    {RMSNORM_BF16, 257, 1025, 1025, RMST_W_F32, 0.0f, RMSNORM_ROUND_ONCE, 0, 0, 0, 1, 1e-6f, 1.0, 0},
    {RMSNORM_BF16, 64, 4096, 4096, RMST_W_F32, 1.0f, RMSNORM_ROUND_ONCE, 1, 0, 1, 1, 1e-6f, 1e3, 0},
    {RMSNORM_BF16, 40, 2100, 2112, RMST_W_F32, 0.0f, RMSNORM_ROUND_ONCE, 1, 0, 0, 1, 1e-6f, 1e-3, 0},
    {RMSNORM_BF16, 16, 4113, 4130, RMST_W_F32, 1.0f, RMSNORM_ROUND_ONCE, 0, 0, 0, 1, 1e-5f, 1.0, 0},
    {RMSNORM_BF16, 1, 70000, 70000, RMST_W_F32, 0.0f, RMSNORM_ROUND_ONCE, 0, 0, 0, 1, 1e-6f, 1.0, 0},
    {RMSNORM_BF16, 33, 607, 640, RMST_W_F32, 0.0f, RMSNORM_ROUND_ONCE, 1, 0, 0, 0, 1e-6f, 1.0, 0},
    {RMSNORM_F16, 40, 1041, 1041, RMST_W_F32, 0.0f, RMSNORM_ROUND_ONCE, 0, 0, 0, 1, 1e-6f, 1.0, 0},
    {RMSNORM_F32, 40, 2100, 2100, RMST_W_F32, 1.0f, RMSNORM_ROUND_ONCE, 1, 0, 0, 1, 1e-6f, 1.0, 0},
};

#define N_MATRIX ((sizeof k_dtypes / sizeof k_dtypes[0]) * N_SHAPES * N_VARIANTS)
#define N_STREAMED (sizeof k_streamed / sizeof k_streamed[0])
#define N_TILED (sizeof k_tiled / sizeof k_tiled[0])
#define N_SIMPLE_F32W (sizeof k_simple_f32w / sizeof k_simple_f32w[0])
#define N_LISTED (N_STREAMED + N_TILED + N_SIMPLE_F32W)

size_t rmst_bwd_case_count(void)
{
    return N_MATRIX + N_LISTED;
}

/* Listed case k (after the matrix): streamed, tiled, then simple fp32-weight. */
static rmst_bwd_case listed(size_t k)
{
    if (k < N_STREAMED)
        return k_streamed[k];
    k -= N_STREAMED;
    return k < N_TILED ? k_tiled[k] : k_simple_f32w[k - N_TILED];
}

/* Pruning as for the forward: above 2^20 elements F32 runs three variants
 * and F16/BF16 one; 257 x 70000 runs for F32 only, with dweight (v1). */
static int pruned(size_t d, int64_t rows, int64_t cols, size_t v)
{
    int64_t elems = rows * cols;
    if (elems > (INT64_C(1) << 23))
        return !(d == 0 && v == 1);
    if (elems > (INT64_C(1) << 20))
        return d == 0 ? !(v == 1 || v == 2 || v == 5) : v != (d == 1 ? 3u : 5u);
    return 0;
}

int rmst_bwd_case_at(size_t i, rmst_bwd_case *c)
{
    if (i >= N_MATRIX) {
        if (i - N_MATRIX >= N_LISTED)
            return 0;
        *c = listed(i - N_MATRIX);
        c->seed = 0xbacc0000ull + (uint64_t)i;
        return 1;
    }
    size_t v = i % N_VARIANTS;
    size_t s = (i / N_VARIANTS) % N_SHAPES;
    size_t d = i / (N_VARIANTS * N_SHAPES);
    const bwd_variant *p = &k_variants[v];
    memset(c, 0, sizeof *c);
    if (d >= sizeof k_dtypes / sizeof k_dtypes[0])
        return 0;
    c->t = k_dtypes[d];
    c->cols = k_cols[s % N_COLS];
    c->rows = k_rows[s / N_COLS];
    c->stride = c->cols + k_pads[(s + v) % 4u];
    c->magnitude = k_magnitudes[(s + v) % 3u];
    c->seed = 0xbacc0000ull + (uint64_t)i;
    c->wmode = p->w;
    c->weight_offset = p->offset;
    c->flags = p->flags;
    c->rstd_given = p->rstd_given;
    c->dres = p->dres;
    c->dx_in_place = p->in_place;
    c->want_dw = p->dw;
    c->eps = p->eps;
    return !pruned(d, c->rows, c->cols, v);
}

void rmst_bwd_case_describe(const rmst_bwd_case *c, char *buf, size_t n)
{
    static const char *const wn[] = {"none", "f32", "same"};
    const char *tn = c->t == RMSNORM_F32 ? "f32" : c->t == RMSNORM_F16 ? "f16" : "bf16";
    (void)snprintf(buf, n,
                   "backward %s rows=%lld cols=%lld stride=%lld weight=%s offset=%g flags=%s "
                   "rstd=%s dresidual=%d dx-in-place=%d dweight=%d eps=%g magnitude=%g seed=%llu",
                   tn, (long long)c->rows, (long long)c->cols, (long long)c->stride, wn[c->wmode],
                   (double)c->weight_offset, (c->flags & RMSNORM_ROUND_LLAMA) != 0u ? "LLAMA" : "ONCE",
                   c->rstd_given ? "given" : "recomputed", c->dres, c->dx_in_place, c->want_dw,
                   (double)c->eps, c->magnitude, (unsigned long long)c->seed);
}

static void buf_off(rmst_buf *b)
{
    memset(b, 0, sizeof *b);
}

void rmst_bwd_run_init(rmst_bwd_run *run, const rmsnorm_backend *be, const rmst_bwd_case *c)
{
    rmst_rng rng = {c->seed};
    memset(run, 0, sizeof *run);
    run->be = be;
    run->c = *c;
    run->es = rmsnorm_dtype_size(c->t);
    assert_true(run->es == 2 || run->es == 4);
    run->mat_bytes = rmst_view_bytes(c->rows, c->cols, c->stride, run->es);
    run->wdt = c->wmode == RMST_W_F32 ? RMSNORM_F32 : c->t;
    run->x_img = rmst_alloc_filled(run->mat_bytes, 0xff);
    run->dy_img = rmst_alloc_filled(run->mat_bytes, 0xff);
    run->dres_img = c->dres ? rmst_alloc_filled(run->mat_bytes, 0xff) : NULL;
    for (int64_t r = 0; r < c->rows; r++) {
        size_t off = (size_t)(r * c->stride) * run->es;
        /* the last of 16 or 257 rows gets dy = 0: its dx must be exactly dres (or 0) */
        rmst_row_kind dyk = (r == c->rows - 1 && r >= 3) ? RMST_ROW_ZERO : RMST_ROW_RANDOM;
        rmst_gen_row(&rng, c->t, rmst_row_kind_of(r, c->rows), c->magnitude, run->x_img + off, c->cols);
        rmst_gen_row(&rng, c->t, dyk, 1.0, run->dy_img + off, c->cols);
        if (c->dres)
            rmst_gen_row(&rng, c->t, RMST_ROW_RANDOM, 1.0, run->dres_img + off, c->cols);
    }
    buf_off(&run->dres);
    buf_off(&run->dx);
    buf_off(&run->w);
    buf_off(&run->rstd);
    buf_off(&run->dw);
    buf_off(&run->ws);
    rmst_buf_init(&run->x, be, run->mat_bytes);
    rmst_buf_init(&run->dy, be, run->mat_bytes);
    if (c->dres)
        rmst_buf_init(&run->dres, be, run->mat_bytes);
    if (c->dx_in_place) {
        run->dxb = &run->dy;
    } else {
        rmst_buf_init(&run->dx, be, run->mat_bytes);
        run->dxb = &run->dx;
    }
    if (c->wmode != RMST_W_NONE) {
        rmst_buf_init(&run->w, be, (size_t)c->cols * rmsnorm_dtype_size(run->wdt));
        rmst_gen_weight(&rng, run->wdt, run->w.host, c->cols);
    }
    if (c->rstd_given) {
        rmst_buf_init(&run->rstd, be, (size_t)c->rows * sizeof(float));
        run->rstd_img = (float *)(void *)rmst_alloc_filled((size_t)c->rows * sizeof(float), 0);
        for (int64_t r = 0; r < c->rows; r++) {
            const unsigned char *xr = run->x_img + (size_t)(r * c->stride) * run->es;
            double ss = 0.0;
            for (int64_t j = 0; j < c->cols; j++) {
                double xv = rmst_load(xr, c->t, (size_t)j);
                ss += xv * xv;
            }
            run->rstd_img[r] = (float)(1.0 / sqrt(ss / (double)c->cols + (double)c->eps));
        }
        if (c->rows > 0)
            memcpy(run->rstd.host, run->rstd_img, (size_t)c->rows * sizeof(float));
    }
    if (c->want_dw && c->wmode != RMST_W_NONE) {
        rmst_buf_init(&run->dw, be, (size_t)c->cols * sizeof(float));
        assert_int_equal(rmsnorm_backward_workspace_size(be, c->rows, c->cols, &run->ws_bytes),
                         RMSNORM_OK);
        rmst_buf_init(&run->ws, be, run->ws_bytes);
    }
}

static void load_image(rmst_buf *b, const unsigned char *img, size_t bytes)
{
    rmst_buf_fill(b, 0xff);
    if (bytes > 0)
        memcpy(b->host, img, bytes);
    rmst_buf_upload(b);
}

rmsnorm_status rmst_bwd_run_exec(rmst_bwd_run *run, int pass)
{
    const rmst_bwd_case *c = &run->c;
    rmsnorm_backward_args a;
    rmsnorm_status st;
    unsigned char pt = rmst_poison_byte(c->t, pass);
    load_image(&run->x, run->x_img, run->mat_bytes);
    load_image(&run->dy, run->dy_img, run->mat_bytes);
    if (run->dres.host != NULL)
        load_image(&run->dres, run->dres_img, run->mat_bytes);
    run->pad_dx = c->dx_in_place ? 0xff : pt;
    run->pad_dw = rmst_poison_byte(RMSNORM_F32, pass);
    if (run->dx.host != NULL) {
        rmst_buf_fill(&run->dx, pt);
        rmst_buf_upload(&run->dx);
    }
    if (run->w.host != NULL)
        rmst_buf_upload(&run->w);
    if (run->rstd.host != NULL)
        rmst_buf_upload(&run->rstd);
    if (run->dw.host != NULL) {
        rmst_buf_fill(&run->dw, run->pad_dw);
        rmst_buf_upload(&run->dw);
        /* a backend must not depend on what the workspace held */
        rmst_buf_fill(&run->ws, 0xff);
        rmst_buf_upload(&run->ws);
    }
    memset(&a, 0, sizeof a);
    a.struct_size = sizeof a;
    a.dy = (rmsnorm_matrix){run->dy.mem, c->t, c->rows, c->cols, c->stride};
    a.x = (rmsnorm_matrix){run->x.mem, c->t, c->rows, c->cols, c->stride};
    a.weight = run->w.mem;
    a.weight_dtype = run->wdt;
    a.weight_offset = c->weight_offset;
    a.rstd = (const float *)run->rstd.mem;
    a.eps = c->eps;
    a.flags = c->flags;
    a.dx = (rmsnorm_matrix){run->dxb->mem, c->t, c->rows, c->cols, c->stride};
    if (run->dres.host != NULL)
        a.dresidual = (rmsnorm_matrix){run->dres.mem, c->t, c->rows, c->cols, c->stride};
    a.dweight = (float *)run->dw.mem;
    a.workspace = run->ws.mem;
    a.workspace_bytes = run->ws_bytes;
    st = rmsnorm_backward(run->be, &a, NULL);
    if (st != RMSNORM_OK)
        return st;
    rmst_buf_download(run->dxb);
    if (run->dw.host != NULL)
        rmst_buf_download(&run->dw);
    return RMSNORM_OK;
}

void rmst_bwd_run_free(rmst_bwd_run *run)
{
    rmst_buf *all[] = {&run->x, &run->dy, &run->dres, &run->dx, &run->w, &run->rstd, &run->dw, &run->ws};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        if (all[i]->host != NULL)
            rmst_buf_free(all[i]);
    free(run->x_img);
    free(run->dy_img);
    free(run->dres_img);
    free(run->rstd_img);
}
