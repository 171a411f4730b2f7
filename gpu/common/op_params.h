/*
 * The validated ABI args as the shared kernels' flat parameters, and whether
 * the 16-byte vector path is allowed for them. Vendor-neutral host code: both
 * plugins (gpu/cuda/ops.cu, gpu/hip/ops.cc) call it, so the translation from
 * the ABI to the kernels exists once, like the kernels themselves.
 */
#ifndef RMSNORM_GPU_OP_PARAMS_H
#define RMSNORM_GPU_OP_PARAMS_H

#include "rmsnorm.h"
#include "gpu/common/kernel_args.h"

/* RMSI_T_* of an activation or weight dtype (F32, F16, BF16). */
int rmsi_ktype(rmsnorm_dtype t);

/* *p from the forward args (rows >= 1); *vec_ok = 1 when every pointer and
 * row stride allows 16-byte accesses and cols is a whole number of vectors. */
void rmsi_fwd_params_of(const rmsnorm_forward_args *a, rmsi_fwd_params *p, int *vec_ok);

/* The same for the backward; the workspace is used only with dweight. */
void rmsi_bwd_params_of(const rmsnorm_backward_args *a, rmsi_bwd_params *p, int *vec_ok);

#endif
