/*
 * What the host side of a GPU plugin hands the shared kernels: flat parameter
 * structs (passed by value as kernel parameters), the launch configuration,
 * and the launcher entry points defined in gpu/common/{forward,backward,probe}.cu.
 * Plain C++ with no vendor type, so host files compile it with the host compiler.
 */
#ifndef RMSNORM_GPU_KERNEL_ARGS_H
#define RMSNORM_GPU_KERNEL_ARGS_H

#include <stddef.h>
#include <stdint.h>

/* fp8 formats as the kernels see them (a subset of rmsnorm_dtype, renumbered
 * so the device code needs no public header). */
enum { RMSI_FP8_E4M3 = 0, RMSI_FP8_E5M2 = 1, RMSI_FP8_E4M3FNUZ = 2 };
/* Activation / weight element types. */
enum { RMSI_T_F32 = 0, RMSI_T_F16 = 1, RMSI_T_BF16 = 2 };
/* Quant modes, same values as rmsnorm_quant. */
enum { RMSI_Q_NONE = 0, RMSI_Q_TENSOR = 1, RMSI_Q_TOKEN = 2, RMSI_Q_BLOCK = 3 };

struct rmsi_fwd_params {
    const void *x;
    const void *res;   /* NULL: no residual */
    void *h;           /* NULL: h not stored */
    const void *w;     /* NULL: no weight */
    void *y;           /* NULL: y not stored (quant only) */
    void *q;           /* fp8 codes, quant != NONE */
    float *rstd;       /* NULL: not stored */
    float *scale;      /* in (TENSOR) or out (TOKEN, BLOCK) */
    int64_t rows, cols;
    int64_t x_ld, res_ld, h_ld, y_ld, q_ld;
    int64_t scale_ld;  /* round_up(rows, 4): the column-major block-scale leading dimension */
    float w_off, eps, scale_ub, fmax;
    float s_min;       /* 1 / (fmax * 512): the dynamic scale's floor (ref/formats.h rmsi_dynamic_scale) */
    int llama, pow2, quant, fp8;
    int cache;         /* RMSI_CACHE_* bits of rmsi_config.cache, set by the launcher */
    int cls;           /* log2 of rmsi_config.cl: the CTAs of a cluster a row is split over (0: none) */
};

struct rmsi_bwd_params {
    const void *dy;
    const void *x;
    const void *w;
    const float *rstd; /* NULL: recompute */
    const void *dres;  /* NULL: none */
    void *dx;
    float *ws;         /* [partials][cols] fp32, NULL when dw is not asked for */
    float *dw;
    int64_t rows, cols;
    int64_t dy_ld, x_ld, dres_ld, dx_ld;
    float w_off, eps;
    int llama;
    int cache;         /* RMSI_CACHE_* bits of rmsi_config.cache, set by the launcher */
    int cl;            /* rmsi_config.cl: CTAs a cluster sums its dw partials over (1: none) */
};

/* A launch configuration: every memory-path knob of the ladder.
 *   path   RMSI_PATH_REG: the row lives in registers (one read of every input);
 *          RMSI_PATH_MULTI: one CTA per row, multi-pass over global memory
 *          (re-reads hit L2), for any width, alignment or stride.
 *   vec    bytes per access: 16 (vector path, needs aligned pointers/strides)
 *          or 0 = one element (narrow path; MULTI only).
 *   tpr    threads per row (REG: power of two, 4..1024; MULTI: the CTA size).
 *   rpc    rows per CTA (REG; tpr * rpc <= 1024, <= 512 for the backward).
 *   nv     vectors per thread (REG; derived: 1, 2, 4 or 8).
 *   cps    forward: 0 = one CTA per row group (the grid covers the rows),
 *          n = a grid-stride loop over n CTAs per SM. backward (always
 *          persistent: the grid is the dw partial count): CTAs per SM, 0 = as
 *          many as fit (occupancy API).
 *   cache  cache hints on the activations: 0 = none, 1 = loads and stores,
 *          2 = loads only, 3 = stores only. REG, forward and backward: streaming
 *          (ld.global.cs / st.global.cs: evict first, each byte is used
 *          once). Forward MULTI, 16-byte path: loads through L2 policies,
 *          evict last in the passes before the last (their bytes are read
 *          again), evict first in the last; stores streaming.
 *   stage  backward, REG, nv >= 2: 1 = the next row's x and dy are copied
 *          into shared memory (cp.async) while this row is computed, a
 *          pipeline depth of one row without registers; 0 = none (nv <= 2
 *          prefetch into registers instead). forward, REG, nv = 4, no fp8
 *          output: 1 = the weights are loaded with the row (as at 1 and 2
 *          vectors), one memory latency a row for 16 more registers.
 *   cl     CTAs of a thread block cluster (sm_90+; REG only; 1 elsewhere).
 *          backward (1 or 2): whose dw accumulators are summed through
 *          distributed shared memory into one partial row (over the row
 *          groups too), so the workspace holds grid / cl partial rows
 *          instead of grid * rpc and the reduction launch reads that many
 *          fewer. (The kernel takes up to 8; 4 and 8 ran 1.5x slower in S9-1
 *          and 8 did not launch at every shape.) forward (1, 2, 4 or 8; one
 *          row a CTA, cps = 0): the CTAs a row is split over, each holding
 *          a contiguous 1/cl of it in registers, their sums exchanged through
 *          distributed shared memory: rows too wide for one CTA's registers
 *          still read x once.
 */
enum { RMSI_PATH_REG = 0, RMSI_PATH_MULTI = 1 };
/* The kernels' view of the cache knob: which accesses stream. */
enum { RMSI_CACHE_LD = 1, RMSI_CACHE_ST = 2 };
/* cache + 4 (forward lean kernel only): L1 eviction priorities too, so the
 * second pass re-reads the row from L1 (forward.cu rmsi_fwd_lean). The
 * kernel is picked by it; the kernels see the low two bits' meaning. */
enum { RMSI_CACHE_KNOB_L1 = 4 };
static inline int rmsi_cache_bits(int cache)
{
    const int c = cache & 3;
    return c == 1 ? RMSI_CACHE_LD | RMSI_CACHE_ST : (c == 2 ? RMSI_CACHE_LD : (c == 3 ? RMSI_CACHE_ST : 0));
}
/* The register-cached kernels' largest CTA (their register caps assume it);
 * the ladders keep tpr * rpc within it. */
#define RMSI_REG_MAXT 512
/* lean: the backward's staged 2-vector kernel built at 64 registers instead
 * of 80 (4 CTAs of 256 threads an SM instead of 3; docs/gpu.md); the
 * forward's 16-byte multi-pass kernel at 32 (two CTAs of 1024 an SM), its
 * grid covering the rows; 2: the forward's 1x128 block quantiser at 48,
 * CTAs of up to 256 threads. */
struct rmsi_config {
    int path, vec, tpr, rpc, nv, cps, cache, stage, cl, lean;
};
/* The partial rows a backward launch of `grid` CTAs writes. */
static inline int64_t rmsi_bwd_parts(const rmsi_config *c, int64_t grid)
{
    if (c->path == RMSI_PATH_MULTI)
        return grid;
    return c->cl > 1 ? grid / c->cl : grid * c->rpc;
}

#define RMSI_CONFIG_TEXT 96

/* Launchers: 0 on success, -1 when the launch failed (the runtime's error is
 * cleared). dtype/wdtype are RMSI_T_*. grid is the CTA count the host chose.
 * pdl: launch as a programmatic dependent of the previous kernel on the stream
 * (vendor.h, rmsi_launch_k; CUDA on sm_90+ only, else 0). */
int rmsi_launch_forward(const rmsi_fwd_params *p, int dtype, int wdtype, const rmsi_config *c,
                        int64_t grid, void *stream, int pdl);
/* smem: the backward's dynamic shared memory, 0 for the config's own
 * (rmsi_backward_smem); more only to cap the CTAs resident per SM. */
int rmsi_launch_backward(const rmsi_bwd_params *p, int dtype, int wdtype, const rmsi_config *c,
                         int64_t grid, void *stream, int pdl, size_t smem);
/* Fixed-order sum of `parts` partial rows of ws into dw (parts may be 0: zeros).
 * discard: drop the partial rows from L2 once read, without writing them back
 * (where the vendor has it and the rows are 128-byte aligned lines). */
int rmsi_launch_dw_reduce(const float *ws, float *dw, int64_t parts, int64_t cols, void *stream, int pdl,
                          int discard);
/* Resident CTAs per SM of the kernel a config selects (occupancy API). */
int rmsi_forward_occupancy(int dtype, int wdtype, int quant, int res, const rmsi_config *c, int *ctas);
int rmsi_backward_occupancy(int dtype, int wdtype, int dres, const rmsi_config *c, size_t smem, int *ctas);
/* Dynamic shared memory the backward of a config launches with (bytes);
 * dres: a residual gradient is added (the staged kernel stages it too). */
size_t rmsi_backward_smem(int dtype, const rmsi_config *c, int dres);
/* rmsi_bwd_reg's shared memory: each row group's dw accumulators and, where
 * the vendor stages it (wsm = RMSI_BWD_WSM, gpu/common/vendor.h), the CTA's
 * fp32 weff row, read by every row group; VEC = 16 / esz floats a vector;
 * with stage = 1 the next row's x and dy vectors and the residual gradient.
 * One formula for the kernel and both ladders. */
static inline size_t rmsi_bwd_reg_smem(int64_t tpr, int64_t rpc, int64_t nv, int64_t esz, int wsm, int stage,
                                       int dres)
{
    return (size_t)(tpr * nv * (16 / esz) * (rpc + (wsm ? 1 : 0))) * sizeof(float) +
           (size_t)(stage * tpr * rpc * nv * (dres ? 3 : 2) * 16); /* x, dy [, dres] of the staged row */
}
/* Bandwidth probes: kind 0 copy, 1 write, 2 dst = a + b; nt = streaming stores. */
int rmsi_launch_probe(int kind, int nt, void *dst, const void *a, const void *b, size_t bytes,
                      int sms, void *stream);

#endif /* RMSNORM_GPU_KERNEL_ARGS_H */
