/*
 * librmsnorm_cuda.so: the "cuda" backend table and the plugin entry point, the
 * only exported symbol (gpu/cuda/rmsnorm_cuda.map). The core dlopens this
 * file; on a machine without a driver or a device the entry point says
 * RMSNORM_ERR_BACKEND_UNAVAILABLE and the core goes on without it. The CUDA
 * runtime is linked statically, so the plugin needs only libcuda.so.1 (the
 * driver) at run time.
 */
#include <cuda_runtime.h>

#include "gpu/cuda/cuda_internal.h"

#define RMSI_CUDA_CAPS                                                                              \
    (RMSNORM_CAP_F32 | RMSNORM_CAP_F16 | RMSNORM_CAP_BF16 | RMSNORM_CAP_FORWARD | RMSNORM_CAP_BACKWARD | \
     RMSNORM_CAP_RESIDUAL | RMSNORM_CAP_QUANT_PER_TENSOR | RMSNORM_CAP_QUANT_PER_TOKEN |             \
     RMSNORM_CAP_QUANT_PER_BLOCK | RMSNORM_CAP_FP8_E4M3 | RMSNORM_CAP_FP8_E5M2 | RMSNORM_CAP_FP8_E4M3FNUZ)

static const struct rmsnorm_backend rmsi_cuda_table = {
    sizeof(struct rmsnorm_backend),
    RMSNORM_BACKEND_ABI_MAJOR,
    RMSNORM_BACKEND_ABI_MINOR,
    "cuda",
    RMSI_CUDA_CAPS,
    1,   /* is_device */
    100, /* above every CPU backend */
    0,
    rmsi_cuda_forward,
    rmsi_cuda_backward,
    rmsi_cuda_backward_workspace_size,
    rmsi_gpu_mem_alloc,
    rmsi_gpu_mem_free,
    rmsi_gpu_mem_copy,
    rmsi_gpu_synchronize,
    rmsi_cuda_probe,
    rmsi_gpu_time_region,
    rmsi_cuda_describe,
    rmsi_cuda_device_busy,
    rmsi_cuda_config_set,
    rmsi_cuda_config_describe,
    rmsi_cuda_config_enumerate,
};

extern "C" __attribute__((visibility("default"))) rmsnorm_status
rmsnorm_plugin_init(uint32_t core_abi_major, const struct rmsnorm_backend **table)
{
    int count = 0;
    if (!table)
        return RMSNORM_ERR_NULL_POINTER;
    *table = nullptr;
    if (core_abi_major != RMSNORM_BACKEND_ABI_MAJOR)
        return RMSNORM_ERR_UNSUPPORTED;
    /* No driver, a driver older than the runtime, or no device: all mean "absent". */
    if (cudaGetDeviceCount(&count) != cudaSuccess || count < 1) {
        (void)cudaGetLastError();
        return RMSNORM_ERR_BACKEND_UNAVAILABLE;
    }
    if (rmsi_cuda_sms() < 1)
        return RMSNORM_ERR_BACKEND_UNAVAILABLE;
    *table = &rmsi_cuda_table;
    return RMSNORM_OK;
}
