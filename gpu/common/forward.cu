/*
 * Forward kernels (plain, fused residual add, fp8 per-tensor / per-token /
 * 1x128 per-block quantisation), written once for CUDA and HIP.
 *
 * Two paths, chosen by the host ladder (gpu/cuda/ladder.cc):
 *
 * rmsi_fwd_reg: the row lives in registers. A row group of tpr threads owns a
 *   row; thread t holds the 16-byte vectors t, t + tpr, ..., t + (NV-1)*tpr, so
 *   each load instruction of a warp covers 512 contiguous bytes (coalesced) and
 *   all NV loads of a thread are issued before the first use (NV * 16 bytes in
 *   flight per thread). Every input byte is read once and every output byte
 *   written once: the HBM minimum. Inputs stay packed until used, so a thread
 *   needs 4 registers per vector plus VEC floats per vector of the row.
 *   The 1x128 block of the block quantiser is 128/VEC consecutive vectors, i.e.
 *   128/VEC consecutive lanes of one k (the ladder keeps tpr a multiple of it),
 *   so the block amax is a shuffle reduction over those lanes: no shared memory.
 *   CL instances (config cl > 1, sm_90+): a row too wide for one CTA's
 *   registers is split into cl contiguous slices, one per CTA of a thread
 *   block cluster, whose sums meet through distributed shared memory
 *   (reduce.h rmsi_cluster_reduce); still one read of every input byte.
 *
 * rmsi_fwd_multi: one CTA per row, passes over global memory (sum of squares,
 *   then [amax,] normalise and store). Any width (no cap on cols), any base
 *   alignment and stride (VEC = 1: one element per access), at the price of
 *   re-reading the row (from L2 while the row is hot; the cache knob asks L2
 *   to keep it until the last pass). The block quantiser gives each warp
 *   whole 128-column blocks.
 *
 * rmsi_fwd_lean (CUDA): rmsi_fwd_multi's passes without fp8 output (or with
 *   the 1x128 block quantiser's, 16-bit rows), at 32 registers so that two
 *   CTAs of 1024 threads fit an SM, one row a CTA from a grid covering the
 *   rows: the ladder's kernel for wide 16-bit rows.
 *
 * Aliasing (y == x, h == residual, h == x): the reg path reads every input of a
 * row before writing any output. The multi path re-reads h from h_out once it
 * was stored (a residual stored in place no longer holds the residual), and a
 * barrier separates the first pass's h stores from the later reads.
 */
#include <cmath>

#include "gpu/common/device_math.h"
#include "gpu/common/reduce.h"

namespace {

/* Occupancy is the latency hiding of these kernels: a row's loads are all
 * issued before its reduction, and the bytes in flight per SM are (resident
 * threads) x NV x 16 (x2 with a residual). Registers per thread are capped
 * per NV (CUDA; 65536 / cap threads resident per SM), at the lowest counts
 * ptxas compiles without spilling for every type pair (the SASS gate checks).
 * Without a residual (R = false; a separate instantiation, since the
 * residual's vectors are live together with x's): NV = 1 -> 40, 2 -> 40,
 * 4 -> 40 (48 with fp32 weights next to 16-bit activations: two weight
 * chunks a vector; 2 -> 56 too, since the 1- and 2-vector configs hold the
 * weights with the row), 8 -> 72, the fp8 variants 48/56/64/112 (64 at 2
 * with fp32 weights: they too hold the weights with the row). With one:
 * 40/48 (56 wide)/64/128, fp8 48/64/96/144. 4 vectors with the weights
 * loaded with the row (WL): 64 (80 wide), with a residual 80 (112 wide); 56
 * spilled. CTAs have at most RMSI_REG_MAXT threads.
 * History (docs/perf/h200.md): a persistent CTA caching the weights and the
 * next row in registers (86-182 registers, one CTA per SM) reached 60-64% at
 * 32768x8192 bf16; capped at 64 registers, 300.6 us; the residual-free
 * instantiation at 48, 288.7 us; with the pair-rounding instructions
 * (device_math.h), 258.9 us, after which 40 registers gave no more; the
 * weights with the row at 64 registers (fewer CTAs, one latency a row),
 * 258.3 us (session 6). */
#define RMSI_FWD_REGS_RES(nv, q, wide) \
    ((nv) == 1 ? ((q) ? 48 : 40) \
               : ((nv) == 2 ? ((q) ? 64 : ((wide) ? 56 : 48)) : ((nv) == 4 ? ((q) ? 96 : 64) : ((q) ? 144 : 128))))
#define RMSI_FWD_REGS_PLAIN(nv, q, wide) \
    ((nv) == 1 ? ((q) ? 48 : 40) \
               : ((nv) == 2 ? ((q) ? ((wide) ? 64 : 56) : ((wide) ? 56 : 40)) \
                            : ((nv) == 4 ? ((q) ? 64 : ((wide) ? 48 : 40)) : ((q) ? 112 : 72))))
#define RMSI_FWD_REGS(nv, q, r, wide) ((r) ? RMSI_FWD_REGS_RES(nv, q, wide) : RMSI_FWD_REGS_PLAIN(nv, q, wide))
/* 4 vectors with the weights loaded with the row (WL, config stage = 1):
 * 4 (8 wide) more 16-byte registers a thread live across the reduction. */
#define RMSI_FWD_REGS_WL(r, wide) ((r) ? ((wide) ? 112 : 80) : ((wide) ? 80 : 64))

/* The weight vector i (WCH 16-byte chunks) through the read-only path. */
template <typename T, typename W>
__device__ __forceinline__ void rmsi_fwd_wload(const rmsi_fwd_params &p, int i, uint4 *wa)
{
    constexpr int VEC = 16 / (int)sizeof(T);
    constexpr int WCH = rmsi_wchunks<T, W>::n;
    const uint4 *wv = reinterpret_cast<const uint4 *>(reinterpret_cast<const W *>(p.w) + (int64_t)i * VEC);
#pragma unroll
    for (int c = 0; c < WCH; c++)
        wa[c] = rmsi_ld_const(wv + c);
}

/* What a forward body tests per element or per access: the rounding of n
 * (ROUND_LLAMA, LL), whether there is a weight (HW) and the streaming-hint
 * bits (CA). A constant where the kernel branched on it once (rmsi_fwd_reg),
 * -1 where it is read from the parameters. */
template <int LL, int HW, int CA = -1> struct rmsi_fflags {
    static __device__ __forceinline__ bool llama(const rmsi_fwd_params &p) { return LL < 0 ? p.llama != 0 : LL != 0; }
    static __device__ __forceinline__ bool hasw(const rmsi_fwd_params &p) { return HW < 0 ? p.w != nullptr : HW != 0; }
    static __device__ __forceinline__ int cache(const rmsi_fwd_params &p) { return CA < 0 ? p.cache : CA; }
};
typedef rmsi_fflags<-1, -1> rmsi_fflags_rt;

/* y = n * weff of vector k (VEC floats), n = h * rstd [rounded]. The weight
 * vector is read here, per row, through the read-only path: every CTA of an SM
 * reads the same weight row, so it is an L1 hit, and no register holds it
 * across the row. wpre: the chunks already loaded (the 1- and 2-vector
 * kernels issue them with the row, see rmsi_fwd_reg), or NULL. */
template <typename T, typename W, typename F>
__device__ __forceinline__ void rmsi_fwd_value(const rmsi_fwd_params &p, uint4 h, int i, float rs, float *v,
                                               const uint4 *wpre)
{
    constexpr int VEC = 16 / (int)sizeof(T);
    constexpr int WCH = rmsi_wchunks<T, W>::n;
    rmsi_unpack16<T>(h, v);
    float wf[VEC];
    if (F::hasw(p)) {
        uint4 wa[WCH];
        if (wpre) {
#pragma unroll
            for (int c = 0; c < WCH; c++)
                wa[c] = wpre[c];
        } else {
            rmsi_fwd_wload<T, W>(p, i, wa);
        }
        rmsi_weff_unpack<T, W>(wa, p.w_off, wf);
    }
#pragma unroll
    for (int e = 0; e < VEC; e++) {
        float n = v[e] * rs;
        if (F::llama(p))
            n = rmsi_elem<T>::round(n);
        v[e] = F::hasw(p) ? n * wf[e] : n;
    }
}

/* A vector of FMUL or FADD results packed without the NaN probe
 * (rmsi_pack16_prod) where PROD, else with it (rmsi_pack16): the same bits
 * either way; the register path packs without it at 1-2 vectors a thread
 * only (see y in rmsi_fwd_reg_body). */
template <typename T, bool PROD> __device__ __forceinline__ uint4 rmsi_fwd_pack(const float *v)
{
    return PROD ? rmsi_pack16_prod<T>(v) : rmsi_pack16<T>(v);
}

template <typename T, typename W, int NV, bool Q, bool R, bool WL, typename F, bool ONE, bool CL>
__device__ __forceinline__ void rmsi_fwd_reg_body(const rmsi_fwd_params &p, float *red)
{
    constexpr int VEC = 16 / (int)sizeof(T);
    constexpr int L = 128 / VEC; /* lanes per 1x128 quant block */
    const int t = (int)threadIdx.x;
    const int tpr = (int)blockDim.x;
    /* CL (cls > 0): a row is split over a cluster of 2^cls CTAs (one row a
     * CTA), CTA `rank` holding its vectors [v0, v0 + nvec); the row pointers
     * and weight, scale and code indices below are offset by v0. A separate
     * instantiation: the offsets cost the others registers under their caps. */
    const int cls = CL ? p.cls : 0;
    const int nvec = (int)(p.cols / VEC) >> cls; /* <= NV * tpr on this path */
    const int v0 = cls ? (rmsi_ctaid_x() & ((1 << cls) - 1)) * nvec : 0;
    float(*xs)[RMSI_MAX_CLUSTER] = reinterpret_cast<float(*)[RMSI_MAX_CLUSTER]>(red + RMSI_MAX_WARPS);
    int ph = -1; /* rmsi_cluster_reduce: the entry arrival not yet waited on */
    if (cls)
        rmsi_cluster_arrive_relaxed();
    const float s_tensor = (Q && p.quant == RMSI_Q_TENSOR) ? p.scale[0] : 1.0f;
    const int64_t step = (int64_t)(gridDim.x >> cls) * blockDim.y;

    /* The loop bound is uniform over the CTA (and the cluster): every thread
     * reaches the reductions' barriers, live row or not. ONE: the grid
     * covers the rows (the ladder's cps = 0), and the increment ends the loop
     * where the compiler can see it. */
    for (int64_t base = (int64_t)(blockIdx.x >> cls) * blockDim.y; base < p.rows;
         base = ONE ? p.rows : base + step) {
        const int64_t row = base + threadIdx.y;
        const bool live = row < p.rows;
        const int64_t r = live ? row : 0; /* row pointers are formed, never used, past the rows */
        uint4 xa[NV];
        rmsi_load_vecs<NV>(reinterpret_cast<const uint4 *>(rmsi_crow<T>(p.x, r, p.x_ld)) + v0, live, t, tpr, nvec,
                          F::cache(p) & RMSI_CACHE_LD, xa);

        /* h = round(x + r), kept packed in xa: one add, one rounding, bit-exact */
        if (R) {
            uint4 ra[NV];
            rmsi_load_vecs<NV>(reinterpret_cast<const uint4 *>(rmsi_crow<T>(p.res, r, p.res_ld)) + v0, live, t, tpr,
                              nvec, F::cache(p) & RMSI_CACHE_LD, ra);
#pragma unroll
            for (int k = 0; k < NV; k++) {
                float a[VEC], b[VEC];
                rmsi_unpack16<T>(xa[k], a);
                rmsi_unpack16<T>(ra[k], b);
#pragma unroll
                for (int e = 0; e < VEC; e++)
                    a[e] = __fadd_rn(a[e], b[e]);
                xa[k] = rmsi_fwd_pack<T, NV <= 2>(a);
            }
            if (p.h) {
                uint4 *hr = reinterpret_cast<uint4 *>(rmsi_row<T>(p.h, r, p.h_ld)) + v0;
#pragma unroll
                for (int k = 0; k < NV; k++) {
                    const int i = t + k * tpr;
                    if (live && i < nvec)
                        rmsi_st16(hr + i, xa[k], F::cache(p) & RMSI_CACHE_ST);
                }
            }
        }

        /* WP: the weights are loaded with the row instead of after its
         * reduction, so a row pays one memory latency, not two: at 1-2
         * vectors a thread (fp8 output too on CUDA: within the same register
         * caps, 0-1.2% faster at the fused fp8 shapes of S7-3), and at 4 where the
         * config asks for it (WL, stage = 1: 16 more registers, so fewer
         * CTAs fit; faster at every 4-vector shape measured in S6-2). Not
         * for fp8 output at 4 vectors: pinned there it was slower (S7-2,
         * quant-block 32768x8192 402.7 -> 443.0 us at 80 registers), and
         * an L1 prefetch of the weights was slower everywhere (session 5).
         * With fp8 output a dead vector's weights are zero: the block
         * quantiser computes it for its shuffles, and stores nothing of it;
         * the other outputs skip it. */
        constexpr bool WP = (NV <= 2 && (!Q || RMSI_FP8_WEIGHTS_WITH_ROW)) || WL;
        constexpr int WCH = rmsi_wchunks<T, W>::n;
        uint4 wpa[WP ? NV : 1][WCH];
        if (WP && F::hasw(p)) {
#pragma unroll
            for (int k = 0; k < NV; k++) {
                const int i = t + k * tpr;
                if (live && i < nvec) {
                    rmsi_fwd_wload<T, W>(p, v0 + i, wpa[k]);
                } else if (Q) {
#pragma unroll
                    for (int c = 0; c < WCH; c++)
                        wpa[k][c] = make_uint4(0u, 0u, 0u, 0u);
                }
            }
        }

        float ss = 0.0f;
#pragma unroll
        for (int k = 0; k < NV; k++) {
            float a[VEC];
            rmsi_unpack16<T>(xa[k], a);
#pragma unroll
            for (int e = 0; e < VEC; e++)
                ss += a[e] * a[e];
        }
        ss = rmsi_row_reduce(ss, red, rmsi_op_sum());
        if (cls)
            ss = rmsi_cluster_reduce(ss, xs, cls, ph, rmsi_op_sum());
        const float rs = rmsi_d_rstd(ss, p.cols, p.eps);
        if (p.rstd && live && t == 0 && v0 == 0)
            p.rstd[row] = rs;

        float s_row = s_tensor;
        if (Q && p.quant == RMSI_Q_TOKEN) {
            float amax = 0.0f;
#pragma unroll
            for (int k = 0; k < NV; k++) {
                const int i = t + k * tpr;
                if (!(live && i < nvec))
                    continue;
                float v[VEC];
                rmsi_fwd_value<T, W, F>(p, xa[k], v0 + i, rs, v, WP ? wpa[WP ? k : 0] : nullptr);
#pragma unroll
                for (int e = 0; e < VEC; e++)
                    amax = fmaxf(amax, fabsf(v[e]));
            }
            amax = rmsi_row_reduce(amax, red, rmsi_op_max());
            if (cls)
                amax = rmsi_cluster_reduce(amax, xs, cls, ph, rmsi_op_max());
            s_row = rmsi_d_dynamic_scale(amax, p.scale_ub, p.fmax, p.s_min, p.pow2);
            if (live && t == 0 && v0 == 0)
                p.scale[row] = s_row;
        }

        uint4 *yr = p.y ? reinterpret_cast<uint4 *>(rmsi_row<T>(p.y, r, p.y_ld)) + v0 : nullptr;
        /* y = n [* w] is an FMUL's (and h above an FADD's): packed without
         * the NaN probe (rmsi_pack16_prod) at 1-2 vectors a thread (S27-2:
         * forward 32x4096 2.10 -> 2.06 us, 256x4096 3.02 -> 2.95; add +
         * block fp8 32768x8192 522.1 -> 514.7). Not at 4-8: there the plain
         * forward's big rows lost (S27-1: 32768x8192 255.1 -> 257.3 us,
         * 65536x4096 254.5 -> 256.1), nor in the fp8 kernels without a
         * residual, which spilled 2-41 bytes under their register caps
         * (gpu/sass_gate.sh) */
        constexpr bool YP = NV <= 2 && (!Q || R);
        /* CUDA's block quantiser takes every vector's values and amax
         * first, then the NV block amax butterflies side by side, then the
         * scales and codes; in the loop below each vector's shuffles and
         * scale wait on the previous vector's (quant-block 32768x8192 390.7
         * -> 377.9 us, S11-4). HIP keeps that loop: holding every vector's
         * values cost VGPRs there, hence waves (docs/perf/amd-isa.md). The
         * shuffles need every lane of a block, live or not. */
        if constexpr (Q && RMSI_QUANT_BLOCK_BATCHED) {
            if (p.quant == RMSI_Q_BLOCK) {
                float v[NV][VEC], am[NV];
#pragma unroll
                for (int k = 0; k < NV; k++) {
                    const int i = t + k * tpr;
                    const bool on = live && i < nvec;
                    rmsi_fwd_value<T, W, F>(p, xa[k], v0 + (on ? i : 0), rs, v[k], WP ? wpa[WP ? k : 0] : nullptr);
                    if (yr && on)
                        rmsi_st16(yr + i, rmsi_fwd_pack<T, YP>(v[k]), F::cache(p) & RMSI_CACHE_ST);
                    am[k] = 0.0f;
#pragma unroll
                    for (int e = 0; e < VEC; e++)
                        am[k] = fmaxf(am[k], fabsf(v[k][e]));
                }
                rmsi_warp_reduce_n<NV>(am, L, rmsi_op_max());
#pragma unroll
                for (int k = 0; k < NV; k++) {
                    const int i = t + k * tpr;
                    if (!(live && i < nvec))
                        continue;
                    const float s = rmsi_d_dynamic_scale(am[k], 0.0f, p.fmax, p.s_min, p.pow2);
                    if ((t % L) == 0)
                        rmsi_st_scale(p.scale + (int64_t)((v0 + i) / L) * p.scale_ld + row, s);
                    /* 1 / s: see the comment on the loop below */
                    rmsi_fp8_quant<VEC>(v[k], s, true, p.fp8,
                                        rmsi_row<uint8_t>(p.q, r, p.q_ld) + (int64_t)(v0 + i) * VEC);
                }
                continue;
            }
        }
        /* the block quantiser here too where the vendor has no path above
         * (compiled out where it has: it cost the path above registers) */
        const bool qblock = Q && !RMSI_QUANT_BLOCK_BATCHED && p.quant == RMSI_Q_BLOCK;
#pragma unroll
        for (int k = 0; k < NV; k++) {
            const int i = t + k * tpr;
            const bool on = live && i < nvec;
            /* The block quantiser's shuffles need every lane of a block, live
             * or not; without them a dead vector is skipped outright. */
            if (!qblock && !on)
                continue;
            float v[VEC];
            rmsi_fwd_value<T, W, F>(p, xa[k], v0 + (on ? i : 0), rs, v, WP ? wpa[WP ? k : 0] : nullptr);
            if (yr && on)
                rmsi_st16(yr + i, rmsi_fwd_pack<T, YP>(v), F::cache(p) & RMSI_CACHE_ST);
            if (Q && p.quant != RMSI_Q_NONE) {
                float s = s_row;
                if (qblock) {
                    float amax = 0.0f;
#pragma unroll
                    for (int e = 0; e < VEC; e++)
                        amax = fmaxf(amax, fabsf(v[e]));
                    amax = rmsi_warp_reduce(amax, L, rmsi_op_max());
                    s = rmsi_d_dynamic_scale(amax, 0.0f, p.fmax, p.s_min, p.pow2);
                    if (on && (t % L) == 0)
                        rmsi_st_scale(p.scale + (int64_t)((v0 + i) / L) * p.scale_ld + row, s);
                }
                /* A dynamic scale is >= 1 / (fmax * 512): its reciprocal is
                 * finite, and v * (1 / s) is within an fp32 ulp of v / s, so
                 * the code is within the one-code bound of docs/numerics.md
                 * (exact for power-of-two scales). A static scale may be
                 * tiny: divided, as the reference. */
                if (on)
                    rmsi_fp8_quant<VEC>(v, s, p.quant != RMSI_Q_TENSOR, p.fp8,
                                        rmsi_row<uint8_t>(p.q, r, p.q_ld) + (int64_t)(v0 + i) * VEC);
            }
        }
    }
}

/* Which body a launch takes. The plain forward of 16-bit rows (no residual,
 * no fp8 output) branches once on ROUND_LLAMA and on the weight into four
 * bodies where both are constants, so that no element tests them; at 1-2
 * vectors a thread, where the grid covers the rows (ONE: the ladder's
 * cps = 0) and no streaming hints are pinned, those bodies have no row loop
 * and no cache-knob tests either (docs/perf/h200.md, S14: at 512 bf16 columns
 * a row is latency-bound at about 200 instructions a warp, and the loop and
 * these tests were about a third of them). At 4 vectors the four bodies keep
 * the loop and the cache tests, and the other ops, fp32 rows and 8 vectors
 * take one body that reads all three at run time: one-pass bodies at 4
 * vectors and for the other ops made ptxas hoist their weight loads and spill
 * under the register caps, and four bodies cost the fp32 and 8-vector kernels
 * an occupancy step on gfx942 (docs/perf/amd-isa.md). */
template <typename T, typename W, int NV, bool Q, bool R, bool WL, bool ONE, bool CL>
__device__ __forceinline__ void rmsi_fwd_reg_plain(const rmsi_fwd_params &p, float *red)
{
    if (p.llama) {
        if (p.w)
            rmsi_fwd_reg_body<T, W, NV, Q, R, WL, rmsi_fflags<1, 1, ONE ? 0 : -1>, ONE, CL>(p, red);
        else
            rmsi_fwd_reg_body<T, W, NV, Q, R, WL, rmsi_fflags<1, 0, ONE ? 0 : -1>, ONE, CL>(p, red);
    } else {
        if (p.w)
            rmsi_fwd_reg_body<T, W, NV, Q, R, WL, rmsi_fflags<0, 1, ONE ? 0 : -1>, ONE, CL>(p, red);
        else
            rmsi_fwd_reg_body<T, W, NV, Q, R, WL, rmsi_fflags<0, 0, ONE ? 0 : -1>, ONE, CL>(p, red);
    }
}

/* CL: the cluster-split instantiation (rmsi_fwd_reg_body), built for sm_90
 * and later only (launched nowhere else: rmsi_shape.cluster), with more
 * registers than the others' caps: 8 (16 with fp8 output, and at 4 vectors
 * without the weights with the row, where 8 spilled 2-12 bytes). 2 and 4
 * vectors only: at 8 the caps would not leave 512 threads room (a residual's
 * 128 + 16 registers), and 8 CTAs of 512 x 8 vectors (262144 bf16 columns)
 * were 8% slower than the multi-pass kernel (S23-1). */
#define RMSI_FWD_REGS_CL(cl, nv, q, wl) ((cl) ? (((nv) >= 4 && !(wl)) || (q) ? 16 : 8) : 0)
template <typename T, typename W, int NV, bool Q, bool R, bool WL, bool CL>
__global__ void RMSI_KERNEL_REGS(RMSI_REG_MAXT, (WL ? RMSI_FWD_REGS_WL(R, sizeof(W) > sizeof(T))
                                                    : RMSI_FWD_REGS(NV, Q, R, sizeof(W) > sizeof(T))) +
                                                    RMSI_FWD_REGS_CL(CL, NV, Q, WL))
    rmsi_fwd_reg(const rmsi_fwd_params p)
{
    rmsi_pdl_enter();
    /* the row reduction's scratch, then (CL) the cluster sum's two slot sets */
    __shared__ float red[RMSI_MAX_WARPS + (CL ? 2 * RMSI_MAX_CLUSTER : 0)];
    if constexpr (CL) {
#if RMSI_HAVE_CLUSTER && (!defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 900)
        if constexpr (!Q && !R && NV <= 4 && sizeof(T) == 2)
            rmsi_fwd_reg_plain<T, W, NV, Q, R, WL, false, true>(p, red);
        else
            rmsi_fwd_reg_body<T, W, NV, Q, R, WL, rmsi_fflags_rt, false, true>(p, red);
#endif
        return;
    }
    if constexpr (!Q && !R && NV <= 4 && sizeof(T) == 2) {
        if constexpr (NV > 2) {
            rmsi_fwd_reg_plain<T, W, NV, Q, R, WL, false, false>(p, red);
            return;
        } else if ((int64_t)gridDim.x * blockDim.y >= p.rows && p.cache == 0) {
            rmsi_fwd_reg_plain<T, W, NV, Q, R, WL, true, false>(p, red);
            return;
        }
    }
    rmsi_fwd_reg_body<T, W, NV, Q, R, WL, rmsi_fflags_rt, false, false>(p, red);
}

/* h of element group i (VEC elements) in the passes after the first. */
template <typename T, int VEC>
__device__ __forceinline__ void rmsi_fwd_load_h(const rmsi_fwd_params &p, int64_t row, int64_t j, float *h)
{
    if (p.h) {
        rmsi_vec<T, VEC>::load(rmsi_crow<T>(p.h, row, p.h_ld) + j, h);
        return;
    }
    rmsi_vec<T, VEC>::load(rmsi_crow<T>(p.x, row, p.x_ld) + j, h);
    if (p.res) {
        float r[VEC];
        rmsi_vec<T, VEC>::load(rmsi_crow<T>(p.res, row, p.res_ld) + j, r);
#pragma unroll
        for (int e = 0; e < VEC; e++)
            h[e] = rmsi_elem<T>::round(__fadd_rn(h[e], r[e]));
    }
}

template <typename T, typename W, int VEC>
__device__ __forceinline__ void rmsi_fwd_normalise(const rmsi_fwd_params &p, int64_t j, float rs, float *v)
{
    float wf[VEC];
    if (p.w) {
        rmsi_vec<W, VEC>::load(reinterpret_cast<const W *>(p.w) + j, wf);
    } else {
#pragma unroll
        for (int e = 0; e < VEC; e++)
            wf[e] = 1.0f;
    }
#pragma unroll
    for (int e = 0; e < VEC; e++) {
        float n = v[e] * rs;
        if (p.llama)
            n = rmsi_elem<T>::round(n);
        v[e] = p.w ? n * (wf[e] + p.w_off) : n;
    }
}

/* h's vector i in the passes after the first (rmsi_fwd_load_h's sources),
 * packed until used: h_out once stored, else x (+ the residual). */
template <typename T, int VEC> struct rmsi_fwd_mh {
    rmsi_mvec<T, VEC> a, b;
    __device__ __forceinline__ void load(const rmsi_fwd_params &p, int64_t row, int64_t i, int64_t nvec,
                                         uint64_t pol)
    {
        if (p.h) {
            a.load_pol(p.h, row, p.h_ld, i, nvec, pol);
            return;
        }
        a.load_pol(p.x, row, p.x_ld, i, nvec, pol);
        if (p.res)
            b.load_pol(p.res, row, p.res_ld, i, nvec, pol);
    }
    __device__ __forceinline__ void get(const rmsi_fwd_params &p, float *h) const
    {
        a.get(h);
        if (!p.h && p.res) {
            float r[VEC];
            b.get(r);
#pragma unroll
            for (int e = 0; e < VEC; e++)
                h[e] = rmsi_elem<T>::round(__fadd_rn(h[e], r[e]));
        }
    }
    /* vector i normalised (rmsi_fwd_normalise) into v; false past the row */
    template <typename W>
    __device__ __forceinline__ bool normalised(const rmsi_fwd_params &p, int64_t i, int64_t nvec, float rs,
                                               float *v) const
    {
        if (i >= nvec)
            return false;
        get(p, v);
        rmsi_fwd_normalise<T, W, VEC>(p, i * VEC, rs, v);
        return true;
    }
};

template <typename T, int VEC, int N>
__device__ __forceinline__ void rmsi_fwd_mh_load_n(rmsi_fwd_mh<T, VEC> (&v)[N], const rmsi_fwd_params &p, int64_t row,
                                                   int64_t i0, int nt, int64_t nvec, uint64_t pol)
{
#pragma unroll
    for (int u = 0; u < N; u++)
        v[u].load(p, row, i0 + (int64_t)u * nt, nvec, pol);
}

template <typename T, typename W, int VEC>
__global__ void __launch_bounds__(RMSI_MAX_THREADS, 1) rmsi_fwd_multi(const rmsi_fwd_params p)
{
    rmsi_pdl_enter();
    __shared__ float red[RMSI_MAX_WARPS];
    const int t = (int)threadIdx.x;
    const int nt = (int)blockDim.x;
    const int64_t nvec = p.cols / VEC;
    const float s_tensor = p.quant == RMSI_Q_TENSOR ? p.scale[0] : 1.0f;
    /* cache & LD (16-byte path): the passes before the last keep the row in
     * L2 (evict last) for the re-reads, the last read lets it go (evict
     * first); cache & ST: y stores stream. */
    const bool l2 = (p.cache & RMSI_CACHE_LD) != 0;
    const uint64_t pol_keep = rmsi_l2_policy(l2 ? RMSI_L2_LAST : RMSI_L2_NORMAL);
    const uint64_t pol_last = rmsi_l2_policy(l2 ? RMSI_L2_FIRST : RMSI_L2_NORMAL);

    for (int64_t row = blockIdx.x; row < p.rows; row += gridDim.x) {
        float ss = 0.0f;
        for (int64_t i0 = t; i0 < nvec; i0 += (int64_t)nt * RMSI_MULTI_U) {
            rmsi_mvec<T, VEC> xv[RMSI_MULTI_U], rv[RMSI_MULTI_U];
#pragma unroll
            for (int u = 0; u < RMSI_MULTI_U; u++) {
                xv[u].load_pol(p.x, row, p.x_ld, i0 + (int64_t)u * nt, nvec, pol_keep);
                if (p.res)
                    rv[u].load_pol(p.res, row, p.res_ld, i0 + (int64_t)u * nt, nvec, pol_keep);
            }
            /* vectors past the row hold +0: they add nothing, and the order
             * (t, t + nt, ...) is the unbatched loop's */
#pragma unroll
            for (int u = 0; u < RMSI_MULTI_U; u++) {
                float h[VEC];
                xv[u].get(h);
                if (p.res) {
                    float r[VEC];
                    rv[u].get(r);
#pragma unroll
                    for (int e = 0; e < VEC; e++)
                        h[e] = rmsi_elem<T>::round(__fadd_rn(h[e], r[e]));
                    const int64_t i = i0 + (int64_t)u * nt;
                    if (p.h && i < nvec)
                        rmsi_vec<T, VEC>::store(rmsi_row<T>(p.h, row, p.h_ld) + i * VEC, h);
                }
#pragma unroll
                for (int e = 0; e < VEC; e++)
                    ss += h[e] * h[e];
            }
        }
        ss = rmsi_row_reduce(ss, red, rmsi_op_sum());
        if (p.h)
            __syncthreads(); /* h stores visible before other threads re-read them */
        const float rs = rmsi_d_rstd(ss, p.cols, p.eps);
        if (p.rstd && t == 0)
            p.rstd[row] = rs;

        if (p.quant == RMSI_Q_BLOCK) {
            /* Each warp takes whole blocks; lane l holds columns l, l + WARP, ... */
            constexpr int PER = 128 / RMSI_WARP;
            const int lane = t % RMSI_WARP;
            const int nw = nt / RMSI_WARP;
            for (int64_t b = t / RMSI_WARP; b < p.cols / 128; b += nw) {
                float v[PER];
                float amax = 0.0f;
#pragma unroll
                for (int m = 0; m < PER; m++) {
                    const int64_t j = b * 128 + lane + m * RMSI_WARP;
                    rmsi_fwd_load_h<T, 1>(p, row, j, &v[m]);
                    rmsi_fwd_normalise<T, W, 1>(p, j, rs, &v[m]);
                    amax = fmaxf(amax, fabsf(v[m]));
                }
                amax = rmsi_warp_reduce(amax, RMSI_WARP, rmsi_op_max());
                const float s = rmsi_d_dynamic_scale(amax, 0.0f, p.fmax, p.s_min, p.pow2);
                if (lane == 0)
                    rmsi_st_scale(p.scale + b * p.scale_ld + row, s);
#pragma unroll
                for (int m = 0; m < PER; m++) {
                    const int64_t j = b * 128 + lane + m * RMSI_WARP;
                    if (p.y)
                        rmsi_elem<T>::store(rmsi_row<T>(p.y, row, p.y_ld) + j, v[m]);
                    rmsi_row<uint8_t>(p.q, row, p.q_ld)[j] =
                        (uint8_t)rmsi_fp8_encode(__fdiv_rn(v[m], s), p.fp8);
                }
            }
            continue;
        }

        float s = s_tensor;
        if (p.quant == RMSI_Q_TOKEN) {
            float amax = 0.0f;
            for (int64_t i0 = t; i0 < nvec; i0 += (int64_t)nt * RMSI_MULTI_U) {
                rmsi_fwd_mh<T, VEC> hv[RMSI_MULTI_U];
                rmsi_fwd_mh_load_n(hv, p, row, i0, nt, nvec, pol_keep);
#pragma unroll
                for (int u = 0; u < RMSI_MULTI_U; u++) {
                    float v[VEC];
                    if (!hv[u].template normalised<W>(p, i0 + (int64_t)u * nt, nvec, rs, v))
                        break;
#pragma unroll
                    for (int e = 0; e < VEC; e++)
                        amax = fmaxf(amax, fabsf(v[e]));
                }
            }
            amax = rmsi_row_reduce(amax, red, rmsi_op_max());
            s = rmsi_d_dynamic_scale(amax, p.scale_ub, p.fmax, p.s_min, p.pow2);
            if (t == 0)
                p.scale[row] = s;
        }
        for (int64_t i0 = t; i0 < nvec; i0 += (int64_t)nt * RMSI_MULTI_U) {
            rmsi_fwd_mh<T, VEC> hv[RMSI_MULTI_U];
            rmsi_fwd_mh_load_n(hv, p, row, i0, nt, nvec, pol_last);
#pragma unroll
            for (int u = 0; u < RMSI_MULTI_U; u++) {
                const int64_t i = i0 + (int64_t)u * nt;
                float v[VEC];
                if (!hv[u].template normalised<W>(p, i, nvec, rs, v))
                    break;
                if (p.y) {
                    T *yr = rmsi_row<T>(p.y, row, p.y_ld) + i * VEC;
                    if constexpr (VEC * sizeof(T) == 16) {
                        if (p.cache & RMSI_CACHE_ST)
                            rmsi_st_stream(reinterpret_cast<uint4 *>(yr), rmsi_pack16<T>(v));
                        else
                            rmsi_vec<T, VEC>::store(yr, v);
                    } else {
                        rmsi_vec<T, VEC>::store(yr, v);
                    }
                }
                if (p.quant != RMSI_Q_NONE)
                    rmsi_fp8_quant<VEC>(v, s, false, p.fp8, rmsi_row<uint8_t>(p.q, row, p.q_ld) + i * VEC);
            }
        }
        /* The next row's first-pass h stores must not overtake this row's reads
         * of the shared-memory reduction slots: row_reduce ends with a barrier. */
    }
}

#if RMSI_WARP == 32
/* rmsi_fwd_lean (config path = multi, vec = 16, lean = 1; CUDA): the
 * multi-pass forward without fp8 output (Q = false) or with the block
 * quantiser's (Q, 16-bit rows: RMSI_LEAN_Q), at most 32 registers so that two
 * CTAs of RMSI_MAX_THREADS fit an SM, one row a CTA, the grid covering the
 * rows (ladder.cc rmsi_config_grid). It keeps rmsi_fwd_multi's passes, L2
 * hints and sum order (vectors t, t + nt, ... of a thread) with 32-bit
 * indices (config_valid: nvec < 2^31) and the residual a template argument:
 * the general kernel at 32 registers spilled (S24). The first pass reads x
 * (+ residual, storing h), the second h (x + residual again where h is not
 * stored) and writes y.
 *
 * Its rows come in three forms (rmsi_fwd_lean_rows' M). RMSI_LEAN_W is the
 * common call: a weight, ROUND_ONCE, h stored where there is a residual.
 * Its second pass computes y = (h * rstd) * (w + w_off), the
 * operations and order of rmsi_fwd_normalise, with the weights loaded beside
 * h and y packed without the NaN probe (rmsi_pack16_prod). RMSI_LEAN_WL is
 * the same call with ROUND_LLAMA on 16-bit rows: h * rstd rounded by the
 * pair instructions (rmsi_round_prod). RMSI_LEAN_ANY takes every other call
 * and tests the flags per vector. RMSI_LEAN_Q is any call with the block
 * quantiser's output (rmsi_lean_quant). Both passes step
 * over U whole vectors without bounds tests, then over the last ones alone:
 * the flag tests, the weights of 1.0 made for the weightless case, the probe
 * and the per-vector bounds and zero fills were half of the kernel's issued
 * instructions (ncu, S25-5: twice torch.compile's kernel's at the same
 * bytes). */
enum { RMSI_LEAN_ANY = 0, RMSI_LEAN_W = 1, RMSI_LEAN_WL = 2, RMSI_LEAN_Q = 3 };

/* h = x (+ the residual where res, rounded to T as the reference does: the
 * sum is an FADD, so the pair instructions round it exactly, NaN included;
 * rmsi_round_prod). */
template <typename T, bool R>
__device__ __forceinline__ void rmsi_lean_h(uint4 x, uint4 r, bool res, float *h)
{
    constexpr int VEC = 16 / sizeof(T);
    rmsi_unpack16<T>(x, h);
    if constexpr (R) {
        if (res) {
            float rf[VEC];
            rmsi_unpack16<T>(r, rf);
#pragma unroll
            for (int e = 0; e < VEC; e++)
                h[e] = __fadd_rn(h[e], rf[e]);
            rmsi_round_prod<T, VEC>(h);
        }
    }
}

/* N vectors i, i + nt, ... of a row (all inside it) and, where res, of the
 * residual, all issued before use. */
template <bool R, int N>
__device__ __forceinline__ void rmsi_lean_load(uint4 (&xv)[N], uint4 (&rv)[N], const uint4 *xr, const uint4 *rr,
                                               bool res, int i, int nt, uint64_t pol, int l1)
{
#pragma unroll
    for (int u = 0; u < N; u++) {
        xv[u] = rmsi_ld_policy_l1(xr + i + u * nt, pol, l1);
        if constexpr (R)
            rv[u] = res ? rmsi_ld_policy_l1(rr + i + u * nt, pol, l1) : make_uint4(0u, 0u, 0u, 0u);
    }
}

/* The first pass over N vectors i, i + nt, ... (all inside the row): x (+
 * the residual) loaded, h stored where hr, h's squares added to ss in
 * vector order. */
template <typename T, bool R, bool L1, int N>
__device__ __forceinline__ void rmsi_lean_sum(const uint4 *xr, const uint4 *rr, uint4 *hr, int i, int nt,
                                              uint64_t pol, int l1, float &ss)
{
    constexpr int VEC = 16 / sizeof(T);
    uint4 xv[N], rv[N];
    rmsi_lean_load<R, N>(xv, rv, xr, rr, true, i, nt, pol, l1);
#pragma unroll
    for (int u = 0; u < N; u++) {
        float h[VEC];
        rmsi_lean_h<T, R>(xv[u], rv[u], true, h);
        if (R && hr) {
            if (L1)
                rmsi_st_l1_last(hr + i + u * nt, rmsi_pack16_prod<T>(h));
            else
                hr[i + u * nt] = rmsi_pack16_prod<T>(h);
        }
#pragma unroll
        for (int e = 0; e < VEC; e++)
            ss += h[e] * h[e];
    }
}

/* RMSI_LEAN_W's second pass over N vectors i, i + nt, ...: h (x where there
 * is no residual) and the weights loaded, y stored (streaming where st: the
 * ladder's lean rows ask for it, and S26-3 measured plain stores 3.5%
 * slower on the fused add at 32768x8192). */
template <typename T, typename W, bool LL, int N>
__device__ __forceinline__ void rmsi_lean_norm_w(const uint4 *sr, const uint4 *wr, uint4 *yr, int i, int nt,
                                                 float rs, float off, bool st, uint64_t pol, int l1)
{
    constexpr int VEC = 16 / sizeof(T);
    constexpr int WC = rmsi_wchunks<T, W>::n;
    uint4 hv[N], wv[N][WC];
#pragma unroll
    for (int u = 0; u < N; u++) {
        hv[u] = rmsi_ld_policy_l1(sr + i + u * nt, pol, l1);
#pragma unroll
        for (int c = 0; c < WC; c++)
            wv[u][c] = rmsi_ld_const(wr + (i + u * nt) * WC + c);
    }
#pragma unroll
    for (int u = 0; u < N; u++) {
        float v[VEC], wf[VEC];
        rmsi_unpack16<T>(hv[u], v);
        rmsi_weff_unpack<T, W>(wv[u], off, wf);
#pragma unroll
        for (int e = 0; e < VEC; e++)
            v[e] *= rs;
        if constexpr (LL)
            rmsi_round_prod<T, VEC>(v);
#pragma unroll
        for (int e = 0; e < VEC; e++)
            v[e] *= wf[e];
        rmsi_st16(yr + i + u * nt, rmsi_pack16_prod<T>(v), st);
    }
}

/* RMSI_LEAN_ANY's second pass over N vectors i, i + nt, ... (h, or x and
 * the residual where res), the flags read per vector. */
template <typename T, typename W, bool R, int N>
__device__ __forceinline__ void rmsi_lean_norm_any(const rmsi_fwd_params &p, const uint4 *sr, const uint4 *rr,
                                                   uint4 *yr, bool res, int i, int nt, float rs, uint64_t pol,
                                                   int l1)
{
    constexpr int VEC = 16 / sizeof(T);
    uint4 xv[N], rv[N];
    rmsi_lean_load<R, N>(xv, rv, sr, rr, res, i, nt, pol, l1);
#pragma unroll
    for (int u = 0; u < N; u++) {
        float v[VEC];
        rmsi_lean_h<T, R>(xv[u], rv[u], res, v);
        rmsi_fwd_normalise<T, W, VEC>(p, (int64_t)(i + u * nt) * VEC, rs, v);
        rmsi_st16(yr + i + u * nt, rmsi_pack16<T>(v), p.cache & RMSI_CACHE_ST);
    }
}

/* Each 1x128 block's amax from its L lanes' own (the lanes of gm), N
 * vectors at once: butterflies over the block's lanes only. */
template <int L, int N>
__device__ __forceinline__ void rmsi_block_amax(float (&am)[N], unsigned gm)
{
#pragma unroll
    for (int m = L / 2; m > 0; m >>= 1) {
#pragma unroll
        for (int u = 0; u < N; u++)
            am[u] = fmaxf(am[u], __shfl_xor_sync(gm, am[u], m));
    }
}

/* RMSI_LEAN_Q's second pass (1x128 block fp8 output, 16-bit rows) over N
 * vectors i, i + nt, ...: y as rmsi_lean_norm_any's (stored where asked),
 * then each block's amax, scale and codes as rmsi_fwd_reg's batched
 * quantiser computes them. A block is L = 128 / VEC consecutive vectors,
 * so L consecutive lanes (nt is a multiple of 64); cols is a multiple of
 * 128, so a block's lanes are all inside the row or all past it, and the
 * butterflies name only the lanes of their own block: the two half warps
 * of a warp may leave a step loop apart. */
template <typename T, typename W, bool R, int N>
__device__ __forceinline__ void rmsi_lean_quant(const rmsi_fwd_params &p, const uint4 *sr, const uint4 *rr,
                                                uint4 *yr, uint8_t *qr, int64_t row, bool res, int i, int nt,
                                                float rs, uint64_t pol, int l1)
{
    constexpr int VEC = 16 / sizeof(T);
    constexpr int L = 128 / VEC;
    static_assert(L <= RMSI_WARP, "a 1x128 block within a warp");
    const unsigned gm = (L == 32 ? 0xffffffffu : (1u << L) - 1u) << ((rmsi_tid_x() % RMSI_WARP) & ~(L - 1));
    uint4 xv[N], rv[N];
    rmsi_lean_load<R, N>(xv, rv, sr, rr, res, i, nt, pol, l1);
    float v[N][VEC], am[N];
#pragma unroll
    for (int u = 0; u < N; u++) {
        rmsi_lean_h<T, R>(xv[u], rv[u], res, v[u]);
        rmsi_fwd_normalise<T, W, VEC>(p, (int64_t)(i + u * nt) * VEC, rs, v[u]);
        if (yr)
            rmsi_st16(yr + i + u * nt, rmsi_pack16_prod<T>(v[u]), p.cache & RMSI_CACHE_ST);
        am[u] = 0.0f;
#pragma unroll
        for (int e = 0; e < VEC; e++)
            am[u] = fmaxf(am[u], fabsf(v[u][e]));
    }
    rmsi_block_amax<L, N>(am, gm);
#pragma unroll
    for (int u = 0; u < N; u++) {
        const int j = i + u * nt;
        const float sc = rmsi_d_dynamic_scale(am[u], 0.0f, p.fmax, p.s_min, p.pow2);
        if (j % L == 0)
            rmsi_st_scale(p.scale + (int64_t)(j / L) * p.scale_ld + row, sc);
        rmsi_fp8_quant<VEC, true>(v[u], sc, true, p.fp8, qr + (int64_t)j * VEC);
    }
}

/* The E4M3 codes of a vector's v * inv by the pair instructions (FMUL
 * results: no NaN probe, rmsi_fp8_hw_pack's prod), stored at q. */
template <int VEC>
__device__ __forceinline__ void rmsi_lean_codes(const float (&v)[VEC], float inv, uint8_t *q)
{
    uint32_t w[VEC / 4];
#pragma unroll
    for (int k = 0; k < VEC / 4; k++)
        w[k] = rmsi_hw_fp8x4<false>(v[4 * k] * inv, v[4 * k + 1] * inv, v[4 * k + 2] * inv, v[4 * k + 3] * inv);
    rmsi_store_codes<VEC>(q, w);
}

/* RMSI_LEAN_Q's common call, E4M3 codes with a weight and ROUND_ONCE, over
 * N vectors i, i + nt, ... of h (or x): rmsi_lean_quant's operations in its
 * order, with rmsi_lean_norm_w's normalisation (the weights loaded beside
 * h), the scale's slot and the lane that stores it worked out once a row
 * (sp, lead: nt is a multiple of L, so i % L is the thread's lane in its
 * block), and the E4M3 pair codes of FMUL results without the NaN probe
 * (rmsi_fp8_hw_pack's prod). The general pass tested ROUND_LLAMA around
 * each element, the weight and the format per vector, and worked out the
 * scale's int64 index per vector: 200 issued instructions a thread's
 * vector where the kernel is bound by issue (ncu, S34-4, block fp8 without
 * y at 32768x8192: DRAM at 62%). With this form 165 (S35-2: DRAM at 71%,
 * 260.4 -> 232.8 us; S35-1, alternated twice: 65536x4096 279.1 -> 247.6,
 * with y 32768x8192 358.6 -> 348.1). The 32-register kernel, which holds
 * both forms, spills 88 bytes instead of 80 (bf16) and was faster too
 * (S35-1: 2112x8192 24.96 -> 23.47). */
#if RMSI_HAVE_HW_FP8X4
/* Two blocks' amax (vectors 0 and 1 of each lane of gm's L lanes, a whole
 * converged warp) reduced and scattered: the lanes of the block's lower
 * half end with vector 0's block amax, the upper half with vector 1's. The
 * first step sends the vector the lane gives up and keeps the other, so
 * the two reductions take L/2's step together and every later step once:
 * 1 + log2(L / 2) shuffles instead of 2 log2(L), and each lane then works
 * out one scale and one reciprocal instead of two. max is exact and the
 * lanes' values are never NaN (fmaxf from +0 drops them), so the same bits
 * as rmsi_block_amax. */
template <int L>
__device__ __forceinline__ float rmsi_block_amax2(const float (&am)[2], bool hi)
{
    float a = fmaxf(hi ? am[1] : am[0], __shfl_xor_sync(0xffffffffu, hi ? am[0] : am[1], L / 2));
#pragma unroll
    for (int m = L / 4; m > 0; m >>= 1)
        a = fmaxf(a, __shfl_xor_sync(0xffffffffu, a, m));
    return a;
}

/* The weights of a vector plus w_off == 0 where Z: the pair instruction
 * adds +0 (a 16-bit x + 0 is exact, -0 becomes +0, as the FADD of
 * rmsi_weff_unpack does it; a NaN stays a NaN, whose products are the
 * canonical NaN either way: test_math checks every 16-bit weight). Half the
 * adds of a vector. */
template <typename T, typename W, bool Z>
__device__ __forceinline__ void rmsi_weff_unpack_z(const uint4 *wa, float off, float *wf)
{
    if constexpr (Z && sizeof(W) == 2) {
        uint4 z = wa[0];
        z.x = rmsi_add0x2<W>(z.x);
        z.y = rmsi_add0x2<W>(z.y);
        z.z = rmsi_add0x2<W>(z.z);
        z.w = rmsi_add0x2<W>(z.w);
        rmsi_unpack16<W>(z, wf);
    } else {
        rmsi_weff_unpack<T, W>(wa, off, wf);
    }
}

/* RMSI_LEAN_Q's common call, E4M3 codes with a weight and ROUND_ONCE, over
 * N vectors i, i + nt, ... of h (or x): rmsi_lean_quant's operations in its
 * order, with rmsi_lean_norm_w's normalisation (the weights loaded beside
 * h), the scale's slot worked out once a row (sp: nt is a multiple of L, so
 * i % L is the thread's lane in its block), and the E4M3 pair codes of FMUL
 * results without the NaN probe (rmsi_fp8_hw_pack's prod). The general pass
 * tested ROUND_LLAMA around each element, the weight and the format per
 * vector, and worked out the scale's int64 index per vector: 200 issued
 * instructions a thread's vector where the kernel is bound by issue (ncu,
 * S34-4, block fp8 without y at 32768x8192: DRAM at 62%). With this form 165
 * (S35-2: DRAM at 71%, 260.4 -> 232.8 us; S35-1, alternated twice:
 * 65536x4096 279.1 -> 247.6, with y 32768x8192 358.6 -> 348.1). The
 * 32-register kernel, which holds both forms, spills 88 bytes instead of 80
 * (bf16) and was faster too (S35-1: 2112x8192 24.96 -> 23.47).
 * S2 (N == 2 with the whole warp in the step): the two blocks' amax by
 * rmsi_block_amax2, one scale a lane (stored by the first lane of each half
 * block), the other's reciprocal by one more shuffle. Else each lane's
 * blocks by rmsi_block_amax over gm (the lane that stores: lead). */
template <typename T, typename W, int N, bool S2, bool Z>
__device__ __forceinline__ void rmsi_lean_quant_w(const uint4 *sr, const uint4 *wr, uint4 *yr, uint8_t *qr,
                                                  float *sp, int64_t sld, unsigned gm, bool lead, unsigned i,
                                                  unsigned nt, float rs, float off, bool st,
                                                  const rmsi_fwd_params &p, uint64_t pol, int l1)
{
    constexpr int VEC = 16 / sizeof(T);
    constexpr int L = 128 / VEC;
    constexpr int WC = rmsi_wchunks<T, W>::n;
    static_assert(L <= RMSI_WARP, "a 1x128 block within a warp");
    static_assert(!S2 || N == 2, "the split amax pairs two vectors");
    uint4 hv[N], wv[N][WC];
#pragma unroll
    for (int u = 0; u < N; u++) {
        hv[u] = rmsi_ld_policy_l1(sr + (i + u * nt), pol, l1);
#pragma unroll
        for (int c = 0; c < WC; c++)
            wv[u][c] = rmsi_ld_const(wr + (i + u * nt) * WC + c);
    }
    float v[N][VEC], am[N];
#pragma unroll
    for (int u = 0; u < N; u++) {
        float wf[VEC];
        rmsi_unpack16<T>(hv[u], v[u]);
        rmsi_weff_unpack_z<T, W, Z>(wv[u], off, wf);
        am[u] = 0.0f;
#pragma unroll
        for (int e = 0; e < VEC; e++) {
            v[u][e] = (v[u][e] * rs) * wf[e];
            am[u] = fmaxf(am[u], fabsf(v[u][e]));
        }
        if (yr)
            rmsi_st16(yr + (i + u * nt), rmsi_pack16_prod<T>(v[u]), st);
    }
    if constexpr (S2) {
        const bool hi = (i & (L / 2)) != 0;
        const float sc = rmsi_d_dynamic_scale(rmsi_block_amax2<L>(am, hi), 0.0f, p.fmax, p.s_min, p.pow2);
        if (i % (L / 2) == 0)
            /* a plain store: block fp8 without y, the one call this pairing
             * serves, was 0.3% slower at 4096x8192 with rmsi_st_scale and
             * level at 32768x8192 (S45-3, H100) */
            sp[(int64_t)((i + (hi ? nt : 0u)) / L) * sld] = sc;
        const float mine = rmsi_d_scale_recip(sc);
        const float other = __shfl_xor_sync(0xffffffffu, mine, L / 2);
        rmsi_lean_codes<VEC>(v[0], hi ? other : mine, qr + (size_t)i * VEC);
        rmsi_lean_codes<VEC>(v[1], hi ? mine : other, qr + (size_t)(i + nt) * VEC);
    } else {
        rmsi_block_amax<L, N>(am, gm);
#pragma unroll
        for (int u = 0; u < N; u++) {
            const unsigned j = i + u * nt;
            const float sc = rmsi_d_dynamic_scale(am[u], 0.0f, p.fmax, p.s_min, p.pow2);
            if (lead)
                rmsi_st_scale(sp + (int64_t)(j / L) * sld, sc);
            rmsi_lean_codes<VEC>(v[u], rmsi_d_scale_recip(sc), qr + (size_t)j * VEC);
        }
    }
}

/* The second pass of block fp8 without y (and without a residual), with a
 * weight, w_off 0, ROUND_ONCE and E4M3 (rmsi_fwd_lean_rq's and
 * rmsi_fwd_lean's S kernels, which the host launches for that call only):
 * the steps that the whole warp takes (its last lane inside the row: cols
 * is a multiple of 128, so a warp can straddle the row's end by a half)
 * pair their blocks' amax (rmsi_block_amax2), the weights + 0 by the pair
 * instruction, no y stores compiled in; the rest, one vector a step, reduce
 * over their own block's lanes. A step of two vectors is 196 SASS
 * instructions against 267 (sm_90a, bf16); ncu (S36-3, 32768x8192): 146
 * issued a thread's vector against 165, DRAM at 73% against 71%; 3.6-11%
 * faster (S36-3, alternated twice: 233.7 -> 225.2 us, 528x8192 8.10 ->
 * 7.19). Built into the with-y and fused add kernels (their own loops
 * unchanged), it made those 0.7-2.1% slower (S36-1, S36-2): so the S
 * kernels are its own, and the others compile as before (252 of 256
 * SASS-identical to session 35's on sm_90a, the other four differing in the
 * registers of one step's last five instructions; S36-3 timed them level). */
template <typename T, typename W>
__device__ __forceinline__ void rmsi_lean_quant_paired(const uint4 *sr, const uint4 *wr, uint8_t *qr, float *sp,
                                                       int i, int nt, int nvec, float rs, const rmsi_fwd_params &p,
                                                       uint64_t pol, int l1)
{
    constexpr int VEC = 16 / sizeof(T);
    constexpr int L = 128 / VEC;
    const unsigned gm = (L == 32 ? 0xffffffffu : (1u << L) - 1u) << ((i % RMSI_WARP) & ~(L - 1));
    const bool lead = i % L == 0;
    const bool st = (p.cache & RMSI_CACHE_ST) != 0;
    const int last = (i | (RMSI_WARP - 1)) - i; /* to the warp's last lane */
    if constexpr (RMSI_MULTI_U == 2) {
        for (; i + last + nt < nvec; i += 2 * nt)
            rmsi_lean_quant_w<T, W, 2, true, true>(sr, wr, nullptr, qr, sp, p.scale_ld, gm, lead, i, nt, rs, 0.0f,
                                                   st, p, pol, l1);
    }
    for (; i < nvec; i += nt)
        rmsi_lean_quant_w<T, W, 1, false, true>(sr, wr, nullptr, qr, sp, p.scale_ld, gm, lead, i, nt, rs, 0.0f, st,
                                                p, pol, l1);
}
#endif

/* The row's rstd from each thread's partial sum of squares: the warps'
 * sums as rmsi_row_reduce adds them (same order, same bits), but only warp
 * 0 adds them up and computes rstd (a division, a square root and a
 * reciprocal, each correctly rounded: some 40 instructions) and stores it
 * (and the row's rstd output); the other warps read it back after a barrier.
 * rmsi_row_reduce had every warp do both, which at two vectors a thread
 * (8192 columns, 512 threads) was an eighth of the kernel's instructions.
 * red: RMSI_MAX_WARPS + 1 floats. Two barriers, the second of which also
 * orders the first pass's h stores before the second pass's reads. */
__device__ __forceinline__ float rmsi_lean_rstd(float ss, float *red, const rmsi_fwd_params &p, int64_t row)
{
    const int nt = (int)blockDim.x;
    if (nt <= RMSI_WARP) {
        const float rs = rmsi_d_rstd(rmsi_warp_reduce(ss, nt, rmsi_op_sum()), p.cols, p.eps);
        if (p.rstd && rmsi_tid_x() == 0)
            p.rstd[row] = rs;
        __syncthreads(); /* h stores before the second pass's reads */
        return rs;
    }
    ss = rmsi_warp_reduce(ss, RMSI_WARP, rmsi_op_sum());
    const int tx = rmsi_tid_x();
    const int lane = tx % RMSI_WARP;
    if (lane == 0)
        red[tx / RMSI_WARP] = ss;
    __syncthreads();
    if (tx < RMSI_WARP) {
        float r = lane < nt / RMSI_WARP ? red[lane] : -0.0f;
        r = rmsi_warp_reduce(r, RMSI_WARP, rmsi_op_sum());
        if (lane == 0) {
            const float rs = rmsi_d_rstd(r, p.cols, p.eps);
            red[RMSI_MAX_WARPS] = rs;
            if (p.rstd)
                p.rstd[row] = rs;
        }
    }
    __syncthreads();
    /* the next row writes red[RMSI_MAX_WARPS] only after its first barrier,
     * which every warp reaches after this read */
    return red[RMSI_MAX_WARPS];
}

template <typename T, typename W, bool R, bool L1, int M, bool HS = false, bool S = false>
__device__ __forceinline__ void rmsi_fwd_lean_rows(const rmsi_fwd_params &p, float *red)
{
    constexpr int VEC = 16 / sizeof(T);
    constexpr int U = RMSI_MULTI_U;
    const int t = (int)threadIdx.x;
    const int nt = (int)blockDim.x;
    const int nvec = (int)(p.cols / VEC);
    const bool l2 = (p.cache & RMSI_CACHE_LD) != 0;
    const uint64_t pol_keep = rmsi_l2_policy(l2 ? RMSI_L2_LAST : RMSI_L2_NORMAL);
    const uint64_t pol_last = rmsi_l2_policy(l2 ? RMSI_L2_FIRST : RMSI_L2_NORMAL);
    /* L1 (cache knob bit 4): the second pass's bytes kept in L1 from the
     * first, as the row is re-read by the CTA that read it: x itself, or h
     * where the fused add stores it (x and the residual are then dead; the
     * ladder asks for it with a residual only where h_out is given) */
    const int l1_keep = L1 ? (R ? RMSI_L1_FIRST : RMSI_L1_LAST) : RMSI_L1_NORMAL;
    const int l1_last = L1 ? RMSI_L1_FIRST : RMSI_L1_NORMAL;
    const uint4 *wr = reinterpret_cast<const uint4 *>(p.w);

    for (int64_t row = blockIdx.x; row < p.rows; row += gridDim.x) {
        const uint4 *xr = reinterpret_cast<const uint4 *>(rmsi_crow<T>(p.x, row, p.x_ld));
        const uint4 *rr = R ? reinterpret_cast<const uint4 *>(rmsi_crow<T>(p.res, row, p.res_ld)) : nullptr;
        uint4 *hr = R && p.h ? reinterpret_cast<uint4 *>(rmsi_row<T>(p.h, row, p.h_ld)) : nullptr;
        float ss = 0.0f;
        int i = t;
        for (; i + (U - 1) * nt < nvec; i += U * nt)
            rmsi_lean_sum<T, R, L1, U>(xr, rr, hr, i, nt, pol_keep, l1_keep, ss);
        for (; i < nvec; i += nt)
            rmsi_lean_sum<T, R, L1, 1>(xr, rr, hr, i, nt, pol_keep, l1_keep, ss);
        const float rs = rmsi_lean_rstd(ss, red, p, row);
        const uint4 *sr = hr ? hr : xr;
        /* y is optional with fp8 output only */
        uint4 *yr = M == RMSI_LEAN_Q && !p.y ? nullptr : reinterpret_cast<uint4 *>(rmsi_row<T>(p.y, row, p.y_ld));
        i = t;
        if constexpr (M == RMSI_LEAN_Q) {
            uint8_t *qr = rmsi_row<uint8_t>(p.q, row, p.q_ld);
            /* HS: where h_out holds h the second pass reads h alone, an
             * instantiation without the residual's loads: with them in the
             * same loop rmsi_fwd_lean_rq spilled 8-28 bytes at its 48
             * registers (sm_90a). rmsi_fwd_lean keeps its one loop, as
             * measured. */
#if RMSI_HAVE_HW_FP8X4
            /* the host launches S for this call only (w_off +0 by its bits) */
            if (S && !R && p.w && !p.llama && p.fp8 == RMSI_FP8_E4M3 && !yr && p.w_off == 0.0f) {
                rmsi_lean_quant_paired<T, W>(sr, wr, qr, p.scale + row, i, nt, nvec, rs, p, pol_last, l1_last);
            } else if (!S && p.w && !p.llama && p.fp8 == RMSI_FP8_E4M3 && (!R || (HS && hr))) {
                constexpr int L = 128 / VEC;
                float *sp = p.scale + row;
                const unsigned gm = (L == 32 ? 0xffffffffu : (1u << L) - 1u) << ((t % RMSI_WARP) & ~(L - 1));
                const bool lead = t % L == 0;
                const bool st = (p.cache & RMSI_CACHE_ST) != 0;
                for (; i + (U - 1) * nt < nvec; i += U * nt)
                    rmsi_lean_quant_w<T, W, U, false, false>(sr, wr, yr, qr, sp, p.scale_ld, gm, lead, i, nt, rs,
                                                             p.w_off, st, p, pol_last, l1_last);
                for (; i < nvec; i += nt)
                    rmsi_lean_quant_w<T, W, 1, false, false>(sr, wr, yr, qr, sp, p.scale_ld, gm, lead, i, nt, rs,
                                                             p.w_off, st, p, pol_last, l1_last);
            } else
#endif
            if (!R || (HS && hr)) {
                for (; i + (U - 1) * nt < nvec; i += U * nt)
                    rmsi_lean_quant<T, W, false, U>(p, sr, nullptr, yr, qr, row, false, i, nt, rs, pol_last, l1_last);
                for (; i < nvec; i += nt)
                    rmsi_lean_quant<T, W, false, 1>(p, sr, nullptr, yr, qr, row, false, i, nt, rs, pol_last, l1_last);
            } else {
                for (; i + (U - 1) * nt < nvec; i += U * nt)
                    rmsi_lean_quant<T, W, R, U>(p, sr, rr, yr, qr, row, !hr, i, nt, rs, pol_last, l1_last);
                for (; i < nvec; i += nt)
                    rmsi_lean_quant<T, W, R, 1>(p, sr, rr, yr, qr, row, !hr, i, nt, rs, pol_last, l1_last);
            }
        } else if constexpr (M == RMSI_LEAN_ANY) {
            for (; i + (U - 1) * nt < nvec; i += U * nt)
                rmsi_lean_norm_any<T, W, R, U>(p, sr, rr, yr, !hr, i, nt, rs, pol_last, l1_last);
            for (; i < nvec; i += nt)
                rmsi_lean_norm_any<T, W, R, 1>(p, sr, rr, yr, !hr, i, nt, rs, pol_last, l1_last);
        } else {
            constexpr bool LL = M == RMSI_LEAN_WL;
            const bool st = (p.cache & RMSI_CACHE_ST) != 0;
            for (; i + (U - 1) * nt < nvec; i += U * nt)
                rmsi_lean_norm_w<T, W, LL, U>(sr, wr, yr, i, nt, rs, p.w_off, st, pol_last, l1_last);
            for (; i < nvec; i += nt)
                rmsi_lean_norm_w<T, W, LL, 1>(sr, wr, yr, i, nt, rs, p.w_off, st, pol_last, l1_last);
        }
        /* red: the next row writes it after its own first barrier only */
    }
}

/* S: the kernel of block fp8 without y and with w_off 0 (rmsi_launch_forward
 * picks it; rmsi_lean_quant_paired), same resources. */
template <typename T, typename W, bool R, bool L1, bool Q = false, bool S = false>
__global__ void __launch_bounds__(RMSI_MAX_THREADS, 2) rmsi_fwd_lean(const rmsi_fwd_params p)
{
    __shared__ float red[RMSI_MAX_WARPS + 1];
    rmsi_pdl_enter();
    if constexpr (Q) /* 1x128 block fp8 output (rmsi_config_valid: 16-bit rows) */
        rmsi_fwd_lean_rows<T, W, R, L1, RMSI_LEAN_Q, false, S>(p, red);
    else if (!p.w || (R && !p.h))
        rmsi_fwd_lean_rows<T, W, R, L1, RMSI_LEAN_ANY>(p, red);
    else if (p.llama && sizeof(T) == 2)
        rmsi_fwd_lean_rows<T, W, R, L1, RMSI_LEAN_WL>(p, red);
    else
        rmsi_fwd_lean_rows<T, W, R, L1, RMSI_LEAN_W>(p, red);
}

/* The block quantiser at 48 registers: under rmsi_fwd_lean's 32 its second
 * pass spilled 112-128 bytes with a residual and 64-80 without (sm_90a),
 * and with a residual the lean kernel lost to the register path at every
 * register width (S27-2: add + block 32768x8192 665-834 us against 514.7).
 * At 48, with the second pass reading h alone where h_out holds it,
 * nothing spills, and five CTAs of 256 threads fit an SM (S33-1: add +
 * block fp8 with y 32768x8192 624.5 -> 596.5 us at 256 threads, without y
 * 514.4 -> 448.5). 40 registers spilled 16-40 bytes and were slower
 * (S33-2: 627.6 and 655.2 at 256 and 128 threads). With a residual it is
 * the kernel at CTAs of up to 256 threads (rmsi_fwd_pick): at 48
 * registers a CTA of 1024 has an SM to itself, and the wider rows that the
 * ladder gives 512 or 1024 threads were measured on the 32-register kernel
 * above. Without one it is a knob (lean = 2): at 256 threads the 32
 * registers' eight CTAs an SM won over the 48's five at some widths
 * (S33-2, block fp8 32768x5120 204.9 against 225.2 us), 48 at 128 threads
 * at others (65536x4096 280.3 against the ladder's 329.5). */
#define RMSI_LEAN_RQ_REGS 48
template <typename T, typename W, bool R, bool L1, bool S = false>
__global__ void RMSI_KERNEL_REGS(RMSI_MAX_THREADS, RMSI_LEAN_RQ_REGS) rmsi_fwd_lean_rq(const rmsi_fwd_params p)
{
    __shared__ float red[RMSI_MAX_WARPS + 1];
    rmsi_pdl_enter();
    rmsi_fwd_lean_rows<T, W, R, L1, RMSI_LEAN_Q, true, S>(p, red);
}
#endif

typedef void (*rmsi_fwd_kernel)(const rmsi_fwd_params);

template <typename T, typename W, bool Q, bool R, bool CL>
rmsi_fwd_kernel rmsi_fwd_reg_nv(int nv, int wl)
{
    if (wl) /* weights with the row: 4 vectors without fp8 output only */
        return nv == 4 && !Q ? rmsi_fwd_reg<T, W, 4, Q, R, !Q, CL> : nullptr;
    switch (nv) {
    case 1: return CL ? nullptr : rmsi_fwd_reg<T, W, 1, Q, R, false, false>; /* split rows: 2 or 4 vectors */
    case 2: return rmsi_fwd_reg<T, W, 2, Q, R, false, CL>;
    case 4: return rmsi_fwd_reg<T, W, 4, Q, R, false, CL>;
    case 8: return CL ? nullptr : rmsi_fwd_reg<T, W, 8, Q, R, false, false>;
    default: return nullptr;
    }
}

template <typename T, typename W, bool CL>
rmsi_fwd_kernel rmsi_fwd_pick_reg(const rmsi_config *c, bool q, bool r)
{
    if (q)
        return r ? rmsi_fwd_reg_nv<T, W, true, true, CL>(c->nv, c->stage)
                 : rmsi_fwd_reg_nv<T, W, true, false, CL>(c->nv, c->stage);
    return r ? rmsi_fwd_reg_nv<T, W, false, true, CL>(c->nv, c->stage)
             : rmsi_fwd_reg_nv<T, W, false, false, CL>(c->nv, c->stage);
}

#if RMSI_WARP == 32
/* The lean block quantiser: the 48-register kernel (rq) or the 32-register
 * one, with or without a residual; without one, the paired kernel where s. */
template <typename T, typename W, bool L1>
rmsi_fwd_kernel rmsi_fwd_pick_lean_q(bool r, bool rq, bool s)
{
    if (rq)
        return r ? rmsi_fwd_lean_rq<T, W, true, L1>
                 : (s ? rmsi_fwd_lean_rq<T, W, false, L1, true> : rmsi_fwd_lean_rq<T, W, false, L1>);
    return r ? rmsi_fwd_lean<T, W, true, L1, true>
             : (s ? rmsi_fwd_lean<T, W, false, L1, true, true> : rmsi_fwd_lean<T, W, false, L1, true>);
}
#endif

template <typename T, typename W>
rmsi_fwd_kernel rmsi_fwd_pick(const rmsi_config *c, bool q, bool r, bool s)
{
    (void)s; /* the lean block quantiser's only (16-bit rows, 32-lane warps) */
    if (c->path == RMSI_PATH_MULTI) {
        if (c->lean) {
#if RMSI_WARP == 32
            if (c->vec == 16 && !q && (c->cache & RMSI_CACHE_KNOB_L1))
                return r ? rmsi_fwd_lean<T, W, true, true> : rmsi_fwd_lean<T, W, false, true>;
            if (c->vec == 16 && !q)
                return r ? rmsi_fwd_lean<T, W, true, false> : rmsi_fwd_lean<T, W, false, false>;
            if constexpr (sizeof(T) == 2) {
                /* the 48-register kernel: with a residual where CTAs are of
                 * 256 threads or fewer, the rows it was measured at;
                 * without one where lean = 2 asks (rmsi_config_valid: 256
                 * threads or fewer) */
                const bool rq = (r && c->tpr <= 256) || c->lean == 2;
                if (c->vec == 16)
                    return (c->cache & RMSI_CACHE_KNOB_L1) ? rmsi_fwd_pick_lean_q<T, W, true>(r, rq, s)
                                                           : rmsi_fwd_pick_lean_q<T, W, false>(r, rq, s);
            }
#endif
            return nullptr;
        }
        return c->vec == 16 ? rmsi_fwd_multi<T, W, 16 / sizeof(T)> : rmsi_fwd_multi<T, W, 1>;
    }
#if RMSI_HAVE_CLUSTER
    if (c->cl > 1)
        return rmsi_fwd_pick_reg<T, W, true>(c, q, r);
#endif
    return c->cl > 1 ? nullptr : rmsi_fwd_pick_reg<T, W, false>(c, q, r);
}

/* s: block fp8 without y, without a residual, E4M3, a weight with w_off 0,
 * ROUND_ONCE (the lean kernels' paired form, rmsi_lean_quant_paired) */
rmsi_fwd_kernel rmsi_fwd_kernel_for(int dtype, int wdtype, const rmsi_config *c, bool q, bool r, bool s)
{
    switch (dtype) {
    case RMSI_T_F32: return rmsi_fwd_pick<float, float>(c, q, r, s);
    case RMSI_T_F16:
        return wdtype == RMSI_T_F32 ? rmsi_fwd_pick<rmsi_f16, float>(c, q, r, s)
                                    : rmsi_fwd_pick<rmsi_f16, rmsi_f16>(c, q, r, s);
    case RMSI_T_BF16:
        return wdtype == RMSI_T_F32 ? rmsi_fwd_pick<rmsi_bf16, float>(c, q, r, s)
                                    : rmsi_fwd_pick<rmsi_bf16, rmsi_bf16>(c, q, r, s);
    default: return nullptr;
    }
}

} /* namespace */

/* +0.0f and nothing else (not -0.0f) */
static bool rmsi_is_pos_zero(float f)
{
    return f == 0.0f && !std::signbit(f);
}

int rmsi_launch_forward(const rmsi_fwd_params *p, int dtype, int wdtype, const rmsi_config *c,
                        int64_t grid, void *stream, int pdl)
{
    /* w_off +0 by its bits: w + -0 keeps a -0 weight, which the paired
     * kernels' + 0 (rmsi_weff_unpack_z) would make +0 */
    const bool s = p->quant == RMSI_Q_BLOCK && !p->res && !p->y && p->w && rmsi_is_pos_zero(p->w_off) &&
                   !p->llama && p->fp8 == RMSI_FP8_E4M3;
    rmsi_fwd_kernel k = rmsi_fwd_kernel_for(dtype, wdtype, c, p->quant != RMSI_Q_NONE, p->res != nullptr, s);
    rmsi_fwd_params q = *p;
    if (!k || grid < 1 || grid > 0x7fffffff)
        return -1;
    q.cache = rmsi_cache_bits(c->cache);
    const int cl = c->path == RMSI_PATH_MULTI ? 1 : c->cl;
    q.cls = cl == 8 ? 3 : (cl == 4 ? 2 : (cl == 2 ? 1 : 0));
    if ((1 << q.cls) != cl || grid % cl != 0)
        return -1;
    dim3 block((unsigned)c->tpr, c->path == RMSI_PATH_MULTI ? 1u : (unsigned)c->rpc, 1u);
    return rmsi_launch_kc(k, dim3((unsigned)grid, 1u, 1u), block, 0, (rmsi_stream_t)stream, pdl, cl, q) ==
                   RMSI_SUCCESS
               ? 0
               : -1;
}

int rmsi_forward_occupancy(int dtype, int wdtype, int quant, int res, const rmsi_config *c, int *ctas)
{
    /* the paired kernels have the same resources as these */
    rmsi_fwd_kernel k = rmsi_fwd_kernel_for(dtype, wdtype, c, quant != RMSI_Q_NONE, res != 0, false);
    int threads = c->tpr * (c->path == RMSI_PATH_MULTI ? 1 : c->rpc);
    *ctas = 0;
    if (!k)
        return -1;
    return rmsi_occupancy(ctas, k, threads, 0) == RMSI_SUCCESS ? 0 : -1;
}
