/*
 * fuzz_forward: every present backend's forward against an fp64 oracle and
 * against the reference backend, on shapes, layouts, dtypes, flags and data
 * decoded from the input (parameters from the front, data from the back).
 *
 * Checked for every backend (ref included) against the oracle, with the bounds
 * of docs/numerics.md, and for every other backend against ref with twice
 * those bounds: h bit-exact, y, rstd, the dynamic scales and the fp8 codes
 * (saturation and NaN codes exact), NaN positions identical, exact zeros where
 * the inputs make them exact. Every byte outside what the op may write (row
 * padding, canary margins, inputs) must be unchanged.
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

/* Buffers of one case. Y and H can instead live in X or RES (in place). */
enum { FB_X, FB_RES, FB_W, FB_SIN, FB_Y, FB_H, FB_Q, FB_RSTD, FB_SOUT, FB_N };
static const char *const fb_name[FB_N] = {"x", "residual", "weight", "scale (input)", "y",
                                          "h_out", "q", "rstd", "scale (output)"};

typedef struct fwd_case {
    int64_t rows, cols;
    int64_t stride[FB_N];     /* matrices only */
    rmsnorm_dtype t, wt, qt;
    int has_res, has_w, has_y, has_rstd;
    int y_in, h_in;           /* buffer holding y / h_out: FB_Y or FB_X / FB_RES; h_in -1 = none */
    float w_offset, eps, scale_ub, scale_in;
    uint32_t flags;
    rmsnorm_quant quant;
    size_t nscale;
    int64_t r4;               /* round_up(rows, 4), the per-block scale stride */
    fz_buf master[FB_N];
    int present[FB_N];
    /* oracle */
    float *h;                 /* [rows * cols] stored h as fp32 */
    double *v;                /* [rows * cols] v before the final rounding */
    double *n;                /* [rows * cols] n = h * rstd */
    double *weff;             /* [cols] */
    double *rstd;             /* [rows] */
    int *in_range;            /* [rows] */
} fwd_case;

typedef struct fwd_run {
    const rmsnorm_backend *be;
    fz_buf buf[FB_N];
} fwd_run;

static const int64_t fz_cols_list[] = {1,   2,   3,    7,    8,    15,   16,   17,   31,   32,
                                       33,  63,  64,   65,   127,  128,  129,  255,  256,  257,
                                       384, 511, 1023, 1024, 1025, 2047, 2048, 4097, 5120, 8192, 8999};

static int64_t pick_cols(fz_producer *p)
{
    uint8_t b = fz_param_byte(p);
    if (b < 192)
        return fz_cols_list[b % (sizeof fz_cols_list / sizeof fz_cols_list[0])];
    const int64_t r = (int64_t)fz_param_range(p, 1, 9000);
    /* a few wide rows: avx512 splits their columns over threads
     * (simd/fwd_wide.h); a multiple of 128 for the block quant, at most
     * 98304 (the fp64 oracle of a wider row slows every run) */
    if (b == 255)
        return 65536 + 128 * (r % 256);
    if (b == 254)
        return 65536 + (r | 1);
    return r | 1; /* odd sizes: no vector tail lines up */
}

static float pick_eps(fz_producer *p)
{
    static const float eps[] = {1e-6f, 1e-5f, 0.0f, 1e-12f, 0x1p-149f, FLT_MIN, 1.0f, 1e10f,
                                1e30f, FLT_MAX, 0.5f, 1e-30f};
    return eps[fz_param_pick(p, sizeof eps / sizeof eps[0])];
}

static int64_t pick_pad(fz_producer *p)
{
    static const int64_t pad[] = {0, 0, 0, 1, 3, 8, 64, 129};
    return pad[fz_param_pick(p, sizeof pad / sizeof pad[0])];
}

static size_t elem(rmsnorm_dtype t)
{
    return rmsnorm_dtype_size(t);
}

/* Decodes the case; 0 when the input describes nothing to run. */
static int decode_case(fz_producer *p, fwd_case *c)
{
    uint8_t rb = fz_param_byte(p);
    c->rows = rb < 128 ? (int64_t)(rb % 9u) : (int64_t)(rb % 65u);
    c->cols = pick_cols(p);
    /* big cases are slow: allow more than 64k elements only when asked */
    if (c->rows * c->cols > 65536 && !fz_param_bool(p))
        c->rows = c->cols >= 65536 ? 1 : 65536 / c->cols;
    if (c->cols > 65536 && c->rows > 3)
        c->rows = 3; /* wide rows: fewer rows than threads is the case of interest */
    static const rmsnorm_dtype acts[3] = {RMSNORM_F32, RMSNORM_F16, RMSNORM_BF16};
    static const rmsnorm_dtype f8[3] = {RMSNORM_F8_E4M3, RMSNORM_F8_E5M2, RMSNORM_F8_E4M3FNUZ};
    c->t = acts[fz_param_pick(p, 3)];
    uint8_t wb = fz_param_byte(p);
    c->has_w = (wb % 3u) != 0u;
    c->wt = (wb % 3u) == 1u ? RMSNORM_F32 : c->t;
    c->w_offset = 0.0f;
    if (c->has_w) {
        static const float offs[] = {0.0f, 1.0f, 0.0f, 1.0f, 0.5f, -1.0f, 1e-3f};
        c->w_offset = offs[(wb >> 2) % (sizeof offs / sizeof offs[0])];
    }
    c->eps = pick_eps(p);
    uint8_t mb = fz_param_byte(p);
    c->has_res = (mb & 1u) != 0u;
    static const rmsnorm_quant qm[4] = {RMSNORM_QUANT_NONE, RMSNORM_QUANT_PER_TENSOR,
                                        RMSNORM_QUANT_PER_TOKEN, RMSNORM_QUANT_PER_BLOCK_128};
    c->quant = qm[(mb >> 1) & 3u];
    if (c->quant == RMSNORM_QUANT_PER_BLOCK_128 && c->cols % 128 != 0)
        c->quant = RMSNORM_QUANT_PER_TOKEN;
    c->qt = f8[((mb >> 3) & 3u) % 3u];
    c->flags = (mb & 0x20u) ? RMSNORM_ROUND_LLAMA : 0u;
    int dynamic = c->quant == RMSNORM_QUANT_PER_TOKEN || c->quant == RMSNORM_QUANT_PER_BLOCK_128;
    if (dynamic && (mb & 0x40u))
        c->flags |= RMSNORM_SCALE_POW2;
    c->has_rstd = (mb & 0x80u) != 0u;
    uint8_t ab = fz_param_byte(p);
    /* y: own buffer, in x, in the residual, or absent (only with a q output) */
    c->has_y = 1;
    c->y_in = FB_Y;
    switch (ab & 3u) {
    case 1: c->y_in = FB_X; break;
    case 2: c->y_in = c->has_res ? FB_RES : FB_Y; break;
    case 3:
        if (c->quant != RMSNORM_QUANT_NONE)
            c->has_y = 0;
        break;
    default: break;
    }
    c->h_in = -1;
    if (c->has_res) {
        static const int hmodes[4] = {-1, FB_H, FB_RES, FB_X};
        c->h_in = hmodes[(ab >> 2) & 3u];
        if (c->has_y && c->h_in == c->y_in)
            c->h_in = FB_H;
    }
    c->scale_ub = 0.0f;
    c->scale_in = 1.0f;
    uint8_t sb = fz_param_byte(p);
    if (c->quant == RMSNORM_QUANT_PER_TOKEN) {
        static const float ub[] = {0.0f, 0.0f, 1.0f, 0.1f, 100.0f, 1e-30f, 3.0f};
        c->scale_ub = ub[sb % (sizeof ub / sizeof ub[0])];
    } else if (c->quant == RMSNORM_QUANT_PER_TENSOR) {
        static const float si[] = {1.0f, 0.5f, 1.0f / 448.0f, 1e-3f, 37.5f, 1e-30f, 1e30f, 3.0f};
        c->scale_in = si[sb % (sizeof si / sizeof si[0])];
    }
    for (int b = 0; b < FB_N; b++)
        c->stride[b] = c->cols + pick_pad(p);
    if (c->y_in != FB_Y)
        c->stride[FB_Y] = c->stride[c->y_in];
    if (c->h_in == FB_X || c->h_in == FB_RES)
        c->stride[FB_H] = c->stride[c->h_in];
    c->r4 = (c->rows + 3) / 4 * 4;
    if (rmsnorm_quant_scale_count(c->quant, c->rows, c->cols, &c->nscale) != RMSNORM_OK)
        fz_fail("rmsnorm_quant_scale_count refused a valid shape");
    return 1;
}

static int alloc_case(fz_producer *p, fwd_case *c)
{
    memset(c->present, 0, sizeof c->present);
    size_t bytes[FB_N] = {0};
    bytes[FB_X] = fz_matrix_bytes(c->t, c->rows, c->cols, c->stride[FB_X]);
    c->present[FB_X] = 1;
    if (c->has_res) {
        bytes[FB_RES] = fz_matrix_bytes(c->t, c->rows, c->cols, c->stride[FB_RES]);
        c->present[FB_RES] = 1;
    }
    if (c->has_w) {
        bytes[FB_W] = (size_t)c->cols * elem(c->wt);
        c->present[FB_W] = 1;
    }
    if (c->quant == RMSNORM_QUANT_PER_TENSOR) {
        bytes[FB_SIN] = sizeof(float);
        c->present[FB_SIN] = 1;
    } else if (c->quant != RMSNORM_QUANT_NONE) {
        bytes[FB_SOUT] = c->nscale * sizeof(float);
        c->present[FB_SOUT] = 1;
    }
    if (c->quant != RMSNORM_QUANT_NONE) {
        bytes[FB_Q] = fz_matrix_bytes(c->qt, c->rows, c->cols, c->stride[FB_Q]);
        c->present[FB_Q] = 1;
    }
    if (c->has_y && c->y_in == FB_Y) {
        bytes[FB_Y] = fz_matrix_bytes(c->t, c->rows, c->cols, c->stride[FB_Y]);
        c->present[FB_Y] = 1;
    }
    if (c->h_in == FB_H) {
        bytes[FB_H] = fz_matrix_bytes(c->t, c->rows, c->cols, c->stride[FB_H]);
        c->present[FB_H] = 1;
    }
    if (c->has_rstd) {
        bytes[FB_RSTD] = (size_t)c->rows * sizeof(float);
        c->present[FB_RSTD] = 1;
    }
    for (int b = 0; b < FB_N; b++)
        if (c->present[b] && fz_buf_alloc(&c->master[b], bytes[b], (uint8_t)(0xA5u ^ (unsigned)b)) != 0)
            return -1;
    fz_gen g;
    fz_gen_params(p, &g);
    fz_gen_matrix(p, &g, c->master[FB_X].p, c->t, c->rows, c->cols, c->stride[FB_X]);
    if (c->has_res) {
        fz_gen_params(p, &g);
        fz_gen_matrix(p, &g, c->master[FB_RES].p, c->t, c->rows, c->cols, c->stride[FB_RES]);
    }
    if (c->has_w) {
        fz_gen_params(p, &g);
        for (int64_t j = 0; j < c->cols; j++)
            fz_gen_store(p, &g, c->master[FB_W].p, c->wt, (size_t)j);
    }
    if (c->present[FB_SIN])
        memcpy(c->master[FB_SIN].p, &c->scale_in, sizeof(float));
    return 0;
}

static void compute_oracle(fwd_case *c)
{
    const int64_t R = c->rows, C = c->cols;
    for (int64_t j = 0; j < C; j++) {
        float w = c->has_w ? rmsi_load(c->master[FB_W].p, c->wt, (size_t)j) : 1.0f;
        c->weff[j] = c->has_w ? (double)(w + c->w_offset) : 1.0; /* fp32 add, as the contract */
    }
    for (int64_t r = 0; r < R; r++) {
        float *h = c->h + r * C;
        for (int64_t j = 0; j < C; j++) {
            size_t ix = (size_t)(r * c->stride[FB_X] + j);
            float x = rmsi_load(c->master[FB_X].p, c->t, ix);
            if (c->has_res) {
                size_t ir = (size_t)(r * c->stride[FB_RES] + j);
                h[j] = rmsi_round_to(x + rmsi_load(c->master[FB_RES].p, c->t, ir), c->t);
            } else {
                h[j] = x;
            }
        }
        c->rstd[r] = fz_oracle_rstd(h, C, c->eps, &c->in_range[r]);
        for (int64_t j = 0; j < C; j++) {
            double n = (double)h[j] * c->rstd[r];
            c->n[r * C + j] = n;
            if (c->flags & RMSNORM_ROUND_LLAMA)
                n = (double)rmsi_round_to((float)n, c->t);
            c->v[r * C + j] = n * c->weff[j];
        }
    }
}

static void describe_case(const fwd_case *c)
{
    fz_case_describe("forward rows %lld cols %lld T %d weight %s%d offset %g eps %g flags 0x%x "
                     "residual %d h_out %s y %s rstd %d quant %d q %d scale_ub %g scale %g "
                     "strides x %lld res %lld y %lld h %lld q %lld",
                     (long long)c->rows, (long long)c->cols, (int)c->t, c->has_w ? "dtype " : "none ",
                     c->has_w ? (int)c->wt : -1, (double)c->w_offset, (double)c->eps, c->flags,
                     c->has_res, c->h_in < 0 ? "none" : fb_name[c->h_in],
                     c->has_y ? fb_name[c->y_in] : "none", c->has_rstd, (int)c->quant, (int)c->qt,
                     (double)c->scale_ub, (double)c->scale_in, (long long)c->stride[FB_X],
                     (long long)c->stride[FB_RES], (long long)c->stride[FB_Y],
                     (long long)c->stride[FB_H], (long long)c->stride[FB_Q]);
}

static rmsnorm_matrix view(void *data, rmsnorm_dtype t, const fwd_case *c, int b)
{
    rmsnorm_matrix m;
    m.data = data;
    m.dtype = t;
    m.rows = c->rows;
    m.cols = c->cols;
    m.row_stride = c->stride[b];
    return m;
}

/* Runs one backend on fresh copies of the inputs; 1 if it ran, 0 if it
 * declined the combination (UNSUPPORTED, never for ref). */
static int run_backend(const fwd_case *c, const rmsnorm_backend *be, fwd_run *run)
{
    fz_mirror mir[FB_N];
    memset(mir, 0, sizeof mir);
    memset(run->buf, 0, sizeof run->buf);
    run->be = be;
    const char *name = rmsnorm_backend_name(be);
    for (int b = 0; b < FB_N; b++) {
        if (!c->present[b])
            continue;
        if (fz_buf_clone(&run->buf[b], &c->master[b]) != 0 || fz_mirror_in(&mir[b], be, &run->buf[b]) != 0)
            fz_fail("%s: cannot set up buffer %s", name, fb_name[b]);
    }
    rmsnorm_forward_args a;
    memset(&a, 0, sizeof a);
    a.struct_size = sizeof a;
    a.x = view(mir[FB_X].p, c->t, c, FB_X);
    if (c->has_res)
        a.residual = view(mir[FB_RES].p, c->t, c, FB_RES);
    if (c->h_in >= 0)
        a.h_out = view(mir[c->h_in].p, c->t, c, FB_H);
    if (c->has_w) {
        a.weight = mir[FB_W].p;
        a.weight_dtype = c->wt;
        a.weight_offset = c->w_offset;
    }
    a.eps = c->eps;
    a.flags = c->flags;
    if (c->has_y)
        a.y = view(mir[c->y_in].p, c->t, c, FB_Y);
    if (c->has_rstd)
        a.rstd = (float *)(void *)mir[FB_RSTD].p;
    a.quant_mode = c->quant;
    a.scale_ub = c->scale_ub;
    if (c->quant != RMSNORM_QUANT_NONE) {
        a.q = view(mir[FB_Q].p, c->qt, c, FB_Q);
        a.scale = (float *)(void *)mir[c->quant == RMSNORM_QUANT_PER_TENSOR ? FB_SIN : FB_SOUT].p;
    }
    rmsnorm_status st = rmsnorm_forward(be, &a, NULL);
    if (st == RMSNORM_OK && rmsnorm_backend_is_device(be))
        st = rmsnorm_synchronize(be, NULL);
    for (int b = 0; b < FB_N; b++)
        if (c->present[b] && fz_mirror_out(&mir[b], &run->buf[b]) != 0)
            fz_fail("%s: cannot copy buffer %s back", name, fb_name[b]);
    if (st == RMSNORM_ERR_UNSUPPORTED && strcmp(name, "ref") != 0)
        return 0;
    if (st != RMSNORM_OK)
        fz_fail("%s: rmsnorm_forward returned %d (%s) for a valid call", name, (int)st,
                rmsnorm_status_string(st));
    /* what the op may write, per buffer */
    for (int b = 0; b < FB_N; b++) {
        if (!c->present[b])
            continue;
        int64_t rows = 0, cols = 0, stride = 1;
        size_t es = 0;
        int mat_out = (b == FB_Y || b == FB_H || b == FB_Q) || (c->has_y && c->y_in == b) ||
                      (c->h_in == b);
        if (mat_out) {
            rows = c->rows;
            cols = c->cols;
            stride = c->stride[b];
            es = elem(b == FB_Q ? c->qt : c->t);
        } else if (b == FB_RSTD || (b == FB_SOUT && c->quant == RMSNORM_QUANT_PER_TOKEN)) {
            rows = c->rows > 0 ? 1 : 0;
            cols = c->rows;
            stride = c->rows;
            es = sizeof(float);
        } else if (b == FB_SOUT) {
            rows = c->rows > 0 ? c->cols / 128 : 0; /* [cols/128][r4], first rows of each used */
            cols = c->rows;
            stride = c->r4;
            es = sizeof(float);
        }
        fz_check_untouched(fb_name[b], name, &c->master[b], &run->buf[b], es, rows, cols, stride);
    }
    return 1;
}

static void free_run(fwd_run *run)
{
    for (int b = 0; b < FB_N; b++)
        fz_buf_free(&run->buf[b]);
}

static double lo_bound(const fwd_case *c, int64_t r, int64_t j, int mult)
{
    double o = c->v[r * c->cols + j];
    double w = fabs(c->weff[j]);
    double b = fz_ulp(c->t, fabs(o)) + 1e-5 * fabs(o) + 2.0 * w * 0x1p-149;
    if (c->flags & RMSNORM_ROUND_LLAMA)
        b += w * fz_ulp(c->t, fabs(c->n[r * c->cols + j]));
    return b * mult;
}

/* n below fp32's normal range becomes 0 (or loses bits) there: with an
 * infinite weff, fp32 gives 0 * inf = NaN where fp64 gives inf. Such elements
 * are outside what the fp64 oracle can say. */
static int underflow_times_inf(const fwd_case *c, int64_t r, int64_t j)
{
    double n = c->n[r * c->cols + j];
    return isinf(c->weff[j]) && n != 0.0 && fabs(n) < 0x1p-126;
}

/* An infinite weff times an n below fp32's normal range is +-inf where fp32
 * keeps n as a subnormal and NaN where it flushes n to 0; which one depends on
 * the last bit of n. amax then either clamps to scale_ub (inf) or ignores the
 * element (NaN), so a block holding such an element has no single right scale
 * (found on the H200, fuzz_forward seed 2: ref took the inf branch). */
static int block_scale_indeterminate(const fwd_case *c, int64_t r, int64_t j0, int64_t j1)
{
    for (int64_t j = j0; j < j1 && j < c->cols; j++)
        if (underflow_times_inf(c, r, j))
            return 1;
    return 0;
}

/* y of one backend against the oracle, and against ref with twice the bound. */
static void check_y(const fwd_case *c, const fwd_run *run, const fwd_run *ref)
{
    const char *name = rmsnorm_backend_name(run->be);
    const uint8_t *yb = run->buf[c->y_in].p;
    const uint8_t *rb = ref ? ref->buf[c->y_in].p : NULL;
    for (int64_t r = 0; r < c->rows; r++) {
        if (!c->in_range[r])
            continue;
        for (int64_t j = 0; j < c->cols; j++) {
            size_t i = (size_t)(r * c->stride[FB_Y] + j);
            if (underflow_times_inf(c, r, j))
                continue;
            double a = (double)rmsi_load(yb, c->t, i);
            double o = c->v[r * c->cols + j];
            float h = c->h[r * c->cols + j];
            if (isnan(o) || isnan(a)) {
                if (isnan(o) != isnan(a))
                    fz_fail("%s: y[%lld][%lld] = %a, oracle %a (NaN positions differ; h %a rstd %a)",
                            name, (long long)r, (long long)j, a, o, (double)h, c->rstd[r]);
                continue;
            }
            if (isinf(o)) {
                if (a != o)
                    fz_fail("%s: y[%lld][%lld] = %a, oracle %a", name, (long long)r, (long long)j, a, o);
                continue;
            }
            if ((h == 0.0f || c->weff[j] == 0.0) && a != 0.0)
                fz_fail("%s: y[%lld][%lld] = %a, exactly 0 expected (h %a weff %a)", name,
                        (long long)r, (long long)j, a, (double)h, c->weff[j]);
            double err = fabs(fz_as_number(a, c->t) - fz_clamp_number(o, c->t));
            double bound = lo_bound(c, r, j, 1);
            if (!(err <= bound))
                fz_fail("%s: y[%lld][%lld] = %a, oracle %a: error %.3g > bound %.3g (h %a rstd %a "
                        "weff %a)", name, (long long)r, (long long)j, a, o, err, bound, (double)h,
                        c->rstd[r], c->weff[j]);
            if (rb != NULL) {
                double e = (double)rmsi_load(rb, c->t, i);
                double d = fabs(fz_as_number(a, c->t) - fz_as_number(e, c->t));
                if (!(d <= 2.0 * bound))
                    fz_fail("%s: y[%lld][%lld] = %a, ref %a: difference %.3g > 2 x bound %.3g", name,
                            (long long)r, (long long)j, a, e, d, 2.0 * bound);
            }
        }
    }
}

static void check_h(const fwd_case *c, const fwd_run *run)
{
    const char *name = rmsnorm_backend_name(run->be);
    const uint8_t *hb = run->buf[c->h_in].p;
    for (int64_t r = 0; r < c->rows; r++)
        for (int64_t j = 0; j < c->cols; j++) {
            size_t i = (size_t)(r * c->stride[FB_H] + j);
            float a = rmsi_load(hb, c->t, i);
            float o = c->h[r * c->cols + j];
            if (isnan(o) && isnan(a))
                continue;
            if (rmsi_f32_bits(a) != rmsi_f32_bits(o))
                fz_fail("%s: h[%lld][%lld] = %a (0x%08x), expected %a (0x%08x): h is bit-exact",
                        name, (long long)r, (long long)j, (double)a, rmsi_f32_bits(a), (double)o,
                        rmsi_f32_bits(o));
        }
}

static void check_rstd(const fwd_case *c, const fwd_run *run, const fwd_run *ref)
{
    const char *name = rmsnorm_backend_name(run->be);
    const float *ra = (const float *)(const void *)run->buf[FB_RSTD].p;
    const float *rr = ref ? (const float *)(const void *)ref->buf[FB_RSTD].p : NULL;
    for (int64_t r = 0; r < c->rows; r++) {
        double a = (double)ra[r];
        double o = c->rstd[r];
        if (!c->in_range[r])
            continue;
        if (isnan(o) || isnan(a) || isinf(o) || isinf(a)) {
            if ((isnan(o) != isnan(a)) || (!isnan(o) && a != o))
                fz_fail("%s: rstd[%lld] = %a, oracle %a", name, (long long)r, a, o);
            continue;
        }
        if (!(fabs(a - o) <= 1e-5 * o))
            fz_fail("%s: rstd[%lld] = %a, oracle %a: relative error %.3g > 1e-5", name, (long long)r,
                    a, o, fabs(a - o) / o);
        if (rr != NULL && !(fabs(a - (double)rr[r]) <= 2e-5 * o))
            fz_fail("%s: rstd[%lld] = %a, ref %a: more than 2e-5 apart", name, (long long)r, a,
                    (double)rr[r]);
    }
}

/* v as the backend's fp32 sees it: beyond fp32's range it is infinite. */
static double v32(double v)
{
    if (fabs(v) >= fz_overflow_at(RMSNORM_F32))
        return v > 0 ? INFINITY : -INFINITY;
    return v;
}

/* The oracle's dynamic scale for the elements [j0, j1) of row r. */
static double oracle_scale(const fwd_case *c, int64_t r, int64_t j0, int64_t j1, double *raw,
                           double *tol)
{
    double fmax = (double)rmsi_fp8_max(c->qt);
    double amax = NAN;
    for (int64_t j = j0; j < j1; j++) {
        if (underflow_times_inf(c, r, j))
            continue; /* NaN in fp32, which amax ignores */
        double v = fabs(v32(c->v[r * c->cols + j]));
        if (!isnan(v) && (isnan(amax) || v > amax))
            amax = v;
    }
    double ub = (double)c->scale_ub;
    /* ROUND_LLAMA: round_T(n) may fall on the other side of a tie than the
     * oracle's, moving v (and amax) by |weff| ulp_T(n), as in y's bound */
    double slack = 0.0;
    if (c->flags & RMSNORM_ROUND_LLAMA)
        for (int64_t j = j0; j < j1; j++) {
            double e = fabs(c->weff[j]) * fz_ulp(c->t, fabs(c->n[r * c->cols + j]));
            if (e > slack && isfinite(e))
                slack = e;
        }
    *tol = 1e-5 + (isfinite(amax) && amax > 0.0 ? slack / amax : 0.0);
    double a = (ub > 0.0 && amax > ub) ? ub : amax;
    double s = a / fmax;
    double lo = (double)(1.0f / (rmsi_fp8_max(c->qt) * 512.0f));
    if (!(s >= lo))
        s = lo;
    *raw = s;
    if ((c->flags & RMSNORM_SCALE_POW2) && isfinite(s)) {
        int e2 = 0;
        double f = frexp(s, &e2);
        if (f != 0.5)
            s = ldexp(1.0, e2);
    }
    return s;
}

static void check_scale(const fwd_case *c, const char *name, int64_t r, int64_t k, double a, double raw,
                        double o, double ref, double tol)
{
    if (isinf(o) || isinf(a) || isnan(a)) {
        if (a != o)
            fz_fail("%s: scale (row %lld block %lld) = %a, oracle %a", name, (long long)r,
                    (long long)k, a, o);
        return;
    }
    if (c->flags & RMSNORM_SCALE_POW2) {
        int e2 = 0;
        int ok = frexp(a, &e2) == 0.5;
        if (ok && a != o)
            ok = fz_near_pow2(raw, tol) && (a == 2.0 * o || a == o / 2.0);
        if (!ok)
            fz_fail("%s: pow2 scale (row %lld block %lld) = %a, oracle %a (unrounded %a)", name,
                    (long long)r, (long long)k, a, o, raw);
        return;
    }
    if (!(fabs(a - o) <= tol * o))
        fz_fail("%s: scale (row %lld block %lld) = %a, oracle %a: relative error %.3g > %.3g", name,
                (long long)r, (long long)k, a, o, fabs(a - o) / o, tol);
    if (!isnan(ref) && !(fabs(a - ref) <= 2.0 * tol * o))
        fz_fail("%s: scale (row %lld block %lld) = %a, ref %a", name, (long long)r, (long long)k, a, ref);
}

static void check_q(const fwd_case *c, const fwd_run *run, const fwd_run *ref)
{
    const char *name = rmsnorm_backend_name(run->be);
    const uint8_t *q = run->buf[FB_Q].p;
    const float *sc = (const float *)(const void *)run->buf[c->quant == RMSNORM_QUANT_PER_TENSOR ? FB_SIN : FB_SOUT].p;
    const float *rs = ref ? (const float *)(const void *)ref->buf[FB_SOUT].p : NULL;
    rmsi_fp8_format f = rmsi_fp8_format_of(c->qt);
    double fmax = (double)f.max;
    for (int64_t r = 0; r < c->rows; r++) {
        if (!c->in_range[r])
            continue;
        for (int64_t j = 0; j < c->cols; j++) {
            double s;
            if (c->quant == RMSNORM_QUANT_PER_TENSOR) {
                s = (double)sc[0];
            } else {
                int64_t k = c->quant == RMSNORM_QUANT_PER_TOKEN ? 0 : j / 128;
                size_t si = c->quant == RMSNORM_QUANT_PER_TOKEN ? (size_t)r : (size_t)(k * c->r4 + r);
                s = (double)sc[si];
                int64_t j1 = c->quant == RMSNORM_QUANT_PER_TOKEN ? c->cols : j + 128;
                if ((c->quant == RMSNORM_QUANT_PER_TOKEN ? j == 0 : j % 128 == 0) &&
                    !block_scale_indeterminate(c, r, j, j1)) {
                    double raw;
                    double tol;
                    double o = oracle_scale(c, r, j, j1, &raw, &tol);
                    check_scale(c, name, r, k, s, raw, o, rs ? (double)rs[si] : NAN, tol);
                }
            }
            if (underflow_times_inf(c, r, j))
                continue;
            uint8_t code = q[(size_t)(r * c->stride[FB_Q] + j)];
            double v = v32(c->v[r * c->cols + j]);
            double vq = v / s;
            uint8_t mag = code & 0x7fu;
            if (isnan(vq)) {
                int nan_ok = f.fnuz ? code == 0x80u : mag == f.nan_code;
                if (!nan_ok)
                    fz_fail("%s: q[%lld][%lld] = 0x%02x, NaN code expected (v %a scale %a)", name,
                            (long long)r, (long long)j, code, v, s);
                continue;
            }
            double h = (double)c->h[r * c->cols + j];
            if ((h == 0.0 || c->weff[j] == 0.0) && isfinite(c->rstd[r])) {
                if (code != 0x00u && !(code == 0x80u && !f.fnuz))
                    fz_fail("%s: q[%lld][%lld] = 0x%02x, a zero code expected", name, (long long)r,
                            (long long)j, code);
                continue;
            }
            /* n = h * rstd below fp32's normal range (docs/numerics.md, outside the
             * contract) may flush to 0 before a huge weff / s scales it up, so
             * saturation is owed only where that loss could not bring v/s under fmax. */
            double uf = 2.0 * fabs(c->weff[j]) * 0x1p-149 / s;
            if (fabs(vq) - uf >= fmax * (1.0 + 2e-5)) {
                uint8_t want = (uint8_t)((vq < 0 ? 0x80u : 0u) | f.max_code);
                if (code != want)
                    fz_fail("%s: q[%lld][%lld] = 0x%02x, saturation to 0x%02x expected (v/s = %a)",
                            name, (long long)r, (long long)j, code, want, vq);
                continue;
            }
            double dec = (double)rmsi_fp8_to_f32(code, c->qt);
            double avq = fabs(vq) < fmax ? fabs(vq) : fmax;
            double bound = fz_ulp(c->qt, avq) + 1e-5 * avq + uf;
            double target = vq > fmax ? fmax : (vq < -fmax ? -fmax : vq);
            if (isnan(dec) || !(fabs(dec - target) <= bound))
                fz_fail("%s: q[%lld][%lld] = 0x%02x (%a), v/s = %a: more than one code off (bound %.3g)",
                        name, (long long)r, (long long)j, code, dec, vq, bound);
        }
    }
}

static void check_run(const fwd_case *c, const fwd_run *run, const fwd_run *ref)
{
    if (c->has_y)
        check_y(c, run, ref);
    if (c->h_in >= 0)
        check_h(c, run);
    if (c->has_rstd)
        check_rstd(c, run, ref);
    if (c->quant != RMSNORM_QUANT_NONE)
        check_q(c, run, ref);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fz_producer p;
    fwd_case c;
    memset(&c, 0, sizeof c);
    fz_init(&p, data, size);
    if (!decode_case(&p, &c))
        return 0;
    describe_case(&c);
    size_t n = (size_t)(c.rows * c.cols);
    c.h = malloc((n ? n : 1) * sizeof *c.h);
    c.v = malloc((n ? n : 1) * sizeof *c.v);
    c.n = malloc((n ? n : 1) * sizeof *c.n);
    c.weff = malloc((size_t)c.cols * sizeof *c.weff);
    c.rstd = malloc((size_t)(c.rows ? c.rows : 1) * sizeof *c.rstd);
    c.in_range = malloc((size_t)(c.rows ? c.rows : 1) * sizeof *c.in_range);
    if (!c.h || !c.v || !c.n || !c.weff || !c.rstd || !c.in_range || alloc_case(&p, &c) != 0)
        fz_fail("out of memory");
    compute_oracle(&c);
    if (fz_verbose())
        fz_note("fuzz_forward: %s", "case decoded");

    const rmsnorm_backend *refbe = rmsnorm_backend_find("ref");
    if (refbe == NULL)
        fz_fail("no ref backend");
    fwd_run ref;
    (void)run_backend(&c, refbe, &ref);
    check_run(&c, &ref, NULL);
    int count = rmsnorm_backend_count();
    for (int i = 0; i < count; i++) {
        const rmsnorm_backend *be = rmsnorm_backend_at(i);
        if (be == NULL || be == refbe)
            continue;
        fwd_run run;
        if (run_backend(&c, be, &run))
            check_run(&c, &run, &ref);
        free_run(&run);
    }
    free_run(&ref);
    for (int b = 0; b < FB_N; b++)
        fz_buf_free(&c.master[b]);
    free(c.h);
    free(c.v);
    free(c.n);
    free(c.weff);
    free(c.rstd);
    free(c.in_range);
    return 0;
}
