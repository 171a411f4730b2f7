/*
 * Timing through the backend's own clock. CPU backends time with the host
 * monotonic clock, GPU backends with device events (and optionally a captured
 * graph); a backend without a time_region hook is timed here with the host
 * clock around rmsnorm_synchronize, which includes launch latency and is said
 * so in the report.
 */
#include <time.h>

#include "bench/bench.h"

double rmsi_bench_now(void)
{
    struct timespec ts;
    if (clock_gettime(CLOCK_MONOTONIC, &ts) != 0)
        return 0.0;
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

rmsnorm_status rmsi_bench_time(const rmsnorm_backend *be, rmsnorm_work_fn fn, void *ctx, int reps,
                               int use_graph, double *seconds)
{
    rmsnorm_status (*tr)(rmsnorm_work_fn, void *, int, int, void *, double *) =
        RMSI_BENCH_HOOK(be, time_region);
    *seconds = 0.0;
    if (reps < 1)
        return RMSNORM_ERR_BAD_ARGUMENT;
    if (tr != NULL)
        return tr(fn, ctx, reps, use_graph, NULL, seconds);
    rmsnorm_status st = rmsnorm_synchronize(be, NULL);
    if (st != RMSNORM_OK)
        return st;
    double t0 = rmsi_bench_now();
    for (int i = 0; i < reps; i++) {
        st = fn(ctx);
        if (st != RMSNORM_OK)
            return st;
    }
    st = rmsnorm_synchronize(be, NULL);
    *seconds = rmsi_bench_now() - t0;
    return st;
}
