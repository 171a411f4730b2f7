#include "fp8_model.h"

#include <math.h>
#include <string.h>

int fz_fp8_model_init(fz_fp8_model *m, rmsnorm_dtype dtype)
{
    int mbits;
    int bias;
    memset(m, 0, sizeof *m);
    m->dtype = dtype;
    switch (dtype) {
    case RMSNORM_F8_E4M3:
        /* 0x7f is NaN: 126 finite positive codes after zero (max 0x7e = 448) */
        m->name = "e4m3fn"; mbits = 3; bias = 7; m->nfinite = 0x7f;
        m->nan_out = 0x7f; m->signed_nan = 1; m->has_neg_zero = 1;
        break;
    case RMSNORM_F8_E5M2:
        /* exponent 31 holds inf (0x7c) and NaNs (0x7d..0x7f) */
        m->name = "e5m2"; mbits = 2; bias = 15; m->nfinite = 0x7c;
        m->nan_out = 0x7e; m->signed_nan = 1; m->has_neg_zero = 1; m->has_inf = 1;
        break;
    case RMSNORM_F8_E4M3FNUZ:
        /* every positive code is finite; the only NaN is 0x80 */
        m->name = "e4m3fnuz"; mbits = 3; bias = 8; m->nfinite = 0x80;
        m->nan_out = 0x80; m->signed_nan = 0; m->has_neg_zero = 0;
        break;
    default:
        return -1;
    }
    /* Walk the number line: the first two "binades" (subnormals and the first
     * normal binade) share the smallest step; every later binade doubles it. */
    double step = 1.0;
    for (int i = 0; i < bias - 1 + mbits; i++)
        step /= 2.0;
    int per_binade = 1 << mbits;
    double v = 0.0;
    for (int c = 0; c < m->nfinite; c++) {
        m->value[c] = v;
        v += step;
        if (c + 1 >= 2 * per_binade && (c + 1) % per_binade == 0)
            step *= 2.0; /* the interval that starts at a new binade is twice as wide */
    }
    return 0;
}

void fz_fp8_model_decode(const fz_fp8_model *m, uint8_t c, double *value, int *is_nan)
{
    int neg = (c & 0x80u) != 0u;
    int mag = c & 0x7f;
    *is_nan = 0;
    *value = 0.0;
    if (!m->has_neg_zero) {
        if (c == 0x80u) {
            *is_nan = 1;
            return;
        }
    } else if (m->has_inf && mag == 0x7c) {
        *value = neg ? -INFINITY : INFINITY;
        return;
    } else if (mag >= m->nfinite) {
        *is_nan = 1;
        return;
    }
    *value = neg ? -m->value[mag] : m->value[mag];
}

uint8_t fz_fp8_model_encode(const fz_fp8_model *m, float v)
{
    uint32_t bits;
    memcpy(&bits, &v, sizeof bits);
    uint8_t sign = (bits >> 31) ? 0x80u : 0x00u;
    if (v != v)
        return (uint8_t)(m->signed_nan ? (m->nan_out | sign) : m->nan_out);
    double a = fabs((double)v);
    int top = m->nfinite - 1;
    int code;
    if (a >= m->value[top]) {
        code = top;
    } else {
        /* largest code with value <= a, then compare with the midpoint */
        int lo = 0;
        int hi = top;
        while (hi - lo > 1) {
            int mid = (lo + hi) / 2;
            if (m->value[mid] <= a)
                lo = mid;
            else
                hi = mid;
        }
        double midpoint = (m->value[lo] + m->value[hi]) / 2.0;
        if (a < midpoint)
            code = lo;
        else if (a > midpoint)
            code = hi;
        else
            code = (lo % 2 == 0) ? lo : hi;
    }
    if (code == 0 && !m->has_neg_zero)
        return 0u;
    return (uint8_t)(sign | (uint8_t)code);
}
