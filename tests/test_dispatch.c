/*
 * Discovery and dispatch: version, backend enumeration and properties, "auto",
 * and the environment knobs. The knobs are read once, at initialisation, so
 * tests.ninja runs this binary three times: plain, with RMSNORM_BACKEND=ref
 * (--expect-auto=ref) and with RMSNORM_DISABLE_AVX512=1
 * (--expect-absent=avx512). Memory helpers round-trip on every backend.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/backends.h"
#include "tests/buffers.h"

static const char *g_expect_auto;   /* --expect-auto=NAME */
static const char *g_expect_absent; /* --expect-absent=NAME */

static void version_matches_macros(void **state)
{
    uint32_t v = rmsnorm_version();
    (void)state;
    assert_int_equal(v, RMSNORM_VERSION_NUMBER);
    assert_int_equal(v >> 16, RMSNORM_VERSION_MAJOR);
    assert_int_equal((v >> 8) & 0xffu, RMSNORM_VERSION_MINOR);
    assert_int_equal(v & 0xffu, RMSNORM_VERSION_PATCH);
}

static void enumeration(void **state)
{
    int n = rmsnorm_backend_count();
    int has_ref = 0;
    (void)state;
    assert_true(n >= 1);
    assert_null(rmsnorm_backend_at(-1));
    assert_null(rmsnorm_backend_at(n));
    for (int i = 0; i < n; i++) {
        const rmsnorm_backend *be = rmsnorm_backend_at(i);
        const char *name;
        assert_non_null(be);
        name = rmsnorm_backend_name(be);
        assert_non_null(name);
        assert_true(name[0] != '\0');
        /* names are unique and find() returns the same table */
        assert_ptr_equal(rmsnorm_backend_find(name), be);
        for (int k = 0; k < i; k++)
            assert_string_not_equal(rmsnorm_backend_name(rmsnorm_backend_at(k)), name);
        if (strcmp(name, "ref") == 0) {
            has_ref = 1;
            assert_int_equal(rmsnorm_backend_is_device(be), 0);
        }
        if (strcmp(name, "avx512") == 0)
            assert_int_equal(rmsnorm_backend_is_device(be), 0);
        if (strcmp(name, "cuda") == 0 || strcmp(name, "hip") == 0)
            assert_int_equal(rmsnorm_backend_is_device(be), 1);
        /* every backend runs the forward on some dtype */
        assert_true((rmsnorm_backend_caps(be) & RMSNORM_CAP_FORWARD) != 0);
        assert_true((rmsnorm_backend_caps(be) & (RMSNORM_CAP_F32 | RMSNORM_CAP_F16 | RMSNORM_CAP_BF16)) != 0);
        print_message("backend %d: %s, caps 0x%x, %s\n", i, name, rmsnorm_backend_caps(be),
                      rmsnorm_backend_is_device(be) ? "device" : "host");
    }
    assert_true(has_ref);
    /* the reference implements everything: it is the oracle of the others */
    assert_int_equal(rmsnorm_backend_caps(rmsnorm_backend_find("ref")),
                     RMSNORM_CAP_F32 | RMSNORM_CAP_F16 | RMSNORM_CAP_BF16 | RMSNORM_CAP_FORWARD |
                         RMSNORM_CAP_BACKWARD | RMSNORM_CAP_RESIDUAL | RMSNORM_CAP_QUANT_PER_TENSOR |
                         RMSNORM_CAP_QUANT_PER_TOKEN | RMSNORM_CAP_QUANT_PER_BLOCK |
                         RMSNORM_CAP_FP8_E4M3 | RMSNORM_CAP_FP8_E5M2 | RMSNORM_CAP_FP8_E4M3FNUZ);
    /* NULL and unknown names */
    assert_string_equal(rmsnorm_backend_name(NULL), "");
    assert_int_equal(rmsnorm_backend_is_device(NULL), 0);
    assert_int_equal(rmsnorm_backend_caps(NULL), 0);
    assert_null(rmsnorm_backend_find(NULL));
    assert_null(rmsnorm_backend_find("nope"));
}

static int present(const char *name)
{
    return rmsnorm_backend_find(name) != NULL;
}

static void auto_choice(void **state)
{
    const rmsnorm_backend *a = rmsnorm_backend_find("auto");
    const char *pin = getenv("RMSNORM_BACKEND");
    int listed = 0;
    (void)state;
    assert_non_null(a);
    for (int i = 0; i < rmsnorm_backend_count(); i++)
        listed |= rmsnorm_backend_at(i) == a;
    assert_true(listed);
    print_message("auto = %s (RMSNORM_BACKEND=%s)\n", rmsnorm_backend_name(a), pin != NULL ? pin : "");
    if (g_expect_auto != NULL) {
        assert_non_null(pin); /* the run that pins must really pin */
        assert_string_equal(rmsnorm_backend_name(a), g_expect_auto);
    } else if (pin == NULL || pin[0] == '\0') {
        /* the fastest present: a GPU, else avx512, else ref */
        const char *want = present("cuda") ? "cuda" : present("hip") ? "hip"
                           : present("avx512") ? "avx512" : "ref";
        assert_string_equal(rmsnorm_backend_name(a), want);
    }
}

static void hidden_backend(void **state)
{
    (void)state;
    if (g_expect_absent == NULL) {
#if defined(__x86_64__) && defined(__GNUC__)
        /* the library's own probe also checks XCR0; gcc's checks the OS state too */
        if (getenv("RMSNORM_DISABLE_AVX512") == NULL && getenv("RMSNORM_DISABLE") == NULL &&
            __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
            __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq"))
            assert_true(present("avx512"));
        if (present("avx512"))
            assert_true(__builtin_cpu_supports("avx512f"));
#endif
        print_message("no --expect-absent: nothing hidden in this run\n");
        return;
    }
    assert_false(present(g_expect_absent));
    for (int i = 0; i < rmsnorm_backend_count(); i++)
        assert_string_not_equal(rmsnorm_backend_name(rmsnorm_backend_at(i)), g_expect_absent);
    /* auto still works without it */
    assert_non_null(rmsnorm_backend_find("auto"));
    assert_string_not_equal(rmsnorm_backend_name(rmsnorm_backend_find("auto")), g_expect_absent);
}

static void sizes_and_counts(void **state)
{
    size_t n = 0;
    (void)state;
    assert_int_equal(rmsnorm_dtype_size(RMSNORM_F32), 4);
    assert_int_equal(rmsnorm_dtype_size(RMSNORM_F16), 2);
    assert_int_equal(rmsnorm_dtype_size(RMSNORM_BF16), 2);
    assert_int_equal(rmsnorm_dtype_size(RMSNORM_F8_E4M3), 1);
    assert_int_equal(rmsnorm_dtype_size(RMSNORM_F8_E5M2), 1);
    assert_int_equal(rmsnorm_dtype_size(RMSNORM_F8_E4M3FNUZ), 1);
    assert_int_equal(rmsnorm_dtype_size((rmsnorm_dtype)6), 0);
    assert_int_equal(rmsnorm_quant_scale_count(RMSNORM_QUANT_NONE, 5, 256, &n), RMSNORM_OK);
    assert_int_equal(n, 0);
    assert_int_equal(rmsnorm_quant_scale_count(RMSNORM_QUANT_PER_TENSOR, 5, 256, &n), RMSNORM_OK);
    assert_int_equal(n, 1);
    assert_int_equal(rmsnorm_quant_scale_count(RMSNORM_QUANT_PER_TOKEN, 5, 256, &n), RMSNORM_OK);
    assert_int_equal(n, 5);
    assert_int_equal(rmsnorm_quant_scale_count(RMSNORM_QUANT_PER_BLOCK_128, 5, 384, &n), RMSNORM_OK);
    assert_int_equal(n, 3 * 8); /* [cols/128][round_up(rows, 4)] */
    assert_int_equal(rmsnorm_quant_scale_count(RMSNORM_QUANT_PER_BLOCK_128, 0, 128, &n), RMSNORM_OK);
    assert_int_equal(n, 0);
}

/* Host -> backend -> backend -> host round trip through the memory helpers. */
static void memory_round_trip(void **state)
{
    const rmst_backend *tb = rmst_backend_of(state);
    unsigned char src[1000], dst[1000];
    void *a = NULL;
    void *b = NULL;
    for (size_t i = 0; i < sizeof src; i++)
        src[i] = (unsigned char)(i * 7u + 3u);
    memset(dst, 0, sizeof dst);
    assert_int_equal(rmsnorm_mem_alloc(tb->be, sizeof src, &a), RMSNORM_OK);
    assert_int_equal(rmsnorm_mem_alloc(tb->be, sizeof src, &b), RMSNORM_OK);
    assert_int_equal(rmsnorm_mem_copy(tb->be, a, src, sizeof src, RMSNORM_COPY_TO_BACKEND, NULL), RMSNORM_OK);
    assert_int_equal(rmsnorm_mem_copy(tb->be, b, a, sizeof src, RMSNORM_COPY_WITHIN_BACKEND, NULL), RMSNORM_OK);
    assert_int_equal(rmsnorm_mem_copy(tb->be, dst, b, sizeof src, RMSNORM_COPY_TO_HOST, NULL), RMSNORM_OK);
    assert_int_equal(rmsnorm_synchronize(tb->be, NULL), RMSNORM_OK);
    assert_memory_equal(src, dst, sizeof src);
    /* backends promise at least element alignment; the workspace wants 16 */
    assert_int_equal((uintptr_t)a % 16u, 0);
    assert_int_equal(rmsnorm_mem_free(tb->be, a), RMSNORM_OK);
    assert_int_equal(rmsnorm_mem_free(tb->be, b), RMSNORM_OK);
    assert_int_equal(rmsnorm_mem_free(tb->be, NULL), RMSNORM_OK);
}

int main(int argc, char **argv)
{
    const struct CMUnitTest global[] = {
        cmocka_unit_test(version_matches_macros),
        cmocka_unit_test(enumeration),
        cmocka_unit_test(auto_choice),
        cmocka_unit_test(hidden_backend),
        cmocka_unit_test(sizes_and_counts),
    };
    const struct CMUnitTest per_backend[] = {
        cmocka_unit_test(memory_round_trip),
    };
    int failed;
    for (int i = 1; i < argc; i++) {
        if (strncmp(argv[i], "--expect-auto=", 14) == 0)
            g_expect_auto = argv[i] + 14;
        else if (strncmp(argv[i], "--expect-absent=", 16) == 0)
            g_expect_absent = argv[i] + 16;
        else if (strchr(argv[i], '=') == NULL) {
            (void)fprintf(stderr, "unknown argument %s\n", argv[i]);
            return 2;
        }
    }
    if (rmst_main_init(argc, argv) != 0)
        return 2;
    failed = cmocka_run_group_tests_name("dispatch", global, NULL, NULL);
    failed += rmst_run_per_backend("memory", per_backend, sizeof per_backend / sizeof per_backend[0]);
    return failed != 0;
}
