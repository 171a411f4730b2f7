#include "fuzz/tensor.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz/report.h"
#include "ref/formats.h"

int fz_buf_alloc(fz_buf *b, size_t bytes, uint8_t fill)
{
    size_t total = bytes + 2u * FZ_MARGIN;
    b->mem = NULL;
    b->p = NULL;
    b->bytes = 0;
    if (posix_memalign((void **)&b->mem, 64, total) != 0)
        return -1;
    memset(b->mem, fill, total);
    b->p = b->mem + FZ_MARGIN;
    b->bytes = bytes;
    return 0;
}

void fz_buf_free(fz_buf *b)
{
    free(b->mem);
    b->mem = NULL;
    b->p = NULL;
    b->bytes = 0;
}

int fz_buf_clone(fz_buf *dst, const fz_buf *src)
{
    if (fz_buf_alloc(dst, src->bytes, 0) != 0)
        return -1;
    memcpy(dst->mem, src->mem, src->bytes + 2u * FZ_MARGIN);
    return 0;
}

/* Values where a kernel is likely to differ from the reference: zeros of both
 * signs, fp16's 300.0 (whose square overflows fp16), the formats' extremes and
 * subnormals, infinities and NaN. */
static const float fz_specials[] = {
    0.0f, -0.0f, 1.0f, -1.0f, 300.0f, -300.0f, 65504.0f, 0x1p-24f, 0x1p-14f, 1.5e-5f, 0x1p-133f,
    0x1p-126f, 0x1p-149f, 1e-30f, 1e30f, FLT_MAX, -FLT_MAX, INFINITY, -INFINITY, NAN, -NAN, 0.1f,
    448.0f, 57344.0f, 240.0f, 1e-3f};
#define FZ_NSPECIALS (sizeof fz_specials / sizeof fz_specials[0])

static const float fz_scales[] = {1.0f, 1e-3f, 1e3f, 0x1p-10f, 300.0f, 1e-20f, 1e20f, 4.0f};

void fz_gen_params(fz_producer *p, fz_gen *g)
{
    uint8_t b = fz_param_byte(p);
    g->mode = b & 3;
    g->scale = fz_scales[(b >> 2) & 7u];
    /* mostly rare specials: a row with an inf or NaN checks only NaN
     * propagation, so they must not drown the ordinary rows */
    static const unsigned rates[4] = {0, 2, 8, 64};
    g->specials = rates[(b >> 5) & 3u];
}

void fz_gen_store(fz_producer *p, const fz_gen *g, void *base, rmsnorm_dtype t, size_t i)
{
    uint8_t sel = fz_data_byte(p);
    float v;
    if (sel < g->specials) {
        v = fz_specials[fz_data_byte(p) % FZ_NSPECIALS];
    } else {
        switch (g->mode) {
        case 1:
            if (t == RMSNORM_F16 || t == RMSNORM_BF16) {
                /* two statements: the order of the reads must not depend on the compiler */
                unsigned hi = fz_data_byte(p);
                unsigned lo = fz_data_byte(p);
                ((uint16_t *)base)[i] = (uint16_t)((hi << 8) | lo);
                return;
            }
            v = rmsi_bits_f32(fz_data_u32(p));
            break;
        case 2:
            v = (float)((int)(sel % 9u) - 4) * g->scale;
            break;
        case 3:
            v = sel < 224u ? 0.0f : fz_data_unit(p) * g->scale;
            break;
        case 0:
        default:
            v = fz_data_unit(p) * g->scale;
            break;
        }
    }
    rmsi_store(base, t, i, v);
}

void fz_gen_matrix(fz_producer *p, const fz_gen *g, void *base, rmsnorm_dtype t, int64_t rows,
                   int64_t cols, int64_t stride)
{
    for (int64_t r = 0; r < rows; r++)
        for (int64_t c = 0; c < cols; c++)
            fz_gen_store(p, g, base, t, (size_t)(r * stride + c));
}

size_t fz_matrix_bytes(rmsnorm_dtype t, int64_t rows, int64_t cols, int64_t stride)
{
    if (rows <= 0)
        return 0;
    return (size_t)((rows - 1) * stride + cols) * rmsnorm_dtype_size(t);
}

void fz_check_untouched(const char *what, const char *backend, const fz_buf *before,
                        const fz_buf *after, size_t es, int64_t rows, int64_t cols, int64_t stride)
{
    size_t total = before->bytes + 2u * FZ_MARGIN;
    size_t row_bytes = (size_t)stride * es;
    size_t cols_bytes = (size_t)cols * es;
    for (size_t i = 0; i < total; i++) {
        if (before->mem[i] == after->mem[i])
            continue;
        if (i >= FZ_MARGIN && i < FZ_MARGIN + before->bytes && rows > 0 && es > 0) {
            size_t off = i - FZ_MARGIN;
            size_t r = off / row_bytes;
            if (r < (size_t)rows && off % row_bytes < cols_bytes)
                continue;
        }
        long where = (long)i - (long)FZ_MARGIN;
        fz_fail("%s: byte %ld of %s (payload %zu bytes, rows %lld cols %lld stride %lld) "
                "changed 0x%02x -> 0x%02x outside the region the op may write",
                backend, where, what, before->bytes, (long long)rows, (long long)cols,
                (long long)stride, before->mem[i], after->mem[i]);
    }
}

int fz_mirror_in(fz_mirror *m, const rmsnorm_backend *be, fz_buf *host)
{
    m->be = be;
    m->dev = NULL;
    m->p = host->p;
    if (!rmsnorm_backend_is_device(be))
        return 0;
    size_t total = host->bytes + 2u * FZ_MARGIN;
    if (rmsnorm_mem_alloc(be, total, &m->dev) != RMSNORM_OK)
        return -1;
    if (rmsnorm_mem_copy(be, m->dev, host->mem, total, RMSNORM_COPY_TO_BACKEND, NULL) != RMSNORM_OK) {
        fz_mirror_drop(m);
        return -1;
    }
    m->p = (uint8_t *)m->dev + FZ_MARGIN;
    return 0;
}

int fz_mirror_out(fz_mirror *m, fz_buf *host)
{
    if (m->dev == NULL)
        return 0;
    size_t total = host->bytes + 2u * FZ_MARGIN;
    rmsnorm_status st = rmsnorm_mem_copy(m->be, host->mem, m->dev, total, RMSNORM_COPY_TO_HOST, NULL);
    fz_mirror_drop(m);
    return st == RMSNORM_OK ? 0 : -1;
}

void fz_mirror_drop(fz_mirror *m)
{
    if (m->dev != NULL && rmsnorm_mem_free(m->be, m->dev) != RMSNORM_OK)
        fz_note("fuzz: rmsnorm_mem_free failed on %s", rmsnorm_backend_name(m->be));
    m->dev = NULL;
}
