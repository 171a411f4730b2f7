/*
 * Every non-ref backend against ref on every case of the forward and backward
 * matrices (issue 4): prints the largest distance per output and dtype (ulps
 * of the output dtype at the larger magnitude for y and dx, bit patterns for h,
 * fp8 codes for q, relative for rstd, scales and dw) and asserts the triangle
 * bound of docs/numerics.md: both backends meet the oracle bound, so they are
 * within twice it of each other (h is bit-exact on every backend).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ref/formats.h"
#include "tests/backends.h"
#include "tests/bwd_case.h"
#include "tests/check.h"
#include "tests/fwd_case.h"
#include "tests/oracle.h"

typedef struct stats {
    uint32_t h_ulp, q_codes;
    double y_ulp, dx_ulp; /* |a - r| in ulps of the output dtype at the larger magnitude */
    double rstd_rel, scale_rel, dw_rel;
    size_t cases;
} stats;

static uint32_t bits_at(const unsigned char *p, rmsnorm_dtype t, size_t i)
{
    size_t es = rmsnorm_dtype_size(t);
    uint32_t u = 0;
    if (es == 4) {
        memcpy(&u, p + i * 4, 4);
    } else if (es == 2) {
        uint16_t h;
        memcpy(&h, p + i * 2, 2);
        u = h;
    } else {
        u = p[i];
    }
    return u;
}

static float f32_at(const unsigned char *p, size_t i)
{
    float f;
    memcpy(&f, p + i * sizeof f, sizeof f);
    return f;
}

static double rel(double a, double r)
{
    if (a == r || (isnan(a) && isnan(r)))
        return 0.0;
    return fabs(a - r) / fabs(r);
}

static void max_u(uint32_t *m, uint32_t v)
{
    if (v > *m)
        *m = v;
}

static double ulps(double a, double r, rmsnorm_dtype t)
{
    if (a == r || (isnan(a) && isnan(r)))
        return 0.0;
    return fabs(a - r) / rmst_ulp(fmax(fabs(a), fabs(r)), t);
}

static void max_d(double *m, double v)
{
    if (v > *m || isnan(v))
        *m = v;
}

static void compare_forward(const rmst_fwd_run *ra, const rmst_fwd_run *rr, stats *st, rmst_report *rep)
{
    const rmst_fwd_case *c = &ra->c;
    size_t nc = (size_t)c->cols;
    double *h = malloc(nc * sizeof *h), *n = malloc(nc * sizeof *n), *v = malloc(nc * sizeof *v);
    int64_t r4 = (c->rows + 3) / 4 * 4;
    rmst_norm_params p = {c->cols, c->t, ra->w.host, ra->wdt, (double)c->weight_offset, (double)c->eps,
                          c->flags};
    assert_non_null(h);
    assert_non_null(n);
    assert_non_null(v);
    for (int64_t r = 0; r < c->rows && rep->failures < 32; r++) {
        size_t base = (size_t)(r * c->stride);
        (void)rmst_oracle_forward_row(&p, ra->x_img + base * ra->es,
                                      ra->r_img != NULL ? ra->r_img + base * ra->es : NULL, h, n, v);
        if (ra->hb != NULL) {
            for (int64_t j = 0; j < c->cols; j++) {
                uint32_t d = rmst_ulp_distance(bits_at(ra->hb->host, c->t, base + (size_t)j),
                                               bits_at(rr->hb->host, c->t, base + (size_t)j), c->t);
                max_u(&st->h_ulp, d);
                rep->checks++;
                if (d != 0)
                    rmst_report_fail(rep, "h", r, j, "differs from ref by %u ulp (must be bit-exact)", d);
            }
        }
        if (ra->yb != NULL) {
            for (int64_t j = 0; j < c->cols; j++) {
                size_t k = base + (size_t)j;
                double a = (double)rmsi_load(ra->yb->host, c->t, k);
                double b = (double)rmsi_load(rr->yb->host, c->t, k);
                max_d(&st->y_ulp, ulps(a, b, c->t));
                (void)rmst_expect_close(rep, "y vs ref", r, j, a, b,
                                        2.0 * rmst_bound_y(v[j], n[j], rmst_weff(&p, j), c->t, c->flags));
            }
        }
        if (ra->rstd.host != NULL) {
            double a = (double)f32_at(ra->rstd.host, (size_t)r), b = (double)f32_at(rr->rstd.host, (size_t)r);
            max_d(&st->rstd_rel, rel(a, b));
            (void)rmst_expect_close(rep, "rstd vs ref", r, -1, a, b, 2e-5 * fabs(b));
        }
        if (ra->q.host != NULL) {
            size_t qb = (size_t)(r * ra->qstride);
            for (int64_t j = 0; j < c->cols; j++) {
                uint32_t d = rmst_ulp_distance(ra->q.host[qb + (size_t)j], rr->q.host[qb + (size_t)j], c->qt);
                max_u(&st->q_codes, d);
                rep->checks++;
                if (d > 2)
                    rmst_report_fail(rep, "q vs ref", r, j, "codes 0x%02x and 0x%02x are %u apart (max 2)",
                                     ra->q.host[qb + (size_t)j], rr->q.host[qb + (size_t)j], d);
            }
            if (c->quant != RMSNORM_QUANT_PER_TENSOR) {
                int64_t nb = c->quant == RMSNORM_QUANT_PER_TOKEN ? 1 : c->cols / 128;
                for (int64_t k = 0; k < nb; k++) {
                    size_t i = c->quant == RMSNORM_QUANT_PER_TOKEN ? (size_t)r : (size_t)(k * r4 + r);
                    double a = (double)f32_at(ra->scale.host, i), b = (double)f32_at(rr->scale.host, i);
                    double raw = c->quant == RMSNORM_QUANT_PER_TOKEN
                                     ? rmst_oracle_dyn_scale(v, c->cols, (double)c->scale_ub, c->qt)
                                     : rmst_oracle_dyn_scale(v + k * 128, 128, 0.0, c->qt);
                    /* both may be off the oracle by the bound, so 2x apart */
                    double slack = c->quant == RMSNORM_QUANT_PER_TOKEN
                                       ? rmst_dyn_scale_slack(&p, n, 0, c->cols, c->qt)
                                       : rmst_dyn_scale_slack(&p, n, k * 128, 128, c->qt);
                    max_d(&st->scale_rel, rel(a, b));
                    rep->checks++;
                    if ((c->flags & RMSNORM_SCALE_POW2) != 0u) {
                        /* equal, or the two sides of a power of two the raw scale is within the bound of */
                        double pw = rmst_pow2_ceil(raw);
                        int near = fabs(raw - pw) <= 1e-5 * pw + slack ||
                                   fabs(raw - pw / 2) <= 1e-5 * pw / 2 + slack;
                        if (a != b && !(near && (a == 2 * b || b == 2 * a)))
                            rmst_report_fail(rep, "pow2 scale vs ref", r, k, "%.9g vs %.9g (raw %.9g)", a, b, raw);
                    } else if (fabs(a - b) > 2e-5 * raw + 2.0 * slack) {
                        rmst_report_fail(rep, "scale vs ref", r, k, "%.9g vs %.9g (raw %.9g)", a, b, raw);
                    }
                }
            }
        }
    }
    free(h);
    free(n);
    free(v);
}

static void compare_backward(const rmst_bwd_run *ra, const rmst_bwd_run *rr, stats *st, rmst_report *rep)
{
    const rmst_bwd_case *c = &ra->c;
    size_t nc = (size_t)c->cols;
    double *dx = malloc(nc * sizeof *dx), *g = malloc(nc * sizeof *g), *n = malloc(nc * sizeof *n);
    double *dw = calloc(nc, sizeof *dw);
    rmst_norm_params p = {c->cols, c->t, ra->w.host, ra->wdt, (double)c->weight_offset, (double)c->eps,
                          c->flags};
    assert_non_null(dx);
    assert_non_null(g);
    assert_non_null(n);
    assert_non_null(dw);
    for (int64_t r = 0; r < c->rows; r++) {
        size_t base = (size_t)(r * c->stride);
        double mean_abs;
        double rstd = rmst_oracle_backward_row(&p, ra->x_img + base * ra->es, ra->dy_img + base * ra->es,
                                               ra->dres_img != NULL ? ra->dres_img + base * ra->es : NULL,
                                               ra->rstd_img != NULL ? &ra->rstd_img[r] : NULL, dx, g, n, dw,
                                               &mean_abs);
        if (rep->failures >= 32)
            continue;
        for (int64_t j = 0; j < c->cols; j++) {
            size_t k = base + (size_t)j;
            double a = (double)rmsi_load(ra->dxb->host, c->t, k);
            double b = (double)rmsi_load(rr->dxb->host, c->t, k);
            max_d(&st->dx_ulp, ulps(a, b, c->t));
            (void)rmst_expect_close(rep, "dx vs ref", r, j, a, b,
                                    2.0 * rmst_bound_dx(dx[j], rstd, g[j], n[j], mean_abs, c->t));
        }
    }
    if (ra->dw.host != NULL) {
        const float *a = (const float *)(const void *)ra->dw.host;
        const float *b = (const float *)(const void *)rr->dw.host;
        double num = 0.0, den = 0.0, on = 0.0;
        for (int64_t j = 0; j < c->cols; j++) {
            num += ((double)a[j] - (double)b[j]) * ((double)a[j] - (double)b[j]);
            den += (double)b[j] * (double)b[j];
            on += dw[j] * dw[j];
        }
        max_d(&st->dw_rel, den > 0.0 ? sqrt(num / den) : sqrt(num));
        rep->checks++;
        if (!(sqrt(num) <= 2.0 * rmst_dw_rel_bound(c->t, c->flags) * sqrt(on) + 2e-30))
            rmst_report_fail(rep, "dw vs ref", -1, -1, "relative L2 distance %.3g > %.3g",
                             den > 0.0 ? sqrt(num / den) : sqrt(num), 2.0 * rmst_dw_rel_bound(c->t, c->flags));
    }
    free(dx);
    free(g);
    free(n);
    free(dw);
}

static const char *tname(rmsnorm_dtype t)
{
    return t == RMSNORM_F32 ? "f32" : t == RMSNORM_F16 ? "f16" : "bf16";
}

static void vs_ref(void **state)
{
    const rmst_backend *tb = rmst_backend_of(state);
    const rmsnorm_backend *ref = rmsnorm_backend_find("ref");
    static const rmsnorm_dtype ts[3] = {RMSNORM_F32, RMSNORM_F16, RMSNORM_BF16};
    stats st[3];
    size_t failed = 0, skipped = 0; /* per case: every case runs in this one cmocka test */
    assert_non_null(ref);
    if (tb->be == ref) {
        print_message("SKIP: ref is the reference itself\n");
        skip();
        return;
    }
    memset(st, 0, sizeof st);
    for (size_t i = 0; i < rmst_fwd_case_count(); i++) {
        rmst_fwd_case c;
        rmst_fwd_run ra, rr;
        rmst_report rep;
        char desc[320];
        size_t d;
        if (!rmst_fwd_case_at(i, &c))
            continue;
        d = c.t == RMSNORM_F32 ? 0 : c.t == RMSNORM_F16 ? 1 : 2;
        rmst_fwd_case_describe(&c, desc, sizeof desc);
        rmst_report_begin(&rep, tb->name, desc);
        rmst_fwd_run_init(&ra, tb->be, &c);
        rmst_fwd_run_init(&rr, ref, &c);
        if (rmst_pinned_out(rmst_fwd_run_exec(&ra, 0))) {
            skipped++;
            rmst_fwd_run_free(&ra);
            rmst_fwd_run_free(&rr);
            continue;
        }
        assert_int_equal(rmst_fwd_run_exec(&rr, 0), RMSNORM_OK);
        compare_forward(&ra, &rr, &st[d], &rep);
        st[d].cases++;
        failed += rep.failures > 0;
        rmst_fwd_run_free(&ra);
        rmst_fwd_run_free(&rr);
    }
    for (size_t i = 0; i < rmst_bwd_case_count(); i++) {
        rmst_bwd_case c;
        rmst_bwd_run ra, rr;
        rmst_report rep;
        char desc[320];
        size_t d;
        if (!rmst_bwd_case_at(i, &c))
            continue;
        d = c.t == RMSNORM_F32 ? 0 : c.t == RMSNORM_F16 ? 1 : 2;
        rmst_bwd_case_describe(&c, desc, sizeof desc);
        rmst_report_begin(&rep, tb->name, desc);
        rmst_bwd_run_init(&ra, tb->be, &c);
        rmst_bwd_run_init(&rr, ref, &c);
        if (rmst_pinned_out(rmst_bwd_run_exec(&ra, 0))) {
            skipped++;
            rmst_bwd_run_free(&ra);
            rmst_bwd_run_free(&rr);
            continue;
        }
        assert_int_equal(rmst_bwd_run_exec(&rr, 0), RMSNORM_OK);
        compare_backward(&ra, &rr, &st[d], &rep);
        st[d].cases++;
        failed += rep.failures > 0;
        rmst_bwd_run_free(&ra);
        rmst_bwd_run_free(&rr);
    }
    for (size_t d = 0; d < 3; d++)
        print_message("%s vs ref, %s, %zu cases: max distance y %.3g ulp, h %u ulp, q %u codes, dx %.3g ulp; "
                      "max relative rstd %.2g, scale %.2g, dw (L2) %.2g\n",
                      tb->name, tname(ts[d]), st[d].cases, st[d].y_ulp, st[d].h_ulp, st[d].q_codes,
                      st[d].dx_ulp, st[d].rstd_rel, st[d].scale_rel, st[d].dw_rel);
    if (skipped > 0)
        print_message("%zu cases skipped: the pinned config does not fit them (RMST_PIN_SWEEP=1)\n", skipped);
    if (failed > 0)
        fail_msg("%zu cases of %s differ from ref beyond twice the oracle bound", failed, tb->name);
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(vs_ref),
    };
    if (rmst_main_init(argc, argv) != 0)
        return 2;
    return rmst_run_per_backend("vs_ref", tests, sizeof tests / sizeof tests[0]) != 0;
}
