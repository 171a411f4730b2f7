/*
 * A failure counter and CHECK for the host tests of the launch ladders
 * (gpu/cuda/test_ladder.cc, gpu/hip/test_ladder.cc): no test framework, so
 * that they build with the bare host compiler next to the plugin. The first
 * 20 failures are printed; main returns rmst_fail != 0.
 */
#ifndef RMSNORM_GPU_HOST_CHECK_H
#define RMSNORM_GPU_HOST_CHECK_H

#include <stdio.h>

static int rmst_fail = 0;

#define CHECK(cond, ...)                                          \
    do {                                                          \
        if (!(cond)) {                                            \
            rmst_fail++;                                          \
            if (rmst_fail <= 20) {                                \
                (void)printf("FAIL %s:%d: ", __FILE__, __LINE__); \
                (void)printf(__VA_ARGS__);                        \
                (void)printf("\n");                               \
            }                                                     \
        }                                                         \
    } while (0)

#endif /* RMSNORM_GPU_HOST_CHECK_H */
