/*
 * Concurrent calls from several host threads, each on its own buffers, give
 * what one thread alone gives, bit for bit, and never fail.
 *
 * Written for a race in the cuda plugin (session 11): the backward opts each
 * kernel in to the dynamic shared memory a launch needs, a per-kernel
 * attribute that each launch used to set to its own need, so a launch that
 * needed less could lower it under a concurrent launch that needed more (then
 * RMSNORM_ERR_DEVICE). Here four threads alternate two backward calls of one
 * kernel with different needs (4096 x 4096 bf16, with and without a residual
 * gradient: 48 and 56 KB on the H200). Host backends run the same at a small
 * shape (their thread-safety, OpenMP inside each call). A second test runs
 * the forward the same way (fused residual add + 1x128 fp8 block quant, h,
 * y, codes and scales) in four threads next to two backward threads.
 *
 * cmocka's assertions are for the main thread only: the workers record their
 * statuses, the main thread checks them after the join.
 */
#include <pthread.h>
#include <string.h>

#include "ref/formats.h"
#include "tests/backends.h"
#include "tests/buffers.h"
#include "tests/rng.h"

enum { NTHREADS = 4 };

/* One thread's calls: which, how many, and the first failure (RMSNORM_OK
 * if none). */
typedef struct repeat {
    rmsnorm_status (*call)(void *);
    void *arg;
    int iters;
    rmsnorm_status st;
    int failed_at;
} repeat;

/* The thread function of every worker (arg: its repeat). */
static void *repeat_run(void *arg)
{
    repeat *r = arg;
    r->st = RMSNORM_OK;
    r->failed_at = -1;
    for (int i = 0; i < r->iters; i++) {
        const rmsnorm_status st = r->call(r->arg);
        if (st != RMSNORM_OK) {
            r->st = st;
            r->failed_at = i;
            return NULL;
        }
    }
    return NULL;
}

/* In the main thread, after the join. */
static void expect_repeat_ok(const repeat *r, const char *what, int k)
{
    if (r->st != RMSNORM_OK)
        print_error("%s thread %d: call %d of %d returned %s\n", what, k, r->failed_at, r->iters,
                    rmsnorm_status_string(r->st));
    assert_int_equal(r->st, RMSNORM_OK);
}

typedef struct worker {
    rmst_bwd_bufs bb;
    rmst_buf dres;
    rmsnorm_backward_args a;
    const rmsnorm_backend *be;
    int with_dres; /* the call adds the residual gradient */
    repeat rep;
} worker;

/* Poisons dx, dw and the workspace (and uploads every buffer), then fills
 * the call's arguments. */
static void worker_args(worker *w)
{
    rmst_bwd_bufs_args(&w->bb, &w->a);
    w->a.eps = 1e-6f;
    if (w->with_dres)
        w->a.dresidual = (rmsnorm_matrix){w->dres.mem, RMSNORM_BF16, w->bb.rows, w->bb.cols, w->bb.cols};
}

static void worker_free(worker *w)
{
    rmst_bwd_bufs_free(&w->bb);
    rmst_buf_free(&w->dres);
}

static rmsnorm_status worker_call(void *arg)
{
    const worker *w = arg;
    return rmsnorm_backward(w->be, &w->a, NULL);
}

/* Thread k gets the residual gradient when k is odd; all threads share the
 * data of the seed, so threads of one kind must agree bit for bit. */
static void worker_init(worker *w, const rmsnorm_backend *be, int64_t rows, int64_t cols, int dres)
{
    const size_t n = (size_t)(rows * cols);
    rmst_rng rng = {0x7ead};
    memset(w, 0, sizeof *w);
    w->be = be;
    w->with_dres = dres;
    w->rep.call = worker_call;
    w->rep.arg = w;
    rmst_bwd_bufs_init(&w->bb, be, rows, cols, RMSNORM_BF16, RMSNORM_BF16);
    rmst_buf_init(&w->dres, be, n * sizeof(uint16_t));
    for (size_t j = 0; j < n; j++) {
        rmsi_store(w->bb.x.host, RMSNORM_BF16, j, (float)rmst_rng_sym(&rng));
        rmsi_store(w->bb.dy.host, RMSNORM_BF16, j, (float)rmst_rng_sym(&rng));
        rmsi_store(w->dres.host, RMSNORM_BF16, j, (float)rmst_rng_sym(&rng));
    }
    for (int64_t j = 0; j < cols; j++)
        rmsi_store(w->bb.w.host, RMSNORM_BF16, (size_t)j, 0.5f + 0.25f * (float)(j % 5));
    rmst_buf_upload(&w->dres);
    worker_args(w);
}

/* A forward with every output: h = x + r, y, fp8 codes and 1x128 scales. */
typedef struct fwd_worker {
    rmst_buf x, res, h, y, q, scale;
    rmsnorm_forward_args a;
    const rmsnorm_backend *be;
    repeat rep;
} fwd_worker;

static rmsnorm_status fwd_worker_call(void *arg)
{
    const fwd_worker *w = arg;
    return rmsnorm_forward(w->be, &w->a, NULL);
}

static void fwd_worker_init(fwd_worker *w, const rmsnorm_backend *be, int64_t rows, int64_t cols)
{
    const size_t n = (size_t)(rows * cols);
    size_t scales = 0;
    rmst_rng rng = {0xf0d};
    memset(w, 0, sizeof *w);
    w->be = be;
    w->rep.call = fwd_worker_call;
    w->rep.arg = w;
    assert_int_equal(rmsnorm_quant_scale_count(RMSNORM_QUANT_PER_BLOCK_128, rows, cols, &scales), RMSNORM_OK);
    rmst_buf_init(&w->x, be, n * sizeof(uint16_t));
    rmst_buf_init(&w->res, be, n * sizeof(uint16_t));
    rmst_buf_init(&w->h, be, n * sizeof(uint16_t));
    rmst_buf_init(&w->y, be, n * sizeof(uint16_t));
    rmst_buf_init(&w->q, be, n);
    rmst_buf_init(&w->scale, be, scales * sizeof(float));
    for (size_t j = 0; j < n; j++) {
        rmsi_store(w->x.host, RMSNORM_BF16, j, (float)rmst_rng_sym(&rng));
        rmsi_store(w->res.host, RMSNORM_BF16, j, (float)rmst_rng_sym(&rng));
    }
    rmst_buf_upload(&w->x);
    rmst_buf_upload(&w->res);
    memset(&w->a, 0, sizeof w->a);
    w->a.struct_size = sizeof w->a;
    w->a.x = (rmsnorm_matrix){w->x.mem, RMSNORM_BF16, rows, cols, cols};
    w->a.residual = (rmsnorm_matrix){w->res.mem, RMSNORM_BF16, rows, cols, cols};
    w->a.h_out = (rmsnorm_matrix){w->h.mem, RMSNORM_BF16, rows, cols, cols};
    w->a.y = (rmsnorm_matrix){w->y.mem, RMSNORM_BF16, rows, cols, cols};
    w->a.q = (rmsnorm_matrix){w->q.mem, RMSNORM_F8_E4M3, rows, cols, cols};
    w->a.scale = (float *)w->scale.mem;
    w->a.quant_mode = RMSNORM_QUANT_PER_BLOCK_128;
    w->a.eps = 1e-6f;
}

enum { NFWD_OUT = 4 };

static void fwd_worker_outputs(fwd_worker *w, rmst_buf *out[NFWD_OUT])
{
    out[0] = &w->h;
    out[1] = &w->y;
    out[2] = &w->q;
    out[3] = &w->scale;
}

/* Outputs poisoned (and uploaded) before the calls. */
static void fwd_worker_poison(fwd_worker *w)
{
    rmst_buf *out[NFWD_OUT];
    fwd_worker_outputs(w, out);
    for (int i = 0; i < NFWD_OUT; i++) {
        rmst_buf_fill(out[i], 0xff);
        rmst_buf_upload(out[i]);
    }
}

static void fwd_worker_free(fwd_worker *w)
{
    rmst_buf *all[6] = {&w->x, &w->res, &w->h, &w->y, &w->q, &w->scale};
    for (int i = 0; i < 6; i++)
        rmst_buf_free(all[i]);
}

static void concurrent_backward(void **state)
{
    const rmst_backend *b = rmst_backend_of(state);
    const int dev = rmsnorm_backend_is_device(b->be);
    const int64_t rows = dev ? 4096 : 64, cols = dev ? 4096 : 1024;
    static worker w[NTHREADS];
    pthread_t th[NTHREADS];
    unsigned char *want_dx[2] = {NULL, NULL}, *want_dw[2] = {NULL, NULL};

    for (int k = 0; k < NTHREADS; k++) {
        worker_init(&w[k], b->be, rows, cols, k & 1);
        w[k].rep.iters = dev ? 200 : 3;
    }
    /* alone first: the results every concurrent call must reproduce */
    for (int k = 0; k < 2; k++) {
        rmst_expect_ok(rmsnorm_backward(b->be, &w[k].a, NULL));
        rmst_buf_download(&w[k].bb.dx);
        rmst_buf_download(&w[k].bb.dw);
        want_dx[k] = test_malloc(w[k].bb.dx.bytes);
        want_dw[k] = test_malloc(w[k].bb.dw.bytes);
        memcpy(want_dx[k], w[k].bb.dx.host, w[k].bb.dx.bytes);
        memcpy(want_dw[k], w[k].bb.dw.host, w[k].bb.dw.bytes);
        worker_args(&w[k]); /* poisoned again */
    }
    for (int k = 0; k < NTHREADS; k++)
        assert_int_equal(pthread_create(&th[k], NULL, repeat_run, &w[k].rep), 0);
    for (int k = 0; k < NTHREADS; k++)
        assert_int_equal(pthread_join(th[k], NULL), 0);
    for (int k = 0; k < NTHREADS; k++) {
        expect_repeat_ok(&w[k].rep, (k & 1) ? "backward (residual gradient)" : "backward", k);
        rmst_buf_download(&w[k].bb.dx);
        rmst_buf_download(&w[k].bb.dw);
        assert_memory_equal(w[k].bb.dx.host, want_dx[k & 1], w[k].bb.dx.bytes);
        assert_memory_equal(w[k].bb.dw.host, want_dw[k & 1], w[k].bb.dw.bytes);
    }
    for (int k = 0; k < 2; k++) {
        test_free(want_dx[k]);
        test_free(want_dw[k]);
    }
    for (int k = 0; k < NTHREADS; k++)
        worker_free(&w[k]);
}

static void concurrent_forward(void **state)
{
    enum { NFWD = 4, NBWD = 2 };
    const rmst_backend *b = rmst_backend_of(state);
    const int dev = rmsnorm_backend_is_device(b->be);
    const int64_t rows = dev ? 4096 : 64, cols = dev ? 4096 : 1024;
    static fwd_worker f[NFWD];
    static worker w[NBWD];
    pthread_t th[NFWD + NBWD];
    rmst_buf *out[NFWD_OUT];
    unsigned char *want[NFWD_OUT];

    for (int k = 0; k < NFWD; k++) {
        fwd_worker_init(&f[k], b->be, rows, cols);
        f[k].rep.iters = dev ? 200 : 3;
    }
    for (int k = 0; k < NBWD; k++) {
        worker_init(&w[k], b->be, rows, cols, k & 1);
        w[k].rep.iters = dev ? 200 : 3;
    }
    /* alone first: the outputs every concurrent call must reproduce */
    fwd_worker_poison(&f[0]);
    rmst_expect_ok(rmsnorm_forward(b->be, &f[0].a, NULL));
    fwd_worker_outputs(&f[0], out);
    for (int i = 0; i < NFWD_OUT; i++) {
        rmst_buf_download(out[i]);
        want[i] = test_malloc(out[i]->bytes);
        memcpy(want[i], out[i]->host, out[i]->bytes);
    }
    for (int k = 0; k < NFWD; k++)
        fwd_worker_poison(&f[k]);
    for (int k = 0; k < NFWD; k++)
        assert_int_equal(pthread_create(&th[k], NULL, repeat_run, &f[k].rep), 0);
    for (int k = 0; k < NBWD; k++)
        assert_int_equal(pthread_create(&th[NFWD + k], NULL, repeat_run, &w[k].rep), 0);
    for (int k = 0; k < NFWD + NBWD; k++)
        assert_int_equal(pthread_join(th[k], NULL), 0);
    for (int k = 0; k < NBWD; k++)
        expect_repeat_ok(&w[k].rep, "backward", k);
    for (int k = 0; k < NFWD; k++) {
        expect_repeat_ok(&f[k].rep, "forward", k);
        fwd_worker_outputs(&f[k], out);
        for (int i = 0; i < NFWD_OUT; i++) {
            rmst_buf_download(out[i]);
            assert_memory_equal(out[i]->host, want[i], out[i]->bytes);
        }
    }
    for (int i = 0; i < NFWD_OUT; i++)
        test_free(want[i]);
    for (int k = 0; k < NFWD; k++)
        fwd_worker_free(&f[k]);
    for (int k = 0; k < NBWD; k++)
        worker_free(&w[k]);
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(concurrent_backward),
        cmocka_unit_test(concurrent_forward),
    };
    if (rmst_main_init(argc, argv) != 0)
        return 2;
    return rmst_run_per_backend("threads", tests, sizeof tests / sizeof tests[0]);
}
