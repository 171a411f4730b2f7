/*
 * hbm_sweep: how fast can this card move bytes, by access pattern?
 *
 * The forward targets of issue 5 ask a one-read-one-write kernel for 93% of
 * the best-of-three roofline, which on the H200 is the pure-write probe: about
 * 2% more than the copy probe reaches. Whether any one-read-one-write access
 * pattern gets there is a property of the card, not of RMSNorm, so this
 * program times copies of one buffer of the forward's size (512 MiB in, 512
 * MiB out: 32768x8192 bf16) in many forms, interleaved round by round with the
 * benchmark's own copy pattern (variant "probe"), and reports each one's
 * median GB/s and its median ratio to the probe of the same round:
 *
 *   ldst:   T threads, U 16-byte loads in flight a thread, then U stores; a
 *           grid covering the buffer (the probe is T=512, U=4), or a
 *           persistent grid (k CTAs an SM); loads plain or L2 evict-first,
 *           stores plain, streaming (st.global.cs) or L2 evict-first;
 *   bulk:   the Tensor Memory Accelerator's 1-D bulk copies (cp.async.bulk
 *           global -> shared -> global), S stages of B bytes a CTA, one
 *           thread driving them: no registers, no LSU traffic;
 *   phase:  a persistent grid whose CTAs all read, then all write, in step
 *           (session 48): the best copy moves 8% less than a pure read or a
 *           pure write (S24, S44), and a DRAM pays for every turn between
 *           reads and writes, so reads and writes kept apart in time might
 *           turn less. Steps by a grid barrier (an atomic counter) or by
 *           windows of %globaltimer (no barrier; W ns a window);
 *   memcpy: cudaMemcpyAsync device to device;
 *   read, write: the two halves alone (read folds into one word a CTA);
 *   2r1w:   dst = a + b, the fused add's and the backward's shape;
 *   mix:    the fused ops' streams at their byte ratios (k_mix): the fused
 *           add's 2 reads + 2 writes, add + block fp8's 2 + 2 and a
 *           half-size fp8 output, and the others.
 *
 * Built by `ninja cuda-check` (build/gpu/hbm-sweep; the bulk copies need
 * sm_90, and are left out below it). Run on a GPU:
 *   build/gpu/hbm-sweep [MiB per buffer, default 512] [rounds, default 7]
 */
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#define CK(x)                                                                               \
    do {                                                                                    \
        cudaError_t e_ = (x);                                                               \
        if (e_ != cudaSuccess) {                                                            \
            std::fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
            std::exit(1);                                                                   \
        }                                                                                   \
    } while (0)

enum { LD_PLAIN = 0, LD_FIRST = 1, LD_P256 = 2, LD_P128 = 3, LD_NC = 4 };
enum { ST_PLAIN = 0, ST_CS = 1, ST_FIRST = 2, ST_LAST = 3 };

__device__ __forceinline__ uint64_t pol_first()
{
    uint64_t p;
    asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(p));
    return p;
}

__device__ __forceinline__ uint64_t pol_last()
{
    uint64_t p;
    asm volatile("createpolicy.fractional.L2::evict_last.b64 %0, 1.0;" : "=l"(p));
    return p;
}

template <int LD> __device__ __forceinline__ uint4 ld16(const uint4 *p, uint64_t pol)
{
    uint4 v;
    if (LD == LD_FIRST)
        asm volatile("ld.global.L2::cache_hint.v4.u32 {%0,%1,%2,%3}, [%4], %5;"
                     : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
                     : "l"(p), "l"(pol));
    else if (LD == LD_P256) /* the L2 fetches the whole 256-byte block a miss falls in */
        asm volatile("ld.global.L2::256B.v4.u32 {%0,%1,%2,%3}, [%4];" : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(p));
    else if (LD == LD_P128)
        asm volatile("ld.global.L2::128B.v4.u32 {%0,%1,%2,%3}, [%4];" : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(p));
    else if (LD == LD_NC) /* the read-only path, no L1 line kept */
        asm volatile("ld.global.nc.L1::no_allocate.v4.u32 {%0,%1,%2,%3}, [%4];"
                     : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
                     : "l"(p));
    else
        asm volatile("ld.global.v4.u32 {%0,%1,%2,%3}, [%4];" : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(p));
    return v;
}

template <int ST> __device__ __forceinline__ void st16(uint4 *p, uint4 v, uint64_t pol)
{
    if (ST == ST_CS)
        asm volatile("st.global.cs.v4.u32 [%0], {%1,%2,%3,%4};" ::"l"(p), "r"(v.x), "r"(v.y), "r"(v.z), "r"(v.w)
                     : "memory");
    else if (ST == ST_FIRST || ST == ST_LAST)
        asm volatile("st.global.L2::cache_hint.v4.u32 [%0], {%1,%2,%3,%4}, %5;" ::"l"(p), "r"(v.x), "r"(v.y),
                     "r"(v.z), "r"(v.w), "l"(pol)
                     : "memory");
    else
        asm volatile("st.global.v4.u32 [%0], {%1,%2,%3,%4};" ::"l"(p), "r"(v.x), "r"(v.y), "r"(v.z), "r"(v.w)
                     : "memory");
}

/* Chunk c (T*U vectors) of a CTA is c * gridDim.x + blockIdx.x; n is a
 * multiple of the chunk (the buffer sizes here are). */
template <int T, int U, int LD, int ST>
__global__ void __launch_bounds__(T) k_ldst(uint4 *__restrict__ dst, const uint4 *__restrict__ src, int64_t n)
{
    const uint64_t pol = ST == ST_LAST ? pol_last() : pol_first();
    for (int64_t c = blockIdx.x; c * (T * U) < n; c += gridDim.x) {
        const int64_t i = c * (T * U) + threadIdx.x;
        uint4 v[U];
#pragma unroll
        for (int u = 0; u < U; u++)
            v[u] = ld16<LD>(src + i + u * T, pol);
#pragma unroll
        for (int u = 0; u < U; u++)
            st16<ST>(dst + i + u * T, v[u], pol);
    }
}

template <int T, int U> __global__ void __launch_bounds__(T) k_write(uint4 *__restrict__ dst, int64_t n)
{
    for (int64_t c = blockIdx.x; c * (T * U) < n; c += gridDim.x) {
        const int64_t i = c * (T * U) + threadIdx.x;
#pragma unroll
        for (int u = 0; u < U; u++)
            st16<ST_PLAIN>(dst + i + u * T, make_uint4((uint32_t)i, 1u, 2u, 3u), 0);
    }
}

template <int T, int U>
__global__ void __launch_bounds__(T) k_add(uint4 *__restrict__ dst, const uint4 *__restrict__ a,
                                           const uint4 *__restrict__ b, int64_t n)
{
    for (int64_t c = blockIdx.x; c * (T * U) < n; c += gridDim.x) {
        const int64_t i = c * (T * U) + threadIdx.x;
        uint4 v[U], w[U];
#pragma unroll
        for (int u = 0; u < U; u++) {
            v[u] = ld16<LD_PLAIN>(a + i + u * T, 0);
            w[u] = ld16<LD_PLAIN>(b + i + u * T, 0);
        }
#pragma unroll
        for (int u = 0; u < U; u++)
            st16<ST_PLAIN>(dst + i + u * T, make_uint4(v[u].x + w[u].x, v[u].y + w[u].y, v[u].z + w[u].z, v[u].w + w[u].w), 0);
    }
}

template <int T, int U>
__global__ void __launch_bounds__(T) k_read(uint32_t *__restrict__ sink, const uint4 *__restrict__ src, int64_t n)
{
    uint32_t acc = 0;
    for (int64_t c = blockIdx.x; c * (T * U) < n; c += gridDim.x) {
        const int64_t i = c * (T * U) + threadIdx.x;
        uint4 v[U];
#pragma unroll
        for (int u = 0; u < U; u++)
            v[u] = ld16<LD_PLAIN>(src + i + u * T, 0);
#pragma unroll
        for (int u = 0; u < U; u++)
            acc ^= v[u].x ^ v[u].y ^ v[u].z ^ v[u].w;
    }
    if (acc == 0x9e3779b9u) /* never in practice; keeps the loads */
        sink[blockIdx.x] = acc;
}

/* The fused ops' traffic at their byte ratios, without their arithmetic:
 * NR 16-byte inputs a vector index (x, and the residual), NW 16-byte outputs
 * (h, y) and, where Q, an 8-byte one (the fp8 codes of 8 16-bit elements).
 * Each output depends on every input, so no load is dead. */
template <int T, int NR, int NW, bool Q>
__global__ void __launch_bounds__(T) k_mix(uint4 *__restrict__ o0, uint4 *__restrict__ o1, uint2 *__restrict__ oq,
                                           const uint4 *__restrict__ a, const uint4 *__restrict__ b, int64_t n)
{
    for (int64_t i = (int64_t)blockIdx.x * T + threadIdx.x; i < n; i += (int64_t)gridDim.x * T) {
        uint4 v = ld16<LD_PLAIN>(a + i, 0);
        if (NR > 1) {
            const uint4 w = ld16<LD_PLAIN>(b + i, 0);
            v = make_uint4(v.x + w.x, v.y + w.y, v.z + w.z, v.w + w.w);
        }
        if (NW > 0)
            st16<ST_PLAIN>(o0 + i, v, 0);
        if (NW > 1)
            st16<ST_PLAIN>(o1 + i, make_uint4(v.x ^ 1u, v.y ^ 1u, v.z ^ 1u, v.w ^ 1u), 0);
        if (Q)
            oq[i] = make_uint2(v.x ^ v.y, v.z ^ v.w);
    }
}

/* Every CTA of the grid arrives, then waits for all (gridDim.x CTAs must be
 * resident together: main() sizes the grid by occupancy). The counter only
 * grows; each launch starts from its own base. */
__device__ __forceinline__ void grid_step(unsigned long long *ctr, unsigned long long target)
{
    __syncthreads();
    if (threadIdx.x == 0) {
        atomicAdd(ctr, 1ull);
        unsigned long long v;
        do
            asm volatile("ld.acquire.gpu.u64 %0, [%1];" : "=l"(v) : "l"(ctr) : "memory");
        while (v < target);
    }
    __syncthreads();
}

__device__ __forceinline__ void await_window(unsigned parity, uint32_t win)
{
    uint64_t t;
    do
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    while ((unsigned)((t / win) & 1) != parity);
}

/* MODE 0: free running (each CTA alternates on its own); 1: reads in even
 * windows of %globaltimer, writes in odd ones; 2: a grid step after the reads
 * have landed and another after the writes are issued. Every CTA runs the
 * same number of iterations so that the steps match. */
template <int T, int U, int MODE, int ST>
__global__ void __launch_bounds__(T) k_phase(uint4 *__restrict__ dst, const uint4 *__restrict__ src, int64_t n,
                                             unsigned long long *ctr, unsigned long long base, uint32_t win)
{
    const int64_t chunk = (int64_t)T * U, g = gridDim.x;
    const int64_t nch = (n + chunk - 1) / chunk, iters = (nch + g - 1) / g;
    const uint64_t pol = pol_first();
    unsigned long long step = base;
    for (int64_t it = 0; it < iters; it++) {
        const int64_t c = it * g + blockIdx.x;
        const int64_t i = c * chunk + threadIdx.x;
        uint4 v[U];
        if (MODE == 1)
            await_window(0, win);
        uint32_t acc = 0;
        if (c < nch) {
#pragma unroll
            for (int u = 0; u < U; u++)
                v[u] = ld16<LD_PLAIN>(src + i + u * T, 0);
#pragma unroll
            for (int u = 0; u < U; u++)
                acc |= v[u].x;
        }
        if (MODE == 2) {
            /* the OR's predicate makes every thread wait for its loads here */
            if (__syncthreads_or(acc == 0x9e3779b9u) && threadIdx.x == 0)
                ctr[1] = acc;
            grid_step(ctr, step += g);
        }
        if (MODE == 1)
            await_window(1, win);
        if (c < nch) {
#pragma unroll
            for (int u = 0; u < U; u++)
                st16<ST>(dst + i + u * T, v[u], pol);
        }
        if (MODE == 2)
            grid_step(ctr, step += g);
    }
}

__device__ __forceinline__ uint32_t smem_u32(const void *p) { return (uint32_t)__cvta_generic_to_shared(p); }

/* TMA 1-D bulk copy, S stages of B bytes; thread 0 drives, the rest idle. */
template <int S, int B>
__global__ void __launch_bounds__(32) k_bulk(char *__restrict__ dst, const char *__restrict__ src, int64_t bytes)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    extern __shared__ __align__(128) char sm[];
    __shared__ __align__(8) uint64_t bar[S];
    if (threadIdx.x != 0)
        return;
    const int64_t nch = bytes / B;
    const int64_t g = gridDim.x;
    const int64_t mine = nch > blockIdx.x ? (nch - blockIdx.x + g - 1) / g : 0;
    for (int s = 0; s < S; s++)
        asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(smem_u32(&bar[s])));
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    auto load = [&](int64_t k) {
        const int s = (int)(k % S);
        const char *gsrc = src + (blockIdx.x + k * g) * (int64_t)B;
        asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(smem_u32(&bar[s])), "r"(B)
                     : "memory");
        asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(
                         smem_u32(sm + (int64_t)s * B)),
                     "l"(gsrc), "r"(B), "r"(smem_u32(&bar[s]))
                     : "memory");
    };
    for (int64_t k = 0; k < S && k < mine; k++)
        load(k);
    for (int64_t k = 0; k < mine; k++) {
        const int s = (int)(k % S);
        const uint32_t par = (uint32_t)((k / S) & 1);
        uint32_t ok = 0;
        do {
            asm volatile("{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2; selp.u32 %0, 1, 0, p; }"
                         : "=r"(ok)
                         : "r"(smem_u32(&bar[s])), "r"(par)
                         : "memory");
        } while (!ok);
        char *gdst = dst + (blockIdx.x + k * g) * (int64_t)B;
        asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;" ::"l"(gdst),
                     "r"(smem_u32(sm + (int64_t)s * B)), "r"(B)
                     : "memory");
        asm volatile("cp.async.bulk.commit_group;" ::: "memory");
        if (k >= 1 && k - 1 + S < mine) {
            asm volatile("cp.async.bulk.wait_group.read 1;" ::: "memory");
            load(k - 1 + S);
        }
    }
    asm volatile("cp.async.bulk.wait_group 0;" ::: "memory");
#else
    (void)dst, (void)src, (void)bytes; /* sm_90+ only; main() skips it below */
#endif
}

int main(int argc, char **argv)
{
    const int64_t mib = argc > 1 ? std::atoll(argv[1]) : 512;
    const int rounds = argc > 2 ? std::atoi(argv[2]) : 7;
    const int reps = 10;
    const int64_t bytes = mib << 20;
    const int64_t n = bytes / 16;
    int sms = 0, dev = 0;
    CK(cudaGetDevice(&dev));
    CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
    cudaDeviceProp prop;
    CK(cudaGetDeviceProperties(&prop, dev));
    char *a = nullptr, *b = nullptr, *c2 = nullptr, *m1 = nullptr, *mq = nullptr;
    uint32_t *sink = nullptr;
    CK(cudaMalloc(&a, bytes));
    CK(cudaMalloc(&b, bytes));
    CK(cudaMalloc(&c2, bytes));
    CK(cudaMemset(c2, 3, bytes));
    CK(cudaMalloc(&m1, bytes));
    CK(cudaMalloc(&mq, bytes / 2));
    CK(cudaMalloc(&sink, 1 << 20));
    CK(cudaMemset(a, 1, bytes));
    CK(cudaMemset(b, 2, bytes));
    cudaStream_t st;
    CK(cudaStreamCreate(&st));
    const uint4 *src = (const uint4 *)a;
    uint4 *dst = (uint4 *)b;
    const uint4 *src2 = (const uint4 *)c2;

    struct V {
        std::string name;
        double traffic; /* bytes moved per call */
        std::function<void()> run;
    };
    std::vector<V> vs;
    auto grid_cover = [&](int chunk) { return (unsigned)((n + chunk - 1) / chunk); };
#define LDST(T, U, LD, ST, PERSIST)                                                                          \
    vs.push_back({std::string("ldst T=") + #T + " U=" + #U + " ld=" + #LD + " st=" + #ST +                    \
                      (PERSIST ? std::string(" persist=") + std::to_string(PERSIST) : std::string("")),      \
                  2.0 * bytes, [=]() {                                                                       \
                      unsigned gr = PERSIST ? (unsigned)(sms * PERSIST) : grid_cover(T * U);                 \
                      k_ldst<T, U, LD, ST><<<gr, T, 0, st>>>(dst, src, n);                                   \
                  }})
    LDST(512, 4, LD_PLAIN, ST_PLAIN, 0); /* the benchmark's copy probe: first, the reference */
    LDST(512, 4, LD_PLAIN, ST_CS, 0);
    LDST(512, 4, LD_PLAIN, ST_FIRST, 0);
    LDST(512, 4, LD_FIRST, ST_PLAIN, 0);
    LDST(512, 4, LD_FIRST, ST_FIRST, 0);
    LDST(256, 4, LD_PLAIN, ST_PLAIN, 0);
    LDST(1024, 4, LD_PLAIN, ST_PLAIN, 0);
    LDST(512, 1, LD_PLAIN, ST_PLAIN, 0);
    LDST(512, 2, LD_PLAIN, ST_PLAIN, 0);
    LDST(128, 1, LD_PLAIN, ST_PLAIN, 0);
    LDST(256, 1, LD_PLAIN, ST_PLAIN, 0);
    LDST(1024, 1, LD_PLAIN, ST_PLAIN, 0);
    LDST(64, 1, LD_PLAIN, ST_PLAIN, 0);
    LDST(128, 2, LD_PLAIN, ST_PLAIN, 0);
    LDST(256, 2, LD_PLAIN, ST_PLAIN, 0);
    LDST(512, 1, LD_FIRST, ST_FIRST, 0);
    LDST(512, 1, LD_PLAIN, ST_CS, 0);
    LDST(512, 8, LD_PLAIN, ST_PLAIN, 0);
    LDST(256, 8, LD_PLAIN, ST_PLAIN, 0);
    LDST(128, 8, LD_PLAIN, ST_PLAIN, 0);
    LDST(256, 16, LD_PLAIN, ST_PLAIN, 0);
    LDST(1024, 2, LD_PLAIN, ST_PLAIN, 0);
    LDST(512, 4, LD_PLAIN, ST_PLAIN, 4);
    LDST(256, 4, LD_PLAIN, ST_PLAIN, 8);
    LDST(1024, 4, LD_PLAIN, ST_PLAIN, 2);
    LDST(512, 8, LD_PLAIN, ST_PLAIN, 4);
    /* session 44: the L2's fetch-size hints, the read-only path, and stores
     * kept in the L2 (evict last) so that its write-backs come later */
    LDST(256, 1, LD_P256, ST_PLAIN, 0);
    LDST(256, 2, LD_P256, ST_PLAIN, 0);
    LDST(512, 4, LD_P256, ST_PLAIN, 0);
    LDST(256, 1, LD_P128, ST_PLAIN, 0);
    LDST(256, 1, LD_NC, ST_PLAIN, 0);
    LDST(512, 4, LD_NC, ST_PLAIN, 0);
    LDST(256, 1, LD_P256, ST_CS, 0);
    LDST(256, 1, LD_PLAIN, ST_LAST, 0);
#define BULK(S, B, PER)                                                                                       \
    if (prop.major >= 9)                                                                                      \
        vs.push_back({std::string("bulk S=") + #S + " B=" + #B + " ctas/sm=" + #PER, 2.0 * bytes, [=]() {       \
                      k_bulk<S, B><<<(unsigned)(sms * PER), 32, (size_t)S * B, st>>>(b, a, bytes);           \
                  }})
    BULK(4, 16384, 1);
    BULK(8, 16384, 1);
    BULK(6, 32768, 1);
    BULK(12, 16384, 1);
    BULK(16, 8192, 1);
    BULK(4, 16384, 2);
    BULK(8, 8192, 2);
    BULK(3, 32768, 2);
    BULK(8, 4096, 4);
    /* phased copies: a grid of as many CTAs as fit at once (the grid steps
     * need them all resident); a counter's base advances by the steps of
     * each launch */
#define PHASE(T, U, MODE, ST, WIN)                                                                           \
    do {                                                                                                     \
        unsigned long long *ctr = nullptr; /* one counter a variant, its own launch count */                \
        CK(cudaMalloc(&ctr, 16));                                                                            \
        CK(cudaMemset(ctr, 0, 16));                                                                          \
        auto launches = std::make_shared<unsigned long long>(0);                                             \
        int per = 0;                                                                                         \
        CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per, k_phase<T, U, MODE, ST>, T, 0));             \
        const unsigned gr = (unsigned)(sms * per);                                                           \
        if (gr == 0)                                                                                         \
            break;                                                                                           \
        const int64_t its = ((n + T * U - 1) / (T * U) + gr - 1) / gr;                                       \
        vs.push_back({std::string("phase T=") + #T + " U=" + #U + " mode=" + #MODE + " st=" + #ST +          \
                          " win=" + std::to_string(WIN) + " ctas/sm=" + std::to_string(per),                 \
                      2.0 * bytes, [=]() {                                                                   \
                          const unsigned long long base = *launches * 2ull * its * gr;                       \
                          if (MODE == 2)                                                                     \
                              ++*launches;                                                                   \
                          k_phase<T, U, MODE, ST><<<gr, T, 0, st>>>(dst, src, n, ctr, base, WIN);            \
                      }});                                                                                   \
    } while (0)
    PHASE(512, 8, 0, ST_PLAIN, 0);
    PHASE(512, 8, 2, ST_PLAIN, 0);
    PHASE(512, 8, 2, ST_FIRST, 0);
    PHASE(256, 16, 2, ST_PLAIN, 0);
    PHASE(512, 8, 1, ST_PLAIN, 2000);
    PHASE(512, 8, 1, ST_PLAIN, 4000);
    PHASE(512, 8, 1, ST_PLAIN, 8000);
    PHASE(512, 8, 1, ST_FIRST, 4000);
    PHASE(256, 16, 1, ST_PLAIN, 4000);
    PHASE(512, 4, 0, ST_PLAIN, 0);
    PHASE(512, 4, 2, ST_PLAIN, 0);
    PHASE(512, 4, 1, ST_PLAIN, 2000);
    vs.push_back({"cudaMemcpyAsync D2D", 2.0 * bytes,
                  [=]() { CK(cudaMemcpyAsync(b, a, bytes, cudaMemcpyDeviceToDevice, st)); }});
    vs.push_back({"write T=512 U=4", 1.0 * bytes,
                  [=]() { k_write<512, 4><<<grid_cover(2048), 512, 0, st>>>(dst, n); }});
    vs.push_back({"write T=256 U=1", 1.0 * bytes,
                  [=]() { k_write<256, 1><<<grid_cover(256), 256, 0, st>>>(dst, n); }});
    vs.push_back({"write T=128 U=1", 1.0 * bytes,
                  [=]() { k_write<128, 1><<<grid_cover(128), 128, 0, st>>>(dst, n); }});
    vs.push_back({"2r1w T=512 U=4", 3.0 * bytes,
                  [=]() { k_add<512, 4><<<grid_cover(2048), 512, 0, st>>>(dst, src, src2, n); }});
    vs.push_back({"2r1w T=256 U=1", 3.0 * bytes,
                  [=]() { k_add<256, 1><<<grid_cover(256), 256, 0, st>>>(dst, src, src2, n); }});
    vs.push_back({"2r1w T=512 U=1", 3.0 * bytes,
                  [=]() { k_add<512, 1><<<grid_cover(512), 512, 0, st>>>(dst, src, src2, n); }});
    vs.push_back({"write T=512 U=1", 1.0 * bytes,
                  [=]() { k_write<512, 1><<<grid_cover(512), 512, 0, st>>>(dst, n); }});
    vs.push_back({"read T=512 U=1", 1.0 * bytes,
                  [=]() { k_read<512, 1><<<grid_cover(512), 512, 0, st>>>(sink, src, n); }});
    vs.push_back({"read T=512 U=4", 1.0 * bytes,
                  [=]() { k_read<512, 4><<<grid_cover(2048), 512, 0, st>>>(sink, src, n); }});
    vs.push_back({"read T=512 U=8", 1.0 * bytes,
                  [=]() { k_read<512, 8><<<grid_cover(4096), 512, 0, st>>>(sink, src, n); }});

    /* the fused ops' byte mixes (k_mix), one 16-byte vector a thread; the
     * name gives reads / writes and q for the half-size fp8 output */
    uint4 *o1 = (uint4 *)m1;
    uint2 *oq = (uint2 *)mq;
#define MIX(T, NR, NW, Q, WHAT)                                                                              \
    vs.push_back({std::string("mix ") + #NR + "r" + #NW + "w" + (Q ? "+q" : "") + " T=" + #T + " (" + WHAT + ")", \
                  (NR + NW + (Q ? 0.5 : 0.0)) * bytes, [=]() {                                               \
                      k_mix<T, NR, NW, Q><<<grid_cover(T), T, 0, st>>>(dst, o1, oq, src, src2, n);          \
                  }})
    MIX(256, 1, 1, false, "copy");
    MIX(256, 2, 2, false, "fused add");
    MIX(512, 2, 2, false, "fused add");
    MIX(256, 2, 2, true, "add + block fp8, y");
    MIX(512, 2, 2, true, "add + block fp8, y");
    MIX(256, 2, 1, true, "add + block fp8, no y");
    MIX(256, 1, 1, true, "block fp8, y");
    MIX(256, 1, 0, true, "block fp8, no y");

    /* the bulk kernels' dynamic shared memory above the 48 KB default */
#define BULK_ATTR(S, B) \
    if (prop.major >= 9) \
    CK(cudaFuncSetAttribute(k_bulk<S, B>, cudaFuncAttributeMaxDynamicSharedMemorySize, S * B))
    BULK_ATTR(4, 16384);
    BULK_ATTR(8, 16384);
    BULK_ATTR(6, 32768);
    BULK_ATTR(12, 16384);
    BULK_ATTR(16, 8192);
    BULK_ATTR(8, 8192);
    BULK_ATTR(3, 32768);
    BULK_ATTR(8, 4096);

    /* correctness of every copy variant once: dst must equal src afterwards */
    std::vector<uint32_t> ha(1 << 16), hb(1 << 16);
    for (size_t v = 0; v < vs.size(); v++) {
        if (vs[v].name.rfind("ldst", 0) != 0 && vs[v].name.rfind("bulk", 0) != 0 &&
            vs[v].name.rfind("phase", 0) != 0 && vs[v].name.rfind("cuda", 0) != 0)
            continue;
        CK(cudaMemsetAsync(b, 0, bytes, st));
        CK(cudaMemsetAsync(a, (int)(v * 7 + 3), 1 << 18, st)); /* a changing head */
        vs[v].run();
        CK(cudaGetLastError());
        CK(cudaStreamSynchronize(st));
        int bad = 0;
        for (int64_t off : {(int64_t)0, bytes / 2 - (1 << 17), bytes - (1 << 18)}) {
            CK(cudaMemcpy(ha.data(), a + off, 1 << 18, cudaMemcpyDeviceToHost));
            CK(cudaMemcpy(hb.data(), b + off, 1 << 18, cudaMemcpyDeviceToHost));
            bad |= ha != hb;
        }
        if (bad) {
            std::printf("MISMATCH %s\n", vs[v].name.c_str());
            return 1;
        }
    }

    cudaEvent_t e0, e1;
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    std::vector<std::vector<double>> gbs(vs.size()), ratio(vs.size());
    for (int r = 0; r < rounds; r++) {
        double ref = 0;
        for (size_t v = 0; v < vs.size(); v++) {
            vs[v].run(); /* warm */
            CK(cudaEventRecord(e0, st));
            for (int k = 0; k < reps; k++)
                vs[v].run();
            CK(cudaEventRecord(e1, st));
            CK(cudaEventSynchronize(e1));
            float ms = 0;
            CK(cudaEventElapsedTime(&ms, e0, e1));
            const double g = vs[v].traffic * reps / (ms * 1e-3) / 1e9;
            if (v == 0)
                ref = g;
            gbs[v].push_back(g);
            ratio[v].push_back(g / ref);
        }
    }
    auto med = [](std::vector<double> x) {
        std::sort(x.begin(), x.end());
        return x[x.size() / 2];
    };
    std::printf("# %s, %d SMs, %lld MiB a buffer, %d rounds x %d calls, GB/s = bytes moved / time\n", prop.name,
                sms, (long long)mib, rounds, reps);
    std::printf("%-44s %10s %10s %10s %8s\n", "variant", "median", "min", "max", "vs probe");
    for (size_t v = 0; v < vs.size(); v++) {
        auto s = gbs[v];
        std::sort(s.begin(), s.end());
        std::printf("%-44s %10.1f %10.1f %10.1f %8.4f\n", vs[v].name.c_str(), med(gbs[v]), s.front(), s.back(),
                    med(ratio[v]));
    }
    return 0;
}
