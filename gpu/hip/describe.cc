/*
 * Device description and the "is someone else on this GPU" check for
 * rmsnorm-bench. rocm_smi is optional: librocm_smi64 is dlopened when present
 * (it ships with ROCm, not with every runtime) and its absence only makes the
 * check coarser (memory in use beyond a threshold, from hipMemGetInfo).
 */
#include <dlfcn.h>
#include <hip/hip_runtime_api.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "gpu/hip/hip_internal.h"

rmsnorm_status rmsi_hip_describe(char *buf, size_t n)
{
    hipDeviceProp_t prop;
    rmsi_hip_device d;
    int dev = 0, drv = 0, rt = 0, w;
    if (!buf || n == 0)
        return RMSNORM_ERR_NULL_POINTER;
    buf[0] = '\0';
    if (hipGetDevice(&dev) != hipSuccess || hipGetDeviceProperties(&prop, dev) != hipSuccess ||
        hipDriverGetVersion(&drv) != hipSuccess || hipRuntimeGetVersion(&rt) != hipSuccess ||
        rmsi_hip_device_get(&d) != 0) {
        (void)hipGetLastError();
        return RMSNORM_ERR_DEVICE;
    }
    /* HIP versions are major * 10^7 + minor * 10^5 + patch. */
    w = snprintf(buf, n, "%s (%s), %d CUs, %d KB LDS/CU, %.0f MB L2, %.1f GiB, HIP driver %d.%d, runtime %d.%d",
                 prop.name, prop.gcnArchName, d.cus, d.lds_per_cu / 1024, prop.l2CacheSize / 1e6,
                 (double)prop.totalGlobalMem / (double)(1ull << 30), drv / 10000000, (drv / 100000) % 100,
                 rt / 10000000, (rt / 100000) % 100);
    return w < 0 ? RMSNORM_ERR_DEVICE : RMSNORM_OK;
}

/* The three rocm_smi calls we need, declared by hand (rocm_smi.h is not
 * assumed installed); status 0 is RSMI_STATUS_SUCCESS. The process query is
 * called with a NULL list, which only counts, so no struct layout is assumed. */
typedef int (*rmsi_rsmi_init_fn)(uint64_t flags);
typedef int (*rmsi_rsmi_busy_fn)(uint32_t dev, uint32_t *percent);
typedef int (*rmsi_rsmi_procs_fn)(void *procs, uint32_t *count);
typedef int (*rmsi_rsmi_shutdown_fn)(void);

static int rmsi_rsmi_busy(int dev, int *busy, char *why, size_t n)
{
    static const char *const names[] = {"librocm_smi64.so.7", "librocm_smi64.so.6", "librocm_smi64.so.5",
                                        "librocm_smi64.so"};
    void *lib = nullptr;
    uint32_t pct = 0, procs = 0;
    int ok = -1;
    for (size_t i = 0; i < sizeof names / sizeof names[0] && !lib; i++)
        lib = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
    if (!lib)
        return -1;
    void *si = dlsym(lib, "rsmi_init"), *sb = dlsym(lib, "rsmi_dev_busy_percent_get");
    void *sp = dlsym(lib, "rsmi_compute_process_info_get"), *sd = dlsym(lib, "rsmi_shut_down");
    rmsi_rsmi_init_fn init;
    rmsi_rsmi_busy_fn get_busy;
    rmsi_rsmi_procs_fn get_procs;
    rmsi_rsmi_shutdown_fn shut;
    /* POSIX sanctions converting dlsym's result; memcpy avoids the cast ISO C++ frowns on. */
    memcpy(&init, &si, sizeof init);
    memcpy(&get_busy, &sb, sizeof get_busy);
    memcpy(&get_procs, &sp, sizeof get_procs);
    memcpy(&shut, &sd, sizeof shut);
    /* rocm_smi numbers devices in its own order; with HIP_VISIBLE_DEVICES unset
     * it matches HIP's on the machines we know, so the device ordinal is used. */
    if (si && sb && init(0) == 0) {
        if (get_busy((uint32_t)dev, &pct) == 0) {
            if (sp && get_procs(nullptr, &procs) != 0)
                procs = 0;
            /* this process holds a context too: more than one is someone else */
            *busy = procs > 1 || pct > 5;
            snprintf(why, n, "rocm_smi: %u compute process(es) incl. this one, busy %u%%", procs, pct);
            ok = 0;
        }
        if (sd)
            (void)shut();
    }
    dlclose(lib);
    return ok;
}

rmsnorm_status rmsi_hip_device_busy(int *busy, char *why, size_t n)
{
    return rmsi_gpu_device_busy(busy, why, n, rmsi_rsmi_busy, "rocm_smi");
}
