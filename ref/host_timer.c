/*
 * The CPU backends' timer for rmsnorm-bench: the host monotonic clock around
 * reps calls. CPU work is synchronous, so no fence is needed at either end.
 */
#include <time.h>

#include "internal.h"

static rmsnorm_status now(double *t)
{
    struct timespec ts;

    if (clock_gettime(CLOCK_MONOTONIC, &ts) != 0)
        return RMSNORM_ERR_DEVICE;
    *t = (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
    return RMSNORM_OK;
}

rmsnorm_status rmsi_host_time_region(rmsnorm_work_fn fn, void *ctx, int reps, int use_graph,
                                     void *stream, double *seconds)
{
    rmsnorm_status first = RMSNORM_OK;
    rmsnorm_status st;
    double t0;
    double t1;
    int i;

    (void)use_graph; /* graphs are a GPU notion: plain calls on the CPU */
    (void)stream;
    if (fn == NULL || seconds == NULL)
        return RMSNORM_ERR_NULL_POINTER;
    if (reps < 1)
        return RMSNORM_ERR_BAD_ARGUMENT;
    st = now(&t0);
    if (st != RMSNORM_OK)
        return st;
    for (i = 0; i < reps; i++) {
        st = fn(ctx);
        if (st != RMSNORM_OK && first == RMSNORM_OK)
            first = st;
    }
    st = now(&t1);
    if (st != RMSNORM_OK)
        return st;
    *seconds = t1 - t0;
    return first;
}
