/*
 * Reference forward: residual add, RMS normalisation, weight, and fp8
 * quantisation, one row at a time in the order docs/numerics.md states.
 *
 * Each row is walked block by block (RMSI_REF_BLOCK elements staged on the
 * stack) in up to three passes over memory instead of one buffer of cols
 * floats, so any cols works without allocation:
 *   A  h = x (+ residual), stored to h_out; sum of squares -> rstd
 *   B  (PER_TOKEN only) amax of v over the row -> scale
 *   C  v, stored to y and/or quantised to q
 * After pass A, h is read back from h_out when it was stored (h_out may be x
 * or the residual itself, which pass A overwrote) and recomputed from
 * x + residual otherwise; both give the same bits. Every pass reads a whole
 * block of its inputs before it writes that block's outputs, so an output that
 * exactly aliases an input (y == x, h_out == residual, h_out == x) is safe.
 */
#include "internal.h"
#include "ref/formats.h"
#include "ref/ref.h"
#include "ref/rowmath.h"

typedef struct fwd_row {
    const void *x;
    const void *res; /* NULL: no residual */
    void *hout;      /* NULL: h not stored */
    rmsnorm_dtype t;
} fwd_row;

/* h for columns [j0, j0 + n): from h_out once pass A has stored it there. */
static void load_h(const fwd_row *row, int stored, int64_t j0, size_t n, float *h)
{
    float r[RMSI_REF_BLOCK];
    size_t i;

    if (stored) {
        rmsi_ref_load_block(row->hout, row->t, j0, n, h);
        return;
    }
    rmsi_ref_load_block(row->x, row->t, j0, n, h);
    if (row->res == NULL)
        return;
    rmsi_ref_load_block(row->res, row->t, j0, n, r);
    for (i = 0; i < n; i++)
        h[i] = h[i] + r[i];
    rmsi_ref_round_block(h, n, row->t);
}

/* Pass A: returns the sum of squares of h, storing h when h_out is given. */
static float pass_h_sumsq(const fwd_row *row, int64_t cols)
{
    float h[RMSI_REF_BLOCK];
    float sq[RMSI_REF_BLOCK];
    rmsi_pairsum ps;
    int64_t j0;

    rmsi_pairsum_init(&ps);
    for (j0 = 0; j0 < cols; j0 += RMSI_REF_BLOCK) {
        size_t n = rmsi_ref_block_len(j0, cols);
        size_t i;
        load_h(row, 0, j0, n, h);
        if (row->hout != NULL)
            rmsi_ref_store_block(row->hout, row->t, j0, n, h);
        for (i = 0; i < n; i++)
            sq[i] = h[i] * h[i];
        rmsi_pairsum_push_block(&ps, sq, n);
    }
    return rmsi_pairsum_result(&ps);
}

/* v for columns [j0, j0 + n) (step 5 of the forward). */
static void compute_v(const rmsnorm_forward_args *a, const fwd_row *row, float rstd, int64_t j0,
                      size_t n, float *v)
{
    float w[RMSI_REF_BLOCK];
    const int llama = (a->flags & RMSNORM_ROUND_LLAMA) != 0u;
    size_t i;

    load_h(row, row->hout != NULL, j0, n, v);
    rmsi_ref_load_weff(a->weight, a->weight_dtype, a->weight_offset, j0, n, w);
    for (i = 0; i < n; i++)
        v[i] = v[i] * rstd;
    if (llama)
        rmsi_ref_round_block(v, n, row->t);
    for (i = 0; i < n; i++)
        v[i] = v[i] * w[i];
}

static void forward_row(const rmsnorm_forward_args *a, int64_t r)
{
    const int64_t cols = a->x.cols;
    const rmsnorm_quant mode = a->quant_mode;
    const int pow2 = (a->flags & RMSNORM_SCALE_POW2) != 0u;
    float v[RMSI_REF_BLOCK];
    fwd_row row;
    void *y = rmsi_ref_row(&a->y, r);
    uint8_t *q = NULL;
    float fmax = 1.0f;
    float s = 1.0f;
    float rstd;
    int64_t j0;

    row.x = rmsi_ref_row(&a->x, r);
    row.res = rmsi_ref_row(&a->residual, r);
    row.hout = row.res != NULL ? rmsi_ref_row(&a->h_out, r) : NULL;
    row.t = a->x.dtype;
    if (mode != RMSNORM_QUANT_NONE) {
        q = (uint8_t *)rmsi_ref_row(&a->q, r);
        fmax = rmsi_fp8_max(a->q.dtype);
    }

    rstd = rmsi_ref_rstd(pass_h_sumsq(&row, cols), cols, a->eps);
    if (a->rstd != NULL)
        a->rstd[r] = rstd;

    switch (mode) {
    case RMSNORM_QUANT_PER_TENSOR:
        s = a->scale[0];
        break;
    case RMSNORM_QUANT_PER_TOKEN: {
        float amax = 0.0f;
        for (j0 = 0; j0 < cols; j0 += RMSI_REF_BLOCK) {
            size_t n = rmsi_ref_block_len(j0, cols);
            compute_v(a, &row, rstd, j0, n, v);
            amax = rmsi_ref_amax(v, n, amax);
        }
        s = rmsi_dynamic_scale(amax, a->scale_ub, fmax, pow2);
        a->scale[r] = s;
        break;
    }
    case RMSNORM_QUANT_PER_BLOCK_128: /* per block, in pass C */
    case RMSNORM_QUANT_NONE:
    default:
        break;
    }

    for (j0 = 0; j0 < cols; j0 += RMSI_REF_BLOCK) {
        size_t n = rmsi_ref_block_len(j0, cols);
        compute_v(a, &row, rstd, j0, n, v);
        if (y != NULL)
            rmsi_ref_store_block(y, row.t, j0, n, v);
        if (q == NULL)
            continue;
        if (mode == RMSNORM_QUANT_PER_BLOCK_128) {
            /* RMSI_REF_BLOCK == 128 and cols % 128 == 0 (validated): this
             * staged block is exactly quant block j0 / 128. */
            const int64_t padded_rows = (a->x.rows + 3) & ~(int64_t)3;
            s = rmsi_dynamic_scale(rmsi_ref_amax(v, n, 0.0f), 0.0f, fmax, pow2);
            a->scale[(j0 / RMSI_REF_BLOCK) * padded_rows + r] = s;
        }
        rmsi_ref_quantize(v, n, s, a->q.dtype, q + j0);
    }
}

rmsnorm_status rmsi_ref_forward(const rmsnorm_forward_args *a, void *stream)
{
    const int64_t rows = a->x.rows;
    int64_t r;

    (void)stream;
    if (RMSI_NEVER(a->quant_mode != RMSNORM_QUANT_NONE &&
                   (a->q.data == NULL || a->scale == NULL || !rmsi_is_fp8(a->q.dtype))))
        return RMSNORM_ERR_BAD_ARGUMENT;
    if (RMSI_NEVER(a->quant_mode == RMSNORM_QUANT_NONE && a->y.data == NULL))
        return RMSNORM_ERR_NULL_POINTER;

    if (rmsi_ref_is_large(rows, a->x.cols)) {
#pragma omp parallel for schedule(static)
        for (r = 0; r < rows; r++)
            forward_row(a, r);
    } else {
        for (r = 0; r < rows; r++)
            forward_row(a, r);
    }
    return RMSNORM_OK;
}
