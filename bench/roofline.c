/*
 * The roofline, measured on the machine through the backend's probe hook:
 * copy, pure write and 2-reads-1-write streams (plain and non-temporal stores
 * where the backend has both) over buffers far larger than the last-level
 * cache. Each kind is run `tries` times and its best kept; the roofline is the
 * best kind. The sweep is bracketed by two such measurements, and a closing
 * roofline more than RMSI_BENCH_DRIFT_LIMIT away from the opening one marks
 * every ratio of the run as suspect.
 */
#include <string.h>

#include "bench/bench.h"

typedef struct probe_work {
    rmsnorm_status (*probe)(rmsnorm_probe, void *, const void *, const void *, size_t, void *);
    rmsnorm_probe kind;
    const rmsi_bench_probe_bufs *pb;
    size_t bytes;
} probe_work;

static rmsnorm_status probe_call(void *ctx)
{
    const probe_work *w = ctx;
    return w->probe(w->kind, w->pb->dst, w->pb->src0, w->pb->src1, w->bytes, NULL);
}

void rmsi_bench_probe_free(const rmsnorm_backend *be, rmsi_bench_probe_bufs *pb)
{
    void *p[3] = { pb->dst, pb->src0, pb->src1 };
    for (int i = 0; i < 3; i++) {
        if (p[i] != NULL && rmsnorm_mem_free(be, p[i]) != RMSNORM_OK)
            (void)fprintf(stderr, "rmsnorm-bench: warning: freeing a probe buffer failed\n");
    }
    memset(pb, 0, sizeof *pb);
}

/* Three buffers of `bytes`, every page touched once by a write probe so the
 * first timed probe does not pay for page faults. */
rmsnorm_status rmsi_bench_probe_alloc(const rmsnorm_backend *be, size_t bytes,
                                      rmsi_bench_probe_bufs *pb)
{
    rmsnorm_status (*probe)(rmsnorm_probe, void *, const void *, const void *, size_t, void *) =
        RMSI_BENCH_HOOK(be, probe);
    rmsnorm_status st;
    memset(pb, 0, sizeof *pb);
    if (probe == NULL)
        return RMSNORM_ERR_UNSUPPORTED;
    st = rmsnorm_mem_alloc(be, bytes, &pb->dst);
    if (st == RMSNORM_OK)
        st = rmsnorm_mem_alloc(be, bytes, &pb->src0);
    if (st == RMSNORM_OK)
        st = rmsnorm_mem_alloc(be, bytes, &pb->src1);
    pb->bytes = bytes;
    void *p[3] = { pb->dst, pb->src0, pb->src1 };
    for (int i = 0; i < 3 && st == RMSNORM_OK; i++)
        st = probe(RMSNORM_PROBE_WRITE, p[i], pb->src0, pb->src1, bytes, NULL);
    if (st == RMSNORM_OK)
        st = rmsnorm_synchronize(be, NULL);
    if (st != RMSNORM_OK)
        rmsi_bench_probe_free(be, pb);
    return st;
}

/* One timed probe of `bytes` per buffer (<= pb->bytes); GB/s of its traffic. */
rmsnorm_status rmsi_bench_probe_once(const rmsnorm_backend *be, const rmsi_bench_probe_bufs *pb,
                                     rmsnorm_probe kind, size_t bytes, double *gbps)
{
    probe_work w;
    double s = 0.0;
    *gbps = 0.0;
    w.probe = RMSI_BENCH_HOOK(be, probe);
    w.kind = kind;
    w.pb = pb;
    w.bytes = bytes < pb->bytes ? bytes : pb->bytes;
    if (w.probe == NULL)
        return RMSNORM_ERR_UNSUPPORTED;
    rmsnorm_status st = rmsi_bench_time(be, probe_call, &w, 1, 0, &s);
    if (st != RMSNORM_OK)
        return st;
    if (!(s > 0.0))
        return RMSNORM_ERR_DEVICE;
    *gbps = (double)rmsi_bench_probe_traffic(kind, w.bytes) / s * 1e-9;
    return RMSNORM_OK;
}

/* Every probe kind, best of `tries`. A kind the backend reports as
 * RMSNORM_ERR_UNSUPPORTED (no streaming stores, say) stays 0; any other error
 * ends the measurement. */
rmsnorm_status rmsi_bench_probe_measure(const rmsnorm_backend *be, const rmsi_bench_probe_bufs *pb,
                                        int tries, rmsi_bench_probe_set *set)
{
    memset(set, 0, sizeof *set);
    set->best_kind = RMSNORM_PROBE_COPY;
    for (int k = 0; k < RMSI_BENCH_PROBE_KINDS; k++) {
        for (int t = 0; t < tries; t++) {
            double g = 0.0;
            rmsnorm_status st = rmsi_bench_probe_once(be, pb, (rmsnorm_probe)k, pb->bytes, &g);
            if (st == RMSNORM_ERR_UNSUPPORTED)
                break;
            if (st != RMSNORM_OK)
                return st;
            if (g > set->gbps[k])
                set->gbps[k] = g;
        }
        if (set->gbps[k] > set->best) {
            set->best = set->gbps[k];
            set->best_kind = (rmsnorm_probe)k;
        }
    }
    return set->best > 0.0 ? RMSNORM_OK : RMSNORM_ERR_UNSUPPORTED;
}

void rmsi_bench_roofline_close(rmsi_bench_roofline *rf, const rmsi_bench_probe_set *close)
{
    rf->close = *close;
    rf->closed = 1;
    rf->drift = rmsi_bench_drift(rf->open.best, close->best);
    rf->suspect = rmsi_bench_drift_suspect(rf->drift);
}
