/*
 * librmsnorm: RMSNorm forward/backward with fused residual add and fp8 output
 * quantisation, on several backends behind one C ABI.
 *
 * This is the only public header. It is plain C11 and usable from C++.
 *
 * ABI rules (see docs/abi.md):
 *  - enums that cross the ABI are 32 bits (each has a 0x7FFFFFFF sentinel);
 *  - status codes are never renumbered, only appended;
 *  - args structs start with struct_size and only grow by appending fields. The
 *    library reads a field only if the caller's struct_size covers it (missing
 *    fields read as zero) and rejects a larger struct whose unknown tail is not
 *    all zero bytes.
 *  - the library never aborts, never allocates in a compute call, and never sets
 *    errno; every failure is a status, and a rejected call writes nothing.
 */
#ifndef RMSNORM_H
#define RMSNORM_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define RMSNORM_VERSION_MAJOR 1
#define RMSNORM_VERSION_MINOR 0
#define RMSNORM_VERSION_PATCH 0
/* (major << 16) | (minor << 8) | patch, the value rmsnorm_version() returns. */
#define RMSNORM_VERSION_NUMBER \
    ((RMSNORM_VERSION_MAJOR << 16) | (RMSNORM_VERSION_MINOR << 8) | RMSNORM_VERSION_PATCH)

#if defined(RMSNORM_BUILDING_LIBRARY) && defined(__GNUC__)
#define RMSNORM_API __attribute__((visibility("default")))
#else
#define RMSNORM_API
#endif

/* Values are frozen: never renumber, only append before the sentinel. */
typedef enum rmsnorm_status {
    RMSNORM_OK = 0,
    RMSNORM_ERR_NULL_POINTER = 1,       /* a required pointer is NULL */
    RMSNORM_ERR_BAD_SHAPE = 2,          /* rows < 0, cols < 1, stride < cols, shapes differ, sizes overflow */
    RMSNORM_ERR_BAD_DTYPE = 3,          /* unknown dtype or unsupported combination */
    RMSNORM_ERR_BAD_EPS = 4,            /* eps negative, NaN or infinite */
    RMSNORM_ERR_BAD_ALIAS = 5,          /* an output partially overlaps an input or another output */
    RMSNORM_ERR_BAD_STRUCT_SIZE = 6,    /* struct_size too small, or unknown tail bytes not zero */
    RMSNORM_ERR_BAD_FLAGS = 7,          /* unknown flag bits, or a flag invalid for this op */
    RMSNORM_ERR_WORKSPACE_TOO_SMALL = 8,
    RMSNORM_ERR_UNSUPPORTED = 9,        /* valid request the chosen backend does not implement */
    RMSNORM_ERR_BACKEND_UNAVAILABLE = 10, /* NULL backend, unknown name, or backend absent */
    RMSNORM_ERR_DEVICE = 11,            /* the device runtime reported an error */
    RMSNORM_ERR_BAD_ARGUMENT = 12,      /* unknown enum value (quant mode, copy direction), bad scale_ub,
                                           weight_offset not finite or given without a weight */
    RMSNORM_ERR_MISALIGNED = 13,        /* a pointer not aligned to its element size */
    RMSNORM_STATUS_MAX_ENUM = 0x7FFFFFFF
} rmsnorm_status;

typedef enum rmsnorm_dtype {
    RMSNORM_F32 = 0,
    RMSNORM_F16 = 1,          /* IEEE binary16 */
    RMSNORM_BF16 = 2,
    RMSNORM_F8_E4M3 = 3,      /* OCP e4m3fn: no infinities, max 448 */
    RMSNORM_F8_E5M2 = 4,      /* OCP e5m2: max 57344 */
    RMSNORM_F8_E4M3FNUZ = 5,  /* AMD MI300 e4m3fnuz: bias 8, one NaN (0x80), no -0, max 240 */
    RMSNORM_DTYPE_MAX_ENUM = 0x7FFFFFFF
} rmsnorm_dtype;

typedef enum rmsnorm_quant {
    RMSNORM_QUANT_NONE = 0,
    RMSNORM_QUANT_PER_TENSOR = 1,   /* static: scale[0] is an input (same memory space as the data) */
    RMSNORM_QUANT_PER_TOKEN = 2,    /* dynamic: scale[rows] is an output */
    RMSNORM_QUANT_PER_BLOCK_128 = 3,/* dynamic, one scale per 1x128 block: scale is an output laid out
                                       column-major as [cols/128][round_up(rows, 4)] */
    RMSNORM_QUANT_MAX_ENUM = 0x7FFFFFFF
} rmsnorm_quant;

typedef enum rmsnorm_copy_dir {
    RMSNORM_COPY_TO_BACKEND = 0,    /* host memory -> backend memory */
    RMSNORM_COPY_TO_HOST = 1,       /* backend memory -> host memory */
    RMSNORM_COPY_WITHIN_BACKEND = 2,
    RMSNORM_COPY_DIR_MAX_ENUM = 0x7FFFFFFF
} rmsnorm_copy_dir;

/* flags (forward_args.flags, backward_args.flags) */
#define RMSNORM_ROUND_ONCE 0u          /* fp32 math, one rounding at the store (default) */
#define RMSNORM_ROUND_LLAMA (1u << 0)  /* round x*rstd to the activation dtype before the weight,
                                          as Hugging Face LlamaRMSNorm does */
#define RMSNORM_SCALE_POW2 (1u << 1)   /* dynamic fp8 scales rounded up to a power of two (UE8M0) */

/* Backend capability bits (rmsnorm_backend_caps). */
#define RMSNORM_CAP_F32 (1u << 0)
#define RMSNORM_CAP_F16 (1u << 1)
#define RMSNORM_CAP_BF16 (1u << 2)
#define RMSNORM_CAP_FORWARD (1u << 3)
#define RMSNORM_CAP_BACKWARD (1u << 4)
#define RMSNORM_CAP_RESIDUAL (1u << 5)
#define RMSNORM_CAP_QUANT_PER_TENSOR (1u << 6)
#define RMSNORM_CAP_QUANT_PER_TOKEN (1u << 7)
#define RMSNORM_CAP_QUANT_PER_BLOCK (1u << 8)
#define RMSNORM_CAP_FP8_E4M3 (1u << 9)
#define RMSNORM_CAP_FP8_E5M2 (1u << 10)
#define RMSNORM_CAP_FP8_E4M3FNUZ (1u << 11)

/* A row-major [rows, cols] view. row_stride is in elements and >= cols; rows may
 * be 0. data is host memory for host backends and device memory for device
 * backends. data must be aligned to the element size. */
typedef struct rmsnorm_matrix {
    void *data;
    rmsnorm_dtype dtype;
    int64_t rows;
    int64_t cols;
    int64_t row_stride;
} rmsnorm_matrix;

/*
 * Forward: for each row r of x (activation dtype T in {F32, F16, BF16}):
 *   h    = residual.data ? round_T(x + residual) : x        (stored to h_out if given)
 *   rstd = 1 / sqrt(sum(h^2) / cols + eps)                   (fp32 accumulation)
 *   y    = round_T(h * rstd * (w + weight_offset))           (ROUND_ONCE)
 *   y    = round_T(round_T(h * rstd) * (w + weight_offset))  (ROUND_LLAMA)
 * docs/numerics.md gives the exact evaluation order and the error bounds.
 *
 * Aliasing: an output may coincide exactly with an input (same data, dtype and
 * row_stride: y == x, h_out == residual, h_out == x); any other overlap between an
 * output and any other buffer is RMSNORM_ERR_BAD_ALIAS.
 */
typedef struct rmsnorm_forward_args {
    size_t struct_size;        /* sizeof(rmsnorm_forward_args) as the caller compiled it */
    rmsnorm_matrix x;          /* input [rows, cols], dtype T */
    rmsnorm_matrix residual;   /* optional (data NULL = none), dtype T, same shape */
    rmsnorm_matrix h_out;      /* optional (data NULL = none), dtype T: h = x + residual; needs residual */
    const void *weight;        /* optional [cols] (NULL = none), dtype weight_dtype */
    rmsnorm_dtype weight_dtype;/* F32, or T */
    float weight_offset;       /* 0, or 1 for Gemma-style (1 + w); must be 0 without a weight */
    float eps;                 /* >= 0 and finite */
    uint32_t flags;            /* RMSNORM_ROUND_LLAMA | RMSNORM_SCALE_POW2 */
    rmsnorm_matrix y;          /* optional when q is given, dtype T, same shape */
    float *rstd;               /* optional out [rows] */
    rmsnorm_quant quant_mode;  /* RMSNORM_QUANT_NONE: q and scale unused */
    float scale_ub;            /* per-token only: > 0 clamps amax before the scale; 0 = none */
    rmsnorm_matrix q;          /* fp8 output, dtype F8_*, same shape */
    float *scale;              /* see rmsnorm_quant; size from rmsnorm_quant_scale_count() */
} rmsnorm_forward_args;

/*
 * Backward of y = h * rstd * weff (weff = w + weight_offset), n = h * rstd:
 *   dx = rstd * (dy*weff - n * mean(dy*weff*n)) [+ dresidual]   (round_T once)
 *   dw = sum over rows of dy * n   (fp32, deterministic; with ROUND_LLAMA n is round_T(n))
 * dw is reduced through the caller's workspace in an order that depends only on
 * (rows, cols) and the backend, so it is bitwise reproducible.
 */
typedef struct rmsnorm_backward_args {
    size_t struct_size;
    rmsnorm_matrix dy;         /* [rows, cols], dtype T */
    rmsnorm_matrix x;          /* the tensor that was normalised (h when the residual was fused) */
    const void *weight;        /* optional [cols] */
    rmsnorm_dtype weight_dtype;
    float weight_offset;
    const float *rstd;         /* optional [rows]: NULL = recompute from x and eps */
    float eps;
    uint32_t flags;            /* RMSNORM_ROUND_LLAMA */
    rmsnorm_matrix dx;         /* out, dtype T; may coincide exactly with dy */
    rmsnorm_matrix dresidual;  /* optional, dtype T: added into dx */
    float *dweight;            /* optional out [cols] fp32; needs weight */
    void *workspace;           /* needed when dweight is given; 16-byte aligned
                                  (rmsnorm_mem_alloc memory always is) */
    size_t workspace_bytes;
} rmsnorm_backward_args;

/* An opaque backend. Obtained from rmsnorm_backend_find / rmsnorm_backend_at;
 * valid until the process exits. */
typedef struct rmsnorm_backend rmsnorm_backend;

/* (major << 16) | (minor << 8) | patch of the library actually loaded. */
RMSNORM_API uint32_t rmsnorm_version(void);

/* A static, human-readable string for every status; never NULL ("unknown status"
 * for values this library does not know). */
RMSNORM_API const char *rmsnorm_status_string(rmsnorm_status status);

/* Bytes per element of dtype, 0 for an unknown dtype. */
RMSNORM_API size_t rmsnorm_dtype_size(rmsnorm_dtype dtype);

/* Discovery. Initialisation runs once, thread-safely, on the first call of any
 * of these. Backends: "ref" (always), "avx512" (CPU support), "cuda", "hip"
 * (plugins found next to the library or in RMSNORM_PLUGIN_PATH, with a device).
 * "auto" is the fastest present, unless the environment variable
 * RMSNORM_BACKEND names another. RMSNORM_DISABLE=name[,name] hides backends
 * (RMSNORM_DISABLE_AVX512=1 hides avx512); RMSNORM_DEBUG=1 prints the choice
 * on stderr. Unknown names return NULL. */
RMSNORM_API int rmsnorm_backend_count(void);
RMSNORM_API const rmsnorm_backend *rmsnorm_backend_at(int index);
RMSNORM_API const rmsnorm_backend *rmsnorm_backend_find(const char *name);

/* Properties; a NULL backend gives "", 0 and 0. */
RMSNORM_API const char *rmsnorm_backend_name(const rmsnorm_backend *be);
RMSNORM_API int rmsnorm_backend_is_device(const rmsnorm_backend *be);
RMSNORM_API uint32_t rmsnorm_backend_caps(const rmsnorm_backend *be);

/* Memory in the backend's space (host memory for CPU backends). Allocation is
 * for callers and tools, never done inside compute calls. Returns
 * RMSNORM_ERR_NULL_POINTER, RMSNORM_ERR_BAD_SHAPE (bytes == 0 or too large),
 * RMSNORM_ERR_BACKEND_UNAVAILABLE or RMSNORM_ERR_DEVICE. */
RMSNORM_API rmsnorm_status rmsnorm_mem_alloc(const rmsnorm_backend *be, size_t bytes, void **p);
RMSNORM_API rmsnorm_status rmsnorm_mem_free(const rmsnorm_backend *be, void *p);
/* Copies bytes in stream order (NULL stream: the default stream / synchronous). */
RMSNORM_API rmsnorm_status rmsnorm_mem_copy(const rmsnorm_backend *be, void *dst, const void *src,
                                            size_t bytes, rmsnorm_copy_dir dir, void *stream);
/* Waits until all work queued on stream has finished. */
RMSNORM_API rmsnorm_status rmsnorm_synchronize(const rmsnorm_backend *be, void *stream);

/* Number of fp32 scales the quant mode reads or writes for [rows, cols]:
 * 0 for NONE, 1 for PER_TENSOR, rows for PER_TOKEN, (cols/128)*round_up(rows,4)
 * for PER_BLOCK_128 (RMSNORM_ERR_BAD_SHAPE if cols % 128 != 0). */
RMSNORM_API rmsnorm_status rmsnorm_quant_scale_count(rmsnorm_quant mode, int64_t rows, int64_t cols,
                                                     size_t *count);

/* Workspace bytes a backward with dweight needs on this backend for [rows, cols]. */
RMSNORM_API rmsnorm_status rmsnorm_backward_workspace_size(const rmsnorm_backend *be, int64_t rows,
                                                           int64_t cols, size_t *bytes);

/* Run on stream (NULL for CPU backends; a cudaStream_t / hipStream_t for GPU
 * ones, NULL meaning the default stream). All pointers in the args are in the
 * backend's memory space. Device backends return once the work is queued.
 * Any number of host threads may call these at once, on any backends, as long
 * as no call writes what another call reads or writes (tests/test_threads.c
 * runs forwards and backwards side by side).
 * Returns RMSNORM_OK or the first failing check's status; a rejected call writes
 * nothing. PER_BLOCK_128 with cols % 128 != 0 is RMSNORM_ERR_BAD_SHAPE; docs/abi.md
 * lists every check in order. */
RMSNORM_API rmsnorm_status rmsnorm_forward(const rmsnorm_backend *be, const rmsnorm_forward_args *args,
                                           void *stream);
RMSNORM_API rmsnorm_status rmsnorm_backward(const rmsnorm_backend *be,
                                            const rmsnorm_backward_args *args, void *stream);

#ifdef __cplusplus
}
#endif

#endif /* RMSNORM_H */
