/*
 * The op slots of the "cuda" table: translate the validated ABI args into the
 * kernels' flat parameters, pick the launch configuration (pin or ladder) and
 * queue the kernels on the caller's stream. Nothing here allocates,
 * synchronises or reads device memory back, so every op can be captured in a
 * CUDA graph; a failed launch is RMSNORM_ERR_DEVICE.
 */
#include <cuda_runtime.h>
#include <limits.h>

#include "gpu/cuda/cuda_internal.h"
#include "gpu/cuda/ladder.h"

static int rmsi_ktype(rmsnorm_dtype t)
{
    switch (t) {
    case RMSNORM_F16: return RMSI_T_F16;
    case RMSNORM_BF16: return RMSI_T_BF16;
    case RMSNORM_F32:
    default: return RMSI_T_F32;
    }
}

static int rmsi_fp8_kind(rmsnorm_dtype t, float *fmax)
{
    switch (t) {
    case RMSNORM_F8_E5M2: *fmax = 57344.0f; return RMSI_FP8_E5M2;
    case RMSNORM_F8_E4M3FNUZ: *fmax = 240.0f; return RMSI_FP8_E4M3FNUZ;
    case RMSNORM_F8_E4M3:
    default: *fmax = 448.0f; return RMSI_FP8_E4M3;
    }
}

/* A pointer and a row stride (elements of esz bytes) allow `align`-byte vectors. */
static int rmsi_ok(const void *p, int64_t ld, int64_t esz, int64_t align)
{
    return p == nullptr || (((uintptr_t)p % (uintptr_t)align) == 0 && (ld * esz) % align == 0);
}

/* Pin or ladder; -1 when a pin does not fit the shape. occ from the kernel. */
static int rmsi_choose(rmsi_shape *s, int dtype, int wdtype, rmsi_config *c, int64_t *grid)
{
    rmsi_config pin;
    int occ = 0;
    rmsi_cuda_config_pin(&pin);
    if (rmsi_config_resolve(s, &pin, c) != 0)
        return -1;
    if (s->op == RMSI_OP_FWD) {
        if (c->cps == 0 && rmsi_forward_occupancy(dtype, wdtype, s->quant, c, &occ) != 0)
            return -2;
    } else if (c->cps == 0 && rmsi_backward_occupancy(dtype, wdtype, c, &occ) != 0) {
        return -2;
    }
    *grid = rmsi_config_grid(s, c, occ);
    return 0;
}

rmsnorm_status rmsi_cuda_forward(const rmsnorm_forward_args *a, void *stream)
{
    const int64_t rows = a->x.rows, cols = a->x.cols;
    const int dtype = rmsi_ktype(a->x.dtype);
    const int wdtype = a->weight ? rmsi_ktype(a->weight_dtype) : dtype;
    const int64_t esz = dtype == RMSI_T_F32 ? 4 : 2;
    const int64_t vec = 16 / esz;
    const int quant = (int)a->quant_mode;
    rmsi_fwd_params p = {};
    rmsi_config c;
    int64_t grid = 0;
    int rc;
    if (rows == 0)
        return RMSNORM_OK;
    p.x = a->x.data;
    p.x_ld = a->x.row_stride;
    p.res = a->residual.data;
    p.res_ld = a->residual.row_stride;
    p.h = a->h_out.data;
    p.h_ld = a->h_out.row_stride;
    p.w = a->weight;
    p.w_off = a->weight_offset;
    p.y = a->y.data;
    p.y_ld = a->y.row_stride;
    p.rstd = a->rstd;
    p.rows = rows;
    p.cols = cols;
    p.eps = a->eps;
    p.llama = (a->flags & RMSNORM_ROUND_LLAMA) != 0;
    p.pow2 = (a->flags & RMSNORM_SCALE_POW2) != 0;
    p.quant = quant;
    if (quant != RMSI_Q_NONE) {
        p.q = a->q.data;
        p.q_ld = a->q.row_stride;
        p.scale = a->scale;
        p.scale_ub = a->scale_ub;
        p.fp8 = rmsi_fp8_kind(a->q.dtype, &p.fmax);
        p.scale_ld = (rows + 3) / 4 * 4;
    }
    rmsi_shape s = {RMSI_OP_FWD, rows, cols, (int)esz, 0, quant, rmsi_cuda_sms(), p.res != nullptr};
    if (s.sms < 1)
        return RMSNORM_ERR_DEVICE;
    s.vec_ok = cols % vec == 0 && rmsi_ok(p.x, p.x_ld, esz, 16) && rmsi_ok(p.res, p.res_ld, esz, 16) &&
               rmsi_ok(p.h, p.h_ld, esz, 16) && rmsi_ok(p.y, p.y_ld, esz, 16) &&
               rmsi_ok(p.w, 0, 1, 16) && rmsi_ok(p.q, p.q_ld, 1, vec);
    rc = rmsi_choose(&s, dtype, wdtype, &c, &grid);
    if (rc == -1)
        return RMSNORM_ERR_UNSUPPORTED;
    if (rc != 0 || rmsi_launch_forward(&p, dtype, wdtype, &c, grid, rmsi_cuda_stream(stream)) != 0)
        return RMSNORM_ERR_DEVICE;
    return RMSNORM_OK;
}

rmsnorm_status rmsi_cuda_backward(const rmsnorm_backward_args *a, void *stream)
{
    const int64_t rows = a->x.rows, cols = a->x.cols;
    const int dtype = rmsi_ktype(a->x.dtype);
    const int wdtype = a->weight ? rmsi_ktype(a->weight_dtype) : dtype;
    const int64_t esz = dtype == RMSI_T_F32 ? 4 : 2;
    const int64_t vec = 16 / esz;
    void *st = rmsi_cuda_stream(stream);
    rmsi_bwd_params p = {};
    rmsi_config c;
    int64_t grid = 0;
    int rc;
    if (rows == 0) {
        if (a->dweight && cudaMemsetAsync(a->dweight, 0, (size_t)cols * sizeof(float), (cudaStream_t)st) !=
                              cudaSuccess) {
            (void)cudaGetLastError();
            return RMSNORM_ERR_DEVICE;
        }
        return RMSNORM_OK;
    }
    p.dy = a->dy.data;
    p.dy_ld = a->dy.row_stride;
    p.x = a->x.data;
    p.x_ld = a->x.row_stride;
    p.w = a->weight;
    p.w_off = a->weight_offset;
    p.rstd = a->rstd;
    p.eps = a->eps;
    p.llama = (a->flags & RMSNORM_ROUND_LLAMA) != 0;
    p.dx = a->dx.data;
    p.dx_ld = a->dx.row_stride;
    p.dres = a->dresidual.data;
    p.dres_ld = a->dresidual.row_stride;
    p.ws = a->dweight ? (float *)a->workspace : nullptr;
    p.dw = a->dweight;
    p.rows = rows;
    p.cols = cols;
    rmsi_shape s = {RMSI_OP_BWD, rows, cols, (int)esz, 0, RMSI_Q_NONE, rmsi_cuda_sms(), 0};
    if (s.sms < 1)
        return RMSNORM_ERR_DEVICE;
    s.vec_ok = cols % vec == 0 && rmsi_ok(p.x, p.x_ld, esz, 16) && rmsi_ok(p.dy, p.dy_ld, esz, 16) &&
               rmsi_ok(p.dx, p.dx_ld, esz, 16) && rmsi_ok(p.dres, p.dres_ld, esz, 16) &&
               rmsi_ok(p.w, 0, 1, 16) && rmsi_ok(p.ws, 0, 1, 16);
    rc = rmsi_choose(&s, dtype, wdtype, &c, &grid);
    if (rc == -1)
        return RMSNORM_ERR_UNSUPPORTED;
    if (rc != 0 || rmsi_launch_backward(&p, dtype, wdtype, &c, grid, st) != 0)
        return RMSNORM_ERR_DEVICE;
    if (p.ws) {
        const int64_t parts = grid * (c.path == RMSI_PATH_MULTI ? 1 : c.rpc);
        if (rmsi_launch_dw_reduce(p.ws, p.dw, parts, cols, st) != 0)
            return RMSNORM_ERR_DEVICE;
    }
    return RMSNORM_OK;
}

rmsnorm_status rmsi_cuda_backward_workspace_size(int64_t rows, int64_t cols, size_t *bytes)
{
    const int sms = rmsi_cuda_sms();
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
