/*
 * Hand-computed cases (issue 2), on every backend, through the backend's own
 * memory. Expected values are worked out on paper:
 *   x = [1,2,3,4], eps = 0:  rstd = 1/sqrt(7.5) = 0.365148, y = j * rstd
 *   x = [1,2], w = [1,2], dy = [3,-1], eps = 0: rstd = 1/sqrt(2.5), n = [0.632456, 1.264911],
 *     g = dy*w = [3,-2], c = mean(g*n) = -0.316228, dx = rstd*(g - n*c) = [2.023858, -1.011929],
 *     dw = dy*n = [1.897367, -1.264911]
 *   x = 0, eps > 0: rstd = 1/sqrt(eps), y = 0, dx = dy*w/sqrt(eps); eps = 0: rstd = inf, y = NaN
 *   x = [1e-4, 1e-4], eps = 1e-5: y = 1e-4/sqrt(1e-8 + 1e-5) = 0.031607
 */
#include <math.h>
#include <string.h>

#include "ref/formats.h"
#include "tests/backends.h"
#include "tests/buffers.h"
#include "tests/oracle.h"

/* Six printed decimals, plus fp32 rounding. */
#define TOL6 1.5e-6

/* y (and rstd) of one row of n values, activations of dtype t. */
static void forward_row(const rmsnorm_backend *be, rmsnorm_dtype t, const float *x, const float *w,
                        int64_t n, float eps, float *y, float *rstd)
{
    size_t es = rmsnorm_dtype_size(t);
    rmst_buf bx, bw, by, br;
    rmsnorm_forward_args a;
    rmst_buf_init(&bx, be, (size_t)n * es);
    rmst_buf_init(&by, be, (size_t)n * es);
    rmst_buf_init(&bw, be, (size_t)n * sizeof(float));
    rmst_buf_init(&br, be, sizeof(float));
    for (int64_t j = 0; j < n; j++)
        rmsi_store(bx.host, t, (size_t)j, x[j]);
    if (w != NULL)
        memcpy(bw.host, w, (size_t)n * sizeof(float));
    rmst_buf_fill(&by, 0xff);
    rmst_buf_fill(&br, 0xff);
    rmst_buf_upload(&bx);
    rmst_buf_upload(&bw);
    rmst_buf_upload(&by);
    rmst_buf_upload(&br);
    memset(&a, 0, sizeof a);
    a.struct_size = sizeof a;
    a.x = (rmsnorm_matrix){bx.mem, t, 1, n, n};
    a.y = (rmsnorm_matrix){by.mem, t, 1, n, n};
    a.weight = w != NULL ? bw.mem : NULL;
    a.weight_dtype = RMSNORM_F32;
    a.eps = eps;
    a.rstd = (float *)br.mem;
    rmst_expect_ok(rmsnorm_forward(be, &a, NULL));
    rmst_buf_download(&by);
    rmst_buf_download(&br);
    for (int64_t j = 0; j < n; j++)
        y[j] = rmsi_load(by.host, t, (size_t)j);
    memcpy(rstd, br.host, sizeof(float));
    rmst_buf_free(&bx);
    rmst_buf_free(&by);
    rmst_buf_free(&bw);
    rmst_buf_free(&br);
}

/* dx and dw of `rows` fp32 rows of n (x, dy, dx: rows * n; w, dw: n); rstd
 * (one a row) NULL = recompute. */
static void backward_rows(const rmsnorm_backend *be, int64_t rows, const float *x, const float *w,
                          const float *dy, int64_t n, float eps, const float *rstd, float *dx, float *dw)
{
    rmst_bwd_bufs b;
    rmst_buf brs;
    rmsnorm_backward_args a;
    rmst_bwd_bufs_init(&b, be, rows, n, RMSNORM_F32, RMSNORM_F32);
    rmst_buf_init(&brs, be, (size_t)rows * sizeof(float));
    memcpy(b.x.host, x, (size_t)(rows * n) * sizeof(float));
    memcpy(b.dy.host, dy, (size_t)(rows * n) * sizeof(float));
    memcpy(b.w.host, w, (size_t)n * sizeof(float));
    if (rstd != NULL)
        memcpy(brs.host, rstd, (size_t)rows * sizeof(float));
    rmst_buf_upload(&brs);
    rmst_bwd_bufs_args(&b, &a);
    a.rstd = rstd != NULL ? (const float *)brs.mem : NULL;
    a.eps = eps;
    rmst_expect_ok(rmsnorm_backward(be, &a, NULL));
    rmst_buf_download(&b.dx);
    rmst_buf_download(&b.dw);
    memcpy(dx, b.dx.host, (size_t)(rows * n) * sizeof(float));
    memcpy(dw, b.dw.host, (size_t)n * sizeof(float));
    rmst_bwd_bufs_free(&b);
    rmst_buf_free(&brs);
}

static void backward_row(const rmsnorm_backend *be, const float *x, const float *w, const float *dy,
                         int64_t n, float eps, const float *rstd, float *dx, float *dw)
{
    backward_rows(be, 1, x, w, dy, n, eps, rstd, dx, dw);
}

static void hand_forward_1234(void **state)
{
    const rmst_backend *tb = rmst_backend_of(state);
    static const float x[4] = {1, 2, 3, 4};
    static const float ones[4] = {1, 1, 1, 1};
    static const double want[4] = {0.365148, 0.730297, 1.095445, 1.460593};
    static const rmsnorm_dtype ts[3] = {RMSNORM_F32, RMSNORM_F16, RMSNORM_BF16};
    float y[4];
    float rstd;
    for (int k = 0; k < 3; k++) {
        for (int wk = 0; wk < 2; wk++) {
            forward_row(tb->be, ts[k], x, wk ? ones : NULL, 4, 0.0f, y, &rstd);
            if (fabs((double)rstd - 0.365148) > TOL6)
                fail_msg("%s: rstd = %.9g, expected 0.365148", tb->name, (double)rstd);
            for (int j = 0; j < 4; j++) {
                double tol = TOL6 + rmst_ulp(want[j], ts[k]);
                if (fabs((double)y[j] - want[j]) > tol)
                    fail_msg("%s dtype %d weight %d: y[%d] = %.9g, expected %.6f (tolerance %.3g)",
                             tb->name, (int)ts[k], wk, j, (double)y[j], want[j], tol);
            }
        }
    }
}

static void hand_backward_12(void **state)
{
    const rmst_backend *tb = rmst_backend_of(state);
    static const float x[2] = {1, 2};
    static const float w[2] = {1, 2};
    static const float dy[2] = {3, -1};
    static const double want_dx[2] = {2.023858, -1.011929};
    static const double want_dw[2] = {1.897367, -1.264911};
    float rstd = (float)(1.0 / sqrt(2.5));
    float dx[2], dw[2];
    for (int given = 0; given < 2; given++) {
        backward_row(tb->be, x, w, dy, 2, 0.0f, given ? &rstd : NULL, dx, dw);
        for (int j = 0; j < 2; j++) {
            if (fabs((double)dx[j] - want_dx[j]) > TOL6 || fabs((double)dw[j] - want_dw[j]) > TOL6)
                fail_msg("%s rstd %s: dx[%d] = %.9g (expected %.6f), dw[%d] = %.9g (expected %.6f)",
                         tb->name, given ? "given" : "recomputed", j, (double)dx[j], want_dx[j], j,
                         (double)dw[j], want_dw[j]);
        }
    }
}

static void hand_zero_row(void **state)
{
    const rmst_backend *tb = rmst_backend_of(state);
    static const float x[4] = {0, 0, 0, 0};
    static const float w[4] = {1, 2, -0.5f, 3};
    static const float dy[4] = {1, -1, 2, 0.25f};
    const float eps = 1e-5f;
    float y[4], dx[4], dw[4];
    float rstd;
    forward_row(tb->be, RMSNORM_F32, x, w, 4, eps, y, &rstd);
    if (fabs((double)rstd - 1.0 / sqrt((double)eps)) > 1e-6 / sqrt((double)eps))
        fail_msg("%s: zero row: rstd = %.9g, expected 1/sqrt(eps)", tb->name, (double)rstd);
    for (int j = 0; j < 4; j++)
        if (y[j] != 0.0f)
            fail_msg("%s: zero row, eps > 0: y[%d] = %.9g, expected exactly 0", tb->name, j, (double)y[j]);
    backward_row(tb->be, x, w, dy, 4, eps, NULL, dx, dw);
    for (int j = 0; j < 4; j++) {
        double want = (double)dy[j] * (double)w[j] / sqrt((double)eps);
        if (fabs((double)dx[j] - want) > 1e-6 * fabs(want))
            fail_msg("%s: zero row: dx[%d] = %.9g, expected dy*w/sqrt(eps) = %.9g", tb->name, j,
                     (double)dx[j], want);
        if (dw[j] != 0.0f)
            fail_msg("%s: zero row: dw[%d] = %.9g, expected exactly 0 (n = 0)", tb->name, j, (double)dw[j]);
    }
    /* eps = 0: rstd = 1/sqrt(0) = inf and y = 0 * inf = NaN, as the formula and PyTorch give */
    forward_row(tb->be, RMSNORM_F32, x, w, 4, 0.0f, y, &rstd);
    if (!(isinf(rstd) && rstd > 0.0f))
        fail_msg("%s: zero row, eps = 0: rstd = %.9g, expected +inf", tb->name, (double)rstd);
    for (int j = 0; j < 4; j++)
        if (!isnan(y[j]))
            fail_msg("%s: zero row, eps = 0: y[%d] = %.9g, expected NaN", tb->name, j, (double)y[j]);
}

/* The sign of an exactly zero dx (docs/numerics.md: dx = rstd * (g - n * c)
 * [+ dres]; only a present residual gradient is added). Where x = +-0 and
 * dy = +-0, g - n * c is a difference of zeros whose sign round-to-nearest
 * fixes: -0 - (+0) = -0, the other three +0. The row's other columns make c
 * > 0, so the sign of n * c is the sign of x. A backend that adds a +0
 * residual gradient, or folds the formula, turns the -0 into +0; the oracle
 * comparisons (tolerances) cannot see it. One row and many (the GPU backends
 * take other paths for few rows), rstd given and recomputed; and the
 * forward's y of a zero x, in every activation dtype. */
static void hand_zero_sign(void **state)
{
    enum { N = 64, ROWS = 512 };
    const rmst_backend *tb = rmst_backend_of(state);
    static float x[ROWS * N], dy[ROWS * N], dx[ROWS * N], rs[ROWS];
    float w[N], dw[N];
    for (int64_t j = 0; j < N; j++)
        w[j] = 1.0f + (float)(j % 3);
    for (int64_t r = 0; r < ROWS; r++) {
        for (int64_t j = 0; j < N; j++) {
            const int64_t k = r * N + j, z = (j + r) % 4; /* every sign pair in every row */
            x[k] = z == 0 ? 0.0f : (z == 1 ? -0.0f : (z == 2 ? 0.0f : 0.5f + 0.25f * (float)(j % 7)));
            dy[k] = z == 0 ? -0.0f : (z == 1 ? -0.0f : (z == 2 ? 0.0f : 1.0f + 0.125f * (float)(j % 5)));
        }
        rs[r] = 1.0f;
    }
    for (int given = 0; given < 2; given++) {
        for (int64_t rows = 1; rows <= ROWS; rows += ROWS - 1) {
            backward_rows(tb->be, rows, x, w, dy, N, 1e-5f, given ? rs : NULL, dx, dw);
            for (int64_t k = 0; k < rows * N; k++) {
                if (x[k] != 0.0f)
                    continue;
                const float g = dy[k] * w[k % N], nc = x[k]; /* the signs of g and n * c */
                const int want = signbit(g - nc) != 0;
                if (dx[k] != 0.0f || (signbit(dx[k]) != 0) != want)
                    fail_msg("%s: %lld rows, rstd %s: dx[%lld] = %g, expected %s0 (x = %s0, dy = %s0)", tb->name,
                             (long long)rows, given ? "given" : "recomputed", (long long)k, (double)dx[k],
                             want ? "-" : "+", signbit(x[k]) ? "-" : "+", signbit(dy[k]) ? "-" : "+");
            }
        }
    }
    /* the forward keeps a zero x's sign: y = (x * rstd) * w with rstd, w > 0 */
    static const rmsnorm_dtype ts[3] = {RMSNORM_F32, RMSNORM_F16, RMSNORM_BF16};
    for (int k = 0; k < 3; k++) {
        float y[N], rstd;
        forward_row(tb->be, ts[k], x, w, N, 1e-5f, y, &rstd);
        for (int64_t j = 0; j < N; j++) {
            if (x[j] == 0.0f && (y[j] != 0.0f || signbit(y[j]) != signbit(x[j])))
                fail_msg("%s dtype %d: y[%lld] = %g for x = %s0", tb->name, (int)ts[k], (long long)j, (double)y[j],
                         signbit(x[j]) ? "-" : "+");
        }
    }
}

static void hand_tiny_values(void **state)
{
    const rmst_backend *tb = rmst_backend_of(state);
    static const float x[2] = {1e-4f, 1e-4f};
    float y[2];
    float rstd;
    forward_row(tb->be, RMSNORM_F32, x, NULL, 2, 1e-5f, y, &rstd);
    for (int j = 0; j < 2; j++)
        if (fabs((double)y[j] - 0.031607) > TOL6)
            fail_msg("%s: y[%d] = %.9g, expected 0.031607 (eps dominates mean(x^2))", tb->name, j,
                     (double)y[j]);
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(hand_forward_1234),
        cmocka_unit_test(hand_backward_12),
        cmocka_unit_test(hand_zero_row),
        cmocka_unit_test(hand_zero_sign),
        cmocka_unit_test(hand_tiny_values),
    };
    if (rmst_main_init(argc, argv) != 0)
        return 2;
    return rmst_run_per_backend("hand", tests, sizeof tests / sizeof tests[0]) != 0;
}
