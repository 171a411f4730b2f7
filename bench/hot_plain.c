/*
 * hot-plain: issue 4's hot small-row cells (rmsnorm-bench --hot: a call within
 * 1.5x of a hot memcpy moving its logical bytes, half read, half written;
 * ratio = memcpy time / call time >= 0.667) beside plain kernels of the same
 * ops, to say whether the target is within this core's reach at all.
 *
 * For each cell, hot in cache, best of 15 rounds:
 *  - lib: the library's call on the avx512 backend, on the given threads;
 *  - plain: a straightforward AVX-512 kernel of the same op on as many
 *    threads (rows split evenly, one OpenMP region), free of what the library
 *    owes its callers: rstd given to the backward, the weight widened to fp32
 *    beforehand, every pointer 64-byte aligned, cols a multiple of 64, no
 *    checks, any summation order, one dw partial a thread;
 *  - memcpy of half the cell's logical bytes on one thread (the benchmark's
 *    probe).
 * The plain kernels are not a proven bound (the library's pipelined rows beat
 * them at 16-32 rows), but where they too stay far under 0.667, no amount of
 * tuning of the library's own code gets there. Their outputs are checked
 * against the library's before timing. A tool, not a test: `ninja
 * build/hot-plain`, run by hand (docs/perf/cpu.md, session 63).
 */
#include <immintrin.h>
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/bench.h"
#include "ref/formats.h"

#define PLAIN_ISA __attribute__((target("avx512f,avx512bw,avx512bf16,fma")))
#define ROUNDS 15

typedef struct cell {
    int bf16;      /* else fp32 */
    rmsnorm_dtype t;
    int backward;  /* else forward */
    int64_t rows, cols;
    int threads;      /* the library's and the plain kernel's */
    void *x, *dy, *y; /* y: the plain kernel's output (y or dx) */
    void *ly;         /* the library's */
    float *wt, *rstd, *part, *dw;
    void *wb;         /* the weight as the library takes it, in the cell's dtype */
    void *ws;
    size_t ws_bytes;
    rmsnorm_forward_args fa;
    rmsnorm_backward_args ba;
} cell;

/* aligned_alloc wants a size that is a multiple of the alignment */
static void *alloc64(size_t n)
{
    return aligned_alloc(64, (n + 63u) & ~(size_t)63);
}

/* 32 bf16 at p as their 16 even and 16 odd elements in fp32 */
PLAIN_ISA static inline void eo(const char *p, __m512 *e, __m512 *o)
{
    const __m512i v = _mm512_load_si512((const void *)p);
    *e = _mm512_castsi512_ps(_mm512_slli_epi32(v, 16));
    *o = _mm512_castsi512_ps(_mm512_and_si512(v, _mm512_set1_epi32((int)0xFFFF0000u)));
}

/* even and odd fp32 back to 32 bf16 in element order */
PLAIN_ISA static inline __m512i pack_eo(__m512 e, __m512 o)
{
    const __m512i idx = _mm512_set_epi16(31, 15, 30, 14, 29, 13, 28, 12, 27, 11, 26, 10, 25, 9, 24, 8, 23, 7,
                                         22, 6, 21, 5, 20, 4, 19, 3, 18, 2, 17, 1, 16, 0);
    return _mm512_permutexvar_epi16(idx, (__m512i)_mm512_cvtne2ps_pbh(o, e));
}

/* the forward's rstd from its sum vector (eps 1e-6, as the library's calls) */
PLAIN_ISA static inline __m512 plain_rstd(__m512 sum, int64_t cols)
{
    return _mm512_set1_ps(1.0f / sqrtf(_mm512_reduce_add_ps(sum) / (float)cols + 1e-6f));
}

PLAIN_ISA static void fwd_f32(const cell *c, int64_t r0, int64_t r1)
{
    for (int64_t r = r0; r < r1; r++) {
        const float *x = (const float *)c->x + r * c->cols;
        float *y = (float *)c->y + r * c->cols;
        __m512 a0 = _mm512_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
        for (int64_t j = 0; j < c->cols; j += 64) {
            const __m512 v0 = _mm512_load_ps(x + j), v1 = _mm512_load_ps(x + j + 16);
            const __m512 v2 = _mm512_load_ps(x + j + 32), v3 = _mm512_load_ps(x + j + 48);
            a0 = _mm512_fmadd_ps(v0, v0, a0);
            a1 = _mm512_fmadd_ps(v1, v1, a1);
            a2 = _mm512_fmadd_ps(v2, v2, a2);
            a3 = _mm512_fmadd_ps(v3, v3, a3);
        }
        const __m512 rs = plain_rstd(_mm512_add_ps(_mm512_add_ps(a0, a1), _mm512_add_ps(a2, a3)), c->cols);
        for (int64_t j = 0; j < c->cols; j += 16)
            _mm512_store_ps(y + j, _mm512_mul_ps(_mm512_mul_ps(_mm512_load_ps(x + j), rs), _mm512_load_ps(c->wt + j)));
    }
}

/* wt in even/odd order per 32 columns */
PLAIN_ISA static void fwd_bf16(const cell *c, int64_t r0, int64_t r1)
{
    for (int64_t r = r0; r < r1; r++) {
        const char *x = (const char *)c->x + (size_t)(r * c->cols) * 2u;
        char *y = (char *)c->y + (size_t)(r * c->cols) * 2u;
        __m512 a0 = _mm512_setzero_ps(), a1 = a0, a2 = a0, a3 = a0, e, o, e2, o2;
        for (int64_t j = 0; j < c->cols; j += 64) {
            eo(x + j * 2, &e, &o);
            eo(x + j * 2 + 64, &e2, &o2);
            a0 = _mm512_fmadd_ps(e, e, a0);
            a1 = _mm512_fmadd_ps(o, o, a1);
            a2 = _mm512_fmadd_ps(e2, e2, a2);
            a3 = _mm512_fmadd_ps(o2, o2, a3);
        }
        const __m512 rs = plain_rstd(_mm512_add_ps(_mm512_add_ps(a0, a1), _mm512_add_ps(a2, a3)), c->cols);
        for (int64_t j = 0; j < c->cols; j += 32) {
            eo(x + j * 2, &e, &o);
            e = _mm512_mul_ps(_mm512_mul_ps(e, rs), _mm512_load_ps(c->wt + j));
            o = _mm512_mul_ps(_mm512_mul_ps(o, rs), _mm512_load_ps(c->wt + j + 16));
            _mm512_store_si512((void *)(y + j * 2), pack_eo(e, o));
        }
    }
}

/* dx = rs (g - n cm), g = dy w, n = x rs, cm = sum(g n) / cols; part += dy n */
PLAIN_ISA static void bwd_f32(const cell *c, int64_t r0, int64_t r1, float *pp)
{
    for (int64_t r = r0; r < r1; r++) {
        const float *x = (const float *)c->x + r * c->cols, *dy = (const float *)c->dy + r * c->cols;
        float *dx = (float *)c->y + r * c->cols;
        const __m512 rs = _mm512_set1_ps(c->rstd[r]);
        __m512 a0 = _mm512_setzero_ps(), a1 = a0;
        for (int64_t j = 0; j < c->cols; j += 32) {
            a0 = _mm512_fmadd_ps(_mm512_mul_ps(_mm512_load_ps(dy + j), _mm512_load_ps(c->wt + j)),
                                 _mm512_mul_ps(_mm512_load_ps(x + j), rs), a0);
            a1 = _mm512_fmadd_ps(_mm512_mul_ps(_mm512_load_ps(dy + j + 16), _mm512_load_ps(c->wt + j + 16)),
                                 _mm512_mul_ps(_mm512_load_ps(x + j + 16), rs), a1);
        }
        const __m512 cm = _mm512_set1_ps(_mm512_reduce_add_ps(_mm512_add_ps(a0, a1)) / (float)c->cols);
        for (int64_t j = 0; j < c->cols; j += 16) {
            const __m512 d = _mm512_load_ps(dy + j), n = _mm512_mul_ps(_mm512_load_ps(x + j), rs);
            const __m512 g = _mm512_mul_ps(d, _mm512_load_ps(c->wt + j));
            _mm512_store_ps(dx + j, _mm512_mul_ps(rs, _mm512_fnmadd_ps(n, cm, g)));
            _mm512_store_ps(pp + j, r == r0 ? _mm512_mul_ps(d, n) : _mm512_fmadd_ps(d, n, _mm512_load_ps(pp + j)));
        }
    }
}

/* bf16 x, dy, dx; wt and part in even/odd order per 32 columns */
PLAIN_ISA static void bwd_bf16(const cell *c, int64_t r0, int64_t r1, float *pp)
{
    for (int64_t r = r0; r < r1; r++) {
        const char *x = (const char *)c->x + (size_t)(r * c->cols) * 2u;
        const char *dy = (const char *)c->dy + (size_t)(r * c->cols) * 2u;
        char *dx = (char *)c->y + (size_t)(r * c->cols) * 2u;
        const __m512 rs = _mm512_set1_ps(c->rstd[r]);
        __m512 a0 = _mm512_setzero_ps(), a1 = a0, xe, xo, de, dO;
        for (int64_t j = 0; j < c->cols; j += 32) {
            eo(x + j * 2, &xe, &xo);
            eo(dy + j * 2, &de, &dO);
            a0 = _mm512_fmadd_ps(_mm512_mul_ps(de, _mm512_load_ps(c->wt + j)), _mm512_mul_ps(xe, rs), a0);
            a1 = _mm512_fmadd_ps(_mm512_mul_ps(dO, _mm512_load_ps(c->wt + j + 16)), _mm512_mul_ps(xo, rs), a1);
        }
        const __m512 cm = _mm512_set1_ps(_mm512_reduce_add_ps(_mm512_add_ps(a0, a1)) / (float)c->cols);
        for (int64_t j = 0; j < c->cols; j += 32) {
            eo(x + j * 2, &xe, &xo);
            eo(dy + j * 2, &de, &dO);
            const __m512 ne = _mm512_mul_ps(xe, rs), no = _mm512_mul_ps(xo, rs);
            const __m512 ge = _mm512_mul_ps(de, _mm512_load_ps(c->wt + j));
            const __m512 go = _mm512_mul_ps(dO, _mm512_load_ps(c->wt + j + 16));
            _mm512_store_si512((void *)(dx + j * 2), pack_eo(_mm512_mul_ps(rs, _mm512_fnmadd_ps(ne, cm, ge)),
                                                             _mm512_mul_ps(rs, _mm512_fnmadd_ps(no, cm, go))));
            float *p = pp + j;
            _mm512_store_ps(p, r == r0 ? _mm512_mul_ps(de, ne) : _mm512_fmadd_ps(de, ne, _mm512_load_ps(p)));
            _mm512_store_ps(p + 16, r == r0 ? _mm512_mul_ps(dO, no) : _mm512_fmadd_ps(dO, no, _mm512_load_ps(p + 16)));
        }
    }
}

/* Each thread's partial of the backward's dw (bf16: in even/odd order) into
 * dw in column order. */
PLAIN_ISA static void reduce_parts(const cell *c, int parts)
{
    const __m512i lo = _mm512_set_epi32(23, 7, 22, 6, 21, 5, 20, 4, 19, 3, 18, 2, 17, 1, 16, 0);
    const __m512i hi = _mm512_add_epi32(lo, _mm512_set1_epi32(8));
    for (int64_t j = 0; j < c->cols; j += 32) {
        __m512 e = _mm512_load_ps(c->part + j), o = _mm512_load_ps(c->part + j + 16);
        for (int p = 1; p < parts; p++) {
            e = _mm512_add_ps(e, _mm512_load_ps(c->part + p * c->cols + j));
            o = _mm512_add_ps(o, _mm512_load_ps(c->part + p * c->cols + j + 16));
        }
        _mm512_store_ps(c->dw + j, c->bf16 ? _mm512_permutex2var_ps(e, lo, o) : e);
        _mm512_store_ps(c->dw + j + 16, c->bf16 ? _mm512_permutex2var_ps(e, hi, o) : o);
    }
}

static void plain_rows(const cell *c, int64_t r0, int64_t r1, float *pp)
{
    if (c->backward && c->bf16)
        bwd_bf16(c, r0, r1, pp);
    else if (c->backward)
        bwd_f32(c, r0, r1, pp);
    else if (c->bf16)
        fwd_bf16(c, r0, r1);
    else
        fwd_f32(c, r0, r1);
}

/* The plain kernel on c->threads threads, rows split evenly (one OpenMP
 * region, as the library's calls of 16 rows and more open). */
static void run_plain(const cell *c)
{
    const int nt = c->rows < c->threads ? (int)c->rows : c->threads;
    if (nt <= 1) {
        plain_rows(c, 0, c->rows, c->part);
    } else {
#pragma omp parallel num_threads(nt)
        {
            const int64_t t = omp_get_thread_num();
            plain_rows(c, t * c->rows / nt, (t + 1) * c->rows / nt, c->part + t * c->cols);
        }
    }
    if (c->backward)
        reduce_parts(c, nt < 1 ? 1 : nt);
}

static double best_of(const rmsnorm_backend *be, const cell *c, int which, int calls, void *dst,
                      const void *src, size_t n)
{
    double best = 1e30;
    for (int k = 0; k < ROUNDS; k++) {
        const double t0 = rmsi_bench_now();
        for (int i = 0; i < calls; i++) {
            if (which == 0) {
                if ((c->backward ? rmsnorm_backward(be, &c->ba, NULL) : rmsnorm_forward(be, &c->fa, NULL)) !=
                    RMSNORM_OK)
                    return -1.0;
            } else if (which == 1) {
                run_plain(c);
            } else {
                memcpy(dst, src, n);
            }
            __asm__ volatile("" ::: "memory");
        }
        const double t = (rmsi_bench_now() - t0) / (double)calls;
        best = t < best ? t : best;
    }
    return best;
}

/* The plain kernel's outputs against the library's, both poisoned (NaN)
 * before their calls so that an unwritten element fails: elementwise
 * relative 1e-2 (bf16 dx a few ulps apart from the sum order), dw 1e-4. */
static int check(const cell *c)
{
    const int64_t n = c->rows * c->cols;
    for (int64_t i = 0; i < n; i++) {
        const double a = rmsi_load(c->y, c->t, (size_t)i), b = rmsi_load(c->ly, c->t, (size_t)i);
        if (!(fabs(a - b) <= 1e-2 * (fabs(b) + 1e-3)))
            return 0;
    }
    if (c->backward) {
        const float *ldw = c->ba.dweight;
        for (int64_t j = 0; j < c->cols; j++)
            if (!(fabs((double)c->dw[j] - ldw[j]) <= 1e-4 * (fabs((double)ldw[j]) + 1.0)))
                return 0;
    }
    return 1;
}

static int setup(cell *c, const rmsnorm_backend *be)
{
    const rmsnorm_dtype t = c->t;
    const size_t es = rmsnorm_dtype_size(t), n = (size_t)(c->rows * c->cols);
    void **bufs[] = { &c->x, &c->dy, &c->y, &c->ly };
    for (size_t b = 0; b < 4; b++)
        if ((*bufs[b] = alloc64(n * es)) == NULL)
            return 0;
    c->wt = alloc64((size_t)c->cols * 4u);
    c->part = alloc64((size_t)c->cols * 4u * (size_t)c->threads);
    c->dw = alloc64((size_t)c->cols * 8u); /* the plain kernel's, then the library's */
    c->wb = alloc64((size_t)c->cols * es);
    c->rstd = alloc64((size_t)c->rows * 4u);
    if (c->wt == NULL || c->part == NULL || c->dw == NULL || c->wb == NULL || c->rstd == NULL ||
        rmsnorm_backward_workspace_size(be, c->rows, c->cols, &c->ws_bytes) != RMSNORM_OK ||
        (c->ws = alloc64(c->ws_bytes)) == NULL)
        return 0;
    uint32_t s = 12345u;
    for (size_t i = 0; i < n; i++) {
        s = s * 1664525u + 1013904223u;
        rmsi_store(c->x, t, i, 0.5f + (float)(s >> 8) / 16777216.0f);
        rmsi_store(c->dy, t, i, (float)(s >> 20) / 4096.0f - 0.5f);
    }
    for (int64_t j = 0; j < c->cols; j++) {
        /* bf16: the plain kernels' table is in even/odd order per 32 columns */
        const int64_t at = c->bf16 ? (j & ~(int64_t)31) + (j & 1) * 16 + (j & 31) / 2 : j;
        rmsi_store(c->wb, t, (size_t)j, 0.75f + (float)(j % 37) / 64.0f);
        c->wt[at] = rmsi_load(c->wb, t, (size_t)j);
    }
    for (int64_t r = 0; r < c->rows; r++) {
        double ss = 0.0;
        for (int64_t j = 0; j < c->cols; j++) {
            const double v = rmsi_load(c->x, t, (size_t)(r * c->cols + j));
            ss += v * v;
        }
        c->rstd[r] = (float)(1.0 / sqrt(ss / (double)c->cols + 1e-6));
    }
    const rmsnorm_matrix x = { c->x, t, c->rows, c->cols, c->cols };
    memset(&c->fa, 0, sizeof c->fa);
    c->fa.struct_size = sizeof c->fa;
    c->fa.x = x;
    c->fa.weight = c->wb;
    c->fa.weight_dtype = t;
    c->fa.eps = 1e-6f;
    c->fa.y = (rmsnorm_matrix){ c->ly, t, c->rows, c->cols, c->cols };
    memset(&c->ba, 0, sizeof c->ba);
    c->ba.struct_size = sizeof c->ba;
    c->ba.x = x;
    c->ba.dy = (rmsnorm_matrix){ c->dy, t, c->rows, c->cols, c->cols };
    c->ba.dx = c->fa.y;
    c->ba.weight = c->wb;
    c->ba.weight_dtype = t;
    c->ba.rstd = c->rstd;
    c->ba.eps = 1e-6f;
    c->ba.dweight = c->dw + c->cols;
    c->ba.workspace = c->ws;
    c->ba.workspace_bytes = c->ws_bytes;
    return 1;
}

static void release(cell *c)
{
    void *p[] = { c->x, c->dy, c->y, c->ly, c->wt, c->part, c->dw, c->wb, c->rstd, c->ws };
    for (size_t i = 0; i < sizeof p / sizeof p[0]; i++)
        free(p[i]);
}

static int run_cell(const rmsnorm_backend *be, int threads, int bf16, int backward, int64_t rows, int64_t cols)
{
    cell c;
    memset(&c, 0, sizeof c);
    c.threads = threads;
    c.bf16 = bf16;
    c.t = bf16 ? RMSNORM_BF16 : RMSNORM_F32;
    c.backward = backward;
    c.rows = rows;
    c.cols = cols;
    /* the memcpy of rmsnorm-bench --hot: half the cell's main bytes */
    const rmsi_bench_model_opts mo = { RMSNORM_F8_E4M3, 0, 0, RMSI_BENCH_WEIGHT_SAME };
    rmsi_bench_bytes by;
    const int modelled =
        rmsi_bench_bytes_of(backward ? RMSI_BENCH_BACKWARD : RMSI_BENCH_FORWARD, c.t, rows, cols, &mo, &by) == 0;
    const size_t half = modelled ? (size_t)((by.main_read + by.main_written) / 2u) : 0u;
    void *src = alloc64(half), *dst = alloc64(half);
    int ok = modelled && src != NULL && dst != NULL && setup(&c, be);
    if (ok) {
        const size_t out = (size_t)(rows * cols) * rmsnorm_dtype_size(c.t);
        memset(src, 1, half);
        memset(c.y, 0xFF, out); /* NaN in both dtypes */
        memset(c.ly, 0xFF, out);
        memset(c.dw, 0xFF, (size_t)cols * 8u);
        ok = (backward ? rmsnorm_backward(be, &c.ba, NULL) : rmsnorm_forward(be, &c.fa, NULL)) == RMSNORM_OK;
    }
    if (ok) {
        run_plain(&c);
        ok = check(&c);
    }
    double tl = 0.0, tf = 0.0, tm = 0.0;
    if (ok) {
        const int calls = (int)(2e6 / (double)(rows * cols)) + 20;
        tl = best_of(be, &c, 0, calls, NULL, NULL, 0);
        tf = best_of(be, &c, 1, calls, NULL, NULL, 0);
        tm = best_of(be, &c, 2, calls, dst, src, half);
        ok = tl > 0.0;
    }
    if (ok) {
        (void)printf("%-8s %-5s %5lld %6lld %9.3f %9.3f %9.3f   %5.3f  %5.3f  %5.2f\n", backward ? "backward" : "forward",
                     bf16 ? "bf16" : "f32", (long long)rows, (long long)cols, tl * 1e6, tf * 1e6, tm * 1e6, tm / tl,
                     tm / tf, tl / tf);
    } else {
        (void)printf("%-8s %-5s %5lld %6lld  FAILED (setup, the library's call or the plain kernel's check)\n",
                     backward ? "backward" : "forward", bf16 ? "bf16" : "f32", (long long)rows, (long long)cols);
    }
    release(&c);
    free(src);
    free(dst);
    return ok;
}

int main(int argc, char **argv)
{
    const rmsnorm_backend *be = rmsnorm_backend_find("avx512");
    int ok = 1;

    if (be == NULL || !__builtin_cpu_supports("avx512bf16")) {
        (void)fprintf(stderr, "hot-plain: needs the avx512 backend and AVX512-BF16\n");
        return 2;
    }
    char *end = NULL;
    const long threads = argc > 1 ? strtol(argv[1], &end, 10) : 1;
    if (argc > 2 || (end != NULL && *end != '\0') || threads < 1 || threads > 256) {
        (void)fprintf(stderr, "usage: hot-plain [threads]   (default 1; rmsnorm-bench --hot's targets are at 2)\n");
        return 2;
    }
    omp_set_num_threads((int)threads); /* the library's calls */
    (void)printf("%ld thread(s), hot, best of %d rounds; ratio = a one-thread memcpy of half the logical bytes / "
                 "call (the target: >= 0.667)\n", threads, ROUNDS);
    (void)printf("op       dtype  rows   cols    lib_us plain_us memcpy_us   lib    plain  lib/plain\n");
    static const int64_t shapes[][2] = { { 1, 4096 }, { 16, 4096 }, { 32, 4096 } };
    for (int bwd = 0; bwd < 2; bwd++)
        for (int bf = 1; bf >= 0; bf--)
            for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
                ok &= run_cell(be, (int)threads, bf, bwd, shapes[s][0], shapes[s][1]);
    return ok ? 0 : 1;
}
