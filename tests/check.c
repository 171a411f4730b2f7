#include "tests/check.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "ref/formats.h"
#include "tests/backends.h"
#include "tests/oracle.h"

/* Enough to diagnose a case without drowning the log. */
#define RMST_MAX_PRINTED 8

void rmst_report_begin(rmst_report *rep, const char *backend, const char *case_desc)
{
    (void)snprintf(rep->what, sizeof rep->what, "[%s] %s", backend, case_desc);
    rep->failures = 0;
    rep->checks = 0;
}

void rmst_report_fail(rmst_report *rep, const char *out, int64_t row, int64_t col, const char *fmt, ...)
{
    char msg[256];
    va_list ap;
    rep->failures++;
    if (rep->failures > RMST_MAX_PRINTED)
        return;
    va_start(ap, fmt);
    (void)vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    print_error("FAIL %s: %s[row %lld, col %lld]: %s\n", rep->what, out, (long long)row,
                (long long)col, msg);
}

void rmst_report_end(rmst_report *rep)
{
    if (rep->failures > 0)
        fail_msg("%s: %ld of %ld checks failed", rep->what, rep->failures, rep->checks);
}

int rmst_expect_close(rmst_report *rep, const char *out, int64_t row, int64_t col, double got,
                      double want, double bound)
{
    int ok;
    rep->checks++;
    if (isnan(want))
        ok = isnan(got);
    else if (isinf(want))
        ok = got == want;
    else
        ok = !isnan(got) && fabs(got - want) <= bound;
    if (!ok)
        rmst_report_fail(rep, out, row, col, "got %.9g, expected %.9g, |diff| %.3g > bound %.3g", got,
                         want, fabs(got - want), bound);
    return ok;
}

int rmst_expect_untouched(rmst_report *rep, const char *out, const unsigned char *buf, size_t from,
                          size_t to, unsigned char byte)
{
    for (size_t i = from; i < to; i++) {
        rep->checks++;
        if (buf[i] != byte) {
            rmst_report_fail(rep, out, -1, (int64_t)i,
                             "byte %zu written (0x%02x, poison 0x%02x) outside the output", i, buf[i],
                             byte);
            return 0;
        }
    }
    return 1;
}

double rmst_bound_y(double o, double n_o, double weff, rmsnorm_dtype t, uint32_t flags)
{
    double b = rmst_ulp(o, t) + 1e-5 * fabs(o);
    if ((flags & RMSNORM_ROUND_LLAMA) != 0u)
        b += fabs(weff) * rmst_ulp(n_o, t);
    return b;
}

double rmst_bound_rel(double o, double rel)
{
    return rel * fabs(o);
}

double rmst_bound_dx(double o, double rstd_o, double g, double n, double mean_abs_gn, rmsnorm_dtype t)
{
    return rmst_ulp(o, t) + 2e-5 * rstd_o * (fabs(g) + fabs(n) * mean_abs_gn);
}

double rmst_dyn_scale_slack(const rmst_norm_params *p, const double *n, int64_t j0, int64_t count,
                            rmsnorm_dtype qt)
{
    double e = 0.0;
    if ((p->flags & RMSNORM_ROUND_LLAMA) == 0u)
        return 0.0;
    for (int64_t j = j0; j < j0 + count; j++) {
        double d = fabs(rmst_weff(p, j)) * rmst_ulp(fabs(n[j]), p->t);
        if (d > e && isfinite(d))
            e = d;
    }
    return e / (double)rmsi_fp8_max(qt);
}

int rmst_expect_dyn_scale(rmst_report *rep, const char *out, int64_t row, int64_t col, double got,
                          double want_raw, double slack, int pow2)
{
    double p;
    double lo;
    rep->checks++;
    if (!pow2)
        return rmst_expect_close(rep, out, row, col, got, want_raw, 1e-5 * want_raw + slack);
    /* want_raw within the bound of a power of two P: the backend's own
     * rounding may put it on either side, so P and 2P are both right. */
    p = rmst_pow2_ceil(want_raw);
    lo = p * 0.5;
    if (fabs(want_raw - lo) <= 1e-5 * lo + slack && (got == lo || got == p))
        return 1;
    if (fabs(want_raw - p) <= 1e-5 * p + slack && (got == p || got == 2.0 * p))
        return 1;
    if (got == p)
        return 1;
    rmst_report_fail(rep, out, row, col, "got %.9g, expected the power of two %.9g (raw scale %.9g)",
                     got, p, want_raw);
    return 0;
}

int rmst_expect_fp8(rmst_report *rep, int64_t row, int64_t col, uint8_t code, rmsnorm_dtype qt,
                    double v_o, double s)
{
    double fmax = (double)rmsi_fp8_max(qt);
    double got = (double)rmsi_fp8_to_f32(code, qt);
    double m = v_o / s;
    rep->checks++;
    if (isnan(m)) {
        if (isnan(got))
            return 1;
        rmst_report_fail(rep, "q", row, col, "code 0x%02x = %.9g, expected NaN", code, got);
        return 0;
    }
    if (fabs(m) >= fmax) {
        /* saturation is exact */
        if (got == copysign(fmax, m))
            return 1;
        rmst_report_fail(rep, "q", row, col, "code 0x%02x = %.9g, expected saturation to %.9g (v/s %.9g)",
                         code, got, copysign(fmax, m), m);
        return 0;
    }
    if (!isnan(got) && fabs(got - m) <= rmst_ulp(m, qt) + 1e-5 * fabs(m))
        return 1;
    rmst_report_fail(rep, "q", row, col, "code 0x%02x = %.9g, expected %.9g (v %.9g / scale %.9g), bound %.3g",
                     code, got, m, v_o, s, rmst_ulp(m, qt) + 1e-5 * fabs(m));
    return 0;
}

int rmst_expect_l2(rmst_report *rep, const char *out, const float *got, const double *want,
                   int64_t count, double rel)
{
    double num = 0.0;
    double den = 0.0;
    rep->checks++;
    for (int64_t j = 0; j < count; j++) {
        double a = (double)got[j];
        if (isnan(want[j]) != isnan(a)) {
            rmst_report_fail(rep, out, -1, j, "got %.9g, expected %.9g (NaN mismatch)", a, want[j]);
            return 0;
        }
        if (isnan(a))
            continue;
        num += (a - want[j]) * (a - want[j]);
        den += want[j] * want[j];
    }
    if (sqrt(num) <= rel * sqrt(den) + 1e-30)
        return 1;
    rmst_report_fail(rep, out, -1, -1, "relative L2 error %.3g > %.3g (||o|| %.6g)",
                     den > 0.0 ? sqrt(num / den) : sqrt(num), rel, sqrt(den));
    return 0;
}

double rmst_dw_rel_bound(rmsnorm_dtype t, uint32_t flags)
{
    if ((flags & RMSNORM_ROUND_LLAMA) != 0u && t != RMSNORM_F32)
        return 1e-3;
    return 1e-5;
}

/* Maps a sign-magnitude pattern of `bits` bits onto a line where adjacent
 * values differ by one; both zeros map to 0. */
static int64_t ordered(uint32_t u, int bits)
{
    uint32_t sign = 1u << (bits - 1);
    int64_t mag = (int64_t)(u & (sign - 1u));
    return (u & sign) != 0u ? -mag : mag;
}

uint32_t rmst_ulp_distance(uint32_t a, uint32_t b, rmsnorm_dtype t)
{
    int bits;
    double da;
    double db;
    int64_t d;
    switch (t) {
    case RMSNORM_F16:
        da = (double)rmsi_f16_to_f32((uint16_t)a);
        db = (double)rmsi_f16_to_f32((uint16_t)b);
        bits = 16;
        break;
    case RMSNORM_BF16:
        da = (double)rmsi_bf16_to_f32((uint16_t)a);
        db = (double)rmsi_bf16_to_f32((uint16_t)b);
        bits = 16;
        break;
    case RMSNORM_F8_E4M3:
    case RMSNORM_F8_E5M2:
    case RMSNORM_F8_E4M3FNUZ:
        da = (double)rmsi_fp8_to_f32((uint8_t)a, t);
        db = (double)rmsi_fp8_to_f32((uint8_t)b, t);
        bits = 8;
        break;
    case RMSNORM_F32:
    default:
        da = (double)rmsi_bits_f32(a);
        db = (double)rmsi_bits_f32(b);
        bits = 32;
        break;
    }
    if (isnan(da) || isnan(db))
        return (isnan(da) && isnan(db)) ? 0u : UINT32_MAX;
    d = ordered(a, bits) - ordered(b, bits);
    if (d < 0)
        d = -d;
    return d > (int64_t)UINT32_MAX ? UINT32_MAX : (uint32_t)d;
}
