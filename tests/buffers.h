/*
 * A test buffer: memory in the backend's space plus a host mirror, moved only
 * through rmsnorm_mem_copy, so device backends are driven exactly like host
 * ones. Failures of the memory helpers are cmocka failures.
 */
#ifndef RMST_BUFFERS_H
#define RMST_BUFFERS_H

#include <stddef.h>

#include "rmsnorm.h"

typedef struct rmst_buf {
    const rmsnorm_backend *be;
    unsigned char *host; /* mirror, size bytes */
    void *mem;           /* backend memory, size bytes */
    size_t bytes;        /* what the test uses; at least 1 is allocated */
} rmst_buf;

/* Allocates bytes (at least 16, so an empty tensor still has a valid pointer
 * whose bytes can be checked for stray writes). */
void rmst_buf_init(rmst_buf *b, const rmsnorm_backend *be, size_t bytes);
void rmst_buf_free(rmst_buf *b);
void rmst_buf_fill(rmst_buf *b, unsigned char byte);
void rmst_buf_upload(rmst_buf *b);
void rmst_buf_download(rmst_buf *b);

/* Bytes of a [rows, cols] view with row_stride elements of esize bytes: up to
 * the end of the last row's cols, so an overrun of the last row leaves the
 * allocation. */
size_t rmst_view_bytes(int64_t rows, int64_t cols, int64_t stride, size_t esize);

/* The buffers of one dense backward call: x, dy, dx (rows x cols of t), the
 * weight (cols of wt), dw (cols fp32) and the workspace the backend asks for.
 * The caller writes x, dy and w into the host mirrors; rmst_bwd_bufs_args
 * poisons dx, dw and the workspace, uploads everything and fills the
 * matrices, weight, dweight and workspace of a (struct_size set, the rest
 * zero: eps, rstd, flags are the caller's). */
typedef struct rmst_bwd_bufs {
    rmst_buf x, dy, dx, w, dw, ws;
    int64_t rows, cols;
    rmsnorm_dtype t, wt;
} rmst_bwd_bufs;

void rmst_bwd_bufs_init(rmst_bwd_bufs *b, const rmsnorm_backend *be, int64_t rows, int64_t cols, rmsnorm_dtype t,
                        rmsnorm_dtype wt);
void rmst_bwd_bufs_args(rmst_bwd_bufs *b, rmsnorm_backward_args *a);
void rmst_bwd_bufs_free(rmst_bwd_bufs *b);

#endif /* RMST_BUFFERS_H */
