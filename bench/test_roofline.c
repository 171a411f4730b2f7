/*
 * Roofline measurement and drift detection, driven through a fake backend
 * whose probe does nothing and whose clock returns scripted times; and the
 * host backends' real probe (ref/host_probe.c), checked byte for byte.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "bench/bench.h"
#include "internal.h"

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

/* The host probes move the bytes they claim, in every kind and at every
 * alignment, on both the one-thread and the parallel path (1 MiB of lines
 * and more), and touch none of the 64 bytes either side of [dst, dst +
 * bytes), ref's SSE2 lines and avx512's zmm lines alike: the roofline is
 * only as good as the loop that measures it, and session 58 rewrote both. */
#define PROBE_GUARD ((size_t)64)
#define PROBE_MAX (((size_t)1 << 20) + 4096u)
static uint8_t probe_dst[PROBE_MAX + 2u * PROBE_GUARD];
static uint8_t probe_s0[PROBE_MAX + 64u];
static uint8_t probe_s1[PROBE_MAX + 64u];

typedef rmsnorm_status (*probe_fn)(rmsnorm_probe, void *, const void *, const void *, size_t,
                                   void *);

static void probe_moves_the_bytes(probe_fn probe, const char *name)
{
    static const size_t sizes[] = {0, 1, 15, 63, 64, 65, 1000, 4096 + 13, ((size_t)1 << 20) + 77};
    static const size_t doffs[] = {0, 1, 33};
    static const size_t soffs[] = {0, 5};
    for (size_t i = 0; i < sizeof probe_s0; i++) {
        probe_s0[i] = (uint8_t)(i * 7u + 3u);
        probe_s1[i] = (uint8_t)(i * 13u + 250u);
    }
    for (int k = 0; k < RMSI_BENCH_PROBE_KINDS; k++) {
        rmsnorm_probe kind = (rmsnorm_probe)k;
        for (size_t a = 0; a < sizeof sizes / sizeof sizes[0]; a++) {
            for (size_t b = 0; b < sizeof doffs / sizeof doffs[0]; b++) {
                for (size_t c = 0; c < sizeof soffs / sizeof soffs[0]; c++) {
                    size_t n = sizes[a];
                    uint8_t *d = probe_dst + PROBE_GUARD + doffs[b];
                    const uint8_t *s0 = probe_s0 + soffs[c];
                    const uint8_t *s1 = probe_s1 + 2u * soffs[c];
                    memset(probe_dst, 0xee, sizeof probe_dst);
                    assert_int_equal(probe(kind, d, s0, s1, n, NULL), RMSNORM_OK);
                    for (size_t j = 0; j < n; j++) {
                        uint8_t want;
                        switch (kind) {
                        case RMSNORM_PROBE_COPY:
                        case RMSNORM_PROBE_COPY_NT: want = s0[j]; break;
                        case RMSNORM_PROBE_R2W1:
                        case RMSNORM_PROBE_R2W1_NT: want = (uint8_t)(s0[j] + s1[j]); break;
                        default: want = RMSI_PROBE_FILL; break;
                        }
                        if (d[j] != want)
                            fail_msg("%s probe %d, %zu bytes, dst +%zu, src +%zu: byte %zu = 0x%02x, "
                                     "not 0x%02x", name, k, n, doffs[b], soffs[c], j, d[j], want);
                    }
                    for (uint8_t *g = probe_dst; g < d; g++)
                        assert_int_equal(*g, 0xee);
                    for (const uint8_t *g = d + n; g < d + n + PROBE_GUARD; g++)
                        assert_int_equal(*g, 0xee);
                }
            }
        }
    }
    assert_int_equal(probe((rmsnorm_probe)RMSI_BENCH_PROBE_KINDS, probe_dst, probe_s0, probe_s1, 64, NULL),
                     RMSNORM_ERR_BAD_ARGUMENT);
    assert_int_equal(probe(RMSNORM_PROBE_COPY, probe_dst, NULL, NULL, 64, NULL),
                     RMSNORM_ERR_NULL_POINTER);
}

static void host_probes_move_the_bytes(void **state)
{
    const rmsnorm_backend *avx = rmsnorm_backend_find("avx512");
    (void)state;
    probe_moves_the_bytes(rmsi_host_probe, "ref");
    if (avx == NULL) {
        print_message("avx512 absent: its probe not checked\n");
        return;
    }
    assert_non_null(RMSI_BENCH_HOOK(avx, probe));
    assert_true(RMSI_BENCH_HOOK(avx, probe) != rmsi_host_probe); /* its own zmm lines */
    probe_moves_the_bytes(RMSI_BENCH_HOOK(avx, probe), "avx512");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(best_of_three_and_best_kind, setup),
        cmocka_unit_test_setup(stable_roofline_is_trusted, setup),
        cmocka_unit_test_setup(drifting_roofline_is_suspect, setup),
        cmocka_unit_test_setup(unsupported_kinds_are_left_out, setup),
        cmocka_unit_test_setup(missing_hooks_degrade, setup),
        cmocka_unit_test(host_probes_move_the_bytes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
