#include "tests/data.h"

#include <stdlib.h>
#include <string.h>

#include "ref/formats.h"
#include "tests/backends.h"

rmst_row_kind rmst_row_kind_of(int64_t r, int64_t rows)
{
    (void)rows;
    if (r == 1)
        return RMST_ROW_ZERO;
    if (r == 2)
        return RMST_ROW_EXTREME;
    return RMST_ROW_RANDOM;
}

void rmst_gen_row(rmst_rng *rng, rmsnorm_dtype t, rmst_row_kind kind, double magnitude, void *row,
                  int64_t cols)
{
    for (int64_t j = 0; j < cols; j++) {
        double v;
        switch (kind) {
        case RMST_ROW_ZERO:
            v = 0.0;
            break;
        case RMST_ROW_EXTREME:
            if (t == RMSNORM_F16)
                v = j == 0 ? 300.0 : 300.0 + 29700.0 * rmst_rng_unit(rng);
            else
                v = 1e15 * (0.5 + 0.5 * rmst_rng_unit(rng));
            if (j > 0 && (rmst_rng_next(rng) & 1u) != 0u)
                v = -v;
            break;
        case RMST_ROW_RANDOM:
        default:
            v = magnitude * rmst_rng_sym(rng);
            break;
        }
        rmsi_store(row, t, (size_t)j, (float)v);
    }
}

void rmst_gen_weight(rmst_rng *rng, rmsnorm_dtype t, void *w, int64_t cols)
{
    for (int64_t j = 0; j < cols; j++)
        rmsi_store(w, t, (size_t)j, (float)(1.5 * rmst_rng_sym(rng)));
}

unsigned char *rmst_alloc_filled(size_t bytes, unsigned char byte)
{
    unsigned char *p = malloc(bytes == 0 ? 1 : bytes);
    assert_non_null(p);
    memset(p, byte, bytes == 0 ? 1 : bytes);
    return p;
}
