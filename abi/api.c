/*
 * The public entry points: properties, memory helpers and the two ops. Every op
 * goes through abi/validate.c before a backend sees it, and the backend gets the
 * normalised full-size copy, never the caller's struct.
 */
#include <string.h>

#include "dispatch.h"

/* Backend pointers handed out are the present tables themselves; accept only
 * those, so a stale or forged pointer cannot reach a function slot. */
static int known_backend(const rmsnorm_backend *be)
{
    if (be == NULL)
        return 0;
    int n = rmsnorm_backend_count();
    for (int i = 0; i < n; i++)
        if (rmsnorm_backend_at(i) == be)
            return 1;
    return 0;
}

const char *rmsnorm_backend_name(const rmsnorm_backend *be)
{
    return known_backend(be) ? be->name : "";
}

int rmsnorm_backend_is_device(const rmsnorm_backend *be)
{
    return known_backend(be) ? (be->is_device != 0) : 0;
}

uint32_t rmsnorm_backend_caps(const rmsnorm_backend *be)
{
    return known_backend(be) ? be->caps : 0u;
}

rmsnorm_status rmsnorm_mem_alloc(const rmsnorm_backend *be, size_t bytes, void **p)
{
    if (!known_backend(be))
        return RMSNORM_ERR_BACKEND_UNAVAILABLE;
    if (p == NULL)
        return RMSNORM_ERR_NULL_POINTER;
    *p = NULL;
    if (bytes == 0 || bytes > (size_t)INT64_MAX)
        return RMSNORM_ERR_BAD_SHAPE;
    return be->mem_alloc(bytes, p);
}

rmsnorm_status rmsnorm_mem_free(const rmsnorm_backend *be, void *p)
{
    if (!known_backend(be))
        return RMSNORM_ERR_BACKEND_UNAVAILABLE;
    if (p == NULL)
        return RMSNORM_OK; /* like free(NULL) */
    return be->mem_free(p);
}

rmsnorm_status rmsnorm_mem_copy(const rmsnorm_backend *be, void *dst, const void *src, size_t bytes,
                                rmsnorm_copy_dir dir, void *stream)
{
    if (!known_backend(be))
        return RMSNORM_ERR_BACKEND_UNAVAILABLE;
    if (dst == NULL || src == NULL)
        return RMSNORM_ERR_NULL_POINTER;
    if (dir != RMSNORM_COPY_TO_BACKEND && dir != RMSNORM_COPY_TO_HOST && dir != RMSNORM_COPY_WITHIN_BACKEND)
        return RMSNORM_ERR_BAD_ARGUMENT;
    if (bytes == 0)
        return RMSNORM_OK;
    uintptr_t d = (uintptr_t)dst, s = (uintptr_t)src;
    if (d > UINTPTR_MAX - bytes || s > UINTPTR_MAX - bytes)
        return RMSNORM_ERR_BAD_SHAPE;
    if (d < s + bytes && s < d + bytes) /* memcpy semantics: no overlap */
        return RMSNORM_ERR_BAD_ALIAS;
    return be->mem_copy(dst, src, bytes, dir, stream);
}

rmsnorm_status rmsnorm_synchronize(const rmsnorm_backend *be, void *stream)
{
    if (!known_backend(be))
        return RMSNORM_ERR_BACKEND_UNAVAILABLE;
    return be->synchronize(stream);
}

rmsnorm_status rmsnorm_backward_workspace_size(const rmsnorm_backend *be, int64_t rows, int64_t cols,
                                               size_t *bytes)
{
    if (!known_backend(be))
        return RMSNORM_ERR_BACKEND_UNAVAILABLE;
    if (bytes == NULL)
        return RMSNORM_ERR_NULL_POINTER;
    *bytes = 0;
    if (rows < 0 || cols < 1 || rows > 0x7fffffff || cols > 0x7fffffff)
        return RMSNORM_ERR_BAD_SHAPE;
    return be->backward_workspace_size(rows, cols, bytes);
}

rmsnorm_status rmsnorm_forward(const rmsnorm_backend *be, const rmsnorm_forward_args *args, void *stream)
{
    if (!known_backend(be))
        return RMSNORM_ERR_BACKEND_UNAVAILABLE;
    rmsnorm_forward_args a;
    rmsnorm_status st = rmsi_validate_forward(be, args, &a);
    if (st != RMSNORM_OK)
        return st;
    return be->forward(&a, stream);
}

rmsnorm_status rmsnorm_backward(const rmsnorm_backend *be, const rmsnorm_backward_args *args,
                                void *stream)
{
    if (!known_backend(be))
        return RMSNORM_ERR_BACKEND_UNAVAILABLE;
    rmsnorm_backward_args a;
    rmsnorm_status st = rmsi_validate_backward(be, args, &a);
    if (st != RMSNORM_OK)
        return st;
    return be->backward(&a, stream);
}
