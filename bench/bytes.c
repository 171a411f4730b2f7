/*
 * The ops the benchmark knows and their logical byte models: the bytes a
 * perfect kernel must move, each tensor read or written exactly once. GB/s and
 * % roofline count only the activation-sized tensors (and the fp8 scales, which
 * grow with them); weight, rstd, dweight and workspace partials are listed as
 * aux bytes, since they shrink to nothing at large rows and would otherwise
 * flatter small-row cells.
 */
#include <string.h>

#include "bench/bench.h"

static const rmsi_bench_opinfo ops[RMSI_BENCH_OP_COUNT] = {
    { "forward", "read x, write y", 0, 0, RMSNORM_QUANT_NONE },
    { "backward", "read x, read dy, write dx (aux: weight, rstd read; dw, partials)", 1, 0,
      RMSNORM_QUANT_NONE },
    { "fused-add", "read x, read r, write h, write y", 0, 1, RMSNORM_QUANT_NONE },
    { "quant-tensor", "read x, write q (fp8) [+ y] (aux: weight, static scale)", 0, 0,
      RMSNORM_QUANT_PER_TENSOR },
    { "quant-token", "read x, write q (fp8) [+ y] + scale[rows]", 0, 0,
      RMSNORM_QUANT_PER_TOKEN },
    { "quant-block", "read x, write q (fp8) [+ y] + scale[rows * cols/128]", 0, 0,
      RMSNORM_QUANT_PER_BLOCK_128 },
    { "add-quant-token", "read x, read r, write h, write q (fp8) [+ y] + scale[rows]", 0, 1,
      RMSNORM_QUANT_PER_TOKEN },
    { "add-quant-block", "read x, read r, write h, write q (fp8) [+ y] + scale[rows * cols/128]",
      0, 1, RMSNORM_QUANT_PER_BLOCK_128 },
    { "backward-res", "read x, read dy, read dres, write dx (aux: as backward)", 1, 1,
      RMSNORM_QUANT_NONE },
};

const rmsi_bench_opinfo *rmsi_bench_op_info(rmsi_bench_op op)
{
    if ((unsigned)op >= (unsigned)RMSI_BENCH_OP_COUNT)
        return NULL;
    return &ops[op];
}

int rmsi_bench_op_parse(const char *name, rmsi_bench_op *op)
{
    for (int i = 0; i < RMSI_BENCH_OP_COUNT; i++) {
        if (strcmp(name, ops[i].name) == 0) {
            *op = (rmsi_bench_op)i;
            return 0;
        }
    }
    return -1;
}

int rmsi_bench_dtype_parse(const char *name, rmsnorm_dtype *dtype)
{
    static const struct {
        const char *name;
        rmsnorm_dtype t;
    } names[] = {
        { "f32", RMSNORM_F32 },        { "f16", RMSNORM_F16 },
        { "bf16", RMSNORM_BF16 },      { "e4m3", RMSNORM_F8_E4M3 },
        { "e5m2", RMSNORM_F8_E5M2 },   { "e4m3fnuz", RMSNORM_F8_E4M3FNUZ },
    };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        if (strcmp(name, names[i].name) == 0) {
            *dtype = names[i].t;
            return 0;
        }
    }
    return -1;
}

const char *rmsi_bench_dtype_name(rmsnorm_dtype dtype)
{
    switch (dtype) {
    case RMSNORM_F32: return "f32";
    case RMSNORM_F16: return "f16";
    case RMSNORM_BF16: return "bf16";
    case RMSNORM_F8_E4M3: return "e4m3";
    case RMSNORM_F8_E5M2: return "e5m2";
    case RMSNORM_F8_E4M3FNUZ: return "e4m3fnuz";
    case RMSNORM_DTYPE_MAX_ENUM:
    default: return "?";
    }
}

const char *rmsi_bench_probe_name(rmsnorm_probe kind)
{
    switch (kind) {
    case RMSNORM_PROBE_COPY: return "copy";
    case RMSNORM_PROBE_WRITE: return "write";
    case RMSNORM_PROBE_R2W1: return "2r1w";
    case RMSNORM_PROBE_COPY_NT: return "copy_nt";
    case RMSNORM_PROBE_WRITE_NT: return "write_nt";
    case RMSNORM_PROBE_R2W1_NT: return "2r1w_nt";
    case RMSNORM_PROBE_MAX_ENUM:
    default: return "?";
    }
}

int rmsi_bench_weight_parse(const char *name, rmsi_bench_weight *w)
{
    static const struct {
        const char *name;
        rmsi_bench_weight w;
    } names[] = { { "same", RMSI_BENCH_WEIGHT_SAME },
                  { "f32", RMSI_BENCH_WEIGHT_F32 },
                  { "none", RMSI_BENCH_WEIGHT_NONE } };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        if (strcmp(name, names[i].name) == 0) {
            *w = names[i].w;
            return 0;
        }
    }
    return -1;
}

const char *rmsi_bench_weight_name(rmsi_bench_weight w)
{
    switch (w) {
    case RMSI_BENCH_WEIGHT_SAME: return "same";
    case RMSI_BENCH_WEIGHT_F32: return "f32";
    case RMSI_BENCH_WEIGHT_NONE: return "none";
    default: return "?";
    }
}

rmsnorm_dtype rmsi_bench_weight_dtype(rmsi_bench_weight w, rmsnorm_dtype act)
{
    return w == RMSI_BENCH_WEIGHT_F32 ? RMSNORM_F32 : act;
}

size_t rmsi_bench_weight_size(rmsi_bench_weight w, rmsnorm_dtype act)
{
    return w == RMSI_BENCH_WEIGHT_NONE ? 0u : rmsnorm_dtype_size(rmsi_bench_weight_dtype(w, act));
}

/* Bytes a probe moves over buffers of bytes_per_buffer each. */
uint64_t rmsi_bench_probe_traffic(rmsnorm_probe kind, size_t bytes_per_buffer)
{
    uint64_t b = (uint64_t)bytes_per_buffer;
    switch (kind) {
    case RMSNORM_PROBE_COPY:
    case RMSNORM_PROBE_COPY_NT: return 2u * b;
    case RMSNORM_PROBE_WRITE:
    case RMSNORM_PROBE_WRITE_NT: return b;
    case RMSNORM_PROBE_R2W1:
    case RMSNORM_PROBE_R2W1_NT: return 3u * b;
    case RMSNORM_PROBE_MAX_ENUM:
    default: return 0;
    }
}

/* Returns 0, or -1 when the op cannot run on this shape or dtype (block
 * quantisation needs cols % 128 == 0; activations are f32/f16/bf16). */
int rmsi_bench_bytes_of(rmsi_bench_op op, rmsnorm_dtype dtype, int64_t rows, int64_t cols,
                        const rmsi_bench_model_opts *mo, rmsi_bench_bytes *out)
{
    const rmsi_bench_opinfo *oi = rmsi_bench_op_info(op);
    size_t ts = rmsnorm_dtype_size(dtype);
    memset(out, 0, sizeof *out);
    if (oi == NULL || rows < 0 || cols < 1 || ts < 2 || ts > 4)
        return -1;
    uint64_t r = (uint64_t)rows, c = (uint64_t)cols;
    uint64_t act = r * c * ts; /* one activation tensor */
    int has_w = mo->weight != RMSI_BENCH_WEIGHT_NONE;

    out->aux_read = c * rmsi_bench_weight_size(mo->weight, dtype);
    if (oi->backward) {
        out->main_read = (oi->residual ? 3u : 2u) * act; /* x, dy [, the residual gradient] */
        out->main_written = act;
        out->aux_read += r * 4u; /* rstd, saved by the forward */
        if (has_w) {             /* no weight, no dweight: no partials either */
            out->aux_written = c * 4u;                   /* dweight */
            out->aux_written += (uint64_t)mo->workspace; /* partials written ... */
            out->aux_read += (uint64_t)mo->workspace;    /* ... and read back once */
        }
        return 0;
    }
    out->main_read = oi->residual ? 2u * act : act;
    out->main_written = oi->residual ? act : 0u; /* h */
    if (oi->quant == RMSNORM_QUANT_NONE) {
        out->main_written += act; /* y */
        return 0;
    }
    out->main_written += r * c; /* q, one byte per element */
    if (mo->quant_y)
        out->main_written += act;
    switch (oi->quant) {
    case RMSNORM_QUANT_PER_TENSOR:
        out->aux_read += 4u;
        break;
    case RMSNORM_QUANT_PER_TOKEN:
        out->main_written += r * 4u;
        break;
    case RMSNORM_QUANT_PER_BLOCK_128:
        if (c % 128u != 0u)
            return -1;
        /* the padding rows of the [cols/128][round_up(rows,4)] layout are not written */
        out->main_written += (c / 128u) * r * 4u;
        break;
    case RMSNORM_QUANT_NONE:
    case RMSNORM_QUANT_MAX_ENUM:
    default:
        return -1;
    }
    return 0;
}

/* The probe whose read:write mix is closest to the op's: 2R1W for read-heavy
 * ops (backward; quantising forwards, which write one byte per element read as
 * two or four), the copy otherwise. */
rmsnorm_probe rmsi_bench_probe_shape(const rmsi_bench_bytes *b, int nt)
{
    int read_heavy = (double)b->main_read >= 1.5 * (double)b->main_written;
    if (read_heavy)
        return nt ? RMSNORM_PROBE_R2W1_NT : RMSNORM_PROBE_R2W1;
    return nt ? RMSNORM_PROBE_COPY_NT : RMSNORM_PROBE_COPY;
}

/* Capability bits a backend needs for the op. */
uint32_t rmsi_bench_op_caps(rmsi_bench_op op, rmsnorm_dtype dtype, rmsnorm_dtype fp8)
{
    const rmsi_bench_opinfo *oi = rmsi_bench_op_info(op);
    uint32_t caps = 0;
    if (oi == NULL)
        return 0xFFFFFFFFu;
    switch (dtype) {
    case RMSNORM_F32: caps |= RMSNORM_CAP_F32; break;
    case RMSNORM_F16: caps |= RMSNORM_CAP_F16; break;
    case RMSNORM_BF16: caps |= RMSNORM_CAP_BF16; break;
    case RMSNORM_F8_E4M3:
    case RMSNORM_F8_E5M2:
    case RMSNORM_F8_E4M3FNUZ:
    case RMSNORM_DTYPE_MAX_ENUM:
    default: return 0xFFFFFFFFu;
    }
    caps |= oi->backward ? RMSNORM_CAP_BACKWARD : RMSNORM_CAP_FORWARD;
    if (oi->residual)
        caps |= RMSNORM_CAP_RESIDUAL;
    switch (oi->quant) {
    case RMSNORM_QUANT_PER_TENSOR: caps |= RMSNORM_CAP_QUANT_PER_TENSOR; break;
    case RMSNORM_QUANT_PER_TOKEN: caps |= RMSNORM_CAP_QUANT_PER_TOKEN; break;
    case RMSNORM_QUANT_PER_BLOCK_128: caps |= RMSNORM_CAP_QUANT_PER_BLOCK; break;
    case RMSNORM_QUANT_NONE:
    case RMSNORM_QUANT_MAX_ENUM:
    default: break;
    }
    if (oi->quant != RMSNORM_QUANT_NONE) {
        switch (fp8) {
        case RMSNORM_F8_E4M3: caps |= RMSNORM_CAP_FP8_E4M3; break;
        case RMSNORM_F8_E5M2: caps |= RMSNORM_CAP_FP8_E5M2; break;
        case RMSNORM_F8_E4M3FNUZ: caps |= RMSNORM_CAP_FP8_E4M3FNUZ; break;
        case RMSNORM_F32:
        case RMSNORM_F16:
        case RMSNORM_BF16:
        case RMSNORM_DTYPE_MAX_ENUM:
        default: return 0xFFFFFFFFu;
        }
    }
    return caps;
}
