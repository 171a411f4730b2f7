/*
 * A caller compiled against the frozen 1.0 header (abi/v1.0/rmsnorm.h, the
 * include path has only that folder) and run against the current library, once
 * linked statically and once through librmsnorm.so.1. It exercises the
 * struct_size rules of docs/abi.md: the 1.0 struct works; a newer (larger)
 * struct works with a zero tail and is rejected with a non-zero one; a struct
 * smaller than the first released (1.0) one is rejected. Rejections write
 * nothing.
 *
 * Prints "N passed, N failed" and exits non-zero on any failure.
 */
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "rmsnorm.h"

#if RMSNORM_VERSION_MAJOR != 1 || RMSNORM_VERSION_MINOR != 0
#error "tests/abi/compat.c must be compiled against abi/v1.0/rmsnorm.h only"
#endif

/* The 1.0 values, restated: a renumbering in the frozen copy is a broken copy. */
_Static_assert(RMSNORM_ERR_BAD_STRUCT_SIZE == 6, "frozen status value");
_Static_assert(RMSNORM_ERR_MISALIGNED == 13, "frozen status value");
_Static_assert(RMSNORM_F8_E4M3FNUZ == 5, "frozen dtype value");
_Static_assert(RMSNORM_QUANT_PER_BLOCK_128 == 3, "frozen quant value");
_Static_assert(sizeof(rmsnorm_status) == 4 && sizeof(rmsnorm_dtype) == 4, "32-bit enums");

#define ROWS 3
#define COLS 8

static int passed, failed;

#define CHECK(cond)                                                                   \
    do {                                                                              \
        if (cond) {                                                                   \
            passed++;                                                                 \
        } else {                                                                      \
            failed++;                                                                 \
            (void)fprintf(stderr, "FAIL %s:%d: %s\n", __FILE__, __LINE__, #cond);     \
        }                                                                             \
    } while (0)

#define CHECK_STATUS(expr, want)                                                      \
    do {                                                                              \
        rmsnorm_status st_ = (expr);                                                  \
        if (st_ == (want)) {                                                          \
            passed++;                                                                 \
        } else {                                                                      \
            failed++;                                                                 \
            (void)fprintf(stderr, "FAIL %s:%d: %s = %d (%s), want %d\n", __FILE__,    \
                          __LINE__, #expr, (int)st_, rmsnorm_status_string(st_),      \
                          (int)(want));                                               \
        }                                                                             \
    } while (0)

/* A hand-written "older" forward struct: the 1.0 struct cut right after y, as
 * a pre-release without the rstd and quantisation fields would have declared
 * it. 1.0 is the first release, so the library must refuse it. */
typedef struct fwd_old {
    size_t struct_size;
    rmsnorm_matrix x;
    rmsnorm_matrix residual;
    rmsnorm_matrix h_out;
    const void *weight;
    rmsnorm_dtype weight_dtype;
    float weight_offset;
    float eps;
    uint32_t flags;
    rmsnorm_matrix y;
} fwd_old;
_Static_assert(offsetof(fwd_old, y) == offsetof(rmsnorm_forward_args, y), "prefix layout");
_Static_assert(sizeof(fwd_old) < sizeof(rmsnorm_forward_args), "older is smaller");

/* Likewise for backward: cut right after dx (no dresidual, dweight, workspace). */
typedef struct bwd_old {
    size_t struct_size;
    rmsnorm_matrix dy;
    rmsnorm_matrix x;
    const void *weight;
    rmsnorm_dtype weight_dtype;
    float weight_offset;
    const float *rstd;
    float eps;
    uint32_t flags;
    rmsnorm_matrix dx;
} bwd_old;
_Static_assert(offsetof(bwd_old, dx) == offsetof(rmsnorm_backward_args, dx), "prefix layout");
_Static_assert(sizeof(bwd_old) < sizeof(rmsnorm_backward_args), "older is smaller");

/* A "newer" caller: the 1.0 struct followed by fields this library does not know. */
typedef struct fwd_new {
    rmsnorm_forward_args base;
    uint64_t future[3];
} fwd_new;
typedef struct bwd_new {
    rmsnorm_backward_args base;
    uint64_t future[2];
} bwd_new;

/* A smaller struct placed at the start of a buffer whose bytes past it are
 * 0xFF: a library that read beyond struct_size would see garbage pointers and
 * enums instead of refusing. */
typedef union fwd_old_buf {
    fwd_old s;
    unsigned char bytes[sizeof(rmsnorm_forward_args) + 64];
} fwd_old_buf;
typedef union bwd_old_buf {
    bwd_old s;
    unsigned char bytes[sizeof(rmsnorm_backward_args) + 64];
} bwd_old_buf;

static float xs[ROWS * COLS], ws[COLS], dys[ROWS * COLS];
static float want_y[ROWS * COLS], want_rstd[ROWS], want_dx[ROWS * COLS], want_dw[COLS];

static rmsnorm_matrix mat(void *p)
{
    rmsnorm_matrix m;
    memset(&m, 0, sizeof m);
    m.data = p;
    m.dtype = RMSNORM_F32;
    m.rows = ROWS;
    m.cols = COLS;
    m.row_stride = COLS;
    return m;
}

/* fp64 expectations of the documented formulas (docs/numerics.md). */
static void make_expectations(float eps)
{
    for (int i = 0; i < COLS; i++)
        ws[i] = 0.5f + 0.125f * (float)i;
    for (int i = 0; i < ROWS * COLS; i++) {
        xs[i] = (float)((i * 7) % 11) * 0.25f - 1.0f;
        dys[i] = (float)((i * 5) % 13) * 0.125f - 0.75f;
    }
    for (int j = 0; j < COLS; j++)
        want_dw[j] = 0.0f;
    for (int r = 0; r < ROWS; r++) {
        double ss = 0.0, c = 0.0;
        for (int j = 0; j < COLS; j++)
            ss += (double)xs[r * COLS + j] * xs[r * COLS + j];
        double rstd = 1.0 / sqrt(ss / COLS + eps);
        want_rstd[r] = (float)rstd;
        for (int j = 0; j < COLS; j++) {
            double n = xs[r * COLS + j] * rstd;
            want_y[r * COLS + j] = (float)(n * ws[j]);
            c += (double)dys[r * COLS + j] * ws[j] * n;
        }
        c /= COLS;
        for (int j = 0; j < COLS; j++) {
            double n = xs[r * COLS + j] * rstd;
            double g = (double)dys[r * COLS + j] * ws[j];
            want_dx[r * COLS + j] = (float)(rstd * (g - n * c));
            want_dw[j] += (float)(dys[r * COLS + j] * n);
        }
    }
}

static int close_to(const float *a, const float *b, int n, double tol)
{
    for (int i = 0; i < n; i++)
        if (!(fabs((double)a[i] - b[i]) <= tol * (1.0 + fabs((double)b[i]))))
            return 0;
    return 1;
}

static void fill(float *p, int n, float v)
{
    for (int i = 0; i < n; i++)
        p[i] = v;
}

static int all_equal(const float *p, int n, float v)
{
    for (int i = 0; i < n; i++)
        if (p[i] != v)
            return 0;
    return 1;
}

static void test_library_identity(void)
{
    uint32_t v = rmsnorm_version();
    CHECK((v >> 16) == RMSNORM_VERSION_MAJOR);
    CHECK(v >= (uint32_t)RMSNORM_VERSION_NUMBER);
    for (int s = 0; s <= (int)RMSNORM_ERR_MISALIGNED; s++) {
        const char *str = rmsnorm_status_string((rmsnorm_status)s);
        CHECK(str != NULL && str[0] != '\0');
    }
    CHECK(rmsnorm_status_string((rmsnorm_status)0x12345) != NULL);
    CHECK(rmsnorm_dtype_size(RMSNORM_F32) == 4 && rmsnorm_dtype_size(RMSNORM_BF16) == 2 &&
          rmsnorm_dtype_size(RMSNORM_F8_E4M3FNUZ) == 1);
    CHECK(rmsnorm_dtype_size((rmsnorm_dtype)77) == 0);
    size_t count = 0;
    CHECK_STATUS(rmsnorm_quant_scale_count(RMSNORM_QUANT_PER_BLOCK_128, 5, 256, &count), RMSNORM_OK);
    CHECK(count == 16); /* 2 blocks of 128 columns x 5 rows padded to 8 */
    CHECK(rmsnorm_backend_count() >= 1);
    const rmsnorm_backend *ref = rmsnorm_backend_find("ref");
    CHECK(ref != NULL && strcmp(rmsnorm_backend_name(ref), "ref") == 0);
    CHECK(rmsnorm_backend_is_device(ref) == 0);
    CHECK((rmsnorm_backend_caps(ref) & RMSNORM_CAP_FORWARD) != 0);
    CHECK(rmsnorm_backend_find("no-such-backend") == NULL);
}

static void init_forward(rmsnorm_forward_args *a, float *y, float *rstd)
{
    memset(a, 0, sizeof *a);
    a->struct_size = sizeof *a;
    a->x = mat(xs);
    a->weight = ws;
    a->weight_dtype = RMSNORM_F32;
    a->eps = 1e-6f;
    a->y = mat(y);
    a->rstd = rstd;
}

static void test_forward_sizes(const rmsnorm_backend *be)
{
    float y[ROWS * COLS], rstd[ROWS];

    /* the 1.0 struct */
    rmsnorm_forward_args a;
    init_forward(&a, y, rstd);
    CHECK_STATUS(rmsnorm_forward(be, &a, NULL), RMSNORM_OK);
    CHECK(close_to(y, want_y, ROWS * COLS, 1e-5));
    CHECK(close_to(rstd, want_rstd, ROWS, 1e-5));

    /* smaller than the first released struct: refused, nothing written */
    fwd_old_buf ob;
    memset(ob.bytes, 0xFF, sizeof ob.bytes);
    memcpy(&ob.s, &a, sizeof ob.s);
    ob.s.struct_size = sizeof ob.s;
    fill(y, ROWS * COLS, -7.0f);
    fill(rstd, ROWS, -7.0f);
    CHECK_STATUS(rmsnorm_forward(be, (const rmsnorm_forward_args *)(const void *)&ob, NULL),
                 RMSNORM_ERR_BAD_STRUCT_SIZE);
    CHECK(all_equal(y, ROWS * COLS, -7.0f) && all_equal(rstd, ROWS, -7.0f));
    a.struct_size = sizeof a - sizeof(float *); /* one field short of 1.0 */
    CHECK_STATUS(rmsnorm_forward(be, &a, NULL), RMSNORM_ERR_BAD_STRUCT_SIZE);
    CHECK(all_equal(y, ROWS * COLS, -7.0f));
    a.struct_size = sizeof a;

    /* a newer, larger struct with a zero tail is accepted */
    fwd_new nb;
    memset(&nb, 0, sizeof nb);
    init_forward(&nb.base, y, rstd);
    nb.base.struct_size = sizeof nb;
    fill(y, ROWS * COLS, -7.0f);
    fill(rstd, ROWS, -7.0f);
    CHECK_STATUS(rmsnorm_forward(be, &nb.base, NULL), RMSNORM_OK);
    CHECK(close_to(y, want_y, ROWS * COLS, 1e-5));
    CHECK(close_to(rstd, want_rstd, ROWS, 1e-5));

    /* ... and rejected with a non-zero tail, writing nothing */
    nb.future[1] = 1;
    fill(y, ROWS * COLS, -7.0f);
    fill(rstd, ROWS, -7.0f);
    CHECK_STATUS(rmsnorm_forward(be, &nb.base, NULL), RMSNORM_ERR_BAD_STRUCT_SIZE);
    CHECK(all_equal(y, ROWS * COLS, -7.0f) && all_equal(rstd, ROWS, -7.0f));

    /* a struct_size that cannot even cover itself */
    a.struct_size = 0;
    CHECK_STATUS(rmsnorm_forward(be, &a, NULL), RMSNORM_ERR_BAD_STRUCT_SIZE);
    a.struct_size = 1;
    CHECK_STATUS(rmsnorm_forward(be, &a, NULL), RMSNORM_ERR_BAD_STRUCT_SIZE);
    CHECK(all_equal(y, ROWS * COLS, -7.0f));
}

static void init_backward(rmsnorm_backward_args *a, float *dx, float *dw, void *ws_buf,
                          size_t ws_bytes)
{
    memset(a, 0, sizeof *a);
    a->struct_size = sizeof *a;
    a->dy = mat(dys);
    a->x = mat(xs);
    a->weight = ws;
    a->weight_dtype = RMSNORM_F32;
    a->eps = 1e-6f;
    a->dx = mat(dx);
    a->dweight = dw;
    a->workspace = ws_buf;
    a->workspace_bytes = ws_bytes;
}

static void test_backward_sizes(const rmsnorm_backend *be)
{
    float dx[ROWS * COLS], dw[COLS];
    static double workspace[4096];
    size_t need = 0;
    CHECK_STATUS(rmsnorm_backward_workspace_size(be, ROWS, COLS, &need), RMSNORM_OK);
    CHECK(need <= sizeof workspace);
    if (need > sizeof workspace)
        return;

    rmsnorm_backward_args a;
    init_backward(&a, dx, dw, workspace, sizeof workspace);
    CHECK_STATUS(rmsnorm_backward(be, &a, NULL), RMSNORM_OK);
    CHECK(close_to(dx, want_dx, ROWS * COLS, 1e-5));
    CHECK(close_to(dw, want_dw, COLS, 1e-5));

    /* smaller than the first released struct: refused, nothing written */
    bwd_old_buf ob;
    memset(ob.bytes, 0xFF, sizeof ob.bytes);
    memcpy(&ob.s, &a, sizeof ob.s);
    ob.s.struct_size = sizeof ob.s;
    fill(dx, ROWS * COLS, -7.0f);
    fill(dw, COLS, -7.0f);
    CHECK_STATUS(rmsnorm_backward(be, (const rmsnorm_backward_args *)(const void *)&ob, NULL),
                 RMSNORM_ERR_BAD_STRUCT_SIZE);
    CHECK(all_equal(dx, ROWS * COLS, -7.0f) && all_equal(dw, COLS, -7.0f));

    bwd_new nb;
    memset(&nb, 0, sizeof nb);
    init_backward(&nb.base, dx, dw, workspace, sizeof workspace);
    nb.base.struct_size = sizeof nb;
    fill(dx, ROWS * COLS, -7.0f);
    CHECK_STATUS(rmsnorm_backward(be, &nb.base, NULL), RMSNORM_OK);
    CHECK(close_to(dx, want_dx, ROWS * COLS, 1e-5));

    nb.future[0] = 0x100;
    fill(dx, ROWS * COLS, -7.0f);
    fill(dw, COLS, -7.0f);
    CHECK_STATUS(rmsnorm_backward(be, &nb.base, NULL), RMSNORM_ERR_BAD_STRUCT_SIZE);
    CHECK(all_equal(dx, ROWS * COLS, -7.0f) && all_equal(dw, COLS, -7.0f));
}

int main(void)
{
    make_expectations(1e-6f);
    test_library_identity();
    /* Every host backend, since each goes through the same validation. */
    for (int i = 0; i < rmsnorm_backend_count(); i++) {
        const rmsnorm_backend *be = rmsnorm_backend_at(i);
        if (be == NULL || rmsnorm_backend_is_device(be))
            continue;
        (void)printf("backend %s\n", rmsnorm_backend_name(be));
        test_forward_sizes(be);
        test_backward_sizes(be);
    }
    (void)printf("%d passed, %d failed\n", passed, failed);
    return failed == 0 ? 0 : 1;
}
