/*
 * librmsnorm_hip.so: the "hip" backend table and the plugin entry point, the
 * only exported symbol (gpu/hip/rmsnorm_hip.map). The core dlopens this file;
 * on a machine without the ROCm runtime's device or driver the entry point
 * says RMSNORM_ERR_BACKEND_UNAVAILABLE and the core goes on without it.
 * Same ops, dtypes and capabilities as "cuda": the kernels are the same source.
 */
#include <hip/hip_runtime_api.h>

#include "gpu/hip/hip_internal.h"

#define RMSI_HIP_CAPS                                                                               \
    (RMSNORM_CAP_F32 | RMSNORM_CAP_F16 | RMSNORM_CAP_BF16 | RMSNORM_CAP_FORWARD | RMSNORM_CAP_BACKWARD | \
     RMSNORM_CAP_RESIDUAL | RMSNORM_CAP_QUANT_PER_TENSOR | RMSNORM_CAP_QUANT_PER_TOKEN |             \
     RMSNORM_CAP_QUANT_PER_BLOCK | RMSNORM_CAP_FP8_E4M3 | RMSNORM_CAP_FP8_E5M2 | RMSNORM_CAP_FP8_E4M3FNUZ)

static const struct rmsnorm_backend rmsi_hip_table = {
    sizeof(struct rmsnorm_backend),
    RMSNORM_BACKEND_ABI_MAJOR,
    RMSNORM_BACKEND_ABI_MINOR,
    "hip",
    RMSI_HIP_CAPS,
    1,   /* is_device */
    100, /* above every CPU backend (a machine has CUDA or ROCm, rarely both) */
    0,
    rmsi_hip_forward,
    rmsi_hip_backward,
    rmsi_hip_backward_workspace_size,
    rmsi_gpu_mem_alloc,
    rmsi_gpu_mem_free,
    rmsi_gpu_mem_copy,
    rmsi_gpu_synchronize,
    rmsi_hip_probe,
    rmsi_gpu_time_region,
    rmsi_hip_describe,
    rmsi_hip_device_busy,
    rmsi_hip_config_set,
    rmsi_hip_config_describe,
    rmsi_hip_config_enumerate,
};

extern "C" __attribute__((visibility("default"))) rmsnorm_status
rmsnorm_plugin_init(uint32_t core_abi_major, const struct rmsnorm_backend **table)
{
    rmsi_hip_device d;
    int count = 0;
    if (!table)
        return RMSNORM_ERR_NULL_POINTER;
    *table = nullptr;
    if (core_abi_major != RMSNORM_BACKEND_ABI_MAJOR)
        return RMSNORM_ERR_UNSUPPORTED;
    /* No driver (/dev/kfd), no device, or a runtime too old: all mean "absent". */
    if (hipGetDeviceCount(&count) != hipSuccess || count < 1) {
        (void)hipGetLastError();
        return RMSNORM_ERR_BACKEND_UNAVAILABLE;
    }
    /* The kernels are built for gfx942 and gfx950 only; on another part the
     * launches would fail with "invalid device function", so say absent now. */
    if (rmsi_hip_device_get(&d) != 0 || (d.gfx != 942 && d.gfx != 950))
        return RMSNORM_ERR_BACKEND_UNAVAILABLE;
    *table = &rmsi_hip_table;
    return RMSNORM_OK;
}
