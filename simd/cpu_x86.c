/*
 * Runtime detection of AVX-512 and the avx512 backend's table. Built with the
 * baseline ISA (no AVX-512 flags): this file runs on every x86-64 CPU and
 * hands out the table only when the kernels can run.
 *
 * Two checks, both needed: CPUID says the CPU implements AVX512F/BW/VL/DQ,
 * and XGETBV(0) says the OS saves the state they use (XCR0 bits 1, 2: SSE and
 * AVX; 5, 6, 7: opmask, upper halves of zmm0-15, zmm16-31). A CPU with the
 * features but an OS (or hypervisor) without the state would fault on the
 * first zmm instruction.
 *
 * Optional extensions, detected separately:
 *  - AVX512-BF16 (CPUID.(7,1):EAX[5]): VCVTNEPS2BF16 for bf16 stores, with the
 *    integer RNE path when absent (and for vectors with fp32 subnormals, which
 *    the instruction flushes). RMSNORM_AVX512_BF16=0 forces the integer path so
 *    that it can be tested on a CPU that has the extension.
 *  - The backward's far prefetch (simd/bwd_rows.h rmsi_bwd_pf_step): on by
 *    default on AMD CPU family 26 (Zen 5) and later, the only cores where it
 *    was measured to pay (docs/perf/cpu.md, session 65; the Xeon VM lost
 *    7-15% with it in session 63). RMSNORM_AVX512_BWD_FAR_PF=0 or 1 forces
 *    it off or on. A prefetch changes no result.
 *  - F16C / AVX512-FP16: not needed. AVX512F itself has the zmm forms of
 *    VCVTPH2PS / VCVTPS2PH, whose RNE rounding (imm 0) and NaN rule equal
 *    ref/formats.h bit for bit; AVX512-FP16's arithmetic is not used because
 *    the contract computes in fp32.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "simd/simd.h"

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#define RMSI_HAVE_X86 1
#else
#define RMSI_HAVE_X86 0
#endif

int rmsi_avx512_has_bf16 = 0;
int rmsi_avx512_bwd_far_pf = 0;

#define RMSI_AVX512_CAPS                                                                         \
    (RMSNORM_CAP_F32 | RMSNORM_CAP_F16 | RMSNORM_CAP_BF16 | RMSNORM_CAP_FORWARD |                \
     RMSNORM_CAP_BACKWARD | RMSNORM_CAP_RESIDUAL | RMSNORM_CAP_QUANT_PER_TENSOR |                \
     RMSNORM_CAP_QUANT_PER_TOKEN | RMSNORM_CAP_QUANT_PER_BLOCK | RMSNORM_CAP_FP8_E4M3 |           \
     RMSNORM_CAP_FP8_E5M2 | RMSNORM_CAP_FP8_E4M3FNUZ)

static const rmsnorm_backend avx512_table = {
    .struct_size = sizeof(rmsnorm_backend),
    .abi_major = RMSNORM_BACKEND_ABI_MAJOR,
    .abi_minor = RMSNORM_BACKEND_ABI_MINOR,
    .name = "avx512",
    .caps = RMSI_AVX512_CAPS,
    .is_device = 0,
    .priority = 10, /* above ref (0), below the GPU plugins */
    .reserved0 = 0,
    .forward = rmsi_avx512_forward,
    .backward = rmsi_avx512_backward,
    .backward_workspace_size = rmsi_avx512_backward_workspace_size,
    .mem_alloc = rmsi_host_mem_alloc,
    .mem_free = rmsi_host_mem_free,
    .mem_copy = rmsi_host_mem_copy,
    .synchronize = rmsi_host_synchronize,
    .probe = rmsi_avx512_probe,
    .time_region = rmsi_host_time_region,
    .describe = rmsi_host_describe,
    .device_busy = NULL,
    .config_set = NULL,
    .config_describe = NULL,
    .config_enumerate = NULL,
};

#if RMSI_HAVE_X86
static uint64_t xgetbv0(void)
{
    uint32_t lo, hi;
    __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0u));
    return ((uint64_t)hi << 32) | lo;
}

/* 1: AVX512F+BW+VL+DQ with the OS state enabled. *bf16: AVX512-BF16 too. */
static int detect(int *bf16)
{
    unsigned a, b, c, d;
    const uint64_t xcr0_need = (1u << 1) | (1u << 2) | (1u << 5) | (1u << 6) | (1u << 7);
    const unsigned ebx_need = (1u << 16) | (1u << 17) | (1u << 30) | (1u << 31); /* F DQ BW VL */

    *bf16 = 0;
    if ((unsigned)__get_cpuid_max(0, NULL) < 7u) /* int in clang, unsigned in gcc */
        return 0;
    if (!__get_cpuid(1, &a, &b, &c, &d))
        return 0;
    if ((c & (1u << 27)) == 0u) /* OSXSAVE: XGETBV is usable */
        return 0;
    if ((xgetbv0() & xcr0_need) != xcr0_need)
        return 0;
    __cpuid_count(7, 0, a, b, c, d);
    if ((b & ebx_need) != ebx_need)
        return 0;
    const unsigned max_sub = a;
    if (max_sub >= 1u) {
        __cpuid_count(7, 1, a, b, c, d);
        *bf16 = (a & (1u << 5)) != 0u;
    }
    return 1;
}

/* 1 on AMD family 26 (Zen 5) and later: CPUID.0's vendor, CPUID.1:EAX's
 * family (the base, plus the extended one when the base is 0xF). */
static int far_pf_default(void)
{
    unsigned a, b, c, d;

    if (!__get_cpuid(0, &a, &b, &c, &d))
        return 0;
    /* "AuthenticAMD" in EBX, EDX, ECX */
    if (b != 0x68747541u || d != 0x69746e65u || c != 0x444d4163u)
        return 0;
    if (!__get_cpuid(1, &a, &b, &c, &d))
        return 0;
    unsigned fam = (a >> 8) & 0xfu;
    if (fam == 0xfu)
        fam += (a >> 20) & 0xffu;
    return fam >= 0x1au;
}
#else
static int detect(int *bf16)
{
    *bf16 = 0;
    return 0;
}

static int far_pf_default(void)
{
    return 0;
}
#endif

static int avx512_ok = 0;
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void init(void)
{
    int bf16 = 0;
    const char *v = getenv("RMSNORM_AVX512_BF16");
    const char *f = getenv("RMSNORM_AVX512_BWD_FAR_PF");

    avx512_ok = detect(&bf16);
    if (v != NULL && strcmp(v, "0") == 0)
        bf16 = 0;
    rmsi_avx512_has_bf16 = bf16;
    if (f != NULL && (strcmp(f, "0") == 0 || strcmp(f, "1") == 0))
        rmsi_avx512_bwd_far_pf = f[0] == '1';
    else
        rmsi_avx512_bwd_far_pf = avx512_ok && far_pf_default();
}

const rmsnorm_backend *rmsi_avx512_backend(void)
{
    if (pthread_once(&once, init) != 0)
        return NULL;
    return avx512_ok ? &avx512_table : NULL;
}
