/*
 * Host memory helpers shared by the CPU backends (ref, avx512). Allocation
 * happens only here, for callers and tools, never inside a compute call.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* A cache line: no false sharing between buffers, and enough alignment for
 * any vector load the simd backend issues. */
#define RMSI_HOST_ALIGN ((size_t)64)

rmsnorm_status rmsi_host_mem_alloc(size_t bytes, void **p)
{
    size_t rounded;
    void *m;

    if (p == NULL)
        return RMSNORM_ERR_NULL_POINTER;
    if (bytes == 0u || bytes > SIZE_MAX - (RMSI_HOST_ALIGN - 1u))
        return RMSNORM_ERR_BAD_SHAPE;
    /* aligned_alloc wants a multiple of the alignment. */
    rounded = (bytes + RMSI_HOST_ALIGN - 1u) & ~(RMSI_HOST_ALIGN - 1u);
    m = aligned_alloc(RMSI_HOST_ALIGN, rounded);
    if (m == NULL)
        return RMSNORM_ERR_DEVICE;
    *p = m;
    return RMSNORM_OK;
}

rmsnorm_status rmsi_host_mem_free(void *p)
{
    free(p);
    return RMSNORM_OK;
}

rmsnorm_status rmsi_host_mem_copy(void *dst, const void *src, size_t bytes, rmsnorm_copy_dir dir,
                                  void *stream)
{
    (void)stream;
    switch (dir) {
    case RMSNORM_COPY_TO_BACKEND:
    case RMSNORM_COPY_TO_HOST:
    case RMSNORM_COPY_WITHIN_BACKEND:
        break;
    default:
        return RMSNORM_ERR_BAD_ARGUMENT;
    }
    if (bytes == 0u)
        return RMSNORM_OK;
    if (dst == NULL || src == NULL)
        return RMSNORM_ERR_NULL_POINTER;
    /* memmove: a copy within the backend may overlap, and costs the same. */
    memmove(dst, src, bytes);
    return RMSNORM_OK;
}

rmsnorm_status rmsi_host_synchronize(void *stream)
{
    /* CPU ops are synchronous: they have finished when they return. */
    (void)stream;
    return RMSNORM_OK;
}
