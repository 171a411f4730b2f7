/*
 * Backend discovery: runs once (pthread_once), fills a fixed table of present
 * backends and publishes the "auto" choice. Until then nothing is picked; every
 * public discovery call goes through rmsi_backends_init().
 *
 * Knobs (docs/abi.md): RMSNORM_BACKEND pins "auto", RMSNORM_DISABLE=a,b and
 * RMSNORM_DISABLE_AVX512=1 hide backends, RMSNORM_DEBUG=1 logs the choice.
 */
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dispatch.h"

#define MAX_BACKENDS 8

static const rmsnorm_backend *present[MAX_BACKENDS];
static int present_count;
static const rmsnorm_backend *auto_pick;
static pthread_once_t once = PTHREAD_ONCE_INIT;

int rmsi_debug_enabled(void)
{
    const char *v = getenv("RMSNORM_DEBUG");
    return v != NULL && v[0] != '\0' && strcmp(v, "0") != 0;
}

void rmsi_log(const char *fmt, ...)
{
    if (!rmsi_debug_enabled())
        return;
    va_list ap;
    va_start(ap, fmt);
    (void)fputs("rmsnorm: ", stderr);
    (void)vfprintf(stderr, fmt, ap);
    (void)fputc('\n', stderr);
    va_end(ap);
}

/* Is `name` listed in the comma-separated RMSNORM_DISABLE? */
static int disabled_by_env(const char *name)
{
    if (strcmp(name, "avx512") == 0) {
        const char *v = getenv("RMSNORM_DISABLE_AVX512");
        if (v != NULL && v[0] != '\0' && strcmp(v, "0") != 0)
            return 1;
    }
    const char *list = getenv("RMSNORM_DISABLE");
    if (list == NULL)
        return 0;
    size_t n = strlen(name);
    for (const char *p = list; *p != '\0';) {
        const char *end = strchr(p, ',');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        if (len == n && strncmp(p, name, n) == 0)
            return 1;
        if (end == NULL)
            break;
        p = end + 1;
    }
    return 0;
}

/* A table is usable if it speaks our major version, covers the required slots
 * and fills them. Optional slots are read through RMSI_SLOT. */
int rmsi_table_usable(const rmsnorm_backend *be)
{
    return be != NULL && be->abi_major == RMSNORM_BACKEND_ABI_MAJOR &&
           be->struct_size >= RMSI_REQUIRED_TABLE_SIZE && be->name != NULL && be->forward != NULL &&
           be->backward != NULL && be->backward_workspace_size != NULL && be->mem_alloc != NULL &&
           be->mem_free != NULL && be->mem_copy != NULL && be->synchronize != NULL;
}

static void add(const rmsnorm_backend *be)
{
    if (be == NULL || be->name == NULL)
        return;
    const char *name = be->name;
    if (disabled_by_env(name)) {
        rmsi_log("backend %s hidden by the environment", name);
        return;
    }
    if (!rmsi_table_usable(be)) {
        rmsi_log("backend %s refused: table ABI %u (core %u) or missing slots",
                    name, be->abi_major, RMSNORM_BACKEND_ABI_MAJOR);
        return;
    }
    if (present_count >= MAX_BACKENDS)
        return;
    present[present_count++] = be;
    rmsi_log("backend %s present (priority %d, %s)", be->name, be->priority,
                be->is_device ? "device" : "host");
    /* which machine a log came from, and any test override of a device's
     * ladder (docs/gpu.md): a fuzz log says what it ran on */
    rmsnorm_status (*describe)(char *, size_t) = RMSI_SLOT(be, describe);
    char what[512];
    if (rmsi_debug_enabled() && describe != NULL && describe(what, sizeof what) == RMSNORM_OK)
        rmsi_log("backend %s: %s", be->name, what);
}

static void init_once(void)
{
    add(rmsi_ref_backend());
    const rmsnorm_backend *avx = rmsi_avx512_backend();
    if (avx == NULL)
        rmsi_log("backend avx512 absent: CPU or OS lacks AVX-512 state");
    add(avx);
    add(rmsi_plugin_load("cuda"));
    add(rmsi_plugin_load("hip"));

    for (int i = 0; i < present_count; i++)
        if (present[i] != NULL && (auto_pick == NULL || present[i]->priority > auto_pick->priority))
            auto_pick = present[i];
    const char *pin = getenv("RMSNORM_BACKEND");
    const char *why = "highest priority present";
    if (pin != NULL && pin[0] != '\0' && strcmp(pin, "auto") != 0) {
        const rmsnorm_backend *p = NULL;
        for (int i = 0; i < present_count; i++)
            if (present[i] != NULL && strcmp(present[i]->name, pin) == 0)
                p = present[i];
        if (p != NULL) {
            auto_pick = p;
            why = "pinned by RMSNORM_BACKEND";
        } else {
            why = "RMSNORM_BACKEND names an absent backend; using the highest priority";
        }
    }
    if (auto_pick != NULL)
        rmsi_log("auto = %s (%s)", auto_pick->name, why);
}

void rmsi_backends_init(void)
{
    (void)pthread_once(&once, init_once);
}

int rmsnorm_backend_count(void)
{
    rmsi_backends_init();
    return present_count;
}

const rmsnorm_backend *rmsnorm_backend_at(int index)
{
    rmsi_backends_init();
    if (index < 0 || index >= present_count)
        return NULL;
    return present[index];
}

const rmsnorm_backend *rmsnorm_backend_find(const char *name)
{
    rmsi_backends_init();
    if (name == NULL)
        return NULL;
    if (strcmp(name, "auto") == 0)
        return auto_pick;
    for (int i = 0; i < present_count; i++)
        if (strcmp(present[i]->name, name) == 0)
            return present[i];
    return NULL;
}
