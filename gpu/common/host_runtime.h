/*
 * The runtime half of a GPU backend table that is the same on every vendor
 * (gpu/common/host_runtime.cc, built into each plugin): memory, copies,
 * synchronisation, the probes' argument checks, and timing. Each runtime
 * error is cleared and reported as RMSNORM_ERR_DEVICE; nothing here aborts.
 * The vendor's own file (gpu/cuda/runtime.cu, gpu/hip/runtime.cc) keeps what
 * differs: the device facts the ladder asks for.
 */
#ifndef RMSNORM_GPU_HOST_RUNTIME_H
#define RMSNORM_GPU_HOST_RUNTIME_H

#include "rmsnorm_backend.h"

/* The stream an op runs on: the caller's, or, when the caller passed NULL
 * inside time_region's graph capture, the capture stream (the legacy default
 * stream cannot be captured). */
void *rmsi_gpu_stream(void *stream);

rmsnorm_status rmsi_gpu_mem_alloc(size_t bytes, void **p);
rmsnorm_status rmsi_gpu_mem_free(void *p);
rmsnorm_status rmsi_gpu_mem_copy(void *dst, const void *src, size_t bytes, rmsnorm_copy_dir dir,
                                 void *stream);
rmsnorm_status rmsi_gpu_synchronize(void *stream);
/* The probe kernels (gpu/common/probe.cu) on units SMs or CUs (< 1: the
 * device could not be asked, RMSNORM_ERR_DEVICE), after the table's checks. */
rmsnorm_status rmsi_gpu_probe(rmsnorm_probe kind, void *dst, const void *src0, const void *src1,
                              size_t bytes, int units, void *stream);
/* device_busy: smi(dev, busy, why, n), the vendor's management library
 * (NVML, rocm_smi; 0 when it answered), else memory in use beyond 2 GiB;
 * smi_name names the library in the fallback's text. */
rmsnorm_status rmsi_gpu_device_busy(int *busy, char *why, size_t n,
                                    int (*smi)(int dev, int *busy, char *why, size_t n),
                                    const char *smi_name);
rmsnorm_status rmsi_gpu_time_region(rmsnorm_work_fn fn, void *ctx, int reps, int use_graph,
                                    void *stream, double *seconds);

#endif /* RMSNORM_GPU_HOST_RUNTIME_H */
