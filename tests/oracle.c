#include "tests/oracle.h"

#include <math.h>
#include <string.h>

#include "ref/formats.h"

/* Precision p (significand bits, implicit one included), smallest normal
 * exponent and largest finite value of each dtype. */
typedef struct fmt_params {
    int p;
    int emin;
    double max;
} fmt_params;

static fmt_params params_of(rmsnorm_dtype t)
{
    fmt_params f;
    switch (t) {
    case RMSNORM_F16: f.p = 11; f.emin = -14; f.max = 65504.0; break;
    case RMSNORM_BF16: f.p = 8; f.emin = -126; f.max = 0x1.fep127; break;
    case RMSNORM_F8_E4M3: f.p = 4; f.emin = -6; f.max = 448.0; break;
    case RMSNORM_F8_E5M2: f.p = 3; f.emin = -14; f.max = 57344.0; break;
    case RMSNORM_F8_E4M3FNUZ: f.p = 4; f.emin = -7; f.max = 240.0; break;
    case RMSNORM_F32:
    default: f.p = 24; f.emin = -126; f.max = 0x1.fffffep127; break;
    }
    return f;
}

/* 2^k for the exponents the formats here reach (far inside double's normal
 * range), built from the bits: ldexp is a library call per element. */
static double pow2i(int k)
{
    uint64_t u = (uint64_t)(k + 1023) << 52;
    double d;
    memcpy(&d, &u, sizeof d);
    return d;
}

/* Exponent of the quantum of a at precision f: floor(log2 |a|) clamped to the
 * subnormal range, minus (p - 1). */
static int quantum_exp(double a, fmt_params f)
{
    uint64_t u;
    int e;
    memcpy(&u, &a, sizeof u);
    /* the biased exponent; double subnormals and 0 land far below emin */
    e = (int)((u >> 52) & 0x7ffu) - 1023;
    if (e < f.emin || e == 1024)
        e = f.emin;
    return e - (f.p - 1);
}

double rmst_load(const void *base, rmsnorm_dtype t, size_t i)
{
    if (rmsi_is_fp8(t))
        return (double)rmsi_fp8_to_f32(((const uint8_t *)base)[i], t);
    return (double)rmsi_load(base, t, i);
}

double rmst_round_to(double v, rmsnorm_dtype t)
{
    fmt_params f = params_of(t);
    double a = fabs(v);
    double q;
    double r;
    if (!isfinite(v) || a == 0.0)
        return v;
    q = pow2i(quantum_exp(a, f));
    r = nearbyint(a / q) * q; /* a / q is exact: q is a power of two */
    if (r > f.max)
        r = INFINITY;
    return copysign(r, v);
}

double rmst_ulp(double a, rmsnorm_dtype t)
{
    return pow2i(quantum_exp(fabs(a), params_of(t)));
}

double rmst_weff(const rmst_norm_params *p, int64_t j)
{
    if (p->weight == NULL)
        return 1.0;
    return rmst_load(p->weight, p->weight_dtype, (size_t)j) + p->weight_offset;
}

double rmst_oracle_forward_row(const rmst_norm_params *p, const void *x, const void *res, double *h,
                               double *n, double *v)
{
    double ss = 0.0;
    double rstd;
    for (int64_t j = 0; j < p->cols; j++) {
        size_t k = (size_t)j;
        if (res != NULL) {
            /* docs/numerics.md step 1: one fp32 add, one rounding to T. */
            float s = rmsi_load(x, p->t, k) + rmsi_load(res, p->t, k);
            h[j] = (double)rmsi_round_to(s, p->t);
        } else {
            h[j] = rmst_load(x, p->t, k);
        }
        ss += h[j] * h[j];
    }
    rstd = 1.0 / sqrt(ss / (double)p->cols + p->eps);
    for (int64_t j = 0; j < p->cols; j++) {
        double m;
        n[j] = h[j] * rstd;
        m = n[j];
        if ((p->flags & RMSNORM_ROUND_LLAMA) != 0u && p->t != RMSNORM_F32)
            m = rmst_round_to(m, p->t);
        v[j] = m * rmst_weff(p, j);
    }
    return rstd;
}

double rmst_oracle_dyn_scale(const double *v, int64_t count, double ub, rmsnorm_dtype qt)
{
    double fmax = params_of(qt).max;
    double amax = 0.0;
    double s;
    for (int64_t j = 0; j < count; j++) {
        double a = fabs(v[j]);
        if (a > amax) /* false for NaN: ignored */
            amax = a;
    }
    if (ub > 0.0 && amax > ub)
        amax = ub;
    s = amax / fmax;
    if (s < 1.0 / (fmax * 512.0))
        s = 1.0 / (fmax * 512.0);
    return s;
}

double rmst_pow2_ceil(double s)
{
    int e2 = 0;
    double fr = frexp(s, &e2);
    if (!isfinite(s) || s <= 0.0 || fr == 0.5)
        return s;
    return ldexp(1.0, e2);
}

double rmst_oracle_backward_row(const rmst_norm_params *p, const void *x, const void *dy,
                                const void *dres, const float *rstd_given, double *dx, double *g,
                                double *n, double *dw_acc, double *mean_abs_gn)
{
    double rstd;
    double sum_gn = 0.0;
    double sum_abs = 0.0;
    double c;
    if (rstd_given != NULL) {
        rstd = (double)*rstd_given;
    } else {
        double ss = 0.0;
        for (int64_t j = 0; j < p->cols; j++) {
            double xv = rmst_load(x, p->t, (size_t)j);
            ss += xv * xv;
        }
        rstd = 1.0 / sqrt(ss / (double)p->cols + p->eps);
    }
    for (int64_t j = 0; j < p->cols; j++) {
        n[j] = rmst_load(x, p->t, (size_t)j) * rstd;
        g[j] = rmst_load(dy, p->t, (size_t)j) * rmst_weff(p, j);
        sum_gn += g[j] * n[j];
        sum_abs += fabs(g[j] * n[j]);
    }
    c = sum_gn / (double)p->cols;
    *mean_abs_gn = sum_abs / (double)p->cols;
    for (int64_t j = 0; j < p->cols; j++) {
        dx[j] = rstd * (g[j] - n[j] * c);
        if (dres != NULL)
            dx[j] += rmst_load(dres, p->t, (size_t)j);
        if (dw_acc != NULL) {
            double m = n[j];
            if ((p->flags & RMSNORM_ROUND_LLAMA) != 0u && p->t != RMSNORM_F32)
                m = rmst_round_to(m, p->t);
            dw_acc[j] += rmst_load(dy, p->t, (size_t)j) * m;
        }
    }
    return rstd;
}
