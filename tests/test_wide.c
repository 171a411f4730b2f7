/*
 * A call of a few wide rows gives the bits of one thread. Host backends may
 * split such a row's columns over threads (avx512: fewer rows than threads,
 * rows of more than 16384 columns, a forward's x of 256 KiB or more,
 * simd/fwd_wide.h and bwd_wide.h), and the
 * segment sums they fold must come out as one thread's sum. Each case runs
 * with 1, 2 and 7 OpenMP threads and must give the same bits in every output
 * (y, h, q, scales, rstd; dx, dw); its rows must also come out the same in a
 * call of 20 rows (CONTEXT_ROWS). Outputs are poisoned
 * before each call, and an element left poisoned fails the case.
 *
 * The cases cover each forward and backward form the wide path has: the
 * simple bf16 sweeps, the general ones, every quantisation, h_out apart and
 * in place, dx in place, rstd given or recomputed, a row of over 2^21
 * columns (whose segments are longer than 16384, rmsi_seg_cols) that
 * streams its outputs, and bf16 rows small enough that AVX512-BF16's sum
 * is redone with FMAs (rmsi_row_sumsq_bf16_put). Backward calls of 16-40
 * rows of at most 16384 columns have fewer dweight chunks than 7 threads,
 * or chunks that 2 threads cannot share evenly: avx512 splits their
 * columns too (simd/bwd_tiles.h), and they must also give one thread's
 * bits. With one thread, and in the 20-row call when no dw is asked for,
 * the simple backward's rows take the pipelined sweeps
 * (avx512: rmsi_bwd_rows_pipe and rmsi_bwd_rows_fused_eo), whose dot must
 * fold its segments as the split row's does.
 */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ref/formats.h"
#include "tests/backends.h"
#include "tests/rng.h"

/* Rows of the call that checks a case's rows in a larger call: more than
 * the threads, so avx512 splits it by rows, except a backward with dw, whose
 * two uneven chunks (16 and 4 rows) it splits by tiles of columns. */
#define CONTEXT_ROWS 20

/* What one case passes besides data: which inputs and outputs it has. */
typedef struct wcase {
    const char *name;
    int64_t rows, cols;
    rmsnorm_dtype t, wt; /* wt: weight dtype, or RMSNORM_F8_E4M3 for none */
    int bwd;             /* 0: forward, 1: backward */
    int res;             /* forward: a residual; backward: a dresidual */
    int h;               /* forward: 0 no h_out, 1 its own buffer, 2 in place over the residual */
    int inplace;         /* forward: y over x; backward: dx over dy */
    int stats;           /* forward: rstd out; backward: rstd given */
    rmsnorm_quant qm;
    uint32_t flags;
    float mag;           /* inputs in [-mag, mag) */
    size_t off;          /* bytes past 64 where every matrix starts */
} wcase;

#define NOW RMSNORM_F8_E4M3 /* no weight */

static const wcase k_cases[] = {
    {"bf16 plain, bf16 w", 1, 140000, RMSNORM_BF16, RMSNORM_BF16, 0, 0, 0, 0, 1, RMSNORM_QUANT_NONE, 0, 1.0f, 0},
    {"bf16 fused add, h apart", 3, 70000, RMSNORM_BF16, RMSNORM_BF16, 0, 1, 1, 0, 1, RMSNORM_QUANT_NONE, 0, 1.0f, 16},
    {"bf16 fused add, h over residual, y over x", 2, 70000, RMSNORM_BF16, NOW, 0, 1, 2, 1, 0, RMSNORM_QUANT_NONE, 0,
     1.0f, 2},
    {"f32 per-token fp8, f32 w", 3, 70000, RMSNORM_F32, RMSNORM_F32, 0, 0, 0, 0, 1, RMSNORM_QUANT_PER_TOKEN,
     RMSNORM_SCALE_POW2, 1.0f, 0},
    {"f16 fused add, per-block fp8, h apart", 2, 70016, RMSNORM_F16, RMSNORM_F16, 0, 1, 1, 0, 1,
     RMSNORM_QUANT_PER_BLOCK_128, 0, 1.0f, 48},
    {"bf16 LLAMA per-tensor fp8", 1, 131170, RMSNORM_BF16, RMSNORM_F32, 0, 0, 0, 0, 0, RMSNORM_QUANT_PER_TENSOR,
     RMSNORM_ROUND_LLAMA, 1.0f, 0},
    {"bf16 per-token fp8, h over residual", 1, 140000, RMSNORM_BF16, RMSNORM_BF16, 0, 1, 2, 0, 1,
     RMSNORM_QUANT_PER_TOKEN, 0, 1.0f, 0},
    {"bf16 tiny rows", 2, 70000, RMSNORM_BF16, RMSNORM_BF16, 0, 0, 0, 0, 1, RMSNORM_QUANT_NONE, 0, 0x1p-70f, 0},
    {"f32 fused add, 2^21+40 columns, streamed", 1, 2097192, RMSNORM_F32, RMSNORM_F32, 0, 1, 1, 0, 1,
     RMSNORM_QUANT_NONE, 0, 1.0f, 0},
    {"bwd bf16 simple, bf16 w", 1, 70000, RMSNORM_BF16, RMSNORM_BF16, 1, 0, 0, 0, 0, RMSNORM_QUANT_NONE, 0, 1.0f, 0},
    {"bwd bf16 simple, no w, dx over dy", 3, 70000, RMSNORM_BF16, NOW, 1, 0, 0, 1, 0, RMSNORM_QUANT_NONE, 0, 1.0f,
     16},
    {"bwd f32 dresidual, rstd given", 2, 70000, RMSNORM_F32, RMSNORM_F32, 1, 1, 0, 0, 1, RMSNORM_QUANT_NONE, 0, 1.0f,
     32},
    {"bwd f16 LLAMA, f32 w", 3, 40000, RMSNORM_F16, RMSNORM_F32, 1, 0, 0, 0, 0, RMSNORM_QUANT_NONE,
     RMSNORM_ROUND_LLAMA, 1.0f, 0},
    {"bwd f32 simple, f32 w", 3, 70000, RMSNORM_F32, RMSNORM_F32, 1, 0, 0, 0, 0, RMSNORM_QUANT_NONE, 0, 1.0f, 0},
    {"bwd f16 simple, no w, dx over dy, rstd given", 2, 40000, RMSNORM_F16, NOW, 1, 0, 0, 1, 1, RMSNORM_QUANT_NONE,
     0, 1.0f, 0},
    {"bwd bf16 simple, f32 w", 2, 70000, RMSNORM_BF16, RMSNORM_F32, 1, 0, 0, 0, 0, RMSNORM_QUANT_NONE, 0, 1.0f, 0},
    {"bwd bf16 tiny rows", 1, 70000, RMSNORM_BF16, RMSNORM_BF16, 1, 0, 0, 0, 0, RMSNORM_QUANT_NONE, 0, 0x1p-70f, 0},
    {"bwd f32 2^21+40 columns, streamed", 1, 2097192, RMSNORM_F32, RMSNORM_F32, 1, 0, 0, 0, 0, RMSNORM_QUANT_NONE,
     0, 1.0f, 0},
    /* fewer dweight chunks than threads, or chunks that do not split evenly:
     * avx512 cuts each chunk's columns into tiles (simd/bwd_tiles.h) */
    {"bwd bf16 simple, bf16 w, one chunk", 16, 4096, RMSNORM_BF16, RMSNORM_BF16, 1, 0, 0, 0, 0, RMSNORM_QUANT_NONE, 0,
     1.0f, 0},
    {"bwd bf16 simple, no w, rows off a line", 24, 5000, RMSNORM_BF16, NOW, 1, 0, 0, 0, 1, RMSNORM_QUANT_NONE, 0,
     1.0f, 2},
    {"bwd f32 dresidual, three chunks", 40, 2100, RMSNORM_F32, RMSNORM_F32, 1, 1, 0, 0, 0, RMSNORM_QUANT_NONE, 0, 1.0f,
     16},
    {"bwd f16 LLAMA, dx over dy, rstd given", 20, 3300, RMSNORM_F16, RMSNORM_F16, 1, 0, 0, 1, 1, RMSNORM_QUANT_NONE,
     RMSNORM_ROUND_LLAMA, 1.0f, 0},
    {"bwd bf16 simple, f32 w, 3 rows of 16384", 3, 16384, RMSNORM_BF16, RMSNORM_F32, 1, 0, 0, 0, 0,
     RMSNORM_QUANT_NONE, 0, 1.0f, 0},
};

/* One buffer: room for `bytes` at `off` past a 64-byte boundary. */
typedef struct wbuf {
    unsigned char *base, *p;
    size_t bytes;
} wbuf;

static void wbuf_init(wbuf *b, size_t bytes, size_t off)
{
    const size_t n = (bytes + off + 64u + 63u) & ~(size_t)63u;
    b->base = aligned_alloc(64, n);
    assert_non_null(b->base);
    b->p = b->base + off;
    b->bytes = bytes;
}

static void wbuf_free(wbuf *b)
{
    free(b->base);
    memset(b, 0, sizeof *b);
}

/* Element i of a matrix of dtype t from row r of a case's data: the same
 * values for row r whatever the call's row count. */
static void fill(void *p, rmsnorm_dtype t, int64_t rows, int64_t cols, uint64_t seed, float mag)
{
    for (int64_t r = 0; r < rows; r++) {
        rmst_rng rng = {seed * 1000003u + (uint64_t)r};
        for (int64_t j = 0; j < cols; j++)
            rmsi_store(p, t, (size_t)(r * cols + j), mag * (float)rmst_rng_sym(&rng));
    }
}

/* Elements of dtype t left as the 0xff poison (a NaN in every dtype); valid
 * outputs of finite inputs are never that. */
static int64_t poisoned(const void *p, rmsnorm_dtype t, size_t n)
{
    const size_t sz = rmsnorm_dtype_size(t);
    const unsigned char *b = p;
    int64_t k = 0;
    for (size_t i = 0; i < n; i++) {
        size_t e = 0;
        while (e < sz && b[i * sz + e] == 0xffu)
            e++;
        k += e == sz;
    }
    return k;
}

/* The outputs of one call; row-major [rows][cols] except the scales. */
enum { O_Y, O_H, O_Q, O_SCALE, O_RSTD, O_DX, O_DW, O_N };

typedef struct wrun {
    wbuf in[4];   /* x, residual or dy, dresidual, weight */
    wbuf out[O_N];
    rmsnorm_dtype odt[O_N];
    size_t on[O_N]; /* elements */
} wrun;

static rmsnorm_matrix mat(void *p, rmsnorm_dtype t, int64_t rows, int64_t cols)
{
    rmsnorm_matrix m = {p, t, rows, cols, cols};
    return m;
}

/* eps = 0 for the tiny rows, whose sums of squares 1e-6 would hide. */
static float eps_of(const wcase *c)
{
    return c->mag < 0x1p-60f ? 0.0f : 1e-6f;
}

/* Runs case c over `rows` rows on be; outputs in run (caller frees). */
static rmsnorm_status run_case(const rmsnorm_backend *be, const wcase *c, int64_t rows, uint64_t seed, wrun *w)
{
    const size_t n = (size_t)rows * (size_t)c->cols;
    const size_t esz = rmsnorm_dtype_size(c->t);
    const int has_w = c->wt != NOW;
    rmsnorm_status st;

    memset(w, 0, sizeof *w);
    for (int k = 0; k < 3; k++) {
        wbuf_init(&w->in[k], n * esz, c->off);
        fill(w->in[k].p, c->t, rows, c->cols, seed + (uint64_t)k, c->mag);
    }
    wbuf_init(&w->in[3], (size_t)c->cols * 4u, 0);
    {
        rmst_rng rng = {seed + 99u};
        for (int64_t j = 0; j < c->cols; j++)
            rmsi_store(w->in[3].p, has_w ? c->wt : RMSNORM_F32, (size_t)j, 0.5f + (float)rmst_rng_unit(&rng));
    }
    const rmsnorm_matrix x = mat(w->in[0].p, c->t, rows, c->cols);
    const rmsnorm_matrix b = mat(w->in[1].p, c->t, rows, c->cols);

    if (!c->bwd) {
        rmsnorm_forward_args a;
        size_t ns = 0;
        memset(&a, 0, sizeof a);
        a.struct_size = sizeof a;
        a.x = x;
        a.weight = has_w ? w->in[3].p : NULL;
        a.weight_dtype = has_w ? c->wt : c->t;
        a.eps = eps_of(c);
        a.flags = c->flags;
        if (c->res)
            a.residual = b;
        w->odt[O_Y] = c->t;
        if (c->inplace) {
            a.y = x; /* y over x: compared as y */
        } else {
            wbuf_init(&w->out[O_Y], n * esz, c->off);
            a.y = mat(w->out[O_Y].p, c->t, rows, c->cols);
        }
        w->on[O_Y] = n;
        if (c->h == 1) {
            wbuf_init(&w->out[O_H], n * esz, c->off);
            a.h_out = mat(w->out[O_H].p, c->t, rows, c->cols);
        } else if (c->h == 2) {
            a.h_out = b;
        }
        w->odt[O_H] = c->t;
        w->on[O_H] = c->h != 0 ? n : 0u;
        if (c->stats) {
            wbuf_init(&w->out[O_RSTD], (size_t)rows * 4u, 0);
            a.rstd = (float *)(void *)w->out[O_RSTD].p;
        }
        w->odt[O_RSTD] = RMSNORM_F32;
        w->on[O_RSTD] = c->stats ? (size_t)rows : 0u;
        if (c->qm != RMSNORM_QUANT_NONE) {
            assert_int_equal(rmsnorm_quant_scale_count(c->qm, rows, c->cols, &ns), RMSNORM_OK);
            wbuf_init(&w->out[O_Q], n, 0);
            wbuf_init(&w->out[O_SCALE], ns * 4u, 0);
            a.quant_mode = c->qm;
            a.q = mat(w->out[O_Q].p, RMSNORM_F8_E4M3, rows, c->cols);
            a.scale = (float *)(void *)w->out[O_SCALE].p;
            w->on[O_Q] = n;
            w->odt[O_Q] = RMSNORM_F8_E4M3;
            w->odt[O_SCALE] = RMSNORM_F32;
            if (c->qm == RMSNORM_QUANT_PER_TENSOR) {
                a.scale[0] = 0.01f; /* an input */
            } else {
                w->on[O_SCALE] = ns;
                memset(w->out[O_SCALE].p, 0xff, ns * 4u);
            }
            if (c->flags & RMSNORM_ROUND_LLAMA)
                a.y.data = NULL; /* q alone */
            /* an upper bound on one case only: it hides which maxima
             * went into a scale */
            if (c->qm == RMSNORM_QUANT_PER_TOKEN && (c->flags & RMSNORM_SCALE_POW2))
                a.scale_ub = 3.0f;
        }
        if (a.y.data == NULL)
            w->on[O_Y] = 0;
        for (int k = 0; k < O_N; k++)
            if (w->out[k].base != NULL && k != O_SCALE)
                memset(w->out[k].p, 0xff, w->out[k].bytes);
        st = rmsnorm_forward(be, &a, NULL);
        if (c->inplace) { /* y is in x now */
            w->out[O_Y] = w->in[0];
            memset(&w->in[0], 0, sizeof w->in[0]);
        }
        if (c->h == 2) {
            w->out[O_H] = w->in[1];
            memset(&w->in[1], 0, sizeof w->in[1]);
        }
        return st;
    }

    rmsnorm_backward_args a;
    size_t wsb = 0;
    memset(&a, 0, sizeof a);
    a.struct_size = sizeof a;
    a.x = x;
    a.dy = b;
    a.weight = has_w ? w->in[3].p : NULL;
    a.weight_dtype = has_w ? c->wt : c->t;
    a.eps = eps_of(c);
    a.flags = c->flags;
    if (c->res)
        a.dresidual = mat(w->in[2].p, c->t, rows, c->cols);
    if (c->stats) {
        wbuf_init(&w->out[O_RSTD], (size_t)rows * 4u, 0);
        float *rs = (float *)(void *)w->out[O_RSTD].p;
        for (int64_t r = 0; r < rows; r++)
            rs[r] = 0.5f + 0.01f * (float)r; /* an input: not compared */
        a.rstd = rs;
    }
    w->odt[O_DX] = c->t;
    w->on[O_DX] = n;
    if (c->inplace) {
        a.dx = b;
    } else {
        wbuf_init(&w->out[O_DX], n * esz, c->off);
        memset(w->out[O_DX].p, 0xff, n * esz);
        a.dx = mat(w->out[O_DX].p, c->t, rows, c->cols);
    }
    if (has_w) {
        assert_int_equal(rmsnorm_backward_workspace_size(be, rows, c->cols, &wsb), RMSNORM_OK);
        wbuf_init(&w->out[O_DW], (size_t)c->cols * 4u, 0);
        memset(w->out[O_DW].p, 0xff, (size_t)c->cols * 4u);
        a.dweight = (float *)(void *)w->out[O_DW].p;
        a.workspace = malloc(wsb + 1u);
        assert_non_null(a.workspace);
        memset(a.workspace, 0xff, wsb);
        a.workspace_bytes = wsb;
        w->odt[O_DW] = RMSNORM_F32;
        w->on[O_DW] = (size_t)c->cols;
    }
    st = rmsnorm_backward(be, &a, NULL);
    free(a.workspace);
    if (c->inplace) {
        w->out[O_DX] = w->in[1];
        memset(&w->in[1], 0, sizeof w->in[1]);
    }
    return st;
}

static void run_free(wrun *w)
{
    for (int k = 0; k < 4; k++)
        wbuf_free(&w->in[k]);
    for (int k = 0; k < O_N; k++)
        wbuf_free(&w->out[k]);
}

static const char *const k_out_names[O_N] = {"y", "h", "q", "scale", "rstd", "dx", "dw"};

/* Compares output k of a and b over their first `elems` elements (all when
 * 0); 0 when they differ. */
static int same_out(const wcase *c, const wrun *a, const wrun *b, int k, size_t elems, const char *what)
{
    const size_t n = elems != 0u && elems < a->on[k] ? elems : a->on[k];
    const size_t sz = rmsnorm_dtype_size(a->odt[k]);
    if (n == 0u)
        return 1;
    if (memcmp(a->out[k].p, b->out[k].p, n * sz) != 0) {
        size_t i = 0;
        while (i < n * sz && a->out[k].p[i] == b->out[k].p[i])
            i++;
        print_error("FAIL %s (%lld x %lld): %s differs at element %zu (%s)\n", c->name, (long long)c->rows,
                    (long long)c->cols, k_out_names[k], i / sz, what);
        return 0;
    }
    return 1;
}

/* 1 when no output element was left poisoned. */
static int all_written(const wcase *c, const wrun *w, const char *what)
{
    int ok = 1;
    for (int k = 0; k < O_N; k++) {
        /* the block scales' layout pads the rows to a multiple of 4 */
        if (w->on[k] == 0u || (k == O_SCALE && c->qm == RMSNORM_QUANT_PER_BLOCK_128))
            continue;
        const int64_t left = poisoned(w->out[k].p, w->odt[k], w->on[k]);
        if (left > 0) {
            print_error("FAIL %s: %lld elements of %s not written (%s)\n", c->name, (long long)left,
                        k_out_names[k], what);
            ok = 0;
        }
    }
    return ok;
}

static void one_thread_bits(void **state)
{
    const rmst_backend *tb = rmst_backend_of(state);
    static const int threads[] = {2, 7};
    const int saved = omp_get_max_threads();
    int failed = 0;
    if (rmsnorm_backend_is_device(tb->be)) {
        print_message("%s is a device backend: OpenMP thread counts do not apply\n", tb->name);
        return;
    }
    for (size_t i = 0; i < sizeof k_cases / sizeof k_cases[0]; i++) {
        const wcase *c = &k_cases[i];
        const uint64_t seed = 0x3a1de000u + i;
        wrun one, ctx;
        omp_set_num_threads(1);
        assert_int_equal(run_case(tb->be, c, c->rows, seed, &one), RMSNORM_OK);
        failed += !all_written(c, &one, "1 thread");
        for (size_t k = 0; k < sizeof threads / sizeof threads[0]; k++) {
            char what[64];
            wrun w;
            omp_set_num_threads(threads[k]);
            (void)snprintf(what, sizeof what, "%d threads vs 1", threads[k]);
            assert_int_equal(run_case(tb->be, c, c->rows, seed, &w), RMSNORM_OK);
            failed += !all_written(c, &w, what);
            for (int o = 0; o < O_N; o++)
                failed += !same_out(c, &one, &w, o, 0u, what);
            run_free(&w);
        }
        /* the same rows at the top of a call of CONTEXT_ROWS, at 7 threads
         * (split by rows, or tiles: see CONTEXT_ROWS); per-row outputs only
         * (dw and the block scales' layout depend on the row count) */
        if (c->cols <= 140000 && c->rows < CONTEXT_ROWS) {
            static const int per_row[] = {O_Y, O_H, O_Q, O_DX, O_RSTD};
            const size_t n = (size_t)c->rows * (size_t)c->cols;
            assert_int_equal(run_case(tb->be, c, CONTEXT_ROWS, seed, &ctx), RMSNORM_OK);
            for (size_t k = 0; k < sizeof per_row / sizeof per_row[0]; k++)
                failed += !same_out(c, &one, &ctx, per_row[k], per_row[k] == O_RSTD ? (size_t)c->rows : n,
                                    "rows of a 20-row call");
            if (c->qm == RMSNORM_QUANT_PER_TOKEN)
                failed += !same_out(c, &one, &ctx, O_SCALE, (size_t)c->rows, "rows of a 20-row call");
            run_free(&ctx);
        }
        run_free(&one);
    }
    omp_set_num_threads(saved);
    if (failed > 0)
        fail_msg("%d mismatches: a few wide rows do not give one thread's bits on %s", failed, tb->name);
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(one_thread_bits),
    };
    if (rmst_main_init(argc, argv) != 0)
        return 2;
    return rmst_run_per_backend("wide", tests, sizeof tests / sizeof tests[0]) != 0;
}
