/*
 * The vendor-neutral runtime half of a GPU backend table
 * (gpu/common/host_runtime.h), written once in CUDA's names and built into
 * each plugin: by nvcc for CUDA, by g++ through gpu/common/host_vendor.h's
 * renames for HIP.
 */
#include "gpu/common/host_runtime.h"

#include <stdio.h>

#include "gpu/common/host_vendor.h"
#include "gpu/common/kernel_args.h"

static rmsnorm_status rmsi_gpu_err(cudaError_t e)
{
    if (e == cudaSuccess)
        return RMSNORM_OK;
    (void)cudaGetLastError();
    return RMSNORM_ERR_DEVICE;
}

static thread_local void *rmsi_capture_stream = nullptr;

void *rmsi_gpu_stream(void *stream)
{
    return stream ? stream : rmsi_capture_stream;
}

rmsnorm_status rmsi_gpu_mem_alloc(size_t bytes, void **p)
{
    if (!p)
        return RMSNORM_ERR_NULL_POINTER;
    *p = nullptr;
    if (bytes == 0)
        return RMSNORM_ERR_BAD_SHAPE;
    return rmsi_gpu_err(cudaMalloc(p, bytes));
}

rmsnorm_status rmsi_gpu_mem_free(void *p)
{
    return rmsi_gpu_err(cudaFree(p));
}

rmsnorm_status rmsi_gpu_mem_copy(void *dst, const void *src, size_t bytes, rmsnorm_copy_dir dir,
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
        return rmsi_gpu_err(cudaMemcpy(dst, src, bytes, kind));
    return rmsi_gpu_err(cudaMemcpyAsync(dst, src, bytes, kind, (cudaStream_t)stream));
}

rmsnorm_status rmsi_gpu_synchronize(void *stream)
{
    if (!stream)
        return rmsi_gpu_err(cudaDeviceSynchronize());
    return rmsi_gpu_err(cudaStreamSynchronize((cudaStream_t)stream));
}

rmsnorm_status rmsi_gpu_probe(rmsnorm_probe kind, void *dst, const void *src0, const void *src1,
                              size_t bytes, int units, void *stream)
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
    if (units < 1)
        return RMSNORM_ERR_DEVICE;
    if (rmsi_launch_probe(k, nt, dst, src0, src1, bytes, units, rmsi_gpu_stream(stream)) != 0) {
        (void)cudaGetLastError();
        return RMSNORM_ERR_DEVICE;
    }
    return RMSNORM_OK;
}

/* Memory another context plausibly holds: our own costs about 0.5 GiB. */
#define RMSI_BUSY_BYTES (2ull << 30)

rmsnorm_status rmsi_gpu_device_busy(int *busy, char *why, size_t n,
                                    int (*smi)(int dev, int *busy, char *why, size_t n),
                                    const char *smi_name)
{
    size_t free_b = 0, total_b = 0;
    int dev = 0;
    char dummy[8];
    if (!busy)
        return RMSNORM_ERR_NULL_POINTER;
    if (!why || n == 0) {
        why = dummy;
        n = sizeof dummy;
    }
    *busy = 0;
    why[0] = '\0';
    if (cudaGetDevice(&dev) != cudaSuccess) {
        (void)cudaGetLastError();
        return RMSNORM_ERR_DEVICE;
    }
    if (smi(dev, busy, why, n) == 0)
        return RMSNORM_OK;
    if (cudaMemGetInfo(&free_b, &total_b) != cudaSuccess) {
        (void)cudaGetLastError();
        return RMSNORM_ERR_DEVICE;
    }
    *busy = total_b - free_b > RMSI_BUSY_BYTES;
    snprintf(why, n, "no %s; %.2f GiB of %.1f GiB in use", smi_name,
             (double)(total_b - free_b) / (double)(1ull << 30), (double)total_b / (double)(1ull << 30));
    return RMSNORM_OK;
}

/* use_graph: the reps calls are captured into one graph on a stream of ours
 * (or the caller's), the graph is replayed once to warm up, and one replay is
 * timed; without it, the calls are timed as issued. Events bracket the work. */
rmsnorm_status rmsi_gpu_time_region(rmsnorm_work_fn fn, void *ctx, int reps, int use_graph,
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
        if (rmsi_graph_instantiate(&ge, g) != cudaSuccess || cudaGraphLaunch(ge, s) != cudaSuccess ||
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
