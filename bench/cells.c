/*
 * One cell of the sweep (op, dtype, shape): set up cloned buffers in the
 * backend's memory, validate the backend against ref, then time it.
 *
 * Why clones: a 1x4096 bf16 forward moves 16 KiB, which a loop would serve
 * from L1/L2 forever. The inputs and outputs are laid out `clones` times in one
 * slab per tensor, enough that one rotation exceeds the working-set target
 * (twice the LLC on CPUs), and successive calls walk through the clones, so
 * every call finds its tensors cold, as a layer of a real model would.
 *
 * Why rounds: a shared VM's memory bandwidth wanders by tens of percent over
 * minutes. On host backends each sample is preceded by a probe of the op's own
 * traffic shape, and the ratio kernel/probe of the same round is reported (its
 * median), which cancels most of the wander.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bench/bench.h"
#include "ref/formats.h"

enum role { R_X, R_RES, R_DY, R_RSTD, R_Y, R_H, R_Q, R_SCALE, R_DX, NROLES };

typedef struct plan {
    const rmsi_bench_opinfo *oi;
    rmsnorm_dtype t;
    rmsnorm_dtype fp8;
    rmsnorm_dtype wt;      /* the weight's dtype */
    int64_t rows, cols;
    size_t elems;
    size_t ts;
    size_t w_bytes;        /* 0: no weight (--weight none) */
    size_t bytes[NROLES];  /* 0: role unused by this op */
    size_t stride[NROLES]; /* bytes rounded up to 256 */
    size_t nscale;
    size_t ws_be, ws_ref;  /* backward workspace of the backend and of ref */
} plan;

/* One set of pointers: a clone in the backend's memory, or the host copies. */
typedef struct bufset {
    void *p[NROLES];
    void *w;
    float *static_scale;
    float *dw;
    void *ws;
    size_t ws_bytes;
} bufset;

typedef struct kernel_work {
    const rmsnorm_backend *be;
    const plan *pl;
    bufset cur;
    unsigned char *slab[NROLES];
    int clones;
    int cursor;
} kernel_work;

static void set_note(rmsi_bench_cell *cell, rmsi_bench_verdict v, const char *what,
                     rmsnorm_status st)
{
    cell->verdict = v;
    (void)snprintf(cell->note, sizeof cell->note, "%s: %s", what, rmsnorm_status_string(st));
}

static int plan_make(const rmsi_bench_ctx *c, const rmsi_bench_cell *cell, plan *pl)
{
    memset(pl, 0, sizeof *pl);
    pl->oi = rmsi_bench_op_info(cell->op);
    pl->t = cell->dtype;
    pl->fp8 = c->o->fp8;
    pl->rows = cell->rows;
    pl->cols = cell->cols;
    pl->ts = rmsnorm_dtype_size(cell->dtype);
    pl->wt = rmsi_bench_weight_dtype(c->o->weight, cell->dtype);
    pl->w_bytes = (size_t)cell->cols * rmsi_bench_weight_size(c->o->weight, cell->dtype);
    pl->elems = (size_t)cell->rows * (size_t)cell->cols;
    size_t act = pl->elems * pl->ts;
    pl->bytes[R_X] = act;
    if (pl->oi->backward) {
        pl->bytes[R_DY] = act;
        pl->bytes[R_RSTD] = (size_t)cell->rows * sizeof(float);
        pl->bytes[R_DX] = act;
        if (pl->oi->residual)
            pl->bytes[R_RES] = act; /* the residual gradient, added into dx */
    } else {
        if (pl->oi->residual) {
            pl->bytes[R_RES] = act;
            pl->bytes[R_H] = act;
        }
        if (pl->oi->quant == RMSNORM_QUANT_NONE || c->o->quant_y)
            pl->bytes[R_Y] = act;
        if (pl->oi->quant != RMSNORM_QUANT_NONE) {
            pl->bytes[R_Q] = pl->elems;
            if (rmsnorm_quant_scale_count(pl->oi->quant, cell->rows, cell->cols, &pl->nscale) !=
                RMSNORM_OK)
                return -1;
            if (pl->oi->quant != RMSNORM_QUANT_PER_TENSOR)
                pl->bytes[R_SCALE] = pl->nscale * sizeof(float);
        }
    }
    for (int r = 0; r < NROLES; r++)
        pl->stride[r] = pl->bytes[r] ? ((pl->bytes[r] + 255u) & ~(size_t)255u) : 0u;
    return 0;
}

static size_t plan_clone_bytes(const plan *pl)
{
    size_t s = 0;
    for (int r = 0; r < NROLES; r++)
        s += pl->stride[r];
    return s;
}

static void args_fill(const plan *pl, const bufset *b, float eps, rmsnorm_forward_args *fa,
                      rmsnorm_backward_args *ba)
{
    rmsnorm_matrix m = { NULL, pl->t, pl->rows, pl->cols, pl->cols };
    memset(fa, 0, sizeof *fa);
    memset(ba, 0, sizeof *ba);
    if (pl->oi->backward) {
        ba->struct_size = sizeof *ba;
        ba->dy = m;
        ba->dy.data = b->p[R_DY];
        ba->x = m;
        ba->x.data = b->p[R_X];
        ba->weight = b->w;
        ba->weight_dtype = pl->wt;
        ba->rstd = b->p[R_RSTD];
        ba->eps = eps;
        ba->dx = m;
        ba->dx.data = b->p[R_DX];
        ba->dweight = b->w != NULL ? b->dw : NULL; /* no weight, no dweight */
        ba->workspace = b->ws;
        ba->workspace_bytes = b->ws_bytes;
        if (b->p[R_RES] != NULL) {
            ba->dresidual = m;
            ba->dresidual.data = b->p[R_RES];
        }
        return;
    }
    fa->struct_size = sizeof *fa;
    fa->x = m;
    fa->x.data = b->p[R_X];
    if (b->p[R_RES] != NULL) {
        fa->residual = m;
        fa->residual.data = b->p[R_RES];
        fa->h_out = m;
        fa->h_out.data = b->p[R_H];
    }
    fa->weight = b->w;
    fa->weight_dtype = pl->wt;
    fa->eps = eps;
    if (b->p[R_Y] != NULL) {
        fa->y = m;
        fa->y.data = b->p[R_Y];
    }
    fa->rstd = b->p[R_RSTD]; /* only the ref's preparatory forward asks for it */
    fa->quant_mode = pl->oi->quant;
    if (pl->oi->quant != RMSNORM_QUANT_NONE) {
        fa->q = m;
        fa->q.dtype = pl->fp8;
        fa->q.data = b->p[R_Q];
        fa->scale = pl->oi->quant == RMSNORM_QUANT_PER_TENSOR ? b->static_scale : b->p[R_SCALE];
    }
}

static const float bench_eps = 1e-6f;

static rmsnorm_status run_op(const rmsnorm_backend *be, const plan *pl, const bufset *b)
{
    rmsnorm_forward_args fa;
    rmsnorm_backward_args ba;
    args_fill(pl, b, bench_eps, &fa, &ba);
    return pl->oi->backward ? rmsnorm_backward(be, &ba, NULL) : rmsnorm_forward(be, &fa, NULL);
}

static rmsnorm_status kernel_call(void *ctx)
{
    kernel_work *w = ctx;
    size_t c = (size_t)w->cursor;
    for (int r = 0; r < NROLES; r++)
        w->cur.p[r] = w->slab[r] ? w->slab[r] + c * w->pl->stride[r] : NULL;
    w->cursor = (w->cursor + 1) % w->clones;
    return run_op(w->be, w->pl, &w->cur);
}

/* xorshift64*: reproducible inputs without libc rand's global state. */
static uint64_t rng_next(uint64_t *s)
{
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    return *s * 0x2545F4914F6CDD1DULL;
}

static float rng_unit(uint64_t *s)
{
    return (float)(rng_next(s) >> 40) * 0x1p-24f; /* [0, 1) */
}

static void fill_act(void *p, rmsnorm_dtype t, size_t n, float lo, float hi, uint64_t seed)
{
    uint64_t s = seed | 1u;
    for (size_t i = 0; i < n; i++)
        rmsi_store(p, t, i, lo + (hi - lo) * rng_unit(&s));
}

typedef struct cell_mem {
    const rmsnorm_backend *be;
    bufset host_in;     /* inputs and the ref's outputs (host) */
    bufset host_be;     /* the backend's outputs copied back */
    unsigned char *slab[NROLES];
    void *dev_w;
    float *dev_static_scale;
    float *dev_dw;
    void *dev_ws;
} cell_mem;

static void host_free_set(bufset *b)
{
    for (int r = 0; r < NROLES; r++)
        free(b->p[r]);
    free(b->w);
    free(b->static_scale);
    free(b->dw);
    free(b->ws);
    memset(b, 0, sizeof *b);
}

static void dev_free(const rmsnorm_backend *be, void *p)
{
    if (p != NULL && rmsnorm_mem_free(be, p) != RMSNORM_OK)
        (void)fprintf(stderr, "rmsnorm-bench: warning: rmsnorm_mem_free failed\n");
}

static void cell_mem_free(cell_mem *m)
{
    host_free_set(&m->host_in);
    host_free_set(&m->host_be);
    for (int r = 0; r < NROLES; r++)
        dev_free(m->be, m->slab[r]);
    dev_free(m->be, m->dev_w);
    dev_free(m->be, m->dev_static_scale);
    dev_free(m->be, m->dev_dw);
    dev_free(m->be, m->dev_ws);
    memset(m, 0, sizeof *m);
}

static int host_alloc_set(const plan *pl, bufset *b, size_t ws_bytes)
{
    memset(b, 0, sizeof *b);
    for (int r = 0; r < NROLES; r++) {
        if (pl->bytes[r] != 0 && (b->p[r] = malloc(pl->bytes[r])) == NULL)
            return -1;
    }
    b->w = pl->w_bytes ? malloc(pl->w_bytes) : NULL;
    b->static_scale = malloc(sizeof(float));
    b->dw = malloc((size_t)pl->cols * sizeof(float));
    b->ws_bytes = ws_bytes;
    b->ws = ws_bytes ? malloc(ws_bytes) : NULL;
    if ((pl->w_bytes && b->w == NULL) || b->static_scale == NULL || b->dw == NULL || (ws_bytes && b->ws == NULL))
        return -1;
    return 0;
}

/* Copies a host buffer into every clone: once into clone 0, then by doubling
 * within the backend so a million tiny clones cost twenty copies. */
static rmsnorm_status replicate(const rmsnorm_backend *be, unsigned char *slab, size_t stride,
                                int clones, const void *src, size_t bytes)
{
    rmsnorm_status st = rmsnorm_mem_copy(be, slab, src, bytes, RMSNORM_COPY_TO_BACKEND, NULL);
    size_t have = 1, n = (size_t)clones;
    while (st == RMSNORM_OK && have < n) {
        size_t k = have <= n - have ? have : n - have;
        st = rmsnorm_mem_copy(be, slab + have * stride, slab, (k - 1) * stride + bytes,
                              RMSNORM_COPY_WITHIN_BACKEND, NULL);
        have += k;
    }
    return st;
}

/* Poison every output byte of clone 0, so an output the backend forgot to
 * write cannot pass validation by holding the ref's values from elsewhere. */
static rmsnorm_status poison(const rmsnorm_backend *be, const plan *pl, cell_mem *m)
{
    static const int outs[] = { R_Y, R_H, R_Q, R_SCALE, R_DX };
    size_t big = 0;
    rmsnorm_status st = RMSNORM_OK;
    size_t dw_bytes = pl->oi->backward && pl->w_bytes ? (size_t)pl->cols * sizeof(float) : 0u;
    for (size_t i = 0; i < sizeof outs / sizeof outs[0]; i++)
        big = pl->bytes[outs[i]] > big ? pl->bytes[outs[i]] : big;
    big = dw_bytes > big ? dw_bytes : big;
    if (big == 0)
        return RMSNORM_OK;
    unsigned char *junk = malloc(big);
    if (junk == NULL)
        return RMSNORM_ERR_BAD_SHAPE;
    memset(junk, 0xFF, big); /* NaN in every float format */
    for (size_t i = 0; i < sizeof outs / sizeof outs[0] && st == RMSNORM_OK; i++) {
        int r = outs[i];
        if (pl->bytes[r] != 0)
            st = rmsnorm_mem_copy(be, m->slab[r], junk, pl->bytes[r], RMSNORM_COPY_TO_BACKEND,
                                  NULL);
    }
    if (st == RMSNORM_OK && dw_bytes != 0)
        st = rmsnorm_mem_copy(be, m->dev_dw, junk, dw_bytes, RMSNORM_COPY_TO_BACKEND, NULL);
    free(junk);
    return st;
}

/* Worst err/bound over every output of the cell, backend (hb) against ref (ho). */
static double compare(const plan *pl, const bufset *ho, const bufset *hb, const char **what)
{
    double worst = 0.0, w;
    *what = "-";
#define TAKE(expr, name)                                                                          \
    do {                                                                                          \
        w = (expr);                                                                               \
        if (!(w <= worst)) {                                                                      \
            worst = w;                                                                            \
            *what = (name);                                                                       \
        }                                                                                         \
    } while (0)
    if (pl->oi->backward) {
        TAKE(rmsi_bench_check_dx_all(hb->p[R_DX], ho->p[R_DX], ho->p[R_X], ho->p[R_DY], ho->w, pl->wt,
                                     pl->t, pl->rows, pl->cols, ho->p[R_RSTD]),
             "dx");
        if (ho->w != NULL)
            TAKE(rmsi_bench_check_l2(hb->dw, ho->dw, (size_t)pl->cols), "dweight");
        return worst;
    }
    if (pl->bytes[R_H] != 0)
        TAKE(rmsi_bench_check_act_all(hb->p[R_H], ho->p[R_H], pl->t, pl->elems, 1), "h");
    if (pl->bytes[R_Y] != 0)
        TAKE(rmsi_bench_check_act_all(hb->p[R_Y], ho->p[R_Y], pl->t, pl->elems, 0), "y");
    if (pl->bytes[R_SCALE] != 0) {
        /* only the written entries: the block layout's padding rows are not */
        size_t rows4 = ((size_t)pl->rows + 3u) & ~(size_t)3u;
        size_t nb = pl->oi->quant == RMSNORM_QUANT_PER_BLOCK_128 ? (size_t)pl->cols / 128u : 1u;
        size_t ld = pl->oi->quant == RMSNORM_QUANT_PER_BLOCK_128 ? rows4 : (size_t)pl->rows;
        for (size_t k = 0; k < nb; k++)
            TAKE(rmsi_bench_check_rel((const float *)hb->p[R_SCALE] + k * ld,
                                      (const float *)ho->p[R_SCALE] + k * ld, (size_t)pl->rows),
                 "scale");
    }
    if (pl->bytes[R_Q] != 0) {
        size_t rows4 = ((size_t)pl->rows + 3u) & ~(size_t)3u;
        const uint8_t *qa = hb->p[R_Q], *qo = ho->p[R_Q];
        for (size_t i = 0; i < pl->elems; i++) {
            size_t r = i / (size_t)pl->cols, j = i % (size_t)pl->cols, si;
            const float *sa, *so;
            switch (pl->oi->quant) {
            case RMSNORM_QUANT_PER_TOKEN: si = r; break;
            case RMSNORM_QUANT_PER_BLOCK_128: si = (j / 128u) * rows4 + r; break;
            case RMSNORM_QUANT_PER_TENSOR:
            case RMSNORM_QUANT_NONE:
            case RMSNORM_QUANT_MAX_ENUM:
            default: si = 0; break;
            }
            sa = pl->oi->quant == RMSNORM_QUANT_PER_TENSOR ? hb->static_scale
                                                           : (const float *)hb->p[R_SCALE];
            so = pl->oi->quant == RMSNORM_QUANT_PER_TENSOR ? ho->static_scale
                                                           : (const float *)ho->p[R_SCALE];
            TAKE(rmsi_bench_check_q(qa[i], qo[i], sa[si], so[si], pl->fp8), "q");
        }
    }
#undef TAKE
    return worst;
}

/* Host inputs, and the ref's outputs on them (the oracle). */
static rmsnorm_status make_reference(const rmsi_bench_ctx *c, const plan *pl, bufset *h)
{
    rmsnorm_status st = RMSNORM_OK;
    fill_act(h->p[R_X], pl->t, pl->elems, -2.0f, 2.0f, 0x1234u);
    if (h->w != NULL)
        fill_act(h->w, pl->wt, (size_t)pl->cols, 0.5f, 1.5f, 0x5678u);
    /* y stays within about +-3; this static scale uses most of e4m3's range */
    h->static_scale[0] = 3.5f / 448.0f;
    if (h->p[R_RES] != NULL)
        fill_act(h->p[R_RES], pl->t, pl->elems, -2.0f, 2.0f, 0x9abcu);
    if (pl->oi->backward) {
        /* rstd comes from a forward over the same x, as in training */
        plan fwd = *pl;
        bufset fb = *h;
        void *y = malloc(pl->bytes[R_X]);
        if (y == NULL)
            return RMSNORM_ERR_BAD_SHAPE;
        fwd.oi = rmsi_bench_op_info(RMSI_BENCH_FORWARD);
        fb.p[R_Y] = y;
        fb.p[R_RES] = NULL; /* the residual gradient is not a forward residual */
        st = run_op(c->ref, &fwd, &fb);
        free(y);
        fill_act(h->p[R_DY], pl->t, pl->elems, -1.0f, 1.0f, 0xdef0u);
    }
    if (st == RMSNORM_OK)
        st = run_op(c->ref, pl, h);
    return st;
}

static rmsnorm_status dev_setup(const rmsi_bench_ctx *c, const plan *pl, cell_mem *m, int clones)
{
    const rmsnorm_backend *be = c->be;
    rmsnorm_status st = RMSNORM_OK;
    for (int r = 0; r < NROLES && st == RMSNORM_OK; r++) {
        if (pl->bytes[r] == 0)
            continue;
        void *p = NULL;
        st = rmsnorm_mem_alloc(be, pl->stride[r] * (size_t)clones, &p);
        m->slab[r] = p;
    }
    if (st == RMSNORM_OK && pl->w_bytes != 0)
        st = rmsnorm_mem_alloc(be, pl->w_bytes, &m->dev_w);
    if (st == RMSNORM_OK) {
        void *p = NULL;
        st = rmsnorm_mem_alloc(be, sizeof(float), &p);
        m->dev_static_scale = p;
    }
    if (st == RMSNORM_OK) {
        void *p = NULL;
        st = rmsnorm_mem_alloc(be, (size_t)pl->cols * sizeof(float), &p);
        m->dev_dw = p;
    }
    if (st == RMSNORM_OK && pl->ws_be != 0)
        st = rmsnorm_mem_alloc(be, pl->ws_be, &m->dev_ws);
    static const int ins[] = { R_X, R_RES, R_DY, R_RSTD };
    for (size_t i = 0; i < sizeof ins / sizeof ins[0] && st == RMSNORM_OK; i++) {
        int r = ins[i];
        if (pl->bytes[r] != 0)
            st = replicate(be, m->slab[r], pl->stride[r], clones, m->host_in.p[r], pl->bytes[r]);
    }
    /* outputs too: their pages are touched once here, not in a timed call */
    static const int outs[] = { R_Y, R_H, R_Q, R_SCALE, R_DX };
    for (size_t i = 0; i < sizeof outs / sizeof outs[0] && st == RMSNORM_OK; i++) {
        int r = outs[i];
        if (pl->bytes[r] != 0)
            st = replicate(be, m->slab[r], pl->stride[r], clones, m->host_in.p[r], pl->bytes[r]);
    }
    if (st == RMSNORM_OK && pl->w_bytes != 0)
        st = rmsnorm_mem_copy(be, m->dev_w, m->host_in.w, pl->w_bytes, RMSNORM_COPY_TO_BACKEND, NULL);
    if (st == RMSNORM_OK)
        st = rmsnorm_mem_copy(be, m->dev_static_scale, m->host_in.static_scale, sizeof(float),
                              RMSNORM_COPY_TO_BACKEND, NULL);
    if (st == RMSNORM_OK)
        st = rmsnorm_synchronize(be, NULL);
    return st;
}

static bufset dev_clone0(const plan *pl, const cell_mem *m)
{
    bufset b;
    memset(&b, 0, sizeof b);
    for (int r = 0; r < NROLES; r++)
        b.p[r] = pl->bytes[r] ? m->slab[r] : NULL;
    b.w = m->dev_w;
    b.static_scale = m->dev_static_scale;
    b.dw = m->dev_dw;
    b.ws = m->dev_ws;
    b.ws_bytes = pl->ws_be;
    if (pl->oi->backward)
        return b;
    b.p[R_RSTD] = NULL;
    return b;
}

/* Runs the backend on clone 0 and compares with the ref. */
static rmsnorm_status validate(const rmsi_bench_ctx *c, const plan *pl, cell_mem *m,
                               rmsi_bench_cell *cell)
{
    const rmsnorm_backend *be = c->be;
    bufset d = dev_clone0(pl, m);
    const char *what = "-";
    rmsnorm_status st = poison(be, pl, m);
    if (st == RMSNORM_OK)
        st = run_op(be, pl, &d);
    if (st == RMSNORM_OK)
        st = rmsnorm_synchronize(be, NULL);
    static const int outs[] = { R_Y, R_H, R_Q, R_SCALE, R_DX };
    for (size_t i = 0; i < sizeof outs / sizeof outs[0] && st == RMSNORM_OK; i++) {
        int r = outs[i];
        if (pl->bytes[r] != 0)
            st = rmsnorm_mem_copy(be, m->host_be.p[r], m->slab[r], pl->bytes[r],
                                  RMSNORM_COPY_TO_HOST, NULL);
    }
    if (st == RMSNORM_OK && pl->oi->backward && pl->w_bytes != 0)
        st = rmsnorm_mem_copy(be, m->host_be.dw, m->dev_dw, (size_t)pl->cols * sizeof(float),
                              RMSNORM_COPY_TO_HOST, NULL);
    if (st == RMSNORM_OK)
        st = rmsnorm_synchronize(be, NULL);
    if (st != RMSNORM_OK)
        return st;
    m->host_be.static_scale[0] = m->host_in.static_scale[0];
    cell->worst = compare(pl, &m->host_in, &m->host_be, &what);
    if (!(cell->worst <= 1.0)) {
        cell->verdict = RMSI_BENCH_FAIL;
        (void)snprintf(cell->note, sizeof cell->note,
                       "FAIL: %s differs from ref by %.3g x the allowed bound", what, cell->worst);
    }
    return RMSNORM_OK;
}

/* Finds how many calls make a sample of about sample_s; these calls are the
 * warm-up and are not reported. */
static rmsnorm_status calibrate(const rmsi_bench_ctx *c, kernel_work *w, int *calls)
{
    int n = 1;
    double s = 0.0;
    rmsnorm_status st = rmsi_bench_time(c->be, kernel_call, w, 2, c->o->graph, &s);
    for (int i = 0; i < 24 && st == RMSNORM_OK; i++) {
        st = rmsi_bench_time(c->be, kernel_call, w, n, c->o->graph, &s);
        if (st != RMSNORM_OK || s >= c->o->sample_s || n >= (1 << 20))
            break;
        double grow = s > 0.0 ? 1.2 * c->o->sample_s / s : 16.0;
        grow = grow < 2.0 ? 2.0 : (grow > 16.0 ? 16.0 : grow);
        n = (int)((double)n * grow);
    }
    *calls = n;
    return st;
}

/* --hot: memcpy of n bytes between two probe buffers, already in cache after
 * the first call; libc's copy, the fastest a user would compare against. */
typedef struct hot_copy {
    void *dst;
    const void *src;
    size_t n;
} hot_copy;

static rmsnorm_status hot_copy_call(void *ctx)
{
    const hot_copy *h = ctx;
    (void)memcpy(h->dst, h->src, h->n);
    return RMSNORM_OK;
}

/* One round's probe: GB/s of the op's traffic shape over round_probe_bytes,
 * or with --hot, of a hot memcpy moving `bytes` (half read, half written)
 * timed over the same number of calls as the kernel. */
static rmsnorm_status round_probe(const rmsi_bench_ctx *c, rmsnorm_probe shape, double bytes, int calls,
                                  double *gbps)
{
    hot_copy h;
    double s = 0.0;
    if (!c->o->hot)
        return rmsi_bench_probe_once(c->be, c->pb, shape, c->o->round_probe_bytes, gbps);
    *gbps = 0.0;
    h.dst = c->pb->dst;
    h.src = c->pb->src0;
    h.n = (size_t)(bytes / 2.0);
    if (h.n > c->pb->bytes)
        h.n = c->pb->bytes;
    if (h.n == 0u)
        return RMSNORM_OK; /* nothing to copy: no ratio (0 GB/s) */
    rmsnorm_status st = rmsi_bench_time(c->be, hot_copy_call, &h, calls, 0, &s);
    if (st == RMSNORM_OK && !(s > 0.0))
        st = RMSNORM_ERR_DEVICE;
    if (st == RMSNORM_OK)
        *gbps = 2.0 * (double)h.n / (s / (double)calls) * 1e-9;
    return st;
}

typedef struct timing {
    rmsi_bench_summary t;
    rmsi_bench_summary probe;
    double ratio; /* < 0: no rounds */
} timing;

/* reps samples of `calls` calls; on host backends each preceded by a probe of
 * the op's traffic shape. */
static rmsnorm_status time_samples(const rmsi_bench_ctx *c, kernel_work *w, int calls,
                                   rmsnorm_probe shape, double bytes, timing *out)
{
    double t[RMSI_BENCH_MAX_SAMPLES], pg[RMSI_BENCH_MAX_SAMPLES], ratio[RMSI_BENCH_MAX_SAMPLES];
    int reps = c->o->reps;
    int rounds = c->pb != NULL;
    rmsnorm_status st = RMSNORM_OK;
    memset(out, 0, sizeof *out);
    out->ratio = -1.0;
    for (int i = 0; i < reps && st == RMSNORM_OK; i++) {
        double s = 0.0;
        if (rounds)
            st = round_probe(c, shape, bytes, calls, &pg[i]);
        if (st == RMSNORM_OK)
            st = rmsi_bench_time(c->be, kernel_call, w, calls, c->o->graph, &s);
        if (st == RMSNORM_OK && !(s > 0.0))
            st = RMSNORM_ERR_DEVICE;
        t[i] = s / (double)calls;
        ratio[i] = rounds && pg[i] > 0.0 ? bytes / t[i] * 1e-9 / pg[i] : 0.0;
    }
    if (st != RMSNORM_OK)
        return st;
    if (rmsi_bench_summarise(t, reps, &out->t) != 0)
        return RMSNORM_ERR_DEVICE;
    if (rounds) {
        rmsi_bench_summary rs;
        if (rmsi_bench_summarise(pg, reps, &out->probe) != 0 ||
            rmsi_bench_summarise(ratio, reps, &rs) != 0)
            return RMSNORM_ERR_DEVICE;
        out->ratio = rs.median;
    }
    return RMSNORM_OK;
}

/* --config-search: every config the backend enumerates, validated, timed, and
 * compared with the heuristic's. A config that fails validation is skipped. */
static void config_search(const rmsi_bench_ctx *c, const plan *pl, cell_mem *m, kernel_work *w,
                          rmsi_bench_cell *cell)
{
    const rmsnorm_backend *be = c->be;
    rmsnorm_status (*cset)(const char *) = RMSI_BENCH_HOOK(be, config_set);
    rmsnorm_status (*cdesc)(rmsnorm_op, int64_t, int64_t, rmsnorm_dtype, char *, size_t) =
        RMSI_BENCH_HOOK(be, config_describe);
    rmsnorm_status (*cenum)(rmsnorm_op, int64_t, int64_t, rmsnorm_dtype, int, char *, size_t) =
        RMSI_BENCH_HOOK(be, config_enumerate);
    rmsnorm_op op = pl->oi->backward ? RMSNORM_OP_BACKWARD : RMSNORM_OP_FORWARD;
    double best = cell->t.median;
    if (cset == NULL || cdesc == NULL || cenum == NULL) {
        (void)snprintf(cell->cfg_heur, sizeof cell->cfg_heur, "n/a (no config hooks)");
        return;
    }
    rmsnorm_status st = cset(NULL);
    if (st == RMSNORM_OK)
        st = cdesc(op, pl->rows, pl->cols, pl->t, cell->cfg_heur, sizeof cell->cfg_heur);
    if (st != RMSNORM_OK) {
        (void)snprintf(cell->cfg_heur, sizeof cell->cfg_heur, "?");
        (void)fprintf(stderr, "rmsnorm-bench: warning: config_describe failed (%s)\n", rmsnorm_status_string(st));
    }
    (void)snprintf(cell->cfg_best, sizeof cell->cfg_best, "%s", cell->cfg_heur);
    for (int idx = 0; idx < 4096; idx++) {
        char spec[RMSI_BENCH_CFG_LEN];
        rmsi_bench_cell probe_cell = *cell;
        timing tm;
        int calls = 1;
        if (cenum(op, pl->rows, pl->cols, pl->t, idx, spec, sizeof spec) != RMSNORM_OK) {
            if (idx == 0) /* an empty search space is a fault, not a result */
                (void)fprintf(stderr, "rmsnorm-bench: warning: config_enumerate listed no config\n");
            break;
        }
        if (cset(spec) != RMSNORM_OK)
            continue;
        probe_cell.verdict = RMSI_BENCH_OK;
        if (validate(c, pl, m, &probe_cell) != RMSNORM_OK || probe_cell.verdict != RMSI_BENCH_OK)
            continue;
        if (calibrate(c, w, &calls) != RMSNORM_OK ||
            time_samples(c, w, calls, RMSNORM_PROBE_COPY, 0.0, &tm) != RMSNORM_OK)
            continue;
        cell->cfg_searched++;
        if (tm.t.median < best) {
            best = tm.t.median;
            (void)snprintf(cell->cfg_best, sizeof cell->cfg_best, "%s", spec);
        }
    }
    if (cset(NULL) != RMSNORM_OK)
        (void)fprintf(stderr, "rmsnorm-bench: warning: could not restore the heuristic config\n");
    cell->cfg_ratio = best > 0.0 ? cell->t.median / best : 0.0;
}

void rmsi_bench_cell_run(const rmsi_bench_ctx *c, rmsi_bench_cell *cell)
{
    const rmsnorm_backend *be = c->be;
    const rmsi_bench_opts *o = c->o;
    rmsi_bench_model_opts mo = { o->fp8, o->quant_y, 0, o->weight };
    plan pl;
    cell_mem m;
    kernel_work w;
    timing tm;
    rmsnorm_status st;
    int calls = 1;

    memset(&m, 0, sizeof m);
    m.be = be;
    cell->verdict = RMSI_BENCH_OK;
    cell->pct_roof = -1.0;
    cell->round_ratio = -1.0;
    cell->shape_ratio = -1.0;
    cell->note[0] = '\0';
    uint32_t need = rmsi_bench_op_caps(cell->op, cell->dtype, o->fp8);
    if ((rmsnorm_backend_caps(be) & need) != need) {
        cell->verdict = RMSI_BENCH_SKIP;
        (void)snprintf(cell->note, sizeof cell->note, "SKIP: backend lacks the capability");
        return;
    }
    if (plan_make(c, cell, &pl) != 0 ||
        rmsi_bench_bytes_of(cell->op, cell->dtype, cell->rows, cell->cols, &mo, &cell->bytes) != 0) {
        cell->verdict = RMSI_BENCH_SKIP;
        (void)snprintf(cell->note, sizeof cell->note, "SKIP: shape not valid for this op");
        return;
    }
    if (pl.oi->backward) {
        st = rmsnorm_backward_workspace_size(be, pl.rows, pl.cols, &pl.ws_be);
        if (st == RMSNORM_OK)
            st = rmsnorm_backward_workspace_size(c->ref, pl.rows, pl.cols, &pl.ws_ref);
        if (st != RMSNORM_OK) {
            set_note(cell, RMSI_BENCH_ERROR, "workspace size", st);
            return;
        }
        mo.workspace = pl.ws_be; /* the byte model drops it when there is no dweight */
        (void)rmsi_bench_bytes_of(cell->op, cell->dtype, cell->rows, cell->cols, &mo, &cell->bytes);
    }
    cell->round_probe = o->hot ? RMSNORM_PROBE_COPY
                               : rmsi_bench_probe_shape(&cell->bytes, !rmsnorm_backend_is_device(be));

    size_t per_clone = plan_clone_bytes(&pl);
    size_t clones = per_clone ? (o->working_set + per_clone - 1) / per_clone : 1;
    clones = clones < 1 ? 1 : (clones > (1u << 20) ? (1u << 20) : clones);
    /* host: inputs + ref outputs + backend outputs; device: the clones */
    double need_mem = (double)per_clone * (double)clones + 2.0 * (double)per_clone;
    if (need_mem > (double)o->mem_limit) {
        cell->verdict = RMSI_BENCH_SKIP;
        (void)snprintf(cell->note, sizeof cell->note, "SKIP: needs %.0f MiB > --mem-limit %.0f MiB",
                       need_mem / 1048576.0, (double)o->mem_limit / 1048576.0);
        return;
    }
    cell->clones = (int)clones;

    if (host_alloc_set(&pl, &m.host_in, pl.ws_ref) != 0 ||
        host_alloc_set(&pl, &m.host_be, 0) != 0) {
        cell_mem_free(&m);
        set_note(cell, RMSI_BENCH_ERROR, "host memory", RMSNORM_ERR_BAD_SHAPE);
        return;
    }
    st = make_reference(c, &pl, &m.host_in);
    if (st != RMSNORM_OK) {
        cell_mem_free(&m);
        set_note(cell, st == RMSNORM_ERR_UNSUPPORTED ? RMSI_BENCH_SKIP : RMSI_BENCH_ERROR,
                 "ref", st);
        return;
    }
    st = dev_setup(c, &pl, &m, cell->clones);
    if (st == RMSNORM_OK)
        st = validate(c, &pl, &m, cell);
    if (st != RMSNORM_OK || cell->verdict != RMSI_BENCH_OK) {
        if (st != RMSNORM_OK)
            set_note(cell, st == RMSNORM_ERR_UNSUPPORTED ? RMSI_BENCH_SKIP : RMSI_BENCH_ERROR,
                     "setup/validation", st);
        cell_mem_free(&m);
        return;
    }

    memset(&w, 0, sizeof w);
    w.be = be;
    w.pl = &pl;
    w.cur = dev_clone0(&pl, &m);
    w.clones = cell->clones;
    for (int r = 0; r < NROLES; r++)
        w.slab[r] = pl.bytes[r] ? m.slab[r] : NULL;
    if (!pl.oi->backward)
        w.slab[R_RSTD] = NULL;
    double bytes = (double)(cell->bytes.main_read + cell->bytes.main_written);
    st = calibrate(c, &w, &calls);
    if (st == RMSNORM_OK)
        st = time_samples(c, &w, calls, cell->round_probe, bytes, &tm);
    if (st != RMSNORM_OK) {
        set_note(cell, RMSI_BENCH_ERROR, "timing", st);
        cell_mem_free(&m);
        return;
    }
    cell->calls_per_sample = calls;
    cell->t = tm.t;
    cell->gbps = bytes / tm.t.median * 1e-9;
    if (!o->hot && c->rf->available && c->rf->open.best > 0.0)
        cell->pct_roof = 100.0 * cell->gbps / c->rf->open.best;
    if (tm.ratio >= 0.0) {
        cell->round_ratio = tm.ratio;
        cell->round_probe_gbps = tm.probe;
    }
    /* the opening probes are cold: no measure of a hot call */
    if (!o->hot && c->rf->available && c->rf->open.gbps[cell->round_probe] > 0.0)
        cell->shape_ratio = cell->gbps / c->rf->open.gbps[cell->round_probe];
    if (o->config_search)
        config_search(c, &pl, &m, &w, cell);
    cell_mem_free(&m);
}
