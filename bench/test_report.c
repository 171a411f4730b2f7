/* Shape of the CSV and JSON outputs: the columns agree on every row, missing
 * quantities are empty/null, strings are escaped, and the JSON is well nested. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "bench/bench.h"

static rmsi_bench_env env;
static rmsi_bench_opts opts;
static rmsi_bench_roofline rf;
static rmsi_bench_cell cells[3];
static char text[65536];

static int setup(void **state)
{
    rmsi_bench_model_opts mo = { RMSNORM_F8_E4M3, 0, 0, RMSI_BENCH_WEIGHT_SAME };
    (void)state;
    memset(&env, 0, sizeof env);
    memset(&opts, 0, sizeof opts);
    memset(&rf, 0, sizeof rf);
    memset(cells, 0, sizeof cells);
    (void)snprintf(env.backend, sizeof env.backend, "ref");
    (void)snprintf(env.device, sizeof env.device, "CPU \"quoted\", back\\slash");
    (void)snprintf(env.compiler, sizeof env.compiler, "gcc 12");
    (void)snprintf(env.commit, sizeof env.commit, "abc123");
    (void)snprintf(env.date, sizeof env.date, "2024-01-01T00:00:00Z");
    env.threads = 2;
    opts.grid = "small";
    opts.reps = 12;
    opts.ops = (1u << RMSI_BENCH_FORWARD) | (1u << RMSI_BENCH_BACKWARD);
    opts.fp8 = RMSNORM_F8_E4M3;
    rf.available = 1;
    rf.tries = 3;
    rf.open.gbps[RMSNORM_PROBE_COPY] = 10.0;
    rf.open.best = 10.0;
    rf.close = rf.open;
    rf.closed = 1;
    rf.drift = 0.0;
    cells[0].op = RMSI_BENCH_FORWARD;
    cells[0].dtype = RMSNORM_BF16;
    cells[0].rows = 32;
    cells[0].cols = 4096;
    (void)rmsi_bench_bytes_of(cells[0].op, cells[0].dtype, 32, 4096, &mo, &cells[0].bytes);
    cells[0].verdict = RMSI_BENCH_OK;
    cells[0].t.median = 1e-5;
    cells[0].t.min = 0.9e-5;
    cells[0].t.max = 2e-5;
    cells[0].t.n = 12;
    cells[0].gbps = 52.4;
    cells[0].pct_roof = 52.0;
    cells[0].round_ratio = 0.9;
    cells[0].round_probe = RMSNORM_PROBE_COPY_NT;
    cells[1] = cells[0];
    cells[1].op = RMSI_BENCH_BACKWARD;
    cells[1].verdict = RMSI_BENCH_FAIL;
    cells[1].worst = 7.5;
    (void)snprintf(cells[1].note, sizeof cells[1].note, "FAIL: dx, \"bad\"\nline");
    cells[2] = cells[0];
    cells[2].verdict = RMSI_BENCH_SKIP;
    cells[2].pct_roof = -1.0;
    cells[2].round_ratio = -1.0;
    (void)snprintf(cells[2].note, sizeof cells[2].note, "SKIP: backend lacks the capability");
    return 0;
}

static void render(int json)
{
    FILE *f = tmpfile();
    assert_non_null(f);
    if (json)
        assert_int_equal(rmsi_bench_write_json(f, &env, &opts, &rf, cells, 3), 0);
    else
        assert_int_equal(rmsi_bench_write_csv(f, &env, &opts, &rf, cells, 3), 0);
    rewind(f);
    size_t n = fread(text, 1, sizeof text - 1, f);
    text[n] = '\0';
    assert_int_equal(fclose(f), 0);
    assert_true(n > 0 && n < sizeof text - 1);
}

/* Fields of one CSV line (commas outside double quotes, plus one). */
static int csv_fields(const char *line, size_t len, const char **field, int want)
{
    int n = 1, quoted = 0;
    size_t start = 0;
    for (size_t i = 0; i < len; i++) {
        if (line[i] == '"')
            quoted = !quoted;
        else if (line[i] == ',' && !quoted) {
            if (n == want)
                *field = line + start;
            n++;
            start = i + 1;
        }
    }
    if (n == want)
        *field = line + start;
    assert_false(quoted);
    return n;
}

static void csv_shape(void **state)
{
    int header = -1, rows = 0, comments = 0;
    const char *p = text;
    (void)state;
    render(0);
    while (*p) {
        const char *e = strchr(p, '\n');
        assert_non_null(e);
        size_t len = (size_t)(e - p);
        if (p[0] == '#') {
            assert_int_equal(header, -1); /* environment first */
            comments++;
        } else {
            const char *med = NULL;
            int n = csv_fields(p, len, &med, 14);
            if (header < 0) {
                header = n;
                assert_memory_equal(p, "backend,op,dtype", 16);
                assert_memory_equal(med, "median_s,", 9);
            } else {
                assert_int_equal(n, header);
                rows++;
                if (rows == 2 || rows == 3)
                    assert_true(med != NULL && *med == ','); /* FAIL and SKIP: no number */
                else
                    assert_true(med != NULL && *med == '1');
            }
        }
        p = e + 1;
    }
    assert_int_equal(rows, 3);
    assert_true(comments >= 10);
    assert_non_null(strstr(text, "# commit: abc123\n"));
    assert_non_null(strstr(text, "# probe open copy GB/s: 10.000\n"));
    assert_non_null(strstr(text, "# bytes forward: read x, write y\n"));
    assert_non_null(strstr(text, "\"FAIL: dx, \"\"bad\"\"line\""));
}

static void json_shape(void **state)
{
    int depth = 0, max_depth = 0, in_str = 0, cells_seen = 0;
    (void)state;
    render(1);
    assert_true(text[0] == '{');
    for (const char *p = text; *p; p++) {
        if (in_str) {
            assert_true((unsigned char)*p >= 0x20); /* control characters escaped */
            if (*p == '\\') {
                p++;
                assert_non_null(strchr("\"\\/bfnrtu", *p));
            } else if (*p == '"') {
                in_str = 0;
            }
            continue;
        }
        if (*p == '"')
            in_str = 1;
        else if (*p == '{' || *p == '[')
            depth++;
        else if (*p == '}' || *p == ']')
            depth--;
        assert_true(depth >= 0);
        max_depth = depth > max_depth ? depth : max_depth;
    }
    assert_false(in_str);
    assert_int_equal(depth, 0);
    assert_true(max_depth >= 3);
    for (const char *p = text; (p = strstr(p, "{\"op\": ")) != NULL; p++)
        cells_seen++;
    assert_int_equal(cells_seen, 3);
    assert_non_null(strstr(text, "\"device\": \"CPU \\\"quoted\\\", back\\\\slash\""));
    assert_non_null(strstr(text, "\"note\": \"FAIL: dx, \\\"bad\\\"\\u000aline\""));
    assert_non_null(strstr(text, "\"median_s\": null")); /* the FAIL and SKIP rows */
    assert_non_null(strstr(text, "\"median_s\": 1e-05"));
    assert_non_null(strstr(text, "\"suspect\": false"));
    assert_non_null(strstr(text, "\"commit\": \"abc123\""));
    assert_non_null(strstr(text, "\"copy\": 10"));
    assert_non_null(strstr(text, "\"write\": null"));
}

static void suspect_run_is_marked(void **state)
{
    (void)state;
    rf.suspect = 1;
    rf.drift = -0.06;
    render(1);
    assert_non_null(strstr(text, "\"suspect\": true"));
    assert_null(strstr(text, "\"suspect\": false"));
    render(0);
    assert_non_null(strstr(text, "# suspect: yes\n"));
}

static void no_roofline(void **state)
{
    (void)state;
    memset(&rf, 0, sizeof rf);
    render(1);
    assert_non_null(strstr(text, "\"roofline\": {\"available\": false}"));
    render(0);
    assert_non_null(strstr(text, "# roofline: not available\n"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(csv_shape, setup),
        cmocka_unit_test_setup(json_shape, setup),
        cmocka_unit_test_setup(suspect_run_is_marked, setup),
        cmocka_unit_test_setup(no_roofline, setup),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
