/*
 * Reductions over the threads of one row group. A CTA is blockDim.y row groups
 * of blockDim.x threads (a power of two). A group no wider than a warp reduces
 * with xor shuffles whose masks stay below the group width, so the groups that
 * share a warp never mix; a wider group goes through shared memory, where every
 * thread then sums the per-warp values in the same fixed order (the result is
 * identical on all threads and deterministic run to run).
 *
 * Every thread of the CTA must call these (they may hold CTA barriers), live
 * row or not.
 */
#ifndef RMSNORM_GPU_REDUCE_H
#define RMSNORM_GPU_REDUCE_H

#include "gpu/common/vendor.h"

struct rmsi_op_sum {
    __device__ __forceinline__ float operator()(float a, float b) const { return a + b; }
};
/* fmaxf ignores NaN, as the reference's amax does. */
struct rmsi_op_max {
    __device__ __forceinline__ float operator()(float a, float b) const { return fmaxf(a, b); }
};

template <class Op>
__device__ __forceinline__ float rmsi_warp_reduce(float v, int width, Op op)
{
    for (int m = width >> 1; m > 0; m >>= 1)
        v = op(v, rmsi_shfl_xor(v, m, RMSI_WARP));
    return v;
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
    const int lane = (int)threadIdx.x % RMSI_WARP;
    const int w = (int)threadIdx.x / RMSI_WARP;
    float *mine = sm + threadIdx.y * wpr;
    if (lane == 0)
        mine[w] = v;
    __syncthreads();
    float r = mine[0];
    for (int k = 1; k < wpr; k++)
        r = op(r, mine[k]);
    __syncthreads(); /* sm is reused by the next reduction */
    return r;
}

#endif /* RMSNORM_GPU_REDUCE_H */
