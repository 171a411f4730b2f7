/*
 * rmsnorm-bench: options and the sweep. See docs/benchmark.md.
 *
 * Exit status: 0 all cells passed (skips allowed), 1 a cell failed validation
 * or returned an error, 2 usage error, refused busy device or no backend.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <omp.h>

#include "bench/bench.h"

static void usage(FILE *f)
{
    (void)fputs(
        "usage: rmsnorm-bench [options]\n"
        "  --backend NAME        ref, avx512, cuda, hip or auto (default auto)\n"
        "  --op LIST             comma list of forward, backward, backward-res, fused-add, quant-tensor,\n"
        "                        quant-token, quant-block, add-quant-token, add-quant-block,\n"
        "                        or all (default forward,backward)\n"
        "  --dtype LIST          comma list of f32, f16, bf16 (default bf16,f32)\n"
        "  --fp8 FORMAT          e4m3, e5m2 or e4m3fnuz for the quant ops (default e4m3)\n"
        "  --quant-y             quant ops also write the 16/32-bit y\n"
        "  --weight KIND         same (the activations' dtype, default), f32, or none (no weight,\n"
        "                        so no dweight in the backward)\n"
        "  --grid NAME           small (default, < 1 min on 2 cores), medium or full\n"
        "  --shape RxC[,RxC..]   explicit shapes instead of a grid\n"
        "  --reps N              samples per cell, >= 12 (default 12)\n"
        "  --threads N           OpenMP threads (default: the OpenMP default)\n"
        "  --csv FILE            write results + environment as CSV\n"
        "  --json FILE           write results + environment as JSON\n"
        "  --config-search       GPU: time every launch config per shape\n"
        "  --graph               GPU: time a captured graph of the calls\n"
        "  --force               run on a busy device\n"
        "  --no-interleave       no probe/kernel rounds (host backends)\n"
        "  --hot                 host: no rotation (data stays in cache); each round's probe is\n"
        "                        a hot memcpy moving the cell's bytes (ratio = its latency / the call's)\n"
        "  --probe-mib N         roofline probe buffer size (default 2048 device; host: 2 x LLC,\n"
        "                        256 to 1024)\n"
        "  --round-probe-mib N   probe size in the rounds (default the LLC, at least 64)\n"
        "  --ws-mib N            clone rotation target (default 4 x LLC host, 1024 device)\n"
        "  --sample-ms X         target length of one timed sample (default 2)\n"
        "  --tries N             roofline probe tries, best kept (default 3)\n"
        "  --mem-limit-mib N     skip cells needing more (default half the RAM)\n"
        "  --list                list the backends present and exit\n",
        f);
}

static int parse_long(const char *s, long lo, long hi, long *v)
{
    char *end = NULL;
    errno = 0;
    long x = strtol(s, &end, 10);
    if (errno != 0 || end == s || *end != '\0' || x < lo || x > hi)
        return -1;
    *v = x;
    return 0;
}

/* Splits a comma list and calls fn on each item. */
static int each_item(const char *list, int (*fn)(const char *, void *), void *arg)
{
    char item[64];
    const char *p = list;
    for (;;) {
        const char *e = strchr(p, ',');
        size_t k = e ? (size_t)(e - p) : strlen(p);
        if (k == 0 || k >= sizeof item)
            return -1;
        memcpy(item, p, k);
        item[k] = '\0';
        if (fn(item, arg) != 0)
            return -1;
        if (e == NULL)
            return 0;
        p = e + 1;
    }
}

static int add_op(const char *name, void *arg)
{
    uint32_t *mask = arg;
    rmsi_bench_op op;
    if (strcmp(name, "all") == 0) {
        *mask |= (1u << RMSI_BENCH_OP_COUNT) - 1u;
        return 0;
    }
    if (rmsi_bench_op_parse(name, &op) != 0)
        return -1;
    *mask |= 1u << op;
    return 0;
}

static int add_dtype(const char *name, void *arg)
{
    uint32_t *mask = arg;
    rmsnorm_dtype t;
    if (rmsi_bench_dtype_parse(name, &t) != 0 || rmsnorm_dtype_size(t) < 2)
        return -1;
    *mask |= 1u << t;
    return 0;
}

static size_t half_ram(void)
{
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    if (pages <= 0 || page <= 0)
        return (size_t)4 << 30;
    return (size_t)pages / 2u * (size_t)page;
}

typedef struct raw_opts {
    long probe_mib, round_probe_mib, ws_mib, mem_mib, tries;
    double sample_ms;
    int list;
    const char *ops, *dtypes, *shapes;
} raw_opts;

/* Returns 0, 1 for --help/--list handled, -1 on a usage error. */
static int parse_args(int argc, char **argv, rmsi_bench_opts *o, raw_opts *r)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = NULL;
        long n = 0;
        static const char *flags[] = { "--config-search", "--graph", "--force", "--quant-y",
                                       "--no-interleave", "--hot", "--list", "--help", "-h" };
        int is_flag = 0;
        for (size_t k = 0; k < sizeof flags / sizeof flags[0]; k++)
            is_flag |= strcmp(a, flags[k]) == 0;
        if (!is_flag) {
            if (i + 1 >= argc) {
                (void)fprintf(stderr, "rmsnorm-bench: %s needs a value\n", a);
                return -1;
            }
            v = argv[++i];
        }
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            usage(stdout);
            return 1;
        } else if (strcmp(a, "--list") == 0) {
            r->list = 1;
        } else if (strcmp(a, "--config-search") == 0) {
            o->config_search = 1;
        } else if (strcmp(a, "--graph") == 0) {
            o->graph = 1;
        } else if (strcmp(a, "--force") == 0) {
            o->force = 1;
        } else if (strcmp(a, "--quant-y") == 0) {
            o->quant_y = 1;
        } else if (strcmp(a, "--no-interleave") == 0) {
            o->interleave = 0;
        } else if (strcmp(a, "--hot") == 0) {
            o->hot = 1;
        } else if (strcmp(a, "--backend") == 0) {
            o->backend = v;
        } else if (strcmp(a, "--op") == 0) {
            r->ops = v;
        } else if (strcmp(a, "--dtype") == 0) {
            r->dtypes = v;
        } else if (strcmp(a, "--fp8") == 0) {
            if (rmsi_bench_dtype_parse(v, &o->fp8) != 0 || rmsnorm_dtype_size(o->fp8) != 1) {
                (void)fprintf(stderr, "rmsnorm-bench: --fp8 takes e4m3, e5m2 or e4m3fnuz\n");
                return -1;
            }
        } else if (strcmp(a, "--weight") == 0) {
            if (rmsi_bench_weight_parse(v, &o->weight) != 0) {
                (void)fprintf(stderr, "rmsnorm-bench: --weight takes same, f32 or none\n");
                return -1;
            }
        } else if (strcmp(a, "--grid") == 0) {
            o->grid = v;
        } else if (strcmp(a, "--shape") == 0) {
            r->shapes = v;
        } else if (strcmp(a, "--reps") == 0) {
            if (parse_long(v, RMSI_BENCH_MIN_SAMPLES, RMSI_BENCH_MAX_SAMPLES, &n) != 0) {
                (void)fprintf(stderr, "rmsnorm-bench: --reps must be in [%d, %d]\n",
                              RMSI_BENCH_MIN_SAMPLES, RMSI_BENCH_MAX_SAMPLES);
                return -1;
            }
            o->reps = (int)n;
        } else if (strcmp(a, "--threads") == 0) {
            if (parse_long(v, 1, 4096, &n) != 0)
                return -1;
            o->threads = (int)n;
        } else if (strcmp(a, "--csv") == 0) {
            o->csv = v;
        } else if (strcmp(a, "--json") == 0) {
            o->json = v;
        } else if (strcmp(a, "--probe-mib") == 0) {
            if (parse_long(v, 1, 1L << 20, &r->probe_mib) != 0)
                return -1;
        } else if (strcmp(a, "--round-probe-mib") == 0) {
            if (parse_long(v, 1, 1L << 20, &r->round_probe_mib) != 0)
                return -1;
        } else if (strcmp(a, "--ws-mib") == 0) {
            if (parse_long(v, 1, 1L << 20, &r->ws_mib) != 0)
                return -1;
        } else if (strcmp(a, "--mem-limit-mib") == 0) {
            if (parse_long(v, 1, 1L << 30, &r->mem_mib) != 0)
                return -1;
        } else if (strcmp(a, "--tries") == 0) {
            if (parse_long(v, 1, 100, &r->tries) != 0)
                return -1;
        } else if (strcmp(a, "--sample-ms") == 0) {
            char *end = NULL;
            r->sample_ms = strtod(v, &end);
            if (end == v || *end != '\0' || !(r->sample_ms > 0.0 && r->sample_ms < 1e5))
                return -1;
        } else {
            (void)fprintf(stderr, "rmsnorm-bench: unknown option %s\n", a);
            return -1;
        }
    }
    return 0;
}

static int options(int argc, char **argv, rmsi_bench_opts *o, raw_opts *r)
{
    memset(o, 0, sizeof *o);
    memset(r, 0, sizeof *r);
    o->backend = "auto";
    o->grid = "small";
    o->reps = RMSI_BENCH_MIN_SAMPLES;
    o->fp8 = RMSNORM_F8_E4M3;
    o->interleave = 1;
    r->ops = "forward,backward";
    r->dtypes = "bf16,f32";
    r->tries = 3;
    r->round_probe_mib = 0; /* sized from the LLC in main */
    r->sample_ms = 2.0;
    int rc = parse_args(argc, argv, o, r);
    if (rc != 0)
        return rc;
    if (each_item(r->ops, add_op, &o->ops) != 0) {
        (void)fprintf(stderr, "rmsnorm-bench: bad --op list '%s'\n", r->ops);
        return -1;
    }
    if (each_item(r->dtypes, add_dtype, &o->dtypes) != 0) {
        (void)fprintf(stderr, "rmsnorm-bench: bad --dtype list '%s' (f32, f16, bf16)\n", r->dtypes);
        return -1;
    }
    if (r->shapes != NULL) {
        o->grid = "custom";
        if (rmsi_bench_shapes_parse(r->shapes, o->shapes, RMSI_BENCH_MAX_SHAPES, &o->nshapes) != 0) {
            (void)fprintf(stderr, "rmsnorm-bench: bad --shape list '%s' (RxC,RxC...)\n", r->shapes);
            return -1;
        }
    } else if (rmsi_bench_grid_named(o->grid, o->shapes, RMSI_BENCH_MAX_SHAPES, &o->nshapes) != 0) {
        (void)fprintf(stderr, "rmsnorm-bench: unknown --grid '%s' (small, medium, full)\n", o->grid);
        return -1;
    }
    o->sample_s = r->sample_ms * 1e-3;
    o->round_probe_bytes = (size_t)r->round_probe_mib << 20; /* 0: from the LLC, in main */
    o->mem_limit = r->mem_mib ? (size_t)r->mem_mib << 20 : half_ram();
    return 0;
}

/* The host's opening probe buffers: 2 x LLC, from 256 MiB up to 1 GiB. */
static size_t host_probe_bytes(size_t llc)
{
    const size_t lo = (size_t)256 << 20, hi = (size_t)1 << 30;

    if (llc > hi / 2u)
        return hi;
    return 2u * llc > lo ? 2u * llc : lo;
}

static void list_backends(void)
{
    int n = rmsnorm_backend_count();
    const rmsnorm_backend *dflt = rmsnorm_backend_find("auto");
    for (int i = 0; i < n; i++) {
        const rmsnorm_backend *be = rmsnorm_backend_at(i);
        (void)printf("%-8s %s%s\n", rmsnorm_backend_name(be),
                     rmsnorm_backend_is_device(be) ? "device" : "host",
                     be == dflt ? "  (auto)" : "");
    }
}

/* Refuses a sweep on a device someone else is using: their kernels would
 * share the bandwidth and every number would be wrong. */
static int check_busy(const rmsnorm_backend *be, int force)
{
    rmsnorm_status (*busy_fn)(int *, char *, size_t) = RMSI_BENCH_HOOK(be, device_busy);
    char why[256] = "";
    int busy = 0;
    if (!rmsnorm_backend_is_device(be))
        return 0;
    if (busy_fn == NULL) {
        (void)fprintf(stderr, "rmsnorm-bench: note: backend %s cannot tell whether the device is "
                              "busy (no device_busy hook); results assume it is idle\n",
                      rmsnorm_backend_name(be));
        return 0;
    }
    if (busy_fn(&busy, why, sizeof why) != RMSNORM_OK) {
        (void)fprintf(stderr, "rmsnorm-bench: note: the busy check failed; results assume an idle "
                              "device\n");
        return 0;
    }
    if (!busy)
        return 0;
    if (force) {
        (void)fprintf(stderr, "rmsnorm-bench: WARNING: device busy (%s); --force given, numbers "
                              "will be unreliable\n",
                      why);
        return 0;
    }
    (void)fprintf(stderr, "rmsnorm-bench: refusing to run: the device is busy (%s). Use --force "
                          "to run anyway.\n",
                  why);
    return -1;
}

static void progress(int done, int total, const rmsi_bench_cell *c)
{
    (void)fprintf(stderr, "\r\033[K[%d/%d] %s %s %lldx%lld", done, total,
                  rmsi_bench_op_info(c->op)->name, rmsi_bench_dtype_name(c->dtype),
                  (long long)c->rows, (long long)c->cols);
    (void)fflush(stderr);
}

static int write_file(const char *path, int json, const rmsi_bench_env *env,
                      const rmsi_bench_opts *o, const rmsi_bench_roofline *rf,
                      const rmsi_bench_cell *cells, int n)
{
    FILE *f = fopen(path, "w");
    if (f == NULL) {
        (void)fprintf(stderr, "rmsnorm-bench: cannot write %s\n", path);
        return -1;
    }
    int rc = json ? rmsi_bench_write_json(f, env, o, rf, cells, n)
                  : rmsi_bench_write_csv(f, env, o, rf, cells, n);
    if (fclose(f) != 0 || rc != 0) {
        (void)fprintf(stderr, "rmsnorm-bench: error writing %s\n", path);
        return -1;
    }
    return 0;
}

static int plan_cells(const rmsi_bench_opts *o, rmsi_bench_cell **out)
{
    int n = 0;
    rmsi_bench_cell *cells = calloc((size_t)RMSI_BENCH_OP_COUNT * 3u * RMSI_BENCH_MAX_SHAPES,
                                    sizeof *cells);
    static const rmsnorm_dtype order[] = { RMSNORM_BF16, RMSNORM_F16, RMSNORM_F32 };
    if (cells == NULL)
        return -1;
    for (int op = 0; op < RMSI_BENCH_OP_COUNT; op++) {
        if (!(o->ops & (1u << op)))
            continue;
        for (size_t d = 0; d < sizeof order / sizeof order[0]; d++) {
            if (!(o->dtypes & (1u << order[d])))
                continue;
            for (int s = 0; s < o->nshapes; s++) {
                cells[n].op = (rmsi_bench_op)op;
                cells[n].dtype = order[d];
                cells[n].rows = o->shapes[s].rows;
                cells[n].cols = o->shapes[s].cols;
                n++;
            }
        }
    }
    *out = cells;
    return n;
}

int main(int argc, char **argv)
{
    rmsi_bench_opts o;
    raw_opts r;
    rmsi_bench_env env;
    rmsi_bench_roofline rf;
    rmsi_bench_probe_bufs pb;
    rmsi_bench_ctx ctx;
    rmsi_bench_cell *cells = NULL;
    /* Line-buffered even into a file or pipe (session 11 lost five whole
     * runs that way). The table comes after the closing probes, so a run
     * killed by a timeout keeps only the per-cell lines on stderr below
     * (session 27 lost two device calls' numbers without them). */
    (void)setvbuf(stdout, NULL, _IOLBF, 0);
    int rc = options(argc, argv, &o, &r);
    if (rc != 0) {
        if (rc < 0)
            usage(stderr);
        return rc < 0 ? 2 : 0;
    }
    if (r.list) {
        list_backends();
        return 0;
    }
    if (o.threads > 0)
        omp_set_num_threads(o.threads);
    const rmsnorm_backend *be = rmsnorm_backend_find(o.backend);
    const rmsnorm_backend *ref = rmsnorm_backend_find("ref");
    if (be == NULL || ref == NULL) {
        (void)fprintf(stderr, "rmsnorm-bench: backend '%s' is not available; present:\n",
                      o.backend);
        list_backends();
        return 2;
    }
    if (check_busy(be, o.force) != 0)
        return 2;
    int dev = rmsnorm_backend_is_device(be);
    rmsi_bench_env_collect(be, &env);
    if (o.hot && dev) {
        (void)fprintf(stderr, "rmsnorm-bench: --hot is for host backends\n");
        return 2;
    }
    o.working_set = r.ws_mib ? (size_t)r.ws_mib << 20 : (dev ? (size_t)1 << 30 : 4u * env.llc);
    if (o.hot)
        o.working_set = 1; /* one clone: every call finds its data in cache */
    /* Host probes by default reach past what the LLC can serve: the opening
     * ones over 2 x LLC (256 MiB to 1 GiB), the rounds' over the LLC (at
     * least 64 MiB). With a fixed 64 MiB, a 480 MiB-LLC host's round copy
     * probe read 36-44 GB/s where 480-960 MiB read 36-41, the kernel's 36
     * unchanged, so the forward's ratio wandered 0.83-1.03 (docs/perf/cpu.md,
     * session 59). */
    size_t probe_bytes = r.probe_mib ? (size_t)r.probe_mib << 20
                                     : (dev ? (size_t)2 << 30 : host_probe_bytes(env.llc));
    if (o.round_probe_bytes == 0)
        o.round_probe_bytes = env.llc > ((size_t)64 << 20) ? env.llc : (size_t)64 << 20;
    if (!dev && probe_bytes < 2u * env.llc)
        (void)fprintf(stderr, "rmsnorm-bench: warning: probe buffers of %zu MiB are not far beyond "
                              "the %zu MiB LLC\n",
                      probe_bytes >> 20, env.llc >> 20);

    memset(&rf, 0, sizeof rf);
    memset(&pb, 0, sizeof pb);
    rf.tries = (int)r.tries;
    rf.bytes = probe_bytes;
    rmsnorm_status st = rmsi_bench_probe_alloc(be, probe_bytes, &pb);
    if (st == RMSNORM_OK)
        st = rmsi_bench_probe_measure(be, &pb, rf.tries, &rf.open);
    rf.available = st == RMSNORM_OK;
    if (!rf.available && st != RMSNORM_ERR_UNSUPPORTED)
        (void)fprintf(stderr, "rmsnorm-bench: roofline probes failed: %s\n",
                      rmsnorm_status_string(st));
    if (o.round_probe_bytes > probe_bytes)
        o.round_probe_bytes = probe_bytes;
    o.interleave = o.interleave && rf.available && !dev;

    rmsi_bench_report_header(stdout, &env, &o, &rf);
    (void)fflush(stdout);

    int n = plan_cells(&o, &cells);
    if (n < 0) {
        rmsi_bench_probe_free(be, &pb);
        return 2;
    }
    ctx.be = be;
    ctx.ref = ref;
    ctx.o = &o;
    ctx.rf = &rf;
    ctx.pb = o.interleave ? &pb : NULL;
    ctx.llc = env.llc;
    int tty = isatty(2);
    for (int i = 0; i < n; i++) {
        if (tty)
            progress(i + 1, n, &cells[i]);
        rmsi_bench_cell_run(&ctx, &cells[i]);
        if (!tty)
            rmsi_bench_report_done(stderr, i + 1, n, &cells[i]);
    }
    if (tty)
        (void)fputs("\r\033[K", stderr);
    if (rf.available) {
        rmsi_bench_probe_set close;
        if (rmsi_bench_probe_measure(be, &pb, rf.tries, &close) == RMSNORM_OK)
            rmsi_bench_roofline_close(&rf, &close);
        else
            rf.suspect = 1;
    }
    rmsi_bench_probe_free(be, &pb);

    int have_cfg = o.config_search;
    int fails = 0;
    rmsi_bench_report_table_head(stdout, rf.available, rf.available, have_cfg);
    for (int i = 0; i < n; i++) {
        rmsi_bench_report_row(stdout, &cells[i], rf.available, rf.available, have_cfg, rf.suspect);
        fails += cells[i].verdict == RMSI_BENCH_FAIL || cells[i].verdict == RMSI_BENCH_ERROR;
    }
    rmsi_bench_report_footer(stdout, &rf, fails);
    if (rf.suspect)
        (void)fprintf(stderr, "rmsnorm-bench: WARNING: roofline drift %+.1f%% > %.0f%%: ratios "
                              "are suspect\n",
                      100.0 * rf.drift, 100.0 * RMSI_BENCH_DRIFT_LIMIT);
    if (fails)
        (void)fprintf(stderr, "rmsnorm-bench: %d cell(s) FAILED\n", fails);
    rc = fails ? 1 : 0;
    if (o.csv != NULL && write_file(o.csv, 0, &env, &o, &rf, cells, n) != 0)
        rc = rc ? rc : 2;
    if (o.json != NULL && write_file(o.json, 1, &env, &o, &rf, cells, n) != 0)
        rc = rc ? rc : 2;
    free(cells);
    return rc;
}
