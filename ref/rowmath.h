/*
 * Per-row math shared by the reference forward and backward: the blocked
 * pairwise fp32 summation, rstd, and the element loads of one row.
 *
 * Rows are walked in blocks of RMSI_REF_BLOCK elements, staged in a fixed
 * stack buffer of that size, so no per-row buffer of cols floats is ever
 * needed (cols has no upper limit). 128 is also the fp8 quantisation block,
 * so a PER_BLOCK_128 scale covers exactly one staged block.
 *
 * Summation order (docs/numerics.md, "Reference evaluation order"):
 *  - inside a block, term i goes to lane i % 8, each lane summed in order
 *    from 0.0f; the 8 lanes are folded as
 *    ((l0 + l4) + (l2 + l6)) + ((l1 + l5) + (l3 + l7));
 *  - block sums are combined pairwise by a binary counter: after block k is
 *    pushed, two partial sums of equal block count are merged (older + newer)
 *    as long as k + 1 has trailing zero bits; the leftover partial sums are
 *    added from the newest to the oldest (oldest + rest).
 * The relative error of a sum of n non-negative terms is then at most about
 * (16 + 3 + log2(n / 128)) units of 2^-24, instead of n units for a plain loop.
 */
#ifndef RMSNORM_REF_ROWMATH_H
#define RMSNORM_REF_ROWMATH_H

#include <stddef.h>
#include <stdint.h>

#include "rmsnorm.h"

#define RMSI_REF_BLOCK 128
#define RMSI_REF_LANES 8
/* One partial sum per set bit of the block count, plus one transient entry:
 * 64 covers any int64 element count. */
#define RMSI_PAIRSUM_DEPTH 64

/* Rows * cols at or above which an op opens an OpenMP parallel region: below
 * it, the region's start-up (microseconds) costs more than the work. */
#define RMSI_REF_PARALLEL_MIN ((int64_t)1 << 16)

typedef struct rmsi_pairsum {
    float part[RMSI_PAIRSUM_DEPTH];
    uint64_t blocks; /* block sums pushed so far */
    int depth;       /* live entries in part[] */
} rmsi_pairsum;

void rmsi_pairsum_init(rmsi_pairsum *ps);
/* Adds the sum of one block of n <= RMSI_REF_BLOCK terms. */
void rmsi_pairsum_push_block(rmsi_pairsum *ps, const float *terms, size_t n);
float rmsi_pairsum_result(const rmsi_pairsum *ps);

/* 1 / sqrt(ss / cols + eps), each step one fp32 operation in this order. */
float rmsi_ref_rstd(float ss, int64_t cols, float eps);

/* Sum of squares of a stored row of cols elements of dtype t (the forward's h
 * or the backward's x), in the order above. */
float rmsi_ref_row_sumsq(const void *row, rmsnorm_dtype t, int64_t cols);

/* out[i] = float(row[j0 + i]) for i < n. */
void rmsi_ref_load_block(const void *row, rmsnorm_dtype t, int64_t j0, size_t n, float *out);

/* row[j0 + i] = round_t(v[i]) for i < n. */
void rmsi_ref_store_block(void *row, rmsnorm_dtype t, int64_t j0, size_t n, const float *v);

/* v[i] = round_t(v[i]), widened back to fp32. */
void rmsi_ref_round_block(float *v, size_t n, rmsnorm_dtype t);

/* Effective weights weff = float(w) + offset, or 1 when w is NULL. */
void rmsi_ref_load_weff(const void *w, rmsnorm_dtype wt, float offset, int64_t j0, size_t n,
                        float *out);

static inline size_t rmsi_ref_elem_size(rmsnorm_dtype t)
{
    switch (t) {
    case RMSNORM_F32: return 4u;
    case RMSNORM_F16:
    case RMSNORM_BF16: return 2u;
    case RMSNORM_F8_E4M3:
    case RMSNORM_F8_E5M2:
    case RMSNORM_F8_E4M3FNUZ:
    default: return 1u;
    }
}

/* Address of row r of a matrix (NULL for an absent one). The dispatch layer
 * has checked that rows * row_stride * element size fits in size_t. */
static inline void *rmsi_ref_row(const rmsnorm_matrix *m, int64_t r)
{
    if (m->data == NULL)
        return NULL;
    return (char *)m->data + (size_t)r * (size_t)m->row_stride * rmsi_ref_elem_size(m->dtype);
}

/* rows * cols >= RMSI_REF_PARALLEL_MIN, without forming the product. */
static inline int rmsi_ref_is_large(int64_t rows, int64_t cols)
{
    return rows > 0 && cols >= (RMSI_REF_PARALLEL_MIN + rows - 1) / rows;
}

/* Block length at column j0 of a row of cols elements. */
static inline size_t rmsi_ref_block_len(int64_t j0, int64_t cols)
{
    int64_t left = cols - j0;
    return left < RMSI_REF_BLOCK ? (size_t)left : (size_t)RMSI_REF_BLOCK;
}

#endif /* RMSNORM_REF_ROWMATH_H */
