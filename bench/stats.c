/*
 * Sample statistics and roofline drift. Medians, because a shared VM's
 * neighbours produce one-sided outliers that would drag a mean; min and max are
 * reported beside it so the spread stays visible.
 */
#include <math.h>
#include <string.h>

#include "bench/bench.h"

/* Returns 0, or -1 for n outside [1, RMSI_BENCH_MAX_SAMPLES] or a NaN sample. */
int rmsi_bench_summarise(const double *v, int n, rmsi_bench_summary *out)
{
    double s[RMSI_BENCH_MAX_SAMPLES];
    memset(out, 0, sizeof *out);
    if (v == NULL || n < 1 || n > RMSI_BENCH_MAX_SAMPLES)
        return -1;
    /* insertion sort: n is small and this keeps the order fully deterministic */
    for (int i = 0; i < n; i++) {
        double x = v[i];
        int j = i;
        if (isnan(x))
            return -1;
        while (j > 0 && s[j - 1] > x) {
            s[j] = s[j - 1];
            j--;
        }
        s[j] = x;
    }
    out->n = n;
    out->min = s[0];
    out->max = s[n - 1];
    out->median = (n % 2) ? s[n / 2] : 0.5 * (s[n / 2 - 1] + s[n / 2]);
    return 0;
}

/* Relative change of the roofline from the opening to the closing probes. A
 * missing measurement (<= 0) reads as infinite drift: it cannot vouch for the
 * run. */
double rmsi_bench_drift(double open, double close)
{
    if (!(open > 0.0) || !(close > 0.0))
        return INFINITY;
    return close / open - 1.0;
}

int rmsi_bench_drift_suspect(double drift)
{
    return !(fabs(drift) <= RMSI_BENCH_DRIFT_LIMIT);
}
