/*
 * The AVX-512 forward over a range of rows, written once and instantiated per
 * (activation dtype, weight kind, bf16 conversion) by simd/forward.c and
 * simd/forward_bf16.c; everything else is a loop-invariant runtime flag.
 *
 * Design (measured on a 2-core Zen 4 VM, docs/perf/cpu.md):
 *  - One pass over x per row from memory: sweep 1 reads x (and the residual)
 *    for the sum of squares; the y/q sweep re-reads the row from L1/L2 (a
 *    4096-element f32 row is 16 KiB) while prefetching the next row, so DRAM
 *    sees x once and y once. Rows larger than L2 simply re-read from memory.
 *  - The sum order depends on cols only (simd/rowsum.h); stores may start with
 *    a short unaligned head so that non-temporal stores are aligned, which is
 *    why no streaming sweep forms a sum. Plainly stored y has no head, so the
 *    simple bf16 forward of hot rows sums row r + 1 in row r's y sweep
 *    (rmsi_fwd_rows_pipe_eo), in the sum's own blocks and order.
 *  - Non-temporal stores only when the call moves more than about the L3
 *    (RMSI_SIMD_NT_MIN): hot small calls keep their outputs in cache.
 *  - h_out is ordered against the y sweep so that an output aliasing an
 *    input (h_out == x or residual, y == x or residual) is only overwritten
 *    after its last read; later sweeps recompute h from x + residual
 *    (bit-identical) unless h was stored with plain stores. Stored before
 *    y, h is written by the sum's sweep (every dtype, session 41: a whole
 *    sweep over x and the residual less; streamed too since session 64),
 *    except a streamed h row off 64 bytes: a sweep of its own, whose stores
 *    start at an alignment head.
 *  - The simple bf16 fused add with a streamed h feeds the y sweep from a
 *    stack copy of h (rmsi_fwd_rows_fused_eo).
 *  - The next row is prefetched into L2 (PREFETCHT1), not L1: with two
 *    threads T1 took 0.74-0.80x the time of T0 on 8192-column rows and no
 *    more on 4096-column or hot rows (docs/perf/cpu.md, session 7). Likely
 *    reason, not measured (no counters in this guest): T0 pulled the next
 *    16-32 KiB row into the 32 KiB L1 over the current row and the weight.
 */
#ifndef RMSNORM_SIMD_FWD_ROWS_H
#define RMSNORM_SIMD_FWD_ROWS_H

#include "internal.h"
#include "ref/formats.h"
#include "simd/rowsum.h"
#include "simd/simd.h"
#include "simd/vec.h"

/* Weight kind of an instantiation: none, or the weight's dtype. */
#define RMSI_W_NONE (-1)

typedef struct rmsi_fwd_ctx {
    const char *x, *res, *w;
    char *h, *y;
    uint8_t *q;
    size_t xs, rs, hs, ys, qs; /* row strides in bytes */
    int64_t rows, cols, rows4;
    float off, eps, ub, fmax;
    float *rstd, *scale;
    rmsnorm_quant quant;
    rmsnorm_dtype qt;
    int pow2, llama;
    int nt;      /* y written with non-temporal stores */
    int h_first; /* h_out sweep before the y sweep */
    int h_read;  /* sweeps after h_out's read h back from it */
    int h_nt;    /* h_out written with non-temporal stores */
    /* a wide call's scratch (simd/fwd_wide.h), else NULL: per row, nseg + 1
     * slots of segment sums (segv) and maxima (amx); rsv: rstd per row */
    __m512 *segv;
    float *amx, *rsv;
    int64_t nseg;
} rmsi_fwd_ctx;

/* The bf16 instantiations that use VCVTNEPS2BF16 (simd/forward_bf16.c, the
 * only forward file built with -mavx512bf16); wk is RMSI_W_NONE or a dtype,
 * simple as in rmsi_fwd_rows. */
rmsi_kern rmsi_fwd_bf16hw_pick(int wk, int simple);

/* One row's pointers. hx/hr are where h comes from after sweep 1. */
typedef struct rmsi_fwd_row {
    const char *hx, *hr;
    char *y;
    uint8_t *q;
    const char *nx, *nr; /* next row, prefetched during the y sweep; NULL: none */
    const float *wt;     /* the weight table of rmsi_fwd_wtab, or NULL */
} rmsi_fwd_row;

/* The per-element constants of v, copied out of the context into locals so
 * that the compiler keeps them in registers: through the context it must
 * reload them after every store (a store through y could alias it). */
typedef struct rmsi_fwd_k {
    const char *w;
    __m512 off;
    int llama;
} rmsi_fwd_k;

/* v of 16 lanes at column j (full != 0: no mask). */
RMSI_INLINE __m512 rmsi_fwd_v(const rmsi_fwd_k *c, const rmsi_fwd_row *w, int64_t j, __mmask16 m,
                              int full, __m512 rs, rmsnorm_dtype t, int wk, int hw, int simple)
{
    const __m512 h = full ? rmsi_h_full(w->hx, w->hr, j, t) : rmsi_h_mask(w->hx, w->hr, j, t, m);
    __m512 n = _mm512_mul_ps(h, rs);
    if (!simple && c->llama)
        n = rmsi_vround(n, t, hw);
    if (wk == RMSI_W_NONE)
        return n;
    const rmsnorm_dtype wt = (rmsnorm_dtype)wk;
    const char *wp = c->w + (size_t)j * rmsi_vsize(wt);
    const __m512 wv = full ? rmsi_vload(wp, wt) : rmsi_vload_m(wp, wt, m);
    return _mm512_mul_ps(n, _mm512_add_ps(wv, c->off));
}

/* y and/or q of the 16 lanes at column j (full vector). */
RMSI_INLINE void rmsi_fwd_store1(const rmsi_fwd_k *k, const rmsi_fwd_row *w, int64_t j, __m512 rs,
                                 __m512 qs, const rmsi_fp8v *f, int nt, rmsnorm_dtype t, int wk,
                                 int hw, int simple)
{
    const __m512 v = rmsi_fwd_v(k, w, j, 0, 1, rs, t, wk, hw, simple);
    if (simple || w->y != NULL)
        rmsi_vstore(w->y + (size_t)j * rmsi_vsize(t), v, t, hw, nt);
    if (!simple && w->q != NULL)
        _mm_storeu_si128((__m128i *)(w->q + j), rmsi_fp8_encode(_mm512_div_ps(v, qs), f));
}

/* Columns [j, j1) in steps of 32 with the next row's lines prefetched into L2
 * (one prefetch per 64-byte line: 32 16-bit elements, or two lines of f32);
 * returns the first column not done. pf: prefetch at all. */
RMSI_INLINE int64_t rmsi_fwd_store32(const rmsi_fwd_k *k, const rmsi_fwd_row *w, int64_t j, int64_t j1,
                                     __m512 rs, __m512 qs, const rmsi_fp8v *f, int nt, int pf,
                                     rmsnorm_dtype t, int wk, int hw, int simple)
{
    const size_t sz = rmsi_vsize(t);

    for (; j + (int64_t)2 * RMSI_VL <= j1; j += (int64_t)2 * RMSI_VL) {
        if (pf) {
            _mm_prefetch(w->nx + (size_t)j * sz, _MM_HINT_T1);
            if (sz == 4u)
                _mm_prefetch(w->nx + (size_t)j * sz + 64u, _MM_HINT_T1);
            if (w->nr != NULL) {
                _mm_prefetch(w->nr + (size_t)j * sz, _MM_HINT_T1);
                if (sz == 4u)
                    _mm_prefetch(w->nr + (size_t)j * sz + 64u, _MM_HINT_T1);
            }
        }
        rmsi_fwd_store1(k, w, j, rs, qs, f, nt, t, wk, hw, simple);
        rmsi_fwd_store1(k, w, j + RMSI_VL, rs, qs, f, nt, t, wk, hw, simple);
    }
    return j;
}

/* y and/or q for columns [j0, j1); q = fp8(v / qscale). */
RMSI_INLINE void rmsi_fwd_store(const rmsi_fwd_ctx *c, const rmsi_fwd_row *w, int64_t j0, int64_t j1,
                                __m512 rs, float qscale, int nt, rmsnorm_dtype t, int wk, int hw,
                                int simple)
{
    const rmsi_fwd_k k = { c->w, _mm512_set1_ps(c->off), c->llama };
    const __m512 qs = _mm512_set1_ps(qscale);
    const rmsi_fp8v f = rmsi_fp8v_of(simple ? RMSNORM_F8_E4M3 : c->qt);
    int64_t j;

    /* the prefetch test is hoisted: the loop bodies carry no row-invariant branch */
    if (w->nx != NULL)
        j = rmsi_fwd_store32(&k, w, j0, j1, rs, qs, &f, nt, 1, t, wk, hw, simple);
    else
        j = rmsi_fwd_store32(&k, w, j0, j1, rs, qs, &f, nt, 0, t, wk, hw, simple);
    if (j + RMSI_VL <= j1) {
        rmsi_fwd_store1(&k, w, j, rs, qs, &f, nt, t, wk, hw, simple);
        j += RMSI_VL;
    }
    if (j < j1) {
        const __mmask16 m = rmsi_vmask(j1 - j);
        const __m512 v = rmsi_fwd_v(&k, w, j, m, 0, rs, t, wk, hw, simple);
        if (simple || w->y != NULL)
            rmsi_vstore_m(w->y + (size_t)j * rmsi_vsize(t), v, t, hw, m);
        if (!simple && w->q != NULL)
            _mm_mask_storeu_epi8(w->q + j, m, rmsi_fp8_encode(_mm512_div_ps(v, qs), &f));
    }
}

/* The simple bf16 y sweep's w + weight_offset, widened once a range call
 * into a per-thread table in even/odd form (32 columns: 16 even lanes, then
 * 16 odd), so that each row's sweep loads it instead of widening and
 * offsetting the weight again (four of its vector operations per 32
 * columns; the same values, so the same bits). From RMSI_FWD_WT_ROWS rows a
 * call, hot calls only (streamed rows start their sweep at an alignment head
 * that need not be a multiple of 32). docs/perf/cpu.md, session 25. */
#define RMSI_FWD_WT_COLS 4096
#define RMSI_FWD_WT_ROWS 4

/* The table itself: cols (<= RMSI_FWD_WT_COLS) weights at w, bf16 or fp32
 * as wk says. */
RMSI_INLINE const float *rmsi_wtab_eo(const char *w, int wk, float offset, int64_t cols, float *tab)
{
    const __m512 off = _mm512_set1_ps(offset);
    int64_t j;

    for (j = 0; j < cols; j += 32) {
        const int full = j + 32 <= cols;
        const rmsi_mask32 m = full ? 0 : rmsi_vmask32(cols - j);
        __m512 we, wo;
        rmsi_w_load_eo(w, wk, j, m, full, &we, &wo);
        _mm512_store_ps(tab + j, _mm512_add_ps(we, off));
        _mm512_store_ps(tab + j + 16, _mm512_add_ps(wo, off));
    }
    return tab;
}

RMSI_INLINE const float *rmsi_fwd_wtab(const rmsi_fwd_ctx *c, int wk, int64_t rows, float *tab)
{
    if (wk == RMSI_W_NONE || c->nt || rows < RMSI_FWD_WT_ROWS || c->cols > RMSI_FWD_WT_COLS)
        return NULL;
    return rmsi_wtab_eo(c->w, wk, c->off, c->cols, tab);
}

/* 1 when a call's y sweeps take the even/odd form: the simple bf16 calls,
 * whatever their weight (an fp32 one split by permutes, rmsi_f32_load_eo,
 * since session 65: hot rows 20-35% slower in the ordered form on the Zen
 * 5). y is elementwise, so either form gives the same bits. */
static inline int rmsi_fwd_eo(rmsnorm_dtype t, int simple)
{
    return simple && t == RMSNORM_BF16;
}

/* bf16 y of the 32 columns at j (m: the lanes, when !full) in even/odd form;
 * tab: the weights come from w->wt. */
RMSI_INLINE void rmsi_fwd_eo1(const rmsi_fwd_k *k, const rmsi_fwd_row *w, int64_t j, rmsi_mask32 m,
                              int full, __m512 rs, int nt, int wk, int hw, int tab)
{
    __m512 e, o;
    char *yp = w->y + (size_t)j * 2u;

    rmsi_h_eo(w->hx, w->hr, j, m, full, hw, &e, &o);
    e = _mm512_mul_ps(e, rs);
    o = _mm512_mul_ps(o, rs);
    if (wk != RMSI_W_NONE && tab) {
        e = _mm512_mul_ps(e, _mm512_load_ps(w->wt + j));
        o = _mm512_mul_ps(o, _mm512_load_ps(w->wt + j + 16));
    } else if (wk != RMSI_W_NONE) {
        __m512 we, wo;
        if (wk == RMSNORM_F32)
            rmsi_f32_load_eo(k->w + (size_t)j * 4u, m, full, &we, &wo);
        else
            rmsi_bf16_load_eo1(k->w + (size_t)j * 2u, m, full, &we, &wo);
        e = _mm512_mul_ps(e, _mm512_add_ps(we, k->off));
        o = _mm512_mul_ps(o, _mm512_add_ps(wo, k->off));
    }
    const __m512i p = rmsi_bf16_pack_eo(e, o, hw);
    if (!full)
        _mm512_mask_storeu_epi16(yp, m, p);
    else if (nt)
        _mm512_stream_si512((void *)yp, p);
    else
        _mm512_storeu_si512(yp, p);
}

/* The simple bf16 y sweep over [j0, j1): the even/odd form halves its vector
 * operations (docs/perf/cpu.md). */
RMSI_INLINE void rmsi_fwd_store_eo_run(const rmsi_fwd_k *k, const rmsi_fwd_row *w, int64_t j0, int64_t j1,
                                       __m512 rs, int nt, int wk, int hw, int tab)
{
    int64_t j = j0;

    if (w->nx != NULL) {
        for (; j + 32 <= j1; j += 32) {
            _mm_prefetch(w->nx + (size_t)j * 2u, _MM_HINT_T1);
            if (w->nr != NULL)
                _mm_prefetch(w->nr + (size_t)j * 2u, _MM_HINT_T1);
            rmsi_fwd_eo1(k, w, j, 0, 1, rs, nt, wk, hw, tab);
        }
    } else {
        for (; j + 32 <= j1; j += 32)
            rmsi_fwd_eo1(k, w, j, 0, 1, rs, nt, wk, hw, tab);
    }
    if (j < j1)
        rmsi_fwd_eo1(k, w, j, rmsi_vmask32(j1 - j), 0, rs, 0, wk, hw, tab);
}

RMSI_INLINE void rmsi_fwd_store_eo(const rmsi_fwd_ctx *c, const rmsi_fwd_row *w, int64_t j0,
                                   int64_t j1, __m512 rs, int nt, int wk, int hw)
{
    const rmsi_fwd_k k = { c->w, _mm512_set1_ps(c->off), 0 };

    if (w->hr == NULL) {
        /* no residual to add (the plain forward; the fused add's y sweep,
         * which reads its stack copy of h): a copy whose hr the compiler
         * sees is NULL, so the loop tests nothing for it */
        rmsi_fwd_row w0 = *w;
        w0.hr = NULL;
        if (w->wt != NULL && j0 == 0) /* the table's blocks start at column 0 */
            rmsi_fwd_store_eo_run(&k, &w0, j0, j1, rs, nt, wk, hw, 1);
        else
            rmsi_fwd_store_eo_run(&k, &w0, j0, j1, rs, nt, wk, hw, 0);
    } else {
        rmsi_fwd_store_eo_run(&k, w, j0, j1, rs, nt, wk, hw, 0);
    }
}

/* Columns [j0, j1) of the y/q sweep. */
RMSI_INLINE void rmsi_fwd_range(const rmsi_fwd_ctx *c, const rmsi_fwd_row *w, int64_t j0, int64_t j1,
                                __m512 rs, float qscale, int nt, rmsnorm_dtype t, int wk, int hw,
                                int simple)
{
    if (rmsi_fwd_eo(t, simple))
        rmsi_fwd_store_eo(c, w, j0, j1, rs, nt, wk, hw);
    else
        rmsi_fwd_store(c, w, j0, j1, rs, qscale, nt, t, wk, hw, simple);
}

/* The y/q sweep of a row, split at y's 64-byte boundary when streaming. */
RMSI_INLINE void rmsi_fwd_store_row(const rmsi_fwd_ctx *c, const rmsi_fwd_row *w, __m512 rs,
                                    float qscale, rmsnorm_dtype t, int wk, int hw, int simple)
{
    if (c->nt && w->y != NULL) {
        const int64_t head = rmsi_align_head(w->y, rmsi_vsize(t), c->cols);
        rmsi_fwd_range(c, w, 0, head, rs, qscale, 0, t, wk, hw, simple);
        rmsi_fwd_range(c, w, head, c->cols, rs, qscale, 1, t, wk, hw, simple);
    } else {
        rmsi_fwd_range(c, w, 0, c->cols, rs, qscale, 0, t, wk, hw, simple);
    }
}

/* max |v| over the row, NaN ignored (VMAXPS returns its second operand when
 * the first is NaN, which is fmaxf's rule here). */
RMSI_INLINE float rmsi_fwd_amax(const rmsi_fwd_ctx *c, const rmsi_fwd_row *w, __m512 rs,
                                rmsnorm_dtype t, int wk, int hw)
{
    const rmsi_fwd_k k = { c->w, _mm512_set1_ps(c->off), c->llama };
    __m512 am = _mm512_setzero_ps();
    int64_t j = 0;

    for (; j + RMSI_VL <= c->cols; j += RMSI_VL)
        am = _mm512_max_ps(_mm512_abs_ps(rmsi_fwd_v(&k, w, j, 0, 1, rs, t, wk, hw, 0)), am);
    if (j < c->cols) {
        const __mmask16 m = rmsi_vmask(c->cols - j);
        const __m512 v = rmsi_fwd_v(&k, w, j, m, 0, rs, t, wk, hw, 0);
        am = _mm512_mask_max_ps(am, m, _mm512_abs_ps(v), am);
    }
    return rmsi_hmax(am);
}

/* PER_BLOCK_128 (cols % 128 == 0, checked by the dispatch layer): a block's
 * eight vectors of v stay in registers between its amax and its stores. */
RMSI_INLINE void rmsi_fwd_block_row(const rmsi_fwd_ctx *c, const rmsi_fwd_row *w, int64_t r,
                                    __m512 rs, rmsnorm_dtype t, int wk, int hw)
{
    const rmsi_fwd_k k = { c->w, _mm512_set1_ps(c->off), c->llama };
    const size_t sz = rmsi_vsize(t);
    const rmsi_fp8v f = rmsi_fp8v_of(c->qt);
    int64_t b;
    int i;

    for (b = 0; b + 128 <= c->cols; b += 128) {
        __m512 v[8];
        __m512 am = _mm512_setzero_ps();
        for (i = 0; i < 8; i++) {
            v[i] = rmsi_fwd_v(&k, w, b + (int64_t)16 * i, 0, 1, rs, t, wk, hw, 0);
            am = _mm512_max_ps(_mm512_abs_ps(v[i]), am);
        }
        const float s = rmsi_dynamic_scale(rmsi_hmax(am), 0.0f, c->fmax, c->pow2);
        c->scale[(size_t)(b / 128) * (size_t)c->rows4 + (size_t)r] = s;
        const __m512 qs = _mm512_set1_ps(s);
        for (i = 0; i < 8; i++) {
            const int64_t j = b + (int64_t)16 * i;
            if (w->y != NULL)
                rmsi_vstore(w->y + (size_t)j * sz, v[i], t, hw, 0);
            _mm_storeu_si128((__m128i *)(w->q + j), rmsi_fp8_encode(_mm512_div_ps(v[i], qs), &f));
        }
    }
}

/* bf16 h_out of a whole row, 32 columns per step from the packed h. */
RMSI_INLINE void rmsi_fwd_store_h_eo(const rmsi_fwd_ctx *c, const char *x, const char *r, char *hout,
                                     int hw)
{
    const int64_t head = c->h_nt ? rmsi_align_head(hout, 2u, c->cols) : 0;
    int64_t j = 0;

    if (head > 0) {
        const rmsi_mask32 m = rmsi_vmask32(head);
        _mm512_mask_storeu_epi16(hout, m, rmsi_h_bits_eo(x, r, 0, m, 0, hw));
        j = head;
    }
    if (c->h_nt) {
        for (; j + 32 <= c->cols; j += 32)
            _mm512_stream_si512((void *)(hout + (size_t)j * 2u), rmsi_h_bits_eo(x, r, j, 0, 1, hw));
    } else {
        for (; j + 32 <= c->cols; j += 32)
            _mm512_storeu_si512(hout + (size_t)j * 2u, rmsi_h_bits_eo(x, r, j, 0, 1, hw));
    }
    if (j < c->cols) {
        const rmsi_mask32 m = rmsi_vmask32(c->cols - j);
        _mm512_mask_storeu_epi16(hout + (size_t)j * 2u, m, rmsi_h_bits_eo(x, r, j, m, 0, hw));
    }
}

/* Stores h = x (+ residual) to hout for the whole row. */
RMSI_INLINE void rmsi_fwd_store_h(const rmsi_fwd_ctx *c, const char *x, const char *r, char *hout,
                                  rmsnorm_dtype t, int hw)
{
    if (t == RMSNORM_BF16) {
        rmsi_fwd_store_h_eo(c, x, r, hout, hw);
        return;
    }
    const size_t sz = rmsi_vsize(t);
    const int64_t head = c->h_nt ? rmsi_align_head(hout, sz, c->cols) : 0;
    int64_t j = 0;

    for (; j + RMSI_VL <= head; j += RMSI_VL)
        rmsi_vstore(hout + (size_t)j * sz, rmsi_h_full(x, r, j, t), t, hw, 0);
    if (j < head) {
        const __mmask16 m = rmsi_vmask(head - j);
        rmsi_vstore_m(hout + (size_t)j * sz, rmsi_h_mask(x, r, j, t, m), t, hw, m);
        j = head;
    }
    if (c->h_nt) {
        for (; j + RMSI_VL <= c->cols; j += RMSI_VL)
            rmsi_vstore(hout + (size_t)j * sz, rmsi_h_full(x, r, j, t), t, hw, 1);
    } else {
        for (; j + RMSI_VL <= c->cols; j += RMSI_VL)
            rmsi_vstore(hout + (size_t)j * sz, rmsi_h_full(x, r, j, t), t, hw, 0);
    }
    if (j < c->cols) {
        const __mmask16 m = rmsi_vmask(c->cols - j);
        rmsi_vstore_m(hout + (size_t)j * sz, rmsi_h_mask(x, r, j, t, m), t, hw, m);
    }
}

/* Columns of the stack copy of h in rmsi_fwd_rows_fused_eo: 16 KiB, so that
 * at 8192 columns the y sweep reads h and the weight from L1/L2 instead of x,
 * residual and the weight. */
#define RMSI_FWD_HBUF_COLS 8192

/* 1 when the sum's sweep may store h_out: h is stored before y (h_out
 * aliasing x or residual alone must be stored last, rmsi_fwd_rows' order),
 * and a streamed h row starts on 64 bytes (the sweep has no store head). */
static inline int rmsi_fwd_h_put_ok(const rmsi_fwd_ctx *c)
{
    return c->h != NULL && c->h_first &&
           (!c->h_nt || (((uintptr_t)c->h | (uintptr_t)c->hs) & 63u) == 0u);
}

/* Rows [r0, r1) of the simple bf16 fused add. The
 * sweeps of rmsi_fwd_rows (sum with h_out, y) each form h from x and r
 * (two loads, two adds, a pack); here the sum sweep stores h and the y sweep
 * reads it back: from h_out when plain-stored (in cache), else from a stack
 * copy when the row fits, else from x + r. Same values, same sum order:
 * bit-identical. Measured in docs/perf/cpu.md, session 7. tab: the caller's
 * room for rmsi_fwd_wtab's table (one on the stack, not one per frame). */
RMSI_INLINE void rmsi_fwd_rows_fused_eo(const rmsi_fwd_ctx *c, int64_t r0, int64_t r1, int wk, int hw,
                                        float *tab)
{
    _Alignas(64) char hb[RMSI_FWD_HBUF_COLS * 2];
    char *const copy = (c->h_nt && c->cols <= RMSI_FWD_HBUF_COLS) ? hb : NULL;
    const float *const wt = rmsi_fwd_wtab(c, wk, r1 - r0, tab);
    int64_t r;

    for (r = r0; r < r1; r++) {
        const char *xr = c->x + (size_t)r * c->xs;
        const char *rr = c->res + (size_t)r * c->rs;
        char *hr = c->h + (size_t)r * c->hs;
        rmsi_fwd_row w;

        w.hx = copy != NULL ? copy : c->h_read ? hr : xr;
        w.hr = (copy != NULL || c->h_read) ? NULL : rr;
        w.y = c->y + (size_t)r * c->ys;
        w.q = NULL;
        w.nx = r + 1 < r1 ? xr + c->xs : NULL;
        w.nr = r + 1 < r1 ? rr + c->rs : NULL;
        w.wt = wt;

        const float ss = rmsi_row_sumsq_bf16_put(xr, rr, c->cols, hw, hr, copy, c->h_nt);
        const float rstd = rmsi_simd_rstd(ss, c->cols, c->eps);
        if (c->rstd != NULL)
            c->rstd[r] = rstd;
        rmsi_fwd_store_row(c, &w, _mm512_set1_ps(rstd), 1.0f, RMSNORM_BF16, wk, hw, 1);
    }
    if (c->nt || c->h_nt)
        _mm_sfence(); /* streaming stores visible before the caller (or the region's end) reads */
}

/* 1 when rmsi_fwd_rows_pipe_eo may run: the simple bf16 forward without a
 * residual, y plainly stored (a hot call), rows of one sum segment. */
static inline int rmsi_fwd_pipe_ok(const rmsi_fwd_ctx *c)
{
    return c->res == NULL && c->h == NULL && c->y != NULL && !c->nt && c->cols <= RMSI_SEG_MIN;
}

/* Row a's y sweep with row b's sum of squares alongside, 128 columns a step:
 * b's sum in rmsi_row_sumsq_bf16's blocks and order (one segment), a's y by
 * rmsi_fwd_eo1, so no bit changes. Returns b's sum. pf: the row after b,
 * prefetched into L2 as rmsi_fwd_store_eo_run does (NULL: none). */
RMSI_INLINE float rmsi_fwd_pipe_eo(const rmsi_fwd_ctx *c, const rmsi_fwd_row *a, __m512 rsa,
                                   const char *bx, const char *pf, int wk, int hw, int tab)
{
    const rmsi_fwd_k k = { c->w, _mm512_set1_ps(c->off), 0 };
    const int64_t c128 = c->cols & ~(int64_t)127;
    __m512 tot = _mm512_setzero_ps();
    int64_t j = 0;

    while (j < c128) {
        const int64_t end = (c128 - j > RMSI_SUM_BLOCK) ? j + RMSI_SUM_BLOCK : c128;
        __m512 a0 = _mm512_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
        for (; j < end; j += 128) {
            if (pf != NULL) {
                _mm_prefetch(pf + (size_t)j * 2u, _MM_HINT_T1);
                _mm_prefetch(pf + (size_t)j * 2u + 64u, _MM_HINT_T1);
                _mm_prefetch(pf + (size_t)j * 2u + 128u, _MM_HINT_T1);
                _mm_prefetch(pf + (size_t)j * 2u + 192u, _MM_HINT_T1);
            }
            a0 = rmsi_sq_acc(a0, rmsi_h_bits_eo(bx, NULL, j, 0, 1, hw), hw);
            rmsi_fwd_eo1(&k, a, j, 0, 1, rsa, 0, wk, hw, tab);
            a1 = rmsi_sq_acc(a1, rmsi_h_bits_eo(bx, NULL, j + 32, 0, 1, hw), hw);
            rmsi_fwd_eo1(&k, a, j + 32, 0, 1, rsa, 0, wk, hw, tab);
            a2 = rmsi_sq_acc(a2, rmsi_h_bits_eo(bx, NULL, j + 64, 0, 1, hw), hw);
            rmsi_fwd_eo1(&k, a, j + 64, 0, 1, rsa, 0, wk, hw, tab);
            a3 = rmsi_sq_acc(a3, rmsi_h_bits_eo(bx, NULL, j + 96, 0, 1, hw), hw);
            rmsi_fwd_eo1(&k, a, j + 96, 0, 1, rsa, 0, wk, hw, tab);
        }
        tot = _mm512_add_ps(tot, _mm512_add_ps(_mm512_add_ps(a0, a1), _mm512_add_ps(a2, a3)));
    }
    const float ss = rmsi_hsum(_mm512_add_ps(tot, rmsi_sumsq_bf16_tail(bx, NULL, c128, c->cols, hw, NULL, NULL, 0)));
    for (j = c128; j < c->cols; j += 32) {
        const int64_t left = c->cols - j;
        rmsi_fwd_eo1(&k, a, j, rmsi_vmask32(left < 32 ? left : 32), left >= 32, rsa, 0, wk, hw, tab);
    }
    return rmsi_sumsq_bf16_fix(ss, bx, NULL, c->cols, hw);
}

/* Rows [r0, r1) of the simple bf16 forward of hot rows: row r's y sweep
 * with row r + 1's sum (rmsi_fwd_pipe_eo), one sweep a row where there
 * were two: 70 instructions per 128 columns where the two loops took 83
 * (gcc 12 -O2), and the sum's loads from L2 overlap the y sweep's work.
 * 32x4096 hot on two threads 7.3-7.5 -> 6.8-7.1 us, 32x1024 3.5 -> 3.05
 * (docs/perf/cpu.md, session 41). Calls that stream y keep the two sweeps:
 * their stores start at an alignment head. */
RMSI_INLINE void rmsi_fwd_rows_pipe_eo(const rmsi_fwd_ctx *c, int64_t r0, int64_t r1, int wk, int hw,
                                       const float *wt)
{
    rmsi_fwd_row a;
    int64_t r;

    a.hr = NULL;
    a.q = NULL;
    a.nx = NULL;
    a.nr = NULL;
    a.wt = wt;
    a.hx = c->x + (size_t)r0 * c->xs;
    float rstd = rmsi_simd_rstd(rmsi_row_sumsq_bf16(a.hx, NULL, c->cols, hw), c->cols, c->eps);
    for (r = r0; r < r1; r++) {
        const __m512 rs = _mm512_set1_ps(rstd);
        a.hx = c->x + (size_t)r * c->xs;
        a.y = c->y + (size_t)r * c->ys;
        if (c->rstd != NULL)
            c->rstd[r] = rstd;
        if (r + 1 < r1) {
            const char *bx = a.hx + c->xs;
            const char *pf = r + 2 < r1 ? bx + c->xs : NULL;
            const float ss = wt != NULL ? rmsi_fwd_pipe_eo(c, &a, rs, bx, pf, wk, hw, 1)
                                        : rmsi_fwd_pipe_eo(c, &a, rs, bx, pf, wk, hw, 0);
            rstd = rmsi_simd_rstd(ss, c->cols, c->eps);
        } else {
            rmsi_fwd_store_eo(c, &a, 0, c->cols, rs, 0, wk, hw);
        }
    }
}

/* Where the y/q sweeps of a row read h after h_out's sweep, when that came
 * first: from h_out when h_read (one stream instead of x and residual). */
RMSI_INLINE void rmsi_fwd_h_src(const rmsi_fwd_ctx *c, rmsi_fwd_row *w, const char *hr)
{
    if (hr != NULL && c->h_first && c->h_read) {
        w->hx = hr;
        w->hr = NULL;
    }
}

/* Row r's y and/or q (qscale: PER_TOKEN's scale, found by the caller). */
RMSI_INLINE void rmsi_fwd_out(const rmsi_fwd_ctx *c, const rmsi_fwd_row *w, int64_t r, __m512 rs,
                              float qscale, rmsnorm_dtype t, int wk, int hw, int simple)
{
    switch (simple ? RMSNORM_QUANT_NONE : c->quant) {
    case RMSNORM_QUANT_PER_TENSOR:
        rmsi_fwd_store_row(c, w, rs, c->scale[0], t, wk, hw, 0);
        break;
    case RMSNORM_QUANT_PER_TOKEN:
        rmsi_fwd_store_row(c, w, rs, qscale, t, wk, hw, 0);
        break;
    case RMSNORM_QUANT_PER_BLOCK_128:
        rmsi_fwd_block_row(c, w, r, rs, t, wk, hw);
        break;
    case RMSNORM_QUANT_NONE:
    default:
        rmsi_fwd_store_row(c, w, rs, 1.0f, t, wk, hw, simple);
        break;
    }
}

/* Row r's pointers in c; the next row is prefetched when r + 1 < r1. */
RMSI_INLINE void rmsi_fwd_row_at(const rmsi_fwd_ctx *c, int64_t r, int64_t r1, const float *wt,
                                 int simple, rmsi_fwd_row *w, char **hr)
{
    const char *xr = c->x + (size_t)r * c->xs;
    const char *rr = c->res != NULL ? c->res + (size_t)r * c->rs : NULL;

    *hr = c->h != NULL ? c->h + (size_t)r * c->hs : NULL;
    w->hx = xr;
    w->hr = rr;
    w->y = c->y != NULL ? c->y + (size_t)r * c->ys : NULL;
    w->q = (!simple && c->q != NULL) ? c->q + (size_t)r * c->qs : NULL;
    w->nx = r + 1 < r1 ? xr + c->xs : NULL;
    w->nr = (r + 1 < r1 && rr != NULL) ? rr + c->rs : NULL;
    w->wt = wt;
}

/* Rows [r0, r1). simple != 0 (a compile-time constant of the instantiation):
 * the call has no quantisation and no ROUND_LLAMA and writes y, so the loops
 * carry none of their tests, and bf16 takes the even/odd sweeps. */
RMSI_INLINE void rmsi_fwd_rows(const rmsi_fwd_ctx *c, int64_t r0, int64_t r1, rmsnorm_dtype t,
                               int wk, int hw, int simple)
{
    _Alignas(64) float tab[RMSI_FWD_WT_COLS]; /* rmsi_fwd_wtab's, for the simple bf16 sweeps */
    int64_t r;
    /* h_out stored by the sum's sweep, streamed too when aligned: a sweep
     * over x and the residual less. Session 64 (a 2-vCPU Zen 5), cold fused
     * add at 16384x4096 and 8192x8192 on two threads, ratio to copy_nt: f32
     * 0.79-0.86 -> 0.94-1.03, f16 0.76 -> 0.82-0.89 (docs/perf/cpu.md). */
    const int put = rmsi_fwd_h_put_ok(c);

    if (rmsi_fwd_eo(t, simple) && put) {
        rmsi_fwd_rows_fused_eo(c, r0, r1, wk, hw, tab);
        return;
    }
    const float *const wt = rmsi_fwd_eo(t, simple) ? rmsi_fwd_wtab(c, wk, r1 - r0, tab) : NULL;
    if (rmsi_fwd_eo(t, simple) && rmsi_fwd_pipe_ok(c) && r1 - r0 >= 2) {
        rmsi_fwd_rows_pipe_eo(c, r0, r1, wk, hw, wt);
        return;
    }
    for (r = r0; r < r1; r++) {
        rmsi_fwd_row w;
        char *hr;
        float qscale = 1.0f;

        rmsi_fwd_row_at(c, r, r1, wt, simple, &w, &hr);
        if (simple && RMSI_NEVER(w.y == NULL))
            return; /* the simple instantiations are only picked with y */
        const char *xr = w.hx, *rr = w.hr;
        const float ss = !put                ? rmsi_row_sumsq(xr, rr, c->cols, t, hw)
                         : t == RMSNORM_BF16 ? rmsi_row_sumsq_bf16_put(xr, rr, c->cols, hw, hr, NULL, c->h_nt)
                                             : rmsi_row_sumsq_ps_put(xr, rr, c->cols, t, hr, c->h_nt);
        const float rstd = rmsi_simd_rstd(ss, c->cols, c->eps);
        const __m512 rs = _mm512_set1_ps(rstd);
        if (c->rstd != NULL)
            c->rstd[r] = rstd;
        if (hr != NULL && c->h_first && !put)
            rmsi_fwd_store_h(c, xr, rr, hr, t, hw);
        rmsi_fwd_h_src(c, &w, hr);
        if (!simple && c->quant == RMSNORM_QUANT_PER_TOKEN) {
            const float am = rmsi_fwd_amax(c, &w, rs, t, wk, hw);
            qscale = rmsi_dynamic_scale(am, c->ub, c->fmax, c->pow2);
            c->scale[r] = qscale;
        }
        rmsi_fwd_out(c, &w, r, rs, qscale, t, wk, hw, simple);
        if (hr != NULL && !c->h_first)
            rmsi_fwd_store_h(c, xr, rr, hr, t, hw);
    }
    if (c->nt || c->h_nt)
        _mm_sfence(); /* streaming stores visible before the caller (or the region's end) reads */
}

#endif /* RMSNORM_SIMD_FWD_ROWS_H */
