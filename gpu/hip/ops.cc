/*
 * The op slots of the "hip" table: the validated ABI args become the shared
 * kernels' flat parameters (gpu/common/kernel_args.h), the AMD ladder or the
 * pin picks the launch configuration, and the kernels are queued on the
 * caller's stream. Nothing here allocates, synchronises or reads device memory
 * back, so every op can be captured in a hipGraph; a failed launch is
 * RMSNORM_ERR_DEVICE.
 *
 * fp8: the ABI names the format (RMSNORM_F8_E4M3FNUZ for MI300X's e4m3fnuz,
 * max 240; RMSNORM_F8_E4M3 for MI355X's OCP e4m3fn, max 448); the kernels
 * encode it in software, bit for bit as ref/formats.h, on every target.
 */
#include <hip/hip_runtime_api.h>
#include <stdint.h>

#include "gpu/common/op_params.h"
#include "gpu/hip/hip_internal.h"
#include "gpu/hip/ladder.h"

/* Pin or ladder: 0, -1 when a pin does not fit the shape, -2 on a runtime error. */
static int rmsi_choose(rmsi_hip_shape *s, int dtype, int wdtype, rmsi_config *c, int64_t *grid)
{
    rmsi_config pin;
    int occ = 0;
    rmsi_hip_config_pin(&pin);
    if (rmsi_hip_resolve(s, &pin, c) != 0)
        return -1;
    if (s->op == RMSI_HIP_FWD) {
        if (c->cps == 0 && c->path == RMSI_PATH_MULTI && rmsi_forward_occupancy(dtype, wdtype, s->quant, 0, c, &occ) != 0)
            return -2;
    } else if (c->cps == 0 && rmsi_backward_occupancy(dtype, wdtype, 0, c, 0, &occ) != 0) {
        return -2;
    }
    *grid = rmsi_hip_grid(s, c, occ);
    return 0;
}

static rmsnorm_status rmsi_hip_launch_failed(void)
{
    (void)hipGetLastError(); /* clear it: the next op must not inherit it */
    return RMSNORM_ERR_DEVICE;
}

rmsnorm_status rmsi_hip_forward(const rmsnorm_forward_args *a, void *stream)
{
    const int64_t rows = a->x.rows, cols = a->x.cols;
    const int dtype = rmsi_ktype(a->x.dtype);
    const int wdtype = a->weight ? rmsi_ktype(a->weight_dtype) : dtype;
    const int64_t esz = dtype == RMSI_T_F32 ? 4 : 2;
    rmsi_fwd_params p;
    rmsi_hip_shape s = {};
    rmsi_config c;
    int64_t grid = 0;
    int rc, vec_ok = 0;
    if (rows == 0)
        return RMSNORM_OK;
    rmsi_fwd_params_of(a, &p, &vec_ok);
    s.op = RMSI_HIP_FWD;
    s.rows = rows;
    s.cols = cols;
    s.esz = (int)esz;
    s.quant = p.quant;
    s.vec_ok = vec_ok;
    if (rmsi_hip_device_get(&s.dev) != 0)
        return RMSNORM_ERR_DEVICE;
    rc = rmsi_choose(&s, dtype, wdtype, &c, &grid);
    if (rc == -1)
        return RMSNORM_ERR_UNSUPPORTED;
    if (rc != 0 || rmsi_launch_forward(&p, dtype, wdtype, &c, grid, rmsi_gpu_stream(stream), 0) != 0)
        return rmsi_hip_launch_failed();
    return RMSNORM_OK;
}

rmsnorm_status rmsi_hip_backward(const rmsnorm_backward_args *a, void *stream)
{
    const int64_t rows = a->x.rows, cols = a->x.cols;
    const int dtype = rmsi_ktype(a->x.dtype);
    const int wdtype = a->weight ? rmsi_ktype(a->weight_dtype) : dtype;
    const int64_t esz = dtype == RMSI_T_F32 ? 4 : 2;
    void *st = rmsi_gpu_stream(stream);
    rmsi_bwd_params p;
    rmsi_hip_shape s = {};
    rmsi_config c;
    int64_t grid = 0;
    int rc, vec_ok = 0;
    if (rows == 0) {
        if (a->dweight && hipMemsetAsync(a->dweight, 0, (size_t)cols * sizeof(float), (hipStream_t)st) != hipSuccess)
            return rmsi_hip_launch_failed();
        return RMSNORM_OK;
    }
    rmsi_bwd_params_of(a, &p, &vec_ok);
    s.op = RMSI_HIP_BWD;
    s.rows = rows;
    s.cols = cols;
    s.esz = (int)esz;
    s.quant = RMSI_Q_NONE;
    s.vec_ok = vec_ok;
    if (rmsi_hip_device_get(&s.dev) != 0)
        return RMSNORM_ERR_DEVICE;
    rc = rmsi_choose(&s, dtype, wdtype, &c, &grid);
    if (rc == -1)
        return RMSNORM_ERR_UNSUPPORTED;
    if (rc != 0 || rmsi_launch_backward(&p, dtype, wdtype, &c, grid, st, 0, 0) != 0)
        return rmsi_hip_launch_failed();
    if (p.ws) {
        const int64_t parts = rmsi_bwd_parts(&c, grid);
        if (rmsi_launch_dw_reduce(p.ws, p.dw, parts, cols, st, 0, 0) != 0)
            return rmsi_hip_launch_failed();
    }
    return RMSNORM_OK;
}

rmsnorm_status rmsi_hip_backward_workspace_size(int64_t rows, int64_t cols, size_t *bytes)
{
    rmsi_hip_device d;
    int64_t parts;
    if (!bytes)
        return RMSNORM_ERR_NULL_POINTER;
    *bytes = 0;
    if (rows < 0 || cols < 1)
        return RMSNORM_ERR_BAD_SHAPE;
    if (rmsi_hip_device_get(&d) != 0)
        return RMSNORM_ERR_DEVICE;
    if (rows == 0)
        return RMSNORM_OK;
    parts = rmsi_hip_partial_cap(rows, d.cus);
    if (cols > (int64_t)(SIZE_MAX / sizeof(float)) / parts)
        return RMSNORM_ERR_BAD_SHAPE;
    *bytes = (size_t)parts * (size_t)cols * sizeof(float);
    return RMSNORM_OK;
}
