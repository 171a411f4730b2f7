/*
 * Bandwidth probes for the roofline of rmsnorm-bench, shared by the CPU
 * backends: COPY (1 read + 1 write), WRITE (1 write) and R2W1 (2 reads + 1
 * write, a bytewise wrapping add), each with ordinary or non-temporal stores.
 *
 * The destination is split into an unaligned head, whole 64-byte lines and a
 * tail; the lines are divided statically among the OpenMP threads, one
 * contiguous range each, so every thread streams through its own part of each
 * buffer. ref's lines use SSE2 (baseline on x86-64): 16-byte unaligned loads
 * and either aligned stores or _mm_stream_si128, fenced by each thread with
 * _mm_sfence before the region ends so the timed call includes the drain of
 * the write-combining buffers. Without SSE2 the lines fall back to memcpy,
 * memset and a byte loop, and the _NT kinds use ordinary stores. The avx512
 * backend brings its own line loop (simd/probe.c) through
 * rmsi_host_probe_with: with four 16-byte loads a line the reads keep fewer
 * lines in flight, and SSE2's 2-reads-1-write probe moved 34 GB/s where zmm
 * moved 40 (session 58), under what that backend's kernels reach.
 */
#include <omp.h>
#include <stdint.h>
#include <string.h>

#include "internal.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#define RMSI_PROBE_SSE2 1
#else
#define RMSI_PROBE_SSE2 0
#endif

/* Below this many bytes a parallel region's start-up dominates: one thread. */
#define RMSI_PROBE_PARALLEL_MIN ((size_t)1 << 20)

static void bytes_op(rmsi_probe_op op, uint8_t *d, const uint8_t *s0, const uint8_t *s1, size_t n)
{
    size_t i;

    switch (op) {
    case RMSI_PROBE_COPY:
        memcpy(d, s0, n);
        break;
    case RMSI_PROBE_WRITE:
        memset(d, RMSI_PROBE_FILL, n);
        break;
    case RMSI_PROBE_R2W1:
    default:
        for (i = 0; i < n; i++)
            d[i] = (uint8_t)(s0[i] + s1[i]);
        break;
    }
}

#if RMSI_PROBE_SSE2
/* 16 bytes at offset p. */
static inline __attribute__((always_inline)) void chunk_op(rmsi_probe_op op, int nt, uint8_t *d,
                                                           const uint8_t *s0, const uint8_t *s1,
                                                           size_t p)
{
    __m128i v;

    switch (op) {
    case RMSI_PROBE_COPY:
        v = _mm_loadu_si128((const __m128i *)(const void *)(s0 + p));
        break;
    case RMSI_PROBE_R2W1:
        v = _mm_add_epi8(_mm_loadu_si128((const __m128i *)(const void *)(s0 + p)),
                         _mm_loadu_si128((const __m128i *)(const void *)(s1 + p)));
        break;
    case RMSI_PROBE_WRITE:
    default:
        v = _mm_set1_epi8((char)RMSI_PROBE_FILL);
        break;
    }
    if (nt)
        _mm_stream_si128((__m128i *)(void *)(d + p), v);
    else
        _mm_store_si128((__m128i *)(void *)(d + p), v);
}

/* Lines [l0, l1) with op and nt constants once inlined, four chunks a line. */
static inline __attribute__((always_inline)) void lines_loop(rmsi_probe_op op, int nt, uint8_t *d,
                                                             const uint8_t *s0, const uint8_t *s1,
                                                             size_t l0, size_t l1)
{
    size_t l;

    for (l = l0; l < l1; l++) {
        size_t o = l * RMSI_PROBE_LINE;
        chunk_op(op, nt, d, s0, s1, o);
        chunk_op(op, nt, d, s0, s1, o + 16u);
        chunk_op(op, nt, d, s0, s1, o + 32u);
        chunk_op(op, nt, d, s0, s1, o + 48u);
    }
}

/* Lines [l0, l1) of 64 bytes; d is 64-byte aligned. */
RMSI_PROBE_LINES_FN(lines_op, lines_loop)
#else
static void lines_op(rmsi_probe_op op, int nt, uint8_t *d, const uint8_t *s0, const uint8_t *s1,
                     size_t l0, size_t l1)
{
    size_t o = l0 * RMSI_PROBE_LINE;

    (void)nt;
    bytes_op(op, d + o, s0 == NULL ? NULL : s0 + o, s1 == NULL ? NULL : s1 + o,
             (l1 - l0) * RMSI_PROBE_LINE);
}
#endif

/* This thread's share [*l0, *l1) of lines split into nth near-equal ranges. */
static void static_share(size_t lines, int tid, int nth, size_t *l0, size_t *l1)
{
    size_t t = (size_t)tid;
    size_t q = lines / (size_t)nth;
    size_t rem = lines % (size_t)nth;

    *l0 = q * t + (t < rem ? t : rem);
    *l1 = *l0 + q + (t < rem ? 1u : 0u);
}

rmsnorm_status rmsi_host_probe(rmsnorm_probe kind, void *dst, const void *src0, const void *src1,
                               size_t bytes, void *stream)
{
    (void)stream;
    return rmsi_host_probe_with(kind, dst, src0, src1, bytes, lines_op);
}

rmsnorm_status rmsi_host_probe_with(rmsnorm_probe kind, void *dst, const void *src0,
                                    const void *src1, size_t bytes, rmsi_probe_lines_fn lines_fn)
{
    rmsi_probe_op op;
    int nt;
    uint8_t *d = (uint8_t *)dst;
    const uint8_t *s0 = (const uint8_t *)src0;
    const uint8_t *s1 = (const uint8_t *)src1;
    size_t head;
    size_t lines;
    size_t done;

    switch (kind) {
    case RMSNORM_PROBE_COPY: op = RMSI_PROBE_COPY; nt = 0; break;
    case RMSNORM_PROBE_WRITE: op = RMSI_PROBE_WRITE; nt = 0; break;
    case RMSNORM_PROBE_R2W1: op = RMSI_PROBE_R2W1; nt = 0; break;
    case RMSNORM_PROBE_COPY_NT: op = RMSI_PROBE_COPY; nt = 1; break;
    case RMSNORM_PROBE_WRITE_NT: op = RMSI_PROBE_WRITE; nt = 1; break;
    case RMSNORM_PROBE_R2W1_NT: op = RMSI_PROBE_R2W1; nt = 1; break;
    default: return RMSNORM_ERR_BAD_ARGUMENT;
    }
    if (bytes == 0u)
        return RMSNORM_OK;
    if (d == NULL || (op != RMSI_PROBE_WRITE && s0 == NULL) || (op == RMSI_PROBE_R2W1 && s1 == NULL))
        return RMSNORM_ERR_NULL_POINTER;

    head = (RMSI_PROBE_LINE - (uintptr_t)d % RMSI_PROBE_LINE) % RMSI_PROBE_LINE;
    if (head > bytes)
        head = bytes;
    bytes_op(op, d, s0, s1, head);
    d += head;
    if (s0 != NULL)
        s0 += head;
    if (s1 != NULL)
        s1 += head;
    lines = (bytes - head) / RMSI_PROBE_LINE;

    if (lines * RMSI_PROBE_LINE >= RMSI_PROBE_PARALLEL_MIN) {
#pragma omp parallel
        {
            size_t l0;
            size_t l1;
            static_share(lines, omp_get_thread_num(), omp_get_num_threads(), &l0, &l1);
            lines_fn(op, nt, d, s0, s1, l0, l1);
        }
    } else {
        lines_fn(op, nt, d, s0, s1, 0, lines);
    }

    done = lines * RMSI_PROBE_LINE;
    bytes_op(op, d + done, s0 == NULL ? NULL : s0 + done, s1 == NULL ? NULL : s1 + done,
             bytes - head - done);
    return RMSNORM_OK;
}
