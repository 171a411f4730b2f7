/*
 * Declarations shared by the HIP plugin's host files (the .cc files of gpu/hip). Host
 * C++ only: these files include <hip/hip_runtime_api.h> (ROCm, or Debian's
 * HIP 5.2 headers for hip-check's API-drift compile) and never a kernel.
 */
#ifndef RMSNORM_GPU_HIP_INTERNAL_H
#define RMSNORM_GPU_HIP_INTERNAL_H

#include "rmsnorm_backend.h"
#include "gpu/common/host_runtime.h"
#include "gpu/common/kernel_args.h"

/* What the ladder needs to know about the current device, read once per
 * device: compute units, LDS bytes per CU and whether it is gfx950. */
typedef struct rmsi_hip_device {
    int cus;          /* 0: unknown (no device, or the query failed) */
    int lds_per_cu;   /* bytes: 65536 on gfx942, 163840 on gfx950 */
    int gfx;          /* 942, 950, or 0 for another gfx9 part */
} rmsi_hip_device;

int rmsi_hip_device_get(rmsi_hip_device *d);

/* The table's probe: gpu/common/host_runtime.h's on this device's CUs. */
rmsnorm_status rmsi_hip_probe(rmsnorm_probe kind, void *dst, const void *src0, const void *src1,
                              size_t bytes, void *stream);
rmsnorm_status rmsi_hip_describe(char *buf, size_t n);
rmsnorm_status rmsi_hip_device_busy(int *busy, char *why, size_t n);

rmsnorm_status rmsi_hip_config_set(const char *spec);
rmsnorm_status rmsi_hip_config_describe(rmsnorm_op op, int64_t rows, int64_t cols, rmsnorm_dtype dtype,
                                        char *buf, size_t n);
rmsnorm_status rmsi_hip_config_enumerate(rmsnorm_op op, int64_t rows, int64_t cols, rmsnorm_dtype dtype,
                                         int idx, char *buf, size_t n);
/* The pinned config (all fields -1 when none). */
void rmsi_hip_config_pin(rmsi_config *out);

rmsnorm_status rmsi_hip_forward(const rmsnorm_forward_args *a, void *stream);
rmsnorm_status rmsi_hip_backward(const rmsnorm_backward_args *a, void *stream);
rmsnorm_status rmsi_hip_backward_workspace_size(int64_t rows, int64_t cols, size_t *bytes);

#endif /* RMSNORM_GPU_HIP_INTERNAL_H */
