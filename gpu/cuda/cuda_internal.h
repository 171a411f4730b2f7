/* Declarations shared by the CUDA plugin's host files. */
#ifndef RMSNORM_GPU_CUDA_INTERNAL_H
#define RMSNORM_GPU_CUDA_INTERNAL_H

#include "rmsnorm_backend.h"
#include "gpu/common/host_runtime.h"
#include "gpu/common/kernel_args.h"

/* SM count of the current device (cached per ordinal); 0 on failure. */
int rmsi_cuda_sms(void);
/* The largest dynamic shared memory a CTA may opt into (bytes; 0 unknown). */
int rmsi_cuda_smem_optin(void);
/* Shared memory per SM (bytes; 0 unknown). */
int rmsi_cuda_smem_sm(void);
/* 1: the device launches thread block clusters (compute capability >= 9). */
int rmsi_cuda_cluster(void);
/* The L2's size of the current device (bytes; 0 unknown). */
int rmsi_cuda_l2_bytes(void);
/* Peak HBM GB/s per SM from the memory clock and bus width (0: unknown). */
int rmsi_cuda_hbm_gbps_per_sm(void);
/* What the ladder, the grids and the backward's workspace size see: the SM
 * count and HBM figure above unless RMSNORM_CUDA_SMS (fewer SMs only) or
 * RMSNORM_CUDA_HBM_SM say otherwise at the first call (tests, docs/gpu.md). */
int rmsi_cuda_ladder_sms(void);
int rmsi_cuda_ladder_hbm(void);
/* 1: the backward drops its dw partial rows from L2 once summed (unless
 * RMSNORM_CUDA_L2_DISCARD=0 in the environment at the first call). */
int rmsi_cuda_l2_discard(void);
/* 1: launch the kernels as programmatic dependents (sm_90+, unless
 * RMSNORM_CUDA_PDL=0 in the environment at the first call). */
int rmsi_cuda_pdl(void);

/* The table's probe: gpu/common/host_runtime.h's on this device's SMs. */
rmsnorm_status rmsi_cuda_probe(rmsnorm_probe kind, void *dst, const void *src0, const void *src1,
                               size_t bytes, void *stream);
rmsnorm_status rmsi_cuda_describe(char *buf, size_t n);
rmsnorm_status rmsi_cuda_device_busy(int *busy, char *why, size_t n);

rmsnorm_status rmsi_cuda_config_set(const char *spec);
rmsnorm_status rmsi_cuda_config_describe(rmsnorm_op op, int64_t rows, int64_t cols, rmsnorm_dtype dtype,
                                         char *buf, size_t n);
rmsnorm_status rmsi_cuda_config_enumerate(rmsnorm_op op, int64_t rows, int64_t cols, rmsnorm_dtype dtype,
                                          int idx, char *buf, size_t n);
/* The pinned config (all fields -1 when none). */
void rmsi_cuda_config_pin(struct rmsi_config *out);

rmsnorm_status rmsi_cuda_forward(const rmsnorm_forward_args *a, void *stream);
rmsnorm_status rmsi_cuda_backward(const rmsnorm_backward_args *a, void *stream);
rmsnorm_status rmsi_cuda_backward_workspace_size(int64_t rows, int64_t cols, size_t *bytes);

#endif /* RMSNORM_GPU_CUDA_INTERNAL_H */
