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
