/*
 * The heuristic ladder: a launch configuration from (op, rows, cols, dtype,
 * SM count) alone, no run-time autotuning. Every knob is a field of
 * rmsi_config; RMSNORM_CUDA_CONFIG / config_set can pin any subset and
 * config_enumerate lists the whole space so rmsnorm-bench --config-search can
 * check these rules against the best config measured on a card.
 *
 * Both ops (VEC = 16 / sizeof(T) elements per 16-byte vector, nvec = cols/VEC):
 *  1. Not 16-byte friendly (a pointer, a stride or cols not a multiple of VEC):
 *     multi-pass, one element per access.
 *  2. nvec > 1024 (bf16 cols > 8192, f32 > 4096): multi-pass, 16-byte
 *     accesses, 256 threads per row forward, 512 backward (the re-read hits
 *     L2).
 *  3. Otherwise register-cached with 2 vectors per thread: tpr = nvec / 2
 *     rounded up to a warp multiple (a power of two below a warp; >= 128/VEC
 *     for the block quantiser, >= 32 backward), one row group per CTA from
 *     64 threads up, else CTAs of 128 threads; persistent grid of as many CTAs
 *     as fit (cps = 0). This is the whole backward ladder, and the forward's
 *     for small row counts (rows < 2 x SMs: latency-bound, a row's CTA should
 *     be wide).
 *  4. Plain forward (no residual, no fp8) with rows >= 2 x SMs, from the H200
 *     search (docs/perf/h200.md, calls 2-5): nvec in (512, 1024] ->
 *     multi-pass, 16-byte, 128 threads
 *     (16384x5120: 116.9 us vs 120.8 for the best register config;
 *     32768x8192: 392 vs 408); nvec in [256, 512] -> tpr = 128 (4096x4096:
 *     25.3 vs 26.8 us at tpr 256; 32768x4096: 179.8 vs 191.3; 65536x2048:
 *     168.6, the best of 60 configs).
 * Measured: the CTA count per SM moved results by < 2%, rows per CTA > 1 cost
 * 5-10% from 2048 columns up, the backward ladder was within 0.5% of the best
 * config except at 5120 columns (+6.7%).
 * The backward's persistent grid is also its dw partial count, capped at
 * max(2 * SMs, rows / 32) so the partials' write + read stays under ~4% of
 * the logical bytes (16-bit T).
 */
#include "gpu/cuda/ladder.h"

#define RMSI_FWD_MAX_THREADS 1024
#define RMSI_BWD_MAX_THREADS 512
#define RMSI_GRID_CAP (1LL << 30)

static int64_t rmsi_pow2ceil(int64_t v)
{
    int64_t p = 1;
    while (p < v)
        p <<= 1;
    return p;
}

static int rmsi_is_pow2(int64_t v)
{
    return v > 0 && (v & (v - 1)) == 0;
}

static int64_t rmsi_cdiv(int64_t a, int64_t b)
{
    return (a + b - 1) / b;
}

/* The kernels' __launch_bounds__: forward RMSI_FWD_BOUND(nv) (forward.cu),
 * backward RMSI_BWD_BOUND(nv) (backward.cu). */
static int rmsi_max_threads(const rmsi_shape *s, int nv)
{
    if (s->op != RMSI_OP_FWD)
        return nv == 4 ? 256 : RMSI_BWD_MAX_THREADS;
    return nv == 1 ? 1024 : (nv == 2 ? 512 : 256);
}

/* Rows per CTA: one row group per CTA once a row has two warps (measured
 * best at 2048..8192 columns), else CTAs of 128 threads (at most 32 groups,
 * the backward's partial rule). */
#define RMSI_LADDER_WARP 32
static int64_t rmsi_rpc_for(int64_t tpr)
{
    if (tpr >= 64)
        return 1;
    return 128 / tpr > 32 ? 32 : 128 / tpr;
}

static int64_t rmsi_nvec(const rmsi_shape *s)
{
    return s->cols / (16 / s->esz);
}

static int rmsi_nv_for(const rmsi_shape *s, int tpr)
{
    return (int)rmsi_pow2ceil(rmsi_cdiv(rmsi_nvec(s), tpr));
}

int64_t rmsi_bwd_partial_cap(int64_t rows, int sms)
{
    int64_t r32 = rmsi_cdiv(rows > 0 ? rows : 1, 32) * 32;
    int64_t cap = rows / 32 > 2LL * sms ? rows / 32 : 2LL * sms;
    cap = rmsi_cdiv(cap, 32) * 32;
    return cap < r32 ? cap : r32;
}

/* Threads per row that give each thread nv vectors with the fewest idle
 * slots: a power of two up to a warp, else a multiple of the warp (the row
 * reduction takes any whole number of warps), at least lmin. 5120 bf16
 * columns (640 vectors) get 320 threads x 2 vectors rather than 512 threads of
 * which 384 hold one vector and 128 two. */
static int64_t rmsi_tpr_for_nv(int64_t nvec, int nv, int64_t lmin)
{
    int64_t t = rmsi_cdiv(nvec, nv);
    t = t <= RMSI_LADDER_WARP ? rmsi_pow2ceil(t) : rmsi_cdiv(t, RMSI_LADDER_WARP) * RMSI_LADDER_WARP;
    return t < lmin ? lmin : t;
}

void rmsi_ladder(const rmsi_shape *s, rmsi_config *out)
{
    rmsi_config c = {RMSI_PATH_REG, 16, 0, 1, 1, 0};
    const int64_t nvec = rmsi_nvec(s);
    const int vec = 16 / s->esz;
    const int fwd = s->op == RMSI_OP_FWD;
    if (!s->vec_ok || nvec > 1024) {
        c.path = RMSI_PATH_MULTI;
        c.vec = s->vec_ok ? 16 : 0;
        c.tpr = fwd ? 256 : 512;
        c.rpc = 1;
        c.nv = 0;
        *out = c;
        return;
    }
    const int64_t lmin = fwd && s->quant == RMSI_Q_BLOCK ? 128 / vec : (fwd ? 4 : 32);
    int64_t tpr = rmsi_tpr_for_nv(nvec, 2, lmin);
    if (fwd && s->rows >= 2LL * s->sms) {
        /* bf16 cols 4097..8192: the multi-pass kernel won for the plain
         * forward. Not with a residual (its passes re-read x and r: 717 us vs
         * 570 at 32768x8192) nor with fp8 output (the block quantiser's
         * multi-pass form goes one element per access). */
        if (nvec > 512 && s->quant == RMSI_Q_NONE && !s->res) {
            c.path = RMSI_PATH_MULTI;
            c.vec = 16;
            c.tpr = 128;
            c.rpc = 1;
            c.nv = 0;
            *out = c;
            return;
        }
        if (nvec >= 256 && nvec <= 512 && s->quant == RMSI_Q_NONE && !s->res)
            tpr = 128; /* 2048..4096 bf16 cols: 128 threads x 2..4 vectors won */
    }
    c.tpr = (int)tpr;
    c.rpc = (int)rmsi_rpc_for(tpr);
    c.nv = rmsi_nv_for(s, c.tpr);
    *out = c;
}

int rmsi_config_valid(const rmsi_shape *s, const rmsi_config *c)
{
    const int maxt = s->op == RMSI_OP_FWD ? RMSI_FWD_MAX_THREADS : RMSI_BWD_MAX_THREADS;
    if (c->cps < 0 || c->cps > 64)
        return 0;
    if (c->path == RMSI_PATH_MULTI) {
        if (c->vec == 16 && !s->vec_ok)
            return 0;
        if (c->vec != 16 && c->vec != 0)
            return 0;
        return c->tpr >= 64 && c->tpr <= RMSI_FWD_MAX_THREADS && c->tpr % 64 == 0;
    }
    if (c->path != RMSI_PATH_REG || !s->vec_ok || c->vec != 16)
        return 0;
    if (c->tpr < 4 || c->tpr > maxt ||
        (c->tpr <= RMSI_LADDER_WARP ? !rmsi_is_pow2(c->tpr) : c->tpr % RMSI_LADDER_WARP != 0))
        return 0;
    if (!rmsi_is_pow2(c->rpc) || c->rpc > 32 || (int64_t)c->tpr * c->rpc > rmsi_max_threads(s, c->nv) ||
        (int64_t)c->tpr * c->rpc < 64)
        return 0;
    if (c->nv != rmsi_nv_for(s, c->tpr) || c->nv > (s->op == RMSI_OP_FWD ? 8 : 4))
        return 0;
    if (s->op == RMSI_OP_FWD && s->quant == RMSI_Q_BLOCK && c->tpr < 128 / (16 / s->esz))
        return 0;
    return 1;
}

int rmsi_config_resolve(const rmsi_shape *s, const rmsi_config *pin, rmsi_config *out)
{
    rmsi_config c;
    rmsi_ladder(s, &c);
    if (pin->path >= 0 && pin->path != c.path) {
        c.path = pin->path;
        if (c.path == RMSI_PATH_MULTI) {
            c.vec = s->vec_ok ? 16 : 0;
            c.tpr = 512;
            c.rpc = 1;
            c.nv = 0;
        } else {
            c.vec = 16;
            c.rpc = 1;
        }
    }
    if (pin->vec >= 0)
        c.vec = pin->vec;
    if (pin->tpr >= 0)
        c.tpr = pin->tpr;
    if (pin->rpc >= 0)
        c.rpc = pin->rpc;
    else if (c.path == RMSI_PATH_REG && pin->tpr >= 0)
        c.rpc = (int)rmsi_rpc_for(c.tpr > 0 ? c.tpr : 1);
    if (pin->cps >= 0)
        c.cps = pin->cps;
    if (c.path == RMSI_PATH_REG && c.tpr > 0)
        c.nv = rmsi_nv_for(s, c.tpr);
    if (c.path == RMSI_PATH_MULTI) {
        c.rpc = 1;
        c.nv = 0;
    }
    if (pin->nv >= 0 && pin->nv != c.nv)
        return -1;
    *out = c;
    return rmsi_config_valid(s, &c) ? 0 : -1;
}

int64_t rmsi_config_grid(const rmsi_shape *s, const rmsi_config *c, int occ)
{
    const int64_t rpc = c->path == RMSI_PATH_MULTI ? 1 : c->rpc;
    int64_t groups = rmsi_cdiv(s->rows, rpc);
    int64_t per_sm = c->cps > 0 ? c->cps : (occ > 0 ? occ : 1);
    int64_t g = groups;
    if (s->op == RMSI_OP_FWD) {
        g = groups < per_sm * s->sms ? groups : per_sm * s->sms;
    } else {
        int64_t cap = rmsi_bwd_partial_cap(s->rows, s->sms) / rpc;
        g = groups < per_sm * s->sms ? groups : per_sm * s->sms;
        if (g > cap)
            g = cap;
    }
    if (g > RMSI_GRID_CAP)
        g = RMSI_GRID_CAP;
    return g < 1 ? 1 : g;
}

int rmsi_config_at(const rmsi_shape *s, int idx, rmsi_config *out)
{
    static const int cps[] = {0, 2};
    const int maxt = s->op == RMSI_OP_FWD ? RMSI_FWD_MAX_THREADS : RMSI_BWD_MAX_THREADS;
    int64_t tprs[24];
    int nt = 0, n = 0;
    if (idx < 0)
        return -1;
    /* powers of two, then the balanced widths for 1, 2, 4, 8 vectors */
    for (int tpr = 4; tpr <= maxt; tpr *= 2)
        tprs[nt++] = tpr;
    for (int nv = 1; nv <= 8; nv *= 2) {
        int64_t t = rmsi_tpr_for_nv(rmsi_nvec(s), nv, 4);
        int dup = t > maxt;
        for (int j = 0; j < nt && !dup; j++)
            dup = tprs[j] == t;
        if (!dup)
            tprs[nt++] = t;
    }
    for (int j = 0; j < nt; j++) {
        for (int rpc = 1; rpc <= 32; rpc *= 2) {
            int64_t cta = tprs[j] * rpc;
            if (cta > maxt || (rpc > 1 && cta > 512))
                continue;
            for (int k = 0; k < 2; k++) {
                rmsi_config c = {RMSI_PATH_REG, 16, (int)tprs[j], rpc, rmsi_nv_for(s, (int)tprs[j]), cps[k]};
                if (!rmsi_config_valid(s, &c))
                    continue;
                if (n++ == idx) {
                    *out = c;
                    return 0;
                }
            }
        }
    }
    for (int v = 0; v < 2; v++) {
        for (int tpr = 128; tpr <= RMSI_FWD_MAX_THREADS; tpr *= 2) {
            rmsi_config c = {RMSI_PATH_MULTI, v == 0 ? 16 : 0, tpr, 1, 0, 0};
            if (!rmsi_config_valid(s, &c))
                continue;
            if (n++ == idx) {
                *out = c;
                return 0;
            }
        }
    }
    return -1;
}
