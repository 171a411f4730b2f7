/*
 * The device facts of the "cuda" table (what the ladder and the kernels'
 * launches ask, cached per device) and its probe entry. Memory, copies,
 * synchronisation and timing are gpu/common/host_runtime.cc's. Nothing here
 * aborts: a failed query reads as 0.
 */
#include <cuda_runtime.h>
#include <stdlib.h>

#include "gpu/common/config_text.h"
#include "gpu/cuda/cuda_internal.h"

#define RMSI_MAX_DEVICES 64

static int rmsi_sm_cache[RMSI_MAX_DEVICES];
static int rmsi_smem_cache[RMSI_MAX_DEVICES];

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

/* A count from the environment (rmsi_parse_count's), read once; -2: unread,
 * -1: unset or malformed, ignored like a malformed RMSNORM_CUDA_CONFIG. A
 * benign race: every writer stores the same value. */
static int rmsi_env_count(int *cache, const char *name)
{
    if (__atomic_load_n(cache, __ATOMIC_RELAXED) == -2) {
        int v = -1;
        if (rmsi_parse_count(getenv(name), &v) != 0)
            v = -1;
        __atomic_store_n(cache, v, __ATOMIC_RELAXED);
    }
    return __atomic_load_n(cache, __ATOMIC_RELAXED);
}

/* The ladder's device, for tests: RMSNORM_CUDA_SMS=n launches as on a part of
 * the card with n SMs (a MIG slice has 16 to 66 of an H100's 132), so the
 * rules for many rows an SM, their grids and the backward's partial rows run
 * at the few rows a fuzzer can check against its fp64 oracle. Only fewer SMs
 * than the device has: CTAs never wait for each other, so a smaller grid is
 * still the whole call. The probes keep the device's count. */
int rmsi_cuda_ladder_sms(void)
{
    static int env = -2;
    const int sms = rmsi_cuda_sms();
    const int as = rmsi_env_count(&env, "RMSNORM_CUDA_SMS");
    return as > 0 && as < sms ? as : sms;
}

/* RMSNORM_CUDA_HBM_SM=g: the ladder takes another card's HBM rules (25 an
 * H100's, 37 an H200's, 0 the rules of a driver that reports none), so one
 * card's fuzz run covers the configs the other's ladder picks. */
int rmsi_cuda_ladder_hbm(void)
{
    static int env = -2;
    const int as = rmsi_env_count(&env, "RMSNORM_CUDA_HBM_SM");
    return as >= 0 ? as : rmsi_cuda_hbm_gbps_per_sm();
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

rmsnorm_status rmsi_cuda_probe(rmsnorm_probe kind, void *dst, const void *src0, const void *src1,
                               size_t bytes, void *stream)
{
    return rmsi_gpu_probe(kind, dst, src0, src1, bytes, rmsi_cuda_sms(), stream);
}
