/*
 * Invalid arguments, table-driven, on every backend. Each entry breaks one
 * thing in an otherwise valid call (the "base" call, which must return
 * RMSNORM_OK) and names the status it must return. All buffers live in one
 * poisoned arena in the backend's memory; after a rejected call the whole
 * arena must be byte-for-byte unchanged ("a rejected call writes nothing").
 *
 * Every rmsnorm_status code is reached here except two that depend on the
 * backend:
 *  - RMSNORM_ERR_UNSUPPORTED: a valid request the backend does not implement.
 *    It is tested for every capability bit the backend does NOT advertise; ref
 *    and avx512 implement everything, so on them it is not reachable and the
 *    test says so in its output.
 *  - RMSNORM_ERR_DEVICE: a runtime failure. On device backends an allocation
 *    far beyond the device's memory must fail with it (or with BAD_SHAPE, "too
 *    large"); host backends have no device runtime, so it is not reachable
 *    there.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/backends.h"
#include "tests/buffers.h"

#define ROWS 3
#define COLS 256
#define STRIDE 260
#define REGION 4096 /* bytes per matrix region: 3 x 260 x 4 = 3120 fit */

/* Offsets into the arena. */
enum {
    OFF_X = 0,
    OFF_RES = OFF_X + REGION,
    OFF_H = OFF_RES + REGION,
    OFF_Y = OFF_H + REGION,
    OFF_DY = OFF_Y + REGION,
    OFF_DX = OFF_DY + REGION,
    OFF_DRES = OFF_DX + REGION,
    OFF_Q = OFF_DRES + REGION,
    OFF_W = OFF_Q + REGION,
    OFF_RSTD = OFF_W + 1024,
    OFF_SCALE = OFF_RSTD + 64,
    OFF_DW = OFF_SCALE + 64,
    OFF_WS = OFF_DW + 1024
};

typedef struct arena {
    rmst_buf buf;
    unsigned char *image; /* the poisoned content, to compare against */
    size_t ws_bytes;
} arena;

static char *at(const arena *ar, size_t off)
{
    return (char *)ar->buf.mem + off;
}

static void arena_poison(arena *ar)
{
    rmst_buf_fill(&ar->buf, 0xa5);
    memcpy(ar->image, ar->buf.host, ar->buf.bytes);
    rmst_buf_upload(&ar->buf);
}

/* 1 when nothing in the arena changed. */
static int arena_unchanged(arena *ar, size_t *first)
{
    rmst_buf_download(&ar->buf);
    for (size_t i = 0; i < ar->buf.bytes; i++) {
        if (ar->buf.host[i] != ar->image[i]) {
            *first = i;
            return 0;
        }
    }
    return 1;
}

static rmsnorm_matrix mat(const arena *ar, size_t off, rmsnorm_dtype t, int64_t stride)
{
    rmsnorm_matrix m = {at(ar, off), t, ROWS, COLS, stride};
    return m;
}

static void base_forward(const arena *ar, rmsnorm_forward_args *a)
{
    memset(a, 0, sizeof *a);
    a->struct_size = sizeof *a;
    a->x = mat(ar, OFF_X, RMSNORM_F32, STRIDE);
    a->residual = mat(ar, OFF_RES, RMSNORM_F32, STRIDE);
    a->h_out = mat(ar, OFF_H, RMSNORM_F32, STRIDE);
    a->weight = at(ar, OFF_W);
    a->weight_dtype = RMSNORM_F32;
    a->eps = 1e-6f;
    a->flags = RMSNORM_ROUND_LLAMA;
    a->y = mat(ar, OFF_Y, RMSNORM_F32, STRIDE);
    a->rstd = (float *)(void *)at(ar, OFF_RSTD);
    a->quant_mode = RMSNORM_QUANT_PER_TOKEN;
    a->q = mat(ar, OFF_Q, RMSNORM_F8_E4M3, COLS);
    a->scale = (float *)(void *)at(ar, OFF_SCALE);
}

static void base_backward(const arena *ar, rmsnorm_backward_args *a)
{
    memset(a, 0, sizeof *a);
    a->struct_size = sizeof *a;
    a->dy = mat(ar, OFF_DY, RMSNORM_F32, STRIDE);
    a->x = mat(ar, OFF_X, RMSNORM_F32, STRIDE);
    a->weight = at(ar, OFF_W);
    a->weight_dtype = RMSNORM_F32;
    a->rstd = (const float *)(const void *)at(ar, OFF_RSTD);
    a->eps = 1e-6f;
    a->flags = RMSNORM_ROUND_LLAMA;
    a->dx = mat(ar, OFF_DX, RMSNORM_F32, STRIDE);
    a->dresidual = mat(ar, OFF_DRES, RMSNORM_F32, STRIDE);
    a->dweight = (float *)(void *)at(ar, OFF_DW);
    a->workspace = at(ar, OFF_WS);
    a->workspace_bytes = ar->ws_bytes;
}

static void fwd_shapes(rmsnorm_forward_args *a, int64_t rows, int64_t cols, int64_t stride)
{
    rmsnorm_matrix *ms[] = {&a->x, &a->residual, &a->h_out, &a->y, &a->q};
    for (size_t i = 0; i < sizeof ms / sizeof ms[0]; i++) {
        ms[i]->rows = rows;
        ms[i]->cols = cols;
        ms[i]->row_stride = stride;
    }
}

static void bwd_shapes(rmsnorm_backward_args *a, int64_t rows, int64_t cols, int64_t stride)
{
    rmsnorm_matrix *ms[] = {&a->dy, &a->x, &a->dx, &a->dresidual};
    for (size_t i = 0; i < sizeof ms / sizeof ms[0]; i++) {
        ms[i]->rows = rows;
        ms[i]->cols = cols;
        ms[i]->row_stride = stride;
    }
}

/* Forward entries: each breaks one thing in the base call. */
typedef enum fwd_case {
    F_BASE, F_NULL_ARGS, F_NULL_BACKEND, F_NULL_X, F_NO_OUTPUT, F_NULL_Q, F_NULL_SCALE,
    F_ROWS_NEG, F_COLS_ZERO, F_STRIDE_SMALL, F_Y_ROWS_DIFFER, F_RES_COLS_DIFFER,
    F_OVERFLOW_INT64, F_OVERFLOW_BYTES, F_X_DTYPE_UNKNOWN, F_X_DTYPE_FP8, F_Y_DTYPE_DIFFERS,
    F_WEIGHT_DTYPE_OTHER, F_Q_DTYPE_NOT_FP8, F_EPS_NAN, F_EPS_NEG, F_EPS_INF, F_EPS_NEG_INF,
    F_Y_OVERLAPS_X, F_Y_SAME_DATA_OTHER_STRIDE, F_H_OVERLAPS_Y, F_RSTD_IN_Y, F_SCALE_IN_Q,
    F_Y_IS_X, F_H_IS_RES, F_SIZE_ZERO, F_SIZE_ONE_FIELD, F_SIZE_LARGER_DIRTY, F_SIZE_LARGER_CLEAN,
    F_FLAGS_UNKNOWN, F_POW2_STATIC, F_BLOCK_COLS, F_QUANT_UNKNOWN, F_UB_NEG, F_UB_NAN,
    F_OFFSET_NAN, F_OFFSET_NO_WEIGHT, F_H_NO_RESIDUAL, F_X_MISALIGNED, F_RSTD_MISALIGNED,
    F_W_MISALIGNED, F_ONE_ROW_HUGE_STRIDE, F_STRIDE_PAST_INT64, F_COUNT
} fwd_case;

typedef struct entry {
    const char *name;
    int id;
    rmsnorm_status expect;
} entry;

static const entry k_fwd[] = {
    {"valid base call", F_BASE, RMSNORM_OK},
    {"args NULL", F_NULL_ARGS, RMSNORM_ERR_NULL_POINTER},
    {"backend NULL", F_NULL_BACKEND, RMSNORM_ERR_BACKEND_UNAVAILABLE},
    {"x.data NULL", F_NULL_X, RMSNORM_ERR_NULL_POINTER},
    {"no y and no quant", F_NO_OUTPUT, RMSNORM_ERR_NULL_POINTER},
    {"quant with q.data NULL", F_NULL_Q, RMSNORM_ERR_NULL_POINTER},
    {"quant with scale NULL", F_NULL_SCALE, RMSNORM_ERR_NULL_POINTER},
    {"rows < 0", F_ROWS_NEG, RMSNORM_ERR_BAD_SHAPE},
    {"cols < 1", F_COLS_ZERO, RMSNORM_ERR_BAD_SHAPE},
    {"row_stride < cols", F_STRIDE_SMALL, RMSNORM_ERR_BAD_SHAPE},
    {"y rows differ from x", F_Y_ROWS_DIFFER, RMSNORM_ERR_BAD_SHAPE},
    {"residual cols differ from x", F_RES_COLS_DIFFER, RMSNORM_ERR_BAD_SHAPE},
    {"rows = stride = INT64_MAX/2", F_OVERFLOW_INT64, RMSNORM_ERR_BAD_SHAPE},
    {"rows*stride*4 past int64", F_OVERFLOW_BYTES, RMSNORM_ERR_BAD_SHAPE},
    {"3 rows, stride past INT64_MAX/2", F_STRIDE_PAST_INT64, RMSNORM_ERR_BAD_SHAPE},
    {"one row, stride 2^40 (allowed: no second row)", F_ONE_ROW_HUGE_STRIDE, RMSNORM_OK},
    {"x dtype unknown", F_X_DTYPE_UNKNOWN, RMSNORM_ERR_BAD_DTYPE},
    {"x dtype fp8", F_X_DTYPE_FP8, RMSNORM_ERR_BAD_DTYPE},
    {"y dtype differs from x", F_Y_DTYPE_DIFFERS, RMSNORM_ERR_BAD_DTYPE},
    {"weight bf16 with f32 activations", F_WEIGHT_DTYPE_OTHER, RMSNORM_ERR_BAD_DTYPE},
    {"q dtype not fp8", F_Q_DTYPE_NOT_FP8, RMSNORM_ERR_BAD_DTYPE},
    {"eps NaN", F_EPS_NAN, RMSNORM_ERR_BAD_EPS},
    {"eps negative", F_EPS_NEG, RMSNORM_ERR_BAD_EPS},
    {"eps +inf", F_EPS_INF, RMSNORM_ERR_BAD_EPS},
    {"eps -inf", F_EPS_NEG_INF, RMSNORM_ERR_BAD_EPS},
    {"y one element into x", F_Y_OVERLAPS_X, RMSNORM_ERR_BAD_ALIAS},
    {"y == x.data, other stride", F_Y_SAME_DATA_OTHER_STRIDE, RMSNORM_ERR_BAD_ALIAS},
    {"h_out overlaps y", F_H_OVERLAPS_Y, RMSNORM_ERR_BAD_ALIAS},
    {"rstd inside y", F_RSTD_IN_Y, RMSNORM_ERR_BAD_ALIAS},
    {"scale inside q", F_SCALE_IN_Q, RMSNORM_ERR_BAD_ALIAS},
    {"y == x exactly (allowed)", F_Y_IS_X, RMSNORM_OK},
    {"h_out == residual exactly (allowed)", F_H_IS_RES, RMSNORM_OK},
    {"struct_size 0", F_SIZE_ZERO, RMSNORM_ERR_BAD_STRUCT_SIZE},
    {"struct_size covers struct_size only", F_SIZE_ONE_FIELD, RMSNORM_ERR_BAD_STRUCT_SIZE},
    {"larger struct, nonzero tail", F_SIZE_LARGER_DIRTY, RMSNORM_ERR_BAD_STRUCT_SIZE},
    {"larger struct, zero tail (accepted)", F_SIZE_LARGER_CLEAN, RMSNORM_OK},
    {"unknown flag bit", F_FLAGS_UNKNOWN, RMSNORM_ERR_BAD_FLAGS},
    {"SCALE_POW2 with a static scale", F_POW2_STATIC, RMSNORM_ERR_BAD_FLAGS},
    {"per-block with cols % 128 != 0", F_BLOCK_COLS, RMSNORM_ERR_BAD_SHAPE},
    {"unknown quant mode", F_QUANT_UNKNOWN, RMSNORM_ERR_BAD_ARGUMENT},
    {"scale_ub negative", F_UB_NEG, RMSNORM_ERR_BAD_ARGUMENT},
    {"scale_ub NaN", F_UB_NAN, RMSNORM_ERR_BAD_ARGUMENT},
    {"weight_offset NaN", F_OFFSET_NAN, RMSNORM_ERR_BAD_ARGUMENT},
    {"weight_offset without weight", F_OFFSET_NO_WEIGHT, RMSNORM_ERR_BAD_ARGUMENT},
    {"h_out without residual", F_H_NO_RESIDUAL, RMSNORM_ERR_BAD_ARGUMENT},
    {"x misaligned", F_X_MISALIGNED, RMSNORM_ERR_MISALIGNED},
    {"rstd misaligned", F_RSTD_MISALIGNED, RMSNORM_ERR_MISALIGNED},
    {"weight misaligned", F_W_MISALIGNED, RMSNORM_ERR_MISALIGNED},
};

/* A caller compiled against a later release: the struct plus a tail. */
typedef struct fwd_args_plus {
    rmsnorm_forward_args a;
    unsigned char tail[64];
} fwd_args_plus;

typedef struct bwd_args_plus {
    rmsnorm_backward_args a;
    unsigned char tail[64];
} bwd_args_plus;

static rmsnorm_status run_fwd(const rmsnorm_backend *be, const arena *ar, int id)
{
    fwd_args_plus p;
    rmsnorm_forward_args *a = &p.a;
    memset(&p, 0, sizeof p);
    base_forward(ar, a);
    switch (id) {
    case F_BASE: break;
    case F_NULL_ARGS: return rmsnorm_forward(be, NULL, NULL);
    case F_NULL_BACKEND: return rmsnorm_forward(NULL, a, NULL);
    case F_NULL_X: a->x.data = NULL; break;
    case F_NO_OUTPUT:
        a->quant_mode = RMSNORM_QUANT_NONE;
        memset(&a->q, 0, sizeof a->q);
        a->scale = NULL;
        a->y.data = NULL;
        break;
    case F_NULL_Q: a->q.data = NULL; break;
    case F_NULL_SCALE: a->scale = NULL; break;
    case F_ROWS_NEG: fwd_shapes(a, -1, COLS, STRIDE); break;
    case F_COLS_ZERO: fwd_shapes(a, ROWS, 0, STRIDE); break;
    case F_STRIDE_SMALL: a->x.row_stride = COLS - 1; break;
    case F_Y_ROWS_DIFFER: a->y.rows = ROWS - 1; break;
    case F_RES_COLS_DIFFER: a->residual.cols = COLS - 1; break;
    case F_OVERFLOW_INT64: fwd_shapes(a, INT64_MAX / 2, COLS, INT64_MAX / 2); break;
    case F_OVERFLOW_BYTES: fwd_shapes(a, INT64_C(1) << 30, COLS, INT64_C(1) << 33); break;
    case F_STRIDE_PAST_INT64: fwd_shapes(a, 3, COLS, INT64_MAX / 2 + 1); break;
    case F_ONE_ROW_HUGE_STRIDE: fwd_shapes(a, 1, COLS, INT64_C(1) << 40); break;
    case F_X_DTYPE_UNKNOWN: a->x.dtype = (rmsnorm_dtype)77; break;
    case F_X_DTYPE_FP8: a->x.dtype = RMSNORM_F8_E4M3; break;
    case F_Y_DTYPE_DIFFERS: a->y.dtype = RMSNORM_F16; break;
    case F_WEIGHT_DTYPE_OTHER: a->weight_dtype = RMSNORM_BF16; break;
    case F_Q_DTYPE_NOT_FP8: a->q.dtype = RMSNORM_F16; break;
    case F_EPS_NAN: a->eps = NAN; break;
    case F_EPS_NEG: a->eps = -1e-6f; break;
    case F_EPS_INF: a->eps = INFINITY; break;
    case F_EPS_NEG_INF: a->eps = -INFINITY; break;
    case F_Y_OVERLAPS_X: a->y.data = at(ar, OFF_X + sizeof(float)); break;
    case F_Y_SAME_DATA_OTHER_STRIDE:
        a->y.data = a->x.data;
        a->y.row_stride = STRIDE + 1;
        break;
    case F_H_OVERLAPS_Y: a->h_out.data = at(ar, OFF_Y + 16); break;
    case F_RSTD_IN_Y: a->rstd = (float *)(void *)at(ar, OFF_Y + 64); break;
    case F_SCALE_IN_Q: a->scale = (float *)(void *)at(ar, OFF_Q + 8); break;
    case F_Y_IS_X: a->y = a->x; break;
    case F_H_IS_RES: a->h_out = a->residual; break;
    case F_SIZE_ZERO: a->struct_size = 0; break;
    case F_SIZE_ONE_FIELD: a->struct_size = sizeof(size_t); break;
    case F_SIZE_LARGER_DIRTY:
        a->struct_size = sizeof p;
        p.tail[17] = 1;
        break;
    case F_SIZE_LARGER_CLEAN: a->struct_size = sizeof p; break;
    case F_FLAGS_UNKNOWN: a->flags |= 1u << 7; break;
    case F_POW2_STATIC:
        a->quant_mode = RMSNORM_QUANT_PER_TENSOR;
        a->flags |= RMSNORM_SCALE_POW2;
        break;
    case F_BLOCK_COLS:
        a->quant_mode = RMSNORM_QUANT_PER_BLOCK_128;
        fwd_shapes(a, ROWS, 200, STRIDE);
        break;
    case F_QUANT_UNKNOWN: a->quant_mode = (rmsnorm_quant)9; break;
    case F_UB_NEG: a->scale_ub = -1.0f; break;
    case F_UB_NAN: a->scale_ub = NAN; break;
    case F_OFFSET_NAN: a->weight_offset = NAN; break;
    case F_OFFSET_NO_WEIGHT:
        a->weight = NULL;
        a->weight_offset = 1.0f;
        break;
    case F_H_NO_RESIDUAL: memset(&a->residual, 0, sizeof a->residual); break;
    case F_X_MISALIGNED: a->x.data = at(ar, OFF_X + 2); break;
    case F_RSTD_MISALIGNED: a->rstd = (float *)(void *)at(ar, OFF_RSTD + 1); break;
    case F_W_MISALIGNED: a->weight = at(ar, OFF_W + 2); break;
    default: fail_msg("unknown forward entry %d", id);
    }
    return rmsnorm_forward(be, a, NULL);
}

typedef enum bwd_case {
    B_BASE, B_NULL_ARGS, B_NULL_BACKEND, B_NULL_DY, B_NULL_X, B_NULL_DX, B_NULL_WORKSPACE,
    B_WORKSPACE_SMALL, B_ROWS_NEG, B_COLS_ZERO, B_STRIDE_SMALL, B_DX_ROWS_DIFFER, B_OVERFLOW,
    B_DY_DTYPE_DIFFERS, B_DX_DTYPE_UNKNOWN, B_WEIGHT_DTYPE_FP8, B_EPS_NAN, B_EPS_NEG, B_EPS_INF,
    B_DX_OVERLAPS_DY, B_DW_IN_WORKSPACE, B_DX_OVERLAPS_X, B_DX_IS_DY, B_SIZE_ZERO,
    B_SIZE_LARGER_DIRTY, B_SIZE_LARGER_CLEAN, B_FLAGS_POW2, B_FLAGS_UNKNOWN, B_DW_NO_WEIGHT,
    B_OFFSET_INF, B_DX_MISALIGNED, B_RSTD_MISALIGNED, B_WS_MISALIGNED, B_ONE_ROW_HUGE_STRIDE,
    B_STRIDE_PAST_INT64
} bwd_case;

static const entry k_bwd[] = {
    {"valid base call", B_BASE, RMSNORM_OK},
    {"args NULL", B_NULL_ARGS, RMSNORM_ERR_NULL_POINTER},
    {"backend NULL", B_NULL_BACKEND, RMSNORM_ERR_BACKEND_UNAVAILABLE},
    {"dy.data NULL", B_NULL_DY, RMSNORM_ERR_NULL_POINTER},
    {"x.data NULL", B_NULL_X, RMSNORM_ERR_NULL_POINTER},
    {"dx.data NULL", B_NULL_DX, RMSNORM_ERR_NULL_POINTER},
    {"dweight with workspace NULL", B_NULL_WORKSPACE, RMSNORM_ERR_NULL_POINTER},
    {"workspace one byte too small", B_WORKSPACE_SMALL, RMSNORM_ERR_WORKSPACE_TOO_SMALL},
    {"rows < 0", B_ROWS_NEG, RMSNORM_ERR_BAD_SHAPE},
    {"cols < 1", B_COLS_ZERO, RMSNORM_ERR_BAD_SHAPE},
    {"row_stride < cols", B_STRIDE_SMALL, RMSNORM_ERR_BAD_SHAPE},
    {"dx rows differ", B_DX_ROWS_DIFFER, RMSNORM_ERR_BAD_SHAPE},
    {"rows = stride = INT64_MAX/2", B_OVERFLOW, RMSNORM_ERR_BAD_SHAPE},
    {"3 rows, stride past INT64_MAX/2", B_STRIDE_PAST_INT64, RMSNORM_ERR_BAD_SHAPE},
    {"one row, stride 2^40 (allowed: no second row)", B_ONE_ROW_HUGE_STRIDE, RMSNORM_OK},
    {"dy dtype differs from x", B_DY_DTYPE_DIFFERS, RMSNORM_ERR_BAD_DTYPE},
    {"dx dtype unknown", B_DX_DTYPE_UNKNOWN, RMSNORM_ERR_BAD_DTYPE},
    {"weight dtype fp8", B_WEIGHT_DTYPE_FP8, RMSNORM_ERR_BAD_DTYPE},
    {"eps NaN", B_EPS_NAN, RMSNORM_ERR_BAD_EPS},
    {"eps negative", B_EPS_NEG, RMSNORM_ERR_BAD_EPS},
    {"eps +inf", B_EPS_INF, RMSNORM_ERR_BAD_EPS},
    {"dx one element into dy", B_DX_OVERLAPS_DY, RMSNORM_ERR_BAD_ALIAS},
    {"dweight inside the workspace", B_DW_IN_WORKSPACE, RMSNORM_ERR_BAD_ALIAS},
    {"dx overlaps x", B_DX_OVERLAPS_X, RMSNORM_ERR_BAD_ALIAS},
    {"dx == dy exactly (allowed)", B_DX_IS_DY, RMSNORM_OK},
    {"struct_size 0", B_SIZE_ZERO, RMSNORM_ERR_BAD_STRUCT_SIZE},
    {"larger struct, nonzero tail", B_SIZE_LARGER_DIRTY, RMSNORM_ERR_BAD_STRUCT_SIZE},
    {"larger struct, zero tail (accepted)", B_SIZE_LARGER_CLEAN, RMSNORM_OK},
    {"SCALE_POW2 on the backward", B_FLAGS_POW2, RMSNORM_ERR_BAD_FLAGS},
    {"unknown flag bit", B_FLAGS_UNKNOWN, RMSNORM_ERR_BAD_FLAGS},
    {"dweight without weight", B_DW_NO_WEIGHT, RMSNORM_ERR_BAD_ARGUMENT},
    {"weight_offset inf", B_OFFSET_INF, RMSNORM_ERR_BAD_ARGUMENT},
    {"dx misaligned", B_DX_MISALIGNED, RMSNORM_ERR_MISALIGNED},
    {"rstd misaligned", B_RSTD_MISALIGNED, RMSNORM_ERR_MISALIGNED},
    {"workspace misaligned", B_WS_MISALIGNED, RMSNORM_ERR_MISALIGNED},
};

static rmsnorm_status run_bwd(const rmsnorm_backend *be, const arena *ar, int id)
{
    bwd_args_plus p;
    rmsnorm_backward_args *a = &p.a;
    memset(&p, 0, sizeof p);
    base_backward(ar, a);
    switch (id) {
    case B_BASE: break;
    case B_NULL_ARGS: return rmsnorm_backward(be, NULL, NULL);
    case B_NULL_BACKEND: return rmsnorm_backward(NULL, a, NULL);
    case B_NULL_DY: a->dy.data = NULL; break;
    case B_NULL_X: a->x.data = NULL; break;
    case B_NULL_DX: a->dx.data = NULL; break;
    case B_NULL_WORKSPACE: a->workspace = NULL; break;
    case B_WORKSPACE_SMALL: a->workspace_bytes = ar->ws_bytes - 1; break;
    case B_ROWS_NEG: bwd_shapes(a, -1, COLS, STRIDE); break;
    case B_COLS_ZERO: bwd_shapes(a, ROWS, 0, STRIDE); break;
    case B_STRIDE_SMALL: a->dy.row_stride = COLS - 1; break;
    case B_DX_ROWS_DIFFER: a->dx.rows = ROWS + 1; break;
    case B_OVERFLOW: bwd_shapes(a, INT64_MAX / 2, COLS, INT64_MAX / 2); break;
    case B_STRIDE_PAST_INT64: bwd_shapes(a, 3, COLS, INT64_MAX / 2 + 1); break;
    case B_ONE_ROW_HUGE_STRIDE: bwd_shapes(a, 1, COLS, INT64_C(1) << 40); break;
    case B_DY_DTYPE_DIFFERS: a->dy.dtype = RMSNORM_BF16; break;
    case B_DX_DTYPE_UNKNOWN: a->dx.dtype = (rmsnorm_dtype)99; break;
    case B_WEIGHT_DTYPE_FP8: a->weight_dtype = RMSNORM_F8_E5M2; break;
    case B_EPS_NAN: a->eps = NAN; break;
    case B_EPS_NEG: a->eps = -1.0f; break;
    case B_EPS_INF: a->eps = INFINITY; break;
    case B_DX_OVERLAPS_DY: a->dx.data = at(ar, OFF_DY + sizeof(float)); break;
    case B_DW_IN_WORKSPACE: a->dweight = (float *)(void *)at(ar, OFF_WS); break;
    case B_DX_OVERLAPS_X: a->dx.data = at(ar, OFF_X + (size_t)2 * STRIDE * sizeof(float)); break;
    case B_DX_IS_DY: a->dx = a->dy; break;
    case B_SIZE_ZERO: a->struct_size = 0; break;
    case B_SIZE_LARGER_DIRTY:
        a->struct_size = sizeof p;
        p.tail[sizeof p.tail - 1] = 0x80;
        break;
    case B_SIZE_LARGER_CLEAN: a->struct_size = sizeof p; break;
    case B_FLAGS_POW2: a->flags |= RMSNORM_SCALE_POW2; break;
    case B_FLAGS_UNKNOWN: a->flags |= 1u << 30; break;
    case B_DW_NO_WEIGHT: a->weight = NULL; break;
    case B_OFFSET_INF: a->weight_offset = INFINITY; break;
    case B_DX_MISALIGNED: a->dx.data = at(ar, OFF_DX + 1); break;
    case B_RSTD_MISALIGNED: a->rstd = (const float *)(const void *)at(ar, OFF_RSTD + 2); break;
    case B_WS_MISALIGNED: a->workspace = at(ar, OFF_WS + 1); break;
    default: fail_msg("unknown backward entry %d", id);
    }
    return rmsnorm_backward(be, a, NULL);
}

static void arena_init(arena *ar, const rmsnorm_backend *be)
{
    assert_int_equal(rmsnorm_backward_workspace_size(be, ROWS, COLS, &ar->ws_bytes), RMSNORM_OK);
    rmst_buf_init(&ar->buf, be, OFF_WS + ar->ws_bytes + 64);
    ar->image = malloc(ar->buf.bytes);
    assert_non_null(ar->image);
}

static void arena_free(arena *ar)
{
    rmst_buf_free(&ar->buf);
    free(ar->image);
}

/* Runs a table; returns the number of failed entries and ORs the statuses seen
 * into *seen (bit per status code). */
static int run_table(const rmst_backend *tb, arena *ar, const entry *tab, size_t n, int fwd,
                     uint32_t *seen)
{
    int failed = 0;
    for (size_t i = 0; i < n; i++) {
        const entry *e = &tab[i];
        rmsnorm_status st;
        size_t first = 0;
        if (!fwd && ar->ws_bytes == 0 && (e->id == B_NULL_WORKSPACE || e->id == B_WORKSPACE_SMALL)) {
            print_message("%s: backward \"%s\" not applicable: the workspace needed is 0 bytes\n",
                          tb->name, e->name);
            continue;
        }
        arena_poison(ar);
        st = fwd ? run_fwd(tb->be, ar, e->id) : run_bwd(tb->be, ar, e->id);
        if ((int)st >= 0 && (int)st < 32)
            *seen |= 1u << (unsigned)st;
        if (st != e->expect) {
            print_error("FAIL [%s] %s \"%s\": returned %d (%s), expected %d (%s)\n", tb->name,
                        fwd ? "forward" : "backward", e->name, (int)st, rmsnorm_status_string(st),
                        (int)e->expect, rmsnorm_status_string(e->expect));
            failed++;
            continue;
        }
        if (st != RMSNORM_OK && !arena_unchanged(ar, &first)) {
            print_error("FAIL [%s] %s \"%s\": rejected with %s but wrote arena byte %zu\n", tb->name,
                        fwd ? "forward" : "backward", e->name, rmsnorm_status_string(st), first);
            failed++;
        }
    }
    return failed;
}

/* Statuses the forward and backward tables returned on the current backend
 * (invalid_forward runs first in each group and resets it). */
static uint32_t g_seen;

static void invalid_forward(void **state)
{
    const rmst_backend *tb = rmst_backend_of(state);
    arena ar;
    int failed;
    g_seen = 0;
    arena_init(&ar, tb->be);
    failed = run_table(tb, &ar, k_fwd, sizeof k_fwd / sizeof k_fwd[0], 1, &g_seen);
    arena_free(&ar);
    if (failed > 0)
        fail_msg("%d forward entries failed on %s", failed, tb->name);
}

static void invalid_backward(void **state)
{
    const rmst_backend *tb = rmst_backend_of(state);
    arena ar;
    int failed;
    arena_init(&ar, tb->be);
    failed = run_table(tb, &ar, k_bwd, sizeof k_bwd / sizeof k_bwd[0], 0, &g_seen);
    arena_free(&ar);
    if (failed > 0)
        fail_msg("%d backward entries failed on %s", failed, tb->name);
    /* the tables reach every code but the two the header comment explains */
    for (int s = RMSNORM_ERR_NULL_POINTER; s <= RMSNORM_ERR_MISALIGNED; s++) {
        if (s == RMSNORM_ERR_UNSUPPORTED || s == RMSNORM_ERR_DEVICE)
            continue;
        if ((g_seen & (1u << (unsigned)s)) == 0)
            fail_msg("status %d (%s) was not reached by the tables on %s", s,
                     rmsnorm_status_string((rmsnorm_status)s), tb->name);
    }
}

/* The other entry points: memory helpers, workspace and scale-count queries. */
static void invalid_helpers(void **state)
{
    const rmst_backend *tb = rmst_backend_of(state);
    const rmsnorm_backend *be = tb->be;
    void *p = NULL;
    size_t n = 0;
    char host[16];
    assert_int_equal(rmsnorm_mem_alloc(NULL, 16, &p), RMSNORM_ERR_BACKEND_UNAVAILABLE);
    assert_int_equal(rmsnorm_mem_alloc(be, 16, NULL), RMSNORM_ERR_NULL_POINTER);
    assert_int_equal(rmsnorm_mem_alloc(be, 0, &p), RMSNORM_ERR_BAD_SHAPE);
    assert_int_equal(rmsnorm_mem_free(NULL, NULL), RMSNORM_ERR_BACKEND_UNAVAILABLE);
    assert_int_equal(rmsnorm_synchronize(NULL, NULL), RMSNORM_ERR_BACKEND_UNAVAILABLE);
    assert_int_equal(rmsnorm_mem_alloc(be, 16, &p), RMSNORM_OK);
    memset(host, 0x3c, sizeof host);
    assert_int_equal(rmsnorm_mem_copy(be, p, host, sizeof host, (rmsnorm_copy_dir)7, NULL),
                     RMSNORM_ERR_BAD_ARGUMENT);
    assert_int_equal(rmsnorm_mem_copy(be, NULL, host, sizeof host, RMSNORM_COPY_TO_BACKEND, NULL),
                     RMSNORM_ERR_NULL_POINTER);
    assert_int_equal(rmsnorm_mem_copy(be, p, NULL, sizeof host, RMSNORM_COPY_TO_BACKEND, NULL),
                     RMSNORM_ERR_NULL_POINTER);
    assert_int_equal(rmsnorm_mem_copy(NULL, p, host, sizeof host, RMSNORM_COPY_TO_BACKEND, NULL),
                     RMSNORM_ERR_BACKEND_UNAVAILABLE);
    assert_int_equal(rmsnorm_mem_free(be, p), RMSNORM_OK);

    assert_int_equal(rmsnorm_backward_workspace_size(NULL, 1, 1, &n), RMSNORM_ERR_BACKEND_UNAVAILABLE);
    assert_int_equal(rmsnorm_backward_workspace_size(be, 1, 1, NULL), RMSNORM_ERR_NULL_POINTER);
    assert_int_equal(rmsnorm_backward_workspace_size(be, -1, 1, &n), RMSNORM_ERR_BAD_SHAPE);
    assert_int_equal(rmsnorm_backward_workspace_size(be, 1, 0, &n), RMSNORM_ERR_BAD_SHAPE);
    assert_int_equal(rmsnorm_backward_workspace_size(be, 0, 1, &n), RMSNORM_OK);

    assert_int_equal(rmsnorm_quant_scale_count(RMSNORM_QUANT_PER_BLOCK_128, 3, 200, &n),
                     RMSNORM_ERR_BAD_SHAPE);
    assert_int_equal(rmsnorm_quant_scale_count((rmsnorm_quant)9, 3, 256, &n), RMSNORM_ERR_BAD_ARGUMENT);
    assert_int_equal(rmsnorm_quant_scale_count(RMSNORM_QUANT_PER_TOKEN, 3, 256, NULL),
                     RMSNORM_ERR_NULL_POINTER);
    assert_int_equal(rmsnorm_quant_scale_count(RMSNORM_QUANT_PER_TOKEN, -1, 256, &n),
                     RMSNORM_ERR_BAD_SHAPE);

    assert_null(rmsnorm_backend_find("no-such-backend"));
    assert_null(rmsnorm_backend_find(""));
    assert_null(rmsnorm_backend_find(NULL));
}

/* RMSNORM_ERR_UNSUPPORTED for each capability the backend lacks. */
static void invalid_unsupported(void **state)
{
    const rmst_backend *tb = rmst_backend_of(state);
    uint32_t caps = rmsnorm_backend_caps(tb->be);
    arena ar;
    int tested = 0;
    arena_init(&ar, tb->be);
    if ((caps & RMSNORM_CAP_FORWARD) == 0) {
        arena_poison(&ar);
        assert_int_equal(run_fwd(tb->be, &ar, F_BASE), RMSNORM_ERR_UNSUPPORTED);
        tested++;
    }
    if ((caps & RMSNORM_CAP_BACKWARD) == 0) {
        arena_poison(&ar);
        assert_int_equal(run_bwd(tb->be, &ar, B_BASE), RMSNORM_ERR_UNSUPPORTED);
        tested++;
    }
    if ((caps & RMSNORM_CAP_FORWARD) != 0) {
        static const struct {
            uint32_t cap;
            rmsnorm_dtype t;
            rmsnorm_quant q;
            rmsnorm_dtype qt;
            int residual;
        } need[] = {
            {RMSNORM_CAP_F16, RMSNORM_F16, RMSNORM_QUANT_NONE, RMSNORM_F8_E4M3, 0},
            {RMSNORM_CAP_BF16, RMSNORM_BF16, RMSNORM_QUANT_NONE, RMSNORM_F8_E4M3, 0},
            {RMSNORM_CAP_F32, RMSNORM_F32, RMSNORM_QUANT_NONE, RMSNORM_F8_E4M3, 0},
            {RMSNORM_CAP_RESIDUAL, RMSNORM_F32, RMSNORM_QUANT_NONE, RMSNORM_F8_E4M3, 1},
            {RMSNORM_CAP_QUANT_PER_TENSOR, RMSNORM_F32, RMSNORM_QUANT_PER_TENSOR, RMSNORM_F8_E4M3, 0},
            {RMSNORM_CAP_QUANT_PER_TOKEN, RMSNORM_F32, RMSNORM_QUANT_PER_TOKEN, RMSNORM_F8_E4M3, 0},
            {RMSNORM_CAP_QUANT_PER_BLOCK, RMSNORM_F32, RMSNORM_QUANT_PER_BLOCK_128, RMSNORM_F8_E4M3, 0},
            {RMSNORM_CAP_FP8_E4M3, RMSNORM_F32, RMSNORM_QUANT_PER_TOKEN, RMSNORM_F8_E4M3, 0},
            {RMSNORM_CAP_FP8_E5M2, RMSNORM_F32, RMSNORM_QUANT_PER_TOKEN, RMSNORM_F8_E5M2, 0},
            {RMSNORM_CAP_FP8_E4M3FNUZ, RMSNORM_F32, RMSNORM_QUANT_PER_TOKEN, RMSNORM_F8_E4M3FNUZ, 0},
        };
        for (size_t i = 0; i < sizeof need / sizeof need[0]; i++) {
            rmsnorm_forward_args a;
            size_t first = 0;
            if ((caps & need[i].cap) != 0)
                continue;
            base_forward(&ar, &a);
            a.x.dtype = a.y.dtype = need[i].t;
            if (need[i].residual) {
                a.residual.dtype = a.h_out.dtype = need[i].t;
            } else {
                memset(&a.residual, 0, sizeof a.residual);
                memset(&a.h_out, 0, sizeof a.h_out);
            }
            a.quant_mode = need[i].q;
            a.q.dtype = need[i].qt;
            if (need[i].q == RMSNORM_QUANT_NONE) {
                memset(&a.q, 0, sizeof a.q);
                a.scale = NULL;
            }
            arena_poison(&ar);
            assert_int_equal(rmsnorm_forward(tb->be, &a, NULL), RMSNORM_ERR_UNSUPPORTED);
            assert_true(arena_unchanged(&ar, &first));
            tested++;
        }
    }
    if (tested == 0)
        print_message("%s advertises every capability: RMSNORM_ERR_UNSUPPORTED is not reachable on it\n",
                      tb->name);
    else
        print_message("%s: RMSNORM_ERR_UNSUPPORTED checked for %d missing capabilities\n", tb->name,
                      tested);
    arena_free(&ar);
}

/* RMSNORM_ERR_DEVICE: a runtime failure, reachable on device backends only. */
static void invalid_device(void **state)
{
    const rmst_backend *tb = rmst_backend_of(state);
    void *p = NULL;
    rmsnorm_status st;
    if (!rmsnorm_backend_is_device(tb->be)) {
        print_message("%s is a host backend: RMSNORM_ERR_DEVICE is not reachable on it\n", tb->name);
        return;
    }
    /* 2^50 bytes (1 PiB) is beyond any device */
    st = rmsnorm_mem_alloc(tb->be, (size_t)1 << 50, &p);
    if (st != RMSNORM_ERR_DEVICE && st != RMSNORM_ERR_BAD_SHAPE)
        fail_msg("%s: a 1 PiB allocation returned %d (%s), expected RMSNORM_ERR_DEVICE", tb->name,
                 (int)st, rmsnorm_status_string(st));
    print_message("%s: a 1 PiB allocation returned %s\n", tb->name, rmsnorm_status_string(st));
}

/* Every status has a string, and so does every unknown value. */
static void status_strings(void **state)
{
    static const int extra[] = {14, 100, 999, -1, 0x7FFFFFFF};
    const char *known[RMSNORM_ERR_MISALIGNED + 1];
    (void)state;
    for (int s = RMSNORM_OK; s <= RMSNORM_ERR_MISALIGNED; s++) {
        known[s] = rmsnorm_status_string((rmsnorm_status)s);
        assert_non_null(known[s]);
        assert_true(known[s][0] != '\0');
        for (int k = 0; k < s; k++)
            if (strcmp(known[k], known[s]) == 0)
                fail_msg("statuses %d and %d share the string \"%s\"", k, s, known[s]);
    }
    for (size_t i = 0; i < sizeof extra / sizeof extra[0]; i++) {
        const char *str = rmsnorm_status_string((rmsnorm_status)extra[i]);
        assert_non_null(str);
        assert_true(str[0] != '\0');
    }
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(invalid_forward),
        cmocka_unit_test(invalid_backward),
        cmocka_unit_test(invalid_helpers),
        cmocka_unit_test(invalid_unsupported),
        cmocka_unit_test(invalid_device),
    };
    const struct CMUnitTest global[] = {
        cmocka_unit_test(status_strings),
    };
    int failed;
    if (rmst_main_init(argc, argv) != 0)
        return 2;
    failed = cmocka_run_group_tests_name("status", global, NULL, NULL);
    failed += rmst_run_per_backend("invalid", tests, sizeof tests / sizeof tests[0]);
    return failed != 0;
}
