/*
 * Backward kernels: dx and the dw partials in one pass over x and dy, then a
 * second small launch that reduces the partials in a fixed order. Written once
 * for CUDA and HIP.
 *
 * dw is deterministic without atomics: the grid is persistent and its size is a
 * function of (rows, cols, SM count) through the ladder, row group g of CTA b
 * always owns partial row b * rpc + g of the workspace and visits rows
 * b * rpc + g, + grid * rpc, ... in increasing order; rmsi_dw_reduce then sums
 * the partial rows in index order. The same inputs on the same GPU model give
 * the same bits every run.
 *
 * rmsi_bwd_reg: one row per row group in registers (see forward.cu for the
 *   layout), with the next row's x and dy loads issued before the current row
 *   is reduced: a persistent CTA otherwise idles on the load latency of every
 *   row, since fewer CTAs fit (the dw accumulators cost VEC floats per vector).
 *   Per row: one fused reduction of (sum h^2, sum g*h), rstd from it or from
 *   the saved rstd, then dx and dw += dy * n.
 * rmsi_bwd_multi: one CTA per row, two passes over global memory, any width,
 *   alignment and stride; its partial row is accumulated in the workspace by
 *   the one thread that owns each column (read-modify-write, no atomics).
 *
 * Math (docs/numerics.md): g = dy * weff, n = h * rstd, c = sum(g * n) / cols
 * (rstd known before the sum: given, or reduced first), dx = round_T(rstd *
 * (g - n * c) + dres),
 * dw += dy * m with m = n or round_T(n) (ROUND_LLAMA).
 */
#include "gpu/common/device_math.h"
#include "gpu/common/reduce.h"

#define RMSI_BWD_THREADS 512

namespace {

template <typename W, int VEC>
__device__ __forceinline__ void rmsi_bwd_weff(const rmsi_bwd_params &p, int64_t j, float *wf)
{
    if (p.w) {
        rmsi_vec<W, VEC>::load(reinterpret_cast<const W *>(p.w) + j, wf);
#pragma unroll
        for (int e = 0; e < VEC; e++)
            wf[e] += p.w_off;
    } else {
#pragma unroll
        for (int e = 0; e < VEC; e++)
            wf[e] = 1.0f;
    }
}

/* NV = 4 (no prefetch, 32 dw accumulators) needs more than 128 registers
 * for f16: its CTAs are capped at 256 threads. */
#define RMSI_BWD_BOUND(nv) ((nv) == 4 ? 256 : RMSI_BWD_THREADS)

/* One row's x and dy vectors of this thread, zeros past the row or the rows.
 * A function rather than a lambda, and a branch rather than `on ? load : zero`:
 * with either of those clang keeps the arrays / the zero vector in scratch on
 * AMD (docs/perf/amd-isa.md). */
template <typename T, int NV>
__device__ __forceinline__ void rmsi_bwd_load_row(const rmsi_bwd_params &p, int64_t r, int t, int tpr,
                                                  int64_t nvec, uint4 (&xo)[NV], uint4 (&go)[NV])
{
    constexpr int VEC = 16 / (int)sizeof(T);
#pragma unroll
    for (int k = 0; k < NV; k++) {
        const int64_t i = t + (int64_t)k * tpr;
        xo[k] = make_uint4(0u, 0u, 0u, 0u);
        go[k] = make_uint4(0u, 0u, 0u, 0u);
        if (r < p.rows && i < nvec) {
            xo[k] = *reinterpret_cast<const uint4 *>(rmsi_crow<T>(p.x, r, p.x_ld) + i * VEC);
            go[k] = *reinterpret_cast<const uint4 *>(rmsi_crow<T>(p.dy, r, p.dy_ld) + i * VEC);
        }
    }
}

template <typename T, typename W, int NV>
__global__ void __launch_bounds__(RMSI_BWD_BOUND(NV), 1) rmsi_bwd_reg(const rmsi_bwd_params p)
{
    constexpr int VEC = 16 / (int)sizeof(T);
    __shared__ float red[2 * RMSI_MAX_WARPS];
    const int t = (int)threadIdx.x;
    const int tpr = (int)blockDim.x;
    const int64_t nvec = p.cols / VEC;
    const int64_t step = (int64_t)gridDim.x * blockDim.y;

    float dw[NV][VEC];
#pragma unroll
    for (int k = 0; k < NV; k++)
#pragma unroll
        for (int e = 0; e < VEC; e++)
            dw[k][e] = 0.0f;

    /* The columns of a thread never change (persistent grid): its weights are
     * loaded once and kept packed. */
    constexpr int WCH = rmsi_wchunks<T, W>::n;
    uint4 wa[NV][WCH];
#pragma unroll
    for (int k = 0; k < NV; k++) {
        const int64_t i = t + (int64_t)k * tpr;
#pragma unroll
        for (int c = 0; c < WCH; c++) {
            wa[k][c] = make_uint4(0u, 0u, 0u, 0u); /* zero-fill, then load under if: see rmsi_bwd_load_row */
            if (p.w && i < nvec)
                wa[k][c] = reinterpret_cast<const uint4 *>(reinterpret_cast<const W *>(p.w) + i * VEC)[c];
        }
    }
    auto weff = [&](int k, float *wf) {
        if (p.w) {
            rmsi_weff_unpack<T, W>(wa[k], p.w_off, wf);
        } else {
#pragma unroll
            for (int e = 0; e < VEC; e++)
                wf[e] = 1.0f;
        }
    };

    /* Prefetch of the next row only where registers allow it (NV <= 2: about
     * 100 registers at 512 threads; NV = 4 would spill with it). */
    constexpr bool PF = NV <= 2;
    int64_t base = (int64_t)blockIdx.x * blockDim.y;
    uint4 xa[NV], ga[NV];
    if (PF)
        rmsi_bwd_load_row<T, NV>(p, base + threadIdx.y, t, tpr, nvec, xa, ga);
    for (; base < p.rows; base += step) {
        const int64_t row = base + threadIdx.y;
        const bool live = row < p.rows;
        uint4 xn[NV], gn[NV];
        if (PF)
            rmsi_bwd_load_row<T, NV>(p, row + step, t, tpr, nvec, xn, gn);
        else
            rmsi_bwd_load_row<T, NV>(p, row, t, tpr, nvec, xa, ga);
        const float rs_saved = (p.rstd && live) ? p.rstd[row] : 0.0f;

        /* rstd first (given, or one more reduction), then c = sum(g * n) / cols
         * with n = h * rstd, as docs/numerics.md orders it: sum(g * h) scaled
         * afterwards overflows for |h| near 2^46 and underflows near 2^-48
         * (found by fuzz_backward on the H200). p.rstd is uniform per CTA. */
        float rs = rs_saved;
        if (!p.rstd) {
            float ss = 0.0f;
#pragma unroll
            for (int k = 0; k < NV; k++) {
                const int64_t i = t + (int64_t)k * tpr;
                if (!(live && i < nvec))
                    continue;
                float h[VEC];
                rmsi_unpack16<T>(xa[k], h);
#pragma unroll
                for (int e = 0; e < VEC; e++)
                    ss += h[e] * h[e];
            }
            rs = rmsi_d_rstd(rmsi_row_reduce(ss, red, rmsi_op_sum()), p.cols, p.eps);
        }
        float sgn = 0.0f;
#pragma unroll
        for (int k = 0; k < NV; k++) {
            const int64_t i = t + (int64_t)k * tpr;
            if (!(live && i < nvec))
                continue;
            float h[VEC], g[VEC], wf[VEC];
            rmsi_unpack16<T>(xa[k], h);
            rmsi_unpack16<T>(ga[k], g);
            weff(k, wf);
#pragma unroll
            for (int e = 0; e < VEC; e++)
                sgn += (g[e] * wf[e]) * (h[e] * rs);
        }
        const float c = __fdiv_rn(rmsi_row_reduce(sgn, red, rmsi_op_sum()), (float)p.cols);

#pragma unroll
        for (int k = 0; k < NV; k++) {
            const int64_t i = t + (int64_t)k * tpr;
            if (!(live && i < nvec))
                continue;
            float h[VEC], dy[VEC], wf[VEC], d[VEC];
            rmsi_unpack16<T>(xa[k], h);
            rmsi_unpack16<T>(ga[k], dy);
            weff(k, wf);
            if (p.dres) {
                rmsi_unpack16<T>(*reinterpret_cast<const uint4 *>(rmsi_crow<T>(p.dres, row, p.dres_ld) + i * VEC), d);
            } else {
#pragma unroll
                for (int e = 0; e < VEC; e++)
                    d[e] = 0.0f;
            }
#pragma unroll
            for (int e = 0; e < VEC; e++) {
                const float n = h[e] * rs;
                const float g = dy[e] * wf[e];
                const float m = p.llama ? rmsi_elem<T>::round(n) : n;
                d[e] = rs * (g - n * c) + d[e];
                dw[k][e] += dy[e] * m;
            }
            *reinterpret_cast<uint4 *>(rmsi_row<T>(p.dx, row, p.dx_ld) + i * VEC) = rmsi_pack16<T>(d);
        }
        if (PF) {
#pragma unroll
            for (int k = 0; k < NV; k++) {
                xa[k] = xn[k];
                ga[k] = gn[k];
            }
        }
    }
    if (p.ws) {
        float *part = p.ws + ((int64_t)blockIdx.x * blockDim.y + threadIdx.y) * p.cols;
#pragma unroll
        for (int k = 0; k < NV; k++) {
            const int64_t i = t + (int64_t)k * tpr;
            if (i < nvec)
                rmsi_vec<float, VEC>::store(part + i * VEC, dw[k]);
        }
    }
}

template <typename T, typename W, int VEC>
__global__ void __launch_bounds__(RMSI_MAX_THREADS, 1) rmsi_bwd_multi(const rmsi_bwd_params p)
{
    __shared__ float red[2 * RMSI_MAX_WARPS];
    const int t = (int)threadIdx.x;
    const int nt = (int)blockDim.x;
    const int64_t nvec = p.cols / VEC;
    float *part = p.ws ? p.ws + (int64_t)blockIdx.x * p.cols : nullptr;
    bool first = true;

    for (int64_t row = blockIdx.x; row < p.rows; row += gridDim.x) {
        /* Same order as rmsi_bwd_reg: rstd, then sum(g * n); this path re-reads
         * the row from memory (L2) for the extra pass when rstd is recomputed. */
        float rs = 0.0f;
        if (p.rstd) {
            rs = p.rstd[row];
        } else {
            float ss = 0.0f;
            for (int64_t i = t; i < nvec; i += nt) {
                float h[VEC];
                rmsi_vec<T, VEC>::load(rmsi_crow<T>(p.x, row, p.x_ld) + i * VEC, h);
#pragma unroll
                for (int e = 0; e < VEC; e++)
                    ss += h[e] * h[e];
            }
            rs = rmsi_d_rstd(rmsi_row_reduce(ss, red, rmsi_op_sum()), p.cols, p.eps);
        }
        float sgn = 0.0f;
        for (int64_t i = t; i < nvec; i += nt) {
            float h[VEC], g[VEC], wf[VEC];
            rmsi_vec<T, VEC>::load(rmsi_crow<T>(p.x, row, p.x_ld) + i * VEC, h);
            rmsi_vec<T, VEC>::load(rmsi_crow<T>(p.dy, row, p.dy_ld) + i * VEC, g);
            rmsi_bwd_weff<W, VEC>(p, i * VEC, wf);
#pragma unroll
            for (int e = 0; e < VEC; e++)
                sgn += (g[e] * wf[e]) * (h[e] * rs);
        }
        const float c = __fdiv_rn(rmsi_row_reduce(sgn, red, rmsi_op_sum()), (float)p.cols);
        for (int64_t i = t; i < nvec; i += nt) {
            float h[VEC], dy[VEC], wf[VEC], d[VEC], acc[VEC];
            rmsi_vec<T, VEC>::load(rmsi_crow<T>(p.x, row, p.x_ld) + i * VEC, h);
            rmsi_vec<T, VEC>::load(rmsi_crow<T>(p.dy, row, p.dy_ld) + i * VEC, dy);
            rmsi_bwd_weff<W, VEC>(p, i * VEC, wf);
            if (p.dres) {
                rmsi_vec<T, VEC>::load(rmsi_crow<T>(p.dres, row, p.dres_ld) + i * VEC, d);
            } else {
#pragma unroll
                for (int e = 0; e < VEC; e++)
                    d[e] = 0.0f;
            }
            if (part && !first) {
                rmsi_vec<float, VEC>::load(part + i * VEC, acc);
            } else {
#pragma unroll
                for (int e = 0; e < VEC; e++)
                    acc[e] = 0.0f;
            }
#pragma unroll
            for (int e = 0; e < VEC; e++) {
                const float n = h[e] * rs;
                const float g = dy[e] * wf[e];
                const float m = p.llama ? rmsi_elem<T>::round(n) : n;
                d[e] = rs * (g - n * c) + d[e];
                acc[e] += dy[e] * m;
            }
            rmsi_vec<T, VEC>::store(rmsi_row<T>(p.dx, row, p.dx_ld) + i * VEC, d);
            if (part)
                rmsi_vec<float, VEC>::store(part + i * VEC, acc);
        }
        first = false;
    }
    if (part && first) { /* a CTA that got no row still owns a (zero) partial */
        for (int64_t j = t; j < p.cols; j += nt)
            part[j] = 0.0f;
    }
}

/* dw[c] = sum over partial rows in index order. A CTA is 32 columns x 8
 * slices; slice s sums rows s, s + 8, ..., then slice sums are added 0..7. */
#define RMSI_DW_COLS 32
#define RMSI_DW_SLICES 8
__global__ void __launch_bounds__(RMSI_DW_COLS *RMSI_DW_SLICES)
    rmsi_dw_reduce(const float *ws, float *dw, int64_t parts, int64_t cols)
{
    __shared__ float sm[RMSI_DW_SLICES][RMSI_DW_COLS + 1];
    const int64_t c = (int64_t)blockIdx.x * RMSI_DW_COLS + threadIdx.x;
    float s = 0.0f;
    if (c < cols) {
#pragma unroll 4
        for (int64_t r = threadIdx.y; r < parts; r += RMSI_DW_SLICES)
            s = __fadd_rn(s, ws[r * cols + c]);
    }
    sm[threadIdx.y][threadIdx.x] = s;
    __syncthreads();
    if (threadIdx.y == 0 && c < cols) {
        float tot = sm[0][threadIdx.x];
        for (int k = 1; k < RMSI_DW_SLICES; k++)
            tot = __fadd_rn(tot, sm[k][threadIdx.x]);
        dw[c] = tot;
    }
}

typedef void (*rmsi_bwd_kernel)(const rmsi_bwd_params);

template <typename T, typename W>
rmsi_bwd_kernel rmsi_bwd_pick(const rmsi_config *c)
{
    if (c->path == RMSI_PATH_MULTI)
        return c->vec == 16 ? rmsi_bwd_multi<T, W, 16 / sizeof(T)> : rmsi_bwd_multi<T, W, 1>;
    switch (c->nv) {
    case 1: return rmsi_bwd_reg<T, W, 1>;
    case 2: return rmsi_bwd_reg<T, W, 2>;
    case 4: return rmsi_bwd_reg<T, W, 4>;
    default: return nullptr;
    }
}

rmsi_bwd_kernel rmsi_bwd_kernel_for(int dtype, int wdtype, const rmsi_config *c)
{
    switch (dtype) {
    case RMSI_T_F32: return rmsi_bwd_pick<float, float>(c);
    case RMSI_T_F16:
        return wdtype == RMSI_T_F32 ? rmsi_bwd_pick<rmsi_f16, float>(c) : rmsi_bwd_pick<rmsi_f16, rmsi_f16>(c);
    case RMSI_T_BF16:
        return wdtype == RMSI_T_F32 ? rmsi_bwd_pick<rmsi_bf16, float>(c) : rmsi_bwd_pick<rmsi_bf16, rmsi_bf16>(c);
    default: return nullptr;
    }
}

} /* namespace */

int rmsi_launch_backward(const rmsi_bwd_params *p, int dtype, int wdtype, const rmsi_config *c,
                         int64_t grid, void *stream)
{
    rmsi_bwd_kernel k = rmsi_bwd_kernel_for(dtype, wdtype, c);
    if (!k || grid < 1 || grid > 0x7fffffff)
        return -1;
    dim3 block((unsigned)c->tpr, c->path == RMSI_PATH_MULTI ? 1u : (unsigned)c->rpc, 1u);
    k<<<dim3((unsigned)grid, 1u, 1u), block, 0, (rmsi_stream_t)stream>>>(*p);
    return rmsi_get_last_error() == RMSI_SUCCESS ? 0 : -1;
}

int rmsi_launch_dw_reduce(const float *ws, float *dw, int64_t parts, int64_t cols, void *stream)
{
    const int64_t grid = (cols + RMSI_DW_COLS - 1) / RMSI_DW_COLS;
    if (grid < 1 || grid > 0x7fffffff)
        return -1;
    rmsi_dw_reduce<<<dim3((unsigned)grid, 1u, 1u), dim3(RMSI_DW_COLS, RMSI_DW_SLICES, 1u), 0,
                     (rmsi_stream_t)stream>>>(ws, dw, parts, cols);
    return rmsi_get_last_error() == RMSI_SUCCESS ? 0 : -1;
}

int rmsi_backward_occupancy(int dtype, int wdtype, const rmsi_config *c, int *ctas)
{
    rmsi_bwd_kernel k = rmsi_bwd_kernel_for(dtype, wdtype, c);
    int threads = c->tpr * (c->path == RMSI_PATH_MULTI ? 1 : c->rpc);
    *ctas = 0;
    if (!k)
        return -1;
    return rmsi_occupancy(ctas, k, threads, 0) == RMSI_SUCCESS ? 0 : -1;
}
