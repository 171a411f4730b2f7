/*
 * Cross-file names of the reference backend (ref/). The simd backend may call
 * these for the combinations it does not specialise: they take the same
 * validated, full-size args as a backend table slot.
 */
#ifndef RMSNORM_REF_REF_H
#define RMSNORM_REF_REF_H

#include <stddef.h>
#include <stdint.h>

#include "rmsnorm.h"

rmsnorm_status rmsi_ref_forward(const rmsnorm_forward_args *a, void *stream);
rmsnorm_status rmsi_ref_backward(const rmsnorm_backward_args *a, void *stream);
/* nchunks * cols * sizeof(float), nchunks from rmsi_ref_dw_chunks; 0 for rows == 0. */
rmsnorm_status rmsi_ref_backward_workspace_size(int64_t rows, int64_t cols, size_t *bytes);

/* The fixed row chunking of the dweight reduction: chunks of
 * max(16, ceil(rows / 64)) rows, so at most 64 partial rows of cols floats.
 * Returns the chunk count (0 for rows == 0) and the rows per chunk. */
int64_t rmsi_ref_dw_chunks(int64_t rows, int64_t *chunk_rows);

/* max |v[i]| over n values, NaN ignored (fmaxf), starting from amax. */
float rmsi_ref_amax(const float *v, size_t n, float amax);
/* q[i] = fp8(v[i] / s) in format qt: a true division, then RNE + saturation. */
void rmsi_ref_quantize(const float *v, size_t n, float s, rmsnorm_dtype qt, uint8_t *q);

#endif /* RMSNORM_REF_REF_H */
