/*
 * Output: the human table on stdout, and the same results with the full
 * environment as CSV (environment in leading "# " lines, one row per cell) and
 * JSON. Quantities that do not exist (no roofline, no rounds) are empty in the
 * CSV, null in the JSON and "-" in the table, never zero.
 */
#include <math.h>
#include <string.h>

#include "bench/bench.h"

static const char *verdict_name(rmsi_bench_verdict v)
{
    switch (v) {
    case RMSI_BENCH_OK: return "ok";
    case RMSI_BENCH_FAIL: return "FAIL";
    case RMSI_BENCH_SKIP: return "skip";
    case RMSI_BENCH_ERROR: return "ERROR";
    default: return "?";
    }
}

void rmsi_bench_report_roofline(FILE *f, const char *when, const rmsi_bench_probe_set *s)
{
    (void)fprintf(f, "  %-8s", when);
    for (int k = 0; k < RMSI_BENCH_PROBE_KINDS; k++) {
        if (s->gbps[k] > 0.0)
            (void)fprintf(f, " %s %.1f", rmsi_bench_probe_name((rmsnorm_probe)k), s->gbps[k]);
        else
            (void)fprintf(f, " %s -", rmsi_bench_probe_name((rmsnorm_probe)k));
    }
    (void)fprintf(f, "  => roofline %.1f GB/s (%s)\n", s->best, rmsi_bench_probe_name(s->best_kind));
}

void rmsi_bench_report_header(FILE *f, const rmsi_bench_env *env, const rmsi_bench_opts *o,
                              const rmsi_bench_roofline *rf)
{
    (void)fprintf(f, "rmsnorm-bench  backend %s  on %s\n", env->backend, env->device);
    (void)fprintf(f, "  commit %s, %s, %s, host %s, %d OpenMP threads, LLC %zu MiB\n", env->commit,
                  env->compiler, env->date, env->host, env->threads, env->llc >> 20);
    (void)fprintf(f, "  grid %s, %d samples per cell (median [min, max]), ", o->grid, o->reps);
    if (o->hot)
        (void)fputs("HOT: no rotation, the data stays in cache; ratio = a hot memcpy moving the cell's "
                    "bytes / the call (latency ratio)", f);
    else
        (void)fprintf(f, "inputs rotated through >= %zu MiB of clones", o->working_set >> 20);
    (void)fprintf(f, ", fp8 %s%s, weight %s\n", rmsi_bench_dtype_name(o->fp8),
                  o->quant_y ? ", quant ops also write y" : "", rmsi_bench_weight_name(o->weight));
    if (!env->has_time_region)
        (void)fprintf(f, "  note: the backend has no time_region hook: timed with the host clock "
                         "around rmsnorm_synchronize\n");
    (void)fprintf(f, "byte models (GB/s = main bytes / median latency, 1 GB = 1e9 B; aux bytes "
                     "are listed per cell in CSV/JSON, not counted):\n");
    for (int i = 0; i < RMSI_BENCH_OP_COUNT; i++) {
        if (o->ops & (1u << i)) {
            const rmsi_bench_opinfo *oi = rmsi_bench_op_info((rmsi_bench_op)i);
            (void)fprintf(f, "  %-16s %s\n", oi->name, oi->model);
        }
    }
    if (!rf->available) {
        (void)fprintf(f, "roofline: not available (the backend has no probe hook): no %%roof "
                         "column, no same-round ratio\n");
        return;
    }
    (void)fprintf(f, "roofline probes, GB/s, best of %d, %zu MiB per buffer", rf->tries, rf->bytes >> 20);
    if (o->interleave && !o->hot)
        (void)fprintf(f, " (rounds: %zu MiB)", o->round_probe_bytes >> 20);
    (void)fputs(":\n", f);
    rmsi_bench_report_roofline(f, "opening", &rf->open);
}

void rmsi_bench_report_table_head(FILE *f, int have_roof, int have_ratio, int have_cfg)
{
    (void)fprintf(f, "%-16s %-5s %6s %6s %11s %11s %11s %8s", "op", "dtype", "rows", "cols",
                  "median_us", "min_us", "max_us", "GB/s");
    if (have_roof)
        (void)fprintf(f, " %6s", "%roof");
    if (have_ratio)
        (void)fprintf(f, " %6s %-8s", "ratio", "vs");
    if (have_cfg)
        (void)fprintf(f, " %-42s %-42s %6s", "cfg_heuristic", "cfg_best", "gain");
    (void)fprintf(f, "  check\n");
}

void rmsi_bench_report_done(FILE *f, int done, int total, const rmsi_bench_cell *c)
{
    (void)fprintf(f, "rmsnorm-bench: [%d/%d] %s %s %lldx%lld: ", done, total, rmsi_bench_op_info(c->op)->name,
                  rmsi_bench_dtype_name(c->dtype), (long long)c->rows, (long long)c->cols);
    if (c->verdict != RMSI_BENCH_OK)
        (void)fprintf(f, "%s, %s\n", verdict_name(c->verdict), c->note);
    else
        (void)fprintf(f, "median %.2f us [%.2f, %.2f], %.2f GB/s\n", c->t.median * 1e6, c->t.min * 1e6,
                      c->t.max * 1e6, c->gbps);
    (void)fflush(f);
}

void rmsi_bench_report_row(FILE *f, const rmsi_bench_cell *c, int have_roof, int have_ratio,
                           int have_cfg, int suspect)
{
    const char *mark = suspect ? "?" : "";
    (void)fprintf(f, "%-16s %-5s %6lld %6lld", rmsi_bench_op_info(c->op)->name,
                  rmsi_bench_dtype_name(c->dtype), (long long)c->rows, (long long)c->cols);
    if (c->verdict != RMSI_BENCH_OK) {
        (void)fprintf(f, "  %s\n", c->note);
        return;
    }
    (void)fprintf(f, " %11.2f %11.2f %11.2f %8.2f", c->t.median * 1e6, c->t.min * 1e6,
                  c->t.max * 1e6, c->gbps);
    if (have_roof) {
        if (c->pct_roof >= 0.0)
            (void)fprintf(f, " %5.1f%s", c->pct_roof, suspect ? mark : " ");
        else
            (void)fprintf(f, " %6s", "-");
    }
    if (have_ratio) {
        /* host: the same-round ratio; device: against the opening probe */
        double r = c->round_ratio >= 0.0 ? c->round_ratio : c->shape_ratio;
        if (r >= 0.0)
            (void)fprintf(f, " %5.3f%s %-8s", r, suspect ? mark : " ",
                          rmsi_bench_probe_name(c->round_probe));
        else
            (void)fprintf(f, " %6s %-8s", "-", "");
    }
    if (have_cfg) {
        if (c->cfg_ratio > 0.0)
            (void)fprintf(f, " %-42s %-42s %6.3f", c->cfg_heur, c->cfg_best, c->cfg_ratio);
        else
            (void)fprintf(f, " %-42s %-42s %6s", c->cfg_heur[0] ? c->cfg_heur : "-", "-", "-");
    }
    (void)fprintf(f, "  ok %.2f\n", c->worst);
}

void rmsi_bench_report_footer(FILE *f, const rmsi_bench_roofline *rf, int fails)
{
    if (rf->available && rf->closed) {
        rmsi_bench_report_roofline(f, "closing", &rf->close);
        if (isfinite(rf->drift))
            (void)fprintf(f, "roofline drift over the sweep: %+.1f%% (limit +-%.0f%%)\n",
                          100.0 * rf->drift, 100.0 * RMSI_BENCH_DRIFT_LIMIT);
        if (rf->suspect)
            (void)fprintf(f,
                          "!!! WARNING: the roofline drifted by more than %.0f%% during the run: "
                          "every %%roof and ratio above is SUSPECT (marked ?). Rerun on a quieter "
                          "machine.\n",
                          100.0 * RMSI_BENCH_DRIFT_LIMIT);
    }
    if (fails > 0)
        (void)fprintf(f, "!!! %d cell(s) FAILED validation against ref or returned an error: no "
                         "number reported for them\n",
                      fails);
}

/* CSV ------------------------------------------------------------------- */

static void csv_text(FILE *f, const char *s)
{
    (void)fputc('"', f);
    for (; *s; s++) {
        if (*s == '"')
            (void)fputc('"', f);
        if (*s == '\n' || *s == '\r')
            continue;
        (void)fputc(*s, f);
    }
    (void)fputc('"', f);
}

static void csv_num(FILE *f, double v, int present)
{
    if (present && isfinite(v))
        (void)fprintf(f, ",%.6g", v);
    else
        (void)fputs(",", f);
}

static const char *csv_columns =
    "backend,op,dtype,fp8,rows,cols,main_read_bytes,main_written_bytes,aux_read_bytes,"
    "aux_written_bytes,clones,calls_per_sample,samples,median_s,min_s,max_s,gbps,pct_roofline,"
    "round_probe,round_probe_gbps,round_ratio,shape_ratio,suspect,verdict,worst_err_over_bound,"
    "cfg_heuristic,cfg_best,cfg_gain,note";

static void csv_comment(FILE *f, const char *key, const char *value)
{
    (void)fprintf(f, "# %s: ", key);
    for (; *value; value++)
        (void)fputc(*value == '\n' ? ' ' : *value, f);
    (void)fputc('\n', f);
}

int rmsi_bench_write_csv(FILE *f, const rmsi_bench_env *env, const rmsi_bench_opts *o,
                         const rmsi_bench_roofline *rf, const rmsi_bench_cell *cells, int n)
{
    char buf[64];
    csv_comment(f, "tool", "rmsnorm-bench");
    csv_comment(f, "backend", env->backend);
    csv_comment(f, "device", env->device);
    csv_comment(f, "compiler", env->compiler);
    csv_comment(f, "commit", env->commit);
    csv_comment(f, "date", env->date);
    csv_comment(f, "host", env->host);
    (void)snprintf(buf, sizeof buf, "%d", env->threads);
    csv_comment(f, "threads", buf);
    csv_comment(f, "grid", o->grid);
    csv_comment(f, "weight", rmsi_bench_weight_name(o->weight));
    for (int i = 0; i < RMSI_BENCH_OP_COUNT; i++) {
        if (o->ops & (1u << i)) {
            char key[48];
            (void)snprintf(key, sizeof key, "bytes %s", rmsi_bench_op_info((rmsi_bench_op)i)->name);
            csv_comment(f, key, rmsi_bench_op_info((rmsi_bench_op)i)->model);
        }
    }
    if (rf->available) {
        for (int w = 0; w < 2; w++) {
            const rmsi_bench_probe_set *s = w ? &rf->close : &rf->open;
            if (w && !rf->closed)
                break;
            for (int k = 0; k < RMSI_BENCH_PROBE_KINDS; k++) {
                char key[48];
                (void)snprintf(key, sizeof key, "probe %s %s GB/s", w ? "close" : "open",
                               rmsi_bench_probe_name((rmsnorm_probe)k));
                (void)snprintf(buf, sizeof buf, "%.3f", s->gbps[k]);
                csv_comment(f, key, buf);
            }
        }
        (void)snprintf(buf, sizeof buf, "%.3f", rf->open.best);
        csv_comment(f, "roofline GB/s", buf);
        (void)snprintf(buf, sizeof buf, "%.4f", rf->drift);
        csv_comment(f, "roofline drift", buf);
        csv_comment(f, "suspect", rf->suspect ? "yes" : "no");
    } else {
        csv_comment(f, "roofline", "not available");
    }
    (void)fprintf(f, "%s\n", csv_columns);
    for (int i = 0; i < n; i++) {
        const rmsi_bench_cell *c = &cells[i];
        int ok = c->verdict == RMSI_BENCH_OK;
        (void)fprintf(f, "%s,%s,%s,%s,%lld,%lld,%llu,%llu,%llu,%llu,%d,%d,%d", env->backend,
                      rmsi_bench_op_info(c->op)->name, rmsi_bench_dtype_name(c->dtype),
                      rmsi_bench_dtype_name(o->fp8), (long long)c->rows, (long long)c->cols,
                      (unsigned long long)c->bytes.main_read,
                      (unsigned long long)c->bytes.main_written,
                      (unsigned long long)c->bytes.aux_read,
                      (unsigned long long)c->bytes.aux_written, c->clones, c->calls_per_sample,
                      ok ? c->t.n : 0);
        csv_num(f, c->t.median, ok);
        csv_num(f, c->t.min, ok);
        csv_num(f, c->t.max, ok);
        csv_num(f, c->gbps, ok);
        csv_num(f, c->pct_roof, ok && c->pct_roof >= 0.0);
        (void)fprintf(f, ",%s", ok ? rmsi_bench_probe_name(c->round_probe) : "");
        csv_num(f, c->round_probe_gbps.median, ok && c->round_ratio >= 0.0);
        csv_num(f, c->round_ratio, ok && c->round_ratio >= 0.0);
        csv_num(f, c->shape_ratio, ok && c->shape_ratio >= 0.0);
        (void)fprintf(f, ",%d,%s", rf->suspect, verdict_name(c->verdict));
        csv_num(f, c->worst, c->verdict == RMSI_BENCH_OK || c->verdict == RMSI_BENCH_FAIL);
        (void)fputc(',', f);
        csv_text(f, c->cfg_heur);
        (void)fputc(',', f);
        csv_text(f, c->cfg_best);
        csv_num(f, c->cfg_ratio, c->cfg_ratio > 0.0);
        (void)fputc(',', f);
        csv_text(f, c->note);
        (void)fputc('\n', f);
    }
    return ferror(f) ? -1 : 0;
}

/* JSON ------------------------------------------------------------------ */

void rmsi_bench_json_string(FILE *f, const char *s)
{
    (void)fputc('"', f);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '"' || *p == '\\')
            (void)fprintf(f, "\\%c", *p);
        else if (*p < 0x20)
            (void)fprintf(f, "\\u%04x", *p);
        else
            (void)fputc(*p, f);
    }
    (void)fputc('"', f);
}

static void json_num(FILE *f, const char *key, double v, int present)
{
    (void)fprintf(f, "\"%s\": ", key);
    if (present && isfinite(v))
        (void)fprintf(f, "%.6g", v);
    else
        (void)fputs("null", f);
}

static void json_kv(FILE *f, const char *key, const char *value)
{
    (void)fprintf(f, "\"%s\": ", key);
    rmsi_bench_json_string(f, value);
}

static void json_probes(FILE *f, const rmsi_bench_probe_set *s)
{
    (void)fputs("{", f);
    for (int k = 0; k < RMSI_BENCH_PROBE_KINDS; k++) {
        json_num(f, rmsi_bench_probe_name((rmsnorm_probe)k), s->gbps[k], s->gbps[k] > 0.0);
        (void)fputs(", ", f);
    }
    json_num(f, "best", s->best, s->best > 0.0);
    (void)fputs(", ", f);
    json_kv(f, "best_kind", rmsi_bench_probe_name(s->best_kind));
    (void)fputs("}", f);
}

static void json_cell(FILE *f, const rmsi_bench_cell *c, int suspect)
{
    int ok = c->verdict == RMSI_BENCH_OK;
    int rounds = ok && c->round_ratio >= 0.0;
    (void)fputs("    {", f);
    json_kv(f, "op", rmsi_bench_op_info(c->op)->name);
    (void)fputs(", ", f);
    json_kv(f, "dtype", rmsi_bench_dtype_name(c->dtype));
    (void)fprintf(f, ", \"rows\": %lld, \"cols\": %lld", (long long)c->rows, (long long)c->cols);
    (void)fprintf(f,
                  ", \"bytes\": {\"main_read\": %llu, \"main_written\": %llu, \"aux_read\": %llu, "
                  "\"aux_written\": %llu}",
                  (unsigned long long)c->bytes.main_read, (unsigned long long)c->bytes.main_written,
                  (unsigned long long)c->bytes.aux_read, (unsigned long long)c->bytes.aux_written);
    (void)fprintf(f, ", \"clones\": %d, \"calls_per_sample\": %d, \"samples\": %d", c->clones,
                  c->calls_per_sample, ok ? c->t.n : 0);
    (void)fputs(", ", f);
    json_num(f, "median_s", c->t.median, ok);
    (void)fputs(", ", f);
    json_num(f, "min_s", c->t.min, ok);
    (void)fputs(", ", f);
    json_num(f, "max_s", c->t.max, ok);
    (void)fputs(", ", f);
    json_num(f, "gbps", c->gbps, ok);
    (void)fputs(", ", f);
    json_num(f, "pct_roofline", c->pct_roof, ok && c->pct_roof >= 0.0);
    (void)fputs(", ", f);
    json_kv(f, "round_probe", ok ? rmsi_bench_probe_name(c->round_probe) : "");
    (void)fputs(", ", f);
    json_num(f, "round_probe_gbps", c->round_probe_gbps.median, rounds);
    (void)fputs(", ", f);
    json_num(f, "round_ratio", c->round_ratio, rounds);
    (void)fputs(", ", f);
    json_num(f, "shape_ratio", c->shape_ratio, ok && c->shape_ratio >= 0.0);
    (void)fprintf(f, ", \"suspect\": %s, ", suspect ? "true" : "false");
    json_kv(f, "verdict", verdict_name(c->verdict));
    (void)fputs(", ", f);
    json_num(f, "worst_err_over_bound", c->worst,
             c->verdict == RMSI_BENCH_OK || c->verdict == RMSI_BENCH_FAIL);
    (void)fputs(", ", f);
    json_kv(f, "cfg_heuristic", c->cfg_heur);
    (void)fputs(", ", f);
    json_kv(f, "cfg_best", c->cfg_best);
    (void)fputs(", ", f);
    json_num(f, "cfg_gain", c->cfg_ratio, c->cfg_ratio > 0.0);
    (void)fputs(", ", f);
    json_num(f, "cfg_searched", (double)c->cfg_searched, c->cfg_ratio > 0.0);
    (void)fputs(", ", f);
    json_kv(f, "note", c->note);
    (void)fputs("}", f);
}

int rmsi_bench_write_json(FILE *f, const rmsi_bench_env *env, const rmsi_bench_opts *o,
                          const rmsi_bench_roofline *rf, const rmsi_bench_cell *cells, int n)
{
    (void)fputs("{\n  \"tool\": \"rmsnorm-bench\", \"schema\": 1,\n  \"env\": {", f);
    json_kv(f, "backend", env->backend);
    (void)fputs(", ", f);
    json_kv(f, "device", env->device);
    (void)fputs(", ", f);
    json_kv(f, "compiler", env->compiler);
    (void)fputs(", ", f);
    json_kv(f, "commit", env->commit);
    (void)fputs(", ", f);
    json_kv(f, "date", env->date);
    (void)fputs(", ", f);
    json_kv(f, "host", env->host);
    (void)fprintf(f, ", \"threads\": %d, \"llc_bytes\": %zu, \"is_device\": %s},\n", env->threads,
                  env->llc, env->is_device ? "true" : "false");
    (void)fputs("  \"options\": {", f);
    json_kv(f, "grid", o->grid);
    (void)fputs(", ", f);
    json_kv(f, "fp8", rmsi_bench_dtype_name(o->fp8));
    (void)fputs(", ", f);
    json_kv(f, "weight", rmsi_bench_weight_name(o->weight));
    (void)fprintf(f,
                  ", \"reps\": %d, \"quant_y\": %s, \"graph\": %s, \"interleave\": %s, "
                  "\"working_set_bytes\": %zu, \"round_probe_bytes\": %zu, \"sample_s\": %g, \"hot\": %s},\n",
                  o->reps, o->quant_y ? "true" : "false", o->graph ? "true" : "false",
                  o->interleave ? "true" : "false", o->working_set, o->round_probe_bytes,
                  o->sample_s, o->hot ? "true" : "false");
    (void)fputs("  \"byte_models\": {", f);
    int first = 1;
    for (int i = 0; i < RMSI_BENCH_OP_COUNT; i++) {
        if (o->ops & (1u << i)) {
            const rmsi_bench_opinfo *oi = rmsi_bench_op_info((rmsi_bench_op)i);
            (void)fputs(first ? "" : ", ", f);
            json_kv(f, oi->name, oi->model);
            first = 0;
        }
    }
    (void)fputs("},\n  \"roofline\": ", f);
    if (!rf->available) {
        (void)fputs("{\"available\": false}", f);
    } else {
        (void)fprintf(f, "{\"available\": true, \"tries\": %d, \"bytes_per_buffer\": %zu, \"open\": ",
                      rf->tries, rf->bytes);
        json_probes(f, &rf->open);
        if (rf->closed) {
            (void)fputs(", \"close\": ", f);
            json_probes(f, &rf->close);
        }
        (void)fputs(", ", f);
        json_num(f, "drift", rf->drift, rf->closed);
        (void)fprintf(f, ", \"suspect\": %s}", rf->suspect ? "true" : "false");
    }
    (void)fputs(",\n  \"cells\": [\n", f);
    for (int i = 0; i < n; i++) {
        json_cell(f, &cells[i], rf->suspect);
        (void)fputs(i + 1 < n ? ",\n" : "\n", f);
    }
    (void)fputs("  ]\n}\n", f);
    return ferror(f) ? -1 : 0;
}
