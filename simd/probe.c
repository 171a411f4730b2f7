/*
 * The avx512 backend's bandwidth probes: ref/host_probe.c's head, tail and
 * thread split with a loop over whole 64-byte lines in zmm registers, one
 * load per source line and one store per destination line, as the kernels
 * move their rows. A probe in narrower accesses than the kernels measures
 * less than the machine gives them (docs/benchmark.md).
 */
#ifndef RMSNORM_SIMD_FILE
#define RMSNORM_SIMD_FILE 1
#endif

#include <immintrin.h>
#include <stdint.h>

#include "internal.h"

/* Lines [l0, l1) with op and nt constants once inlined. */
static inline __attribute__((always_inline)) void zlines(rmsi_probe_op op, int nt, uint8_t *d,
                                                         const uint8_t *s0, const uint8_t *s1,
                                                         size_t l0, size_t l1)
{
    const __m512i fill = _mm512_set1_epi8((char)RMSI_PROBE_FILL);
    size_t l;

    for (l = l0; l < l1; l++) {
        size_t o = l * RMSI_PROBE_LINE;
        __m512i v;
        switch (op) {
        case RMSI_PROBE_COPY:
            v = _mm512_loadu_si512((const void *)(s0 + o));
            break;
        case RMSI_PROBE_R2W1:
            v = _mm512_add_epi8(_mm512_loadu_si512((const void *)(s0 + o)),
                                _mm512_loadu_si512((const void *)(s1 + o)));
            break;
        case RMSI_PROBE_WRITE:
        default:
            v = fill;
            break;
        }
        if (nt)
            _mm512_stream_si512((void *)(d + o), v);
        else
            _mm512_store_si512((void *)(d + o), v);
    }
}

RMSI_PROBE_LINES_FN(zlines_op, zlines)

rmsnorm_status rmsi_avx512_probe(rmsnorm_probe kind, void *dst, const void *src0, const void *src1,
                                 size_t bytes, void *stream)
{
    (void)stream;
    return rmsi_host_probe_with(kind, dst, src0, src1, bytes, zlines_op);
}
