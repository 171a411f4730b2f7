/*
 * The launch-configuration text shared by the environment override
 * (RMSNORM_CUDA_CONFIG / RMSNORM_HIP_CONFIG), config_set, config_describe and
 * config_enumerate:
 *
 *     path=reg|multi,vec=16|1,tpr=N,rpc=N,nv=N,cps=N,cache=0..7,stage=0|1,cl=1|2|4|8,lean=0|1|2
 *
 * Keys may be given in any order and any subset; a key left out (-1 here) is
 * filled by the ladder for each shape, so "tpr=512" pins only the threads per
 * row. "auto" or the empty string pins nothing. nv is derived from tpr and
 * cols and is accepted only as a check. Host code, vendor-neutral.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu/common/config_text.h"

static int rmsi_parse_int(const char *s, size_t n, int *out)
{
    char tmp[16];
    char *end = NULL;
    long v;
    if (n == 0 || n >= sizeof tmp)
        return -1;
    memcpy(tmp, s, n);
    tmp[n] = '\0';
    v = strtol(tmp, &end, 10);
    if (*end != '\0' || v < 0 || v > 1 << 20)
        return -1;
    *out = (int)v;
    return 0;
}

int rmsi_parse_count(const char *s, int *out)
{
    return s ? rmsi_parse_int(s, strlen(s), out) : -1;
}

int rmsi_config_parse(const char *spec, rmsi_config *out)
{
    rmsi_config c = {-1, -1, -1, -1, -1, -1, -1, -1, -1, -1};
    const char *s = spec;
    if (!spec || !*spec || strcmp(spec, "auto") == 0) {
        *out = c;
        return 0;
    }
    while (*s) {
        const char *eq = strchr(s, '=');
        const char *end = strchr(s, ',');
        size_t klen, vlen;
        const char *val;
        if (!end)
            end = s + strlen(s);
        if (!eq || eq > end)
            return -1;
        klen = (size_t)(eq - s);
        val = eq + 1;
        vlen = (size_t)(end - val);
        if (klen == 4 && strncmp(s, "path", 4) == 0) {
            if (vlen == 3 && strncmp(val, "reg", 3) == 0)
                c.path = RMSI_PATH_REG;
            else if (vlen == 5 && strncmp(val, "multi", 5) == 0)
                c.path = RMSI_PATH_MULTI;
            else
                return -1;
        } else {
            int v = 0;
            if (rmsi_parse_int(val, vlen, &v) != 0)
                return -1;
            if (klen == 3 && strncmp(s, "vec", 3) == 0) {
                if (v != 16 && v != 1)
                    return -1;
                c.vec = v == 16 ? 16 : 0;
            } else if (klen == 3 && strncmp(s, "tpr", 3) == 0) {
                c.tpr = v;
            } else if (klen == 3 && strncmp(s, "rpc", 3) == 0) {
                c.rpc = v;
            } else if (klen == 2 && strncmp(s, "nv", 2) == 0) {
                c.nv = v;
            } else if (klen == 3 && strncmp(s, "cps", 3) == 0) {
                c.cps = v;
            } else if (klen == 5 && strncmp(s, "cache", 5) == 0) {
                if (v > 7)
                    return -1;
                c.cache = v;
            } else if (klen == 5 && strncmp(s, "stage", 5) == 0) {
                if (v > 1)
                    return -1;
                c.stage = v;
            } else if (klen == 2 && strncmp(s, "cl", 2) == 0) {
                if (v != 1 && v != 2 && v != 4 && v != 8)
                    return -1;
                c.cl = v;
            } else if (klen == 4 && strncmp(s, "lean", 4) == 0) {
                if (v > 2)
                    return -1;
                c.lean = v;
            } else {
                return -1;
            }
        }
        s = *end ? end + 1 : end;
    }
    *out = c;
    return 0;
}

int rmsi_config_format(const rmsi_config *c, char *buf, size_t n)
{
    int w;
    if (!buf || n == 0)
        return -1;
    if (c->path == RMSI_PATH_MULTI)
        w = snprintf(buf, n, "path=multi,vec=%d,tpr=%d,cps=%d,cache=%d,lean=%d", c->vec == 16 ? 16 : 1, c->tpr,
                     c->cps, c->cache, c->lean);
    else
        w = snprintf(buf, n, "path=reg,vec=16,tpr=%d,rpc=%d,nv=%d,cps=%d,cache=%d,stage=%d,cl=%d,lean=%d", c->tpr,
                     c->rpc, c->nv, c->cps, c->cache, c->stage, c->cl, c->lean);
    return (w < 0 || (size_t)w >= n) ? -1 : 0;
}
