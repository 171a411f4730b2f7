/*
 * Shape grids. "small" is the default: it must finish, probes included, in
 * under a minute on a 2-core CPU, so it samples the row counts that matter
 * (one token, a decode batch, a prefill block) at two model widths.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "bench/bench.h"

static const int64_t full_rows[] = { 1, 32, 256, 1024, 4096, 16384, 32768, 65536 };
static const int64_t full_cols[] = { 512, 2048, 4096, 5120, 8192, 16384 };
static const rmsi_bench_shape small_grid[] = {
    { 1, 4096 }, { 32, 4096 }, { 1024, 4096 }, { 4096, 4096 }, { 1024, 8192 },
};
static const int64_t medium_rows[] = { 1, 32, 256, 1024, 4096 };
static const int64_t medium_cols[] = { 2048, 4096, 8192 };

static int add_product(const int64_t *rows, size_t nr, const int64_t *cols, size_t nc,
                       rmsi_bench_shape *out, int cap, int *n)
{
    for (size_t i = 0; i < nr; i++) {
        for (size_t j = 0; j < nc; j++) {
            if (*n >= cap)
                return -1;
            out[*n].rows = rows[i];
            out[*n].cols = cols[j];
            (*n)++;
        }
    }
    return 0;
}

/* "small", "medium" or "full"; returns -1 for another name. */
int rmsi_bench_grid_named(const char *name, rmsi_bench_shape *out, int cap, int *n)
{
    *n = 0;
    if (strcmp(name, "small") == 0) {
        size_t k = sizeof small_grid / sizeof small_grid[0];
        if ((size_t)cap < k)
            return -1;
        memcpy(out, small_grid, sizeof small_grid);
        *n = (int)k;
        return 0;
    }
    if (strcmp(name, "medium") == 0)
        return add_product(medium_rows, sizeof medium_rows / sizeof medium_rows[0], medium_cols,
                           sizeof medium_cols / sizeof medium_cols[0], out, cap, n);
    if (strcmp(name, "full") == 0)
        return add_product(full_rows, sizeof full_rows / sizeof full_rows[0], full_cols,
                           sizeof full_cols / sizeof full_cols[0], out, cap, n);
    return -1;
}

static int parse_dim(const char *s, char **end, int64_t lo, int64_t *v)
{
    errno = 0;
    long long x = strtoll(s, end, 10);
    if (errno != 0 || *end == s || x < lo || x > ((int64_t)1 << 40))
        return -1;
    *v = (int64_t)x;
    return 0;
}

/* "RxC[,RxC...]", rows >= 1 (an empty matrix has nothing to time), cols >= 1; appends to out. Returns -1 on a
 * malformed list or more than cap shapes. */
int rmsi_bench_shapes_parse(const char *list, rmsi_bench_shape *out, int cap, int *n)
{
    const char *p = list;
    if (list == NULL || *list == '\0')
        return -1;
    for (;;) {
        char *end = NULL;
        rmsi_bench_shape s;
        if (parse_dim(p, &end, 1, &s.rows) != 0 || (*end != 'x' && *end != 'X'))
            return -1;
        p = end + 1;
        if (parse_dim(p, &end, 1, &s.cols) != 0 || (*end != ',' && *end != '\0'))
            return -1;
        if (*n >= cap)
            return -1;
        out[(*n)++] = s;
        if (*end == '\0')
            return 0;
        p = end + 1;
    }
}
