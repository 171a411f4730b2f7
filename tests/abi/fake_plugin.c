/*
 * A stand-in GPU plugin for the plugin-negotiation test: it claims to be
 * "cuda" and reports the backend ABI major FAKE_MAJOR in its table. Built
 * twice, as the current major (the core must load it) and as the next major
 * (the core must refuse it). Every op returns RMSNORM_ERR_UNSUPPORTED: only
 * discovery is under test. FAKE_CAPS marks the table so the test can tell it
 * from a real plugin the core may find next to itself.
 */
#include "rmsnorm_backend.h"

#ifndef FAKE_MAJOR
#error "build with -DFAKE_MAJOR=n"
#endif
#define FAKE_CAPS 0x00FA4E00u

static rmsnorm_status fwd(const rmsnorm_forward_args *a, void *stream)
{
    (void)a;
    (void)stream;
    return RMSNORM_ERR_UNSUPPORTED;
}

static rmsnorm_status bwd(const rmsnorm_backward_args *a, void *stream)
{
    (void)a;
    (void)stream;
    return RMSNORM_ERR_UNSUPPORTED;
}

static rmsnorm_status ws_size(int64_t rows, int64_t cols, size_t *bytes)
{
    (void)rows;
    (void)cols;
    *bytes = 0;
    return RMSNORM_OK;
}

static rmsnorm_status alloc(size_t bytes, void **p)
{
    (void)bytes;
    *p = NULL;
    return RMSNORM_ERR_UNSUPPORTED;
}

static rmsnorm_status release(void *p)
{
    (void)p;
    return RMSNORM_ERR_UNSUPPORTED;
}

static rmsnorm_status copy(void *dst, const void *src, size_t bytes, rmsnorm_copy_dir dir,
                           void *stream)
{
    (void)dst;
    (void)src;
    (void)bytes;
    (void)dir;
    (void)stream;
    return RMSNORM_ERR_UNSUPPORTED;
}

static rmsnorm_status sync(void *stream)
{
    (void)stream;
    return RMSNORM_OK;
}

static const struct rmsnorm_backend table = {
    .struct_size = sizeof(struct rmsnorm_backend),
    .abi_major = FAKE_MAJOR,
    .abi_minor = 0,
    .name = "cuda",
    .caps = FAKE_CAPS,
    .is_device = 1,
    .priority = -100, /* never the "auto" choice */
    .forward = fwd,
    .backward = bwd,
    .backward_workspace_size = ws_size,
    .mem_alloc = alloc,
    .mem_free = release,
    .mem_copy = copy,
    .synchronize = sync,
};

__attribute__((visibility("default"))) rmsnorm_status
rmsnorm_plugin_init(uint32_t core_abi_major, const struct rmsnorm_backend **out);

/* Deliberately skips the courtesy check of core_abi_major for the next-major
 * build, so the core's own check of table->abi_major is what gets tested. */
rmsnorm_status rmsnorm_plugin_init(uint32_t core_abi_major, const struct rmsnorm_backend **out)
{
    if (out == NULL)
        return RMSNORM_ERR_NULL_POINTER;
    if (FAKE_MAJOR == RMSNORM_BACKEND_ABI_MAJOR && core_abi_major != FAKE_MAJOR)
        return RMSNORM_ERR_UNSUPPORTED;
    *out = &table;
    return RMSNORM_OK;
}
