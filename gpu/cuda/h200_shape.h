/* A contiguous shape on the H200 the ladder's rules were measured on (132
 * SMs, 227 KB of opt-in shared memory, clusters): for the host tools that
 * ask the ladder about it (test_ladder, ladder_dump). */
#ifndef RMSNORM_GPU_CUDA_H200_SHAPE_H
#define RMSNORM_GPU_CUDA_H200_SHAPE_H

#include "gpu/cuda/ladder.h"

static inline rmsi_shape h200_shape(int op, int64_t rows, int64_t cols, int esz, int quant, int res)
{
    rmsi_shape s = {};
    s.op = op;
    s.rows = rows;
    s.cols = cols;
    s.esz = esz;
    s.vec_ok = 1;
    s.quant = quant;
    s.res = res;
    s.hout = res; /* a fused add stores h, as the benchmark's does */
    s.yout = 1;   /* y stored (optional with fp8 output only) */
    s.sms = 132;
    s.smem = 232448;
    s.cluster = 1;
    return s;
}

#endif /* RMSNORM_GPU_CUDA_H200_SHAPE_H */
