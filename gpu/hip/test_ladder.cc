/*
 * hip-check's host test of the AMD ladder (no GPU, no HIP runtime): over a
 * grid of shapes, dtypes and both CU counts (MI300X 304, MI355X 256), the
 * ladder's own choice must be a config the kernels accept, every enumerated
 * config must be accepted and must round-trip through its text and a pin, and
 * the backward grid times rows per work-group must stay within the partial
 * count workspace_size reserves (a larger one would write past the workspace).
 * Also the AMD keys of the config text (lds=, async=: only 0 accepted).
 */
#include <stdio.h>
#include <string.h>

#include "gpu/common/config_text.h"
#include "gpu/common/host_check.h"
#include "gpu/hip/hip_internal.h"
#include "gpu/hip/ladder.h"

static bool same(const rmsi_config &a, const rmsi_config &b)
{
    return a.path == b.path && a.vec == b.vec && a.tpr == b.tpr && a.rpc == b.rpc && a.nv == b.nv && a.cps == b.cps &&
           a.cl == b.cl && a.lean == b.lean;
}

int main()
{
    static const int64_t rows[] = {1, 2, 31, 32, 256, 1024, 4096, 16384, 32768, 65536};
    static const int64_t cols[] = {1, 7, 64, 128, 512, 1152, 2048, 4096, 5120, 8192, 16384, 32768, 65536, 262144};
    static const int cus[] = {304, 256};
    static const int esz[] = {2, 4};
    long shapes = 0, configs = 0;
    for (int cu : cus)
        for (int e : esz)
            for (int op = 0; op < 2; op++)
                for (int64_t r : rows)
                    for (int64_t c : cols)
                        for (int vok = 0; vok < 2; vok++) {
                            rmsi_hip_shape s = {};
                            s.op = op;
                            s.rows = r;
                            s.cols = c;
                            s.esz = e;
                            s.vec_ok = vok && c % (16 / e) == 0;
                            s.quant = (op == RMSI_HIP_FWD && c % 128 == 0 && r % 2) ? RMSI_Q_BLOCK : RMSI_Q_NONE;
                            s.dev.cus = cu;
                            s.dev.lds_per_cu = cu == 256 ? 160 * 1024 : 64 * 1024;
                            s.dev.gfx = cu == 256 ? 950 : 942;
                            const rmsi_config none = {-1, -1, -1, -1, -1, -1, -1, -1, -1, -1};
                            rmsi_config lad, res;
                            rmsi_hip_ladder(&s, &lad);
                            CHECK(rmsi_hip_valid(&s, &lad), "ladder invalid op %d %lldx%lld esz %d", op,
                                  (long long)r, (long long)c, e);
                            CHECK(rmsi_hip_resolve(&s, &none, &res) == 0 && same(res, lad), "resolve(no pin)");
                            if (op == RMSI_HIP_FWD && s.vec_ok && c / (16 / e) <= 2048)
                                CHECK(lad.path == RMSI_PATH_REG && lad.nv <= (c / (16 / e) > 1024 ? 4 : 2),
                                      "short vector row not in registers");
                            shapes++;
                            for (int i = 0;; i++) {
                                rmsi_config c2, pin, back;
                                char txt[RMSI_CONFIG_TEXT];
                                if (rmsi_hip_config_at(&s, i, &c2) != 0)
                                    break;
                                configs++;
                                CHECK(rmsi_hip_valid(&s, &c2), "enumerated config %d invalid", i);
                                CHECK(rmsi_config_format(&c2, txt, sizeof txt) == 0, "format");
                                CHECK(rmsi_config_parse(txt, &pin) == 0, "parse %s", txt);
                                CHECK(rmsi_hip_resolve(&s, &pin, &back) == 0 && same(back, c2),
                                      "pin %s does not round-trip", txt);
                                if (op == RMSI_HIP_BWD) {
                                    for (int occ = 1; occ <= 8; occ *= 2) {
                                        const int64_t g = rmsi_hip_grid(&s, &c2, occ);
                                        const int64_t rpc = c2.path == RMSI_PATH_MULTI ? 1 : c2.rpc;
                                        CHECK(g * rpc <= rmsi_hip_partial_cap(r, cu),
                                              "bwd partials %lld > cap %lld (%s, rows %lld)", (long long)(g * rpc),
                                              (long long)rmsi_hip_partial_cap(r, cu), txt, (long long)r);
                                    }
                                }
                            }
                        }
    {
        rmsi_config pin;
        CHECK(rmsi_hip_config_set("tpr=256,lds=0,async=0") == RMSNORM_OK, "lds=0,async=0 refused");
        rmsi_hip_config_pin(&pin);
        CHECK(pin.tpr == 256 && pin.path == -1 && pin.rpc == -1, "pin tpr=256 not kept");
        CHECK(rmsi_hip_config_set("lds=2") == RMSNORM_ERR_BAD_ARGUMENT, "lds=2 accepted");
        CHECK(rmsi_hip_config_set("async=1,tpr=64") == RMSNORM_ERR_BAD_ARGUMENT, "async=1 accepted");
        CHECK(rmsi_hip_config_set("lds=") == RMSNORM_ERR_BAD_ARGUMENT, "lds= accepted");
        CHECK(rmsi_hip_config_set("path=fast") == RMSNORM_ERR_BAD_ARGUMENT, "path=fast accepted");
        rmsi_hip_config_pin(&pin);
        CHECK(pin.tpr == 256, "a refused spec changed the pin");
        CHECK(rmsi_hip_config_set(nullptr) == RMSNORM_OK, "NULL spec refused");
        rmsi_hip_config_pin(&pin);
        CHECK(pin.path == -1 && pin.tpr == -1 && pin.cps == -1, "NULL spec did not restore the heuristic");
    }
    (void)printf("%s: %ld shapes, %ld configs checked, %d failure(s)\n", rmst_fail ? "FAIL" : "ok", shapes, configs,
                 rmst_fail);
    return rmst_fail ? 1 : 0;
}
