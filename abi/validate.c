/*
 * All argument checking, in one place, before any backend runs (docs/abi.md
 * lists the checks in order). A rejected call returns here, so nothing is
 * written. Backends then assume valid arguments (abi/rmsnorm_backend.h).
 */
#include <math.h>
#include <stddef.h>
#include <string.h>

#include "internal.h"

/* Shapes are capped below 2^31 rows and 2^31 columns so every backend can index
 * a row with 32-bit column offsets and launch one GPU grid dimension per row;
 * byte spans are then far below 2^63. */
#define MAX_DIM ((int64_t)0x7fffffff)
/* A larger struct is read up to its struct_size to check that its tail is zero;
 * bound the read so a garbage struct_size cannot walk off into unmapped memory. */
#define MAX_STRUCT_SIZE ((size_t)4096)

typedef struct span {
    uintptr_t lo, hi; /* [lo, hi); empty when lo == hi */
} span;

static int spans_overlap(span a, span b)
{
    return a.lo < a.hi && b.lo < b.hi && a.lo < b.hi && b.lo < a.hi;
}

static span flat_span(const void *p, size_t bytes)
{
    span s = {(uintptr_t)p, (uintptr_t)p};
    if (p != NULL)
        s.hi = s.lo + bytes; /* overflow excluded by the caller's checks */
    return s;
}

static int is_activation(rmsnorm_dtype t)
{
    return t == RMSNORM_F32 || t == RMSNORM_F16 || t == RMSNORM_BF16;
}

/* The checks below run on every call, and a 64-bit division is tens of
 * cycles: element sizes and alignments are powers of two, so those divide
 * by shifting and masking (session 38: the divisions were a tenth of a
 * one-row bf16 forward's time, perf). Same results for every input. */
static int is_aligned(const void *p, size_t a)
{
    if (a == 0)
        return 1;
    return (a & (a - 1)) == 0 ? ((uintptr_t)p & (a - 1)) == 0 : (uintptr_t)p % a == 0;
}

/* limit / es */
static uint64_t div_size(uint64_t limit, size_t es)
{
    switch (es) {
    case 1:
        return limit;
    case 2:
        return limit >> 1;
    case 4:
        return limit >> 2;
    case 8:
        return limit >> 3;
    default:
        return limit / es;
    }
}

/* Checks one matrix's own shape and computes its byte span. The expected
 * rows/cols come from x (shapes must agree). */
static rmsnorm_status check_matrix(const rmsnorm_matrix *m, int64_t rows, int64_t cols, span *out)
{
    size_t es = rmsnorm_dtype_size(m->dtype);
    if (es == 0)
        return RMSNORM_ERR_BAD_DTYPE;
    if (m->rows < 0 || m->cols < 1 || m->rows > MAX_DIM || m->cols > MAX_DIM)
        return RMSNORM_ERR_BAD_SHAPE;
    if (m->rows != rows || m->cols != cols || m->row_stride < m->cols)
        return RMSNORM_ERR_BAD_SHAPE;
    uint64_t elems = 0;
    if (m->rows > 0) {
        uint64_t last = (uint64_t)(m->rows - 1);
        uint64_t stride = (uint64_t)m->row_stride;
        /* last * stride <= INT64_MAX: rows <= MAX_DIM keeps last under 2^31,
         * so a stride under 2^32 cannot overflow and needs no division */
        if (last != 0 && stride >> 32 != 0 && stride > (uint64_t)INT64_MAX / last)
            return RMSNORM_ERR_BAD_SHAPE;
        elems = last * stride;
        if (elems > (uint64_t)INT64_MAX - (uint64_t)m->cols)
            return RMSNORM_ERR_BAD_SHAPE;
        elems += (uint64_t)m->cols;
    }
    if (elems > div_size((uint64_t)INT64_MAX, es) || elems * es > (uint64_t)SIZE_MAX)
        return RMSNORM_ERR_BAD_SHAPE;
    size_t bytes = (size_t)(elems * es);
    if ((uintptr_t)m->data > UINTPTR_MAX - bytes)
        return RMSNORM_ERR_BAD_SHAPE; /* the view would wrap the address space */
    if (!is_aligned(m->data, es))
        return RMSNORM_ERR_MISALIGNED;
    *out = flat_span(m->data, bytes);
    return RMSNORM_OK;
}

/* Checks a flat buffer of n elements of es bytes (rstd, scale, dweight, weight). */
static rmsnorm_status check_flat(const void *p, uint64_t n, size_t es, span *out)
{
    if (n > div_size((uint64_t)SIZE_MAX, es) || (uintptr_t)p > UINTPTR_MAX - (size_t)(n * es))
        return RMSNORM_ERR_BAD_SHAPE;
    if (!is_aligned(p, es))
        return RMSNORM_ERR_MISALIGNED;
    *out = flat_span(p, (size_t)(n * es));
    return RMSNORM_OK;
}

/* Exact in-place: the same elements under the same view. */
static int same_view(const rmsnorm_matrix *a, const rmsnorm_matrix *b)
{
    return a->data == b->data && a->row_stride == b->row_stride && a->dtype == b->dtype;
}

/* The sizes of the first released (1.0) structs. A caller compiled against any
 * release from 1.0 on passes at least this much; a later release that appends
 * fields keeps these constants, and its callers' missing fields read as zero. */
#define FORWARD_ARGS_V1_0_SIZE (offsetof(rmsnorm_forward_args, scale) + sizeof(float *))
#define BACKWARD_ARGS_V1_0_SIZE (offsetof(rmsnorm_backward_args, workspace_bytes) + sizeof(size_t))

/* Copies a caller's struct of any accepted size into a zeroed full-size one. */
static inline rmsnorm_status normalise_struct(const void *in, size_t first_released, size_t known, void *out)
{
    size_t caller = *(const size_t *)in; /* struct_size is the first member of every args struct */
    if (caller < first_released || caller > MAX_STRUCT_SIZE) {
        memset(out, 0, known);
        return RMSNORM_ERR_BAD_STRUCT_SIZE;
    }
    const unsigned char *tail = (const unsigned char *)in;
    for (size_t i = known; i < caller; i++)
        if (tail[i] != 0) /* a newer caller asks for something this library does not know */
            return RMSNORM_ERR_BAD_STRUCT_SIZE;
    /* One copy of a constant size in the common case (a caller of this
     * release): zeroing the whole struct and then copying over it put two
     * string operations on every call, and the checks' first loads waited
     * for them (a fifth of a one-row bf16 forward, perf, session 38). */
    if (caller >= known) {
        memcpy(out, in, known);
    } else {
        memcpy(out, in, caller);
        memset((unsigned char *)out + caller, 0, known - caller);
    }
    *(size_t *)out = known;
    return RMSNORM_OK;
}

static uint32_t dtype_cap(rmsnorm_dtype t)
{
    switch (t) {
    case RMSNORM_F32: return RMSNORM_CAP_F32;
    case RMSNORM_F16: return RMSNORM_CAP_F16;
    case RMSNORM_BF16: return RMSNORM_CAP_BF16;
    case RMSNORM_F8_E4M3: return RMSNORM_CAP_FP8_E4M3;
    case RMSNORM_F8_E5M2: return RMSNORM_CAP_FP8_E5M2;
    case RMSNORM_F8_E4M3FNUZ: return RMSNORM_CAP_FP8_E4M3FNUZ;
    case RMSNORM_DTYPE_MAX_ENUM:
    default: return 0;
    }
}

static uint32_t quant_cap(rmsnorm_quant q)
{
    switch (q) {
    case RMSNORM_QUANT_PER_TENSOR: return RMSNORM_CAP_QUANT_PER_TENSOR;
    case RMSNORM_QUANT_PER_TOKEN: return RMSNORM_CAP_QUANT_PER_TOKEN;
    case RMSNORM_QUANT_PER_BLOCK_128: return RMSNORM_CAP_QUANT_PER_BLOCK;
    case RMSNORM_QUANT_NONE:
    case RMSNORM_QUANT_MAX_ENUM:
    default: return 0;
    }
}

/* weight, weight_dtype and weight_offset, shared by forward and backward. */
static rmsnorm_status check_weight(const void *w, rmsnorm_dtype wt, float offset, rmsnorm_dtype xt,
                                   int64_t cols, span *out)
{
    if (!isfinite(offset))
        return RMSNORM_ERR_BAD_ARGUMENT;
    if (w == NULL) {
        *out = flat_span(NULL, 0);
        return offset == 0.0f ? RMSNORM_OK : RMSNORM_ERR_BAD_ARGUMENT;
    }
    if (wt != RMSNORM_F32 && wt != xt)
        return RMSNORM_ERR_BAD_DTYPE;
    return check_flat(w, (uint64_t)cols, rmsnorm_dtype_size(wt), out);
}

static rmsnorm_status check_eps(float eps)
{
    return (isfinite(eps) && eps >= 0.0f) ? RMSNORM_OK : RMSNORM_ERR_BAD_EPS;
}

/* The shared tail of both validators: outputs must not overlap each other, and
 * may touch an input only as an exact in-place view (allowed[i][j] set by the
 * caller for matrix pairs). */
#define MAX_BUFS 8
typedef struct buf {
    span s;
    const rmsnorm_matrix *m; /* NULL for flat buffers */
    int output;
} buf;

/* Most slots of a call are absent (empty spans, which overlap nothing), so
 * the pairs are taken over the present ones only: a quarter of a one-row
 * bf16 forward's time went to the 81 pairs of its 9 slots (perf, session 38).
 * The pairs are visited in the same order, so the first error is the same. */
#define RMSI_MAX_SLOTS 16

static rmsnorm_status check_aliases(const buf *b, int n, int (*inplace_ok)(int out, int in))
{
    int at[RMSI_MAX_SLOTS], k = 0;

    if (RMSI_NEVER(n > RMSI_MAX_SLOTS))
        return RMSNORM_ERR_BAD_ARGUMENT;
    for (int i = 0; i < n; i++)
        if (b[i].s.lo < b[i].s.hi)
            at[k++] = i;
    for (int p = 0; p < k; p++) {
        const int i = at[p];
        if (!b[i].output)
            continue;
        for (int q = 0; q < k; q++) {
            const int j = at[q];
            if (j == i || !spans_overlap(b[i].s, b[j].s))
                continue;
            if (b[j].output) /* outputs never share bytes */
                return RMSNORM_ERR_BAD_ALIAS;
            if (b[i].m == NULL || b[j].m == NULL || !inplace_ok(i, j) || !same_view(b[i].m, b[j].m))
                return RMSNORM_ERR_BAD_ALIAS;
        }
    }
    return RMSNORM_OK;
}

/* Forward buffer slots. */
enum { F_X, F_RES, F_W, F_SCALE_IN, F_Y, F_H, F_RSTD, F_Q, F_SCALE_OUT, F_N };

static int forward_inplace_ok(int out, int in)
{
    return (out == F_Y && in == F_X) || (out == F_H && (in == F_RES || in == F_X)) ||
           (out == F_Y && in == F_RES);
}

rmsnorm_status rmsi_validate_forward(const rmsnorm_backend *be, const rmsnorm_forward_args *in,
                                     rmsnorm_forward_args *a)
{
    if (be == NULL)
        return RMSNORM_ERR_BACKEND_UNAVAILABLE;
    if (in == NULL || a == NULL)
        return RMSNORM_ERR_NULL_POINTER;
    rmsnorm_status st = normalise_struct(in, FORWARD_ARGS_V1_0_SIZE, sizeof *a, a);
    if (st != RMSNORM_OK)
        return st;
    if ((be->caps & RMSNORM_CAP_FORWARD) == 0)
        return RMSNORM_ERR_UNSUPPORTED;

    const uint32_t known = RMSNORM_ROUND_LLAMA | RMSNORM_SCALE_POW2;
    if ((a->flags & ~known) != 0)
        return RMSNORM_ERR_BAD_FLAGS;
    const int dynamic = a->quant_mode == RMSNORM_QUANT_PER_TOKEN ||
                        a->quant_mode == RMSNORM_QUANT_PER_BLOCK_128;
    if (a->quant_mode != RMSNORM_QUANT_NONE && quant_cap(a->quant_mode) == 0)
        return RMSNORM_ERR_BAD_ARGUMENT;
    if ((a->flags & RMSNORM_SCALE_POW2) != 0 && !dynamic)
        return RMSNORM_ERR_BAD_FLAGS;

    /* required pointers */
    const int quant = a->quant_mode != RMSNORM_QUANT_NONE;
    if (a->x.data == NULL)
        return RMSNORM_ERR_NULL_POINTER;
    if (!quant && a->y.data == NULL)
        return RMSNORM_ERR_NULL_POINTER;
    if (quant && (a->q.data == NULL || a->scale == NULL))
        return RMSNORM_ERR_NULL_POINTER;

    /* dtypes */
    const rmsnorm_dtype t = a->x.dtype;
    if (!is_activation(t))
        return RMSNORM_ERR_BAD_DTYPE;
    if ((a->residual.data && a->residual.dtype != t) || (a->h_out.data && a->h_out.dtype != t) ||
        (a->y.data && a->y.dtype != t) || (quant && !(dtype_cap(a->q.dtype) & (RMSNORM_CAP_FP8_E4M3 |
                                                                             RMSNORM_CAP_FP8_E5M2 |
                                                                             RMSNORM_CAP_FP8_E4M3FNUZ))))
        return RMSNORM_ERR_BAD_DTYPE;

    /* shapes, sizes, alignment */
    buf b[F_N];
    memset(b, 0, sizeof b);
    const int64_t rows = a->x.rows, cols = a->x.cols;
    if ((st = check_matrix(&a->x, rows, cols, &b[F_X].s)) != RMSNORM_OK)
        return st;
    b[F_X].m = &a->x;
    if (a->residual.data) {
        if ((st = check_matrix(&a->residual, rows, cols, &b[F_RES].s)) != RMSNORM_OK)
            return st;
        b[F_RES].m = &a->residual;
    }
    if (a->h_out.data) {
        if (a->residual.data == NULL)
            return RMSNORM_ERR_BAD_ARGUMENT; /* h is only defined with a residual */
        if ((st = check_matrix(&a->h_out, rows, cols, &b[F_H].s)) != RMSNORM_OK)
            return st;
        b[F_H].m = &a->h_out;
    }
    if (a->y.data) {
        if ((st = check_matrix(&a->y, rows, cols, &b[F_Y].s)) != RMSNORM_OK)
            return st;
        b[F_Y].m = &a->y;
    }
    if (quant) {
        if ((st = check_matrix(&a->q, rows, cols, &b[F_Q].s)) != RMSNORM_OK)
            return st;
        b[F_Q].m = &a->q;
        size_t nscale = 0;
        if ((st = rmsnorm_quant_scale_count(a->quant_mode, rows, cols, &nscale)) != RMSNORM_OK)
            return st;
        int slot = a->quant_mode == RMSNORM_QUANT_PER_TENSOR ? F_SCALE_IN : F_SCALE_OUT;
        if ((st = check_flat(a->scale, nscale, sizeof(float), &b[slot].s)) != RMSNORM_OK)
            return st;
    }
    if (a->rstd && (st = check_flat(a->rstd, (uint64_t)rows, sizeof(float), &b[F_RSTD].s)) != RMSNORM_OK)
        return st;
    if ((st = check_weight(a->weight, a->weight_dtype, a->weight_offset, t, cols, &b[F_W].s)) != RMSNORM_OK)
        return st;

    /* scalars */
    if ((st = check_eps(a->eps)) != RMSNORM_OK)
        return st;
    if (!isfinite(a->scale_ub) || a->scale_ub < 0.0f ||
        (a->scale_ub != 0.0f && a->quant_mode != RMSNORM_QUANT_PER_TOKEN))
        return RMSNORM_ERR_BAD_ARGUMENT;

    /* aliasing */
    b[F_Y].output = b[F_H].output = b[F_RSTD].output = b[F_Q].output = b[F_SCALE_OUT].output = 1;
    if ((st = check_aliases(b, F_N, forward_inplace_ok)) != RMSNORM_OK)
        return st;

    /* what this backend implements */
    uint32_t need = dtype_cap(t);
    if (a->residual.data)
        need |= RMSNORM_CAP_RESIDUAL;
    if (quant)
        need |= quant_cap(a->quant_mode) | dtype_cap(a->q.dtype);
    if ((be->caps & need) != need)
        return RMSNORM_ERR_UNSUPPORTED;
    return RMSNORM_OK;
}

/* Backward buffer slots. */
enum { B_DY, B_X, B_W, B_RSTD, B_DRES, B_DX, B_DW, B_WS, B_N };

static int backward_inplace_ok(int out, int in)
{
    return out == B_DX && (in == B_DY || in == B_DRES);
}

rmsnorm_status rmsi_validate_backward(const rmsnorm_backend *be, const rmsnorm_backward_args *in,
                                      rmsnorm_backward_args *a)
{
    if (be == NULL)
        return RMSNORM_ERR_BACKEND_UNAVAILABLE;
    if (in == NULL || a == NULL)
        return RMSNORM_ERR_NULL_POINTER;
    rmsnorm_status st = normalise_struct(in, BACKWARD_ARGS_V1_0_SIZE, sizeof *a, a);
    if (st != RMSNORM_OK)
        return st;
    if ((be->caps & RMSNORM_CAP_BACKWARD) == 0)
        return RMSNORM_ERR_UNSUPPORTED;
    if ((a->flags & ~RMSNORM_ROUND_LLAMA) != 0)
        return RMSNORM_ERR_BAD_FLAGS;
    if (a->dy.data == NULL || a->x.data == NULL || a->dx.data == NULL)
        return RMSNORM_ERR_NULL_POINTER;

    const rmsnorm_dtype t = a->x.dtype;
    if (!is_activation(t) || a->dy.dtype != t || a->dx.dtype != t ||
        (a->dresidual.data && a->dresidual.dtype != t))
        return RMSNORM_ERR_BAD_DTYPE;

    buf b[B_N];
    memset(b, 0, sizeof b);
    const int64_t rows = a->x.rows, cols = a->x.cols;
    if ((st = check_matrix(&a->x, rows, cols, &b[B_X].s)) != RMSNORM_OK ||
        (st = check_matrix(&a->dy, rows, cols, &b[B_DY].s)) != RMSNORM_OK ||
        (st = check_matrix(&a->dx, rows, cols, &b[B_DX].s)) != RMSNORM_OK)
        return st;
    b[B_X].m = &a->x;
    b[B_DY].m = &a->dy;
    b[B_DX].m = &a->dx;
    if (a->dresidual.data) {
        if ((st = check_matrix(&a->dresidual, rows, cols, &b[B_DRES].s)) != RMSNORM_OK)
            return st;
        b[B_DRES].m = &a->dresidual;
    }
    if ((st = check_weight(a->weight, a->weight_dtype, a->weight_offset, t, cols, &b[B_W].s)) != RMSNORM_OK)
        return st;
    if (a->rstd && (st = check_flat(a->rstd, (uint64_t)rows, sizeof(float), &b[B_RSTD].s)) != RMSNORM_OK)
        return st;
    if ((st = check_eps(a->eps)) != RMSNORM_OK)
        return st;

    if (a->dweight) {
        if (a->weight == NULL)
            return RMSNORM_ERR_BAD_ARGUMENT; /* no weight, no weight gradient */
        if ((st = check_flat(a->dweight, (uint64_t)cols, sizeof(float), &b[B_DW].s)) != RMSNORM_OK)
            return st;
        size_t need = 0;
        if ((st = be->backward_workspace_size(rows, cols, &need)) != RMSNORM_OK)
            return st;
        if (need > 0 && a->workspace == NULL)
            return RMSNORM_ERR_NULL_POINTER;
        if (a->workspace_bytes < need)
            return RMSNORM_ERR_WORKSPACE_TOO_SMALL;
        /* 16 bytes: device backends load and store the partials as vectors */
        if (!is_aligned(a->workspace, 16))
            return RMSNORM_ERR_MISALIGNED;
        if ((uintptr_t)a->workspace > UINTPTR_MAX - need)
            return RMSNORM_ERR_BAD_SHAPE;
        b[B_WS].s = flat_span(a->workspace, need);
    }

    b[B_DX].output = b[B_DW].output = b[B_WS].output = 1;
    if ((st = check_aliases(b, B_N, backward_inplace_ok)) != RMSNORM_OK)
        return st;

    uint32_t need_caps = dtype_cap(t);
    if ((be->caps & need_caps) != need_caps)
        return RMSNORM_ERR_UNSUPPORTED;
    return RMSNORM_OK;
}
