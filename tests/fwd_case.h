/*
 * The forward case matrix (issue 2, "Tests") and a runner that executes one
 * case on one backend with poisoned outputs. Shared by test_forward.c (against
 * the oracle) and test_vs_ref.c (against the ref backend).
 */
#ifndef RMST_FWD_CASE_H
#define RMST_FWD_CASE_H

#include <stddef.h>
#include <stdint.h>

#include "rmsnorm.h"
#include "tests/buffers.h"

typedef enum rmst_w_mode { RMST_W_NONE, RMST_W_F32, RMST_W_SAME } rmst_w_mode;
typedef enum rmst_res_mode {
    RMST_RES_NONE,
    RMST_RES_ONLY,       /* residual given, h not stored */
    RMST_RES_H_SEPARATE, /* h stored to its own buffer */
    RMST_RES_H_IN_PLACE  /* h stored over the residual */
} rmst_res_mode;
typedef enum rmst_y_mode { RMST_Y_SEPARATE, RMST_Y_IN_PLACE, RMST_Y_NONE } rmst_y_mode;

typedef struct rmst_fwd_case {
    rmsnorm_dtype t;
    int64_t rows, cols, stride;
    rmst_w_mode wmode;
    float weight_offset;
    uint32_t flags;
    rmst_res_mode res;
    rmst_y_mode ymode;
    int want_rstd;
    rmsnorm_quant quant;
    rmsnorm_dtype qt;
    float scale_ub;
    float static_scale; /* PER_TENSOR input */
    float eps;
    double magnitude;   /* of the random rows */
    uint64_t seed;
} rmst_fwd_case;

/* The matrix is enumerated by index; rmst_fwd_case_at returns 0 for indices
 * that are pruned or do not apply (block quant with cols % 128 != 0). */
size_t rmst_fwd_case_count(void);
int rmst_fwd_case_at(size_t i, rmst_fwd_case *c);
void rmst_fwd_case_describe(const rmst_fwd_case *c, char *buf, size_t n);

/* One case on one backend: inputs generated once (deterministic from the
 * seed), buffers in the backend's memory with host mirrors. */
typedef struct rmst_fwd_run {
    const rmsnorm_backend *be;
    rmst_fwd_case c;
    size_t es;          /* activation element size */
    size_t mat_bytes;   /* one [rows, cols] view of x, residual, h, y */
    int64_t qstride;    /* q has its own row stride */
    size_t q_bytes;
    size_t nscale;      /* rmsnorm_quant_scale_count */
    rmsnorm_dtype wdt;  /* weight dtype */
    unsigned char *x_img, *r_img; /* input images, padding filled with 0xFF (NaN) */
    rmst_buf x, r, h, y, w, rstd, q, scale; /* host == NULL: not used */
    rmst_buf *hb, *yb;  /* where h and y land (own buffer, or r / x in place); NULL: absent */
    unsigned char pad_h, pad_y, pad_rstd, pad_q, pad_scale; /* poison bytes of the last exec */
} rmst_fwd_run;

void rmst_fwd_run_init(rmst_fwd_run *run, const rmsnorm_backend *be, const rmst_fwd_case *c);
/* Poisons the outputs (pass 0: NaN patterns, pass 1: 0x5A), uploads, runs
 * rmsnorm_forward, downloads the outputs into the mirrors. */
rmsnorm_status rmst_fwd_run_exec(rmst_fwd_run *run, int pass);
void rmst_fwd_run_free(rmst_fwd_run *run);

/* The poison byte of an output of dtype t in a pass. */
unsigned char rmst_poison_byte(rmsnorm_dtype t, int pass);

#endif /* RMST_FWD_CASE_H */
