/*
 * Device description and the "is someone else on this GPU" check for
 * rmsnorm-bench. NVML is optional: it is dlopened when present (it ships with
 * the driver, not the toolkit) and its absence only makes the check coarser
 * (memory in use beyond a threshold, from cudaMemGetInfo).
 */
#include <cuda_runtime.h>
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "gpu/cuda/cuda_internal.h"

rmsnorm_status rmsi_cuda_describe(char *buf, size_t n)
{
    cudaDeviceProp prop;
    int dev = 0, drv = 0, rt = 0, w;
    if (!buf || n == 0)
        return RMSNORM_ERR_NULL_POINTER;
    buf[0] = '\0';
    if (cudaGetDevice(&dev) != cudaSuccess || cudaGetDeviceProperties(&prop, dev) != cudaSuccess ||
        cudaDriverGetVersion(&drv) != cudaSuccess || cudaRuntimeGetVersion(&rt) != cudaSuccess) {
        (void)cudaGetLastError();
        return RMSNORM_ERR_DEVICE;
    }
    /* the HBM figure is the ladder's input (gpu/cuda/ladder.cc, rmsi_bwd_slow_hbm) */
    w = snprintf(buf, n, "%s, cc %d.%d, %d SMs, %.0f MB L2, %.1f GiB, %d GB/s HBM an SM, CUDA driver %d.%d, "
                 "runtime %d.%d",
                 prop.name, prop.major, prop.minor, prop.multiProcessorCount, prop.l2CacheSize / 1e6,
                 (double)prop.totalGlobalMem / (double)(1ull << 30), rmsi_cuda_hbm_gbps_per_sm(), drv / 1000,
                 (drv % 1000) / 10, rt / 1000, (rt % 1000) / 10);
    /* a run under RMSNORM_CUDA_SMS / RMSNORM_CUDA_HBM_SM says so in its report */
    const int lsms = rmsi_cuda_ladder_sms(), lhbm = rmsi_cuda_ladder_hbm();
    if (w >= 0 && (size_t)w < n && (lsms != prop.multiProcessorCount || lhbm != rmsi_cuda_hbm_gbps_per_sm()))
        w = snprintf(buf + w, n - (size_t)w, ", ladder as %d SMs and %d GB/s an SM", lsms, lhbm);
    return w < 0 ? RMSNORM_ERR_DEVICE : RMSNORM_OK;
}

/* The few NVML calls we need, declared by hand (no nvml.h in the toolkit's
 * include path is assumed); the layouts are NVML's stable v1 ABI. */
typedef struct {
    unsigned int gpu, memory;
} rmsi_nvml_util;
typedef struct {
    unsigned int pid;
    unsigned long long used;
} rmsi_nvml_proc_v1;
typedef int (*rmsi_nvml_init_fn)(void);
typedef int (*rmsi_nvml_by_pci_fn)(const char *, void **);
typedef int (*rmsi_nvml_util_fn)(void *, rmsi_nvml_util *);
typedef int (*rmsi_nvml_procs_fn)(void *, unsigned int *, rmsi_nvml_proc_v1 *);

static int rmsi_nvml_busy(int dev, int *busy, char *why, size_t n)
{
    void *lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    char pci[32];
    void *h = nullptr;
    rmsi_nvml_util u = {0, 0};
    rmsi_nvml_proc_v1 procs[32];
    unsigned int np = 32, others = 0;
    int ok = -1;
    if (!lib)
        return -1;
    rmsi_nvml_init_fn init = (rmsi_nvml_init_fn)dlsym(lib, "nvmlInit_v2");
    rmsi_nvml_by_pci_fn by_pci = (rmsi_nvml_by_pci_fn)dlsym(lib, "nvmlDeviceGetHandleByPciBusId_v2");
    rmsi_nvml_util_fn util = (rmsi_nvml_util_fn)dlsym(lib, "nvmlDeviceGetUtilizationRates");
    rmsi_nvml_procs_fn get_procs = (rmsi_nvml_procs_fn)dlsym(lib, "nvmlDeviceGetComputeRunningProcesses");
    if (init && by_pci && util && cudaDeviceGetPCIBusId(pci, (int)sizeof pci, dev) == cudaSuccess &&
        init() == 0 && by_pci(pci, &h) == 0 && util(h, &u) == 0) {
        if (get_procs && get_procs(h, &np, procs) == 0) {
            for (unsigned int i = 0; i < np && i < 32; i++)
                if (procs[i].pid != (unsigned int)getpid())
                    others++;
        }
        *busy = others > 0 || u.gpu > 5;
        snprintf(why, n, "nvml: %u other compute process(es), utilisation %u%%", others, u.gpu);
        ok = 0;
    }
    (void)cudaGetLastError();
    dlclose(lib);
    return ok;
}

rmsnorm_status rmsi_cuda_device_busy(int *busy, char *why, size_t n)
{
    return rmsi_gpu_device_busy(busy, why, n, rmsi_nvml_busy, "nvml");
}
