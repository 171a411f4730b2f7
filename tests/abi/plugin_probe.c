/*
 * Loads the core (librmsnorm.so.1) and reports whether the stand-in plugin of
 * tests/abi/fake_plugin.c was accepted as the "cuda" backend.
 * usage: plugin_probe accepted|refused
 */
#include <stdio.h>
#include <string.h>

#include "rmsnorm.h"

#define FAKE_CAPS 0x00FA4E00u

int main(int argc, char **argv)
{
    if (argc != 2) {
        (void)fprintf(stderr, "usage: %s accepted|refused\n", argv[0]);
        return 2;
    }
    const rmsnorm_backend *be = rmsnorm_backend_find("cuda");
    int fake = be != NULL && rmsnorm_backend_caps(be) == FAKE_CAPS;
    int want = strcmp(argv[1], "accepted") == 0;
    if (fake && !rmsnorm_backend_is_device(be)) {
        (void)printf("the stand-in plugin lost its is_device flag\n");
        return 1;
    }
    /* "auto" must never be the stand-in: its priority is below every real backend. */
    const rmsnorm_backend *pick = rmsnorm_backend_find("auto");
    if (pick != NULL && rmsnorm_backend_caps(pick) == FAKE_CAPS) {
        (void)printf("auto picked the stand-in plugin\n");
        return 1;
    }
    (void)printf("stand-in plugin %s (wanted %s)\n", fake ? "accepted" : "refused", argv[1]);
    return fake == want ? 0 : 1;
}
