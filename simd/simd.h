/*
 * Cross-file names of the AVX-512 backend (simd/). cpu_x86.c is built with the
 * baseline ISA and only calls these through the table it hands out after the
 * CPU and OS checks; the kernel files (forward.c, backward.c) are built with
 * the AVX-512 flags of simd/simd.ninja.
 */
#ifndef RMSNORM_SIMD_SIMD_H
#define RMSNORM_SIMD_SIMD_H

#include <stddef.h>
#include <stdint.h>

#include "rmsnorm.h"

/* Set once by cpu_x86.c before the table is published: 1 when the CPU has
 * AVX512-BF16 (VCVTNEPS2BF16 is then used for bf16 stores). */
extern int rmsi_avx512_has_bf16;
extern int rmsi_avx512_bwd_far_pf; /* the backward's far prefetch (cpu_x86.c) */

rmsnorm_status rmsi_avx512_forward(const rmsnorm_forward_args *a, void *stream);
rmsnorm_status rmsi_avx512_backward(const rmsnorm_backward_args *a, void *stream);
rmsnorm_status rmsi_avx512_backward_workspace_size(int64_t rows, int64_t cols, size_t *bytes);

/* Total bytes a call moves at or above which outputs are written with
 * non-temporal stores: below it the outputs stay in the caches (hot small
 * calls), where streaming stores are about 2x slower. About the L3 size. */
#define RMSI_SIMD_NT_MIN ((size_t)24 << 20)

/* Elements (rows * cols) at or above which a call opens an OpenMP region (about
 * 1.3 us with one thread, 3.5 us with two here): below it one thread is faster.
 * 2^16, i.e. 16 rows of 4096: a hot bf16 row costs about 0.45 us, so two
 * threads win from about 16 such rows (docs/perf/cpu.md, session 15: 2^18
 * against 2^16 at 16x4096, 16x8192, 32x4096, alternated four times, the
 * forward and fused add 0.5-0.8x the time, hot or cold; 8 rows lost). */
#define RMSI_SIMD_PARALLEL_MIN ((int64_t)1 << 16)

/* Bytes per element of any dtype (fp8: 1). */
static inline size_t rmsi_vsize_dt(rmsnorm_dtype t)
{
    switch (t) {
    case RMSNORM_F32: return 4u;
    case RMSNORM_F16:
    case RMSNORM_BF16: return 2u;
    case RMSNORM_F8_E4M3:
    case RMSNORM_F8_E5M2:
    case RMSNORM_F8_E4M3FNUZ:
    default: return 1u;
    }
}

/* A kernel over the items [i0, i1) (rows, or dweight row chunks) of ctx. */
typedef void (*rmsi_range_fn)(const void *ctx, int64_t i0, int64_t i1);

/* 1 when a call over rows x cols should open an OpenMP region. */
int rmsi_simd_parallel(int64_t rows, int64_t cols);

/* fn over [0, n): one contiguous range per thread when parallel, else one
 * call on the calling thread (no OpenMP region at all). */
void rmsi_simd_run(int64_t n, int parallel, rmsi_range_fn fn, const void *ctx);

/* f0 over [0, n0), then f1 over [0, n1) once f0 is done everywhere, one
 * contiguous range per thread each, in one OpenMP region when parallel. For
 * a backward's dweight chunks and then their reduction by columns: the
 * barrier costs less than a second region, and each thread reads only its
 * share of the others' partials, which a hot call's threads own again at
 * once when they next write them (docs/perf/cpu.md, session 43). */
void rmsi_simd_run_then(int64_t n0, rmsi_range_fn f0, const void *c0, int64_t n1, rmsi_range_fn f1,
                        const void *c1, int parallel);

/* 1 when n items split into equal ranges over the threads a region would
 * have. */
int rmsi_simd_even(int64_t n);

/* The threads of a region when rows >= 1 in chunks of chunk_rows, whole
 * chunks to a thread, would leave the busiest thread with at least twice the
 * mean of rows (16 rows in one chunk on 2 threads), or at least 1.5 times
 * (40 rows in 16, 16 and 8: 1.6x) with at most RMSI_SIMD_UNEVEN_CACHED of
 * in_bytes a thread; else 0. For the backward's dweight chunks, whose tiled
 * form (simd/bwd_tiles.h) reads in_bytes (x, dy, dresidual) twice: the
 * second time from a thread's L2 only when they fit it. 2-vCPU Xeon, hot and
 * from memory (docs/perf/cpu.md, session 62): a 2x share gained 20-45%
 * everywhere, streamed calls of 24 MiB and more included; a 1.6x one
 * gained 10-25% at 0.6-1.3 MiB a thread and lost 8% at 5 MiB (f32
 * 40x32768); a 1.33x one (24x8192) lost up to 15%. */
#define RMSI_SIMD_UNEVEN_CACHED ((size_t)1 << 20)
int64_t rmsi_simd_uneven(int64_t rows, int64_t chunk_rows, size_t in_bytes);

/* A kernel's phase (0, 1, ...) over the items [i0, i1) of ctx: a call of a
 * few wide rows, whose items are a row's column segments (simd/wide.h). */
typedef void (*rmsi_phase_fn)(const void *ctx, int phase, int64_t i0, int64_t i1);

/* An instantiation's two entry points: over rows or dweight chunks split
 * between threads, and over a wide call's segments (or a tiled backward's
 * parts, simd/bwd_tiles.h) in phases. */
typedef struct rmsi_kern {
    rmsi_range_fn rows;
    rmsi_phase_fn wide;
} rmsi_kern;

/* fn's phases 0 .. nphases - 1 over [0, n), one contiguous range per thread,
 * every thread done with a phase before any starts the next: the later
 * phases read what the earlier ones stored for other items. */
void rmsi_simd_run_phases(int64_t n, int nphases, rmsi_phase_fn fn, const void *ctx);

/* Most (row, segment) slots a wide call keeps on the stack, its segment
 * totals and one tail per row: rows * (segments + 1) of them. 8 KiB of
 * vectors; enough for 1 row up to the most segments a row has
 * (RMSI_SEG_MAX), or 7 rows of 2^18 columns. */
#define RMSI_WIDE_SLOTS 128

/* 1 when a call should split its rows' columns over threads: fewer rows
 * than threads, at least min_elems elements, rows of 2 or more segments
 * (nseg) that fit RMSI_WIDE_SLOTS. 0: split rows, not columns. */
int rmsi_simd_wide(int64_t rows, int64_t cols, int64_t nseg, int64_t min_elems);

/* The wide forward's min_elems: x of 256 KiB. A hot bf16 row of 2^16 took
 * 5.6 us on one thread and 6.9 split (a region and two barriers), 2^16 f32
 * 10.4 and 9.3, 98304 bf16 9.2-10.3 and 8.7-9.4 (docs/perf/cpu.md, session
 * 40). The backward, with more work a column, splits from
 * RMSI_SIMD_PARALLEL_MIN (2^16 bf16 14 -> 12 us). */
#define RMSI_WIDE_FWD_MIN_BYTES ((int64_t)256 << 10)

/* dweight chunking: chunks of max(16, ceil(rows / 64)) rows, fixed by the
 * shape alone, so dw is bitwise identical for any thread count. */
int64_t rmsi_avx512_dw_chunks(int64_t rows, int64_t *chunk_rows);

#endif /* RMSNORM_SIMD_SIMD_H */
