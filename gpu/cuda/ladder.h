/* The CUDA launch-configuration ladder (see ladder.cc for the rules). */
#ifndef RMSNORM_GPU_CUDA_LADDER_H
#define RMSNORM_GPU_CUDA_LADDER_H

#include "gpu/common/kernel_args.h"

enum { RMSI_OP_FWD = 0, RMSI_OP_BWD = 1 };

typedef struct rmsi_shape {
    int op;          /* RMSI_OP_* */
    int64_t rows, cols;
    int esz;         /* activation bytes: 2 or 4 */
    int vec_ok;      /* every pointer and stride allows 16-byte vectors and VEC | cols */
    int quant;       /* RMSI_Q_* (forward) */
    int sms;
    int res;         /* forward: a residual is fused; backward: a residual gradient is added */
    int smem;        /* the device's opt-in shared memory per CTA, bytes (0: unknown, 48 KB assumed) */
    int cluster;     /* the device launches thread block clusters (compute capability >= 9) */
    int f16;         /* 16-bit rows are fp16, not bf16 (the backward's lean kernel is bf16's) */
    int hout;        /* forward with a residual: h is stored (h_out given) */
    int yout;        /* forward: y is stored (always without fp8 output; optional with it) */
    int hbm_sm;      /* peak HBM GB/s per SM (0: unknown: the H200's rules) */
} rmsi_shape;

void rmsi_ladder(const rmsi_shape *s, rmsi_config *out);
/* A pin with -1 fields completed from the ladder; -1 when the result is not
 * valid for this shape (the op then returns RMSNORM_ERR_UNSUPPORTED). */
int rmsi_config_resolve(const rmsi_shape *s, const rmsi_config *pin, rmsi_config *out);
int rmsi_config_valid(const rmsi_shape *s, const rmsi_config *c);
/* CTAs to launch; occ = resident CTAs per SM of the selected kernel. */
int64_t rmsi_config_grid(const rmsi_shape *s, const rmsi_config *c, int occ);
/* Upper bound of the backward's partial rows (grid * rpc) for any config. */
int64_t rmsi_bwd_partial_cap(int64_t rows, int sms);
/* The idx-th config of the search space for this shape; -1 past the end. */
int rmsi_config_at(const rmsi_shape *s, int idx, rmsi_config *out);

#endif /* RMSNORM_GPU_CUDA_LADDER_H */
