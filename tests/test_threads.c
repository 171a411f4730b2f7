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
 * shape (their thread-safety, OpenMP inside each call).
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

typedef struct worker {
    rmst_bwd_bufs bb;
    rmst_buf dres;
    rmsnorm_backward_args a;
    const rmsnorm_backend *be;
    int iters;
    rmsnorm_status st; /* the first failure, or RMSNORM_OK */
    int failed_at;
} worker;

/* Thread k gets the residual gradient when k is odd; all threads share the
 * data of the seed, so threads of one kind must agree bit for bit. */
static void worker_init(worker *w, const rmsnorm_backend *be, int64_t rows, int64_t cols, int dres)
{
    const size_t n = (size_t)(rows * cols);
    rmst_rng rng = {0x7ead};
    memset(w, 0, sizeof *w);
    w->be = be;
    rmst_bwd_bufs_init(&w->bb, be, rows, cols, RMSNORM_BF16, RMSNORM_BF16);
    rmst_buf_init(&w->dres, be, n * sizeof(uint16_t));
    for (size_t j = 0; j < n; j++) {
        rmsi_store(w->bb.x.host, RMSNORM_BF16, j, (float)rmst_rng_sym(&rng));
        rmsi_store(w->bb.dy.host, RMSNORM_BF16, j, (float)rmst_rng_sym(&rng));
        rmsi_store(w->dres.host, RMSNORM_BF16, j, (float)rmst_rng_sym(&rng));
    }
    for (int64_t j = 0; j < cols; j++)
        rmsi_store(w->bb.w.host, RMSNORM_BF16, (size_t)j, 0.5f + 0.25f * (float)(j % 5));
    rmst_bwd_bufs_args(&w->bb, &w->a);
    rmst_buf_upload(&w->dres);
    w->a.eps = 1e-6f;
    if (dres)
        w->a.dresidual = (rmsnorm_matrix){w->dres.mem, RMSNORM_BF16, rows, cols, cols};
}

static void *worker_run(void *arg)
{
    worker *w = arg;
    w->st = RMSNORM_OK;
    w->failed_at = -1;
    for (int i = 0; i < w->iters; i++) {
        const rmsnorm_status st = rmsnorm_backward(w->be, &w->a, NULL);
        if (st != RMSNORM_OK) {
            w->st = st;
            w->failed_at = i;
            break;
        }
    }
    return NULL;
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
        w[k].iters = dev ? 200 : 3;
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
        rmst_bwd_bufs_args(&w[k].bb, &w[k].a); /* poison again (re-uploads; args unchanged) */
        if (k & 1)
            w[k].a.dresidual = (rmsnorm_matrix){w[k].dres.mem, RMSNORM_BF16, rows, cols, cols};
        w[k].a.eps = 1e-6f;
    }
    for (int k = 0; k < NTHREADS; k++)
        assert_int_equal(pthread_create(&th[k], NULL, worker_run, &w[k]), 0);
    for (int k = 0; k < NTHREADS; k++)
        assert_int_equal(pthread_join(th[k], NULL), 0);
    for (int k = 0; k < NTHREADS; k++) {
        if (w[k].st != RMSNORM_OK)
            print_error("thread %d (%s residual gradient): call %d of %d returned %s\n", k,
                        (k & 1) ? "with" : "no", w[k].failed_at, w[k].iters, rmsnorm_status_string(w[k].st));
        assert_int_equal(w[k].st, RMSNORM_OK);
        rmst_buf_download(&w[k].bb.dx);
        rmst_buf_download(&w[k].bb.dw);
        assert_memory_equal(w[k].bb.dx.host, want_dx[k & 1], w[k].bb.dx.bytes);
        assert_memory_equal(w[k].bb.dw.host, want_dw[k & 1], w[k].bb.dw.bytes);
    }
    for (int k = 0; k < 2; k++) {
        test_free(want_dx[k]);
        test_free(want_dw[k]);
    }
    for (int k = 0; k < NTHREADS; k++) {
        rmst_bwd_bufs_free(&w[k].bb);
        rmst_buf_free(&w[k].dres);
    }
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(concurrent_backward),
    };
    if (rmst_main_init(argc, argv) != 0)
        return 2;
    return rmst_run_per_backend("threads", tests, sizeof tests / sizeof tests[0]);
}
