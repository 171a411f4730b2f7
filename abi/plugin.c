/*
 * The GPU plugin loader. A plugin is librmsnorm_<name>.so exporting
 * rmsnorm_plugin_init (abi/rmsnorm_backend.h). Loading never aborts: a missing
 * file, a missing symbol, another ABI major or a host without a device all mean
 * "backend absent", logged under RMSNORM_DEBUG.
 */
#define _GNU_SOURCE /* dladdr */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dispatch.h"

#define PATH_BYTES 4096

/* Tries one directory; returns the table or NULL. */
static const rmsnorm_backend *try_dir(const char *dir, size_t dir_len, const char *name)
{
    char path[PATH_BYTES];
    int n = snprintf(path, sizeof path, "%.*s%slibrmsnorm_%s.so", (int)dir_len, dir,
                     dir_len > 0 ? "/" : "", name);
    if (n < 0 || (size_t)n >= sizeof path)
        return NULL;
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (h == NULL) {
        rmsi_log("plugin %s not loaded: %s", path, dlerror());
        return NULL;
    }
    rmsnorm_plugin_init_fn init;
    void *sym = dlsym(h, RMSNORM_PLUGIN_ENTRY);
    /* POSIX sanctions this conversion of dlsym's result; memcpy avoids the
     * object-to-function pointer cast that ISO C leaves undefined. */
    memcpy(&init, &sym, sizeof init);
    const rmsnorm_backend *table = NULL;
    rmsnorm_status st = RMSNORM_ERR_BACKEND_UNAVAILABLE;
    if (sym != NULL)
        st = init(RMSNORM_BACKEND_ABI_MAJOR, &table);
    if (st != RMSNORM_OK || !rmsi_table_usable(table) || strcmp(table->name, name) != 0) {
        rmsi_log("plugin %s refused: %s", path,
                    sym == NULL ? "no " RMSNORM_PLUGIN_ENTRY
                                : st != RMSNORM_OK ? rmsnorm_status_string(st) : "bad table");
        (void)dlclose(h);
        return NULL;
    }
    rmsi_log("plugin %s loaded", path);
    return table; /* the handle stays open for the life of the process */
}

static const rmsnorm_backend *try_path_list(const char *list, const char *name)
{
    for (const char *p = list; p != NULL && *p != '\0';) {
        const char *end = strchr(p, ':');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        if (len > 0) {
            const rmsnorm_backend *be = try_dir(p, len, name);
            if (be != NULL)
                return be;
        }
        p = end ? end + 1 : NULL;
    }
    return NULL;
}

const rmsnorm_backend *rmsi_plugin_load(const char *name)
{
    const rmsnorm_backend *be = try_path_list(getenv("RMSNORM_PLUGIN_PATH"), name);
    if (be != NULL)
        return be;

    /* The directory of the object holding the core (librmsnorm.so.1, or the
     * executable when linked statically), then its rmsnorm/ subfolder, which is
     * where `ninja install` puts plugins (lib/rmsnorm/). */
    Dl_info info;
    void *self = (void *)(uintptr_t)&rmsi_plugin_load;
    if (dladdr(self, &info) == 0 || info.dli_fname == NULL)
        return NULL;
    const char *slash = strrchr(info.dli_fname, '/');
    size_t dir_len = slash ? (size_t)(slash - info.dli_fname) : 0;
    const char *dir = slash ? info.dli_fname : ".";
    if (slash == NULL)
        dir_len = 1;
    if ((be = try_dir(dir, dir_len, name)) != NULL)
        return be;
    char sub[PATH_BYTES];
    int n = snprintf(sub, sizeof sub, "%.*s/rmsnorm", (int)dir_len, dir);
    if (n < 0 || (size_t)n >= sizeof sub)
        return NULL;
    return try_dir(sub, (size_t)n, name);
}
