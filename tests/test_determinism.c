/*
 * dw is bitwise reproducible: over repeated calls with a NaN-poisoned
 * workspace between them, and (host backends) with 1, 2 and 7 OpenMP threads;
 * and (host backends) the backward's dx and dw, and the fused add's y, h and
 * rstd, do not depend on where the rows sit.
 * Uses the backward runner of bwd_case.c, so data and buffers are those of the
 * oracle tests.
 */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ref/formats.h"
#include "tests/backends.h"
#include "tests/bwd_case.h"
#include "tests/rng.h"

/* Shapes where the row chunks of the reduction matter: many rows, few rows
 * and wide, and a row count that is not a multiple of anything. */
static const struct {
    int64_t rows, cols;
    rmsnorm_dtype t;
    uint32_t flags;
    rmst_w_mode wmode;
    int dres;
} k_shapes[] = {
    {1000, 333, RMSNORM_F32, RMSNORM_ROUND_ONCE, RMST_W_F32, 1},
    {257, 4096, RMSNORM_BF16, RMSNORM_ROUND_LLAMA, RMST_W_F32, 1},
    {3, 70000, RMSNORM_F16, RMSNORM_ROUND_ONCE, RMST_W_F32, 1},
    {4099, 64, RMSNORM_F32, RMSNORM_ROUND_ONCE, RMST_W_F32, 1},
    /* 2^16..2^18 elements, three dweight chunks: threaded on avx512 since
     * session 15 (simd/simd.h RMSI_SIMD_PARALLEL_MIN) */
    {40, 2048, RMSNORM_BF16, RMSNORM_ROUND_ONCE, RMST_W_F32, 1},
    /* bf16 weights and no residual gradient: avx512's fused even/odd sweep,
     * whose rows a thread starts with take a sweep of their own and whose
     * partials are kept in even/odd form; 100 rows are 7 chunks, 4100
     * columns end in a short block */
    {100, 4100, RMSNORM_BF16, RMSNORM_ROUND_ONCE, RMST_W_SAME, 0},
    {16, 4096, RMSNORM_BF16, RMSNORM_ROUND_ONCE, RMST_W_SAME, 0},
    /* fp32 rows of 2048+ columns: avx512's rows in pairs (session 42), the
     * partial read once for two rows; 33 rows end in a chunk of one row,
     * which goes alone */
    {33, 4096, RMSNORM_F32, RMSNORM_ROUND_ONCE, RMST_W_SAME, 0},
    /* as many full chunks a thread (4 on 2 threads, 7 on 7): avx512 reduces
     * them by columns over the threads in the rows' region (session 43) */
    {64, 2048, RMSNORM_BF16, RMSNORM_ROUND_ONCE, RMST_W_SAME, 0},
    {112, 1100, RMSNORM_F16, RMSNORM_ROUND_ONCE, RMST_W_F32, 1},
};

static void make_case(size_t i, rmst_bwd_case *c)
{
    memset(c, 0, sizeof *c);
    c->t = k_shapes[i].t;
    c->rows = k_shapes[i].rows;
    c->cols = k_shapes[i].cols;
    c->stride = c->cols + 3;
    c->wmode = k_shapes[i].wmode;
    c->flags = k_shapes[i].flags;
    c->dres = k_shapes[i].dres;
    c->want_dw = 1;
    c->eps = 1e-6f;
    c->magnitude = 1.0;
    c->seed = 0xde7e0000ull + i;
}

/* Runs the case and returns a copy of dw (cols floats); NULL when a pinned
 * GPU config (RMST_PIN_SWEEP=1) does not fit the shape. */
static float *dw_of(rmst_bwd_run *run)
{
    size_t bytes = (size_t)run->c.cols * sizeof(float);
    float *dw;
    /* pass 0: outputs and workspace filled with NaN bytes before the call */
    const rmsnorm_status st = rmst_bwd_run_exec(run, 0);
    if (st == RMSNORM_ERR_UNSUPPORTED && rmst_pin_sweep()) {
        print_message("pinned config skips rows=%lld cols=%lld\n", (long long)run->c.rows, (long long)run->c.cols);
        return NULL;
    }
    assert_int_equal(st, RMSNORM_OK);
    dw = malloc(bytes);
    assert_non_null(dw);
    memcpy(dw, run->dw.host, bytes);
    return dw;
}

/* Bitwise: -0 vs +0 or two NaN payloads count as different. */
static int same_bits(const rmst_backend *tb, const rmst_bwd_run *run, const float *a, const float *b,
                     const char *what)
{
    for (int64_t j = 0; j < run->c.cols; j++) {
        if (rmsi_f32_bits(a[j]) != rmsi_f32_bits(b[j])) {
            print_error("FAIL [%s] rows=%lld cols=%lld: dw[%lld] %.9g vs %.9g (%s)\n", tb->name,
                        (long long)run->c.rows, (long long)run->c.cols, (long long)j, (double)a[j],
                        (double)b[j], what);
            return 0;
        }
    }
    return 1;
}

static void dw_repeated_calls(void **state)
{
    const rmst_backend *tb = rmst_backend_of(state);
    int failed = 0;
    for (size_t i = 0; i < sizeof k_shapes / sizeof k_shapes[0]; i++) {
        rmst_bwd_case c;
        rmst_bwd_run run;
        float *first;
        make_case(i, &c);
        rmst_bwd_run_init(&run, tb->be, &c);
        first = dw_of(&run);
        for (int rep = 0; first != NULL && rep < 3; rep++) {
            float *again = dw_of(&run);
            assert_non_null(again); /* the same call as the first */
            failed += !same_bits(tb, &run, first, again, "repeated call");
            free(again);
        }
        free(first);
        rmst_bwd_run_free(&run);
    }
    if (failed > 0)
        fail_msg("dw not reproducible over repeated calls on %s", tb->name);
}

static void dw_thread_counts(void **state)
{
    const rmst_backend *tb = rmst_backend_of(state);
    static const int threads[] = {1, 2, 7};
    int saved = omp_get_max_threads();
    int failed = 0;
    if (rmsnorm_backend_is_device(tb->be)) {
        print_message("%s is a device backend: OpenMP thread counts do not apply\n", tb->name);
        return;
    }
    for (size_t i = 0; i < sizeof k_shapes / sizeof k_shapes[0]; i++) {
        rmst_bwd_case c;
        rmst_bwd_run run;
        float *ref;
        make_case(i, &c);
        rmst_bwd_run_init(&run, tb->be, &c);
        omp_set_num_threads(threads[0]);
        ref = dw_of(&run);
        assert_non_null(ref); /* host backends take no pin */
        for (size_t k = 1; k < sizeof threads / sizeof threads[0]; k++) {
            char what[64];
            float *other;
            omp_set_num_threads(threads[k]);
            other = dw_of(&run);
            assert_non_null(other);
            (void)snprintf(what, sizeof what, "%d threads vs %d", threads[k], threads[0]);
            failed += !same_bits(tb, &run, ref, other, what);
            free(other);
        }
        free(ref);
        rmst_bwd_run_free(&run);
    }
    omp_set_num_threads(saved);
    if (failed > 0)
        fail_msg("dw depends on the OpenMP thread count on %s", tb->name);
}

/* Where the placement tests put the rows: bytes past a 64-byte boundary. */
static const size_t k_offs[] = {2, 16, 32, 48, 62};

/* Two random bf16 matrices of n elements in [-1, 1) and cols weights in
 * [0.5, 1.5), from seed. */
static void gen_bf16(uint64_t seed, size_t n, int64_t cols, uint16_t **a, uint16_t **b, uint16_t **w)
{
    rmst_rng rng = {seed};
    uint16_t *pa = malloc(n * 2u), *pb = malloc(n * 2u), *pw = malloc((size_t)cols * 2u);
    assert_true(pa != NULL && pb != NULL && pw != NULL);
    for (size_t i = 0; i < n; i++) {
        pa[i] = rmsi_f32_to_bf16((float)rmst_rng_sym(&rng));
        pb[i] = rmsi_f32_to_bf16((float)rmst_rng_sym(&rng));
    }
    for (int64_t j = 0; j < cols; j++)
        pw[j] = rmsi_f32_to_bf16(0.5f + (float)rmst_rng_unit(&rng));
    *a = pa;
    *b = pb;
    *w = pw;
}

/* aligned_alloc wants a size that is a multiple of the alignment */
static void *alloc64(size_t bytes)
{
    void *p = aligned_alloc(64, (bytes + 63u) & ~(size_t)63u);
    assert_non_null(p);
    return p;
}

static uint64_t hash_bytes(const void *p, size_t n)
{
    const unsigned char *b = p;
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++) {
        h ^= b[i];
        h *= 1099511628211ull;
    }
    return h;
}

/* One bf16 backward (bf16 weights, dweight, rstd recomputed) with x, dy and
 * dx `off` bytes past a 64-byte boundary; returns a hash of dx and dw. */
static uint64_t placed_bwd(const rmsnorm_backend *be, int64_t rows, int64_t cols, size_t off,
                           const uint16_t *x0, const uint16_t *dy0, const uint16_t *w)
{
    const size_t n = (size_t)rows * (size_t)cols * 2u;
    size_t wsb = 0;
    assert_int_equal(rmsnorm_backward_workspace_size(be, rows, cols, &wsb), RMSNORM_OK);
    unsigned char *bx = alloc64(n + 128u);
    unsigned char *bdy = alloc64(n + 128u);
    unsigned char *bdx = alloc64(n + 128u);
    float *dw = alloc64((size_t)cols * 4u);
    void *ws = alloc64(wsb + 64u);
    memcpy(bx + off, x0, n);
    memcpy(bdy + off, dy0, n);
    memset(bdx, 0xff, n + 128u);
    memset(dw, 0xff, (size_t)cols * 4u);
    rmsnorm_backward_args a;
    memset(&a, 0, sizeof a);
    a.struct_size = sizeof a;
    rmsnorm_matrix m = {bdy + off, RMSNORM_BF16, rows, cols, cols};
    a.dy = m;
    m.data = bx + off;
    a.x = m;
    m.data = bdx + off;
    a.dx = m;
    a.weight = w;
    a.weight_dtype = RMSNORM_BF16;
    a.eps = 1e-6f;
    a.dweight = dw;
    a.workspace = ws;
    a.workspace_bytes = wsb;
    assert_int_equal(rmsnorm_backward(be, &a, NULL), RMSNORM_OK);
    const uint64_t h = hash_bytes(bdx + off, n) ^ (hash_bytes(dw, (size_t)cols * 4u) * 3u);
    free(bx);
    free(bdy);
    free(bdx);
    free(dw);
    free(ws);
    return h;
}

/* A placed call: two bf16 input matrices and bf16 weights in, a hash of
 * every output back (placed_bwd, placed_fwd). */
typedef uint64_t (*placed_fn)(const rmsnorm_backend *be, int64_t rows, int64_t cols, size_t off,
                              const uint16_t *a, const uint16_t *b, const uint16_t *w);

/* Runs fn on each shape with its rows on 64 bytes and at each of k_offs;
 * returns how many placements gave other bits. Device backends: 0. */
static int placement_failures(const rmst_backend *tb, const char *what, const int64_t (*shapes)[2],
                              size_t nshapes, uint64_t seed, placed_fn fn)
{
    int failed = 0;
    if (rmsnorm_backend_is_device(tb->be)) {
        print_message("%s is a device backend: host placement does not apply\n", tb->name);
        return 0;
    }
    for (size_t s = 0; s < nshapes; s++) {
        const int64_t rows = shapes[s][0], cols = shapes[s][1];
        uint16_t *a, *b, *w;
        gen_bf16(seed + s, (size_t)rows * (size_t)cols, cols, &a, &b, &w);
        const uint64_t h0 = fn(tb->be, rows, cols, 0u, a, b, w);
        for (size_t k = 0; k < sizeof k_offs / sizeof k_offs[0]; k++) {
            if (fn(tb->be, rows, cols, k_offs[k], a, b, w) != h0) {
                print_error("FAIL [%s] rows=%lld cols=%lld: %s differ with the rows %zu bytes off 64\n",
                            tb->name, (long long)rows, (long long)cols, what, k_offs[k]);
                failed++;
            }
        }
        free(a);
        free(b);
        free(w);
    }
    return failed;
}

/* The sums' orders depend on cols only, so where the rows sit must not change
 * a bit. 1100 x 4096 streams dx (avx512: >= 24 MiB); there, rows off 64
 * bytes take the two-sweep path and aligned ones the fused sweep, and the
 * fused sweep's even/odd partials once gave dw other bits (session 39). */
static void bits_by_placement(void **state)
{
    const rmst_backend *tb = rmst_backend_of(state);
    static const int64_t shapes[][2] = {{1100, 4096}, {1100, 4100}, {40, 2048}, {5, 4100}, {16, 33}};
    if (placement_failures(tb, "the backward's dx or dw", shapes, sizeof shapes / sizeof shapes[0],
                           0xa119e000u, placed_bwd) > 0)
        fail_msg("backward bits depend on where the buffers sit on %s", tb->name);
}

/* A bf16 fused add (bf16 weights, rstd) with x, residual, h and y `off`
 * bytes past a 64-byte boundary; returns a hash of y, h and rstd. */
static uint64_t placed_fwd(const rmsnorm_backend *be, int64_t rows, int64_t cols, size_t off,
                           const uint16_t *x0, const uint16_t *r0, const uint16_t *w)
{
    const size_t n = (size_t)rows * (size_t)cols * 2u;
    unsigned char *b[4];
    float *rstd = malloc((size_t)rows * sizeof(float));
    assert_non_null(rstd);
    for (int k = 0; k < 4; k++) {
        b[k] = alloc64(n + 128u);
        memset(b[k], 0xff, n + 128u);
    }
    memcpy(b[0] + off, x0, n);
    memcpy(b[1] + off, r0, n);
    rmsnorm_forward_args a;
    memset(&a, 0, sizeof a);
    a.struct_size = sizeof a;
    rmsnorm_matrix m = {b[0] + off, RMSNORM_BF16, rows, cols, cols};
    a.x = m;
    m.data = b[1] + off;
    a.residual = m;
    m.data = b[2] + off;
    a.h_out = m;
    m.data = b[3] + off;
    a.y = m;
    a.weight = w;
    a.weight_dtype = RMSNORM_BF16;
    a.eps = 1e-6f;
    a.rstd = rstd;
    assert_int_equal(rmsnorm_forward(be, &a, NULL), RMSNORM_OK);
    const uint64_t h = hash_bytes(b[3] + off, n) ^ (hash_bytes(b[2] + off, n) * 3u) ^
                       (hash_bytes(rstd, (size_t)rows * sizeof(float)) * 7u);
    for (int k = 0; k < 4; k++)
        free(b[k]);
    free(rstd);
    return h;
}

/* The same for the fused add: 2200 x 4096 streams its four matrices, whose
 * stores start after a head up to 64 bytes. */
static void fwd_bits_by_placement(void **state)
{
    const rmst_backend *tb = rmst_backend_of(state);
    static const int64_t shapes[][2] = {{2200, 4096}, {40, 2048}, {5, 4100}, {16, 33}};
    if (placement_failures(tb, "the fused add's outputs", shapes, sizeof shapes / sizeof shapes[0],
                           0xf0d00000u, placed_fwd) > 0)
        fail_msg("forward bits depend on where the buffers sit on %s", tb->name);
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(dw_repeated_calls),
        cmocka_unit_test(dw_thread_counts),
        cmocka_unit_test(bits_by_placement),
        cmocka_unit_test(fwd_bits_by_placement),
    };
    if (rmst_main_init(argc, argv) != 0)
        return 2;
    return rmst_run_per_backend("determinism", tests, sizeof tests / sizeof tests[0]) != 0;
}
