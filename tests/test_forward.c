/*
 * Forward against the fp64 oracle over the case matrix of fwd_case.c, on every
 * backend. Each case runs twice, with two different poisons in the outputs, so
 * an element left unwritten cannot pass; stride padding, scale padding and the
 * bytes past each output must keep the poison.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ref/formats.h"
#include "tests/backends.h"
#include "tests/check.h"
#include "tests/fwd_case.h"
#include "tests/oracle.h"

/* Cases up to this many elements run twice, with two poisons. */
#define RMST_SECOND_PASS_MAX (INT64_C(1) << 16)

/* The outputs of one exec, copied out of the mirrors. */
typedef struct fwd_out {
    unsigned char *h, *y, *q, *rstd, *scale;
    unsigned char pad_h, pad_y, pad_q, pad_rstd, pad_scale;
} fwd_out;

static unsigned char *dup_buf(const rmst_buf *b)
{
    unsigned char *p;
    if (b == NULL || b->host == NULL)
        return NULL;
    p = malloc(b->bytes);
    assert_non_null(p);
    memcpy(p, b->host, b->bytes);
    return p;
}

static void snapshot(const rmst_fwd_run *run, fwd_out *o)
{
    o->h = dup_buf(run->hb);
    o->y = dup_buf(run->yb);
    o->q = dup_buf(&run->q);
    o->rstd = dup_buf(&run->rstd);
    o->scale = dup_buf(&run->scale);
    o->pad_h = run->pad_h;
    o->pad_y = run->pad_y;
    o->pad_q = run->pad_q;
    o->pad_rstd = run->pad_rstd;
    o->pad_scale = run->pad_scale;
}

static void out_free(fwd_out *o)
{
    free(o->h);
    free(o->y);
    free(o->q);
    free(o->rstd);
    free(o->scale);
}

static float get_f32(const unsigned char *p, size_t i)
{
    float f;
    memcpy(&f, p + i * sizeof f, sizeof f);
    return f;
}

/* Stride padding of a row-major output and the bytes past its last row. */
static void check_padding(rmst_report *rep, const char *name, const unsigned char *buf, size_t bytes,
                          int64_t rows, int64_t cols, int64_t stride, size_t es, unsigned char pad)
{
    for (int64_t r = 0; r + 1 < rows; r++) {
        size_t from = ((size_t)(r * stride) + (size_t)cols) * es;
        size_t to = (size_t)((r + 1) * stride) * es;
        if (!rmst_expect_untouched(rep, name, buf, from, to, pad))
            return;
    }
    (void)rmst_expect_untouched(rep, name, buf, rmst_view_bytes(rows, cols, stride, es), bytes, pad);
}

static void check_case(const char *bname, rmst_fwd_run *run, const fwd_out *outs, int nout,
                       rmst_report *rep)
{
    const rmst_fwd_case *c = &run->c;
    size_t ncols = (size_t)c->cols;
    double *h = malloc(ncols * sizeof *h);
    double *n = malloc(ncols * sizeof *n);
    double *v = malloc(ncols * sizeof *v);
    int64_t r4 = (c->rows + 3) / 4 * 4;
    int pow2 = (c->flags & RMSNORM_SCALE_POW2) != 0u;
    rmst_norm_params p;
    (void)bname;
    assert_non_null(h);
    assert_non_null(n);
    assert_non_null(v);
    p.cols = c->cols;
    p.t = c->t;
    p.weight = run->w.host;
    p.weight_dtype = run->wdt;
    p.weight_offset = (double)c->weight_offset;
    p.eps = (double)c->eps;
    p.flags = c->flags;

    for (int64_t r = 0; r < c->rows && rep->failures < 64; r++) {
        size_t base = (size_t)(r * c->stride);
        const unsigned char *xr = run->x_img + base * run->es;
        const unsigned char *rr = run->r_img != NULL ? run->r_img + base * run->es : NULL;
        double rstd = rmst_oracle_forward_row(&p, xr, rr, h, n, v);
        for (int k = 0; k < nout; k++) {
            const fwd_out *o = &outs[k];
            if (o->h != NULL) {
                for (int64_t j = 0; j < c->cols; j++) {
                    float want = (float)h[j];
                    float got = rmsi_load(o->h, c->t, base + (size_t)j);
                    rep->checks++;
                    /* bit-exact: compare the stored patterns (-0 included) */
                    if (isnan(want) ? !isnan(got)
                                    : rmsi_f32_bits(rmsi_round_to(got, c->t)) != rmsi_f32_bits(want))
                        rmst_report_fail(rep, "h", r, j, "got %.9g, expected %.9g bit-exactly",
                                         (double)got, (double)want);
                }
            }
            if (o->rstd != NULL)
                (void)rmst_expect_close(rep, "rstd", r, -1, (double)get_f32(o->rstd, (size_t)r), rstd,
                                        rmst_bound_rel(rstd, 1e-5));
            if (o->y != NULL) {
                for (int64_t j = 0; j < c->cols; j++) {
                    double got = (double)rmsi_load(o->y, c->t, base + (size_t)j);
                    double bound = rmst_bound_y(v[j], n[j], rmst_weff(&p, j), c->t, c->flags);
                    (void)rmst_expect_close(rep, "y", r, j, got, v[j], bound);
                }
            }
            if (o->q != NULL) {
                size_t qbase = (size_t)(r * run->qstride);
                for (int64_t j = 0; j < c->cols; j++) {
                    double s;
                    if (c->quant == RMSNORM_QUANT_PER_TENSOR) {
                        s = (double)c->static_scale;
                    } else if (c->quant == RMSNORM_QUANT_PER_TOKEN) {
                        s = (double)get_f32(o->scale, (size_t)r);
                        if (j == 0)
                            (void)rmst_expect_dyn_scale(
                                rep, "scale", r, -1, s,
                                rmst_oracle_dyn_scale(v, c->cols, (double)c->scale_ub, c->qt),
                                rmst_dyn_scale_slack(&p, n, 0, c->cols, c->qt), pow2);
                    } else {
                        int64_t blk = j / 128;
                        s = (double)get_f32(o->scale, (size_t)(blk * r4 + r));
                        if (j % 128 == 0)
                            (void)rmst_expect_dyn_scale(rep, "scale", r, blk, s,
                                                        rmst_oracle_dyn_scale(v + j, 128, 0.0, c->qt),
                                                        rmst_dyn_scale_slack(&p, n, j, 128, c->qt),
                                                        pow2);
                    }
                    (void)rmst_expect_fp8(rep, r, j, o->q[qbase + (size_t)j], c->qt, v[j], s);
                }
            }
        }
    }

    for (int k = 0; k < nout; k++) {
        const fwd_out *o = &outs[k];
        if (o->h != NULL)
            check_padding(rep, "h padding", o->h, run->hb->bytes, c->rows, c->cols, c->stride, run->es,
                          o->pad_h);
        if (o->y != NULL)
            check_padding(rep, "y padding", o->y, run->yb->bytes, c->rows, c->cols, c->stride, run->es,
                          o->pad_y);
        if (o->rstd != NULL)
            (void)rmst_expect_untouched(rep, "rstd past rows", o->rstd, (size_t)c->rows * sizeof(float),
                                        run->rstd.bytes, o->pad_rstd);
        if (o->q != NULL) {
            check_padding(rep, "q padding", o->q, run->q.bytes, c->rows, c->cols, run->qstride, 1,
                          o->pad_q);
            if (c->quant == RMSNORM_QUANT_PER_TENSOR) {
                rep->checks++;
                if (get_f32(o->scale, 0) != c->static_scale)
                    rmst_report_fail(rep, "static scale", -1, 0, "the input scale was modified");
                (void)rmst_expect_untouched(rep, "scale past [0]", o->scale, sizeof(float),
                                            run->scale.bytes, o->pad_scale);
            } else if (c->quant == RMSNORM_QUANT_PER_TOKEN) {
                (void)rmst_expect_untouched(rep, "scale past rows", o->scale,
                                            (size_t)c->rows * sizeof(float), run->scale.bytes,
                                            o->pad_scale);
            } else {
                /* the round_up(rows, 4) padding of every block column stays unwritten */
                for (int64_t blk = 0; blk < c->cols / 128; blk++)
                    (void)rmst_expect_untouched(rep, "block scale padding", o->scale,
                                                (size_t)(blk * r4 + c->rows) * sizeof(float),
                                                (size_t)(blk * r4 + r4) * sizeof(float), o->pad_scale);
                (void)rmst_expect_untouched(rep, "scale past the layout", o->scale,
                                            run->nscale * sizeof(float), run->scale.bytes, o->pad_scale);
            }
        }
    }
    free(h);
    free(n);
    free(v);
}

static int run_case(const rmst_backend *tb, const rmst_fwd_case *c)
{
    char desc[320];
    rmst_report rep;
    rmst_fwd_run run;
    fwd_out outs[2];
    rmsnorm_status st;
    int npass;
    int failed;
    rmst_fwd_case_describe(c, desc, sizeof desc);
    rmst_report_begin(&rep, tb->name, desc);
    rmst_fwd_run_init(&run, tb->be, c);
    memset(outs, 0, sizeof outs);
    /* Pass 0 poisons with NaN, which no finite expected value matches; pass 1
     * (0x5A bytes) also catches unwritten elements where NaN is expected,
     * and is run where it is cheap. */
    npass = c->rows * c->cols <= RMST_SECOND_PASS_MAX ? 2 : 1;
    st = rmst_fwd_run_exec(&run, 0);
    if (st == RMSNORM_OK) {
        snapshot(&run, &outs[0]);
        if (npass == 2)
            st = rmst_fwd_run_exec(&run, 1);
    }
    if (st == RMSNORM_OK) {
        if (npass == 2)
            snapshot(&run, &outs[1]);
        check_case(tb->name, &run, outs, npass, &rep);
    } else {
        if (!(st == RMSNORM_ERR_UNSUPPORTED && rmst_pin_sweep()))
            rmst_report_fail(&rep, "status", -1, -1, "rmsnorm_forward returned %d (%s)", (int)st,
                             rmsnorm_status_string(st));
    }
    out_free(&outs[0]);
    out_free(&outs[1]);
    rmst_fwd_run_free(&run);
    failed = rep.failures > 0;
    if (failed)
        print_error("FAILED CASE %s (%ld failures)\n", rep.what, rep.failures);
    return failed;
}

static void run_dtype(void **state, rmsnorm_dtype t)
{
    const rmst_backend *tb = rmst_backend_of(state);
    size_t ran = 0;
    size_t failed = 0;
    clock_t t0 = clock();
    for (size_t i = 0; i < rmst_fwd_case_count(); i++) {
        rmst_fwd_case c;
        if (!rmst_fwd_case_at(i, &c) || c.t != t)
            continue;
        failed += (size_t)run_case(tb, &c);
        ran++;
    }
    print_message("%s: %zu forward cases, %zu failed, %.1f s CPU\n", tb->name, ran, failed,
                  (double)(clock() - t0) / CLOCKS_PER_SEC);
    if (failed > 0)
        fail_msg("%zu of %zu forward cases failed on %s", failed, ran, tb->name);
}

static void forward_f32(void **state) { run_dtype(state, RMSNORM_F32); }
static void forward_f16(void **state) { run_dtype(state, RMSNORM_F16); }
static void forward_bf16(void **state) { run_dtype(state, RMSNORM_BF16); }

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(forward_f32),
        cmocka_unit_test(forward_f16),
        cmocka_unit_test(forward_bf16),
    };
    if (rmst_main_init(argc, argv) != 0)
        return 2;
    return rmst_run_per_backend("forward", tests, sizeof tests / sizeof tests[0]) != 0;
}
