/*
 * The backend table: the contract between the dispatch layer and each backend
 * (ref/, simd/, and the gpu/ plugins). Not installed, not for library users.
 *
 * Versioning: abi_major changes only when an existing slot changes meaning; the
 * core refuses a table of another major. New slots are appended, abi_minor is
 * bumped, and the core reads a slot only if struct_size covers it.
 *
 * Contract for the op slots: the dispatch layer has already validated every
 * argument (docs/abi.md lists the checks) and passes a full-size, zero-filled
 * copy of the caller's args. A backend may therefore assume: shapes agree,
 * strides >= cols, byte sizes fit in size_t and int64_t, pointers are aligned to
 * their element size, outputs overlap inputs only exactly (same data + stride),
 * dtypes are a supported combination, the workspace is large enough. Backends
 * still never read or write past a row's cols, never allocate, and report
 * runtime failures as RMSNORM_ERR_DEVICE.
 */
#ifndef RMSNORM_BACKEND_H
#define RMSNORM_BACKEND_H

#include "rmsnorm.h"

#ifdef __cplusplus
extern "C" {
#endif

#define RMSNORM_BACKEND_ABI_MAJOR 1u
#define RMSNORM_BACKEND_ABI_MINOR 0u
/* The longest config text of config_describe / config_enumerate, plus one. */
#define RMSNORM_CONFIG_TEXT_MAX 128

/* Bandwidth probes the benchmark runs to measure the roofline. "_NT" variants
 * use non-temporal (streaming) stores where the backend has them. */
typedef enum rmsnorm_probe {
    RMSNORM_PROBE_COPY = 0,      /* dst = src0:          1 read + 1 write */
    RMSNORM_PROBE_WRITE = 1,     /* dst = constant:      1 write */
    RMSNORM_PROBE_R2W1 = 2,      /* dst = src0 + src1:   2 reads + 1 write */
    RMSNORM_PROBE_COPY_NT = 3,
    RMSNORM_PROBE_WRITE_NT = 4,
    RMSNORM_PROBE_R2W1_NT = 5,
    RMSNORM_PROBE_MAX_ENUM = 0x7FFFFFFF
} rmsnorm_probe;

/* Which op a launch-configuration query is about. */
typedef enum rmsnorm_op {
    RMSNORM_OP_FORWARD = 0,
    RMSNORM_OP_BACKWARD = 1,
    RMSNORM_OP_MAX_ENUM = 0x7FFFFFFF
} rmsnorm_op;

/* A unit of work the benchmark asks a backend to time (see time_region). */
typedef rmsnorm_status (*rmsnorm_work_fn)(void *ctx);

struct rmsnorm_backend {
    size_t struct_size;          /* sizeof(struct rmsnorm_backend) the backend was built with */
    uint32_t abi_major;          /* RMSNORM_BACKEND_ABI_MAJOR */
    uint32_t abi_minor;
    const char *name;            /* "ref", "avx512", "cuda", "hip" */
    uint32_t caps;               /* RMSNORM_CAP_* */
    int32_t is_device;           /* 1: pointers are device pointers */
    int32_t priority;            /* "auto" picks the highest present */
    int32_t reserved0;

    /* ops (required) */
    rmsnorm_status (*forward)(const rmsnorm_forward_args *a, void *stream);
    rmsnorm_status (*backward)(const rmsnorm_backward_args *a, void *stream);
    /* workspace bytes for a backward with dweight on [rows, cols] (rows >= 0, cols >= 1) */
    rmsnorm_status (*backward_workspace_size)(int64_t rows, int64_t cols, size_t *bytes);

    /* memory helpers (required) */
    rmsnorm_status (*mem_alloc)(size_t bytes, void **p);
    rmsnorm_status (*mem_free)(void *p);
    rmsnorm_status (*mem_copy)(void *dst, const void *src, size_t bytes, rmsnorm_copy_dir dir,
                               void *stream);
    rmsnorm_status (*synchronize)(void *stream);

    /* measurement hooks for rmsnorm-bench (optional: NULL = not provided) */

    /* One bandwidth probe over `bytes` bytes per buffer, queued on stream. */
    rmsnorm_status (*probe)(rmsnorm_probe kind, void *dst, const void *src0, const void *src1,
                            size_t bytes, void *stream);
    /* Calls fn(ctx) reps times on stream and returns the elapsed time of all of
     * them in seconds, measured by the backend's own clock (host monotonic clock
     * for CPU backends, device events for GPU ones). use_graph != 0 asks a GPU
     * backend to capture the reps in a graph first and time its replay. */
    rmsnorm_status (*time_region)(rmsnorm_work_fn fn, void *ctx, int reps, int use_graph,
                                  void *stream, double *seconds);
    /* Device description for reports ("NVIDIA H200, driver 580.x, 132 SMs"). */
    rmsnorm_status (*describe)(char *buf, size_t n);
    /* *busy = 1 when another process holds memory or utilisation on the device. */
    rmsnorm_status (*device_busy)(int *busy, char *why, size_t n);
    /* Launch configuration: config_set(NULL) restores the heuristic; a spec
     * string (same syntax as the backend's environment override) pins one.
     * config_describe writes the config the heuristic (or the pin) would use
     * for this op and shape; config_enumerate writes the idx-th config of the
     * search space, RMSNORM_ERR_BAD_ARGUMENT past the end. A config's text
     * fits RMSNORM_CONFIG_TEXT_MAX bytes, its terminator included; a smaller
     * buffer may fail the call. */
    rmsnorm_status (*config_set)(const char *spec);
    rmsnorm_status (*config_describe)(rmsnorm_op op, int64_t rows, int64_t cols, rmsnorm_dtype dtype,
                                      char *buf, size_t n);
    rmsnorm_status (*config_enumerate)(rmsnorm_op op, int64_t rows, int64_t cols,
                                       rmsnorm_dtype dtype, int idx, char *buf, size_t n);
};

/* Plugins (librmsnorm_cuda.so, librmsnorm_hip.so) export this one symbol, with
 * version node RMSNORM_1.0. It returns RMSNORM_OK and the backend's table, or
 * RMSNORM_ERR_BACKEND_UNAVAILABLE when there is no driver or no device. The
 * core passes its own backend ABI major; a plugin built for another major
 * returns RMSNORM_ERR_UNSUPPORTED, and the core also checks table->abi_major. */
#define RMSNORM_PLUGIN_ENTRY "rmsnorm_plugin_init"
typedef rmsnorm_status (*rmsnorm_plugin_init_fn)(uint32_t core_abi_major,
                                                 const struct rmsnorm_backend **table);

#ifdef __cplusplus
}
#endif

#endif /* RMSNORM_BACKEND_H */
