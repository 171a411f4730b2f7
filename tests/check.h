/*
 * Comparisons with the bounds table of docs/numerics.md. A report collects the
 * failures of one case: each one is printed with the case, the output, the
 * index, the values and the bound, and rmst_report_end turns any into a cmocka
 * failure.
 */
#ifndef RMST_CHECK_H
#define RMST_CHECK_H

#include <stddef.h>
#include <stdint.h>

#include "rmsnorm.h"
#include "tests/oracle.h"

typedef struct rmst_report {
    char what[384]; /* backend and case */
    long failures;
    long checks;
} rmst_report;

void rmst_report_begin(rmst_report *rep, const char *backend, const char *case_desc);
/* Records a failure; prints it when fewer than a handful were printed. */
void rmst_report_fail(rmst_report *rep, const char *out, int64_t row, int64_t col, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
/* Fails the running cmocka test when the report holds failures. */
void rmst_report_end(rmst_report *rep);

/* got vs want within bound; NaN must match NaN and an infinity must match
 * exactly. Returns 1 when it holds. */
int rmst_expect_close(rmst_report *rep, const char *out, int64_t row, int64_t col, double got,
                      double want, double bound);

/* bytes [from, to) of buf still equal to byte (nothing was written there). */
int rmst_expect_untouched(rmst_report *rep, const char *out, const unsigned char *buf, size_t from,
                          size_t to, unsigned char byte);

/* Bounds of docs/numerics.md. o: the oracle value; t: the output dtype. */
double rmst_bound_y(double o, double n_o, double weff, rmsnorm_dtype t, uint32_t flags);
double rmst_bound_rel(double o, double rel);
double rmst_bound_dx(double o, double rstd_o, double g, double n, double mean_abs_gn, rmsnorm_dtype t);

/* The dynamic-scale bound's ROUND_LLAMA term over columns [j0, j0+count):
 * max_j |weff_j| ulp_T(|n_j|) / fmax, for round_T(n_j) may land on the other
 * side of a tie than the oracle's and move amax; 0 without ROUND_LLAMA. */
double rmst_dyn_scale_slack(const rmst_norm_params *p, const double *n, int64_t j0, int64_t count,
                            rmsnorm_dtype qt);

/* Dynamic scale: got vs the oracle's scale before the power-of-two rounding,
 * within 1e-5 relative plus slack (rmst_dyn_scale_slack). */
int rmst_expect_dyn_scale(rmst_report *rep, const char *out, int64_t row, int64_t col, double got,
                          double want_raw, double slack, int pow2);

/* An fp8 code against the oracle's v and the backend's scale s. */
int rmst_expect_fp8(rmst_report *rep, int64_t row, int64_t col, uint8_t code, rmsnorm_dtype qt,
                    double v_o, double s);

/* ||got - want||_2 <= rel * ||want||_2 + 1e-30, NaN positions equal. */
int rmst_expect_l2(rmst_report *rep, const char *out, const float *got, const double *want,
                   int64_t count, double rel);

/* The dw relative L2 bound for dtype t and flags. */
double rmst_dw_rel_bound(rmsnorm_dtype t, uint32_t flags);

/* Distance in units in the last place between two stored values of t (F32,
 * F16, BF16 bit patterns widened to uint32, or fp8 codes); NaN against NaN is
 * 0, NaN against a number is UINT32_MAX. */
uint32_t rmst_ulp_distance(uint32_t a, uint32_t b, rmsnorm_dtype t);

#endif /* RMST_CHECK_H */
