/*
 * Per-CTA time stamps of the backward's two kernels, for a diagnostic build
 * of the CUDA plugin only (`ninja cuda-timeline`, which defines
 * RMSI_TIMELINE; docs/gpu.md). Everywhere else the stamps are empty.
 *
 * Why: ncu times a kernel alone, with its caches flushed and nothing before
 * or after it; the backward's cost that does not scale with rows (session
 * 16: about 8 us of the 4096x4096 call) sits in where each CTA waits inside
 * one graph replay: the weight fill, the first row, the ragged end of the
 * row loop, the partial rows, the reduction's launch. Thread (0, 0) of each
 * CTA writes %globaltimer (ns, one clock for every SM) at fixed points of
 * the last call that ran; gpu/cuda/timeline.cu replays a graph of calls and
 * prints them. The stores cost about 1 us of a 32 us call (S17-2), so the
 * build is for finding where the time goes, not for timing.
 */
#ifndef RMSNORM_GPU_TIMELINE_H
#define RMSNORM_GPU_TIMELINE_H

/* Stamps of the main kernel (rmsi_bwd_reg), in the order a CTA passes them. */
enum {
    RMSI_TL_ENTRY = 0,   /* first instruction, before the grid dependency wait */
    RMSI_TL_WAITED = 1,  /* the previous grid's memory is visible */
    RMSI_TL_WEFF = 2,    /* the weff row is in shared memory */
    RMSI_TL_FIRST = 3,   /* the first row's staged copies have landed (staged kernels) */
    RMSI_TL_ROWS = 4,    /* the row loop is done */
    RMSI_TL_EXIT = 5,    /* the partial row is written */
    RMSI_TL_SMID = 6,    /* not a time: the SM the CTA ran on */
    RMSI_TL_SLOTS = 8
};
/* Stamps of rmsi_dw_reduce. */
enum { RMSI_TLR_ENTRY = 0, RMSI_TLR_WAITED = 1, RMSI_TLR_EXIT = 2, RMSI_TLR_SLOTS = 4 };
#define RMSI_TL_CTAS 4096 /* CTAs of the main grid recorded (the persistent grids are far smaller) */
#define RMSI_TLR_CTAS 1024

#if defined(RMSI_TIMELINE) && defined(__CUDACC__)
__device__ unsigned long long rmsi_tl_main[RMSI_TL_CTAS * RMSI_TL_SLOTS];
__device__ unsigned long long rmsi_tl_reduce[RMSI_TLR_CTAS * RMSI_TLR_SLOTS];

__device__ __forceinline__ void rmsi_tl_put(unsigned long long *tab, int ctas, int slots, int i,
                                            unsigned long long v)
{
    if (threadIdx.x == 0 && threadIdx.y == 0 && blockIdx.x < (unsigned)ctas)
        tab[blockIdx.x * slots + i] = v;
}
__device__ __forceinline__ unsigned long long rmsi_tl_now()
{
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}
#define RMSI_TL_STAMP(i) rmsi_tl_put(rmsi_tl_main, RMSI_TL_CTAS, RMSI_TL_SLOTS, (i), rmsi_tl_now())
#define RMSI_TLR_STAMP(i) rmsi_tl_put(rmsi_tl_reduce, RMSI_TLR_CTAS, RMSI_TLR_SLOTS, (i), rmsi_tl_now())
#define RMSI_TL_SM()                                                                \
    do {                                                                            \
        unsigned sm_;                                                               \
        asm volatile("mov.u32 %0, %%smid;" : "=r"(sm_));                             \
        rmsi_tl_put(rmsi_tl_main, RMSI_TL_CTAS, RMSI_TL_SLOTS, RMSI_TL_SMID, sm_);   \
    } while (0)

/* The diagnostic plugin's one extra export (gpu/cuda/rmsnorm_cuda_timeline.map):
 * copies both tables to host memory (main: RMSI_TL_CTAS * RMSI_TL_SLOTS
 * values, reduce: RMSI_TLR_CTAS * RMSI_TLR_SLOTS) and clears them. */
extern "C" __attribute__((visibility("default"))) int rmsi_timeline_dump(unsigned long long *main_tab,
                                                                         unsigned long long *reduce_tab)
{
    static const unsigned long long zero[RMSI_TL_CTAS * RMSI_TL_SLOTS] = {0};
    if (cudaMemcpyFromSymbol(main_tab, rmsi_tl_main, sizeof rmsi_tl_main) != cudaSuccess ||
        cudaMemcpyFromSymbol(reduce_tab, rmsi_tl_reduce, sizeof rmsi_tl_reduce) != cudaSuccess ||
        cudaMemcpyToSymbol(rmsi_tl_main, zero, sizeof rmsi_tl_main) != cudaSuccess ||
        cudaMemcpyToSymbol(rmsi_tl_reduce, zero, sizeof rmsi_tl_reduce) != cudaSuccess)
        return -1;
    return 0;
}
#else
#define RMSI_TL_STAMP(i) ((void)0)
#define RMSI_TLR_STAMP(i) ((void)0)
#define RMSI_TL_SM() ((void)0)
#endif

#endif
