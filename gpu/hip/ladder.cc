/*
 * The AMD heuristic ladder: a launch configuration from (op, rows, cols,
 * dtype, CU count) alone, no run-time autotuning. Same knobs and text syntax
 * as the CUDA ladder (gpu/common/config_text.cc), read in AMD units:
 *
 *   tpr   threads per row; waves per row = tpr / 64 (tpr < 64: 64/tpr rows
 *         share one wave, their reductions never cross: masks stay below tpr)
 *   rpc   rows per work-group (reg path); the work-group is tpr * rpc threads
 *   nv    16-byte vectors per thread and input (derived from tpr and cols)
 *   cps   work-groups per CU of a persistent grid (0: one per row group)
 *   lds, async  LDS pipeline depth and async global->LDS copies: parameters
 *         of the syntax (config.cc) so a search can name them, fixed at 0 until
 *         a shared kernel implements them (none does yet; see docs/amd.md).
 *
 * Why these rules (CDNA3/CDNA4, wave64, 4 SIMDs per CU, at most 8 waves per
 * SIMD, 512 VGPRs per SIMD lane shared by the waves on it):
 *  - Memory parallelism on AMD comes from resident waves more than from
 *    per-thread chains, so the ladder keeps NV small (2: 32 bytes per input in
 *    flight per thread) and occupancy high. docs/perf/amd-isa.md gives the
 *    reason in numbers: the reg kernels at NV <= 2 reach 5-8 waves per SIMD;
 *    higher NV costs waves (the backward at NV = 4 holds 2-3 per SIMD) and
 *    needs the smaller work-groups of its launch bound, so the ladder keeps
 *    NV = 2 and lets the search space list the rest, for measurement.
 *  - Forward: not 16-byte friendly -> multi-pass, one element per access,
 *    256..512 threads. nvec <= 2048 -> reg, tpr = pow2ceil(nvec / 2) capped
 *    at the reg kernels' bound of 512 (bf16 cols <= 16384, f32 <= 8192: NV
 *    2, or 4 at the widest); wider -> multi-pass with 16-byte
 *    accesses over a persistent grid (the re-read hits the 4 MB L2 per XCD or
 *    the 256 MB Infinity Cache). Work-groups of 256 threads (one wave per
 *    SIMD): rpc = 256 / tpr for short rows.
 *  - Few rows (grid under 2 work-groups per CU): double tpr (halve NV) while
 *    that helps; latency, not bandwidth, decides those shapes.
 *  - Backward (always persistent: the grid is the dw partial count): reg at
 *    NV <= 2 up to 512 threads per row (nvec <= 1024), else multi-pass with
 *    512 threads. Partial cap max(2 * CUs, rows / 32) keeps the partials'
 *    traffic near 3% of the logical bytes at 16-bit (CUDA moved to 4 * SMs
 *    after measuring mid-size rows on the H200; not measured on AMD).
 *  - LDS: the backward's dw accumulators (NV * VEC floats a thread, checked
 *    here with one float of slack, 32 KB at 512 threads x NV 2 bf16) plus
 *    the cross-wave reduction; a
 *    config above 64 KB per work-group is invalid. The CU's LDS (64 KB
 *    gfx942, 160 KB gfx950) is read here for the LDS-pipelined variants.
 */
#include "gpu/hip/ladder.h"

#define RMSI_HIP_WAVE 64
#define RMSI_HIP_FWD_MAX 1024 /* the multi-pass kernels' launch bound */
#define RMSI_HIP_REG_MAX RMSI_REG_MAXT /* the register-cached kernels' bound */
#define RMSI_HIP_LDS_MAX 65536 /* LDS per work-group (gfx942, gfx950) */
#define RMSI_HIP_BWD_MAX 512
#define RMSI_HIP_WG 256       /* one wave per SIMD */
#define RMSI_HIP_GRID_CAP (1LL << 30)

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

/* The forward reg kernel's launch bound (RMSI_REG_MAXT in
 * gpu/common/forward.cu, the same for every NV). A work-group above it does
 * not launch. */
static int rmsi_fwd_bound(int nv)
{
    (void)nv;
    return RMSI_HIP_REG_MAX;
}

static int64_t rmsi_cdiv(int64_t a, int64_t b)
{
    return (a + b - 1) / b;
}

static int64_t rmsi_nvec(const rmsi_hip_shape *s)
{
    return s->cols / (16 / s->esz);
}

static int rmsi_nv_for(const rmsi_hip_shape *s, int tpr)
{
    return (int)rmsi_pow2ceil(rmsi_cdiv(rmsi_nvec(s), tpr));
}

static int64_t rmsi_rpc_for(int64_t tpr)
{
    const int64_t r = tpr >= RMSI_HIP_WG ? 1 : RMSI_HIP_WG / tpr;
    return r > 32 ? 32 : r;
}

int64_t rmsi_hip_partial_cap(int64_t rows, int cus)
{
    int64_t r32 = rmsi_cdiv(rows > 0 ? rows : 1, 32) * 32;
    int64_t cap = rows / 32 > 2LL * cus ? rows / 32 : 2LL * cus;
    cap = rmsi_cdiv(cap, 32) * 32;
    return cap < r32 ? cap : r32;
}

static void rmsi_multi(const rmsi_hip_shape *s, int tpr_vec, rmsi_config *c)
{
    c->path = RMSI_PATH_MULTI;
    c->vec = s->vec_ok ? 16 : 0;
    c->tpr = s->vec_ok ? tpr_vec : (s->cols >= 4096 ? 512 : 256);
    c->rpc = 1;
    c->nv = 0;
    c->cps = 0;
}

void rmsi_hip_ladder(const rmsi_hip_shape *s, rmsi_config *out)
{
    rmsi_config c = {RMSI_PATH_REG, 16, 0, 1, 1, 0, 0, 0, 1, 0};
    const int64_t nvec = rmsi_nvec(s);
    const int vec = 16 / s->esz;
    const int cus = s->dev.cus > 0 ? s->dev.cus : 1;
    if (s->op == RMSI_HIP_FWD) {
        if (!s->vec_ok || nvec > 4LL * RMSI_HIP_REG_MAX) {
            rmsi_multi(s, RMSI_HIP_FWD_MAX, &c);
            *out = c;
            return;
        }
        int64_t tpr = rmsi_pow2ceil(rmsi_cdiv(nvec, 2));
        const int64_t lmin = s->quant == RMSI_Q_BLOCK ? 128 / vec : 4;
        if (tpr < lmin)
            tpr = lmin;
        if (tpr > RMSI_HIP_REG_MAX)
            tpr = RMSI_HIP_REG_MAX;
        int64_t rpc = rmsi_rpc_for(tpr);
        while (tpr < RMSI_HIP_REG_MAX && tpr < nvec && rmsi_cdiv(s->rows, rpc) < 2LL * cus) {
            tpr *= 2;
            rpc = rmsi_rpc_for(tpr);
        }
        c.tpr = (int)tpr;
        c.rpc = (int)rpc;
        c.nv = rmsi_nv_for(s, c.tpr);
        *out = c;
        return;
    }
    if (!s->vec_ok || nvec > 2LL * RMSI_HIP_BWD_MAX) {
        rmsi_multi(s, RMSI_HIP_BWD_MAX, &c);
        if (!s->vec_ok)
            c.tpr = RMSI_HIP_BWD_MAX;
        *out = c;
        return;
    }
    int64_t tpr = rmsi_pow2ceil(rmsi_cdiv(nvec, 2));
    if (tpr < 16)
        tpr = 16;
    if (tpr > RMSI_HIP_BWD_MAX)
        tpr = RMSI_HIP_BWD_MAX;
    int64_t rpc = rmsi_rpc_for(tpr);
    while (tpr < RMSI_HIP_BWD_MAX && tpr < nvec && rmsi_cdiv(s->rows, rpc) < cus) {
        tpr *= 2;
        rpc = rmsi_rpc_for(tpr);
    }
    c.tpr = (int)tpr;
    c.rpc = (int)rpc;
    c.nv = rmsi_nv_for(s, c.tpr);
    *out = c;
}

int rmsi_hip_valid(const rmsi_hip_shape *s, const rmsi_config *c)
{
    const int maxt = s->op == RMSI_HIP_FWD ? rmsi_fwd_bound(c->nv) : RMSI_HIP_BWD_MAX;
    /* no cp.async row staging, no clusters and no lean kernels (nor their L1
     * hints, cache 4-7) on AMD */
    if (c->cps < 0 || c->cps > 32 || c->cache < 0 || c->cache > 3 || c->stage != 0 || c->cl != 1 || c->lean != 0)
        return 0;
    if (c->path == RMSI_PATH_MULTI) {
        if ((c->vec == 16 && !s->vec_ok) || (c->vec != 16 && c->vec != 0))
            return 0;
        /* whole waves: the block quantiser gives each wave whole 128-column blocks */
        return c->tpr >= RMSI_HIP_WAVE && c->tpr <= RMSI_HIP_FWD_MAX && c->tpr % RMSI_HIP_WAVE == 0;
    }
    if (c->path != RMSI_PATH_REG || !s->vec_ok || c->vec != 16)
        return 0;
    if (!rmsi_is_pow2(c->tpr) || c->tpr < 4 || c->tpr > maxt)
        return 0;
    /* at least one full wave per work-group, at most the launch bound; at
     * most 32 rows per work-group, so that grid * rpc never exceeds the
     * backward's partial cap (a multiple of 32, workspace_size's count) */
    if (!rmsi_is_pow2(c->rpc) || c->rpc > 32 || (int64_t)c->tpr * c->rpc > maxt || (int64_t)c->tpr * c->rpc < RMSI_HIP_WAVE)
        return 0;
    if (c->nv != rmsi_nv_for(s, c->tpr) || c->nv > (s->op == RMSI_HIP_FWD ? 8 : 4))
        return 0;
    if (s->op == RMSI_HIP_FWD && s->quant == RMSI_Q_BLOCK && c->tpr < 128 / (16 / s->esz))
        return 0;
    /* the backward's dw accumulators (rmsi_bwd_reg_smem; HIP does not stage
     * weff: 8192 bf16 columns would need the whole 64 KB for the two rows),
     * with a float a thread of slack for the static reduction scratch */
    if (s->op != RMSI_HIP_FWD &&
        rmsi_bwd_reg_smem(c->tpr, c->rpc, c->nv, s->esz, 0, 0, 0) + (size_t)c->tpr * c->rpc * 4 > RMSI_HIP_LDS_MAX)
        return 0;
    return 1;
}

int rmsi_hip_resolve(const rmsi_hip_shape *s, const rmsi_config *pin, rmsi_config *out)
{
    rmsi_config c;
    rmsi_hip_ladder(s, &c);
    if (pin->path >= 0 && pin->path != c.path) {
        if (pin->path == RMSI_PATH_MULTI) {
            rmsi_multi(s, s->op == RMSI_HIP_FWD ? RMSI_HIP_FWD_MAX : RMSI_HIP_BWD_MAX, &c);
        } else {
            c.path = RMSI_PATH_REG;
            c.vec = 16;
            c.tpr = s->op == RMSI_HIP_FWD ? RMSI_HIP_REG_MAX : RMSI_HIP_BWD_MAX;
            c.rpc = 1;
            c.cps = 0;
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
    if (pin->stage >= 0)
        c.stage = pin->stage;
    if (pin->cl >= 0)
        c.cl = pin->cl;
    if (pin->lean >= 0)
        c.lean = pin->lean;
    if (c.path == RMSI_PATH_REG && c.tpr > 0)
        c.nv = rmsi_nv_for(s, c.tpr);
    if (c.path == RMSI_PATH_MULTI) {
        c.rpc = 1;
        c.nv = 0;
    }
    if (pin->nv >= 0 && pin->nv != c.nv)
        return -1;
    *out = c;
    return rmsi_hip_valid(s, &c) ? 0 : -1;
}

int64_t rmsi_hip_grid(const rmsi_hip_shape *s, const rmsi_config *c, int occ)
{
    const int64_t rpc = c->path == RMSI_PATH_MULTI ? 1 : c->rpc;
    const int64_t cus = s->dev.cus > 0 ? s->dev.cus : 1;
    const int64_t groups = rmsi_cdiv(s->rows, rpc);
    const int64_t per_cu = c->cps > 0 ? c->cps : (occ > 0 ? occ : 1);
    int64_t g = groups;
    if (s->op == RMSI_HIP_FWD) {
        if (c->cps > 0 || c->path == RMSI_PATH_MULTI)
            g = groups < per_cu * cus ? groups : per_cu * cus;
    } else {
        const int64_t cap = rmsi_hip_partial_cap(s->rows, (int)cus) / rpc;
        g = groups < per_cu * cus ? groups : per_cu * cus;
        if (g > cap)
            g = cap;
    }
    if (g > RMSI_HIP_GRID_CAP)
        g = RMSI_HIP_GRID_CAP;
    return g < 1 ? 1 : g;
}

int rmsi_hip_config_at(const rmsi_hip_shape *s, int idx, rmsi_config *out)
{
    static const int cps_fwd[] = {0, 2, 4};
    static const int cps_bwd[] = {0, 1, 2, 4};
    const int *cps = s->op == RMSI_HIP_FWD ? cps_fwd : cps_bwd;
    const int ncps = s->op == RMSI_HIP_FWD ? 3 : 4;
    const int maxt = s->op == RMSI_HIP_FWD ? RMSI_HIP_REG_MAX : RMSI_HIP_BWD_MAX;
    int n = 0;
    if (idx < 0)
        return -1;
    /* reg path: threads per row x work-group size (1..16 waves) x persistence;
     * rmsi_hip_valid drops what the launch bounds refuse */
    for (int tpr = 4; tpr <= maxt; tpr *= 2) {
        for (int wg = RMSI_HIP_WAVE; wg <= maxt; wg *= 2) {
            if (wg < tpr)
                continue;
            for (int k = 0; k < ncps; k++) {
                rmsi_config c = {RMSI_PATH_REG, 16, tpr, wg / tpr, rmsi_nv_for(s, tpr), cps[k], 0, 0, 1, 0};
                if (!rmsi_hip_valid(s, &c))
                    continue;
                if (n++ == idx) {
                    *out = c;
                    return 0;
                }
            }
        }
    }
    for (int v = 0; v < 2; v++) {
        for (int tpr = RMSI_HIP_WAVE; tpr <= RMSI_HIP_FWD_MAX; tpr *= 2) {
            rmsi_config c = {RMSI_PATH_MULTI, v == 0 ? 16 : 0, tpr, 1, 0, 0, 0, 0, 1, 0};
            if (!rmsi_hip_valid(s, &c))
                continue;
            if (n++ == idx) {
                *out = c;
                return 0;
            }
        }
    }
    return -1;
}
