/*
 * The reference backend's table: portable C11 + OpenMP, every op, dtype and
 * quant mode, and the oracle every other backend is tested against. Priority 0
 * so "auto" picks it only when nothing faster is present.
 */
#include "internal.h"
#include "ref/ref.h"

#define RMSI_REF_CAPS                                                                            \
    (RMSNORM_CAP_F32 | RMSNORM_CAP_F16 | RMSNORM_CAP_BF16 | RMSNORM_CAP_FORWARD |                \
     RMSNORM_CAP_BACKWARD | RMSNORM_CAP_RESIDUAL | RMSNORM_CAP_QUANT_PER_TENSOR |                \
     RMSNORM_CAP_QUANT_PER_TOKEN | RMSNORM_CAP_QUANT_PER_BLOCK | RMSNORM_CAP_FP8_E4M3 |           \
     RMSNORM_CAP_FP8_E5M2 | RMSNORM_CAP_FP8_E4M3FNUZ)

static const rmsnorm_backend ref_table = {
    .struct_size = sizeof(rmsnorm_backend),
    .abi_major = RMSNORM_BACKEND_ABI_MAJOR,
    .abi_minor = RMSNORM_BACKEND_ABI_MINOR,
    .name = "ref",
    .caps = RMSI_REF_CAPS,
    .is_device = 0,
    .priority = 0,
    .reserved0 = 0,
    .forward = rmsi_ref_forward,
    .backward = rmsi_ref_backward,
    .backward_workspace_size = rmsi_ref_backward_workspace_size,
    .mem_alloc = rmsi_host_mem_alloc,
    .mem_free = rmsi_host_mem_free,
    .mem_copy = rmsi_host_mem_copy,
    .synchronize = rmsi_host_synchronize,
    .probe = rmsi_host_probe,
    .time_region = rmsi_host_time_region,
    .describe = rmsi_host_describe,
    /* CPU backends have no device to share and no launch configuration. */
    .device_busy = NULL,
    .config_set = NULL,
    .config_describe = NULL,
    .config_enumerate = NULL,
};

const rmsnorm_backend *rmsi_ref_backend(void)
{
    return &ref_table;
}
