/* Input rows for the case matrices: random, all-zero and extreme rows. */
#ifndef RMST_DATA_H
#define RMST_DATA_H

#include <stdint.h>

#include "rmsnorm.h"
#include "tests/rng.h"

typedef enum rmst_row_kind {
    RMST_ROW_RANDOM,  /* uniform in [-magnitude, magnitude) */
    RMST_ROW_ZERO,    /* all zeros */
    RMST_ROW_EXTREME  /* F16: 300.0 then values up to 30000, whose squares pass fp16's max;
                         F32/BF16: around 1e15, whose squares summed over 70000 columns
                         still fit fp32 as the contract requires */
} rmst_row_kind;

/* The kind of row r in a matrix of rows rows: row 1 zero, row 2 extreme. */
rmst_row_kind rmst_row_kind_of(int64_t r, int64_t rows);

/* Fills cols elements of dtype t at row. */
void rmst_gen_row(rmst_rng *rng, rmsnorm_dtype t, rmst_row_kind kind, double magnitude, void *row,
                  int64_t cols);

/* A weight vector of cols elements of dtype t in [-1.5, 1.5). */
void rmst_gen_weight(rmst_rng *rng, rmsnorm_dtype t, void *w, int64_t cols);

/* A buffer of bytes bytes filled with byte; aborts the test on failure. */
unsigned char *rmst_alloc_filled(size_t bytes, unsigned char byte);

#endif /* RMST_DATA_H */
