/*
 * Memory, synchronisation, probes and timing for the "cuda" table. Each
 * runtime error is cleared (cudaGetLastError) and reported as
 * RMSNORM_ERR_DEVICE; nothing here aborts.
 */
#include <cuda_runtime.h>
#include <stdlib.h>

#include "gpu/cuda/cuda_internal.h"

#define RMSI_MAX_DEVICES 64

static int rmsi_sm_cache[RMSI_MAX_DEVICES];
static int rmsi_smem_cache[RMSI_MAX_DEVICES];

static rmsnorm_status rmsi_cuda_err(cudaError_t e)
{
    if (e == cudaSuccess)
        return RMSNORM_OK;
    (void)cudaGetLastError();
    return RMSNORM_ERR_DEVICE;
}

/* A value of the current device, get(dev, arg), cached per device (0 on
 * error, and not cached). */
static int rmsi_cuda_cached(int *cache, int (*get)(int dev, int arg), int arg)
{
    int dev = 0;
    if (cudaGetDevice(&dev) != cudaSuccess) {
        (void)cudaGetLastError();
        return 0;
    }
    /* A benign race: every writer stores the same value for a device. */
    if (dev >= 0 && dev < RMSI_MAX_DEVICES && __atomic_load_n(&cache[dev], __ATOMIC_RELAXED) > 0)
        return __atomic_load_n(&cache[dev], __ATOMIC_RELAXED);
    const int v = get(dev, arg);
    if (v > 0 && dev >= 0 && dev < RMSI_MAX_DEVICES)
        __atomic_store_n(&cache[dev], v, __ATOMIC_RELAXED);
    return v;
}

static int rmsi_attr_of(int dev, int attr)
{
    int v = 0;
    if (cudaDeviceGetAttribute(&v, (cudaDeviceAttr)attr, dev) != cudaSuccess) {
        (void)cudaGetLastError();
        return 0;
    }
    return v;
}

/* A device attribute of the current device, cached per device (0 on error). */
static int rmsi_cuda_attr(int *cache, cudaDeviceAttr attr)
{
    return rmsi_cuda_cached(cache, rmsi_attr_of, (int)attr);
}

int rmsi_cuda_sms(void)
{
    return rmsi_cuda_attr(rmsi_sm_cache, cudaDevAttrMultiProcessorCount);
}

int rmsi_cuda_smem_optin(void)
{
    return rmsi_cuda_attr(rmsi_smem_cache, cudaDevAttrMaxSharedMemoryPerBlockOptin);
}

static int rmsi_smem_sm_cache[RMSI_MAX_DEVICES];

int rmsi_cuda_smem_sm(void)
{
    return rmsi_cuda_attr(rmsi_smem_sm_cache, cudaDevAttrMaxSharedMemoryPerMultiprocessor);
}

static int rmsi_cc_cache[RMSI_MAX_DEVICES];

int rmsi_cuda_cluster(void)
{
    return rmsi_cuda_attr(rmsi_cc_cache, cudaDevAttrComputeCapabilityMajor) >= 9;
}

static int rmsi_l2_cache[RMSI_MAX_DEVICES];
static int rmsi_hbm_cache[RMSI_MAX_DEVICES];

/* peak: two transfers a memory clock (kHz) over the bus (bits), over the SMs */
static int rmsi_hbm_of(int dev, int unused)
{
    (void)unused;
    const int64_t khz = rmsi_attr_of(dev, cudaDevAttrMemoryClockRate);
    const int64_t bits = rmsi_attr_of(dev, cudaDevAttrGlobalMemoryBusWidth);
    const int64_t sms = rmsi_attr_of(dev, cudaDevAttrMultiProcessorCount);
    if (khz <= 0 || bits <= 0 || sms <= 0)
        return 0;
    return (int)(2 * khz * (bits / 8) / 1000000 / sms);
}

/* Every forward and backward call asks (the ladder's shape): the figure is
 * cached, not the three attributes it comes from. */
int rmsi_cuda_hbm_gbps_per_sm(void)
{
    return rmsi_cuda_cached(rmsi_hbm_cache, rmsi_hbm_of, 0);
}

int rmsi_cuda_l2_bytes(void)
{
    return rmsi_cuda_attr(rmsi_l2_cache, cudaDevAttrL2CacheSize);
}

/* An environment switch read once: 0 when NAME is "0", else 1. A benign race:
 * every writer stores the same value. */
static int rmsi_env_on(int *cache, const char *name)
{
    if (__atomic_load_n(cache, __ATOMIC_RELAXED) < 0) {
        const char *e = getenv(name);
        __atomic_store_n(cache, e && e[0] == '0' && e[1] == 0 ? 0 : 1, __ATOMIC_RELAXED);
    }
    return __atomic_load_n(cache, __ATOMIC_RELAXED);
}

/* For A/B measurement: the discard needs sm_80 (discard.global.L2), the
 * oldest target the plugin is built for. */
int rmsi_cuda_l2_discard(void)
{
    static int env = -1;
    return rmsi_env_on(&env, "RMSNORM_CUDA_L2_DISCARD");
}

/* Programmatic dependent launch needs compute capability 9.0; the switch is
 * for A/B measurement and for tools that do not follow PDL edges. */
int rmsi_cuda_pdl(void)
{
    static int env = -1;
    return rmsi_env_on(&env, "RMSNORM_CUDA_PDL") && rmsi_cuda_attr(rmsi_cc_cache, cudaDevAttrComputeCapabilityMajor) >= 9;
}

static thread_local void *rmsi_capture_stream = nullptr;

void *rmsi_cuda_stream(void *stream)
{
    return stream ? stream : rmsi_capture_stream;
}

rmsnorm_status rmsi_cuda_mem_alloc(size_t bytes, void **p)
{
    if (!p)
        return RMSNORM_ERR_NULL_POINTER;
    *p = nullptr;
    if (bytes == 0)
        return RMSNORM_ERR_BAD_SHAPE;
    return rmsi_cuda_err(cudaMalloc(p, bytes));
}

rmsnorm_status rmsi_cuda_mem_free(void *p)
{
    return rmsi_cuda_err(cudaFree(p));
}

rmsnorm_status rmsi_cuda_mem_copy(void *dst, const void *src, size_t bytes, rmsnorm_copy_dir dir,
                                  void *stream)
{
    cudaMemcpyKind kind;
    switch (dir) {
    case RMSNORM_COPY_TO_BACKEND: kind = cudaMemcpyHostToDevice; break;
    case RMSNORM_COPY_TO_HOST: kind = cudaMemcpyDeviceToHost; break;
    case RMSNORM_COPY_WITHIN_BACKEND: kind = cudaMemcpyDeviceToDevice; break;
    default: return RMSNORM_ERR_BAD_ARGUMENT;
    }
    if (bytes == 0)
        return RMSNORM_OK;
    if (!dst || !src)
        return RMSNORM_ERR_NULL_POINTER;
    /* NULL stream: the ABI promises a synchronous copy. */
    if (!stream)
        return rmsi_cuda_err(cudaMemcpy(dst, src, bytes, kind));
    return rmsi_cuda_err(cudaMemcpyAsync(dst, src, bytes, kind, (cudaStream_t)stream));
}

rmsnorm_status rmsi_cuda_synchronize(void *stream)
{
    if (!stream)
        return rmsi_cuda_err(cudaDeviceSynchronize());
    return rmsi_cuda_err(cudaStreamSynchronize((cudaStream_t)stream));
}

rmsnorm_status rmsi_cuda_probe(rmsnorm_probe kind, void *dst, const void *src0, const void *src1,
                               size_t bytes, void *stream)
{
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
    if (rmsi_launch_probe(k, nt, dst, src0, src1, bytes, rmsi_cuda_sms(), rmsi_cuda_stream(stream)) != 0)
        return RMSNORM_ERR_DEVICE;
    return RMSNORM_OK;
}

/* use_graph: the reps calls are captured into one graph on a stream of ours
 * (or the caller's), the graph is replayed once to warm up, and one replay is
 * timed; without it, the calls are timed as issued. */
rmsnorm_status rmsi_cuda_time_region(rmsnorm_work_fn fn, void *ctx, int reps, int use_graph,
                                     void *stream, double *seconds)
{
    cudaEvent_t e0 = nullptr, e1 = nullptr;
    cudaStream_t s = (cudaStream_t)stream;
    cudaStream_t own = nullptr;
    cudaGraph_t g = nullptr;
    cudaGraphExec_t ge = nullptr;
    rmsnorm_status st = RMSNORM_OK;
    float ms = 0.0f;
    if (!fn || !seconds)
        return RMSNORM_ERR_NULL_POINTER;
    if (reps < 1)
        return RMSNORM_ERR_BAD_ARGUMENT;
    *seconds = 0.0;
    if (cudaEventCreate(&e0) != cudaSuccess || cudaEventCreate(&e1) != cudaSuccess) {
        st = RMSNORM_ERR_DEVICE;
        goto out;
    }
    if (!use_graph) {
        if (cudaEventRecord(e0, s) != cudaSuccess) {
            st = RMSNORM_ERR_DEVICE;
            goto out;
        }
        for (int i = 0; i < reps && st == RMSNORM_OK; i++)
            st = fn(ctx);
        if (st != RMSNORM_OK)
            goto out;
        if (cudaEventRecord(e1, s) != cudaSuccess || cudaEventSynchronize(e1) != cudaSuccess) {
            st = RMSNORM_ERR_DEVICE;
            goto out;
        }
    } else {
        if (!s) {
            if (cudaStreamCreateWithFlags(&own, cudaStreamNonBlocking) != cudaSuccess) {
                st = RMSNORM_ERR_DEVICE;
                goto out;
            }
            s = own;
            rmsi_capture_stream = own;
        }
        if (cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal) != cudaSuccess) {
            st = RMSNORM_ERR_DEVICE;
            goto out;
        }
        for (int i = 0; i < reps && st == RMSNORM_OK; i++)
            st = fn(ctx);
        if (cudaStreamEndCapture(s, &g) != cudaSuccess && st == RMSNORM_OK)
            st = RMSNORM_ERR_DEVICE;
        if (st != RMSNORM_OK)
            goto out;
        if (cudaGraphInstantiate(&ge, g, 0) != cudaSuccess || cudaGraphLaunch(ge, s) != cudaSuccess ||
            cudaEventRecord(e0, s) != cudaSuccess || cudaGraphLaunch(ge, s) != cudaSuccess ||
            cudaEventRecord(e1, s) != cudaSuccess || cudaEventSynchronize(e1) != cudaSuccess) {
            st = RMSNORM_ERR_DEVICE;
            goto out;
        }
    }
    if (cudaEventElapsedTime(&ms, e0, e1) != cudaSuccess)
        st = RMSNORM_ERR_DEVICE;
    else
        *seconds = (double)ms * 1e-3;
out:
    rmsi_capture_stream = nullptr;
    if (ge)
        (void)cudaGraphExecDestroy(ge);
    if (g)
        (void)cudaGraphDestroy(g);
    if (own) {
        (void)cudaStreamSynchronize(own);
        (void)cudaStreamDestroy(own);
    }
    if (e0)
        (void)cudaEventDestroy(e0);
    if (e1)
        (void)cudaEventDestroy(e1);
    (void)cudaGetLastError();
    return st;
}
