/* Version, status strings and small pure helpers of the public ABI. */
#include "internal.h"

uint32_t rmsnorm_version(void)
{
    return (uint32_t)RMSNORM_VERSION_NUMBER;
}

/* One string per code, indexed by value: codes are frozen, so this table only
 * ever grows at the end, in step with the enum. */
static const char *const status_strings[] = {
    "ok",
    "null pointer",
    "bad shape (rows < 0, cols < 1, row_stride < cols, shapes differ, or sizes overflow)",
    "bad dtype (unknown, or an unsupported combination)",
    "bad eps (negative, NaN or infinite)",
    "bad alias (an output partially overlaps another buffer)",
    "bad struct size (too small, or unknown trailing fields not zero)",
    "bad flags (unknown bits, or a flag invalid for this call)",
    "workspace too small",
    "unsupported by this backend",
    "backend unavailable",
    "device or runtime error",
    "bad argument (unknown enum value, bad scale_ub or weight_offset)",
    "misaligned pointer (not aligned to its element size)",
};

const char *rmsnorm_status_string(rmsnorm_status status)
{
    size_t i = (size_t)(uint32_t)status;
    if (i < sizeof status_strings / sizeof status_strings[0])
        return status_strings[i];
    return "unknown status";
}

size_t rmsnorm_dtype_size(rmsnorm_dtype dtype)
{
    switch (dtype) {
    case RMSNORM_F32: return 4;
    case RMSNORM_F16:
    case RMSNORM_BF16: return 2;
    case RMSNORM_F8_E4M3:
    case RMSNORM_F8_E5M2:
    case RMSNORM_F8_E4M3FNUZ: return 1;
    case RMSNORM_DTYPE_MAX_ENUM:
    default: return 0;
    }
}

rmsnorm_status rmsnorm_quant_scale_count(rmsnorm_quant mode, int64_t rows, int64_t cols, size_t *count)
{
    if (count == NULL)
        return RMSNORM_ERR_NULL_POINTER;
    /* int64 limits keep every product below 2^62, so no intermediate overflows */
    if (rows < 0 || cols < 1 || rows > ((int64_t)1 << 40) || cols > ((int64_t)1 << 40))
        return RMSNORM_ERR_BAD_SHAPE;
    switch (mode) {
    case RMSNORM_QUANT_NONE: *count = 0; return RMSNORM_OK;
    case RMSNORM_QUANT_PER_TENSOR: *count = 1; return RMSNORM_OK;
    case RMSNORM_QUANT_PER_TOKEN: *count = (size_t)rows; return RMSNORM_OK;
    case RMSNORM_QUANT_PER_BLOCK_128: {
        if (cols % 128 != 0)
            return RMSNORM_ERR_BAD_SHAPE;
        uint64_t n = (uint64_t)(cols / 128) * (uint64_t)((rows + 3) / 4 * 4);
        if (n > (uint64_t)SIZE_MAX / sizeof(float))
            return RMSNORM_ERR_BAD_SHAPE;
        *count = (size_t)n;
        return RMSNORM_OK;
    }
    case RMSNORM_QUANT_MAX_ENUM:
    default: return RMSNORM_ERR_BAD_ARGUMENT;
    }
}
