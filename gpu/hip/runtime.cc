/*
 * The device facts of the "hip" table (what the ladder and the plugin's
 * entry ask, read once per device) and its probe entry. Memory, copies,
 * synchronisation and timing are gpu/common/host_runtime.cc's. Nothing here
 * aborts: a failed query returns -1.
 */
#include <hip/hip_runtime_api.h>
#include <string.h>

#include "gpu/hip/hip_internal.h"

#define RMSI_MAX_DEVICES 64

static rmsi_hip_device rmsi_dev_cache[RMSI_MAX_DEVICES];
static int rmsi_dev_ready[RMSI_MAX_DEVICES];

/* LDS per CU: the property where the runtime reports it, else by target
 * (gfx950 160 KB, every other gfx9 CDNA part 64 KB). */
static int rmsi_lds_for(const hipDeviceProp_t *prop, int gfx)
{
    if (prop->maxSharedMemoryPerMultiProcessor >= 65536)
        return (int)prop->maxSharedMemoryPerMultiProcessor;
    return gfx == 950 ? 160 * 1024 : 64 * 1024;
}

int rmsi_hip_device_get(rmsi_hip_device *d)
{
    hipDeviceProp_t prop;
    rmsi_hip_device v = {0, 0, 0};
    int dev = 0;
    memset(d, 0, sizeof *d);
    if (hipGetDevice(&dev) != hipSuccess) {
        (void)hipGetLastError();
        return -1;
    }
    /* A benign race: every writer stores the same value for a device. */
    if (dev >= 0 && dev < RMSI_MAX_DEVICES && __atomic_load_n(&rmsi_dev_ready[dev], __ATOMIC_ACQUIRE)) {
        *d = rmsi_dev_cache[dev];
        return 0;
    }
    if (hipGetDeviceProperties(&prop, dev) != hipSuccess) {
        (void)hipGetLastError();
        return -1;
    }
    v.cus = prop.multiProcessorCount;
    if (strncmp(prop.gcnArchName, "gfx942", 6) == 0)
        v.gfx = 942;
    else if (strncmp(prop.gcnArchName, "gfx950", 6) == 0)
        v.gfx = 950;
    v.lds_per_cu = rmsi_lds_for(&prop, v.gfx);
    if (v.cus < 1)
        return -1;
    if (dev >= 0 && dev < RMSI_MAX_DEVICES) {
        rmsi_dev_cache[dev] = v;
        __atomic_store_n(&rmsi_dev_ready[dev], 1, __ATOMIC_RELEASE);
    }
    *d = v;
    return 0;
}

rmsnorm_status rmsi_hip_probe(rmsnorm_probe kind, void *dst, const void *src0, const void *src1, size_t bytes,
                              void *stream)
{
    rmsi_hip_device d;
    return rmsi_gpu_probe(kind, dst, src0, src1, bytes, rmsi_hip_device_get(&d) == 0 ? d.cus : 0, stream);
}
