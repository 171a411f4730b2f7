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

#endif /* RMST_BUFFERS_H */
