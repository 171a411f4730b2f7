/*
 * fuzz_backward: every present backend's backward against an fp64 oracle and
 * against ref: dx (elementwise, docs/numerics.md's bound), dw (fp32, norm
 * bound), the residual gradient added into dx, with rstd given or recomputed,
 * dx in place on dy or on dresidual, and the usual untouched-bytes check (the
 * workspace is scratch and may be written anywhere).
 */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz/data_producer.h"
#include "fuzz/oracle.h"
#include "fuzz/report.h"
#include "fuzz/tensor.h"
#include "ref/formats.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

enum { BB_DY, BB_X, BB_W, BB_RSTD, BB_DRES, BB_DX, BB_DW, BB_WS, BB_N };
static const char *const bb_name[BB_N] = {"dy", "x", "weight", "rstd", "dresidual", "dx",
                                          "dweight", "workspace"};

typedef struct bwd_case {
    int64_t rows, cols;
    int64_t stride[BB_N];
    rmsnorm_dtype t, wt;
    int has_w, has_dres, has_dw, rstd_given;
    int dx_in; /* BB_DX, BB_DY or BB_DRES */
    float w_offset, eps;
    uint32_t flags;
    fz_buf master[BB_N];
    int present[BB_N];
    double *weff;   /* [cols] */
    double *rstd;   /* [rows] */
    int *checked;   /* [rows] row compared numerically */
    double *dx;     /* [rows * cols] oracle dx */
    double *dxb;    /* [rows * cols] its bound */
    double *dw;     /* [cols] */
    double *dwabs;  /* [cols] sum of |dy * m| (the conditioning of dw) */
    double *dwsub;  /* [cols] sum of |dy| * (the spacing of m) over terms whose n is below
                       fp32's normal range: what fp32's n loses there (outside the contract) */
    int dw_ok;      /* every row in range: dw compared */
} bwd_case;

typedef struct bwd_run {
    const rmsnorm_backend *be;
    fz_buf buf[BB_N];
} bwd_run;

static const int64_t cols_list[] = {1, 2, 3, 7, 8, 16, 17, 31, 32, 33, 64, 127, 128, 129, 256,
                                    257, 1023, 1024, 1025, 2048, 4097, 8999};

static int decode_case(fz_producer *p, bwd_case *c)
{
    uint8_t rb = fz_param_byte(p);
    c->rows = rb < 128 ? (int64_t)(rb % 9u) : (int64_t)(rb % 65u);
    uint8_t cb = fz_param_byte(p);
    c->cols = cb < 192 ? cols_list[cb % (sizeof cols_list / sizeof cols_list[0])]
                       : ((int64_t)fz_param_range(p, 1, 9000) | 1);
    /* a few wide rows: avx512 splits their columns over threads
     * (simd/bwd_wide.h) */
    if (cb >= 254)
        c->cols += 65536;
    if (c->rows * c->cols > 65536 && !fz_param_bool(p))
        c->rows = c->cols >= 65536 ? 1 : 65536 / c->cols;
    if (c->cols > 65536 && c->rows > 3)
        c->rows = 3;
    static const rmsnorm_dtype acts[3] = {RMSNORM_F32, RMSNORM_F16, RMSNORM_BF16};
    c->t = acts[fz_param_pick(p, 3)];
    uint8_t wb = fz_param_byte(p);
    c->has_w = (wb % 3u) != 0u;
    c->wt = (wb % 3u) == 1u ? RMSNORM_F32 : c->t;
    c->w_offset = (c->has_w && (wb & 4u)) ? 1.0f : 0.0f;
    c->has_dw = c->has_w && (wb & 8u) != 0u;
    static const float eps[] = {1e-6f, 1e-5f, 0.0f, 1e-12f, 0x1p-149f, 1.0f, 1e10f, 1e30f};
    c->eps = eps[fz_param_pick(p, sizeof eps / sizeof eps[0])];
    uint8_t mb = fz_param_byte(p);
    c->flags = (mb & 1u) ? RMSNORM_ROUND_LLAMA : 0u;
    c->rstd_given = (mb & 2u) != 0u;
    c->has_dres = (mb & 4u) != 0u;
    c->dx_in = BB_DX;
    if (mb & 8u)
        c->dx_in = BB_DY;
    else if ((mb & 16u) && c->has_dres)
        c->dx_in = BB_DRES;
    static const int64_t pad[] = {0, 0, 1, 3, 8, 65};
    for (int b = 0; b < BB_N; b++)
        c->stride[b] = c->cols + pad[fz_param_pick(p, sizeof pad / sizeof pad[0])];
    if (c->dx_in != BB_DX)
        c->stride[BB_DX] = c->stride[c->dx_in];
    return 1;
}

static int alloc_case(fz_producer *p, bwd_case *c)
{
    size_t bytes[BB_N] = {0};
    memset(c->present, 0, sizeof c->present);
    bytes[BB_DY] = fz_matrix_bytes(c->t, c->rows, c->cols, c->stride[BB_DY]);
    bytes[BB_X] = fz_matrix_bytes(c->t, c->rows, c->cols, c->stride[BB_X]);
    c->present[BB_DY] = c->present[BB_X] = 1;
    if (c->has_w) {
        bytes[BB_W] = (size_t)c->cols * rmsnorm_dtype_size(c->wt);
        c->present[BB_W] = 1;
    }
    if (c->rstd_given) {
        bytes[BB_RSTD] = (size_t)c->rows * sizeof(float);
        c->present[BB_RSTD] = 1;
    }
    if (c->has_dres) {
        bytes[BB_DRES] = fz_matrix_bytes(c->t, c->rows, c->cols, c->stride[BB_DRES]);
        c->present[BB_DRES] = 1;
    }
    if (c->dx_in == BB_DX) {
        bytes[BB_DX] = fz_matrix_bytes(c->t, c->rows, c->cols, c->stride[BB_DX]);
        c->present[BB_DX] = 1;
    }
    if (c->has_dw) {
        bytes[BB_DW] = (size_t)c->cols * sizeof(float);
        c->present[BB_DW] = 1;
    }
    for (int b = 0; b < BB_WS; b++)
        if (c->present[b] && fz_buf_alloc(&c->master[b], bytes[b], (uint8_t)(0x5Au ^ (unsigned)b)) != 0)
            return -1;
    fz_gen g;
    fz_gen_params(p, &g);
    fz_gen_matrix(p, &g, c->master[BB_X].p, c->t, c->rows, c->cols, c->stride[BB_X]);
    fz_gen_params(p, &g);
    fz_gen_matrix(p, &g, c->master[BB_DY].p, c->t, c->rows, c->cols, c->stride[BB_DY]);
    if (c->has_dres) {
        fz_gen_params(p, &g);
        fz_gen_matrix(p, &g, c->master[BB_DRES].p, c->t, c->rows, c->cols, c->stride[BB_DRES]);
    }
    if (c->has_w) {
        fz_gen_params(p, &g);
        for (int64_t j = 0; j < c->cols; j++)
            fz_gen_store(p, &g, c->master[BB_W].p, c->wt, (size_t)j);
    }
    return 0;
}

static float ld(const bwd_case *c, int b, int64_t r, int64_t j)
{
    return rmsi_load(c->master[b].p, c->t, (size_t)(r * c->stride[b] + j));
}

static void compute_oracle(bwd_case *c, float *h)
{
    const int64_t R = c->rows, C = c->cols;
    const double big = 0x1p100;
    for (int64_t j = 0; j < C; j++) {
        float w = c->has_w ? rmsi_load(c->master[BB_W].p, c->wt, (size_t)j) : 1.0f;
        c->weff[j] = c->has_w ? (double)(w + c->w_offset) : 1.0;
        c->dw[j] = 0.0;
        c->dwabs[j] = 0.0;
        c->dwsub[j] = 0.0;
    }
    c->dw_ok = 1;
    for (int64_t r = 0; r < R; r++) {
        int in_range = 1;
        for (int64_t j = 0; j < C; j++)
            h[j] = ld(c, BB_X, r, j);
        double rstd = fz_oracle_rstd(h, C, c->eps, &in_range);
        if (c->rstd_given) {
            /* what a forward would have stored; the backend must use it as given */
            float given = (float)rstd;
            memcpy(c->master[BB_RSTD].p + (size_t)r * sizeof(float), &given, sizeof given);
            rstd = (double)given;
        }
        c->rstd[r] = rstd;
        double sum_gn = 0.0;
        double sum_abs = 0.0;
        double gmax = 0.0;
        double sum_g = 0.0;
        int has_inf = 0;
        int tiny_n = 0;
        double fin_abs = 0.0; /* the finite terms only: an inf elsewhere in the row
                                 must not hide an fp32 overflow (inf + -inf = NaN) */
        for (int64_t j = 0; j < C; j++) {
            double n = (double)h[j] * rstd;
            double dy = (double)ld(c, BB_DY, r, j);
            double g = dy * c->weff[j];
            sum_gn += g * n;
            sum_abs += fabs(g * n);
            if (isfinite(g * n))
                fin_abs += fabs(g * n);
            if (isfinite(g))
                sum_g += fabs(g);
            if (isfinite(g) && fabs(g) > gmax)
                gmax = fabs(g);
            if (isfinite(dy * n) && fabs(dy * n) > big)
                gmax = INFINITY; /* dy * m, the dw term, overflows */
            if (!isfinite(g) || !isfinite(dy))
                has_inf = 1;
            if (n != 0.0 && fabs(n) < 0x1p-126)
                tiny_n = 1;
        }
        /* n below fp32's normal range becomes 0 or loses its bits there, so
         * inf * n is NaN in fp32 where fp64 gives inf */
        if (has_inf && tiny_n)
            in_range = 0;
        if (!(fin_abs <= big && gmax <= big && rstd * gmax <= big && (rstd <= big || isinf(rstd))))
            in_range = 0; /* fp32 overflow of an intermediate: not comparable */
        c->checked[r] = in_range;
        if (!in_range)
            c->dw_ok = 0;
        double mean = sum_gn / (double)C;
        double mean_abs = sum_abs / (double)C;
        for (int64_t j = 0; j < C; j++) {
            double n = (double)h[j] * rstd;
            double dy = (double)ld(c, BB_DY, r, j);
            double g = dy * c->weff[j];
            double dres = c->has_dres ? (double)ld(c, BB_DRES, r, j) : 0.0;
            double o = rstd * (g - n * mean) + dres;
            c->dx[r * C + j] = o;
            c->dxb[r * C + j] = fz_ulp(c->t, fabs(o)) +
                                2e-5 * rstd * (fabs(g) + fabs(n) * mean_abs) +
                                4.0 * 0x1p-149 * rstd *
                                    (1.0 + fabs(n) + fabs(mean) + fabs(n) * sum_g / (double)C +
                                     fabs(c->weff[j]));
            double m = (c->flags & RMSNORM_ROUND_LLAMA) ? (double)rmsi_round_to((float)n, c->t) : n;
            c->dw[j] += dy * m;
            c->dwabs[j] += fabs(dy * m);
            /* fp32's n = h * rstd keeps only the subnormal spacing 2^-149 down
             * there (found-subnormal-n-huge-dy-dw: x = 2^-149, rstd = sqrt(2),
             * dy = -1.7e36); ROUND_LLAMA's round_T(n) may then move one spacing of T */
            if (fabs(n) < 0x1p-126)
                c->dwsub[j] += fabs(dy) * (0x1p-149 + ((c->flags & RMSNORM_ROUND_LLAMA)
                                                           ? fz_ulp(c->t, fabs(n))
                                                           : 0.0));
        }
    }
}

static rmsnorm_matrix view(void *data, const bwd_case *c, int b)
{
    rmsnorm_matrix m;
    m.data = data;
    m.dtype = c->t;
    m.rows = c->rows;
    m.cols = c->cols;
    m.row_stride = c->stride[b];
    return m;
}

static int run_backend(const bwd_case *c, const rmsnorm_backend *be, bwd_run *run)
{
    fz_mirror mir[BB_N];
    memset(mir, 0, sizeof mir);
    memset(run->buf, 0, sizeof run->buf);
    run->be = be;
    const char *name = rmsnorm_backend_name(be);
    size_t ws = 0;
    if (c->has_dw && rmsnorm_backward_workspace_size(be, c->rows, c->cols, &ws) != RMSNORM_OK)
        fz_fail("%s: rmsnorm_backward_workspace_size failed on a valid shape", name);
    for (int b = 0; b < BB_N; b++) {
        int rc = 0;
        if (b == BB_WS) {
            if (!c->has_dw)
                continue;
            rc = fz_buf_alloc(&run->buf[b], ws, 0xEEu);
        } else if (c->present[b]) {
            rc = fz_buf_clone(&run->buf[b], &c->master[b]);
        } else {
            continue;
        }
        if (rc != 0 || fz_mirror_in(&mir[b], be, &run->buf[b]) != 0)
            fz_fail("%s: cannot set up buffer %s", name, bb_name[b]);
    }
    rmsnorm_backward_args a;
    memset(&a, 0, sizeof a);
    a.struct_size = sizeof a;
    a.dy = view(mir[BB_DY].p, c, BB_DY);
    a.x = view(mir[BB_X].p, c, BB_X);
    if (c->has_w) {
        a.weight = mir[BB_W].p;
        a.weight_dtype = c->wt;
        a.weight_offset = c->w_offset;
    }
    if (c->rstd_given)
        a.rstd = (const float *)(const void *)mir[BB_RSTD].p;
    a.eps = c->eps;
    a.flags = c->flags;
    a.dx = view(mir[c->dx_in].p, c, BB_DX);
    if (c->has_dres)
        a.dresidual = view(mir[BB_DRES].p, c, BB_DRES);
    if (c->has_dw) {
        a.dweight = (float *)(void *)mir[BB_DW].p;
        a.workspace = mir[BB_WS].p;
        a.workspace_bytes = ws;
    }
    rmsnorm_status st = rmsnorm_backward(be, &a, NULL);
    if (st == RMSNORM_OK && rmsnorm_backend_is_device(be))
        st = rmsnorm_synchronize(be, NULL);
    for (int b = 0; b < BB_N; b++)
        if (run->buf[b].mem != NULL && fz_mirror_out(&mir[b], &run->buf[b]) != 0)
            fz_fail("%s: cannot copy buffer %s back", name, bb_name[b]);
    if (st == RMSNORM_ERR_UNSUPPORTED && strcmp(name, "ref") != 0)
        return 0;
    if (st != RMSNORM_OK)
        fz_fail("%s: rmsnorm_backward returned %d (%s) for a valid call", name, (int)st,
                rmsnorm_status_string(st));
    for (int b = 0; b < BB_WS; b++) {
        if (!c->present[b])
            continue;
        int64_t rows = 0, cols = 0, stride = 1;
        size_t es = 0;
        if (b == c->dx_in) {
            rows = c->rows;
            cols = c->cols;
            stride = c->stride[b];
            es = rmsnorm_dtype_size(c->t);
        } else if (b == BB_DW) {
            rows = 1;
            cols = c->cols;
            stride = c->cols;
            es = sizeof(float);
        }
        fz_check_untouched(bb_name[b], name, &c->master[b], &run->buf[b], es, rows, cols, stride);
    }
    return 1;
}

static void free_run(bwd_run *run)
{
    for (int b = 0; b < BB_N; b++)
        fz_buf_free(&run->buf[b]);
}

static int row_dy_zero(const bwd_case *c, int64_t r)
{
    for (int64_t j = 0; j < c->cols; j++)
        if (ld(c, BB_DY, r, j) != 0.0f)
            return 0;
    return 1;
}

static void check_dx(const bwd_case *c, const bwd_run *run, const bwd_run *ref)
{
    const char *name = rmsnorm_backend_name(run->be);
    for (int64_t r = 0; r < c->rows; r++) {
        if (!c->checked[r])
            continue;
        int zero_dy = isfinite(c->rstd[r]) && row_dy_zero(c, r);
        for (int64_t j = 0; j < c->cols; j++) {
            size_t i = (size_t)(r * c->stride[BB_DX] + j);
            double a = (double)rmsi_load(run->buf[c->dx_in].p, c->t, i);
            double o = c->dx[r * c->cols + j];
            if (!isfinite(o) || isnan(a)) {
                if (isnan(o) != isnan(a) || (isinf(o) && a != o))
                    fz_fail("%s: dx[%lld][%lld] = %a, oracle %a (rstd %a)", name, (long long)r,
                            (long long)j, a, o, c->rstd[r]);
                continue;
            }
            if (zero_dy && isfinite(o)) {
                /* g = 0, so dx = round_T(0 + dres) = dres exactly */
                double want = c->has_dres ? (double)ld(c, BB_DRES, r, j) : 0.0;
                if (a != want)
                    fz_fail("%s: dx[%lld][%lld] = %a with a zero dy row: exactly %a expected", name,
                            (long long)r, (long long)j, a, want);
            }
            double bound = c->dxb[r * c->cols + j];
            double err = fabs(fz_as_number(a, c->t) - fz_clamp_number(o, c->t));
            if (!(err <= bound))
                fz_fail("%s: dx[%lld][%lld] = %a, oracle %a: error %.3g > bound %.3g (rstd %a)", name,
                        (long long)r, (long long)j, a, o, err, bound, c->rstd[r]);
            if (ref != NULL) {
                double e = (double)rmsi_load(ref->buf[c->dx_in].p, c->t, i);
                if (!(fabs(fz_as_number(a, c->t) - fz_as_number(e, c->t)) <= 2.0 * bound))
                    fz_fail("%s: dx[%lld][%lld] = %a, ref %a: more than 2 x bound %.3g apart", name,
                            (long long)r, (long long)j, a, e, 2.0 * bound);
            }
        }
    }
}

static void check_dw(const bwd_case *c, const bwd_run *run, const bwd_run *ref)
{
    if (!c->dw_ok)
        return;
    const char *name = rmsnorm_backend_name(run->be);
    const float *dw = (const float *)(const void *)run->buf[BB_DW].p;
    const float *rw = ref ? (const float *)(const void *)ref->buf[BB_DW].p : NULL;
    double err2 = 0.0, ref2 = 0.0, o2 = 0.0, allow2 = 0.0;
    /* 16-bit ROUND_LLAMA: round_T(n) may land on the other side of a tie */
    double tol = ((c->flags & RMSNORM_ROUND_LLAMA) && c->t != RMSNORM_F32) ? 1e-3 : 1e-5;
    for (int64_t j = 0; j < c->cols; j++) {
        double a = (double)dw[j];
        double o = c->dw[j];
        if (!isfinite(o) || !isfinite(a)) {
            if (isnan(o) != isnan(a) || (isinf(o) && a != o) || (isinf(a) && a != o))
                fz_fail("%s: dw[%lld] = %a, oracle %a", name, (long long)j, a, o);
            continue;
        }
        int zero_col = 1;
        for (int64_t r = 0; r < c->rows && zero_col; r++)
            zero_col = ld(c, BB_DY, r, j) == 0.0f;
        if (zero_col && a != 0.0)
            fz_fail("%s: dw[%lld] = %a, exactly 0 expected (dy column all zero)", name, (long long)j, a);
        err2 += (a - o) * (a - o);
        o2 += o * o;
        /* the contract's norm bound assumes no cancellation between rows;
         * allow the fp32 rounding of each term and of each partial sum */
        double e = ((double)c->rows + 2.0) * 0x1p-23 * c->dwabs[j] + c->dwsub[j];
        allow2 += e * e;
        if (rw != NULL)
            ref2 += (a - (double)rw[j]) * (a - (double)rw[j]);
    }
    double bound = tol * sqrt(o2) + 1e-30 + sqrt(allow2);
    if (!(sqrt(err2) <= bound))
        fz_fail("%s: ||dw - oracle||_2 = %.3g > bound %.3g (||oracle||_2 %.3g)", name, sqrt(err2),
                bound, sqrt(o2));
    if (rw != NULL && !(sqrt(ref2) <= 2.0 * bound))
        fz_fail("%s: ||dw - ref||_2 = %.3g > 2 x bound %.3g", name, sqrt(ref2), 2.0 * bound);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fz_producer p;
    bwd_case c;
    memset(&c, 0, sizeof c);
    fz_init(&p, data, size);
    if (!decode_case(&p, &c))
        return 0;
    fz_case_describe("backward rows %lld cols %lld T %d weight %s%d offset %g eps %g flags 0x%x "
                     "rstd %s dresidual %d dx in %s dweight %d strides dy %lld x %lld dx %lld dres %lld",
                     (long long)c.rows, (long long)c.cols, (int)c.t, c.has_w ? "dtype " : "none ",
                     c.has_w ? (int)c.wt : -1, (double)c.w_offset, (double)c.eps, c.flags,
                     c.rstd_given ? "given" : "recomputed", c.has_dres, bb_name[c.dx_in], c.has_dw,
                     (long long)c.stride[BB_DY], (long long)c.stride[BB_X], (long long)c.stride[BB_DX],
                     (long long)c.stride[BB_DRES]);
    size_t n = (size_t)(c.rows * c.cols);
    size_t nr = (size_t)(c.rows ? c.rows : 1);
    float *h = malloc(((size_t)c.cols + 1u) * sizeof *h); /* cols >= 1; + 1 for the analyser */
    c.weff = malloc(((size_t)c.cols + 1u) * sizeof *c.weff);
    c.dw = malloc(((size_t)c.cols + 1u) * sizeof *c.dw);
    c.dwabs = malloc(((size_t)c.cols + 1u) * sizeof *c.dwabs);
    c.dwsub = malloc(((size_t)c.cols + 1u) * sizeof *c.dwsub);
    c.rstd = malloc(nr * sizeof *c.rstd);
    c.checked = malloc(nr * sizeof *c.checked);
    c.dx = malloc((n + 1u) * sizeof *c.dx);
    c.dxb = malloc((n + 1u) * sizeof *c.dxb);
    if (!h || !c.weff || !c.dw || !c.dwabs || !c.dwsub || !c.rstd || !c.checked || !c.dx || !c.dxb ||
        alloc_case(&p, &c) != 0)
        fz_fail("out of memory");
    compute_oracle(&c, h);

    const rmsnorm_backend *refbe = rmsnorm_backend_find("ref");
    if (refbe == NULL)
        fz_fail("no ref backend");
    bwd_run ref;
    (void)run_backend(&c, refbe, &ref);
    check_dx(&c, &ref, NULL);
    if (c.has_dw)
        check_dw(&c, &ref, NULL);
    int count = rmsnorm_backend_count();
    for (int i = 0; i < count; i++) {
        const rmsnorm_backend *be = rmsnorm_backend_at(i);
        if (be == NULL || be == refbe)
            continue;
        bwd_run run;
        if (run_backend(&c, be, &run)) {
            check_dx(&c, &run, &ref);
            if (c.has_dw)
                check_dw(&c, &run, &ref);
        }
        free_run(&run);
    }
    free_run(&ref);
    for (int b = 0; b < BB_N; b++)
        fz_buf_free(&c.master[b]);
    free(h);
    free(c.weff);
    free(c.dw);
    free(c.dwabs);
    free(c.dwsub);
    free(c.rstd);
    free(c.checked);
    free(c.dx);
    free(c.dxb);
    return 0;
}
