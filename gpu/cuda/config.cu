/*
 * config_set / config_describe / config_enumerate, and the pin they share with
 * the environment override RMSNORM_CUDA_CONFIG (read once, on first use).
 * The pin is read and written under one lock: ops on many host threads read
 * it at once, and the first of them reads the environment (two threads' first
 * ops used to race there: the second could see the flag set before the
 * override was stored, and run one op on the ladder).
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "gpu/common/config_text.h"
#include "gpu/cuda/cuda_internal.h"
#include "gpu/cuda/ladder.h"

static pthread_mutex_t rmsi_pin_lock = PTHREAD_MUTEX_INITIALIZER;
static const rmsi_config rmsi_pin_none = {-1, -1, -1, -1, -1, -1, -1, -1, -1, -1}; /* no knob pinned */
static rmsi_config rmsi_pin = rmsi_pin_none;
static int rmsi_pin_env_read = 0; /* under rmsi_pin_lock */

/* Call with rmsi_pin_lock held. */
static void rmsi_pin_from_env(void)
{
    if (rmsi_pin_env_read)
        return;
    rmsi_pin_env_read = 1;
    const char *e = getenv("RMSNORM_CUDA_CONFIG");
    rmsi_config c;
    /* A malformed override is ignored rather than failing every op. */
    if (e && rmsi_config_parse(e, &c) == 0)
        rmsi_pin = c;
}

void rmsi_cuda_config_pin(rmsi_config *out)
{
    if (pthread_mutex_lock(&rmsi_pin_lock) != 0) {
        *out = rmsi_pin_none; /* the ladder: never a half-read pin */
        return;
    }
    rmsi_pin_from_env();
    *out = rmsi_pin;
    (void)pthread_mutex_unlock(&rmsi_pin_lock);
}

rmsnorm_status rmsi_cuda_config_set(const char *spec)
{
    rmsi_config c;
    if (rmsi_config_parse(spec, &c) != 0)
        return RMSNORM_ERR_BAD_ARGUMENT;
    if (pthread_mutex_lock(&rmsi_pin_lock) != 0)
        return RMSNORM_ERR_BAD_ARGUMENT;
    rmsi_pin_env_read = 1; /* a set replaces the override, also before the first op */
    rmsi_pin = c;
    (void)pthread_mutex_unlock(&rmsi_pin_lock);
    return RMSNORM_OK;
}

static int rmsi_describe_shape(rmsnorm_op op, int64_t rows, int64_t cols, rmsnorm_dtype dtype, rmsi_shape *s)
{
    if (rows < 0 || cols < 1 || (op != RMSNORM_OP_FORWARD && op != RMSNORM_OP_BACKWARD))
        return -1;
    if (dtype != RMSNORM_F32 && dtype != RMSNORM_F16 && dtype != RMSNORM_BF16)
        return -1;
    s->op = op == RMSNORM_OP_FORWARD ? RMSI_OP_FWD : RMSI_OP_BWD;
    s->rows = rows;
    s->cols = cols;
    s->esz = dtype == RMSNORM_F32 ? 4 : 2;
    /* Described for contiguous, cudaMalloc-aligned tensors (the benchmark's). */
    s->vec_ok = cols % (16 / s->esz) == 0;
    s->quant = RMSI_Q_NONE;
    s->sms = rmsi_cuda_ladder_sms();
    s->res = 0;
    s->smem = rmsi_cuda_smem_optin();
    s->cluster = rmsi_cuda_cluster();
    s->f16 = dtype == RMSNORM_F16;
    s->hout = 0;
    s->yout = 1;
    s->hbm_sm = rmsi_cuda_ladder_hbm();
    return s->sms > 0 ? 0 : -1;
}

rmsnorm_status rmsi_cuda_config_describe(rmsnorm_op op, int64_t rows, int64_t cols, rmsnorm_dtype dtype,
                                         char *buf, size_t n)
{
    rmsi_shape s;
    rmsi_config pin, c;
    if (!buf)
        return RMSNORM_ERR_NULL_POINTER;
    if (rmsi_describe_shape(op, rows, cols, dtype, &s) != 0)
        return RMSNORM_ERR_BAD_ARGUMENT;
    rmsi_cuda_config_pin(&pin);
    if (rmsi_config_resolve(&s, &pin, &c) != 0)
        return RMSNORM_ERR_UNSUPPORTED;
    return rmsi_config_format(&c, buf, n) == 0 ? RMSNORM_OK : RMSNORM_ERR_BAD_ARGUMENT;
}

rmsnorm_status rmsi_cuda_config_enumerate(rmsnorm_op op, int64_t rows, int64_t cols, rmsnorm_dtype dtype,
                                          int idx, char *buf, size_t n)
{
    rmsi_shape s;
    rmsi_config c;
    if (!buf)
        return RMSNORM_ERR_NULL_POINTER;
    if (rmsi_describe_shape(op, rows, cols, dtype, &s) != 0 || rmsi_config_at(&s, idx, &c) != 0)
        return RMSNORM_ERR_BAD_ARGUMENT;
    return rmsi_config_format(&c, buf, n) == 0 ? RMSNORM_OK : RMSNORM_ERR_BAD_ARGUMENT;
}
