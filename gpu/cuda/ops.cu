/*
 * The op slots of the "cuda" table: translate the validated ABI args into the
 * kernels' flat parameters, pick the launch configuration (pin or ladder) and
 * queue the kernels on the caller's stream. Nothing here allocates,
 * synchronises or reads device memory back, so every op can be captured in a
 * CUDA graph; a failed launch is RMSNORM_ERR_DEVICE.
 */
#include <cuda_runtime.h>
#include <limits.h>

#include "gpu/common/op_params.h"
#include "gpu/cuda/cuda_internal.h"
#include "gpu/cuda/ladder.h"

/* Pin or ladder; -1 when a pin does not fit the shape. occ_out (may be
 * NULL): the kernel's resident CTAs per SM (0 where not asked: a pinned cps,
 * or the forward's register path, whose grid covers the rows whatever fits,
 * so that its every call skips the occupancy query's host work). */
static int rmsi_choose(rmsi_shape *s, int dtype, int wdtype, rmsi_config *c, int64_t *grid, int *occ_out)
{
    rmsi_config pin;
    int occ = 0;
    rmsi_cuda_config_pin(&pin);
    if (rmsi_config_resolve(s, &pin, c) != 0)
        return -1;
    if (s->op == RMSI_OP_FWD) {
        if (c->cps == 0 && c->path != RMSI_PATH_REG &&
            rmsi_forward_occupancy(dtype, wdtype, s->quant, s->res, c, &occ) != 0)
            return -2;
    } else if (c->cps == 0 && rmsi_backward_occupancy(dtype, wdtype, s->res, c, 0, &occ) != 0) {
        return -2;
    }
    *grid = rmsi_config_grid(s, c, occ);
    if (occ_out)
        *occ_out = occ;
    return 0;
}

/* The backward's persistent grid of k CTAs an SM where more would fit
 * (rmsi_config_grid: the partial cap binds): the dynamic shared memory at
 * which exactly k fit, so that each SM gets k rather than whatever the block
 * scheduler stacks there: 16384x2048 bf16 without clusters, 528 CTAs of 6
 * possible an SM, 66.8 -> 63.6 us (S9-3). 0: no padding (or none found). */
static size_t rmsi_bwd_spread_smem(int dtype, int wdtype, int dres, const rmsi_config *c, int k, int occ)
{
    const int sm_smem = rmsi_cuda_smem_sm();
    const int optin = rmsi_cuda_smem_optin();
    const size_t base = rmsi_backward_smem(dtype, c, dres);
    if (k < 1 || k >= occ || sm_smem <= 0 || optin <= 0)
        return 0;
    /* per CTA besides the dynamic part: static scratch and the runtime's
     * reserved 1 KB; from the largest candidate down in 1 KB steps */
    size_t dyn = ((size_t)sm_smem / (size_t)k - 2048) / 1024 * 1024;
    if (dyn > (size_t)optin)
        dyn = (size_t)optin / 1024 * 1024;
    for (int i = 0; i < 4 && dyn > base; i++, dyn -= 1024) {
        int o = 0;
        if (rmsi_backward_occupancy(dtype, wdtype, dres, c, dyn, &o) != 0)
            return 0;
        if (o == k)
            return dyn;
        if (o > k)
            return 0;
    }
    return 0;
}

rmsnorm_status rmsi_cuda_forward(const rmsnorm_forward_args *a, void *stream)
{
    const int64_t rows = a->x.rows, cols = a->x.cols;
    const int dtype = rmsi_ktype(a->x.dtype);
    const int wdtype = a->weight ? rmsi_ktype(a->weight_dtype) : dtype;
    const int64_t esz = dtype == RMSI_T_F32 ? 4 : 2;
    rmsi_fwd_params p;
    rmsi_config c;
    int64_t grid = 0;
    int rc, vec_ok = 0;
    if (rows == 0)
        return RMSNORM_OK;
    rmsi_fwd_params_of(a, &p, &vec_ok);
    rmsi_shape s = {RMSI_OP_FWD, rows, cols, (int)esz, vec_ok, p.quant, rmsi_cuda_ladder_sms(), p.res != nullptr,
                    rmsi_cuda_smem_optin(), rmsi_cuda_cluster(), dtype == RMSI_T_F16, p.h != nullptr,
                    p.y != nullptr, rmsi_cuda_ladder_hbm()};
    if (s.sms < 1)
        return RMSNORM_ERR_DEVICE;
    rc = rmsi_choose(&s, dtype, wdtype, &c, &grid, nullptr);
    if (rc == -1)
        return RMSNORM_ERR_UNSUPPORTED;
    if (rc != 0 || rmsi_launch_forward(&p, dtype, wdtype, &c, grid, rmsi_gpu_stream(stream), rmsi_cuda_pdl()) != 0)
        return RMSNORM_ERR_DEVICE;
    return RMSNORM_OK;
}

rmsnorm_status rmsi_cuda_backward(const rmsnorm_backward_args *a, void *stream)
{
    const int64_t rows = a->x.rows, cols = a->x.cols;
    const int dtype = rmsi_ktype(a->x.dtype);
    const int wdtype = a->weight ? rmsi_ktype(a->weight_dtype) : dtype;
    const int64_t esz = dtype == RMSI_T_F32 ? 4 : 2;
    void *st = rmsi_gpu_stream(stream);
    rmsi_bwd_params p;
    rmsi_config c;
    int64_t grid = 0;
    size_t smem = 0;
    int rc, occ = 0, vec_ok = 0;
    if (rows == 0) {
        if (a->dweight && cudaMemsetAsync(a->dweight, 0, (size_t)cols * sizeof(float), (cudaStream_t)st) !=
                              cudaSuccess) {
            (void)cudaGetLastError();
            return RMSNORM_ERR_DEVICE;
        }
        return RMSNORM_OK;
    }
    rmsi_bwd_params_of(a, &p, &vec_ok);
    rmsi_shape s = {RMSI_OP_BWD, rows, cols, (int)esz, vec_ok, RMSI_Q_NONE, rmsi_cuda_ladder_sms(), p.dres != nullptr,
                    rmsi_cuda_smem_optin(), rmsi_cuda_cluster(), dtype == RMSI_T_F16, 0, 0,
                    rmsi_cuda_ladder_hbm()};
    if (s.sms < 1)
        return RMSNORM_ERR_DEVICE;
    rc = rmsi_choose(&s, dtype, wdtype, &c, &grid, &occ);
    if (rc == -1)
        return RMSNORM_ERR_UNSUPPORTED;
    if (rc == 0 && c.path == RMSI_PATH_REG && c.cps == 0 && grid % s.sms == 0 && grid / s.sms < occ)
        smem = rmsi_bwd_spread_smem(dtype, wdtype, s.res, &c, (int)(grid / s.sms), occ);
    const int64_t parts = rmsi_bwd_parts(&c, grid);
    /* One partial row is dw itself: the kernel writes it there and the
     * second launch is skipped (a one-row backward was two launches, 5 us). */
    const int direct = p.ws && parts == 1 && ((uintptr_t)p.dw & 15u) == 0; /* the partial's vector stores */
    if (direct)
        p.ws = p.dw;
    if (rc != 0 || rmsi_launch_backward(&p, dtype, wdtype, &c, grid, st, rmsi_cuda_pdl(), smem) != 0)
        return RMSNORM_ERR_DEVICE;
    /* The partial rows dropped from L2 after the reduction where the call
     * moves at least the L2's size: there a later kernel's stream would
     * evict them dirty, a write-back of dead bytes (S21-2, rmsnorm-bench,
     * bf16, alternated twice: 4096x4096 31.20 -> 30.69-30.74 us, 8192x4096,
     * 4096x8192, 2048x8192, 4096x5120, 2048x5120, 8192x2048 0.9-2.0%
     * faster, 16384x4096 and 32768x8192 unchanged; fp16 and fp32 0.8-1.4%).
     * In smaller calls, benchmarked back to back, they were still in L2 when
     * the next call rewrote them, and the discard cost 1-2% (S21-1:
     * 1024x4096 13.10 -> 13.35, 2048x4096, 4096x2048). */
    if (p.ws && !direct) {
        const int64_t moved = rows * cols * esz * (p.dres ? 4 : 3);
        const int discard = rmsi_cuda_l2_discard() && moved >= (int64_t)rmsi_cuda_l2_bytes();
        if (rmsi_launch_dw_reduce(p.ws, p.dw, parts, cols, st, rmsi_cuda_pdl(), discard) != 0)
            return RMSNORM_ERR_DEVICE;
    }
    return RMSNORM_OK;
}

rmsnorm_status rmsi_cuda_backward_workspace_size(int64_t rows, int64_t cols, size_t *bytes)
{
    const int sms = rmsi_cuda_ladder_sms(); /* the backward's grid */
    int64_t parts;
    if (!bytes)
        return RMSNORM_ERR_NULL_POINTER;
    *bytes = 0;
    if (rows < 0 || cols < 1)
        return RMSNORM_ERR_BAD_SHAPE;
    if (sms < 1)
        return RMSNORM_ERR_DEVICE;
    if (rows == 0)
        return RMSNORM_OK;
    parts = rmsi_bwd_partial_cap(rows, sms);
    if (cols > (int64_t)(SIZE_MAX / sizeof(float)) / parts)
        return RMSNORM_ERR_BAD_SHAPE;
    *bytes = (size_t)parts * (size_t)cols * sizeof(float);
    return RMSNORM_OK;
}
