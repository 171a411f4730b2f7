#include "fuzz/oracle.h"

#include <math.h>

static void format_of(rmsnorm_dtype t, int *mant, int *emin)
{
    switch (t) {
    case RMSNORM_F16: *mant = 10; *emin = -14; break;
    case RMSNORM_BF16: *mant = 7; *emin = -126; break;
    case RMSNORM_F8_E4M3: *mant = 3; *emin = -6; break;
    case RMSNORM_F8_E5M2: *mant = 2; *emin = -14; break;
    case RMSNORM_F8_E4M3FNUZ: *mant = 3; *emin = -7; break;
    case RMSNORM_F32:
    default: *mant = 23; *emin = -126; break;
    }
}

double fz_ulp(rmsnorm_dtype t, double a)
{
    int mant;
    int emin;
    format_of(t, &mant, &emin);
    int e = emin;
    a = fabs(a);
    if (a > 0.0 && isfinite(a)) {
        int e2 = 0;
        (void)frexp(a, &e2);
        if (e2 - 1 > emin)
            e = e2 - 1;
    }
    return ldexp(1.0, e - mant);
}

double fz_overflow_at(rmsnorm_dtype t)
{
    switch (t) {
    case RMSNORM_F16: return 65520.0;
    case RMSNORM_BF16: return ldexp(1.0, 128) - ldexp(1.0, 119);
    case RMSNORM_F32:
    default: return ldexp(1.0, 128) - ldexp(1.0, 103);
    }
}

double fz_as_number(double v, rmsnorm_dtype t)
{
    if (isinf(v))
        return v > 0 ? fz_overflow_at(t) : -fz_overflow_at(t);
    return v;
}

double fz_clamp_number(double o, rmsnorm_dtype t)
{
    double m = fz_overflow_at(t);
    if (o > m)
        return m;
    if (o < -m)
        return -m;
    return o;
}

double fz_oracle_rstd(const float *h, int64_t cols, float eps, int *in_range)
{
    double ss = 0.0;
    for (int64_t j = 0; j < cols; j++)
        ss += (double)h[j] * (double)h[j];
    double d = ss / (double)cols + (double)eps;
    *in_range = 1;
    if (isfinite(ss) && ss != 0.0 &&
        (d < ldexp(1.0, -120) || d > ldexp(1.0, 120) || ss > ldexp(1.0, 120)))
        *in_range = 0;
    return 1.0 / sqrt(d);
}

int fz_near_pow2(double a, double tol)
{
    if (!(a > 0.0) || !isfinite(a))
        return 0;
    int e2 = 0;
    double f = frexp(a, &e2); /* [0.5, 1) */
    return f <= 0.5 * (1.0 + tol) || f >= 1.0 - tol;
}
