/* The AMD launch-configuration ladder (rules and reasons in ladder.cc). */
#ifndef RMSNORM_GPU_HIP_LADDER_H
#define RMSNORM_GPU_HIP_LADDER_H

#include "gpu/common/kernel_args.h"
#include "gpu/hip/hip_internal.h"

enum { RMSI_HIP_FWD = 0, RMSI_HIP_BWD = 1 };

typedef struct rmsi_hip_shape {
    int op;          /* RMSI_HIP_FWD / RMSI_HIP_BWD */
    int64_t rows, cols;
    int esz;         /* activation bytes: 2 or 4 */
    int vec_ok;      /* every pointer and stride allows 16-byte vectors and VEC | cols */
    int quant;       /* RMSI_Q_* (forward) */
    rmsi_hip_device dev;
} rmsi_hip_shape;

void rmsi_hip_ladder(const rmsi_hip_shape *s, rmsi_config *out);
/* A pin with -1 fields completed from the ladder; -1 when the result is not
 * valid for this shape (the op then returns RMSNORM_ERR_UNSUPPORTED). */
int rmsi_hip_resolve(const rmsi_hip_shape *s, const rmsi_config *pin, rmsi_config *out);
int rmsi_hip_valid(const rmsi_hip_shape *s, const rmsi_config *c);
/* Work-groups to launch; occ = resident work-groups per CU of the kernel. */
int64_t rmsi_hip_grid(const rmsi_hip_shape *s, const rmsi_config *c, int occ);
/* Upper bound of the backward's partial rows (grid * rpc) for any config. */
int64_t rmsi_hip_partial_cap(int64_t rows, int cus);
/* The idx-th config of the search space; -1 past the end. */
int rmsi_hip_config_at(const rmsi_hip_shape *s, int idx, rmsi_config *out);

#endif /* RMSNORM_GPU_HIP_LADDER_H */
