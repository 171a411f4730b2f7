/*
 * Test tensors for the differential harnesses: value generation from the
 * fuzz input, host buffers with canary margins, and mirroring of a host buffer
 * into a backend's memory space (through rmsnorm_mem_alloc / rmsnorm_mem_copy),
 * so the same harness drives host and device backends.
 *
 * Every buffer carries FZ_MARGIN canary bytes on both sides, and a matrix's
 * row padding (row_stride > cols) is poisoned too: after a call, every byte an
 * op may not write is compared with its state before the call.
 */
#ifndef RMSNORM_FUZZ_TENSOR_H
#define RMSNORM_FUZZ_TENSOR_H

#include <stddef.h>
#include <stdint.h>

#include "fuzz/data_producer.h"
#include "rmsnorm.h"

#define FZ_MARGIN ((size_t)64)

typedef struct fz_buf {
    uint8_t *mem;  /* allocation: margin, payload, margin */
    size_t bytes;  /* payload bytes */
    uint8_t *p;    /* payload (16-byte aligned) */
} fz_buf;

/* Allocates a payload of `bytes` (0 allowed), everything filled with `fill`. */
int fz_buf_alloc(fz_buf *b, size_t bytes, uint8_t fill);
void fz_buf_free(fz_buf *b);
/* dst becomes a copy of src (same payload size, margins included). */
int fz_buf_clone(fz_buf *dst, const fz_buf *src);

/* How a value generator draws: see fz_gen_value. */
typedef struct fz_gen {
    int mode;          /* 0 ordinary, 1 raw bits, 2 small integers, 3 mostly zero */
    float scale;       /* magnitude of ordinary values */
    unsigned specials; /* out of 256: how often a special value replaces one */
} fz_gen;

/* Draws a generator description from the parameter bytes. */
void fz_gen_params(fz_producer *p, fz_gen *g);

/* Element i of a dtype T buffer set from the data bytes (rounded to T). */
void fz_gen_store(fz_producer *p, const fz_gen *g, void *base, rmsnorm_dtype t, size_t i);

/* Fills the logical [rows, cols] part of a strided matrix. */
void fz_gen_matrix(fz_producer *p, const fz_gen *g, void *base, rmsnorm_dtype t, int64_t rows,
                   int64_t cols, int64_t stride);

/* Bytes spanned by a [rows, cols] view with row_stride (0 for rows == 0). */
size_t fz_matrix_bytes(rmsnorm_dtype t, int64_t rows, int64_t cols, int64_t stride);

/* Reports (fz_fail) a byte of `after` outside the writable region that differs
 * from `before`: everything but the rows' first cols elements. what names the
 * buffer in the report. rows == 0 or es == 0: the whole buffer is read-only. */
void fz_check_untouched(const char *what, const char *backend, const fz_buf *before,
                        const fz_buf *after, size_t es, int64_t rows, int64_t cols, int64_t stride);

/* The backend-side copy of a host buffer: for host backends the host buffer
 * itself, for device backends a device allocation holding the whole buffer,
 * margins included. */
typedef struct fz_mirror {
    const rmsnorm_backend *be;
    void *dev;     /* device allocation, NULL for host backends */
    uint8_t *p;    /* payload pointer to pass to the op */
} fz_mirror;

int fz_mirror_in(fz_mirror *m, const rmsnorm_backend *be, fz_buf *host);
/* Copies the device buffer back into host (device backends) and frees it. */
int fz_mirror_out(fz_mirror *m, fz_buf *host);
void fz_mirror_drop(fz_mirror *m);

#endif /* RMSNORM_FUZZ_TENSOR_H */
