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

#endif /* RMSNORM_GPU_REDUCE_H */
