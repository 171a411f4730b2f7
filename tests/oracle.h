/*
 * The fp64 oracle of docs/numerics.md. It takes the same stored inputs as the
 * library and evaluates the formulas in double; only h (the residual sum) is
 * computed bit-exactly in fp32 first, since every backend must store exactly it.
 */
#ifndef RMST_ORACLE_H
#define RMST_ORACLE_H

#include <stddef.h>
#include <stdint.h>

#include "rmsnorm.h"

/* One stored element as double (F32, F16, BF16 or an fp8 code). */
double rmst_load(const void *base, rmsnorm_dtype t, size_t i);

/* v rounded to t (F32, F16, BF16) in one step, to nearest even, overflowing to
 * infinity: no double rounding through fp32. */
double rmst_round_to(double v, rmsnorm_dtype t);

/* Spacing of t (any dtype, fp8 included) at magnitude |a|; the subnormal
 * spacing below the smallest normal, and at 0. */
double rmst_ulp(double a, rmsnorm_dtype t);

/* What the oracle needs to know about an op besides the row data. */
typedef struct rmst_norm_params {
    int64_t cols;
    rmsnorm_dtype t;            /* activation dtype */
    const void *weight;         /* host, NULL = none */
    rmsnorm_dtype weight_dtype;
    double weight_offset;
    double eps;
    uint32_t flags;
} rmst_norm_params;

/* weff_j = w_j + weight_offset, 1 without a weight. */
double rmst_weff(const rmst_norm_params *p, int64_t j);

/* Forward of one row. x and res (NULL = no residual) point at the row's first
 * element (host, dtype t). Writes h[j] (the stored h), n[j] = h*rstd,
 * v[j] (ONCE: n*weff; LLAMA: round_t(n)*weff) and returns rstd. */
double rmst_oracle_forward_row(const rmst_norm_params *p, const void *x, const void *res, double *h,
                               double *n, double *v);

/* Dynamic fp8 scale of docs/numerics.md over v[0..count) before the power-of-two
 * rounding (NaN ignored; ub <= 0: no clamp). */
double rmst_oracle_dyn_scale(const double *v, int64_t count, double ub, rmsnorm_dtype qt);

/* 2^ceil(log2 s) for s > 0. */
double rmst_pow2_ceil(double s);

/* Backward of one row. x is the normalised tensor (h), dy and dres (NULL =
 * none) the row's gradients, rstd_given NULL to recompute. Writes dx[j],
 * g[j] = dy*weff, n[j], adds dy*m into dw_acc[j] (when not NULL), stores
 * mean_k |g_k n_k| in *mean_abs_gn and returns the rstd it used. */
double rmst_oracle_backward_row(const rmst_norm_params *p, const void *x, const void *dy,
                                const void *dres, const float *rstd_given, double *dx, double *g,
                                double *n, double *dw_acc, double *mean_abs_gn);

#endif /* RMST_ORACLE_H */
