/*
 * Threading of the AVX-512 backend. Baseline ISA: no vector code here.
 *
 * The split is one contiguous range per thread, fixed by (n, thread count),
 * never dynamic: results never depend on it (forward rows are independent and
 * dweight chunks are reduced in a fixed order), and contiguous ranges keep
 * each thread's reads one sequential stream.
 */
#include <omp.h>

#include "internal.h"
#include "simd/simd.h"

int rmsi_simd_parallel(int64_t rows, int64_t cols)
{
    if (rows < 2)
        return 0;
    /* rows * cols >= RMSI_SIMD_PARALLEL_MIN without forming the product */
    return cols >= (RMSI_SIMD_PARALLEL_MIN + rows - 1) / rows;
}

/* This thread's range of [0, n). */
static void my_range(int64_t n, int64_t *i0, int64_t *i1)
{
    const int64_t nth = omp_get_num_threads();
    const int64_t tid = omp_get_thread_num();
    const int64_t base = n / nth;
    const int64_t rem = n % nth;
    *i0 = tid * base + (tid < rem ? tid : rem);
    *i1 = *i0 + base + (tid < rem ? 1 : 0);
}

/* fn over this thread's range of [0, n), inside a region. */
static void run_mine(int64_t n, rmsi_range_fn fn, const void *ctx)
{
    int64_t i0, i1;
    my_range(n, &i0, &i1);
    if (i0 < i1)
        fn(ctx, i0, i1);
}

void rmsi_simd_run(int64_t n, int parallel, rmsi_range_fn fn, const void *ctx)
{
    /* one unit of work (a backward with one dweight chunk) would leave the
     * second thread idle behind the region's cost */
    if (!parallel || n < 2 || omp_get_max_threads() < 2) {
        fn(ctx, 0, n);
        return;
    }
#pragma omp parallel
    run_mine(n, fn, ctx);
}

void rmsi_simd_run_then(int64_t n0, rmsi_range_fn f0, const void *c0, int64_t n1, rmsi_range_fn f1,
                        const void *c1, int parallel)
{
    if (!parallel || omp_get_max_threads() < 2) {
        f0(c0, 0, n0);
        f1(c1, 0, n1);
        return;
    }
#pragma omp parallel
    {
        run_mine(n0, f0, c0);
        /* f1 reads what f0 stored for other items */
#pragma omp barrier
        run_mine(n1, f1, c1);
    }
}

int rmsi_simd_even(int64_t n)
{
    return n % omp_get_max_threads() == 0;
}

int64_t rmsi_simd_uneven(int64_t rows, int64_t chunk_rows, size_t in_bytes)
{
    const int64_t nth = omp_get_max_threads();
    const int64_t n = (rows + chunk_rows - 1) / chunk_rows;
    const int64_t most0 = (n + nth - 1) / nth * chunk_rows; /* thread 0's rows */
    const int64_t most = most0 < rows ? most0 : rows;

    if (nth < 2 || rows < 1)
        return 0;
    if (most * nth >= rows * 2)
        return nth;
    return most * nth * 2 >= rows * 3 && in_bytes / (size_t)nth <= RMSI_SIMD_UNEVEN_CACHED ? nth : 0;
}

int rmsi_simd_wide(int64_t rows, int64_t cols, int64_t nseg, int64_t min_elems)
{
    if (nseg < 2 || rows >= omp_get_max_threads() || rows > RMSI_WIDE_SLOTS / (nseg + 1))
        return 0;
    /* rows * cols >= min_elems without forming the product */
    return cols >= (min_elems + rows - 1) / rows;
}

void rmsi_simd_run_phases(int64_t n, int nphases, rmsi_phase_fn fn, const void *ctx)
{
#pragma omp parallel
    {
        int64_t i0, i1;
        int p;
        my_range(n, &i0, &i1);
        for (p = 0; p < nphases; p++) {
            if (i0 < i1)
                fn(ctx, p, i0, i1);
            /* the next phase reads what this one stored for other items */
#pragma omp barrier
        }
    }
}
