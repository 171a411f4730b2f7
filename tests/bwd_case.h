/*
 * The backward case matrix and a runner for one case on one backend with
 * poisoned outputs and a NaN-poisoned workspace. Shared by test_backward.c
 * (against the oracle) and test_vs_ref.c.
 */
#ifndef RMST_BWD_CASE_H
#define RMST_BWD_CASE_H

#include <stddef.h>
#include <stdint.h>

#include "rmsnorm.h"
#include "tests/buffers.h"
#include "tests/fwd_case.h"

typedef struct rmst_bwd_case {
    rmsnorm_dtype t;
    int64_t rows, cols, stride;
    rmst_w_mode wmode;
    float weight_offset;
    uint32_t flags;
    int rstd_given;  /* 1: pass the oracle's rstd rounded to fp32; 0: NULL (recompute) */
    int dres;        /* residual gradient added into dx */
    int dx_in_place; /* dx over dy */
    int want_dw;     /* dweight (needs a weight) */
    float eps;
    double magnitude;
    uint64_t seed;
} rmst_bwd_case;

size_t rmst_bwd_case_count(void);
int rmst_bwd_case_at(size_t i, rmst_bwd_case *c);
void rmst_bwd_case_describe(const rmst_bwd_case *c, char *buf, size_t n);

typedef struct rmst_bwd_run {
    const rmsnorm_backend *be;
    rmst_bwd_case c;
    size_t es;
    size_t mat_bytes;
    rmsnorm_dtype wdt;
    size_t ws_bytes;   /* rmsnorm_backward_workspace_size */
    unsigned char *x_img, *dy_img, *dres_img; /* padding 0xFF (NaN) */
    float *rstd_img;   /* [rows], when rstd_given */
    rmst_buf x, dy, dres, dx, w, rstd, dw, ws; /* host == NULL: not used */
    rmst_buf *dxb;     /* dx's buffer: own, or dy in place */
    unsigned char pad_dx, pad_dw;
} rmst_bwd_run;

void rmst_bwd_run_init(rmst_bwd_run *run, const rmsnorm_backend *be, const rmst_bwd_case *c);
rmsnorm_status rmst_bwd_run_exec(rmst_bwd_run *run, int pass);
void rmst_bwd_run_free(rmst_bwd_run *run);

#endif /* RMST_BWD_CASE_H */
