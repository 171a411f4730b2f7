/* Statistics, drift arithmetic, shape lists and the validation bounds. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <omp.h>

#include <cmocka.h>

#include "bench/bench.h"

static void median_min_max(void **state)
{
    const double odd[] = { 5.0, 1.0, 4.0, 2.0, 3.0 };
    const double even[] = { 4.0, 1.0, 3.0, 2.0 };
    rmsi_bench_summary s;
    (void)state;
    assert_int_equal(rmsi_bench_summarise(odd, 5, &s), 0);
    assert_true(s.median == 3.0 && s.min == 1.0 && s.max == 5.0 && s.n == 5);
    assert_int_equal(rmsi_bench_summarise(even, 4, &s), 0);
    assert_true(s.median == 2.5 && s.min == 1.0 && s.max == 4.0);
    assert_int_equal(rmsi_bench_summarise(odd, 1, &s), 0);
    assert_true(s.median == 5.0);
}

static void median_resists_outliers(void **state)
{
    double v[RMSI_BENCH_MIN_SAMPLES];
    rmsi_bench_summary s;
    (void)state;
    for (int i = 0; i < RMSI_BENCH_MIN_SAMPLES; i++)
        v[i] = 1.0 + 0.001 * i;
    v[3] = 100.0; /* a neighbour's burst */
    v[7] = 1e-9;
    assert_int_equal(rmsi_bench_summarise(v, RMSI_BENCH_MIN_SAMPLES, &s), 0);
    assert_true(s.median > 1.0 && s.median < 1.02);
    assert_true(s.max == 100.0 && s.min == 1e-9);
}

static void summary_rejects_bad_input(void **state)
{
    double v[2] = { 1.0, NAN };
    rmsi_bench_summary s;
    (void)state;
    assert_int_equal(rmsi_bench_summarise(v, 0, &s), -1);
    assert_int_equal(rmsi_bench_summarise(v, RMSI_BENCH_MAX_SAMPLES + 1, &s), -1);
    assert_int_equal(rmsi_bench_summarise(v, 2, &s), -1);
    assert_int_equal(rmsi_bench_summarise(NULL, 2, &s), -1);
}

static void drift_limits(void **state)
{
    (void)state;
    assert_true(fabs(rmsi_bench_drift(10.0, 10.2) - 0.02) < 1e-12);
    assert_false(rmsi_bench_drift_suspect(rmsi_bench_drift(10.0, 10.2)));
    assert_false(rmsi_bench_drift_suspect(rmsi_bench_drift(10.0, 9.75)));
    assert_true(rmsi_bench_drift_suspect(rmsi_bench_drift(10.0, 10.4)));
    assert_true(rmsi_bench_drift_suspect(rmsi_bench_drift(10.0, 9.6)));
    assert_true(rmsi_bench_drift_suspect(rmsi_bench_drift(0.0, 9.6)));
    assert_true(rmsi_bench_drift_suspect(rmsi_bench_drift(10.0, 0.0)));
    assert_true(rmsi_bench_drift_suspect(NAN));
}

static void grids(void **state)
{
    rmsi_bench_shape s[RMSI_BENCH_MAX_SHAPES];
    int n = 0;
    (void)state;
    assert_int_equal(rmsi_bench_grid_named("full", s, RMSI_BENCH_MAX_SHAPES, &n), 0);
    assert_int_equal(n, 48);
    assert_true(s[0].rows == 1 && s[0].cols == 512);
    assert_true(s[47].rows == 65536 && s[47].cols == 16384);
    assert_int_equal(rmsi_bench_grid_named("small", s, RMSI_BENCH_MAX_SHAPES, &n), 0);
    assert_true(n > 0 && n <= 8);
    assert_int_equal(rmsi_bench_grid_named("huge", s, RMSI_BENCH_MAX_SHAPES, &n), -1);
    assert_int_equal(rmsi_bench_grid_named("full", s, 10, &n), -1);
}

static void shape_lists(void **state)
{
    rmsi_bench_shape s[4];
    int n = 0;
    (void)state;
    assert_int_equal(rmsi_bench_shapes_parse("1x4096,32X5120", s, 4, &n), 0);
    assert_int_equal(n, 2);
    assert_true(s[0].rows == 1 && s[0].cols == 4096 && s[1].rows == 32 && s[1].cols == 5120);
    const char *bad[] = { "0x7", "", "4096", "1x", "x5", "1x0", "-1x5", "1x5,", "1x5;2x3", "1x5x6" };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        n = 0;
        assert_int_equal(rmsi_bench_shapes_parse(bad[i], s, 4, &n), -1);
    }
    n = 0;
    assert_int_equal(rmsi_bench_shapes_parse("1x1,1x1,1x1,1x1,1x1", s, 4, &n), -1);
}

static void validation_bounds(void **state)
{
    float a[3] = { 1.0f, 2.0f, 3.0f }, o[3] = { 1.0f, 2.0f, 3.0f };
    (void)state;
    assert_true(rmsi_bench_ulp(RMSNORM_BF16, 1.0) == 0x1p-7);
    assert_true(rmsi_bench_ulp(RMSNORM_F16, 1.5) == 0x1p-10);
    assert_true(rmsi_bench_ulp(RMSNORM_F16, 1e-9) == 0x1p-24);
    assert_true(rmsi_bench_ulp(RMSNORM_F32, 4.0) == 0x1p-21);
    assert_true(rmsi_bench_ulp_fp8(RMSNORM_F8_E4M3, 1.0) == 0x1p-3);
    assert_true(rmsi_bench_check_act(a, o, RMSNORM_F32, 3, 0) == 0.0);
    a[1] = 2.0f * (1.0f + 1e-5f); /* within twice 1e-5 relative */
    assert_true(rmsi_bench_check_act(a, o, RMSNORM_F32, 3, 0) <= 1.0);
    assert_true(rmsi_bench_check_act(a, o, RMSNORM_F32, 3, 1) > 1.0); /* h is bit-exact */
    a[1] = 2.0f * (1.0f + 1e-4f);
    assert_true(rmsi_bench_check_act(a, o, RMSNORM_F32, 3, 0) > 1.0);
    a[1] = NAN;
    assert_true(isinf(rmsi_bench_check_act(a, o, RMSNORM_F32, 3, 0)));
    assert_true(rmsi_bench_check_l2(o, o, 3) == 0.0);
    assert_true(rmsi_bench_check_rel(o, o, 3) == 0.0);
    /* fp8 codes one apart pass, far apart fail */
    assert_true(rmsi_bench_check_q(0x38, 0x39, 1.0f, 1.0f, RMSNORM_F8_E4M3) <= 1.0);
    assert_true(rmsi_bench_check_q(0x38, 0x40, 1.0f, 1.0f, RMSNORM_F8_E4M3) > 1.0);
}

/* The threaded whole-output checks: more than one chunk of elements, an error
 * in the last element or the last row found, a NaN the worst, and the same
 * result on one thread as on several. */
static void validation_all(void **state)
{
    enum { N = 3 * 65536 + 5, R = 5, C = 64 };
    float *a = malloc(N * sizeof(float)), *o = malloc(N * sizeof(float));
    float x[R * C], dy[R * C], dxa[R * C], dxo[R * C], w[C], rstd[R];
    (void)state;
    assert_non_null(a);
    assert_non_null(o);
    for (size_t i = 0; i < N; i++)
        o[i] = a[i] = 1.0f + (float)(i % 97) * 0.25f;
    assert_true(rmsi_bench_check_act_all(a, o, RMSNORM_F32, N, 0) == 0.0);
    a[N - 1] *= 1.0f + 1e-4f;
    const double many = rmsi_bench_check_act_all(a, o, RMSNORM_F32, N, 0);
    assert_true(many > 1.0);
    const int nth = omp_get_max_threads();
    omp_set_num_threads(1);
    assert_true(rmsi_bench_check_act_all(a, o, RMSNORM_F32, N, 0) == many);
    omp_set_num_threads(nth);
    a[70000] = NAN;
    assert_true(isinf(rmsi_bench_check_act_all(a, o, RMSNORM_F32, N, 0)));
    free(a);
    free(o);

    for (int j = 0; j < C; j++)
        w[j] = 1.0f + (float)j / 64.0f;
    for (int r = 0; r < R; r++) {
        rstd[r] = 0.5f + (float)r;
        for (int j = 0; j < C; j++) {
            x[r * C + j] = (float)((r * 7 + j * 3) % 11) - 5.0f;
            dy[r * C + j] = (float)((r * 5 + j) % 13) * 0.125f - 0.75f;
            dxa[r * C + j] = dxo[r * C + j] = (float)(r + j) * 0.5f + 1.0f;
        }
    }
    assert_true(rmsi_bench_check_dx_all(dxa, dxo, x, dy, w, RMSNORM_F32, RMSNORM_F32, R, C, rstd) == 0.0);
    dxa[R * C - 1] *= 1.0f + 1e-3f;
    assert_true(rmsi_bench_check_dx_all(dxa, dxo, x, dy, w, RMSNORM_F32, RMSNORM_F32, R, C, rstd) > 1.0);
    dxa[R * C - 1] = NAN;
    assert_true(isinf(rmsi_bench_check_dx_all(dxa, dxo, x, dy, w, RMSNORM_F32, RMSNORM_F32, R, C, rstd)));
    /* no weight: the bound takes 1 for it */
    dxa[R * C - 1] = dxo[R * C - 1];
    assert_true(rmsi_bench_check_dx_all(dxa, dxo, x, dy, NULL, RMSNORM_F32, RMSNORM_F32, R, C, rstd) == 0.0);
    dxa[0] *= 1.0f + 1e-3f;
    assert_true(rmsi_bench_check_dx_all(dxa, dxo, x, dy, NULL, RMSNORM_F32, RMSNORM_F32, R, C, rstd) > 1.0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(median_min_max),     cmocka_unit_test(median_resists_outliers),
        cmocka_unit_test(summary_rejects_bad_input), cmocka_unit_test(drift_limits),
        cmocka_unit_test(grids),              cmocka_unit_test(shape_lists),
        cmocka_unit_test(validation_bounds), cmocka_unit_test(validation_all),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
