/*
 * The environment a result belongs to: without the device, compiler, commit
 * and date a number cannot be compared with a later one.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <omp.h>

#include "bench/bench.h"

/* bench.ninja passes the commit the binary was built from (git describe
 * --always --dirty); lint and other builds see "unknown". */
#ifndef RMSI_BENCH_COMMIT
#define RMSI_BENCH_COMMIT "unknown"
#endif

static void copy_str(char *dst, size_t n, const char *src)
{
    size_t k = strlen(src);
    if (k >= n)
        k = n - 1;
    memcpy(dst, src, k);
    dst[k] = '\0';
}

/* Last-level cache size from sysfs (index3, else index2), 32 MiB if unknown:
 * sizing the clone rotation too large only costs memory, too small makes small
 * shapes serve from cache. */
size_t rmsi_bench_llc_bytes(void)
{
    static const char *paths[] = { "/sys/devices/system/cpu/cpu0/cache/index3/size",
                                   "/sys/devices/system/cpu/cpu0/cache/index2/size" };
    for (size_t i = 0; i < sizeof paths / sizeof paths[0]; i++) {
        FILE *f = fopen(paths[i], "r");
        char buf[32];
        char *end = NULL;
        if (f == NULL)
            continue;
        char *line = fgets(buf, sizeof buf, f);
        (void)fclose(f);
        if (line == NULL)
            continue;
        unsigned long long v = strtoull(buf, &end, 10);
        if (end == buf || v == 0)
            continue;
        if (*end == 'K')
            v *= 1024ull;
        else if (*end == 'M')
            v *= 1024ull * 1024ull;
        return (size_t)v;
    }
    return (size_t)32 << 20;
}

void rmsi_bench_env_collect(const rmsnorm_backend *be, rmsi_bench_env *env)
{
    rmsnorm_status (*describe)(char *, size_t) = RMSI_BENCH_HOOK(be, describe);
    memset(env, 0, sizeof *env);
    copy_str(env->backend, sizeof env->backend, rmsnorm_backend_name(be));
    if (describe == NULL || describe(env->device, sizeof env->device) != RMSNORM_OK)
        copy_str(env->device, sizeof env->device, "unknown (backend has no describe hook)");
#if defined(__clang__)
    copy_str(env->compiler, sizeof env->compiler, "clang " __clang_version__);
#elif defined(__GNUC__)
    copy_str(env->compiler, sizeof env->compiler, "gcc " __VERSION__);
#else
    copy_str(env->compiler, sizeof env->compiler, "unknown C11 compiler");
#endif
    copy_str(env->commit, sizeof env->commit, RMSI_BENCH_COMMIT);
    time_t now = time(NULL);
    struct tm tm;
    if (now == (time_t)-1 || gmtime_r(&now, &tm) == NULL ||
        strftime(env->date, sizeof env->date, "%Y-%m-%dT%H:%M:%SZ", &tm) == 0)
        copy_str(env->date, sizeof env->date, "unknown");
    if (gethostname(env->host, sizeof env->host - 1) != 0)
        copy_str(env->host, sizeof env->host, "unknown");
    env->threads = omp_get_max_threads();
    env->llc = rmsi_bench_llc_bytes();
    env->is_device = rmsnorm_backend_is_device(be);
    env->has_time_region = RMSI_BENCH_HOOK(be, time_region) != NULL;
}
