/*
 * The heuristic ladder: a launch configuration from (op, rows, cols, dtype,
 * SM count) alone, no run-time autotuning. Every knob is a field of
 * rmsi_config; RMSNORM_CUDA_CONFIG / config_set can pin any subset and
 * config_enumerate lists the whole space so rmsnorm-bench --config-search can
 * check these rules against the best config measured on a card.
 *
 * What the rules rest on: these kernels are latency-bound loops of
 * "load a row, reduce, write a row"; what hides the latency is the bytes in
 * flight per SM, i.e. resident threads x vectors per thread. The register-
 * cached kernels cap their registers per vectors-per-thread (forward.cu,
 * backward.cu) so that 1024-2048 threads stay resident.
 *
 * Both ops (VEC = 16 / sizeof(T) elements per 16-byte vector, nvec = cols/VEC):
 *  1. Not 16-byte friendly (a pointer, a stride or cols not a multiple of VEC):
 *     multi-pass, one element per access.
 *  2. nvec > 2048 (bf16 cols > 16384, f32 > 8192; backward: nvec > 1024
 *     but for rows without a residual gradient from a row an SM, fp32 from
 *     2.5, rmsi_bwd_wide, sessions 30 and 51): forward 16-bit rows (and fp32 rows
 *     without fp8 output, session 32, rmsi_fwd_wide_ok)
 *     without fp8 output (or with the 1x128 block quantiser's, sessions
 *     27-28) from 2 rows an SM: the lean two-pass kernel, 1024 threads
 *     (rmsi_fwd_lean_rule, session 24); under 2 rows an SM where clusters
 *     do not split the row (rmsi_fwd_lean_few, sessions 31-32): plain rows
 *     from 2048 vectors an SM, fused adds above a quarter of a row an SM
 *     and block fp8 above a half (512 threads from one to 1.875 rows an
 *     SM), rows wider than 8192 vectors above 3/8 of a row an SM (a fused
 *     add alone: 3/16), and every row count at 262144 columns. The fewer
 *     rows: the row split over a cluster of 8 CTAs (4 where it does not
 *     split in 8), each holding its slice in registers (rmsi_fwd_cluster,
 *     sessions 23, 31, 32; 2048-vector rows too: plain under an eighth of
 *     a row an SM, the fusions under a half; rows of 8193-16384 vectors in
 *     clusters of 8 CTAs of 4 vectors, rmsi_fwd_cluster_wide). Otherwise
 *     multi-pass,
 *     16-byte accesses, 256 threads per row forward, 512 backward (the
 *     re-read hits L2 in part); 16-bit forward rows (plain, fused add,
 *     per-token fp8 to 8192 vectors): 512 threads with L2 eviction hints
 *     (cache = 1, session 23); per-token and per-tensor fp8 wider than
 *     8192 vectors to 3 rows an SM: 1024 threads, cache = 1 (sessions
 *     32-33);
 *     backward rows without a residual gradient: 1024 threads from 4096 to
 *     8192 vectors (session 22; fp32 since session 32), 16-bit rows of
 *     1025 to 4096 under half a row an SM (session 31), and rows wider than
 *     8192 vectors to 1.75 rows an SM (session 32).
 *     Fused adds that store h, 16-bit rows of 512-2048 vectors in multiples
 *     of 512, from 2 rows an SM: the lean kernel too, nvec / 2 threads
 *     (256..1024), cache = 5 (rmsi_fwd_lean_fused, sessions 25-26); the
 *     block quantiser without a residual or y from 512 vectors, 256 or 512
 *     threads, cache = 1 (rmsi_fwd_lean_quant, session 28); fused adds
 *     of 256 and 640 vectors from about 4 and 8 rows an SM
 *     (rmsi_fwd_lean_fused_narrow, session 31); the plain
 *     forward of 512-2048 vectors in multiples of 128 from 31 rows an SM,
 *     min(nvec / 2, 512) threads, cache = 5 (rmsi_fwd_lean_plain, session
 *     29); the fused add with the block quantiser, h stored, of 512-2048
 *     vectors in multiples of 128 from 31 rows an SM, 256 or 128 threads,
 *     cache = 5, in the 48-register kernel (rmsi_fwd_lean_rquant, sessions
 *     33-34; with y at 512 and 1024 vectors from 7 rows an SM, session 37);
 *     the block quantiser without a residual from 31 rows an SM
 *     (with y to 1024 vectors, at 256-1024 of them from 7 rows an SM;
 *     above, multiples of 256 from 62 rows an SM) in the same kernel, 64,
 *     128 or 256 threads, cache = 5 (1 with y at 512, 640 and 1025-1536
 *     vectors; rmsi_fwd_lean_quant48, sessions 34-37).
 *  3. Forward: a row group per CTA-row, the grid covering the rows (cps = 0,
 *     no persistent loop; a persistent grid with the next row staged in
 *     shared memory was 1-20% slower, S13-1, and the register kernel with
 *     its next row staged by cp.async 3-36% slower at 1-4 CTAs an SM and
 *     level at 64, add + block fp8 with y, S30-1), the default cache policy
 *     (cache = 0; the streaming hints, 0.2-5% faster in the L2-hot searches
 *     of session 2, were at most 1.2% faster cold and a single row was
 *     2-16% slower with them, S13-4, S13-6); a fused add of 1024 vectors
 *     from 64 rows per SM takes 2 vectors a thread. From 4 rows per SM: 4
 *     vectors per thread,
 *     the weights loaded with the row (stage = 1; 8192 bf16 columns: 64
 *     registers, 4 CTAs of 256 per SM; with a residual 80 and 3), except
 *     rows of <= 512 bf16 columns: 2 vectors, weights with the row too,
 *     and plain forwards of 256 16-bit vectors at 3.25-32 rows per SM: 2
 *     vectors of 128 threads (session 44). Under 4 rows per SM: 1 vector
 *     per thread (2 if a row would need more than 512 threads), so a row's
 *     latency is spread over the most threads;
 *     from 1 row per SM, rows of 512 or 1024 vectors take 256 threads
 *     instead (plain forward only, the case measured), and below it 16-bit
 *     rows of 512 vectors too (session 30); fused adds of 512 16-bit
 *     vectors at 1.5 to 2 rows an SM take 256 threads too (session 31);
 *     rows of 64 16-bit vectors with the block quantiser or a fused add
 *     that stores h take one vector a thread and two rows a CTA at 4-11
 *     rows an SM, sixteen rows a CTA at 31-61 (rmsi_fwd_narrow_fused,
 *     session 37). The 1x128 block quantiser's rows where session 38's
 *     search and pins found these rules more than 2% behind take a table
 *     of (y, residual, width, rows an SM) -> config, looked up after the
 *     cluster rule and before the lean and register rules of rows that
 *     fit registers (rmsi_fwd_block_table, 19 entries). Threads per row: the balanced width for that many vectors, at least
 *     128/VEC lanes for the block quantiser; CTAs of >= 128 threads (rows
 *     per CTA for narrow rows). fp8 output: its 4-vector kernels load the
 *     weights after the reduction, a second latency that only many CTAs an
 *     SM hide, so 2 vectors also for < 16 rows per SM of <= 4096 bf16
 *     columns and < 64 of <= 2048 (as with a residual, whose 4-vector
 *     kernels need 80 registers); default cache policy; with a residual 2
 *     vectors where the others take 4 (its kernels need 96 registers at 4:
 *     add + block quant 4096x8192 was 1.37x faster at tpr 512 x 2 in the
 *     search), without one 4 (64 registers; 14-17% faster than 2, S5-1).
 *  4. Backward: fewer rows than SMs -> multi-pass, 16-byte, 256 threads
 *     (512 above 4096 bf16 columns): one CTA per row beat a register CTA
 *     there (5.1 vs 5.3 us at 32x4096, session 2), except 16-bit rows of
 *     512 vectors, one vector of 512 threads (32x4096 5.20 -> 4.78 us,
 *     session 30). Otherwise a persistent grid (its CTA
 *     count is the dw partial count), capped at max(4 * SMs, rows / 32)
 *     partial rows (their write + read is under ~4% of the logical bytes of
 *     a 16-bit T above 4 * 32 rows per SM, 17% at 4096 rows, where the cap
 *     of 2 * SMs left 2 CTAs an SM: 4096x4096 bf16 46.3 -> 38.9 us with 4
 *     * SMs, session 3), at least a warp per row and 128 threads per CTA
 *     (2048 bf16 columns: 2 rows of 64 threads, 2-6% faster than 1): >= 64
 *     rows per SM -> 4 vectors per thread (rows narrower than 512 vectors
 *     only where the partial cap gives 8 partials an SM; bf16 rows of 256
 *     vectors, and of 512 under 256 rows an SM, without a residual
 *     gradient: 2, in the lean kernel, session 30), as many CTAs as
 *     fit (cps = 0), no
 *     cache hints (streaming loads were 4-7% slower at 5120-8192 bf16
 *     columns in the session-3 search; stores-only within 0.5% of none);
 *     the same for rows wider than 512 vectors (under 16 rows per SM only
 *     above 640); other rows ->
 *     2 vectors per thread, as many CTAs as fit, cache = 1.
 *     At 2 and 4 vectors the next row is staged in shared memory by cp.async
 *     (stage = 1; session 4: 10-29% faster at 4 vectors, up to 7% at 2), one
 *     row group a CTA (CTAs of >= 64 threads; two rows of 256 threads below
 *     16 rows per SM); 1 vector (narrow rows) prefetches into registers.
 *     Exceptions by device: under 28 GB/s of HBM an SM (H100-class;
 *     sessions 47-52) rmsi_bwd_slow_hbm and rmsi_bwd_pairs_slow_hbm; fp32
 *     rows where clusters exist (session 52) rmsi_bwd_f32_512 and
 *     rmsi_bwd_f32_few (with a residual gradient under 28 GB/s an SM,
 *     session 53).
 * These rules were set from the H200 searches recorded in docs/perf/h200.md,
 * and since session 47 from H100 ones too (labelled there).
 */
#include "gpu/cuda/ladder.h"

#define RMSI_MULTI_MAX_THREADS 1024
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

/* The backward keeps its weff row, dw accumulators and staged row in shared
 * memory (rmsi_bwd_reg_smem); above 48 KB the launcher opts in, up to the
 * device's limit (rmsi_shape.smem: 227 KB sm_90/100, 163 KB sm_80, 99 KB
 * sm_86/89; 48 KB when unknown). A staged row that does not fit is not
 * staged (rmsi_stage_for). */
static size_t rmsi_smem_cap(const rmsi_shape *s)
{
    /* the limit covers static memory too: 1 KB for the reduction scratch */
    return s->smem > 48 * 1024 ? (size_t)s->smem - 1024 : 47 * 1024;
}

static int64_t rmsi_nvec(const rmsi_shape *s)
{
    return s->cols / (16 / s->esz);
}

static int rmsi_nv_for(const rmsi_shape *s, int tpr, int cl = 1)
{
    return (int)rmsi_pow2ceil(rmsi_cdiv(rmsi_nvec(s) / cl, tpr));
}

/* A register config's vectors a thread: a forward row split over a cluster
 * (cl > 1) gives each CTA 1/cl of it. */
static int rmsi_nv_cfg(const rmsi_shape *s, const rmsi_config *c)
{
    return rmsi_nv_for(s, c->tpr, s->op == RMSI_OP_FWD && c->cl > 1 ? c->cl : 1);
}

/* Rows per CTA: CTAs of at least 128 threads (at most 32 groups, the
 * backward's partial rule), except that a forward row of two warps gets its
 * own CTA (measured best at 2048..8192 columns); the unstaged backward keeps
 * 2 rows of 64 threads per CTA (2-6% faster than 1 at 2048 bf16 columns,
 * session 3). The staged backward (stage = 1) takes one row group a CTA of
 * >= 64 threads, two of 256 threads at 2 vectors when rows are few. */
#define RMSI_LADDER_WARP 32
/* rmsi_fwd_narrow_fused: 16-bit rows of 64 vectors (512 bf16 columns)
 * with the 1x128 block quantiser or a fused add that stores h, at 4 to 11
 * and at 31 to 61 rows an SM, where bench/gpu_search.py (S37-1) found the
 * ladder 4-12% behind. At 4-11 rows an SM one vector a thread (64 threads)
 * and two rows a CTA, where the ladder gave two vectors and four rows;
 * at 31-61 sixteen rows a CTA of 32 threads instead of four. S37-2
 * (rmsnorm-bench, the pins against the ladder, alternated twice for
 * rpc = 16, once for the others, us; ladder / tpr=64,nv=1,rpc=2 /
 * tpr=32,nv=2,rpc=16):
 * - block fp8 without y: 1024x512 2.91 / 2.61 / 3.04, 2048x512 3.44 /
 *   3.59 / 3.44, 4096x512 4.85 / 5.35 / 4.54, 8192x512 7.44 / 9.01 / 7.28;
 * - with y: 1024x512 3.10 / 2.79 / 3.24, 2048x512 3.71 / 3.93 / 3.71,
 *   4096x512 5.44 / 6.00 / 5.08, 8192x512 8.53 / 10.33 / 8.35;
 * - fused add: 1024x512 2.93 / 2.80 / 3.01, 2048x512 3.92 / 4.26 / 3.91,
 *   4096x512 6.28 / 6.13 / 5.86, 8192x512 10.37 / 10.03 / 10.49;
 * - add + block fp8 with y: 1024x512 3.48 / 3.25 / 3.67, 2048x512 4.60 /
 *   4.85 / 4.57, 4096x512 6.68 / 7.32 / 6.69, 8192x512 11.93 / 12.19 /
 *   12.27.
 * So 4-11 rows an SM (1024 rows; 2048 lost) and 31-61 (4096; at 8192 the
 * fused add lost); 16384-65536 rows stay (the ladder first or within 2%
 * but for block fp8 without y at 65536x512, where 16 threads of 4
 * vectors led 45.51 -> 43.32, not taken). The rpc = 16 pins ran a
 * persistent grid of 2 CTAs an SM (cps = 2; at 4096 rows the same 256
 * CTAs), the rule covers the rows (cps = 0). S37-3, the rule against
 * 97b68cc's ladder, alternated twice, us: block fp8 1024x512 2.95 -> 2.64
 * (fp16 the same), 4096x512 4.87 -> 4.56; with y 3.13 -> 2.82, 5.48 ->
 * 5.11; fused add 2.95 -> 2.84, 6.35 -> 5.89; add + block with y 3.52 ->
 * 3.29, 6.69 -> 6.71 (level); 2048 and 8192 rows unchanged. The
 * per-tensor and per-token modes and fp32 rows were not measured. */
/* Rows a CTA the rule gives (2 at 4-11 rows an SM, 16 at 31-61), 0 where
 * it does not apply: one place for both of its bounds, which the vector
 * count (rmsi_ladder) and the rows a CTA (rmsi_rpc_for) read. */
static int rmsi_fwd_narrow_fused(const rmsi_shape *s)
{
    if (s->op != RMSI_OP_FWD || s->esz != 2 || rmsi_nvec(s) != 64 ||
        !(s->quant == RMSI_Q_BLOCK || (s->res && s->hout && s->quant == RMSI_Q_NONE)))
        return 0;
    if (s->rows >= 4LL * s->sms && s->rows < 12LL * s->sms)
        return 2;
    return s->rows >= 31LL * s->sms && s->rows < 62LL * s->sms ? 16 : 0;
}

static int rmsi_bwd_pairs_slow_hbm(const rmsi_shape *s);
static int64_t rmsi_rpc_for(const rmsi_shape *s, int64_t tpr, int stage)
{
    if (s->op == RMSI_OP_FWD) {
        if (stage && s->quant == RMSI_Q_NONE && !s->res && tpr == 128 && rmsi_nv_for(s, 128) == 4 &&
            s->rows >= 128LL * s->sms)
            /* plain forward, 512 vectors, 128+ rows an SM: two rows a CTA
             * (S15-2, S15-3, rmsnorm-bench, rpc=2 pinned against the ladder,
             * alternated twice: 32768x4096 129.1 -> 127.8 us, 65536x4096
             * 256.7 -> 253.1; 16384x4096 0.3% faster, 8192x4096 0.8% slower;
             * at other widths slower: 32768x2048 +1.3%, 32768x8192 +5.3%).
             * Since session 29 such 16-bit rows take the lean kernel
             * (rmsi_fwd_lean_plain); fp32 rows of 2048 columns, not
             * measured, still come here. */
            return 2;
        /* 64 vectors: two rows a CTA of one vector a thread, or sixteen of
         * two (rmsi_fwd_narrow_fused) */
        const int narrow = rmsi_fwd_narrow_fused(s);
        if ((narrow == 2 && tpr == 64) || (narrow == 16 && tpr == 32))
            return narrow;
        stage = 0; /* the forward's stage is where its weights load, not a staged row */
    }
    if (tpr == 256 && rmsi_nv_for(s, 256) == 4 && rmsi_bwd_pairs_slow_hbm(s))
        return 2; /* 16-bit rows of 1024 vectors on H100-class HBM (the function's comment) */
    const int64_t solo = s->op == RMSI_OP_FWD ? 2 * RMSI_LADDER_WARP : 128;
    if (stage && tpr >= 256 && tpr <= RMSI_REG_MAXT / 2 && s->rows < 16LL * s->sms && rmsi_nv_for(s, (int)tpr) == 2)
        return 2; /* few rows: two a CTA (S4-4: 1024x4096 13.43 us, one 14.3) */
    if (tpr >= solo)
        return 1;
    if (stage) /* staged: CTAs of 64 threads (S4-3: 65536x2048 0.5% faster than 128) */
        return tpr >= 2 * RMSI_LADDER_WARP ? 1 : 2 * RMSI_LADDER_WARP / tpr;
    return 128 / tpr > 32 ? 32 : 128 / tpr;
}

/* Backward: row staging (stage = 1) for every register backward of 2 or 4
 * vectors a thread: first or within 0.2% of first at all ten shapes searched
 * in session 4 (S4-3, S4-4; 10-29% faster at 4 vectors, up to 7% at 2). One
 * vector a thread (narrow rows) keeps the register prefetch.
 * Forward: at 4 vectors without fp8 output the weights load with the row
 * (stage = 1), as they do at 1 and 2 vectors: faster at all eight 4-vector
 * shapes of S6-2 (rmsnorm-bench, pinned stage=0 / stage=1 alternated twice:
 * 4096x4096 19.36 -> 18.43 us, 1024x8192 12.28 -> 10.92, 16384x2048 35.44
 * -> 33.75, 32768x8192 260.3 -> 258.3; fused add 0.1-1.4%) although 64
 * registers leave 1024 threads an SM where 40 left 1536: a row's second
 * memory latency cost more than the bytes in flight it bought.
 * Session 12 had an exception, stage 0 for 16-bit rows of 640+ vectors that
 * are not a power of two at 64+ rows an SM (S12-4: 65536x5120 325.4 ->
 * 319.3 us, 16384x7168 120.51 -> 114.61); the straight-line bodies of
 * session 14 turned it around at 5120 and 6144 columns (S15-2, S15-3,
 * rmsnorm-bench, stage=1 pinned against the ladder, alternated twice:
 * 16384x5120 81.7 -> 80.4, 32768x5120 161.1 -> 158.4, 65536x5120 320.1 ->
 * 314.3, 16384x6144 97.7 -> 96.8, 32768x6144 193.1 -> 191.0; 4096x7168 and
 * 8192x5120 equal), not at 7168 (16384x7168 113.7 -> 114.6 in S15-3, 113.8
 * -> 115.1 in S15-4): the exception now starts above 768 vectors. */
static size_t rmsi_bwd_smem(const rmsi_shape *s, const rmsi_config *c);
static int rmsi_stage_for(const rmsi_shape *s, const rmsi_config *c)
{
    if (s->op == RMSI_OP_FWD) {
        if (c->path != RMSI_PATH_REG || c->nv != 4 || s->quant != RMSI_Q_NONE)
            return 0;
        /* a row split over a cluster, 4 vectors: 1 for the plain forward
         * since session 31 (rmsi_fwd_cluster; the rule of session 23 had 0,
         * and a fused add's clusters were measured at 0 only); rows wider
         * than 8192 vectors only while the clusters hold fewer than 65536
         * threads (S32-2, rmsnorm-bench, staged / not, us: 8x131072 4.74 /
         * 5.21, 16x131072 8.22 / 6.69, 16x98304 5.35 / 5.64, 32x81920 8.33 /
         * 6.95; but 24x98304 5.99 / 6.89 and 48x98304 10.37 / 11.13 too) */
        if (c->cl > 1)
            return !s->res && (rmsi_nvec(s) <= 8192 || (int64_t)c->cl * c->tpr * s->rows < 65536);
        const int64_t nvec = rmsi_nvec(s);
        return !(s->esz == 2 && !s->res && s->rows >= 64LL * s->sms && nvec > 768 && !rmsi_is_pow2(nvec));
    }
    rmsi_config st = *c;
    st.stage = 1;
    return s->op != RMSI_OP_FWD && c->path == RMSI_PATH_REG && c->nv >= 2 && rmsi_bwd_smem(s, &st) <= rmsi_smem_cap(s);
}

int64_t rmsi_bwd_partial_cap(int64_t rows, int sms)
{
    int64_t r32 = rmsi_cdiv(rows > 0 ? rows : 1, 32) * 32;
    int64_t cap = rows / 32 > 4LL * sms ? rows / 32 : 4LL * sms;
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

/* Backward, 16-bit rows of 1025-2048 vectors (up to 16384 bf16 columns)
 * without a residual gradient, from a row an SM: the register path reaches
 * them (4 vectors of up to 512 threads, staged; clusters of 2 under 31 rows
 * an SM), where the multi-pass kernel had them. S30-6, bench/gpu_search.py
 * over rmsnorm-bench's 16384-column cells: the multi-pass kernel 1.27-1.77x
 * slower from 256 rows, and rmsnorm-bench 32768x16384 1535.7 -> 868.5 us,
 * 65536x16384 3029 -> 1725 pinned. S30-7, rmsnorm-bench, this rule against
 * the multi-pass config pinned, alternated twice, us: 132x16384 13.95 /
 * 14.14 -> 13.57 / 13.58, 256x16384 19.75 / 19.89 -> 17.16 / 17.18,
 * 1024x16384 57.5 -> 40.4, 4096x16384 200.8 -> 122.2, 16384x16384 763.8 ->
 * 442.8, 1024x10240 36.0 -> 30.7, 8192x10240 235.5 -> 173.5, 1024x12288
 * 41.7 -> 33.5, 8192x12288 272.0 -> 195.5; pinned cl=1 lost under 31 rows
 * an SM (132x16384 16.80, 1024x16384 42.27) and cl=2 above it (16384x16384
 * 448.3), cache=2 within 0.3%. Under a row an SM the multi-pass kernel
 * stays (the search's best at 1 and 32 rows). A residual gradient (a third
 * staged row, more shared memory) and devices whose shared memory does not
 * hold the staged row were not measured; the last fall back to it below.
 * fp32 rows of 1025-2048 vectors (4100-8192 columns) take the same path from
 * 2.5 rows an SM (session 51, on an H100; the first backward search in fp32,
 * S51-2, had the multi-pass kernel 9-42% behind the register path at every
 * such cell from 1024 rows). S51-3..S51-5, rmsnorm-bench, this rule against
 * HEAD's plugin, alternated 2-3 times, us: 65536x8192 3092 -> 2210,
 * 16384x8192 764 -> 559, 4096x8192 192.0 -> 147.0, 1024x8192 51.2 -> 41.9,
 * 396x8192 23.7 -> 21.5, 330x8192 21.4 -> 19.7; 65536x5120 1518 -> 1395,
 * 4096x5120 101.2 -> 94.0, 1024x5120 31.1 -> 28.3, 330x5120 15.1 -> 13.9;
 * 32768x6144 970 -> 820, 396x6144 18.2 -> 16.9, 1024x4224 27.0 -> 24.4,
 * 396x4224 14.4 -> 13.2. At 2 rows an SM and under, the multi-pass kernel
 * was as fast or faster: 264x4224 10.36 against 10.80, 256x5120 11.42
 * against 11.93, 264x6144 13.01 against 13.16, 132x8192 10.92 against
 * 11.13 (264x8192 16.23 against 15.94). The search's other knobs, pinned
 * on the rule's config, were no steady gain: cache=1 within 1%; cache=1
 * with stage=0 1.4-2.9% faster at 4096-65536 rows of 5120 and 8192 columns
 * and at 16384x4224, but 1.6-3.6% slower at 4096x4224, 4096x6144 and
 * 16384x6144 and 4-14% slower at 1024 rows and under. On the H200 (S52-7,
 * this plugin against 1a5bc2a's, alternated twice, us): 330x8192 17.53 ->
 * 16.68, 1024x8192 39.97 -> 33.40, 4096x8192 139.0 -> 101.2, 16384x8192
 * 546.0 -> 379.7, 330x5120 13.16 -> 12.24, 4096x5120 82.98 -> 65.49,
 * 16384x5120 306.6 -> 254.0. */
static int rmsi_bwd_wide(const rmsi_shape *s)
{
    if (s->op != RMSI_OP_BWD || s->res)
        return 0;
    return s->esz == 2 ? s->rows >= s->sms : 2 * s->rows >= 5LL * s->sms;
}

/* Rule 2's limit: the widest row the register path takes. */
static int64_t rmsi_reg_nvec_max(const rmsi_shape *s)
{
    return s->op == RMSI_OP_FWD || rmsi_bwd_wide(s) ? 2048 : 1024;
}

static size_t rmsi_bwd_smem(const rmsi_shape *s, const rmsi_config *c)
{
    return rmsi_bwd_reg_smem(c->tpr, c->rpc, c->nv, s->esz, 1, c->stage, s->res); /* CUDA stages weff */
}

/* Backward, 512 vectors of 16-bit elements (4096 columns) at 10 to 16 rows
 * an SM: 128 threads x 4 vectors, one row a CTA, clusters of 2, where the
 * rule below would give 256 x 2 and two rows a CTA. S10-5 (pins) and S10-6
 * (ladder against 4bc8bf0's), rmsnorm-bench, alternated twice, bf16 / f16:
 * 2048x4096 24.5 / 24.2 -> 22.6 us, 1536x4096 19.7 / 19.5 -> 18.9; but
 * 1056x4096 (8 an SM) 15.2 / 15.0 -> 15.2 (0.4-1.3% slower) and 1024x4096
 * even, so the boundary, 10 an SM, is between measured points. 128 x 4 lost
 * at 512 and 256 rows (2.7 and 2.2 us), at 4096 rows (2 us; the rule above
 * takes 16 an SM and more), at 3072 columns (384 vectors: a quarter of the
 * 4-vector slots idle, 1-1.6 us), and without clusters (0.7-1.6 us). fp32
 * rows of 512 vectors (2048 columns) were not measured. Since S19 bf16 rows
 * without a residual gradient take rmsi_bwd_lean_mid's config instead where
 * clusters exist. */
static int rmsi_bwd_mid512(const rmsi_shape *s)
{
    return s->op == RMSI_OP_BWD && s->esz == 2 && rmsi_nvec(s) == 512 && s->rows >= 10LL * s->sms &&
           s->rows < 16LL * s->sms;
}

/* An H100-class device: under 28 GB/s of HBM an SM (the H100 SXM's 25; the
 * H200's about 37), where the rules measured on H100s apply. A driver that
 * reports no bandwidth (hbm_sm 0) gets the H200's rules. */
static int rmsi_slow_hbm_dev(const rmsi_shape *s)
{
    return s->hbm_sm > 0 && s->hbm_sm < 28;
}

/* Backward, bf16 rows of 256, 512, 640 or 1024 vectors without a residual
 * gradient (with one, see below), from 62 rows an SM (124 at 640), on a
 * device with less HBM bandwidth an SM than the H200 the lean rules below
 * were measured on (under 28 GB/s an SM:
 * the H100 SXM's 25; the H200's about 37, six 1024-bit HBM3e stacks at 3201
 * MHz, not read from its driver yet): the 80-register staged kernel without
 * the lean rules, 2 vectors a thread (4 at 1024 vectors, 256 threads), at
 * every such row count. What the lean kernel buys on the H200, more CTAs an
 * SM and so more bytes in flight, an H100 does not need, and there it lost.
 * S47-3 on an H100 (rmsnorm-bench, pinned against the ladder, alternated
 * twice, us): 16384x2048 75.1 -> 71.9, 32768x2048 149.0 -> 137.2, 65536x2048
 * 290.9 -> 274.3 (the lean bit alone), 8192x4096 72.8 -> 71.7, 16384x4096
 * 149.9 -> 136.7, 32768x4096 291.0 -> 267.7, 65536x4096 566.5 -> 536.2 (2
 * vectors for 4), 16384x5120 183.3 -> 172.7, 32768x5120 357.7 -> 338.6,
 * 65536x5120 693.5 -> 680.1, 8192x8192 150.5 -> 145.4, 16384x8192 290.4 ->
 * 283.9, 32768x8192 566.9 -> 555.1; 8192x2048 level (39.2 against 39.3),
 * 65536x8192 unchanged (its 4-vector config). S47-4, another H100, the rule
 * against the old ladder (plugin against plugin, alternated twice) agreed:
 * 1.02-1.11x at those cells, and 8192x5120 came out 1.1% slower, so rows of
 * 640 vectors wait for 124 rows an SM. At 31 rows an SM the lean rules
 * still won on the H100 (4096x2048 22.8 against 23.7, 4096x5120 47.3 against
 * 48.7, 4096x8192 74.3 against 75.0), so they stay there. The bandwidth
 * comes from the memory clock and bus width the driver reports; where it
 * reports none (hbm_sm 0) the H200's rules apply.
 * With a residual gradient (a third 16-bit stream) only rows of 640 vectors
 * (5120 columns) move: from 16 rows an SM, where the ladder gives 4 vectors
 * of 160 threads, 2 of 320. S48-3 on an H100 (rmsnorm-bench, `tpr=320`
 * pinned against the ladder, alternated twice, us): 4096x5120 65.05 ->
 * 62.53, 8192x5120 119.78 -> 116.43, 16384x5120 230.61 -> 226.02, 32768x5120
 * 454.41 -> 447.06, 65536x5120 902.32 -> 896.91. The other widths' pins (2
 * vectors at 2048 and 8192 columns, 4096 columns' persistent grid at 2 CTAs
 * an SM, the lean kernel) were within 2% of the ladder but at 65536x2048
 * (1.8%) and 4096x8192 (the lean kernel, 2.7%), and 2 vectors at 8192
 * columns lost 1.5-2.7%; those keep the ladder's configs. S48-4, the rule
 * against HEAD's plugin (plugin against plugin, alternated twice, us):
 * 2112x5120 37.86 -> 35.68, 4096x5120 64.60 -> 61.77, 8192x5120 118.52 ->
 * 115.54, 16384x5120 227.48 -> 223.83, 32768x5120 447.27 -> 442.41,
 * 65536x5120 887.73 -> 885.80; residual rows of 4096 and 8192 columns and
 * the plain backward at 16384x5120 unchanged (within 0.1%).
 * fp16 (no lean kernel to leave) takes 2 vectors where the many-rows rule
 * gives it 4, at 256, 512 and 640 vectors without a residual gradient, from
 * 124 rows an SM. S50-1, S50-2 on an H100 (rmsnorm-bench, `tpr` pinned at
 * 2 vectors against the ladder, alternated twice, us): 16384x4096 151.1 ->
 * 138.4, 32768x4096 290.2 -> 269.1, 65536x4096 584.1 -> 563.5, 16384x5120
 * 182.3 -> 173.0, 32768x5120 352.1 -> 337.6, 65536x5120 708.8 -> 683.1,
 * 65536x2048 298.3 -> 287.1; below 124 rows an SM 4096x5120 49.5 -> 48.6
 * and 8192x5120 90.1 -> 89.3 (too close to call), and 8192 columns lost
 * (4096x8192 75.5 -> 81.8, 65536x8192 1144 -> 1205). The other fp16 cells
 * of those widths take 2 vectors already. S51-1, this rule against HEAD's
 * plugin (alternated twice, us): 16384x4096 148.7 -> 136.9, 32768x4096
 * 289.9 -> 268.4, 65536x4096 571.0 -> 536.8, 16384x5120 176.4 -> 172.0,
 * 32768x5120 352.4 -> 336.7, 65536x5120 695.5 -> 670.2, 65536x2048 293.4
 * -> 283.9; 8192x5120, 16384x8192 and bf16 unchanged (within 0.2%). At
 * 4096 columns the rule takes the session 9 cluster rule's cl=1 (S50's
 * pins had kept the 4-vector config's cl=2, 0.3-1.8% slower here). */
static int rmsi_bwd_slow_hbm(const rmsi_shape *s)
{
    const int64_t nvec = rmsi_nvec(s);
    if (s->op != RMSI_OP_BWD || s->esz != 2 || !rmsi_slow_hbm_dev(s))
        return 0;
    if (s->f16)
        return !s->res && (nvec == 256 || nvec == 512 || nvec == 640) && s->rows >= 124LL * s->sms;
    if (s->res)
        return nvec == 640 && s->rows >= 16LL * s->sms;
    if (nvec == 640) /* 8192x5120: 3% faster in S47-3, 1.1% slower in S47-4 */
        return s->rows >= 124LL * s->sms;
    return (nvec == 256 || nvec == 512 || nvec == 1024) && s->rows >= 62LL * s->sms;
}

/* Backward, 16-bit rows of 1024 vectors (8192 columns) without a residual
 * gradient, from 124 rows an SM, on an H100-class device (under 28 GB/s of
 * HBM an SM, as rmsi_bwd_slow_hbm): two rows a CTA of 256 threads x 4
 * vectors (rmsi_rpc_for), and so (the cluster rule for rpc > 1) clusters of
 * 2, where the many-rows rule gives one row a CTA. Twice the threads a CTA halve the dw
 * partial rows the cap allows per row, and the second row's loads are in
 * flight while the first reduces. Found by S51-2's fp16 search; on H100s,
 * rmsnorm-bench, alternated twice, us:
 * - fp16, S52-1, ladder / rpc=2 / rpc=2,cl=2 pinned: 16384x8192 283.9 /
 *   275.1 / 273.1, 32768x8192 559.1 / 542.7 / 537.6, 65536x8192 1116.7 /
 *   1088.4 / 1082.6; at 62 rows an SM it lost (8192x8192 141.3 / 142.3 /
 *   143.2). S52-2, this rule against d773912's plugin: 16384x8192 283.7 ->
 *   272.9, 32768x8192 556.3 -> 535.1, 65536x8192 1112.9 -> 1074.9;
 *   12288x8192 (93 rows an SM) unchanged, 215.7 / 215.6.
 * - bf16 (the same kernel, 4 vectors, on an H100), S52-2, rpc=2 pinned
 *   (clusters not pinned, so 1): 16384x8192 284.8 -> 276.2, 32768x8192
 *   556.8 -> 541.0, 65536x8192 1099.5 -> 1079.1. S52-3, this rule against
 *   d773912's plugin, alternated three times: 16384x8192 285.8 -> 272.7,
 *   32768x8192 559.9 -> 549.7, 65536x8192 1120.3 -> 1082.3; 12288x8192
 *   level (216.6 / 216.5).
 * Measured and not taken (S52-2, fp16): 6144 columns (192 x 4), 1.8-3.2%
 * slower at 16384 and 65536 rows; a residual gradient at 8192 columns,
 * level (0.2-0.4% slower). Not measured: the H200 (whose rules stay). */
static int rmsi_bwd_pairs_slow_hbm(const rmsi_shape *s)
{
    return s->op == RMSI_OP_BWD && s->esz == 2 && !s->res && rmsi_slow_hbm_dev(s) &&
           rmsi_nvec(s) == 1024 && s->rows >= 124LL * s->sms;
}

/* The fp32 backward rules below (rmsi_bwd_f32_512, rmsi_bwd_f32_few) with a
 * residual gradient: on H100-class HBM (under 28 GB/s an SM, as
 * rmsi_bwd_slow_hbm) only, where they were measured. S53-4 on an H100
 * (rmsnorm-bench backward-res, each rule's config pinned against the ladder,
 * alternated twice, us; each pin resolves to the rule's config exactly):
 * 2048x2048 28.88 -> 27.32 (the lean config), 16384x2048 184.4 -> 181.7
 * (256 x 2, clusters of 2), 1024x4096 28.22 -> 27.24 and 4096x4096 94.0 ->
 * 92.9 (512 x 2). The H200 was not measured with a residual gradient and
 * keeps the ladder's configs there. */
static int rmsi_bwd_f32_res_ok(const rmsi_shape *s)
{
    return !s->res || rmsi_slow_hbm_dev(s);
}

/* Backward, fp32 rows of 512 vectors (2048 columns) without a residual
 * gradient (with one: rmsi_bwd_f32_res_ok), from 64 rows an SM, where clusters exist (sm_90+): 2 vectors
 * of 256 threads with clusters of 2, where the many-rows rule gives 4
 * vectors of 128 threads (below 64 rows an SM the ladder has 256 x 2
 * already, without clusters). Found by S51-2's fp32
 * search; S52-1 and S52-2 on H100s (rmsnorm-bench, `tpr=256` pinned, which
 * keeps the ladder's clusters, against the ladder, alternated twice, us):
 * 12288x2048 110.4 -> 103.8, 16384x2048 145.2 -> 136.8 and 144.7 -> 136.5,
 * 20480x2048 179.0 -> 176.7, 24576x2048 213.8 -> 211.0, 32768x2048 283.6 ->
 * 281.2; S52-3, this rule against d773912's plugin, alternated three
 * times: 9216x2048 84.96 -> 79.55, 12288x2048 110.95 -> 103.90, 16384x2048
 * 145.08 -> 136.73, 32768x2048 282.88 -> 280.92 (8192x2048, below the rule,
 * level); `tpr=256` pinned above 256 rows an SM: 40000x2048 342.7 -> 339.9,
 * 65536x2048 555.8 -> 550.8 (S52-4, against the plugin: 557.7 -> 549.3).
 * On the H200 (S52-9, this rule against d773912's plugin, alternated
 * twice): 16384x2048 107.86 -> 100.74; other row counts there were not
 * measured. Devices without clusters were not measured and keep the
 * ladder's config. */
static int rmsi_bwd_f32_512(const rmsi_shape *s)
{
    return s->op == RMSI_OP_BWD && s->esz == 4 && rmsi_bwd_f32_res_ok(s) && s->cluster && rmsi_nvec(s) == 512 &&
           s->rows >= 64LL * s->sms;
}

/* A backward rule's register config m (its tpr, rpc, cl, cache and lean
 * set) as the staged 2-vector kernel, 16-byte, CTAs covering the rows:
 * taken into c where tpr gives 2 vectors a thread and the config is valid
 * for the shape (the device's shared memory, clusters), else c stays. */
static void rmsi_bwd_take_staged2(const rmsi_shape *s, rmsi_config *c, rmsi_config *m)
{
    m->vec = 16;
    m->nv = rmsi_nv_for(s, m->tpr);
    m->cps = 0;
    m->stage = 1;
    if (m->nv == 2 && rmsi_config_valid(s, m))
        *c = *m;
}

/* Backward, fp32 rows without a residual gradient (with one:
 * rmsi_bwd_f32_res_ok) under 32 rows an SM where
 * clusters exist (sm_90+), S51-2's fp32 search's leads (found on an H100)
 * pinned against the ladder in S52-3 on an H100 (rmsnorm-bench, alternated
 * three times, us):
 * - 1024 vectors (4096 columns), 1.75 to 32 rows an SM: 2 vectors of 512
 *   threads (`tpr=512`), not 4 of 256: 256x4096 10.19 -> 9.70, 512x4096
 *   14.27 -> 13.46, 1024x4096 23.24 -> 22.03; 128 rows level (6.99 ->
 *   6.98). The searched config (lean, cps=2, cache=3) was 8.7% faster at 256
 *   rows but behind `tpr=512` at 512 and 1024, so this takes the plain one.
 *   S52-4, the same pin further up: 1320x4096 27.50 -> 26.39, 2048x4096
 *   39.12 -> 38.17, 4096x4096 71.93 -> 71.35.
 * - 512 vectors (2048 columns), 7.75 to 16 rows an SM: the lean kernel, one
 *   row a CTA, cache=2 (the searched config), where the ladder gives two
 *   rows a CTA at cache=1: 1024x2048 14.43 -> 13.19, 2048x2048 24.42 ->
 *   21.78; 512 rows lost (9.66 -> 10.00), so the rule starts at 7.75 an SM.
 *   S52-4, the lean config pinned above: 3072x2048 29.29 -> 30.19,
 *   4096x2048 37.68 -> 38.50, 8192x2048 71.21 -> 73.14, so it ends at 16.
 * S52-4, these rules against d773912's plugin (alternated three times, us):
 * 256x4096 10.25 -> 9.69, 512x4096 14.28 -> 13.53, 1024x4096 23.35 ->
 * 22.05, 1024x2048 14.49 -> 13.23, 2048x2048 24.46 -> 21.80; 128x4096 and
 * 512x2048 (outside them) level. On the H200 (S52-9, against d773912's
 * plugin, alternated twice): 512x4096 11.92 -> 11.35, 1024x4096 19.35 ->
 * 17.67, 1024x2048 12.85 -> 11.25, 2048x2048 21.45 -> 17.35. Not measured:
 * devices without clusters (which keep the ladder's configs; the
 * 2048-column config needs clusters anyway). */
static void rmsi_bwd_f32_few(const rmsi_shape *s, rmsi_config *c)
{
    const int64_t nvec = rmsi_nvec(s);
    if (s->op != RMSI_OP_BWD || s->esz != 4 || !rmsi_bwd_f32_res_ok(s) || !s->cluster || c->path != RMSI_PATH_REG)
        return;
    rmsi_config m = *c;
    if (nvec == 1024 && 4 * s->rows >= 7LL * s->sms && s->rows < 32LL * s->sms) {
        m.tpr = 512;
        m.rpc = 1;
        m.cl = 1;
        m.cache = 0;
        m.lean = 0;
    } else if (nvec == 512 && 4 * s->rows >= 31LL * s->sms && s->rows < 16LL * s->sms) {
        m.tpr = 256;
        m.rpc = 1;
        m.cl = 2;
        m.cache = 2;
        m.lean = 1;
    } else {
        return;
    }
    rmsi_bwd_take_staged2(s, c, &m);
}

/* Backward, bf16 rows of 256 or 512 vectors (2048 or 4096 columns), no
 * residual gradient, at mid row counts: the lean staged kernel (64
 * registers, 4 CTAs of 256 threads an SM) with clusters of 2, whose dw sum
 * has been st.async pushes since S18. The rules it replaces there (one
 * vector a thread under 10 rows an SM, 128 x 4 from 10 to 16, 256 x 2 at 80
 * registers to 31; 128 x 2 at 2048 columns) were measured before the push
 * sum; `rmsnorm-bench --config-search` found these configs 6.7% and 10.5%
 * faster at 4096x2048 and 2048x4096 (S19-7), and pinned against the ladder,
 * alternated twice (S19-8, S19-9, us):
 * - 512 vectors, 256 x 2, one row a CTA: 1024x4096 13.46 -> 13.10, 1320x4096
 *   16.40 -> 14.70, 1536x4096 18.27 -> 16.26, 2048x4096 21.43 -> 19.42,
 *   3072x4096 27.35 -> 25.75 (4096 rows, 31 an SM, had it already);
 * - 256 vectors, 128 x 2, two rows a CTA (cache=3 as searched; the cache
 *   knob moved 4096x2048 by 0.05 us at most in S19-6): 1320x2048 10.65 ->
 *   10.32, 2048x2048 13.72 -> 12.52, 4096x2048 19.96 -> 18.72, 8192x2048
 *   30.70 -> 30.58 (48+ rows an SM keep one row a CTA: 16384x2048 53.83 ->
 *   53.98 pinned); 1024x2048 lost, 8.52 -> 10.19 (its one-vector rule stays).
 * Not measured, unchanged: fp16 (no lean kernel), fp32, a residual gradient,
 * other widths, under 7.75 rows an SM at 4096 columns.
 * Wider bf16 rows since S20 (S20-4, S20-5): the same lean kernel at two
 * vectors a thread where the ladder gave 4 vectors at 80 or 128 registers.
 * `rmsnorm-bench --config-search` (S20-4) found it 5-13% faster than the
 * ladder at 1024x8192, 4096x8192, 1024x5120 and 4096x5120; pinned against
 * the ladder (S20-5, one alternation; us):
 * - 1024 vectors (8192 columns), 512 x 2, clusters of 2: 1024x8192 24.09 ->
 *   21.46, 2048x8192 36.33 -> 33.86, 4096x8192 59.95 -> 56.94, 8192x8192
 *   106.99 -> 103.25, 16384x8192 200.88 -> 196.25;
 * - 640 vectors (5120 columns), 320 x 2, no cluster: 2048x5120 25.01 ->
 *   24.02, 4096x5120 40.94 -> 38.62, 8192x5120 70.20 -> 67.77, 16384x5120
 *   129.44 -> 126.35; 1024x5120 lost at 320 x 2 (15.84 -> 16.45, and 15.82 ->
 *   16.9 in S16-2), and the search found 512 x 2 there 6.2% faster than the
 *   ladder (a third of its threads hold one vector), the config taken under
 *   15.5 rows an SM (searched only, not pinned).
 * Up to 256 rows an SM since S21 (S21-2, pinned against the ladder's
 * 4-vector kernel, alternated twice, us): 24576x8192 294.3 -> 289.7,
 * 32768x8192 388.0 -> 384.2, 24576x5120 187.5 -> 184.4, 32768x5120 245.9 ->
 * 243.8. 65536 rows keep the 4-vector kernel: pinned once (S21-1), 8192
 * columns were no faster (764.0 -> 763.3) and 5120 slower (482.0 -> 484.0).
 * fp16, fp32, a residual gradient and devices without clusters keep the
 * ladder's config (the H200 is the only one measured; `cluster` stands for
 * sm_90 and later, also at 5120 columns, which take no cluster). */
static void rmsi_bwd_lean_mid(const rmsi_shape *s, rmsi_config *c)
{
    const int64_t nvec = rmsi_nvec(s);
    rmsi_config m = *c;
    m.cl = 2;
    if (s->op != RMSI_OP_BWD || s->esz != 2 || s->f16 || s->res || !s->cluster || c->path != RMSI_PATH_REG ||
        rmsi_bwd_slow_hbm(s))
        return;
    if (nvec == 512 && 4 * s->rows >= 31LL * s->sms && s->rows < 31LL * s->sms) {
        m.tpr = 256;
        m.rpc = 1;
        m.cache = 1;
    } else if (nvec == 256 && s->rows >= 10LL * s->sms && s->rows < 48LL * s->sms) {
        m.tpr = 128;
        m.rpc = 2;
        m.cache = 3;
    } else if (nvec == 1024 && 4 * s->rows >= 31LL * s->sms && s->rows < 256LL * s->sms) {
        m.tpr = 512;
        m.rpc = 1;
        m.cache = 0;
    } else if (nvec == 640 && 4 * s->rows >= 31LL * s->sms && s->rows < 256LL * s->sms) {
        const int few = 2 * s->rows < 31LL * s->sms; /* the searched config */
        m.tpr = few ? 512 : 320;
        m.rpc = 1;
        m.cache = few ? 1 : 0;
        m.cl = 1;
    } else {
        return;
    }
    m.lean = 1;
    rmsi_bwd_take_staged2(s, c, &m);
}

/* Backward, many bf16 rows of 256 or 512 vectors (2048 or 4096 columns)
 * without a residual gradient, where clusters exist: 2 vectors a thread,
 * which the lean rule then runs in the 64-register staged kernel (with
 * clusters of 2), instead of 4 vectors. S30-2: the config search put that
 * kernel 2.7-4.4% ahead of the 4-vector one at 16384x4096, 32768x4096 and
 * 65536x2048; S30-3, rmsnorm-bench, this rule against the old config
 * pinned, alternated twice, us: 8448x4096 59.1 -> 55.3, 16384x4096 104.4 ->
 * 100.3, 24576x4096 151.0 -> 147.1, 32768x4096 198.4 -> 194.8, 33792x2048
 * 106.6 -> 102.4, 65536x2048 198.0 -> 193.3. 65536x4096 (496 rows an SM)
 * was level in the search and keeps 4 vectors, as the 1024-vector rows
 * above 256 an SM do (rmsi_bwd_lean_mid). */
static int rmsi_bwd_lean_many(const rmsi_shape *s)
{
    const int64_t nvec = rmsi_nvec(s);
    if (s->op != RMSI_OP_BWD || s->esz != 2 || s->f16 || s->res || !s->cluster)
        return 0;
    return nvec == 256 || (nvec == 512 && s->rows < 256LL * s->sms);
}

/* The rows the wide-row rules below (clusters, the lean kernel) take:
 * 16-bit rows, and since session 32 fp32 rows wider than one CTA's
 * registers without fp8 output. S32-3 (rmsnorm-bench, pinned against the
 * multi-pass kernel's 256 threads that fp32 rows had at every row count,
 * us): forward 1x65536 36.62 -> 3.55 (clusters), 132x65536 61.12 -> 22.34
 * (lean), 4096x16384 193.38 -> 129.29 (lean, cache = 1; 131.43 at 5),
 * 2048x32768 217.06 -> 144.58 (cache = 5; 152.83 at 1), 512x131072 211.84
 * -> 200.41, 1x16384 9.91 -> 2.62 (clusters, 2 vectors), 32x32768 21.96 ->
 * 5.55 (4, staged); fused add 1x32768 22.26 -> 3.29, 32x32768 24.59 ->
 * 7.81 (4 vectors), 132x32768 36.61 -> 19.20 (lean), 4096x16384 326.29 ->
 * 256.53. The 16-bit rules' picks were the best pin at each, or within 2%
 * (1x32768: 2 vectors 3.01 against 4 staged 2.95). fp32 rows were not
 * measured at the 16-bit rules' other bounds. */
static int rmsi_fwd_wide_ok(const rmsi_shape *s)
{
    return s->esz == 2 || (s->esz == 4 && s->quant == RMSI_Q_NONE && rmsi_nvec(s) > rmsi_reg_nvec_max(s));
}

/* Whether a forward row splits over a cluster of cl CTAs: the device has
 * clusters, and each CTA gets a whole number of vectors (and of 1x128
 * blocks for the block quantiser). rmsi_config_valid holds a forward
 * cluster config to it; the rules below ask it before they pick one. */
static int rmsi_fwd_splits(const rmsi_shape *s, int cl)
{
    return s->cluster && rmsi_nvec(s) % cl == 0 && (s->quant != RMSI_Q_BLOCK || s->cols / cl % 128 == 0);
}

/* Rows of 8193 to 16384 16-bit vectors (65544-131072 bf16 columns) that
 * split in 8, under 3/8 of a row an SM (a fused add alone: 3/16): clusters
 * of 8 CTAs of 4 vectors (rmsi_fwd_cluster), staged while the clusters
 * hold fewer than 65536 threads (rmsi_stage_for). Above those rows the
 * lean kernel (rmsi_fwd_lean_few), or, for per-token and per-tensor fp8,
 * the multi-pass kernel at 1024 threads. Until session 32 these rows had
 * the multi-pass kernel at 256-512 threads, one CTA a row. S32-1, S32-2
 * (rmsnorm-bench, pinned against that ladder, alternated twice, us):
 * - plain, 131072 columns: 1 row 27.70 -> 3.84, 8 rows 34.99 -> 4.74, 32
 *   35.91 -> 11.13, 48 36.81 -> 13.11 (lean 14.31), 64 37.87 -> 15.95
 *   (lean; clusters 17.42); 98304: 1 21.49 -> 3.54, 48 28.44 -> 10.37; 81920:
 *   1 18.51 -> 3.43, 48 24.00 -> 9.54 (lean 9.67); fp16 the same;
 * - fused add, 131072: 1 44.37 -> 5.71, 24 48.89 -> 14.07 (lean 16.97), 32
 *   49.58 -> 17.94 (lean; clusters 19.48);
 * - add + block fp8 with y: 1 142.70 -> 7.05, 48 177.41 -> 31.41 (lean
 *   33.50), 64 188.07 -> 36.91 (lean); block fp8: 1 180.79 -> 5.59, 64
 *   202.18 -> 23.97 (lean); per-token: 1 86.42 -> 7.66, 48 104.63 -> 31.69,
 *   64 105.76 -> 39.42 (multi 1024; clusters 39.52); per-tensor 1 60.67 ->
 *   6.12; add + per-token 1 108.07 -> 8.62 (at 64 rows the clusters were
 *   18% ahead of the 1024 threads they get).
 * Its callers have checked rmsi_fwd_wide_ok. */
static int rmsi_fwd_cluster_wide(const rmsi_shape *s)
{
    const int64_t nvec = rmsi_nvec(s);
    const int fused = s->res && s->quant == RMSI_Q_NONE;
    return rmsi_fwd_splits(s, 8) && nvec > 8192 && nvec <= 8 * rmsi_reg_nvec_max(s) &&
           (fused ? 16 : 8) * s->rows <= 3LL * s->sms;
}

/* Rows wider than one CTA's registers under 2 rows an SM that take the
 * lean kernel rather than clusters or the multi-pass kernel (a residual
 * without h_out was not measured; per-token and per-tensor fp8, which have
 * no lean kernel, rmsi_fwd_lean_rule turns away after this):
 * - plain rows of up to 8192 vectors, from 2048 vectors an SM (session 31);
 * - wider rows, where rmsi_fwd_cluster_wide does not split them (every
 *   row count at 262144 columns: S32-1, S32-2, us, forward 1x262144 54.05
 *   -> 22.61, 132x262144 92.60 -> 50.85, 263x262144 119.89 -> 104.60;
 *   fused add 1x262144 88.09 -> 28.88, 263 rows 182.13 -> 171.00; add +
 *   block fp8 with y 1 row 282.60 -> 51.89, 132 rows 395.62 -> 118.12;
 *   block fp8 1 row 362.95 -> 36.46);
 * - the fusions of 2049-8192 vectors above the clusters' rows (rule 3): a
 *   fused add above a quarter of a row an SM, block fp8 above a half,
 *   where they had the clusters' 4 vectors or the multi-pass kernel
 *   (S32-1, S32-2, us: fused add 48x32768 7.81 -> 6.89, 64x65536 15.41 ->
 *   12.41, 66x24576 7.59 -> 6.44, 100x32768 15.43 -> 9.35, 132x65536 31.89
 *   -> 19.40; add + block fp8 with y 80x32768 26.58 -> 12.56, 100x65536
 *   55.16 -> 24.33; block fp8 100x32768 22.48 -> 8.28). At 34-40 rows of
 *   32768 columns the two were level (6.26 against 6.32); at 33 rows of
 *   65536 the clusters 15% ahead, and at 66 rows of 32768 with block fp8
 *   17% (9.93 against 11.61), but 12% behind at 66x65536 (22.48 against
 *   19.83).
 * Rows that clusters cannot split (plain rows whose vectors are not a
 * multiple of 4, fusions' of 8, block fp8 whose slices are not whole
 * blocks, devices without clusters) take it at every row count under 2 rows
 * an SM, where they had the multi-pass kernel (not measured at those
 * widths; at every width measured the lean kernel beat the multi-pass one
 * under 2 rows an SM, 1.1-3x). */
static int rmsi_fwd_lean_few(const rmsi_shape *s)
{
    const int64_t nvec = rmsi_nvec(s);
    if (nvec <= rmsi_reg_nvec_max(s) || (s->res && !s->hout))
        return 0;
    if (nvec > 8192)
        return !rmsi_fwd_cluster_wide(s);
    if (!s->res && s->quant == RMSI_Q_NONE)
        return !rmsi_fwd_splits(s, 4) || s->rows * nvec >= 2048LL * s->sms;
    return !rmsi_fwd_splits(s, 8) || (s->quant == RMSI_Q_NONE ? 4 : 2) * s->rows > s->sms;
}

/* Forward rows wider than one CTA's registers (rule 2's nvec > 2048) on
 * devices with clusters, under two rows an SM: the row split over clusters
 * of 8 CTAs. Session 23 had set the fewest CTAs (4 or 8) that leave each at
 * most 1024 vectors, 4 vectors a thread, measured at 4096-8192 rows (S23-1,
 * against the multi-pass path's best pin: 4096x32768 220.8 -> 175.8 us,
 * 8192x32768 429.2 -> 349.5), rows the lean kernel has taken since S24.
 * Few rows want the most CTAs and bytes in flight: 2 vectors a thread where
 * that is at most 256 threads or the clusters fit one wave (8 x rows <= SMs),
 * else 4 with the weights loaded with the row (stage = 1). S31-2,
 * rmsnorm-bench, pinned against the session-23 rule, alternated twice, us:
 * 1x24576 3.71 -> 2.71, 32x24576 4.50 -> 3.61, 64x24576 5.27 -> 4.79,
 * 1x32768 3.83 -> 2.73, 32x32768 4.88 -> 4.01, 64x32768 6.17 -> 5.28,
 * 1x65536 4.01 -> 3.14, 8x65536 4.35 -> 3.51, 32x65536 6.47 -> 5.75 (2
 * vectors of 512 threads there: 7.43; clusters of 4: 2-15% slower than 8).
 * From 2048 vectors an SM (rows x nvec >= 2048 x SMs) the lean kernel
 * instead (rmsi_fwd_lean_rule): 100x24576 6.63 -> 5.57, 132x32768 10.04 ->
 * 7.50, 64x65536 10.25 -> 8.84, 132x65536 16.63 -> 12.45, where the clusters
 * were 1-30% slower than it. Rows of exactly 2048 vectors (16384 bf16
 * columns, the widest one CTA holds) under an eighth of a row an SM take
 * the clusters too, 128 x 2: 1x16384 2.73 -> 2.60, 4x16384 2.80 -> 2.73,
 * 8x16384 2.94 -> 2.80, 16x16384 3.04 -> 3.03; 32 rows lost (3.15 ->
 * 3.22), and so did 12288 columns at 1-16 rows (2.39 -> 2.45-2.57).
 * The fusions and fp8 output (fused add, the three quantisers, add + fp8)
 * take clusters of 8 from 2048 vectors to half a row an SM, where the
 * ladder had one CTA of 512 x 4 (2048 vectors) or the multi-pass kernel
 * (wider). S31-3 pinned both ways, S31-4 this rule against the old configs
 * pinned, alternated twice, us: 1x32768 fused add 12.24 -> 3.06, add +
 * block fp8 with y 23.10 -> 3.49, block fp8 18.92 -> 3.21, per-token 12.70
 * -> 4.19, add + per-token 17.42 -> 4.39, per-tensor 9.91 -> 3.47;
 * 33x32768 1.7-4.6x, 64x32768 (4 vectors) 1.7-3.1x; 1x16384 1.3-1.8x,
 * 33x16384 1.15-1.5x, 64x16384 (fp8 output, clusters of 4) 1.07-1.23x;
 * a fused add of 2048 vectors lost there as 4 x 256 (4.91 -> 5.29) and
 * keeps its CTA; 132 rows lost for all six (6.47 -> 8.75 fused add). S31-5
 * (pinned, alternated twice; fused add, add + block fp8, per-token):
 * 24576 columns 1.7-5.1x at 1-64 rows, 65536 columns 1-64 rows 1.3-10.7x,
 * with 2 and 4 vectors each best somewhere (2 at 64x24576 fused add 6.39
 * against 7.53, 4 at 32x65536 per-token 9.04 against 14.31): the rule
 * takes 4 above a quarter of a row an SM and where the plain rows would.
 * Rows that do not split in 8 (vectors = 4 mod 8: bf16 columns = 32 mod
 * 64) take clusters of 4, plain rows only, with 2 vectors a thread by the
 * same test (session 31 had 4, staged; S32-3, pinned against it,
 * alternated twice, us: 1x24608 3.01 -> 2.82, 33x24608 3.89 -> 3.80,
 * 1x32736 3.11 -> 2.98, 1x16416 2.89 -> 2.67, 32x16416 3.49 -> 3.30; in
 * S32-1/S32-2 2 vectors were also 8-9% faster at 64-80x24608 and 6%
 * slower at 32x32736, where the test gives the other). Rows of 8193-16384
 * vectors: rmsi_fwd_cluster_wide. Not taken: many rows of wide rows (8
 * CTAs of 512 threads at 1024x131072 and of 512 x 8 vectors at 512x262144
 * were 13% and 8% slower than the multi-pass kernel, S23), fusions above
 * a quarter (fused add) or half a row an SM (rmsi_fwd_lean_few;
 * 100-200x32768 per-token within 3% of the multi-pass kernel or slower).
 * 0 where the shape is not one of these or the row does not split evenly
 * (then the lean or the multi-pass path). */
static int rmsi_fwd_cluster(const rmsi_shape *s, rmsi_config *c)
{
    const int64_t nvec = rmsi_nvec(s);
    /* a row that does not split in 8 (cols = 32 mod 64 bf16): clusters of 4 */
    int cl = nvec % 8 ? 4 : 8, nv = 2;
    if (!rmsi_fwd_wide_ok(s) || nvec % 4 != 0)
        return 0;
    /* 2 vectors would mean CTAs of more than 256 threads beyond one wave,
     * or more than a CTA holds (clusters of 4 from 4097 vectors) */
    const int64_t tpr2 = rmsi_tpr_for_nv(nvec / cl, 2, 4);
    const int wide = (tpr2 > 256 && cl * s->rows > s->sms) || tpr2 > RMSI_REG_MAXT;
    if (nvec > 8192) {
        if (!rmsi_fwd_cluster_wide(s))
            return 0;
        nv = 4;
    } else if (!s->res && s->quant == RMSI_Q_NONE) {
        if (nvec <= rmsi_reg_nvec_max(s) && (nvec != 2048 || 8 * s->rows > s->sms))
            return 0;
        if (wide)
            nv = 4;
    } else if (cl != 8) {
        return 0;
    } else {
        /* the fusions and fp8 output: 2048 to 8192 vectors to half a row
         * an SM (a fused add to a quarter: above, rmsi_fwd_lean_few); 2
         * vectors a thread to a quarter of a row an SM where the plain
         * rows would take them, else 4; 2048 vectors above a quarter in
         * clusters of 4 (fp8 output; a fused add alone keeps one CTA) */
        if (nvec < 2048 || 2 * s->rows > s->sms)
            return 0;
        if (nvec == 2048 && 4 * s->rows > s->sms) {
            if (s->quant == RMSI_Q_NONE)
                return 0;
            cl = 4;
        } else if (4 * s->rows > s->sms || wide) {
            nv = 4;
        }
    }
    rmsi_config m = *c;
    m.path = RMSI_PATH_REG;
    m.vec = 16;
    m.cl = cl;
    m.tpr = (int)rmsi_tpr_for_nv(nvec / cl, nv, 4);
    m.rpc = 1;
    m.cps = 0;
    m.cache = 0;
    m.lean = 0;
    m.nv = rmsi_nv_cfg(s, &m);
    m.stage = rmsi_stage_for(s, &m);
    if (!rmsi_config_valid(s, &m))
        return 0;
    *c = m;
    return 1;
}

/* Forward 16-bit rows wider than one CTA's registers (rule 2), without fp8
 * output, from 2 rows an SM: the lean two-pass kernel (forward.cu
 * rmsi_fwd_lean: 32 registers, two CTAs of 1024 threads an SM, one row a
 * CTA, the grid covering the rows), cache = 1, with or without clusters
 * (measured on the H200 only). Session 24 (S24-3, S24-4, rmsnorm-bench,
 * pinned against the ladder of the time, us): forward
 * 4096x32768 179.5 -> 145.1 (the cluster split), 8192x32768 357.6 ->
 * 287.2, 2048x65536 190.0 -> 157.8, 1024x131072 232.7 -> 188.3, 512x262144
 * 234.5 -> 202.0 (multi-pass, 512 threads); fused add 4096x32768 323.1 ->
 * 274.1, 2048x65536 342.6 -> 307.7, 512x262144 353.9 -> 340.6. 1024
 * threads were the fastest pin at each (512: 1-18% slower, 256: slower
 * than the ladder). Where the old kernels were slow: the general multi-pass
 * kernel needs 64 registers (one CTA of 1024 or two of 512 an SM) and loops
 * over rows from a persistent grid; a copy from a persistent grid was 3-7%
 * slower than from a covering one (bench/hbm_sweep.cu, S24-1). Not taken:
 * rows within one CTA's registers (8192x16384: 138.4 at 512 threads
 * against 135.7; 32768x8192: 268.7-451.7 against 255.2; the general form,
 * before rmsi_fwd_lean_plain, session 29, took them), fewer rows than
 * two an SM (a row's one CTA is all the parallelism there; the cluster
 * split keeps them, not measured), fp8 output and fp32 rows (not
 * measured). */
/* rmsi_fwd_lean_quant: the 1x128 block quantiser of 16-bit rows of 512 to
 * 2048 vectors (4096-16384 bf16 columns) without a residual and without y,
 * from 2 rows an SM, takes the lean kernel too: 256 threads (512 above 1536
 * vectors), no L1 hints (cache = 1). S28-1, S28-2 (rmsnorm-bench, pinned
 * against the ladder's register rows, bf16, us; cache = 5 in brackets):
 * 32768x8192 324.9 -> 293.3 (292.2), 4096x8192 44.7 -> 42.7 (43.4),
 * 16384x4096 88.8 -> 86.5 (87.3), 8192x12288 150.2 -> 115.3 (114.8),
 * 32768x6144 253.1 -> 236.7 (236.5), 32768x5120 211.9 -> 207.1 (207.9),
 * 8192x16384 176.1 -> 154.8 at 512 threads (159.0 at 256). Not taken: 256
 * vectors (65536x2048: 175.0 against 214-339), and y written (S28-2, old /
 * new / new / old with the 256-thread rule: 32768x8192 383.4 -> 433.1,
 * 16384x4096 99.1 -> 121.1), where the register path's fused kernel does
 * the y stores the lean one must add to its second pass. Fused adds with
 * block fp8 stay on the register path (S28-2, 8192x12288 274.1 against
 * 259.6 at 512 threads, but 8192x16384 308.6 against 334.9: one run each,
 * no rule). */
/* rmsi_fwd_lean_fused: fused adds that store h, 16-bit rows of 512 to 2048
 * vectors (4096-16384 bf16 columns) in multiples of 512, from 2 rows an SM,
 * take the lean kernel too, at the fewest threads (from 1024 down to 256)
 * that give no thread more than one step of two vectors, cache = 5.
 * Session 25 took 2048 vectors (above: h kept in L1). Session 26's lean
 * kernel (S26-2: the common call specialised, h rounded by the pair
 * instructions) made the narrower rows faster there than on the register
 * path (S26-3, rmsnorm-bench, pinned against the ladder, bf16, us):
 * 32768x8192 513.3 -> 504.4 (512 threads), 16384x8192 257.3 -> 253.3,
 * 4096x8192 67.6 -> 66.3, 65536x4096 519.9 -> 504.5 (256 threads; 512
 * lost 1%), 8192x12288 197.5 -> 190.3 (1024 threads; 512 lost 2%). The
 * plain forward stayed on the register path there: 32768x8192 253.6
 * against 258.4 at 512 threads (cache 4; 281 with cache 1), 16384x8192
 * 128.1 against 130.8 (until rmsi_fwd_lean_plain, session 29). Rows of
 * other widths (5120, 6144 columns, ...) and fp32 were not measured. */
/* rmsi_fwd_lean_plain: the plain forward of 16-bit rows of 512 to 2048
 * vectors (4096-16384 bf16 columns) in multiples of 128 (the multi-pass
 * kernels' threads come in multiples of 64), from 31 rows an SM,
 * takes the lean kernel too: nvec / 2 threads up to 512 (a thread's one
 * step of two vectors covers the row; wider rows take 3-4 vectors a thread
 * at 512), with the L1 hints (cache = 5). Session 26 had measured it slower
 * there (32768x8192 258.4 against 253.6), but its rows ran the general
 * form; the specialised form that streams y (S28-1) turned that round.
 * rmsnorm-bench, bf16, us, old (the register path) / new / new / old:
 * S29-2 8448x8192 67.1 -> 66.3, 16384x8192 127.9 -> 125.8, 32768x8192
 * 253.6 -> 249.0, 65536x8192 507.5 -> 494.8, 16384x4096 65.4 -> 64.1,
 * 32768x4096 127.8 -> 125.9, 65536x4096 252.9 -> 249.1 (fp16 the same);
 * S29-3 4096x4096 17.90 -> 17.65, 8192x4096 33.83 -> 33.34, 4096x8192
 * 33.86 -> 33.51, 4096x5120 22.06 -> 21.69, 16384x5120 80.85 -> 79.70,
 * 65536x5120 315.8 -> 311.2, 16384x6144 96.8 -> 95.3, 8192x12288 109.8 ->
 * 101.7, 4096x16384 69.3 -> 66.5, 8192x16384 136.0 -> 128.4. Slower, as
 * pins (S29-1, S29-2): cache = 1 at 8192 columns (254.8 at 32768 rows),
 * 1024 threads at 8192-16384 columns (381.0 at 32768x8192, 117.9 and
 * 137.8 at 8192x12288 and 8192x16384), 768 at 12288 (111.8), one vector
 * a thread at 4096 and 5120 columns (83.6 and 94.7 at 16384 rows), 256
 * threads at 8192 (34.4 at 4096 rows). Fewer rows than 31 an SM, and the
 * widths between those named but 6144, were not measured. */
#define RMSI_LEAN_PLAIN_ROWS_PER_SM 31
/* rmsi_fwd_lean_rquant: the fused add with the 1x128 block quantiser, h
 * stored, y or not, 16-bit rows of 512, 1024, 1536 or 2048 vectors (4096,
 * 8192, 12288, 16384 bf16 columns), from 31 rows an SM: the lean kernel,
 * 256 threads, h kept in L1 (cache = 5). Sessions 27-28 had measured it
 * slower than the register path there (32768x8192 without y 665-834 us
 * against 514.7), spilling at 32 registers; session 33 gave it 48
 * (forward.cu rmsi_fwd_lean_rq). rmsnorm-bench, us:
 * - S33-1, S33-2, the ladder (the register path) against the pin, bf16,
 *   with y: 4096x4096 40.99 -> 39.84, 8192x4096 78.70 -> 76.21, 32768x4096
 *   305.76 -> 295.10, 65536x4096 615.40 -> 589.74, 4096x8192 80.66 ->
 *   78.86, 8192x8192 157.78 -> 152.52, 16384x8192 311.66 -> 300.64,
 *   32768x8192 624.50 -> 596.51; without y: 4096x4096 33.96 -> 32.66,
 *   4096x8192 67.80 -> 64.08, 8192x8192 131.67 -> 118.58, 32768x8192
 *   514.36 -> 448.53, 65536x4096 490.68 -> 455.90, 8192x16384 307.97 ->
 *   239.90. 128 threads were slower from 8192 columns with y, 512 from
 *   4096 rows;
 * - S33-3, the rule against the old configs pinned, alternated twice, with
 *   y: 4096x8192 80.05 -> 78.66, 32768x8192 618.85 -> 593.27, 4096x4096
 *   40.63 -> 39.74, 65536x4096 607.97 -> 585.17, 8192x12288 301.45 ->
 *   229.24, 8192x16384 347.12 -> 309.61, fp16 32768x8192 614.96 -> 593.57;
 *   without y: 4096x8192 67.10 -> 64.24, 32768x8192 510.28 -> 448.74.
 * Fewer rows: level at 8 and 16 rows an SM (with y 1056x8192 23.58 /
 * 23.47, 2112x8192 43.35 / 43.74, 2112x4096 22.73 / 22.24), slower at 2-4
 * (528x8192 13.16 / 14.08). A fused add without h_out stays on the
 * register path (its second pass re-reads x and the residual; not
 * measured).
 * Session 34 took every multiple of 128 vectors from 512 to 2048: 256
 * threads where they share the row evenly (nvec a multiple of 256), else
 * 128, and those from 62 rows an SM. S34-1 (one round, the ladder's
 * register rows against lean pins, without y, us): 8192x5120 82.28 ->
 * 80.14 (128; 256 86.56), 32768x5120 317.99 -> 286.06 (128; 256 321.48),
 * 16384x6144 213.77 -> 176.51 (256; 128 176.93). Without y at 512 vectors
 * 128 threads led from 248 rows an SM (32768x4096 229.47 -> 226.78,
 * 65536x4096 454.73 -> 446.05; S33-2 455.90 -> 445.23), level at 124
 * (16384x4096 117.35 / 117.44, S33-1) and behind at 31 (4096x4096 32.66 /
 * 35.02, S33-2); with y 256 led (65536x4096 589.74 / 592.59). S34-2 (213d097's
 * ladder against this one, alternated twice, us): without y 32768x5120
 * 318.18 -> 285.90, 16384x6144 213.93 -> 176.51, 32768x4096 229.42 ->
 * 226.68, 65536x4096 454.78 -> 445.63; with y 8192x5120 98.23 -> 97.81,
 * 32768x5120 382.04 -> 373.73, 16384x6144 245.60 -> 223.34, 8192x9216
 * 182.70 -> 180.29 (128 threads), 8192x10240 196.39 -> 190.65 (256; 128
 * 202.87). 4092x5120 with y lost (50.78 -> 52.35; 256 threads 52.74),
 * hence 62 rows an SM for the 128-thread widths; without y there, and
 * 6144 or 10240 columns at 31-61 rows an SM, were not measured.
 * Session 37: with y at 512 and 1024 vectors from 7 rows an SM (S37-2 pins,
 * S37-3 against 97b68cc's ladder, alternated twice, us): 1024x4096 12.34
 * -> 11.82, 1024x8192 22.91 -> 21.39, 2048x8192 42.16 -> 40.08, 4091x8192
 * 80.67 -> 77.25; at 4 rows an SM it lost (528x4096 6.94 -> 7.61), so 7.
 * Without y there and 640 vectors (256x5120: 6.05 against 5.89 at 256
 * threads, cache = 1) were not taken. */
#define RMSI_LEAN_RQ_128_ROWS_PER_SM 248
#define RMSI_LEAN_RQ_ODD_ROWS_PER_SM 62
#define RMSI_LEAN_QUANT48_FEW_ROWS_PER_SM 16
#define RMSI_LEAN_QUANT48_Y_ROWS_PER_SM 62
#define RMSI_LEAN_QUANT48_Y_FEW_ROWS_PER_SM 7
#define RMSI_LEAN_QUANT48_Y_640_128_ROWS_PER_SM 8
#define RMSI_LEAN_Q64_512_ROWS_PER_SM 124
#define RMSI_LEAN_RQ_Y_FEW_ROWS_PER_SM 7
/* rmsi_fwd_lean_quant48: the 1x128 block quantiser of 16-bit rows without a
 * residual, from 31 rows an SM: the 48-register lean kernel (lean = 2,
 * forward.cu rmsi_fwd_lean_rq), 128 threads to 1024 vectors and 256 above,
 * the L1 hints (cache = 5); without y from 512 vectors (below 31 rows an
 * SM rmsi_fwd_lean_quant's 32-register rows stay), with y from 512 to 1024
 * vectors and, from 62 rows an SM, multiples of 256 above (the register
 * path's rows until now; cache = 1 at 1025-1536). At 32 registers its second
 * pass spilled 64-80 bytes; at 48 nothing spills, and 128-thread CTAs
 * keep ten an SM. S34-1 (one round, the ladder against pins, bf16, us):
 * - without y (the ladder: rmsi_fwd_lean_quant, 32 registers, 256 or 512
 *   threads, cache = 1): 16384x4096 84.69 -> 73.86, 65536x4096 329.38 ->
 *   279.18, 8192x5120 55.96 -> 50.06, 32768x5120 204.52 -> 180.39,
 *   8192x8192 77.92 -> 73.96, 32768x8192 292.90 -> 261.50 (128 threads);
 *   8192x12288 116.10 -> 106.08, 8192x16384 152.09 -> 139.17 (256; 128
 *   112.44 and 166.41). 32 registers at 128 threads were between (65536x4096
 *   291.59, 8192x16384 186.44); 2112x4096 (16 rows an SM) lost (13.78 ->
 *   14.00);
 * - with y (the ladder: the register path): 16384x4096 98.87 -> 91.67,
 *   65536x4096 382.73 -> 353.42, 32768x5120 241.57 -> 232.97, 32768x8192
 *   379.90 -> 358.72 (128 threads); 8192x16384 lost at 128 threads
 *   (203.57 -> 225.30); 256 threads, S34-5 (the ladder / cache 5 / cache
 *   1, alternated twice): 8192x12288 172.15 / 144.79 / 141.86, 16384x12288
 *   338.23 / 286.11 / 276.96, 8192x16384 204.72 / 187.93 / 191.07, so with
 *   y rows of 1025-2048 vectors in multiples of 256 take 256 threads from
 *   62 rows an SM (the rows measured), cache = 1 to 1536 vectors.
 * S34-2 (213d097's ladder against this one, alternated twice, us): without
 * y 4092x4096 23.62 -> 22.34, 16384x4096 84.71 -> 73.91, 65536x4096 329.45
 * -> 279.19, 32768x5120 204.37 -> 180.34, 4096x8192 42.42 -> 42.47 (level),
 * 32768x8192 289.00 -> 260.57, 8192x12288 114.82 -> 106.13, 8192x16384
 * 152.18 -> 139.35; with y 4092x4096 28.20 -> 26.71, 65536x4096 382.77 ->
 * 353.11, 32768x5120 241.69 -> 233.23, 4096x8192 52.48 -> 52.46, 32768x8192
 * 379.87 -> 360.54, fp16 16384x4096 97.90 -> 91.39 (one round).
 * Session 35 gave the kernel's second pass a common-call form (forward.cu
 * rmsi_lean_quant_w: 200 -> 165 issued instructions a thread's vector,
 * ncu), which moved three edges, each measured against pins on the new
 * plugin (S35-2, alternated twice, bf16, us):
 * - 256 vectors: 64 threads, cache = 5 (the register path's rows until
 *   now): without y 16384x2048 45.52 -> 35.35, 65536x2048 174.90 ->
 *   126.29 (128 threads 39.05, 146.49); with y 16384x2048 51.42 -> 47.05,
 *   65536x2048 192.56 -> 173.87 (128: 46.91, 177.80). S35-3, pinned:
 *   without y 4092x2048 13.48 -> 12.00, 2112x2048 8.01 -> 7.87, so from
 *   16 rows an SM (S35-4, the ladder against 3803d12's: 4092x2048 13.58
 *   -> 12.02, 2112x2048 8.03 -> 7.87); with y from 62 rows an SM, the rows
 *   measured;
 * - without y, 16-30 rows an SM to 1024 vectors: 128 threads (the
 *   32-register kernel's rows until now): 2112x8192 23.49 -> 22.16,
 *   2112x4096 13.35 -> 12.45; at 8 rows an SM 128 threads lost (1056x8192
 *   13.34 -> 13.65; 256 threads 12.93) or were level (1056x4096 7.70 /
 *   7.77), so 16 is the bound;
 * - with y at 512 vectors: cache = 1: 65536x4096 358.46 -> 342.20,
 *   32768x4096 180.50 -> 173.37, 16384x4096 90.88 -> 88.86, 4092x4096 level
 *   (25.10 / 25.24). At 768 and 1024 vectors cache = 5 stays (S35-3:
 *   16384x6144 131.49 / 132.53, 32768x8192 348.32 / 357.05).
 * S35-3 (3803d12's ladder against this one, alternated twice, us): without
 * y 65536x2048 174.94 -> 126.23, 16384x2048 45.53 -> 35.36, 8192x2048 24.61
 * -> 20.03, 2112x8192 25.03 -> 22.16, 2112x4096 13.83 -> 12.42, 4092x4096
 * 22.36 -> 20.34, fp16 65536x2048 171.29 -> 126.72; with y 65536x4096
 * 353.16 -> 342.32, 16384x4096 91.76 -> 88.83, 4092x4096 26.72 -> 25.09,
 * 65536x2048 192.60 -> 172.01, 8192x2048 27.88 -> 25.07.
 * Session 37 searched the forward grid's block fp8 cells (bench/gpu_search.py
 * with the lean configs its enumeration leaves out, S37-1) and moved four
 * edges, each timed against 97b68cc's ladder (S37-2, S37-3, rmsnorm-bench,
 * alternated twice, bf16, us, old -> new):
 * - without y, 64 threads at 640 vectors from 31 rows an SM and at 512
 *   from 124 (session 36's paired kernels: at 128 threads a thread of a
 *   640-vector row takes a lone fifth vector): 8192x5120 45.10 -> 43.79,
 *   32768x5120 154.61 -> 144.64, 65536x5120 300.39 -> 276.49 (fp16
 *   296.99 -> 275.25), 4096x5120 25.24 -> 25.04, 16384x4096 63.94 ->
 *   63.16, 32768x4096 121.61 -> 116.20, 65536x4096 237.16 -> 222.48; at
 *   512 vectors under 124 rows an SM 64 threads lost (S37-2: 4096x4096
 *   19.63 -> 20.16, 8192x4096 34.56 -> 35.42);
 * - with y, cache = 1 at 640 vectors as at 512: 16384x5120 116.60 ->
 *   112.79, 32768x5120 227.61 -> 222.17, 65536x5120 446.77 -> 435.11,
 *   4096x5120 33.17 -> 32.68;
 * - with y at 256 vectors from 31 rows an SM (62 before): 4096x2048 15.65
 *   -> 14.39, 4092x2048 15.51 -> 14.36, 8183x2048 27.85 -> 25.06;
 * - with y at 7-30 rows an SM, 256, 512, 640 and 1024 vectors: this kernel
 *   (the register path before), cache = 5, 128 threads (256 at 1024
 *   vectors, 64 at 640 under 8 rows an SM): 1024x2048 5.67 -> 5.63,
 *   1024x4096 9.40 -> 8.94, 1024x5120 12.62 -> 10.84, 1056x5120 12.83 ->
 *   11.17, 1024x8192 16.19 -> 15.35, 2048x4096 16.81 -> 14.72, 2048x8192
 *   28.93 -> 26.79, 2112x8192 29.53 -> 27.81. The pins behind the
 *   choices (S37-2, us, 64 / 128 / 256 threads): 1024x5120 10.75 / 11.01
 *   / 11.40, 2048x5120 19.57 / 18.06 / 20.93, 1024x2048 5.50 / 5.60 /
 *   6.46, 2048x2048 8.75 / 8.38 / 10.74, 1024x8192 16.34 / 16.37 / 15.35,
 *   2048x8192 32.08 / 27.02 / 26.79. Under 7 rows an SM, 768 and 896
 *   vectors, and fp32 weights or w_off != 0 (which take the unpaired
 *   kernels at the same configs) were not measured; 512x4096 with y
 *   (3.9 rows an SM) read 6.68 on the register path and 5.36 at 256
 *   threads here, not taken. */

/* At least per_sm rows an SM: the row bounds of the rules above. */
static int rmsi_rows_per_sm_ge(const rmsi_shape *s, int per_sm)
{
    return s->rows >= per_sm * (int64_t)s->sms;
}

/* The rows rmsi_fwd_lean_quant48 takes: without y to 1024 vectors from 16
 * rows an SM; with y above 1024 in multiples of 256 from 62; else from 31
 * (with y at 256 vectors from 62 until session 37). */
static int rmsi_fwd_quant48_rows(const rmsi_shape *s)
{
    const int64_t nvec = rmsi_nvec(s);
    if (!s->yout && nvec <= 1024)
        return rmsi_rows_per_sm_ge(s, RMSI_LEAN_QUANT48_FEW_ROWS_PER_SM);
    if (s->yout && nvec > 1024)
        return nvec % 256 == 0 && rmsi_rows_per_sm_ge(s, RMSI_LEAN_QUANT48_Y_ROWS_PER_SM);
    if (s->yout && (nvec == 256 || nvec == 512 || nvec == 640 || nvec == 1024))
        return rmsi_rows_per_sm_ge(s, RMSI_LEAN_QUANT48_Y_FEW_ROWS_PER_SM);
    return rmsi_rows_per_sm_ge(s, RMSI_LEAN_PLAIN_ROWS_PER_SM);
}

/* The forward's lean kernel at tpr threads and a cache knob, one row a CTA,
 * the grid covering the rows; 0 where the shape cannot take it. */
static int rmsi_fwd_lean_set(const rmsi_shape *s, rmsi_config *c, int tpr, int cache, int lean)
{
    rmsi_config m = *c;
    m.path = RMSI_PATH_MULTI;
    m.vec = 16;
    m.tpr = tpr;
    m.rpc = 1;
    m.nv = 0;
    m.cps = 0;
    m.cache = cache;
    m.stage = 0;
    m.cl = 1;
    m.lean = lean;
    if (!rmsi_config_valid(s, &m))
        return 0;
    *c = m;
    return 1;
}

static int rmsi_fwd_lean_rule(const rmsi_shape *s, rmsi_config *c)
{
    const int64_t nvec = rmsi_nvec(s);
    if (!rmsi_fwd_wide_ok(s) || (s->rows < 2 * (int64_t)s->sms && !rmsi_fwd_lean_few(s)))
        return 0;
    /* The 1x128 block quantiser (forward.cu rmsi_lean_quant) of rows of
     * 2049-4096 vectors too, with the L1 hints (cache = 5) except for a
     * residual without h_out. S27-2 (rmsnorm-bench, pinned against the
     * ladder, bf16, without y): 4096x32768 add + block fp8 559.5 -> 341.9
     * us, block fp8 518.5 -> 171.0 (the multi-pass kernel's 19% of the
     * roofline); S28-1 (pinned at 1024 threads, cache = 5, without y):
     * block fp8 2048x65536 605.8 -> 184.9, 1024x131072 720.4 -> 192.8,
     * 512x262144 718.3 -> 199.0; add + block 576.8 -> 351.1, 597.7 ->
     * 362.2, 601.9 -> 362.6, so every width from 2049 vectors. At 8192
     * columns the lean kernel lost to the register path (add + block
     * 32768x8192: 514.7 against 665-834 at 256-1024 threads), so the fused
     * add's narrower rows below leave fp8 output out. */
    if (s->quant != RMSI_Q_NONE && s->quant != RMSI_Q_BLOCK)
        return 0;
    /* A fused add stores h with an L1 eviction priority of evict-last and
     * the second pass reads it back with evict-first (cache + 4), so the
     * re-read is served by the SM's L1 more often than from L2. Session 25
     * (S25-1, S25-2, rmsnorm-bench, pinned against the ladder, us, bf16):
     * 2048x65536 307.8 -> 291.7, 1024x131072 337.2 -> 328.2, 512x262144
     * 339.6 -> 335.6, 4096x32768 and 8192x32768 +0.4%; and where the
     * register path had the rows, 16384 columns: 1024 rows 38.2 -> 37.6,
     * 2048 71.8 -> 70.2, 4096 139.4 -> 134.5, 8192 275.2 -> 262.7, 16384
     * 548.2 -> 521.6 (12288 columns lost 8-11%, 8192 columns 48%: those
     * stay on the register path). The plain forward kept cache = 1: its
     * first pass's loads already allocate in L1, and the hints cost
     * 4096x32768 +3% (145 -> 149, S25, the general form). Since S28-1 the
     * specialised form streams y (4096x32768 139.3 -> 131.0 at cache = 1),
     * and with it the hints pay from 8192 vectors: S28-4 (alternated
     * twice, us) 2048x65536 152.9 -> 145.2, but 4096x32768 131.1 -> 134.4.
     * So cache = 5 above 4096 vectors; S29-1 (cache = 1 pinned against it,
     * alternated twice) confirmed the wider rows: 1024x131072 186.9 ->
     * 183.3, 512x262144 200.9 -> 200.0, 2048x65536 153.5 -> 145.7. The
     * plain rows of rmsi_fwd_lean_plain take it too. */
    int l1, tpr = RMSI_MULTI_MAX_THREADS, lean = 1;
    if (s->quant == RMSI_Q_BLOCK && s->res && nvec <= rmsi_reg_nvec_max(s)) {
        /* rmsi_fwd_lean_rquant: 256 threads where they share the row
         * evenly, else 128 (and 128 without y at 512 vectors from 248 rows
         * an SM), h kept in L1 */
        tpr = nvec % 256 == 0 ? 256 : 128;
        if (!s->yout && nvec == 512 && rmsi_rows_per_sm_ge(s, RMSI_LEAN_RQ_128_ROWS_PER_SM))
            tpr = 128;
        l1 = 1;
    } else if (s->quant == RMSI_Q_BLOCK && !s->res && rmsi_fwd_quant48_rows(s) && nvec <= rmsi_reg_nvec_max(s)) {
        /* rmsi_fwd_lean_quant48: the 48-register kernel, 64 threads at 256
         * vectors (without y at 512 and 640 too, from 31 rows an SM), 128
         * to 1024, 256 above; the L1 hints except with y at 512 and 640
         * vectors and above 1024 to 1536 */
        tpr = nvec == 256 ? 64 : nvec > 1024 ? 256 : 128;
        if (!s->yout && (nvec == 640 ? rmsi_rows_per_sm_ge(s, RMSI_LEAN_PLAIN_ROWS_PER_SM)
                                     : nvec == 512 && rmsi_rows_per_sm_ge(s, RMSI_LEAN_Q64_512_ROWS_PER_SM)))
            tpr = 64;
        l1 = !s->yout || (nvec != 512 && nvec != 640 && nvec <= 1024) || nvec > 1536;
        if (s->yout && !rmsi_rows_per_sm_ge(s, RMSI_LEAN_PLAIN_ROWS_PER_SM)) {
            /* with y at 7-30 rows an SM (rmsi_fwd_quant48_rows) */
            tpr = nvec == 1024 ? 256
                  : nvec == 640 && !rmsi_rows_per_sm_ge(s, RMSI_LEAN_QUANT48_Y_640_128_ROWS_PER_SM) ? 64
                                                                                                  : 128;
            l1 = 1;
        }
        lean = 2;
    } else if (s->quant == RMSI_Q_BLOCK && !s->res && nvec <= rmsi_reg_nvec_max(s)) {
        /* rmsi_fwd_lean_quant: 256 threads (512 from 1537 vectors), no L1
         * hints */
        tpr = nvec > 1536 ? 512 : 256;
        l1 = 0;
    } else if (!s->res && s->quant == RMSI_Q_NONE && nvec <= rmsi_reg_nvec_max(s)) {
        /* rmsi_fwd_lean_plain: nvec / 2 threads up to 512, L1 hints */
        tpr = (int)(nvec / 2 < 512 ? nvec / 2 : 512);
        l1 = 1;
    } else {
        /* without h_out pass 2 re-reads x and r */
        l1 = s->quant == RMSI_Q_BLOCK ? !s->res || s->hout : s->res ? s->hout : nvec > 4096;
        /* a thread's two vectors (the kernel's step) cover the row from 1024
         * threads down: rmsi_fwd_lean_fused's narrower rows */
        while (tpr > 256 && 2 * (int64_t)(tpr / 2) >= nvec)
            tpr /= 2;
        /* fusions of up to 8192 vectors from one to 1.875 rows an SM: 512
         * threads. S32-2 (rmsnorm-bench, 1024 / 512 threads, us): fused add
         * 150x32768 14.76 / 12.94, 200x65536 33.39 / 30.15, 230x32768 18.19
         * / 17.12, add + block fp8 with y 150x32768 25.34 / 20.58; level at
         * 250 rows, 1024 ahead at 263 (18.70 / 19.04) and at 132 (11.18 /
         * 11.75). Block fp8 without a residual, plain rows and fp32 were
         * not measured at 512 there. */
        if (s->res && s->esz == 2 && nvec <= 8192 && s->rows > s->sms && 8 * s->rows < 15LL * s->sms)
            tpr = 512;
    }
    return rmsi_fwd_lean_set(s, c, tpr, l1 ? 1 + RMSI_CACHE_KNOB_L1 : 1, lean);
}

/* rmsi_fwd_lean_fused_narrow: fused adds that store h, 16-bit rows of 256
 * and 640 vectors (2048 and 5120 bf16 columns), which rmsi_fwd_lean_fused's
 * multiples of 512 leave out: the lean kernel too, from about 4 and 8 rows
 * an SM, at the fewest threads that give a thread one step of two vectors
 * (128 and 320, rounded to the kernel's multiples of 64: 256) and twice
 * that from 31 rows an SM. S31-1 (bench/gpu_search.py over the forward
 * grid) found both 8-15% off at 1024 rows; S31-2, rmsnorm-bench, pinned
 * against the ladder's register rows, alternated twice, us:
 * - 256 vectors, cache = 5 (h kept in L1): 512x2048 4.35 -> 4.09, 1024x2048
 *   6.38 -> 5.86, 2048x2048 10.38 -> 9.68 (128 threads), 4096x2048 18.19 ->
 *   17.92, 8192x2048 33.84 -> 33.50, 16384x2048 66.26 -> 64.52 (256; 128
 *   within 1%); 264 rows lost (2.92 -> 3.17-3.20);
 * - 640 vectors, cache = 1 (the L1 hints were not measured): 1024x5120
 *   13.32 -> 11.68, 2048x5120 23.41 -> 22.06 (256 threads), 4096x5120
 *   43.22 -> 41.42, 8192x5120 83.0 -> 80.3, 16384x5120 162.7 -> 157.9,
 *   32768x5120 322.2 -> 313.3 (512; 256 0.8-1.5% slower); 264 and 512 rows
 *   lost (4.64 -> 4.79, 6.91 -> 6.94).
 * Other widths, fp16 and a fused add without h were not measured. */
static int rmsi_fwd_lean_fused_narrow(const rmsi_shape *s, rmsi_config *c)
{
    const int64_t nvec = rmsi_nvec(s);
    if (s->esz != 2 || s->f16 || !s->res || !s->hout || s->quant != RMSI_Q_NONE || (nvec != 256 && nvec != 640))
        return 0;
    if (nvec == 256 ? 4 * s->rows < 15LL * s->sms : 4 * s->rows < 31LL * s->sms)
        return 0;
    const int many = rmsi_rows_per_sm_ge(s, RMSI_LEAN_PLAIN_ROWS_PER_SM);
    return rmsi_fwd_lean_set(s, c, (nvec == 256 ? 128 : 256) * (many ? 2 : 1),
                             nvec == 256 ? 1 + RMSI_CACHE_KNOB_L1 : 1, 1);
}

/* The 1x128 block quantiser of 16-bit rows at widths and row counts where
 * session 38 found the rules above more than 2% behind the best pin: one
 * row a table entry, rows an SM as a half-open range in quarters (lo4 = 6:
 * from 1.5 rows an SM). bench/gpu_search.py (S38-1, L2-hot) flagged the
 * forward grid's cells; rmsnorm-bench (S38-1, S38-2: pins against the
 * ladder at the cells and their neighbours, alternated twice, bf16, us)
 * set each range, the ladder's time -> the entry's:
 * - without y, 256 vectors, 3-30 rows an SM, the 48-register kernel at 128
 *   threads (64 before from 16 rows an SM, the register path under it):
 *   400x2048 3.46 -> 3.13, 528x2048 3.57 -> 3.40, 1024x2048 5.06 -> 4.70,
 *   1584x2048 6.90 -> 6.08, 2048x2048 7.83 -> 7.06, 2112x2048 7.45 ->
 *   7.22, 3000x2048 9.61 -> 9.02; level at 4092x2048 (11.57 / 11.58), lost
 *   at 264x2048 (2.71 -> 2.85) and 8192x2048 (19.08 -> 20.35);
 * - without y, 640 vectors: at 1.5-2.9 rows an SM the 48-register kernel
 *   at 256 threads, cache = 4: 200x5120 4.21 -> 4.01, 256x5120 4.36 ->
 *   4.21, 300x5120 4.73 -> 4.48, 330x5120 4.83 -> 4.56 (lost at 180 rows,
 *   3.68 -> 3.95; 400 rows: 5.25 -> 5.39); at 6-7.9 the 32-register kernel
 *   at 128 threads, cache = 4: 800x5120 8.15 -> 7.48, 924x5120 8.53 ->
 *   7.91, 1024x5120 8.78 -> 8.56 (it lost from 1150 rows: 10.83 -> 11.78);
 *   at 8-15.9 the 48-register kernel at 128 threads, cache = 4: 1150x5120
 *   10.83 -> 9.14, 1300x5120 11.36 -> 9.47, 1584x5120 12.74 -> 12.52; at
 *   31-247 cache = 4 instead of 5: 8192x5120 43.70 -> 42.24, 16384x5120
 *   77.67 -> 75.82, 24576x5120 110.6 -> 109.2 (level at 4096 rows, behind
 *   at 32768: 143.7 -> 144.0);
 * - with y, 256 vectors, 7-123 rows an SM: 128 threads, cache = 4 (5, and
 *   64 threads from 31 rows an SM, before): 1024x2048 5.60 -> 5.34,
 *   4096x2048 14.39 -> 14.05, 8192x2048 25.33 -> 24.88; level at 2048 and
 *   16384 rows, behind at 65536 (173.7 -> 178.4);
 * - with y, 512, 640 and 1024 vectors under 7 rows an SM (the register
 *   path's rows before, one vector a thread at 512 threads under 4): the
 *   48-register kernel, 256 threads (128 at 640 vectors from 3 rows an
 *   SM), cache = 5: 256x4096 3.90 -> 3.84, 400x4096 6.26 -> 5.04, 512x4096
 *   6.68 -> 5.37, 800x4096 8.31 -> 7.73, 200x5120 4.65 -> 4.41, 256x5120
 *   4.82 -> 4.73, 400x5120 6.88 -> 6.09, 512x5120 7.71 -> 6.77 (6.62 at
 *   256 threads), 800x5120 11.19 -> 9.74, 512x8192 9.75 -> 9.03, 800x8192
 *   14.31 -> 13.11; lost at 132 rows (4096: 3.04 -> 3.15, 5120: 3.49 ->
 *   4.05) and 256x8192 (5.51 -> 5.86), level at 200x4096;
 * - add + block without y, h stored, 256 vectors, from 16 rows an SM: the
 *   lean kernel at 128 threads, h kept in L1 (the register path before):
 *   2048x2048 (15.5 rows an SM, under the bound) 10.55 -> 10.27, 4096x2048 17.91 ->
 *   16.95, 8192x2048 32.64 -> 30.58, 16384x2048 62.09 -> 57.66, 32768x2048
 *   121.07 -> 112.20, 65536x2048 238.66 -> 220.38 (256 threads: 20.51 to
 *   285.6); lost at 1024 rows (6.26 -> 6.91);
 * - add + block, h stored, y or not, 512 vectors at 3-3.9 rows an SM: the
 *   register path at 256 threads, two vectors a thread (one of 512 before):
 *   with y 400x4096 7.35 -> 6.68, 512x4096 8.18 -> 6.88; without 6.87 ->
 *   6.23, 7.57 -> 6.42; lost at 132 and 256 rows. A fused add without fp8
 *   lost there (512x4096 5.90 -> 6.50), so it keeps one vector;
 * - 64 vectors, y or not, at 1.5-2.9 rows an SM: four rows a CTA, one vector
 *   a thread, streaming hints (cache = 1; one row a CTA without before;
 *   S38-5, alternated twice): without y 256x512 2.25 -> 2.19, 300x512 2.29
 *   -> 2.23, 395x512 2.34 -> 2.31; with y 2.36 -> 2.32, 2.41 -> 2.37; level
 *   at 198 rows (2.17 / 2.17, with y 2.28 -> 2.30). Two rows a CTA were as
 *   fast or faster from 132 to 396 rows (2.06-2.30), not taken: one call;
 * - without y, 64 vectors, from 372 rows an SM: sixteen rows a CTA of 16
 *   threads, four vectors a thread (S38-3): 49152x512 34.58 -> 33.46,
 *   65536x512 45.50 -> 43.39, 98304x512 67.38 -> 62.95, 131072x512 89.22 ->
 *   82.12; level at 32768 rows (23.61 / 23.65, S38-1), behind at 16384
 *   (12.94 -> 13.35);
 * - without y, 1024 vectors, 1-32 rows: the lean kernel at 512 threads
 *   without hints (S38-3): 1x8192 2.57 -> 2.45, 2x8192 2.76 -> 2.68,
 *   8x8192 2.96 -> 2.90, 32x8192 3.14 -> 3.10.
 * - add + block, h stored, y or not, 640 vectors at 1.75-1.99 rows an SM:
 *   the lean kernel at 256 threads with the streaming hints (S44-1; the
 *   register path's 320 x 2 before), without y 232x5120 5.49 -> 5.44,
 *   240x5120 5.58 -> 5.48, 256x5120 5.74 -> 5.57, 263x5120 5.81 -> 5.63;
 *   with y 5.84 -> 5.74, 5.89 -> 5.81, 6.09 -> 5.90, 6.17 -> 5.98; f16
 *   without y 256x5120 5.84 -> 5.62. Behind at 224 rows (+1.1-1.6%) and
 *   level at 272 (S38-2: behind at 200 and 280); 264 rows (2.0 an SM)
 *   would gain 3% too but falls outside the quarter-row bound.
 * Not measured: fp16 rows (but for the last entry), fp32 weights or w_off
 *   != 0 (the unpaired kernels at the same configs), the ranges' other
 *   widths. */
typedef struct rmsi_block_rule {
    unsigned char yout, res; /* y stored; a residual with h stored */
    short nvec, lo4, hi4;    /* row width; rows an SM in [lo4 / 4, hi4 / 4), hi4 = 0: no bound */
    short tpr, cache, lean;  /* lean < 0: the register path, nvec / tpr vectors a thread */
    short rpc;               /* the register path's rows a CTA */
} rmsi_block_rule;

static const rmsi_block_rule rmsi_block_rules[] = {
    /* without y */
    {0, 0, 64, 6, 12, 64, 1, -1, 4},     /* 1.5-2.9 */
    {0, 0, 64, 1488, 0, 16, 0, -1, 16},  /* from 372 rows an SM */
    {0, 0, 256, 12, 124, 128, 5, 2, 1},  /* 3-30 */
    {0, 0, 640, 6, 12, 256, 4, 2, 1},    /* 1.5-2.9 */
    {0, 0, 640, 24, 32, 128, 4, 1, 1},   /* 6-7.9 */
    {0, 0, 640, 32, 64, 128, 4, 2, 1},   /* 8-15.9 */
    {0, 0, 640, 124, 992, 64, 4, 2, 1},  /* 31-247 */
    {0, 0, 1024, 0, 1, 512, 0, 1, 1},    /* under a quarter row an SM: 1-32 rows */
    /* with y */
    {1, 0, 64, 6, 12, 64, 1, -1, 4},     /* 1.5-2.9 */
    {1, 0, 256, 28, 496, 128, 4, 2, 1},  /* 7-123 */
    {1, 0, 512, 6, 28, 256, 5, 2, 1},    /* 1.5-6.9 */
    {1, 0, 640, 6, 12, 256, 5, 2, 1},    /* 1.5-2.9 */
    {1, 0, 640, 12, 28, 128, 5, 2, 1},   /* 3-6.9 */
    {1, 0, 1024, 12, 28, 256, 5, 2, 1},  /* 3-6.9 */
    /* add + block, h stored */
    {0, 1, 256, 64, 0, 128, 5, 1, 1},    /* from 16 */
    {0, 1, 512, 12, 16, 256, 0, -1, 1},  /* 3-3.9 */
    {1, 1, 512, 12, 16, 256, 0, -1, 1},  /* 3-3.9 */
    {0, 1, 640, 7, 8, 256, 1, 1, 1},     /* 1.75-1.99 */
    {1, 1, 640, 7, 8, 256, 1, 1, 1},     /* 1.75-1.99 */
};

static int rmsi_fwd_block_table(const rmsi_shape *s, rmsi_config *c)
{
    const int64_t nvec = rmsi_nvec(s);
    if (s->esz != 2 || s->quant != RMSI_Q_BLOCK || (s->res && !s->hout))
        return 0;
    for (size_t i = 0; i < sizeof rmsi_block_rules / sizeof rmsi_block_rules[0]; i++) {
        const rmsi_block_rule *r = &rmsi_block_rules[i];
        if (r->nvec != nvec || r->yout != !!s->yout || r->res != !!s->res || 4 * s->rows < r->lo4 * (int64_t)s->sms ||
            (r->hi4 > 0 && 4 * s->rows >= r->hi4 * (int64_t)s->sms))
            continue;
        if (r->lean >= 0)
            return rmsi_fwd_lean_set(s, c, r->tpr, r->cache, r->lean);
        rmsi_config m = {RMSI_PATH_REG, 16, r->tpr, r->rpc, (int)(nvec / r->tpr), 0, r->cache, 0, 1, 0};
        if (!rmsi_config_valid(s, &m))
            return 0;
        *c = m;
        return 1;
    }
    return 0;
}

void rmsi_ladder(const rmsi_shape *s, rmsi_config *out)
{
    rmsi_config c = {RMSI_PATH_REG, 16, 0, 1, 1, 0, 0, 0, 1, 0};
    const int64_t nvec = rmsi_nvec(s);
    const int vec = 16 / s->esz;
    const int fwd = s->op == RMSI_OP_FWD;
    if (fwd && s->vec_ok &&
        ((nvec > rmsi_reg_nvec_max(s) && rmsi_fwd_lean_rule(s, &c)) || (s->cluster && rmsi_fwd_cluster(s, &c)))) {
        *out = c;
        return;
    }
    if (fwd && s->vec_ok && rmsi_fwd_block_table(s, &c)) {
        *out = c;
        return;
    }
    /* the fused add's register rows from 512 vectors too, where h is stored
     * (rmsi_fwd_lean_fused), and the 1x128 block quantiser's without a
     * residual: without y every row (rmsi_fwd_lean_quant below
     * rmsi_fwd_lean_quant48's), with y those of rmsi_fwd_lean_quant48; its
     * rows of 256 vectors too */
    const int lean_fused = s->res && s->hout && s->quant == RMSI_Q_NONE && nvec % 512 == 0;
    const int many = rmsi_rows_per_sm_ge(s, RMSI_LEAN_PLAIN_ROWS_PER_SM);
    const int lean_quant = !s->res && s->quant == RMSI_Q_BLOCK && (!s->yout || rmsi_fwd_quant48_rows(s));
    const int lean_rquant = s->res && s->hout && s->quant == RMSI_Q_BLOCK && nvec % 128 == 0 &&
                            (nvec % 256 == 0 ? many || (s->yout && (nvec == 512 || nvec == 1024) &&
                                                        rmsi_rows_per_sm_ge(s, RMSI_LEAN_RQ_Y_FEW_ROWS_PER_SM))
                                             : rmsi_rows_per_sm_ge(s, RMSI_LEAN_RQ_ODD_ROWS_PER_SM));
    const int lean_plain = !s->res && s->quant == RMSI_Q_NONE && nvec % 128 == 0 &&
                           nvec <= rmsi_reg_nvec_max(s) && many;
    const int lean = ((lean_fused || lean_quant || lean_rquant || lean_plain) && nvec >= 512) ||
                     (lean_quant && nvec == 256 && rmsi_fwd_quant48_rows(s));
    if (fwd && s->vec_ok && ((lean && rmsi_fwd_lean_rule(s, &c)) || rmsi_fwd_lean_fused_narrow(s, &c))) {
        *out = c;
        return;
    }
    if (!s->vec_ok || nvec > rmsi_reg_nvec_max(s)) {
        c.path = RMSI_PATH_MULTI;
        c.vec = s->vec_ok ? 16 : 0;
        c.tpr = fwd ? 256 : 512;
        c.rpc = 1;
        c.nv = 0;
        if (s->vec_ok && s->esz == 2 && fwd && (s->quant == RMSI_Q_NONE || nvec <= 8192)) {
            /* 16-bit rows, plain forward and fused add, fp8 output up to
             * 8192 vectors: 512 threads, the first pass's loads kept in L2
             * (evict last), the last pass's evict first, y streamed
             * (cache = 1; forward.cu rmsi_fwd_multi). S23-2, rmsnorm-bench,
             * pinned against the ladder of the time (256 threads, or 512 to
             * 4096 vectors, cache = 0), us: forward 4096x32768 222.3 ->
             * 196.5 (the cluster path, above, 178.0), 1024x131072 241.4 ->
             * 230.1, 512x262144 237.8 -> 232.4 (within 1.7% of the best
             * pins, tpr=1024 and tpr=256 with cache=1); fused add
             * 4096x32768 366.9 -> 321.1, 2048x65536 368.7 -> 341.2,
             * 512x262144 370.8 -> 352.8; per-token fp8 4096x32768 316.0 ->
             * 300.4, 2048x65536 337.3 -> 301.0, but 512x262144 330.7 ->
             * 335.2, so fp8 output not above 8192 vectors; S23-3, add +
             * block fp8 4096x32768 583.5 -> 559.6, 2048x65536 583.3 ->
             * 572.5; S23-4 (the old choice pinned against this rule, at
             * 4096x32768 and 2048x65536): per-tensor fp8 234.6 -> 227.3 and
             * 247.9 -> 232.1, block fp8 595.7 -> 516.0 and 696.3 -> 595.6,
             * add + per-token fp8 482.1 -> 431.9 and 475.2 -> 453.7. */
            c.tpr = 512;
            c.cache = 1;
        }
        if (s->vec_ok && s->esz == 2 && fwd && nvec > 8192 && (s->quant == RMSI_Q_TOKEN || s->quant == RMSI_Q_TENSOR) &&
            s->rows <= 3LL * s->sms) {
            /* per-token and per-tensor fp8 of rows wider than 8192 vectors
             * (where rmsi_fwd_cluster_wide does not split them), to 3 rows
             * an SM: 1024 threads, cache = 1 (S32-1, S32-2, pinned against
             * 256 threads and cache = 0, us: per-token 64x131072 105.76 ->
             * 39.42, 132x131072 123.10 -> 44.31, 1x262144 171.05 -> 64.42,
             * 132x262144 263.03 -> 91.39; 512 threads 1.4-1.6x slower than
             * 1024; per-tensor 132x131072 94.73 -> 34.23; add + per-token
             * 132x131072 148.39 -> 62.18; level at 528x131072, 171.48 and
             * 170.16, and S23 had 512x262144 1.4% slower at 512 threads:
             * more rows keep 256). Session 33 took 3 rows an SM, where one
             * CTA of 1024 threads an SM still runs in three full waves
             * (S33-1, S33-2, pinned against the ladder's 256 threads, us):
             * per-token 265x98304 116.01 -> 90.05, 300x131072 156.86 ->
             * 122.43, 350x131072 158.93 -> 124.93, 396x98304 123.09 ->
             * 95.61; per-tensor 300x131072 118.36 -> 93.60, 265x98304 87.85
             * -> 68.74; add + per-token 300x131072 224.04 -> 170.15,
             * 265x98304 160.27 -> 126.82; level at 400x131072 (161.75 /
             * 162.55) and 400x98304 (123.49 / 121.57), a fourth wave. */
            c.tpr = 1024;
            c.cache = 1;
        }
        if (s->vec_ok && !fwd &&
            ((s->esz == 2 && nvec > 1024 && nvec <= 4096 && 2 * s->rows <= s->sms) ||
             (!s->res && nvec >= 4096 && nvec <= 8192) || (nvec > 8192 && 4 * s->rows <= 7LL * s->sms)))
            /* the backward at 1024 threads: 16-bit rows without a residual
             * gradient from 4096 to 8192 vectors (S22-4, S22-5, pinned
             * against 979f9a1's ladder: 4096x32768 577.2 -> 463.2,
             * 2048x32768 295.7 -> 241.1, 8192x32768 1147.3 -> 906.6,
             * 2048x65536 604.1 -> 596.0, but 8192x12288 +18%, 8192x16384
             * +2%, 512x262144 +3.5%); and under half a row an SM, 16-bit
             * rows of 1025 to 4096 vectors with or without one (S31-1,
             * S31-2, rmsnorm-bench, pinned against 512 threads, alternated
             * twice, us: bf16 1x16384 6.70 -> 6.21, 32x16384 10.48 -> 9.89,
             * 64x16384 11.33 -> 10.92, 1x24576 9.24 -> 8.56, 32x9216 8.25 ->
             * 7.89, 32x12288 9.05 -> 8.57, the 21 cells of 9216..24576 x
             * 1, 32 and 64 rows 3-7% faster but 1x9216, 1x10240 and 1x20480
             * within 1.3%; fp16 32x16384 10.57 -> 9.88; with a residual
             * gradient 1x16384 7.60 -> 6.74, 32x12288 9.53 -> 8.91). 100 rows
             * were within 1.6% either way and keep 512; 1024 vectors (8192
             * columns) lost (32x8192 6.56 -> 6.80); and rows wider than
             * 8192 vectors to 1.75 rows an SM, with or without one (S32-1,
             * S32-2, us: 1x131072 45.23 -> 34.33, 32x131072 68.48 -> 55.72,
             * 200x131072 177.23 -> 160.75, 1x262144 87.50 -> 65.77,
             * 132x262144 241.90 -> 226.48; with a residual gradient
             * 32x131072 74.69 -> 58.99; fp16 the same; but 263x131072
             * 179.29 -> 194.03 and 400x131072 270.04 -> 301.25). fp32 rows
             * take the two wider terms since S32-3: 1x65536 27.41 -> 21.74,
             * 132x65536 85.00 -> 76.96, 4096x16384 418.43 -> 293.34 (256
             * threads: 1.5-2x slower than 512). */
            c.tpr = 1024;
        *out = c;
        return;
    }
    if (!fwd && s->rows < s->sms && s->esz == 2 && nvec == 512) {
        /* Backward under a row an SM, 512 16-bit vectors: the register
         * path, one vector of 512 threads, rather than the multi-pass
         * kernel (S30-2: the config search's best at 1x4096 and 32x4096;
         * S30-3, rmsnorm-bench, against the multi-pass config pinned,
         * alternated twice, us: 1x4096 2.90 -> 2.68, 32x4096 5.20 -> 4.78,
         * 64x4096 5.52 -> 5.07, 128x4096 6.20 -> 6.05; cache = 3, the
         * search's pick at 32 rows, within 1% of this at all four). Other
         * widths were not searched under a row an SM and keep the
         * multi-pass kernel; fp16 and a residual gradient were not
         * measured. */
        c.tpr = 512;
        c.nv = 1;
        *out = c;
        return;
    }
    if (!fwd && s->rows < s->sms) {
        c.path = RMSI_PATH_MULTI;
        c.tpr = nvec > 512 ? 512 : 256;
        c.rpc = 1;
        c.nv = 0;
        *out = c;
        return;
    }
    int nv;
    if (fwd) {
        /* 2 vectors for narrow rows (<= 64 vectors: 4 would leave a row
         * 16 threads; S5-3/S5-4: 16384x512 21.7 -> 8.4 us). 4 vectors
         * otherwise, their weights loaded with the row (rmsi_stage_for):
         * at 1024 rows 6.81 -> 6.35 us (x4096) and 4.62 -> 4.48 (x2048),
         * 4096x2048 10.38 / 10.40 (S6-3, rmsnorm-bench, pinned tpr). Before
         * S6, a 4-vector row loaded its weights after the reduction, and 2
         * vectors won at few or mid counts of <= 4096 bf16 columns
         * (1024x4096 9.4 -> 5.2 us, 4096x2048 15.0 -> 8.7 in S5's
         * searches). That rule stays for fp8 output (its 4-vector kernels
         * load the weights late) and with a residual (80 registers at 4
         * vectors: S6-4, fused add 1024x2048 6.62 -> 7.44 us at 4, 1024x4096
         * 10.63 -> 11.18, 8192x2048 33.87 -> 34.57). */
        const int64_t rps = s->rows / s->sms;
        const int two_mid = s->quant != RMSI_Q_NONE || s->res; /* 2 vectors at mid counts */
        if (s->rows < 4LL * s->sms && s->rows >= s->sms && !two_mid && nvec % 256 == 0 && nvec >= 512 &&
            nvec <= 1024)
            /* 1 to 4 rows an SM: 256 threads a row (S6-8, rmsnorm-bench,
             * against 1 vector of 512 threads or 2 of 512: 256x4096 3.42 ->
             * 3.13 us, 256x8192 4.77 -> 4.56, 512x4096 5.56 -> 4.70,
             * 512x8192 7.24 -> 6.40; 128 rows kept more threads, 3.30 vs
             * 3.49 at 8192 columns) */
            nv = (int)(nvec / 256);
        else if (s->res && s->quant == RMSI_Q_NONE && s->esz == 2 && nvec == 512 && 2 * s->rows >= 3LL * s->sms &&
                 s->rows < 2LL * s->sms)
            /* a fused add of 512 16-bit vectors at 1.5 to 2 rows an SM
             * (below rmsi_fwd_lean_fused's rows): 256 threads a row too
             * (S31-1, S31-2, rmsnorm-bench, pinned against the ladder,
             * alternated twice: 200x4096 3.98 -> 3.68 us, 256x4096 4.36 ->
             * 4.01; 132 rows lost, 3.03 -> 3.07, and 32-64 rows 4-5%) */
            nv = 2;
        else if (nvec <= 64 && !two_mid && 4 * s->rows >= 3LL * s->sms && s->rows < 3LL * s->sms)
            /* a row of <= 64 vectors, about 1 to 3 an SM: one warp a row,
             * two vectors a thread, so that the row's sum needs no shared
             * memory (S15-3, rmsnorm-bench, tpr=32,rpc=4,nv=2 pinned against
             * the ladder, alternated twice: 128x512 1.79 -> 1.74 us, 192x512
             * 1.87 -> 1.84, 256x512 1.94 -> 1.90, 384x512 2.03 -> 2.00;
             * slower at 512 rows, 2.08 -> 2.10, 32 rows, 1.56 -> 1.63, and
             * one row, 1.16 -> 1.19, S15-2) */
            nv = 2;
        else if (s->rows < s->sms && !two_mid && nvec == 512 && s->esz == 2)
            /* under a row an SM, 512 16-bit vectors: 256 threads a row too
             * (S30-2: the config search's best at 1x4096 and 32x4096; S30-3,
             * rmsnorm-bench, this rule against the old config pinned,
             * alternated twice, us: 1x4096 1.52 -> 1.48, 32x4096 2.04 ->
             * 2.00, 64x4096 2.15 -> 2.12, 128x4096 2.39 -> 2.35). One vector
             * of 512 threads had been the rule below since S6; 1024 vectors
             * keep 512 x 2, the search's best at 1x8192 and 32x8192. */
            nv = 2;
        else if (!two_mid && s->esz == 2 && nvec == 256 && 4 * s->rows >= 13LL * s->sms && s->rows < 32LL * s->sms)
            /* 256 16-bit vectors (2048 columns), 3.25 to 32 rows an SM: two
             * vectors of 128 threads, not one of 256 (under 4 an SM) or four
             * of 64 with the weights (S44-2, S44-3, rmsnorm-bench, alternated
             * twice, us): 448x2048 3.00 -> 2.69, 512x2048 3.07 -> 2.79,
             * 768x2048 3.61 -> 3.33, 1152x2048 4.78 -> 4.33, 1536x2048 5.56
             * -> 4.63, 2048x2048 6.00 -> 5.75, 4096x2048 10.03 -> 9.62; fp16
             * alike; level at 384 rows; 0.9-2.5% slower at 896 and 1024
             * rows (1024x2048 4.07-4.11 -> 4.16-4.17). Taken at 1024 too:
             * inside torch the 64 x 4 config lost its launch overlap after
             * a few graphs (4.13 -> 4.79 us), this one did not (4.09-4.15,
             * Liger 4.16-4.30). Rows of 8192 and more were not timed. */
            nv = 2;
        else if (s->rows < 4LL * s->sms)
            nv = 1;
        else if (rmsi_fwd_narrow_fused(s) == 2)
            /* 64 vectors, 4 to 11 rows an SM: one vector a thread, two rows
             * a CTA (rmsi_fwd_narrow_fused) */
            nv = 1;
        else if (nvec <= 64 || (two_mid && ((rps < 16 && nvec <= 512) || (rps < 64 && nvec <= 256))))
            nv = 2;
        else
            nv = 4;
        /* The default cache policy (c.cache = 0) everywhere: from 64 rows an
         * SM without fp8 output since S7 (S7-4, S7-5, rmsnorm-bench,
         * alternated twice: fused add 32768x8192 550.2 us with streaming
         * hints, 523.6 without; forward 32768x8192 264.2 -> 259.9, 65536x4096
         * 263.4 -> 254.9), at 4 fp8 vectors since S5, and the rest since S13
         * (`cache=0` pinned against the ladder, alternated twice: S13-4, the
         * whole forward grid and ten fused-add cells, never slower beyond
         * 0.02 us, a row alone 4-16% faster, 1x2048 1.69 -> 1.42 us,
         * 256..4096 rows 0.2-2%; S13-6, the five fp8 ops at nine cells, a row
         * alone 2-13% faster, add + block fp8 16384x512 22.9 -> 21.8 us,
         * slower only at 32x4096 (1.0-1.2%), 1024x2048 and 4096x512 with a
         * residual (0.4-0.8%), at most 0.06 us). The streaming hints had won
         * only in the L2-hot searches of sessions 2-3. */
        if (s->quant == RMSI_Q_NONE && rps >= 64 && s->res && nvec == 1024)
            nv = 2; /* a residual at 1024 vectors: 2 (S7-5: 516.0 us against
                     * 523.6 at 4, fused add 32768x8192; 65536x4096 no faster) */
        if (s->quant != RMSI_Q_NONE && nv == 4) {
            /* fp8 output: with a residual 2 vectors (its
             * kernels need 96 registers at NV = 4: add-quant-token 4096x8192
             * 88.5 us at 2, 105.4 at 4, S5-1), without one 4 (64 registers:
             * quant-block 4096x8192 66.8 -> 57.1 us, 32768x8192 504.8 ->
             * 416.7, quant-token 74.2 -> 65.1, 562.8 -> 485.2, S5-1) */
            nv = s->res ? 2 : 4;
        }
    } else if ((s->rows >= 64LL * s->sms && (nvec >= 512 || s->rows / 32 >= 8LL * s->sms)) ||
               (nvec > 512 && (s->rows >= 16LL * s->sms || nvec > 640))) {
        /* Many rows: 4 vectors where the partial cap still leaves >= 128
         * threads a row group or >= 8 partials an SM (S4-8: 16384x2048 bf16
         * at 64 threads x 4 vectors, 528 partials: 77.4 us, 128 x 2: 65.2;
         * 65536x2048, 2048 partials: 4 vectors best, S4-3). Wide rows at any
         * count: 2 vectors would mean CTAs of 320-512 threads at 80
         * registers, one an SM (S3-10: 4096x8192 99.3 -> 67.6 us, 2048x8192
         * 54.1 -> 40.6, 4096x5120 52.9 -> 47.0 at 4), except under 16
         * rows an SM where 2 vectors fit 320 threads (S5-8/S5-9,
         * rmsnorm-bench: 1024x5120 18.9 -> 15.7 us at 320 x 2; 512 x 2 was
         * slower: 1024x8192 23.9 at 4 vectors, 25.0 at 2; 2048x8192 35.7,
         * 42.0). Staging the next row
         * (rmsi_stage_for; S4-3: 32768x8192 403.6 -> 393.2 us, 16384x4096
         * 135.9 -> 104.6, 65536x2048 219.3 -> 199.6). */
        nv = 4;
        c.cache = 0;
        if (rmsi_bwd_lean_many(s))
            nv = 2;
        if (rmsi_bwd_slow_hbm(s))
            nv = nvec == 1024 ? 4 : 2;
        if (rmsi_bwd_f32_512(s))
            nv = 2;
    } else {
        nv = rmsi_bwd_mid512(s) ? 4 : 2;
        if (s->esz == 2 && nvec >= 64 && nvec <= 512 && s->rows < 10LL * s->sms &&
            (nvec < 512 || s->rows >= 3LL * s->sms))
            /* under 10 rows an SM: one vector a thread, the next row
             * prefetched into registers (S15-3, S15-4, rmsnorm-bench,
             * alternated twice, us: 1024x512 7.87 -> 6.03-6.15, 1024x1024
             * 7.37 -> 6.82, 256x2048 7.05 -> 6.79, 512x2048 8.05 -> 7.70,
             * 1024x2048 10.50 -> 9.75, 512x4096 10.56 -> 9.77, 1024x4096
             * 15.06 -> 14.44, 1280x4096 17.30 -> 16.66; 256x4096 lost, 8.10
             * -> 8.35, hence 3 rows an SM at 512 vectors; 1536x2048 gained
             * 3%, 2048x2048 lost 1.8%; 512 vectors from 10 an SM are
             * rmsi_bwd_mid512's; bf16 from 7.75 rows an SM at 512 vectors
             * and from 10 at 256: rmsi_bwd_lean_mid, S19) */
            nv = 1;
        c.cps = 0;
        c.cache = 1;
    }
    const int64_t lmin = fwd && s->quant == RMSI_Q_BLOCK ? 128 / vec : (fwd ? 4 : 32);
    int64_t tpr = rmsi_tpr_for_nv(nvec, nv, lmin);
    while (tpr > RMSI_REG_MAXT) /* nvec > 2 x 512 (forward): more vectors per thread */
        tpr = rmsi_tpr_for_nv(nvec, nv *= 2, lmin);
    c.tpr = (int)tpr;
    c.nv = rmsi_nv_for(s, c.tpr);
    c.stage = rmsi_stage_for(s, &c);
    c.rpc = (int)rmsi_rpc_for(s, tpr, c.stage);
    if (!fwd && c.stage && rmsi_bwd_smem(s, &c) > rmsi_smem_cap(s))
        c.rpc = 1; /* two staged rows a CTA do not fit this device */
    if (!fwd && rmsi_bwd_smem(s, &c) > rmsi_smem_cap(s)) {
        /* weights and accumulators alone exceed this device's (or an
         * unknown device's 48 KB) shared memory: one CTA a row in global memory */
        c.path = RMSI_PATH_MULTI;
        c.tpr = nvec > 512 ? 512 : 256;
        c.rpc = 1;
        c.nv = 0;
        c.cps = 0;
        c.cache = 0;
        c.stage = 0;
    }
    if (!fwd && s->cluster && c.path == RMSI_PATH_REG && c.nv >= 2 &&
        (c.rpc > 1 || (c.tpr <= 128 && s->rows >= 16LL * s->sms) || rmsi_bwd_mid512(s) || rmsi_bwd_f32_512(s) ||
         (nvec > 1024 && s->rows < 31LL * s->sms)))
        /* dw partials summed over clusters of 2 CTAs (S9-1..S9-3,
         * rmsnorm-bench, cl=1 / cl=2 alternated twice: 16384x2048 63.6 ->
         * 56.8 us, 8192x2048 35.9 -> 32.9, 4096x2048 21.4 -> 20.6, 2048x4096
         * 25.1 -> 24.4, 1024x4096 15.4 -> 15.0; 0.3-0.6% at 16384..65536 x
         * 4096 and 65536x2048; 32768x2048 0.7% slower). At 128 threads a
         * row the partial cap, not the occupancy, set the grid (528 CTAs of
         * 6 an SM at 16384x2048): with clusters the same cap admits twice
         * the CTAs, 792 (396 partial rows). Wider row groups lost 0.5-3.5%
         * (4096x4096 33.4 -> 34.4, 4096x5120 41.2 -> 42.6; full occupancy
         * already, and the cluster barrier at the end costs), as did rows
         * of under 8 a CTA (1024x2048 10.5 -> 11.2). Those were measured
         * with the fenced cluster sum; the staged kernels' st.async one
         * (S18) made every clustered cell 0.1-4% faster, and cl=2 pinned on
         * six 4-vector cells of a CTA a row group was still no gain
         * (-0.6% to +1.3%, S18-5). */
        c.cl = 2;
    if (!fwd && c.path == RMSI_PATH_REG && c.nv == 2 && c.stage && !s->res && s->esz == 2 && !s->f16 &&
        !rmsi_bwd_slow_hbm(s) && (s->rows >= 48LL * s->sms || (c.tpr == 256 && s->rows >= 31LL * s->sms))) {
        /* The 64-register staged kernel (lean): 4 CTAs of 256 threads an SM
         * instead of 3, more CTAs of 128 (S16-2, rmsnorm-bench, against the
         * 80-register kernel, alternated twice, us: 8192x2048 32.87 ->
         * 32.62, 16384x2048 56.83 -> 55.11, 32768x2048 103.80 -> 100.8,
         * 8192x4096 58.0 -> 56.45; it lost under 48 rows an SM, 4096x2048
         * 20.53 -> 20.87, 2048x2048 13.58 -> 13.75, 1024x5120 15.82 ->
         * 16.9). Rows of 256 threads take clusters with it: 4096x4096 33.38
         * -> 32.85, 8192x4096 -> 56.07 (the fourth CTA doubles the partial
         * rows, which clusters halve; cl=2 at 3 CTAs lost, above). S16-3, the
         * whole backward grid alternated twice: nothing slower beyond 0.3%.
         * bf16 only: fp16's lean kernel keeps 80 registers (64 spilled), and
         * with its clusters 4096x4096 fp16 lost 33.40 -> 34.55; fp32 and a
         * residual gradient were not measured. */
        c.lean = 1;
        if (c.tpr == 256 && s->cluster)
            c.cl = 2;
    }
    rmsi_bwd_lean_mid(s, &c);
    rmsi_bwd_f32_few(s, &c);
    *out = c;
}

int rmsi_config_valid(const rmsi_shape *s, const rmsi_config *c)
{
    if (c->cps < 0 || c->cps > 64 || c->cache < 0 || c->cache > 7 || c->stage < 0 || c->stage > 1)
        return 0;
    /* the L1 hints (cache 4-7): the forward's lean kernel only */
    if ((c->cache & RMSI_CACHE_KNOB_L1) && (s->op != RMSI_OP_FWD || c->path != RMSI_PATH_MULTI || c->lean == 0))
        return 0;
    /* clusters, where the device has them, register path only: the
     * backward's dw partials (2); a forward row split over 2, 4 or 8 CTAs,
     * one row a CTA, the grid covering the rows, each CTA a whole number of
     * vectors (and of 1x128 blocks for the block quantiser), at least a warp
     * a CTA (its first cl threads push the CTA's sums, reduce.h) and 2 or
     * 4 vectors a thread (the kernels built for it, forward.cu) */
    if (c->cl != 1) {
        const int fwd = s->op == RMSI_OP_FWD;
        if (!s->cluster || c->path != RMSI_PATH_REG || (fwd ? !rmsi_is_pow2(c->cl) || c->cl > 8 : c->cl != 2))
            return 0;
        if (fwd && (c->rpc != 1 || c->cps != 0 || c->tpr < RMSI_LADDER_WARP || c->nv < 2 || c->nv > 4 ||
                    !rmsi_fwd_splits(s, c->cl)))
            return 0;
    }
    /* lean: the backward's staged 2-vector kernel at 64 registers; the
     * forward's 16-byte multi-pass kernel at 32, without fp8 output or with
     * the block quantiser's of 16-bit rows, its indices 32-bit (forward.cu
     * rmsi_fwd_lean; the block quantiser with a residual at 48 registers
     * from 256 threads down); 2: the forward's block quantiser at 48
     * registers, residual or not, CTAs of 256 threads or fewer (forward.cu
     * rmsi_fwd_lean_rq) */
    if (c->lean != 0 &&
        (c->lean < 0 || c->lean > (s->op == RMSI_OP_FWD ? 2 : 1) ||
         (s->op == RMSI_OP_FWD ? c->path != RMSI_PATH_MULTI || c->vec != 16 ||
                                     (s->quant != RMSI_Q_NONE && (s->quant != RMSI_Q_BLOCK || s->esz != 2)) ||
                                     (c->lean == 2 && (s->quant != RMSI_Q_BLOCK || c->tpr > 256)) ||
                                     rmsi_nvec(s) > 0x7fffffff - RMSI_MULTI_MAX_THREADS * 2
                               : c->path != RMSI_PATH_REG || c->nv != 2 || !c->stage || s->f16)))
        return 0;
    /* stage: the backward's row staging (2- and 4-vector kernels); the
     * forward's weights loaded with the row (4 vectors, no fp8 output) */
    if (c->stage && (c->path != RMSI_PATH_REG ||
                     (s->op == RMSI_OP_FWD ? c->nv != 4 || s->quant != RMSI_Q_NONE : c->nv < 2)))
        return 0;
    if (c->path == RMSI_PATH_MULTI) {
        if (c->vec == 16 && !s->vec_ok)
            return 0;
        if (c->vec != 16 && c->vec != 0)
            return 0;
        return c->tpr >= 64 && c->tpr <= RMSI_MULTI_MAX_THREADS && c->tpr % 64 == 0;
    }
    if (c->path != RMSI_PATH_REG || !s->vec_ok || c->vec != 16)
        return 0;
    if (c->tpr < 4 || c->tpr > RMSI_REG_MAXT ||
        (c->tpr <= RMSI_LADDER_WARP ? !rmsi_is_pow2(c->tpr) : c->tpr % RMSI_LADDER_WARP != 0))
        return 0;
    /* CTAs of one warp are valid for the forward, so that a pin or search
     * can take torch.compile's narrow-row shape (a warp, two rows; S13-3:
     * no faster than the ladder); the backward keeps its two-warp minimum
     * (never measured below it) */
    if (!rmsi_is_pow2(c->rpc) || c->rpc > 32 || (int64_t)c->tpr * c->rpc > RMSI_REG_MAXT ||
        (int64_t)c->tpr * c->rpc < (s->op == RMSI_OP_FWD ? 32 : 64))
        return 0;
    if (c->nv != rmsi_nv_cfg(s, c) || c->nv > (s->op == RMSI_OP_FWD ? 8 : 4))
        return 0;
    if (s->op == RMSI_OP_FWD && s->quant == RMSI_Q_BLOCK && c->tpr < 128 / (16 / s->esz))
        return 0;
    if (s->op != RMSI_OP_FWD && rmsi_bwd_smem(s, c) > rmsi_smem_cap(s))
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
            c.tpr = s->op == RMSI_OP_FWD ? 256 : 512;
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
    const int fwd = s->op == RMSI_OP_FWD;
    /* cl before nv: a forward row split over a cluster sets it */
    if (pin->cl >= 0)
        c.cl = pin->cl;
    else if (c.path == RMSI_PATH_MULTI)
        c.cl = 1;
    if (c.path == RMSI_PATH_REG && c.tpr > 0)
        c.nv = rmsi_nv_cfg(s, &c);
    if (pin->cl < 0 && !fwd && c.nv < 2)
        c.cl = 1; /* the backward ladder's clusters are for its own register config */
    if (pin->stage >= 0)
        c.stage = pin->stage;
    else
        c.stage = rmsi_stage_for(s, &c); /* a pinned tpr or path may change nv */
    if (pin->rpc >= 0)
        c.rpc = pin->rpc;
    else if (fwd && c.cl > 1)
        c.rpc = 1; /* a split row is the CTA's one row */
    else if (c.path == RMSI_PATH_REG && pin->tpr >= 0)
        c.rpc = (int)rmsi_rpc_for(s, c.tpr > 0 ? c.tpr : 1, c.stage);
    if (pin->cps >= 0)
        c.cps = pin->cps;
    if (pin->cache >= 0)
        c.cache = pin->cache;
    if (pin->lean >= 0)
        c.lean = pin->lean;
    else if (fwd ? c.path != RMSI_PATH_MULTI || c.vec != 16 : c.path != RMSI_PATH_REG || c.nv != 2 || !c.stage)
        c.lean = 0; /* as cl: the ladder's lean kernels are for their own configs */
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
    const int64_t groups = rmsi_cdiv(s->rows, rpc);
    const int64_t per_sm = c->cps > 0 ? c->cps : (occ > 0 ? occ : 1);
    int64_t g = groups < per_sm * s->sms ? groups : per_sm * s->sms;
    if (s->op == RMSI_OP_FWD) {
        /* cps = 0: the register path covers the rows, one CTA per row group
         * (cl CTAs a row where a row is split over a cluster); so does the
         * lean multi-pass kernel, one row a CTA */
        if (c->cps == 0 && (c->path == RMSI_PATH_REG || c->lean))
            g = c->path == RMSI_PATH_REG ? groups * c->cl : groups;
    } else {
        const int64_t cl = c->path == RMSI_PATH_REG && c->cl > 1 ? c->cl : 1;
        /* partial rows: grid * rpc, or grid / cl with clusters */
        const int64_t pcap = rmsi_bwd_partial_cap(s->rows, s->sms);
        const int64_t cap = cl > 1 ? pcap * cl : pcap / rpc;
        if (g > cap)
            g = cap;
        /* fewer CTAs than fit: a whole number an SM (the launcher then caps
         * the residency at that number, ops.cu rmsi_bwd_spread_smem) */
        if (c->path == RMSI_PATH_REG && c->cps == 0 && g < per_sm * s->sms && g >= s->sms)
            g = g / s->sms * s->sms;
        if (cl > 1) { /* whole clusters; at least one (CTAs without rows write zeros) */
            g = g / cl * cl;
            if (g < cl)
                g = cl;
        }
        /* A full grid whose CTAs get at most 4 row groups, nearly all of
         * them the same number: the fewest CTAs that give none more than it
         * has (1024 rows over 264 CTAs: 256 of 4). The partial rows are a
         * large share of the bytes there (264 of 16 KB next to 1024 rows of
         * 24 KB at 1024x4096), so fewer of them pay; losing more than an
         * eighth of the CTAs, or with more rows a CTA, the lost CTAs cost
         * more (S17-4, S17-6: 1024 x 2048..8192, 1536x4096 and 2048x4096
         * 1.0-2.0% faster; 396x4096 and 600x4096, a quarter of the CTAs
         * lost, 11-13% slower; 4096x2048 2.6% and 4096x4096 0.8% slower). */
        if (c->path == RMSI_PATH_REG && c->cps == 0 && g >= per_sm * s->sms) {
            const int64_t per = rmsi_cdiv(groups, g);
            const int64_t gb = rmsi_cdiv(rmsi_cdiv(groups, per), cl) * cl;
            if (per <= 4 && gb < g && gb * 8 >= g * 7)
                g = gb;
        }
    }
    if (g > RMSI_GRID_CAP)
        g = RMSI_GRID_CAP;
    return g < 1 ? 1 : g;
}

/* The search space: every register config (threads per row: the powers of two
 * and the balanced widths for 1..8 vectors; rows per CTA; cps 0 or 2; the
 * four cache policies; row staging where valid; backward clusters of 1 or 2
 * where the device has them; the lean backward kernel), then the multi-pass
 * ones. */
int rmsi_config_at(const rmsi_shape *s, int idx, rmsi_config *out)
{
    static const int cps[] = {0, 2};
    int64_t tprs[40];
    int nt = 0, n = 0;
    if (idx < 0)
        return -1;
    for (int tpr = 4; tpr <= RMSI_REG_MAXT; tpr *= 2)
        tprs[nt++] = tpr;
    /* the balanced widths of a whole row and, forward, of a cluster's slice */
    for (int cl = 1; cl <= (s->op == RMSI_OP_FWD && s->cluster ? 8 : 1); cl *= 2) {
        for (int nv = 1; nv <= 8; nv *= 2) {
            int64_t t = rmsi_tpr_for_nv(rmsi_nvec(s) / cl, nv, 4);
            int dup = t > RMSI_REG_MAXT;
            for (int j = 0; j < nt && !dup; j++)
                dup = tprs[j] == t;
            if (!dup)
                tprs[nt++] = t;
        }
    }
    for (int j = 0; j < nt; j++) {
        for (int rpc = 1; rpc <= 32; rpc *= 2) {
            for (int k = 0; k < 2; k++) {
                for (int cache = 0; cache < 4; cache++) {
                    for (int stage = 0; stage < 2; stage++) {
                        for (int cl = 1; cl <= 8; cl *= 2) {
                            for (int lean = 0; lean <= 1; lean++) {
                                rmsi_config c = {RMSI_PATH_REG, 16, (int)tprs[j], rpc, 0, cps[k], cache, stage, cl,
                                                 lean};
                                c.nv = rmsi_nv_cfg(s, &c);
                                if (!rmsi_config_valid(s, &c))
                                    continue;
                                if (n++ == idx) {
                                    *out = c;
                                    return 0;
                                }
                            }
                        }
                    }
                }
            }
        }
    }
    for (int v = 0; v < 2; v++) {
        for (int tpr = 128; tpr <= RMSI_MULTI_MAX_THREADS; tpr *= 2) {
            /* lean = 2 without a residual only: with one it is lean = 1's
             * kernel wherever it is valid */
            for (int lean = 0; lean <= (s->res ? 1 : 2); lean++) {
                /* the lean kernel's L2 hints too, with and without its L1 ones */
                for (int k = 0; k < (lean ? 4 : 1); k++) {
                    const int cache = (k & 1) | (k & 2 ? RMSI_CACHE_KNOB_L1 : 0);
                    rmsi_config c = {RMSI_PATH_MULTI, v == 0 ? 16 : 0, tpr, 1, 0, 0, cache, 0, 1, lean};
                    if (!rmsi_config_valid(s, &c))
                        continue;
                    if (n++ == idx) {
                        *out = c;
                        return 0;
                    }
                }
            }
        }
    }
    return -1;
}
