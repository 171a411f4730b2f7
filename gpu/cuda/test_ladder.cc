/*
 * cuda-check's host test of the CUDA ladder (no GPU, no CUDA runtime): over a
 * grid of shapes, dtypes, quant modes, residual (gradient) or not and three
 * SM counts with their shared memory (H100/H200 132, A100 108, B200 148; and
 * an unknown limit), the ladder's own choice must be a
 * config the kernels accept (an invalid one makes the op fail with
 * RMSNORM_ERR_UNSUPPORTED on a shape no GPU test happened to cover), every
 * enumerated config must be accepted and must round-trip through its text
 * and a pin, and the backward grid times rows per CTA must stay within the
 * partial count workspace_size reserves (a larger one would write past the
 * workspace). A few rules fixed by H200 measurements are checked by value.
 */
#include <stdio.h>

#include "gpu/common/config_text.h"
#include "gpu/common/host_check.h"
#include "gpu/cuda/h200_shape.h"
#include "gpu/cuda/ladder.h"

static bool same(const rmsi_config &a, const rmsi_config &b)
{
    return a.path == b.path && a.vec == b.vec && a.tpr == b.tpr && a.rpc == b.rpc && a.nv == b.nv &&
           a.cps == b.cps && a.cache == b.cache && a.stage == b.stage && a.cl == b.cl &&
           a.lean == b.lean;
}

/* The ladder's config is valid for the shape, and resolving no pin gives it
 * (rmsi_config_resolve recomputes the stage: a rule that sets one must
 * teach rmsi_stage_for the same). */
static void check_ladder(const rmsi_shape &s)
{
    const rmsi_config none = {-1, -1, -1, -1, -1, -1, -1, -1, -1, -1};
    rmsi_config lad, res;
    rmsi_ladder(&s, &lad);
    CHECK(rmsi_config_valid(&s, &lad),
          "ladder invalid: op %d %lldx%lld esz %d f16 %d vec_ok %d quant %d res %d sms %d hbm %d", s.op,
          (long long)s.rows, (long long)s.cols, s.esz, s.f16, s.vec_ok, s.quant, s.res, s.sms, s.hbm_sm);
    CHECK(rmsi_config_resolve(&s, &none, &res) == 0 && same(res, lad),
          "resolve(no pin) differs from the ladder: op %d %lldx%lld f16 %d res %d hbm %d", s.op, (long long)s.rows,
          (long long)s.cols, s.f16, s.res, s.hbm_sm);
}

/* A shape of the grid below: the backward has no fp8 output, the block
 * quantiser needs whole 128-column blocks. */
static bool grid_shape(int op, int64_t cols, int quant)
{
    return (op != RMSI_OP_BWD || quant == RMSI_Q_NONE) && (quant != RMSI_Q_BLOCK || cols % 128 == 0);
}

static rmsi_shape shape_of(int op, int64_t rows, int64_t cols, int esz, int vec_ok, int quant, int res, int sms,
                           int smem, int cluster)
{
    /* no f16, h or y output, HBM figure: the grid's variants set them */
    const int vok = vec_ok && cols % (16 / esz) == 0;
    return rmsi_shape{op, rows, cols, esz, vok, quant, sms, res, smem, cluster, 0, 0, 0, 0};
}

/* RMSNORM_CUDA_SMS / RMSNORM_CUDA_HBM_SM go through rmsi_parse_count: a
 * malformed value must read as unset, never as a count. */
static void check_parse_count(void)
{
    int v = -1;
    CHECK(rmsi_parse_count("16", &v) == 0 && v == 16, "\"16\" does not parse as 16");
    CHECK(rmsi_parse_count("0", &v) == 0 && v == 0, "\"0\" does not parse as 0");
    CHECK(rmsi_parse_count("1048576", &v) == 0 && v == 1 << 20, "2^20 does not parse");
    static const char *const bad[] = {"", "1x", "x1", "-1", "1048577", "99999999999999999999", "1.5"};
    for (const char *b : bad) {
        v = 7;
        CHECK(rmsi_parse_count(b, &v) != 0 && v == 7, "\"%s\" parses as a count", b);
    }
    CHECK(rmsi_parse_count(nullptr, &v) != 0 && v == 7, "NULL parses as a count");
}

/* The ladder's config and, for the backward, its grid against the partial
 * rows' cap at every occupancy the launch may find. */
static void check_ladder_grid(const rmsi_shape &s)
{
    rmsi_config c;
    check_ladder(s);
    rmsi_ladder(&s, &c);
    for (int occ = 1; s.op == RMSI_OP_BWD && occ <= 8; occ *= 2) {
        const int64_t g = rmsi_config_grid(&s, &c, occ);
        CHECK(g >= 1 && rmsi_bwd_parts(&c, g) <= rmsi_bwd_partial_cap(s.rows, s.sms),
              "bwd ladder grid %lld (partials %lld) over cap %lld: %lldx%lld esz %d res %d sms %d hbm %d", (long long)g,
              (long long)rmsi_bwd_parts(&c, g), (long long)rmsi_bwd_partial_cap(s.rows, s.sms), (long long)s.rows,
              (long long)s.cols, s.esz, s.res, s.sms, s.hbm_sm);
    }
}

static void check_shape(const rmsi_shape &s, long *configs)
{
    check_ladder(s);
    for (int i = 0;; i++) {
        rmsi_config c, pin, back;
        char txt[RMSI_CONFIG_TEXT];
        if (rmsi_config_at(&s, i, &c) != 0)
            break;
        (*configs)++;
        CHECK(rmsi_config_valid(&s, &c), "enumerated config %d invalid", i);
        CHECK(rmsi_config_format(&c, txt, sizeof txt) == 0, "format");
        CHECK(rmsi_config_parse(txt, &pin) == 0, "parse %s", txt);
        CHECK(rmsi_config_resolve(&s, &pin, &back) == 0 && same(back, c), "pin %s does not round-trip", txt);
        if (s.op == RMSI_OP_BWD) {
            for (int occ = 1; occ <= 8; occ *= 2) {
                const int64_t g = rmsi_config_grid(&s, &c, occ);
                const int64_t parts = rmsi_bwd_parts(&c, g);
                CHECK(parts <= rmsi_bwd_partial_cap(s.rows, s.sms), "bwd partials %lld > cap %lld (%s, rows %lld)",
                      (long long)parts, (long long)rmsi_bwd_partial_cap(s.rows, s.sms), txt, (long long)s.rows);
                CHECK(g % (c.path == RMSI_PATH_MULTI ? 1 : c.cl) == 0 && parts >= 1,
                      "bwd grid %lld not whole clusters (%s)", (long long)g, txt);
            }
        }
    }
}

/* Rules the H200 measurements fixed (docs/perf/h200.md), so that a ladder
 * edit that undoes one fails here rather than only in a benchmark:
 * h200_ladder gives the ladder's config of a contiguous shape there
 * (h200_shape.h), check_rule and check_fwd_stage compare it with a rule's. */
static rmsi_config h200_ladder(int op, int64_t rows, int64_t cols, int esz, int quant, int res)
{
    const rmsi_shape s = h200_shape(op, rows, cols, esz, quant, res);
    rmsi_config c;
    rmsi_ladder(&s, &c);
    return c;
}

static void check_rule(int op, int64_t rows, int64_t cols, int esz, int quant, int res, int nv, int cache)
{
    const rmsi_config c = h200_ladder(op, rows, cols, esz, quant, res);
    CHECK(c.path == RMSI_PATH_REG && c.nv == nv && c.cache == cache,
          "rule: op %d %lldx%lld esz %d quant %d res %d: nv %d cache %d, expected nv %d cache %d", op,
          (long long)rows, (long long)cols, esz, quant, res, c.nv, c.cache, nv, cache);
}

/* check_rule for a fused add that does not store h (h_out NULL): the
 * register rules session 26's lean rows (rmsi_fwd_lean_fused) left. */
static void check_rule_no_hout(int64_t rows, int64_t cols, int nv)
{
    rmsi_shape s = h200_shape(RMSI_OP_FWD, rows, cols, 2, RMSI_Q_NONE, 1);
    rmsi_config c;
    s.hout = 0;
    rmsi_ladder(&s, &c);
    CHECK(c.path == RMSI_PATH_REG && c.nv == nv && c.cache == 0,
          "rule: fused add without h_out %lldx%lld: path %d nv %d cache %d, expected the register path, nv %d",
          (long long)rows, (long long)cols, c.path, c.nv, c.cache, nv);
}

/* The forward's stage (weights loaded with the row) at 4 vectors. */
static void check_fwd_stage(int64_t rows, int64_t cols, int esz, int res, int stage)
{
    const rmsi_config c = h200_ladder(RMSI_OP_FWD, rows, cols, esz, RMSI_Q_NONE, res);
    CHECK(c.path == RMSI_PATH_REG && c.nv == 4 && c.stage == stage,
          "fwd stage rule %lldx%lld esz %d res %d: nv %d stage %d, expected nv 4 stage %d", (long long)rows,
          (long long)cols, esz, res, c.nv, c.stage, stage);
}

/* A forward rule's tpr, rpc and nv at an element size; check_fwd_shape
 * for 16-bit rows. */
static void check_fwd_shape_esz(int64_t rows, int64_t cols, int esz, int quant, int res, int tpr, int rpc, int nv)
{
    const rmsi_config c = h200_ladder(RMSI_OP_FWD, rows, cols, esz, quant, res);
    CHECK(c.path == RMSI_PATH_REG && c.tpr == tpr && c.rpc == rpc && c.nv == nv,
          "fwd rule %lldx%lld esz %d quant %d res %d: tpr %d rpc %d nv %d, expected tpr %d rpc %d nv %d",
          (long long)rows, (long long)cols, esz, quant, res, c.tpr, c.rpc, c.nv, tpr, rpc, nv);
}

static void check_fwd_shape(int64_t rows, int64_t cols, int quant, int res, int tpr, int rpc, int nv)
{
    check_fwd_shape_esz(rows, cols, 2, quant, res, tpr, rpc, nv);
}

/* The multi-pass path's threads a row (a CTA) and cache knob for a contiguous shape. */
static void check_multi(int op, int64_t rows, int64_t cols, int esz, int quant, int res, int tpr, int cache)
{
    const rmsi_config c = h200_ladder(op, rows, cols, esz, quant, res);
    CHECK(c.path == RMSI_PATH_MULTI && c.tpr == tpr && c.cache == cache,
          "multi rule op %d %lldx%lld esz %d quant %d res %d: path %d tpr %d cache %d, expected multi tpr %d cache %d",
          op, (long long)rows, (long long)cols, esz, quant, res, c.path, c.tpr, c.cache, tpr, cache);
}

/* A forward row split over a cluster: cl CTAs of tpr threads, nv vectors each. */
static void check_fwd_cl(int64_t rows, int64_t cols, int esz, int quant, int res, int cl, int tpr, int nv)
{
    const rmsi_config c = h200_ladder(RMSI_OP_FWD, rows, cols, esz, quant, res);
    CHECK(c.path == RMSI_PATH_REG && c.cl == cl && c.tpr == tpr && c.nv == nv && c.rpc == 1,
          "fwd cluster rule %lldx%lld esz %d quant %d res %d: path %d cl %d tpr %d nv %d rpc %d, expected cl %d "
          "tpr %d nv %d", (long long)rows, (long long)cols, esz, quant, res, c.path, c.cl, c.tpr, c.nv, c.rpc, cl, tpr,
          nv);
}

/* Session 24's wide forward rows: the lean two-pass kernel, 1024 threads,
 * cache = 1, one CTA a row (the grid covers the rows whatever fits);
 * session 25's fused adds with the L1 hints too (cache = 5), from 16384
 * columns; session 28's plain rows with them from 4097 vectors. */
static void check_fwd_lean_at(int64_t rows, int64_t cols, int quant, int res, int tpr)
{
    const rmsi_shape s = h200_shape(RMSI_OP_FWD, rows, cols, 2, quant, res);
    rmsi_config c;
    rmsi_ladder(&s, &c);
    const int64_t g = rmsi_config_grid(&s, &c, 2048 / tpr);
    const int cache = res || quant == RMSI_Q_BLOCK || cols / 8 > 4096 ? 5 : 1;
    CHECK(c.path == RMSI_PATH_MULTI && c.lean == 1 && c.tpr == tpr && c.cache == cache && c.cps == 0 && g == rows,
          "fwd lean rule %lldx%lld quant %d res %d: path %d lean %d tpr %d cache %d cps %d grid %lld, expected tpr %d",
          (long long)rows, (long long)cols, quant, res, c.path, c.lean, c.tpr, c.cache, c.cps, (long long)g, tpr);
}

static void check_fwd_lean(int64_t rows, int64_t cols, int quant, int res)
{
    check_fwd_lean_at(rows, cols, quant, res, 1024);
}

/* Session 26's fused adds of 512-2048 vectors that store h: the lean
 * kernel at the fewest threads giving each at most two vectors, cache = 5. */
static void check_fwd_lean_fused_cache(int64_t rows, int64_t cols, int tpr, int cache)
{
    const rmsi_shape s = h200_shape(RMSI_OP_FWD, rows, cols, 2, RMSI_Q_NONE, 1);
    rmsi_config c;
    rmsi_ladder(&s, &c);
    const int64_t g = rmsi_config_grid(&s, &c, 2048 / tpr);
    CHECK(c.path == RMSI_PATH_MULTI && c.lean == 1 && c.tpr == tpr && c.cache == cache && c.cps == 0 && g == rows,
          "fwd lean fused rule %lldx%lld: path %d lean %d tpr %d cache %d cps %d grid %lld, expected tpr %d cache %d",
          (long long)rows, (long long)cols, c.path, c.lean, c.tpr, c.cache, c.cps, (long long)g, tpr, cache);
}

static void check_fwd_lean_fused(int64_t rows, int64_t cols, int tpr)
{
    check_fwd_lean_fused_cache(rows, cols, tpr, 5);
}

/* Session 29's plain forward of 512-2048 vectors in multiples of 128 from 31
 * rows an SM: the lean kernel at nvec / 2 threads up to 512, cache = 5;
 * not for fp32 rows. */
static void check_fwd_lean_plain(int64_t rows, int64_t cols, int tpr)
{
    const rmsi_config c = h200_ladder(RMSI_OP_FWD, rows, cols, 2, RMSI_Q_NONE, 0);
    const rmsi_shape s = h200_shape(RMSI_OP_FWD, rows, cols, 2, RMSI_Q_NONE, 0);
    const int64_t g = rmsi_config_grid(&s, &c, 2048 / tpr);
    CHECK(c.path == RMSI_PATH_MULTI && c.lean == 1 && c.tpr == tpr && c.cache == 5 && c.cps == 0 && g == rows,
          "fwd lean plain rule %lldx%lld: path %d lean %d tpr %d cache %d cps %d grid %lld, expected tpr %d",
          (long long)rows, (long long)cols, c.path, c.lean, c.tpr, c.cache, c.cps, (long long)g, tpr);
    const rmsi_config f = h200_ladder(RMSI_OP_FWD, rows, cols / 2, 4, RMSI_Q_NONE, 0);
    CHECK(f.path == RMSI_PATH_REG, "fwd fp32 %lldx%lld: path %d, expected the register path", (long long)rows,
          (long long)(cols / 2), f.path);
}

/* The 1x128 block quantiser of 512-2048 vectors without a residual. Without
 * y: session 28's lean kernel (tpr threads, lean = 1, cache = 1), and from
 * 31 rows an SM session 34's 48-register one (lean = 2, cache = 5). With y:
 * the register path (ynv vectors), or from 31 rows an SM to 1024 vectors
 * the 48-register kernel at ytpr threads (ytpr > 0). */
static void check_fwd_lean_quant_y(int64_t rows, int64_t cols, int tpr, int lean, int ytpr, int ynv, int ycache)
{
    rmsi_shape s = h200_shape(RMSI_OP_FWD, rows, cols, 2, RMSI_Q_BLOCK, 0);
    rmsi_config c;
    s.yout = 0;
    rmsi_ladder(&s, &c);
    const int64_t g = rmsi_config_grid(&s, &c, 2048 / tpr);
    const int cache = lean == 2 ? 5 : 1;
    CHECK(c.path == RMSI_PATH_MULTI && c.lean == lean && c.tpr == tpr && c.cache == cache && c.cps == 0 && g == rows,
          "fwd lean quant rule %lldx%lld: path %d lean %d tpr %d cache %d cps %d grid %lld, expected lean %d tpr %d",
          (long long)rows, (long long)cols, c.path, c.lean, c.tpr, c.cache, c.cps, (long long)g, lean, tpr);
    s.yout = 1;
    rmsi_ladder(&s, &c);
    if (ytpr > 0)
        CHECK(c.path == RMSI_PATH_MULTI && c.lean == 2 && c.tpr == ytpr && c.cache == ycache && c.cps == 0,
              "fwd block fp8 with y %lldx%lld: path %d lean %d tpr %d cache %d, expected lean 2 tpr %d cache %d",
              (long long)rows, (long long)cols, c.path, c.lean, c.tpr, c.cache, ytpr, ycache);
    else
        CHECK(c.path == RMSI_PATH_REG && c.nv == ynv, "fwd block fp8 with y %lldx%lld: path %d nv %d, expected nv %d",
              (long long)rows, (long long)cols, c.path, c.nv, ynv);
}

/* The block quantiser's config at a shape: y stored or not, with a
 * residual (h stored) or not; lean < 0 asks for the register path at tpr
 * threads and nv vectors (nv is not checked on the lean path). Session 38's
 * table (rmsi_fwd_block_table) is held by it. */
static void check_fwd_block(int64_t rows, int64_t cols, int yout, int res, int lean, int tpr, int nv, int cache)
{
    rmsi_shape s = h200_shape(RMSI_OP_FWD, rows, cols, 2, RMSI_Q_BLOCK, res);
    rmsi_config c;
    s.yout = yout;
    rmsi_ladder(&s, &c);
    const int ok = lean < 0 ? c.path == RMSI_PATH_REG && c.tpr == tpr && c.nv == nv && c.cache == cache
                            : c.path == RMSI_PATH_MULTI && c.lean == lean && c.tpr == tpr && c.cache == cache;
    CHECK(ok, "fwd block fp8 %lldx%lld y %d res %d: path %d lean %d tpr %d nv %d cache %d, expected lean %d tpr %d nv %d "
          "cache %d", (long long)rows, (long long)cols, yout, res, c.path, c.lean, c.tpr, c.nv, c.cache, lean, tpr, nv,
          cache);
}

static void check_fwd_lean_quant(int64_t rows, int64_t cols, int tpr, int lean, int ytpr, int ynv)
{
    check_fwd_lean_quant_y(rows, cols, tpr, lean, ytpr, ynv, 5);
}

/* A fused add without h_out re-reads x and the residual in the lean
 * kernel's second pass: no L1 hints, and 16384 columns stay on the register
 * path (session 25's rule is for h kept in L1). */
static void check_fwd_res_no_hout(void)
{
    rmsi_shape s = h200_shape(RMSI_OP_FWD, 4096, 32768, 2, RMSI_Q_NONE, 1);
    rmsi_config c;
    s.hout = 0;
    rmsi_ladder(&s, &c);
    CHECK(c.path == RMSI_PATH_MULTI && c.lean == 1 && c.cache == 1,
          "fwd res without h_out 4096x32768: path %d lean %d cache %d, expected lean with cache 1", c.path, c.lean,
          c.cache);
    for (int64_t cols = 4096; cols <= 16384; cols += 4096) {
        s.cols = cols;
        rmsi_ladder(&s, &c);
        CHECK(c.path == RMSI_PATH_REG, "fwd res without h_out 4096x%lld: path %d, expected the register path",
              (long long)cols, c.path);
    }
}

/* A contiguous 16-bit backward shape on the H200 (132 SMs). */
static rmsi_shape h200_bwd(int64_t rows, int64_t cols, int cluster, int res, int f16)
{
    rmsi_shape s = {};
    s.op = RMSI_OP_BWD;
    s.rows = rows;
    s.cols = cols;
    s.esz = 2;
    s.vec_ok = 1;
    s.sms = 132;
    s.smem = 232448;
    s.cluster = cluster;
    s.res = res;
    s.f16 = f16;
    return s;
}

/* Session 9's backward rules: clusters of 2 (cl) where S9-1..S9-3 measured
 * them faster, and a persistent grid of a whole number of CTAs an SM when
 * fewer than fit (occ given, as the occupancy API would report it); session
 * 17's: a full grid of at most 4 row groups a CTA shrinks to the fewest CTAs
 * that keep that count when that loses at most an eighth of them. */
static void check_bwd(int64_t rows, int64_t cols, int cluster, int cl, int occ, int64_t grid, int tpr, int rpc)
{
    const rmsi_shape s = h200_bwd(rows, cols, cluster, 0, 0);
    rmsi_config c;
    rmsi_ladder(&s, &c);
    const int64_t g = rmsi_config_grid(&s, &c, occ);
    CHECK(c.cl == cl && g == grid && c.tpr == tpr && c.rpc == rpc,
          "bwd rule %lldx%lld cluster %d: cl %d grid %lld tpr %d rpc %d, expected cl %d grid %lld tpr %d rpc %d",
          (long long)rows, (long long)cols, cluster, c.cl, (long long)g, c.tpr, c.rpc, cl, (long long)grid, tpr, rpc);
}

/* Session 16's lean rule: the 64-register staged 2-vector kernel, with
 * clusters at 256 threads a row (bf16 rows; fp16 has no lean kernel, and
 * lean=1 is not valid for it). */
static void check_bwd_lean(int64_t rows, int64_t cols, int res, int f16, int lean, int cl)
{
    const rmsi_shape s = h200_bwd(rows, cols, 1, res, f16);
    rmsi_config c;
    rmsi_ladder(&s, &c);
    CHECK(c.lean == lean && c.cl == cl, "bwd lean rule %lldx%lld res %d f16 %d: lean %d cl %d, expected lean %d cl %d",
          (long long)rows, (long long)cols, res, f16, c.lean, c.cl, lean, cl);
    c.lean = 1;
    CHECK(!f16 || !rmsi_config_valid(&s, &c), "bwd lean=1 valid for fp16 %lldx%lld", (long long)rows, (long long)cols);
}

/* A backward config's path, threads a row, vectors, lean bit and cluster
 * (and rows a CTA where rpc > 0), on a device of hbm GB/s of HBM an SM (0:
 * unknown, the H200's rules), for 16-bit rows or (esz 4) fp32 ones; the
 * config must also be valid for the shape. */
static void check_bwd_cfg(int64_t rows, int64_t cols, int res, int f16, int path, int tpr, int nv, int lean, int cl,
                          int hbm = 0, int esz = 2, int rpc = 0)
{
    rmsi_shape s = h200_bwd(rows, cols, 1, res, f16);
    rmsi_config c;
    s.hbm_sm = hbm;
    s.esz = esz;
    rmsi_ladder(&s, &c);
    CHECK(c.path == path && c.tpr == tpr && (path == RMSI_PATH_MULTI || c.nv == nv) && c.lean == lean &&
              c.cl == cl && (rpc == 0 || c.rpc == rpc) && rmsi_config_valid(&s, &c),
          "bwd rule %lldx%lld esz %d res %d f16 %d, %d GB/s an SM: path %d tpr %d nv %d lean %d cl %d rpc %d, "
          "expected path %d tpr %d nv %d lean %d cl %d rpc %d",
          (long long)rows, (long long)cols, esz, res, f16, hbm, c.path, c.tpr, c.nv, c.lean, c.cl, c.rpc, path, tpr,
          nv, lean, cl, rpc);
}

int main()
{
    /* Session 30's backward rules: rows, cols, residual gradient, fp16,
     * then the expected path, tpr, nv, lean and cl. */
    static const struct {
        int64_t rows, cols;
        int res, f16, path, tpr, nv, lean, cl;
    } bwd30[] = {
        /* S30-2, S30-3: under a row an SM, 512 16-bit vectors, the register
         * path at one vector of 512 threads (other widths: multi-pass) */
        {1, 4096, 0, 0, RMSI_PATH_REG, 512, 1, 0, 1},
        {131, 4096, 0, 0, RMSI_PATH_REG, 512, 1, 0, 1},
        {1, 2048, 0, 0, RMSI_PATH_MULTI, 256, 0, 0, 1},
        {1, 8192, 0, 0, RMSI_PATH_MULTI, 512, 0, 0, 1},
        /* many bf16 rows of 256 or 512 vectors: 2 vectors in the lean
         * kernel instead of 4 (512 vectors under 256 rows an SM); a
         * residual gradient and fp16 unchanged */
        {16384, 4096, 0, 0, RMSI_PATH_REG, 256, 2, 1, 2},
        {33791, 4096, 0, 0, RMSI_PATH_REG, 256, 2, 1, 2},
        {33792, 4096, 0, 0, RMSI_PATH_REG, 128, 4, 0, 2},
        {65536, 2048, 0, 0, RMSI_PATH_REG, 128, 2, 1, 2},
        {16384, 4096, 1, 0, RMSI_PATH_REG, 128, 4, 0, 2},
        {16384, 4096, 0, 1, RMSI_PATH_REG, 128, 4, 0, 2},
        /* S30-6, S30-7: 16-bit rows of 1025-2048 vectors without a residual
         * gradient from a row an SM, the register path, 4 vectors, clusters
         * of 2 under 31 rows an SM (fp16: the same kernel family) */
        {131, 16384, 0, 0, RMSI_PATH_MULTI, 512, 0, 0, 1},
        {132, 16384, 0, 0, RMSI_PATH_REG, 512, 4, 0, 2},
        {4091, 16384, 0, 0, RMSI_PATH_REG, 512, 4, 0, 2},
        {4092, 16384, 0, 0, RMSI_PATH_REG, 512, 4, 0, 1},
        {65536, 16384, 0, 0, RMSI_PATH_REG, 512, 4, 0, 1},
        {4096, 10240, 0, 0, RMSI_PATH_REG, 320, 4, 0, 1},
        {4096, 16384, 0, 1, RMSI_PATH_REG, 512, 4, 0, 1},
        {4096, 16392, 0, 0, RMSI_PATH_MULTI, 512, 0, 0, 1},
        {4096, 16384, 1, 0, RMSI_PATH_MULTI, 512, 0, 0, 1},
    };
    for (const auto &k : bwd30)
        check_bwd_cfg(k.rows, k.cols, k.res, k.f16, k.path, k.tpr, k.nv, k.lean, k.cl);

    /* S47-3: on an H100-class device (under 28 GB/s of HBM an SM) many bf16
     * rows without a residual gradient leave the lean rules from 62 rows an
     * SM (124 at 640 vectors): rows, cols, HBM GB/s an SM, then tpr, nv, lean, cl. 0 GB/s
     * (unknown), 31 and the H200's 37 keep the lean configs; fp16, a residual
     * gradient (but at 640 vectors, below) and 31 rows an SM are not touched
     * (fp16 from 124 rows an SM: S50, below; 8192 columns from 124 rows an
     * SM take two rows a CTA and clusters of 2 since session 52). */
    static const struct {
        int64_t rows, cols;
        int hbm, res, f16, tpr, nv, lean, cl;
    } hbm47[] = {
        {16384, 2048, 25, 0, 0, 128, 2, 0, 2}, {32768, 4096, 25, 0, 0, 256, 2, 0, 1},
        {65536, 4096, 25, 0, 0, 256, 2, 0, 1}, {16368, 5120, 25, 0, 0, 320, 2, 0, 1},
        {16367, 5120, 25, 0, 0, 320, 2, 1, 1}, {65536, 5120, 25, 0, 0, 320, 2, 0, 1},
        {32768, 8192, 25, 0, 0, 256, 4, 0, 2}, {8183, 8192, 25, 0, 0, 512, 2, 1, 2},
        {4096, 2048, 25, 0, 0, 128, 2, 1, 2},  {32768, 4096, 0, 0, 0, 256, 2, 1, 2},
        {32768, 4096, 31, 0, 0, 256, 2, 1, 2}, {32768, 8192, 37, 0, 0, 512, 2, 1, 2},
        {16384, 4096, 25, 1, 0, 128, 4, 0, 2}, {8192, 4096, 25, 0, 1, 256, 2, 0, 1},
        /* S48-3: a residual gradient at 640 vectors from 16 rows an SM takes
         * 2 vectors there; not at 37 GB/s, 0, fp16 or under 16 rows an SM
         * (2 vectors already) */
        {4096, 5120, 25, 1, 0, 320, 2, 0, 1},  {2112, 5120, 25, 1, 0, 320, 2, 0, 1},
        {65536, 5120, 25, 1, 0, 320, 2, 0, 1}, {2111, 5120, 25, 1, 0, 320, 2, 0, 1},
        {4096, 5120, 37, 1, 0, 160, 4, 0, 1},  {4096, 5120, 0, 1, 0, 160, 4, 0, 1},
        {4096, 5120, 25, 1, 1, 160, 4, 0, 1},  {4096, 8192, 25, 1, 0, 256, 4, 0, 1},
        /* S50-1, S50-2: fp16 without a residual gradient at 256-640 vectors
         * from 124 rows an SM takes 2 vectors where the many-rows rule gives
         * 4; not at 37 GB/s, 0, 8192 columns, with a residual gradient or
         * under 124 rows an SM (16367: 4 vectors at 160 threads); 8192
     * columns: session 52, below */
        {16368, 5120, 25, 0, 1, 320, 2, 0, 1}, {16367, 5120, 25, 0, 1, 160, 4, 0, 1},
        {65536, 5120, 25, 0, 1, 320, 2, 0, 1}, {16384, 4096, 25, 0, 1, 256, 2, 0, 1},
        {65536, 4096, 25, 0, 1, 256, 2, 0, 1}, {65536, 2048, 25, 0, 1, 128, 2, 0, 2},
        {65536, 2048, 37, 0, 1, 64, 4, 0, 2},  {65536, 4096, 0, 0, 1, 128, 4, 0, 2},
        {65536, 4096, 25, 1, 1, 128, 4, 0, 2},
    };
    for (const auto &k : hbm47)
        check_bwd_cfg(k.rows, k.cols, k.res, k.f16, RMSI_PATH_REG, k.tpr, k.nv, k.lean, k.cl, k.hbm);

    /* Session 52: 16-bit rows of 1024 vectors without a residual gradient,
     * from 124 rows an SM under 28 GB/s an SM, two rows a CTA (and so
     * clusters of 2); not under 124 rows an SM, at 37 or 0 GB/s, with a
     * residual gradient or at 8200 columns (1025 vectors: 288 threads, one
     * row a CTA). fp32 rows of 512 vectors from 64 rows an SM where
     * clusters exist, at any HBM bandwidth: 2 vectors of 256 threads,
     * clusters of 2 (from 16 to 64 rows an SM the ladder's 256 x 2 without
     * clusters; with a residual gradient only under 28 GB/s an SM, session
     * 53). rows, cols, res, f16, HBM GB/s an SM, then tpr, nv, cl,
     * rpc; esz. */
    static const struct {
        int64_t rows, cols;
        int res, f16, hbm, tpr, nv, cl, rpc, esz;
    } pairs52[] = {
        {16368, 8192, 0, 1, 25, 256, 4, 2, 2, 2}, {65536, 8192, 0, 1, 25, 256, 4, 2, 2, 2},
        {16367, 8192, 0, 1, 25, 256, 4, 1, 1, 2}, {65536, 8192, 0, 1, 37, 256, 4, 1, 1, 2},
        {65536, 8192, 0, 1, 0, 256, 4, 1, 1, 2},  {16368, 8192, 0, 0, 25, 256, 4, 2, 2, 2},
        {16367, 8192, 0, 0, 25, 256, 4, 1, 1, 2}, {65536, 8192, 0, 0, 37, 256, 4, 1, 1, 2},
        {65536, 8192, 1, 1, 25, 256, 4, 1, 1, 2}, {65536, 8200, 0, 1, 25, 288, 4, 1, 1, 2},
        {8448, 2048, 0, 0, 25, 256, 2, 2, 1, 4},  {33791, 2048, 0, 0, 25, 256, 2, 2, 1, 4},
        {8447, 2048, 0, 0, 25, 256, 2, 1, 1, 4},  {65536, 2048, 0, 0, 25, 256, 2, 2, 1, 4},
        {16384, 2048, 0, 0, 37, 256, 2, 2, 1, 4}, {16384, 2048, 1, 0, 25, 256, 2, 2, 1, 4},
        {16384, 2048, 1, 0, 37, 128, 4, 2, 1, 4}, {16384, 2048, 1, 0, 0, 128, 4, 2, 1, 4},
    };
    for (const auto &k : pairs52)
        check_bwd_cfg(k.rows, k.cols, k.res, k.f16, RMSI_PATH_REG, k.tpr, k.nv, 0, k.cl, k.hbm, k.esz, k.rpc);

    /* Session 52: fp32 rows under 32 rows an SM where clusters exist, at
     * any HBM bandwidth: 1024 vectors from 1.75 to 32 rows an SM, 2 vectors
     * of 512 threads; 512 vectors from 7.75 to 16 rows an SM, the lean
     * kernel, one row a CTA, clusters of 2, cache 2 (checked here: the lean
     * bit and one row a CTA). With a residual gradient only under 28 GB/s
     * an SM (session 53); not outside the bounds, or without clusters (below). rows, cols, res, HBM GB/s an SM,
     * then tpr, nv, lean, cl, rpc. */
    static const struct {
        int64_t rows, cols;
        int res, hbm, tpr, nv, lean, cl, rpc;
    } few52[] = {
        {231, 4096, 0, 25, 512, 2, 0, 1, 1},   {4223, 4096, 0, 25, 512, 2, 0, 1, 1},
        {230, 4096, 0, 25, 256, 4, 0, 1, 1},   {4224, 4096, 0, 25, 256, 4, 0, 1, 1},
        {512, 4096, 0, 37, 512, 2, 0, 1, 1},   {512, 4096, 1, 25, 512, 2, 0, 1, 1},
        {512, 4096, 1, 37, 256, 4, 0, 1, 1},   {512, 4096, 1, 0, 256, 4, 0, 1, 1},
        {1023, 2048, 0, 25, 256, 2, 1, 2, 1},  {2111, 2048, 0, 25, 256, 2, 1, 2, 1},
        {1022, 2048, 0, 25, 256, 2, 0, 2, 2},  {2112, 2048, 0, 25, 256, 2, 0, 1, 1},
        {2048, 2048, 0, 0, 256, 2, 1, 2, 1},   {2048, 2048, 1, 25, 256, 2, 1, 2, 1},
        {2048, 2048, 1, 0, 256, 2, 0, 2, 2},   {2048, 2048, 1, 37, 256, 2, 0, 2, 2},
    };
    for (const auto &k : few52)
        check_bwd_cfg(k.rows, k.cols, k.res, 0, RMSI_PATH_REG, k.tpr, k.nv, k.lean, k.cl, k.hbm, 4, k.rpc);
    /* ... and without clusters (before sm_90) the fp32 rules keep the
     * ladder's configs: 4 vectors of 256 threads at 4096 columns, two rows a
     * CTA at 2048 under 16 rows an SM, 4 vectors of 128 from 64 */
    static const struct {
        int64_t rows, cols;
        int tpr, nv, rpc;
    } nocl52[] = {{512, 4096, 256, 4, 1}, {2048, 2048, 256, 2, 2}, {16384, 2048, 128, 4, 1}};
    for (const auto &k : nocl52) {
        rmsi_shape s = h200_bwd(k.rows, k.cols, 0, 0, 0);
        rmsi_config c;
        s.esz = 4;
        rmsi_ladder(&s, &c);
        CHECK(c.path == RMSI_PATH_REG && c.tpr == k.tpr && c.nv == k.nv && c.rpc == k.rpc && c.lean == 0 &&
                  c.cl == 1 && rmsi_config_valid(&s, &c),
              "bwd fp32 %lldx%lld without clusters: tpr %d nv %d rpc %d lean %d cl %d, expected tpr %d nv %d rpc %d",
              (long long)k.rows, (long long)k.cols, c.tpr, c.nv, c.rpc, c.lean, c.cl, k.tpr, k.nv, k.rpc);
    }

    /* Session 51: fp32 backward rows of 1025-2048 vectors without a residual
     * gradient take the register path from 2.5 rows an SM (330 at 132 SMs;
     * clusters of 2 under 31 rows an SM), on any device; with a residual
     * gradient, under it and above 2048 vectors the multi-pass kernel. rows,
     * cols, residual gradient, HBM GB/s an SM, then path, tpr, cl. */
    static const struct {
        int64_t rows, cols;
        int res, hbm, path, tpr, cl;
    } f32wide[] = {
        {330, 8192, 0, 0, RMSI_PATH_REG, 512, 2},
        {330, 5120, 0, 25, RMSI_PATH_REG, 320, 2},
        {65536, 4104, 0, 0, RMSI_PATH_REG, 288, 1}, /* 1026 vectors: 257 threads of 4, a whole warp more */
        {65536, 6144, 0, 37, RMSI_PATH_REG, 384, 1},
        {329, 8192, 0, 0, RMSI_PATH_MULTI, 512, 1},
        {264, 4224, 0, 25, RMSI_PATH_MULTI, 512, 1},
        {4096, 8192, 1, 0, RMSI_PATH_MULTI, 512, 1},
        {4096, 8320, 0, 0, RMSI_PATH_MULTI, 512, 1},
    };
    for (const auto &k : f32wide)
        check_bwd_cfg(k.rows, k.cols, k.res, 0, k.path, k.tpr, 4, 0, k.cl, k.hbm, 4);

    check_bwd(16384, 2048, 1, 2, 6, 792, 128, 1); /* 396 partial rows, 6 CTAs an SM */
    check_bwd(16384, 2048, 0, 1, 6, 528, 128, 1); /* no clusters: cap 544 -> 4 an SM */
    check_bwd(4096, 4096, 1, 2, 4, 528, 256, 1);  /* lean: 4 CTAs an SM, 264 partial rows */
    check_bwd(4096, 2048, 1, 2, 4, 512, 128, 2);  /* S19: lean, two rows a CTA (512 of 4 pairs) */
    check_bwd_lean(4096, 4096, 0, 0, 1, 2);
    check_bwd_lean(4092, 4096, 0, 0, 1, 2); /* 31 rows an SM */
    check_bwd_lean(4091, 4096, 0, 0, 1, 2); /* S19: the lean kernel from 7.75 rows an SM */
    check_bwd_lean(1023, 4096, 0, 0, 1, 2);
    check_bwd_lean(1022, 4096, 0, 0, 0, 1); /* one vector a thread (S15) */
    check_bwd_lean(2048, 4096, 1, 0, 0, 2); /* residual gradient: S10's 128 x 4 */
    check_bwd_lean(2048, 4096, 0, 1, 0, 2); /* fp16: S10's 128 x 4 */
    check_bwd_lean(8192, 4096, 0, 0, 1, 2);
    check_bwd_lean(6336, 2048, 0, 0, 1, 2); /* 48 rows an SM (128 threads: clusters already) */
    check_bwd_lean(6335, 2048, 0, 0, 1, 2); /* S19: two rows a CTA from 10 rows an SM */
    check_bwd_lean(1320, 2048, 0, 0, 1, 2);
    check_bwd_lean(1319, 2048, 0, 0, 0, 1); /* one vector a thread (S15) */
    check_bwd_lean(16384, 2048, 0, 0, 1, 2);
    check_bwd_lean(16384, 2048, 1, 0, 0, 2); /* residual gradient: not measured, unchanged */
    check_bwd_lean(65536, 8192, 0, 0, 0, 1); /* 4 vectors */
    /* S20: the lean kernel at 8192 (clusters of 2) and 5120 columns (none),
     * from 7.75 rows an SM to under 125; S21: to under 256 */
    check_bwd_lean(1023, 8192, 0, 0, 1, 2);
    check_bwd_lean(1022, 8192, 0, 0, 0, 1); /* 4 vectors, as before */
    check_bwd_lean(16500, 8192, 0, 0, 1, 2);
    check_bwd_lean(32768, 8192, 0, 0, 1, 2);
    check_bwd_lean(33791, 8192, 0, 0, 1, 2);
    check_bwd_lean(33792, 8192, 0, 0, 0, 1);
    check_bwd_lean(4096, 8192, 1, 0, 0, 1); /* residual gradient: not measured, unchanged */
    check_bwd_lean(4096, 8192, 0, 1, 0, 1); /* fp16: unchanged */
    check_bwd_lean(1024, 5120, 0, 0, 1, 1);
    check_bwd_lean(1022, 5120, 0, 0, 0, 1);
    check_bwd_lean(16500, 5120, 0, 0, 1, 1);
    check_bwd_lean(33791, 5120, 0, 0, 1, 1);
    check_bwd_lean(33792, 5120, 0, 0, 0, 1);
    check_bwd_lean(4096, 4096, 0, 1, 0, 1); /* fp16: no lean kernel, no clusters with it */
    /* session 15 (S15-3, S15-4): 64-512 16-bit vectors under 10 rows an SM
     * (512 vectors from 3 an SM), one vector a thread (no clusters) */
    check_bwd(1024, 4096, 1, 2, 4, 512, 256, 1);  /* S19: lean, 512 CTAs of 2 rows */
    check_bwd(1024, 4096, 0, 1, 2, 256, 512, 1);  /* no clusters: S15's, 256 CTAs of 4 rows (S17-4) */
    check_bwd(1024, 2048, 1, 1, 4, 512, 256, 1);  /* 512 of 2 */
    check_bwd(1024, 1024, 1, 1, 6, 528, 128, 1);
    check_bwd(1024, 512, 1, 1, 6, 264, 64, 2);
    check_bwd(1319, 4096, 1, 2, 4, 528, 256, 1);  /* 9.99 rows an SM */
    check_bwd(396, 4096, 1, 1, 2, 264, 512, 1);   /* 3 an SM (198 of 2 lost 11%, S17-6) */
    check_bwd(395, 4096, 1, 2, 1, 132, 256, 2);   /* under 3: two rows a CTA, as before */
    check_bwd(1320, 2048, 1, 2, 4, 528, 128, 2);  /* 10 an SM: S19's two rows a CTA */
    check_bwd(1320, 2048, 0, 1, 4, 528, 128, 1);  /* no clusters: 2 vectors (440 of 3: a sixth lost) */
    check_bwd(32768, 8192, 1, 2, 2, 264, 512, 1); /* S21: lean 512 x 2, 2 CTAs an SM */
    check_bwd(32768, 8192, 0, 1, 2, 264, 256, 1); /* no clusters: 4 vectors */
    check_bwd(65536, 8192, 1, 1, 2, 264, 256, 1); /* 4 vectors */
    check_bwd(4096, 8192, 1, 2, 2, 264, 512, 1);  /* S20: lean 512 x 2, 2 CTAs an SM */
    check_bwd(4096, 8192, 0, 1, 2, 264, 256, 1);  /* no clusters: 4 vectors, as before */
    check_bwd(1024, 8192, 1, 2, 2, 256, 512, 1);  /* 256 of 4 rows (S17-4) */
    check_bwd(1023, 5120, 1, 1, 2, 256, 512, 1);  /* S20: 512 x 2 under 15.5 rows an SM */
    check_bwd(1023, 5120, 0, 1, 3, 396, 320, 1);  /* no clusters (not sm_90): unchanged, 320 x 2 */
    check_bwd(2046, 5120, 1, 1, 3, 396, 320, 1);  /* S20: 320 x 2 from 15.5, 3 CTAs an SM */
    check_bwd(2045, 5120, 1, 1, 2, 264, 512, 1);
    /* session 10 (S10-5, S10-6): 4096 16-bit columns at 10..16 rows an SM,
     * 128 x 4; since S19 only without clusters, for fp16 or with a residual
     * gradient (bf16 takes the lean 256 x 2 with clusters) */
    check_bwd(2048, 4096, 1, 2, 4, 512, 256, 1);  /* S19: lean 256 x 2, 512 of 4 */
    check_bwd(2048, 4096, 0, 1, 4, 512, 128, 1);  /* no clusters: 128 x 4 */
    check_bwd(1536, 4096, 1, 2, 4, 512, 256, 1);  /* 512 of 3, not 528 (S17-6) */
    check_bwd(600, 4096, 1, 1, 2, 264, 512, 1);   /* 200 of 3 would lose a quarter: kept */
    check_bwd(1320, 4096, 1, 2, 4, 528, 256, 1);
    check_bwd(2112, 4096, 1, 2, 4, 528, 256, 1);
    check_bwd(2048, 3072, 1, 1, 3, 396, 192, 1);

    /* session 7 (S7-4, S7-5): from 64 rows an SM without fp8 output the
     * default cache policy; a fused add of 1024 vectors at 2 vectors;
     * fp8 keeps its own rule */
    check_rule_no_hout(32768, 8192, 2);
    check_rule_no_hout(65536, 4096, 4);
    check_rule(RMSI_OP_FWD, 16384, 4096, 4, RMSI_Q_NONE, 0, 4, 0); /* fp32; 16-bit rows: session 29's lean rule */
    check_fwd_lean_quant(32768, 8192, 128, 2, 128, 0); /* S28-1, S28-2; S34-1 */
    /* session 13 (S13-4, S13-6): fewer rows too, fused add, fp8 output or
     * neither */
    check_rule(RMSI_OP_FWD, 4096, 2048, 4, RMSI_Q_NONE, 0, 4, 0); /* fp32; 16-bit 4096x4096: the lean kernel (S29) */
    check_rule_no_hout(4096, 4096, 4);
    check_rule(RMSI_OP_FWD, 1024, 512, 2, RMSI_Q_NONE, 0, 2, 0);
    check_rule(RMSI_OP_FWD, 2048, 512, 2, RMSI_Q_BLOCK, 0, 2, 0);
    /* 64 vectors with block fp8 or a fused add storing h (S37-2, S37-3):
     * one vector and two rows a CTA at 4-11 rows an SM, sixteen rows of
     * two vectors at 31-61; the plain forward and the rows between keep
     * two vectors and four rows */
    check_fwd_shape(1024, 512, RMSI_Q_BLOCK, 0, 64, 2, 1);
    check_fwd_shape(528, 512, RMSI_Q_BLOCK, 1, 64, 2, 1);
    check_fwd_shape(1583, 512, RMSI_Q_NONE, 1, 64, 2, 1);
    check_fwd_shape(1584, 512, RMSI_Q_BLOCK, 0, 32, 4, 2);
    check_fwd_shape(4091, 512, RMSI_Q_BLOCK, 0, 32, 4, 2);
    check_fwd_shape(4092, 512, RMSI_Q_BLOCK, 0, 32, 16, 2);
    check_fwd_shape(8183, 512, RMSI_Q_NONE, 1, 32, 16, 2);
    check_fwd_shape(8184, 512, RMSI_Q_BLOCK, 0, 32, 4, 2);
    check_fwd_shape(4096, 512, RMSI_Q_NONE, 0, 32, 4, 2);
    check_fwd_shape(4096, 1024, RMSI_Q_BLOCK, 0, 64, 1, 2); /* 128 vectors: not this rule */
    check_rule(RMSI_OP_FWD, 1, 2048, 2, RMSI_Q_TOKEN, 1, 1, 0);
    /* session 15 (S15-2..S15-4): session 12's exception (the weights after
     * the reduction for 16-bit rows of 640+ vectors, not a power of two,
     * from 64 rows an SM) kept above 768 vectors only */
    /* (16-bit widths in multiples of 128 vectors take the lean kernel there
     * since session 29: these are the others) */
    check_fwd_stage(16384, 5184, 2, 0, 1);
    check_fwd_stage(16384, 6136, 2, 0, 1);
    check_fwd_stage(8448, 7232, 2, 0, 0);
    check_fwd_stage(8447, 7232, 2, 0, 1); /* 63.99 rows an SM */
    check_fwd_stage(4096, 5184, 2, 0, 1);
    check_fwd_stage(16384, 3072, 2, 0, 1);
    check_fwd_stage(4091, 8192, 2, 0, 1); /* from 31 rows an SM the lean kernel (session 29) */
    check_fwd_lean_fused_cache(16384, 5120, 512, 1); /* fused add: the lean kernel since session 31 */
    check_fwd_stage(16384, 5120, 4, 0, 1); /* fp32 (1280 vectors): not measured, unchanged */
    /* session 15 (S15-3): <= 64 vectors at 3/4 to 3 rows an SM, one warp a
     * row (two vectors); 512 vectors at 128+ rows an SM, two rows a CTA */
    check_fwd_shape(96, 512, RMSI_Q_NONE, 0, 64, 1, 1);
    check_fwd_shape(99, 512, RMSI_Q_NONE, 0, 32, 4, 2);
    check_fwd_shape(256, 512, RMSI_Q_NONE, 0, 32, 4, 2);
    check_fwd_shape(395, 512, RMSI_Q_NONE, 0, 32, 4, 2);
    check_fwd_shape(396, 512, RMSI_Q_NONE, 0, 64, 1, 1);
    check_fwd_shape(256, 512, RMSI_Q_NONE, 1, 64, 1, 1); /* fused add: not measured, unchanged */
    /* plain forwards of 256 16-bit vectors at 3.25-32 rows an SM: two
     * vectors of 128 threads (S44); one of 256 below, four of 64 above */
    check_fwd_shape(428, 2048, RMSI_Q_NONE, 0, 256, 1, 1);
    check_fwd_shape(429, 2048, RMSI_Q_NONE, 0, 128, 1, 2);
    check_fwd_shape(1024, 2048, RMSI_Q_NONE, 0, 128, 1, 2);
    check_fwd_shape(4223, 2048, RMSI_Q_NONE, 0, 128, 1, 2);
    check_fwd_shape(4224, 2048, RMSI_Q_NONE, 0, 64, 1, 4);
    check_fwd_shape_esz(1024, 1024, 4, RMSI_Q_NONE, 0, 64, 1, 4); /* fp32 rows of 256 vectors: not measured */
    /* the two-row CTAs of 512 vectors are left to fp32 rows of 2048 columns:
     * 16-bit rows of 4096 take the lean kernel there since session 29 */
    check_fwd_shape_esz(32768, 2048, 4, RMSI_Q_NONE, 0, 128, 2, 4);
    check_fwd_shape_esz(16896, 2048, 4, RMSI_Q_NONE, 0, 128, 2, 4); /* 128 an SM */
    check_fwd_shape_esz(16895, 2048, 4, RMSI_Q_NONE, 0, 128, 1, 4);
    check_fwd_block(923, 4096, 1, 0, 2, 256, 0, 5); /* with y under 7 rows an SM: the lean kernel since S38 */
    /* the 48-register lean kernel (S34-1) from 31 rows an SM, with y too to
     * 1024 vectors; with y at 512 vectors without the L1 hints (S35-2), and
     * at 640 (S37-2); without y 64 threads at 512 and 640 vectors (S37-2) */
    check_fwd_lean_quant_y(32768, 4096, 64, 2, 128, 0, 1);
    check_fwd_lean_quant_y(4092, 4096, 128, 2, 128, 0, 1);
    check_fwd_lean_quant_y(16368, 4096, 64, 2, 128, 0, 1); /* 64 threads at 512 vectors from 124 rows an SM */
    check_fwd_lean_quant_y(16367, 4096, 128, 2, 128, 0, 1);
    check_fwd_block(16384, 5120, 0, 0, 2, 64, 0, 4); /* cache = 4 at 31-247 rows an SM (S38-2) */
    check_fwd_block(16384, 5120, 1, 0, 2, 128, 0, 1);
    check_fwd_block(4092, 5120, 0, 0, 2, 64, 0, 4);
    check_fwd_block(32735, 5120, 0, 0, 2, 64, 0, 4);
    check_fwd_lean_quant(4096, 8192, 128, 2, 128, 0);
    /* without y to 1024 vectors the 48-register kernel from 16 rows an SM
     * (S35-2), the 32-register one (S28-1, S28-2) below */
    check_fwd_lean_quant(4091, 4096, 128, 2, 128, 0);
    check_fwd_lean_quant(4091, 8192, 128, 2, 256, 0);
    check_fwd_lean_quant(2112, 8192, 128, 2, 256, 0);
    check_fwd_lean_quant(2111, 8192, 256, 1, 256, 0);
    check_fwd_lean_quant(2111, 4096, 256, 1, 128, 0);
    check_fwd_lean_quant(264, 4096, 256, 1, 256, 0); /* with y: the 48-register kernel since S38 */
    check_fwd_lean_quant_y(32768, 5120, 64, 2, 128, 0, 1);
    check_fwd_lean_quant(32768, 6144, 128, 2, 128, 0);
    check_fwd_lean_quant(4091, 5120, 128, 2, 128, 0); /* 64 threads from 31 rows an SM only */
    /* with y at 7-30 rows an SM (S37-2): the 48-register kernel, cache = 5,
     * 64 threads at 640 vectors under 8 rows an SM */
    check_fwd_block(1024, 5120, 1, 0, 2, 64, 0, 5);
    check_fwd_block(1056, 5120, 1, 0, 2, 128, 0, 5);
    check_fwd_lean_quant(1024, 8192, 256, 1, 256, 0);
    check_fwd_block(923, 8192, 1, 0, 2, 256, 0, 5); /* under 7 rows an SM: S38's table */
    /* session 38's table (rmsi_fwd_block_table), its edges. Without y, 640
     * vectors: 256 threads, cache = 4 at 1.5-2.9 rows an SM; the 32-register
     * kernel at 6-7.9, the 48-register one at 8-15.9, 128 threads, cache = 4 */
    check_fwd_block(197, 5120, 0, 0, -1, 320, 2, 0);
    check_fwd_block(198, 5120, 0, 0, 2, 256, 0, 4);
    check_fwd_block(395, 5120, 0, 0, 2, 256, 0, 4);
    check_fwd_block(396, 5120, 0, 0, 1, 256, 0, 1);
    check_fwd_block(791, 5120, 0, 0, 1, 256, 0, 1);
    check_fwd_block(792, 5120, 0, 0, 1, 128, 0, 4);
    check_fwd_block(1055, 5120, 0, 0, 1, 128, 0, 4);
    check_fwd_block(1056, 5120, 0, 0, 2, 128, 0, 4);
    check_fwd_block(2111, 5120, 0, 0, 2, 128, 0, 4);
    check_fwd_block(2112, 5120, 0, 0, 2, 128, 0, 5);
    check_fwd_block(32736, 5120, 0, 0, 2, 64, 0, 5);
    check_fwd_block(198, 5120, 0, 1, -1, 320, 2, 0); /* add + block: not taken */
    /* with y under 7 rows an SM: 256 threads (128 at 640 vectors from 3
     * rows an SM), cache = 5; 1024 vectors from 3 rows an SM */
    check_fwd_block(197, 4096, 1, 0, -1, 512, 1, 0);
    check_fwd_block(198, 4096, 1, 0, 2, 256, 0, 5);
    check_fwd_block(924, 4096, 1, 0, 2, 128, 0, 5);
    check_fwd_block(198, 5120, 1, 0, 2, 256, 0, 5);
    check_fwd_block(395, 5120, 1, 0, 2, 256, 0, 5);
    check_fwd_block(396, 5120, 1, 0, 2, 128, 0, 5);
    check_fwd_block(923, 5120, 1, 0, 2, 128, 0, 5);
    check_fwd_block(924, 5120, 1, 0, 2, 64, 0, 5);
    check_fwd_block(395, 8192, 1, 0, -1, 512, 2, 0);
    check_fwd_block(396, 8192, 1, 0, 2, 256, 0, 5);
    check_fwd_block(396, 2048, 1, 0, -1, 256, 1, 0); /* 256 vectors with y: from 7 rows an SM */
    /* add + block, h stored, y or not, 640 vectors at 1.75-1.99 rows an SM:
     * the lean kernel at 256 threads, cache = 1 (S44); the register path's
     * 320 x 2 on either side */
    check_fwd_block(230, 5120, 0, 1, -1, 320, 2, 0);
    check_fwd_block(231, 5120, 0, 1, 1, 256, 0, 1);
    check_fwd_block(263, 5120, 0, 1, 1, 256, 0, 1);
    check_fwd_block(264, 5120, 0, 1, -1, 320, 2, 0);
    check_fwd_block(230, 5120, 1, 1, -1, 320, 2, 0);
    check_fwd_block(231, 5120, 1, 1, 1, 256, 0, 1);
    check_fwd_block(263, 5120, 1, 1, 1, 256, 0, 1);
    check_fwd_block(264, 5120, 1, 1, -1, 320, 2, 0);
    /* without y: 1024 vectors at 1-32 rows, the lean kernel at 512 threads
     * without hints; 64 vectors from 372 rows an SM, 16 threads of 4 vectors,
     * 16 rows a CTA (S38-3) */
    check_fwd_block(1, 8192, 0, 0, 1, 512, 0, 0);
    check_fwd_block(32, 8192, 0, 0, 1, 512, 0, 0);
    check_fwd_block(33, 8192, 0, 0, -1, 512, 2, 0);
    check_fwd_block(1, 8192, 1, 0, -1, 512, 2, 0);
    check_fwd_block(49104, 512, 0, 0, -1, 16, 4, 0);
    check_fwd_block(198, 512, 0, 0, -1, 64, 1, 1); /* 1.5-2.9 rows an SM: four rows a CTA, cache = 1 */
    check_fwd_block(395, 512, 1, 0, -1, 64, 1, 1);
    check_fwd_block(197, 512, 1, 0, -1, 64, 1, 0);
    check_fwd_block(396, 512, 0, 0, -1, 64, 1, 0);
    check_fwd_block(49103, 512, 0, 0, -1, 32, 2, 0);
    check_fwd_block(65536, 512, 1, 0, -1, 32, 2, 0);
    {
        rmsi_shape s = h200_shape(RMSI_OP_FWD, 98304, 512, 2, RMSI_Q_BLOCK, 0);
        rmsi_config c;
        s.yout = 0;
        rmsi_ladder(&s, &c);
        CHECK(c.rpc == 16 && c.cps == 0, "fwd block fp8 without y 98304x512: rpc %d cps %d, expected 16 rows a CTA",
              c.rpc, c.cps);
    }
    check_fwd_lean_quant(923, 6144, 256, 1, 0, 4); /* 768 vectors: not measured */
    /* with y above 1024 vectors: multiples of 256 from 62 rows an SM, 256
     * threads, cache = 1 to 1536 vectors (S34-5) */
    check_fwd_lean_quant(8192, 9216, 256, 2, 0, 4); /* 1152 vectors: y on the register path */
    check_fwd_lean_quant_y(8192, 12288, 256, 2, 256, 0, 1);
    check_fwd_lean_quant_y(8184, 10240, 256, 2, 256, 0, 1);
    check_fwd_lean_quant(8183, 12288, 256, 2, 0, 4);
    check_fwd_lean_quant(8192, 16384, 256, 2, 256, 0);
    check_fwd_lean_quant(4092, 16384, 256, 2, 0, 4);
    check_fwd_lean_quant(4091, 16384, 512, 1, 0, 4);
    check_rule(RMSI_OP_FWD, 197, 4096, 2, RMSI_Q_BLOCK, 0, 1, 0);    /* under 1.5 rows an SM */
    check_fwd_shape(32768, 4096, RMSI_Q_TOKEN, 0, 128, 1, 4);       /* per-token fp8: not measured, unchanged */
    /* 256 vectors: the 48-register kernel at 64 threads (S35-2, S35-3),
     * without y from 31 rows an SM and 128 threads at 3-30 (S38-2), with y
     * from 124 rows an SM and 128 threads, cache = 4 at 7-123 (S38-2); the
     * register path below (S28-2) */
    check_fwd_lean_quant(65536, 2048, 64, 2, 64, 0);
    check_fwd_block(16368, 2048, 1, 0, 2, 64, 0, 5);
    check_fwd_block(16367, 2048, 1, 0, 2, 128, 0, 4);
    check_fwd_block(8184, 2048, 0, 0, 2, 64, 0, 5);
    check_fwd_block(8184, 2048, 1, 0, 2, 128, 0, 4);
    check_fwd_block(4092, 2048, 0, 0, 2, 64, 0, 5);
    check_fwd_block(4091, 2048, 0, 0, 2, 128, 0, 5);
    check_fwd_block(924, 2048, 1, 0, 2, 128, 0, 4);
    check_fwd_block(396, 2048, 0, 0, 2, 128, 0, 5);
    check_rule(RMSI_OP_FWD, 923, 2048, 2, RMSI_Q_BLOCK, 0, 2, 0);
    check_fwd_block(395, 2048, 0, 0, -1, 256, 1, 0);
    /* add + block fp8 without y, h stored, 256 vectors: the lean kernel at
     * 128 threads from 16 rows an SM (S38-2) */
    check_fwd_block(2111, 2048, 0, 1, -1, 128, 2, 0);
    check_fwd_block(2112, 2048, 0, 1, 1, 128, 0, 5);
    check_fwd_block(65536, 2048, 0, 1, 1, 128, 0, 5);
    check_fwd_block(65536, 2048, 1, 1, -1, 128, 2, 0); /* with y: not taken */
    /* add + block, 512 vectors, 3-3.9 rows an SM: 256 threads, 2 vectors */
    check_fwd_block(395, 4096, 0, 1, -1, 512, 1, 0);
    check_fwd_block(396, 4096, 0, 1, -1, 256, 2, 0);
    check_fwd_block(527, 4096, 1, 1, -1, 256, 2, 0);
    check_fwd_block(395, 4096, 1, 1, -1, 512, 1, 0);
    check_fwd_shape(32768, 2048, RMSI_Q_NONE, 0, 64, 1, 4);
    /* session 30 (S30-2): under a row an SM, 512 16-bit vectors, 2 vectors
     * of 256 threads; 1024 vectors, fusions and fp32 rows as before */
    check_fwd_shape(1, 4096, RMSI_Q_NONE, 0, 256, 1, 2);
    check_fwd_shape(131, 4096, RMSI_Q_NONE, 0, 256, 1, 2);
    check_fwd_shape(1, 8192, RMSI_Q_NONE, 0, 512, 1, 2);
    check_fwd_shape(32, 4096, RMSI_Q_NONE, 1, 512, 1, 1);
    check_fwd_shape(32, 4096, RMSI_Q_BLOCK, 0, 512, 1, 1);
    check_fwd_shape_esz(32, 2048, 4, RMSI_Q_NONE, 0, 512, 1, 1);

    /* wide 16-bit rows: session 24's forward (S24-2, S24-3: the lean
     * two-pass kernel from 2 rows an SM, plain and fused add), session 23's
     * under it (S23-1..S23-4: plain rows of 2048-8192 vectors split over a
     * cluster, odd vector counts and the rest multi-pass at 512 threads with
     * the L2 hints, fp8 output only to 8192 vectors) and session 22's
     * backward (S22-4, S22-5: 1024 threads from 4096 to 8192 vectors) */
    check_fwd_lean(4096, 16392, RMSI_Q_NONE, 0);
    check_fwd_lean(2048, 32776, RMSI_Q_NONE, 0);
    check_fwd_lean(4096, 32768, RMSI_Q_NONE, 0);
    check_fwd_lean(8192, 32768, RMSI_Q_NONE, 0);
    check_fwd_lean(4096, 32776, RMSI_Q_NONE, 0); /* 4097 vectors: cache = 5 (S28-4) */
    check_fwd_lean(2048, 65536, RMSI_Q_NONE, 0);
    check_fwd_lean(1024, 131072, RMSI_Q_NONE, 0);
    check_fwd_lean(512, 262144, RMSI_Q_NONE, 0);
    check_fwd_lean(264, 262144, RMSI_Q_NONE, 0);
    check_fwd_lean(4096, 32768, RMSI_Q_NONE, 1);
    check_fwd_lean(512, 262144, RMSI_Q_NONE, 1);
    check_rule(RMSI_OP_FWD, 4091, 16384, 2, RMSI_Q_NONE, 0, 4, 0); /* under 31 rows an SM: not lean */
    check_fwd_lean(8192, 16384, RMSI_Q_NONE, 1);                    /* but the fused add is (S25-2) */
    check_fwd_lean(264, 16384, RMSI_Q_NONE, 1);
    check_fwd_lean(16384, 16384, RMSI_Q_NONE, 1);
    check_rule(RMSI_OP_FWD, 263, 16384, 2, RMSI_Q_NONE, 1, 4, 0);   /* under 2 rows an SM */
    check_rule(RMSI_OP_FWD, 8192, 16376, 2, RMSI_Q_NONE, 1, 4, 0);  /* 2047 vectors */
    check_fwd_lean_fused(8192, 12288, 1024); /* S26-3 */
    check_fwd_lean_fused(32768, 8192, 512);
    check_fwd_lean_fused(264, 8192, 512);
    check_fwd_lean_fused(65536, 4096, 256);
    check_rule(RMSI_OP_FWD, 263, 8192, 2, RMSI_Q_NONE, 1, 2, 0);   /* under 2 rows an SM */
    check_fwd_lean_plain(32768, 8192, 512); /* S29-1, S29-2 */
    check_fwd_lean_plain(4092, 8192, 512);  /* 31 rows an SM */
    check_fwd_lean_plain(65536, 4096, 256);
    check_fwd_lean_plain(4096, 4096, 256);
    check_fwd_lean_plain(16384, 5120, 320);
    check_fwd_lean_plain(8192, 12288, 512);
    check_fwd_lean_plain(8192, 16384, 512);
    check_fwd_lean_plain(8192, 6144, 384); /* 768 vectors: not measured */
    check_rule(RMSI_OP_FWD, 4091, 8192, 2, RMSI_Q_NONE, 0, 4, 0); /* under 31 rows an SM */
    check_rule(RMSI_OP_FWD, 8192, 4608, 2, RMSI_Q_NONE, 0, 4, 0); /* 576 vectors: not a multiple of 128 */
    check_fwd_shape(32768, 2048, RMSI_Q_NONE, 0, 64, 1, 4);       /* 256 vectors: the register path */
    check_fwd_res_no_hout();
    /* clusters (session 31): plain rows under 2 rows an SM in clusters of 8,
     * 2 vectors a thread up to 256 threads or while the clusters fit one wave
     * (else 4, staged), and 2048-vector rows under an eighth of a row an SM;
     * the fusions and fp8 output from 2048 vectors to half a row an SM,
     * above a quarter 4 vectors, or clusters of 4 (2048 with fp8 output) */
    static const struct {
        int64_t rows, cols;
        int quant, res, cl, tpr, nv;
    } cl31[] = {
        {65, 32768, RMSI_Q_NONE, 0, 8, 256, 2},
        {1, 32768, RMSI_Q_NONE, 0, 8, 256, 2},
        {87, 24576, RMSI_Q_NONE, 0, 8, 192, 2},
        {16, 65536, RMSI_Q_NONE, 0, 8, 512, 2},
        {17, 65536, RMSI_Q_NONE, 0, 8, 256, 4},
        {32, 65536, RMSI_Q_NONE, 0, 8, 256, 4},
        {1, 16384, RMSI_Q_NONE, 0, 8, 128, 2},
        {16, 16384, RMSI_Q_NONE, 0, 8, 128, 2},
        {1, 16384, RMSI_Q_TOKEN, 1, 8, 128, 2},
        {33, 16384, RMSI_Q_BLOCK, 0, 8, 128, 2},
        {33, 16384, RMSI_Q_NONE, 1, 8, 128, 2},
        {66, 16384, RMSI_Q_TENSOR, 0, 4, 256, 2},
        {1, 32768, RMSI_Q_BLOCK, 1, 8, 256, 2},
        {33, 65536, RMSI_Q_NONE, 1, 8, 256, 4},
        {1, 65536, RMSI_Q_NONE, 1, 8, 512, 2},
        {16, 65536, RMSI_Q_BLOCK, 1, 8, 512, 2},
        {17, 65536, RMSI_Q_TOKEN, 0, 8, 256, 4},
        {1, 24576, RMSI_Q_TOKEN, 0, 8, 192, 2},
        {33, 24576, RMSI_Q_NONE, 1, 8, 192, 2},
        {34, 24576, RMSI_Q_BLOCK, 1, 8, 96, 4},
        {1, 24608, RMSI_Q_NONE, 0, 4, 416, 2}, /* 3076 vectors: clusters of 4 (session 32: 2 vectors) */
        {33, 24608, RMSI_Q_NONE, 0, 4, 416, 2},
        {40, 24608, RMSI_Q_NONE, 0, 4, 224, 4},
        {1, 32736, RMSI_Q_NONE, 0, 4, 512, 2},
        {1, 65504, RMSI_Q_NONE, 0, 4, 512, 4}, /* 8188 vectors: 2 would need 1024 threads */
        /* session 32: 8193-16384 vectors to 3/8 of a row an SM, a fused add alone to 3/16 */
        {1, 131072, RMSI_Q_NONE, 0, 8, 512, 4},
        {49, 131072, RMSI_Q_NONE, 0, 8, 512, 4},
        {1, 98304, RMSI_Q_NONE, 0, 8, 384, 4},
        {49, 81920, RMSI_Q_NONE, 0, 8, 320, 4},
        {24, 131072, RMSI_Q_NONE, 1, 8, 512, 4},
        {49, 131072, RMSI_Q_BLOCK, 1, 8, 512, 4},
        {49, 131072, RMSI_Q_TOKEN, 0, 8, 512, 4},
        {1, 131072, RMSI_Q_TENSOR, 1, 8, 512, 4},
    };
    for (const auto &k : cl31)
        check_fwd_cl(k.rows, k.cols, 2, k.quant, k.res, k.cl, k.tpr, k.nv);
    /* plain 4-vector clusters staged, a fused add's not; where the clusters
     * stop: the lean kernel from 2048 vectors an SM, wider rows, 2048-vector
     * plain rows from 17 rows, 1536 vectors, a fused add of 2048 vectors
     * above a quarter of a row an SM, the fusions above a half */
    check_fwd_stage(32, 65536, 2, 0, 1);
    check_fwd_lean(66, 32768, RMSI_Q_NONE, 0);
    check_fwd_lean(263, 32768, RMSI_Q_NONE, 0);
    check_fwd_lean(88, 24576, RMSI_Q_NONE, 0);
    check_fwd_lean(33, 65536, RMSI_Q_NONE, 0);
    check_fwd_lean(100, 24608, RMSI_Q_NONE, 0);
    /* the lean kernel under 2 rows an SM (session 32): rows clusters do not
     * split, wider rows above the clusters' rows, 262144 columns, the
     * fusions above the clusters' rows (512 threads from one to 1.875 rows
     * an SM, 16-bit fusions only) */
    static const struct {
        int64_t rows, cols;
        int quant, res, tpr;
    } lean32[] = {
        {1, 24608, RMSI_Q_NONE, 1, 1024},  /* a fused add that does not split in 8 */
        {1, 65528, RMSI_Q_NONE, 0, 1024},  /* nor in 4 */
        {1, 24704, RMSI_Q_BLOCK, 0, 1024}, /* slices of 3088 columns: not whole blocks */
        {50, 131072, RMSI_Q_NONE, 0, 1024},
        {25, 131072, RMSI_Q_NONE, 1, 1024},
        {50, 131072, RMSI_Q_BLOCK, 1, 1024},
        {1, 262144, RMSI_Q_NONE, 0, 1024},
        {263, 262144, RMSI_Q_NONE, 1, 1024},
        {1, 262144, RMSI_Q_BLOCK, 0, 1024},
        {263, 262144, RMSI_Q_BLOCK, 0, 1024},
        {1, 131080, RMSI_Q_NONE, 0, 1024}, /* 16385 vectors */
        {34, 32768, RMSI_Q_NONE, 1, 1024},
        {67, 32768, RMSI_Q_BLOCK, 1, 1024},
        {67, 32768, RMSI_Q_BLOCK, 0, 1024},
        {132, 65536, RMSI_Q_NONE, 1, 1024},
        {133, 32768, RMSI_Q_NONE, 1, 512},
        {247, 65536, RMSI_Q_BLOCK, 1, 512},
        {247, 24576, RMSI_Q_NONE, 1, 512},
        {248, 32768, RMSI_Q_NONE, 1, 1024},
        {200, 32768, RMSI_Q_BLOCK, 0, 1024}, /* no residual: not measured at 512 */
        {200, 32768, RMSI_Q_NONE, 0, 1024},
        {263, 32768, RMSI_Q_BLOCK, 1, 1024},
        {256, 32776, RMSI_Q_NONE, 0, 1024},
        {256, 131072, RMSI_Q_NONE, 0, 1024},
        {256, 32768, RMSI_Q_NONE, 1, 1024},
    };
    for (const auto &k : lean32)
        check_fwd_lean_at(k.rows, k.cols, k.quant, k.res, k.tpr);
    check_fwd_stage(8, 131072, 2, 0, 1);       /* staged under 65536 threads */
    check_fwd_stage(16, 131072, 2, 0, 0);
    check_fwd_stage(21, 98304, 2, 0, 1);
    check_fwd_stage(22, 98304, 2, 0, 0);
    check_fwd_stage(24, 131072, 2, 1, 0);
    /* per-token and per-tensor fp8 wider than 8192 vectors: 1024 threads,
     * cache = 1, to 2 rows an SM (session 32), then to 3 (session 33: three
     * full waves of 1024-thread CTAs); 256 threads beyond */
    static const struct {
        int64_t rows, cols;
        int quant, res, tpr, cache;
    } tok[] = {
        {50, 131072, RMSI_Q_TOKEN, 0, 1024, 1},  {264, 262144, RMSI_Q_TOKEN, 1, 1024, 1},
        {50, 131072, RMSI_Q_TENSOR, 0, 1024, 1}, {265, 131072, RMSI_Q_TOKEN, 0, 1024, 1},
        {396, 98304, RMSI_Q_TOKEN, 0, 1024, 1},  {396, 131072, RMSI_Q_TENSOR, 0, 1024, 1},
        {300, 131072, RMSI_Q_TOKEN, 1, 1024, 1}, {397, 131072, RMSI_Q_TOKEN, 0, 256, 0},
        {397, 98304, RMSI_Q_TENSOR, 0, 256, 0},
    };
    for (const auto &k : tok)
        check_multi(RMSI_OP_FWD, k.rows, k.cols, 2, k.quant, k.res, k.tpr, k.cache);
    /* fp32 rows wider than a CTA take the same rules (S32-3); with fp8 output not measured */
    check_fwd_cl(1, 65536, 4, RMSI_Q_NONE, 0, 8, 512, 4);
    check_fwd_cl(1, 16384, 4, RMSI_Q_NONE, 0, 8, 256, 2);
    check_fwd_cl(32, 32768, 4, RMSI_Q_NONE, 1, 8, 256, 4);
    check_fwd_stage(32, 32768, 4, 0, 1);
    check_fwd_stage(32, 65536, 4, 0, 0);
    check_multi(RMSI_OP_FWD, 1, 65536, 4, RMSI_Q_TOKEN, 0, 256, 0);
    check_multi(RMSI_OP_FWD, 1, 65536, 4, RMSI_Q_BLOCK, 0, 256, 0);
    check_fwd_shape_esz(1, 8192, 4, RMSI_Q_NONE, 0, 512, 1, 4); /* 2048 vectors: the register path */
    check_fwd_shape(17, 16384, RMSI_Q_NONE, 0, 512, 1, 4);
    check_fwd_shape(1, 12288, RMSI_Q_NONE, 0, 384, 1, 4);
    check_fwd_shape(34, 16384, RMSI_Q_NONE, 1, 512, 1, 4);
    check_fwd_shape(67, 16384, RMSI_Q_TOKEN, 0, 512, 1, 4);
    check_fwd_stage(33, 65536, 2, 1, 0); /* a fused add's clusters: measured at stage 0 */
    /* fused adds that store h (session 31): 512 vectors at 1.5 to 2 rows an
     * SM, 256 threads x 2; 256 and 640 vectors, the lean kernel */
    check_fwd_shape(198, 4096, RMSI_Q_NONE, 1, 256, 1, 2);
    check_fwd_shape(263, 4096, RMSI_Q_NONE, 1, 256, 1, 2);
    check_fwd_shape(197, 4096, RMSI_Q_NONE, 1, 512, 1, 1);
    check_fwd_shape(200, 4096, RMSI_Q_NONE, 0, 256, 1, 2);
    check_fwd_shape(200, 4096, RMSI_Q_TOKEN, 1, 512, 1, 1);
    check_fwd_lean_fused(495, 2048, 128);
    check_fwd_lean_fused(4091, 2048, 128);
    check_fwd_lean_fused(4092, 2048, 256);
    check_fwd_shape(494, 2048, RMSI_Q_NONE, 1, 256, 1, 1);
    check_fwd_lean_fused_cache(1023, 5120, 256, 1);
    check_fwd_lean_fused_cache(4092, 5120, 512, 1);
    check_fwd_shape(1022, 5120, RMSI_Q_NONE, 1, 160, 1, 4);
    check_fwd_shape(1024, 6144, RMSI_Q_NONE, 1, 192, 1, 4); /* 768 vectors: not measured */
    check_multi(RMSI_OP_FWD, 4096, 32768, 2, RMSI_Q_TOKEN, 0, 512, 1);
    check_multi(RMSI_OP_FWD, 512, 262144, 2, RMSI_Q_TOKEN, 0, 256, 0);
    /* the 1x128 block quantiser of wide rows: the lean kernel too (S27-2) */
    check_fwd_lean(4096, 32768, RMSI_Q_BLOCK, 1);
    check_fwd_lean(4096, 32768, RMSI_Q_BLOCK, 0);
    check_fwd_lean(8192, 24576, RMSI_Q_BLOCK, 1);
    check_fwd_lean(512, 262144, RMSI_Q_BLOCK, 1); /* and wider (S28-1) */
    check_fwd_lean(2048, 65536, RMSI_Q_BLOCK, 0);
    check_fwd_lean(1024, 131072, RMSI_Q_BLOCK, 0);
    /* register rows with a residual that stores h: the 48-register lean
     * kernel from 31 rows an SM at 512-2048 vectors in multiples of 512
     * (session 33), the register path below and at other widths */
    check_fwd_lean_at(4092, 8192, RMSI_Q_BLOCK, 1, 256);
    check_fwd_lean_at(32768, 8192, RMSI_Q_BLOCK, 1, 256);
    check_fwd_lean_at(4092, 4096, RMSI_Q_BLOCK, 1, 256);
    check_fwd_lean_at(65536, 4096, RMSI_Q_BLOCK, 1, 256);
    check_fwd_lean_at(8192, 12288, RMSI_Q_BLOCK, 1, 256);
    check_fwd_lean_at(8192, 16384, RMSI_Q_BLOCK, 1, 256);
    /* with y at 512 and 1024 vectors from 7 rows an SM (S37-2, S37-3) */
    check_fwd_lean_at(4091, 8192, RMSI_Q_BLOCK, 1, 256);
    check_fwd_lean_at(924, 4096, RMSI_Q_BLOCK, 1, 256);
    check_rule(RMSI_OP_FWD, 923, 8192, 2, RMSI_Q_BLOCK, 1, 2, 0);
    check_rule(RMSI_OP_FWD, 528, 4096, 2, RMSI_Q_BLOCK, 1, 2, 0); /* S37-3: 6.94 us, the lean kernel 7.61 */
    check_rule(RMSI_OP_FWD, 4091, 16384, 2, RMSI_Q_BLOCK, 1, 4, 0);
    /* every multiple of 128 vectors (session 34): 256 threads where they
     * share the row evenly, else 128; 128 without y at 512 vectors from
     * 248 rows an SM */
    check_fwd_lean_at(32768, 5120, RMSI_Q_BLOCK, 1, 128);
    check_fwd_lean_at(8184, 5120, RMSI_Q_BLOCK, 1, 128);
    check_rule(RMSI_OP_FWD, 8183, 5120, 2, RMSI_Q_BLOCK, 1, 2, 0); /* 128-thread widths from 62 rows an SM */
    check_fwd_lean_at(4092, 6144, RMSI_Q_BLOCK, 1, 256);
    check_fwd_lean_at(16384, 6144, RMSI_Q_BLOCK, 1, 256);
    check_fwd_lean_at(8192, 9216, RMSI_Q_BLOCK, 1, 128);
    check_fwd_lean_at(8192, 10240, RMSI_Q_BLOCK, 1, 256);
    check_rule(RMSI_OP_FWD, 4091, 5120, 2, RMSI_Q_BLOCK, 1, 2, 0);
    check_rule(RMSI_OP_FWD, 32768, 4224, 2, RMSI_Q_BLOCK, 1, 2, 0); /* 528 vectors: not a multiple of 128 */
    {
        rmsi_shape s = h200_shape(RMSI_OP_FWD, 32736, 4096, 2, RMSI_Q_BLOCK, 1);
        rmsi_config c;
        s.yout = 0;
        rmsi_ladder(&s, &c);
        CHECK(c.lean == 1 && c.tpr == 128, "fwd add + block without y 32736x4096: lean %d tpr %d, expected 128",
              c.lean, c.tpr);
        s.rows = 32735;
        rmsi_ladder(&s, &c);
        CHECK(c.lean == 1 && c.tpr == 256, "fwd add + block without y 32735x4096: lean %d tpr %d, expected 256",
              c.lean, c.tpr);
        s.rows = 65536;
        s.yout = 1;
        rmsi_ladder(&s, &c);
        CHECK(c.lean == 1 && c.tpr == 256, "fwd add + block with y 65536x4096: lean %d tpr %d, expected 256", c.lean,
              c.tpr);
    }
    check_rule(RMSI_OP_FWD, 32768, 4096, 4, RMSI_Q_BLOCK, 1, 2, 0); /* fp32 rows */
    {
        rmsi_shape s = h200_shape(RMSI_OP_FWD, 32768, 8192, 2, RMSI_Q_BLOCK, 1);
        rmsi_config c;
        s.yout = 0; /* without y: the same */
        rmsi_ladder(&s, &c);
        CHECK(c.path == RMSI_PATH_MULTI && c.lean == 1 && c.tpr == 256 && c.cache == 5,
              "fwd add + block fp8 without y 32768x8192: path %d lean %d tpr %d cache %d, expected lean 256 cache 5",
              c.path, c.lean, c.tpr, c.cache);
        s.yout = 1;
        s.hout = 0; /* without h_out the second pass would re-read x and r */
        rmsi_ladder(&s, &c);
        CHECK(c.path == RMSI_PATH_REG, "fwd add + block fp8 without h_out 32768x8192: path %d, expected the register path",
              c.path);
    }
    {
        /* lean = 2, the block quantiser at 48 registers (session 34): the
         * forward's 1x128 block fp8 of 16-bit rows, CTAs of up to 256
         * threads, residual or not; nothing else takes it */
        rmsi_shape s = h200_shape(RMSI_OP_FWD, 4096, 8192, 2, RMSI_Q_BLOCK, 0);
        rmsi_config c = {RMSI_PATH_MULTI, 16, 128, 1, 0, 0, 5, 0, 1, 2}, pin;
        CHECK(rmsi_config_valid(&s, &c), "lean=2 tpr 128 invalid for block fp8");
        c.tpr = 256;
        CHECK(rmsi_config_valid(&s, &c), "lean=2 tpr 256 invalid for block fp8");
        s.res = 1;
        CHECK(rmsi_config_valid(&s, &c), "lean=2 invalid for add + block fp8");
        c.tpr = 512;
        CHECK(!rmsi_config_valid(&s, &c), "lean=2 valid at 512 threads");
        c.tpr = 128;
        s.quant = RMSI_Q_TOKEN;
        CHECK(!rmsi_config_valid(&s, &c), "lean=2 valid for per-token fp8");
        s.quant = RMSI_Q_NONE;
        CHECK(!rmsi_config_valid(&s, &c), "lean=2 valid without fp8 output");
        s = h200_shape(RMSI_OP_FWD, 4096, 8192, 4, RMSI_Q_BLOCK, 0);
        CHECK(!rmsi_config_valid(&s, &c), "lean=2 valid for fp32 rows");
        s = h200_shape(RMSI_OP_BWD, 4096, 8192, 2, RMSI_Q_NONE, 0);
        c = {RMSI_PATH_REG, 16, 512, 1, 2, 0, 0, 1, 1, 2};
        CHECK(!rmsi_config_valid(&s, &c), "lean=2 valid for the backward");
        CHECK(rmsi_config_parse("lean=2,tpr=128", &pin) == 0 && pin.lean == 2, "lean=2 does not parse");
        CHECK(rmsi_config_parse("lean=3", &pin) != 0, "lean=3 parses");
    }
    check_multi(RMSI_OP_FWD, 4096, 16384, 4, RMSI_Q_TENSOR, 0, 256, 0); /* fp32 fp8 output: not measured */
    /* (16384 bf16 columns: the register path since session 30, below) */
    check_multi(RMSI_OP_BWD, 8192, 16384, 2, RMSI_Q_NONE, 1, 512, 0); /* residual gradient: not measured */
    check_multi(RMSI_OP_BWD, 8192, 8200, 4, RMSI_Q_NONE, 0, 512, 0); /* fp32 over 2048 vectors: not measured */
    check_multi(RMSI_OP_BWD, 8192, 32760, 2, RMSI_Q_NONE, 0, 512, 0);
    check_multi(RMSI_OP_BWD, 4096, 32768, 2, RMSI_Q_NONE, 0, 1024, 0);
    check_multi(RMSI_OP_BWD, 2048, 65536, 2, RMSI_Q_NONE, 0, 1024, 0);
    check_multi(RMSI_OP_BWD, 2048, 65544, 2, RMSI_Q_NONE, 0, 512, 0);
    check_multi(RMSI_OP_BWD, 4096, 32768, 2, RMSI_Q_NONE, 1, 512, 0); /* residual gradient: not measured */
    /* under half a row an SM, 1025-4096 16-bit vectors: 1024 threads (session 31) */
    check_multi(RMSI_OP_BWD, 1, 16384, 2, RMSI_Q_NONE, 0, 1024, 0);
    check_multi(RMSI_OP_BWD, 66, 9216, 2, RMSI_Q_NONE, 1, 1024, 0);
    check_multi(RMSI_OP_BWD, 32, 32768, 2, RMSI_Q_NONE, 1, 1024, 0);
    check_multi(RMSI_OP_BWD, 67, 16384, 2, RMSI_Q_NONE, 0, 512, 0);
    check_multi(RMSI_OP_BWD, 32, 8192, 2, RMSI_Q_NONE, 0, 512, 0);
    check_multi(RMSI_OP_BWD, 32, 32776, 2, RMSI_Q_NONE, 1, 512, 0);
    check_multi(RMSI_OP_BWD, 32, 16384, 4, RMSI_Q_NONE, 0, 1024, 0); /* fp32: 4096-8192 vectors (S32-3) */
    check_multi(RMSI_OP_BWD, 32, 16384, 4, RMSI_Q_NONE, 1, 512, 0);  /* with a residual gradient: not measured */
    check_multi(RMSI_OP_BWD, 32, 8192, 4, RMSI_Q_NONE, 0, 512, 0);   /* under half a row an SM: 16-bit only */
    /* wider than 8192 vectors to 1.75 rows an SM: 1024 threads (session 32) */
    check_multi(RMSI_OP_BWD, 1, 131072, 2, RMSI_Q_NONE, 0, 1024, 0);
    check_multi(RMSI_OP_BWD, 231, 131072, 2, RMSI_Q_NONE, 0, 1024, 0);
    check_multi(RMSI_OP_BWD, 32, 131072, 2, RMSI_Q_NONE, 1, 1024, 0);
    check_multi(RMSI_OP_BWD, 1, 262144, 2, RMSI_Q_NONE, 0, 1024, 0);
    check_multi(RMSI_OP_BWD, 232, 131072, 2, RMSI_Q_NONE, 0, 512, 0);
    check_multi(RMSI_OP_BWD, 32, 131072, 4, RMSI_Q_NONE, 0, 1024, 0); /* fp32 too (S32-3) */

    static const int64_t rows[] = {1, 2, 31, 32, 131, 132, 256, 1024, 4096, 8447, 8448, 16384, 32768, 65536};
    static const int64_t cols[] = {1,    7,    64,    128,   512,   1152,  2048,   4096,
                                   5120, 8192, 16384, 32768, 65536, 98304, 131072, 262144};
    /* SM counts with their opt-in shared memory per CTA (0: unknown) */
    static const int sms[] = {132, 108, 148, 132};
    static const int smem[] = {232448, 166912, 232448, 0};
    static const int esz[] = {2, 4};
    static const int quant[] = {RMSI_Q_NONE, RMSI_Q_TENSOR, RMSI_Q_TOKEN, RMSI_Q_BLOCK};
    static const int hbms[] = {0, 25, 37}; /* HBM GB/s an SM: unknown, an H100, an H200 */
    long shapes = 0, configs = 0, variants = 0;
    for (int k = 0; k < 4; k++)
        for (int e : esz)
            for (int op = 0; op < 2; op++)
                for (int64_t r : rows)
                    for (int64_t c : cols)
                        for (int vok = 0; vok < 2; vok++)
                            for (int q : quant)
                                for (int res = 0; res < 2; res++) {
                                    if (!grid_shape(op, c, q))
                                        continue;
                                    /* A100 (108 SMs): no clusters */
                                    const rmsi_shape s =
                                        shape_of(op, r, c, e, vok, q, res, sms[k], smem[k], sms[k] != 108);
                                    check_shape(s, &configs);
                                    shapes++;
                                    /* the ladder alone (enumeration and pins
                                     * do not depend on these) for fp16 and
                                     * for an H100's and an H200's HBM an SM
                                     * (sessions 47-48's rules) */
                                    for (int f16 = 0; f16 <= (e == 2); f16++)
                                        for (int hbm : hbms) {
                                            if (f16 == 0 && hbm == 0)
                                                continue;
                                            rmsi_shape v = s;
                                            v.f16 = f16;
                                            v.hbm_sm = hbm;
                                            check_ladder(v);
                                            variants++;
                                        }
                                }
    /* Parts of a card (RMSNORM_CUDA_SMS, MIG slices: an H100's 1g has 16
     * SMs, 3g 60): the ladder, its grids and partial rows. 1 and 2 are the
     * counts the GPU fuzzers run under, where 64 rows are 32-64 rows an SM. */
    check_parse_count();
    static const int part_sms[] = {1, 2, 3, 16, 26, 60};
    long parts_checked = 0;
    for (int sm : part_sms)
        for (int e : esz)
            for (int op = 0; op < 2; op++)
                for (int64_t r : rows)
                    for (int64_t c : cols)
                        for (int q : quant)
                            for (int res = 0; res < 2; res++)
                                for (int hbm : hbms) {
                                    if (!grid_shape(op, c, q))
                                        continue;
                                    rmsi_shape s = shape_of(op, r, c, e, 1, q, res, sm, smem[0], 1);
                                    s.hbm_sm = hbm;
                                    check_ladder_grid(s);
                                    parts_checked++;
                                }
    (void)printf("%s: %ld shapes (and %ld fp16 / HBM variants of their ladder), %ld configs checked, "
                 "%ld ladders on parts of a card, %d failure(s)\n",
                 rmst_fail ? "FAIL" : "ok", shapes, variants, configs, parts_checked, rmst_fail);
    return rmst_fail ? 1 : 0;
}
