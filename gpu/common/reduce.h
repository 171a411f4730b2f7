/*
 * Reductions over the threads of one row group. A CTA is blockDim.y row groups
 * of blockDim.x threads (a power of two). A group no wider than a warp reduces
 * with xor shuffles whose masks stay below the group width, so the groups that
 * share a warp never mix; a wider group goes through shared memory, and every
 * warp then reduces the per-warp values with one load a lane and a whole-warp
 * xor butterfly (where a serial sum over 16 warps was a chain of 16 shared
 * loads on every thread: latency in a small row, 8-16 instructions a thread a
 * row at large shapes). Each butterfly step adds two values commutatively, so
 * every lane ends with the same bits, and the order is fixed by the warp
 * count: deterministic run to run.
 *
 * Every thread of the CTA must call these (they may hold CTA barriers), live
 * row or not.
 */
#ifndef RMSNORM_GPU_REDUCE_H
#define RMSNORM_GPU_REDUCE_H

#include "gpu/common/vendor.h"

/* identity(): the value of the butterfly's padding lanes (warp counts that are
 * not a power of two). -0 is the exact additive identity (+0 would turn a -0
 * sum into +0). */
struct rmsi_op_sum {
    __device__ __forceinline__ float operator()(float a, float b) const { return a + b; }
    __device__ __forceinline__ float identity() const { return -0.0f; }
};
/* fmaxf ignores NaN, as the reference's amax does. */
struct rmsi_op_max {
    __device__ __forceinline__ float operator()(float a, float b) const { return fmaxf(a, b); }
    __device__ __forceinline__ float identity() const { return -__builtin_huge_valf(); }
};

template <class Op>
__device__ __forceinline__ float rmsi_warp_reduce(float v, int width, Op op)
{
    for (int m = width >> 1; m > 0; m >>= 1)
        v = op(v, rmsi_shfl_xor(v, m, RMSI_WARP));
    return v;
}

/* N independent reductions over the same lanes, step by step: the N shuffle
 * chains interleave instead of each waiting for the one before. */
template <int N, class Op>
__device__ __forceinline__ void rmsi_warp_reduce_n(float (&v)[N], int width, Op op)
{
    for (int m = width >> 1; m > 0; m >>= 1) {
#pragma unroll
        for (int k = 0; k < N; k++)
            v[k] = op(v[k], rmsi_shfl_xor(v[k], m, RMSI_WARP));
    }
}

/* sm: RMSI_MAX_WARPS floats of shared memory. */
template <class Op>
__device__ __forceinline__ float rmsi_row_reduce(float v, float *sm, Op op)
{
    const int tpr = (int)blockDim.x;
    if (tpr <= RMSI_WARP)
        return rmsi_warp_reduce(v, tpr, op);
    v = rmsi_warp_reduce(v, RMSI_WARP, op);
    const int wpr = tpr / RMSI_WARP;
    /* The shared-memory indices are formed here from opaque reads of the
     * thread index (rmsi_tid_*): hoisted out of the caller's row loop they
     * were two more live registers, which spilled under the forward's caps. */
    const int tx = rmsi_tid_x();
    const int lane = tx % RMSI_WARP;
    float *mine = sm + rmsi_tid_y() * wpr;
    if (lane == 0)
        mine[tx / RMSI_WARP] = v;
    __syncthreads();
    /* lanes past the warp count hold the identity, so a whole-warp butterfly
     * leaves the total on every lane */
    float r = lane < wpr ? mine[lane] : op.identity();
    r = rmsi_warp_reduce(r, RMSI_WARP, op);
    __syncthreads(); /* sm is reused by the next reduction */
    return r;
}

/* The total of a row split over the 2^cls CTAs of a cluster (the forward's
 * cl knob), from each CTA's rmsi_row_reduce result v (one row group a CTA):
 * thread k < cl stores v into slot [rank] of CTA k's xs[ph] (distributed
 * shared memory), one cluster barrier, then every CTA adds the slots in rank
 * order: the same bits in each. ph starts at -1, after the caller's
 * rmsi_cluster_arrive_relaxed at kernel entry: the first call waits on that
 * arrival, so that no CTA stores into one that has not started. ph then
 * flips every call, so that a CTA's stores never land on slots another CTA
 * has yet to read: it writes xs[ph] again only after the barrier of the call
 * between, which the reader reaches after its reads. No barrier is needed
 * before exit for the same reason: no CTA touches another's shared memory
 * after the last barrier. */
template <class Op>
__device__ __forceinline__ float rmsi_cluster_reduce(float v, float (*xs)[RMSI_MAX_CLUSTER], int cls, int &ph, Op op)
{
    const int cl = 1 << cls;
    const int tx = rmsi_tid_x();
    if (ph < 0) {
        rmsi_cluster_wait();
        ph = 0;
    }
    if (tx < cl)
        *rmsi_cluster_map(&xs[ph][rmsi_ctaid_x() & (cl - 1)], (unsigned)tx) = v;
    rmsi_cluster_sync();
    float r = xs[ph][0];
    for (int k = 1; k < cl; k++)
        r = op(r, xs[ph][k]);
    ph ^= 1;
    return r;
}

#endif /* RMSNORM_GPU_REDUCE_H */
