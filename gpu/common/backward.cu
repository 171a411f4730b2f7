/*
 * Backward kernels: dx and the dw partials in one pass over x and dy, then a
 * second small launch that reduces the partials in a fixed order. Written once
 * for CUDA and HIP.
 *
 * dw is deterministic without atomics: the grid is persistent and its size is a
 * function of (rows, cols, SM count) through the ladder, row group g of CTA b
 * always owns partial row b * rpc + g of the workspace and visits rows
 * b * rpc + g, + grid * rpc, ... in increasing order; rmsi_dw_reduce then sums
 * the partial rows in index order. The same inputs on the same GPU model give
 * the same bits every run.
 *
 * rmsi_bwd_reg: one row per row group in registers (see forward.cu for the
 *   layout), with the next row on its way while the current one is
 *   computed: a persistent CTA otherwise idles on the load latency of every
 *   row, since fewer CTAs fit (the dw accumulators cost VEC floats per
 *   vector). ST (config stage = 1): the next row's x and dy, and the
 *   residual gradient, are copied into shared memory by cp.async; otherwise,
 *   at NV <= 2, the next row is loaded into registers.
 *   Per row: one fused reduction of (sum h^2, sum g*h), rstd from it or from
 *   the saved rstd, then dx and dw += dy * n.
 * rmsi_bwd_multi: one CTA per row, two passes over global memory, any width,
 *   alignment and stride; its partial row is accumulated in the workspace by
 *   the one thread that owns each column (read-modify-write, no atomics).
 *
 * Math (docs/numerics.md): g = dy * weff, n = h * rstd, c = sum(g * n) / cols
 * (rstd known before the sum: given, or reduced first), dx = round_T(rstd *
 * (g - n * c) + dres),
 * dw += dy * m with m = n or round_T(n) (ROUND_LLAMA).
 */
#include <pthread.h>
#include <stdint.h>

#include <type_traits>

#include "gpu/common/device_math.h"
#include "gpu/common/reduce.h"
#include "gpu/common/timeline.h"

namespace {

template <typename W, int VEC>
__device__ __forceinline__ void rmsi_bwd_weff(const rmsi_bwd_params &p, int64_t j, float *wf)
{
    if (p.w) {
        rmsi_vec<W, VEC>::load(reinterpret_cast<const W *>(p.w) + j, wf);
#pragma unroll
        for (int e = 0; e < VEC; e++)
            wf[e] += p.w_off;
    } else {
#pragma unroll
        for (int e = 0; e < VEC; e++)
            wf[e] = 1.0f;
    }
}

/* Register caps as in forward.cu (CTAs of up to RMSI_REG_MAXT threads; NV =
 * 1 -> 64 registers, 2 -> 80 (both with the next row prefetched), 4 -> 80):
 * occupancy is the latency hiding.
 * The staged 4-vector variant (ST, cp.async) may use 128: its shared memory
 * (96 KB at 8192 bf16 columns) already holds it at two CTAs of 256 threads
 * an SM; staged at 2 vectors, 80 (the register prefetch's cap).
 * The dw accumulators live in shared memory, not registers (they were 8-32
 * registers a thread and, with the cached weights and a prefetched row, held
 * the first version at one CTA per SM and 67% of the roofline). */
#define RMSI_BWD_REGS(nv, st) ((st) ? ((nv) == 4 ? 128 : 80) : ((nv) == 1 ? 64 : ((nv) == 2 ? 80 : 80)))
/* LEAN (config lean = 1, staged 2-vector kernels only): 64 instead of 80, so
 * that 4 CTAs of 256 threads fit an SM instead of 3 (S16-1, S16-2: per row
 * about 10% slower at 3 CTAs an SM, faster where the fourth CTA and the
 * shorter per-SM row lists win; the ladder's rule is in gpu/cuda/ladder.cc).
 * No fp16 instance: at 64 registers ptxas spilled its staged kernel. */
#define RMSI_BWD_REGS_L(nv, st, lean) ((lean) ? 64 : RMSI_BWD_REGS(nv, st))

/* weff of vector i through the read-only path (the weight row is shared by
 * every CTA of an SM: an L1 hit). */
template <typename T, typename W>
__device__ __forceinline__ void rmsi_bwd_wvec(const rmsi_bwd_params &p, int i, float *wf)
{
    constexpr int VEC = 16 / (int)sizeof(T);
    constexpr int WCH = rmsi_wchunks<T, W>::n;
    if (p.w) {
        uint4 wa[WCH];
        const uint4 *wv = reinterpret_cast<const uint4 *>(reinterpret_cast<const W *>(p.w) + (int64_t)i * VEC);
#pragma unroll
        for (int c = 0; c < WCH; c++)
            wa[c] = rmsi_ld_const(wv + c);
        rmsi_weff_unpack<T, W>(wa, p.w_off, wf);
    } else {
#pragma unroll
        for (int e = 0; e < VEC; e++)
            wf[e] = 1.0f;
    }
}

/* Queue the asynchronous copies of row r's x and dy vectors (this thread's:
 * t, t + tpr, ...) into its staging slots, as one group; nothing past the
 * rows or the row (the reader zeroes those). */
template <typename T, int NV>
__device__ __forceinline__ void rmsi_bwd_stage(const rmsi_bwd_params &p, int64_t r, uint4 *stg, int nth, int t,
                                               int tpr, int nvec)
{
    if (r < p.rows) {
        const uint4 *xs = reinterpret_cast<const uint4 *>(rmsi_crow<T>(p.x, r, p.x_ld));
        const uint4 *gs = reinterpret_cast<const uint4 *>(rmsi_crow<T>(p.dy, r, p.dy_ld));
#pragma unroll
        for (int k = 0; k < NV; k++) {
            const int i = t + k * tpr;
            if (i < nvec) {
                rmsi_cp_async16(stg + k * nth, xs + i);
                rmsi_cp_async16(stg + (NV + k) * nth, gs + i);
            }
        }
    }
    rmsi_cp_async_commit();
}

/* The same for row r's residual gradient, as its own group (an empty one
 * without dres, so that every iteration commits the same groups): it is
 * needed only by the dx loop, so it is queued after this row's dx loop and
 * waited for just before the next one. */
template <typename T, int NV>
__device__ __forceinline__ void rmsi_bwd_stage_dres(const rmsi_bwd_params &p, int64_t r, uint4 *stg, int nth, int t,
                                                    int tpr, int nvec)
{
    if (p.dres && r < p.rows) {
        const uint4 *ds = reinterpret_cast<const uint4 *>(rmsi_crow<T>(p.dres, r, p.dres_ld));
#pragma unroll
        for (int k = 0; k < NV; k++) {
            const int i = t + k * tpr;
            if (i < nvec)
                rmsi_cp_async16(stg + (2 * NV + k) * nth, ds + i);
        }
    }
    rmsi_cp_async_commit();
}

/* The Q4 float4 slots of vector k, slot m at base[m * stride] (the shared
 * memory layouts below), as 4 * Q4 floats. */
template <int Q4>
__device__ __forceinline__ void rmsi_slots_get(const float4 *base, int k, int stride, float *v)
{
#pragma unroll
    for (int q = 0; q < Q4; q++) {
        const float4 a = base[(k * Q4 + q) * stride];
        v[4 * q] = a.x;
        v[4 * q + 1] = a.y;
        v[4 * q + 2] = a.z;
        v[4 * q + 3] = a.w;
    }
}

/* weff of this thread's vector k (vector i of the row): the CTA's staged
 * row where the vendor keeps one (RMSI_BWD_WSM), else the weights. */
template <typename T, typename W>
__device__ __forceinline__ void rmsi_bwd_weff_of(const rmsi_bwd_params &p, const float4 *wsm, int k, int i, int tpr,
                                                 float *wf)
{
    constexpr int Q4 = 4 / (int)sizeof(T); /* float4 slots a vector: VEC / 4 */
    if (!RMSI_BWD_WSM) {
        rmsi_bwd_wvec<T, W>(p, i, wf);
        return;
    }
    rmsi_slots_get<Q4>(wsm, k, tpr, wf);
}

/* cl > 1 (config knob cl), kernels without a staging area (the staged ones
 * take rmsi_bwd_push_sum): the cluster's dw accumulators, every row group
 * of its cl CTAs, become one partial row, p.ws row blockIdx.x / cl.
 * CTA `rank` sums the rank-th of cl contiguous pieces of the row; each float4
 * of it is summed over the CTAs in rank order, then the row groups in order,
 * read through distributed shared memory: a fixed order, so the bits depend
 * on the grid and cl alone. Consecutive threads write consecutive float4s.
 * acc0: the CTA's first accumulator slot (row group 0, thread 0); slot m of
 * row group y's thread t is acc0[m * nth + y * tpr + t], as in rmsi_bwd_reg
 * (smem4: its dynamic shared memory).
 * Every thread of every CTA of the cluster calls this (the barriers are
 * cluster-wide); the second barrier keeps each CTA's shared memory alive
 * until the others have read it. Half the partial rows for the same cap on
 * them lets the ladder's grid grow to the occupancy where the cap held it
 * (gpu/cuda/ladder.cc). */
template <typename T, int NV>
__device__ __forceinline__ void rmsi_bwd_cluster_sum(const rmsi_bwd_params &p, const float4 *smem4)
{
    constexpr int Q4 = 4 / (int)sizeof(T); /* float4 slots a vector */
    /* the shape of the CTA read afresh (opaque): values kept from before the
     * row loop would cost registers across it (the 4-vector kernels spilled) */
    const int tpr = rmsi_ntid_x();
    const int groups = rmsi_ntid_y();
    const int nth = tpr * groups;
    const float4 *acc0 = smem4 + (RMSI_BWD_WSM ? NV * Q4 * tpr : 0);
    const int cl = p.cl;
    const unsigned rank = rmsi_cluster_rank();
    const int nf = (int)(p.cols / 4); /* float4s of a row (VEC | cols) */
    const int per = (nf + cl - 1) / cl;
    const int lo = (int)rank * per;
    const int hi = lo + per < nf ? lo + per : nf;
    float4 *part = reinterpret_cast<float4 *>(p.ws + (int64_t)(blockIdx.x / (unsigned)cl) * p.cols);
    rmsi_cluster_sync(); /* every CTA's accumulators are final */
    for (int o = lo + rmsi_tid_y() * tpr + rmsi_tid_x(); o < hi; o += nth) {
        const int i = o / Q4;        /* vector of the row */
        const int q = o - i * Q4;    /* float4 of the vector */
        const int k = i / tpr;       /* the owner's vector slot */
        const int tt = i - k * tpr;  /* the owner's column thread */
        const int slot = (k * Q4 + q) * nth + tt;
        float4 s = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
        for (int r = 0; r < cl; r++) {
            const float4 *ra = rmsi_cluster_map(acc0, (unsigned)r);
            for (int y = 0; y < groups; y++) {
                const float4 a = ra[slot + y * tpr];
                s.x = __fadd_rn(s.x, a.x);
                s.y = __fadd_rn(s.y, a.y);
                s.z = __fadd_rn(s.z, a.z);
                s.w = __fadd_rn(s.w, a.w);
            }
        }
        part[o] = s;
    }
    rmsi_cluster_sync(); /* the other CTAs have read this one's accumulators */
}

/* The staged kernels' cluster sum at cl = 2: the same partial row as
 * rmsi_bwd_cluster_sum, bit for bit, without its fence. That one's barrier
 * releases the CTA's accumulators to the other CTA's loads, and a release at
 * cluster scope is MEMBAR.ALL.GPU in SASS: it waits for the CTA's last dx
 * stores in a memory system busy with the other CTAs' rows (2 us of the
 * 4096x4096 backward's critical path, S17-5). Here each CTA pushes the other
 * its half with st.async, whose bytes are counted on an mbarrier in the
 * receiver's shared memory, so neither side fences global memory.
 * CTA `rank` owns the columns of its vector slots k in [rank * NV/2,
 * (rank + 1) * NV/2), i.e. the float4 slots [rank * H, (rank + 1) * H) of every
 * thread's accumulators (H = NV/2 * Q4): one run of H * nth float4s, which
 * lands in the other CTA's staging area (at least 2 * NV * nth uint4s, free
 * once the rows are done). The sum is over the CTAs in rank order, then the
 * row groups, as in rmsi_bwd_cluster_sum. bar: 8 bytes of this CTA's shared
 * memory that nothing uses any more (the row reduction's scratch).
 * Nothing touches this CTA's shared memory after its wait on bar, so no exit
 * barrier is needed either. */
template <typename T, int NV>
__device__ __forceinline__ void rmsi_bwd_push_sum(const rmsi_bwd_params &p, const float4 *smem4, void *bar)
{
    constexpr int Q4 = 4 / (int)sizeof(T); /* float4 slots a vector */
    constexpr int H = NV / 2 * Q4;         /* float4 slots a CTA owns, per thread */
    const int tpr = rmsi_ntid_x();
    const int groups = rmsi_ntid_y();
    const int nth = tpr * groups;
    const int j = rmsi_tid_y() * tpr + rmsi_tid_x();
    const float4 *acc0 = smem4 + (RMSI_BWD_WSM ? NV * Q4 * tpr : 0);
    const float4 *rcv0 = acc0 + NV * Q4 * nth; /* the staging area */
    const unsigned rank = rmsi_cluster_rank();
    const unsigned other = rank ^ 1u;
    const unsigned data_b = rmsi_smem_addr(bar);

    rmsi_cp_async_wait_all(); /* no copy of this thread's is still landing in the staging area */
    __syncthreads();          /* nor will any thread read it, or bar's old contents, again */
    if (j == 0)
        rmsi_mbar_init(data_b, 1u);
    /* ptxas issues the init once for the warp (a uniform SYNCS.EXCH), which
     * racecheck counts as every lane's write: order it before the arrive */
    rmsi_syncwarp();
    if (j == 0)
        rmsi_mbar_expect(data_b, (unsigned)(H * 16 * nth));
    __syncthreads(); /* the barrier is set up before any thread waits on it */
    /* both CTAs' staging areas are free and their barriers set up
     * (fence.mbarrier_init publishes the init; the arrive is relaxed: it
     * orders nothing else, so it waits for no global store) */
    rmsi_cluster_arrive_relaxed();
    rmsi_cluster_wait();
    const unsigned rbar = rmsi_dsm_addr(data_b, other);
    const unsigned rdst = rmsi_dsm_addr(rmsi_smem_addr(rcv0 + j), other);
#pragma unroll
    for (int m = 0; m < H; m++)
        rmsi_st_async16(rdst + (unsigned)(m * nth * 16), acc0[((int)other * H + m) * nth + j], rbar);
    rmsi_mbar_wait(data_b, 0u);

    const int nvec = (int)(p.cols / (4 * Q4));
    const int lo = (int)rank * (NV / 2) * tpr * Q4;
    const int top = ((int)rank + 1) * (NV / 2) * tpr;
    const int hi = (top < nvec ? top : nvec) * Q4;
    float4 *part = reinterpret_cast<float4 *>(p.ws + (int64_t)(rmsi_ctaid_x() / 2) * p.cols);
    for (int o = lo + j; o < hi; o += nth) {
        const int i = o / Q4;       /* vector of the row */
        const int q = o - i * Q4;   /* float4 of the vector */
        const int k = i / tpr;      /* the owner's vector slot */
        const int tt = i - k * tpr; /* the owner's column thread */
        const int own = (k * Q4 + q) * nth + tt;
        const int got = ((k - (int)rank * (NV / 2)) * Q4 + q) * nth + tt;
        float4 s = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
        for (unsigned r = 0; r < 2u; r++) {
            const float4 *ra = r == rank ? acc0 + own : rcv0 + got;
            for (int y = 0; y < groups; y++) {
                const float4 a = ra[y * tpr];
                s.x = __fadd_rn(s.x, a.x);
                s.y = __fadd_rn(s.y, a.y);
                s.z = __fadd_rn(s.z, a.z);
                s.w = __fadd_rn(s.w, a.w);
            }
        }
        part[o] = s;
    }
}

/* Dynamic shared memory of rmsi_bwd_reg (rmsi_bwd_reg_smem):
 * - with RMSI_BWD_WSM, the CTA's weff row (w + w_off, or 1) in fp32, filled
 *   once by row group 0: each row reads it twice, and loading, widening and
 *   offsetting the weights from global memory twice a row was about a fifth
 *   of the kernel's instructions (ncu, session 4: the backward was issue
 *   bound, 64% of issue slots at 34 instructions an element). Slot m of
 *   column thread t at m * tpr + t.
 * - each thread's dw accumulators, NV * VEC floats as NV * VEC / 4 float4
 *   slots, slot m of thread j at m * nthreads + j: a warp's 16-byte accesses
 *   are contiguous (no bank conflicts), and a vector's update is two LDS.128
 *   + two STS.128 rather than 8 + 8 scalar accesses (the backward ran at 70%
 *   SM throughput in ncu, docs/perf/h200.md session 3).
 * - ST: the staged row, x, dy [, dres] (rmsi_bwd_stage*).
 * Offsets are constants times tpr or nthreads. */
template <typename T, typename W, int NV, bool ST, bool LEAN = false, bool PUSH = false>
__global__ void RMSI_KERNEL_REGS(RMSI_REG_MAXT, RMSI_BWD_REGS_L(NV, ST, LEAN)) rmsi_bwd_reg(const rmsi_bwd_params p)
{
    RMSI_TL_STAMP(RMSI_TL_ENTRY);
    rmsi_pdl_wait(); /* the dependents' launch at exit (vendor.h) */
    RMSI_TL_STAMP(RMSI_TL_WAITED);
    constexpr int VEC = 16 / (int)sizeof(T);
    /* Aligned (vendor.h): on CUDA it follows the static variables, 128
     * bytes, and 8 more (an mbarrier) once made every kernel of the
     * st.async cluster sum 3-13% slower (S18-1..S18-3). */
    extern __shared__ __attribute__((aligned(RMSI_DSMEM_ALIGN))) float4 rmsi_bwd_smem4[];
    __shared__ __attribute__((aligned(8))) float red[RMSI_MAX_WARPS];
    /* cl = 2 with a staging area: the cluster sum by st.async */
    constexpr bool PUSHK = PUSH && RMSI_HAVE_CLUSTER && ST && NV % 2 == 0;
    const int t = (int)threadIdx.x;
    const int tpr = (int)blockDim.x;
    const int nvec = (int)(p.cols / VEC); /* <= NV * tpr on this path */
    const int64_t step = (int64_t)gridDim.x * blockDim.y;
    constexpr int Q4 = VEC / 4; /* float4 slots per vector */
    const int nth = tpr * (int)blockDim.y;
    float4 *wsm = rmsi_bwd_smem4 + t; /* RMSI_BWD_WSM */
    float4 *acc = p.ws ? rmsi_bwd_smem4 + (RMSI_BWD_WSM ? NV * Q4 * tpr : 0) + ((int)threadIdx.y * tpr + t) : nullptr;
    /* ST: the staged row, x vector k at k * nth + j and dy at (NV + k) * nth
     * + j, j this thread's index in the CTA: a thread reads back only what its
     * own copies wrote, so waiting for its own groups is enough. */
    uint4 *stg = reinterpret_cast<uint4 *>(rmsi_bwd_smem4 + (RMSI_BWD_WSM ? NV * Q4 * tpr : 0) + NV * Q4 * nth) +
                 ((int)threadIdx.y * tpr + t);

    /* NV <= 2 without ST: the next row's x and dy are loaded into registers
     * before this row is reduced (PF): a persistent CTA otherwise idles on
     * every row's load latency.
     * 4096x4096 bf16 took 52 us without it and 38.6 us with it (H200,
     * docs/perf/h200.md); NV = 4 has no registers for it. */
    constexpr bool PF = NV <= 2 && !ST;
    uint4 xa[NV], ga[NV];
    /* The first row's loads go out before the weff row is filled: the CTA's
     * start then waits one memory latency (weights and row together), not two. */
    if (PF) {
        const int64_t r0 = (int64_t)blockIdx.x * blockDim.y + threadIdx.y;
        const bool l0 = r0 < p.rows;
        rmsi_load_vecs<NV>(reinterpret_cast<const uint4 *>(rmsi_crow<T>(p.x, l0 ? r0 : 0, p.x_ld)), l0, t, tpr,
                          nvec, p.cache & RMSI_CACHE_LD, xa);
        rmsi_load_vecs<NV>(reinterpret_cast<const uint4 *>(rmsi_crow<T>(p.dy, l0 ? r0 : 0, p.dy_ld)), l0, t, tpr,
                          nvec, p.cache & RMSI_CACHE_LD, ga);
    }
    if (RMSI_BWD_WSM) {
        if (threadIdx.y == 0) {
#pragma unroll
            for (int k = 0; k < NV; k++) {
                float wf[VEC];
                if (t + k * tpr < nvec) {
                    rmsi_bwd_wvec<T, W>(p, t + k * tpr, wf);
#pragma unroll
                    for (int q = 0; q < Q4; q++)
                        wsm[(k * Q4 + q) * tpr] = make_float4(wf[4 * q], wf[4 * q + 1], wf[4 * q + 2], wf[4 * q + 3]);
                }
            }
        }
        __syncthreads(); /* the row groups above 0 read group 0's stores */
    }
    RMSI_TL_STAMP(RMSI_TL_WEFF);

    /* Each thread owns its accumulator slots: no barrier around them. */
    if (acc) {
#pragma unroll
        for (int m = 0; m < NV * Q4; m++)
            acc[m * nth] = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    }

    /* The staged kernels queue their first row after the fill: queued
     * before it (as the register prefetch does) they were 1-2% slower per row
     * (S16-1), for about 0.4 us less at the start. */
    if (ST) {
        const int64_t r0 = (int64_t)blockIdx.x * blockDim.y + threadIdx.y;
        rmsi_bwd_stage<T, NV>(p, r0, stg, nth, t, tpr, nvec);
        rmsi_bwd_stage_dres<T, NV>(p, r0, stg, nth, t, tpr, nvec);
    }

    for (int64_t base = (int64_t)blockIdx.x * blockDim.y; base < p.rows; base += step) {
        const int64_t row = base + threadIdx.y;
        const bool live = row < p.rows;
        const int64_t r = live ? row : 0;
        uint4 xn[NV], gn[NV];
        if (ST) {
            rmsi_cp_async_wait_but1(); /* x, dy of this row; its dres may still be in flight */
            if (base == (int64_t)blockIdx.x * blockDim.y)
                RMSI_TL_STAMP(RMSI_TL_FIRST);
#pragma unroll
            for (int k = 0; k < NV; k++) {
                const bool on = live && t + k * tpr < nvec;
                xa[k] = on ? stg[k * nth] : make_uint4(0u, 0u, 0u, 0u);
                ga[k] = on ? stg[(NV + k) * nth] : make_uint4(0u, 0u, 0u, 0u);
            }
        } else if (PF) {
            const bool ln = row + step < p.rows;
            const int64_t rn = ln ? row + step : 0;
            rmsi_load_vecs<NV>(reinterpret_cast<const uint4 *>(rmsi_crow<T>(p.x, rn, p.x_ld)), ln, t, tpr, nvec,
                              p.cache & RMSI_CACHE_LD, xn);
            rmsi_load_vecs<NV>(reinterpret_cast<const uint4 *>(rmsi_crow<T>(p.dy, rn, p.dy_ld)), ln, t, tpr, nvec,
                              p.cache & RMSI_CACHE_LD, gn);
        } else {
            rmsi_load_vecs<NV>(reinterpret_cast<const uint4 *>(rmsi_crow<T>(p.x, r, p.x_ld)), live, t, tpr, nvec,
                              p.cache & RMSI_CACHE_LD, xa);
            rmsi_load_vecs<NV>(reinterpret_cast<const uint4 *>(rmsi_crow<T>(p.dy, r, p.dy_ld)), live, t, tpr, nvec,
                              p.cache & RMSI_CACHE_LD, ga);
        }

        /* rstd first (given, or one more reduction), then c = sum(g * n) / cols
         * with n = h * rstd, as docs/numerics.md orders it: sum(g * h) scaled
         * afterwards overflows for |h| near 2^46 and underflows near 2^-48
         * (found by fuzz_backward on the H200). p.rstd is uniform per CTA. */
        float rs = (p.rstd && live) ? p.rstd[row] : 0.0f;
        if (!p.rstd) {
            float ss = 0.0f;
#pragma unroll
            for (int k = 0; k < NV; k++) {
                float h[VEC];
                rmsi_unpack16<T>(xa[k], h);
#pragma unroll
                for (int e = 0; e < VEC; e++)
                    ss += h[e] * h[e];
            }
            rs = rmsi_d_rstd(rmsi_row_reduce(ss, red, rmsi_op_sum()), p.cols, p.eps);
        }
        float sgn = 0.0f;
#pragma unroll
        for (int k = 0; k < NV; k++) {
            const int i = t + k * tpr;
            if (!(live && i < nvec))
                continue;
            float wf[VEC];
            rmsi_bwd_weff_of<T, W>(p, wsm, k, i, tpr, wf);
#pragma unroll
            for (int e = 0; e < VEC; e++)
                sgn += (rmsi_elem16<T>(ga[k], e) * wf[e]) * (rmsi_elem16<T>(xa[k], e) * rs);
        }
        const float c = __fdiv_rn(rmsi_row_reduce(sgn, red, rmsi_op_sum()), (float)p.cols);
        /* after the reduction's barrier: every thread's reads of the staged
         * row precede the copies that overwrite it */
        if (ST) {
            rmsi_bwd_stage<T, NV>(p, row + step, stg, nth, t, tpr, nvec);
            rmsi_cp_async_wait_but1(); /* this row's dres, queued before the next row's x, dy */
        }

        uint4 *dxr = reinterpret_cast<uint4 *>(rmsi_row<T>(p.dx, r, p.dx_ld));
        const uint4 *drr = p.dres ? reinterpret_cast<const uint4 *>(rmsi_crow<T>(p.dres, r, p.dres_ld)) : nullptr;
#pragma unroll
        for (int k = 0; k < NV; k++) {
            const int i = t + k * tpr;
            if (!(live && i < nvec))
                continue;
            float wf[VEC], d[VEC];
            rmsi_bwd_weff_of<T, W>(p, wsm, k, i, tpr, wf);
            uint4 dr = make_uint4(0u, 0u, 0u, 0u);
            if (drr && ST)
                dr = stg[(2 * NV + k) * nth];
            else if (drr)
                dr = (p.cache & RMSI_CACHE_LD) ? rmsi_ld_stream(drr + i) : drr[i];
            float n[VEC], dm[VEC];
#pragma unroll
            for (int e = 0; e < VEC; e++) {
                const float g = rmsi_elem16<T>(ga[k], e) * wf[e];
                n[e] = rmsi_elem16<T>(xa[k], e) * rs;
                d[e] = rs * (g - n[e] * c);
            }
            if (drr) {
#pragma unroll
                for (int e = 0; e < VEC; e++)
                    d[e] += rmsi_elem16<T>(dr, e);
            }
            rmsi_st16(dxr + i, rmsi_pack16<T>(d), p.cache & RMSI_CACHE_ST);
            if (acc) {
                /* the rounding branch is per vector, not per element */
                if (p.llama) {
#pragma unroll
                    for (int e = 0; e < VEC; e++)
                        dm[e] = rmsi_elem16<T>(ga[k], e) * rmsi_elem<T>::round(n[e]);
                } else {
#pragma unroll
                    for (int e = 0; e < VEC; e++)
                        dm[e] = rmsi_elem16<T>(ga[k], e) * n[e];
                }
#pragma unroll
                for (int q = 0; q < Q4; q++) {
                    float4 a = acc[(k * Q4 + q) * nth];
                    a.x += dm[4 * q];
                    a.y += dm[4 * q + 1];
                    a.z += dm[4 * q + 2];
                    a.w += dm[4 * q + 3];
                    acc[(k * Q4 + q) * nth] = a;
                }
            }
        }
        /* this thread read its dres slot above (the values are stored in
         * dx): the next row's residual gradient may overwrite it */
        if (ST)
            rmsi_bwd_stage_dres<T, NV>(p, row + step, stg, nth, t, tpr, nvec);
        if (PF) {
#pragma unroll
            for (int k = 0; k < NV; k++) {
                xa[k] = xn[k];
                ga[k] = gn[k];
            }
        }
    }
    RMSI_TL_STAMP(RMSI_TL_ROWS);
    RMSI_TL_SM();
    if constexpr (PUSHK) { /* launched only with cl = 2 (rmsi_bwd_pick) */
        if (p.ws)
            rmsi_bwd_push_sum<T, NV>(p, rmsi_bwd_smem4, red);
    } else if (RMSI_HAVE_CLUSTER && p.ws && p.cl > 1) {
        rmsi_bwd_cluster_sum<T, NV>(p, rmsi_bwd_smem4);
    } else if (acc) {
        float *part = p.ws + ((int64_t)blockIdx.x * blockDim.y + threadIdx.y) * p.cols;
#pragma unroll
        for (int k = 0; k < NV; k++) {
            const int i = t + k * tpr;
            if (i < nvec) {
                float v[VEC];
                rmsi_slots_get<Q4>(acc, k, nth, v);
                rmsi_vec<float, VEC>::store(part + (int64_t)i * VEC, v);
            }
        }
    }
    RMSI_TL_STAMP(RMSI_TL_EXIT);
}

template <typename T, typename W, int VEC>
__global__ void __launch_bounds__(RMSI_MAX_THREADS, 1) rmsi_bwd_multi(const rmsi_bwd_params p)
{
    rmsi_pdl_wait(); /* the dependents' launch at exit (vendor.h) */
    __shared__ float red[2 * RMSI_MAX_WARPS];
    const int t = (int)threadIdx.x;
    const int nt = (int)blockDim.x;
    const int64_t nvec = p.cols / VEC;
    float *part = p.ws ? p.ws + (int64_t)blockIdx.x * p.cols : nullptr;
    bool first = true;

    for (int64_t row = blockIdx.x; row < p.rows; row += gridDim.x) {
        /* Same order as rmsi_bwd_reg: rstd, then sum(g * n); this path re-reads
         * the row from memory (L2) for the extra pass when rstd is recomputed. */
        float rs = 0.0f;
        if (p.rstd) {
            rs = p.rstd[row];
        } else {
            float ss = 0.0f;
            for (int64_t i0 = t; i0 < nvec; i0 += (int64_t)nt * RMSI_MULTI_U) {
                rmsi_mvec<T, VEC> xv[RMSI_MULTI_U];
                rmsi_mvec_load_n(xv, p.x, row, p.x_ld, i0, nt, nvec);
#pragma unroll
                for (int u = 0; u < RMSI_MULTI_U; u++) {
                    float h[VEC];
                    xv[u].get(h);
#pragma unroll
                    for (int e = 0; e < VEC; e++)
                        ss += h[e] * h[e];
                }
            }
            rs = rmsi_d_rstd(rmsi_row_reduce(ss, red, rmsi_op_sum()), p.cols, p.eps);
        }
        float sgn = 0.0f;
        for (int64_t i0 = t; i0 < nvec; i0 += (int64_t)nt * RMSI_MULTI_U) {
            rmsi_mvec<T, VEC> xv[RMSI_MULTI_U], gv[RMSI_MULTI_U];
            rmsi_mvec_load_n2(xv, gv, p.x, p.x_ld, p.dy, p.dy_ld, row, i0, nt, nvec);
#pragma unroll
            for (int u = 0; u < RMSI_MULTI_U; u++) {
                const int64_t i = i0 + (int64_t)u * nt;
                if (i >= nvec)
                    break;
                float h[VEC], g[VEC], wf[VEC];
                xv[u].get(h);
                gv[u].get(g);
                rmsi_bwd_weff<W, VEC>(p, i * VEC, wf);
#pragma unroll
                for (int e = 0; e < VEC; e++)
                    sgn += (g[e] * wf[e]) * (h[e] * rs);
            }
        }
        const float c = __fdiv_rn(rmsi_row_reduce(sgn, red, rmsi_op_sum()), (float)p.cols);
        for (int64_t i0 = t; i0 < nvec; i0 += (int64_t)nt * RMSI_MULTI_U) {
            rmsi_mvec<T, VEC> xv[RMSI_MULTI_U], gv[RMSI_MULTI_U];
            rmsi_mvec_load_n2(xv, gv, p.x, p.x_ld, p.dy, p.dy_ld, row, i0, nt, nvec);
#pragma unroll
            for (int u = 0; u < RMSI_MULTI_U; u++) {
                const int64_t i = i0 + (int64_t)u * nt;
                if (i >= nvec)
                    break;
                float h[VEC], dy[VEC], wf[VEC], d[VEC], dr[VEC], acc[VEC];
                xv[u].get(h);
                gv[u].get(dy);
                rmsi_bwd_weff<W, VEC>(p, i * VEC, wf);
                if (p.dres)
                    rmsi_vec<T, VEC>::load(rmsi_crow<T>(p.dres, row, p.dres_ld) + i * VEC, dr);
                if (part && !first) {
                    rmsi_vec<float, VEC>::load(part + i * VEC, acc);
                } else {
#pragma unroll
                    for (int e = 0; e < VEC; e++)
                        acc[e] = 0.0f;
                }
#pragma unroll
                for (int e = 0; e < VEC; e++) {
                    const float n = h[e] * rs;
                    const float g = dy[e] * wf[e];
                    const float m = p.llama ? rmsi_elem<T>::round(n) : n;
                    d[e] = rs * (g - n * c);
                    acc[e] += dy[e] * m;
                }
                /* only a residual gradient is added: adding +0 would turn a -0
                 * dx into +0, which the reference keeps */
                if (p.dres) {
#pragma unroll
                    for (int e = 0; e < VEC; e++)
                        d[e] += dr[e];
                }
                rmsi_vec<T, VEC>::store(rmsi_row<T>(p.dx, row, p.dx_ld) + i * VEC, d);
                if (part)
                    rmsi_vec<float, VEC>::store(part + i * VEC, acc);
            }
        }
        first = false;
    }
    if (part && first) { /* a CTA that got no row still owns a (zero) partial */
        for (int64_t j = t; j < p.cols; j += nt)
            part[j] = 0.0f;
    }
}

/* dw[c] = sum over partial rows in a fixed order. A CTA is 32 columns x 32
 * slices; slice s sums rows s, s + 32, ..., then slice sums are added 0..31.
 * 32 slices (the CTA limit) and 8 loads in flight per thread, since this
 * kernel is latency-bound: at 16 slices ncu measured it at 4.1 us of a 47 us
 * 4096x4096 backward and 6.1 us of 460 at 32768x8192 (H200; the 32-slice
 * version was not timed alone). */
#define RMSI_DW_COLS 32
#define RMSI_DW_SLICES 32
__global__ void __launch_bounds__(RMSI_DW_COLS *RMSI_DW_SLICES)
    rmsi_dw_reduce(const float *ws, float *dw, int64_t parts, int64_t cols, int discard)
{
    RMSI_TLR_STAMP(RMSI_TLR_ENTRY);
    rmsi_pdl_wait(); /* the dependents' launch at exit (vendor.h) */
    RMSI_TLR_STAMP(RMSI_TLR_WAITED);
    __shared__ float sm[RMSI_DW_SLICES][RMSI_DW_COLS + 1];
    const int64_t c = (int64_t)blockIdx.x * RMSI_DW_COLS + threadIdx.x;
    float s = 0.0f;
    if (c < cols) {
#pragma unroll 8
        for (int64_t r = threadIdx.y; r < parts; r += RMSI_DW_SLICES)
            s = __fadd_rn(s, ws[r * cols + c]);
    }
    if (discard) {
        /* Each warp read whole 128-byte lines (32 columns of its slice's
         * partial rows) that no other thread reads. Once every lane has its
         * values (the adds above), lane k drops rows y + 32 k, ... from L2
         * unwritten: all lanes at once, since one lane dropping a warp's
         * eight lines in turn cost the reduction 0.27 us at 4096x4096 (S21-1). */
        rmsi_syncwarp();
        const float *line = ws + (int64_t)blockIdx.x * RMSI_DW_COLS;
        for (int64_t r = threadIdx.y + (int64_t)threadIdx.x * RMSI_DW_SLICES; r < parts;
             r += (int64_t)RMSI_DW_COLS * RMSI_DW_SLICES)
            rmsi_l2_discard128(line + r * cols);
    }
    sm[threadIdx.y][threadIdx.x] = s;
    __syncthreads();
    if (threadIdx.y == 0 && c < cols) {
        float tot = sm[0][threadIdx.x];
        for (int k = 1; k < RMSI_DW_SLICES; k++)
            tot = __fadd_rn(tot, sm[k][threadIdx.x]);
        dw[c] = tot;
    }
    RMSI_TLR_STAMP(RMSI_TLR_EXIT);
}

typedef void (*rmsi_bwd_kernel)(const rmsi_bwd_params);

/* A staged kernel: at cl = 2 the instance with the st.async cluster sum
 * (rmsi_bwd_push_sum; its own instance, so the others' code is unchanged). */
template <typename T, typename W, int NV, bool LEAN>
rmsi_bwd_kernel rmsi_bwd_staged(const rmsi_config *c)
{
    if constexpr (RMSI_HAVE_CLUSTER) {
        if (c->cl == 2)
            return rmsi_bwd_reg<T, W, NV, true, LEAN, true>;
    }
    return rmsi_bwd_reg<T, W, NV, true, LEAN>;
}

template <typename T, typename W>
rmsi_bwd_kernel rmsi_bwd_pick(const rmsi_config *c)
{
    if (c->path == RMSI_PATH_MULTI)
        return c->vec == 16 ? rmsi_bwd_multi<T, W, 16 / sizeof(T)> : rmsi_bwd_multi<T, W, 1>;
    switch (c->nv) {
    case 1: return c->stage ? nullptr : rmsi_bwd_reg<T, W, 1, false>;
    case 2:
        if constexpr (RMSI_HAVE_LEAN && !std::is_same<T, rmsi_f16>::value) {
            if (c->stage && c->lean)
                return rmsi_bwd_staged<T, W, 2, true>(c);
        }
        return c->stage ? rmsi_bwd_staged<T, W, 2, false>(c) : rmsi_bwd_reg<T, W, 2, false>;
    case 4: return c->stage ? rmsi_bwd_staged<T, W, 4, false>(c) : rmsi_bwd_reg<T, W, 4, false>;
    default: return nullptr;
    }
}

rmsi_bwd_kernel rmsi_bwd_kernel_for(int dtype, int wdtype, const rmsi_config *c)
{
    switch (dtype) {
    case RMSI_T_F32: return rmsi_bwd_pick<float, float>(c);
    case RMSI_T_F16:
        return wdtype == RMSI_T_F32 ? rmsi_bwd_pick<rmsi_f16, float>(c) : rmsi_bwd_pick<rmsi_f16, rmsi_f16>(c);
    case RMSI_T_BF16:
        return wdtype == RMSI_T_F32 ? rmsi_bwd_pick<rmsi_bf16, float>(c) : rmsi_bwd_pick<rmsi_bf16, rmsi_bf16>(c);
    default: return nullptr;
    }
}

} /* namespace */

/* Dynamic shared memory of a config: rmsi_bwd_reg's accumulators, always
 * reserved (also without dw) so that the occupancy, hence the persistent grid
 * and the partial count, depend on the shape alone. */
size_t rmsi_backward_smem(int dtype, const rmsi_config *c, int dres)
{
    if (c->path == RMSI_PATH_MULTI)
        return 0;
    return rmsi_bwd_reg_smem(c->tpr, c->rpc, c->nv, dtype == RMSI_T_F32 ? 4 : 2, RMSI_BWD_WSM, c->stage, dres);
}

/* Above the 48 KB every launch gets, static and dynamic together, a kernel
 * must opt in. The threshold leaves room for the static reduction scratch:
 * 48 KB of dynamic memory (4096 bf16 columns, 2 vectors, staged) failed to
 * launch unless an earlier, larger launch of the same kernel had opted in
 * (S4-6; test_regress keeps the case). The attribute is host-side and cheap
 * next to the launches that need it, which move tens of MB. */
#define RMSI_SMEM_DEFAULT (32 * 1024)

/* The opt-in is a per-kernel, per-device attribute, so it only ever rises,
 * under one lock, from a table of what each (kernel, device) was given: set
 * to each launch's own need, two host threads launching one kernel with
 * different needs could lower it under each other, and the larger launch
 * would fail. (Opting in once to the device's whole per-CTA limit fails:
 * the attribute counts dynamic memory only and the kernels have static
 * scratch, S9-6.) 35 backward kernels: the table holds them on 14 devices;
 * past that a launch that needs an opt-in fails with an error. */
#define RMSI_OPTIN_SLOTS 512
struct rmsi_optin_slot {
    rmsi_bwd_kernel k;
    int dev;
    size_t bytes;
};
static pthread_mutex_t rmsi_optin_lock = PTHREAD_MUTEX_INITIALIZER;
static rmsi_optin_slot rmsi_optin_tab[RMSI_OPTIN_SLOTS];
static int rmsi_optin_used;

static int rmsi_bwd_optin(rmsi_bwd_kernel k, size_t smem)
{
    int dev = 0;
    if (smem <= RMSI_SMEM_DEFAULT)
        return 0;
    if (rmsi_get_device(&dev) != RMSI_SUCCESS || pthread_mutex_lock(&rmsi_optin_lock) != 0)
        return -1;
    int i = 0;
    while (i < rmsi_optin_used && !(rmsi_optin_tab[i].k == k && rmsi_optin_tab[i].dev == dev))
        i++;
    int rc = 0;
    if (i == RMSI_OPTIN_SLOTS) {
        rc = -1;
    } else if (i == rmsi_optin_used || rmsi_optin_tab[i].bytes < smem) {
        if (rmsi_smem_optin(k, smem) != RMSI_SUCCESS) {
            rc = -1;
        } else {
            rmsi_optin_tab[i].k = k;
            rmsi_optin_tab[i].dev = dev;
            rmsi_optin_tab[i].bytes = smem;
            rmsi_optin_used += i == rmsi_optin_used;
        }
    }
    (void)pthread_mutex_unlock(&rmsi_optin_lock);
    return rc;
}

/* The dynamic shared memory a launch takes: the config's, or more (smem_launch). */
static size_t rmsi_bwd_launch_smem(int dtype, const rmsi_config *c, int dres, size_t smem_launch)
{
    const size_t smem = rmsi_backward_smem(dtype, c, dres);
    return smem_launch > smem ? smem_launch : smem;
}

int rmsi_launch_backward(const rmsi_bwd_params *p, int dtype, int wdtype, const rmsi_config *c,
                         int64_t grid, void *stream, int pdl, size_t smem_launch)
{
    rmsi_bwd_kernel k = rmsi_bwd_kernel_for(dtype, wdtype, c);
    rmsi_bwd_params q = *p;
    if (!k || grid < 1 || grid > 0x7fffffff)
        return -1;
    q.cache = rmsi_cache_bits(c->cache);
    const size_t smem = rmsi_bwd_launch_smem(dtype, c, p->dres != nullptr, smem_launch);
    if (rmsi_bwd_optin(k, smem) != 0)
        return -1;
    dim3 block((unsigned)c->tpr, c->path == RMSI_PATH_MULTI ? 1u : (unsigned)c->rpc, 1u);
    q.cl = c->path == RMSI_PATH_MULTI ? 1 : c->cl;
    if (q.cl < 1 || q.cl > 8 || grid % q.cl != 0)
        return -1;
    return rmsi_launch_kc(k, dim3((unsigned)grid, 1u, 1u), block, smem, (rmsi_stream_t)stream, pdl, q.cl, q) ==
                   RMSI_SUCCESS
               ? 0
               : -1;
}

int rmsi_launch_dw_reduce(const float *ws, float *dw, int64_t parts, int64_t cols, void *stream, int pdl,
                          int discard)
{
    const int64_t grid = (cols + RMSI_DW_COLS - 1) / RMSI_DW_COLS;
    /* A warp's 32 columns of a partial row are one 128-byte line of the
     * workspace, and no more, only when the rows start on 128 bytes. */
    static_assert(RMSI_DW_COLS * sizeof(float) == 128, "a warp's columns are one L2 line");
#if RMSI_HAVE_L2_DISCARD
    discard = discard && cols % RMSI_DW_COLS == 0 && ((uintptr_t)ws & 127u) == 0;
#else
    discard = 0;
#endif
    if (grid < 1 || grid > 0x7fffffff)
        return -1;
    return rmsi_launch_k(rmsi_dw_reduce, dim3((unsigned)grid, 1u, 1u), dim3(RMSI_DW_COLS, RMSI_DW_SLICES, 1u), 0,
                         (rmsi_stream_t)stream, pdl, ws, dw, parts, cols, discard) == RMSI_SUCCESS
               ? 0
               : -1;
}

int rmsi_backward_occupancy(int dtype, int wdtype, int dres, const rmsi_config *c, size_t smem_launch, int *ctas)
{
    rmsi_bwd_kernel k = rmsi_bwd_kernel_for(dtype, wdtype, c);
    int threads = c->tpr * (c->path == RMSI_PATH_MULTI ? 1 : c->rpc);
    *ctas = 0;
    const size_t smem = rmsi_bwd_launch_smem(dtype, c, dres, smem_launch);
    if (!k || rmsi_bwd_optin(k, smem) != 0)
        return -1;
    return rmsi_occupancy(ctas, k, threads, smem) == RMSI_SUCCESS ? 0 : -1;
}
