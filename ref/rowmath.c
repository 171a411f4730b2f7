/*
 * Blocked pairwise fp32 summation and the per-row helpers of the reference.
 * The exact order is part of the oracle: see rowmath.h and docs/numerics.md.
 */
#include <math.h>

#include "internal.h"
#include "ref/formats.h"
#include "ref/rowmath.h"

void rmsi_pairsum_init(rmsi_pairsum *ps)
{
    ps->blocks = 0;
    ps->depth = 0;
}

static float block_sum(const float *terms, size_t n)
{
    float lane[RMSI_REF_LANES] = { 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f };
    size_t i = 0;
    size_t l;

    /* Whole groups of 8 first: the lanes are independent, so the compiler may
     * keep them in vector registers without changing any rounding. */
    for (; i + RMSI_REF_LANES <= n; i += RMSI_REF_LANES) {
        for (l = 0; l < RMSI_REF_LANES; l++)
            lane[l] += terms[i + l];
    }
    for (l = 0; i < n; i++, l++)
        lane[l] += terms[i];
    /* The halving fold a SIMD horizontal add does: 8 -> 4 -> 2 -> 1. */
    float a0 = lane[0] + lane[4];
    float a1 = lane[1] + lane[5];
    float a2 = lane[2] + lane[6];
    float a3 = lane[3] + lane[7];
    float b0 = a0 + a2;
    float b1 = a1 + a3;
    return b0 + b1;
}

void rmsi_pairsum_push_block(rmsi_pairsum *ps, const float *terms, size_t n)
{
    uint64_t c;

    if (RMSI_NEVER(ps->depth >= RMSI_PAIRSUM_DEPTH))
        return;
    ps->part[ps->depth++] = block_sum(terms, n);
    ps->blocks++;
    /* Binary counter: each trailing zero bit of the new count is a pair of
     * equal-sized partial sums to merge, so partial sums only ever meet
     * partners of the same size and the tree stays balanced without
     * recursion or a buffer of block sums. */
    for (c = ps->blocks; (c & 1u) == 0u && ps->depth >= 2; c >>= 1) {
        ps->part[ps->depth - 2] = ps->part[ps->depth - 2] + ps->part[ps->depth - 1];
        ps->depth--;
    }
}

float rmsi_pairsum_result(const rmsi_pairsum *ps)
{
    int i;
    float s;

    if (ps->depth == 0)
        return 0.0f;
    s = ps->part[ps->depth - 1];
    for (i = ps->depth - 2; i >= 0; i--)
        s = ps->part[i] + s;
    return s;
}

float rmsi_ref_rstd(float ss, int64_t cols, float eps)
{
    float mean = ss / (float)cols;
    float var = mean + eps;
    float root = sqrtf(var);
    return 1.0f / root;
}

void rmsi_ref_load_block(const void *row, rmsnorm_dtype t, int64_t j0, size_t n, float *out)
{
    size_t i;

    /* One loop per dtype rather than a switch per element. */
    switch (t) {
    case RMSNORM_F16: {
        const uint16_t *p = (const uint16_t *)row + j0;
        for (i = 0; i < n; i++)
            out[i] = rmsi_f16_to_f32(p[i]);
        break;
    }
    case RMSNORM_BF16: {
        const uint16_t *p = (const uint16_t *)row + j0;
        for (i = 0; i < n; i++)
            out[i] = rmsi_bf16_to_f32(p[i]);
        break;
    }
    case RMSNORM_F32:
    default: {
        const float *p = (const float *)row + j0;
        for (i = 0; i < n; i++)
            out[i] = p[i];
        break;
    }
    }
}

void rmsi_ref_store_block(void *row, rmsnorm_dtype t, int64_t j0, size_t n, const float *v)
{
    size_t i;

    switch (t) {
    case RMSNORM_F16: {
        uint16_t *p = (uint16_t *)row + j0;
        for (i = 0; i < n; i++)
            p[i] = rmsi_f32_to_f16(v[i]);
        break;
    }
    case RMSNORM_BF16: {
        uint16_t *p = (uint16_t *)row + j0;
        for (i = 0; i < n; i++)
            p[i] = rmsi_f32_to_bf16(v[i]);
        break;
    }
    case RMSNORM_F32:
    default: {
        float *p = (float *)row + j0;
        for (i = 0; i < n; i++)
            p[i] = v[i];
        break;
    }
    }
}

void rmsi_ref_round_block(float *v, size_t n, rmsnorm_dtype t)
{
    size_t i;

    switch (t) {
    case RMSNORM_F16:
        for (i = 0; i < n; i++)
            v[i] = rmsi_f16_to_f32(rmsi_f32_to_f16(v[i]));
        break;
    case RMSNORM_BF16:
        for (i = 0; i < n; i++)
            v[i] = rmsi_bf16_to_f32(rmsi_f32_to_bf16(v[i]));
        break;
    case RMSNORM_F32:
    default:
        break;
    }
}

void rmsi_ref_load_weff(const void *w, rmsnorm_dtype wt, float offset, int64_t j0, size_t n,
                        float *out)
{
    size_t i;

    if (w == NULL) {
        for (i = 0; i < n; i++)
            out[i] = 1.0f;
        return;
    }
    rmsi_ref_load_block(w, wt, j0, n, out);
    for (i = 0; i < n; i++)
        out[i] = out[i] + offset;
}

float rmsi_ref_row_sumsq(const void *row, rmsnorm_dtype t, int64_t cols)
{
    float v[RMSI_REF_BLOCK];
    rmsi_pairsum ps;
    int64_t j0;

    rmsi_pairsum_init(&ps);
    for (j0 = 0; j0 < cols; j0 += RMSI_REF_BLOCK) {
        size_t n = rmsi_ref_block_len(j0, cols);
        size_t i;
        rmsi_ref_load_block(row, t, j0, n, v);
        for (i = 0; i < n; i++)
            v[i] = v[i] * v[i];
        rmsi_pairsum_push_block(&ps, v, n);
    }
    return rmsi_pairsum_result(&ps);
}
