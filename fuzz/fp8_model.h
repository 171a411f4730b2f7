/*
 * An independent model of the three fp8 formats, used by fuzz_fp8 to check
 * ref/formats.h. It shares no code and no formula with formats.h on purpose:
 * the value of every code is built by walking the number line (each binade is
 * 2^mbits equal steps and the step doubles from one binade to the next), and
 * encoding is a nearest-neighbour search in that table in fp64, where every
 * midpoint between two fp8 values is exact.
 */
#ifndef RMSNORM_FUZZ_FP8_MODEL_H
#define RMSNORM_FUZZ_FP8_MODEL_H

#include <stdint.h>

#include "rmsnorm.h"

typedef struct fz_fp8_model {
    rmsnorm_dtype dtype;
    const char *name;
    int nfinite;          /* positive finite codes 0..nfinite-1, increasing in value */
    double value[128];    /* value of the positive code c (valid for c < nfinite) */
    uint8_t nan_out;      /* the NaN code the encoder must produce for a positive NaN */
    int signed_nan;       /* 1: a negative NaN encodes as nan_out | 0x80 */
    int has_neg_zero;     /* 0 (fnuz): 0x80 is NaN and -0 encodes as 0x00 */
    int has_inf;          /* e5m2: 0x7c / 0xfc decode to +-inf */
} fz_fp8_model;

/* Builds the model of one format (E4M3, E5M2 or E4M3FNUZ); 0 on success. */
int fz_fp8_model_init(fz_fp8_model *m, rmsnorm_dtype dtype);

/* Expected decoding of code c: *is_nan set for NaN codes (value then unset). */
void fz_fp8_model_decode(const fz_fp8_model *m, uint8_t c, double *value, int *is_nan);

/* Expected encoding of an fp32 value: round to nearest, ties to the even code,
 * saturating at the largest finite value (infinities included). */
uint8_t fz_fp8_model_encode(const fz_fp8_model *m, float v);

#endif /* RMSNORM_FUZZ_FP8_MODEL_H */
