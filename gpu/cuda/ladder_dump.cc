/*
 * ladder-dump: the ladder's forward and backward config for every shape of a
 * fixed grid on an H200 (132 SMs), one line a shape, so that two commits'
 * ladders can be compared without a GPU (tools/ladder_diff.sh). The grid:
 * 16-bit (bf16 and fp16) and fp32 rows; forward with every quant mode, with
 * and without a residual (h stored or not) and y (optional with fp8 output
 * only); backward (kind "bwd...", q0 h0 y0) with and without a residual
 * gradient; 24 row counts (the rules' bounds at 132 SMs and their
 * neighbours), every multiple of 128 columns to 32768. Row counts given as
 * arguments replace the 24, for a look at shapes the grid leaves out
 * (ladder-dump 400 528). The H200's HBM bandwidth is the shape's default
 * (hbm_sm 0), so the backward lines are its rules; --hbm-sm=N gives every
 * shape N GB/s of HBM an SM instead (25: the H100 SXM's rules).
 */
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "gpu/common/config_text.h"
#include "gpu/cuda/ladder.h"
/* this tree's, beside this file, also where ladder_diff.sh builds against
 * an older commit's ladder */
#include "h200_shape.h"

/* One line: kind (prefix, dtype) q res h y RxC config; 1 if the config text
 * does not fit. */
static int print_config(const rmsi_shape *s, const char *prefix)
{
    rmsi_config c;
    char text[RMSI_CONFIG_TEXT];
    rmsi_ladder(s, &c);
    if (rmsi_config_format(&c, text, sizeof text) != 0)
        return 1;
    std::printf("%s%s q%d res%d h%d y%d %lldx%lld %s\n", prefix, s->esz == 4 ? "f32" : (s->f16 ? "f16" : "bf16"),
                s->quant, s->res, s->hout, s->yout, (long long)s->rows, (long long)s->cols, text);
    return 0;
}

int main(int argc, char **argv)
{
    static const long long grid[] = {1,    2,    8,    32,   64,   128,  132,  256,   264,   512,   1024,  1056,
                                     2048, 2111, 2112, 4091, 4092, 4096, 8183, 8184, 8192, 16384, 32768, 65536};
    std::vector<long long> rows;
    int hbm_sm = 0;
    for (int i = 1; i < argc; i++) {
        char *end;
        if (std::strncmp(argv[i], "--hbm-sm=", 9) == 0) {
            const long h = std::strtol(argv[i] + 9, &end, 10);
            if (*end != '\0' || end == argv[i] + 9 || h < 0 || h > 1000) {
                std::fprintf(stderr, "ladder-dump: not a bandwidth in GB/s an SM: %s\n", argv[i]);
                return 2;
            }
            hbm_sm = (int)h;
            continue;
        }
        const long long r = std::strtoll(argv[i], &end, 10);
        if (*end != '\0' || r < 1) {
            std::fprintf(stderr, "ladder-dump: not a row count: %s\n", argv[i]);
            return 2;
        }
        rows.push_back(r);
    }
    if (rows.empty())
        rows.assign(grid, grid + sizeof grid / sizeof grid[0]);
    long n = 0;
    for (int esz = 2; esz <= 4; esz += 2)
        for (int f16 = 0; f16 <= (esz == 2); f16++)
            for (int q = RMSI_Q_NONE; q <= RMSI_Q_BLOCK; q++)
                for (int res = 0; res <= 1; res++)
                    for (int hout = 0; hout <= res; hout++)
                        for (int yout = q == RMSI_Q_NONE; yout <= 1; yout++)
                            for (long long r : rows)
                                for (long long cols = 128; cols <= 32768; cols += 128) {
                                    rmsi_shape s = h200_shape(RMSI_OP_FWD, r, cols, esz, q, res);
                                    s.f16 = f16;
                                    s.hout = hout;
                                    s.yout = yout;
                                    s.hbm_sm = hbm_sm;
                                    if (print_config(&s, "") != 0)
                                        return 1;
                                    n++;
                                }
    for (int esz = 2; esz <= 4; esz += 2)
        for (int f16 = 0; f16 <= (esz == 2); f16++)
            for (int res = 0; res <= 1; res++)
                for (long long r : rows)
                    for (long long cols = 128; cols <= 32768; cols += 128) {
                        rmsi_shape s = h200_shape(RMSI_OP_BWD, r, cols, esz, RMSI_Q_NONE, res);
                        s.f16 = f16;
                        s.hout = 0;
                        s.yout = 0;
                        s.hbm_sm = hbm_sm;
                        if (print_config(&s, "bwd") != 0)
                            return 1;
                        n++;
                    }
    std::fprintf(stderr, "ladder-dump: %ld shapes\n", n);
    return 0;
}
