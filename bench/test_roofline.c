/*
 * Roofline measurement and drift detection, driven through a fake backend
 * whose probe does nothing and whose clock returns scripted times.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "bench/bench.h"

static double fake_time[RMSI_BENCH_PROBE_KINDS]; /* seconds per probe, per kind */
static double fake_scale = 1.0;                   /* slows every probe by this factor */
static int fake_nt_unsupported;
static int fake_calls[RMSI_BENCH_PROBE_KINDS];
static rmsnorm_probe fake_last;

static rmsnorm_status fake_probe(rmsnorm_probe kind, void *dst, const void *src0,
                                 const void *src1, size_t bytes, void *stream)
{
    (void)dst;
    (void)src0;
    (void)src1;
    (void)bytes;
    (void)stream;
    if (fake_nt_unsupported && kind >= RMSNORM_PROBE_COPY_NT)
        return RMSNORM_ERR_UNSUPPORTED;
    fake_last = kind;
    fake_calls[kind]++;
    return RMSNORM_OK;
}

static rmsnorm_status fake_time_region(rmsnorm_work_fn fn, void *ctx, int reps, int use_graph,
                                       void *stream, double *seconds)
{
    (void)use_graph;
    (void)stream;
    for (int i = 0; i < reps; i++) {
        rmsnorm_status st = fn(ctx);
        if (st != RMSNORM_OK)
            return st;
    }
    /* the second of three tries is the fastest, so best-of-three must find it */
    double jitter = fake_calls[fake_last] % 3 == 2 ? 1.0 : 1.25;
    *seconds = fake_time[fake_last] * fake_scale * jitter * reps;
    return RMSNORM_OK;
}

static struct rmsnorm_backend fake;
static rmsi_bench_probe_bufs bufs;

static int setup(void **state)
{
    (void)state;
    memset(&fake, 0, sizeof fake);
    fake.struct_size = sizeof fake;
    fake.abi_major = RMSNORM_BACKEND_ABI_MAJOR;
    fake.name = "fake";
    fake.probe = fake_probe;
    fake.time_region = fake_time_region;
    memset(&bufs, 0, sizeof bufs);
    bufs.bytes = 1000000000u; /* 1 GB per buffer: GB/s = traffic factor / seconds */
    for (int k = 0; k < RMSI_BENCH_PROBE_KINDS; k++)
        fake_time[k] = 1.0;
    fake_time[RMSNORM_PROBE_COPY_NT] = 0.5; /* streaming copy: 4 GB/s, the best kind */
    fake_scale = 1.0;
    fake_nt_unsupported = 0;
    memset(fake_calls, 0, sizeof fake_calls);
    return 0;
}

static void best_of_three_and_best_kind(void **state)
{
    rmsi_bench_probe_set s;
    (void)state;
    assert_int_equal(rmsi_bench_probe_measure(&fake, &bufs, 3, &s), RMSNORM_OK);
    for (int k = 0; k < RMSI_BENCH_PROBE_KINDS; k++)
        assert_int_equal(fake_calls[k], 3);
    assert_true(fabs(s.gbps[RMSNORM_PROBE_COPY] - 2.0) < 1e-9);
    assert_true(fabs(s.gbps[RMSNORM_PROBE_WRITE] - 1.0) < 1e-9);
    assert_true(fabs(s.gbps[RMSNORM_PROBE_R2W1] - 3.0) < 1e-9);
    assert_true(fabs(s.gbps[RMSNORM_PROBE_COPY_NT] - 4.0) < 1e-9);
    assert_int_equal(s.best_kind, RMSNORM_PROBE_COPY_NT);
    assert_true(fabs(s.best - 4.0) < 1e-9);
}

static void stable_roofline_is_trusted(void **state)
{
    rmsi_bench_roofline rf;
    rmsi_bench_probe_set close;
    (void)state;
    memset(&rf, 0, sizeof rf);
    assert_int_equal(rmsi_bench_probe_measure(&fake, &bufs, 3, &rf.open), RMSNORM_OK);
    fake_scale = 1.02; /* 2% slower at the end: within the limit */
    assert_int_equal(rmsi_bench_probe_measure(&fake, &bufs, 3, &close), RMSNORM_OK);
    rmsi_bench_roofline_close(&rf, &close);
    assert_true(rf.closed);
    assert_true(fabs(rf.drift - (1.0 / 1.02 - 1.0)) < 1e-9);
    assert_false(rf.suspect);
}

static void drifting_roofline_is_suspect(void **state)
{
    rmsi_bench_roofline rf;
    rmsi_bench_probe_set close;
    (void)state;
    memset(&rf, 0, sizeof rf);
    assert_int_equal(rmsi_bench_probe_measure(&fake, &bufs, 3, &rf.open), RMSNORM_OK);
    fake_scale = 1.05; /* a neighbour woke up: 4.8% less bandwidth */
    assert_int_equal(rmsi_bench_probe_measure(&fake, &bufs, 3, &close), RMSNORM_OK);
    rmsi_bench_roofline_close(&rf, &close);
    assert_true(rf.suspect);
    assert_true(rf.drift < -RMSI_BENCH_DRIFT_LIMIT);
    /* faster is as suspect as slower */
    memset(&rf, 0, sizeof rf);
    fake_scale = 1.0;
    assert_int_equal(rmsi_bench_probe_measure(&fake, &bufs, 3, &rf.open), RMSNORM_OK);
    fake_scale = 0.95;
    assert_int_equal(rmsi_bench_probe_measure(&fake, &bufs, 3, &close), RMSNORM_OK);
    rmsi_bench_roofline_close(&rf, &close);
    assert_true(rf.suspect);
}

static void unsupported_kinds_are_left_out(void **state)
{
    rmsi_bench_probe_set s;
    (void)state;
    fake_nt_unsupported = 1;
    assert_int_equal(rmsi_bench_probe_measure(&fake, &bufs, 3, &s), RMSNORM_OK);
    assert_true(s.gbps[RMSNORM_PROBE_COPY_NT] == 0.0);
    assert_int_equal(s.best_kind, RMSNORM_PROBE_R2W1);
    assert_true(fabs(s.best - 3.0) < 1e-9);
}

static void missing_hooks_degrade(void **state)
{
    rmsi_bench_probe_set s;
    double g = 1.0;
    (void)state;
    fake.probe = NULL;
    assert_int_equal(rmsi_bench_probe_once(&fake, &bufs, RMSNORM_PROBE_COPY, 10, &g),
                     RMSNORM_ERR_UNSUPPORTED);
    assert_true(g == 0.0);
    assert_int_equal(rmsi_bench_probe_measure(&fake, &bufs, 3, &s), RMSNORM_ERR_UNSUPPORTED);
    /* a table built before the probe slot existed: the hook reads as absent */
    fake.probe = fake_probe;
    fake.struct_size = offsetof(struct rmsnorm_backend, probe);
    assert_null(RMSI_BENCH_HOOK(&fake, probe));
    assert_null(RMSI_BENCH_HOOK(&fake, time_region));
    fake.struct_size = sizeof fake;
    assert_non_null(RMSI_BENCH_HOOK(&fake, probe));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(best_of_three_and_best_kind, setup),
        cmocka_unit_test_setup(stable_roofline_is_trusted, setup),
        cmocka_unit_test_setup(drifting_roofline_is_suspect, setup),
        cmocka_unit_test_setup(unsupported_kinds_are_left_out, setup),
        cmocka_unit_test_setup(missing_hooks_degrade, setup),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
