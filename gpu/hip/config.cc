/*
 * config_set / config_describe / config_enumerate and the pin they share with
 * the environment override RMSNORM_HIP_CONFIG (read once, on first use).
 *
 * Syntax: gpu/common/config_text.cc's (path, vec, tpr, rpc, nv, cps; cache
 * and stage parse there too, and a stage other than 0 is not a valid AMD
 * config: there is no cp.async row staging on AMD) plus two
 * AMD memory-path keys, lds=N (LDS pipeline depth) and async=0|1 (global ->
 * LDS async copies). They are part of the syntax so that a search names the
 * whole AMD space, and only 0 is accepted until a shared kernel implements
 * them: a pin that asks for more is RMSNORM_ERR_BAD_ARGUMENT, never silently
 * ignored. The pin is read and written under one lock (ops on many host
 * threads read it; a set while they run gives each op the old or the new pin
 * whole, as in gpu/cuda/config.cu).
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "gpu/common/config_text.h"
#include "gpu/hip/hip_internal.h"
#include "gpu/hip/ladder.h"

#define RMSI_HIP_SPEC_MAX 256

/* Strips lds=/async= from spec into rest; -1 on a value other than 0. */
static int rmsi_hip_strip_amd_keys(const char *spec, char *rest, size_t n)
{
    size_t w = 0;
    const char *s = spec;
    rest[0] = '\0';
    if (!spec)
        return 0;
    if (strlen(spec) >= n)
        return -1;
    while (*s) {
        const char *end = strchr(s, ',');
        size_t len = end ? (size_t)(end - s) : strlen(s);
        if ((len >= 4 && strncmp(s, "lds=", 4) == 0) || (len >= 6 && strncmp(s, "async=", 6) == 0)) {
            const char *v = s + (s[0] == 'l' ? 4 : 6);
            if ((size_t)(v - s) + 1 != len || *v != '0')
                return -1;
        } else if (len > 0) {
            if (w > 0)
                rest[w++] = ',';
            memcpy(rest + w, s, len);
            w += len;
            rest[w] = '\0';
        }
        s = end ? end + 1 : s + len;
    }
    return 0;
}

static int rmsi_hip_parse(const char *spec, rmsi_config *out)
{
    char rest[RMSI_HIP_SPEC_MAX];
    if (rmsi_hip_strip_amd_keys(spec, rest, sizeof rest) != 0)
        return -1;
    return rmsi_config_parse(rest, out);
}

static rmsi_config rmsi_hip_env_pin(void)
{
    rmsi_config c = {-1, -1, -1, -1, -1, -1, -1, -1, -1, -1};
    const char *e = getenv("RMSNORM_HIP_CONFIG");
    rmsi_config p;
    /* A malformed override is ignored rather than failing every op. */
    if (e && rmsi_hip_parse(e, &p) == 0)
        c = p;
    return c;
}

static pthread_mutex_t rmsi_hip_pin_lock = PTHREAD_MUTEX_INITIALIZER;
static rmsi_config rmsi_hip_pin; /* under rmsi_hip_pin_lock */
static int rmsi_hip_pin_set = 0; /* under rmsi_hip_pin_lock */

void rmsi_hip_config_pin(rmsi_config *out)
{
    static const rmsi_config env = rmsi_hip_env_pin(); /* C++11: initialised once, thread-safely */
    *out = env;
    if (pthread_mutex_lock(&rmsi_hip_pin_lock) != 0)
        return;
    if (rmsi_hip_pin_set)
        *out = rmsi_hip_pin;
    (void)pthread_mutex_unlock(&rmsi_hip_pin_lock);
}

rmsnorm_status rmsi_hip_config_set(const char *spec)
{
    rmsi_config c;
    if (rmsi_hip_parse(spec, &c) != 0 || pthread_mutex_lock(&rmsi_hip_pin_lock) != 0)
        return RMSNORM_ERR_BAD_ARGUMENT;
    rmsi_hip_pin = c;
    rmsi_hip_pin_set = 1;
    (void)pthread_mutex_unlock(&rmsi_hip_pin_lock);
    return RMSNORM_OK;
}

static int rmsi_hip_describe_shape(rmsnorm_op op, int64_t rows, int64_t cols, rmsnorm_dtype dtype,
                                   rmsi_hip_shape *s)
{
    if (rows < 0 || cols < 1 || (op != RMSNORM_OP_FORWARD && op != RMSNORM_OP_BACKWARD))
        return -1;
    if (dtype != RMSNORM_F32 && dtype != RMSNORM_F16 && dtype != RMSNORM_BF16)
        return -1;
    s->op = op == RMSNORM_OP_FORWARD ? RMSI_HIP_FWD : RMSI_HIP_BWD;
    s->rows = rows;
    s->cols = cols;
    s->esz = dtype == RMSNORM_F32 ? 4 : 2;
    /* Described for contiguous, hipMalloc-aligned tensors (the benchmark's). */
    s->vec_ok = cols % (16 / s->esz) == 0;
    s->quant = RMSI_Q_NONE;
    return rmsi_hip_device_get(&s->dev);
}

static rmsnorm_status rmsi_hip_format(const rmsi_config *c, char *buf, size_t n)
{
    size_t len;
    if (rmsi_config_format(c, buf, n) != 0)
        return RMSNORM_ERR_BAD_ARGUMENT;
    len = strlen(buf);
    if (n - len <= sizeof ",lds=0,async=0" - 1)
        return RMSNORM_ERR_BAD_ARGUMENT;
    memcpy(buf + len, ",lds=0,async=0", sizeof ",lds=0,async=0");
    return RMSNORM_OK;
}

rmsnorm_status rmsi_hip_config_describe(rmsnorm_op op, int64_t rows, int64_t cols, rmsnorm_dtype dtype,
                                        char *buf, size_t n)
{
    rmsi_hip_shape s;
    rmsi_config pin, c;
    if (!buf)
        return RMSNORM_ERR_NULL_POINTER;
    if (rmsi_hip_describe_shape(op, rows, cols, dtype, &s) != 0)
        return RMSNORM_ERR_BAD_ARGUMENT;
    rmsi_hip_config_pin(&pin);
    if (rmsi_hip_resolve(&s, &pin, &c) != 0)
        return RMSNORM_ERR_UNSUPPORTED;
    return rmsi_hip_format(&c, buf, n);
}

rmsnorm_status rmsi_hip_config_enumerate(rmsnorm_op op, int64_t rows, int64_t cols, rmsnorm_dtype dtype,
                                         int idx, char *buf, size_t n)
{
    rmsi_hip_shape s;
    rmsi_config c;
    if (!buf)
        return RMSNORM_ERR_NULL_POINTER;
    if (rmsi_hip_describe_shape(op, rows, cols, dtype, &s) != 0 || rmsi_hip_config_at(&s, idx, &c) != 0)
        return RMSNORM_ERR_BAD_ARGUMENT;
    return rmsi_hip_format(&c, buf, n);
}
