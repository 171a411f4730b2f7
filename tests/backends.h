/*
 * Runs one cmocka body once per backend: "ref", "avx512", "cuda", "hip".
 * A backend that is absent on this machine still gets its group, in which every
 * test is a printed cmocka SKIP, so a missing GPU is visible in every log.
 */
#ifndef RMST_BACKENDS_H
#define RMST_BACKENDS_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "rmsnorm.h"

typedef struct rmst_backend {
    const char *name;          /* the name it was looked up by */
    const rmsnorm_backend *be; /* NULL when absent */
} rmst_backend;

/* Call first in every test main, before any library call: argv entries of the
 * form NAME=VALUE are put into the environment (the library reads its knobs
 * once, on first use); OMP_NUM_THREADS=n also calls omp_set_num_threads, since
 * the OpenMP runtime read the environment before main. Other entries are left
 * for the caller; returns 0, or -1 on a malformed entry. */
int rmst_main_init(int argc, char **argv);

/* Runs tests[0..n) once per backend name; returns the number of failures. */
int rmst_run_per_backend(const char *group, const struct CMUnitTest *tests, size_t n);

/* In a test body: the backend of this run, or a cmocka skip (printed) when the
 * backend is absent. */
const rmst_backend *rmst_backend_of(void **state);

/* 1 when RMST_PIN_SWEEP=1: the oracle suites run under a pinned GPU launch
 * config (RMSNORM_CUDA_CONFIG=cl=2, say) to cover a path the ladder
 * keeps for large shapes; shapes the pin cannot take return
 * RMSNORM_ERR_UNSUPPORTED, which then counts as a skipped case. */
int rmst_pin_sweep(void);

/* An op's status in a test that runs many cases: 1 when the case is to be
 * skipped (RMST_PIN_SWEEP=1 and RMSNORM_ERR_UNSUPPORTED: the pinned config
 * does not fit it); otherwise it must be RMSNORM_OK (0). */
int rmst_pinned_out(rmsnorm_status st);

/* An op's status in a test that runs one case: RMSNORM_OK passes; under
 * RMST_PIN_SWEEP=1, RMSNORM_ERR_UNSUPPORTED (the pin does not fit the
 * shape) skips the test; anything else fails it. */
void rmst_expect_ok(rmsnorm_status st);

#endif /* RMST_BACKENDS_H */
