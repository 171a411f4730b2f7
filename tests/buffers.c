#include "tests/buffers.h"

#include <stdlib.h>
#include <string.h>

#include "tests/backends.h"

#define RMST_MIN_ALLOC 16u

void rmst_buf_init(rmst_buf *b, const rmsnorm_backend *be, size_t bytes)
{
    rmsnorm_status st;
    b->be = be;
    b->bytes = bytes < RMST_MIN_ALLOC ? RMST_MIN_ALLOC : bytes;
    b->mem = NULL;
    b->host = malloc(b->bytes);
    assert_non_null(b->host);
    st = rmsnorm_mem_alloc(be, b->bytes, &b->mem);
    assert_int_equal(st, RMSNORM_OK);
    assert_non_null(b->mem);
}

void rmst_buf_free(rmst_buf *b)
{
    if (b->mem != NULL)
        assert_int_equal(rmsnorm_mem_free(b->be, b->mem), RMSNORM_OK);
    free(b->host);
    b->mem = NULL;
    b->host = NULL;
    b->bytes = 0;
}

void rmst_buf_fill(rmst_buf *b, unsigned char byte)
{
    memset(b->host, byte, b->bytes);
}

void rmst_buf_upload(rmst_buf *b)
{
    assert_int_equal(rmsnorm_mem_copy(b->be, b->mem, b->host, b->bytes, RMSNORM_COPY_TO_BACKEND, NULL),
                     RMSNORM_OK);
    assert_int_equal(rmsnorm_synchronize(b->be, NULL), RMSNORM_OK);
}

void rmst_buf_download(rmst_buf *b)
{
    assert_int_equal(rmsnorm_synchronize(b->be, NULL), RMSNORM_OK);
    assert_int_equal(rmsnorm_mem_copy(b->be, b->host, b->mem, b->bytes, RMSNORM_COPY_TO_HOST, NULL),
                     RMSNORM_OK);
    assert_int_equal(rmsnorm_synchronize(b->be, NULL), RMSNORM_OK);
}

size_t rmst_view_bytes(int64_t rows, int64_t cols, int64_t stride, size_t esize)
{
    if (rows <= 0 || cols <= 0)
        return 0;
    return ((size_t)(rows - 1) * (size_t)stride + (size_t)cols) * esize;
}

void rmst_bwd_bufs_init(rmst_bwd_bufs *b, const rmsnorm_backend *be, int64_t rows, int64_t cols, rmsnorm_dtype t,
                        rmsnorm_dtype wt)
{
    const size_t bytes = (size_t)(rows * cols) * rmsnorm_dtype_size(t);
    size_t ws_bytes = 0;
    assert_int_equal(rmsnorm_backward_workspace_size(be, rows, cols, &ws_bytes), RMSNORM_OK);
    b->rows = rows;
    b->cols = cols;
    b->t = t;
    b->wt = wt;
    rmst_buf_init(&b->x, be, bytes);
    rmst_buf_init(&b->dy, be, bytes);
    rmst_buf_init(&b->dx, be, bytes);
    rmst_buf_init(&b->w, be, (size_t)cols * rmsnorm_dtype_size(wt));
    rmst_buf_init(&b->dw, be, (size_t)cols * sizeof(float));
    rmst_buf_init(&b->ws, be, ws_bytes);
}

void rmst_bwd_bufs_args(rmst_bwd_bufs *b, rmsnorm_backward_args *a)
{
    rmst_buf_fill(&b->dx, 0xff);
    rmst_buf_fill(&b->dw, 0xff);
    rmst_buf_fill(&b->ws, 0xff);
    rmst_buf_upload(&b->x);
    rmst_buf_upload(&b->dy);
    rmst_buf_upload(&b->dx);
    rmst_buf_upload(&b->w);
    rmst_buf_upload(&b->dw);
    rmst_buf_upload(&b->ws);
    memset(a, 0, sizeof *a);
    a->struct_size = sizeof *a;
    a->x = (rmsnorm_matrix){b->x.mem, b->t, b->rows, b->cols, b->cols};
    a->dy = (rmsnorm_matrix){b->dy.mem, b->t, b->rows, b->cols, b->cols};
    a->dx = (rmsnorm_matrix){b->dx.mem, b->t, b->rows, b->cols, b->cols};
    a->weight = b->w.mem;
    a->weight_dtype = b->wt;
    a->dweight = (float *)b->dw.mem;
    a->workspace = b->ws.mem;
    a->workspace_bytes = b->ws.bytes;
}

void rmst_bwd_bufs_free(rmst_bwd_bufs *b)
{
    rmst_buf_free(&b->x);
    rmst_buf_free(&b->dy);
    rmst_buf_free(&b->dx);
    rmst_buf_free(&b->w);
    rmst_buf_free(&b->dw);
    rmst_buf_free(&b->ws);
}
