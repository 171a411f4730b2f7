/*
 * Reference backward: dx (plus the residual gradient) and the deterministic
 * dweight reduction through the caller's workspace.
 *
 * Rows are grouped in fixed chunks (rmsi_ref_dw_chunks): chunk c owns rows
 * [c * chunk_rows, (c + 1) * chunk_rows) and the workspace row partial[c][],
 * which it fills with the in-order sum over its rows of dy * m. dweight[j] is
 * then the in-order sum over c of partial[c][j]. The chunking depends only on
 * rows, and threads only ever take whole chunks (and whole columns in the
 * final sum), so dweight is bitwise identical for any OpenMP thread count.
 *
 * Per row, two passes over memory (three when rstd is recomputed), block by
 * block as in the forward: pass 1 sums g * n, pass 2 writes dx and adds to the
 * partial row. Pass 2 reads a block's dy, x and dresidual before writing its
 * dx, so dx may alias any of them exactly.
 */
#include <stdalign.h>

#include "internal.h"
#include "ref/formats.h"
#include "ref/ref.h"
#include "ref/rowmath.h"

/* Fewer than 16 rows per chunk would make the final sum over chunks cost as
 * much as the rows themselves; 64 chunks bound the workspace to 64 rows of
 * cols floats and still give every thread of a large CPU a chunk. */
#define RMSI_DW_MIN_CHUNK_ROWS 16
#define RMSI_DW_MAX_CHUNKS 64

int64_t rmsi_ref_dw_chunks(int64_t rows, int64_t *chunk_rows)
{
    int64_t cr;

    if (rows <= 0) {
        *chunk_rows = RMSI_DW_MIN_CHUNK_ROWS;
        return 0;
    }
    cr = (rows + (RMSI_DW_MAX_CHUNKS - 1)) / RMSI_DW_MAX_CHUNKS;
    if (cr < RMSI_DW_MIN_CHUNK_ROWS)
        cr = RMSI_DW_MIN_CHUNK_ROWS;
    *chunk_rows = cr;
    return (rows + cr - 1) / cr;
}

rmsnorm_status rmsi_ref_backward_workspace_size(int64_t rows, int64_t cols, size_t *bytes)
{
    int64_t chunk_rows;
    int64_t nchunks;

    if (RMSI_NEVER(bytes == NULL))
        return RMSNORM_ERR_NULL_POINTER;
    if (rows < 0 || cols < 1)
        return RMSNORM_ERR_BAD_SHAPE;
    nchunks = rmsi_ref_dw_chunks(rows, &chunk_rows);
    /* nchunks <= 64, so this bounds nchunks * cols * 4 below SIZE_MAX. */
    if ((uint64_t)cols > (uint64_t)(SIZE_MAX / sizeof(float) / RMSI_DW_MAX_CHUNKS))
        return RMSNORM_ERR_BAD_SHAPE;
    *bytes = (size_t)nchunks * (size_t)cols * sizeof(float);
    return RMSNORM_OK;
}

typedef struct bwd_row {
    const void *x;
    const void *dy;
    const void *dres; /* NULL: no residual gradient */
    void *dx;
    rmsnorm_dtype t;
} bwd_row;

/* n = x * rstd and g = dy * weff for columns [j0, j0 + n). */
static void load_n_g(const rmsnorm_backward_args *a, const bwd_row *row, float rstd, int64_t j0,
                     size_t n, float *nv, float *g)
{
    float w[RMSI_REF_BLOCK];
    size_t i;

    rmsi_ref_load_block(row->x, row->t, j0, n, nv);
    rmsi_ref_load_block(row->dy, row->t, j0, n, g);
    rmsi_ref_load_weff(a->weight, a->weight_dtype, a->weight_offset, j0, n, w);
    for (i = 0; i < n; i++) {
        nv[i] = nv[i] * rstd;
        g[i] = g[i] * w[i];
    }
}

/* One row; partial is this row's chunk's workspace row, or NULL. */
static void backward_row(const rmsnorm_backward_args *a, int64_t r, float *partial)
{
    const int64_t cols = a->x.cols;
    const int llama = (a->flags & RMSNORM_ROUND_LLAMA) != 0u;
    float nv[RMSI_REF_BLOCK];
    float g[RMSI_REF_BLOCK];
    float dy[RMSI_REF_BLOCK];
    float dres[RMSI_REF_BLOCK];
    float m[RMSI_REF_BLOCK];
    rmsi_pairsum ps;
    bwd_row row;
    float rstd;
    float c;
    int64_t j0;

    row.x = rmsi_ref_row(&a->x, r);
    row.dy = rmsi_ref_row(&a->dy, r);
    row.dres = rmsi_ref_row(&a->dresidual, r);
    row.dx = rmsi_ref_row(&a->dx, r);
    row.t = a->x.dtype;

    if (a->rstd != NULL)
        rstd = a->rstd[r];
    else
        rstd = rmsi_ref_rstd(rmsi_ref_row_sumsq(row.x, row.t, cols), cols, a->eps);

    rmsi_pairsum_init(&ps);
    for (j0 = 0; j0 < cols; j0 += RMSI_REF_BLOCK) {
        size_t n = rmsi_ref_block_len(j0, cols);
        size_t i;
        load_n_g(a, &row, rstd, j0, n, nv, g);
        for (i = 0; i < n; i++)
            g[i] = g[i] * nv[i];
        rmsi_pairsum_push_block(&ps, g, n);
    }
    c = rmsi_pairsum_result(&ps) / (float)cols;

    for (j0 = 0; j0 < cols; j0 += RMSI_REF_BLOCK) {
        size_t n = rmsi_ref_block_len(j0, cols);
        size_t i;
        load_n_g(a, &row, rstd, j0, n, nv, g);
        if (partial != NULL) {
            rmsi_ref_load_block(row.dy, row.t, j0, n, dy);
            for (i = 0; i < n; i++)
                m[i] = nv[i];
            if (llama)
                rmsi_ref_round_block(m, n, row.t);
            for (i = 0; i < n; i++)
                partial[(size_t)j0 + i] += dy[i] * m[i];
        }
        for (i = 0; i < n; i++)
            g[i] = rstd * (g[i] - nv[i] * c);
        if (row.dres != NULL) {
            rmsi_ref_load_block(row.dres, row.t, j0, n, dres);
            for (i = 0; i < n; i++)
                g[i] = g[i] + dres[i];
        }
        rmsi_ref_store_block(row.dx, row.t, j0, n, g);
    }
}

static void backward_chunk(const rmsnorm_backward_args *a, int64_t chunk, int64_t chunk_rows,
                           float *ws)
{
    const int64_t rows = a->x.rows;
    const int64_t cols = a->x.cols;
    int64_t r0 = chunk * chunk_rows;
    int64_t r1 = rows - r0 < chunk_rows ? rows : r0 + chunk_rows;
    float *partial = NULL;
    int64_t r;

    if (ws != NULL) {
        int64_t j;
        partial = ws + (size_t)chunk * (size_t)cols;
        for (j = 0; j < cols; j++)
            partial[j] = 0.0f;
    }
    for (r = r0; r < r1; r++)
        backward_row(a, r, partial);
}

static void sum_chunks(const float *ws, int64_t nchunks, int64_t j0, int64_t j1, int64_t cols,
                       float *dw)
{
    int64_t j;

    for (j = j0; j < j1; j++) {
        float s = 0.0f;
        int64_t c;
        for (c = 0; c < nchunks; c++)
            s = s + ws[(size_t)c * (size_t)cols + (size_t)j];
        dw[j] = s;
    }
}

rmsnorm_status rmsi_ref_backward(const rmsnorm_backward_args *a, void *stream)
{
    const int64_t rows = a->x.rows;
    const int64_t cols = a->x.cols;
    const int large = rmsi_ref_is_large(rows, cols);
    float *ws = NULL;
    int64_t chunk_rows;
    int64_t nchunks = rmsi_ref_dw_chunks(rows, &chunk_rows);
    int64_t c;

    (void)stream;
    if (a->dweight != NULL && rows > 0) {
        size_t need = 0;
        rmsnorm_status st = rmsi_ref_backward_workspace_size(rows, cols, &need);
        if (st != RMSNORM_OK)
            return st;
        if (RMSI_NEVER(a->workspace == NULL))
            return RMSNORM_ERR_NULL_POINTER;
        if (RMSI_NEVER(a->workspace_bytes < need))
            return RMSNORM_ERR_WORKSPACE_TOO_SMALL;
        /* The workspace is untyped: a float view needs float alignment. */
        if (((uintptr_t)a->workspace % alignof(float)) != 0u)
            return RMSNORM_ERR_MISALIGNED;
        ws = (float *)a->workspace;
    }

    if (large) {
#pragma omp parallel for schedule(static)
        for (c = 0; c < nchunks; c++)
            backward_chunk(a, c, chunk_rows, ws);
    } else {
        for (c = 0; c < nchunks; c++)
            backward_chunk(a, c, chunk_rows, ws);
    }

    if (a->dweight == NULL)
        return RMSNORM_OK;
    if (ws == NULL) { /* rows == 0: the sum over no rows */
        int64_t j;
        for (j = 0; j < cols; j++)
            a->dweight[j] = 0.0f;
        return RMSNORM_OK;
    }
    if (large && cols >= (int64_t)2 * RMSI_REF_BLOCK) {
        /* Columns are independent and each keeps its chunk order, so any
         * split of the columns gives the same bits. */
#pragma omp parallel for schedule(static)
        for (c = 0; c < cols; c += RMSI_REF_BLOCK) {
            int64_t end = cols - c < RMSI_REF_BLOCK ? cols : c + RMSI_REF_BLOCK;
            sum_chunks(ws, nchunks, c, end, cols, a->dweight);
        }
    } else {
        sum_chunks(ws, nchunks, 0, cols, cols, a->dweight);
    }
    return RMSNORM_OK;
}
