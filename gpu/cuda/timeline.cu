/*
 * rmsnorm-timeline: where one backward call's time goes, CTA by CTA.
 *
 *   ninja cuda-timeline        # build/timeline/librmsnorm_cuda.so + build/gpu/rmsnorm-timeline
 *   RMSNORM_PLUGIN_PATH=build/timeline build/gpu/rmsnorm-timeline 4096 4096 [bf16|f16|f32] [--raw]
 *
 * Replays a CUDA graph of 20 backward calls (dx, dw, saved rstd) rotating
 * over 4 sets of buffers, as rmsnorm-bench --graph does, then reads the
 * stamps the diagnostic plugin's kernels wrote during the last call
 * (gpu/common/timeline.h) and prints, for each stamp, its spread over the
 * CTAs in ns from the first CTA's entry. The per-call time is the best of
 * five replays; the stamps add about 1 us to it, so compare stamps, not
 * times, with rmsnorm-bench.
 */
#include <dlfcn.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include "rmsnorm.h"
#include "gpu/common/timeline.h"

#define CK(x)                                                                                  \
    do {                                                                                       \
        cudaError_t e_ = (x);                                                                  \
        if (e_ != cudaSuccess) {                                                               \
            fprintf(stderr, "rmsnorm-timeline: %s: %s\n", #x, cudaGetErrorString(e_));          \
            exit(1);                                                                           \
        }                                                                                      \
    } while (0)

/* Deterministic values in [-1, 1): a hash of the index, stored as the dtype. */
__global__ void fill(void *p, size_t n, int esz, unsigned seed)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
        unsigned h = (unsigned)i * 2654435761u ^ seed;
        h ^= h >> 13;
        h *= 0x5bd1e995u;
        h ^= h >> 15;
        const float f = (float)(h & 0xffffu) / 32768.0f - 1.0f;
        if (esz == 4)
            static_cast<float *>(p)[i] = f;
        else if (esz == 2 && seed & 1u)
            static_cast<unsigned short *>(p)[i] = __half_as_ushort(__float2half_rn(f));
        else
            static_cast<unsigned short *>(p)[i] = (unsigned short)(__float_as_uint(f) >> 16);
    }
}

static void spread(const char *what, std::vector<long long> v)
{
    if (v.empty())
        return;
    std::sort(v.begin(), v.end());
    const size_t n = v.size();
    printf("  %-26s min %7lld  p10 %7lld  p50 %7lld  p90 %7lld  max %7lld\n", what, v[0], v[n / 10], v[n / 2],
           v[n * 9 / 10], v[n - 1]);
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: RMSNORM_PLUGIN_PATH=build/timeline %s ROWS COLS [bf16|f16|f32] [--raw]\n", argv[0]);
        return 2;
    }
    const int64_t R = atoll(argv[1]), C = atoll(argv[2]);
    const std::string dt = argc > 3 && argv[3][0] != '-' ? argv[3] : "bf16";
    const bool raw = argc > 3 && !strcmp(argv[argc - 1], "--raw");
    const rmsnorm_dtype T = dt == "f32" ? RMSNORM_F32 : dt == "f16" ? RMSNORM_F16 : RMSNORM_BF16;
    const int esz = T == RMSNORM_F32 ? 4 : 2;
    const unsigned f16 = T == RMSNORM_F16 ? 1u : 0u;
    const char *dir = getenv("RMSNORM_PLUGIN_PATH");
    const rmsnorm_backend *be = rmsnorm_backend_find("cuda");
    if (R < 1 || C < 1 || !dir || !be) {
        fprintf(stderr, "rmsnorm-timeline: need ROWS, COLS >= 1, RMSNORM_PLUGIN_PATH and a cuda backend\n");
        return 1;
    }
    const std::string plugin = std::string(dir) + "/librmsnorm_cuda.so";
    void *h = dlopen(plugin.c_str(), RTLD_NOW | RTLD_NOLOAD);
    typedef int (*dump_fn)(unsigned long long *, unsigned long long *);
    dump_fn dump = h ? reinterpret_cast<dump_fn>(dlsym(h, "rmsi_timeline_dump")) : nullptr;
    if (!dump) {
        fprintf(stderr, "rmsnorm-timeline: %s is not loaded or not a timeline build (ninja cuda-timeline)\n",
                plugin.c_str());
        return 1;
    }

    const int NS = 4, N = 20;
    const size_t n = (size_t)R * (size_t)C;
    size_t wsb = 0;
    if (rmsnorm_backward_workspace_size(be, R, C, &wsb) != RMSNORM_OK)
        return 1;
    void *x[NS], *dy[NS], *dx[NS], *ws[NS], *w;
    float *rs[NS], *dw[NS];
    CK(cudaMalloc(&w, (size_t)C * esz));
    fill<<<64, 256>>>(w, (size_t)C, esz, 6u | f16);
    for (int s = 0; s < NS; s++) {
        CK(cudaMalloc(&x[s], n * esz));
        CK(cudaMalloc(&dy[s], n * esz));
        CK(cudaMalloc(&dx[s], n * esz));
        CK(cudaMalloc(&rs[s], (size_t)R * sizeof(float)));
        CK(cudaMalloc(&dw[s], (size_t)C * sizeof(float)));
        CK(cudaMalloc(&ws[s], wsb));
        fill<<<1024, 256>>>(x[s], n, esz, 10u + 2u * s | f16);
        fill<<<1024, 256>>>(dy[s], n, esz, 100u + 2u * s | f16);
        fill<<<64, 256>>>(rs[s], (size_t)R, 4, 40u + 2u * s); /* |rstd| < 1: any value does for timing */
    }
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
    cudaStream_t st;
    CK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
    auto call = [&](int s) {
        rmsnorm_backward_args a;
        memset(&a, 0, sizeof a);
        a.struct_size = sizeof a;
        a.dy = {dy[s], T, R, C, C};
        a.x = {x[s], T, R, C, C};
        a.weight = w;
        a.weight_dtype = T;
        a.rstd = rs[s];
        a.eps = 1e-6f;
        a.dx = {dx[s], T, R, C, C};
        a.dweight = dw[s];
        a.workspace = ws[s];
        a.workspace_bytes = wsb;
        return rmsnorm_backward(be, &a, st);
    };
    if (call(0) != RMSNORM_OK) {
        fprintf(stderr, "rmsnorm-timeline: the backward call failed\n");
        return 1;
    }
    CK(cudaStreamSynchronize(st));
    cudaGraph_t g;
    cudaGraphExec_t ge;
    CK(cudaStreamBeginCapture(st, cudaStreamCaptureModeGlobal));
    for (int i = 0; i < N; i++)
        (void)call(i % NS);
    CK(cudaStreamEndCapture(st, &g));
    CK(cudaGraphInstantiate(&ge, g, 0));
    cudaEvent_t e0, e1;
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    CK(cudaGraphLaunch(ge, st));
    float best = 1e30f;
    for (int k = 0; k < 5; k++) {
        float ms = 0.0f;
        CK(cudaEventRecord(e0, st));
        CK(cudaGraphLaunch(ge, st));
        CK(cudaEventRecord(e1, st));
        CK(cudaEventSynchronize(e1));
        CK(cudaEventElapsedTime(&ms, e0, e1));
        best = std::min(best, ms);
    }
    std::vector<unsigned long long> m((size_t)RMSI_TL_CTAS * RMSI_TL_SLOTS), r((size_t)RMSI_TLR_CTAS * RMSI_TLR_SLOTS);
    if (dump(m.data(), r.data()) != 0) {
        fprintf(stderr, "rmsnorm-timeline: reading the stamps failed\n");
        return 1;
    }
    /* The last call's CTAs: the tables are overwritten by every call and the
     * grid is the same each time, so every stamped CTA is this call's. */
    int G = 0, RG = 0;
    while (G < RMSI_TL_CTAS && m[(size_t)G * RMSI_TL_SLOTS + RMSI_TL_ENTRY])
        G++;
    while (RG < RMSI_TLR_CTAS && r[(size_t)RG * RMSI_TLR_SLOTS + RMSI_TLR_ENTRY])
        RG++;
    unsigned long long t0 = ~0ull;
    for (int b = 0; b < G; b++)
        t0 = std::min(t0, m[(size_t)b * RMSI_TL_SLOTS + RMSI_TL_ENTRY]);
    printf("%s %lldx%lld: %.2f us a call (best of 5 replays of %d calls; stamps included)\n", dt.c_str(),
           (long long)R, (long long)C, best * 1000.0f / N, N);
    printf("main grid %d CTAs, reduction grid %d CTAs; ns from the first main CTA's entry\n", G, RG);
    static const char *const mn[] = {"main: entry", "main: wait done", "main: weff filled", "main: first row in",
                                     "main: rows done", "main: exit"};
    for (int i = RMSI_TL_ENTRY; i <= RMSI_TL_EXIT; i++) {
        std::vector<long long> v;
        for (int b = 0; b < G; b++) {
            const unsigned long long t = m[(size_t)b * RMSI_TL_SLOTS + i];
            if (t)
                v.push_back((long long)(t - t0));
        }
        spread(mn[i], v);
    }
    static const char *const rn[] = {"reduction: entry", "reduction: wait done", "reduction: exit"};
    for (int i = RMSI_TLR_ENTRY; i <= RMSI_TLR_EXIT; i++) {
        std::vector<long long> v;
        for (int b = 0; b < RG; b++)
            v.push_back((long long)(r[(size_t)b * RMSI_TLR_SLOTS + i] - t0));
        spread(rn[i], v);
    }
    if (raw) {
        printf("cta sm entry waited weff first rows exit\n");
        for (int b = 0; b < G; b++) {
            const unsigned long long *c = &m[(size_t)b * RMSI_TL_SLOTS];
            printf("%d %llu", b, c[RMSI_TL_SMID]);
            for (int i = RMSI_TL_ENTRY; i <= RMSI_TL_EXIT; i++)
                printf(" %lld", c[i] ? (long long)(c[i] - t0) : -1LL);
            printf("\n");
        }
    }
    return 0;
}
