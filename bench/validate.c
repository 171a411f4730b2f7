/*
 * Validation of a backend's outputs against the ref backend's, run on every
 * cell before it is timed. Both backends meet the docs/numerics.md bounds
 * against the fp64 oracle, so by the triangle inequality they agree within
 * twice those bounds; each function returns the worst |err| / bound over its
 * elements (<= 1 passes, INFINITY for a NaN on one side only).
 */
#include <math.h>

#include "bench/bench.h"
#include "ref/formats.h"

/* Spacing of dtype t at magnitude a (subnormal spacing below the normals). */
double rmsi_bench_ulp(rmsnorm_dtype t, double a)
{
    int e = 0;
    int mbits, emin;
    switch (t) {
    case RMSNORM_F16: mbits = 10; emin = -14; break;
    case RMSNORM_BF16: mbits = 7; emin = -126; break;
    case RMSNORM_F32: mbits = 23; emin = -126; break;
    case RMSNORM_F8_E4M3:
    case RMSNORM_F8_E5M2:
    case RMSNORM_F8_E4M3FNUZ: return rmsi_bench_ulp_fp8(t, a);
    case RMSNORM_DTYPE_MAX_ENUM:
    default: return INFINITY;
    }
    a = fabs(a);
    if (!(a > 0.0) || isinf(a))
        return ldexp(1.0, emin - mbits);
    (void)frexp(a, &e);
    e -= 1; /* floor(log2(a)) */
    if (e < emin)
        e = emin;
    return ldexp(1.0, e - mbits);
}

double rmsi_bench_ulp_fp8(rmsnorm_dtype t, double a)
{
    rmsi_fp8_format f = rmsi_fp8_format_of(t);
    int e = 0;
    int emin = 1 - f.bias;
    a = fabs(a);
    if (a > 0.0 && !isinf(a)) {
        (void)frexp(a, &e);
        e -= 1;
    }
    if (e < emin || !(a > 0.0))
        e = emin;
    return ldexp(1.0, e - f.mbits);
}

static double ratio(double err, double bound)
{
    if (err == 0.0)
        return 0.0;
    return bound > 0.0 ? err / bound : INFINITY;
}

static int nan_mismatch(double a, double o)
{
    return isnan(a) != isnan(o);
}

/* Activations (y, h): exact (h) or twice |a - o| <= ulp_T(|o|) + 1e-5 |o|. */
double rmsi_bench_check_act(const void *a, const void *o, rmsnorm_dtype t, size_t n, int exact)
{
    double worst = 0.0;
    for (size_t i = 0; i < n; i++) {
        double va = rmsi_load(a, t, i), vo = rmsi_load(o, t, i);
        if (nan_mismatch(va, vo))
            return INFINITY;
        if (isnan(va))
            continue;
        double err = fabs(va - vo);
        double r = exact ? (err > 0.0 ? INFINITY : 0.0)
                         : ratio(err, 2.0 * (rmsi_bench_ulp(t, vo) + 1e-5 * fabs(vo)));
        if (r > worst)
            worst = r;
    }
    return worst;
}

/* rstd and fp8 scales: twice |a - o| <= 1e-5 o. */
double rmsi_bench_check_rel(const float *a, const float *o, size_t n)
{
    double worst = 0.0;
    for (size_t i = 0; i < n; i++) {
        if (nan_mismatch(a[i], o[i]))
            return INFINITY;
        if (isnan(a[i]))
            continue;
        double r = ratio(fabs((double)a[i] - (double)o[i]), 2e-5 * fabs((double)o[i]));
        if (r > worst)
            worst = r;
    }
    return worst;
}

/* dweight: twice ||a - o||_2 <= 1e-5 ||o||_2 + 1e-30. */
double rmsi_bench_check_l2(const float *a, const float *o, size_t n)
{
    double d = 0.0, s = 0.0;
    for (size_t i = 0; i < n; i++) {
        double e = (double)a[i] - (double)o[i];
        d += e * e;
        s += (double)o[i] * (double)o[i];
    }
    if (isnan(d))
        return INFINITY;
    return ratio(sqrt(d), 2.0 * (1e-5 * sqrt(s) + 1e-30));
}

/* dx of one row: twice |a - o| <= ulp_T(|o|) + 2e-5 rstd (|g| + |n| mean|g n|),
 * g = dy * w, n = x * rstd, from the ref's rstd. */
static double weight_at(const void *w, rmsnorm_dtype wt, int64_t j)
{
    return w != NULL ? (double)rmsi_load(w, wt, (size_t)j) : 1.0;
}

double rmsi_bench_check_dx_row(const void *a, const void *o, const void *x, const void *dy,
                               const void *w, rmsnorm_dtype wt, rmsnorm_dtype t, int64_t cols,
                               size_t row_off, double rstd)
{
    double mgn = 0.0, worst = 0.0;
    for (int64_t j = 0; j < cols; j++) {
        double g = (double)rmsi_load(dy, t, row_off + (size_t)j) * weight_at(w, wt, j);
        double nn = (double)rmsi_load(x, t, row_off + (size_t)j) * rstd;
        mgn += fabs(g * nn);
    }
    mgn /= (double)cols;
    for (int64_t j = 0; j < cols; j++) {
        size_t i = row_off + (size_t)j;
        double va = rmsi_load(a, t, i), vo = rmsi_load(o, t, i);
        if (nan_mismatch(va, vo))
            return INFINITY;
        if (isnan(va))
            continue;
        double g = (double)rmsi_load(dy, t, i) * weight_at(w, wt, j);
        double nn = (double)rmsi_load(x, t, i) * rstd;
        double bound = rmsi_bench_ulp(t, vo) + 2e-5 * fabs(rstd) * (fabs(g) + fabs(nn) * mgn);
        double r = ratio(fabs(va - vo), 2.0 * bound);
        if (r > worst)
            worst = r;
    }
    return worst;
}

/* fp8 element i, decoded and brought to the oracle's scale: the two agree
 * within two codes (each is within one of the exact value) plus the scales'
 * relative error. */
double rmsi_bench_check_q(uint8_t a, uint8_t o, float sa, float so, rmsnorm_dtype f8)
{
    double da = rmsi_fp8_to_f32(a, f8), d_o = rmsi_fp8_to_f32(o, f8);
    if (nan_mismatch(da, d_o))
        return INFINITY;
    if (isnan(da) || a == o)
        return 0.0;
    double vo = d_o * (double)so / (double)sa; /* the oracle's value in a's units */
    double m = fabs(da) > fabs(vo) ? fabs(da) : fabs(vo);
    return ratio(fabs(da - vo), 2.0 * rmsi_bench_ulp_fp8(f8, m) + 4e-5 * fabs(vo));
}

/* The worse of two err/bound ratios, a NaN counting as the worst. */
static double worse(double worst, double w)
{
    if (w <= worst)
        return worst;
    return w == w ? w : INFINITY;
}

/* The host checks do double arithmetic on every element, once per config in
 * a --config-search: single-threaded 0.19 s a validation at 4096x8192 bf16
 * backward, about a fifth of a 120-config search, so rows and chunks are
 * spread over the OpenMP threads. The result is a maximum: the same for any
 * thread count. */
#define RMSI_CHECK_CHUNK ((size_t)1 << 16)

double rmsi_bench_check_act_all(const void *a, const void *o, rmsnorm_dtype t, size_t n, int exact)
{
    const size_t esz = rmsnorm_dtype_size(t);
    const int64_t nch = (int64_t)((n + RMSI_CHECK_CHUNK - 1u) / RMSI_CHECK_CHUNK);
    double worst = 0.0;
#pragma omp parallel for schedule(static) reduction(max : worst)
    for (int64_t k = 0; k < nch; k++) {
        const size_t lo = (size_t)k * RMSI_CHECK_CHUNK;
        const size_t m = n - lo < RMSI_CHECK_CHUNK ? n - lo : RMSI_CHECK_CHUNK;
        worst = worse(worst, rmsi_bench_check_act((const unsigned char *)a + lo * esz,
                                                  (const unsigned char *)o + lo * esz, t, m, exact));
    }
    return worst;
}

double rmsi_bench_check_dx_all(const void *a, const void *o, const void *x, const void *dy, const void *w,
                               rmsnorm_dtype wt, rmsnorm_dtype t, int64_t rows, int64_t cols,
                               const float *rstd)
{
    double worst = 0.0;
#pragma omp parallel for schedule(static) reduction(max : worst)
    for (int64_t r = 0; r < rows; r++)
        worst = worse(worst, rmsi_bench_check_dx_row(a, o, x, dy, w, wt, t, cols, (size_t)r * (size_t)cols, rstd[r]));
    return worst;
}
