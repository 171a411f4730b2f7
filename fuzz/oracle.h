/*
 * The fp64 side of the differential harnesses: spacing and overflow of each
 * format, the oracle's rstd, and the tolerance arithmetic of docs/numerics.md.
 *
 * Where the harness checks more loosely than docs/numerics.md states, it says
 * so here and in docs/fuzzing.md: rows whose sum of squares leaves the range
 * where fp32 keeps its relative precision are not compared numerically, and one
 * fp32 subnormal ulp per intermediate that can underflow is added to a bound.
 */
#ifndef RMSNORM_FUZZ_ORACLE_H
#define RMSNORM_FUZZ_ORACLE_H

#include <stdint.h>

#include "rmsnorm.h"

/* Spacing of dtype t (F32, F16, BF16 or an fp8 format) at magnitude a; the
 * subnormal spacing below the smallest normal. */
double fz_ulp(rmsnorm_dtype t, double a);

/* The magnitude from which round-to-nearest-even gives infinity in t. */
double fz_overflow_at(rmsnorm_dtype t);

/* A stored result as a number to compare: +-inf become +-fz_overflow_at(t). */
double fz_as_number(double v, rmsnorm_dtype t);

/* The oracle's value clamped the same way (what a correct store can show). */
double fz_clamp_number(double o, rmsnorm_dtype t);

/* 1 / sqrt(sum(h^2) / cols + eps) in fp64. *in_range is 0 when fp32
 * accumulation cannot meet the contract's relative bound for this row: the
 * mean square plus eps below 2^-120 (squares lose their precision in fp32
 * subnormals) or the sum of squares above 2^120 (fp32 overflow nearby). An
 * exactly zero row, and rows with inf or NaN, are in range: their results are
 * exact (inf, 0 or NaN) in both precisions. */
double fz_oracle_rstd(const float *h, int64_t cols, float eps, int *in_range);

/* Is a within tol (relative) of a power of two? (SCALE_POW2's escape clause.) */
int fz_near_pow2(double a, double tol);

#endif /* RMSNORM_FUZZ_ORACLE_H */
