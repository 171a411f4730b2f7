/*
 * Backward against the fp64 oracle over the case matrix of bwd_case.c, on
 * every backend: dx per element, dw in relative L2, rstd given or recomputed,
 * the residual gradient, dx in place over dy. Each case runs with two poisons
 * in dx and dweight (and a NaN-filled workspace), so nothing may be left
 * unwritten; stride padding and the bytes past each output keep the poison.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ref/formats.h"
#include "tests/backends.h"
#include "tests/bwd_case.h"
#include "tests/check.h"
#include "tests/oracle.h"

/* Cases up to this many elements run twice, with two poisons. */
#define RMST_SECOND_PASS_MAX (INT64_C(1) << 16)

typedef struct bwd_out {
    unsigned char *dx;
    float *dw;
    unsigned char pad_dx, pad_dw;
    size_t dx_bytes, dw_bytes;
} bwd_out;

static void snapshot(const rmst_bwd_run *run, bwd_out *o)
{
    o->dx_bytes = run->dxb->bytes;
    o->dx = malloc(o->dx_bytes);
    assert_non_null(o->dx);
    memcpy(o->dx, run->dxb->host, o->dx_bytes);
    o->dw = NULL;
    o->dw_bytes = 0;
    if (run->dw.host != NULL) {
        o->dw_bytes = run->dw.bytes;
        o->dw = malloc(o->dw_bytes);
        assert_non_null(o->dw);
        memcpy(o->dw, run->dw.host, o->dw_bytes);
    }
    o->pad_dx = run->pad_dx;
    o->pad_dw = run->pad_dw;
}

static void check_case(const rmst_bwd_run *run, const bwd_out *outs, int nout, rmst_report *rep)
{
    const rmst_bwd_case *c = &run->c;
    size_t ncols = (size_t)c->cols;
    double *dx = malloc(ncols * sizeof *dx);
    double *g = malloc(ncols * sizeof *g);
    double *n = malloc(ncols * sizeof *n);
    double *dw = calloc(ncols, sizeof *dw);
    rmst_norm_params p;
    assert_non_null(dx);
    assert_non_null(g);
    assert_non_null(n);
    assert_non_null(dw);
    p.cols = c->cols;
    p.t = c->t;
    p.weight = run->w.host;
    p.weight_dtype = run->wdt;
    p.weight_offset = (double)c->weight_offset;
    p.eps = (double)c->eps;
    p.flags = c->flags;
    for (int64_t r = 0; r < c->rows; r++) {
        size_t base = (size_t)(r * c->stride);
        double mean_abs;
        double rstd = rmst_oracle_backward_row(
            &p, run->x_img + base * run->es, run->dy_img + base * run->es,
            run->dres_img != NULL ? run->dres_img + base * run->es : NULL,
            run->rstd_img != NULL ? &run->rstd_img[r] : NULL, dx, g, n, dw, &mean_abs);
        if (rep->failures >= 64)
            continue;
        for (int k = 0; k < nout; k++) {
            for (int64_t j = 0; j < c->cols; j++) {
                double got = (double)rmsi_load(outs[k].dx, c->t, base + (size_t)j);
                (void)rmst_expect_close(rep, "dx", r, j, got, dx[j],
                                        rmst_bound_dx(dx[j], rstd, g[j], n[j], mean_abs, c->t));
            }
        }
    }
    for (int k = 0; k < nout; k++) {
        const bwd_out *o = &outs[k];
        for (int64_t r = 0; r + 1 < c->rows; r++)
            (void)rmst_expect_untouched(rep, "dx padding", o->dx,
                                        ((size_t)(r * c->stride) + ncols) * run->es,
                                        (size_t)((r + 1) * c->stride) * run->es, o->pad_dx);
        (void)rmst_expect_untouched(rep, "dx past the last row", o->dx, run->mat_bytes, o->dx_bytes,
                                    o->pad_dx);
        if (o->dw != NULL) {
            (void)rmst_expect_l2(rep, "dw", o->dw, dw, c->cols, rmst_dw_rel_bound(c->t, c->flags));
            (void)rmst_expect_untouched(rep, "dw past cols", (const unsigned char *)o->dw,
                                        ncols * sizeof(float), o->dw_bytes, o->pad_dw);
        }
    }
    free(dx);
    free(g);
    free(n);
    free(dw);
}

static int run_case(const rmst_backend *tb, const rmst_bwd_case *c)
{
    char desc[320];
    rmst_report rep;
    rmst_bwd_run run;
    bwd_out outs[2];
    rmsnorm_status st;
    int npass;
    rmst_bwd_case_describe(c, desc, sizeof desc);
    rmst_report_begin(&rep, tb->name, desc);
    rmst_bwd_run_init(&run, tb->be, c);
    memset(outs, 0, sizeof outs);
    /* Pass 0 poisons with NaN, which no finite expected value matches; pass 1
     * (0x5A bytes) also catches unwritten elements where NaN is expected,
     * and is run where it is cheap. */
    npass = c->rows * c->cols <= RMST_SECOND_PASS_MAX ? 2 : 1;
    st = rmst_bwd_run_exec(&run, 0);
    if (st == RMSNORM_OK) {
        snapshot(&run, &outs[0]);
        if (npass == 2)
            st = rmst_bwd_run_exec(&run, 1);
    }
    if (st == RMSNORM_OK) {
        if (npass == 2)
            snapshot(&run, &outs[1]);
        check_case(&run, outs, npass, &rep);
    } else {
        if (!(st == RMSNORM_ERR_UNSUPPORTED && rmst_pin_sweep()))
            rmst_report_fail(&rep, "status", -1, -1, "rmsnorm_backward returned %d (%s)", (int)st,
                             rmsnorm_status_string(st));
    }
    for (int k = 0; k < 2; k++) {
        free(outs[k].dx);
        free(outs[k].dw);
    }
    rmst_bwd_run_free(&run);
    if (rep.failures > 0)
        print_error("FAILED CASE %s (%ld failures)\n", rep.what, rep.failures);
    return rep.failures > 0;
}

static void run_dtype(void **state, rmsnorm_dtype t)
{
    const rmst_backend *tb = rmst_backend_of(state);
    size_t ran = 0;
    size_t failed = 0;
    clock_t t0 = clock();
    for (size_t i = 0; i < rmst_bwd_case_count(); i++) {
        rmst_bwd_case c;
        if (!rmst_bwd_case_at(i, &c) || c.t != t)
            continue;
        failed += (size_t)run_case(tb, &c);
        ran++;
    }
    print_message("%s: %zu backward cases, %zu failed, %.1f s CPU\n", tb->name, ran, failed,
                  (double)(clock() - t0) / CLOCKS_PER_SEC);
    if (failed > 0)
        fail_msg("%zu of %zu backward cases failed on %s", failed, ran, tb->name);
}

static void backward_f32(void **state) { run_dtype(state, RMSNORM_F32); }
static void backward_f16(void **state) { run_dtype(state, RMSNORM_F16); }
static void backward_bf16(void **state) { run_dtype(state, RMSNORM_BF16); }

/* Rows the matrix above (at most 257 of them) does not give the CUDA ladder
 * on a 132-SM card: fp32 rows of 1025-2048 vectors, which take the register
 * path from 2.5 rows an SM (gpu/cuda/ladder.cc rmsi_bwd_wide, session 51;
 * clusters of 2 under 31 rows an SM, none above), and fp32 rows of 2048 and
 * 4096 columns at the row counts of session 52's rules (rmsi_bwd_f32_few,
 * rmsi_bwd_f32_512). Every backend runs them. */
static void backward_device_rows(void **state)
{
    static const rmst_bwd_case k[] = {
        {RMSNORM_F32, 400, 5120, 5120, RMST_W_SAME, 0.0f, RMSNORM_ROUND_ONCE, 0, 0, 0, 1, 1e-6f, 1.0, 0xd0e50001u},
        {RMSNORM_F32, 330, 8192, 8192, RMST_W_F32, 1.0f, RMSNORM_ROUND_LLAMA, 1, 0, 0, 1, 1e-6f, 1e3, 0xd0e50002u},
        {RMSNORM_F32, 1000, 4104, 4112, RMST_W_SAME, 0.0f, RMSNORM_ROUND_ONCE, 1, 0, 1, 1, 1e-5f, 1e-3, 0xd0e50003u},
        {RMSNORM_F32, 4100, 4100, 4100, RMST_W_F32, 0.0f, RMSNORM_ROUND_ONCE, 0, 0, 0, 1, 1e-6f, 1.0, 0xd0e50004u},
        /* session 52's rules (sm_90+): 1024 vectors at 1.75-32 rows an
         * SM, 512 vectors at 7.75-16 (the lean kernel, one row a CTA) and
         * from 64 rows an SM; a residual gradient beside */
        {RMSNORM_F32, 500, 4096, 4096, RMST_W_F32, 0.0f, RMSNORM_ROUND_ONCE, 0, 0, 0, 1, 1e-6f, 1.0, 0xd0e50005u},
        {RMSNORM_F32, 1501, 2048, 2052, RMST_W_SAME, 0.0f, RMSNORM_ROUND_LLAMA, 1, 0, 0, 1, 1e-6f, 1e2, 0xd0e50006u},
        {RMSNORM_F32, 9000, 2048, 2048, RMST_W_F32, 1.0f, RMSNORM_ROUND_ONCE, 0, 0, 1, 1, 1e-6f, 1.0, 0xd0e50007u},
        {RMSNORM_F32, 1501, 2048, 2048, RMST_W_SAME, 0.0f, RMSNORM_ROUND_ONCE, 1, 1, 0, 1, 1e-6f, 1.0, 0xd0e50008u},
        /* and with a residual gradient, which takes them under 28 GB/s of
         * HBM an SM (an H100; session 53) */
        {RMSNORM_F32, 1024, 4096, 4100, RMST_W_F32, 0.0f, RMSNORM_ROUND_ONCE, 0, 1, 0, 1, 1e-6f, 1.0, 0xd0e50009u},
        {RMSNORM_F32, 12000, 2048, 2048, RMST_W_SAME, 0.0f, RMSNORM_ROUND_LLAMA, 1, 1, 1, 1, 1e-6f, 1e2, 0xd0e5000au},
    };
    const rmst_backend *tb = rmst_backend_of(state);
    size_t failed = 0;
    for (size_t i = 0; i < sizeof k / sizeof k[0]; i++)
        failed += (size_t)run_case(tb, &k[i]);
    if (failed > 0)
        fail_msg("%zu of %zu device-row backward cases failed on %s", failed, sizeof k / sizeof k[0], tb->name);
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(backward_f32),
        cmocka_unit_test(backward_f16),
        cmocka_unit_test(backward_bf16),
        cmocka_unit_test(backward_device_rows),
    };
    if (rmst_main_init(argc, argv) != 0)
        return 2;
    return rmst_run_per_backend("backward", tests, sizeof tests / sizeof tests[0]) != 0;
}
