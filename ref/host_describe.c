/*
 * CPU description for benchmark reports: the model name the kernel reports
 * and the OpenMP thread count the ops will use.
 */
#include <omp.h>
#include <stdio.h>
#include <string.h>

#include "internal.h"

/* Copies the value of the first "model name" line of /proc/cpuinfo into
 * name; leaves it unchanged when there is none (not Linux, or not x86). */
static void cpu_model(char *name, size_t n)
{
    char line[512];
    FILE *f = fopen("/proc/cpuinfo", "r");

    if (f == NULL)
        return;
    while (fgets(line, (int)sizeof line, f) != NULL) {
        const char *colon;
        size_t len;
        if (strncmp(line, "model name", 10) != 0)
            continue;
        colon = strchr(line, ':');
        if (colon == NULL)
            continue;
        colon++;
        while (*colon == ' ' || *colon == '\t')
            colon++;
        len = strcspn(colon, "\n");
        if (len >= n)
            len = n - 1u;
        memcpy(name, colon, len);
        name[len] = '\0';
        break;
    }
    (void)fclose(f); /* read-only stream: nothing to lose on a failed close */
}

rmsnorm_status rmsi_host_describe(char *buf, size_t n)
{
    char model[256] = "unknown CPU";
    int w;

    if (buf == NULL)
        return RMSNORM_ERR_NULL_POINTER;
    if (n == 0u)
        return RMSNORM_ERR_BAD_ARGUMENT;
    cpu_model(model, sizeof model);
    w = snprintf(buf, n, "%s, %d OpenMP threads", model, omp_get_max_threads());
    if (w < 0) {
        buf[0] = '\0';
        return RMSNORM_ERR_DEVICE;
    }
    return RMSNORM_OK; /* a truncated description is still a description */
}
