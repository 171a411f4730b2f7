/*
 * The avx512 backend with and without AVX512-BF16 must give the same bits
 * (docs/perf/cpu.md: VCVTNEPS2BF16 and VDPBF16PS are used only where they
 * round as the integer and FMA paths do). The library reads
 * RMSNORM_AVX512_BF16 once, so one process sees one path: this program
 * prints a hash of every output of a fixed set of bf16 calls, and
 * tests/tests.ninja runs it with and without RMSNORM_AVX512_BF16=0 and
 * compares the two lines. Inputs include the rows where the instructions
 * flush (squares under 2^-126, bf16 subnormals), NaNs and overflowing sums.
 * Arguments NAME=VALUE go into the environment first.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rmsnorm.h"
#include "tests/rng.h"

static rmst_rng rng = {0x5eed17};

static uint16_t bf16_of(float f)
{
    uint32_t b;
    memcpy(&b, &f, sizeof b);
    return (uint16_t)(b >> 16); /* truncation: any bf16 will do as input */
}

/* Row r of kind k: plain, tiny squares, bf16 subnormals, huge, NaN-sprinkled,
 * zeros with a few tiny values, mixed scales. */
static float value(int kind)
{
    const float f = (float)rmst_rng_sym(&rng);
    switch (kind) {
    case 1: return ldexpf(f, -72 + (int)(rmst_rng_next(&rng) % 16));
    case 2: return ldexpf(f, -127 - (int)(rmst_rng_next(&rng) % 6));
    case 3: return ldexpf(f, 60 + (int)(rmst_rng_next(&rng) % 6));
    case 4: return rmst_rng_next(&rng) % 61u == 0u ? NAN : f;
    case 5: return rmst_rng_next(&rng) % 4u == 0u ? ldexpf(f, -64) : 0.0f;
    case 6: return ldexpf(f, (int)(rmst_rng_next(&rng) % 120) - 60);
    default: return f;
    }
}

static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
    const unsigned char *c = p;
    for (size_t i = 0; i < n; i++)
        h = (h ^ c[i]) * 0x100000001b3ull;
    return h;
}

#define ROWS 70 /* ten of each kind */
#define MAXC 8192
static uint16_t x[ROWS * MAXC], res[ROWS * MAXC], dy[ROWS * MAXC], w[MAXC], y[ROWS * MAXC], ho[ROWS * MAXC],
    dx[ROWS * MAXC];
static float rs[ROWS], dw[MAXC];
static _Alignas(64) unsigned char ws[1 << 20];

static rmsnorm_matrix mat(void *p, int64_t rows, int64_t cols)
{
    rmsnorm_matrix m = {p, RMSNORM_BF16, rows, cols, cols};
    return m;
}

int main(int argc, char **argv)
{
    static const int64_t colss[] = {1, 31, 32, 33, 64, 100, 127, 128, 129, 1000, 1024, 1025, 4096, 5000, MAXC};
    const int64_t rows = ROWS;
    uint64_t h = 0xcbf29ce484222325ull;
    int calls = 0;

    for (int i = 1; i < argc; i++) {
        char *eq = strchr(argv[i], '=');
        if (eq == NULL)
            return 2;
        *eq = '\0';
        if (setenv(argv[i], eq + 1, 1) != 0)
            return 2;
    }
    const rmsnorm_backend *be = rmsnorm_backend_find("avx512");
    if (be == NULL) {
        printf("avx512 absent\n");
        return 0;
    }
    for (size_t s = 0; s < sizeof colss / sizeof colss[0]; s++) {
        const int64_t cols = colss[s];
        const size_t n = (size_t)(rows * cols);
        size_t wsb = 0;
        if (rmsnorm_backward_workspace_size(be, rows, cols, &wsb) != RMSNORM_OK || wsb > sizeof ws)
            return 1;
        for (int64_t r = 0; r < rows; r++) {
            for (int64_t j = 0; j < cols; j++) {
                x[r * cols + j] = bf16_of(value((int)(r % 7)));
                res[r * cols + j] = bf16_of(value(r % 7 == 4 ? 0 : (int)(r % 7)));
                dy[r * cols + j] = bf16_of(value(0));
            }
        }
        for (int64_t j = 0; j < cols; j++)
            w[j] = bf16_of(value(0));
        for (int fused = 0; fused < 2; fused++) {
            rmsnorm_forward_args a;
            memset(&a, 0, sizeof a);
            a.struct_size = sizeof a;
            a.x = mat(x, rows, cols);
            if (fused) {
                a.residual = mat(res, rows, cols);
                a.h_out = mat(ho, rows, cols);
            }
            a.weight = w;
            a.weight_dtype = RMSNORM_BF16;
            a.eps = fused ? 1e-6f : 0.0f;
            a.y = mat(y, rows, cols);
            a.rstd = rs;
            if (rmsnorm_forward(be, &a, NULL) != RMSNORM_OK)
                return 1;
            h = fnv(h, y, n * 2);
            h = fnv(h, rs, (size_t)rows * 4);
            if (fused)
                h = fnv(h, ho, n * 2);
            calls++;
        }
        /* the backward recomputing rstd sums the squares again */
        rmsnorm_backward_args b;
        memset(&b, 0, sizeof b);
        b.struct_size = sizeof b;
        b.dy = mat(dy, rows, cols);
        b.x = mat(x, rows, cols);
        b.weight = w;
        b.weight_dtype = RMSNORM_BF16;
        b.eps = 1e-6f;
        b.dx = mat(dx, rows, cols);
        b.dweight = dw;
        b.workspace = ws;
        b.workspace_bytes = wsb;
        if (rmsnorm_backward(be, &b, NULL) != RMSNORM_OK)
            return 1;
        h = fnv(h, dx, n * 2);
        h = fnv(h, dw, (size_t)cols * 4);
        calls++;
    }
    printf("%d calls, hash %016llx\n", calls, (unsigned long long)h);
    return 0;
}
