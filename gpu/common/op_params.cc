/* ABI args -> kernel parameters (gpu/common/op_params.h). */
#include <string.h>

#include "gpu/common/op_params.h"

int rmsi_ktype(rmsnorm_dtype t)
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

void rmsi_fwd_params_of(const rmsnorm_forward_args *a, rmsi_fwd_params *p, int *vec_ok)
{
    const int64_t rows = a->x.rows, cols = a->x.cols;
    const int64_t esz = rmsi_ktype(a->x.dtype) == RMSI_T_F32 ? 4 : 2;
    const int64_t vec = 16 / esz;
    memset(p, 0, sizeof *p);
    p->x = a->x.data;
    p->x_ld = a->x.row_stride;
    p->res = a->residual.data;
    p->res_ld = a->residual.row_stride;
    p->h = a->h_out.data;
    p->h_ld = a->h_out.row_stride;
    p->w = a->weight;
    p->w_off = a->weight_offset;
    p->y = a->y.data;
    p->y_ld = a->y.row_stride;
    p->rstd = a->rstd;
    p->rows = rows;
    p->cols = cols;
    p->eps = a->eps;
    p->llama = (a->flags & RMSNORM_ROUND_LLAMA) != 0;
    p->pow2 = (a->flags & RMSNORM_SCALE_POW2) != 0;
    p->quant = (int)a->quant_mode;
    if (p->quant != RMSI_Q_NONE) {
        p->q = a->q.data;
        p->q_ld = a->q.row_stride;
        p->scale = a->scale;
        p->scale_ub = a->scale_ub;
        p->fp8 = rmsi_fp8_kind(a->q.dtype, &p->fmax);
        p->s_min = 1.0f / (p->fmax * 512.0f); /* the same two IEEE operations as ref/formats.h */
        p->scale_ld = (rows + 3) / 4 * 4;
    }
    *vec_ok = cols % vec == 0 && rmsi_ok(p->x, p->x_ld, esz, 16) && rmsi_ok(p->res, p->res_ld, esz, 16) &&
              rmsi_ok(p->h, p->h_ld, esz, 16) && rmsi_ok(p->y, p->y_ld, esz, 16) && rmsi_ok(p->w, 0, 1, 16) &&
              rmsi_ok(p->q, p->q_ld, 1, vec);
}

void rmsi_bwd_params_of(const rmsnorm_backward_args *a, rmsi_bwd_params *p, int *vec_ok)
{
    const int64_t cols = a->x.cols;
    const int64_t esz = rmsi_ktype(a->x.dtype) == RMSI_T_F32 ? 4 : 2;
    const int64_t vec = 16 / esz;
    memset(p, 0, sizeof *p);
    p->dy = a->dy.data;
    p->dy_ld = a->dy.row_stride;
    p->x = a->x.data;
    p->x_ld = a->x.row_stride;
    p->w = a->weight;
    p->w_off = a->weight_offset;
    p->rstd = a->rstd;
    p->eps = a->eps;
    p->llama = (a->flags & RMSNORM_ROUND_LLAMA) != 0;
    p->dx = a->dx.data;
    p->dx_ld = a->dx.row_stride;
    p->dres = a->dresidual.data;
    p->dres_ld = a->dresidual.row_stride;
    p->ws = a->dweight ? static_cast<float *>(a->workspace) : nullptr;
    p->dw = a->dweight;
    p->rows = a->x.rows;
    p->cols = cols;
    *vec_ok = cols % vec == 0 && rmsi_ok(p->x, p->x_ld, esz, 16) && rmsi_ok(p->dy, p->dy_ld, esz, 16) &&
              rmsi_ok(p->dx, p->dx_ld, esz, 16) && rmsi_ok(p->dres, p->dres_ld, esz, 16) &&
              rmsi_ok(p->w, 0, 1, 16) && rmsi_ok(p->ws, 0, 1, 16);
}
