/*
 * Central-difference gradient checks in fp64: the library's F32 backward (dx
 * and dw) against finite differences of the scalar loss L = sum(dy * y), with
 * y evaluated in double by a forward written here independently of oracle.c.
 * The same differences also check the oracle's analytic backward, so the
 * formula the other tests trust is itself verified.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/backends.h"
#include "tests/buffers.h"
#include "tests/check.h"
#include "tests/oracle.h"
#include "tests/rng.h"

#define ROWS 3
#define MAX_COLS 64
/* Fourth-order central differences (Richardson: 8(f(+h) - f(-h)) - (f(+2h) -
 * f(-2h)), over 12h) with a step relative to the magnitude of the variable:
 * truncation ~ STEP^4 and cancellation ~ 1e-16 / STEP both stay near 1e-10
 * relative for these inputs. */
#define STEP 1e-3
/* What the differences themselves may be off by, relative to the scale of the
 * gradient; added to the contract's bound (not a loosening of it). */
#define FD_TOL 1e-8

typedef struct grad_problem {
    int64_t cols;
    int weighted;
    double offset;
    double eps;
    double mag; /* of x: the step for x is STEP * mag */
    double xs[ROWS * MAX_COLS], w[MAX_COLS], dy[ROWS * MAX_COLS];
} grad_problem;

/* L = sum_r sum_j dy_rj * x_rj * rstd_r * (w_j + offset), in double. */
static double loss(const grad_problem *p, const double *x, const double *w)
{
    double l = 0.0;
    for (int r = 0; r < ROWS; r++) {
        const double *xr = x + r * p->cols;
        double ss = 0.0;
        double rstd;
        for (int64_t j = 0; j < p->cols; j++)
            ss += xr[j] * xr[j];
        rstd = 1.0 / sqrt(ss / (double)p->cols + p->eps);
        for (int64_t j = 0; j < p->cols; j++) {
            double weff = p->weighted ? w[j] + p->offset : 1.0;
            l += p->dy[r * p->cols + j] * xr[j] * rstd * weff;
        }
    }
    return l;
}

/* dL/dv for v one of the entries of x or w. */
static double central_difference(const grad_problem *p, double *x, double *w, double *v, double h)
{
    double keep = *v;
    double l1, l2, m1, m2;
    *v = keep + h;
    l1 = loss(p, x, w);
    *v = keep - h;
    m1 = loss(p, x, w);
    *v = keep + 2.0 * h;
    l2 = loss(p, x, w);
    *v = keep - 2.0 * h;
    m2 = loss(p, x, w);
    *v = keep;
    return (8.0 * (l1 - m1) - (l2 - m2)) / (12.0 * h);
}

static void run_problem(const rmst_backend *tb, grad_problem *p, rmst_report *rep)
{
    int64_t n = ROWS * p->cols;
    size_t bytes = (size_t)n * sizeof(float);
    size_t wbytes = (size_t)p->cols * sizeof(float);
    double xd[ROWS * MAX_COLS] = {0}, wd[MAX_COLS] = {0};
    double fd_dx[ROWS * MAX_COLS] = {0}, fd_dw[MAX_COLS] = {0};
    double odx[MAX_COLS] = {0}, og[MAX_COLS] = {0}, on[MAX_COLS] = {0}, odw[MAX_COLS] = {0};
    float dx[ROWS * MAX_COLS] = {0}, dw[MAX_COLS] = {0};
    float xf[ROWS * MAX_COLS] = {0}, wf[MAX_COLS] = {0}, dyf[ROWS * MAX_COLS] = {0};
    rmst_bwd_bufs b;
    rmsnorm_backward_args a;
    rmst_norm_params np;

    for (int64_t i = 0; i < n; i++) {
        xf[i] = (float)p->xs[i];
        dyf[i] = (float)p->dy[i];
        xd[i] = (double)xf[i]; /* the stored inputs, exactly */
        p->dy[i] = (double)dyf[i];
    }
    for (int64_t j = 0; j < p->cols; j++) {
        wf[j] = (float)p->w[j];
        wd[j] = (double)wf[j];
    }

    /* the library, through the backend's memory */
    rmst_bwd_bufs_init(&b, tb->be, ROWS, p->cols, RMSNORM_F32, RMSNORM_F32);
    memcpy(b.x.host, xf, bytes);
    memcpy(b.dy.host, dyf, bytes);
    memcpy(b.w.host, wf, wbytes);
    rmst_bwd_bufs_args(&b, &a);
    a.weight_offset = (float)p->offset;
    a.eps = (float)p->eps;
    if (!p->weighted) { /* no weight, no dw */
        a.weight = NULL;
        a.dweight = NULL;
        a.workspace = NULL;
        a.workspace_bytes = 0;
    }
    rmst_expect_ok(rmsnorm_backward(tb->be, &a, NULL));
    rmst_buf_download(&b.dx);
    rmst_buf_download(&b.dw);
    memcpy(dx, b.dx.host, bytes);
    memcpy(dw, b.dw.host, wbytes);

    /* central differences; eps as the library saw it (fp32) */
    p->eps = (double)(float)p->eps;
    for (int64_t i = 0; i < n; i++)
        fd_dx[i] = central_difference(p, xd, wd, &xd[i], STEP * p->mag);
    for (int64_t j = 0; j < p->cols; j++)
        fd_dw[j] = central_difference(p, xd, wd, &wd[j], STEP);

    np.cols = p->cols;
    np.t = RMSNORM_F32;
    np.weight = p->weighted ? wf : NULL;
    np.weight_dtype = RMSNORM_F32;
    np.weight_offset = p->offset;
    np.eps = p->eps;
    np.flags = RMSNORM_ROUND_ONCE;
    memset(odw, 0, sizeof odw);
    for (int r = 0; r < ROWS; r++) {
        double mean_abs;
        double rstd = rmst_oracle_backward_row(&np, xf + r * p->cols, dyf + r * p->cols, NULL, NULL,
                                               odx, og, on, odw, &mean_abs);
        for (int64_t j = 0; j < p->cols; j++) {
            double fd = fd_dx[r * p->cols + j];
            double scale = rstd * (fabs(og[j]) + fabs(on[j]) * mean_abs);
            /* the oracle's formula is the derivative */
            (void)rmst_expect_close(rep, "oracle dx vs differences", r, j, odx[j], fd,
                                    FD_TOL * (scale + fabs(fd)));
            /* the library meets the contract's dx bound against the true derivative */
            (void)rmst_expect_close(rep, "dx vs differences", r, j, (double)dx[r * p->cols + j], fd,
                                    rmst_bound_dx(fd, rstd, og[j], on[j], mean_abs, RMSNORM_F32) +
                                        FD_TOL * (scale + fabs(fd)));
        }
    }
    if (p->weighted) {
        double norm = 0.0;
        for (int64_t j = 0; j < p->cols; j++)
            norm += fd_dw[j] * fd_dw[j];
        for (int64_t j = 0; j < p->cols; j++)
            (void)rmst_expect_close(rep, "oracle dw vs differences", -1, j, odw[j], fd_dw[j],
                                    FD_TOL * (sqrt(norm) + fabs(fd_dw[j])));
        (void)rmst_expect_l2(rep, "dw vs differences", dw, fd_dw, p->cols, 1e-5 + FD_TOL);
    }
    rmst_bwd_bufs_free(&b);
}

static void gradcheck_f32(void **state)
{
    const rmst_backend *tb = rmst_backend_of(state);
    static const int64_t cols[] = {1, 2, 7, 16, 64};
    /* eps small against mean(x^2), and eps comparable to it (x ~ 0.03) */
    static const double eps[] = {1e-5, 1e-3};
    static const double mag[] = {1.0, 0.03};
    long failed = 0;
    rmst_rng rng = {0x9a4d};
    grad_problem *p = malloc(sizeof *p);
    assert_non_null(p);
    for (size_t c = 0; c < sizeof cols / sizeof cols[0]; c++) {
        for (int wmode = 0; wmode < 3; wmode++) {
            for (int e = 0; e < 2; e++) {
                char desc[160];
                rmst_report rep;
                p->cols = cols[c];
                p->weighted = wmode > 0;
                p->offset = wmode == 2 ? 1.0 : 0.0;
                p->eps = eps[e];
                p->mag = mag[e];
                for (int64_t i = 0; i < ROWS * p->cols; i++) {
                    p->xs[i] = mag[e] * rmst_rng_sym(&rng);
                    p->dy[i] = rmst_rng_sym(&rng);
                }
                for (int64_t j = 0; j < p->cols; j++)
                    p->w[j] = 1.5 * rmst_rng_sym(&rng);
                (void)snprintf(desc, sizeof desc,
                               "gradcheck f32 rows=%d cols=%lld weight=%s offset=%g eps=%g magnitude=%g",
                               ROWS, (long long)p->cols, p->weighted ? "f32" : "none", p->offset,
                               p->eps, mag[e]);
                rmst_report_begin(&rep, tb->name, desc);
                run_problem(tb, p, &rep);
                if (rep.failures > 0) {
                    print_error("FAILED CASE %s\n", rep.what);
                    failed++;
                }
            }
        }
    }
    free(p);
    if (failed > 0)
        fail_msg("%ld gradient-check cases failed on %s", failed, tb->name);
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(gradcheck_f32),
    };
    if (rmst_main_init(argc, argv) != 0)
        return 2;
    return rmst_run_per_backend("gradcheck", tests, sizeof tests / sizeof tests[0]) != 0;
}
