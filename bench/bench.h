/*
 * rmsnorm-bench: internal declarations shared by the benchmark's files.
 *
 * The benchmark drives every backend only through the public API (rmsnorm.h)
 * and the optional measurement hooks of the backend table (rmsnorm_backend.h),
 * so a new backend needs no change here. docs/benchmark.md explains the method.
 */
#ifndef RMSNORM_BENCH_H
#define RMSNORM_BENCH_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "rmsnorm.h"
#include "rmsnorm_backend.h"

#define RMSI_BENCH_MAX_SAMPLES 256 /* fixed arrays, so statistics never allocate */
#define RMSI_BENCH_MIN_SAMPLES 12
#define RMSI_BENCH_MAX_SHAPES 96
#define RMSI_BENCH_PROBE_KINDS 6   /* RMSNORM_PROBE_COPY .. RMSNORM_PROBE_R2W1_NT */
#define RMSI_BENCH_DRIFT_LIMIT 0.03
/* A backend's config text (config_describe, config_enumerate). The CUDA
 * plugin's register config is 71 characters since the backward's cl and lean
 * knobs; at 64 bytes every describe and enumerate call failed for lack of
 * room, and --config-search printed "?" and searched nothing (found in S19). */
#define RMSI_BENCH_CFG_LEN RMSNORM_CONFIG_TEXT_MAX

/* A measurement hook of the table, or NULL when the backend does not provide it
 * or was built against a table too old to have the slot. */
#define RMSI_BENCH_HOOK(be, slot)                                                         \
    (((be) != NULL && (be)->struct_size >= offsetof(struct rmsnorm_backend, slot) +       \
                                               sizeof((be)->slot))                        \
         ? (be)->slot                                                                     \
         : NULL)

typedef enum rmsi_bench_op {
    RMSI_BENCH_FORWARD = 0,
    RMSI_BENCH_BACKWARD = 1,
    RMSI_BENCH_FUSED_ADD = 2,
    RMSI_BENCH_QUANT_TENSOR = 3,
    RMSI_BENCH_QUANT_TOKEN = 4,
    RMSI_BENCH_QUANT_BLOCK = 5,
    RMSI_BENCH_ADD_QUANT_TOKEN = 6,
    RMSI_BENCH_ADD_QUANT_BLOCK = 7,
    RMSI_BENCH_BACKWARD_RES = 8, /* the backward adding a residual gradient into dx */
    RMSI_BENCH_OP_COUNT = 9
} rmsi_bench_op;

/* What one op does, as the benchmark sets it up. */
typedef struct rmsi_bench_opinfo {
    const char *name;     /* command-line spelling */
    const char *model;    /* the logical byte model, as printed */
    int backward;         /* 1: rmsnorm_backward (with rstd given and dweight) */
    int residual;         /* 1: forward with residual and h_out */
    rmsnorm_quant quant;  /* forward quant mode */
} rmsi_bench_opinfo;

/* Logical traffic of one call. main_* is what GB/s and % roofline count: the
 * activation-sized tensors (and fp8 scales, which scale with them). aux_* is
 * listed separately: weight, rstd, dweight and backend workspace partials. */
typedef struct rmsi_bench_bytes {
    uint64_t main_read;
    uint64_t main_written;
    uint64_t aux_read;
    uint64_t aux_written;
} rmsi_bench_bytes;

/* The weight every cell passes (--weight). Mixed-precision models keep an fp32
 * weight under 16-bit activations, which the kernels read and convert
 * differently from a weight of the activations' dtype. */
typedef enum rmsi_bench_weight {
    RMSI_BENCH_WEIGHT_SAME = 0, /* the activations' dtype (the default) */
    RMSI_BENCH_WEIGHT_F32 = 1,
    RMSI_BENCH_WEIGHT_NONE = 2  /* weight NULL; the backward then has no dweight */
} rmsi_bench_weight;

/* Per-op knobs the byte model depends on. */
typedef struct rmsi_bench_model_opts {
    rmsnorm_dtype fp8;     /* quantised output format */
    int quant_y;           /* quant ops also write the 16/32-bit y */
    size_t workspace;      /* backward: the backend's workspace bytes (written and read once) */
    rmsi_bench_weight weight;
} rmsi_bench_model_opts;

/* bytes.c */
const rmsi_bench_opinfo *rmsi_bench_op_info(rmsi_bench_op op);
int rmsi_bench_op_parse(const char *name, rmsi_bench_op *op);
int rmsi_bench_dtype_parse(const char *name, rmsnorm_dtype *dtype);
const char *rmsi_bench_dtype_name(rmsnorm_dtype dtype);
const char *rmsi_bench_probe_name(rmsnorm_probe kind);
int rmsi_bench_weight_parse(const char *name, rmsi_bench_weight *w);
const char *rmsi_bench_weight_name(rmsi_bench_weight w);
/* The weight's dtype and its element size under activations of dtype act (size 0: none). */
rmsnorm_dtype rmsi_bench_weight_dtype(rmsi_bench_weight w, rmsnorm_dtype act);
size_t rmsi_bench_weight_size(rmsi_bench_weight w, rmsnorm_dtype act);
uint64_t rmsi_bench_probe_traffic(rmsnorm_probe kind, size_t bytes_per_buffer);
int rmsi_bench_bytes_of(rmsi_bench_op op, rmsnorm_dtype dtype, int64_t rows, int64_t cols,
                        const rmsi_bench_model_opts *mo, rmsi_bench_bytes *out);
rmsnorm_probe rmsi_bench_probe_shape(const rmsi_bench_bytes *b, int nt);
uint32_t rmsi_bench_op_caps(rmsi_bench_op op, rmsnorm_dtype dtype, rmsnorm_dtype fp8);

/* stats.c: all on caller arrays of at most RMSI_BENCH_MAX_SAMPLES values. */
typedef struct rmsi_bench_summary {
    double median;
    double min;
    double max;
    int n;
} rmsi_bench_summary;
int rmsi_bench_summarise(const double *v, int n, rmsi_bench_summary *out);
double rmsi_bench_drift(double open, double close);
int rmsi_bench_drift_suspect(double drift);

/* grid.c: shape lists. */
typedef struct rmsi_bench_shape {
    int64_t rows;
    int64_t cols;
} rmsi_bench_shape;
int rmsi_bench_grid_named(const char *name, rmsi_bench_shape *out, int cap, int *n);
int rmsi_bench_shapes_parse(const char *list, rmsi_bench_shape *out, int cap, int *n);

/* timer.c: the backend's own clock, or the host monotonic clock around
 * rmsnorm_synchronize when the backend has no time_region. */
double rmsi_bench_now(void);
rmsnorm_status rmsi_bench_time(const rmsnorm_backend *be, rmsnorm_work_fn fn, void *ctx, int reps,
                               int use_graph, double *seconds);

/* roofline.c */
typedef struct rmsi_bench_probe_set {
    double gbps[RMSI_BENCH_PROBE_KINDS]; /* best of the tries; 0 = not measured */
    double best;                          /* max over kinds: the roofline */
    rmsnorm_probe best_kind;
} rmsi_bench_probe_set;

typedef struct rmsi_bench_probe_bufs {
    void *dst;
    void *src0;
    void *src1;
    size_t bytes; /* per buffer */
} rmsi_bench_probe_bufs;

typedef struct rmsi_bench_roofline {
    int available;              /* the backend has a probe hook */
    int tries;                  /* best of this many per kind */
    size_t bytes;               /* per buffer */
    rmsi_bench_probe_set open;  /* before the sweep */
    rmsi_bench_probe_set close; /* after the sweep */
    int closed;
    double drift;               /* close.best / open.best - 1 */
    int suspect;                /* |drift| > RMSI_BENCH_DRIFT_LIMIT */
} rmsi_bench_roofline;

rmsnorm_status rmsi_bench_probe_alloc(const rmsnorm_backend *be, size_t bytes,
                                      rmsi_bench_probe_bufs *pb);
void rmsi_bench_probe_free(const rmsnorm_backend *be, rmsi_bench_probe_bufs *pb);
rmsnorm_status rmsi_bench_probe_once(const rmsnorm_backend *be, const rmsi_bench_probe_bufs *pb,
                                     rmsnorm_probe kind, size_t bytes, double *gbps);
rmsnorm_status rmsi_bench_probe_measure(const rmsnorm_backend *be, const rmsi_bench_probe_bufs *pb,
                                        int tries, rmsi_bench_probe_set *set);
void rmsi_bench_roofline_close(rmsi_bench_roofline *rf, const rmsi_bench_probe_set *close);

/* Options of one run. */
typedef struct rmsi_bench_opts {
    const char *backend;
    uint32_t ops;          /* bit per rmsi_bench_op */
    uint32_t dtypes;       /* bit per rmsnorm_dtype */
    rmsnorm_dtype fp8;
    rmsi_bench_weight weight;
    rmsi_bench_shape shapes[RMSI_BENCH_MAX_SHAPES];
    int nshapes;
    const char *grid;      /* name of the grid, or "custom" */
    int reps;              /* samples per cell */
    int threads;           /* 0 = OpenMP default */
    int quant_y;
    int graph;
    int force;
    int config_search;
    int interleave;        /* probe/kernel rounds (default on for host backends) */
    int hot;               /* host: one clone (the data stays in cache), rounds against a hot memcpy */
    double sample_s;       /* target length of one timed sample */
    size_t probe_bytes;    /* roofline probe buffer size */
    size_t round_probe_bytes;
    size_t working_set;    /* rotate clones until the inputs+outputs exceed this */
    size_t mem_limit;      /* skip cells whose buffers exceed this */
    const char *csv;
    const char *json;
    int quiet_progress;
} rmsi_bench_opts;

/* One row of the report. */
typedef enum rmsi_bench_verdict {
    RMSI_BENCH_OK = 0,
    RMSI_BENCH_FAIL = 1,   /* validation against ref failed: no number */
    RMSI_BENCH_SKIP = 2,   /* unsupported by the backend, or too large */
    RMSI_BENCH_ERROR = 3   /* a call returned an error status */
} rmsi_bench_verdict;

typedef struct rmsi_bench_cell {
    rmsi_bench_op op;
    rmsnorm_dtype dtype;
    int64_t rows;
    int64_t cols;
    rmsi_bench_bytes bytes;
    rmsi_bench_verdict verdict;
    char note[160];
    double worst;          /* validation: worst |err| / bound (<= 1 passes) */
    int clones;
    int calls_per_sample;
    rmsi_bench_summary t;  /* seconds per call */
    double gbps;           /* main bytes / median */
    double pct_roof;       /* < 0: no roofline */
    rmsnorm_probe round_probe;
    double round_ratio;    /* median of per-round kernel GB/s / probe GB/s; < 0: none */
    rmsi_bench_summary round_probe_gbps;
    double shape_ratio;    /* GB/s / the opening probe of round_probe's kind; < 0: none */
    char cfg_heur[RMSI_BENCH_CFG_LEN]; /* --config-search */
    char cfg_best[RMSI_BENCH_CFG_LEN];
    double cfg_ratio;      /* heuristic median / best median; 0 = not searched */
    int cfg_searched;      /* configs timed by --config-search */
} rmsi_bench_cell;

/* Environment of the run, printed in every output. */
typedef struct rmsi_bench_env {
    char backend[32];
    char device[256];
    char compiler[128];
    char commit[64];
    char date[32];
    char host[64];
    int threads;
    size_t llc;
    int is_device;
    int has_time_region;
} rmsi_bench_env;

/* env.c */
void rmsi_bench_env_collect(const rmsnorm_backend *be, rmsi_bench_env *env);
size_t rmsi_bench_llc_bytes(void);

/* validate.c: compare a backend's outputs with the ref's, within twice the
 * docs/numerics.md bounds. Returns the worst err/bound ratio (> 1 fails). */
double rmsi_bench_ulp(rmsnorm_dtype t, double a);
double rmsi_bench_ulp_fp8(rmsnorm_dtype t, double a);
double rmsi_bench_check_act(const void *a, const void *o, rmsnorm_dtype t, size_t n, int exact);
double rmsi_bench_check_rel(const float *a, const float *o, size_t n);
double rmsi_bench_check_l2(const float *a, const float *o, size_t n);
/* w NULL: no weight (1); wt: its dtype */
double rmsi_bench_check_dx_row(const void *a, const void *o, const void *x, const void *dy,
                               const void *w, rmsnorm_dtype wt, rmsnorm_dtype t, int64_t cols,
                               size_t row_off, double rstd);
double rmsi_bench_check_q(uint8_t a, uint8_t o, float sa, float so, rmsnorm_dtype f8);
/* check_act over n elements and check_dx_row over every row, on the OpenMP
 * threads (the result does not depend on their count). */
double rmsi_bench_check_act_all(const void *a, const void *o, rmsnorm_dtype t, size_t n, int exact);
double rmsi_bench_check_dx_all(const void *a, const void *o, const void *x, const void *dy, const void *w,
                               rmsnorm_dtype wt, rmsnorm_dtype t, int64_t rows, int64_t cols,
                               const float *rstd);

/* cells.c */
typedef struct rmsi_bench_ctx {
    const rmsnorm_backend *be;
    const rmsnorm_backend *ref;
    const rmsi_bench_opts *o;
    const rmsi_bench_roofline *rf;
    const rmsi_bench_probe_bufs *pb; /* for the interleaved rounds, NULL = none */
    size_t llc;
} rmsi_bench_ctx;
void rmsi_bench_cell_run(const rmsi_bench_ctx *c, rmsi_bench_cell *cell);

/* report.c */
void rmsi_bench_report_header(FILE *f, const rmsi_bench_env *env, const rmsi_bench_opts *o,
                              const rmsi_bench_roofline *rf);
void rmsi_bench_report_roofline(FILE *f, const char *when, const rmsi_bench_probe_set *s);
void rmsi_bench_report_table_head(FILE *f, int have_roof, int have_ratio, int have_cfg);
/* One finished cell, before the table (which waits for the closing probes):
 * what a run killed by a timeout keeps. */
void rmsi_bench_report_done(FILE *f, int done, int total, const rmsi_bench_cell *c);
void rmsi_bench_report_row(FILE *f, const rmsi_bench_cell *c, int have_roof, int have_ratio,
                           int have_cfg, int suspect);
void rmsi_bench_report_footer(FILE *f, const rmsi_bench_roofline *rf, int fails);
int rmsi_bench_write_csv(FILE *f, const rmsi_bench_env *env, const rmsi_bench_opts *o,
                         const rmsi_bench_roofline *rf, const rmsi_bench_cell *cells, int n);
int rmsi_bench_write_json(FILE *f, const rmsi_bench_env *env, const rmsi_bench_opts *o,
                          const rmsi_bench_roofline *rf, const rmsi_bench_cell *cells, int n);
void rmsi_bench_json_string(FILE *f, const char *s);

#endif /* RMSNORM_BENCH_H */
