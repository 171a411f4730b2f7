/* Byte models, probe shapes, op/dtype names and capability bits. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "bench/bench.h"

static const rmsi_bench_model_opts plain = { RMSNORM_F8_E4M3, 0, 0, RMSI_BENCH_WEIGHT_SAME };

static void forward_reads_x_writes_y(void **state)
{
    rmsi_bench_bytes b;
    (void)state;
    assert_int_equal(rmsi_bench_bytes_of(RMSI_BENCH_FORWARD, RMSNORM_BF16, 4096, 4096, &plain, &b), 0);
    assert_int_equal(b.main_read, 4096u * 4096u * 2u);
    assert_int_equal(b.main_written, 4096u * 4096u * 2u);
    assert_int_equal(b.aux_read, 4096u * 2u); /* the weight */
    assert_int_equal(b.aux_written, 0);
}

static void backward_lists_rstd_dw_and_partials_separately(void **state)
{
    rmsi_bench_bytes b;
    rmsi_bench_model_opts mo = plain;
    (void)state;
    mo.workspace = 1000;
    assert_int_equal(rmsi_bench_bytes_of(RMSI_BENCH_BACKWARD, RMSNORM_F32, 7, 65, &mo, &b), 0);
    assert_int_equal(b.main_read, 2u * 7u * 65u * 4u);
    assert_int_equal(b.main_written, 7u * 65u * 4u);
    assert_int_equal(b.aux_read, 65u * 4u + 7u * 4u + 1000u);
    assert_int_equal(b.aux_written, 65u * 4u + 1000u);
}

static void the_weight_kind_sets_the_aux_bytes(void **state)
{
    rmsi_bench_bytes b;
    rmsi_bench_model_opts mo = plain;
    (void)state;
    mo.workspace = 1000;
    mo.weight = RMSI_BENCH_WEIGHT_F32; /* fp32 under bf16: 4 bytes a column */
    assert_int_equal(rmsi_bench_bytes_of(RMSI_BENCH_FORWARD, RMSNORM_BF16, 7, 65, &mo, &b), 0);
    assert_int_equal(b.aux_read, 65u * 4u);
    assert_int_equal(rmsi_bench_bytes_of(RMSI_BENCH_BACKWARD, RMSNORM_BF16, 7, 65, &mo, &b), 0);
    assert_int_equal(b.main_read, 2u * 7u * 65u * 2u);
    assert_int_equal(b.aux_read, 65u * 4u + 7u * 4u + 1000u);
    assert_int_equal(b.aux_written, 65u * 4u + 1000u);
    mo.weight = RMSI_BENCH_WEIGHT_NONE; /* no weight: no dweight, no partials */
    assert_int_equal(rmsi_bench_bytes_of(RMSI_BENCH_BACKWARD, RMSNORM_BF16, 7, 65, &mo, &b), 0);
    assert_int_equal(b.main_read, 2u * 7u * 65u * 2u);
    assert_int_equal(b.main_written, 7u * 65u * 2u);
    assert_int_equal(b.aux_read, 7u * 4u);
    assert_int_equal(b.aux_written, 0u);
    assert_int_equal(rmsi_bench_bytes_of(RMSI_BENCH_FUSED_ADD, RMSNORM_F16, 7, 65, &mo, &b), 0);
    assert_int_equal(b.aux_read, 0u);
    assert_int_equal(rmsi_bench_weight_dtype(RMSI_BENCH_WEIGHT_F32, RMSNORM_F16), RMSNORM_F32);
    assert_int_equal(rmsi_bench_weight_dtype(RMSI_BENCH_WEIGHT_SAME, RMSNORM_F16), RMSNORM_F16);
    assert_int_equal(rmsi_bench_weight_size(RMSI_BENCH_WEIGHT_SAME, RMSNORM_BF16), 2u);
    assert_int_equal(rmsi_bench_weight_size(RMSI_BENCH_WEIGHT_NONE, RMSNORM_F32), 0u);
}

static void backward_res_reads_the_residual_gradient_too(void **state)
{
    rmsi_bench_bytes b;
    (void)state;
    assert_int_equal(rmsi_bench_bytes_of(RMSI_BENCH_BACKWARD_RES, RMSNORM_BF16, 3, 100, &plain, &b), 0);
    assert_int_equal(b.main_read, 3u * 3u * 100u * 2u);
    assert_int_equal(b.main_written, 3u * 100u * 2u);
    assert_int_equal(b.aux_read, 100u * 2u + 3u * 4u);
}

static void fused_add_moves_four_tensors(void **state)
{
    rmsi_bench_bytes b;
    (void)state;
    assert_int_equal(rmsi_bench_bytes_of(RMSI_BENCH_FUSED_ADD, RMSNORM_F16, 3, 100, &plain, &b), 0);
    assert_int_equal(b.main_read, 2u * 600u);
    assert_int_equal(b.main_written, 2u * 600u);
}

static void quant_models(void **state)
{
    rmsi_bench_bytes b;
    rmsi_bench_model_opts with_y = plain;
    (void)state;
    with_y.quant_y = 1;
    assert_int_equal(rmsi_bench_bytes_of(RMSI_BENCH_QUANT_TOKEN, RMSNORM_BF16, 3, 256, &plain, &b), 0);
    assert_int_equal(b.main_read, 3u * 256u * 2u);
    assert_int_equal(b.main_written, 3u * 256u + 3u * 4u);
    assert_int_equal(rmsi_bench_bytes_of(RMSI_BENCH_QUANT_TOKEN, RMSNORM_BF16, 3, 256, &with_y, &b), 0);
    assert_int_equal(b.main_written, 3u * 256u + 3u * 4u + 3u * 256u * 2u);
    assert_int_equal(rmsi_bench_bytes_of(RMSI_BENCH_QUANT_TENSOR, RMSNORM_F32, 2, 8, &plain, &b), 0);
    assert_int_equal(b.main_written, 16u);
    assert_int_equal(b.aux_read, 8u * 4u + 4u); /* weight + the static scale */
    /* block scales: rows per 128-column block, the padding rows not written */
    assert_int_equal(rmsi_bench_bytes_of(RMSI_BENCH_QUANT_BLOCK, RMSNORM_F16, 5, 256, &plain, &b), 0);
    assert_int_equal(b.main_written, 5u * 256u + 2u * 5u * 4u);
    assert_int_equal(rmsi_bench_bytes_of(RMSI_BENCH_ADD_QUANT_BLOCK, RMSNORM_F16, 5, 256, &plain, &b),
                     0);
    assert_int_equal(b.main_read, 2u * 5u * 256u * 2u);
    assert_int_equal(b.main_written, 5u * 256u * 2u + 5u * 256u + 2u * 5u * 4u);
    assert_int_equal(rmsi_bench_bytes_of(RMSI_BENCH_ADD_QUANT_TOKEN, RMSNORM_F16, 5, 256, &plain, &b),
                     0);
    assert_int_equal(b.main_written, 5u * 256u * 2u + 5u * 256u + 5u * 4u);
}

static void invalid_cells_are_refused(void **state)
{
    rmsi_bench_bytes b;
    (void)state;
    assert_int_equal(rmsi_bench_bytes_of(RMSI_BENCH_QUANT_BLOCK, RMSNORM_F16, 5, 200, &plain, &b), -1);
    assert_int_equal(rmsi_bench_bytes_of(RMSI_BENCH_FORWARD, RMSNORM_F8_E4M3, 5, 200, &plain, &b), -1);
    assert_int_equal(rmsi_bench_bytes_of(RMSI_BENCH_FORWARD, RMSNORM_F32, 5, 0, &plain, &b), -1);
    assert_int_equal(rmsi_bench_bytes_of(RMSI_BENCH_OP_COUNT, RMSNORM_F32, 5, 8, &plain, &b), -1);
    assert_int_equal(rmsi_bench_bytes_of(RMSI_BENCH_FORWARD, RMSNORM_F32, 0, 8, &plain, &b), 0);
    assert_int_equal(b.main_read, 0);
}

static void probe_shapes_follow_the_read_write_mix(void **state)
{
    rmsi_bench_bytes b;
    rmsi_bench_model_opts mo = plain;
    (void)state;
    (void)rmsi_bench_bytes_of(RMSI_BENCH_FORWARD, RMSNORM_BF16, 64, 4096, &mo, &b);
    assert_int_equal(rmsi_bench_probe_shape(&b, 1), RMSNORM_PROBE_COPY_NT);
    assert_int_equal(rmsi_bench_probe_shape(&b, 0), RMSNORM_PROBE_COPY);
    (void)rmsi_bench_bytes_of(RMSI_BENCH_BACKWARD, RMSNORM_BF16, 64, 4096, &mo, &b);
    assert_int_equal(rmsi_bench_probe_shape(&b, 1), RMSNORM_PROBE_R2W1_NT);
    (void)rmsi_bench_bytes_of(RMSI_BENCH_FUSED_ADD, RMSNORM_BF16, 64, 4096, &mo, &b);
    assert_int_equal(rmsi_bench_probe_shape(&b, 1), RMSNORM_PROBE_COPY_NT);
    (void)rmsi_bench_bytes_of(RMSI_BENCH_QUANT_TOKEN, RMSNORM_BF16, 64, 4096, &mo, &b);
    assert_int_equal(rmsi_bench_probe_shape(&b, 1), RMSNORM_PROBE_R2W1_NT);
    assert_int_equal(rmsi_bench_probe_traffic(RMSNORM_PROBE_COPY_NT, 100), 200);
    assert_int_equal(rmsi_bench_probe_traffic(RMSNORM_PROBE_WRITE, 100), 100);
    assert_int_equal(rmsi_bench_probe_traffic(RMSNORM_PROBE_R2W1, 100), 300);
}

static void names_round_trip(void **state)
{
    (void)state;
    for (int i = 0; i < RMSI_BENCH_OP_COUNT; i++) {
        rmsi_bench_op op = RMSI_BENCH_OP_COUNT;
        assert_int_equal(rmsi_bench_op_parse(rmsi_bench_op_info((rmsi_bench_op)i)->name, &op), 0);
        assert_int_equal(op, i);
        assert_non_null(rmsi_bench_op_info((rmsi_bench_op)i)->model);
    }
    rmsi_bench_op op;
    rmsnorm_dtype t;
    assert_int_equal(rmsi_bench_op_parse("forwards", &op), -1);
    assert_null(rmsi_bench_op_info(RMSI_BENCH_OP_COUNT));
    assert_int_equal(rmsi_bench_dtype_parse("bf16", &t), 0);
    assert_int_equal(t, RMSNORM_BF16);
    assert_string_equal(rmsi_bench_dtype_name(t), "bf16");
    assert_int_equal(rmsi_bench_dtype_parse("fp64", &t), -1);
    static const rmsi_bench_weight kinds[] = { RMSI_BENCH_WEIGHT_SAME, RMSI_BENCH_WEIGHT_F32,
                                               RMSI_BENCH_WEIGHT_NONE };
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
        rmsi_bench_weight w = RMSI_BENCH_WEIGHT_SAME;
        assert_int_equal(rmsi_bench_weight_parse(rmsi_bench_weight_name(kinds[i]), &w), 0);
        assert_int_equal(w, kinds[i]);
    }
    rmsi_bench_weight w;
    assert_int_equal(rmsi_bench_weight_parse("fp32", &w), -1);
}

static void caps_needed(void **state)
{
    (void)state;
    assert_int_equal(rmsi_bench_op_caps(RMSI_BENCH_FORWARD, RMSNORM_F16, RMSNORM_F8_E4M3),
                     RMSNORM_CAP_F16 | RMSNORM_CAP_FORWARD);
    assert_int_equal(rmsi_bench_op_caps(RMSI_BENCH_ADD_QUANT_TOKEN, RMSNORM_BF16, RMSNORM_F8_E5M2),
                     RMSNORM_CAP_BF16 | RMSNORM_CAP_FORWARD | RMSNORM_CAP_RESIDUAL |
                         RMSNORM_CAP_QUANT_PER_TOKEN | RMSNORM_CAP_FP8_E5M2);
    assert_int_equal(rmsi_bench_op_caps(RMSI_BENCH_BACKWARD, RMSNORM_F32, RMSNORM_F8_E4M3),
                     RMSNORM_CAP_F32 | RMSNORM_CAP_BACKWARD);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(forward_reads_x_writes_y),
        cmocka_unit_test(backward_lists_rstd_dw_and_partials_separately),
        cmocka_unit_test(the_weight_kind_sets_the_aux_bytes),
        cmocka_unit_test(backward_res_reads_the_residual_gradient_too),
        cmocka_unit_test(fused_add_moves_four_tensors),
        cmocka_unit_test(quant_models),
        cmocka_unit_test(invalid_cells_are_refused),
        cmocka_unit_test(probe_shapes_follow_the_read_write_mix),
        cmocka_unit_test(names_round_trip),
        cmocka_unit_test(caps_needed),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
