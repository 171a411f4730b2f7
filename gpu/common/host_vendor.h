/*
 * The host side's vendor header: the runtime API that gpu/common/'s host
 * files use, under CUDA's names. The CUDA plugin's build includes
 * <cuda_runtime.h>; the HIP plugin's (g++ with __HIP_PLATFORM_AMD__, against
 * Debian's HIP 5.2 headers or ROCm's) includes HIP's and renames, as
 * gpu/common/vendor.h does for the kernels. Only what the shared files call
 * is here: a name missing on one side is a compile error, not a guess.
 */
#ifndef RMSNORM_GPU_HOST_VENDOR_H
#define RMSNORM_GPU_HOST_VENDOR_H

#if defined(__HIP_PLATFORM_AMD__)
#include <hip/hip_runtime_api.h>

#define cudaDeviceSynchronize hipDeviceSynchronize
#define cudaError_t hipError_t
#define cudaEventCreate hipEventCreate
#define cudaEventDestroy hipEventDestroy
#define cudaEventElapsedTime hipEventElapsedTime
#define cudaEventRecord hipEventRecord
#define cudaEventSynchronize hipEventSynchronize
#define cudaEvent_t hipEvent_t
#define cudaFree hipFree
#define cudaGetDevice hipGetDevice
#define cudaGetLastError hipGetLastError
#define cudaGraphDestroy hipGraphDestroy
#define cudaGraphExecDestroy hipGraphExecDestroy
#define cudaGraphExec_t hipGraphExec_t
#define cudaGraphLaunch hipGraphLaunch
#define cudaGraph_t hipGraph_t
#define cudaMalloc hipMalloc
#define cudaMemGetInfo hipMemGetInfo
#define cudaMemcpy hipMemcpy
#define cudaMemcpyAsync hipMemcpyAsync
#define cudaMemcpyDeviceToDevice hipMemcpyDeviceToDevice
#define cudaMemcpyDeviceToHost hipMemcpyDeviceToHost
#define cudaMemcpyHostToDevice hipMemcpyHostToDevice
#define cudaMemcpyKind hipMemcpyKind
#define cudaStreamBeginCapture hipStreamBeginCapture
#define cudaStreamCaptureModeThreadLocal hipStreamCaptureModeThreadLocal
#define cudaStreamCreateWithFlags hipStreamCreateWithFlags
#define cudaStreamDestroy hipStreamDestroy
#define cudaStreamEndCapture hipStreamEndCapture
#define cudaStreamNonBlocking hipStreamNonBlocking
#define cudaStreamSynchronize hipStreamSynchronize
#define cudaStream_t hipStream_t
#define cudaSuccess hipSuccess

/* HIP keeps CUDA 11's five-argument form (no error node, no log). */
static inline hipError_t rmsi_graph_instantiate(hipGraphExec_t *ge, hipGraph_t g)
{
    return hipGraphInstantiate(ge, g, nullptr, nullptr, 0);
}
#else
#include <cuda_runtime.h>

static inline cudaError_t rmsi_graph_instantiate(cudaGraphExec_t *ge, cudaGraph_t g)
{
    return cudaGraphInstantiate(ge, g, 0);
}
#endif

#endif /* RMSNORM_GPU_HOST_VENDOR_H */
