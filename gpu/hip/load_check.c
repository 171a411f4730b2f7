/*
 * hip-check's runtime smoke test on a machine without an AMD GPU: dlopen the
 * plugin linked against the real libamdhip64 (Debian's HIP 5.2), which runs
 * the fat-binary registration of the gfx942/gfx950 code objects in its
 * constructor, then call the entry point. Expected: RMSNORM_ERR_BACKEND_UNAVAILABLE
 * without a device (or RMSNORM_OK and the "hip" table on a ROCm machine), no
 * crash, no abort, and another ABI major refused with RMSNORM_ERR_UNSUPPORTED.
 * Usage: load_check PATH/librmsnorm_hip.so
 */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include "rmsnorm_backend.h"

int main(int argc, char **argv)
{
    const struct rmsnorm_backend *t = NULL;
    rmsnorm_plugin_init_fn init;
    rmsnorm_status st, other;
    if (argc != 2) {
        (void)fprintf(stderr, "usage: %s librmsnorm_hip.so\n", argv[0]);
        return 2;
    }
    void *h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    if (h == NULL) {
        printf("FAIL dlopen: %s\n", dlerror());
        return 1;
    }
    void *sym = dlsym(h, RMSNORM_PLUGIN_ENTRY);
    if (sym == NULL) {
        printf("FAIL no %s\n", RMSNORM_PLUGIN_ENTRY);
        return 1;
    }
    memcpy(&init, &sym, sizeof init); /* POSIX: dlsym's result is the function */
    other = init(RMSNORM_BACKEND_ABI_MAJOR + 1u, &t);
    if (other != RMSNORM_ERR_UNSUPPORTED || t != NULL) {
        printf("FAIL another ABI major gave status %d\n", (int)other);
        return 1;
    }
    st = init(RMSNORM_BACKEND_ABI_MAJOR, &t);
    if (st == RMSNORM_ERR_BACKEND_UNAVAILABLE && t == NULL) {
        printf("ok: no usable AMD device here; the plugin reports the backend unavailable\n");
        return 0;
    }
    if (st == RMSNORM_OK && t != NULL && strcmp(t->name, "hip") == 0 &&
        t->struct_size == sizeof(struct rmsnorm_backend)) {
        char buf[256];
        if (t->describe(buf, sizeof buf) == RMSNORM_OK)
            printf("ok: device present: %s\n", buf);
        return 0;
    }
    printf("FAIL init status %d, table %p\n", (int)st, (const void *)t);
    return 1;
}
