/*
 * Internal cross-file declarations of the core library. Internal names start
 * with rmsi_ and are hidden by -fvisibility=hidden and abi/rmsnorm.map.
 */
#ifndef RMSNORM_ABI_INTERNAL_H
#define RMSNORM_ABI_INTERNAL_H

#include "rmsnorm.h"
#include "rmsnorm_backend.h"

#if defined(__AVX512F__) && !defined(RMSNORM_SIMD_FILE)
#error "AVX-512 flags leaked into a baseline file: only simd/ kernels may use them"
#endif

/* Built-in backends. The ref table always exists. The avx512 table is NULL when
 * the CPU or the OS lacks AVX-512 state (cpuid + xgetbv, simd/cpu_x86.c). */
const rmsnorm_backend *rmsi_ref_backend(void);
const rmsnorm_backend *rmsi_avx512_backend(void);

/* CPU helpers shared by the host backends (ref/host_memory.c): host memory,
 * probes and the monotonic-clock timer, so simd/ fills its table with the same. */
rmsnorm_status rmsi_host_mem_alloc(size_t bytes, void **p);
rmsnorm_status rmsi_host_mem_free(void *p);
rmsnorm_status rmsi_host_mem_copy(void *dst, const void *src, size_t bytes, rmsnorm_copy_dir dir,
                                  void *stream);
rmsnorm_status rmsi_host_synchronize(void *stream);
rmsnorm_status rmsi_host_probe(rmsnorm_probe kind, void *dst, const void *src0, const void *src1,
                               size_t bytes, void *stream);
/* The probes' work split from their memory loop (ref/host_probe.c): the
 * unaligned head and tail and the split of whole 64-byte lines over the
 * OpenMP threads are shared, and each backend brings the loop over lines
 * [l0, l1) (d 64-byte aligned) in its own widest loads and stores, as its
 * kernels use them. op: what the lines compute; nt: streaming stores, fenced
 * by the loop before it returns. */
typedef enum rmsi_probe_op { RMSI_PROBE_COPY, RMSI_PROBE_WRITE, RMSI_PROBE_R2W1 } rmsi_probe_op;
#define RMSI_PROBE_FILL 0x5a /* the byte the write probes store */
#define RMSI_PROBE_LINE ((size_t)64) /* the lines a rmsi_probe_lines_fn moves */
typedef void (*rmsi_probe_lines_fn)(rmsi_probe_op op, int nt, uint8_t *d, const uint8_t *s0,
                                    const uint8_t *s1, size_t l0, size_t l1);
/* Defines `static void NAME(op, nt, d, s0, s1, l0, l1)`, a rmsi_probe_lines_fn
 * that calls the always-inline LOOP with op and nt as constants (one
 * branch-free loop per kind: a loop testing them every access held copy_nt
 * at 28 GB/s where 34 was there, session 58) and fences streaming stores
 * with _mm_sfence (the including file brings its intrinsics header). */
#define RMSI_PROBE_LINES_FN(NAME, LOOP)                                                       \
    static void NAME(rmsi_probe_op op, int nt, uint8_t *d, const uint8_t *s0,                 \
                     const uint8_t *s1, size_t l0, size_t l1)                                 \
    {                                                                                         \
        if (nt) {                                                                             \
            if (op == RMSI_PROBE_COPY)                                                        \
                LOOP(RMSI_PROBE_COPY, 1, d, s0, s1, l0, l1);                                  \
            else if (op == RMSI_PROBE_R2W1)                                                   \
                LOOP(RMSI_PROBE_R2W1, 1, d, s0, s1, l0, l1);                                  \
            else                                                                              \
                LOOP(RMSI_PROBE_WRITE, 1, d, s0, s1, l0, l1);                                 \
            _mm_sfence();                                                                     \
        } else if (op == RMSI_PROBE_COPY) {                                                   \
            LOOP(RMSI_PROBE_COPY, 0, d, s0, s1, l0, l1);                                      \
        } else if (op == RMSI_PROBE_R2W1) {                                                   \
            LOOP(RMSI_PROBE_R2W1, 0, d, s0, s1, l0, l1);                                      \
        } else {                                                                              \
            LOOP(RMSI_PROBE_WRITE, 0, d, s0, s1, l0, l1);                                     \
        }                                                                                     \
    }
rmsnorm_status rmsi_host_probe_with(rmsnorm_probe kind, void *dst, const void *src0,
                                    const void *src1, size_t bytes, rmsi_probe_lines_fn lines);
/* simd/probe.c: the avx512 backend's probe, 64-byte zmm lines. */
rmsnorm_status rmsi_avx512_probe(rmsnorm_probe kind, void *dst, const void *src0, const void *src1,
                                 size_t bytes, void *stream);
rmsnorm_status rmsi_host_time_region(rmsnorm_work_fn fn, void *ctx, int reps, int use_graph,
                                     void *stream, double *seconds);
rmsnorm_status rmsi_host_describe(char *buf, size_t n);

/* Argument checking (abi/validate.c): the one place every public call goes
 * through. They normalise the caller's struct (full size, unknown
 * fields zero) in *a and return the first failing check. ws_needed is the backend's
 * workspace requirement (ignored when dweight is NULL). */
rmsnorm_status rmsi_validate_forward(const rmsnorm_backend *be, const rmsnorm_forward_args *in,
                                     rmsnorm_forward_args *a);
rmsnorm_status rmsi_validate_backward(const rmsnorm_backend *be, const rmsnorm_backward_args *in,
                                      rmsnorm_backward_args *a);

/* Debug builds assert can't-happen conditions; release builds still handle
 * them (return a status), in the manner of SQLite's ALWAYS/NEVER. */
#ifdef NDEBUG
#define RMSI_NEVER(cond) (cond)
#else
#include <assert.h>
#define RMSI_NEVER(cond) ((cond) ? (assert(!(cond)), 1) : 0)
#endif

#endif /* RMSNORM_ABI_INTERNAL_H */
