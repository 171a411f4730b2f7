#include "tests/backends.h"

#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define RMST_NBACKENDS 4
#define RMST_MAX_TESTS 32
#define RMST_NAME_LEN 96

static const char *const k_backend_names[RMST_NBACKENDS] = {"ref", "avx512", "cuda", "hip"};

/* RMST_BACKENDS=name[,name] limits a run to those backends (the others are
 * skipped, loudly), for example to run only "cuda" on a GPU machine. */
static int selected(const char *name)
{
    const char *list = getenv("RMST_BACKENDS");
    size_t len = strlen(name);
    if (list == NULL || list[0] == '\0')
        return 1;
    for (const char *p = list; *p != '\0';) {
        const char *end = strchr(p, ',');
        size_t n = end != NULL ? (size_t)(end - p) : strlen(p);
        if (n == len && strncmp(p, name, len) == 0)
            return 1;
        p += n;
        if (*p == ',')
            p++;
    }
    return 0;
}

static const char *absent_reason(const char *name)
{
    if (!selected(name))
        return "not in RMST_BACKENDS";
    if (strcmp(name, "avx512") == 0)
        return "the CPU or OS lacks AVX-512 state, or RMSNORM_DISABLE_AVX512/RMSNORM_DISABLE hides it";
    if (strcmp(name, "cuda") == 0 || strcmp(name, "hip") == 0)
        return "no plugin in RMSNORM_PLUGIN_PATH or next to the library, or no device";
    return "not registered";
}

int rmst_main_init(int argc, char **argv)
{
    const char *filter;

    for (int i = 1; i < argc; i++) {
        const char *eq = strchr(argv[i], '=');
        char name[128];
        size_t len;
        if (eq == NULL || argv[i][0] == '-')
            continue;
        len = (size_t)(eq - argv[i]);
        if (len == 0 || len >= sizeof name) {
            (void)fprintf(stderr, "bad environment argument: %s\n", argv[i]);
            return -1;
        }
        memcpy(name, argv[i], len);
        name[len] = '\0';
        if (setenv(name, eq + 1, 1) != 0) {
            perror("setenv");
            return -1;
        }
        if (strcmp(name, "OMP_NUM_THREADS") == 0) {
            long n = strtol(eq + 1, NULL, 10);
            if (n < 1 || n > 1024) {
                (void)fprintf(stderr, "bad OMP_NUM_THREADS: %s\n", eq + 1);
                return -1;
            }
            omp_set_num_threads((int)n);
        }
    }
    /* RMST_FILTER=GLOB runs only the tests whose "test/backend" name matches
     * (cmocka's * and ? wildcards): a sanitizer run on one dtype fits a
     * device call's time where the whole suite does not */
    filter = getenv("RMST_FILTER");
    if (filter != NULL && filter[0] != '\0')
        cmocka_set_test_filter(filter);
    return 0;
}

int rmst_run_per_backend(const char *group, const struct CMUnitTest *tests, size_t n)
{
    /* Static because cmocka keeps the names and states only for the run; one
     * slot per backend keeps each group's names alive independently. */
    static rmst_backend slots[RMST_NBACKENDS];
    static char names[RMST_NBACKENDS][RMST_MAX_TESTS][RMST_NAME_LEN];
    struct CMUnitTest local[RMST_MAX_TESTS];
    char gname[RMST_NAME_LEN];
    int failed = 0;

    if (n == 0 || n > RMST_MAX_TESTS) {
        (void)fprintf(stderr, "%s: %zu tests, between 1 and %d supported\n", group, n, RMST_MAX_TESTS);
        return 1;
    }
    for (size_t i = 0; i < RMST_NBACKENDS; i++) {
        slots[i].name = k_backend_names[i];
        slots[i].be = selected(k_backend_names[i]) ? rmsnorm_backend_find(k_backend_names[i]) : NULL;
        if (slots[i].be == NULL)
            (void)printf("\n*** SKIP: backend \"%s\" is absent (%s); its %zu \"%s\" tests are skipped ***\n",
                   k_backend_names[i], absent_reason(k_backend_names[i]), n, group);
        for (size_t j = 0; j < n; j++) {
            local[j] = tests[j];
            (void)snprintf(names[i][j], RMST_NAME_LEN, "%s/%s", tests[j].name, k_backend_names[i]);
            local[j].name = names[i][j];
            local[j].initial_state = &slots[i];
        }
        (void)snprintf(gname, sizeof gname, "%s/%s", group, k_backend_names[i]);
        (void)fflush(stdout);
        failed += _cmocka_run_group_tests(gname, local, n, NULL, NULL);
    }
    return failed;
}

const rmst_backend *rmst_backend_of(void **state)
{
    const rmst_backend *tb = (const rmst_backend *)*state;
    if (tb == NULL) {
        fail_msg("test run without a backend state");
        return NULL;
    }
    if (tb->be == NULL) {
        print_message("SKIP: backend \"%s\" absent (%s)\n", tb->name, absent_reason(tb->name));
        skip();
    }
    return tb;
}

int rmst_pin_sweep(void)
{
    const char *e = getenv("RMST_PIN_SWEEP");
    return e != NULL && strcmp(e, "1") == 0;
}

int rmst_pinned_out(rmsnorm_status st)
{
    if (st == RMSNORM_ERR_UNSUPPORTED && rmst_pin_sweep())
        return 1;
    assert_int_equal(st, RMSNORM_OK);
    return 0;
}

void rmst_expect_ok(rmsnorm_status st)
{
    if (rmst_pinned_out(st)) {
        print_message("SKIP: the pinned config does not fit this case\n");
        skip();
    }
}
