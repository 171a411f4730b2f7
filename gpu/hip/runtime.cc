/*
 * Device facts, memory, synchronisation, probes and timing for the "hip"
 * table. Each runtime error is cleared (hipGetLastError) and reported as
 * RMSNORM_ERR_DEVICE; nothing here aborts.
 */
#include <hip/hip_runtime_api.h>
#include <string.h>

#include "gpu/hip/hip_internal.h"

#define RMSI_MAX_DEVICES 64

static rmsi_hip_device rmsi_dev_cache[RMSI_MAX_DEVICES];
static int rmsi_dev_ready[RMSI_MAX_DEVICES];

static rmsnorm_status rmsi_hip_err(hipError_t e)
{
    if (e == hipSuccess)
        return RMSNORM_OK;
    (void)hipGetLastError();
    return RMSNORM_ERR_DEVICE;
}

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

static thread_local void *rmsi_capture_stream = nullptr;

void *rmsi_hip_stream(void *stream)
{
    return stream ? stream : rmsi_capture_stream;
}

rmsnorm_status rmsi_hip_mem_alloc(size_t bytes, void **p)
{
    if (!p)
        return RMSNORM_ERR_NULL_POINTER;
    *p = nullptr;
    if (bytes == 0)
        return RMSNORM_ERR_BAD_SHAPE;
    return rmsi_hip_err(hipMalloc(p, bytes));
}

rmsnorm_status rmsi_hip_mem_free(void *p)
{
    return rmsi_hip_err(hipFree(p));
}

rmsnorm_status rmsi_hip_mem_copy(void *dst, const void *src, size_t bytes, rmsnorm_copy_dir dir, void *stream)
{
    hipMemcpyKind kind;
    switch (dir) {
    case RMSNORM_COPY_TO_BACKEND: kind = hipMemcpyHostToDevice; break;
    case RMSNORM_COPY_TO_HOST: kind = hipMemcpyDeviceToHost; break;
    case RMSNORM_COPY_WITHIN_BACKEND: kind = hipMemcpyDeviceToDevice; break;
    default: return RMSNORM_ERR_BAD_ARGUMENT;
    }
    if (bytes == 0)
        return RMSNORM_OK;
    if (!dst || !src)
        return RMSNORM_ERR_NULL_POINTER;
    /* NULL stream: the ABI promises a synchronous copy. */
    if (!stream)
        return rmsi_hip_err(hipMemcpy(dst, src, bytes, kind));
    return rmsi_hip_err(hipMemcpyAsync(dst, src, bytes, kind, (hipStream_t)stream));
}

rmsnorm_status rmsi_hip_synchronize(void *stream)
{
    if (!stream)
        return rmsi_hip_err(hipDeviceSynchronize());
    return rmsi_hip_err(hipStreamSynchronize((hipStream_t)stream));
}

rmsnorm_status rmsi_hip_probe(rmsnorm_probe kind, void *dst, const void *src0, const void *src1, size_t bytes,
                              void *stream)
{
    rmsi_hip_device d;
    int k, nt;
    switch (kind) {
    case RMSNORM_PROBE_COPY: k = 0; nt = 0; break;
    case RMSNORM_PROBE_WRITE: k = 1; nt = 0; break;
    case RMSNORM_PROBE_R2W1: k = 2; nt = 0; break;
    case RMSNORM_PROBE_COPY_NT: k = 0; nt = 1; break;
    case RMSNORM_PROBE_WRITE_NT: k = 1; nt = 1; break;
    case RMSNORM_PROBE_R2W1_NT: k = 2; nt = 1; break;
    default: return RMSNORM_ERR_BAD_ARGUMENT;
    }
    if (!dst || (k != 1 && !src0) || (k == 2 && !src1))
        return RMSNORM_ERR_NULL_POINTER;
    if (rmsi_hip_device_get(&d) != 0)
        return RMSNORM_ERR_DEVICE;
    if (rmsi_launch_probe(k, nt, dst, src0, src1, bytes, d.cus, rmsi_hip_stream(stream)) != 0)
        return rmsi_hip_err(hipErrorLaunchFailure);
    return RMSNORM_OK;
}

/* use_graph: the reps calls are captured into one hipGraph on a stream of ours
 * (or the caller's), replayed once to warm up, and one replay is timed;
 * without it, the calls are timed as issued. hipEvents bracket the work. */
rmsnorm_status rmsi_hip_time_region(rmsnorm_work_fn fn, void *ctx, int reps, int use_graph, void *stream,
                                    double *seconds)
{
    hipEvent_t e0 = nullptr, e1 = nullptr;
    hipStream_t s = (hipStream_t)stream;
    hipStream_t own = nullptr;
    hipGraph_t g = nullptr;
    hipGraphExec_t ge = nullptr;
    rmsnorm_status st = RMSNORM_OK;
    float ms = 0.0f;
    if (!fn || !seconds)
        return RMSNORM_ERR_NULL_POINTER;
    if (reps < 1)
        return RMSNORM_ERR_BAD_ARGUMENT;
    *seconds = 0.0;
    if (hipEventCreate(&e0) != hipSuccess || hipEventCreate(&e1) != hipSuccess) {
        st = RMSNORM_ERR_DEVICE;
        goto out;
    }
    if (!use_graph) {
        if (hipEventRecord(e0, s) != hipSuccess) {
            st = RMSNORM_ERR_DEVICE;
            goto out;
        }
        for (int i = 0; i < reps && st == RMSNORM_OK; i++)
            st = fn(ctx);
        if (st != RMSNORM_OK)
            goto out;
        if (hipEventRecord(e1, s) != hipSuccess || hipEventSynchronize(e1) != hipSuccess) {
            st = RMSNORM_ERR_DEVICE;
            goto out;
        }
    } else {
        if (!s) {
            if (hipStreamCreateWithFlags(&own, hipStreamNonBlocking) != hipSuccess) {
                st = RMSNORM_ERR_DEVICE;
                goto out;
            }
            s = own;
            rmsi_capture_stream = own;
        }
        if (hipStreamBeginCapture(s, hipStreamCaptureModeThreadLocal) != hipSuccess) {
            st = RMSNORM_ERR_DEVICE;
            goto out;
        }
        for (int i = 0; i < reps && st == RMSNORM_OK; i++)
            st = fn(ctx);
        if (hipStreamEndCapture(s, &g) != hipSuccess && st == RMSNORM_OK)
            st = RMSNORM_ERR_DEVICE;
        if (st != RMSNORM_OK)
            goto out;
        if (hipGraphInstantiate(&ge, g, nullptr, nullptr, 0) != hipSuccess || hipGraphLaunch(ge, s) != hipSuccess ||
            hipEventRecord(e0, s) != hipSuccess || hipGraphLaunch(ge, s) != hipSuccess ||
            hipEventRecord(e1, s) != hipSuccess || hipEventSynchronize(e1) != hipSuccess) {
            st = RMSNORM_ERR_DEVICE;
            goto out;
        }
    }
    if (hipEventElapsedTime(&ms, e0, e1) != hipSuccess)
        st = RMSNORM_ERR_DEVICE;
    else
        *seconds = (double)ms * 1e-3;
out:
    rmsi_capture_stream = nullptr;
    if (ge)
        (void)hipGraphExecDestroy(ge);
    if (g)
        (void)hipGraphDestroy(g);
    if (own) {
        (void)hipStreamSynchronize(own);
        (void)hipStreamDestroy(own);
    }
    if (e0)
        (void)hipEventDestroy(e0);
    if (e1)
        (void)hipEventDestroy(e1);
    (void)hipGetLastError();
    return st;
}
