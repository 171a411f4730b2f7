/*
 * fuzz_fp8: ref/formats.h's fp8 encoder and decoder against fp8_model.c.
 *
 * The first input triggers the exhaustive part: all 256 codes of every format
 * are decoded, and every fp32 rounding boundary is encoded (each code's value
 * and its fp32 neighbours, each midpoint between consecutive codes and its fp32
 * neighbours, the saturation boundary, half the smallest subnormal, fp32
 * subnormals, infinities, NaN payloads, both zeros). Every input then adds fp32
 * values of its own: raw bit patterns, and offsets of a few fp32 ulps around a
 * chosen code's value or midpoint, which is where a rounding bug would hide.
 */
#include <float.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "fuzz/data_producer.h"
#include "fuzz/fp8_model.h"
#include "fuzz/report.h"
#include "ref/formats.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const rmsnorm_dtype fz_fp8_types[3] = {RMSNORM_F8_E4M3, RMSNORM_F8_E5M2, RMSNORM_F8_E4M3FNUZ};
static fz_fp8_model fz_models[3];
static int fz_exhaustive_done;

static void check_encode(const fz_fp8_model *m, float v)
{
    uint8_t want = fz_fp8_model_encode(m, v);
    uint8_t got = rmsi_f32_to_fp8(v, m->dtype);
    if (got != want)
        fz_fail("%s encode(%a = 0x%08x): formats.h 0x%02x, model 0x%02x", m->name, (double)v,
                rmsi_f32_bits(v), got, want);
}

static void check_decode(const fz_fp8_model *m, uint8_t c)
{
    double want;
    int want_nan;
    fz_fp8_model_decode(m, c, &want, &want_nan);
    float got = rmsi_fp8_to_f32(c, m->dtype);
    if (want_nan) {
        if (!isnan(got))
            fz_fail("%s decode(0x%02x): formats.h %a, model NaN", m->name, c, (double)got);
        return;
    }
    if (isnan(got) || (double)got != want || (signbit(got) != 0) != (signbit(want) != 0))
        fz_fail("%s decode(0x%02x): formats.h %a, model %a", m->name, c, (double)got, want);
}

/* v, its two fp32 neighbours and both signs. */
static void check_around(const fz_fp8_model *m, float v)
{
    float cand[3] = {nextafterf(v, -INFINITY), v, nextafterf(v, INFINITY)};
    for (int i = 0; i < 3; i++) {
        check_encode(m, cand[i]);
        check_encode(m, -cand[i]);
    }
}

static void check_exhaustive(const fz_fp8_model *m)
{
    /* the model itself, against the formats' documented maxima */
    if ((float)m->value[m->nfinite - 1] != rmsi_fp8_max(m->dtype))
        fz_fail("%s: model max %a, formats.h max %a", m->name, m->value[m->nfinite - 1],
                (double)rmsi_fp8_max(m->dtype));
    for (int c = 0; c < 256; c++)
        check_decode(m, (uint8_t)c);
    for (int c = 0; c < m->nfinite; c++) {
        float v = (float)m->value[c];
        check_around(m, v);
        if (c + 1 < m->nfinite)
            check_around(m, (float)((m->value[c] + m->value[c + 1]) / 2.0));
        /* a code's own value encodes back to the code (fnuz -0 aside) */
        uint8_t neg = (uint8_t)(0x80u | (unsigned)c);
        if (rmsi_f32_to_fp8(rmsi_fp8_to_f32((uint8_t)c, m->dtype), m->dtype) != (uint8_t)c ||
            (c != 0 && rmsi_f32_to_fp8(rmsi_fp8_to_f32(neg, m->dtype), m->dtype) != neg))
            fz_fail("%s: code 0x%02x does not survive decode+encode", m->name, c);
    }
    double top = m->value[m->nfinite - 1];
    double step = top - m->value[m->nfinite - 2];
    check_around(m, (float)(top + step / 2.0));
    check_around(m, (float)(top + step));
    check_around(m, (float)(top * 2.0));
    check_around(m, (float)(m->value[1] / 2.0)); /* the tie between 0 and the smallest subnormal */
    check_around(m, FLT_MAX);
    check_around(m, FLT_MIN);
    static const uint32_t special[] = {0x00000000u, 0x00000001u, 0x007fffffu, 0x7f800000u,
                                       0x7f800001u, 0x7fc00000u, 0x7fffffffu, 0x7fa00000u};
    for (size_t i = 0; i < sizeof special / sizeof special[0]; i++) {
        check_encode(m, rmsi_bits_f32(special[i]));
        check_encode(m, rmsi_bits_f32(special[i] | 0x80000000u));
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!fz_exhaustive_done) {
        for (int f = 0; f < 3; f++) {
            if (fz_fp8_model_init(&fz_models[f], fz_fp8_types[f]) != 0)
                fz_fail("cannot build the model of dtype %d", (int)fz_fp8_types[f]);
            check_exhaustive(&fz_models[f]);
        }
        fz_exhaustive_done = 1;
    }
    fz_producer p;
    fz_init(&p, data, size);
    fz_case_describe("fuzz_fp8 input of %zu bytes", size);
    /* one record: kind byte, then raw bits or (code, ulp offset) */
    while (p.back - p.front >= 5) {
        uint8_t kind = fz_param_byte(&p);
        const fz_fp8_model *m = &fz_models[kind % 3u];
        float v;
        if ((kind & 0x08u) == 0u) {
            uint32_t u = 0;
            for (int i = 0; i < 4; i++)
                u = (u << 8) | fz_param_byte(&p);
            v = rmsi_bits_f32(u);
            for (int f = 0; f < 3; f++)
                check_encode(&fz_models[f], v);
            continue;
        }
        int c = fz_param_byte(&p) % m->nfinite;
        int off = (int)(int8_t)fz_param_byte(&p);
        int mode = fz_param_byte(&p);
        (void)fz_param_byte(&p);
        double base = m->value[c];
        if ((mode & 1) != 0 && c + 1 < m->nfinite)
            base = (base + m->value[c + 1]) / 2.0;
        v = (float)base;
        for (int i = 0; i < off; i++)
            v = nextafterf(v, INFINITY);
        for (int i = 0; i > off; i--)
            v = nextafterf(v, -INFINITY);
        if ((mode & 2) != 0)
            v = -v;
        check_encode(m, v);
    }
    return 0;
}
