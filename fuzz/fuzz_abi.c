/*
 * fuzz_abi: hostile arguments against the public ABI.
 *
 * Each input builds a valid forward or backward call on a small shape, applies
 * one to four mutations (NULLs, impossible shapes, strides whose byte span
 * overflows, struct_size too small / too large with a zero or non-zero tail,
 * unknown flags, enums and dtypes, bad eps and scalars, misaligned pointers,
 * partially overlapping outputs, a short or NULL workspace, NULL or forged
 * backends) and checks:
 *   - the status is one the applied mutations document (docs/abi.md), or OK
 *     when every mutation was harmless;
 *   - a rejected call wrote nothing (every buffer, margins included, is
 *     compared byte for byte), and no call crashes: the args struct ends at a
 *     PROT_NONE page, so a read past struct_size faults;
 *   - the unmutated call then succeeds.
 * The discovery, property, memory and size-query functions get hostile
 * arguments too.
 */
#define _DEFAULT_SOURCE 1 /* MAP_ANONYMOUS */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fuzz/data_producer.h"
#include "fuzz/report.h"
#include "fuzz/tensor.h"
#include "ref/formats.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define S(x) (1u << (x))
#define DOCUMENTED_MAX RMSNORM_ERR_MISALIGNED

/* A region whose end is followed by an inaccessible page. */
typedef struct guarded {
    uint8_t *map;
    size_t map_bytes;
    uint8_t *p; /* 8-aligned, p + round_up(bytes, 8) is the guard page */
} guarded;

static int guarded_alloc(guarded *g, size_t bytes)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    size_t need = (bytes + 7u) / 8u * 8u;
    size_t data_pages = (need + page - 1u) / page;
    g->map_bytes = (data_pages + 1u) * page;
    void *m = mmap(NULL, g->map_bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED)
        return -1;
    g->map = m;
    if (mprotect(g->map + data_pages * page, page, PROT_NONE) != 0)
        return -1;
    g->p = g->map + data_pages * page - need;
    return 0;
}

static void guarded_free(guarded *g)
{
    if (g->map != NULL && munmap(g->map, g->map_bytes) != 0)
        fz_note("fuzz_abi: munmap failed");
    g->map = NULL;
}

/* Buffers of the base call. */
enum { AB_X, AB_RES, AB_Y, AB_H, AB_W, AB_RSTD, AB_Q, AB_SCALE, AB_DY, AB_DX, AB_DW, AB_WS, AB_N };
static const char *const ab_name[AB_N] = {"x", "residual", "y", "h_out", "weight", "rstd", "q",
                                          "scale", "dy", "dx", "dweight", "workspace"};

typedef struct abi_case {
    fz_buf buf[AB_N];
    fz_buf snap[AB_N];
    int64_t rows, cols, stride;
    rmsnorm_dtype t;
    size_t ws;
} abi_case;

static rmsnorm_matrix mat(void *p, rmsnorm_dtype t, const abi_case *c)
{
    rmsnorm_matrix m;
    m.data = p;
    m.dtype = t;
    m.rows = c->rows;
    m.cols = c->cols;
    m.row_stride = c->stride;
    return m;
}

static void base_forward(abi_case *c, rmsnorm_forward_args *a, int quant)
{
    memset(a, 0, sizeof *a);
    a->struct_size = sizeof *a;
    a->x = mat(c->buf[AB_X].p, c->t, c);
    a->residual = mat(c->buf[AB_RES].p, c->t, c);
    a->h_out = mat(c->buf[AB_H].p, c->t, c);
    a->y = mat(c->buf[AB_Y].p, c->t, c);
    a->weight = c->buf[AB_W].p;
    a->weight_dtype = c->t;
    a->eps = 1e-6f;
    a->rstd = (float *)(void *)c->buf[AB_RSTD].p;
    if (quant) {
        a->quant_mode = RMSNORM_QUANT_PER_TOKEN;
        a->q = mat(c->buf[AB_Q].p, RMSNORM_F8_E4M3, c);
        a->scale = (float *)(void *)c->buf[AB_SCALE].p;
    }
}

static void base_backward(abi_case *c, rmsnorm_backward_args *a)
{
    memset(a, 0, sizeof *a);
    a->struct_size = sizeof *a;
    a->dy = mat(c->buf[AB_DY].p, c->t, c);
    a->x = mat(c->buf[AB_X].p, c->t, c);
    a->weight = c->buf[AB_W].p;
    a->weight_dtype = c->t;
    a->eps = 1e-6f;
    a->dx = mat(c->buf[AB_DX].p, c->t, c);
    a->dresidual = mat(c->buf[AB_RES].p, c->t, c);
    a->dweight = (float *)(void *)c->buf[AB_DW].p;
    a->workspace = c->buf[AB_WS].p;
    a->workspace_bytes = c->ws;
}

/* The mutations applied, for the report. */
static int fz_mut_log[8];
static unsigned fz_mut_n;

/* Picks one of n mutations; returns n (none) when its group of mutations of
 * the same field was applied already: a second one could undo the first (a
 * NULL pointer made non-NULL again). Group 0 is no group. */
static size_t pick_mutation(fz_producer *p, const int *group, size_t n, unsigned *used)
{
    size_t which = fz_param_pick(p, n);
    if (group[which] != 0 && (*used & (1u << group[which])) != 0)
        return n;
    *used |= 1u << group[which];
    fz_mut_log[fz_mut_n++ & 7u] = (int)which;
    return which;
}

static const int64_t huge_i64[] = {-1, -2, INT64_MIN, INT64_MAX, (int64_t)0x80000000, (int64_t)1 << 40};
static const uint32_t bad_enums[] = {6u, 7u, 0x7fffffffu, 0x80000000u, 0xffffffffu, 1000u};

/* Mutates a matrix's shape into something invalid; returns the status set.
 * Strides are made to overflow the byte span only where rows >= 2 makes the
 * stride matter; otherwise the mutation is harmless and says so (0). */
static uint32_t mutate_matrix(fz_producer *p, rmsnorm_matrix *m)
{
    switch (fz_param_pick(p, 7)) {
    case 0: m->rows = huge_i64[fz_param_pick(p, 6)]; break;
    case 1: m->cols = fz_param_bool(p) ? 0 : huge_i64[fz_param_pick(p, 6)]; break;
    case 2: m->row_stride = m->cols - 1 - (int64_t)fz_param_pick(p, 4); break;
    case 3:
        if (m->rows < 2)
            return 0;
        m->row_stride = fz_param_bool(p) ? INT64_MAX : INT64_MAX / 2 + 1;
        break;
    case 4: m->rows = m->rows + 1; break; /* shape disagreement with x */
    case 5: m->dtype = (rmsnorm_dtype)bad_enums[fz_param_pick(p, 6)]; return S(RMSNORM_ERR_BAD_DTYPE);
    default: m->cols = m->cols + 1; break;
    }
    return S(RMSNORM_ERR_BAD_SHAPE);
}

static uint32_t mutate_forward(fz_producer *p, abi_case *c, rmsnorm_forward_args *a, size_t *struct_bytes,
                               int *tail_nonzero, const rmsnorm_backend **be, unsigned *used)
{
    size_t es = rmsnorm_dtype_size(c->t);
    /* mutations of the same field share a group (pick_mutation) */
    static const int group[22] = {1, 2, 3, 3, 3, 4, 2, 6, 0, 0, 0, 0, 0, 0, 1, 2, 2, 2, 2, 0, 0, 0};
    size_t which = pick_mutation(p, group, 22, used);
    if (which == 22)
        return 0;
    switch (which) {
    case 0: a->x.data = NULL; return S(RMSNORM_ERR_NULL_POINTER);
    case 1:
        a->y.data = NULL; /* optional when q is given */
        return a->quant_mode != RMSNORM_QUANT_NONE ? 0u : S(RMSNORM_ERR_NULL_POINTER);
    case 2: a->struct_size = (size_t)fz_param_pick(p, sizeof *a); return S(RMSNORM_ERR_BAD_STRUCT_SIZE);
    case 3: {
        size_t extra = 8u * (1u + fz_param_pick(p, 8));
        a->struct_size = sizeof *a + extra;
        *struct_bytes = a->struct_size;
        if (fz_param_bool(p)) {
            *tail_nonzero = 1;
            return S(RMSNORM_ERR_BAD_STRUCT_SIZE);
        }
        return 0;
    }
    case 4: a->struct_size = fz_param_bool(p) ? SIZE_MAX : (size_t)1 << 20; return S(RMSNORM_ERR_BAD_STRUCT_SIZE);
    case 5: return mutate_matrix(p, &a->x);
    case 6: return mutate_matrix(p, &a->y);
    case 7: return mutate_matrix(p, &a->residual);
    case 8: a->flags |= 1u << (2 + fz_param_pick(p, 30)); return S(RMSNORM_ERR_BAD_FLAGS);
    case 9: {
        static const float bad[] = {-1.0f, -0x1p-149f, NAN, INFINITY, -INFINITY};
        a->eps = bad[fz_param_pick(p, 5)];
        return S(RMSNORM_ERR_BAD_EPS);
    }
    case 10: a->quant_mode = (rmsnorm_quant)(4u + (uint32_t)fz_param_pick(p, 3)); return S(RMSNORM_ERR_BAD_ARGUMENT);
    case 11: a->weight_offset = NAN; return S(RMSNORM_ERR_BAD_ARGUMENT);
    case 12: a->weight = NULL; a->weight_offset = 1.0f; return S(RMSNORM_ERR_BAD_ARGUMENT);
    case 13: a->residual.data = NULL; return S(RMSNORM_ERR_BAD_ARGUMENT); /* h_out needs it */
    case 14:
        if (es < 2)
            return 0;
        a->x.data = c->buf[AB_X].p + 1; /* absolute: a repeat must not realign it */
        return S(RMSNORM_ERR_MISALIGNED);
    case 15: a->rstd = (float *)(void *)(c->buf[AB_RSTD].p + 1 + fz_param_pick(p, 3)); return S(RMSNORM_ERR_MISALIGNED);
    case 16:
        if (c->rows == 0)
            return 0;
    {
        size_t off = es * (1u + fz_param_pick(p, 2));
        a->y.data = c->buf[AB_X].p + off; /* partial overlap, when off is inside x's span */
        return off < fz_matrix_bytes(c->t, c->rows, c->cols, c->stride) ? S(RMSNORM_ERR_BAD_ALIAS) : 0u;
    }
    case 17:
        if (c->rows == 0)
            return 0;
        a->h_out.data = a->y.data; /* two outputs on the same bytes */
        return S(RMSNORM_ERR_BAD_ALIAS);
    case 18:
        if (c->rows == 0)
            return 0;
        a->rstd = (float *)a->y.data;
        return S(RMSNORM_ERR_BAD_ALIAS);
    case 19: a->weight_dtype = (rmsnorm_dtype)(c->t == RMSNORM_F16 ? RMSNORM_BF16 : RMSNORM_F16); return S(RMSNORM_ERR_BAD_DTYPE);
    case 20:
        *be = fz_param_bool(p) ? NULL : (const rmsnorm_backend *)(const void *)c->buf[AB_W].p;
        return S(RMSNORM_ERR_BACKEND_UNAVAILABLE);
    default:
        a->scale_ub = fz_param_bool(p) ? -1.0f : NAN;
        return S(RMSNORM_ERR_BAD_ARGUMENT);
    }
}

static uint32_t mutate_backward(fz_producer *p, abi_case *c, rmsnorm_backward_args *a, size_t *struct_bytes,
                                int *tail_nonzero, const rmsnorm_backend **be, unsigned *used)
{
    static const int group[16] = {0, 1, 2, 2, 3, 4, 5, 0, 0, 0, 6, 6, 6, 1, 0, 0};
    size_t which = pick_mutation(p, group, 16, used);
    if (which == 16)
        return 0;
    switch (which) {
    case 0: a->dy.data = NULL; return S(RMSNORM_ERR_NULL_POINTER);
    case 1: a->dx.data = NULL; return S(RMSNORM_ERR_NULL_POINTER);
    case 2: a->struct_size = (size_t)fz_param_pick(p, sizeof *a); return S(RMSNORM_ERR_BAD_STRUCT_SIZE);
    case 3: {
        a->struct_size = sizeof *a + 8u * (1u + fz_param_pick(p, 8));
        *struct_bytes = a->struct_size;
        if (fz_param_bool(p)) {
            *tail_nonzero = 1;
            return S(RMSNORM_ERR_BAD_STRUCT_SIZE);
        }
        return 0;
    }
    case 4: return mutate_matrix(p, &a->x);
    case 5: return mutate_matrix(p, &a->dy);
    case 6: return mutate_matrix(p, &a->dx);
    case 7: a->flags |= 1u << (1 + fz_param_pick(p, 31)); return S(RMSNORM_ERR_BAD_FLAGS);
    case 8: a->eps = -1.0f; return S(RMSNORM_ERR_BAD_EPS);
    case 9: a->weight = NULL; return S(RMSNORM_ERR_BAD_ARGUMENT); /* dweight needs it */
    case 10:
        if (c->ws == 0)
            return 0;
        a->workspace_bytes = c->ws - 1u - (size_t)fz_param_pick(p, 3);
        return S(RMSNORM_ERR_WORKSPACE_TOO_SMALL);
    case 11:
        if (c->ws == 0)
            return 0;
        a->workspace = NULL;
        return S(RMSNORM_ERR_NULL_POINTER);
    case 12:
        if (c->ws == 0)
            return 0;
        a->workspace = c->buf[AB_WS].p + 4u * (1u + fz_param_pick(p, 2));
        return S(RMSNORM_ERR_MISALIGNED) | S(RMSNORM_ERR_WORKSPACE_TOO_SMALL);
    case 13:
        if (c->rows == 0)
            return 0;
        a->dx.data = c->buf[AB_X].p + rmsnorm_dtype_size(c->t);
        return fz_matrix_bytes(c->t, c->rows, c->cols, c->stride) > rmsnorm_dtype_size(c->t) ? S(RMSNORM_ERR_BAD_ALIAS) : 0u;
    case 14:
        *be = NULL;
        return S(RMSNORM_ERR_BACKEND_UNAVAILABLE);
    default:
        a->dresidual.dtype = c->t == RMSNORM_F32 ? RMSNORM_F16 : RMSNORM_F32;
        return S(RMSNORM_ERR_BAD_DTYPE);
    }
}

static void snapshot(abi_case *c)
{
    for (int b = 0; b < AB_N; b++) {
        fz_buf_free(&c->snap[b]);
        if (fz_buf_clone(&c->snap[b], &c->buf[b]) != 0)
            fz_fail("out of memory");
    }
}

static void check_nothing_written(const abi_case *c, const char *what)
{
    for (int b = 0; b < AB_N; b++)
        fz_check_untouched(ab_name[b], what, &c->snap[b], &c->buf[b], 0, 0, 0, 1);
}

/* Places the args at the end of a guarded region of struct_bytes bytes. */
static void *place(guarded *g, const void *args, size_t known, size_t struct_bytes, int tail_nonzero)
{
    size_t bytes = struct_bytes > known ? struct_bytes : known;
    if (guarded_alloc(g, bytes) != 0)
        fz_fail("mmap failed");
    memset(g->p, 0, bytes);
    memcpy(g->p, args, known);
    if (tail_nonzero)
        g->p[bytes - 1] = 1;
    return g->p;
}

static void check_status(rmsnorm_status st, uint32_t expect, const char *op)
{
    if ((int)st < 0 || (int)st > DOCUMENTED_MAX)
        fz_fail("%s returned %d, not a documented status", op, (int)st);
    if (expect == 0) {
        if (st != RMSNORM_OK && st != RMSNORM_ERR_UNSUPPORTED)
            fz_fail("%s returned %d (%s) after harmless mutations", op, (int)st, rmsnorm_status_string(st));
        return;
    }
    if ((expect & S(st)) == 0)
        fz_fail("%s returned %d (%s); the mutations allow only the status set 0x%x", op, (int)st,
                rmsnorm_status_string(st), expect);
}

static void misc_calls(fz_producer *p)
{
    int v = (int)(int32_t)fz_param_range(p, 0, UINT32_MAX);
    const char *s = rmsnorm_status_string((rmsnorm_status)v);
    if (s == NULL || s[0] == '\0')
        fz_fail("rmsnorm_status_string(%d) is empty", v);
    size_t ds = rmsnorm_dtype_size((rmsnorm_dtype)v);
    if (ds != 0 && ds != 1 && ds != 2 && ds != 4)
        fz_fail("rmsnorm_dtype_size(%d) = %zu", v, ds);
    if ((v < 0 || v > 5) && ds != 0)
        fz_fail("rmsnorm_dtype_size(%d) = %zu for an unknown dtype", v, ds);
    if (rmsnorm_backend_at(v) != NULL && (v < 0 || v >= rmsnorm_backend_count()))
        fz_fail("rmsnorm_backend_at(%d) is not NULL", v);
    char name[16];
    size_t n = fz_param_pick(p, sizeof name);
    for (size_t i = 0; i < n; i++)
        name[i] = (char)fz_param_byte(p);
    name[n] = '\0';
    const rmsnorm_backend *found = rmsnorm_backend_find(name);
    if (found != NULL && strcmp(name, "auto") != 0 && strcmp(rmsnorm_backend_name(found), name) != 0)
        fz_fail("rmsnorm_backend_find(\"%s\") found backend %s", name, rmsnorm_backend_name(found));
    const rmsnorm_backend *forged = (const rmsnorm_backend *)(const void *)name;
    if (rmsnorm_backend_name(forged)[0] != '\0' || rmsnorm_backend_caps(forged) != 0 ||
        rmsnorm_backend_is_device(forged) != 0)
        fz_fail("a forged backend pointer was accepted");
    int64_t rows = huge_i64[fz_param_pick(p, 6)];
    if (rows < INT64_MAX - 2)
        rows += (int64_t)fz_param_pick(p, 3);
    int64_t cols = (int64_t)fz_param_range(p, 0, 300) - 1;
    size_t count = 12345;
    rmsnorm_quant mode = (rmsnorm_quant)fz_param_pick(p, 6);
    rmsnorm_status st = rmsnorm_quant_scale_count(mode, rows, cols, &count);
    if ((int)st < 0 || (int)st > DOCUMENTED_MAX)
        fz_fail("rmsnorm_quant_scale_count returned %d", (int)st);
    if (st == RMSNORM_OK && mode != RMSNORM_QUANT_NONE && (rows < 0 || cols < 1 || (mode == RMSNORM_QUANT_PER_TOKEN && count != (size_t)rows)))
        fz_fail("rmsnorm_quant_scale_count(%d, %lld, %lld) = OK, %zu", (int)mode, (long long)rows,
                (long long)cols, count);
    const rmsnorm_backend *be = rmsnorm_backend_at((int)fz_param_pick(p, 4));
    size_t ws = 777;
    st = rmsnorm_backward_workspace_size(be, rows, cols, &ws);
    if (be != NULL && st == RMSNORM_OK && (rows < 0 || cols < 1))
        fz_fail("rmsnorm_backward_workspace_size accepted rows %lld cols %lld", (long long)rows,
                (long long)cols);
    if (be == NULL && st != RMSNORM_ERR_BACKEND_UNAVAILABLE)
        fz_fail("rmsnorm_backward_workspace_size(NULL) returned %d", (int)st);
    if (be != NULL) {
        uint8_t buf[64] = {0};
        size_t off = fz_param_pick(p, 32);
        st = rmsnorm_mem_copy(be, buf + off, buf, 32, RMSNORM_COPY_TO_BACKEND, NULL);
        if (!rmsnorm_backend_is_device(be) && off < 32 && st != RMSNORM_ERR_BAD_ALIAS)
            fz_fail("rmsnorm_mem_copy with overlapping ranges returned %d", (int)st);
        st = rmsnorm_mem_copy(be, buf + 32, buf, 16, (rmsnorm_copy_dir)(3 + fz_param_pick(p, 4)), NULL);
        if (st != RMSNORM_ERR_BAD_ARGUMENT)
            fz_fail("rmsnorm_mem_copy with an unknown direction returned %d", (int)st);
        void *mem = &ws;
        if (rmsnorm_mem_alloc(be, 0, &mem) != RMSNORM_ERR_BAD_SHAPE || mem != NULL)
            fz_fail("rmsnorm_mem_alloc(0) did not fail cleanly");
        if (rmsnorm_mem_alloc(be, 16, NULL) != RMSNORM_ERR_NULL_POINTER)
            fz_fail("rmsnorm_mem_alloc(p = NULL) did not return NULL_POINTER");
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fz_producer p;
    abi_case c;
    memset(&c, 0, sizeof c);
    fz_init(&p, data, size);
    fz_case_describe("fuzz_abi input of %zu bytes", size);
    misc_calls(&p);

    static const rmsnorm_dtype acts[3] = {RMSNORM_F32, RMSNORM_F16, RMSNORM_BF16};
    c.t = acts[fz_param_pick(&p, 3)];
    c.rows = (int64_t)fz_param_pick(&p, 5);
    c.cols = 1 + (int64_t)fz_param_pick(&p, 200);
    c.stride = c.cols + (int64_t)fz_param_pick(&p, 3);
    int backward = fz_param_bool(&p);
    int quant = fz_param_bool(&p);
    int nbe = rmsnorm_backend_count();
    const rmsnorm_backend *be = rmsnorm_backend_at((int)fz_param_pick(&p, (size_t)(nbe > 0 ? nbe : 1)));
    if (be == NULL)
        fz_fail("no backend");
    if (rmsnorm_backward_workspace_size(be, c.rows, c.cols, &c.ws) != RMSNORM_OK)
        fz_fail("workspace size query failed");
    /* device backends would need device buffers: the hostile calls target the
     * dispatch layer, which is the same for all, so use a host backend */
    if (rmsnorm_backend_is_device(be))
        be = rmsnorm_backend_find("ref");
    size_t mb = fz_matrix_bytes(c.t, c.rows, c.cols, c.stride);
    size_t bytes[AB_N] = {mb, mb, mb, mb, (size_t)c.cols * 4u, (size_t)c.rows * 4u + 16u,
                          fz_matrix_bytes(RMSNORM_F8_E4M3, c.rows, c.cols, c.stride),
                          (size_t)c.rows * 4u + 16u, mb, mb, (size_t)c.cols * 4u, c.ws};
    fz_gen g = {0, 1.0f, 0};
    for (int b = 0; b < AB_N; b++) {
        if (fz_buf_alloc(&c.buf[b], bytes[b], (uint8_t)(0x3Cu + (unsigned)b)) != 0)
            fz_fail("out of memory");
        if (b == AB_X || b == AB_RES || b == AB_DY || b == AB_W)
            fz_gen_matrix(&p, &g, c.buf[b].p, c.t, b == AB_W ? 1 : c.rows, c.cols, c.stride);
    }
    snapshot(&c);

    int nmut = 1 + (int)fz_param_pick(&p, 4);
    uint32_t expect = 0;
    fz_mut_n = 0;
    unsigned used = 0;
    memset(fz_mut_log, 0xff, sizeof fz_mut_log);
    size_t struct_bytes = 0;
    int tail_nonzero = 0;
    const rmsnorm_backend *call_be = be;
    guarded gd = {NULL, 0, NULL};
    rmsnorm_status st;
    if (!backward) {
        rmsnorm_forward_args a;
        base_forward(&c, &a, quant);
        for (int i = 0; i < nmut; i++)
            expect |= mutate_forward(&p, &c, &a, &struct_bytes, &tail_nonzero, &call_be, &used);
        fz_case_describe("fuzz_abi forward rows %lld cols %lld T %d quant %d backend %s: "
                         "struct_size %zu mutations %d %d %d %d allow 0x%x", (long long)c.rows, (long long)c.cols,
                         (int)c.t, quant, rmsnorm_backend_name(be), a.struct_size, fz_mut_log[0],
                         fz_mut_log[1], fz_mut_log[2], fz_mut_log[3], expect);
        rmsnorm_forward_args *pa = place(&gd, &a, sizeof a, struct_bytes, tail_nonzero);
        st = rmsnorm_forward(call_be, pa, NULL);
        check_status(st, expect, "rmsnorm_forward");
        if (st != RMSNORM_OK)
            check_nothing_written(&c, "rmsnorm_forward (rejected)");
        guarded_free(&gd);
        base_forward(&c, &a, quant);
        st = rmsnorm_forward(be, &a, NULL);
    } else {
        rmsnorm_backward_args a;
        base_backward(&c, &a);
        for (int i = 0; i < nmut; i++)
            expect |= mutate_backward(&p, &c, &a, &struct_bytes, &tail_nonzero, &call_be, &used);
        fz_case_describe("fuzz_abi backward rows %lld cols %lld T %d backend %s: struct_size %zu "
                         "mutations %d %d %d %d allow 0x%x", (long long)c.rows, (long long)c.cols, (int)c.t,
                         rmsnorm_backend_name(be), a.struct_size, fz_mut_log[0], fz_mut_log[1],
                         fz_mut_log[2], fz_mut_log[3], expect);
        rmsnorm_backward_args *pa = place(&gd, &a, sizeof a, struct_bytes, tail_nonzero);
        st = rmsnorm_backward(call_be, pa, NULL);
        check_status(st, expect, "rmsnorm_backward");
        if (st != RMSNORM_OK)
            check_nothing_written(&c, "rmsnorm_backward (rejected)");
        guarded_free(&gd);
        base_backward(&c, &a);
        st = rmsnorm_backward(be, &a, NULL);
    }
    if (st != RMSNORM_OK)
        fz_fail("the corrected call returned %d (%s)", (int)st, rmsnorm_status_string(st));
    if (rmsnorm_forward(be, NULL, NULL) != RMSNORM_ERR_NULL_POINTER)
        fz_fail("rmsnorm_forward(args = NULL) did not return NULL_POINTER");
    for (int b = 0; b < AB_N; b++) {
        fz_buf_free(&c.buf[b]);
        fz_buf_free(&c.snap[b]);
    }
    return 0;
}
